"""Joints and drives in compiled code: Φ, Φ_qᵀλ, Φ_q, the Hessian of Σ λ_k Φ_k and the
velocity equations (docs/compiled.md, docs/multibody.md).

Every joint and drive equation is a bilinear form in its two markers' vectors
V = (r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j) plus a linear part, Φ_e = Σ_ab C_ab v_aᵀv_b
+ Σ_a l_aᵀv_a (:func:`flexmbs.model.joints.constraint_coefficients`), so no joint kind
has code of its own here: rotation drives update C from θ_d(t), translation drives
subtract s(t); the Euler-parameter normalization rows pᵀp − 1 and the coordinate drives
come beside them. The NumPy counterparts: :mod:`flexmbs.assembly.constraints` and
:func:`flexmbs.assembly.tangents.constraint_hessian`.
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    NO,
    ROWS_I,
    ROWS_J,
    W_COEF,
    W_HCS,
    W_HV,
    W_MK_J,
    W_MK_V,
    W_OFFSET,
    W_QCUR,
    W_WGT,
    YES,
    floats1,
    floats3,
    floats4,
    ints1,
    ints2,
    ints3,
)
from ..markers import add_weighted_jacobian, all_marker_vectors, bilinear_hessian_into
from ..registry import header_rows, work_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_KIND, T_B_NM, T_B_NORM, T_B_START, T_C_COORD, T_C_DRIVE = header_rows(
    "b_kind", "b_nm", "b_norm", "b_start", "c_coord", "c_drive")
T_C_ROW, T_E_DRIVE, T_E_KIND, T_E_LIN, T_E_MARK, T_E_NPAIRS = header_rows(
    "c_row", "e_drive", "e_kind", "e_lin", "e_mark", "e_npairs")
T_E_PAIRS, T_E_ROW, T_J_COL, T_J_ROW, T_K_BODY = header_rows(
    "e_pairs", "e_row", "j_col", "j_row", "k_body")
W_MK_VD, W_MK_W = work_rows("mk_vd", "mk_w")

EQ_ROTATION, EQ_TRANSLATION = 1, 2


@njit(cache=True)
def equation_coefficients(F, IN, H, WF, WI, WH, prof):
    """The time-dependent coefficients at t: C[5, 1] = −sin θ_d, C[5, 2] = cos θ_d of the
    rotation drives into W_coef and s(t) of the translation drives into W_offset (the
    joints' C_k are copied into W_coef once, by ``make_workspace``)."""
    T_e_drive = ints1(IN, H, T_E_DRIVE)
    T_e_kind = ints1(IN, H, T_E_KIND)
    W_coef = floats3(WF, WH, W_COEF)
    W_offset = floats1(WF, WH, W_OFFSET)
    for e in range(T_e_kind.size):
        kind = T_e_kind[e]
        if kind == EQ_ROTATION:
            th = prof[T_e_drive[e], 0]
            W_coef[e, 5, 1] = -np.sin(th)
            W_coef[e, 5, 2] = np.cos(th)
        elif kind == EQ_TRANSLATION:
            W_offset[e] = prof[T_e_drive[e], 0]


@njit(cache=True)
def constraint_values(F, IN, H, WF, WI, WH, q, prof, phi):
    """Φ (n_c,) into ``phi``, with the markers' vectors (no Jacobians)."""
    equation_coefficients(F, IN, H, WF, WI, WH, prof)
    all_marker_vectors(F, IN, H, WF, WI, WH, q, NO)
    _phi_rows(F, IN, H, WF, WI, WH, q, prof, phi)


@njit(cache=True)
def _phi_rows(F, IN, H, WF, WI, WH, q, prof, phi):
    T_b_kind = ints1(IN, H, T_B_KIND)
    T_b_norm = ints1(IN, H, T_B_NORM)
    T_b_start = ints1(IN, H, T_B_START)
    T_c_coord = ints1(IN, H, T_C_COORD)
    T_c_drive = ints1(IN, H, T_C_DRIVE)
    T_c_row = ints1(IN, H, T_C_ROW)
    T_e_lin = floats3(F, H, T_E_LIN)
    T_e_mark = ints2(IN, H, T_E_MARK)
    T_e_npairs = ints1(IN, H, T_E_NPAIRS)
    T_e_pairs = ints3(IN, H, T_E_PAIRS)
    T_e_row = ints1(IN, H, T_E_ROW)
    W_coef = floats3(WF, WH, W_COEF)
    W_mk_v = floats3(WF, WH, W_MK_V)
    W_offset = floats1(WF, WH, W_OFFSET)
    for b in range(T_b_kind.size):
        s = T_b_start[b] + 3
        phi[T_b_norm[b]] = (
            q[s] * q[s] + q[s + 1] * q[s + 1] + q[s + 2] * q[s + 2] + q[s + 3] * q[s + 3] - 1.0
        )
    for c in range(T_c_row.size):
        phi[T_c_row[c]] = q[T_c_coord[c]] - prof[T_c_drive[c], 0]
    for e in range(T_e_row.size):
        ki, kj = T_e_mark[e, 0], T_e_mark[e, 1]
        val = -W_offset[e]
        for p in range(T_e_npairs[e]):  # the nonzero C_ab only; scalar indexing
            a, b = T_e_pairs[e, p, 0], T_e_pairs[e, p, 1]
            ka, aa = (ki, a) if a < 4 else (kj, a - 4)
            kb, bb = (ki, b) if b < 4 else (kj, b - 4)
            val += W_coef[e, a, b] * (W_mk_v[ka, aa, 0] * W_mk_v[kb, bb, 0]
                                      + W_mk_v[ka, aa, 1] * W_mk_v[kb, bb, 1]
                                      + W_mk_v[ka, aa, 2] * W_mk_v[kb, bb, 2])
        for a in range(8):
            ka, aa = (ki, a) if a < 4 else (kj, a - 4)
            val += (T_e_lin[e, a, 0] * W_mk_v[ka, aa, 0] + T_e_lin[e, a, 1] * W_mk_v[ka, aa, 1]
                    + T_e_lin[e, a, 2] * W_mk_v[ka, aa, 2])
        phi[T_e_row[e]] = val


@njit(cache=True)
def _equation_weights(T_e_lin, T_e_mark, T_e_npairs, T_e_pairs, W_coef, W_mk_v, e, wgt):
    """wgt (8, 3) ← (C + Cᵀ) V + l of equation e: ∂Φ_e/∂q = Σ_a wgt_aᵀ J_a (from the
    nonzero C_ab: wgt_a += C_ab V_b, wgt_b += C_ab V_a)."""
    ki, kj = T_e_mark[e, 0], T_e_mark[e, 1]
    for a in range(8):
        for c in range(3):
            wgt[a, c] = T_e_lin[e, a, c]
    for p in range(T_e_npairs[e]):
        a, b = T_e_pairs[e, p, 0], T_e_pairs[e, p, 1]
        cab = W_coef[e, a, b]
        ka, aa = (ki, a) if a < 4 else (kj, a - 4)
        kb, bb = (ki, b) if b < 4 else (kj, b - 4)
        for c in range(3):
            wgt[a, c] += cab * W_mk_v[kb, bb, c]
            wgt[b, c] += cab * W_mk_v[ka, aa, c]


@njit(cache=True)
def constraints_with_jacobian(F, IN, H, WF, WI, WH, q, prof, lam, phi, r):
    """Φ into ``phi`` and r += Φ_qᵀλ (markers with Jacobians into the workspace).

    Φ_qᵀλ = Σ_k J_kᵀ w_k over the markers k, with w_k = Σ_e λ_e ∂Φ_e/∂V_k the
    multiplier-weighted sum of the equations' weights on marker k's vectors: one pass
    over each marker's Jacobian, however many equations share the marker."""
    T_e_lin = floats3(F, H, T_E_LIN)
    W_coef = floats3(WF, WH, W_COEF)
    T_b_nm = ints1(IN, H, T_B_NM)
    W_mk_j = floats4(WF, WH, W_MK_J)
    W_mk_v = floats3(WF, WH, W_MK_V)
    W_mk_w = floats3(WF, WH, W_MK_W)
    T_b_kind = ints1(IN, H, T_B_KIND)
    T_b_norm = ints1(IN, H, T_B_NORM)
    T_b_start = ints1(IN, H, T_B_START)
    T_c_coord = ints1(IN, H, T_C_COORD)
    T_c_row = ints1(IN, H, T_C_ROW)
    T_e_mark = ints2(IN, H, T_E_MARK)
    T_e_npairs = ints1(IN, H, T_E_NPAIRS)
    T_e_pairs = ints3(IN, H, T_E_PAIRS)
    T_e_row = ints1(IN, H, T_E_ROW)
    T_k_body = ints1(IN, H, T_K_BODY)
    W_wgt = floats3(WF, WH, W_WGT)
    equation_coefficients(F, IN, H, WF, WI, WH, prof)
    all_marker_vectors(F, IN, H, WF, WI, WH, q, YES)
    _phi_rows(F, IN, H, WF, WI, WH, q, prof, phi)
    for b in range(T_b_kind.size):
        s = T_b_start[b] + 3
        lam_b = lam[T_b_norm[b]]
        for m in range(4):
            r[s + m] += 2.0 * q[s + m] * lam_b
    for c in range(T_c_row.size):
        r[T_c_coord[c]] += lam[T_c_row[c]]
    for k in range(T_k_body.size):
        for a in range(4):
            for c in range(3):
                W_mk_w[k, a, c] = 0.0
    for e in range(T_e_row.size):  # every equation's weights, kept for the Jacobian
        wgt = W_wgt[e]             # and the velocity constraint at this q
        _equation_weights(T_e_lin, T_e_mark, T_e_npairs, T_e_pairs, W_coef, W_mk_v, e, wgt)
        lam_e = lam[T_e_row[e]]
        if lam_e == 0.0:
            continue
        ki, kj = T_e_mark[e, 0], T_e_mark[e, 1]
        for a in range(4):
            for c in range(3):
                W_mk_w[ki, a, c] += lam_e * wgt[a, c]
                W_mk_w[kj, a, c] += lam_e * wgt[4 + a, c]
    for k in range(T_k_body.size):
        add_weighted_jacobian(T_b_nm, T_b_start, T_k_body, W_mk_j, k, W_mk_w[k], 0, 1.0, r)


@njit(cache=True)
def jacobian_dense(F, IN, H, WF, WI, WH, out):
    """Φ_q (n_c x n_q) into ``out`` from the markers and coefficients of the last
    :func:`constraints_with_jacobian` call (same q, t)."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_k_body = ints1(IN, H, T_K_BODY)
    W_mk_j = floats4(WF, WH, W_MK_J)
    T_b_kind = ints1(IN, H, T_B_KIND)
    T_b_norm = ints1(IN, H, T_B_NORM)
    T_b_start = ints1(IN, H, T_B_START)
    T_c_coord = ints1(IN, H, T_C_COORD)
    T_c_row = ints1(IN, H, T_C_ROW)
    T_e_mark = ints2(IN, H, T_E_MARK)
    T_e_row = ints1(IN, H, T_E_ROW)
    W_qcur = floats1(WF, WH, W_QCUR)
    W_wgt = floats3(WF, WH, W_WGT)
    T_j_row, T_j_col = ints1(IN, H, T_J_ROW), ints1(IN, H, T_J_COL)
    for k in range(T_j_row.size):  # entries off the pattern are never written: stay 0
        out[T_j_row[k], T_j_col[k]] = 0.0
    q_rows = W_qcur
    for b in range(T_b_kind.size):
        s = T_b_start[b] + 3
        for m in range(4):
            out[T_b_norm[b], s + m] = 2.0 * q_rows[s + m]
    for c in range(T_c_row.size):
        out[T_c_row[c], T_c_coord[c]] = 1.0
    for e in range(T_e_row.size):  # the weights of the last residual (same q)
        wgt = W_wgt[e]
        row = out[T_e_row[e]]
        add_weighted_jacobian(
            T_b_nm, T_b_start, T_k_body, W_mk_j, T_e_mark[e, 0], wgt, ROWS_I, 1.0, row
        )
        add_weighted_jacobian(
            T_b_nm, T_b_start, T_k_body, W_mk_j, T_e_mark[e, 1], wgt, ROWS_J, 1.0, row
        )


@njit(cache=True)
def constraint_hessian_into(F, IN, H, WF, WI, WH, q, lam, top, scale):
    """top += scale Σ_k λ_k ∂²Φ_k/∂q² (joints and drives per marker pair, normalization
    rows 2λ I; coordinate drives are linear). Needs the markers of the residual."""
    T_b_kind = ints1(IN, H, T_B_KIND)
    T_b_norm = ints1(IN, H, T_B_NORM)
    T_b_start = ints1(IN, H, T_B_START)
    T_e_lin = floats3(F, H, T_E_LIN)
    T_e_mark = ints2(IN, H, T_E_MARK)
    T_e_row = ints1(IN, H, T_E_ROW)
    W_coef = floats3(WF, WH, W_COEF)
    hcs, hv = floats3(WF, WH, W_HCS), floats3(WF, WH, W_HV)  # scratch: nothing allocated
    csum, lsum = hcs[0], hv[0]  # Σ λ C and Σ λ l of a marker pair's equations
    for b in range(T_b_kind.size):
        s = T_b_start[b] + 3
        for m in range(4):
            top[s + m, s + m] += scale * 2.0 * lam[T_b_norm[b]]
    ne = T_e_row.size
    e = 0
    while e < ne:
        ki, kj = T_e_mark[e, 0], T_e_mark[e, 1]
        last = e
        while last + 1 < ne and T_e_mark[last + 1, 0] == ki and T_e_mark[last + 1, 1] == kj:
            last += 1
        for a_ in range(8):
            for b_ in range(8):
                csum[a_, b_] = 0.0
            for c in range(3):
                lsum[a_, c] = 0.0
        for eq in range(e, last + 1):
            lam_e = lam[T_e_row[eq]]
            for a_ in range(8):
                for b_ in range(8):
                    csum[a_, b_] += lam_e * W_coef[eq, a_, b_]
                for c in range(3):
                    lsum[a_, c] += lam_e * T_e_lin[eq, a_, c]
        bilinear_hessian_into(F, IN, H, WF, WI, WH, ki, kj, q, top, scale)
        e = last + 1


@njit(cache=True)
def velocity_constraint(F, IN, H, WF, WI, WH, qd, prof, vel):
    """vel = Φ_q q̇ + Φ_t (the velocity constraint of docs/theory_integrators.md,
    "Stabilized index 2") without forming Φ_q: from the markers' vectors, their
    Jacobians and the equations' weights ∂Φ_e/∂V of the last
    :func:`constraints_with_jacobian` call (its q and t),
    Φ_e,q q̇ = Σ_a ∂Φ_e/∂v_a · (J_a q̇), each marker's rates J q̇ taken once."""
    T_b_kind = ints1(IN, H, T_B_KIND)
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_norm = ints1(IN, H, T_B_NORM)
    T_b_start = ints1(IN, H, T_B_START)
    T_c_coord = ints1(IN, H, T_C_COORD)
    T_c_row = ints1(IN, H, T_C_ROW)
    T_e_mark = ints2(IN, H, T_E_MARK)
    T_e_row = ints1(IN, H, T_E_ROW)
    T_k_body = ints1(IN, H, T_K_BODY)
    W_mk_j = floats4(WF, WH, W_MK_J)
    W_mk_v = floats3(WF, WH, W_MK_V)
    W_mk_vd = floats3(WF, WH, W_MK_VD)
    W_qcur = floats1(WF, WH, W_QCUR)
    W_wgt = floats3(WF, WH, W_WGT)
    for k in range(T_k_body.size):
        b = T_k_body[k]
        rate = W_mk_vd[k]
        if b < 0:  # a ground marker does not move
            for a in range(4):
                for c in range(3):
                    rate[a, c] = 0.0
            continue
        st, n = T_b_start[b], 7 + T_b_nm[b]
        jac = W_mk_j[k]
        for a in range(4):
            for c in range(3):
                acc = 0.0
                for col in range(n):
                    acc += jac[a, c, col] * qd[st + col]
                rate[a, c] = acc
    for b in range(T_b_kind.size):  # the normalization rows: 2 pᵀṗ
        s = T_b_start[b] + 3
        vel[T_b_norm[b]] = 2.0 * (W_qcur[s] * qd[s] + W_qcur[s + 1] * qd[s + 1]
                                  + W_qcur[s + 2] * qd[s + 2] + W_qcur[s + 3] * qd[s + 3])
    for c in range(T_c_row.size):
        vel[T_c_row[c]] = qd[T_c_coord[c]]
    for e in range(T_e_row.size):  # the weights of the last residual (same q)
        wgt = W_wgt[e]
        ki, kj = T_e_mark[e, 0], T_e_mark[e, 1]
        acc = 0.0
        for a in range(4):
            for c in range(3):
                acc += wgt[a, c] * W_mk_vd[ki, a, c] + wgt[4 + a, c] * W_mk_vd[kj, a, c]
        vel[T_e_row[e]] = acc
    add_phi_t(prof, vel, T_c_row, T_e_row, ints1(IN, H, T_E_KIND), ints1(IN, H, T_E_DRIVE),
               T_e_mark, W_mk_v, ints1(IN, H, T_C_DRIVE))


@njit(cache=True)
def constraint_violations(F, IN, H, WF, WI, WH, q, qd, prof, phi, vel):
    """Φ into ``phi`` and Φ_q q̇ + Φ_t into ``vel`` at (q, q̇) and the profiles ``prof``
    of time t (markers with Jacobians into the workspace; W_qcur must hold q): what the
    outputs report, without the multipliers' sums or Φ_q itself."""
    equation_coefficients(F, IN, H, WF, WI, WH, prof)
    all_marker_vectors(F, IN, H, WF, WI, WH, q, YES)
    _phi_rows(F, IN, H, WF, WI, WH, q, prof, phi)
    T_e_mark, W_wgt = ints2(IN, H, T_E_MARK), floats3(WF, WH, W_WGT)
    for e in range(T_e_mark.shape[0]):
        _equation_weights(floats3(F, H, T_E_LIN), T_e_mark, ints1(IN, H, T_E_NPAIRS),
                          ints3(IN, H, T_E_PAIRS), floats3(WF, WH, W_COEF), floats3(WF, WH, W_MK_V),
                          e, W_wgt[e])
    velocity_constraint(F, IN, H, WF, WI, WH, qd, prof, vel)


@njit(cache=True)
def add_phi_t(prof, vel, c_row, e_row, e_kind, e_drive, e_mark, mk_v, c_drive):
    """vel ← vel + Φ_t, Φ_t of the drives (zero on joints and normalization rows)."""
    for c in range(c_row.size):
        vel[c_row[c]] -= prof[c_drive[c], 1]
    for e in range(e_row.size):
        if e_kind[e] == 0:
            continue
        th, th_d = prof[e_drive[e], 0], prof[e_drive[e], 1]
        if e_kind[e] == EQ_ROTATION:  # −θ̇ x_j·(cos θ x_i + sin θ y_i)
            ki, kj = e_mark[e, 0], e_mark[e, 1]
            acc = 0.0
            for c in range(3):
                acc += mk_v[kj, 1, c] * (np.cos(th) * mk_v[ki, 1, c] + np.sin(th) * mk_v[ki, 2, c])
            vel[e_row[e]] -= th_d * acc
        else:
            vel[e_row[e]] -= th_d
