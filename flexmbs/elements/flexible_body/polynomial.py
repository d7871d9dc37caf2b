"""The polynomial elastic force of a nonlinear flexible body in compiled code (modal
derivatives: docs/theory_modal_derivatives.md; the NumPy reference is
:class:`flexmbs.modal.derivative_data.ElasticPolynomial`).

Beyond K_ff η, a body whose coordinates η are its modes and their modal derivatives has
the elastic force f(η) = ½ C₃ : ηη + ⅙ C₄ : ηηη, its tangent ∂f/∂η = C₃ η + ½ C₄ : ηη
and the energy ⅙ C₃ : ηηη + ¹⁄₂₄ C₄ : ηηηη, with C₃ (m, m, m) and C₄ (m, m, m, m)
symmetric in all their indices (derivatives of one strain energy; m the body's modal
coordinates). The sums run over sorted index tuples only, each counted with its number
of orderings, so the force costs m⁴/6, the tangent m⁴/4 and the energy m⁴/24
multiply-adds instead of m⁴; nothing is allocated.
"""

from __future__ import annotations

from ...compiled._jit import njit


@njit(cache=True, inline="always")
def _orderings3(i, j, k):
    """The orderings of sorted indices i ≤ j ≤ k: 6, 3 or 1."""
    same = (i == j) + (j == k)
    return 6.0 if same == 0 else (3.0 if same == 1 else 1.0)


@njit(cache=True, inline="always")
def _orderings4(i, j, k, ll):
    """The orderings of sorted indices i ≤ j ≤ k ≤ l: 24 / the product of the factorials
    of the runs of equal indices."""
    a, b, c = i == j, j == k, k == ll
    if a and b and c:
        return 1.0
    if (a and b) or (b and c):
        return 4.0
    if a and c:
        return 6.0
    if a or b or c:
        return 12.0
    return 24.0


@njit(cache=True)
def add_polynomial_force(c3, c4, m, eta, out):
    """out[i] += ½ Σ C₃[i,j,k] η_j η_k + ⅙ Σ C₄[i,j,k,l] η_j η_k η_l, i < m."""
    for i in range(m):
        acc3 = 0.0
        acc4 = 0.0
        for j in range(m):
            for k in range(j, m):
                pair = eta[j] * eta[k] * (1.0 if j == k else 2.0)
                acc3 += c3[i, j, k] * pair
                for ll in range(k, m):
                    acc4 += (c4[i, j, k, ll] * _orderings3(j, k, ll)
                             * eta[j] * eta[k] * eta[ll])
        out[i] += 0.5 * acc3 + acc4 / 6.0


@njit(cache=True)
def add_polynomial_tangent(c3, c4, m, eta, k_mat, offset):
    """k_mat[offset + i, offset + j] += Σ C₃[i,j,k] η_k + ½ Σ C₄[i,j,k,l] η_k η_l (a
    symmetric block)."""
    for i in range(m):
        for j in range(i, m):
            acc3 = 0.0
            acc4 = 0.0
            for k in range(m):
                acc3 += c3[i, j, k] * eta[k]
                for ll in range(k, m):
                    acc4 += c4[i, j, k, ll] * eta[k] * eta[ll] * (1.0 if k == ll else 2.0)
            value = acc3 + 0.5 * acc4
            k_mat[offset + i, offset + j] += value
            if j != i:
                k_mat[offset + j, offset + i] += value


@njit(cache=True)
def polynomial_energy(c3, c4, m, eta):
    """⅙ C₃ : ηηη + ¹⁄₂₄ C₄ : ηηηη [J]."""
    acc3 = 0.0
    acc4 = 0.0
    for i in range(m):
        for j in range(i, m):
            for k in range(j, m):
                triple = eta[i] * eta[j] * eta[k]
                acc3 += c3[i, j, k] * _orderings3(i, j, k) * triple
                for ll in range(k, m):
                    acc4 += c4[i, j, k, ll] * _orderings4(i, j, k, ll) * triple * eta[ll]
    return acc3 / 6.0 + acc4 / 24.0
