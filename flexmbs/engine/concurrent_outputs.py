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
same inputs). What it does not take (a model with rotational springs, servos or
state-dependent callables, whose outputs read the run's memory of turns or call
Python), and any block whose evaluation fails, is left to the evaluation after the run,
which then says what failed as before.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..compiled.codes import TASK_OUTPUTS, TASK_STEPS
from ..compiled.layout import pack
from ..elements.registry import make_workspace

#: Switch for this process: ``FLEXMBS_CONCURRENT_OUTPUTS=0`` evaluates every output
#: after the run (for comparisons).
ENV = "FLEXMBS_CONCURRENT_OUTPUTS"


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
    them."""

    def __init__(self, compiled):
        self.compiled = compiled
        self._jobs: list = []
        self._pool = None  # the worker, its kernel caller and workspace: at the first block

    def _start(self) -> None:
        cs = self.compiled
        self.buffers = pack(make_workspace(cs.tables))[:3]  # WF, WI, WH
        self.kernel = cs._kernel.twin()
        self.kernel.released_tasks = frozenset({TASK_OUTPUTS})
        cs._kernel.released_tasks = frozenset({TASK_STEPS})  # the batches, GIL released
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="flexmbs-outputs")

    @classmethod
    def for_run(cls, integ) -> ConcurrentOutputs | None:
        """A worker for the run of ``integ`` (an AlphaIntegrator), or None where the
        outputs stay after the run: the NumPy path, numba's kernel (which holds the
        GIL), one CPU, rotational springs or servos (their outputs read the run's
        angle memory), state-dependent callables, or the switch off (:data:`ENV`)."""
        cs = integ.compiled
        if (cs is None or switched_off() or _usable_cpus() < 2
                or not hasattr(cs._kernel, "twin") or cs.torsion_names or integ.servos
                or cs.callbacks or integ.real_time):
            return None
        return cls(cs)

    def submit(self, start: int, t, q, qd, lam) -> None:
        """Evaluate outputs start … start + len(t) − 1 (rows the steps no longer write)."""
        if self._pool is None:
            self._start()
        self._jobs.append((start, len(t), self._pool.submit(self._outputs, t, q, qd, lam)))

    def _outputs(self, t, q, qd, lam) -> np.ndarray:
        return self.compiled.outputs_with(self.kernel, self.buffers, t, q, qd, lam)

    def collect(self, n_t: int) -> tuple[np.ndarray, np.ndarray]:
        """((n_t, 5) outputs, (n_t,) mask of the rows evaluated), once the worker is
        done; a block that failed is left out (the run evaluates it again and reports
        what fails)."""
        out = np.zeros((n_t, 5))
        done = np.zeros(n_t, dtype=bool)
        try:
            for start, count, job in self._jobs:
                try:
                    rows = job.result()
                except Exception:  # evaluated again after the run, which says why
                    continue
                out[start:start + count] = rows
                done[start:start + count] = True
        finally:
            self.close()
        return out, done

    def close(self) -> None:
        """Stop the worker (after the queued blocks) and give the steps their GIL back."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
            self.compiled._kernel.released_tasks = frozenset()
        self._jobs = []
