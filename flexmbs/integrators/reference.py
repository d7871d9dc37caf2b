"""Reference path for verification only: the index-1 DAE with Baumgarte stabilisation
through ``scipy.integrate.solve_ivp`` (Radau, BDF or an explicit method).

At each right-hand-side evaluation solve

    [M  Φ_qᵀ] [q̈]   [Q                                  ]
    [Φ_q  0 ] [λ] = [γ − 2α (Φ_q q̇ + Φ_t) − β² Φ          ]

(Baumgarte: Φ̈ + 2αΦ̇ + β²Φ = 0). Slow (dense, no reuse) but independent of the
production integrators, hence a reference for them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assembly.system import System
from ..errors import ConvergenceError


@dataclass(frozen=True)
class ReferenceResult:
    """t (n_t,), q and qd (n_t, n_q), the solver's message and evaluation count."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    success: bool
    message: str
    n_evaluations: int
    coord_names: tuple[str, ...]

    def coordinate(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(value, rate) histories of coordinate ``name``."""
        k = self.coord_names.index(name)
        return self.q[:, k], self.qd[:, k]


def accelerations(system: System, q, qd, t: float, alpha: float = 0.0,
                  beta: float = 0.0, sparse: bool | None = None,
                  compiled=None) -> tuple[np.ndarray, np.ndarray]:
    """(q̈, λ) of the index-1 system at (q, q̇, t) with Baumgarte terms α, β [1/s].

    From :data:`SPARSE_FROM` coordinates (or as ``sparse`` says) the KKT matrix is
    assembled sparse and factored by SuperLU: O(n) for a chain of bodies, where the
    dense solve is O(n³) (2.3 s for 256 flexible beams). Both give the same solution to
    round-off; a singular KKT matrix (redundant constraints) takes the dense least
    squares in either case. ``compiled``: the System's
    :class:`~flexmbs.engine.compiled_system.CompiledSystem`, which then evaluates M,
    Φ_q and Q in one kernel call where its matrix is dense, no callable depends on the
    state and no angle memory is kept (:func:`_compiled_kkt`; the same solution to
    round-off)."""
    if (compiled is not None and not (alpha or beta) and not compiled.sparse
            and not compiled.callbacks and not _keeps_angles(system)):
        kkt, rhs = _compiled_kkt(compiled, q, qd, t)
        sol = _solve_dense(kkt, rhs)
        if np.all(np.isfinite(sol)):
            return sol[:system.n_q], sol[system.n_q:]
    sparse = system.n_q >= SPARSE_FROM if sparse is None else sparse
    m = system.mass_matrix(q, sparse=sparse)
    jac = system.jacobian(q, t, sparse=sparse)
    rhs_c = system.gamma(q, qd, t)
    if alpha or beta:
        rhs_c = rhs_c - 2 * alpha * (jac @ qd + system.phi_t(q, t)) - beta**2 * system.phi(q, t)
    rhs = np.concatenate([system.forces(q, qd, t), rhs_c])
    sol = _solve_sparse(m, jac, rhs) if sparse else None
    if sol is None:
        m, jac = _dense(m), _dense(jac)
        n_c = jac.shape[0]
        kkt = np.block([[m, jac.T], [jac, np.zeros((n_c, n_c))]])
        sol = _solve_dense(kkt, rhs)
    return sol[:system.n_q], sol[system.n_q:]


#: Force kinds whose evaluation moves the System's angle memory (System.unwrap), which
#: the kernel's residual does not: their models take the NumPy evaluation.
ANGLE_MEMORY_KINDS = frozenset({"rotational_spring", "joint_actuator", "joint_servo"})


def _keeps_angles(system) -> bool:
    return any(getattr(force, "element_kind", None) in ANGLE_MEMORY_KINDS
               for force in system.model.forces)


def _compiled_kkt(compiled, q, qd, t: float):
    """([M Φ_qᵀ; Φ_q 0], [Q; γ]) at (q, q̇, t) from the step kernel: the iteration matrix
    [M + (γ'/β') C_t + K_t/β', Φ_qᵀ; Φ_q, 0] with γ' = 0 and β' = ∞ (docs/compiled.md),
    and Q = −r of the residual r = M q̈ + Φ_qᵀλ − Q that the kernel evaluates with it, at
    q̈ = 0, λ = 0; γ from the System (NumPy)."""
    system = compiled.system
    zeros_q, zeros_c = np.zeros(system.n_q), np.zeros(system.n_c)
    kkt = compiled.iteration_matrix(q, qd, zeros_q, zeros_c, t, np.inf, 0.0)
    rhs = np.concatenate([-compiled.work.r, system.gamma(q, qd, t)])
    return kkt, rhs


def _solve_dense(kkt, rhs):
    """The dense KKT system by :func:`~flexmbs._blas.solve_small` (NumPy's LU), or by
    least squares when it is exactly singular or not finite."""
    from .._blas import solve_small

    if np.all(np.isfinite(kkt)):
        try:
            return solve_small(kkt, rhs)
        except np.linalg.LinAlgError:  # an exactly singular pivot
            pass
    return np.linalg.lstsq(kkt, rhs, rcond=1e-12)[0]


#: From this many coordinates :func:`accelerations` solves the KKT system sparse.
SPARSE_FROM = 300


def _dense(matrix) -> np.ndarray:
    return matrix.toarray() if hasattr(matrix, "toarray") else np.asarray(matrix)


def _solve_sparse(m, jac, rhs):
    """The KKT system [M Φ_qᵀ; Φ_q 0] x = rhs by SuperLU, or None when it is singular
    (or nearly: the solution is not finite or does not satisfy the system)."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    kkt = sp.bmat([[m, jac.T], [jac, None]], format="csc")
    try:
        sol = spla.splu(kkt).solve(rhs)
    except RuntimeError:  # exactly singular
        return None
    if not np.all(np.isfinite(sol)):
        return None
    scale = abs(kkt).sum(axis=0).max() * np.max(np.abs(sol)) + np.max(np.abs(rhs), initial=0)
    return sol if np.max(np.abs(kkt @ sol - rhs), initial=0) <= 1e-10 * scale else None


def simulate_reference(system: System, t_span, *, t_eval=None, q0=None, qd0=None,
                       method: str = "Radau", rtol: float = 1e-8, atol: float = 1e-10,
                       baumgarte: tuple[float, float] = (0.0, 0.0)) -> ReferenceResult:
    """Integrate the index-1 equations from consistent initial conditions.

    ``q0``/``qd0`` default to the assembled, velocity-projected declared state.
    ``baumgarte`` = (α, β) [1/s] (zero: none; drift then grows slowly).
    """
    t0, t1 = (float(v) for v in t_span)
    q0 = system.assemble(t=t0) if q0 is None else np.asarray(q0, dtype=float)
    qd0 = system.project_velocity(q0, None if qd0 is None else qd0, t0)
    n = system.n_q
    alpha, beta = baumgarte
    count = [0]

    def rhs(t, y):
        count[0] += 1
        qdd, _ = accelerations(system, y[:n], y[n:], t, alpha, beta)
        return np.concatenate([y[n:], qdd])

    import scipy.integrate as si  # only here: it costs 0.1-0.2 s to import

    out = si.solve_ivp(rhs, (t0, t1), np.concatenate([q0, qd0]), method=method,
                       t_eval=t_eval, rtol=rtol, atol=atol)
    if not out.success and out.t.size <= 1:
        raise ConvergenceError(f"reference integration failed at t = {out.t[-1]:g}: "
                               f"{out.message}")
    return ReferenceResult(out.t, out.y[:n].T, out.y[n:].T, bool(out.success),
                           str(out.message), count[0], system.coord_names)
