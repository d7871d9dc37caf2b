"""The backward sweep's recurrence over a chunk of steps, in the kernel (docs/gradients.md,
"The discrete adjoint").

The sweep's products a step are small (vectors of n_q, matrices of the step
Jacobian's order) and strictly sequential: in Python each costs a call, and a chunk of
steps many. :func:`adjoint_sweep` runs a chunk of them in one kernel call, from the
pieces the kernel gave at the chunk's states (M with Φ_q, K_t, C_t:
:func:`~flexmbs.engine.newton.pieces_many`). With ỹ = (q̄, q̄̇, q̄̈, ā) and λ̄ the
cotangents of the step's end state, step k of the chunk (last step first):

    ỹ += the objective's ∂g/∂y at the step's end (its weight applied)
    J  = the step's scaled Jacobian from its pieces (β' = 1/(h²βc1), γ' = γ/(βh))
    b  = (q̄̈ + c1 (ā + h²β q̄ + hγ q̄̇), λ̄[, Pᵀ q̄])             L_xᵀ ỹ
    μ  = diag(rows) J⁻ᵀ diag(cols) b
    (q̄, q̄̇) −= ((F_yᵀ μ)_q, (F_yᵀ μ)_q̇)
    ỹ  ← L_yᵀ (q̄, q̄̇, ā)                                          the pull-back

as :class:`~flexmbs.gradients.step.StepJacobian` has them (its docstring gives J, rows
and cols), Jᵀ factored here (:func:`~flexmbs.engine.linear_solves.lu_factor_into`: the
kernel's own LU with partial pivoting). The μ of every step are kept: the parameters'
terms μᵀ ∂F/∂p are taken from them afterwards, in NumPy, for the chunk at once.
"""

from __future__ import annotations

import numpy as np

from ..compiled._jit import njit
from ..compiled.codes import SWEEP_COEFFICIENTS
from ..compiled.packing import packed_view
from .linear_solves import lu_factor_into, lu_solve


@njit(cache=True)
def _transposed_jacobian(block, extra, n, m, bp, gp, out):
    """out ← Jᵀ of one step (module docstring) from its pieces ``block`` (3, s0, s0)
    (M with Φ_q below it, K_t, C_t) and, in the stabilized index-2 form, ``extra``
    (2 n_c, n_q): Z, then Pᵀ (no rows in index 3)."""
    mass, stiff, damp = block[0], block[1], block[2]
    index2 = extra.shape[0] > 0
    size = out.shape[0]
    for i in range(size):
        for j in range(size):
            out[i, j] = 0.0
    ratio, inv_bp = gp / bp, 1.0 / bp
    for i in range(n):
        for j in range(n):  # S = M + (γ'/β') C_t + K_t/β'
            out[j, i] = mass[i, j] + ratio * damp[i, j] + inv_bp * stiff[i, j]
    for r in range(m):
        jac = mass[n + r]
        for j in range(n):  # Φ_qᵀ beside S, Φ_q below it
            out[n + r, j] = jac[j]
            out[j, n + r] = jac[j]
    if not index2:
        return
    inv_gp = 1.0 / gp
    for r in range(m):
        z, pt, jac = extra[r], extra[m + r], mass[n + r]
        for j in range(n):
            out[j, n + r] += inv_gp * z[j]  # Φ_q + Z/γ'
            out[j, n + m + r] = jac[j]  # Φ_q in the last rows
        for i in range(n):  # K_t P/β' in the last columns
            acc = 0.0
            for j in range(n):
                acc += stiff[i, j] * pt[j]
            out[n + m + r, i] = inv_bp * acc
        for i in range(m):  # Z P/γ'
            zi, acc = extra[i], 0.0
            for j in range(n):
                acc += zi[j] * pt[j]
            out[n + m + r, n + i] = inv_gp * acc
        out[n + m + r, n + m + r] = 1.0


@njit(cache=True)
def _singular(lu_t) -> bool:
    """Whether the LU factors ``lu_t`` (:func:`~flexmbs.engine.linear_solves.
    lu_factor_into`'s) are singular to working precision: a pivot of U at most
    s ε times the largest (the scaled step Jacobian is well conditioned; such a pivot
    is round-off of an exact zero, where LAPACK's getrf may find the zero itself)."""
    size = lu_t.shape[0]
    largest, smallest = 0.0, np.inf
    for j in range(size):
        pivot = abs(lu_t[j, j])
        largest = max(largest, pivot)
        smallest = min(smallest, pivot)
    return not smallest > size * 2.220446049250313e-16 * largest


@njit(cache=True, error_model="numpy")  # a zero pivot gives inf, not an exception
def adjoint_sweep(pieces, extras, steps, bars, mus, matrix, lu_t, piv):
    """The chunk's backward steps (module docstring), last row first; returns −1, or the
    row whose step Jacobian is singular to working precision (:func:`_singular`) or
    whose μ is not finite: the sweep stops there.

    ``pieces`` (K, w): each step's row of :func:`~flexmbs.engine.newton.pieces_many`
    (TASK_PIECES_MANY; its (3, s0, s0) block first, s0 = n_q + n_c); ``extras``
    (K, 2 n_c, n_q) in the stabilized index-2 form, Z then Pᵀ of each step, else
    (K, 0, n_q); ``steps`` (K, 6 + 3 n_q + n_c): each step's (h, β, γ, c1, c2, c3) and
    the objective's weighted ∂g/∂q, ∂g/∂q̇, ∂g/∂q̈, ∂g/∂λ at its end; ``bars`` (4, n_q):
    q̄, q̄̇, q̄̈, ā at the last step's end, replaced by those at the first step's start;
    ``mus`` (K, s) ← each step's μ (s = n_q + n_c, + n_c in index 2). ``matrix``,
    ``lu_t`` (s, s) and ``piv`` (s,) are scratch. Row k of the arrays is step k of the
    chunk in time order reversed (row 0 is the latest step)."""
    count, size = mus.shape[0], mus.shape[1]
    n = bars.shape[1]
    m = steps.shape[1] - SWEEP_COEFFICIENTS - 3 * n
    index2 = extras.shape[1] > 0
    s0 = n + m
    width = pieces.shape[1]
    q_bar, qd_bar, qdd_bar, a_bar = bars[0], bars[1], bars[2], bars[3]
    at = SWEEP_COEFFICIENTS  # the objective's terms in a row of ``steps``
    for k in range(count):
        row, mu, extra = steps[k], mus[k], extras[k]
        block = packed_view(pieces, width * k, (3, s0, s0))
        h, beta, gamma, c1, c2, c3 = row[0], row[1], row[2], row[3], row[4], row[5]
        bp, gp = 1.0 / (h * h * beta * c1), gamma / (beta * h)
        hb, hg = h * h * beta, h * gamma
        for j in range(n):
            q_bar[j] += row[at + j]
            qd_bar[j] += row[at + n + j]
            qdd_bar[j] += row[at + 2 * n + j]
        for j in range(n):  # diag(cols) L_xᵀ ỹ: cols = β' on q̈ and λ, 1 on μ
            mu[j] = bp * (qdd_bar[j] + c1 * (a_bar[j] + hb * q_bar[j] + hg * qd_bar[j]))
        for j in range(m):
            mu[n + j] = bp * row[at + 3 * n + j]
        if index2:
            for j in range(m):
                pt, acc = extra[m + j], 0.0
                for i in range(n):
                    acc += pt[i] * q_bar[i]
                mu[n + m + j] = acc
        _transposed_jacobian(block, extra, n, m, bp, gp, matrix)
        lu_factor_into(matrix, lu_t, piv)
        if _singular(lu_t):
            return k
        lu_solve(lu_t, piv, mu)
        finite = True
        for j in range(size):  # diag(rows): 1/β' on r, 1/γ' on the velocity rows, 1 on Φ
            scale = 1.0 / bp if j < n else (1.0 / gp if index2 and j < n + m else 1.0)
            mu[j] *= scale
            finite = finite and np.isfinite(mu[j])
        if not finite:
            return k
        mass, stiff, damp = block[0], block[1], block[2]
        for i in range(n):  # (q̄, q̄̇) −= (K_tᵀ μ_r, C_tᵀ μ_r)
            w, k_row, c_row = mu[i], stiff[i], damp[i]
            for j in range(n):
                q_bar[j] -= w * k_row[j]
                qd_bar[j] -= w * c_row[j]
        for r in range(m):  # the constraint rows: Φ_qᵀ (and Zᵀ) on their μ
            jac = mass[n + r]
            if index2:
                w2, w3, z = mu[n + r], mu[n + m + r], extra[r]
                for j in range(n):
                    q_bar[j] -= w2 * z[j] + w3 * jac[j]
                    qd_bar[j] -= w2 * jac[j]
            else:
                w = mu[n + r]
                for j in range(n):
                    q_bar[j] -= w * jac[j]
        for j in range(n):  # L_yᵀ
            qb, qdb = q_bar[j], qd_bar[j]
            s_a = a_bar[j] + hb * qb + hg * qdb
            qd_bar[j] = h * qb + qdb
            qdd_bar[j] = c2 * s_a
            a_bar[j] = h * h * (0.5 - beta) * qb + h * (1.0 - gamma) * qdb - c3 * s_a
    return -1
