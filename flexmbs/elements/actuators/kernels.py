"""Joint actuators in compiled code: the torque u z_i or force u z_i on marker j with its
reaction on i, and K = −∂Q/∂q through z_i(q) and the torque or force Jacobians; u is a
time profile's value (C = 0) or a state-dependent callable's, whose derivative rows
du/dq, du/dq̇ (from Python) add g ⊗ du/dq to K and g ⊗ du/dq̇ to C, g = −∂Q/∂u.
The NumPy counterpart: :class:`flexmbs.model.forces.JointActuator` (docs/compiled.md).
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    W_CB_V,
    W_FORCE_VEC,
    W_MK_J,
    W_MK_V,
    W_X3,
    W_X3N,
    W_XBLK,
    floats2,
    floats3,
    floats4,
    ints1,
    ints2,
)
from ..inputs import _input_load, _input_tangent_into
from ..markers import (
    _add_load_tangent,
    _apply_load,
    _load_jacobian_into,
    _scatter_n,
)
from ..registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_A_KIND, T_A_MARK, T_B_NM, T_K_BODY, T_U_CALL = header_rows(
    "a_kind", "a_mark", "b_nm", "k_body", "u_call")


@njit(cache=True)
def actuator_loads(F, IN, H, WF, WI, WH, q, u, r):
    """r −= Q of the joint actuators: u z_i on marker j, −u z_i on marker i (z_i the
    z axis of marker i, from its vectors in the workspace)."""
    T_a_kind = ints1(IN, H, T_A_KIND)
    T_a_mark = ints2(IN, H, T_A_MARK)
    W_mk_v = floats3(WF, WH, W_MK_V)
    vec = floats2(WF, WH, W_FORCE_VEC)[2]
    for act in range(T_a_kind.size):
        ki, kj = T_a_mark[act, 0], T_a_mark[act, 1]
        zi = W_mk_v[ki][3]
        for c in range(3):
            vec[c] = u[act] * zi[c]
        _apply_load(F, IN, H, WF, WI, WH, kj, vec, T_a_kind[act], 1.0, q, r)
        _apply_load(F, IN, H, WF, WI, WH, ki, vec, T_a_kind[act], -1.0, q, r)


@njit(cache=True)
def actuator_tangents_into(F, IN, H, WF, WI, WH, q, u, top, scale, c_scale):
    """top += scale K + c_scale C of the joint actuators, K = −∂Q/∂q with
    Q = [−Jac_iᵀ; Jac_jᵀ](u z_i): through z_i(q) (marker i's z-axis Jacobian) and the
    Jacobians' own q-dependence, and for a state-dependent callable u through its
    derivative rows (K and C, :func:`~flexmbs.elements.inputs._input_tangent_into`)."""
    T_u_call = ints1(IN, H, T_U_CALL)
    unit = floats2(WF, WH, W_CB_V)[0]
    T_a_kind = ints1(IN, H, T_A_KIND)
    T_a_mark = ints2(IN, H, T_A_MARK)
    T_b_nm = ints1(IN, H, T_B_NM)
    T_k_body = ints1(IN, H, T_K_BODY)
    W_mk_j = floats4(WF, WH, W_MK_J)
    W_mk_v = floats3(WF, WH, W_MK_V)
    jac, vec, dq = floats3(WF, WH, W_X3N)[0], floats2(WF, WH, W_X3)[3], floats3(WF, WH, W_XBLK)[0]
    for act in range(T_a_kind.size):
        ki, kj = T_a_mark[act, 0], T_a_mark[act, 1]
        kind = T_a_kind[act]
        bi, bj = T_k_body[ki], T_k_body[kj]
        ni = 7 + T_b_nm[bi] if bi >= 0 else 0
        nj = 7 + T_b_nm[bj] if bj >= 0 else 0
        n = ni + nj
        for c in range(3):
            vec[c] = u[act] * W_mk_v[ki, 3, c]
        if ni:
            _load_jacobian_into(F, IN, H, WF, WI, WH, ki, kind, q, jac, np.int64(0))
        if nj:
            _load_jacobian_into(F, IN, H, WF, WI, WH, kj, kind, q, jac, ni)
        dz = W_mk_j[ki, 3]  # ∂z_i/∂q_i (its first ni columns)
        for r in range(n):  # dq = [−Jac_iᵀ u ∂z_i, 0; Jac_jᵀ u ∂z_i, 0] + the tangents
            sign = -1.0 if r < ni else 1.0
            for c in range(n):
                dq[r, c] = 0.0
                if c < ni:
                    dq[r, c] = sign * u[act] * (jac[0, r] * dz[0, c] + jac[1, r] * dz[1, c]
                                                + jac[2, r] * dz[2, c])
        if ni:
            _add_load_tangent(F, IN, H, WF, WI, WH, ki, kind, q, vec, dq, np.int64(0), -1.0)
        if nj:
            _add_load_tangent(F, IN, H, WF, WI, WH, kj, kind, q, vec, dq, ni, 1.0)
        _scatter_n(F, IN, H, WF, WI, WH, bi, bj, ni, n, dq, top, -scale)
        if T_u_call[act] == 1:  # g = −∂Q/∂u: the load of u = 1
            g = _input_load(WF, WH)
            for c in range(3):
                unit[c] = W_mk_v[ki, 3, c]
            _apply_load(F, IN, H, WF, WI, WH, kj, unit, kind, 1.0, q, g)
            _apply_load(F, IN, H, WF, WI, WH, ki, unit, kind, -1.0, q, g)
            _input_tangent_into(WF, WH, act, top, scale, c_scale)
