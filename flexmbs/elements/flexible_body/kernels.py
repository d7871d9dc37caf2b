"""Flexible bodies in compiled code: the residual in every coupling mode, its (M, K, C)
and the energies (docs/theory_ffrf.md, docs/compiled.md).

M̄(ξ) from the invariants, Q̄ of the quasi-velocities, gravity through the first-moment
rows and K_ff ξ + D_ff ξ̇, with the geometric stiffening terms of
:mod:`flexmbs.elements.flexible_body.stiffening` where the body has them — the
counterparts of :func:`flexmbs.elements.floating_frame_reference.body_residual` and
:class:`flexmbs.model.flexible.FlexibleBody`.
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    NO,
    W_BODY_GRAVITY,
    W_FGCOL,
    W_FMAT,
    W_FULL,
    W_FVEC,
    W_GBAR,
    W_MASS,
    W_Q6,
    W_QR6,
    W_RBASIS,
    W_RIGID,
    W_ROT,
    W_RPC,
    W_SDM,
    W_SVEC,
    W_W6,
    W_WR6,
    W_Y6,
    W_Z6,
    YES,
    floats1,
    floats2,
    floats3,
    floats4,
    floats5,
    ints1,
)
from ...compiled.quadratic_velocity import row_dot
from ...compiled.rotations import (
    add_ct_x_c,
    conjugate_basis_into,
)
from ..floating_frame import frame_tangents, full_mass, general_qbar, mode_mass, mode_products
from ..registry import header_rows
from .polynomial import add_polynomial_force, add_polynomial_tangent, polynomial_energy
from .stiffening import body_stiffening, mkc_views, stiffening_energies

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_FLEX, T_B_MODE, T_B_NM, T_B_START, T_F_DFF, T_F_INV_M0 = header_rows(
    "b_flex", "b_mode", "b_nm", "b_start", "f_dff", "f_inv_m0")
T_F_KFF, T_F_M0, T_F_MASS, T_F_MFF, T_F_N, T_F_Q = header_rows(
    "f_kff", "f_m0", "f_mass", "f_mff", "f_N", "f_Q")
T_F_S, T_F_SKA, T_F_SKD, T_F_STIFF, T_F_SXC, T_GRAVITY = header_rows(
    "f_S", "f_ska", "f_skd", "f_stiff", "f_sxc", "gravity")
T_F_POLY, T_F_C3, T_F_C4 = header_rows("f_poly", "f_c3", "f_c4")


TWO_WAY, ONE_WAY, RIGID, NO_MRF = (np.int64(code) for code in range(4))  # non-literal


@njit(cache=True)
def flexible_residual(F, IN, H, WF, WI, WH, b, q, qd, qdd, r):
    """r[body b] += Cᵀ z + [0; 0; K_ff ξ + D_ff ξ̇], z = M̄ C q̈ − Q̄ − gravity rows
    (coupling.body_residual in the body's coupling mode)."""
    T_b_flex = ints1(IN, H, T_B_FLEX)
    T_b_mode = ints1(IN, H, T_B_MODE)
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_f_inv_m0 = floats3(F, H, T_F_INV_M0)
    T_f_S = floats3(F, H, T_F_S)
    T_f_dff = floats3(F, H, T_F_DFF)
    T_f_kff = floats3(F, H, T_F_KFF)
    T_f_m0 = floats3(F, H, T_F_M0)
    T_f_mff = floats3(F, H, T_F_MFF)
    T_gravity = floats1(F, H, T_GRAVITY)
    W_full = floats2(WF, WH, W_FULL)
    W_gbar = floats3(WF, WH, W_GBAR)
    W_mass = floats2(WF, WH, W_MASS)
    W_q6 = floats1(WF, WH, W_Q6)
    W_qr6 = floats1(WF, WH, W_QR6)
    W_rigid = floats2(WF, WH, W_RIGID)
    W_rot = floats3(WF, WH, W_ROT)
    W_body_gravity = floats1(WF, WH, W_BODY_GRAVITY)
    W_w6 = floats1(WF, WH, W_W6)
    W_wr6 = floats1(WF, WH, W_WR6)
    W_y6 = floats1(WF, WH, W_Y6)
    W_z6 = floats1(WF, WH, W_Z6)
    st = T_b_start[b]
    nm = T_b_nm[b]
    f = T_b_flex[b]
    mode = T_b_mode[b]
    n6 = 6 + nm
    a = W_rot[b]
    gb = W_gbar[b]
    full, mass = W_full, W_mass
    y, w, z, qb = W_y6, W_w6, W_z6, W_q6
    xi = q[st + 7 : st + 7 + nm]
    xid = qd[st + 7 : st + 7 + nm]
    mode_products(F, IN, H, WF, WI, WH, f, nm, xi)  # shared by M̄(ξ) and Q̄
    full_mass(F, IN, H, WF, WI, WH, f, nm, q, st, full, True)
    if mode == TWO_WAY:
        mass = full  # (the mode's mass is the two-way one: no copy)
    else:
        mode_mass(F, IN, H, WF, WI, WH, f, nm, mode, full, mass)
    for c in range(3):
        y[c] = a[0, c] * qdd[st] + a[1, c] * qdd[st + 1] + a[2, c] * qdd[st + 2]
        w[c] = a[0, c] * qd[st] + a[1, c] * qd[st + 1] + a[2, c] * qd[st + 2]
        y[3 + c] = (
            gb[c, 0] * qdd[st + 3]
            + gb[c, 1] * qdd[st + 4]
            + gb[c, 2] * qdd[st + 5]
            + gb[c, 3] * qdd[st + 6]
        )
        w[3 + c] = (
            gb[c, 0] * qd[st + 3]
            + gb[c, 1] * qd[st + 4]
            + gb[c, 2] * qd[st + 5]
            + gb[c, 3] * qd[st + 6]
        )
    for j in range(nm):
        y[6 + j] = qdd[st + 7 + j]
        w[6 + j] = xid[j]
    # Q̄ of the mode
    if mode in (TWO_WAY, NO_MRF):
        general_qbar(F, IN, H, WF, WI, WH, f, nm, full, w, xi, xid, YES, qb, True)
    else:
        rigid = W_rigid
        for i in range(n6):
            for j in range(n6):
                rigid[i, j] = T_f_m0[f, i, j] if (i < 6) == (j < 6) else 0.0
        for i in range(nm):
            for j in range(nm):
                rigid[6 + i, 6 + j] = T_f_mff[f, i, j]
        wr = W_wr6
        for i in range(n6):
            wr[i] = w[i] if i < 6 else 0.0
        qr = W_qr6
        general_qbar(F, IN, H, WF, WI, WH, f, nm, rigid, wr, xi, xid, NO, qr)
        for i in range(6):
            qb[i] = qr[i]
        for i in range(6, n6):
            qb[i] = 0.0
        if mode == ONE_WAY:
            general_qbar(F, IN, H, WF, WI, WH, f, nm, full, w, xi, xid, YES, qr, True)
            for i in range(6, n6):
                qb[i] = qr[i]
    for i in range(n6):
        acc = 0.0
        for j in range(n6):
            acc += mass[i, j] * y[j]
        z[i] = acc - qb[i]
    g = T_gravity
    if g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0:
        gbv = W_body_gravity
        for c in range(3):
            gbv[c] = a[0, c] * g[0] + a[1, c] * g[1] + a[2, c] * g[2]
        rig = full if (mode in (TWO_WAY, NO_MRF)) else T_f_inv_m0[f]
        for i in range(3):
            z[i] -= rig[i, 0] * gbv[0] + rig[i, 1] * gbv[1] + rig[i, 2] * gbv[2]
            z[3 + i] -= rig[0, 3 + i] * gbv[0] + rig[1, 3 + i] * gbv[1] + rig[2, 3 + i] * gbv[2]
        if mode != RIGID:
            for j in range(nm):
                z[6 + j] -= (
                    T_f_S[f, 0, j] * gbv[0] + T_f_S[f, 1, j] * gbv[1] + T_f_S[f, 2, j] * gbv[2]
                )
    for c in range(3):
        r[st + c] += a[c, 0] * z[0] + a[c, 1] * z[1] + a[c, 2] * z[2]
    for m in range(4):
        r[st + 3 + m] += gb[0, m] * z[3] + gb[1, m] * z[4] + gb[2, m] * z[5]
    for i in range(nm):
        acc = z[6 + i]
        for j in range(nm):
            acc += T_f_kff[f, i, j] * xi[j] + T_f_dff[f, i, j] * xid[j]
        r[st + 7 + i] += acc
    row = ints1(IN, H, T_F_POLY)[f]
    if row >= 0:  # a nonlinear body: f(η) beyond K_ff η
        add_polynomial_force(floats4(F, H, T_F_C3)[row], floats5(F, H, T_F_C4)[row], nm, xi,
                             r[st + 7:st + 7 + nm])
    if ints1(IN, H, T_F_STIFF)[f]:
        n = 7 + nm
        body_stiffening(F, IN, H, WF, WI, WH, b, q, qd, qdd, r[st:st + n], NO)


@njit(cache=True)
def body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd):
    """(M, K, C) of flexible body b at its coordinates (global q order within the body;
    (7+n)x(7+n) views of the workspace, valid until the next call; a rigid body's:
    :func:`rigid_body_matrices`). Nothing allocated."""
    T_b_flex = ints1(IN, H, T_B_FLEX)
    T_b_mode = ints1(IN, H, T_B_MODE)
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_f_inv_m0 = floats3(F, H, T_F_INV_M0)
    T_f_S = floats3(F, H, T_F_S)
    T_f_dff = floats3(F, H, T_F_DFF)
    T_f_kff = floats3(F, H, T_F_KFF)
    W_gbar = floats3(WF, WH, W_GBAR)
    W_rot = floats3(WF, WH, W_ROT)
    mats, gcol, vec = floats3(WF, WH, W_FMAT), floats2(WF, WH, W_FGCOL), floats2(WF, WH, W_FVEC)
    basis_c, pc = floats2(WF, WH, W_RBASIS), floats1(WF, WH, W_RPC)
    st = T_b_start[b]
    nm = T_b_nm[b]
    n = 7 + nm
    n6 = 6 + nm
    a, gb = W_rot[b], W_gbar[b]
    f = T_b_flex[b]
    mode = T_b_mode[b]
    full, mbar_mode, tmass, tmp = mats[0], mats[1], mats[2], mats[5]
    m, k, c = mkc_views(WF, WH, n)
    full_mass(F, IN, H, WF, WI, WH, f, nm, q, st, full)
    mode_mass(F, IN, H, WF, WI, WH, f, nm, mode, full, mbar_mode)
    # the mass of the tangents (coupling.frame_inertia: rigid blocks from the invariant M0)
    m0 = T_f_inv_m0[f]
    for i in range(n6):
        for j in range(n6):
            v = full[i, j]
            if (i < 6) != (j < 6):  # the coupling blocks
                if mode == NO_MRF or (mode != TWO_WAY and (i < 6 or mode == RIGID)):
                    v = 0.0
            elif i < 6 and mode != TWO_WAY and mode != NO_MRF:
                v = m0[i, j]
            tmass[i, j] = v
    for i in range(n6):  # the gravity columns
        for j in range(3):
            if i < 6:
                gcol[i, j] = full[i, j] if mode in (TWO_WAY, NO_MRF) else m0[i, j]
            else:
                gcol[i, j] = T_f_S[f, j, i - 6] if mode != RIGID else 0.0
    conjugate_basis_into(q[st + 3:st + 7], pc, basis_c)
    frame_tangents(F, IN, H, WF, WI, WH, b, q, qd, qdd, k, c)
    for i in range(nm):
        for j in range(nm):
            k[7 + i, 7 + j] += T_f_kff[f, i, j]
            c[7 + i, 7 + j] += T_f_dff[f, i, j]
    row = ints1(IN, H, T_F_POLY)[f]
    if row >= 0:  # a nonlinear body: ∂f/∂η
        add_polynomial_tangent(floats4(F, H, T_F_C3)[row], floats5(F, H, T_F_C4)[row], nm,
                               q[st + 7:st + 7 + nm], k, 7)
    for i in range(n):  # M = Cᵀ M̄ C
        for j in range(n):
            m[i, j] = 0.0
    add_ct_x_c(a, gb, nm, mbar_mode, tmp, m, 1.0)
    if ints1(IN, H, T_F_STIFF)[f]:
        r_tmp = vec[7, :n]
        for i in range(n):
            r_tmp[i] = 0.0
        body_stiffening(F, IN, H, WF, WI, WH, b, q, qd, qdd, r_tmp, YES)
    return m, k, c


@njit(cache=True)
def flexible_energies(F, IN, H, WF, WI, WH, b, q, qd, w0, w1, w2, kin, pot):
    """(kin, pot) plus the kinetic, gravity and elastic potential energy [J] of flexible
    body b at (q, q̇), ω̄ = (w0, w1, w2) [rad/s] in body axes; needs :func:`body_frames`.
    Scratch: (``fmat``, ``fvec``) and the stiffening's (``sdm``, ``svec``) in the
    workspace: nothing allocated."""
    b_start, b_nm = ints1(IN, H, T_B_START), ints1(IN, H, T_B_NM)
    b_flex, b_mode = ints1(IN, H, T_B_FLEX), ints1(IN, H, T_B_MODE)
    f_inv_m0, f_n = floats3(F, H, T_F_INV_M0), floats4(F, H, T_F_N)
    f_kff, f_mass = floats3(F, H, T_F_KFF), floats1(F, H, T_F_MASS)
    f_stiff, f_sxc = ints1(IN, H, T_F_STIFF), floats5(F, H, T_F_SXC)
    f_ska, f_skd = floats4(F, H, T_F_SKA), floats4(F, H, T_F_SKD)
    g = floats1(F, H, T_GRAVITY)
    mats, wq = floats3(WF, WH, W_FMAT), floats2(WF, WH, W_FVEC)[0]
    st = b_start[b]
    a, gb = floats3(WF, WH, W_ROT)[b], floats3(WF, WH, W_GBAR)[b]
    nm, f = b_nm[b], b_flex[b]
    n6 = 6 + nm
    full = mats[0]
    full_mass(F, IN, H, WF, WI, WH, f, nm, q, st, full)
    mbar = full
    if b_mode[b] == NO_MRF:
        mbar = mats[1]
        mode_mass(F, IN, H, WF, WI, WH, f, nm, NO_MRF, full, mbar)
    for c in range(3):
        wq[c] = a[0, c] * qd[st] + a[1, c] * qd[st + 1] + a[2, c] * qd[st + 2]
    wq[3], wq[4], wq[5] = w0, w1, w2
    for j in range(nm):
        wq[6 + j] = qd[st + 7 + j]
    for i in range(n6):
        kin += 0.5 * wq[i] * row_dot(mbar, i, wq, n6)
    # S̄(ξ) from M_Rθ(ξ) = M0_Rθ + Σ ξ_j N_j[:3] = −s̃: s = (M_Rθ[2,1]−M_Rθ[1,2], …)/−2
    m0 = f_inv_m0[f]
    s_t = (-0.5 * (_m_rt(m0, f_n, f, nm, q, st, 2, 1) - _m_rt(m0, f_n, f, nm, q, st, 1, 2)),
           -0.5 * (_m_rt(m0, f_n, f, nm, q, st, 0, 2) - _m_rt(m0, f_n, f, nm, q, st, 2, 0)),
           -0.5 * (_m_rt(m0, f_n, f, nm, q, st, 1, 0) - _m_rt(m0, f_n, f, nm, q, st, 0, 1)))
    first = 0.0
    for c in range(3):
        first += g[c] * (f_mass[f] * q[st + c] + a[c, 0] * s_t[0] + a[c, 1] * s_t[1]
                         + a[c, 2] * s_t[2])
    elastic = 0.0
    for i in range(nm):
        for j in range(nm):
            elastic += q[st + 7 + i] * f_kff[f, i, j] * q[st + 7 + j]
    pot += -first + 0.5 * elastic
    row = ints1(IN, H, T_F_POLY)[f]
    if row >= 0:  # a nonlinear body's cubic and quartic strain energy
        pot += polynomial_energy(floats4(F, H, T_F_C3)[row], floats5(F, H, T_F_C4)[row], nm,
                                 q[st + 7:st + 7 + nm])
    if f_stiff[f]:
        n = 7 + nm
        k_s, p_s = stiffening_energies(f_ska[f], f_skd[f], f_sxc[f], nm, a, gb,
                                       q[st:st + n], qd[st:st + n], g,
                                       floats2(WF, WH, W_SDM), floats2(WF, WH, W_SVEC)[0])
        kin += k_s
        pot += p_s
    return kin, pot


@njit(cache=True)
def _m_rt(m0, f_n, f, nm, q, st, r, c):
    """M_Rθ(ξ)[r, c] = M0[r, 3 + c] + Σ_j ξ_j N_j[r, c] of flexible body f."""
    acc = m0[r, 3 + c]
    for j in range(nm):
        acc += q[st + 7 + j] * f_n[f, j, r, c]
    return acc
