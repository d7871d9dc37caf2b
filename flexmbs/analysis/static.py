"""Static equilibrium and quasi-static analysis (docs/static_linear.md).

At rest (q̇ = q̈ = 0) the equations of motion M q̈ + Φ_qᵀλ = Q and the constraints become

    r(q, λ) = Φ_q(q, t)ᵀ λ − Q(q, 0, t) = 0,        Φ(q, t) = 0,

with time frozen at t (drives hold their values at t). :func:`static_equilibrium` solves
them by Newton's method on the saddle-point system

    [K_t  Φ_qᵀ] [Δq]     [r]
    [Φ_q   0  ] [Δλ] = − [Φ],          K_t = ∂r/∂q

with the analytic tangents the integrators use (the elastic stiffness, the load
Jacobians and the constraint Hessian Σ λ_k ∂²Φ_k/∂q²), a backtracking line search on the
norm of the scaled residual (or on the length of the next Newton step, which lets a
geometrically exact beam take its full steps), and load stepping: gravity, the
constant point forces and torques and the joint actuators (joint torques and forces) of
constant value are applied in :data:`LOAD_STEPS` increments, each equilibrium the start
of the next (an increment that fails is halved, down to :data:`MIN_INCREMENT`), so that
a flexible body under its weight, a beam under a large tip load or a pendulum under a
joint torque converges from its undeformed shape. The other forces (springs, loads
given by functions or time-varying profiles) act in full throughout.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as sla

from ..errors import ConvergenceError

#: A Newton step below this times max(1, max|q|) is round-off: the equilibrium is found
#: when the residual is below √tol · (load scale) though above tol · (load scale), as it
#: stays for stiff elements whose forces (EA times the coordinates' round-off) dwarf
#: the loads.
ROUND_OFF = 1e-13
#: Fractions of gravity, of the constant point loads and of the constant joint actuators
#: applied in turn by the load stepping.
LOAD_STEPS = (0.25, 0.5, 0.75, 1.0)
#: The smallest load increment tried: a step that fails is halved while the half is at
#: least this (with the default :data:`LOAD_STEPS`, the increments 1/4 … 1/256).
MIN_INCREMENT = 1.0 / 256
#: Where the load stepping can halve the increment, a load step's Newton iteration is
#: given up as diverging when its scaled residual norm exceeds this many times the
#: start's, or when its best iterate has not improved by 1 % for :data:`STALL`
#: iterations. (A 16-segment chain of geometrically exact beams under its full first
#: increment climbed to 1e14 over 200 iterations and 50 s before the halving that
#: converged in 11; converging steps here rise at most 5e3 times on their first step.)
DIVERGED = 1e6
STALL = 30


@dataclass(frozen=True)
class StaticResult:
    """An equilibrium: q (n_q,), λ (n_c,) at time t [s]; ``iterations`` (Newton
    iterations over all load steps), ``residual`` (max |r| [N, N m] at the end) and
    ``violation`` (max |Φ|); the coordinate and constraint-row names."""

    q: np.ndarray
    lam: np.ndarray
    t: float
    iterations: int
    residual: float
    violation: float
    coord_names: tuple
    constraint_names: tuple

    def coordinate(self, name: str) -> float:
        return float(self.q[self.coord_names.index(name)])


def _constant_actuator(force) -> bool:
    """Whether ``force`` is a joint actuator (joint torque or force) whose value is a
    constant profile: a number or ``Constant`` in the case, evaluated through it."""
    from ..model import Constant
    from ..model.builder import ProfileValue
    from ..model.forces import JointActuator

    return (isinstance(force, JointActuator) and isinstance(force.profile, Constant)
            and isinstance(force.function, ProfileValue)
            and force.function.profile == force.profile)


def _constant_loads(system) -> list:
    """The loads that load stepping scales with gravity: the point forces and torques of
    constant value and the joint actuators of constant value."""
    from ..model.forces import PointLoad

    return [f for f in system.model.forces
            if (isinstance(f, PointLoad) and not callable(f.value))
            or _constant_actuator(f)]


def _scaled(force, factor: float):
    """A constant load of :func:`_constant_loads` with its value times ``factor``."""
    from ..model.builder import ProfileValue

    if _constant_actuator(force):  # the profile and the callable that reads it
        profile = replace(force.profile, value=factor * float(force.profile.value))
        return replace(force, profile=profile, function=ProfileValue(profile))
    return replace(force, value=factor * np.asarray(force.value, float))


def _with_gravity(system, factor: float):
    """``system`` with gravity and the constant loads (:func:`_constant_loads`) scaled
    by ``factor``."""
    from ..assembly import System

    if factor == 1.0:
        return system
    loads = set(_constant_loads(system))
    forces = tuple(_scaled(f, factor) if f in loads else f for f in system.model.forces)
    model = replace(system.model, gravity=factor * np.asarray(system.model.gravity, float),
                    forces=forces)
    return System(model, **system.overrides)


def _residuals(system, q, lam, t):
    zero = np.zeros(system.n_q)
    r, phi, jac = system.dynamic_residual(q, zero, zero, lam, t, sparse=False)
    return np.asarray(r, float), np.asarray(phi, float), np.asarray(jac, float)


def _newton_step(system, q, lam, t, r, phi, jac):
    """The Newton step (Δq, Δλ) of the saddle-point system at (q, λ)."""
    zero = np.zeros(system.n_q)
    k_t, _ = system.residual_tangents(q, zero, zero, lam, t, sparse=False)
    k_t = np.asarray(k_t.toarray() if hasattr(k_t, "toarray") else k_t, float)
    n_c = phi.size
    matrix = np.block([[k_t, jac.T], [jac, np.zeros((n_c, n_c))]])
    rhs = -np.concatenate([r, phi])
    # symmetric equilibration: stiffnesses of 1e9 beside unit constraint rows otherwise
    # make the condition estimate (and its warning) meaningless
    big = np.max(np.abs(matrix), axis=1)
    d = 1.0 / np.sqrt(np.where(big > 0, big, 1.0))
    try:
        return d * sla.solve(matrix * d[:, None] * d[None, :], d * rhs, check_finite=True)
    except (sla.LinAlgError, ValueError):
        return np.linalg.lstsq(matrix, rhs, rcond=None)[0]


def _newton(system, q, lam, t, tol, max_iter, give_up=False):
    """Newton with line search from (q, λ); returns (q, λ, iterations, max|r|, max|Φ|),
    iterations −1 when it did not converge (in ``max_iter`` iterations, or, with
    ``give_up``, as soon as it diverges or stalls: :data:`DIVERGED`, :data:`STALL`).

    A trial point is taken when it lowers the scaled residual norm, or else when the
    Newton step from it is shorter in q than the step that led there, ‖Δq_{k+1}‖ ≤
    (1 − α/4) α‖Δq_k‖ (a natural level function with the new tangent, in the spirit of
    Deuflhard's monotonicity test): a full step that leaves a stiff term with a large
    but second-order residual, as a geometrically exact beam's axial force after a
    finite rotation, is then kept, where the residual norm alone would crawl."""
    n_q = system.n_q
    r, phi, jac = _residuals(system, q, lam, t)
    force_scale = max(1.0, float(np.max(np.abs(r))))
    step = _newton_step(system, q, lam, t, r, phi, jac)
    start = np.linalg.norm(np.concatenate([r / force_scale, phi]))
    best, since_best = np.inf, 0
    for it in range(1, max_iter + 1):
        merit = np.linalg.norm(np.concatenate([r / force_scale, phi]))
        if give_up and it > 1:
            if merit < 0.99 * best:
                best, since_best = merit, 0
            else:
                since_best += 1
            if not merit <= DIVERGED * max(start, 1e-300) or since_best >= STALL:
                break
        size = np.linalg.norm(step[:n_q])
        alpha = 1.0
        while True:
            q_new, lam_new = q + alpha * step[:n_q], lam + alpha * step[n_q:]
            r_new, phi_new, jac_new = _residuals(system, q_new, lam_new, t)
            new_merit = np.linalg.norm(np.concatenate([r_new / force_scale, phi_new]))
            if np.isfinite(new_merit) and (new_merit < (1 - 1e-4 * alpha) * merit
                                           or alpha < 1e-3):
                step_new = None
                break
            if np.isfinite(new_merit):
                step_new = _newton_step(system, q_new, lam_new, t, r_new, phi_new, jac_new)
                if (np.all(np.isfinite(step_new)) and np.linalg.norm(step_new[:n_q])
                        <= (1.0 - 0.25 * alpha) * alpha * size):
                    break
            alpha *= 0.5
        q, lam, r, phi, jac = q_new, lam_new, r_new, phi_new, jac_new
        balanced = np.max(np.abs(r), initial=0.0) <= tol * force_scale
        if balanced and np.max(np.abs(phi), initial=0.0) <= tol:
            return q, lam, it, float(np.max(np.abs(r), initial=0.0)), \
                float(np.max(np.abs(phi), initial=0.0))
        step = (_newton_step(system, q, lam, t, r, phi, jac) if step_new is None
                else step_new)
        if (np.max(np.abs(phi), initial=0.0) <= tol
                and np.max(np.abs(r), initial=0.0) <= np.sqrt(tol) * force_scale
                and np.max(np.abs(step[:n_q]), initial=0.0)
                <= ROUND_OFF * max(1.0, float(np.max(np.abs(q), initial=0.0)))):
            # the residual sits at its round-off floor (stiff elements: EA·ε·q)
            return q, lam, it, float(np.max(np.abs(r), initial=0.0)), \
                float(np.max(np.abs(phi), initial=0.0))
    return q, lam, -1, float(np.max(np.abs(r), initial=0.0)), \
        float(np.max(np.abs(phi), initial=0.0))


def static_equilibrium(system, t: float = 0.0, q0=None, *, tol: float = 1e-10,
                       max_iter: int = 50, load_steps=LOAD_STEPS) -> StaticResult:
    """The equilibrium of ``system`` at time ``t`` [s] (drives at their values there),
    from ``q0`` (default: the assembled initial state). Raises ConvergenceError naming
    the coordinates whose forces do not balance and the constraints still violated."""
    q = system.assemble(system.q0 if q0 is None else q0, t=t)
    lam = np.zeros(system.n_c)
    total, done = 0, 0.0
    loaded = np.any(system.model.gravity) or _constant_loads(system)
    queue = [float(f) for f in load_steps] if loaded else [1.0]
    while queue:
        factor = queue[0]
        stage = _with_gravity(system, factor)
        # halved only while the half is at least MIN_INCREMENT (the smallest one tried)
        can_halve = bool(loaded) and 0.5 * (factor - done) >= MIN_INCREMENT
        q_new, lam_new, iterations, residual, violation = _newton(stage, q, lam, t, tol,
                                                                  max_iter, can_halve)
        if iterations < 0:
            if not can_halve:
                raise ConvergenceError(_failure(stage, q_new, lam_new, t, factor,
                                                max_iter, bool(loaded)))
            queue.insert(0, 0.5 * (done + factor))  # halve the increment
            continue
        q, lam, done = q_new, lam_new, factor
        queue.pop(0)
        total += iterations
    return StaticResult(q, lam, float(t), total, residual, violation, system.coord_names,
                        system.constraint_names)


def _failure(system, q, lam, t, factor, max_iter, stepped) -> str:
    r, phi, _ = _residuals(system, q, lam, t)
    order = np.argsort(-np.abs(r))[:4]
    forces = ", ".join(f"{system.coord_names[k]} ({r[k]:.3g})" for k in order
                       if abs(r[k]) > 0)
    rows = np.argsort(-np.abs(phi))[:3]
    violated = ", ".join(f"{system.constraint_names[k]} ({phi[k]:.3g})" for k in rows
                         if abs(phi[k]) > 1e-9)
    where = (f"at {100 * factor:g} % of the loads (gravity, constant point loads and "
             f"constant joint actuators, stepped in increments halved down to "
             f"1/{1 / MIN_INCREMENT:g})" if stepped else "under the full loads")
    return (f"static equilibrium at t = {t:g} s not found in {max_iter} Newton iterations "
            f"{where}: the forces that do not balance are on "
            f"{forces or 'no coordinate'}"
            + (f"; constraints still violated: {violated}" if violated else "")
            + ". There may be no equilibrium: a body that nothing holds (no joint or "
              "spring against the load), or a joint torque or force larger than gravity "
              "and the springs can balance in any pose (a pendulum of mass m and length "
              "L holds at most m g L)")


def quasi_static(system, times, q0=None, **options) -> list[StaticResult]:
    """Equilibria at each of ``times`` [s] (drives and time-dependent loads follow their
    profiles), each started from the previous one."""
    out, q = [], q0
    for t in times:
        res = static_equilibrium(system, float(t), q, **options)
        out.append(res)
        q = res.q
    return out
