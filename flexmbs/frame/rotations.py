"""Euler parameters p = [e0, e1, e2, e3] (scalar first): A(p), G(p), Ḡ(p) and the exact
derivatives of rotated vectors used by constraint Jacobians.

Conventions (docs/theory_ffrf.md §1): ``A(p) = (e0² − eᵀe) I + 2 e eᵀ + 2 e0 ẽ`` (homogeneous
quadratic, equal to a rotation matrix on ‖p‖ = 1) rotates body-frame vectors into the
global frame; ω̄ = Ḡ(p) ṗ (body components), ω = G(p) ṗ (global), with
``Ḡ = 2[−e, e0 I − ẽ]`` and ``G = 2[−e, e0 I + ẽ]``.
"""

from __future__ import annotations

import numpy as np


def _floats(v) -> list:
    """Components of a small vector as Python floats (scalar arithmetic on them is several
    times cheaper than on NumPy scalars; the results are the same IEEE operations)."""
    return v.tolist() if isinstance(v, np.ndarray) else [float(x) for x in v]


def cross3(a, b) -> np.ndarray:
    """a × b for 3-vectors (much cheaper than ``np.cross`` for a single pair)."""
    a0, a1, a2 = _floats(a)
    b0, b1, b2 = _floats(b)
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def cross_rows(e, s) -> np.ndarray:
    """e × s_k for one 3-vector e and rows s (k, 3)."""
    out = np.empty_like(s)
    out[:, 0] = e[1] * s[:, 2] - e[2] * s[:, 1]
    out[:, 1] = e[2] * s[:, 0] - e[0] * s[:, 2]
    out[:, 2] = e[0] * s[:, 1] - e[1] * s[:, 0]
    return out


def skew(a) -> np.ndarray:
    """3x3 skew matrix with ``skew(a) @ b == cross(a, b)``."""
    x, y, z = _floats(a)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rotation_matrix(p) -> np.ndarray:
    """A(p), the homogeneous quadratic form (a rotation matrix when ‖p‖ = 1)."""
    e0, e1, e2, e3 = _floats(p)
    return np.array([
        [e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3),
         2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3,
         2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1),
         e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3],
    ])


def g_bar(p) -> np.ndarray:
    """Ḡ(p) (3x4): ω̄ = Ḡ ṗ, body-frame angular velocity."""
    e0, e1, e2, e3 = _floats(p)
    return 2.0 * np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def g_global(p) -> np.ndarray:
    """G(p) (3x4): ω = G ṗ, global angular velocity."""
    e0, e1, e2, e3 = _floats(p)
    return 2.0 * np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])


def d_rotated(p, s) -> np.ndarray:
    """∂(A(p) s)/∂p (3x4), exact for the homogeneous A and linear in p.

    ``2 [e0 s + ẽ s, (eᵀs) I + e sᵀ − s eᵀ − e0 s̃]``, evaluated as s·B(p) with the basis
    of :func:`d_rotated_basis`. Because it is linear in p, the time derivative along a
    motion is ``d_rotated(ṗ, s)``, so d²(A s)/dt² = d_rotated(p, s) p̈ + d_rotated(ṗ, s) ṗ.
    """
    return (np.asarray(s, dtype=float) @ d_rotated_basis(p)).reshape(3, 4)


def d_rotated_basis(p) -> np.ndarray:
    """B (3, 12) with d_rotated(p, s) = (s @ B).reshape(3, 4): ∂(A s)/∂p is linear in s."""
    e0, e1, e2, e3 = _floats(p)
    # rows: s = e_x, e_y, e_z; each a 3x4 matrix flattened row-major
    return 2.0 * np.array([
        [e0, e1, -e2, -e3, e3, e2, e1, e0, -e2, e3, -e0, e1],
        [-e3, e2, e1, -e0, e0, -e1, e2, -e3, e1, e0, e3, e2],
        [e2, e3, e0, e1, -e1, -e0, e3, e2, e0, -e1, -e2, e3],
    ])


def _quadratic_basis() -> tuple[np.ndarray, np.ndarray]:
    """(B (16, 9), C (16, 3)): A(p) = (p ⊗ p) B and G(p) ṗ = (p ⊗ ṗ) C, with p ⊗ p
    flattened row by row (A is a quadratic form in p, G(p) ṗ a bilinear one)."""
    eye = np.eye(4)
    basis = np.empty((16, 9))
    omega = np.empty((16, 3))
    for i in range(4):
        for j in range(4):
            # the polarization of the forms at unit vectors: exact small integers
            both = eye[i] + eye[j]
            basis[4 * i + j] = (0.5 * (rotation_matrix(both) - rotation_matrix(eye[i])
                                       - rotation_matrix(eye[j]))).ravel()
            if i == j:
                basis[4 * i + j] = rotation_matrix(eye[i]).ravel()
            omega[4 * i + j] = g_global(eye[i]) @ eye[j]
    return basis, omega


_A_BASIS, _G_BASIS = _quadratic_basis()


def rotation_matrices(p) -> np.ndarray:
    """A(p) of every row of ``p`` (n, 4) → (n, 3, 3): :func:`rotation_matrix` over a
    history of Euler parameters, as (p ⊗ p) times the form's coefficients."""
    p = np.asarray(p, dtype=float).reshape(-1, 4)
    return ((p[:, :, None] * p[:, None, :]).reshape(-1, 16) @ _A_BASIS).reshape(-1, 3, 3)


def rotation_matrix_rates(p, pd) -> np.ndarray:
    """dA/dt along ṗ for every row of ``p``, ``pd`` (n, 4) → (n, 3, 3): A is a
    homogeneous quadratic form in p, so its rate is its polarization 2 B(p, ṗ)."""
    p = np.asarray(p, dtype=float).reshape(-1, 4)
    pd = np.asarray(pd, dtype=float).reshape(-1, 4)
    outer = p[:, :, None] * pd[:, None, :]
    return ((outer + outer.transpose(0, 2, 1)).reshape(-1, 16) @ _A_BASIS).reshape(-1, 3, 3)


def angular_velocities(p, pd) -> np.ndarray:
    """ω = G(p) ṗ (global) for every row of ``p``, ``pd`` (n, 4) → (n, 3)."""
    p = np.asarray(p, dtype=float).reshape(-1, 4)
    pd = np.asarray(pd, dtype=float).reshape(-1, 4)
    return (p[:, :, None] * pd[:, None, :]).reshape(-1, 16) @ _G_BASIS


def d_rotated_batch(p, vectors) -> np.ndarray:
    """:func:`d_rotated` for several vectors at once: ``vectors`` (k, 3) → (k, 3, 4)."""
    s = np.asarray(vectors, dtype=float)
    return (s @ d_rotated_basis(p)).reshape(s.shape[0], 3, 4)


def quaternion_from_matrix(mat) -> np.ndarray:
    """Euler parameters (e0 ≥ 0) of a proper rotation matrix (Shepperd's method)."""
    m = np.asarray(mat, dtype=float)
    tr = np.trace(m)
    cands = [tr, m[0, 0], m[1, 1], m[2, 2]]
    k = int(np.argmax(cands))
    if k == 0:
        e0 = 0.5 * np.sqrt(1 + tr)
        q = [e0, (m[2, 1] - m[1, 2]) / (4 * e0), (m[0, 2] - m[2, 0]) / (4 * e0),
             (m[1, 0] - m[0, 1]) / (4 * e0)]
    elif k == 1:
        e1 = 0.5 * np.sqrt(1 + 2 * m[0, 0] - tr)
        q = [(m[2, 1] - m[1, 2]) / (4 * e1), e1, (m[0, 1] + m[1, 0]) / (4 * e1),
             (m[0, 2] + m[2, 0]) / (4 * e1)]
    elif k == 2:
        e2 = 0.5 * np.sqrt(1 + 2 * m[1, 1] - tr)
        q = [(m[0, 2] - m[2, 0]) / (4 * e2), (m[0, 1] + m[1, 0]) / (4 * e2), e2,
             (m[1, 2] + m[2, 1]) / (4 * e2)]
    else:
        e3 = 0.5 * np.sqrt(1 + 2 * m[2, 2] - tr)
        q = [(m[1, 0] - m[0, 1]) / (4 * e3), (m[0, 2] + m[2, 0]) / (4 * e3),
             (m[1, 2] + m[2, 1]) / (4 * e3), e3]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def axis_angle(axis, angle: float) -> np.ndarray:
    """Euler parameters of a rotation by ``angle`` [rad] about ``axis`` (any length but
    zero)."""
    axis = _unit(axis, "axis_angle: axis")
    if not np.isfinite(angle):
        from ..errors import ValidationError

        raise ValidationError(f"axis_angle: angle must be a finite number, got {angle!r}")
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def frame_from_z(z, x_hint=None) -> np.ndarray:
    """A right-handed orthonormal frame (columns x, y, z) whose z is ``z``."""
    z = _unit(z, "frame_from_z: z")
    if x_hint is None:
        x_hint = [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0]
    x = np.asarray(x_hint, dtype=float)
    x = x - np.dot(x, z) * z
    x /= np.linalg.norm(x)
    (x0, x1, x2), (z0, z1, z2) = x.tolist(), z.tolist()
    out = np.empty((3, 3))  # (y = z × x by its components: np.cross costs 20 µs)
    out[:, 0], out[:, 1], out[:, 2] = x, (z1 * x2 - z2 * x1, z2 * x0 - z0 * x2,
                                           z0 * x1 - z1 * x0), z
    return out


# --------------------------------------------------------------------------- tangents
# Exact p-derivatives for Newton tangents (docs/theory_ffrf.md §1). A(p) is the
# homogeneous quadratic of §1 and Ḡ(p), G(p) are linear, so every derivative below is
# exact off ‖p‖ = 1 as well (finite differences of the residual perturb p off the sphere).

def _rotation_hessian_tensor() -> np.ndarray:
    """H[l, a, c, m] = ∂²(A(p) e_a)_c / ∂p_l ∂p_m (constant: A is quadratic in p)."""
    return np.stack([d_rotated_basis(e).reshape(3, 3, 4) for e in np.eye(4)])


#: ∂ d_rotated_basis(p) / ∂p_l, reshaped (4, 3, 3, 4): see :func:`rotated_hessian`.
ROTATION_HESSIAN = _rotation_hessian_tensor()


def rotated_hessian(vectors, weights) -> np.ndarray:
    """∂²/∂p² of Σ_k w_kᵀ A(p) s_k (4x4, symmetric, independent of p).

    ``vectors`` s (k, 3) body-frame, ``weights`` w (k, 3) global components.
    """
    s = np.asarray(vectors, dtype=float)
    w = np.asarray(weights, dtype=float)
    sw = s.T @ w  # (3, 3): Σ_k s_ka w_kc
    return np.einsum("ac,lacm->ml", sw, ROTATION_HESSIAN)


def rotated_mixed(p, shapes, weights) -> np.ndarray:
    """∂²/∂p ∂ξ of Σ_k w_kᵀ A(p) U_k ξ (4 x n): ``shapes`` U (k, 3, n), ``weights`` (k, 3)."""
    basis = d_rotated_basis(p).reshape(3, 3, 4)  # [a, c, m]: d_rotated(p, e_a)[c, m]
    uw = np.einsum("kan,kc->acn", shapes, weights)
    return np.einsum("acn,acm->mn", uw, basis)


def rotation_rate(p, pd) -> np.ndarray:
    """Ȧ = Σ_l ṗ_l ∂A/∂p_l (3x3), so that Ȧ s = d_rotated(p, s) ṗ."""
    return (d_rotated_basis(p).reshape(3, 3, 4) @ pd).T


def d_rotated_transpose(p, x) -> np.ndarray:
    """∂(A(p)ᵀ x)/∂p (3x4); A(p)ᵀ = A(p*) with the conjugate p* = [e0, −e]."""
    p = np.asarray(p, dtype=float)
    out = d_rotated(np.array([p[0], -p[1], -p[2], -p[3]]), x)
    out[:, 1:] *= -1.0
    return out


def g_bar_t_jac(x) -> np.ndarray:
    """∂(Ḡ(p)ᵀ x)/∂p = 2 [[0, −xᵀ], [x, −x̃]] (4x4, constant: Ḡ is linear in p)."""
    x0, x1, x2 = x
    return 2.0 * np.array([[0.0, -x0, -x1, -x2], [x0, 0.0, x2, -x1],
                           [x1, -x2, 0.0, x0], [x2, x1, -x0, 0.0]])


def g_global_t_jac(x) -> np.ndarray:
    """∂(G(p)ᵀ x)/∂p = 2 [[0, −xᵀ], [x, x̃]] (4x4, constant: G is linear in p)."""
    x0, x1, x2 = x
    return 2.0 * np.array([[0.0, -x0, -x1, -x2], [x0, 0.0, -x2, x1],
                           [x1, x2, 0.0, -x0], [x2, -x1, x0, 0.0]])


def _unit(vector, what: str) -> np.ndarray:
    """``vector`` (3,) scaled to unit length; ValidationError naming ``what`` for a
    zero-length, non-finite or wrongly sized one (before any division warns)."""
    from ..errors import ValidationError

    v = np.asarray(vector, dtype=float)
    norm = float(np.linalg.norm(v)) if v.shape == (3,) else 0.0
    if v.shape != (3,) or not np.isfinite(norm) or norm == 0.0:
        raise ValidationError(f"{what} must be a 3-vector of nonzero finite length, got "
                              f"{vector!r}")
    return v / norm
