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

Called only when the iteration matrix is rebuilt, so small temporaries are allocated
here (never in the per-iteration residual: test_compiled counts numba's allocations).
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    W_R34,
    W_RBASIS,
    W_RJC,
    W_RMAT,
    W_RMKC,
    W_ROT,
    W_RP4,
    W_RPC,
    W_RVEC,
    W_SDDM,
    W_SDM,
    W_SDMM,
    W_SVEC,
    W_V3E,
    W_V3F,
    YES,
    _f1,
    _f2,
    _f3,
    _f4,
    _f5,
    _i1,
    _i2,
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
from .rotations import d_rot as _d_rot
from .rotations import d_rot_t as _d_rot_t
from .rotations import (
    d_rot_t_into,
    d_rotated_basis_into,
    d_rotated_into,
    g_bar_into,
    g_bar_t_jac_rows,
    g_global_into,
    rotation_into,
)
from .rotations import g_bar_mat as _g_bar
from .rotations import g_bar_t_jac as _g_bar_t_jac
from .stiffening import body_stiffening


# --------------------------------------------------------------------------- helpers
@njit(cache=True)
def _g_global_t_jac(x):
    """∂(G(p)ᵀ x)/∂p (4x4, constant)."""
    x0, x1, x2 = x[0], x[1], x[2]
    return 2.0 * np.array([[0.0, -x0, -x1, -x2], [x0, 0.0, -x2, x1],
                           [x1, x2, 0.0, -x0], [x2, -x1, x0, 0.0]])


@njit(cache=True)
def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(cache=True)
def _skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


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
def mass_dxi(big_n, qs, nm, y, mode):
    """D (6+n, n), D[:, j] = (∂M̄/∂ξ_j) y for the M̄ of ``mode`` (coupling._mass_dxi)."""
    n6 = 6 + nm
    out = np.zeros((n6, nm))
    if nm == 0 or mode == RIGID:
        return out
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
        return out
    top = 6 if mode == NO_MRF else n6
    for j in range(nm):
        for b in range(3):
            acc = 0.0
            for a in range(top):
                acc += big_n[j, a, b] * y[a]
            out[3 + b, j] += acc
        for a in range(3):
            out[3 + a, j] += qs[j, a, 0] * y[3] + qs[j, a, 1] * y[4] + qs[j, a, 2] * y[5]
    return out


# --------------------------------------------------------------------------- bodies
@njit(cache=True)
def frame_tangents(mbar_mass, mbar_full, mbar_rigid, gcol, big_n, big_q, nm, mode, p, xi,
                   rd, pd, xid, acc, g):
    """(K, C) of r_b = M q̈ − Q_v − Q_g, the C-form of coupling.frame_tangents."""
    n6 = 6 + nm
    a = np.empty((3, 3))
    rotation_into(p, a)
    gb = _g_bar(p)
    y = np.zeros(n6)
    w = np.zeros(n6)
    y[:3] = a.T @ acc[:3]
    y[3:6] = gb @ acc[3:7]
    w[:3] = a.T @ rd
    w[3:6] = gb @ pd
    for j in range(nm):
        y[6 + j] = acc[7 + j]
        w[6 + j] = xid[j]
    qs = np.zeros((max(nm, 1), 3, 3))
    for j in range(nm):  # scalar loops: an array expression here allocates nm² times
        for i in range(nm):
            x = xi[i]
            for r in range(3):
                for cc in range(3):
                    qs[j, r, cc] += x * (big_q[i, j, r, cc] + big_q[j, i, r, cc])
    rigid_rows = mode in (ONE_WAY, RIGID)
    # runtime values, not literals: numba compiles a function once per literal argument
    no_modes = nm * 0
    two_way = TWO_WAY + no_modes
    jw = np.zeros((n6, n6))
    jxi = np.zeros((n6, nm))
    qbar = np.zeros(n6)
    b1 = np.zeros(n6)
    if rigid_rows:  # rows 0–5 from the rigid M̄ without modes
        w6 = w[:6].copy()
        qbar_bilinear(mbar_rigid, big_n, qs, no_modes, w6, w6, b1)
        qbar[:6] = b1[:6]
        qbar_jacobian(mbar_rigid, big_n, qs, no_modes, w6, no_modes, jw)
    if mode != RIGID:
        lo = 6 if rigid_rows else 0
        qbar_bilinear(mbar_full, big_n, qs, nm, w, w, b1)
        qbar[lo:] = b1[lo:]
        qbar_jacobian(mbar_full, big_n, qs, nm, w, lo, jw)
        if nm:
            v, om = w[:3], w[3:6]
            dw = mass_dxi(big_n, qs, nm, w, two_way)
            jx = np.zeros((n6, nm))
            ov = np.zeros(n6)
            ov[:3] = _cross(om, v)
            jx[:, :] = mass_dxi(big_n, qs, nm, ov, two_way)
            for j in range(nm):  # − ω̄ × d_r; − ω̄ × d_θ − v̄ × d_r (d = dw[:, j])
                for e in range(3):
                    e1, e2 = (e + 1) % 3, (e + 2) % 3
                    jx[e, j] -= om[e1] * dw[e2, j] - om[e2] * dw[e1, j]
                    jx[3 + e, j] -= (om[e1] * dw[3 + e2, j] - om[e2] * dw[3 + e1, j]
                                     + v[e1] * dw[e2, j] - v[e2] * dw[e1, j])
            q_om = np.zeros((nm, nm, 3))  # [i, j, a] = (Q_ij ω̄)_a
            for i in range(nm):
                for j in range(nm):
                    for e in range(3):
                        q_om[i, j, e] = (big_q[i, j, e, 0] * om[0] + big_q[i, j, e, 1] * om[1]
                                         + big_q[i, j, e, 2] * om[2])
            for j in range(nm):
                for c in range(3):
                    acc_t = 0.0
                    for i in range(nm):
                        acc_t += xid[i] * (q_om[j, i, c] + q_om[i, j, c])
                    jx[3 + c, j] -= acc_t
                for i in range(nm):
                    jx[6 + j, i] += (q_om[i, j, 0] * om[0] + q_om[i, j, 1] * om[1]
                                     + q_om[i, j, 2] * om[2])
            jxi[lo:] = jx[lo:]
    z = mbar_mass[:n6, :n6] @ y - qbar
    dz_dxi = mass_dxi(big_n, qs, nm, y, mode) - jxi
    dy_dp = np.zeros((n6, 4))
    dy_dp[:3] = _d_rot_t(p, acc[:3])
    dy_dp[3:6] = -_g_bar(acc[3:7])
    dw_dp = np.zeros((n6, 4))
    dw_dp[:3] = _d_rot_t(p, rd)
    dw_dp[3:6] = -_g_bar(pd)
    dz_dp = mbar_mass[:n6, :n6] @ dy_dp - jw @ dw_dp
    if g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0:
        gbv = a.T @ g
        z -= gcol[:n6] @ gbv
        dz_dp -= gcol[:n6] @ _d_rot_t(p, g)
        if nm and mode in (TWO_WAY, NO_MRF):
            for j in range(nm):
                for b in range(3):
                    dz_dxi[3 + b, j] -= (big_n[j, 0, b] * gbv[0] + big_n[j, 1, b] * gbv[1]
                                         + big_n[j, 2, b] * gbv[2])
    n = 7 + nm
    k = np.zeros((n, n))
    k[:3, 3:7] = _d_rot(p, z[:3]) + a @ dz_dp[:3]
    k[3:7, 3:7] = _g_bar_t_jac(z[3:6]) + gb.T @ dz_dp[3:6]
    k[7:, 3:7] = dz_dp[6:]
    k[:3, 7:] = a @ dz_dxi[:3]
    k[3:7, 7:] = gb.T @ dz_dxi[3:6]
    k[7:, 7:] = dz_dxi[6:]
    jc = np.empty((n6, n))
    jc[:, :3] = jw[:, :3] @ a.T
    jc[:, 3:7] = jw[:, 3:6] @ gb
    jc[:, 7:] = jw[:, 6:]
    c = np.empty((n, n))
    c[:3] = -(a @ jc[:3])
    c[3:7] = -(gb.T @ jc[3:6])
    c[7:] = -jc[6:]
    return k, c


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
    pc[0] = q[st + 3]
    for i in range(1, 4):
        pc[i] = -q[st + 3 + i]
    d_rotated_basis_into(pc, basis_c)
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
    a rigid body's: :func:`rigid_body_matrices`)."""
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
    W_gbar = _f3(WF, WH, W_GBAR)
    W_rot = _f3(WF, WH, W_ROT)
    st = T_b_start[b]
    nm = T_b_nm[b]
    n = 7 + nm
    qb, qdb, qddb = q[st:st + n], qd[st:st + n], qdd[st:st + n]
    p = qb[3:7]
    a = W_rot[b]
    gb = W_gbar[b]
    g = T_gravity
    f = T_b_flex[b]
    mode = T_b_mode[b]
    n6 = 6 + nm
    full = np.zeros((n6, n6))
    full_mass(F, IN, H, WF, WI, WH, f, nm, q, st, full)
    mbar_mode = np.zeros((n6, n6))
    mode_mass(F, IN, H, WF, WI, WH, f, nm, mode, full, mbar_mode)
    # the mass of the tangents (coupling.frame_inertia: rigid blocks from the invariant M0)
    tmass = full.copy()
    m0 = T_f_inv_m0[f]
    if mode == NO_MRF:
        tmass[:6, 6:] = 0.0
        tmass[6:, :6] = 0.0
    elif mode != TWO_WAY:
        tmass[:6, :6] = m0[:6, :6]
        tmass[:6, 6:] = 0.0
        if mode == RIGID:
            tmass[6:, :6] = 0.0
    gcol = np.zeros((n6, 3))
    if mode in (TWO_WAY, NO_MRF):
        gcol[:6] = full[:6, :3]
    else:
        gcol[:6] = m0[:6, :3]
    if mode != RIGID:
        gcol[6:] = T_f_S[f, :, :nm].T
    big_n = T_f_N[f, :nm, :n6].copy()
    big_q = T_f_Q[f, :nm, :nm].copy()
    rigid6 = m0[:6, :6].copy()
    k, c = frame_tangents(tmass, full, rigid6, gcol, big_n, big_q, nm, mode, p, qb[7:],
                          qdb[:3], qdb[3:7], qdb[7:], qddb, g)
    k[7:, 7:] += T_f_kff[f, :nm, :nm]
    c[7:, 7:] += T_f_dff[f, :nm, :nm]
    cmat = np.zeros((n6, n))
    cmat[:3, :3] = a.T
    cmat[3:6, 3:7] = gb
    for j in range(nm):
        cmat[6 + j, 7 + j] = 1.0
    m = cmat.T @ (mbar_mode @ cmat)
    if _i1(IN, H, T_F_STIFF)[f]:
        r_tmp = np.zeros(n)
        body_stiffening(_f4(F, H, T_F_SKA)[f], _f4(F, H, T_F_SKD)[f], _f5(F, H, T_F_SXC)[f],
                        mode, nm, a, gb, p, qb, qdb, qddb, g, r_tmp, YES, m, k, c,
                        _f2(WF, WH, W_SDM), _f3(WF, WH, W_SDDM), _f2(WF, WH, W_SDMM),
                        _f2(WF, WH, W_SVEC))
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


@njit(cache=True)
def _scatter(F, IN, H, WF, WI, WH, bi, bj, ni, block, top, scale):
    """top[idx, idx] += scale block, idx = body i's coordinates then body j's."""
    _scatter_n(F, IN, H, WF, WI, WH, bi, bj, ni, block.shape[0], block, top, scale)


# --------------------------------------------------------------------------- actuators
@njit(cache=True)
def _lever_arm(T_k_base, T_k_shapes, k, nm, q, st):
    """Body-frame point of marker k at ξ (deformed where the coupling mode shows it)."""
    arm = T_k_base[k, 0].copy()
    for j in range(nm):
        arm += T_k_shapes[k, 0, :, j] * q[st + 7 + j]
    return arm


@njit(cache=True)
def _load_jacobian(F, IN, H, WF, WI, WH, k, kind, q):
    """The torque (kind 0: angular_jac) or force (kind 1: force_jac) Jacobian (3, n_b)."""
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
    nm = T_b_nm[b]
    st = T_b_start[b]
    a = W_rot[b]
    out = np.zeros((3, 7 + nm))
    if kind == 0:
        out[:, 3:7] = W_gglob[b]
        for j in range(nm):
            out[:, 7 + j] = a @ T_k_psi[k, :, j]
        return out
    arm = _lever_arm(T_k_base, T_k_shapes, k, nm, q, st)
    for i in range(3):
        out[i, i] = 1.0
    out[:, 3:7] = -(a @ _skew(arm) @ W_gbar[b])
    for j in range(nm):
        out[:, 7 + j] = a @ T_k_phi[k, :, j]
    return out


@njit(cache=True)
def _load_tangent(F, IN, H, WF, WI, WH, k, kind, q, vec):
    """∂(Jacᵀ vec)/∂q for a fixed global vec (bodies.force_jac_tangent_kernel /
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
    b = T_k_body[k]
    nm = T_b_nm[b]
    st = T_b_start[b]
    p = q[st + 3:st + 7]
    out = np.zeros((7 + nm, 7 + nm))
    df = _d_rot_t(p, vec)
    if kind == 0:
        out[3:7, 3:7] = _g_global_t_jac(vec)
        for j in range(nm):
            out[7 + j, 3:7] = T_k_psi[k, :, j] @ df
        return out
    a = W_rot[b]
    gb = W_gbar[b]
    arm = _lever_arm(T_k_base, T_k_shapes, k, nm, q, st)
    f_bar = a.T @ vec
    out[3:7, 3:7] = _g_bar_t_jac(_cross(arm, f_bar)) + gb.T @ (_skew(arm) @ df)
    for j in range(nm):
        out[7 + j, 3:7] = T_k_phi[k, :, j] @ df
        out[3:7, 7 + j] = gb.T @ (-(_skew(f_bar) @ T_k_shapes[k, 0, :, j]))
    return out


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
    for act in range(T_a_kind.size):
        ki, kj = T_a_mark[act, 0], T_a_mark[act, 1]
        kind = T_a_kind[act]
        bi, bj = T_k_body[ki], T_k_body[kj]
        ni = 7 + T_b_nm[bi] if bi >= 0 else 0
        nj = 7 + T_b_nm[bj] if bj >= 0 else 0
        n = ni + nj
        vec = u[act] * W_mk_v[ki][3]
        dq = np.zeros((n, n))
        if ni:
            jac_i = _load_jacobian(F, IN, H, WF, WI, WH, ki, kind, q)
            dz = W_mk_j[ki][3][:, :ni]  # ∂z_i/∂q_i
            dq[:ni, :ni] -= jac_i.T @ (u[act] * dz) + _load_tangent(F, IN, H, WF, WI, WH, ki,
                                                                    kind, q, vec)
        if nj:
            jac_j = _load_jacobian(F, IN, H, WF, WI, WH, kj, kind, q)
            if ni:
                dz = W_mk_j[ki][3][:, :ni]
                dq[ni:, :ni] += jac_j.T @ (u[act] * dz)
            dq[ni:, ni:] += _load_tangent(F, IN, H, WF, WI, WH, kj, kind, q, vec)
        _scatter(F, IN, H, WF, WI, WH, bi, bj, ni, -dq, top, scale)


# --------------------------------------------------------------------------- force elements
@njit(cache=True)
def _point_jacobian_rate(F, IN, H, k, q, qd):
    """∂(J q̇)/∂q (3, n_b) of marker k's point, J = ∂(R + A s₀(ξ))/∂q: p columns
    ∂(A s₀)/∂p at ṗ plus ∂(A U₀ ξ̇)/∂p, ξ columns Ȧ U₀ (bodies.marker_jac_rate_kernel)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_base = _f3(F, H, T_K_BASE)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_shapes = _f4(F, H, T_K_SHAPES)
    b = T_k_body[k]
    nm, st = T_b_nm[b], T_b_start[b]
    p, pd = q[st + 3:st + 7], qd[st + 3:st + 7]
    arm = _lever_arm(T_k_base, T_k_shapes, k, nm, q, st)
    arm_rate = np.zeros(3)
    for j in range(nm):
        arm_rate += T_k_shapes[k, 0, :, j] * qd[st + 7 + j]
    out = np.zeros((3, 7 + nm))
    out[:, 3:7] = _d_rot(pd, arm) + _d_rot(p, arm_rate)
    for j in range(nm):
        out[:, 7 + j] = _d_rot(p, T_k_shapes[k, 0, :, j].copy()) @ pd
    return out


@njit(cache=True)
def _pair_jacobian(F, IN, H, WF, WI, WH, k, kind, q):
    """:func:`_load_jacobian` of marker k, (3, 0) on the ground."""
    if _i1(IN, H, T_K_BODY)[k] < 0:
        return np.zeros((3, 0))
    return _load_jacobian(F, IN, H, WF, WI, WH, k, kind, q)


@njit(cache=True)
def _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, kind, jac_i, jac_j, vec, g_dq, g_dqd,
                        q, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of a load g on marker j with its reaction on marker
    i, Q = [−Jac_iᵀ g; Jac_jᵀ g] (Jac of ``kind``: jac_i (3, n_i), jac_j (3, n_j), n = 0
    on the ground): K = −∂Q/∂q, C = −∂Q/∂q̇ from g = ``vec`` at the state and ∂g/∂q =
    ``g_dq``, ∂g/∂q̇ = ``g_dqd`` over both bodies' columns, plus the Jacobians' own
    q-dependence at fixed g (forces._pair_load_tangent)."""
    T_k_body = _i1(IN, H, T_K_BODY)
    ni, nj = jac_i.shape[1], jac_j.shape[1]
    n = ni + nj
    k_blk = np.zeros((n, n))
    c_blk = np.zeros((n, n))
    if ni:
        k_blk[:ni, :] += jac_i.T @ g_dq
        k_blk[:ni, :ni] += _load_tangent(F, IN, H, WF, WI, WH, ki, kind, q, vec)
        c_blk[:ni, :] += jac_i.T @ g_dqd
    if nj:
        k_blk[ni:, :] -= jac_j.T @ g_dq
        k_blk[ni:, ni:] -= _load_tangent(F, IN, H, WF, WI, WH, kj, kind, q, vec)
        c_blk[ni:, :] -= jac_j.T @ g_dqd
    _scatter(F, IN, H, WF, WI, WH, T_k_body[ki], T_k_body[kj], ni, k_blk, top, k_scale)
    _scatter(F, IN, H, WF, WI, WH, T_k_body[ki], T_k_body[kj], ni, c_blk, top, c_scale)


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
    for s in range(T_s_mark.shape[0]):
        force, length, _ = spring_state(F, IN, H, WF, WI, WH, s, qd, u, YES)
        if length == 0.0:
            continue  # no line of action (the NumPy path differences it)
        unit = _f1(WF, WH, W_V3F).copy()
        d_dot = _f1(WF, WH, W_V3E).copy()
        ki, kj = T_s_mark[s, 0], T_s_mark[s, 1]
        bi, bj = T_k_body[ki], T_k_body[kj]
        ni = 7 + T_b_nm[bi] if bi >= 0 else 0
        nj = 7 + T_b_nm[bj] if bj >= 0 else 0
        n = ni + nj
        d_dq = np.zeros((3, n))  # ∂d/∂q = [−J_i, J_j]
        rates = np.zeros((3, n))  # [−∂(J_i q̇_i)/∂q_i, ∂(J_j q̇_j)/∂q_j]
        if ni:
            d_dq[:, :ni] = -W_mk_j[ki, 0, :, :ni]
            rates[:, :ni] = -_point_jacobian_rate(F, IN, H, ki, q, qd)
        if nj:
            d_dq[:, ni:] = W_mk_j[kj, 0, :, :nj]
            rates[:, ni:] = _point_jacobian_rate(F, IN, H, kj, q, qd)
        proj = (np.eye(3) - np.outer(unit, unit)) / length
        du = proj @ d_dq
        rate_dq = d_dot @ du + unit @ rates
        rate_dqd = unit @ d_dq
        f_dq = T_s_par[s, 0] * (unit @ d_dq) + T_s_par[s, 1] * rate_dq
        f_dqd = T_s_par[s, 1] * rate_dqd
        g_dq = np.outer(unit, f_dq) + force * du  # ∂(f u)/∂q
        g_dqd = np.outer(unit, f_dqd)
        # tension f u pulls marker i towards j: the load on j is −f u, its reaction on i
        _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, FORCE,
                            _pair_jacobian(F, IN, H, WF, WI, WH, ki, FORCE, q),
                            _pair_jacobian(F, IN, H, WF, WI, WH, kj, FORCE, q),
                            -(force * unit), -g_dq, -g_dqd, q, top, k_scale, c_scale)
    for ld in range(T_l_mark.size):
        k = T_l_mark[ld]
        b = T_k_body[k]
        if b < 0:
            continue
        n = 7 + T_b_nm[b]
        vec = T_l_vec[ld].copy()
        dvec = np.zeros((3, n))
        if T_l_frame[ld] == 1:  # F = Σ_a v_a axis_a(q)
            glob = np.zeros(3)
            for a in range(3):
                glob += T_l_vec[ld, a] * W_mk_v[k, 1 + a]
                dvec += T_l_vec[ld, a] * W_mk_j[k, 1 + a, :, :n]
            vec = glob
        kind = T_l_kind[ld]
        jac = _load_jacobian(F, IN, H, WF, WI, WH, k, kind, q)
        blk = -(_load_tangent(F, IN, H, WF, WI, WH, k, kind, q, vec) + jac.T @ dvec)
        _scatter(F, IN, H, WF, WI, WH, b, b, n, blk, top, k_scale)


@njit(cache=True)
def _angular_rate_jacobian(F, IN, H, WF, WI, WH, k, q, qd):
    """∂(Ω q̇)/∂q (3, n_b) of marker k, ω = G(p) ṗ + A Ψ ξ̇: −G(ṗ) (as G(p) ṗ = −G(ṗ) p)
    plus ∂(A Ψ ξ̇)/∂p in the p columns, zero elsewhere (bodies.angular_rate_jac_kernel)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_psi = _f3(F, H, T_K_PSI)
    b = T_k_body[k]
    nm, st = T_b_nm[b], T_b_start[b]
    out = np.zeros((3, 7 + nm))
    g = np.zeros((3, 4))
    g_global_into(qd[st + 3:st + 7], g)
    psi_xid = np.zeros(3)
    for j in range(nm):
        psi_xid += T_k_psi[k, :, j] * qd[st + 7 + j]
    out[:, 3:7] = -g + _d_rot(q[st + 3:st + 7], psi_xid)
    return out


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
    for s in range(T_t_mark.shape[0]):
        angle, rate = torsion_state(F, IN, H, WF, WI, WH, s, qd, NO)
        w_rel = _f1(WF, WH, W_V3E).copy()
        ki, kj = T_t_mark[s, 0], T_t_mark[s, 1]
        bi, bj = T_k_body[ki], T_k_body[kj]
        ni = 7 + T_b_nm[bi] if bi >= 0 else 0
        nj = 7 + T_b_nm[bj] if bj >= 0 else 0
        n = ni + nj
        x_i, y_i, z_i = W_mk_v[ki, 1].copy(), W_mk_v[ki, 2].copy(), W_mk_v[ki, 3].copy()
        x_j = W_mk_v[kj, 1].copy()
        sn, cs = x_j @ y_i, x_j @ x_i
        d_sn, d_cs = np.zeros(n), np.zeros(n)
        dz = np.zeros((3, n))  # ∂z_i/∂q (marker i's columns)
        om_dqd = np.zeros((3, n))  # [−Ω_i, Ω_j]
        om_rate = np.zeros((3, n))  # [−∂(Ω_i q̇_i)/∂q_i, ∂(Ω_j q̇_j)/∂q_j]
        om_i = _pair_jacobian(F, IN, H, WF, WI, WH, ki, TORQUE, q)
        om_j = _pair_jacobian(F, IN, H, WF, WI, WH, kj, TORQUE, q)
        if ni:
            d_sn[:ni] = x_j @ W_mk_j[ki, 2, :, :ni]
            d_cs[:ni] = x_j @ W_mk_j[ki, 1, :, :ni]
            dz[:, :ni] = W_mk_j[ki, 3, :, :ni]
            om_dqd[:, :ni] = -om_i
            om_rate[:, :ni] = -_angular_rate_jacobian(F, IN, H, WF, WI, WH, ki, q, qd)
        if nj:
            d_sn[ni:] = y_i @ W_mk_j[kj, 1, :, :nj]
            d_cs[ni:] = x_i @ W_mk_j[kj, 1, :, :nj]
            om_dqd[:, ni:] = om_j
            om_rate[:, ni:] = _angular_rate_jacobian(F, IN, H, WF, WI, WH, kj, q, qd)
        angle_dq = (cs * d_sn - sn * d_cs) / (sn * sn + cs * cs)
        rate_dq = w_rel @ dz + z_i @ om_rate
        rate_dqd = z_i @ om_dqd
        k_t, c_t, angle0 = T_t_par[s, 0], T_t_par[s, 1], T_t_par[s, 2]
        torque = -k_t * (angle - angle0) - c_t * rate
        g_dq = np.outer(z_i, -k_t * angle_dq - c_t * rate_dq) + torque * dz  # ∂(τ z_i)/∂q
        g_dqd = np.outer(z_i, -c_t * rate_dqd)
        _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, TORQUE, om_i, om_j, torque * z_i,
                            g_dq, g_dqd, q, top, k_scale, c_scale)


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
    W_rot = _f3(WF, WH, W_ROT)
    W_gbar = _f3(WF, WH, W_GBAR)
    for d in range(T_d_body.size):
        b = T_d_body[d]
        st, nm, mode = T_b_start[b], T_b_nm[b], T_b_mode[b]
        n = 7 + nm
        p = q[st + 3:st + 7]
        a = W_rot[b]
        gb = W_gbar[b]
        vec = T_d_vec[d].copy()
        if T_d_frame[d] == 1:
            f_bar, df = vec, np.zeros((3, 4))
        else:
            f_bar, df = a.T @ vec, _d_rot_t(p, vec)
        shapes = T_d_shapes[d, :, :nm].copy()
        sees = mode in (TWO_WAY, NO_MRF)
        arm = T_d_first[d].copy()
        if sees:
            arm += shapes @ q[st + 7:st + 7 + nm]
        dq = np.zeros((n, n))
        dq[:3, 3:7] = T_d_total[d] * (_d_rot(p, f_bar) + a @ df)
        dq[3:7, 3:7] = _g_bar_t_jac(_cross(arm, f_bar)) + gb.T @ (_skew(arm) @ df)
        if sees:
            dq[3:7, 7:] = gb.T @ (-(_skew(f_bar) @ shapes))
        if mode != RIGID:
            dq[7:, 3:7] = shapes.T @ df
        _scatter(F, IN, H, WF, WI, WH, b, b, n, -dq, top, k_scale)


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
