"""The loads' NumPy reference (docs/multibody.md, docs/theory_ffrf.md §7): the point
load's generalized force through its body's marker Jacobians, and the distributed load's
as plain array functions of one flexible body's coordinates. The declarations
(:class:`flexmbs.model.forces.PointLoad`, :class:`~flexmbs.model.forces.DistributedLoad`)
evaluate the load's value and the body's coupling mode; the compiled kernels
(:mod:`flexmbs.elements.loads.kernels`) evaluate the same terms.

Node k carries f_k = w_k · F; with the integrals (Σw, Σw ū0 [m], Σw Φ) computed once, the
generalized force Σ_k J_kᵀ f_k = [A Σw f̄; Ḡᵀ(arm × f̄); (ΣwΦ)ᵀ f̄] with f̄ the load in body
axes and arm = Σw ū0 + ΣwΦ ξ, so its cost does not grow with the mesh.
"""

from __future__ import annotations

import numpy as np

from ...frame.rotations import (
    cross3,
    d_rotated,
    d_rotated_transpose,
    g_bar,
    g_bar_t_jac,
    rotation_matrix,
    skew,
)


def generalized_force(p, xi, vec, in_body_axes, integrals, sees_modes, rigid):
    """Q (7 + n,) of the load ``vec`` (3,) [N per unit weight] on a body with Euler
    parameters ``p`` and modal coordinates ``xi``: ``vec`` in body axes
    (``in_body_axes``) or global axes; ``integrals`` = (Σw, Σw ū0, Σw Φ); ``sees_modes``:
    the lever arms deform (two-way and no-M_Rf coupling; else the undeformed arms);
    ``rigid``: no modal rows (rigid coupling)."""
    a = rotation_matrix(p)
    f_bar = vec if in_body_axes else a.T @ vec
    total, first, shapes = integrals
    out = np.zeros(7 + xi.size)
    out[:3] = a @ (total * f_bar)
    arm = first + shapes @ xi if sees_modes else first
    out[3:7] = g_bar(p).T @ cross3(arm, f_bar)
    if not rigid:
        out[7:] = shapes.T @ f_bar
    return out


def force_jacobian(p, xi, vec, in_body_axes, integrals, sees_modes, rigid):
    """∂Q/∂q (7 + n, 7 + n) of :func:`generalized_force` at a constant load: f̄ = F or
    AᵀF (∂f̄/∂p = ∂(AᵀF)/∂p), R rows ∂(A Σw f̄)/∂p, p rows ∂(Ḡᵀ(arm × f̄)), ξ rows
    (ΣwΦ)ᵀ ∂f̄/∂p. No q̇ dependence."""
    a = rotation_matrix(p)
    gb = g_bar(p)
    if in_body_axes:
        f_bar, df = vec, np.zeros((3, 4))
    else:
        f_bar, df = a.T @ vec, d_rotated_transpose(p, vec)
    total, first, shapes = integrals
    arm = first + shapes @ xi if sees_modes else first
    n = 7 + xi.size
    dq = np.zeros((n, n))
    dq[:3, 3:7] = total * (d_rotated(p, f_bar) + a @ df)
    dq[3:7, 3:7] = g_bar_t_jac(cross3(arm, f_bar)) + gb.T @ (skew(arm) @ df)
    if sees_modes:
        dq[3:7, 7:] = gb.T @ (-skew(f_bar) @ shapes)
    if not rigid:
        dq[7:, 3:7] = shapes.T @ df
    return dq


def point_generalized_force(body, qb, marker, vec, kind, in_marker_axes):
    """Q_b = Jacᵀ F of a point force (``kind`` "force": the force Jacobian) or torque
    ("torque": the angular Jacobian) ``vec`` [N or N m] at ``marker`` of ``body`` with
    coordinates ``qb``; F = vec in global axes, or axes·vec along the marker's axes."""
    if in_marker_axes:
        _, axes, _, _ = body.marker_frame(qb, marker)
        vec = axes @ vec
    jac = body.force_jac(qb, marker) if kind == "force" else body.angular_jac(qb, marker)
    return jac.T @ vec


def point_force_jacobian(body, qb, marker, vec, kind, in_marker_axes):
    """∂Q_b/∂q_b (n, n) of :func:`point_generalized_force` at a constant ``vec``: the
    Jacobian's own q-dependence at fixed F plus Jacᵀ ∂F (∂F = Σ_k vec_k ∂a_k along the
    marker's axes, 0 in global axes)."""
    n = qb.size
    dvec = np.zeros((3, n))
    if in_marker_axes:
        _, axes, jac_m, _ = body.marker_frame(qb, marker)
        dvec = np.einsum("k,kcq->cq", vec, jac_m[1:])
        vec = axes @ vec
    if kind == "force":
        jac, tan = body.force_jac(qb, marker), body.force_jac_tangent(qb, marker, vec)
    else:
        jac, tan = body.angular_jac(qb, marker), body.angular_jac_tangent(qb, marker, vec)
    return tan + jac.T @ dvec
