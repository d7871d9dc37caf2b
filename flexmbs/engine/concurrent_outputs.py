"""The output quantities of a run's batches of steps, on a second thread while the steps
go on (docs/compiled.md, "Outputs during the run").

After a run the kernels evaluate, at every output, the energies, the non-conservative
power and the constraint violations (:meth:`CompiledSystem.outputs`, 1.5–12 µs per
output on the shipped cases). Each output depends on its own state alone, so the
outputs of a batch of steps (:mod:`flexmbs.integrators.step_batch`, whose recorded
states are copies the steps no longer write) can be evaluated while the next batch
steps: :class:`ConcurrentOutputs` does so on one worker thread with a kernel caller and
a workspace of its own, and the prebuilt kernel runs both the batches and these outputs
with the GIL released, so the two run on two cores. On one core, or with numba's kernel
(which holds the GIL), the work is the same and only its timing changes.

The values are those :meth:`CompiledSystem.outputs` gives, bit for bit (same kernel,
same inputs: a rotational spring's turns come with each block, as the run remembered
them). What it does not take (a model with state-dependent callables, whose
outputs call Python; a block whose turns the memory lacks), and any block whose
evaluation fails, is left to the evaluation after the run, which then says what failed
as before.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..compiled.codes import TASK_OUTPUTS, TASK_STEPS
from ..compiled.layout import pack
from ..elements.registry import make_workspace

#: Outputs per job of the worker: each job takes the GIL for its Python part (the time
#: values, the arrays), which the steps then wait for when a batch ends; a few large
#: jobs keep those waits rare.
CHUNK = 256

_STEPS, _NONE = frozenset({TASK_STEPS}), frozenset()

#: Up to this size [bytes] the worker's workspace is a copy of the run's (the output
#: kernel writes every entry it reads but the joints' constant coefficients, which the
#: copy carries); above it a new one is packed.
_COPY_UP_TO = 1 << 20

#: The run's outputs must cost at least this long [s], by the first job's time per
#: output (on the worker) times the outputs expected, for the worker to be used.
#: Measured: the worker saved 4–8 % of the whole run where the outputs came to 7–30 ms
#: (the arms, the spin-up beam, the slider–cranks). Since its jobs take the steps' time
#: values and shrink towards the end (2026-12-07) it also saves 0.5–0.9 ms of the whole
#: run where they come to 2–3 ms (the solid beam's 4- and 8-mode drops, the beam stop,
#: the cantilever release: medians of 17 interleaved runs), but costs the ball drop's
#: steps 1.3 ms (its contacts end a batch every few steps, and each end waits for the
#: GIL). The outputs expected are the run's span over its step: fewer than a run with
#: contacts takes. Timed on the worker, over a whole first job (since late on
#: 2026-12-07; before, 32 outputs on the main thread, with the worker caller's first
#: bindings), a cost per output is lower: the 4-mode drop's came to 2.0 µs × 1000
#: outputs, at 2 ms the worker was taken or not from run to run (it saves that run
#: 0.55 ms: best of 40 interleaved runs, 13.88 against 14.43 ms).
MIN_SAVING = 1.5e-3

#: Near the run's end the jobs shrink: a job goes as soon as its outputs are as many as
#: those the run still expects after them (at least this many), so the last one, handed
#: over when the steps end, is about a batch's outputs, which the worker evaluates while
#: the main thread stacks the histories. (A last job of up to :data:`CHUNK` kept the
#: main thread waiting 1.3–2.5 ms for it on the arms.)
TAIL_FROM = 32

#: Switch for this process: ``FLEXMBS_CONCURRENT_OUTPUTS=0`` evaluates every output
#: after the run (for comparisons).
ENV = "FLEXMBS_CONCURRENT_OUTPUTS"


_WORKER: ThreadPoolExecutor | None = None
_WORKER_LOCK = threading.Lock()


def _worker() -> ThreadPoolExecutor:
    """The process's output worker: one thread, started once (a thread per run cost
    about a millisecond)."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = ThreadPoolExecutor(1, thread_name_prefix="flexmbs-outputs")
        return _WORKER


def _forget_worker_in_child() -> None:
    """A forked process has no worker thread (fork copies only the calling thread):
    it starts its own at its first job (a sweep on local processes forks)."""
    global _WORKER, _WORKER_LOCK
    _WORKER, _WORKER_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_worker_in_child)


def switched_off() -> bool:
    return os.environ.get(ENV, "1").strip().lower() in ("0", "off", "no", "false")


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system says)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ConcurrentOutputs:
    """Evaluates the outputs of recorded blocks on a worker thread.

    :meth:`submit` a block (its first output's index in the run's outputs, and its
    times, q, q̇, λ rows); :meth:`collect` after the steps: the (n_t, 5) outputs
    (:meth:`CompiledSystem.outputs`' columns) with the rows it evaluated and a mask of
    them. The blocks go to the worker in jobs of about :data:`CHUNK` outputs, and those
    still gathering when the steps end at :meth:`steps_done`. The first job, timed on
    the worker, gives the cost per output: where the outputs are cheap the worker takes
    no other job."""

    def __init__(self, compiled, expected: int = 0):
        self.compiled = compiled
        self.expected = int(expected)  # outputs the run is expected to record
        self._jobs: list = []
        self._pending: list = []  # blocks not yet handed to the worker
        self.cost: float | None = None  # [s] per output, of the first job
        self._declined_now = False
        self._n_pending = 0
        self._pool = None  # the worker, its kernel caller and workspace: at the first job
        #: [s] the main thread spent on the outputs while the steps went on (handing
        #: jobs over, and the first job itself): output time, not stepping time
        self.main_thread_time = 0.0

    def _start(self) -> None:
        cs = self.compiled
        if cs.WF.nbytes + cs.WI.nbytes <= _COPY_UP_TO:  # the same layout, one copy each
            self.buffers = (cs.WF.copy(), cs.WI.copy(), cs.WH)
        else:  # (a large model's dense scratch: a fresh workspace, zero pages untouched)
            self.buffers = pack(make_workspace(cs.tables))[:3]  # WF, WI, WH
        self.kernel = cs._kernel.twin()
        self.kernel.released_tasks = frozenset({TASK_OUTPUTS})
        self._pool = _worker()
        self._in_flight = 0
        self._lock = threading.Lock()

    @classmethod
    def for_run(cls, integ, expected: int = 0) -> ConcurrentOutputs | None:
        """A worker for the run of ``integ`` (an AlphaIntegrator), or None where the
        outputs stay after the run: the NumPy path, numba's kernel (which holds the
        GIL), one CPU, joint servos with integral action (their integrals are Python's,
        step by step: no batches), state-dependent callables, or the switch off
        (:data:`ENV`). Rotational springs come with the angle
        references of each block
        (:func:`~flexmbs.integrators.output_angles.batch_angles`)."""
        cs = integ.compiled
        if (cs is None or switched_off() or _usable_cpus() < 2
                or not hasattr(cs._kernel, "twin") or cs.callbacks
                or any(servo.ki for servo in integ.servos) or integ.real_time):
            return None
        return cls(cs, expected)

    def submit(self, start: int, t, q, qd, lam, refs=None, time_values=None) -> None:
        """Evaluate outputs start … start + len(t) − 1 (rows the steps no longer write),
        gathered with the blocks before it into jobs of about :data:`CHUNK` outputs;
        ``refs``: the rotational springs' angle references of those rows ((len(t), n)
        [rad] in ``torsion_names`` order, as the evaluation after the run would give
        them; None without springs); ``time_values``: (profiles, inputs) at ``t`` as
        :meth:`CompiledSystem.time_values_many` gives them (the steps' own; None:
        evaluated when the job is handed over)."""
        if self._declined():
            return
        if refs is None:
            refs = np.full((len(t), len(self.compiled.torsion_names)), np.nan)
        self._pending.append((start, t, q, qd, lam, refs, time_values))
        self._n_pending += len(t)
        after = self.expected - start - len(t)  # outputs the run expects after these
        if self._n_pending >= CHUNK or TAIL_FROM <= after <= self._n_pending:
            tic = time.perf_counter()
            try:
                self._flush()
            finally:
                self.main_thread_time += time.perf_counter() - tic

    def steps_done(self) -> None:
        """The steps have ended: the blocks still gathering go to the worker now, which
        evaluates them while the run stacks its histories."""
        if not self._declined():
            self._flush()

    def _flush(self) -> None:
        pending, self._pending, self._n_pending = self._pending, [], 0
        if not pending:
            return
        if self._pool is None:
            self._start()
        # q, q̇, λ and the angle references (the times only where the time values are
        # not the steps' own: a list of a batch's times costs 20-30 µs as an array)
        q, qd, lam, refs = (np.concatenate([np.asarray(block[k], dtype=float)
                                            for block in pending]) for k in range(2, 6))
        rows = np.concatenate([np.arange(block[0], block[0] + len(block[1]))
                               for block in pending])  # (outputs of single steps between)
        if all(block[6] is not None for block in pending):  # the steps' own
            prof, u = (np.concatenate([block[6][k] for block in pending]) for k in (0, 1))
        else:
            times = np.concatenate([np.asarray(block[1], dtype=float) for block in pending])
            try:  # the drives' and inputs' values here: no Python of the model's on
                prof, u = self.compiled.time_values_many(times)  # the worker
            except Exception:  # evaluated after the run, which says what fails
                return
        with self._lock:  # the batches run with the GIL released while a job runs
            self._in_flight += 1
            self.compiled._kernel.released_tasks = _STEPS
        try:
            job = self._pool.submit(self._outputs, q, qd, lam, prof, u, refs)
        except RuntimeError:  # no new work at interpreter exit: all after the run
            self._job_done(None)
            self._declined_now = True
            return
        job.add_done_callback(self._job_done)
        self._jobs.append((rows, job))

    def _job_done(self, _job) -> None:
        with self._lock:  # no job left: the batches keep the GIL (releasing it costs)
            self._in_flight -= 1
            if not self._in_flight:
                self.compiled._kernel.released_tasks = _NONE

    def _outputs(self, q, qd, lam, prof, u, refs) -> np.ndarray:
        """The outputs of one job (on the worker); the first job's time per output is
        :attr:`cost` (0 when it fails: the rest is left to after the run)."""
        tic = time.perf_counter()
        try:
            out = self.compiled.outputs_with(self.kernel, self.buffers, q, qd, lam, prof,
                                             u, refs)
        except BaseException:
            if self.cost is None:
                self.cost = 0.0
            raise
        if self.cost is None:
            self.cost = (time.perf_counter() - tic) / max(len(q), 1)
        return out

    def _declined(self) -> bool:
        """Whether the worker is not used: the first outputs, evaluated on the main thread
        and timed, found the run's outputs worth less than :data:`MIN_SAVING` in all,
        which cost the steps more beside a worker (its hand-overs) than they save."""
        if (not self._declined_now and self.cost is not None
                and self.cost * self.expected < MIN_SAVING):
            self._declined_now = True
            self._pending, self._n_pending = [], 0
        return self._declined_now

    def collect(self, n_t: int) -> tuple[np.ndarray, np.ndarray]:
        """((n_t, 5) outputs, (n_t,) mask of the rows evaluated), once the worker is
        done; a block that failed is left out (the run evaluates it again and reports
        what fails)."""
        out = np.zeros((n_t, 5))
        done = np.zeros(n_t, dtype=bool)
        self._pending, self._n_pending = [], 0  # (the last few: with the rest, after)
        try:
            for rows, job in self._jobs:
                try:
                    values = job.result()
                except Exception:  # evaluated again after the run, which says why
                    continue
                keep = rows < n_t  # (rows beyond the recorded outputs: none expected)
                out[rows[keep]] = values[keep]
                done[rows[keep]] = True
        finally:
            self.close()
        return out, done

    def close(self) -> None:
        """Stop the worker (after the queued blocks) and give the steps their GIL back."""
        if self._pool is not None:
            for _, job in self._jobs:  # (the worker is the process's: not shut down)
                job.cancel()
            for _, job in self._jobs:
                if not job.cancelled():
                    job.exception()  # waits for it; what it raised was read in collect
            self._pool = None
            self.compiled._kernel.released_tasks = _NONE
        self._jobs = []
