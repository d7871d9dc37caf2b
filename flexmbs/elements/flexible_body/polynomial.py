"""The polynomial elastic force of a nonlinear flexible body in compiled code (modal
derivatives: docs/theory_modal_derivatives.md; the NumPy reference is
:class:`flexmbs.modal.derivative_data.ElasticPolynomial`).

Beyond K_ff η, a body whose coordinates η are its modes and their modal derivatives has
the elastic force f(η) = ½ C₃ : ηη + ⅙ C₄ : ηηη, its tangent ∂f/∂η = C₃ η + ½ C₄ : ηη
and the energy ⅙ C₃ : ηηη + ¹⁄₂₄ C₄ : ηηηη, with C₃ (m, m, m) and C₄ (m, m, m, m)
symmetric (m = 7 + n coordinates of the body less its 7 frame coordinates). The sums run
over the body's m coordinates of the padded tables; nothing is allocated. Cost O(m⁴)
per call.
"""

from __future__ import annotations

from ...compiled._jit import njit


@njit(cache=True)
def add_polynomial_force(c3, c4, m, eta, out):
    """out[i] += ½ Σ C₃[i,j,k] η_j η_k + ⅙ Σ C₄[i,j,k,l] η_j η_k η_l, i < m."""
    for i in range(m):
        acc3 = 0.0
        acc4 = 0.0
        for j in range(m):
            for k in range(m):
                pair = eta[j] * eta[k]
                acc3 += c3[i, j, k] * pair
                inner = 0.0
                for ll in range(m):
                    inner += c4[i, j, k, ll] * eta[ll]
                acc4 += inner * pair
        out[i] += 0.5 * acc3 + acc4 / 6.0


@njit(cache=True)
def add_polynomial_tangent(c3, c4, m, eta, k_mat, offset):
    """k_mat[offset + i, offset + j] += Σ C₃[i,j,k] η_k + ½ Σ C₄[i,j,k,l] η_k η_l."""
    for i in range(m):
        for j in range(m):
            acc3 = 0.0
            acc4 = 0.0
            for k in range(m):
                acc3 += c3[i, j, k] * eta[k]
                inner = 0.0
                for ll in range(m):
                    inner += c4[i, j, k, ll] * eta[ll]
                acc4 += inner * eta[k]
            k_mat[offset + i, offset + j] += acc3 + 0.5 * acc4


@njit(cache=True)
def polynomial_energy(c3, c4, m, eta):
    """⅙ C₃ : ηηη + ¹⁄₂₄ C₄ : ηηηη [J]."""
    acc3 = 0.0
    acc4 = 0.0
    for i in range(m):
        for j in range(m):
            for k in range(m):
                triple = eta[i] * eta[j] * eta[k]
                acc3 += c3[i, j, k] * triple
                inner = 0.0
                for ll in range(m):
                    inner += c4[i, j, k, ll] * eta[ll]
                acc4 += inner * triple
    return acc3 / 6.0 + acc4 / 24.0
