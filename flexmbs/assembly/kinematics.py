"""Kinematic analysis of fully driven mechanisms (DOF = 0): position, velocity and
acceleration from the three constraint levels Φ = 0, Φ_q q̇ = ν, Φ_q q̈ = γ."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .system import System


@dataclass(frozen=True)
class KinematicResult:
    """Arrays over the requested times: t (n_t,), q, qd, qdd (n_t, n_q)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    coord_names: tuple[str, ...]

    def coordinate(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(value, rate, acceleration) histories of the coordinate ``name``."""
        k = self.coord_names.index(name)
        return self.q[:, k], self.qd[:, k], self.qdd[:, k]


def kinematic_analysis(system: System, times, q_guess=None) -> KinematicResult:
    """Solve the three constraint levels at each time; the model must have DOF = 0 and
    no redundant equations (errors say which)."""
    times = np.asarray(times, dtype=float)
    q = system.assemble(q_guess, t=float(times[0]))
    report = system.check(q, float(times[0]))
    if report.dof != 0 or report.redundant:
        raise ModelError("kinematic analysis needs a fully driven model without redundant "
                         f"equations: {report.message}")
    qs, qds, qdds = [], [], []
    qd_prev = np.zeros_like(q)
    t_prev = float(times[0])
    for t in times:
        q = system.assemble(q + qd_prev * (t - t_prev), t=float(t))
        jac = np.asarray(system.jacobian(q, t, sparse=False))
        qd = np.linalg.solve(jac, system.nu(q, t))
        qdd = np.linalg.solve(jac, system.gamma(q, qd, t))
        qs.append(q)
        qds.append(qd)
        qdds.append(qdd)
        qd_prev, t_prev = qd, float(t)
    return KinematicResult(times, np.array(qs), np.array(qds), np.array(qdds),
                           system.coord_names)
