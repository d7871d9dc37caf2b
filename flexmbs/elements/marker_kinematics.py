"""Marker kinematics on the NumPy path: the points, axes and Jacobians of a body's
markers and their second derivatives, as plain array functions shared by rigid and
flexible bodies (docs/theory_ffrf.md §1, §7–8). The NumPy reference of what
:mod:`flexmbs.elements.markers` computes in compiled code; the bodies' marker methods
(:mod:`flexmbs.model.bodies`, :mod:`flexmbs.model.flexible`) call these.

A marker carries four vectors v_k (point, x, y, z axes) v_0 = R + A(p) s_0(ξ),
v_k = A(p) s_k(ξ), with s_k(ξ) = vecs_k + U_k ξ linear in ξ (U = 0 on rigid bodies and in
one-way/rigid coupling).
"""

from __future__ import annotations

import numpy as np

from ..frame.rotations import (
    cross3,
    d_rotated,
    d_rotated_basis,
    d_rotated_batch,
    d_rotated_transpose,
    g_bar,
    g_bar_t_jac,
    g_global,
    g_global_t_jac,
    rotated_hessian,
    rotated_mixed,
    rotation_matrix,
    rotation_rate,
    skew,
)

_EYE3 = np.eye(3)  # read-only identity (the R columns of marker point Jacobians)
_EYE3.flags.writeable = False


def marker_frames_kernel(q, base, shapes, n: int, jac: bool = True):
    """Global points and axes of k markers of one body and their exact Jacobians.

    With s = base + shapes ξ (body frame, (k, 4, 3): point, x, y, z axes),
    v_0 = R + A(p) s_0 and v_a = A(p) s_a; ∂v/∂p = d_rotated(p, s) (linear in s, one
    shared basis), ∂v/∂ξ = A U (docs/theory_ffrf.md §8). Returns V (k, 4, 3) and J (k, 4, 3, n)
    (the ``marker_frame`` values and Jacobians of every marker at once; J None without
    ``jac``).
    """
    k = base.shape[0]
    p = q[3:7]
    a = rotation_matrix(p)
    m = shapes.shape[3]
    s = base + shapes @ q[7:7 + m] if m else base
    vecs = s @ a.T
    vecs[:, 0] += q[:3]
    if not jac:
        return vecs, None
    jac = np.zeros((k, 4, 3, n))
    jac[:, 0, :, :3] = _EYE3
    jac[..., 3:7] = (s.reshape(-1, 3) @ d_rotated_basis(p)).reshape(k, 4, 3, 4)
    if m:
        jac[..., 7:7 + m] = a @ shapes
    return vecs, jac


def marker_hessian_kernel(n, p, vecs, shapes, weights) -> np.ndarray:
    """∂²/∂q² Σ_k w_kᵀ v_k: pp block from A quadratic in p, pξ blocks from ∂A/∂p linear in
    s; R enters linearly and ξ–ξ terms vanish (docs/theory_ffrf.md §1, §8)."""
    out = np.zeros((n, n))
    out[3:7, 3:7] = rotated_hessian(vecs, weights)
    if shapes.shape[2]:
        mixed = rotated_mixed(p, shapes, weights)
        out[3:7, 7:] = mixed
        out[7:, 3:7] = mixed.T
    return out


def marker_jac_rate_kernel(n, p, pd, xid, vecs, shapes) -> np.ndarray:
    """J̇ (4, 3, n): p columns d_rotated(ṗ, s) + d_rotated(p, U ξ̇), ξ columns Ȧ U."""
    out = np.zeros((4, 3, n))
    out[:, :, 3:7] = d_rotated_batch(pd, vecs)
    if shapes.shape[2]:
        out[:, :, 3:7] += d_rotated_batch(p, shapes @ xid)
        out[:, :, 7:] = rotation_rate(p, pd) @ shapes
    return out


def force_jac_tangent_kernel(n, p, arm, force, phi=None, arm_shapes=None) -> np.ndarray:
    """∂/∂q of [F; Ḡᵀ(ū × F̄); Φᵀ F̄], F̄ = AᵀF (docs/theory_ffrf.md §7): the p rows vary with Ḡ and
    F̄, and with ξ through ū = ū0 + ``arm_shapes`` ξ; the ξ rows (``phi``) with F̄."""
    out = np.zeros((n, n))
    f_bar = rotation_matrix(p).T @ force
    df = d_rotated_transpose(p, force)
    gb = g_bar(p)
    out[3:7, 3:7] = g_bar_t_jac(cross3(arm, f_bar)) + gb.T @ (skew(arm) @ df)
    if phi is not None:
        out[7:, 3:7] = phi.T @ df
    if arm_shapes is not None:
        out[3:7, 7:] = gb.T @ (-skew(f_bar) @ arm_shapes)
    return out


def angular_jac_tangent_kernel(n, p, torque, psi=None) -> np.ndarray:
    """∂/∂q of [0; Gᵀ T; Ψᵀ Aᵀ T] (docs/theory_ffrf.md §7)."""
    out = np.zeros((n, n))
    out[3:7, 3:7] = g_global_t_jac(torque)
    if psi is not None:
        out[7:, 3:7] = psi.T @ d_rotated_transpose(p, torque)
    return out


def angular_rate_jac_kernel(n, p, pd, xid=None, psi=None) -> np.ndarray:
    """∂/∂q of ω = G(p) ṗ + A Ψ ξ̇: −G(ṗ) (G(p)ṗ = −G(ṗ)p) and ∂(A Ψ ξ̇)/∂p."""
    out = np.zeros((3, n))
    out[:, 3:7] = -g_global(pd)
    if psi is not None:
        out[:, 3:7] += d_rotated(p, psi @ xid)
    return out


