"""The steady state of a model spun at a constant rate: the equilibrium in the frame that
turns with the spin (docs/static_linear.md, "Campbell diagrams").

A rotation drive turning at Ω about a fixed axis (its marker i on the ground) carries
the whole model around. In the chart that turns with it (:func:`~flexmbs.analysis.
linear.rotating_chart`: q = A(t) q' + b(t), A(0) = I) a steady motion is a state q' at
rest, where every body turns rigidly about the axis:

    q̇ = Ȧ q + ḃ,   q̈ = Ä q + b̈     (positions: Ω a × (r − o) and Ω² a × (a × (r − o));
                                      Euler parameters: ½ Ω (0, a) ⊗ p and −¼ Ω² p;
                                      modal coordinates: at rest)

with o a point of the axis. The steady state solves the equations of motion with these
rates, r(q, q̇(q), q̈(q), λ) = 0 and Φ(q) = 0: the centrifugal stretch and the
tension it builds (the loads a spun-up run carries once its transients have died out),
by Newton's method with the tangent K_t + C_t Ȧ + M Ä of the turning chart. The
undeformed initial state is not such a state: the spin's loads there accelerate the
bodies' stiff modes instead of stressing them, and a model whose parts are joined
(substructures) then misses the tension its joints carry.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError
from .linear import rotating_chart


def spin_rates(system, q, axis, origin, omega: float) -> tuple[np.ndarray, np.ndarray]:
    """(q̇, q̈) of the rigid turn of every body at ``omega`` [rad/s] about the line
    through ``origin`` along the unit ``axis`` (module docstring)."""
    a_dot, a_ddot = rotating_chart(system, axis, omega)
    shift = np.zeros(system.n_q)  # the axis through o: positions relative to o
    for rows in system.slices:
        shift[rows.start:rows.start + 3] = origin
    return a_dot @ (q - shift), a_ddot @ (q - shift)


def steady_spin(system, q, lam, axis, origin, omega: float, t: float = 0.0,
                tol: float = 1e-10, max_iter: int = 30):
    """(q, q̇, q̈, λ) of the steady spin of ``system`` at ``omega`` [rad/s] about the
    axis through ``origin`` [m] along ``axis`` (global), from the state ``q``, ``lam``
    (module docstring). ConvergenceError when Newton's method does not settle within
    ``max_iter`` steps (the relative size of the last correction given)."""
    q, lam = np.array(q, float), np.array(lam, float)
    n = system.n_q
    a_dot, a_ddot = rotating_chart(system, axis, omega)
    scale = max(float(np.max(np.abs(q))), 1.0)
    step = np.inf
    for _ in range(max_iter):
        qd, qdd = spin_rates(system, q, axis, origin, omega)
        mass = _dense(system.mass_matrix(q, sparse=False))
        jac = _dense(system.jacobian(q, t, sparse=False))
        residual = mass @ qdd + jac.T @ lam - system.forces(q, qd, t)
        k_t, c_t = (_dense(m) for m in system.residual_tangents(q, qd, qdd, lam, t,
                                                                 sparse=False))
        m_c = jac.shape[0]
        kkt = np.block([[k_t + c_t @ a_dot + mass @ a_ddot, jac.T],
                        [jac, np.zeros((m_c, m_c))]])
        rhs = -np.concatenate([residual, system.phi(q, t)])
        try:
            delta = np.linalg.solve(kkt, rhs)
        except np.linalg.LinAlgError:
            delta = np.linalg.lstsq(kkt, rhs, rcond=1e-12)[0]
        q, lam = q + delta[:n], lam + delta[n:]
        step = float(np.max(np.abs(delta[:n]))) / scale
        if step < tol:
            qd, qdd = spin_rates(system, q, axis, origin, omega)
            return q, qd, qdd, lam
    raise ConvergenceError(f"the steady spin at {omega:.6g} rad/s did not settle in "
                           f"{max_iter} Newton steps (last correction {step:.3g} of the "
                           f"coordinates' size)")


def _dense(matrix) -> np.ndarray:
    return np.asarray(matrix.toarray() if hasattr(matrix, "toarray") else matrix, float)


def turns_whole(system, q, axis, origin, speed, t: float = 0.0) -> bool:
    """Whether every body turning rigidly about the axis meets the velocity constraints
    at ``q`` and ``t`` [s] (Φ_q q̇ = ν): the whole model turns with the drive. A body held
    to the ground off the axis (a pendulum beside the rotor) does not."""
    qd, _ = spin_rates(system, q, axis, origin, speed)
    jac = system.jacobian(q, t, sparse=False)
    jac = jac.toarray() if hasattr(jac, "toarray") else np.asarray(jac)
    miss = jac @ qd - system.nu(q, t)
    scale = max(float(np.max(np.abs(jac @ qd), initial=0.0)), abs(speed), 1e-300)
    return not miss.size or float(np.max(np.abs(miss))) <= 1e-9 * scale


def drive_spin(system, drive: str, speed: float, q, t: float = 0.0):
    """(axis, origin) [global] of a rotation drive turning at ``speed`` [rad/s] about its
    marker i's z axis, when that marker is on the ground, gravity lies along the axis (or
    is zero) and the whole model turns with the drive at ``q``, ``t`` (:func:`turns_whole`):
    the motion is then steady in the frame that turns with it. None otherwise (a
    translation drive: a frame moving at constant velocity changes no rate; a drive on a
    moving body, gravity across the axis, or bodies that stay behind: no steady spin)."""
    spec = next(d for d in system.model.drives if d.name == drive)
    if spec.kind != "rotation" or speed == 0.0 or system.marker_body_index(
            spec.marker_i) >= 0:
        return None
    state = system._state(spec.marker_i, q, jac_needed=False)
    axis, origin = np.asarray(state.axes[2], float), np.asarray(state.r, float)
    gravity = np.asarray(system.model.gravity, float)
    if np.linalg.norm(np.cross(gravity, axis)) > 1e-12 * max(np.linalg.norm(gravity), 1.0):
        return None
    return (axis, origin) if turns_whole(system, q, axis, origin, speed, t) else None


def spin_at(system, q, t: float):
    """(drive name, axis, Ω [rad/s]) of the rotation drive the state ``q`` at ``t`` [s]
    turns with steadily: the drive's rate there constant (its acceleration zero to 1e-9
    of its rate, as after a spin-up) and the whole model turning with it
    (:func:`drive_spin`); None when no drive does."""
    for spec in system.model.drives:
        if spec.kind != "rotation":
            continue
        _, rate, acceleration = (float(v) for v in spec.profile.eval(float(t)))
        if rate == 0.0 or abs(acceleration) > 1e-9 * abs(rate):
            continue
        found = drive_spin(system, spec.name, rate, q, t)
        if found is not None:
            return spec.name, found[0], rate
    return None

