"""Linearization of the constrained equations of motion about a state, and their
eigenanalysis (docs/static_linear.md, "Linear analysis").

About a state (q, q̇, q̈, λ, t) — an equilibrium, the initial state, or any output time
of a run (a steady spin, say) — small motions δq with δλ obey

    M δq̈ + C_t δq̇ + K_t δq + Φ_qᵀ δλ = 0,        Φ_q δq = 0,

with the analytic tangents of the integrators: K_t = ∂r/∂q (elastic stiffness, load
Jacobians, the q-dependence of the inertia forces — centrifugal softening, geometric
stiffening where a body has it — and the constraint Hessian Σ λ_k ∂²Φ_k/∂q²) and
C_t = ∂r/∂q̇ (damping plus the gyroscopic and Coriolis terms). With N an orthonormal
basis of the null space of Φ_q (δq = N z, so Φ_q δq = 0 and Φ_qᵀ δλ drops out),

    M_r z̈ + C_r ż + K_r z = 0,     M_r = Nᵀ M N,  C_r = Nᵀ C_t N,  K_r = Nᵀ K_t N.

N is taken at the state and held constant: exact at rest. In a steady spin at Ω about a
fixed axis the coordinates of the turning bodies change even when nothing moves
relative to the spin (a flapping blade's Euler parameters turn with it), so the
linear system is taken in the chart that turns with the spin (``spin=(axis, Ω)``,
:func:`rotating_chart`): δq = A(t) δq' with A = ∂q/∂q', A(0) = I, gives
K' = K_t + C_t Ȧ + M Ä and C' = C_t + 2 M Ȧ, and there the motion is steady, so N is
constant. Without it a hinged blade spun at Ω flapped at 0.968 Ω instead of Ω; a beam
whose frame the drive prescribes (free coordinates modal only) is the same either way. The complex
eigenvalues s of the first-order form give the natural frequency |s|/2π [Hz], the
damped one Im s/2π and the damping ratio −Re s/|s|; s = 0 are rigid-body (free) modes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla


@dataclass(frozen=True)
class LinearSystem:
    """M_r, C_r, K_r (n_z × n_z) in the independent coordinates z, the basis N (n_q × n_z)
    with δq = N z, the state it was taken at, and the coordinate names."""

    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    N: np.ndarray
    q: np.ndarray
    t: float
    coord_names: tuple


@dataclass(frozen=True)
class Mode:
    """One eigenmode: natural frequency [Hz], damped frequency [Hz], damping ratio,
    the complex eigenvalue s [1/s], the shape δq (n_q,) normalized to max |δq| = 1, and
    whether it is a rigid-body (zero) mode."""

    frequency_hz: float
    damped_frequency_hz: float
    damping_ratio: float
    eigenvalue: complex
    shape: np.ndarray
    rigid: bool

    def describe(self, coord_names, count: int = 3) -> str:
        """The coordinates that move most, e.g. "beam.xi1 1, beam.xi3 0.02"."""
        amp = np.abs(self.shape)
        order = np.argsort(-amp)[:count]
        return ", ".join(f"{coord_names[k]} {amp[k]:.3g}" for k in order if amp[k] > 1e-6)


def initial_state(system, t: float = 0.0, q0=None):
    """(q, q̇, q̈, λ) of ``system``'s initial state at t: assembled, velocities projected
    onto the velocity constraints, consistent accelerations and multipliers — a steady
    motion when its drives run at constant speed. With ``q0`` (n_q,) the state starts
    there at rest instead: only the drives' rates move it."""
    from ..integrators.reference import accelerations

    if q0 is None:
        q = system.assemble(t=t)
        qd = system.project_velocity(q, None, t)
    else:
        q = system.assemble(q0, t=t)
        qd = system.project_velocity(q, np.zeros(system.n_q), t)
    qdd, lam = accelerations(system, q, qd, t)
    return q, qd, qdd, lam


def linearize(system, q, qd=None, qdd=None, lam=None, t: float = 0.0, *,
              spin=None) -> LinearSystem:
    """The reduced linear system about (q, q̇, q̈, λ) at time t (zero rates and
    multipliers by default; for an equilibrium pass its λ). ``spin`` = (axis (3,), Ω
    [rad/s]): the state is a steady spin at Ω about the global ``axis`` (a unit vector),
    and the linear system is taken in the frame that turns with it
    (:func:`rotating_chart`, module docstring)."""
    n = system.n_q
    q = np.asarray(q, float)
    qd = np.zeros(n) if qd is None else np.asarray(qd, float)
    qdd = np.zeros(n) if qdd is None else np.asarray(qdd, float)
    lam = np.zeros(system.n_c) if lam is None else np.asarray(lam, float)
    k_t, c_t = system.residual_tangents(q, qd, qdd, lam, t, sparse=False)
    k_t, c_t = (np.asarray(m.toarray() if hasattr(m, "toarray") else m, float)
                for m in (k_t, c_t))
    mass = np.asarray(system.mass_matrix(q, sparse=False), float)
    if spin is not None:  # δq = A(t) δq': δq̇ = δq̇' + Ȧ δq', δq̈ = δq̈' + 2Ȧ δq̇' + Ä δq'
        a_dot, a_ddot = rotating_chart(system, *spin)
        k_t = k_t + c_t @ a_dot + mass @ a_ddot
        c_t = c_t + 2.0 * mass @ a_dot
    jac = np.asarray(system.jacobian(q, t, sparse=False), float)
    basis = sla.null_space(jac, rcond=1e-10) if jac.size else np.eye(n)
    reduce = basis.T
    return LinearSystem(reduce @ mass @ basis, reduce @ c_t @ basis, reduce @ k_t @ basis,
                        basis, q, float(t), tuple(system.coord_names))


def rotating_chart(system, axis, omega: float) -> tuple[np.ndarray, np.ndarray]:
    """(Ȧ, Ä) (n_q × n_q) at t = 0 of the chart q = T(q', t) that turns every body about
    the global ``axis`` (unit vector) at ``omega`` [rad/s]: r = o + R(t)(r' − o) for a
    body's position, p = p_R(t) ⊗ p' for its Euler parameters, ξ = ξ' for modal
    coordinates, A(t) = ∂q/∂q' (A(0) = I). Ȧ = Ω[a]× and Ä = Ω²[a]×² on positions,
    L((0, Ωa/2)) and −Ω²/4 I on Euler parameters (L(x) the left quaternion product).
    ValidationError naming a body whose coordinates are not a position and Euler
    parameters first."""
    from ..errors import ValidationError
    from ..model.bodies import RigidBody
    from ..model.flexible import FlexibleBody

    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    cross = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    left = np.zeros((4, 4))  # L((0, a)): (0, a) ⊗ p
    left[0, 1:], left[1:, 0], left[1:, 1:] = -a, a, cross
    n = system.n_q
    a_dot, a_ddot = np.zeros((n, n)), np.zeros((n, n))
    for body, rows in zip(system.bodies, system.slices, strict=True):
        if not isinstance(body, RigidBody | FlexibleBody):
            raise ValidationError(f"linearize with spin: body {body.name!r} has no frame "
                                  f"coordinates (position, Euler parameters) to turn")
        pos, quat = slice(rows.start, rows.start + 3), slice(rows.start + 3, rows.start + 7)
        a_dot[pos, pos] = omega * cross
        a_ddot[pos, pos] = omega**2 * (cross @ cross)
        a_dot[quat, quat] = 0.5 * omega * left
        a_ddot[quat, quat] = -0.25 * omega**2 * np.eye(4)
    return a_dot, a_ddot


#: A real part below ROUND_OFF_RTOL × the largest |s| is the round-off of the first-order
#: eigenproblem (a few hundred times the machine epsilon): the mode is undamped, ζ = 0.
ROUND_OFF_RTOL = 1e3 * np.finfo(float).eps


def eigenmodes(linear: LinearSystem, rigid_tol: float = 1e-6) -> list[Mode]:
    """The modes of ``linear`` sorted by natural frequency (one of each complex pair);
    eigenvalues below ``rigid_tol`` times the largest in magnitude (and below 1e-6 rad/s)
    are rigid-body modes."""
    n = linear.M.shape[0]
    if n == 0:
        return []
    inv_m = np.linalg.inv(linear.M)
    first_order = np.block([[np.zeros((n, n)), np.eye(n)],
                            [-inv_m @ linear.K, -inv_m @ linear.C]])
    values, vectors = np.linalg.eig(first_order)
    scale = max(float(np.max(np.abs(values))), 1.0)
    zero = np.abs(values) < max(rigid_tol * scale, 1e-6)
    out = []
    n_rigid = int(np.ceil(np.count_nonzero(zero) / 2))  # each a double zero
    if n_rigid:
        k_sym, m_sym = 0.5 * (linear.K + linear.K.T), 0.5 * (linear.M + linear.M.T)
        _, shapes = sla.eigh(k_sym, m_sym)
        for j in range(n_rigid):
            shape = linear.N @ shapes[:, j]
            out.append(Mode(0.0, 0.0, 0.0, 0j, shape / shape[np.argmax(np.abs(shape))],
                            True))
    used = zero.copy()
    elastic = []
    for k in np.argsort(np.abs(values)):
        if used[k]:
            continue
        used[k] = True
        s = values[k]
        if abs(s.imag) > 1e-12 * scale:  # take its conjugate partner out
            partner = int(np.argmin(np.abs(values - np.conj(s)) + np.where(used, np.inf, 0.0)))
            used[partner] = True
            s = complex(s.real, abs(s.imag))
        if abs(s.real) <= ROUND_OFF_RTOL * scale:  # an undamped mode's real part is
            s = complex(0.0, s.imag)  # the eigensolver's round-off, of either sign
        magnitude = abs(s)
        shape = linear.N @ vectors[:n, k]
        peak = shape[np.argmax(np.abs(shape))]
        shape = shape / peak if abs(peak) > 0 else shape
        elastic.append(Mode(magnitude / (2 * np.pi), abs(s.imag) / (2 * np.pi),
                            -s.real / magnitude + 0.0, complex(s), shape, False))
        # (+ 0.0: an undamped mode's ratio is 0, not −0 from −0.0 / |s|)
    return out + sorted(elastic, key=lambda m: m.frequency_hz)


def mode_motion(system, linear: LinearSystem, mode: Mode, *, amplitude: float | None = None,
                frames: int = 24):
    """One period of ``mode`` as a results object that the animation and the ParaView
    export draw (``flexmbs linear --animate K``): q(t) = q* + a Re(δq e^{iωt}) over
    ``frames`` times of one period, with a (``amplitude``) by default 0.1 over the
    shape's largest coordinate (0.1 rad or 0.1 m, or a modal coordinate of 0.1; the
    drawing magnifies the elastic part to its usual scale). A rigid-body mode is drawn
    over a unit of time."""
    from ..integrators.simulate import describe_bodies, describe_model
    from ..results import SimulationResult
    from ..results.steps import StepSummary

    n_t = max(int(frames), 2)
    period = 1.0 / mode.frequency_hz if mode.frequency_hz > 0 else 1.0
    t = np.linspace(0.0, period, n_t)
    shape = np.asarray(mode.shape)
    if amplitude is None:
        amplitude = 0.1 / max(float(np.max(np.abs(shape))), 1e-12)
    phase = np.exp(2j * np.pi * t / period) if mode.frequency_hz > 0 else 1j * t / period
    q = linear.q[None, :] + amplitude * np.real(np.outer(phase, shape))
    zeros_q, zeros_t = np.zeros_like(q), np.zeros(n_t)
    return SimulationResult(
        t=t, q=q, qd=zeros_q, qdd=zeros_q, lam=np.zeros((n_t, system.n_c)),
        kinetic=zeros_t, potential=zeros_t, elastic=zeros_t, nonconservative_work=zeros_t,
        phi_violation=zeros_t, velocity_violation=zeros_t,
        steps=StepSummary.empty(n_t),
        coord_names=tuple(system.coord_names),
        constraint_names=tuple(system.constraint_names),
        settings={"method": "linear mode", "h": float(t[1] - t[0]),
                  "frequency_hz": mode.frequency_hz},
        coupling=dict(system.coupling), success=True,
        message=f"linear mode at {mode.frequency_hz:.6g} Hz", wall_time=0.0,
        bodies=describe_bodies(system), model=describe_model(system))
