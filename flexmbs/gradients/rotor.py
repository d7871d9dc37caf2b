"""Exact tangents of a joint servo's rotor inertia (docs/gradients.md, "The step
Jacobian").

A servo with a motor adds r_m = n² J_m θ̈ g to the residual, g = ∂θ̇/∂q̇ =
[−Ω_iᵀz_i; Ω_jᵀz_i] and θ̈ = g q̈ + (∂θ̇/∂q) q̇ (:meth:`flexmbs.model.servos.JointServo.
apply` and ``mass_block``). The Newton tangents leave its q-derivative out; the adjoint
needs it:

    ∂r_m/∂q = n² J_m (g ⊗ ∂θ̈/∂q + θ̈ ∂g/∂q),    ∂r_m/∂q̇ = n² J_m g ⊗ ∂θ̈/∂q̇,

with θ̈ = z_iᵀ a + ω_relᵀ ż_i + z_iᵀ c, a = Ω_j q̈_j − Ω_i q̈_i, ω_rel = Ω_j q̇_j − Ω_i q̇_i,
ż_i = J_z q̇_i and c = B_j(q̇_j) q̇_j − B_i(q̇_i) q̇_i (B(q, v) = ∂(Ω v)/∂q, the bodies'
``angular_rate_jac``). Everything comes from the bodies' marker kinematics except
∂(B(q̇) q̇)/∂q and ∂(B(q̇) q̇)/∂q̇ — for Ω = [0, G(p), A(p) Ψ] they are
[0, d_rotated(ṗ, Ψ ξ̇), 0] and [0, d_rotated(p, Ψ ξ̇), (d_rotated(p, Ψ_k) ṗ)_k], zero
for a rigid body (G(ṗ) ṗ = 0).
"""

from __future__ import annotations

import numpy as np

from ..elements.marker_pairs import MarkerPair, rotation_partials
from ..frame.rotations import d_rotated


def _curvature_terms(body, marker, qb, qdb):
    """(∂(B(q̇)q̇)/∂q, ∂(B(q̇)q̇)/∂q̇) (3, n) of one marker's body (module docstring)."""
    n = qb.size
    dq, dqd = np.zeros((3, n)), np.zeros((3, n))
    if n == 0:
        return dq, dqd
    psi = body.jacobian_shapes(marker)[0]
    if psi is None or psi.shape[1] == 0:
        return dq, dqd
    p, pd, xid = qb[3:7], qdb[3:7], qdb[7:]
    u = psi @ xid
    dq[:, 3:7] = d_rotated(pd, u)
    dqd[:, 3:7] = d_rotated(p, u)
    for k in range(psi.shape[1]):
        dqd[:, 7 + k] = d_rotated(p, psi[:, k]) @ pd
    return dq, dqd


def rotor_tangents(system, servo, q, qd, qdd, pair=None):
    """(idx, K, C): ∂r_m/∂q and ∂r_m/∂q̇ of a torque servo's rotor term on the joint's
    coordinates ``idx``; ``pair``: the joint's
    :class:`~flexmbs.elements.marker_pairs.MarkerPair` at (q, q̇), if at hand."""
    if pair is None:
        pair = MarkerPair(system, servo.marker_i, servo.marker_j, q, qd)
    bi, bj, mi, mj = pair.bi, pair.bj, pair.mi, pair.mj
    qi, qj, qdi, qdj = pair.qi, pair.qj, pair.qdi, pair.qdj
    qddi, qddj = qdd[pair.sli], qdd[pair.slj]
    zi = pair.axi[:, 2]
    dz = pair.only_i(pair.ji[3])
    om_i, om_j = bi.angular_jac(qi, mi), bj.angular_jac(qj, mj)
    g = np.concatenate([-(om_i.T @ zi), om_j.T @ zi])
    w_rel = om_j @ qdj - om_i @ qdi
    z_dot = pair.ji[3] @ qdi
    b_i, b_j = bi.angular_rate_jac(qi, qdi, mi), bj.angular_rate_jac(qj, qdj, mj)
    c_vec = b_j @ qdj - b_i @ qdi
    acc = om_j @ qddj - om_i @ qddi
    theta_dd = float(zi @ acc + w_rel @ z_dot + zi @ c_vec)
    di_q, di_qd = _curvature_terms(bi, mi, qi, qdi)
    dj_q, dj_qd = _curvature_terms(bj, mj, qj, qdj)
    d_q = (acc @ dz + zi @ pair.both(-bi.angular_rate_jac(qi, qddi, mi),
                                     bj.angular_rate_jac(qj, qddj, mj))
           + z_dot @ pair.both(-b_i, b_j)
           + w_rel @ pair.only_i(bi.marker_jac_rate(qi, qdi, mi)[3])
           + c_vec @ dz + zi @ pair.both(-di_q, dj_q))
    d_qd = (z_dot @ pair.both(-om_i, om_j) + w_rel @ dz + zi @ pair.both(-di_qd, dj_qd))
    g_dq = np.vstack([-(pair.only_i(bi.angular_jac_tangent(qi, mi, zi)) + om_i.T @ dz),
                      pair.only_j(bj.angular_jac_tangent(qj, mj, zi)) + om_j.T @ dz])
    scale = servo.reflected_inertia
    k = scale * (np.outer(g, d_q) + theta_dd * g_dq)
    c = scale * np.outer(g, d_qd)
    return pair.idx, k, c


def rotor_correction(system, servo, q, qd, qdd):
    """(idx, ΔK, ΔC): what turns the Newton tangents of a torque servo's rotor (the
    compiled kernel's and :meth:`~flexmbs.model.servos.JointServo.tangents`: no
    q-derivative, C = 2 n² J_m g ⊗ ∂θ̇/∂q) into the exact ones of
    :func:`rotor_tangents`, on the joint's coordinates ``idx``."""
    pair = MarkerPair(system, servo.marker_i, servo.marker_j, q, qd)
    idx, k, c = rotor_tangents(system, servo, q, qd, qdd, pair)
    partials = rotation_partials(system, pair, servo.name)
    return idx, k, c - 2.0 * servo.reflected_inertia * np.outer(partials[5], partials[4])
