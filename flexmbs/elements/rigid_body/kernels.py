"""Rigid bodies in compiled code: the residual M q̈ − Q_v − Q_g, its (M, K, C) and the
energies (docs/compiled.md).

The counterparts of :meth:`flexmbs.model.bodies.RigidBody.residual`,
``residual_tangents``, ``kinetic_energy`` and ``potential_energy``; the tangents are the
n = 0 case of the floating-frame kernel (:mod:`flexmbs.elements.floating_frame`) with
the M_RR = m I correction.
"""

from __future__ import annotations

from ...compiled._jit import njit
from ...compiled.packing import (
    W_BASIS,
    W_GBAR,
    W_R34,
    W_RB_VEC,
    W_RBASIS,
    W_RJC,
    W_RMAT,
    W_RMKC,
    W_ROT,
    W_RP4,
    W_RPC,
    W_RVEC,
    floats1,
    floats2,
    floats3,
    ints1,
)
from ...compiled.quadratic_velocity import row_dot
from ...compiled.rotations import (
    conjugate_basis_into,
    cross_into,
    d_rot_t_into,
    d_rotated_into,
    g_bar_into,
    g_bar_t_jac_rows,
)
from ..floating_frame import qbar_bilinear, qbar_jacobian
from ..registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_NM, T_B_START, T_GRAVITY, T_R_IO, T_R_MASS, T_R_OFFSET = header_rows(
    "b_nm", "b_start", "gravity", "r_io", "r_mass", "r_offset")
T_R_S = header_rows("r_s")


@njit(cache=True)
def rigid_residual(F, IN, H, WF, WI, WH, b, q, qd, qdd, r):
    """r[body b] += M q̈ − Q_v − Q_g of a rigid body (RigidBody.residual):
    r_R = m (R̈ − g) + A(ω̄ × (ω̄ × S) − S × α̅), r_p = Ḡᵀ(I_O α̅ + ω̄ × I_O ω̄ + S × Aᵀ(R̈ − g)).
    Scratch: the nine 3-vectors of the workspace's ``rb_vec``, named by what they hold."""
    T_gravity = floats1(F, H, T_GRAVITY)
    T_r_mass, T_r_s = floats1(F, H, T_R_MASS), floats2(F, H, T_R_S)
    T_r_offset = ints1(IN, H, T_R_OFFSET)
    W_rot = floats3(WF, WH, W_ROT)
    st = ints1(IN, H, T_B_START)[b]
    gb = floats3(WF, WH, W_GBAR)[b]
    io = floats3(F, H, T_R_IO)[b]
    vecs = floats2(WF, WH, W_RB_VEC)
    w, alpha, acc = vecs[0], vecs[1], vecs[2]
    iw, moment, tmp = vecs[3], vecs[4], vecs[5]
    for c in range(3):
        w[c] = (
            gb[c, 0] * qd[st + 3]
            + gb[c, 1] * qd[st + 4]
            + gb[c, 2] * qd[st + 5]
            + gb[c, 3] * qd[st + 6]
        )
        alpha[c] = (
            gb[c, 0] * qdd[st + 3]
            + gb[c, 1] * qdd[st + 4]
            + gb[c, 2] * qdd[st + 5]
            + gb[c, 3] * qdd[st + 6]
        )
        acc[c] = qdd[st + c] - T_gravity[c]
    for c in range(3):
        iw[c] = io[c, 0] * w[0] + io[c, 1] * w[1] + io[c, 2] * w[2]
    cross_into(w, iw, moment)
    for c in range(3):
        moment[c] += io[c, 0] * alpha[0] + io[c, 1] * alpha[1] + io[c, 2] * alpha[2]
        r[st + c] += T_r_mass[b] * acc[c]
    if T_r_offset[b]:
        a = W_rot[b]
        s = T_r_s[b]
        ws, wws, sa = vecs[6], vecs[7], vecs[8]
        cross_into(w, s, ws)
        cross_into(w, ws, wws)
        cross_into(s, alpha, sa)
        for c in range(3):
            tmp[c] = wws[c] - sa[c]
        for c in range(3):
            r[st + c] += a[c, 0] * tmp[0] + a[c, 1] * tmp[1] + a[c, 2] * tmp[2]
        for c in range(3):  # Aᵀ acc
            ws[c] = a[0, c] * acc[0] + a[1, c] * acc[1] + a[2, c] * acc[2]
        cross_into(s, ws, wws)
        for c in range(3):
            moment[c] += wws[c]
    for m in range(4):
        r[st + 3 + m] += gb[0, m] * moment[0] + gb[1, m] * moment[1] + gb[2, m] * moment[2]


@njit(cache=True)
def rigid_body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd):
    """(M, K, C) of rigid body b (7x7 views of the workspace, valid until the next call):
    :func:`frame_tangents` without modes and the M_RR = m I correction of
    :func:`body_matrices`, the same terms written without temporaries (a model of many
    rigid bodies rebuilds the iteration matrix without allocating)."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_r_io = floats3(F, H, T_R_IO)
    T_r_mass = floats1(F, H, T_R_MASS)
    T_r_offset = ints1(IN, H, T_R_OFFSET)
    T_r_s = floats2(F, H, T_R_S)
    g = floats1(F, H, T_GRAVITY)
    W_basis = floats3(WF, WH, W_BASIS)
    W_gbar = floats3(WF, WH, W_GBAR)
    W_rot = floats3(WF, WH, W_ROT)
    vec, mats = floats2(WF, WH, W_RVEC), floats3(WF, WH, W_RMAT)
    p4, r34 = floats3(WF, WH, W_RP4), floats3(WF, WH, W_R34)
    basis_c, pc = floats2(WF, WH, W_RBASIS), floats1(WF, WH, W_RPC)
    jc, mkc = floats2(WF, WH, W_RJC), floats3(WF, WH, W_RMKC)
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
def rigid_energies(F, IN, H, WF, WI, WH, b, q, qd, w0, w1, w2, kin, pot):
    """(kin, pot) plus the kinetic and gravity potential energy [J] of rigid body b at
    (q, q̇), ω̄ = (w0, w1, w2) [rad/s] in body axes; needs :func:`body_frames`."""
    r_mass, r_io, r_s = floats1(F, H, T_R_MASS), floats3(F, H, T_R_IO), floats2(F, H, T_R_S)
    g = floats1(F, H, T_GRAVITY)
    st = ints1(IN, H, T_B_START)[b]
    a = floats3(WF, WH, W_ROT)[b]
    s = r_s[b]
    ws = (w1 * s[2] - w2 * s[1], w2 * s[0] - w0 * s[2], w0 * s[1] - w1 * s[0])
    w = (w0, w1, w2)
    vv, coupling, iw, first = 0.0, 0.0, 0.0, 0.0
    for c in range(3):
        vv += qd[st + c] * qd[st + c]
        coupling += qd[st + c] * (a[c, 0] * ws[0] + a[c, 1] * ws[1] + a[c, 2] * ws[2])
        iw += w[c] * (r_io[b, c, 0] * w0 + r_io[b, c, 1] * w1 + r_io[b, c, 2] * w2)
        first += g[c] * (r_mass[b] * q[st + c] + a[c, 0] * s[0] + a[c, 1] * s[1]
                         + a[c, 2] * s[2])
    kin += 0.5 * r_mass[b] * vv + coupling + 0.5 * iw
    pot -= first
    return kin, pot
