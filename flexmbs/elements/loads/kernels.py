"""Loads in compiled code: point forces and torques at a marker, in global or marker
axes, and distributed loads on flexible bodies through their integrals Σw, Σw ū0, Σw Φ
(so their cost does not grow with the FE mesh), with their tangents (docs/compiled.md).
A load's value is a constant of the table or, for a callable of the state, three
columns of ``u`` (Python writes them at every Newton iterate, and their derivative rows
for the iteration matrix: "Callables"). The NumPy counterparts:
:class:`flexmbs.model.forces.PointLoad` and :class:`flexmbs.model.forces.DistributedLoad`.
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    W_BASIS,
    W_CB_V,
    W_FORCE_VEC,
    W_GBAR,
    W_MK_J,
    W_MK_V,
    W_ROT,
    W_X3,
    W_X3N,
    W_X34,
    W_XBASIS,
    W_XBLK,
    W_XP,
    floats1,
    floats2,
    floats3,
    floats4,
    ints1,
)
from ...compiled.rotations import (
    conjugate_basis_into,
    cross_into,
    d_rot_t_into,
    d_rotated_into,
)
from ..inputs import _input_load, _input_tangent_into
from ..markers import (
    _add_load_tangent,
    _add_moment_tangent,
    _apply_load,
    _load_jacobian_into,
    _scatter_n,
)
from ..registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_MODE, T_B_NM, T_B_START, T_D_BODY, T_D_FIRST, T_D_FRAME = header_rows(
    "b_mode", "b_nm", "b_start", "d_body", "d_first", "d_frame")
T_D_SHAPES, T_D_TOTAL, T_D_VEC, T_K_BODY, T_L_FRAME, T_L_KIND = header_rows(
    "d_shapes", "d_total", "d_vec", "k_body", "l_frame", "l_kind")
T_L_MARK, T_L_VEC, T_L_COL, T_D_COL = header_rows(
    "l_mark", "l_vec", "l_col", "d_col")


TWO_WAY, ONE_WAY, RIGID, NO_MRF = (np.int64(code) for code in range(4))  # non-literal


@njit(cache=True)
def _value_into(col, table_row, u, out):
    """out ← a load's value: columns col, col+1, col+2 of u (a callable's), or its
    table row (a constant's, col < 0)."""
    for c in range(3):
        out[c] = u[col + c] if col >= 0 else table_row[c]


@njit(cache=True)
def _distributed_load(F, IN, H, WF, WI, WH, d, vec, q, r):
    """r −= Q of distributed load d with the value ``vec`` (3,): [A W f̄; Ḡᵀ(arm × f̄);
    (ΣwΦ)ᵀ f̄] with f̄ = vec (body axes) or Aᵀvec (global), arm = Σwū0 + ΣwΦ ξ where the
    coupling mode shows the deformation (two-way, no-Mrf), and no ξ rows in rigid mode."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_b_mode = ints1(IN, H, T_B_MODE)
    T_d_body = ints1(IN, H, T_D_BODY)
    T_d_frame = ints1(IN, H, T_D_FRAME)
    T_d_total = floats1(F, H, T_D_TOTAL)
    T_d_first = floats2(F, H, T_D_FIRST)
    T_d_shapes = floats3(F, H, T_D_SHAPES)
    W_rot = floats3(WF, WH, W_ROT)
    W_gbar = floats3(WF, WH, W_GBAR)
    vecs = floats2(WF, WH, W_FORCE_VEC)
    f_bar, arm, moment = vecs[0], vecs[1], vecs[2]
    b = T_d_body[d]
    st, nm, mode = T_b_start[b], T_b_nm[b], T_b_mode[b]
    a = W_rot[b]
    for c in range(3):
        if T_d_frame[d] == 1:
            f_bar[c] = vec[c]
        else:
            f_bar[c] = a[0, c] * vec[0] + a[1, c] * vec[1] + a[2, c] * vec[2]
    sees = mode in (TWO_WAY, NO_MRF)
    for c in range(3):
        arm[c] = T_d_first[d, c]
        if sees:
            for j in range(nm):
                arm[c] += T_d_shapes[d, c, j] * q[st + 7 + j]
        r[st + c] -= T_d_total[d] * (a[c, 0] * f_bar[0] + a[c, 1] * f_bar[1]
                                     + a[c, 2] * f_bar[2])
    cross_into(arm, f_bar, moment)
    gb = W_gbar[b]
    for m in range(4):
        r[st + 3 + m] -= gb[0, m] * moment[0] + gb[1, m] * moment[1] + gb[2, m] * moment[2]
    if mode != RIGID:
        for j in range(nm):
            r[st + 7 + j] -= (T_d_shapes[d, 0, j] * f_bar[0] + T_d_shapes[d, 1, j] * f_bar[1]
                              + T_d_shapes[d, 2, j] * f_bar[2])


@njit(cache=True)
def distributed_loads(F, IN, H, WF, WI, WH, q, u, r):
    """r −= Q of the distributed loads (:func:`_distributed_load`), each with its
    constant value or its callable's from ``u``."""
    T_d_col = ints1(IN, H, T_D_COL)
    T_d_vec = floats2(F, H, T_D_VEC)
    vec = floats2(WF, WH, W_CB_V)[1]
    for d in range(T_d_col.size):
        _value_into(T_d_col[d], T_d_vec[d], u, vec)
        _distributed_load(F, IN, H, WF, WI, WH, d, vec, q, r)


@njit(cache=True)
def distributed_tangents_into(F, IN, H, WF, WI, WH, q, u, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of the distributed loads, K = −∂Q/∂q (no q̇
    dependence at a given value); a callable's value adds g ⊗ du/dq and g ⊗ du/dq̇ per
    component, g = −∂Q/∂u (:func:`~flexmbs.elements.inputs._input_tangent_into`)."""
    T_d_col = ints1(IN, H, T_D_COL)
    cb_v = floats2(WF, WH, W_CB_V)
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_b_mode = ints1(IN, H, T_B_MODE)
    T_d_body = ints1(IN, H, T_D_BODY)
    T_d_frame = ints1(IN, H, T_D_FRAME)
    T_d_vec = floats2(F, H, T_D_VEC)
    T_d_total = floats1(F, H, T_D_TOTAL)
    T_d_first = floats2(F, H, T_D_FIRST)
    T_d_shapes = floats3(F, H, T_D_SHAPES)
    W_basis = floats3(WF, WH, W_BASIS)
    W_rot = floats3(WF, WH, W_ROT)
    W_gbar = floats3(WF, WH, W_GBAR)
    x3, x34 = floats2(WF, WH, W_X3), floats3(WF, WH, W_X34)
    basis_c, pc = floats3(WF, WH, W_XBASIS)[0], floats1(WF, WH, W_XP)
    dq = floats3(WF, WH, W_XBLK)[0]
    arm, f_bar, df = x3[0], x3[1], x34[0]
    for d in range(T_d_body.size):
        b = T_d_body[d]
        st, nm, mode = T_b_start[b], T_b_nm[b], T_b_mode[b]
        n = 7 + nm
        a = W_rot[b]
        gb = W_gbar[b]
        vec = cb_v[1]
        _value_into(T_d_col[d], T_d_vec[d], u, vec)
        if T_d_frame[d] == 1:  # body axes: f̄ = vec
            for i in range(3):
                f_bar[i] = vec[i]
                for m in range(4):
                    df[i, m] = 0.0
        else:  # f̄ = Aᵀ vec and its ∂/∂p
            for i in range(3):
                f_bar[i] = a[0, i] * vec[0] + a[1, i] * vec[1] + a[2, i] * vec[2]
            conjugate_basis_into(q[st + 3:st + 7], pc, basis_c)
            d_rot_t_into(basis_c, vec, df)
        sees = mode in (TWO_WAY, NO_MRF)
        for c in range(3):  # the deformed arm
            acc = T_d_first[d, c]
            if sees:
                for j in range(nm):
                    acc += T_d_shapes[d, c, j] * q[st + 7 + j]
            arm[c] = acc
        for i in range(n):
            for j in range(n):
                dq[i, j] = 0.0
        d_rotated_into(W_basis[b], f_bar, x34[1])
        total = T_d_total[d]
        for m in range(4):
            for i in range(3):  # Σw ∂(A f̄)/∂p
                dq[i, 3 + m] = total * (x34[1, i, m] + a[i, 0] * df[0, m] + a[i, 1] * df[1, m]
                                        + a[i, 2] * df[2, m])
        _add_moment_tangent(gb, arm, f_bar, df, nm, T_d_shapes[d], T_d_shapes[d], sees,
                            mode != RIGID, dq, np.int64(0), 1.0)
        _scatter_n(F, IN, H, WF, WI, WH, b, b, n, n, dq, top, -k_scale)
        col = T_d_col[d]
        if col >= 0:  # g of each component: the load of a unit value
            for e in range(3):
                g = _input_load(WF, WH)
                for c in range(3):
                    cb_v[0, c] = 1.0 if c == e else 0.0
                _distributed_load(F, IN, H, WF, WI, WH, d, cb_v[0], q, g)
                _input_tangent_into(WF, WH, col + e, top, k_scale, c_scale)


@njit(cache=True)
def point_loads(F, IN, H, WF, WI, WH, q, u, r):
    """r −= Q of the point forces and torques, in global axes or along their marker's
    axes (:class:`flexmbs.model.forces.PointLoad`), each with its constant value or its
    callable's from ``u``."""
    T_l_col = ints1(IN, H, T_L_COL)
    val = floats2(WF, WH, W_CB_V)[1]
    W_mk_v = floats3(WF, WH, W_MK_V)
    T_l_mark = ints1(IN, H, T_L_MARK)
    T_l_kind = ints1(IN, H, T_L_KIND)
    T_l_frame = ints1(IN, H, T_L_FRAME)
    T_l_vec = floats2(F, H, T_L_VEC)
    vec = floats2(WF, WH, W_FORCE_VEC)[0]
    for ld in range(T_l_mark.size):
        k = T_l_mark[ld]
        _value_into(T_l_col[ld], T_l_vec[ld], u, val)
        for c in range(3):
            if T_l_frame[ld] == 1:  # components along the marker's x, y, z axes
                vec[c] = (W_mk_v[k, 1, c] * val[0] + W_mk_v[k, 2, c] * val[1]
                          + W_mk_v[k, 3, c] * val[2])
            else:
                vec[c] = val[c]
        _apply_load(F, IN, H, WF, WI, WH, k, vec, T_l_kind[ld], 1.0, q, r)


@njit(cache=True)
def point_load_tangents_into(F, IN, H, WF, WI, WH, q, u, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of the point loads, K = −∂Q/∂q: the force or torque
    Jacobian's own q-dependence and, in marker axes, that of the axes (the markers'
    vectors and Jacobians of the last residual in the workspace); a callable's value
    adds g ⊗ du/dq and g ⊗ du/dq̇ per component, g = −∂Q/∂u
    (:func:`~flexmbs.elements.inputs._input_tangent_into`)."""
    T_l_col = ints1(IN, H, T_L_COL)
    cb_v = floats2(WF, WH, W_CB_V)
    val = cb_v[1]
    T_b_nm = ints1(IN, H, T_B_NM)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_l_mark = ints1(IN, H, T_L_MARK)
    T_l_kind = ints1(IN, H, T_L_KIND)
    T_l_frame = ints1(IN, H, T_L_FRAME)
    T_l_vec = floats2(F, H, T_L_VEC)
    W_mk_j = floats4(WF, WH, W_MK_J)
    W_mk_v = floats3(WF, WH, W_MK_V)
    x3n, vec = floats3(WF, WH, W_X3N), floats2(WF, WH, W_X3)[3]
    jac = x3n[0]
    blk = floats3(WF, WH, W_XBLK)[0]
    for ld in range(T_l_mark.size):
        k = T_l_mark[ld]
        b = T_k_body[k]
        if b < 0:
            continue
        n = 7 + T_b_nm[b]
        in_axes = T_l_frame[ld] == 1  # F = Σ_a v_a axis_a(q)
        _value_into(T_l_col[ld], T_l_vec[ld], u, val)
        for c in range(3):
            vec[c] = val[c]
            if in_axes:
                vec[c] = (val[0] * W_mk_v[k, 1, c] + val[1] * W_mk_v[k, 2, c]
                          + val[2] * W_mk_v[k, 3, c])
        kind = T_l_kind[ld]
        _load_jacobian_into(F, IN, H, WF, WI, WH, k, kind, q, jac, np.int64(0))
        for r in range(n):  # Jacᵀ ∂F/∂q in marker axes
            for c in range(n):
                acc = 0.0
                if in_axes:
                    for e in range(3):
                        acc += jac[e, r] * (val[0] * W_mk_j[k, 1, e, c]
                                            + val[1] * W_mk_j[k, 2, e, c]
                                            + val[2] * W_mk_j[k, 3, e, c])
                blk[r, c] = acc
        _add_load_tangent(F, IN, H, WF, WI, WH, k, kind, q, vec, blk, np.int64(0), 1.0)
        _scatter_n(F, IN, H, WF, WI, WH, b, b, n, n, blk, top, -k_scale)
        col = T_l_col[ld]
        if col >= 0:  # g of each component: the load of a unit value
            for e in range(3):
                g = _input_load(WF, WH)
                for c in range(3):
                    cb_v[0, c] = W_mk_v[k, 1 + e, c] if in_axes else (1.0 if c == e else 0.0)
                _apply_load(F, IN, H, WF, WI, WH, k, cb_v[0], kind, 1.0, q, g)
                _input_tangent_into(WF, WH, col + e, top, k_scale, c_scale)
