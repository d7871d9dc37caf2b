"""The floating-frame inertia terms shared by rigid and flexible bodies, in compiled code
(docs/theory_ffrf.md §1–3, docs/compiled.md).

M̄(ξ) from the invariants (two-way, and per coupling mode), Q̄ of the quasi-velocities
as a bilinear form and its Jacobian, ∂(M̄ y)/∂ξ, and the C-form tangent kernel
``frame_tangents`` of M q̈ − Q_v − Q_g, whose n = 0 case is the rigid body's — the
counterpart of :func:`flexmbs.elements.floating_frame_reference.frame_tangents`.
"""

from __future__ import annotations

import numpy as np

from ..compiled._jit import njit
from ..compiled.packing import (
    W_BASIS,
    W_FGCOL,
    W_FMAT,
    W_FMODES,
    W_FP4,
    W_FVEC,
    W_GBAR,
    W_H6,
    W_NLIN,
    W_QBAR_VEC,
    W_QS,
    W_R34,
    W_RBASIS,
    W_ROT,
    floats1,
    floats2,
    floats3,
    floats4,
    floats5,
    ints1,
)
from ..compiled.quadratic_velocity import frame_terms, frame_terms_jacobian, row_dot
from ..compiled.rotations import (
    add_ct_times,
    add_ct_x_c,
    d_rot_t_into,
    d_rotated_into,
    g_bar_into,
    g_bar_t_jac_rows,
)
from .registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_FLEX, T_B_MODE, T_B_NM, T_B_START, T_F_INV_M0, T_F_M0 = header_rows(
    "b_flex", "b_mode", "b_nm", "b_start", "f_inv_m0", "f_m0")
T_F_MFF, T_F_N, T_F_Q, T_GRAVITY = header_rows(
    "f_mff", "f_N", "f_Q", "gravity")


TWO_WAY, ONE_WAY, RIGID, NO_MRF = (np.int64(code) for code in range(4))  # non-literal


@njit(cache=True)
def mode_products(F, IN, H, WF, WI, WH, f, nm, xi):
    """W_QS ← qs_j = Σ_i ξ_i (Q_ij + Q_ji) (n, 3, 3): what Q̄ and M̄(ξ) share
    (Σ_ij ξ_i ξ_j Q_ij = ½ Σ_j ξ_j qs_j), evaluated once per residual."""
    T_f_Q = floats5(F, H, T_F_Q)
    qs = floats3(WF, WH, W_QS)
    for j in range(nm):  # i outside, (a, c) inside: contiguous 3 × 3 blocks
        for a in range(3):
            for c in range(3):
                qs[j, a, c] = 0.0
        for i in range(nm):
            x = xi[i]
            for a in range(3):
                for c in range(3):
                    qs[j, a, c] += x * (T_f_Q[f, i, j, a, c] + T_f_Q[f, j, i, a, c])


@njit(cache=True)
def full_mass(F, IN, H, WF, WI, WH, f, nm, q, st, full, have_qs=False):
    """full ← the two-way M̄(ξ) with its ξξ block M_ff (coupling._full_mass); with
    ``have_qs`` its ξξ term Σ_ij ξ_i ξ_j Q_ij from :func:`mode_products`' W_QS."""
    T_f_N = floats4(F, H, T_F_N)
    T_f_Q = floats5(F, H, T_F_Q)
    T_f_m0 = floats3(F, H, T_F_M0)
    T_f_mff = floats3(F, H, T_F_MFF)
    W_nlin = floats2(WF, WH, W_NLIN)
    n6 = 6 + nm
    for i in range(n6):
        for j in range(n6):
            full[i, j] = T_f_m0[f, i, j]
    nlin = W_nlin
    for i in range(n6):
        for c in range(3):
            nlin[i, c] = 0.0
    for j in range(nm):  # mode by mode: N_j is contiguous
        x = q[st + 7 + j]
        for i in range(n6):
            for c in range(3):
                nlin[i, c] += x * T_f_N[f, j, i, c]
    for i in range(n6):
        for c in range(3):
            full[i, 3 + c] += nlin[i, c]
            full[3 + c, i] += nlin[i, c]
    if have_qs:
        qs = floats3(WF, WH, W_QS)
        for a in range(3):
            for c in range(3):
                acc = 0.0
                for j in range(nm):
                    acc += q[st + 7 + j] * qs[j, a, c]
                full[3 + a, 3 + c] += 0.5 * acc
    else:
        for a in range(3):
            for c in range(3):
                acc = 0.0
                for i in range(nm):
                    xi_i = q[st + 7 + i]
                    for j in range(nm):
                        acc += xi_i * q[st + 7 + j] * T_f_Q[f, i, j, a, c]
                full[3 + a, 3 + c] += acc
    for i in range(nm):
        for j in range(nm):
            full[6 + i, 6 + j] = T_f_mff[f, i, j]


@njit(cache=True)
def mode_mass(F, IN, H, WF, WI, WH, f, nm, mode, full, out):
    """out ← M̄ of coupling ``mode`` from the two-way ``full`` (coupling._mode_mass)."""
    T_f_m0 = floats3(F, H, T_F_M0)
    n6 = 6 + nm
    for i in range(n6):
        for j in range(n6):
            out[i, j] = full[i, j]
    if mode == TWO_WAY:
        return
    if mode == NO_MRF:
        for i in range(6):
            for j in range(6, n6):
                out[i, j] = 0.0
                out[j, i] = 0.0
        return
    for i in range(6):
        for j in range(6):
            out[i, j] = T_f_m0[f, i, j]
        for j in range(6, n6):
            out[i, j] = 0.0
            if mode == RIGID:
                out[j, i] = 0.0


@njit(cache=True)
def general_qbar(F, IN, H, WF, WI, WH, f, nm, mbar, w, xi, xid, use_modes, out,
                 have_qs=False):
    """out ← Q̄ (6+n) of the body-frame mass ``mbar`` at quasi-velocities w, ξ, ξ̇
    (coupling._general_qbar; ``use_modes`` False: the n = 0 terms only, ξ = ξ̇ = 0;
    ``have_qs``: :func:`mode_products` has filled W_QS for this ξ). W_NLIN holds
    N_jᵀ w (n, 3) meanwhile."""
    T_f_N = floats4(F, H, T_F_N)
    W_h6 = floats1(WF, WH, W_H6)
    W_qs = floats3(WF, WH, W_QS)
    W_qbar_vec = floats2(WF, WH, W_QBAR_VEC)  # h_R, h_θ, ω
    n6 = 6 + nm
    h, t1, t2 = W_h6, W_qbar_vec[0], W_qbar_vec[1]
    for i in range(n6):
        acc = 0.0
        for j in range(n6):
            acc += mbar[i, j] * w[j]
        h[i] = acc
    v0, v1, v2 = w[0], w[1], w[2]
    o0, o1, o2 = w[3], w[4], w[5]
    ov0 = o1 * v2 - o2 * v1
    ov1 = o2 * v0 - o0 * v2
    ov2 = o0 * v1 - o1 * v0
    for i in range(n6):
        out[i] = mbar[i, 0] * ov0 + mbar[i, 1] * ov1 + mbar[i, 2] * ov2
    # out[:3] -= ω × h_R ; out[3:6] -= ω × h_θ + v × h_R
    t1[0], t1[1], t1[2] = h[0], h[1], h[2]
    t2[0], t2[1], t2[2] = h[3], h[4], h[5]
    out[0] -= o1 * t1[2] - o2 * t1[1]
    out[1] -= o2 * t1[0] - o0 * t1[2]
    out[2] -= o0 * t1[1] - o1 * t1[0]
    out[3] -= (o1 * t2[2] - o2 * t2[1]) + (v1 * t1[2] - v2 * t1[1])
    out[4] -= (o2 * t2[0] - o0 * t2[2]) + (v2 * t1[0] - v0 * t1[2])
    out[5] -= (o0 * t2[1] - o1 * t2[0]) + (v0 * t1[1] - v1 * t1[0])
    if nm == 0:
        return
    om = W_qbar_vec[2]
    om[0], om[1], om[2] = o0, o1, o2
    qs = W_qs
    ntw = floats2(WF, WH, W_NLIN)  # N_jᵀ w, once for both uses below
    for j in range(nm):
        t0 = t1_ = t2_ = 0.0
        for i in range(n6):
            wi = w[i]
            t0 += T_f_N[f, j, i, 0] * wi
            t1_ += T_f_N[f, j, i, 1] * wi
            t2_ += T_f_N[f, j, i, 2] * wi
        ntw[j, 0], ntw[j, 1], ntw[j, 2] = t0, t1_, t2_
    if use_modes:
        if not have_qs:
            mode_products(F, IN, H, WF, WI, WH, f, nm, xi)
        # n_xid = Σ_j ξ̇_j N_j ; out -= n_xid @ ω ; out[3:6] -= n_xidᵀ w + (Σ ξ̇_j qs_j) ω
        for j in range(nm):  # mode by mode: N_j is contiguous
            xd = xid[j]
            for i in range(n6):
                out[i] -= xd * (
                    T_f_N[f, j, i, 0] * o0 + T_f_N[f, j, i, 1] * o1 + T_f_N[f, j, i, 2] * o2
                )
        for c in range(3):
            acc = 0.0
            for j in range(nm):
                xd = xid[j]
                acc += xd * (ntw[j, c] + qs[j, c, 0] * o0 + qs[j, c, 1] * o1
                             + qs[j, c, 2] * o2)
            out[3 + c] -= acc
    # out[6:] += (N_jᵀ w) · ω + ½ ωᵀ qs_j ω
    for j in range(nm):
        acc = ntw[j, 0] * o0 + ntw[j, 1] * o1 + ntw[j, 2] * o2
        if use_modes:
            quad = 0.0
            for a in range(3):
                for c in range(3):
                    quad += qs[j, a, c] * om[a] * om[c]
            acc += 0.5 * quad
        out[6 + j] += acc


@njit(cache=True)
def qbar_bilinear(mbar, big_n, qs, nm, w1, w2, out):
    """out[:6+nm] ← B(w1, w2), with B(w, w) = Q̄(w) (coupling.qbar_bilinear for one
    column); nothing allocated."""
    n6 = 6 + nm
    om2 = w2[3:6]
    frame_terms(mbar, n6, w1, w2, out)
    for j in range(nm):
        xd1 = w1[6 + j]
        for i in range(n6):
            out[i] -= xd1 * (big_n[j, i, 0] * om2[0] + big_n[j, i, 1] * om2[1]
                             + big_n[j, i, 2] * om2[2])
        for c in range(3):
            ntw2 = 0.0
            ntw1 = 0.0
            for i in range(n6):
                ntw2 += big_n[j, i, c] * w2[i]
                ntw1 += big_n[j, i, c] * w1[i]
            qso = qs[j, c, 0] * om2[0] + qs[j, c, 1] * om2[1] + qs[j, c, 2] * om2[2]
            out[3 + c] -= xd1 * (ntw2 + qso)
            out[6 + j] += ntw1 * om2[c] + 0.5 * w1[3 + c] * qso


@njit(cache=True)
def qbar_jacobian(mbar, big_n, qs, nm, w, lo, out):
    """out[i, k] ← ∂Q̄(w)_i/∂w_k = B(e_k, w)_i + B(w, e_k)_i for lo ≤ i < 6+nm and every
    k < 6+nm, with B the bilinear form of :func:`qbar_bilinear` (Q̄(w) = B(w, w)).

    Term by term of B (w = (v̄, ω̄, ξ̇), h = rows 0–5 of M̄w, P_jc = Σ_r N_jrc w_r,
    S_jc = Σ_d qs_jcd ω̄_d): O(nm (6+nm)) work instead of the 2 (6+nm) bilinear forms
    of the column-by-column product, and nothing allocated."""
    n6 = 6 + nm
    om0, om1, om2 = w[3], w[4], w[5]
    frame_terms_jacobian(mbar, n6, w, lo, out)
    for j in range(nm):
        xd = w[6 + j]
        for i in range(lo, n6):
            # − Σ_j ξ̇_j N_j ω̄: ∂/∂ξ̇_j and ∂/∂ω̄_m
            out[i, 6 + j] -= big_n[j, i, 0] * om0 + big_n[j, i, 1] * om1 + big_n[j, i, 2] * om2
            for m in range(3):
                out[i, 3 + m] -= xd * big_n[j, i, m]
        for c in range(3):
            p_jc = 0.0
            for r in range(n6):
                p_jc += big_n[j, r, c] * w[r]
            s_jc = qs[j, c, 0] * om0 + qs[j, c, 1] * om1 + qs[j, c, 2] * om2
            if 3 + c >= lo:  # − Σ_j ξ̇_j (P_jc + S_jc) in row 3 + c
                out[3 + c, 6 + j] -= p_jc + s_jc
                for k in range(n6):
                    out[3 + c, k] -= xd * big_n[j, k, c]
                for m in range(3):
                    out[3 + c, 3 + m] -= xd * qs[j, c, m]
            # row 6 + j: Σ_c (P_jc ω̄_c + ½ ω̄_c S_jc)
            omc = om0 if c == 0 else (om1 if c == 1 else om2)
            for k in range(n6):
                out[6 + j, k] += big_n[j, k, c] * omc
            out[6 + j, 3 + c] += p_jc + 0.5 * s_jc
            for m in range(3):
                out[6 + j, 3 + m] += 0.5 * omc * qs[j, c, m]


@njit(cache=True)
def mass_dxi_into(big_n, qs, nm, y, mode, out):
    """out[:6+nm, :nm] ← D, D[:, j] = (∂M̄/∂ξ_j) y for the M̄ of ``mode``
    (coupling._mass_dxi)."""
    n6 = 6 + nm
    for i in range(n6):
        for j in range(nm):
            out[i, j] = 0.0
    if nm == 0 or mode == RIGID:
        return
    for j in range(nm):
        for i in range(n6):
            col = big_n[j, i, 0] * y[3] + big_n[j, i, 1] * y[4] + big_n[j, i, 2] * y[5]
            if mode == ONE_WAY:
                if i >= 6:
                    out[i, j] = col
            elif mode == NO_MRF:
                if i < 6:
                    out[i, j] = col
            else:
                out[i, j] = col
    if mode == ONE_WAY:
        return
    top = 6 if mode == NO_MRF else n6
    for j in range(nm):
        for b in range(3):
            acc = 0.0
            for a in range(top):
                acc += big_n[j, a, b] * y[a]
            out[3 + b, j] += acc
        for a in range(3):
            out[3 + a, j] += qs[j, a, 0] * y[3] + qs[j, a, 1] * y[4] + qs[j, a, 2] * y[5]


@njit(cache=True)
def frame_tangents(F, IN, H, WF, WI, WH, b, q, qd, qdd, k, c):
    """(k, c) ← (K, C) of flexible body b's r_b = M q̈ − Q_v − Q_g at (q, q̇, q̈), the
    C-form of the reference's frame_tangents, written into the given (7+nm)x(7+nm)
    buffers (the workspace's: nothing allocated).

    Reads what :func:`flexmbs.elements.flexible_body.kernels.body_matrices` leaves in the
    workspace: the tangents' M̄ (``fmat[2]``), the full M̄ (``fmat[0]``) and the gravity
    columns (``fgcol``) in their first 6+nm rows and columns, the conjugate basis
    (``rbasis``); the body's frames (A, Ḡ, the basis of ∂(A s)/∂p) and its invariants
    M̄(0), N, Q from the tables. Scratch: ``qs`` (M, 3, 3), ``fvec`` rows 0–6,
    ``fmat`` 3–4, ``fmodes`` 0–3, ``fp4`` and ``r34``."""
    st, nm = ints1(IN, H, T_B_START)[b], ints1(IN, H, T_B_NM)[b]
    f, mode = ints1(IN, H, T_B_FLEX)[b], ints1(IN, H, T_B_MODE)[b]
    mats = floats3(WF, WH, W_FMAT)
    mbar_mass, mbar_full = mats[2], mats[0]
    mbar_rigid, gcol = floats3(F, H, T_F_INV_M0)[f], floats2(WF, WH, W_FGCOL)
    big_n, big_q = floats4(F, H, T_F_N)[f], floats5(F, H, T_F_Q)[f]
    qs = floats3(WF, WH, W_QS)
    a, gb = floats3(WF, WH, W_ROT)[b], floats3(WF, WH, W_GBAR)[b]
    basis, basis_c = floats3(WF, WH, W_BASIS)[b], floats2(WF, WH, W_RBASIS)
    n_b = 7 + nm
    xi, rd, pd = q[st + 7:st + n_b], qd[st:st + 3], qd[st + 3:st + 7]
    xid, acc = qd[st + 7:st + n_b], qdd[st:st + n_b]
    g = floats1(F, H, T_GRAVITY)
    vec, modes = floats2(WF, WH, W_FVEC), floats3(WF, WH, W_FMODES)
    p4, r34 = floats3(WF, WH, W_FP4), floats3(WF, WH, W_R34)
    n6 = 6 + nm
    n = 7 + nm
    y, w, qbar, b1, ov, z, gbv = vec[0], vec[1], vec[2], vec[3], vec[4], vec[5], vec[6]
    jw, jc = mats[3], mats[4]
    jxi, dw, jx, dz_dxi = modes[0], modes[1], modes[2], modes[3]
    dy_dp, dw_dp, dz_dp = p4[0], p4[1], p4[2]
    for i in range(3):  # y = C q̈, w = C q̇ (C = diag(Aᵀ, Ḡ, I))
        y[i] = a[0, i] * acc[0] + a[1, i] * acc[1] + a[2, i] * acc[2]
        w[i] = a[0, i] * rd[0] + a[1, i] * rd[1] + a[2, i] * rd[2]
        y[3 + i] = (gb[i, 0] * acc[3] + gb[i, 1] * acc[4] + gb[i, 2] * acc[5]
                    + gb[i, 3] * acc[6])
        w[3 + i] = gb[i, 0] * pd[0] + gb[i, 1] * pd[1] + gb[i, 2] * pd[2] + gb[i, 3] * pd[3]
    for j in range(nm):
        y[6 + j] = acc[7 + j]
        w[6 + j] = xid[j]
    mode_products(F, IN, H, WF, WI, WH, f, nm, xi)  # qs_j = Σ_i ξ_i (Q_ij + Q_ji)
    rigid_rows = mode in (ONE_WAY, RIGID)
    # runtime values, not literals: numba compiles a function once per literal argument
    no_modes = nm * 0
    two_way = TWO_WAY + no_modes
    for i in range(n6):
        qbar[i] = 0.0
        for j in range(n6):
            jw[i, j] = 0.0
        for j in range(nm):
            jxi[i, j] = 0.0
    if rigid_rows:  # rows 0–5 from the rigid M̄ without modes (reads w[:6] only)
        qbar_bilinear(mbar_rigid, big_n, qs, no_modes, w, w, b1)
        for i in range(6):
            qbar[i] = b1[i]
        qbar_jacobian(mbar_rigid, big_n, qs, no_modes, w, no_modes, jw)
    if mode != RIGID:
        lo = 6 if rigid_rows else 0
        qbar_bilinear(mbar_full, big_n, qs, nm, w, w, b1)
        for i in range(lo, n6):
            qbar[i] = b1[i]
        qbar_jacobian(mbar_full, big_n, qs, nm, w, lo, jw)
        if nm:
            v0, v1, v2, om0, om1, om2 = w[0], w[1], w[2], w[3], w[4], w[5]
            mass_dxi_into(big_n, qs, nm, w, two_way, dw)
            ov[0] = om1 * v2 - om2 * v1
            ov[1] = om2 * v0 - om0 * v2
            ov[2] = om0 * v1 - om1 * v0
            for i in range(3, n6):
                ov[i] = 0.0
            mass_dxi_into(big_n, qs, nm, ov, two_way, jx)
            for j in range(nm):  # − ω̄ × d_r; − ω̄ × d_θ − v̄ × d_r (d = dw[:, j])
                for e in range(3):
                    e1, e2 = (e + 1) % 3, (e + 2) % 3
                    jx[e, j] -= w[3 + e1] * dw[e2, j] - w[3 + e2] * dw[e1, j]
                    jx[3 + e, j] -= (w[3 + e1] * dw[3 + e2, j] - w[3 + e2] * dw[3 + e1, j]
                                     + w[e1] * dw[e2, j] - w[e2] * dw[e1, j])
            for j in range(nm):  # with (Q_ij ω̄)_e = Σ_f Q_ij,ef ω̄_f
                for e in range(3):
                    acc_t = 0.0
                    for i in range(nm):
                        q_ji = (big_q[j, i, e, 0] * om0 + big_q[j, i, e, 1] * om1
                                + big_q[j, i, e, 2] * om2)
                        q_ij = (big_q[i, j, e, 0] * om0 + big_q[i, j, e, 1] * om1
                                + big_q[i, j, e, 2] * om2)
                        acc_t += xid[i] * (q_ji + q_ij)
                    jx[3 + e, j] -= acc_t
                for i in range(nm):
                    for e in range(3):
                        q_ij = (big_q[i, j, e, 0] * om0 + big_q[i, j, e, 1] * om1
                                + big_q[i, j, e, 2] * om2)
                        jx[6 + j, i] += q_ij * w[3 + e]
            for i in range(lo, n6):
                for j in range(nm):
                    jxi[i, j] = jx[i, j]
    for i in range(n6):  # z = M̄ y − Q̄
        z[i] = row_dot(mbar_mass, i, y, n6) - qbar[i]
    mass_dxi_into(big_n, qs, nm, y, mode, dz_dxi)
    for i in range(n6):
        for j in range(nm):
            dz_dxi[i, j] -= jxi[i, j]
    # ∂y/∂p, ∂w/∂p: [∂(Aᵀ R̈)/∂p; −Ḡ(p̈); 0] and [∂(Aᵀ Ṙ)/∂p; −Ḡ(ṗ); 0]
    for i in range(n6):
        for j in range(4):
            dy_dp[i, j], dw_dp[i, j] = 0.0, 0.0
    d_rot_t_into(basis_c, acc[:3], r34[0])
    d_rot_t_into(basis_c, rd, r34[1])
    for i in range(3):
        for j in range(4):
            dy_dp[i, j], dw_dp[i, j] = r34[0, i, j], r34[1, i, j]
    g_bar_into(acc[3:7], r34[0])
    g_bar_into(pd, r34[1])
    for i in range(3):
        for j in range(4):
            dy_dp[3 + i, j], dw_dp[3 + i, j] = -r34[0, i, j], -r34[1, i, j]
    for i in range(n6):  # ∂z/∂p = M̄ ∂y/∂p − ∂Q̄/∂w ∂w/∂p
        for j in range(4):
            acc_p = 0.0
            for l1 in range(6):
                acc_p += mbar_mass[i, l1] * dy_dp[l1, j] - jw[i, l1] * dw_dp[l1, j]
            dz_dp[i, j] = acc_p
    if g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0:  # − gcol Aᵀg and its ∂/∂p, ∂/∂ξ
        for i in range(3):
            gbv[i] = a[0, i] * g[0] + a[1, i] * g[1] + a[2, i] * g[2]
        d_rot_t_into(basis_c, g, r34[0])
        for i in range(n6):
            z[i] -= gcol[i, 0] * gbv[0] + gcol[i, 1] * gbv[1] + gcol[i, 2] * gbv[2]
            for j in range(4):
                dz_dp[i, j] -= (gcol[i, 0] * r34[0, 0, j] + gcol[i, 1] * r34[0, 1, j]
                                + gcol[i, 2] * r34[0, 2, j])
        if nm and mode in (TWO_WAY, NO_MRF):
            for j in range(nm):
                for b in range(3):
                    dz_dxi[3 + b, j] -= (big_n[j, 0, b] * gbv[0] + big_n[j, 1, b] * gbv[1]
                                         + big_n[j, 2, b] * gbv[2])
    for i in range(n):
        for j in range(n):
            k[i, j] = 0.0
            c[i, j] = 0.0
    # K = ∂(Cᵀ z)/∂q = Cᵀ ∂z/∂q + the p-dependence of Cᵀ = diag(A, Ḡᵀ, I)
    add_ct_times(a, gb, nm, dz_dp, np.int64(4), k, np.int64(3), 1.0)
    add_ct_times(a, gb, nm, dz_dxi, nm, k, np.int64(7), 1.0)
    d_rotated_into(basis, z[:3], r34[0])
    gtj = g_bar_t_jac_rows(z[3:6])
    for j in range(4):
        for i in range(3):
            k[i, 3 + j] += r34[0, i, j]
        for i in range(4):
            k[3 + i, 3 + j] += gtj[i][j]
    add_ct_x_c(a, gb, nm, jw, jc, c, -1.0)  # C = −Cᵀ (∂Q̄/∂w) C
