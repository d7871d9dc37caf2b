"""Kinematic analysis of fully driven mechanisms (DOF = 0): position, velocity and
acceleration from the three constraint levels Φ = 0, Φ_q q̇ = ν, Φ_q q̈ = γ."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError, ModelError
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
    """Solve the three constraint levels at each time; the model must have DOF = 0.

    Redundant but consistent equations (a planar four-bar of 3D revolutes) are fine: the
    velocity and acceleration levels are solved in the least-squares sense and must be
    satisfied exactly. A singular position (dead centre, change point) stops the analysis
    with the time and the residual.
    """
    times = np.asarray(times, dtype=float)
    q = system.assemble(q_guess, t=float(times[0]))
    report = system.check(q, float(times[0]))
    if report.dof != 0:
        raise ModelError(f"kinematic analysis needs a fully driven model: {report.message}")
    n_redundant = len(report.redundant)
    qs, qds, qdds = [], [], []
    qd_prev = np.zeros_like(q)
    t_prev = float(times[0])
    for t in times:
        try:
            q = system.assemble(q + qd_prev * (t - t_prev), t=float(t))
        except ConvergenceError as exc:
            raise ConvergenceError(f"kinematic analysis at t = {t:g} s: {exc}") from exc
        jac = np.asarray(system.jacobian(q, t, sparse=False))
        qd = _solve(jac, system.nu(q, t), n_redundant, t, "velocity")
        qdd = _solve(jac, system.gamma(q, qd, t), n_redundant, t, "acceleration")
        qs.append(q)
        qds.append(qd)
        qdds.append(qdd)
        qd_prev, t_prev = qd, float(t)
    return KinematicResult(times, np.array(qs), np.array(qds), np.array(qdds),
                           system.coord_names)


def _solve(jac: np.ndarray, rhs: np.ndarray, n_redundant: int, t: float, level: str):
    """Least-squares solve that must be exact: structural redundancy is allowed, a
    singular configuration (rank lost beyond it) is an error naming the time."""
    sol, _, rank, _ = np.linalg.lstsq(jac, rhs, rcond=1e-10)
    residual = float(np.max(np.abs(jac @ sol - rhs))) if rhs.size else 0.0
    scale = max(1.0, float(np.max(np.abs(rhs))) if rhs.size else 1.0)
    if rank < jac.shape[1] or residual > 1e-8 * scale:
        raise ConvergenceError(
            f"kinematic analysis at t = {t:g} s: Φ_q is singular at this position (rank "
            f"{rank} of {jac.shape[1]} with {n_redundant} structural redundancies; "
            f"{level} residual {residual:.3g}): a dead-centre or change-point configuration"
        )
    return sol
