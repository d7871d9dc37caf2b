"""Compiled analytic Newton tangents and the scaled iteration matrix (docs/compiled.md).

The same exact derivatives as :mod:`flexmbs.assembly.tangents`, term by term:

* bodies — M(q) = Cᵀ M̄ C and (K, C) of M q̈ − Q_v − Q_g (+ K_ff ξ + D_ff ξ̇), the C-form
  kernel :func:`flexmbs.frame.coupling.frame_tangents` (a rigid body is its n = 0 case,
  with the M_RR = m I correction of :meth:`flexmbs.model.bodies.RigidBody.residual_tangents`);
* constraints — the Hessian of Σ_k λ_k Φ_k of each joint or drive, a bilinear form in the
  markers' vectors: Σ_ab (C + Cᵀ)_ab J_aᵀ J_b + the marker Hessians (A quadratic in p,
  p–ξ mixed terms), and 2λ I on the normalization rows;
* joint actuators with a time profile — K = −∂Q/∂q through z_i(q) and the torque or force
  Jacobians (their value does not depend on the state, so C = 0);
* spring–damper–actuators — K and C through the line of action u = d/L, the length and
  its rate (with the rate of the markers' point Jacobians, ∂(J q̇)/∂q) and the force
  Jacobians (:meth:`flexmbs.model.forces.SpringDamperActuator.tangents`);
* constant point loads — the force or torque Jacobian's own q-dependence and, in marker
  axes, that of the axes; constant distributed loads through A(p), Ḡ(p), AᵀF and the
  deformed arm (:meth:`flexmbs.model.forces.DistributedLoad.tangents`);
* rotational spring–dampers — K and C of τ z_i through θ (the marker axes' Jacobians),
  θ̇ (the angular Jacobians and their rate ∂(Ω q̇)/∂q), z_i(q) and the torque Jacobians
  (:meth:`flexmbs.model.forces.RotationalSpringDamper.tangents`).

Nothing here allocates: every intermediate is a workspace buffer, sized once for the
model (test_compiled counts numba's allocations over a matrix refresh).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .packing import (
    FORCE,
    NO,
    ROWS_I,
    ROWS_J,
    T_A_KIND,
    T_A_MARK,
    T_B_FLEX,
    T_B_KIND,
    T_B_MODE,
    T_B_NM,
    T_B_NORM,
    T_B_START,
    T_D_BODY,
    T_D_FIRST,
    T_D_FRAME,
    T_D_SHAPES,
    T_D_TOTAL,
    T_D_VEC,
    T_E_LIN,
    T_E_MARK,
    T_E_ROW,
    T_F_DFF,
    T_F_INV_M0,
    T_F_KFF,
    T_F_N,
    T_F_Q,
    T_F_S,
    T_F_SKA,
    T_F_SKD,
    T_F_STIFF,
    T_F_SXC,
    T_GRAVITY,
    T_J_COL,
    T_J_ROW,
    T_K_BASE,
    T_K_BODY,
    T_K_PHI,
    T_K_PSI,
    T_K_SHAPES,
    T_L_FRAME,
    T_L_KIND,
    T_L_MARK,
    T_L_VEC,
    T_P_COL,
    T_P_ROW,
    T_R_IO,
    T_R_MASS,
    T_R_OFFSET,
    T_R_S,
    T_S_MARK,
    T_S_PAR,
    T_T_MARK,
    T_T_PAR,
    TORQUE,
    W_BASIS,
    W_COEF,
    W_FGCOL,
    W_FMAT,
    W_FMKC,
    W_FMODES,
    W_FP4,
    W_FVEC,
    W_GBAR,
    W_GGLOB,
    W_HBASIS,
    W_HCS,
    W_HHESS,
    W_HJAC,
    W_HSW,
    W_HUNIT,
    W_HV,
    W_JAC,
    W_MK_J,
    W_MK_V,
    W_QS,
    W_R34,
    W_RBASIS,
    W_RJC,
    W_RMAT,
    W_RMKC,
    W_ROT,
    W_RP4,
    W_RPC,
    W_RVEC,
    W_S34,
    W_SD2,
    W_SDDM,
    W_SDM,
    W_SDMM,
    W_SMAT,
    W_SMODES,
    W_SP4,
    W_SVEC,
    W_V3E,
    W_V3F,
    W_X3,
    W_X3N,
    W_X34,
    W_XBASIS,
    W_XBLK,
    W_XP,
    YES,
    _f1,
    _f2,
    _f3,
    _f4,
    _f5,
    _i1,
    _i2,
    _view,
)
from .quadratic_velocity import frame_terms, frame_terms_jacobian, row_dot
from .residual import (
    NO_MRF,
    ONE_WAY,
    RIGID,
    TWO_WAY,
    full_mass,
    mode_mass,
    spring_state,
    torsion_state,
)
from .rotations import (
    add_ct_times,
    add_ct_x_c,
    conjugate_basis_into,
    d_rot_t_into,
    d_rotated_basis_into,
    d_rotated_into,
    g_bar_into,
    g_bar_t_jac_rows,
    g_global_into,
)
from .stiffening import body_stiffening


# --------------------------------------------------------------------------- Q̄ and ∂M̄/∂ξ
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


# --------------------------------------------------------------------------- bodies
@njit(cache=True)
def frame_tangents(mbar_mass, mbar_full, mbar_rigid, gcol, big_n, big_q, qs, nm, mode, a,
                   gb, basis, basis_c, xi, rd, pd, xid, acc, g, vec, mats, modes, p4, r34,
                   k, c):
    """(k, c) ← (K, C) of r_b = M q̈ − Q_v − Q_g, the C-form of coupling.frame_tangents,
    written into the given buffers (the workspace's: nothing allocated).

    ``mbar_*`` and ``gcol`` are read in their first 6+nm rows and columns, ``big_n``,
    ``big_q`` (the invariants N, Q) in their first nm modes; ``a``, ``gb``, ``basis`` are
    A, Ḡ and the basis of ∂(A s)/∂p at p, ``basis_c`` that of the conjugate p*. Scratch:
    ``qs`` (M, 3, 3), ``vec`` rows 0–6, ``mats`` 3–4, ``modes`` 0–3, ``p4`` and ``r34``;
    ``k`` and ``c`` are (7+nm)x(7+nm)."""
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
    for j in range(nm):  # qs_j = Σ_i ξ_i (Q_ij + Q_ji)
        for r in range(3):
            for cc in range(3):
                qs[j, r, cc] = 0.0
        for i in range(nm):
            x = xi[i]
            for r in range(3):
                for cc in range(3):
                    qs[j, r, cc] += x * (big_q[i, j, r, cc] + big_q[j, i, r, cc])
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


@njit(cache=True)
def rigid_body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd):
    """(M, K, C) of rigid body b (7x7 views of the workspace, valid until the next call):
    :func:`frame_tangents` without modes and the M_RR = m I correction of
    :func:`body_matrices`, the same terms written without temporaries (a model of many
    rigid bodies rebuilds the iteration matrix without allocating)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_r_io = _f3(F, H, T_R_IO)
    T_r_mass = _f1(F, H, T_R_MASS)
    T_r_offset = _i1(IN, H, T_R_OFFSET)
    T_r_s = _f2(F, H, T_R_S)
    g = _f1(F, H, T_GRAVITY)
    W_basis = _f3(WF, WH, W_BASIS)
    W_gbar = _f3(WF, WH, W_GBAR)
    W_rot = _f3(WF, WH, W_ROT)
    vec, mats = _f2(WF, WH, W_RVEC), _f3(WF, WH, W_RMAT)
    p4, r34 = _f3(WF, WH, W_RP4), _f3(WF, WH, W_R34)
    basis_c, pc = _f2(WF, WH, W_RBASIS), _f1(WF, WH, W_RPC)
    jc, mkc = _f2(WF, WH, W_RJC), _f3(WF, WH, W_RMKC)
    st, no_modes = T_b_start[b], T_b_nm[b]
    a, gb, basis = W_rot[b], W_gbar[b], W_basis[b]
    mass, s, io = T_r_mass[b], T_r_s[b], T_r_io[b]
    mbar, jw = mats[0], mats[1]
    y, w, qbar, z, gbv, x = vec[0], vec[1], vec[2], vec[3], vec[4], vec[5]
    dy_dp, dw_dp, dz_dp = p4[0], p4[1], p4[2]
    m, k, c = mkc[0], mkc[1], mkc[2]
    sk = ((0.0, -s[2], s[1]), (s[2], 0.0, -s[0]), (-s[1], s[0], 0.0))  # s̃
    for i in range(3):  # M̄ = [m I, −s̃; s̃, I_o]
        for j in range(3):
            mbar[i, j] = mass if i == j else 0.0
            mbar[i, 3 + j] = -sk[i][j]
            mbar[3 + i, j] = sk[i][j]
            mbar[3 + i, 3 + j] = io[i, j]
    conjugate_basis_into(q[st + 3:st + 7], pc, basis_c)
    for i in range(3):  # y = C q̈, w = C q̇ (C = diag(Aᵀ, Ḡ))
        y[i] = a[0, i] * qdd[st] + a[1, i] * qdd[st + 1] + a[2, i] * qdd[st + 2]
        w[i] = a[0, i] * qd[st] + a[1, i] * qd[st + 1] + a[2, i] * qd[st + 2]
        y[3 + i] = (gb[i, 0] * qdd[st + 3] + gb[i, 1] * qdd[st + 4] + gb[i, 2] * qdd[st + 5]
                    + gb[i, 3] * qdd[st + 6])
        w[3 + i] = (gb[i, 0] * qd[st + 3] + gb[i, 1] * qd[st + 4] + gb[i, 2] * qd[st + 5]
                    + gb[i, 3] * qd[st + 6])
    # Q̄(w) and ∂Q̄/∂w from row 0 (= no_modes; without modes the modal tables, here any
    # 3-d buffer, are not read)
    qbar_bilinear(mbar, p4, p4, no_modes, w, w, qbar)
    qbar_jacobian(mbar, p4, p4, no_modes, w, no_modes, jw)
    for i in range(6):
        z[i] = row_dot(mbar, i, y, 6) - qbar[i]
    # ∂y/∂p, ∂w/∂p: [∂(Aᵀ R̈)/∂p; −Ḡ(p̈)] and [∂(Aᵀ Ṙ)/∂p; −Ḡ(ṗ)]
    d_rot_t_into(basis_c, qdd[st:st + 3], r34[0])
    d_rot_t_into(basis_c, qd[st:st + 3], r34[1])
    for i in range(3):
        for j in range(4):
            dy_dp[i, j], dw_dp[i, j] = r34[0, i, j], r34[1, i, j]
    g_bar_into(qdd[st + 3:st + 7], r34[0])
    g_bar_into(qd[st + 3:st + 7], r34[1])
    for i in range(3):
        for j in range(4):
            dy_dp[3 + i, j], dw_dp[3 + i, j] = -r34[0, i, j], -r34[1, i, j]
    for i in range(6):  # ∂z/∂p = M̄ ∂y/∂p − ∂Q̄/∂w ∂w/∂p
        for j in range(4):
            acc = 0.0
            for l1 in range(6):
                acc += mbar[i, l1] * dy_dp[l1, j] - jw[i, l1] * dw_dp[l1, j]
            dz_dp[i, j] = acc
    if g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0:  # − M̄[:, :3] Aᵀ g and its ∂/∂p
        for i in range(3):
            gbv[i] = a[0, i] * g[0] + a[1, i] * g[1] + a[2, i] * g[2]
        d_rot_t_into(basis_c, g, r34[0])
        for i in range(6):
            z[i] -= mbar[i, 0] * gbv[0] + mbar[i, 1] * gbv[1] + mbar[i, 2] * gbv[2]
            for j in range(4):
                dz_dp[i, j] -= (mbar[i, 0] * r34[0, 0, j] + mbar[i, 1] * r34[0, 1, j]
                                + mbar[i, 2] * r34[0, 2, j])
    for i in range(7):
        for j in range(7):
            m[i, j], k[i, j] = 0.0, 0.0
    # K[:3, 3:7] = ∂(A z_v)/∂p + A ∂z_v/∂p − m (∂(A Aᵀx)/∂p through both A), x = R̈ − g
    for i in range(3):
        x[i] = qdd[st + i] - g[i]
    for i in range(3):
        gbv[i] = a[0, i] * x[0] + a[1, i] * x[1] + a[2, i] * x[2]  # Aᵀ x
    d_rotated_into(basis, z[:3], r34[0])
    d_rotated_into(basis, gbv[:3], r34[1])
    for i in range(3):
        for j in range(4):
            k[i, 3 + j] = (r34[0, i, j] + a[i, 0] * dz_dp[0, j] + a[i, 1] * dz_dp[1, j]
                           + a[i, 2] * dz_dp[2, j] - mass * r34[1, i, j])
    d_rot_t_into(basis_c, x[:3], r34[1])
    for i in range(3):
        for j in range(4):
            k[i, 3 + j] -= mass * (a[i, 0] * r34[1, 0, j] + a[i, 1] * r34[1, 1, j]
                                   + a[i, 2] * r34[1, 2, j])
    # K[3:7, 3:7] = ∂(Ḡᵀ z_ω)/∂p + Ḡᵀ ∂z_ω/∂p
    gtj = g_bar_t_jac_rows(z[3:6])
    for i in range(4):
        for j in range(4):
            k[3 + i, 3 + j] = (gtj[i][j] + gb[0, i] * dz_dp[3, j] + gb[1, i] * dz_dp[4, j]
                               + gb[2, i] * dz_dp[5, j])
    for i in range(6):  # C = −Cᵀ (∂Q̄/∂w) C(p)
        for j in range(3):
            jc[i, j] = jw[i, 0] * a[j, 0] + jw[i, 1] * a[j, 1] + jw[i, 2] * a[j, 2]
        for j in range(4):
            jc[i, 3 + j] = jw[i, 3] * gb[0, j] + jw[i, 4] * gb[1, j] + jw[i, 5] * gb[2, j]
    for j in range(7):
        for i in range(3):
            c[i, j] = -(a[i, 0] * jc[0, j] + a[i, 1] * jc[1, j] + a[i, 2] * jc[2, j])
        for i in range(4):
            c[3 + i, j] = -(gb[0, i] * jc[3, j] + gb[1, i] * jc[4, j] + gb[2, i] * jc[5, j])
    for i in range(3):  # M = [m I, −A s̃ Ḡ; ·ᵀ, Ḡᵀ I_o Ḡ]
        m[i, i] = mass
    for i in range(4):
        for j in range(4):
            acc = 0.0
            for l1 in range(3):
                for l2 in range(3):
                    acc += gb[l1, i] * io[l1, l2] * gb[l2, j]
            m[3 + i, 3 + j] = acc
    if T_r_offset[b]:
        for i in range(3):
            for j in range(4):
                acc = 0.0
                for l1 in range(3):
                    for l2 in range(3):
                        acc += a[i, l1] * sk[l1][l2] * gb[l2, j]
                m[i, 3 + j] = -acc
                m[3 + j, i] = -acc
    return m, k, c


@njit(cache=True)
def body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd):
    """(M, K, C) of flexible body b at its coordinates (global q order within the body;
    (7+n)x(7+n) views of the workspace, valid until the next call; a rigid body's:
    :func:`rigid_body_matrices`). Nothing allocated."""
    T_b_flex = _i1(IN, H, T_B_FLEX)
    T_b_mode = _i1(IN, H, T_B_MODE)
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_f_inv_m0 = _f3(F, H, T_F_INV_M0)
    T_f_N = _f4(F, H, T_F_N)
    T_f_Q = _f5(F, H, T_F_Q)
    T_f_S = _f3(F, H, T_F_S)
    T_f_dff = _f3(F, H, T_F_DFF)
    T_f_kff = _f3(F, H, T_F_KFF)
    T_gravity = _f1(F, H, T_GRAVITY)
    W_basis = _f3(WF, WH, W_BASIS)
    W_gbar = _f3(WF, WH, W_GBAR)
    W_rot = _f3(WF, WH, W_ROT)
    mats, modes, p4 = _f3(WF, WH, W_FMAT), _f3(WF, WH, W_FMODES), _f3(WF, WH, W_FP4)
    gcol, vec, mkc = _f2(WF, WH, W_FGCOL), _f2(WF, WH, W_FVEC), _f2(WF, WH, W_FMKC)
    basis_c, pc, r34 = _f2(WF, WH, W_RBASIS), _f1(WF, WH, W_RPC), _f3(WF, WH, W_R34)
    st = T_b_start[b]
    nm = T_b_nm[b]
    n = 7 + nm
    n6 = 6 + nm
    a, gb, basis = W_rot[b], W_gbar[b], W_basis[b]
    g = T_gravity
    f = T_b_flex[b]
    mode = T_b_mode[b]
    full, mbar_mode, tmass, tmp = mats[0], mats[1], mats[2], mats[5]
    # M, K, C as n x n views of the rows of mkc (reshape would carry an error path)
    row0, width = WH[W_FMKC, 1], mkc.shape[1]
    m = _view(WF, row0, (n, n))
    k = _view(WF, row0 + width, (n, n))
    c = _view(WF, row0 + 2 * width, (n, n))
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
    frame_tangents(tmass, full, m0, gcol, T_f_N[f], T_f_Q[f], _f3(WF, WH, W_QS), nm, mode,
                   a, gb, basis, basis_c, q[st + 7:st + n], qd[st:st + 3],
                   qd[st + 3:st + 7], qd[st + 7:st + n], qdd[st:st + n], g, vec, mats,
                   modes, p4, r34, k, c)
    for i in range(nm):
        for j in range(nm):
            k[7 + i, 7 + j] += T_f_kff[f, i, j]
            c[7 + i, 7 + j] += T_f_dff[f, i, j]
    for i in range(n):  # M = Cᵀ M̄ C
        for j in range(n):
            m[i, j] = 0.0
    add_ct_x_c(a, gb, nm, mbar_mode, tmp, m, 1.0)
    if _i1(IN, H, T_F_STIFF)[f]:
        r_tmp = vec[7, :n]
        for i in range(n):
            r_tmp[i] = 0.0
        body_stiffening(_f4(F, H, T_F_SKA)[f], _f4(F, H, T_F_SKD)[f], _f5(F, H, T_F_SXC)[f],
                        mode, nm, a, gb, basis, basis_c, q[st:st + n], qd[st:st + n],
                        qdd[st:st + n], g, r_tmp, YES, m, k, c,
                        _f2(WF, WH, W_SDM), _f3(WF, WH, W_SDDM), _f2(WF, WH, W_SDMM),
                        _f2(WF, WH, W_SVEC), _f3(WF, WH, W_SMAT), _f3(WF, WH, W_SD2),
                        _f2(WF, WH, W_SMODES), _f3(WF, WH, W_SP4), _f2(WF, WH, W_S34))
    return m, k, c


# --------------------------------------------------------------------------- constraints
@njit(cache=True)
def _marker_hessian(F, IN, H, WF, WI, WH, k, q, wgt, first, out, lo):
    """out[lo:, lo:] += ∂²/∂q² Σ_a wgt[first+a]ᵀ v_a(q) of marker k (A quadratic in p;
    p–ξ mixed terms from ∂A/∂p linear in s; R and ξ–ξ terms vanish)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_base = _f3(F, H, T_K_BASE)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_shapes = _f4(F, H, T_K_SHAPES)
    b = T_k_body[k]
    if b < 0:
        return
    st = T_b_start[b]
    nm = T_b_nm[b]
    hsw = _f3(WF, WH, W_HSW)  # scratch: s (4x3), then Σ_a s_a wᵀ in its first rows
    s, sw = hsw[0], hsw[1]
    unit, basis = _f1(WF, WH, W_HUNIT), _f2(WF, WH, W_HBASIS)
    for a in range(4):
        for c in range(3):
            acc = T_k_base[k, a, c]
            for j in range(nm):
                acc += T_k_shapes[k, a, c, j] * q[st + 7 + j]
            s[a, c] = acc
    for i in range(3):
        for c in range(3):
            sw[i, c] = (s[0, i] * wgt[first, c] + s[1, i] * wgt[first + 1, c]
                        + s[2, i] * wgt[first + 2, c] + s[3, i] * wgt[first + 3, c])
    for l in range(4):  # noqa: E741
        unit[:] = 0.0
        unit[l] = 1.0
        d_rotated_basis_into(unit, basis)
        for m in range(4):
            acc = 0.0
            for i in range(3):
                for c in range(3):
                    acc += sw[i, c] * basis[i, 4 * c + m]
            out[lo + 3 + m, lo + 3 + l] += acc
    if nm == 0:
        return
    d_rotated_basis_into(q[st + 3:st + 7], basis)
    for j in range(nm):
        for m in range(4):
            acc = 0.0
            for a in range(4):
                for i in range(3):
                    for c in range(3):
                        acc += T_k_shapes[k, a, i, j] * wgt[first + a, c] * basis[i, 4 * c + m]
            out[lo + 3 + m, lo + 7 + j] += acc
            out[lo + 7 + j, lo + 3 + m] += acc


@njit(cache=True)
def constraint_hessian_into(F, IN, H, WF, WI, WH, q, lam, top, scale):
    """top += scale Σ_k λ_k ∂²Φ_k/∂q² (joints and drives per marker pair, normalization
    rows 2λ I; coordinate drives are linear). Needs the markers of the residual."""
    T_b_kind = _i1(IN, H, T_B_KIND)
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_norm = _i1(IN, H, T_B_NORM)
    T_b_start = _i1(IN, H, T_B_START)
    T_e_lin = _f3(F, H, T_E_LIN)
    T_e_mark = _i2(IN, H, T_E_MARK)
    T_e_row = _i1(IN, H, T_E_ROW)
    T_k_body = _i1(IN, H, T_K_BODY)
    W_coef = _f3(WF, WH, W_COEF)
    W_mk_j = _f4(WF, WH, W_MK_J)
    W_mk_v = _f3(WF, WH, W_MK_V)
    hcs, hv = _f3(WF, WH, W_HCS), _f3(WF, WH, W_HV)  # scratch: nothing allocated
    csum, sym, lsum, vecs, wgt = hcs[0], hcs[1], hv[0], hv[1], hv[2]
    hess, jac = _f2(WF, WH, W_HHESS), _f3(WF, WH, W_HJAC)
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
        for a_ in range(8):
            for b_ in range(8):
                sym[a_, b_] = csum[a_, b_] + csum[b_, a_]
        for a_ in range(4):
            for c in range(3):
                vecs[a_, c] = W_mk_v[ki, a_, c]
                vecs[4 + a_, c] = W_mk_v[kj, a_, c]
        for a_ in range(8):  # wgt = sym vecs + lsum
            for c in range(3):
                acc = lsum[a_, c]
                for b_ in range(8):
                    acc += sym[a_, b_] * vecs[b_, c]
                wgt[a_, c] = acc
        bi, bj = T_k_body[ki], T_k_body[kj]
        ni = 7 + T_b_nm[bi] if bi >= 0 else 0
        nj = 7 + T_b_nm[bj] if bj >= 0 else 0
        nn = ni + nj
        for r in range(nn):
            for c in range(nn):
                hess[r, c] = 0.0
        for a_ in range(4):
            for c in range(3):
                for r in range(ni):
                    jac[a_, c, r] = W_mk_j[ki, a_, c, r]
                for r in range(ni, nn):
                    jac[a_, c, r] = 0.0
                for r in range(ni):
                    jac[4 + a_, c, r] = 0.0
                for r in range(nj):
                    jac[4 + a_, c, ni + r] = W_mk_j[kj, a_, c, r]
        for a_ in range(8):  # hess += sym[a, b] J_aᵀ J_b
            for b_ in range(8):
                sab = sym[a_, b_]
                if sab == 0.0:
                    continue
                for r in range(nn):
                    for c in range(3):
                        x = sab * jac[a_, c, r]
                        if x != 0.0:
                            for s_ in range(nn):
                                hess[r, s_] += x * jac[b_, c, s_]
        _marker_hessian(F, IN, H, WF, WI, WH, ki, q, wgt, ROWS_I, hess, np.int64(0))
        _marker_hessian(F, IN, H, WF, WI, WH, kj, q, wgt, ROWS_J, hess, ni)
        _scatter_n(F, IN, H, WF, WI, WH, bi, bj, ni, nn, hess, top, scale)
        e = last + 1


@njit(cache=True)
def _scatter_n(F, IN, H, WF, WI, WH, bi, bj, ni, n, block, top, scale):
    """top[idx, idx] += scale block[:n, :n], idx = body i's ni coordinates then body
    j's."""
    T_b_start = _i1(IN, H, T_B_START)
    st_i = T_b_start[bi] if ni > 0 else 0
    st_j = T_b_start[bj] - ni if n > ni else 0
    for r in range(n):
        gr = st_i + r if r < ni else st_j + r
        for c in range(n):
            gc = st_i + c if c < ni else st_j + c
            top[gr, gc] += scale * block[r, c]


# --------------------------------------------------------------------------- load Jacobians
# Scratch of the load tangents (the workspace's, nothing allocated): x3 rows 0 lever arm,
# 1 Aᵀ·load, 2 arm rate or Ψ ξ̇ (the helpers below), 3 the load vector (the callers); x34
# rows 0 ∂(Aᵀ·load)/∂p, 1–2 products with the rotation bases; xbasis rows 0 the conjugate
# basis, 1 that of ṗ; xp p*.
@njit(cache=True)
def _lever_arm_into(T_k_base, T_k_shapes, k, nm, q, st, out):
    """out ← the body-frame point of marker k at ξ (deformed where the coupling mode
    shows it)."""
    for c in range(3):
        acc = T_k_base[k, 0, c]
        for j in range(nm):
            acc += T_k_shapes[k, 0, c, j] * q[st + 7 + j]
        out[c] = acc


@njit(cache=True)
def _modal_rate_into(shapes, nm, qd, st, out):
    """out ← Σ_j shapes[:, j] ξ̇_j (3,), the rate of a marker's modal vector (U₀ ξ̇ or
    Ψ ξ̇; ``shapes`` (3, n_m), ξ̇ at qd[st+7:])."""
    for c in range(3):
        acc = 0.0
        for j in range(nm):
            acc += shapes[c, j] * qd[st + 7 + j]
        out[c] = acc


@njit(cache=True)
def _load_jacobian_into(F, IN, H, WF, WI, WH, k, kind, q, out, col0):
    """out[:, col0:col0+7+n_b] ← the torque (kind 0: angular_jac) or force (kind 1:
    force_jac) Jacobian (3, 7+n_b) of marker k."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_base = _f3(F, H, T_K_BASE)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_phi = _f3(F, H, T_K_PHI)
    T_k_psi = _f3(F, H, T_K_PSI)
    T_k_shapes = _f4(F, H, T_K_SHAPES)
    W_gbar = _f3(WF, WH, W_GBAR)
    W_gglob = _f3(WF, WH, W_GGLOB)
    W_rot = _f3(WF, WH, W_ROT)
    b = T_k_body[k]
    nm, st = T_b_nm[b], T_b_start[b]
    a = W_rot[b]
    for i in range(3):
        for j in range(7 + nm):
            out[i, col0 + j] = 0.0
    if kind == 0:
        gg = W_gglob[b]
        for i in range(3):
            for m in range(4):
                out[i, col0 + 3 + m] = gg[i, m]
            for j in range(nm):  # A Ψ_j
                out[i, col0 + 7 + j] = (a[i, 0] * T_k_psi[k, 0, j] + a[i, 1] * T_k_psi[k, 1, j]
                                        + a[i, 2] * T_k_psi[k, 2, j])
        return
    arm = _f2(WF, WH, W_X3)[0]
    _lever_arm_into(T_k_base, T_k_shapes, k, nm, q, st, arm)
    gb = W_gbar[b]
    for i in range(3):
        out[i, col0 + i] = 1.0
    for m in range(4):  # − A s̃ Ḡ, column m: − A (s × Ḡ[:, m])
        c0 = arm[1] * gb[2, m] - arm[2] * gb[1, m]
        c1 = arm[2] * gb[0, m] - arm[0] * gb[2, m]
        c2 = arm[0] * gb[1, m] - arm[1] * gb[0, m]
        for i in range(3):
            out[i, col0 + 3 + m] = -(a[i, 0] * c0 + a[i, 1] * c1 + a[i, 2] * c2)
    for j in range(nm):  # A Φ_j
        for i in range(3):
            out[i, col0 + 7 + j] = (a[i, 0] * T_k_phi[k, 0, j] + a[i, 1] * T_k_phi[k, 1, j]
                                    + a[i, 2] * T_k_phi[k, 2, j])


@njit(cache=True)
def _add_load_tangent(F, IN, H, WF, WI, WH, k, kind, q, vec, out, r0, scale):
    """out[r0:, r0:] += scale ∂(Jacᵀ vec)/∂q ((7+n_b) square) for a fixed global vec, Jac
    of ``kind`` of marker k (bodies.force_jac_tangent_kernel /
    angular_jac_tangent_kernel)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_base = _f3(F, H, T_K_BASE)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_phi = _f3(F, H, T_K_PHI)
    T_k_psi = _f3(F, H, T_K_PSI)
    T_k_shapes = _f4(F, H, T_K_SHAPES)
    W_gbar = _f3(WF, WH, W_GBAR)
    W_rot = _f3(WF, WH, W_ROT)
    x3, x34 = _f2(WF, WH, W_X3), _f3(WF, WH, W_X34)
    basis_c, pc = _f3(WF, WH, W_XBASIS)[0], _f1(WF, WH, W_XP)
    b = T_k_body[k]
    nm, st = T_b_nm[b], T_b_start[b]
    df = x34[0]
    conjugate_basis_into(q[st + 3:st + 7], pc, basis_c)
    d_rot_t_into(basis_c, vec, df)  # ∂(Aᵀ vec)/∂p
    if kind == 0:
        x0, x1, x2 = 2.0 * vec[0], 2.0 * vec[1], 2.0 * vec[2]  # ∂(Gᵀ vec)/∂p
        gtj = ((0.0, -x0, -x1, -x2), (x0, 0.0, -x2, x1), (x1, x2, 0.0, -x0),
               (x2, -x1, x0, 0.0))
        for i in range(4):
            for m in range(4):
                out[r0 + 3 + i, r0 + 3 + m] += scale * gtj[i][m]
        for j in range(nm):  # Ψ_jᵀ ∂(Aᵀ vec)/∂p
            for m in range(4):
                out[r0 + 7 + j, r0 + 3 + m] += scale * (
                    T_k_psi[k, 0, j] * df[0, m] + T_k_psi[k, 1, j] * df[1, m]
                    + T_k_psi[k, 2, j] * df[2, m])
        return
    a = W_rot[b]
    arm, f_bar = x3[0], x3[1]
    _lever_arm_into(T_k_base, T_k_shapes, k, nm, q, st, arm)
    for i in range(3):
        f_bar[i] = a[0, i] * vec[0] + a[1, i] * vec[1] + a[2, i] * vec[2]
    _add_moment_tangent(W_gbar[b], arm, f_bar, df, nm, T_k_shapes[k, 0], T_k_phi[k], YES,
                        YES, out, r0, scale)


@njit(cache=True)
def _add_moment_tangent(gb, arm, f_bar, df, nm, arm_shapes, row_shapes, arm_moves,
                        rows_see, out, r0, scale):
    """out[r0:, r0:] += scale × the p- and ξ-dependence of the moment and modal rows of a
    force with body-frame components f̄ (∂f̄/∂p = df, 3x4) at the body point ``arm``:
    rows 3–6, ∂(Ḡᵀ(s × f̄))/∂p = ∂(Ḡᵀx)/∂p at x = s × f̄ plus Ḡᵀ(s × ∂f̄/∂p), and, where the
    point moves with ξ (``arm_moves``: s = s₀ + Σ_j arm_shapes_j ξ_j), Ḡᵀ(U_j × f̄) in
    column 7 + j; rows 7 + j (``rows_see``: the modal load row_shapes_jᵀ f̄),
    row_shapes_jᵀ ∂f̄/∂p. Rows 0–2 (the force itself) are the caller's."""
    gtj = g_bar_t_jac_rows((arm[1] * f_bar[2] - arm[2] * f_bar[1],
                            arm[2] * f_bar[0] - arm[0] * f_bar[2],
                            arm[0] * f_bar[1] - arm[1] * f_bar[0]))
    for m in range(4):  # ∂(Ḡᵀ (s × f̄))/∂p + Ḡᵀ (s × ∂f̄/∂p_m)
        c0 = arm[1] * df[2, m] - arm[2] * df[1, m]
        c1 = arm[2] * df[0, m] - arm[0] * df[2, m]
        c2 = arm[0] * df[1, m] - arm[1] * df[0, m]
        for i in range(4):
            out[r0 + 3 + i, r0 + 3 + m] += scale * (gtj[i][m] + gb[0, i] * c0
                                                    + gb[1, i] * c1 + gb[2, i] * c2)
    for j in range(nm):
        if rows_see:
            for m in range(4):
                out[r0 + 7 + j, r0 + 3 + m] += scale * (
                    row_shapes[0, j] * df[0, m] + row_shapes[1, j] * df[1, m]
                    + row_shapes[2, j] * df[2, m])
        if arm_moves:  # Ḡᵀ(−f̄ × U_j) = Ḡᵀ(U_j × f̄)
            s0, s1, s2 = arm_shapes[0, j], arm_shapes[1, j], arm_shapes[2, j]
            d0 = s1 * f_bar[2] - s2 * f_bar[1]
            d1 = s2 * f_bar[0] - s0 * f_bar[2]
            d2 = s0 * f_bar[1] - s1 * f_bar[0]
            for i in range(4):
                out[r0 + 3 + i, r0 + 7 + j] += scale * (gb[0, i] * d0 + gb[1, i] * d1
                                                        + gb[2, i] * d2)


@njit(cache=True)
def _point_jacobian_rate_into(F, IN, H, WF, WI, WH, k, q, qd, out, col0, sign):
    """out[:, col0:col0+7+n_b] ← sign ∂(J q̇)/∂q of marker k's point, J = ∂(R + A s₀(ξ))/∂q:
    p columns ∂(A s₀)/∂p at ṗ plus ∂(A U₀ ξ̇)/∂p, ξ columns Ȧ U₀
    (bodies.marker_jac_rate_kernel)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_base = _f3(F, H, T_K_BASE)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_shapes = _f4(F, H, T_K_SHAPES)
    W_basis = _f3(WF, WH, W_BASIS)
    x3, x34, basis_pd = _f2(WF, WH, W_X3), _f3(WF, WH, W_X34), _f3(WF, WH, W_XBASIS)[1]
    b = T_k_body[k]
    nm, st = T_b_nm[b], T_b_start[b]
    basis = W_basis[b]
    arm, arm_rate = x3[0], x3[2]
    _lever_arm_into(T_k_base, T_k_shapes, k, nm, q, st, arm)
    _modal_rate_into(T_k_shapes[k, 0], nm, qd, st, arm_rate)  # U₀ ξ̇
    d_rotated_basis_into(qd[st + 3:st + 7], basis_pd)
    d_rotated_into(basis_pd, arm, x34[1])
    d_rotated_into(basis, arm_rate, x34[2])
    for i in range(3):
        for j in range(3):
            out[i, col0 + j] = 0.0
        for m in range(4):
            out[i, col0 + 3 + m] = sign * (x34[1, i, m] + x34[2, i, m])
    for j in range(nm):  # ∂(A U_j)/∂p ṗ
        s0, s1, s2 = T_k_shapes[k, 0, 0, j], T_k_shapes[k, 0, 1, j], T_k_shapes[k, 0, 2, j]
        for i in range(3):
            acc = 0.0
            for m in range(4):
                acc += (s0 * basis[0, 4 * i + m] + s1 * basis[1, 4 * i + m]
                        + s2 * basis[2, 4 * i + m]) * qd[st + 3 + m]
            out[i, col0 + 7 + j] = sign * acc


@njit(cache=True)
def _angular_rate_jacobian_into(F, IN, H, WF, WI, WH, k, q, qd, out, col0, sign):
    """out[:, col0:col0+7+n_b] ← sign ∂(Ω q̇)/∂q of marker k, ω = G(p) ṗ + A Ψ ξ̇: −G(ṗ)
    (as G(p) ṗ = −G(ṗ) p) plus ∂(A Ψ ξ̇)/∂p in the p columns, zero elsewhere
    (bodies.angular_rate_jac_kernel)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_psi = _f3(F, H, T_K_PSI)
    W_basis = _f3(WF, WH, W_BASIS)
    x3, x34 = _f2(WF, WH, W_X3), _f3(WF, WH, W_X34)
    b = T_k_body[k]
    nm, st = T_b_nm[b], T_b_start[b]
    psi_xid = x3[2]
    _modal_rate_into(T_k_psi[k], nm, qd, st, psi_xid)  # Ψ ξ̇
    g_global_into(qd[st + 3:st + 7], x34[1])
    d_rotated_into(W_basis[b], psi_xid, x34[2])
    for i in range(3):
        for j in range(7 + nm):
            out[i, col0 + j] = 0.0
        for m in range(4):
            out[i, col0 + 3 + m] = sign * (x34[2, i, m] - x34[1, i, m])


@njit(cache=True)
def _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, kind, ni, nj, jac, vec, g_dq, g_dqd,
                        q, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of a load g on marker j with its reaction on marker
    i, Q = [−Jac_iᵀ g; Jac_jᵀ g] (Jac of ``kind``: jac[:, :ni] marker i's, jac[:, ni:n]
    marker j's, n_i = 0 or n_j = 0 on the ground): K = −∂Q/∂q, C = −∂Q/∂q̇ from g = ``vec``
    at the state and ∂g/∂q = ``g_dq``, ∂g/∂q̇ = ``g_dqd`` (3, n) over both bodies' columns,
    plus the Jacobians' own q-dependence at fixed g (forces._pair_load_tangent)."""
    T_k_body = _i1(IN, H, T_K_BODY)
    blocks = _f3(WF, WH, W_XBLK)
    k_blk, c_blk = blocks[0], blocks[1]
    n = ni + nj
    for r in range(n):
        sign = 1.0 if r < ni else -1.0
        for c in range(n):
            k_blk[r, c] = sign * (jac[0, r] * g_dq[0, c] + jac[1, r] * g_dq[1, c]
                                  + jac[2, r] * g_dq[2, c])
            c_blk[r, c] = sign * (jac[0, r] * g_dqd[0, c] + jac[1, r] * g_dqd[1, c]
                                  + jac[2, r] * g_dqd[2, c])
    if ni:
        _add_load_tangent(F, IN, H, WF, WI, WH, ki, kind, q, vec, k_blk, np.int64(0), 1.0)
    if nj:
        _add_load_tangent(F, IN, H, WF, WI, WH, kj, kind, q, vec, k_blk, ni, -1.0)
    _scatter_n(F, IN, H, WF, WI, WH, T_k_body[ki], T_k_body[kj], ni, n, k_blk, top, k_scale)
    _scatter_n(F, IN, H, WF, WI, WH, T_k_body[ki], T_k_body[kj], ni, n, c_blk, top, c_scale)


# --------------------------------------------------------------------------- actuators
@njit(cache=True)
def actuator_tangents_into(F, IN, H, WF, WI, WH, q, u, top, scale):
    """top += scale K of the time-profile joint actuators, K = −∂Q/∂q with
    Q = [−Jac_iᵀ; Jac_jᵀ](u z_i): through z_i(q) (marker i's z-axis Jacobian) and the
    Jacobians' own q-dependence."""
    T_a_kind = _i1(IN, H, T_A_KIND)
    T_a_mark = _i2(IN, H, T_A_MARK)
    T_b_nm = _i1(IN, H, T_B_NM)
    T_k_body = _i1(IN, H, T_K_BODY)
    W_mk_j = _f4(WF, WH, W_MK_J)
    W_mk_v = _f3(WF, WH, W_MK_V)
    jac, vec, dq = _f3(WF, WH, W_X3N)[0], _f2(WF, WH, W_X3)[3], _f3(WF, WH, W_XBLK)[0]
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


# --------------------------------------------------------------------------- force elements
@njit(cache=True)
def force_element_tangents_into(F, IN, H, WF, WI, WH, q, qd, u, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of the spring–damper–actuators and constant point
    loads, K = −∂Q/∂q, C = −∂Q/∂q̇ (the markers' vectors and Jacobians of the last
    residual in the workspace)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_s_mark = _i2(IN, H, T_S_MARK)
    T_s_par = _f2(F, H, T_S_PAR)
    T_l_mark = _i1(IN, H, T_L_MARK)
    T_l_kind = _i1(IN, H, T_L_KIND)
    T_l_frame = _i1(IN, H, T_L_FRAME)
    T_l_vec = _f2(F, H, T_L_VEC)
    W_mk_j = _f4(WF, WH, W_MK_J)
    W_mk_v = _f3(WF, WH, W_MK_V)
    x3n, vec = _f3(WF, WH, W_X3N), _f2(WF, WH, W_X3)[3]
    jac, d_dq, rates, du, g_dq, g_dqd = x3n[0], x3n[1], x3n[2], x3n[3], x3n[4], x3n[5]
    for s in range(T_s_mark.shape[0]):
        force, length, _ = spring_state(F, IN, H, WF, WI, WH, s, qd, u, YES)
        if length == 0.0:
            continue  # no line of action (the NumPy path differences it)
        unit, d_dot = _f1(WF, WH, W_V3F), _f1(WF, WH, W_V3E)
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
        _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, FORCE, ni, nj, jac, vec, g_dq,
                            g_dqd, q, top, k_scale, c_scale)
    blk = _f3(WF, WH, W_XBLK)[0]
    for ld in range(T_l_mark.size):
        k = T_l_mark[ld]
        b = T_k_body[k]
        if b < 0:
            continue
        n = 7 + T_b_nm[b]
        in_axes = T_l_frame[ld] == 1  # F = Σ_a v_a axis_a(q)
        for c in range(3):
            vec[c] = T_l_vec[ld, c]
            if in_axes:
                vec[c] = (T_l_vec[ld, 0] * W_mk_v[k, 1, c] + T_l_vec[ld, 1] * W_mk_v[k, 2, c]
                          + T_l_vec[ld, 2] * W_mk_v[k, 3, c])
        kind = T_l_kind[ld]
        _load_jacobian_into(F, IN, H, WF, WI, WH, k, kind, q, jac, np.int64(0))
        for r in range(n):  # Jacᵀ ∂F/∂q in marker axes
            for c in range(n):
                acc = 0.0
                if in_axes:
                    for e in range(3):
                        acc += jac[e, r] * (T_l_vec[ld, 0] * W_mk_j[k, 1, e, c]
                                            + T_l_vec[ld, 1] * W_mk_j[k, 2, e, c]
                                            + T_l_vec[ld, 2] * W_mk_j[k, 3, e, c])
                blk[r, c] = acc
        _add_load_tangent(F, IN, H, WF, WI, WH, k, kind, q, vec, blk, np.int64(0), 1.0)
        _scatter_n(F, IN, H, WF, WI, WH, b, b, n, n, blk, top, -k_scale)


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
        _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, TORQUE, ni, nj, jac, vec, g_dq,
                            g_dqd, q, top, k_scale, c_scale)


@njit(cache=True)
def distributed_tangents_into(F, IN, H, WF, WI, WH, q, top, k_scale):
    """top += k_scale K of the distributed loads, K = −∂Q/∂q (no q̇ dependence)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_b_mode = _i1(IN, H, T_B_MODE)
    T_d_body = _i1(IN, H, T_D_BODY)
    T_d_frame = _i1(IN, H, T_D_FRAME)
    T_d_vec = _f2(F, H, T_D_VEC)
    T_d_total = _f1(F, H, T_D_TOTAL)
    T_d_first = _f2(F, H, T_D_FIRST)
    T_d_shapes = _f3(F, H, T_D_SHAPES)
    W_basis = _f3(WF, WH, W_BASIS)
    W_rot = _f3(WF, WH, W_ROT)
    W_gbar = _f3(WF, WH, W_GBAR)
    x3, x34 = _f2(WF, WH, W_X3), _f3(WF, WH, W_X34)
    basis_c, pc = _f3(WF, WH, W_XBASIS)[0], _f1(WF, WH, W_XP)
    dq = _f3(WF, WH, W_XBLK)[0]
    arm, f_bar, df = x3[0], x3[1], x34[0]
    for d in range(T_d_body.size):
        b = T_d_body[d]
        st, nm, mode = T_b_start[b], T_b_nm[b], T_b_mode[b]
        n = 7 + nm
        a = W_rot[b]
        gb = W_gbar[b]
        vec = T_d_vec[d]
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


# --------------------------------------------------------------------------- matrix
# inlined into the entry point: not a library of its own to optimize and link again
@njit(cache=True, inline="always")
def iteration_matrix(F, IN, H, WF, WI, WH, q, qd, qdd, lam, u, bp, gp, out):
    """out ← [M + (γ'/β') C_t + K_t/β', Φ_qᵀ; Φ_q, 0] at the state of the last residual
    (its markers, frames and W_jac)."""
    T_b_kind = _i1(IN, H, T_B_KIND)
    T_b_start = _i1(IN, H, T_B_START)
    T_p_row, T_p_col = _i1(IN, H, T_P_ROW), _i1(IN, H, T_P_COL)
    T_j_row, T_j_col = _i1(IN, H, T_J_ROW), _i1(IN, H, T_J_COL)
    W_jac = _f2(WF, WH, W_JAC)
    n = q.size
    for k in range(T_p_row.size):  # entries off the pattern are never written: stay 0
        out[T_p_row[k], T_p_col[k]] = 0.0
    for b in range(T_b_kind.size):
        if T_b_kind[b] == 0:
            m, k, c = rigid_body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd)
        else:
            m, k, c = body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd)
        st = T_b_start[b]
        nb = m.shape[0]
        for i in range(nb):
            for j in range(nb):
                out[st + i, st + j] += m[i, j] + (gp / bp) * c[i, j] + k[i, j] / bp
    constraint_hessian_into(F, IN, H, WF, WI, WH, q, lam, out, 1.0 / bp)
    actuator_tangents_into(F, IN, H, WF, WI, WH, q, u, out, 1.0 / bp)
    force_element_tangents_into(F, IN, H, WF, WI, WH, q, qd, u, out, 1.0 / bp, gp / bp)
    distributed_tangents_into(F, IN, H, WF, WI, WH, q, out, 1.0 / bp)
    torsion_tangents_into(F, IN, H, WF, WI, WH, q, qd, out, 1.0 / bp, gp / bp)
    for k in range(T_j_row.size):
        i, j = T_j_row[k], T_j_col[k]
        out[n + i, j] = W_jac[i, j]
        out[j, n + i] = W_jac[i, j]
