"""The bushing in compiled code (docs/multibody.md "Bushings", docs/compiled.md): the
kernels' copy of :mod:`flexmbs.elements.bushing.reference`, term by term.

Its six deformation components e = [d; θ] are bilinear forms in the two markers'
vectors V = (r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j), each with two terms
(:data:`PAIRS`, :data:`WEIGHTS`, from ``reference.coefficients``). With the load
s = K e + C ė − f0 the generalized force is Q = −(∇e)ᵀ s, and

    K_t = Σ_k s_k ∇²e_k + (∇e)ᵀ K ∇e + (∇e)ᵀ C ∂ė/∂q,    C_t = (∇e)ᵀ C ∇e,

where Σ_k s_k ∇²e_k is the Hessian of the bilinear form Σ_k s_k e_k (the constraints'
:func:`~flexmbs.elements.markers.bilinear_hessian_into`) and ∂ė/∂q takes the rates of
the markers' vector Jacobians. The markers' vectors and Jacobians are those of the
joints (``W_mk_v``, ``W_mk_j``, filled with the residual).
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    ROWS_I,
    ROWS_J,
    W_HCS,
    W_HV,
    W_MK_J,
    W_MK_V,
    floats2,
    floats3,
    floats4,
    ints1,
    ints2,
)
from ..markers import (
    _scatter_n,
    _vector_jacobian_rate_into,
    add_weighted_jacobian,
    bilinear_hessian_into,
)
from ..registry import header_rows, work_rows
from .reference import coefficients


def _pairs():
    """(PAIRS (6, 2, 2), WEIGHTS (6, 2)): e_k = Σ_p WEIGHTS[k, p] V_a·V_b with
    (a, b) = PAIRS[k, p], from the reference's coefficient tensor."""
    coef = coefficients()
    pairs, weights = np.zeros((6, 2, 2), np.int64), np.zeros((6, 2))
    for k in range(6):
        where = np.argwhere(coef[k] != 0.0)
        if len(where) != 2:
            raise AssertionError(f"bushing component {k} has {len(where)} terms, not 2")
        for p, (a, b) in enumerate(where):
            pairs[k, p] = a, b
            weights[k, p] = coef[k, a, b]
    return pairs, weights


#: The two bilinear terms of each deformation component (module constants: numba folds
#: them into the kernels).
PAIRS, WEIGHTS = _pairs()

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_NM, T_B_START, T_BU_C, T_BU_F0, T_BU_K, T_BU_MARK = header_rows(
    "b_nm", "b_start", "bu_c", "bu_f0", "bu_k", "bu_mark")
T_K_BODY = header_rows("k_body")
W_BU_BLK, W_BU_E, W_BU_GRAD, W_BU_RATE, W_BU_VEC = work_rows(
    "bu_blk", "bu_e", "bu_grad", "bu_rate", "bu_vec")


@njit(cache=True)
def _vector(W_mk_v, ki, kj, a, c):
    """Component c of vector a of V (a < 4: marker i's, else marker j's)."""
    return W_mk_v[ki, a, c] if a < 4 else W_mk_v[kj, a - 4, c]


@njit(cache=True)
def _jacobian(W_mk_j, ki, kj, ni, a, c, col):
    """∂V_a[c]/∂q at column ``col`` of the pair (body i's ni columns, then body j's)."""
    if a < 4:
        return W_mk_j[ki, a, c, col] if col < ni else 0.0
    return W_mk_j[kj, a - 4, c, col - ni] if col >= ni else 0.0


@njit(cache=True)
def bushing_state(F, IN, H, WF, WI, WH, u, qd, with_spring):
    """e, ė and s of bushing u into the workspace (``bu_e``), with V and V̇ = J q̇
    (``bu_vec[0]``, ``[1]``); ``with_spring`` False: s = C ė only (the dampers, for the
    power of the outputs). Needs the markers' vectors and Jacobians of the residual."""
    T_b_nm, T_b_start = ints1(IN, H, T_B_NM), ints1(IN, H, T_B_START)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_bu_mark = ints2(IN, H, T_BU_MARK)
    T_bu_k, T_bu_c, T_bu_f0 = floats2(F, H, T_BU_K), floats2(F, H, T_BU_C), floats2(F, H, T_BU_F0)
    W_mk_v, W_mk_j = floats3(WF, WH, W_MK_V), floats4(WF, WH, W_MK_J)
    vec = floats3(WF, WH, W_BU_VEC)
    ee = floats2(WF, WH, W_BU_E)
    v, vd = vec[0], vec[1]
    ki, kj = T_bu_mark[u, 0], T_bu_mark[u, 1]
    for side in range(2):
        k = ki if side == 0 else kj
        b = T_k_body[k]
        for a in range(4):
            for c in range(3):
                v[4 * side + a, c] = W_mk_v[k, a, c]
                acc = 0.0
                if b >= 0:
                    st = T_b_start[b]
                    for col in range(7 + T_b_nm[b]):
                        acc += W_mk_j[k, a, c, col] * qd[st + col]
                vd[4 * side + a, c] = acc
    for k in range(6):
        e, e_dot = 0.0, 0.0
        for p in range(2):
            a, b = PAIRS[k, p, 0], PAIRS[k, p, 1]
            w = WEIGHTS[k, p]
            for c in range(3):
                e += w * v[a, c] * v[b, c]
                e_dot += w * (vd[a, c] * v[b, c] + v[a, c] * vd[b, c])
        ee[0, k], ee[1, k] = e, e_dot
        load = T_bu_c[u, k] * e_dot
        if with_spring:
            load += T_bu_k[u, k] * e - T_bu_f0[u, k]
        ee[2, k] = load


@njit(cache=True)
def bushing_loads(F, IN, H, WF, WI, WH, q, qd, r, with_spring):
    """r −= Q = −(∇e)ᵀ s of every bushing (r += Σ_k s_k ∇e_k, the form Φ_qᵀλ of a joint
    with λ = s); ``with_spring`` False: the dampers' part only."""
    T_b_nm, T_b_start = ints1(IN, H, T_B_NM), ints1(IN, H, T_B_START)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_bu_mark = ints2(IN, H, T_BU_MARK)
    W_mk_j = floats4(WF, WH, W_MK_J)
    vec, ee = floats3(WF, WH, W_BU_VEC), floats2(WF, WH, W_BU_E)
    v, wgt = vec[0], vec[2]
    for u in range(T_bu_mark.shape[0]):
        bushing_state(F, IN, H, WF, WI, WH, u, qd, with_spring)
        for a in range(8):  # wgt_a = Σ_k s_k Σ_b (C^k + C^kᵀ)_ab V_b
            for c in range(3):
                wgt[a, c] = 0.0
        for k in range(6):
            s_k = ee[2, k]
            for p in range(2):
                a, b = PAIRS[k, p, 0], PAIRS[k, p, 1]
                w = s_k * WEIGHTS[k, p]
                for c in range(3):
                    wgt[a, c] += w * v[b, c]
                    wgt[b, c] += w * v[a, c]
        add_weighted_jacobian(T_b_nm, T_b_start, T_k_body, W_mk_j, T_bu_mark[u, 0], wgt,
                              ROWS_I, 1.0, r)
        add_weighted_jacobian(T_b_nm, T_b_start, T_k_body, W_mk_j, T_bu_mark[u, 1], wgt,
                              ROWS_J, 1.0, r)


@njit(cache=True)
def bushing_tangents_into(F, IN, H, WF, WI, WH, q, qd, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of every bushing, K = −∂Q/∂q, C = −∂Q/∂q̇ (see the
    module docstring). Needs the markers' vectors and Jacobians of the residual."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_bu_mark = ints2(IN, H, T_BU_MARK)
    T_bu_k, T_bu_c = floats2(F, H, T_BU_K), floats2(F, H, T_BU_C)
    W_mk_j = floats4(WF, WH, W_MK_J)
    vec, ee = floats3(WF, WH, W_BU_VEC), floats2(WF, WH, W_BU_E)
    v, vd = vec[0], vec[1]
    grads, rates, blocks = floats3(WF, WH, W_BU_GRAD), floats3(WF, WH, W_BU_RATE), floats3(WF, WH,
                                                                                W_BU_BLK)
    grad, e_dot_dq = grads[0], grads[1]
    k_blk, c_blk = blocks[0], blocks[1]
    csum, lsum = floats3(WF, WH, W_HCS)[0], floats3(WF, WH, W_HV)[0]
    for u in range(T_bu_mark.shape[0]):
        bushing_state(F, IN, H, WF, WI, WH, u, qd, True)
        ki, kj = T_bu_mark[u, 0], T_bu_mark[u, 1]
        bi, bj = T_k_body[ki], T_k_body[kj]
        ni = 7 + T_b_nm[bi] if bi >= 0 else 0
        nj = 7 + T_b_nm[bj] if bj >= 0 else 0
        n = ni + nj
        # Σ_k s_k ∇²e_k: the Hessian of the bilinear form with C = Σ_k s_k C^k, l = 0
        for a in range(8):
            for b in range(8):
                csum[a, b] = 0.0
            for c in range(3):
                lsum[a, c] = 0.0
        for k in range(6):
            for p in range(2):
                csum[PAIRS[k, p, 0], PAIRS[k, p, 1]] += ee[2, k] * WEIGHTS[k, p]
        bilinear_hessian_into(F, IN, H, WF, WI, WH, ki, kj, q, top, k_scale)
        # the rates ∂(J_a q̇)/∂q of the eight vectors, over the pair's columns
        for a in range(8):
            for c in range(3):
                for col in range(n):
                    rates[a, c, col] = 0.0
        for a in range(4):
            if ni:
                _vector_jacobian_rate_into(F, IN, H, WF, WI, WH, ki, np.int64(a), q, qd,
                                           rates[a], np.int64(0), 1.0)
            if nj:
                _vector_jacobian_rate_into(F, IN, H, WF, WI, WH, kj, np.int64(a), q, qd,
                                           rates[4 + a], ni, 1.0)
        # ∇e and ∂ė/∂q
        for k in range(6):
            for col in range(n):
                g, gd = 0.0, 0.0
                for p in range(2):
                    a, b = PAIRS[k, p, 0], PAIRS[k, p, 1]
                    w = WEIGHTS[k, p]
                    for c in range(3):
                        ja = _jacobian(W_mk_j, ki, kj, ni, a, c, col)
                        jb = _jacobian(W_mk_j, ki, kj, ni, b, c, col)
                        g += w * (v[b, c] * ja + v[a, c] * jb)
                        gd += w * (vd[a, c] * jb + vd[b, c] * ja + v[b, c] * rates[a, c, col]
                                   + v[a, c] * rates[b, c, col])
                grad[k, col], e_dot_dq[k, col] = g, gd
        # (∇e)ᵀ K ∇e + (∇e)ᵀ C ∂ė/∂q and (∇e)ᵀ C ∇e
        for r in range(n):
            for col in range(n):
                kk, cc = 0.0, 0.0
                for k in range(6):
                    kk += grad[k, r] * (T_bu_k[u, k] * grad[k, col]
                                        + T_bu_c[u, k] * e_dot_dq[k, col])
                    cc += grad[k, r] * T_bu_c[u, k] * grad[k, col]
                k_blk[r, col], c_blk[r, col] = kk, cc
        _scatter_n(F, IN, H, WF, WI, WH, bi, bj, ni, n, k_blk, top, k_scale)
        _scatter_n(F, IN, H, WF, WI, WH, bi, bj, ni, n, c_blk, top, c_scale)


@njit(cache=True)
def bushing_potential(F, IN, H, WF, WI, WH, qd, pot):
    """pot plus the bushings' potential Σ (½ eᵀ K e − f0ᵀ e) [J] (markers of the
    residual in the workspace)."""
    T_bu_mark = ints2(IN, H, T_BU_MARK)
    T_bu_k, T_bu_f0 = floats2(F, H, T_BU_K), floats2(F, H, T_BU_F0)
    ee = floats2(WF, WH, W_BU_E)
    for u in range(T_bu_mark.shape[0]):
        bushing_state(F, IN, H, WF, WI, WH, u, qd, True)
        for k in range(6):
            e = ee[0, k]
            pot += 0.5 * T_bu_k[u, k] * e * e - T_bu_f0[u, k] * e
    return pot
