"""The backward sweep over a chunk of steps as products with precomputed matrices, for
small models (docs/gradients.md, "Chunks of steps").

Step by step the sweep (:mod:`.adjoint`) does, with the cotangent v = (q̄, q̄̇, q̄̈, ā)
(4n) after the step's sensor terms are added,

    μ = diag(rows) J⁻ᵀ diag(cols) b,   b = (E v, λ̄[, Pᵀ q̄]),
    E v = q̄̈ + c1 (ā + h²β q̄ + hγ q̄̇)
    (f_q, f_q̇) = B μ,                   v ← L_yᵀ (q̄ − f_q, q̄̇ − f_q̇, ā)

(:class:`~flexmbs.gradients.step.AdjointSteps`), everything linear in v and λ̄. For a
small model the chunk's matrices are formed at once — the scaled inverse transposes
S = diag(rows) J⁻ᵀ diag(cols) by one stacked inversion, and the transitions
T = L_yᵀ [I − F B S E] (4n × 4n) — so that the sequential part is one product per step,
v ← T (v + s) with s the step's sensor terms, and the multipliers μ = S (E v, λ̄) of all
the chunk's steps, with their parameter terms μᵀ ∂F/∂p, follow in one stacked product
afterwards. The values are those of the step-by-step sweep to round-off (the inverse in
place of the LU solves: the matrices are in the scaled form, well conditioned).
"""

from __future__ import annotations

import numpy as np

#: The largest step Jacobian (n_q + n_c) swept this way: beyond it the stacked inversion
#: and the (4 n_q)² transitions cost more than the LU solves they replace.
SIZE_LIMIT = 32


def usable(system, index2: bool, integrals) -> bool:
    """Whether a chunk of ``system``'s steps is swept by :func:`sweep`: no servo integral
    carried beside the cotangents, a step Jacobian of at most :data:`SIZE_LIMIT` rows
    (n_q + n_c in index 3, n_q + 2 n_c in the stabilized index-2 form)."""
    size = system.n_q + (2 if index2 else 1) * system.n_c
    return not integrals and size <= SIZE_LIMIT


def transitions(steps, coefs):
    """(S (K, size, size), T (K, 4n, 4n), T_λ (K, 4n, m)): the chunk's scaled inverse
    transposes and transitions (module docstring) from ``steps`` (an
    :class:`~flexmbs.gradients.step.AdjointSteps` built with ``factor=False``) and the
    steps' :class:`~flexmbs.gradients.step.Coefficients`."""
    n, m = steps.n, steps.m
    count = len(coefs)
    s_mat = steps.scaled_inverse_transposes()                     # (K, size, size)
    bj = steps.back @ s_mat                                       # (K, 2n, size)
    h = np.array([c.h for c in coefs])
    beta = np.array([c.beta for c in coefs])
    gamma = np.array([c.gamma for c in coefs])
    c1, c2, c3 = (np.array([getattr(c, k) for c in coefs]) for k in ("c1", "c2", "c3"))
    weights = np.stack([c1 * h * h * beta, c1 * h * gamma, np.ones(count), c1], axis=1)
    # (x, y) = (q̄, q̄̇) − A E v − B_λ λ̄ with A = BJ[:, :, :n]; E v = Σ_b weights_b v_b
    # (index 2: b also holds Pᵀ q̄, the position correction's multiplier rows)
    a = bj[:, :, :n]
    u = np.zeros((count, 3 * n, 4 * n))                          # (x, y, ā) from v
    eye = np.eye(n)
    for block in range(4):
        u[:, :2 * n, block * n:(block + 1) * n] = -weights[:, block, None, None] * a
    if steps.index2:
        u[:, :2 * n, :n] -= bj[:, :, n + m:] @ steps.p.transpose(0, 2, 1)
    u[:, :n, :n] += eye
    u[:, n:2 * n, n:2 * n] += eye
    u[:, 2 * n:, 3 * n:] = eye
    u_lam = np.zeros((count, 3 * n, m))
    u_lam[:, :2 * n] = -bj[:, :, n:n + m]
    return s_mat, _pull_back(u, h, beta, gamma, c2, c3, n), \
        _pull_back(u_lam, h, beta, gamma, c2, c3, n)


def _pull_back(u, h, beta, gamma, c2, c3, n):
    """L_yᵀ applied to the rows (x, y, ā) of ``u`` (K, 3n, k): the rows of (q̄, q̄̇, q̄̈, ā)
    of the step before (:meth:`~flexmbs.gradients.step.Coefficients.pull_back`)."""
    x, y, a_bar = u[:, :n], u[:, n:2 * n], u[:, 2 * n:]
    h, beta, gamma, c2, c3 = (v[:, None, None] for v in (h, beta, gamma, c2, c3))
    s_a = a_bar + h * h * beta * x + h * gamma * y
    return np.concatenate([x, h * x + y, c2 * s_a,
                           h * h * (0.5 - beta) * x + h * (1 - gamma) * y - c3 * s_a],
                          axis=1)


def sweep(v, s_mat, trans, trans_lam, sensor, lam_sensor, coefs, n, p=None):
    """The chunk's sequential part: from the cotangent ``v`` (4n,) of the chunk's last
    step, for each step i (the chunk's order) w_i = v + sensor[i], v ← T_i w_i −
    T_λ,i λ̄_i; returns (v before the chunk, μ (K, size) of every step). ``sensor``
    (K, 4n) the steps' sensor terms on (q̄, q̄̇, q̄̈), ``lam_sensor`` (K, m) on λ̄ (None:
    none); ``p`` (K, n, m) the position corrections' P of the index-2 form."""
    count = len(coefs)
    ws = np.empty((count, 4 * n))
    for i in range(count):
        w = v + sensor[i]
        ws[i] = w
        v = trans[i] @ w
        if lam_sensor is not None:
            v = v + trans_lam[i] @ lam_sensor[i]
    h = np.array([c.h for c in coefs])
    c1 = np.array([c.c1 for c in coefs])
    beta = np.array([c.beta for c in coefs])
    gamma = np.array([c.gamma for c in coefs])
    top = (ws[:, 2 * n:3 * n] + c1[:, None] * (ws[:, 3 * n:] + (h * h * beta)[:, None]
                                               * ws[:, :n] + (h * gamma)[:, None]
                                               * ws[:, n:2 * n]))
    m = trans_lam.shape[2]
    parts = [top, lam_sensor if lam_sensor is not None else np.zeros((count, m))]
    if p is not None:
        parts.append(np.einsum("knm,kn->km", p, ws[:, :n]))
    return v, np.einsum("kij,kj->ki", s_mat, np.concatenate(parts, axis=1))
