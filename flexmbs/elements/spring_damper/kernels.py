"""Spring–damper–actuators in compiled code: tension f = k (L − L0) + c L̇ + f_a(t) along
the line of the two markers, its generalized force and its K and C through the line of
action u = d/L, the length and its rate (docs/compiled.md). The NumPy counterpart:
:class:`flexmbs.model.forces.SpringDamperActuator`.
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    FORCE,
    W_CB_V,
    W_FORCE_VEC,
    W_MK_J,
    W_MK_V,
    W_PAIR_RATE,
    W_X3,
    W_X3N,
    YES,
    floats1,
    floats2,
    floats3,
    floats4,
    ints1,
    ints2,
)
from ..inputs import _input_load, _input_tangent_into
from ..markers import (
    _apply_load,
    _load_jacobian_into,
    _pair_load_tangents,
    _point_jacobian_rate_into,
)
from ..registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_NM, T_B_START, T_K_BODY, T_S_ACT, T_S_MARK, T_S_PAR = header_rows(
    "b_nm", "b_start", "k_body", "s_act", "s_mark", "s_par")
T_U_CALL = header_rows("u_call")


@njit(cache=True)
def spring_state(F, IN, H, WF, WI, WH, s, qd, u, with_spring):
    """(f [N], L [m], L̇ [m/s]) of spring–damper–actuator s, its unit vector i → j into
    force_vec[2] and ḋ = J_j q̇_j − J_i q̇_i into pair_rate, from the markers' vectors and Jacobians
    in the workspace; ``with_spring`` False leaves out k (L − L0) (its non-conservative
    part). Coincident markers with a nonzero force give f = NaN (no line of action)."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_s_mark = ints2(IN, H, T_S_MARK)
    T_s_par = floats2(F, H, T_S_PAR)
    T_s_act = ints1(IN, H, T_S_ACT)
    W_mk_v = floats3(WF, WH, W_MK_V)
    W_mk_j = floats4(WF, WH, W_MK_J)
    unit = floats2(WF, WH, W_FORCE_VEC)[2]
    d_dot = floats1(WF, WH, W_PAIR_RATE)
    ki, kj = T_s_mark[s, 0], T_s_mark[s, 1]
    length = 0.0
    for c in range(3):
        unit[c] = W_mk_v[kj, 0, c] - W_mk_v[ki, 0, c]
        d_dot[c] = 0.0
        length += unit[c] * unit[c]
    length = np.sqrt(length)
    for k, sign in ((kj, 1.0), (ki, -1.0)):
        b = T_k_body[k]
        if b < 0:
            continue
        st = T_b_start[b]
        for c in range(3):
            acc = 0.0
            for col in range(7 + T_b_nm[b]):
                acc += W_mk_j[k, 0, c, col] * qd[st + col]
            d_dot[c] += sign * acc
    rate = 0.0
    if length > 0.0:
        for c in range(3):
            unit[c] /= length
            rate += unit[c] * d_dot[c]
    force = T_s_par[s, 1] * rate
    if with_spring:
        force += T_s_par[s, 0] * (length - T_s_par[s, 2])
    if T_s_act[s] >= 0:
        force += u[T_s_act[s]]
    if length == 0.0 and force != 0.0:
        force = np.nan
    return force, length, rate


@njit(cache=True)
def spring_damper_loads(F, IN, H, WF, WI, WH, q, qd, u, r, with_spring):
    """r −= Q of the spring–damper–actuators (f u on marker i, −f u on j: tension pulls
    them together); ``with_spring`` False: their non-conservative part only (damper and
    actuator, for the power of the outputs)."""
    T_s_mark = ints2(IN, H, T_S_MARK)
    vec = floats2(WF, WH, W_FORCE_VEC)[0]
    unit = floats2(WF, WH, W_FORCE_VEC)[2]
    for s in range(T_s_mark.shape[0]):
        force, _, _ = spring_state(F, IN, H, WF, WI, WH, s, qd, u, with_spring)
        if force == 0.0:
            continue
        for c in range(3):
            vec[c] = force * unit[c]
        for k, scale in ((T_s_mark[s, 0], 1.0), (T_s_mark[s, 1], -1.0)):
            _apply_load(F, IN, H, WF, WI, WH, k, vec, FORCE, scale, q, r)


@njit(cache=True)
def spring_damper_tangents_into(F, IN, H, WF, WI, WH, q, qd, u, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of the spring–damper–actuators, K = −∂Q/∂q,
    C = −∂Q/∂q̇ (the markers' vectors and Jacobians of the last residual in the
    workspace); an actuator force from a state-dependent callable adds g ⊗ du/dq and
    g ⊗ du/dq̇, g = −∂Q/∂u (:func:`~flexmbs.elements.inputs._input_tangent_into`)."""
    T_s_act, T_u_call = ints1(IN, H, T_S_ACT), ints1(IN, H, T_U_CALL)
    along = floats2(WF, WH, W_CB_V)[0]
    T_b_nm = ints1(IN, H, T_B_NM)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_s_mark = ints2(IN, H, T_S_MARK)
    T_s_par = floats2(F, H, T_S_PAR)
    W_mk_j = floats4(WF, WH, W_MK_J)
    x3n, vec = floats3(WF, WH, W_X3N), floats2(WF, WH, W_X3)[3]
    jac, d_dq, rates, du, g_dq, g_dqd = x3n[0], x3n[1], x3n[2], x3n[3], x3n[4], x3n[5]
    for s in range(T_s_mark.shape[0]):
        force, length, _ = spring_state(F, IN, H, WF, WI, WH, s, qd, u, YES)
        if length == 0.0:
            continue  # no line of action (the NumPy path differences it)
        unit, d_dot = floats2(WF, WH, W_FORCE_VEC)[2], floats1(WF, WH, W_PAIR_RATE)
        u0, u1, u2 = unit[0], unit[1], unit[2]
        e0, e1, e2 = d_dot[0], d_dot[1], d_dot[2]
        ki, kj = T_s_mark[s, 0], T_s_mark[s, 1]
        bi, bj = T_k_body[ki], T_k_body[kj]
        ni = 7 + T_b_nm[bi] if bi >= 0 else 0
        nj = 7 + T_b_nm[bj] if bj >= 0 else 0
        n = ni + nj
        # ∂d/∂q = [−J_i, J_j]; rates [−∂(J_i q̇_i)/∂q_i, ∂(J_j q̇_j)/∂q_j]
        for e in range(3):
            for c in range(ni):
                d_dq[e, c] = -W_mk_j[ki, 0, e, c]
            for c in range(nj):
                d_dq[e, ni + c] = W_mk_j[kj, 0, e, c]
        if ni:
            _point_jacobian_rate_into(F, IN, H, WF, WI, WH, ki, q, qd, rates, np.int64(0),
                                      -1.0)
            _load_jacobian_into(F, IN, H, WF, WI, WH, ki, FORCE, q, jac, np.int64(0))
        if nj:
            _point_jacobian_rate_into(F, IN, H, WF, WI, WH, kj, q, qd, rates, ni, 1.0)
            _load_jacobian_into(F, IN, H, WF, WI, WH, kj, FORCE, q, jac, ni)
        stiff, damp = T_s_par[s, 0], T_s_par[s, 1]
        for c in range(n):
            ud = u0 * d_dq[0, c] + u1 * d_dq[1, c] + u2 * d_dq[2, c]  # ∂L/∂q = ∂L̇/∂q̇
            du[0, c] = (d_dq[0, c] - u0 * ud) / length  # ∂u/∂q = (I − u uᵀ) ∂d/∂q / L
            du[1, c] = (d_dq[1, c] - u1 * ud) / length
            du[2, c] = (d_dq[2, c] - u2 * ud) / length
            rate_dq = (e0 * du[0, c] + e1 * du[1, c] + e2 * du[2, c]
                       + u0 * rates[0, c] + u1 * rates[1, c] + u2 * rates[2, c])
            f_dq = stiff * ud + damp * rate_dq
            f_dqd = damp * ud
            # the load on j is −f u (tension pulls marker i towards j): −∂(f u)/∂q, /∂q̇
            g_dq[0, c] = -(u0 * f_dq + force * du[0, c])
            g_dq[1, c] = -(u1 * f_dq + force * du[1, c])
            g_dq[2, c] = -(u2 * f_dq + force * du[2, c])
            g_dqd[0, c] = -u0 * f_dqd
            g_dqd[1, c] = -u1 * f_dqd
            g_dqd[2, c] = -u2 * f_dqd
        vec[0], vec[1], vec[2] = -force * u0, -force * u1, -force * u2
        _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, FORCE, q, top, k_scale, c_scale)
        col = T_s_act[s]
        if col >= 0 and T_u_call[col] == 1:  # g: the load of a unit actuator force
            g = _input_load(WF, WH)
            along[0], along[1], along[2] = u0, u1, u2
            _apply_load(F, IN, H, WF, WI, WH, ki, along, FORCE, 1.0, q, g)
            _apply_load(F, IN, H, WF, WI, WH, kj, along, FORCE, -1.0, q, g)
            _input_tangent_into(WF, WH, col, top, k_scale, c_scale)


@njit(cache=True)
def spring_damper_potential(F, IN, H, WF, WI, WH, pot):
    """pot plus the springs' potential Σ ½ k (L − L0)² [J] (markers of the residual in the
    workspace)."""
    T_s_mark, T_s_par = ints2(IN, H, T_S_MARK), floats2(F, H, T_S_PAR)
    mk_v = floats3(WF, WH, W_MK_V)
    for s in range(T_s_mark.shape[0]):
        length = 0.0
        for c in range(3):
            length += (mk_v[T_s_mark[s, 1], 0, c] - mk_v[T_s_mark[s, 0], 0, c]) ** 2
        pot += 0.5 * T_s_par[s, 0] * (np.sqrt(length) - T_s_par[s, 2]) ** 2
    return pot

