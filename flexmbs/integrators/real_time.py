"""Real-time mode's pieces on the integrator's side (docs/integrators.md, "Real-time
mode"): the options' checks and the two sets of state arrays a real-time step writes
into in turn, so that a step allocates nothing."""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError
from .options import REAL_TIME_MATRIX


def check_real_time(real_time, iterations, matrix, error_tol) -> None:
    """Validate the real-time options of a run; ValidationError naming the option."""
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


def real_time_statistics(integ, step_times, h) -> dict:
    """What a real-time run reports (docs/integrators.md, "Real-time mode"): each step's
    wall time, worst and 99th percentile [s], the overruns (steps that took longer than
    h of wall time), and the steps accepted after their fixed iterations without meeting
    the tolerances."""
    times = step_times[np.isfinite(step_times)]
    return {"real_time": True, "real_time_iterations": integ.real_time_iterations,
            "real_time_matrix": integ.real_time_matrix,
            "step_time_max_s": float(times.max()) if times.size else 0.0,
            "step_time_p99_s": float(np.percentile(times, 99)) if times.size else 0.0,
            "overruns": int(np.count_nonzero(times > h)),
            "bounded_steps": int(integ.bounded_steps)}
