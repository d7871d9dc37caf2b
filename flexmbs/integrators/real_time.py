"""Real-time mode's pieces on the integrator's side (docs/integrators.md, "Real-time
mode"): the options' checks, the two sets of state arrays a real-time step writes
into in turn, so that a step allocates nothing, and the streaming statistics of the
steps' wall times."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ValidationError
from .options import REAL_TIME_MATRIX


def check_real_time(real_time, iterations, matrix, error_tol, h_contact=None) -> None:
    """Validate the real-time options of a run; ValidationError naming the option (a
    real-time run keeps its step: no error control, no smaller step in contact)."""
    if not isinstance(real_time, bool):
        raise ValidationError(f"real_time must be true or false, got {real_time!r}")
    if not (isinstance(iterations, int) and not isinstance(iterations, bool)
            and 1 <= iterations <= 50):
        raise ValidationError(f"real_time_iterations must be an integer in 1..50, got "
                              f"{iterations!r}")
    if matrix not in REAL_TIME_MATRIX:
        raise ValidationError(f"real_time_matrix must be one of {list(REAL_TIME_MATRIX)}, "
                              f"got {matrix!r}")
    if real_time and error_tol is not None:
        raise ValidationError("real_time takes a fixed step: error_tol does not apply")
    if real_time and h_contact is not None:
        raise ValidationError(f"real_time takes a fixed step: h_contact = {h_contact!r} "
                              "does not apply (remove it from [solver], or choose h)")


class StateBuffers:
    """Two sets of (q, q̇, q̈, λ, a) arrays, allocated at the first step: each real-time
    step copies its result into the set the integrator's current state is not in."""

    def __init__(self):
        self.sets = None

    def take(self, current_q, work) -> tuple:
        """(q, q̇, q̈, λ, a) of the step just taken (the workspace's q1, qd1, qdd1, lam1,
        a1), copied into the other set than the one holding ``current_q``."""
        sources = (work.q1, work.qd1, work.qdd1, work.lam1, work.a1)
        if self.sets is None:
            self.sets = [tuple(np.empty_like(x) for x in sources) for _ in range(2)]
        target = self.sets[1] if current_q is self.sets[0][0] else self.sets[0]
        for dest, src in zip(target, sources, strict=True):
            np.copyto(dest, src)
        return target


#: The step-time histogram: logarithmic bins from LOWEST to HIGHEST [s] (below: the
#: first bin, above: the last), BINS_PER_DECADE per decade.
LOWEST, HIGHEST, BINS_PER_DECADE = 1e-7, 1e2, 100
N_BINS = round(math.log10(HIGHEST / LOWEST) * BINS_PER_DECADE)


class StepTimes:
    """Streaming statistics of the steps' wall times [s] (real-time mode): count, sum,
    largest, the steps longer than ``h`` (overruns), and a fixed histogram of
    :data:`BINS_PER_DECADE` logarithmic bins per decade from :data:`LOWEST` to
    :data:`HIGHEST` seconds for the percentiles. Its size is fixed: a run of any number
    of steps keeps the same few kilobytes (issue 36)."""

    def __init__(self, h: float):
        self.h = float(h)
        self.count, self.total, self.max = 0, 0.0, 0.0
        self.overruns = 0
        self.bins = [0] * N_BINS

    def add(self, seconds: float) -> None:
        """One step's wall time [s]."""
        self.count += 1
        self.total += seconds
        if seconds > self.max:
            self.max = seconds
        if seconds > self.h:
            self.overruns += 1
        self.bins[_bin(seconds)] += 1

    def percentile(self, p: float) -> float:
        """The ``p``-th percentile [s] (0 < p ≤ 100) as the upper edge of the bin that
        holds the ceil(p n / 100)-th smallest time, at most the largest time: never below
        that order statistic, and above it by less than one bin (a factor
        10^(1/BINS_PER_DECADE), 2.3 %) for times from LOWEST to HIGHEST; 0 without
        steps."""
        if not self.count:
            return 0.0
        rank = max(1, math.ceil(p / 100.0 * self.count))
        seen = 0
        for k, n in enumerate(self.bins):
            seen += n
            if seen >= rank:
                return min(LOWEST * 10.0 ** ((k + 1) / BINS_PER_DECADE), self.max)
        return self.max  # (not reached: the bins hold every step)


def _bin(seconds: float) -> int:
    if seconds <= LOWEST:
        return 0
    return min(int(math.log10(seconds / LOWEST) * BINS_PER_DECADE), N_BINS - 1)


def real_time_statistics(integ, step_times: StepTimes) -> dict:
    """What a real-time run reports (docs/integrators.md, "Real-time mode"): the steps'
    wall times, mean, worst and 99th percentile [s] (:meth:`StepTimes.percentile`), the
    overruns (steps that took longer than h of wall time), and the steps accepted after
    their fixed iterations without meeting the tolerances."""
    return {"real_time": True, "real_time_iterations": integ.real_time_iterations,
            "real_time_matrix": integ.real_time_matrix,
            "step_time_mean_s": (step_times.total / step_times.count
                                 if step_times.count else 0.0),
            "step_time_max_s": float(step_times.max),
            "step_time_p99_s": float(step_times.percentile(99.0)),
            "overruns": int(step_times.overruns),
            "bounded_steps": int(integ.bounded_steps)}
