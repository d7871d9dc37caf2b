"""Joint servos in compiled code: the torque (about z_i, on a revolute joint's angle θ) or
force (along z_i, on a prismatic joint's displacement) τ = η n clip(τ_m) − n² J_m θ̈ on
marker j with its reaction on i, τ_m = kp n (θ_ref − θ) + kd n (θ̇_ref − θ̇) + b
(:mod:`flexmbs.elements.joint_servo.reference`, docs/servos.md); the coordinate θ, its rate
and their partials from :mod:`flexmbs.elements.joint_coordinate`, an angle's memory in the
slots after the rotational spring–dampers'. θ̈ = (∂θ̇/∂q̇) q̈ + (∂θ̇/∂q) q̇: the rotor's mass
term n² J_m gᵀg enters the iteration matrix with the bodies' masses. The NumPy
counterpart: :class:`flexmbs.model.servos.JointServo`.
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    NO,
    TORQUE,
    W_ANGLES,
    W_FORCE_VEC,
    W_MK_V,
    W_X3,
    W_X3N,
    W_XBLK,
    YES,
    floats1,
    floats2,
    floats3,
    ints1,
    ints2,
)
from ..joint_coordinate import (
    pair_angle_partials,
    pair_angle_state,
    pair_slide_partials,
    pair_slide_state,
)
from ..markers import _apply_load, _pair_load_tangents, _scatter_n, body_frame, marker_vectors
from ..registry import header_rows, work_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_START, T_K_BODY, T_T_MARK, T_V_KIND, T_V_MARK, T_V_PAR, T_V_ROW = header_rows(
    "b_start", "k_body", "t_mark", "v_kind", "v_mark", "v_par", "v_row")
W_SV_H, W_SV_Q, W_SV_ROWS = work_rows("sv_h", "sv_q", "sv_rows")


@njit(cache=True)
def _coordinate(F, IN, H, WF, WI, WH, kind, ki, kj, slot, qd, store):
    """(θ, θ̇) of a servo's joint: the angle (kind TORQUE) or the displacement (FORCE)."""
    if kind == TORQUE:
        return pair_angle_state(F, IN, H, WF, WI, WH, ki, kj, slot, qd, store)
    return pair_slide_state(F, IN, H, WF, WI, WH, ki, kj, qd)


@njit(cache=True)
def _partials(F, IN, H, WF, WI, WH, kind, ki, kj, q, qd):
    """(n_i, n) and the partial rows of the servo's coordinate (after _coordinate)."""
    if kind == TORQUE:
        return pair_angle_partials(F, IN, H, WF, WI, WH, ki, kj, q, qd)
    return pair_slide_partials(F, IN, H, WF, WI, WH, ki, kj, q, qd)


@njit(cache=True)
def _motor_torque(par, ref, ref_rate, offset, angle, rate):
    """(τ_m [N m], saturated) of the control law (reference.motor_torque)."""
    ratio = par[2]
    tau = par[0] * ratio * (ref - angle) + par[1] * ratio * (ref_rate - rate) + offset
    if tau > par[5]:
        return par[5], True
    if tau < -par[5]:
        return -par[5], True
    return tau, False


@njit(cache=True)
def _pair_starts(IN, H, ki, kj, ni, n):
    """(st_i, st_j): the global coordinate of the pair's local column c is st_i + c for
    c < n_i (marker i's body), st_j + c after it (marker j's)."""
    T_b_start, T_k_body = ints1(IN, H, T_B_START), ints1(IN, H, T_K_BODY)
    st_i = T_b_start[T_k_body[ki]] if ni > 0 else 0
    st_j = T_b_start[T_k_body[kj]] - ni if n > ni else 0
    return st_i, st_j


@njit(cache=True)
def _pair_dot(IN, H, ki, kj, ni, n, row, x):
    """Σ_c row[c] x[global column of c] over the pair's local columns."""
    st_i, st_j = _pair_starts(IN, H, ki, kj, ni, n)
    acc = 0.0
    for c in range(n):
        acc += row[c] * x[st_i + c if c < ni else st_j + c]
    return acc


@njit(cache=True)
def _pair_add(IN, H, ki, kj, ni, n, row, scale, r):
    """r[global column of c] += scale row[c] over the pair's local columns."""
    st_i, st_j = _pair_starts(IN, H, ki, kj, ni, n)
    for c in range(n):
        r[st_i + c if c < ni else st_j + c] += scale * row[c]


@njit(cache=True)
def servo_loads(F, IN, H, WF, WI, WH, q, qd, qdd, prof, r, store, with_inertia):
    """r −= Q of the joint servos (the angle stored when ``store``); ``with_inertia``
    False: the controller's torque alone (the power of the outputs), else with the rotor's
    inertia torque −n² J_m θ̈. ``prof``: the time-level rows, a servo's at v_row
    (θ_ref, θ̇_ref, offset torque b)."""
    T_v_mark, T_v_par = ints2(IN, H, T_V_MARK), floats2(F, H, T_V_PAR)
    T_v_row = ints1(IN, H, T_V_ROW)
    T_v_kind = ints1(IN, H, T_V_KIND)
    first = ints2(IN, H, T_T_MARK).shape[0]
    W_mk_v = floats3(WF, WH, W_MK_V)
    vec = floats2(WF, WH, W_FORCE_VEC)[0]
    rows = floats3(WF, WH, W_X3N)[3]
    for s in range(T_v_mark.shape[0]):
        ki, kj, kind = T_v_mark[s, 0], T_v_mark[s, 1], T_v_kind[s]
        par = T_v_par[s]
        angle, rate = _coordinate(F, IN, H, WF, WI, WH, kind, ki, kj, first + s, qd, store)
        row = prof[T_v_row[s]]
        tau_m, _ = _motor_torque(par, row[0], row[1], row[2], angle, rate)
        torque = par[3] * par[2] * tau_m
        for c in range(3):
            vec[c] = torque * W_mk_v[ki, 3, c]
        _apply_load(F, IN, H, WF, WI, WH, kj, vec, kind, 1.0, q, r)
        _apply_load(F, IN, H, WF, WI, WH, ki, vec, kind, -1.0, q, r)
        if with_inertia and par[4] != 0.0:  # r += n² J_m θ̈ gᵀ, g = ∂θ̇/∂q̇
            ni, n = _partials(F, IN, H, WF, WI, WH, kind, ki, kj, q, qd)
            accel = (_pair_dot(IN, H, ki, kj, ni, n, rows[2], qdd)
                     + _pair_dot(IN, H, ki, kj, ni, n, rows[1], qd))
            _pair_add(IN, H, ki, kj, ni, n, rows[2], par[4] * accel, r)


@njit(cache=True)
def servo_tangents_into(F, IN, H, WF, WI, WH, q, qd, prof, top, k_scale, c_scale,
                        m_scale):
    """top += k_scale K + c_scale C + m_scale M of the joint servos: the controller's
    torque exactly (zero slopes when saturated); the rotor's inertia force
    n² J_m θ̈ gᵀ (g = ∂θ̇/∂q̇) through its mass term n² J_m gᵀg and its q̇-derivative
    2 n² J_m gᵀ ∂θ̇/∂q (its q-derivative left out), as
    :meth:`flexmbs.model.servos.JointServo.tangents`. The angle memory is read, not
    moved."""
    T_v_mark, T_v_par = ints2(IN, H, T_V_MARK), floats2(F, H, T_V_PAR)
    T_v_row = ints1(IN, H, T_V_ROW)
    T_k_body, T_v_kind = ints1(IN, H, T_K_BODY), ints1(IN, H, T_V_KIND)
    first = ints2(IN, H, T_T_MARK).shape[0]
    W_mk_v = floats3(WF, WH, W_MK_V)
    x3n, vec = floats3(WF, WH, W_X3N), floats2(WF, WH, W_X3)[3]
    dz, rows, g_dq, g_dqd = x3n[1], x3n[3], x3n[4], x3n[5]
    for s in range(T_v_mark.shape[0]):
        ki, kj, kind = T_v_mark[s, 0], T_v_mark[s, 1], T_v_kind[s]
        par = T_v_par[s]
        angle, rate = _coordinate(F, IN, H, WF, WI, WH, kind, ki, kj, first + s, qd, NO)
        ni, n = _partials(F, IN, H, WF, WI, WH, kind, ki, kj, q, qd)
        row = prof[T_v_row[s]]
        tau_m, saturated = _motor_torque(par, row[0], row[1], row[2], angle, rate)
        torque = par[3] * par[2] * tau_m
        inertia = par[4]
        d_angle, d_rate = 0.0, 0.0
        if not saturated:
            d_angle = -par[3] * par[2] * par[2] * par[0]
            d_rate = -par[3] * par[2] * par[2] * par[1]
        z_i = W_mk_v[ki, 3]
        for c in range(n):
            for e in range(3):  # ∂(τ z_i)/∂q, ∂(τ z_i)/∂q̇
                g_dq[e, c] = z_i[e] * (d_angle * rows[0, c] + d_rate * rows[1, c]) \
                    + torque * dz[e, c]
                g_dqd[e, c] = z_i[e] * d_rate * rows[2, c]
        for e in range(3):
            vec[e] = torque * z_i[e]
        _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, kind, q, top, k_scale, c_scale)
        if inertia != 0.0:  # the partials' rows are still in x3n[3]
            blk = floats3(WF, WH, W_XBLK)[0]
            for a in range(n):  # M: n² J_m g gᵀ
                for b in range(n):
                    blk[a, b] = inertia * rows[2, a] * rows[2, b]
            _scatter_n(F, IN, H, WF, WI, WH, T_k_body[ki], T_k_body[kj], ni, n, blk, top,
                       m_scale)
            for a in range(n):  # C: 2 n² J_m g (∂θ̇/∂q)
                for b in range(n):
                    blk[a, b] = 2.0 * inertia * rows[2, a] * rows[1, b]
            _scatter_n(F, IN, H, WF, WI, WH, T_k_body[ki], T_k_body[kj], ni, n, blk, top,
                       c_scale)


@njit(cache=True)
def _rotational(ni, c):
    """Whether the pair's local column c is an Euler parameter or a modal coordinate
    (not one of its body's position R, the first three)."""
    return (c if c < ni else c - ni) >= 3


@njit(cache=True)
def _rate_rows(F, IN, H, WF, WI, WH, kind, ki, kj, slot, q, v):
    """∂θ̇/∂q at the rates ``v`` (θ̇ = g(q)·v) into the partials' rows (x3n[3][1]), with
    g = ∂θ̇/∂q̇ in x3n[3][2], from the markers and frames in the workspace; (n_i, n)."""
    _coordinate(F, IN, H, WF, WI, WH, kind, ki, kj, slot, v, NO)
    return _partials(F, IN, H, WF, WI, WH, kind, ki, kj, q, v)


@njit(cache=True)
def _pair_frames(F, IN, H, WF, WI, WH, ki, kj, q):
    """The frames of markers ki, kj's bodies and the two markers' vectors with their
    Jacobians at q (the workspace's other markers are left as they are)."""
    T_k_body = ints1(IN, H, T_K_BODY)
    for k in (ki, kj):
        if T_k_body[k] >= 0:
            body_frame(F, IN, H, WF, WI, WH, q, T_k_body[k])
    for k in (ki, kj):
        marker_vectors(F, IN, H, WF, WI, WH, q, k, YES)


@njit(cache=True)
def servo_rotor_tangents_into(F, IN, H, WF, WI, WH, q, qd, qdd, k_out, c_out):
    """Complete the Newton tangents of the torque servos' rotors (:func:`servo_tangents_into`:
    the q-derivative left out, C = 2 n² J_m g ⊗ ∂θ̇/∂q) into the exact ones, for the
    gradients' step Jacobians (docs/gradients.md, "The step Jacobian"): with
    r_m = n² J_m θ̈ g, θ̈ = g·q̈ + q̇ᵀHq̇, H = ∂g/∂q (g = ∂θ̇/∂q̇, so ∂θ̇/∂q = Hᵀq̇),

        k_out += n² J_m (g ⊗ (Hᵀq̈ + ∇(q̇ᵀHq̇)) + θ̈ H),
        c_out += n² J_m g ⊗ (Hq̇ − Hᵀq̇).

    Row c of H is ∂θ̇/∂q at the unit rate e_c; ∇(q̇ᵀHq̇)_c = Σ_b q̇_b ∂(Hᵀq̇)_c/∂q_b is
    the derivative of ∂θ̇/∂q along q̇ at fixed q̇, taken by a central difference along
    the Euler parameters' and modal coordinates' rates (g depends on nothing else) over
    ε = 10⁻⁵ max(1, |p, ξ|∞)/|ṗ, ξ̇|∞ (as the velocity Jacobian Z: O(ε²) ≈ 10⁻¹⁰
    relative, wherever the bodies are). Needs the markers and frames of the state in the
    workspace (left as they were)."""
    T_v_mark, T_v_par = ints2(IN, H, T_V_MARK), floats2(F, H, T_V_PAR)
    T_v_kind, T_k_body = ints1(IN, H, T_V_KIND), ints1(IN, H, T_K_BODY)
    first = ints2(IN, H, T_T_MARK).shape[0]
    rows = floats3(WF, WH, W_X3N)[3]
    work, hmat = floats2(WF, WH, W_SV_ROWS), floats2(WF, WH, W_SV_H)
    g, r1, r1a, grad, hqd = work[0], work[1], work[2], work[3], work[4]
    moved, unit = floats2(WF, WH, W_SV_Q)[0], floats2(WF, WH, W_SV_Q)[1]
    blk = floats3(WF, WH, W_XBLK)
    for s in range(T_v_mark.shape[0]):
        scale = T_v_par[s, 4]
        if T_v_kind[s] != TORQUE or scale == 0.0:
            continue
        ki, kj, slot = T_v_mark[s, 0], T_v_mark[s, 1], first + s
        ni, n = _rate_rows(F, IN, H, WF, WI, WH, TORQUE, ki, kj, slot, q, qd)
        st_i, st_j = _pair_starts(IN, H, ki, kj, ni, n)
        for c in range(n):
            g[c], r1[c] = rows[2, c], rows[1, c]
        accel = (_pair_dot(IN, H, ki, kj, ni, n, g, qdd)
                 + _pair_dot(IN, H, ki, kj, ni, n, r1, qd))
        _rate_rows(F, IN, H, WF, WI, WH, TORQUE, ki, kj, slot, q, qdd)
        for c in range(n):
            r1a[c] = rows[1, c]
        for i in range(unit.size):
            unit[i] = 0.0
        for c in range(n):  # H row by row: ∂θ̇/∂q at the unit rates
            col = st_i + c if c < ni else st_j + c
            unit[col] = 1.0
            _rate_rows(F, IN, H, WF, WI, WH, TORQUE, ki, kj, slot, q, unit)
            unit[col] = 0.0
            for b in range(n):
                hmat[c, b] = rows[1, b]
        size, rate = 1.0, 0.0  # over p and ξ: g, and so H, does not depend on R
        for c in range(n):
            if _rotational(ni, c):
                col = st_i + c if c < ni else st_j + c
                size, rate = max(size, abs(q[col])), max(rate, abs(qd[col]))
        for c in range(n):
            hqd[c] = 0.0
            grad[c] = 0.0
            for b in range(n):
                hqd[c] += hmat[c, b] * qd[st_i + b if b < ni else st_j + b]
        if rate > 0.0:  # (q̇ = 0: q̇ᵀHq̇ and its gradient vanish)
            eps = 1e-5 * size / rate
            for i in range(moved.size):
                moved[i] = q[i]
            for sign in (1.0, -1.0):
                for c in range(n):  # (R stays: nothing here depends on it)
                    if _rotational(ni, c):
                        col = st_i + c if c < ni else st_j + c
                        moved[col] = q[col] + sign * eps * qd[col]
                _pair_frames(F, IN, H, WF, WI, WH, ki, kj, moved)
                _rate_rows(F, IN, H, WF, WI, WH, TORQUE, ki, kj, slot, moved, qd)
                for c in range(n):
                    grad[c] += sign * rows[1, c] / (2.0 * eps)
            _pair_frames(F, IN, H, WF, WI, WH, ki, kj, q)  # (the state's again)
        for a in range(n):
            for b in range(n):
                blk[0, a, b] = scale * (g[a] * (r1a[b] + grad[b]) + accel * hmat[a, b])
                blk[1, a, b] = scale * g[a] * (hqd[b] - r1[b])
        _scatter_n(F, IN, H, WF, WI, WH, T_k_body[ki], T_k_body[kj], ni, n, blk[0], k_out,
                   1.0)
        _scatter_n(F, IN, H, WF, WI, WH, T_k_body[ki], T_k_body[kj], ni, n, blk[1], c_out,
                   1.0)


@njit(cache=True)
def servo_outputs(F, IN, H, WF, WI, WH, q, qd, prof, refs, loads, kin):
    """At an output: loads −= Q of the servos' controller torques (their power) and
    returns kin plus the rotors' kinetic energy ½ n² J_m θ̇² [J]; each angle takes its
    turns from ``refs`` (the angles the run recorded, the servos' after the springs';
    NaN: continue from the previous output)."""
    T_v_mark, T_v_par = ints2(IN, H, T_V_MARK), floats2(F, H, T_V_PAR)
    T_v_kind = ints1(IN, H, T_V_KIND)
    first = ints2(IN, H, T_T_MARK).shape[0]
    angles = floats1(WF, WH, W_ANGLES)
    for s in range(T_v_mark.shape[0]):
        if not np.isnan(refs[first + s]):
            angles[first + s] = refs[first + s]
        _, rate = _coordinate(F, IN, H, WF, WI, WH, T_v_kind[s], T_v_mark[s, 0],
                              T_v_mark[s, 1], first + s, qd, NO)
        kin += 0.5 * T_v_par[s, 4] * rate * rate
    servo_loads(F, IN, H, WF, WI, WH, q, qd, qd, prof, loads, YES, NO)
    return kin
