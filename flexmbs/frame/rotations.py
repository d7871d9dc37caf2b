"""Euler parameters p = [e0, e1, e2, e3] (scalar first): A(p), G(p), Ḡ(p) and the exact
derivatives of rotated vectors used by constraint Jacobians.

Conventions (FFRF.md §1): ``A(p) = (e0² − eᵀe) I + 2 e eᵀ + 2 e0 ẽ`` (homogeneous
quadratic, equal to a rotation matrix on ‖p‖ = 1) rotates body-frame vectors into the
global frame; ω̄ = Ḡ(p) ṗ (body components), ω = G(p) ṗ (global), with
``Ḡ = 2[−e, e0 I − ẽ]`` and ``G = 2[−e, e0 I + ẽ]``.
"""

from __future__ import annotations

import numpy as np


def cross3(a, b) -> np.ndarray:
    """a × b for 3-vectors (much cheaper than ``np.cross`` for a single pair)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def cross_rows(e, s) -> np.ndarray:
    """e × s_k for one 3-vector e and rows s (k, 3)."""
    out = np.empty_like(s)
    out[:, 0] = e[1] * s[:, 2] - e[2] * s[:, 1]
    out[:, 1] = e[2] * s[:, 0] - e[0] * s[:, 2]
    out[:, 2] = e[0] * s[:, 1] - e[1] * s[:, 0]
    return out


def skew(a) -> np.ndarray:
    """3x3 skew matrix with ``skew(a) @ b == cross(a, b)``."""
    x, y, z = a
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rotation_matrix(p) -> np.ndarray:
    """A(p), the homogeneous quadratic form (a rotation matrix when ‖p‖ = 1)."""
    e0, e1, e2, e3 = p
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
    e0, e1, e2, e3 = p
    return 2.0 * np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def g_global(p) -> np.ndarray:
    """G(p) (3x4): ω = G ṗ, global angular velocity."""
    e0, e1, e2, e3 = p
    return 2.0 * np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])


def d_rotated(p, s) -> np.ndarray:
    """∂(A(p) s)/∂p (3x4), exact for the homogeneous A and linear in p.

    ``2 [e0 s + ẽ s, (eᵀs) I + e sᵀ − s eᵀ − e0 s̃]``. Because it is linear in p, the
    time derivative along a motion is ``d_rotated(ṗ, s)``, so
    d²(A s)/dt² = d_rotated(p, s) p̈ + d_rotated(ṗ, s) ṗ.
    """
    p = np.asarray(p, dtype=float)
    s = np.asarray(s, dtype=float)
    e0, e = p[0], p[1:]
    out = np.empty((3, 4))
    out[:, 0] = e0 * s + cross3(e, s)
    out[:, 1:] = np.dot(e, s) * np.eye(3) + np.outer(e, s) - np.outer(s, e) - e0 * skew(s)
    return 2.0 * out


def d_rotated_basis(p) -> np.ndarray:
    """B (3, 12) with d_rotated(p, s) = (s @ B).reshape(3, 4): ∂(A s)/∂p is linear in s."""
    e0, e1, e2, e3 = p
    # rows: s = e_x, e_y, e_z; each a 3x4 matrix flattened row-major
    return 2.0 * np.array([
        [e0, e1, -e2, -e3, e3, e2, e1, e0, -e2, e3, -e0, e1],
        [-e3, e2, e1, -e0, e0, -e1, e2, -e3, e1, e0, e3, e2],
        [e2, e3, e0, e1, -e1, -e0, e3, e2, e0, -e1, -e2, e3],
    ])


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
    """Euler parameters of a rotation by ``angle`` [rad] about ``axis``."""
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def frame_from_z(z, x_hint=None) -> np.ndarray:
    """A right-handed orthonormal frame (columns x, y, z) whose z is ``z``."""
    z = np.asarray(z, dtype=float)
    z = z / np.linalg.norm(z)
    if x_hint is None:
        x_hint = [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0]
    x = np.asarray(x_hint, dtype=float)
    x = x - np.dot(x, z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])
