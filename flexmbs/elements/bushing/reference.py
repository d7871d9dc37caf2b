"""The bushing's NumPy reference: plain array functions of the marker vectors and their
Jacobians (docs/multibody.md, "Bushings"). No numba, no model objects: the compiled
kernels are written from these, and the tests use them as the oracle.

Notation. The eight marker vectors V = (r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j), shape
(8, 3), are the two markers' points [m] and unit axes [-] in global components;
``jac`` (8, 3, n) holds their Jacobians ∂V_a/∂q over the n local coordinates of the pair
(body i's, then body j's: what ``marker_frame`` returns, stacked), and ``jac_rate``
(8, 3, n) their rates ∂(J_a q̇)/∂q (``marker_jac_rate``).

Every deformation component is a bilinear form in V, e_k = Σ_ab C^k_ab V_aᵀ V_b
(:func:`coefficients`):

* d = A_iᵀ (r_j − r_i) [m]: marker j's point relative to marker i's, along i's axes;
* θ = ½ vee(A_iᵀA_j − A_jᵀA_i) [-]: the small-angle rotation of j relative to i about
  i's axes, θ = sin φ · n for a rotation by φ about the unit axis n (i's components).

With S^k = C^k + C^kᵀ and the weights W^k_a = Σ_b S^k_ab V_b:

    ∇e_k = Σ_a W^k_aᵀ J_a,      ė = ∇e q̇,
    ∇²e_k = Σ_ab S^k_ab J_aᵀ J_b + Σ_a H_a(W^k_a),
    ∂ė_k/∂q = Σ_ab S^k_ab (J_a q̇)ᵀ J_b + Σ_a W^k_aᵀ J̇_a,

with H_a(w) = ∂²(wᵀ V_a)/∂q² the body's marker Hessian. The load s = K e + C ė − f0
[N, N, N, N m, N m, N m] gives the generalized force Q = −(∇e)ᵀ s, the potential
V = ½ eᵀ K e − f0ᵀ e [J] and the dissipated power ėᵀ C ė [W]; the Newton tangents are

    K_t = −∂Q/∂q = Σ_k s_k ∇²e_k + (∇e)ᵀ K ∇e + (∇e)ᵀ C ∂ė/∂q,
    C_t = −∂Q/∂q̇ = (∇e)ᵀ C ∇e.
"""

from __future__ import annotations

import numpy as np

#: Indices of the eight marker vectors V: r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j.
R_I, X_I, Y_I, Z_I, R_J, X_J, Y_J, Z_J = range(8)

#: Names of the six deformation components (and of the load components).
COMPONENTS = ("dx", "dy", "dz", "rx", "ry", "rz")


def coefficients() -> np.ndarray:
    """C (6, 8, 8): e_k = Σ_ab C[k, a, b] V_aᵀ V_b for the six deformation components.

    d_a = a_iᵀ r_j − a_iᵀ r_i for a_i = x_i, y_i, z_i;
    θ_x = ½(z_i·y_j − y_i·z_j), θ_y = ½(x_i·z_j − z_i·x_j), θ_z = ½(y_i·x_j − x_i·y_j).
    """
    c = np.zeros((6, 8, 8))
    for k, axis in enumerate((X_I, Y_I, Z_I)):
        c[k, axis, R_J] = 1.0
        c[k, axis, R_I] = -1.0
    # θ = ½ vee(R − Rᵀ), R_ab = a_i · b_j: θ_x = ½(R_zy − R_yz) and cyclic
    for k, (a, b) in enumerate(((Z_I, Y_I), (X_I, Z_I), (Y_I, X_I))):
        c[3 + k, a, b + 4] = 0.5  # a_i · b_j
        c[3 + k, b, a + 4] = -0.5  # b_i · a_j
    return c


_COEF = coefficients()
_COEF.flags.writeable = False
_SYM = _COEF + _COEF.transpose(0, 2, 1)  # S^k = C^k + C^kᵀ
_SYM.flags.writeable = False


def marker_vectors(r_i, axes_i, r_j, axes_j) -> np.ndarray:
    """V (8, 3) from the markers' points r [m] (3,) and axes (3, 3) (columns x, y, z,
    global components)."""
    return np.vstack([r_i, np.asarray(axes_i).T, r_j, np.asarray(axes_j).T])


def stack_jacobians(jac_i, jac_j) -> np.ndarray:
    """(8, 3, n_i + n_j) from the two markers' (4, 3, n_i) and (4, 3, n_j) Jacobians
    (or Jacobian rates): body i's columns first; a ground marker has n = 0."""
    ni, nj = jac_i.shape[2], jac_j.shape[2]
    out = np.zeros((8, 3, ni + nj))
    out[:4, :, :ni] = jac_i
    out[4:, :, ni:] = jac_j
    return out


def deformation(vecs) -> np.ndarray:
    """e (6,) = [d [m]; θ [-]] in marker i's axes from V (8, 3)."""
    return np.einsum("kab,ai,bi->k", _COEF, vecs, vecs)


def weights(vecs) -> np.ndarray:
    """W (6, 8, 3): W[k, a] = Σ_b S^k_ab V_b, so that ∇e_k = Σ_a W[k, a]ᵀ J_a."""
    return np.einsum("kab,bi->kai", _SYM, vecs)


def gradient(vecs, jac) -> np.ndarray:
    """∇e = ∂e/∂q (6, n) from V (8, 3) and the stacked Jacobians J (8, 3, n)."""
    return np.einsum("kai,ain->kn", weights(vecs), jac)


def loads(e, e_dot, stiffness, damping, preload) -> np.ndarray:
    """s (6,) = K e + C ė − f0 [N, N m]: K = diag(stiffness) [N/m ×3, N m/rad ×3],
    C = diag(damping) [N s/m ×3, N m s/rad ×3], f0 = preload (the force and torque on
    marker j at zero deflection, along marker i's axes). The bushing acts on marker j
    with the force −s[:3] (in N) and the torque −s[3:] (in N m) along marker i's axes."""
    return (np.asarray(stiffness) * e + np.asarray(damping) * e_dot
            - np.asarray(preload))


def evaluate(vecs, jac, qd, stiffness, damping, preload):
    """(Q (n,), e (6,), ė (6,), s (6,), ∇e (6, n)): the generalized force Q = −(∇e)ᵀ s on
    the pair's local coordinates and what it is made of (see :func:`loads`)."""
    grad = gradient(vecs, jac)
    e = deformation(vecs)
    e_dot = grad @ qd
    s = loads(e, e_dot, stiffness, damping, preload)
    return -(grad.T @ s), e, e_dot, s, grad


def hessian_weights(vecs, s) -> np.ndarray:
    """w (8, 3) = Σ_k s_k W[k]: the weights of the bodies' marker Hessians in
    Σ_k s_k ∇²e_k (rows 0–3 for marker i's vectors, 4–7 for marker j's)."""
    return np.einsum("k,kai->ai", s, weights(vecs))


def rate_gradient(vecs, jac, jac_rate, qd) -> np.ndarray:
    """∂ė/∂q (6, n) at fixed q̇: Σ_ab S^k_ab (J_a q̇)ᵀ J_b + Σ_a W^k_aᵀ J̇_a."""
    v_dot = jac @ qd  # (8, 3)
    return (np.einsum("kab,ai,bin->kn", _SYM, v_dot, jac)
            + np.einsum("kai,ain->kn", weights(vecs), jac_rate))


def tangents(vecs, jac, jac_rate, qd, s, stiffness, damping, curvature):
    """(K_t, C_t) (n, n) = (−∂Q/∂q, −∂Q/∂q̇) of the bushing on the pair's local coordinates.

    ``s`` is the load of :func:`evaluate`; ``curvature`` (n, n) the bodies' marker
    Hessians Σ_a H_a(w_a) with w = :func:`hessian_weights` (block-diagonal: body i's and
    body j's), the part of Σ_k s_k ∇²e_k that the bodies' kinematics contribute.
    """
    grad = gradient(vecs, jac)
    s = np.asarray(s, dtype=float)
    coef = np.einsum("k,kab->ab", s, _SYM)  # Σ_k s_k S^k
    n = jac.shape[2]
    flat = jac.reshape(8, 3 * n)
    k_t = jac.reshape(24, n).T @ (coef @ flat).reshape(24, n) + curvature
    k_t += grad.T @ (np.asarray(stiffness)[:, None] * grad)
    k_t += grad.T @ (np.asarray(damping)[:, None] * rate_gradient(vecs, jac, jac_rate, qd))
    c_t = grad.T @ (np.asarray(damping)[:, None] * grad)
    return k_t, c_t


def potential(e, stiffness, preload) -> float:
    """V = ½ eᵀ K e − f0ᵀ e [J]."""
    return float(0.5 * e @ (np.asarray(stiffness) * e) - np.asarray(preload) @ e)


def dissipation(e_dot, damping) -> float:
    """ėᵀ C ė [W]: the power the dampers take out (≥ 0)."""
    return float(e_dot @ (np.asarray(damping) * e_dot))
