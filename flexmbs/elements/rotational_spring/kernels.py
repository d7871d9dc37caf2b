"""Rotational spring–dampers in compiled code: torque −k (θ − θ0) − c θ̇ about z_i on
marker j with its reaction on i, θ unwrapped against the last angle like
``System.unwrap``; K and C through θ (the marker axes' Jacobians), θ̇ (the angular
Jacobians and their rate ∂(Ω q̇)/∂q) and z_i(q) (docs/compiled.md). The NumPy
counterpart: :class:`flexmbs.model.forces.RotationalSpringDamper`.
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    NO,
    TORQUE,
    W_ANGLES,
    W_GGLOB,
    W_MK_J,
    W_MK_V,
    W_ROT,
    W_V3D,
    W_V3E,
    W_X3,
    W_X3N,
    YES,
    _f1,
    _f2,
    _f3,
    _f4,
    _i1,
    _i2,
)
from ..markers import (
    _angular_rate_jacobian_into,
    _apply_load,
    _load_jacobian_into,
    _pair_load_tangents,
)
from ..registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_NM, T_B_START, T_K_BODY, T_K_PSI, T_T_MARK, T_T_PAR = header_rows(
    "b_nm", "b_start", "k_body", "k_psi", "t_mark", "t_par")


@njit(cache=True)
def torsion_state(F, IN, H, WF, WI, WH, s, qd, store):
    """(θ [rad], θ̇ [rad/s]) of rotational spring–damper s: θ = atan2(x_j·y_i, x_j·x_i)
    (the angle of x_j about z_i) continued from the workspace's last angle of s
    (W_ANGLES, NaN: none yet; replaced by θ when ``store``), as ``System.unwrap`` does;
    θ̇ = z_iᵀ(ω_j − ω_i) with ω = Ω q̇ of the markers (ω_j − ω_i into W_V3E). Needs the
    marker vectors and body frames of the last residual in the workspace."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_psi = _f3(F, H, T_K_PSI)
    T_t_mark = _i2(IN, H, T_T_MARK)
    W_mk_v = _f3(WF, WH, W_MK_V)
    W_rot = _f3(WF, WH, W_ROT)
    W_gglob = _f3(WF, WH, W_GGLOB)
    W_angles = _f1(WF, WH, W_ANGLES)
    w_rel = _f1(WF, WH, W_V3E)
    ki, kj = T_t_mark[s, 0], T_t_mark[s, 1]
    sn, cs = 0.0, 0.0
    for c in range(3):
        sn += W_mk_v[kj, 1, c] * W_mk_v[ki, 2, c]
        cs += W_mk_v[kj, 1, c] * W_mk_v[ki, 1, c]
    angle = np.arctan2(sn, cs)
    last = W_angles[s]
    if not np.isnan(last):
        angle += 2 * np.pi * np.round((last - angle) / (2 * np.pi))
    if store:
        W_angles[s] = angle
    for c in range(3):
        w_rel[c] = 0.0
    for k, sign in ((kj, 1.0), (ki, -1.0)):
        b = T_k_body[k]
        if b < 0:
            continue
        st, nm = T_b_start[b], T_b_nm[b]
        g, a = W_gglob[b], W_rot[b]
        for c in range(3):  # ω = G(p) ṗ + A Ψ ξ̇
            acc = 0.0
            for m in range(4):
                acc += g[c, m] * qd[st + 3 + m]
            for j in range(nm):
                xid = qd[st + 7 + j]
                for e in range(3):
                    acc += a[c, e] * T_k_psi[k, e, j] * xid
            w_rel[c] += sign * acc
    rate = 0.0
    for c in range(3):
        rate += W_mk_v[ki, 3, c] * w_rel[c]
    return angle, rate


@njit(cache=True)
def torsion_loads(F, IN, H, WF, WI, WH, q, qd, r, store, with_spring):
    """r −= Q of the rotational spring–dampers: τ z_i on marker j, −τ z_i on i, with
    τ = −k (θ − θ0) − c θ̇ (:func:`torsion_state`; the angle stored when ``store``);
    ``with_spring`` False: the damper part −c θ̇ only (for the power of the outputs)."""
    T_t_mark = _i2(IN, H, T_T_MARK)
    T_t_par = _f2(F, H, T_T_PAR)
    W_mk_v = _f3(WF, WH, W_MK_V)
    vec = _f1(WF, WH, W_V3D)
    for s in range(T_t_mark.shape[0]):
        angle, rate = torsion_state(F, IN, H, WF, WI, WH, s, qd, store)
        torque = -T_t_par[s, 1] * rate
        if with_spring:
            torque -= T_t_par[s, 0] * (angle - T_t_par[s, 2])
        if torque == 0.0:
            continue
        ki, kj = T_t_mark[s, 0], T_t_mark[s, 1]
        for c in range(3):
            vec[c] = torque * W_mk_v[ki, 3, c]
        _apply_load(F, IN, H, WF, WI, WH, kj, vec, TORQUE, 1.0, q, r)
        _apply_load(F, IN, H, WF, WI, WH, ki, vec, TORQUE, -1.0, q, r)


@njit(cache=True)
def torsion_tangents_into(F, IN, H, WF, WI, WH, q, qd, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of the rotational spring–dampers, K = −∂Q/∂q,
    C = −∂Q/∂q̇ of Q = [−Ω_iᵀ; Ω_jᵀ](τ z_i), τ = −k (θ − θ0) − c θ̇, with
    ∂θ = (cos θ ∂(x_j·y_i) − sin θ ∂(x_j·x_i)) / ρ² through the marker axes' Jacobians,
    ∂θ̇/∂q = (ω_j − ω_i)ᵀ ∂z_i + z_iᵀ[−∂(Ω_i q̇_i), ∂(Ω_j q̇_j)] and ∂θ̇/∂q̇ = z_iᵀ[−Ω_i, Ω_j]
    (forces._rotation_partials). The angle memory is read, not moved."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_t_mark = _i2(IN, H, T_T_MARK)
    T_t_par = _f2(F, H, T_T_PAR)
    W_mk_j = _f4(WF, WH, W_MK_J)
    W_mk_v = _f3(WF, WH, W_MK_V)
    x3n, vec = _f3(WF, WH, W_X3N), _f2(WF, WH, W_X3)[3]
    jac, dz, om_rate, g_dq, g_dqd = x3n[0], x3n[1], x3n[2], x3n[4], x3n[5]
    for s in range(T_t_mark.shape[0]):
        angle, rate = torsion_state(F, IN, H, WF, WI, WH, s, qd, NO)
        w_rel = _f1(WF, WH, W_V3E)
        w0, w1, w2 = w_rel[0], w_rel[1], w_rel[2]
        ki, kj = T_t_mark[s, 0], T_t_mark[s, 1]
        bi, bj = T_k_body[ki], T_k_body[kj]
        ni = 7 + T_b_nm[bi] if bi >= 0 else 0
        nj = 7 + T_b_nm[bj] if bj >= 0 else 0
        n = ni + nj
        x_i, y_i, z_i, x_j = W_mk_v[ki, 1], W_mk_v[ki, 2], W_mk_v[ki, 3], W_mk_v[kj, 1]
        sn = x_j[0] * y_i[0] + x_j[1] * y_i[1] + x_j[2] * y_i[2]
        cs = x_j[0] * x_i[0] + x_j[1] * x_i[1] + x_j[2] * x_i[2]
        if ni:  # Ω_i, −∂(Ω_i q̇_i)/∂q_i
            _load_jacobian_into(F, IN, H, WF, WI, WH, ki, TORQUE, q, jac, np.int64(0))
            _angular_rate_jacobian_into(F, IN, H, WF, WI, WH, ki, q, qd, om_rate,
                                        np.int64(0), -1.0)
        if nj:
            _load_jacobian_into(F, IN, H, WF, WI, WH, kj, TORQUE, q, jac, ni)
            _angular_rate_jacobian_into(F, IN, H, WF, WI, WH, kj, q, qd, om_rate, ni, 1.0)
        k_t, c_t, angle0 = T_t_par[s, 0], T_t_par[s, 1], T_t_par[s, 2]
        torque = -k_t * (angle - angle0) - c_t * rate
        rho2 = sn * sn + cs * cs
        for c in range(n):
            if c < ni:  # ∂(x_j·y_i), ∂(x_j·x_i) and ∂z_i through marker i's axes
                d_sn = (x_j[0] * W_mk_j[ki, 2, 0, c] + x_j[1] * W_mk_j[ki, 2, 1, c]
                        + x_j[2] * W_mk_j[ki, 2, 2, c])
                d_cs = (x_j[0] * W_mk_j[ki, 1, 0, c] + x_j[1] * W_mk_j[ki, 1, 1, c]
                        + x_j[2] * W_mk_j[ki, 1, 2, c])
                for e in range(3):
                    dz[e, c] = W_mk_j[ki, 3, e, c]
                sign = -1.0
            else:  # through marker j's x axis
                cj = c - ni
                d_sn = (y_i[0] * W_mk_j[kj, 1, 0, cj] + y_i[1] * W_mk_j[kj, 1, 1, cj]
                        + y_i[2] * W_mk_j[kj, 1, 2, cj])
                d_cs = (x_i[0] * W_mk_j[kj, 1, 0, cj] + x_i[1] * W_mk_j[kj, 1, 1, cj]
                        + x_i[2] * W_mk_j[kj, 1, 2, cj])
                for e in range(3):
                    dz[e, c] = 0.0
                sign = 1.0
            angle_dq = (cs * d_sn - sn * d_cs) / rho2
            rate_dq = (w0 * dz[0, c] + w1 * dz[1, c] + w2 * dz[2, c] + z_i[0] * om_rate[0, c]
                       + z_i[1] * om_rate[1, c] + z_i[2] * om_rate[2, c])
            rate_dqd = sign * (z_i[0] * jac[0, c] + z_i[1] * jac[1, c] + z_i[2] * jac[2, c])
            for e in range(3):  # ∂(τ z_i)/∂q, ∂(τ z_i)/∂q̇
                g_dq[e, c] = z_i[e] * (-k_t * angle_dq - c_t * rate_dq) + torque * dz[e, c]
                g_dqd[e, c] = z_i[e] * (-c_t * rate_dqd)
        for e in range(3):
            vec[e] = torque * z_i[e]
        _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, TORQUE, q, top, k_scale, c_scale)


@njit(cache=True)
def torsion_potential(F, IN, H, WF, WI, WH, qd, refs, pot):
    """pot plus the rotational springs' potential Σ ½ k (θ − θ0)² [J] at an output, each
    angle taking its turns from ``refs`` (the angle the run recorded; NaN: continue from
    the previous output), from the markers of the residual in the workspace."""
    T_t_mark, T_t_par = _i2(IN, H, T_T_MARK), _f2(F, H, T_T_PAR)
    angles = _f1(WF, WH, W_ANGLES)
    for s in range(T_t_mark.shape[0]):  # the angle's turns from the run
        if not np.isnan(refs[s]):
            angles[s] = refs[s]
        angle, _ = torsion_state(F, IN, H, WF, WI, WH, s, qd, YES)
        pot += 0.5 * T_t_par[s, 0] * (angle - T_t_par[s, 2]) ** 2
    return pot

