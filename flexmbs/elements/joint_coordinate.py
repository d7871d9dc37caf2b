"""A joint's coordinate between two markers in compiled code, with its rate and their
partial derivatives, shared by the kinds that act on a joint's coordinate (rotational
spring–dampers, joint servos). The NumPy counterparts:
:func:`flexmbs.elements.marker_pairs.rotation_partials` and ``translation_partials``
(docs/multibody.md, docs/compiled.md).

* The angle θ = atan2(x_j·y_i, x_j·x_i) of x_j about z_i (revolute joints), continued
  from an angle memory slot of the workspace (W_ANGLES) as ``System.unwrap`` does;
  θ̇ = z_iᵀ(ω_j − ω_i) with ω = Ω q̇ of the markers.
* The displacement s = z_iᵀ(r_j − r_i) along z_i (prismatic joints), ṡ = z_iᵀ(ṙ_j − ṙ_i)
  with ṙ = J q̇ of the marker points.
"""

from __future__ import annotations

import numpy as np

from ..compiled._jit import njit
from ..compiled.packing import (
    FORCE,
    TORQUE,
    W_ANGLES,
    W_GGLOB,
    W_MK_J,
    W_MK_V,
    W_PAIR_RATE,
    W_ROT,
    W_X3N,
    floats1,
    floats3,
    floats4,
    ints1,
)
from .markers import (
    _angular_rate_jacobian_into,
    _load_jacobian_into,
    _point_jacobian_rate_into,
)
from .registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_NM, T_B_START, T_K_BODY, T_K_PSI = header_rows("b_nm", "b_start", "k_body", "k_psi")


@njit(cache=True)
def pair_angle_state(F, IN, H, WF, WI, WH, ki, kj, slot, qd, store):
    """(θ [rad], θ̇ [rad/s]) of markers ki, kj: θ continued from the angle memory
    W_ANGLES[slot] (NaN: none yet; replaced by θ when ``store``); ω_j − ω_i into W_PAIR_RATE.
    Needs the marker vectors and body frames of the last residual in the workspace."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_k_psi = floats3(F, H, T_K_PSI)
    W_mk_v = floats3(WF, WH, W_MK_V)
    W_rot = floats3(WF, WH, W_ROT)
    W_gglob = floats3(WF, WH, W_GGLOB)
    W_angles = floats1(WF, WH, W_ANGLES)
    w_rel = floats1(WF, WH, W_PAIR_RATE)
    sn, cs = 0.0, 0.0
    for c in range(3):
        sn += W_mk_v[kj, 1, c] * W_mk_v[ki, 2, c]
        cs += W_mk_v[kj, 1, c] * W_mk_v[ki, 1, c]
    angle = np.arctan2(sn, cs)
    last = W_angles[slot]
    if not np.isnan(last):
        angle += 2 * np.pi * np.round((last - angle) / (2 * np.pi))
    if store:
        W_angles[slot] = angle
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
def pair_angle_partials(F, IN, H, WF, WI, WH, ki, kj, q, qd):
    """The partial derivatives of θ and θ̇ over the pair's columns (marker i's body's n_i
    then marker j's; returns (n_i, n)), after :func:`pair_angle_state` (ω_j − ω_i in
    W_PAIR_RATE). Into the load tangents' scratch x3n: the torque Jacobians [Ω_i, Ω_j] (x3n[0]),
    ∂z_i/∂q (x3n[1]), [−∂(Ω_i q̇_i), ∂(Ω_j q̇_j)] (x3n[2]) and the rows ∂θ/∂q, ∂θ̇/∂q,
    ∂θ̇/∂q̇ (x3n[3][0..2]):
    ∂θ = (cos θ ∂(x_j·y_i) − sin θ ∂(x_j·x_i)) / ρ² through the marker axes' Jacobians,
    ∂θ̇/∂q = (ω_j − ω_i)ᵀ ∂z_i + z_iᵀ[−∂(Ω_i q̇_i), ∂(Ω_j q̇_j)], ∂θ̇/∂q̇ = z_iᵀ[−Ω_i, Ω_j]."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_k_body = ints1(IN, H, T_K_BODY)
    W_mk_j = floats4(WF, WH, W_MK_J)
    W_mk_v = floats3(WF, WH, W_MK_V)
    x3n = floats3(WF, WH, W_X3N)
    jac, dz, om_rate, rows = x3n[0], x3n[1], x3n[2], x3n[3]
    w_rel = floats1(WF, WH, W_PAIR_RATE)
    w0, w1, w2 = w_rel[0], w_rel[1], w_rel[2]
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
        rows[0, c] = (cs * d_sn - sn * d_cs) / rho2
        rows[1, c] = (w0 * dz[0, c] + w1 * dz[1, c] + w2 * dz[2, c] + z_i[0] * om_rate[0, c]
                      + z_i[1] * om_rate[1, c] + z_i[2] * om_rate[2, c])
        rows[2, c] = sign * (z_i[0] * jac[0, c] + z_i[1] * jac[1, c] + z_i[2] * jac[2, c])
    return ni, n


@njit(cache=True)
def pair_slide_state(F, IN, H, WF, WI, WH, ki, kj, qd):
    """(s [m], ṡ [m/s]) of markers ki, kj: s = z_iᵀ(r_j − r_i), ṡ = z_iᵀ(ṙ_j − ṙ_i) with
    ṙ = J q̇ of the marker points (ṙ_j − ṙ_i into W_PAIR_RATE). Needs the marker vectors and
    their Jacobians of the last residual in the workspace."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_k_body = ints1(IN, H, T_K_BODY)
    W_mk_v = floats3(WF, WH, W_MK_V)
    W_mk_j = floats4(WF, WH, W_MK_J)
    d_dot = floats1(WF, WH, W_PAIR_RATE)
    for c in range(3):
        d_dot[c] = 0.0
    for k, sign in ((kj, 1.0), (ki, -1.0)):
        b = T_k_body[k]
        if b < 0:
            continue
        st, nb = T_b_start[b], 7 + T_b_nm[b]
        for c in range(3):
            acc = 0.0
            for col in range(nb):
                acc += W_mk_j[k, 0, c, col] * qd[st + col]
            d_dot[c] += sign * acc
    value, rate = 0.0, 0.0
    for c in range(3):
        value += W_mk_v[ki, 3, c] * (W_mk_v[kj, 0, c] - W_mk_v[ki, 0, c])
        rate += W_mk_v[ki, 3, c] * d_dot[c]
    return value, rate


@njit(cache=True)
def pair_slide_partials(F, IN, H, WF, WI, WH, ki, kj, q, qd):
    """The partial derivatives of s and ṡ over the pair's columns (returns (n_i, n)),
    after :func:`pair_slide_state` (ṙ_j − ṙ_i in W_PAIR_RATE). Into x3n: the force Jacobians
    (x3n[0]), ∂z_i/∂q (x3n[1]), [−∂(J_i q̇_i), ∂(J_j q̇_j)] of the points (x3n[2]) and the
    rows ∂s/∂q = z_iᵀ[−J_i, J_j] + (r_j − r_i)ᵀ∂z_i, ∂ṡ/∂q = (ṙ_j − ṙ_i)ᵀ∂z_i
    + z_iᵀ[−∂(J_i q̇_i), ∂(J_j q̇_j)] and ∂ṡ/∂q̇ = z_iᵀ[−J_i, J_j] (x3n[3][0..2])."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_k_body = ints1(IN, H, T_K_BODY)
    W_mk_j = floats4(WF, WH, W_MK_J)
    W_mk_v = floats3(WF, WH, W_MK_V)
    x3n = floats3(WF, WH, W_X3N)
    jac, dz, rates, rows = x3n[0], x3n[1], x3n[2], x3n[3]
    d_dot = floats1(WF, WH, W_PAIR_RATE)
    v0, v1, v2 = d_dot[0], d_dot[1], d_dot[2]
    bi, bj = T_k_body[ki], T_k_body[kj]
    ni = 7 + T_b_nm[bi] if bi >= 0 else 0
    nj = 7 + T_b_nm[bj] if bj >= 0 else 0
    n = ni + nj
    if ni:
        _load_jacobian_into(F, IN, H, WF, WI, WH, ki, FORCE, q, jac, np.int64(0))
        _point_jacobian_rate_into(F, IN, H, WF, WI, WH, ki, q, qd, rates, np.int64(0),
                                  -1.0)
    if nj:
        _load_jacobian_into(F, IN, H, WF, WI, WH, kj, FORCE, q, jac, ni)
        _point_jacobian_rate_into(F, IN, H, WF, WI, WH, kj, q, qd, rates, ni, 1.0)
    z_i = W_mk_v[ki, 3]
    d0 = W_mk_v[kj, 0, 0] - W_mk_v[ki, 0, 0]
    d1 = W_mk_v[kj, 0, 1] - W_mk_v[ki, 0, 1]
    d2 = W_mk_v[kj, 0, 2] - W_mk_v[ki, 0, 2]
    for c in range(n):
        if c < ni:  # −J_i and ∂z_i through marker i
            pj = -(z_i[0] * W_mk_j[ki, 0, 0, c] + z_i[1] * W_mk_j[ki, 0, 1, c]
                   + z_i[2] * W_mk_j[ki, 0, 2, c])
            for e in range(3):
                dz[e, c] = W_mk_j[ki, 3, e, c]
        else:
            cj = c - ni
            pj = (z_i[0] * W_mk_j[kj, 0, 0, cj] + z_i[1] * W_mk_j[kj, 0, 1, cj]
                  + z_i[2] * W_mk_j[kj, 0, 2, cj])
            for e in range(3):
                dz[e, c] = 0.0
        rows[0, c] = pj + d0 * dz[0, c] + d1 * dz[1, c] + d2 * dz[2, c]
        rows[1, c] = (v0 * dz[0, c] + v1 * dz[1, c] + v2 * dz[2, c]
                      + z_i[0] * rates[0, c] + z_i[1] * rates[1, c] + z_i[2] * rates[2, c])
        rows[2, c] = pj
    return ni, n
