"""Batches of fixed steps in one kernel call (docs/compiled.md, "Batches of steps").

A compiled run whose steps need nothing of Python between them takes them in batches of
:data:`BATCH` to :data:`BATCH_MAX` steps (by the model's size): the time-level inputs of
the batch's step ends are evaluated at once before it (``Profile.eval_many``), the
kernel takes the steps one after the other
(:func:`flexmbs.engine.newton.run_steps`, the iteration matrix factored inside it), and
the states, Newton iterations, factorizations and the rotational springs' angle memory
(carried on from step to step in the kernel's workspace, as between the per-step path's
calls) come back together. The steps are the
per-step path's: the same predictor, iterations, convergence test and refresh rules, so
the same trajectory to round-off (the factorization's own rounding), the same Newton
iterations and factorizations. What stays per step in Python is the bookkeeping of the
accepted steps (the step record, outputs every ``output_every`` steps, the divergence
checks).

Contacts ride along while nothing happens to them: the kernel samples them at each
step's end, and the batch goes on while no open contact may have closed inside the step,
no state may switch and no impulse act
(:func:`~flexmbs.elements.contact.kernels.needs_python`); the dissipated energy is
summed here step by step, as the per-step path does. The first step where something may
happen ends the batch, and that step's converged attempt goes to the per-step path
(:attr:`~flexmbs.integrators.stepper.AlphaIntegrator.pending`), which locates the onset,
switches the states or applies the impulse exactly as if it had taken the step itself.
While a contact is closed the batch's steps are ``h_contact`` long.

Runs that need Python between steps take the per-step path: adaptive steps, outputs at
given times, sampled controllers, real-time mode, joint servos with integral action
(ki > 0, whose integral advances after each accepted step), state-dependent callables,
and iteration matrices factored sparse or of order above
:data:`~flexmbs.engine.compiled_system.BATCH_UP_TO`
(:meth:`~flexmbs.engine.compiled_system.CompiledSystem.batch_reason`). A step that fails
in a batch ends it; the per-step path then takes that step again with a new iteration
matrix, halving it if it fails again.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..compiled.codes import P_CONTACT_TOL, P_H, P_REFRESH_ABOVE, P_T1, STALE
from ..contact.sample import N_SAMPLE, S_DISSIPATION, Sample, samples_of
from .health import divergence, first_divergence

#: Steps per batch at the least (0: no batches): the batches of a small model grow to
#: about :data:`BATCH_WORK` / n_q steps, at most :data:`BATCH_MAX`, so that the
#: Python around each call (about 70-120 µs: the inputs' evaluation, the records, the
#: checks) weighs little per step, while an interruption (Ctrl-C) or a progress report
#: waits about as long whatever the model (the step costs about 1 µs per coordinate:
#: 20-40 ms a batch). Towards the run's end they shrink, down to this size, so that the
#: last outputs reach the output worker in small blocks: each batch leaves at least
#: :data:`TAIL` of its own steps for the ones after it.
BATCH = 64
BATCH_MAX = 1024
BATCH_WORK = 16384

#: The steps left after a batch, at least, as a fraction of the batch's: while the
#: next batch steps, the worker evaluates this one's outputs, which cost a tenth to a
#: third of a step on the shipped cases. With 0.5 (halving) the 4-mode solid beam's
#: drop took 5 batches and its 1000 steps 0.4 ms longer (best of 40 interleaved whole
#: runs, 14.15 against 13.76 ms; 3 batches now), the cantilever release and the seed
#: pendulum 0.3-0.6 ms; with 0.15 the worker fell behind.
TAIL = 0.3


def time_rounding(t_end: float) -> float:
    """How far [s] a time summed step by step may lie from ``t_end`` and still be it
    (the run's end is reached, and a step landing there takes t_end as its time)."""
    return 1e-12 * max(1.0, abs(t_end))


#: How much longer than h, as a fraction of h, the run's last step may be rather than
#: leave a sliver of a step after it. A time summed step by step drifts from t0 + k h by
#: the rounding of each sum (systematically, up to half a unit in the last place of t per
#: step: 4.7e-10 s over 20 000 steps of 1 ms from t = 300 s, 4.9e-9 s over 500 000
#: steps from 0), and more than :func:`time_rounding` left a last step of that sliver
#: and an output row beside the one before it. It also takes a t_end a thousandth of a
#: step past a whole step in one step.
STRETCH_LAST = 1e-3


def last_step(step: float, left: float, t_end: float) -> float:
    """The size [s] of the next step, ``step`` normally, when ``left`` [s] is what is
    left of the run: ``left`` itself when it is shorter than ``step`` (the last step) or
    longer by less than :data:`STRETCH_LAST` of it (a stretched last step rather than a
    sliver after it); ``step`` where the two differ by the rounding of the time alone
    (the step lands on t_end and keeps the matrix built for its size)."""
    rounding = time_rounding(t_end)
    if abs(left - step) <= rounding or left > step * (1.0 + STRETCH_LAST):
        return step
    return left


class PendingAttempt(NamedTuple):
    """A batch step that converged and waits for Python's contact handling: its size h
    [s], the attempt as :meth:`~flexmbs.integrators.stepper.AlphaIntegrator._try_step`
    returns it, the contacts' samples at its end and the rotational springs' angle
    memory after it (NaN: none)."""

    h: float
    attempt: tuple
    end: list
    angles: np.ndarray

    def resume(self, integ) -> tuple:
        """(ok, message, iterations, state, end samples) of the attempt, with the
        System's angle memory set as the step left it (the per-step path's)."""
        memory = integ.system.angle_memory
        for name, angle in zip(integ.compiled.torsion_names, self.angles.tolist(),
                               strict=True):
            if angle == angle:  # (NaN: no memory)
                memory[name] = angle
        return (*self.attempt, self.end)


class StepBatches:
    """The batches of one run of ``integ`` (an
    :class:`~flexmbs.integrators.stepper.AlphaIntegrator` on the compiled engine):
    buffers sized once, reused by every batch."""

    def __init__(self, integ):
        cs = integ.compiled
        self.integ, self.compiled = integ, cs
        n_q, n_c, size = cs.n_q, cs.n_c, cs.n_q + cs.n_c
        #: the most steps a batch of this model takes
        self.largest = max(BATCH, min(BATCH_MAX, BATCH_WORK // max(n_q, 1)))
        self.states = np.zeros((self.largest + 1, 4, n_q))  # q, q̇, q̈, a of each step's start
        self.lams = np.zeros((self.largest + 1, n_c))
        #: each step's iterations, factorizations and rotational springs' angles after it
        #: and the contacts' samples at its end (flattened rows)
        self.n_contacts = len(integ.contacts)
        self.at_samples = 2 + len(cs.torsion_names)
        self.out = np.zeros((self.largest, self.at_samples + self.n_contacts * N_SAMPLE))
        self.lu, self.piv = np.zeros((size, size)), np.zeros(size, dtype=np.int64)
        self.times = np.zeros(self.largest)
        #: the step parameters of a batch, and {n: (states, λ, out) of a batch of n
        #: steps}: the same arrays for the kernel at every batch (the native kernel
        #: takes the address of an array it has not seen: a few µs each)
        self.par = integ.step_parameters()
        self._par_run = self.par.copy()  # (the run's method and tolerances: fixed)
        self._views: dict = {}
        #: a step of the last batch failed or awaits the contacts' handling: the next
        #: step is the per-step path's
        self.failed = False
        #: t_end when the next batch's last step lands on it (:meth:`steps_ahead`), and
        #: whether the last batch's did (its end is then an output, as the run's end is)
        self._lands_on, self.landed = None, False
        self._dissipated = None  # the contacts' dissipated energy after each step [J]
        #: the drives' profiles and the inputs at the last batch's step ends
        #: (:meth:`CompiledSystem.time_values_many`: new arrays each batch), which its
        #: outputs share
        self.time_values = None

    @classmethod
    def for_run(cls, integ, *, adaptive: bool, control, outputs, step_times):
        """The batches of the run, or None when its steps need Python between them."""
        cs = integ.compiled
        if (BATCH < 2 or cs is None or adaptive or control is not None
                or outputs is not None or step_times is not None or integ.real_time
                or cs.batch_reason() is not None):  # (servos with ki > 0 among them)
            return None
        return cls(integ)

    def step_size(self, h: float) -> float:
        """The batch's step for a run's step ``h`` [s]: at most ``h_contact`` while a
        contact is closed (:meth:`~flexmbs.integrators.contact_steps.ContactSteps.
        step_size`)."""
        return self.integ.contact_steps.step_size(h) if self.n_contacts else h

    def steps_ahead(self, h: float, t_end: float) -> int:
        """How many steps of size :meth:`step_size` (h) the next batch takes: the whole
        steps left, with the last one, which lands on t_end, where it is a whole step
        and the model has no contacts (else it is the per-step path's), at most
        :attr:`largest` and 1 / (1 + :data:`TAIL`) of those left but at least
        :data:`BATCH`; 0 after a failed step (its retry is the per-step path's) or one
        that awaits the contacts' handling."""
        self._lands_on = None
        if self.failed:
            self.failed = False
            return 0
        # (a span of 1.99999… steps is two: the rounding of the sum of the steps so far;
        # and 2.0001 steps is two as well, the last one stretched: last_step)
        left = (t_end - self.integ.t) / self.step_size(h)
        steps = math.ceil(left - STRETCH_LAST)
        lands = not self.n_contacts and abs(left - steps) <= 1e-9
        whole = steps if lands else steps - 1
        if whole < 2:
            return 0
        n = min(whole, max(BATCH, min(self.largest, int(whole / (1 + TAIL)))))
        if lands and n == whole:  # (its time set to t_end, as the per-step path does)
            self._lands_on = float(t_end)
        return n

    def take(self, n: int, h: float) -> int:
        """Take up to ``n`` steps of size ``h`` from the integrator's state: the number
        taken (their ends in :attr:`times` and the rows 1… of :attr:`states`,
        :attr:`lams`; their iterations in ``out[:, 0]``). Fewer than ``n`` when a step
        failed or awaits the contacts' handling (then the integrator's ``pending``), and
        0 when the time-level inputs could not be evaluated together: the next step is
        then the per-step path's (:attr:`failed`), which halves it or says what fails."""
        integ, cs = self.integ, self.compiled
        self.landed = False
        times = np.cumsum(np.concatenate(([integ.t], np.full(n, h))))[1:]  # t ← t + h
        try:
            profs, us = cs.time_values_many(times)
            usable = bool(np.isfinite(profs).all() and np.isfinite(us).all())
        except Exception:
            usable = False
        if not usable:  # the per-step path takes the next step, and says what fails
            self.failed = True
            return 0
        self.times[:n] = times
        self.time_values = (profs, us)
        start = self.states[0]
        start[0], start[1], start[2], start[3] = integ.q, integ.qd, integ.qdd, integ.a
        self.lams[0] = integ.lam
        par = self.par
        par[:] = self._par_run
        par[P_H], par[P_T1] = h, times[0]
        par[P_REFRESH_ABOVE] = -1 if integ.refresh_above is None else integ.refresh_above
        if self.n_contacts:
            par[P_CONTACT_TOL] = integ.contact_steps.tol
            first = integ.contact_samples(integ.q, integ.qd, at_state=True)
            integ.contact_steps.start = first
            cs.work.ct_start[...] = [k.row for k in first]
        stale = integ.matrix_stale(h)
        if not stale:
            self.lu[...], self.piv[...] = integ.matrix.lu.lu, integ.matrix.lu.piv
        cs.work.counters[STALE] = int(stale)
        cs.load_angles(integ.system.angle_memory)
        states, lams, out = self._views.get(n) or self._views.setdefault(
            n, (self.states[:n + 1], self.lams[:n + 1], self.out[:n]))
        done = cs.steps(par, integ.max_iter, self.lu, self.piv, states, lams, profs, us,
                        out)
        waiting = done < 0
        if waiting:  # step −done − 1 converged; its contacts are Python's to handle
            done = -done - 1
            integ.pending = self._pending(done, h)
        factorizations = int(self.out[:min(done + 1, n), 1].sum())
        integ.refreshes += factorizations
        if done < n and not waiting:  # the failed step: per step, with a new matrix
            self.failed = True
            integ.matrix.lu = None
        elif factorizations:
            integ.use_factors(cs.placeholder_factors()._replace(
                lu=self.lu.copy(), piv=self.piv.copy(), by_kernel=True), h)
        self.failed = self.failed or waiting
        self.landed = done == n and self._lands_on is not None and (
            abs(self.times[n - 1] - self._lands_on) < time_rounding(self._lands_on))
        if self.landed:
            # (its step took the inputs at t + h, as the per-step path's; its outputs take
            # those at t_end, as that path's after the run)
            self.times[n - 1] = self._lands_on
            cs.time_values_into(self._lands_on, profs[n - 1], us[n - 1])
        if done:
            integ.mark_accepted(int(self.out[done, 1]) if done < n else 0)
            if self.n_contacts:
                self._sum_dissipation(first, done, h)
            self._lists(done)
        return done

    def _ends(self, j: int) -> np.ndarray:
        """(n_contacts, N_SAMPLE): the contacts' samples at the end of batch step j."""
        return self.out[j, self.at_samples:].reshape(self.n_contacts, N_SAMPLE)

    def _pending(self, j: int, h: float) -> PendingAttempt:
        row, n_a = self.states[j + 1], self.at_samples - 2
        state = (float(self.times[j]), row[0].copy(), row[1].copy(), row[2].copy(),
                 self.lams[j + 1].copy(), row[3].copy())
        return PendingAttempt(h, (True, "", int(self.out[j, 0]), state),
                              samples_of(self._ends(j)), self.out[j, 2:2 + n_a].copy())

    def _sum_dissipation(self, first, done: int, h: float) -> None:
        """The contacts' dissipated energy after each of the ``done`` steps, summed in
        the per-step path's order (trapezoidal in each step, from the samples at its
        ends; ``first``: those at the batch's start)."""
        power = np.empty((done + 1, self.n_contacts))
        power[0] = [k.dissipation for k in first]
        power[1:] = self.out[:done, self.at_samples + S_DISSIPATION::N_SAMPLE]
        terms = np.empty((done + 1, self.n_contacts))
        terms[0] = [c.state.dissipated for c in self.integ.contacts]
        terms[1:] = 0.5 * h * (power[:-1] + power[1:])
        self._dissipated = np.cumsum(terms, axis=0)[1:]

    def _lists(self, done: int) -> None:
        """What :meth:`accept` reads of the ``done`` steps of the last batch, as Python
        lists (one conversion a batch, not one a step)."""
        self._times = self.times[:done].tolist()
        # (no springs: no list per step, which would only feed the garbage collector)
        self._angles = (self.out[:done, 2:self.at_samples].tolist() if self.at_samples > 2
                        else None)
        if self.n_contacts:
            self._end_rows = self.out[:done, self.at_samples:].reshape(
                done, self.n_contacts, N_SAMPLE).tolist()
            self._energies = self._dissipated.tolist()

    def accept(self, j: int, rows=None) -> None:
        """Make the end of batch step j the integrator's state: copies, or views of
        ``rows`` ((states, lams) of the batch's step ends, copied once for a batch whose
        every state is recorded); the rotational springs' angle memory, the contacts'
        dissipated energy and their samples there too."""
        integ = self.integ
        integ.t = self._times[j]
        if self.n_contacts:
            for c, energy in zip(integ.contacts, self._energies[j], strict=True):
                c.state.dissipated = energy
            integ.contact_steps.start = [Sample(row) for row in self._end_rows[j]]
        if self.at_samples > 2:
            memory = integ.system.angle_memory
            for name, angle in zip(self.compiled.torsion_names, self._angles[j],
                                   strict=True):
                if angle == angle:  # (NaN: no memory)
                    memory[name] = angle
        if rows is None:
            row = self.states[j + 1]
            integ.q, integ.qd, integ.qdd, integ.a = (row[0].copy(), row[1].copy(),
                                                     row[2].copy(), row[3].copy())
            integ.lam = self.lams[j + 1].copy()
        else:
            row = rows[0][j]
            integ.q, integ.qd, integ.qdd, integ.a = row[0], row[1], row[2], row[3]
            integ.lam = rows[1][j]


def run_batch(batches: StepBatches, n: int, h: float, k: int, limits, ranges,
              output_every: int, record, record_block=None) -> tuple[int, str | None]:
    """One batch of up to ``n`` steps from step count ``k``, with the per-step path's
    bookkeeping of each accepted step: the step record, the divergence check every
    ``limits.check_every`` steps (a diverged state is recorded and ends the run) and an
    output every ``output_every`` steps (``record()``; with every step an output and
    ``record_block`` given, the outputs of the steps at once:
    ``record_block(times, states, lams, contacts, angles, time_values)``, the times a
    list, the states (count, 4, n_q) rows q, q̇, q̈, a, the contacts' samples and
    dissipated energies as nested lists (count, n_contacts, …), or None without
    contacts, the rotational springs' angles: (the System's angle memory before the
    block, the angles after each step in ``torsion_names`` order, NaN where none), or
    None without, and the time values (profiles, inputs) at those times that the steps
    took). Returns (the step
    count after it, the divergence found or None). The integrator's state arrays are
    replaced, never written into (the records hold them)."""
    h = batches.step_size(h)
    done = batches.take(n, h)
    integ = batches.integ
    iterations = batches.out[:done, 0].astype(np.int64).tolist()
    integ.batched_steps += done
    if not done:
        return k, None
    rows = None
    if output_every == 1:  # every state recorded: one copy of them all
        rows = (batches.states[1:done + 1].copy(), batches.lams[1:done + 1].copy())
        if record_block is not None:
            return _record_all(batches, done, h, k, limits, ranges, iterations, rows,
                               record_block)
    for j in range(done):
        integ.stats.add(h, iterations[j])
        k += 1
        check = k % limits.check_every == 0
        output = k % output_every == 0 or (batches.landed and j == done - 1)
        if check or output or j == done - 1:
            batches.accept(j, rows)
        if check:
            reason = divergence(ranges, integ.q, integ.t, limits)
            if reason is not None:
                record()
                return k, reason
        if output:
            record()
    return k, None


def _record_all(batches, done, h, k, limits, ranges, iterations, rows, record_block):
    """:func:`run_batch`'s bookkeeping when every step is an output: the divergence
    checks on the rows, then the steps up to the end (or the diverged one) and their
    outputs at once."""
    every = limits.check_every
    count, reason = done, None
    checked = np.arange(every - 1 - k % every, done, every)  # the steps k + j + 1 ≡ 0
    found = (first_divergence(ranges, rows[0][checked, 0], batches.times[checked], limits)
             if checked.size else None)
    if found is not None:
        count, reason = int(checked[found[0]]) + 1, found[1]
    batches.integ.stats.add_closed(h, iterations[:count])
    before = dict(batches.integ.system.angle_memory)  # (the memory the block starts from)
    batches.accept(count - 1, rows)
    contacts = ((batches.out[:count, batches.at_samples:].copy(),  # (the next batch
                 batches._dissipated[:count])                     # writes out again)
                if batches.n_contacts else None)
    angles = (before, batches._angles[:count]) if batches.at_samples > 2 else None
    profs, us = batches.time_values
    record_block(batches._times[:count], rows[0][:count], rows[1][:count], contacts, angles,
                 (profs[:count], us[:count]))
    return k + count, reason
