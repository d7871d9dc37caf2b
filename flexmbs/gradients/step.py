"""One generalized-α step as a map of the state, and its exact Jacobian (docs/gradients.md,
"The discrete step").

A step from t_n to t_{n+1} = t_n + h carries y = (q, q̇, q̈, a, λ). Its unknowns x are
q̈_{n+1} and λ_{n+1} (and, in the stabilized index-2 form, the multiplier μ of the
position correction); everything else is linear in x and y_n:

    a_{n+1} = c1 q̈_{n+1} + c2 q̈_n − c3 a_n          (c1, c2, c3 from α_m, α_f)
    q_{n+1} = q_n + h q̇_n + h² (½ − β) a_n + h² β a_{n+1}  [+ P μ]
    q̇_{n+1} = q̇_n + h (1 − γ) a_n + h γ a_{n+1}

(y_{n+1} = L_x x + L_y y_n), and x solves F(y_{n+1}) = 0: the residual r = 0 and
Φ = 0 (index 3), or r = 0, Φ_q q̇ + Φ_t = 0 and Φ = 0 (stabilized index 2, whose
position correction moves q along P = the position block of the iteration matrix's
inverse applied to the constraint rows, as the run's Newton iteration does).

:class:`StepJacobian` holds J = ∂F/∂y · L_x at a converged state, built from the exact
tangents (:mod:`.tangents`) and factored once in the scaled form of the run's iteration
matrix (well conditioned as h → 0), for solves with J and with Jᵀ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.lapack import dgetrf, dgetrs

from ..compiled.codes import SWEEP_COEFFICIENTS
from ..errors import ConvergenceError
from .jacobian_source import TangentSource

#: Machine epsilon of float64.
EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Coefficients:
    """The linear maps of one step of size h [s] for the parameters α_m, α_f, β, γ."""

    h: float
    beta: float
    gamma: float
    c1: float
    c2: float
    c3: float

    @classmethod
    def of(cls, params, h: float) -> Coefficients:
        am, af = params.alpha_m, params.alpha_f
        return cls(float(h), params.beta, params.gamma, (1 - af) / (1 - am),
                   af / (1 - am), am / (1 - am))

    @property
    def bp(self) -> float:
        """β' = ∂q̈_{n+1}/∂q_{n+1} along the update [1/s²]."""
        return 1.0 / (self.h * self.h * self.beta * self.c1)

    @property
    def gp(self) -> float:
        """γ' = ∂q̇_{n+1}/∂q_{n+1} along the update [1/s]."""
        return self.gamma / (self.beta * self.h)

    # ------------------------------------------------------------------ L_y, L_yᵀ
    def predict(self, q, qd, qdd, a):
        """(q, q̇, a) of step n+1 from y_n with q̈_{n+1} = 0 (the part L_y y_n)."""
        h, b, g = self.h, self.beta, self.gamma
        a1 = self.c2 * qdd - self.c3 * a
        return (q + h * qd + h * h * ((0.5 - b) * a + b * a1),
                qd + h * ((1 - g) * a + g * a1), a1)

    def pull_back(self, q_bar, qd_bar, a_bar):
        """L_yᵀ: the cotangents (q̄, q̄̇, q̄̈, ā) of y_n from those of q, q̇, a of y_{n+1}."""
        h, b, g = self.h, self.beta, self.gamma
        s_a = a_bar + h * h * b * q_bar + h * g * qd_bar  # of a_{n+1}
        return (q_bar, h * q_bar + qd_bar, self.c2 * s_a,
                h * h * (0.5 - b) * q_bar + h * (1 - g) * qd_bar - self.c3 * s_a)


def _factor(matrix: np.ndarray, state):
    """LU factors (LAPACK getrf, in place) of a step Jacobian; ConvergenceError naming the
    step's time when it is singular to working precision: a pivot at most s ε times the
    largest (the scaled J is well conditioned; such a pivot is round-off of an exact
    zero), as the kernel's sweep takes it (:func:`~flexmbs.engine.adjoint_sweep.
    adjoint_sweep`)."""
    lu, piv, info = dgetrf(matrix, overwrite_a=True)
    pivots = np.abs(np.diagonal(lu))
    if info > 0 or (pivots.size and not pivots.min() > pivots.size * EPS * pivots.max()):
        where = info if info > 0 else int(np.argmin(pivots)) + 1
        raise ConvergenceError(f"the step Jacobian at t = {state.t:.6g} s is singular "
                               f"(pivot {where}): redundant constraints?")
    return lu, piv


def _solve(factors, rhs: np.ndarray, trans: int = 0) -> np.ndarray:
    """x with A x = rhs (trans 1: Aᵀ x = rhs) from :func:`_factor`'s factors."""
    x, _ = dgetrs(factors[0], factors[1], rhs, trans=trans)
    return x


class StepJacobian:
    """J = ∂F/∂x of the step that ended at ``state`` (a converged
    :class:`~flexmbs.gradients.residual_terms.State`), exact, factored.

    Scaled unknowns X = (q̈/β', λ/β'[, μ]) and scaled rows (r/β', [(Φ_q q̇ + Φ_t)/γ',] Φ)
    give the run's iteration matrix [M + (γ'/β')C_t + K_t/β', Φ_qᵀ; Φ_q, 0] in index 3,
    and in index 2

        [Ŝ,            Φ_qᵀ, K_t P/β'  ]
        [Φ_q + Z/γ',   0,    Z P/γ'    ]
        [Φ_q,          0,    I         ]

    with Ŝ = M + (γ'/β')C_t + K_t/β', Z = ∂(Φ_q q̇ + Φ_t)/∂q and Φ_q P = I.
    """

    def __init__(self, system, state, coef: Coefficients, index2: bool, source=None,
                 raw=None):
        n, m = system.n_q, system.n_c
        self.n, self.m, self.index2 = n, m, index2
        bp, gp = coef.bp, coef.gp
        if source is None:
            source = TangentSource(system, "python")
        mass, k_t, c_t, jac = (source.pieces(state, bp, gp) if raw is None else
                               source.pieces(state, bp, gp, raw))
        self.k, self.c, self.mass, self.jac = k_t, c_t, mass, jac
        size = n + (2 * m if index2 else m)
        matrix = np.zeros((size, size))
        s_hat = matrix[:n, :n]
        np.multiply(c_t, gp / bp, out=s_hat)
        s_hat += mass
        s_hat += k_t / bp
        matrix[:n, n:n + m] = jac.T
        matrix[n:n + m, :n] = jac
        if not index2:
            self.z = self.p = None
            self.rows = np.concatenate([np.full(n, 1 / bp), np.ones(m)])
            self.cols = np.full(n + m, bp)
        else:
            self.z = (source.velocity_jacobian(state, coef.h) if raw is None else raw[4])
            rhs = np.zeros((n + m, m))
            rhs[n:] = np.eye(m)
            self.p = _solve(_factor(matrix[:n + m, :n + m].copy(), state), rhs)[:n]
            matrix[:n, n + m:] = k_t @ self.p / bp
            matrix[n:n + m, :n] += self.z / gp
            matrix[n:n + m, n + m:] = self.z @ self.p / gp
            matrix[n + m:, :n] = jac
            matrix[n + m:, n + m:] = np.eye(m)
            self.rows = np.concatenate([np.full(n, 1 / bp), np.full(m, 1 / gp), np.ones(m)])
            self.cols = np.concatenate([np.full(n + m, bp), np.ones(m)])
        self.lu = _factor(matrix, state)

    @property
    def size(self) -> int:
        return self.n + (2 if self.index2 else 1) * self.m

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """x with J x = rhs (rhs (size,) or (size, k))."""
        rows = self.rows if rhs.ndim == 1 else self.rows[:, None]
        cols = self.cols if rhs.ndim == 1 else self.cols[:, None]
        return cols * _solve(self.lu, rows * rhs)

    def solve_transposed(self, rhs: np.ndarray) -> np.ndarray:
        """μ with Jᵀ μ = rhs."""
        return self.rows * _solve(self.lu, self.cols * rhs, 1)

    # ------------------------------------------------------------------ ∂F/∂y
    def state_cotangents(self, mu: np.ndarray):
        """(F_yᵀμ)_q and (F_yᵀμ)_q̇: what the step's equations take from the cotangents
        of q_{n+1} and q̇_{n+1} (the q̈ and λ parts do not reach y_n)."""
        n, m = self.n, self.m
        mu1, mu2 = mu[:n], mu[n:n + m]
        q_part = self.k.T @ mu1
        qd_part = self.c.T @ mu1
        if self.index2:
            q_part += self.z.T @ mu2 + self.jac.T @ mu[n + m:]
            qd_part += self.jac.T @ mu2
        else:
            q_part += self.jac.T @ mu2
        return q_part, qd_part

    def apply_state(self, dq, dqd) -> np.ndarray:
        """F_y (dq, dq̇, 0, 0, 0): the equations' change for a change of q, q̇ alone
        (dq, dq̇ (n,) or (n, k))."""
        top = self.k @ dq + self.c @ dqd
        if self.index2:
            return np.concatenate([top, self.z @ dq + self.jac @ dqd, self.jac @ dq])
        return np.concatenate([top, self.jac @ dq])

    def unknown_cotangent(self, coef: Coefficients, q_bar, qd_bar, qdd_bar, a_bar, lam_bar):
        """L_xᵀ ỹ: the cotangent of the unknowns (q̈, λ[, μ]) from that of y_{n+1}."""
        h = coef.h
        parts = [qdd_bar + coef.c1 * (a_bar + h * h * coef.beta * q_bar
                                      + h * coef.gamma * qd_bar), lam_bar]
        if self.index2:
            parts.append(self.p.T @ q_bar)
        return np.concatenate(parts)

    def expand(self, coef: Coefficients, x):
        """(dq, dq̇, dq̈, da, dλ) of y_{n+1} that the unknowns' change ``x`` gives
        (the L_x part; x (size,) or (size, k))."""
        n, m, h = self.n, self.m, coef.h
        dqdd, dlam = x[:n], x[n:n + m]
        dq = h * h * coef.beta * coef.c1 * dqdd
        if self.index2:
            dq = dq + self.p @ x[n + m:]
        return dq, h * coef.gamma * coef.c1 * dqdd, dqdd, coef.c1 * dqdd, dlam


class AdjointSteps:
    """The step Jacobians of consecutive steps of the backward sweep, in the same scaled
    form as :class:`StepJacobian` (in index 2, P of every step from one stacked solve),
    for the sweep's two products a step:

    * μ = diag(rows) J⁻ᵀ diag(cols) b (:meth:`StepJacobian.solve_transposed`);
    * (F_yᵀμ)_q, (F_yᵀμ)_q̇ = B_k μ (:meth:`StepJacobian.state_cotangents`).

    :meth:`sweep` takes the chunk's steps in one kernel call, each J assembled from the
    kernel's pieces and factored there (:func:`~flexmbs.engine.adjoint_sweep.
    adjoint_sweep`); :meth:`back` takes one step in NumPy (the chunk's matrices
    assembled as stacked arrays on first use, each J factored by LAPACK's getrf when
    first solved with).

    ``states``: the steps' end states (converged :class:`~flexmbs.gradients.
    residual_terms.State`), ``coefs`` their :class:`Coefficients`, ``angles`` the
    System's angle memory at each ({name: rad}; read by the tangents), ``raws`` the
    kernel's pieces at each (a :class:`~flexmbs.gradients.jacobian_source.ChunkPieces`
    from :meth:`~flexmbs.gradients.jacobian_source.TangentSource.pieces_many`, which
    :meth:`sweep` needs; None each: the source takes the state alone); ``before(i)``,
    when given, is called before the pieces of step i are taken (the servos' integrals
    held)."""

    def __init__(self, system, states, coefs, angles, index2: bool, source, raws,
                 before=None):
        from .jacobian_source import ChunkPieces

        n, m, count = system.n_q, system.n_c, len(states)
        self.n, self.m, self.index2, self.states = n, m, index2, states
        self.size = n + (2 * m if index2 else m)
        self.compiled = source.compiled if source is not None else None
        chunk = raws if isinstance(raws, ChunkPieces) else None
        #: the kernel's rows of the chunk's pieces (the sweep's input), or None
        self.kernel_rows = chunk.rows if chunk is not None else None
        self._chunk = None  # the rows viewed, when they are a reused buffer's
        if chunk is not None and before is None and not source.numpy_forces:
            mass, k_t, c_t, jac = chunk.mass, chunk.stiffness, chunk.damping, chunk.jacobian
            z = chunk.zs
            self._chunk = chunk
        else:  # state by state (what the kernel leaves out added in place, to its rows)
            mass, k_t, c_t = (np.empty((count, n, n)) for _ in range(3))
            jac, z = np.empty((count, m, n)), np.empty((count, m, n))
            for i, (st, coef, memory, raw) in enumerate(zip(states, coefs, angles, raws,
                                                           strict=True)):
                system.angle_memory = dict(memory)
                if before is not None:
                    before(i)
                mass[i], k_t[i], c_t[i], jac[i] = source.pieces(st, coef.bp, coef.gp, raw)
                if index2:
                    z[i] = source.velocity_jacobian(st, coef.h) if raw is None else raw[4]
        self._pieces = (mass, k_t, c_t, jac, z)
        self._bp = np.array([c.bp for c in coefs])[:, None, None]
        self._gp = np.array([c.gp for c in coefs])[:, None, None]
        self._coefs = coefs
        self.p = self._top = None
        if index2:  # P = the position block of [S, Φ_qᵀ; Φ_q, 0]⁻¹ [0; I]
            self._top = self._top_left()  # (kept for back's matrices)
            rhs = np.zeros((count, n + m, m))
            rhs[:, n:] = np.eye(m)
            self.p = _stacked(np.linalg.solve, self._top, rhs, states)[:, :n]
        self._assembled = False

    def _top_left(self) -> np.ndarray:
        """[S, Φ_qᵀ; Φ_q, 0] (K, n + m, n + m), S = M + (γ'/β') C_t + K_t/β'."""
        n, m = self.n, self.m
        mass, k_t, c_t, jac, _ = self._pieces
        bp, gp = self._bp, self._gp
        out = np.zeros((len(self.states), n + m, n + m))
        out[:, :n, :n] = mass + (gp / bp) * c_t + k_t / bp
        out[:, :n, n:] = jac.transpose(0, 2, 1)
        out[:, n:, :n] = jac
        return out

    def _check_current(self) -> None:
        """RuntimeError if the kernel's rows these steps view were overwritten since (a
        later chunk's :meth:`~flexmbs.gradients.jacobian_source.TangentSource.
        pieces_many` into the same buffer)."""
        if self._chunk is not None and not self._chunk.current:
            raise RuntimeError("AdjointSteps: the chunk's pieces were overwritten by a "
                               "later TangentSource.pieces_many(..., reuse=True)")

    def _assemble(self) -> None:
        """The chunk's scaled J, rows, cols and B_k as stacked arrays (:meth:`back`)."""
        if self._assembled:
            return
        self._check_current()
        n, m, size, count = self.n, self.m, self.size, len(self.states)
        _, k_t, c_t, jac, z = self._pieces
        bp, gp = self._bp, self._gp
        jac_t = jac.transpose(0, 2, 1)
        matrix = np.zeros((count, size, size))
        matrix[:, :n + m, :n + m] = self._top if self._top is not None else self._top_left()
        rows, cols = np.ones((count, size)), np.empty((count, size))
        rows[:, :n] = 1 / bp[:, 0]
        cols[:, :n + m] = bp[:, 0]
        back = np.zeros((count, 2 * n, size))  # B_k
        back[:, :n, :n] = k_t.transpose(0, 2, 1)
        back[:, n:, :n] = c_t.transpose(0, 2, 1)
        if self.index2:
            p = self.p
            matrix[:, :n, n + m:] = k_t @ p / bp
            matrix[:, n:n + m, :n] += z / gp
            matrix[:, n:n + m, n + m:] = z @ p / gp
            matrix[:, n + m:, :n] = jac
            matrix[:, n + m:, n + m:] = np.eye(m)
            rows[:, n:n + m] = 1 / gp[:, 0]
            cols[:, n + m:] = 1.0
            back[:, :n, n:n + m] = z.transpose(0, 2, 1)
            back[:, :n, n + m:] = jac_t
            back[:, n:, n:n + m] = jac_t
        else:
            back[:, :n, n:] = jac_t
        self.matrices, self.factors = matrix, [None] * count
        self.rows, self.cols, self.back_rows = rows, cols, back
        self._assembled = True

    def solve_transposed(self, i: int, rhs: np.ndarray) -> np.ndarray:
        """μ with J_iᵀ μ = rhs (step i of the chunk)."""
        self._assemble()
        if self.factors[i] is None:
            self.factors[i] = _factor(self.matrices[i], self.states[i])
        return self.rows[i] * _solve(self.factors[i], self.cols[i] * rhs, 1)

    def state_cotangents(self, i: int, mu: np.ndarray):
        """(F_yᵀμ)_q and (F_yᵀμ)_q̇ of step i (:meth:`StepJacobian.state_cotangents`)."""
        self._assemble()
        both = self.back_rows[i] @ mu
        return both[:self.n], both[self.n:]

    def unknown_cotangent(self, i: int, coef: Coefficients, q_bar, qd_bar, qdd_bar, a_bar,
                          lam_bar):
        """L_xᵀ ỹ of step i (:meth:`StepJacobian.unknown_cotangent`)."""
        h = coef.h
        top = qdd_bar + coef.c1 * (a_bar + h * h * coef.beta * q_bar + h * coef.gamma * qd_bar)
        if self.index2:
            return np.concatenate([top, lam_bar, self.p[i].T @ q_bar])
        return np.concatenate([top, lam_bar])

    def back(self, i: int, coef: Coefficients, bars, lam_bar):
        """One step of the sweep through step i of the chunk: (μ, the cotangents
        (q̄, q̄̇, q̄̈, ā) of y_n) from those of y_{n+1}, ``bars`` = (q̄, q̄̇, q̄̈, ā), and
        λ̄: μ = J_i⁻ᵀ L_xᵀ ỹ_{n+1} (:meth:`unknown_cotangent`, :meth:`solve_transposed`),
        then L_yᵀ (ỹ_{n+1} − F_yᵀ μ) (:meth:`state_cotangents`,
        :meth:`Coefficients.pull_back`)."""
        q_bar, qd_bar, qdd_bar, a_bar = bars
        mu = self.solve_transposed(i, self.unknown_cotangent(i, coef, q_bar, qd_bar, qdd_bar,
                                                             a_bar, lam_bar))
        f_q, f_qd = self.state_cotangents(i, mu)
        return mu, coef.pull_back(q_bar - f_q, qd_bar - f_qd, a_bar)

    def sweep(self, bars, sensor):
        """(μ (K, size), the cotangents (q̄, q̄̇, q̄̈, ā) of the chunk's first start) of every
        step of the chunk, last first, in one kernel call: :meth:`back` through each,
        the objective's weighted (∂g/∂q, ∂g/∂q̇, ∂g/∂q̈, ∂g/∂λ) at step i's end,
        ``sensor[i]`` (3 n + n_c), added to its cotangents first (λ̄ is that part alone).
        ``bars``: the cotangents at the last step's end. Needs :attr:`kernel_rows`;
        ConvergenceError naming the step whose Jacobian is singular."""
        from ..engine.many_states import adjoint_sweep

        if self.kernel_rows is None or self.compiled is None:
            raise ValueError("AdjointSteps.sweep needs the kernel's pieces of the chunk "
                             "(raws from TangentSource.pieces_many) and its compiled "
                             "engine; take the steps one by one with back")
        self._check_current()
        count, n, m = len(self.states), self.n, self.m
        steps = np.empty((count, SWEEP_COEFFICIENTS + sensor.shape[1]))
        steps[:, :SWEEP_COEFFICIENTS] = [(c.h, c.beta, c.gamma, c.c1, c.c2, c.c3)
                                         for c in self._coefs]
        steps[:, SWEEP_COEFFICIENTS:] = sensor
        extras = np.zeros((count, 2 * m if self.index2 else 0, n))
        if self.index2:
            extras[:, :m] = self._pieces[4]
            extras[:, m:] = self.p.transpose(0, 2, 1)
        cotangents = np.array(bars)
        mus, stop = adjoint_sweep(self.compiled, self.kernel_rows, extras, steps, cotangents)
        if stop >= 0:  # LAPACK's factors say where J is exactly singular
            self._assemble()
            _factor(self.matrices[stop], self.states[stop])
            raise ConvergenceError(f"the step Jacobian at t = {self.states[stop].t:.6g} s "
                                   f"is singular to working precision (or its cotangent "
                                   f"is not finite): redundant constraints?")
        return mus, tuple(cotangents)


def _stacked(operation, matrices, rhs, states):
    """``operation`` (np.linalg.solve) of stacked matrices; a singular one raises the
    ConvergenceError of :func:`_factor` naming its step's time."""
    try:
        return operation(matrices, rhs)
    except np.linalg.LinAlgError:
        for matrix, state in zip(matrices, states, strict=True):
            _factor(matrix.copy(), state)
        raise
