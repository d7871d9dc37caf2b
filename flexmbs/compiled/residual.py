"""Compiled residual: r = M q̈ + Φ_qᵀλ − Q, Φ and Φ_q in one call (docs/compiled.md).

Pure functions of the arrays of :class:`~flexmbs.compiled.tables.Tables` and a
:class:`~flexmbs.compiled.workspace.Workspace` of buffers; the same equations as the
NumPy path, term by term:

* rigid bodies — :meth:`flexmbs.model.bodies.RigidBody.residual`;
* flexible bodies — :func:`flexmbs.frame.coupling.body_residual` plus K_ff ξ + D_ff ξ̇, in
  every coupling mode (docs/theory_ffrf.md: M̄(ξ) from the invariants, Q̄ of the
  quasi-velocities, gravity through the first-moment rows);
* constraints — every joint and drive equation as a bilinear form in its two markers'
  vectors V = (r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j) (:mod:`flexmbs.assembly.constraints`),
  with the Euler-parameter normalization rows and coordinate drives;
* joint actuators given by a time profile — the torque or force u(t) z_i on marker j
  with its reaction on i (:class:`flexmbs.model.forces.JointActuator`);
* spring–damper–actuators, tension f = k (L − L0) + c L̇ + f_a(t) along the line of the
  two markers (:class:`flexmbs.model.forces.SpringDamperActuator`), and point forces
  and torques of constant value in global or marker axes
  (:class:`flexmbs.model.forces.PointLoad`); distributed loads of constant value on
  flexible bodies, through their integrals Σw, Σw ū0, Σw Φ
  (:class:`flexmbs.model.forces.DistributedLoad`);
* rotational spring–dampers, torque −k (θ − θ0) − c θ̇ about z_i on marker j with its
  reaction on i, θ unwrapped against the last angle like ``System.unwrap``
  (:class:`flexmbs.model.forces.RotationalSpringDamper`).

Drive profile values (s, ṡ, s̈) per drive and actuator values u come in as arrays
(evaluated once per time level in Python).
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
    T_C_COORD,
    T_C_DRIVE,
    T_C_ROW,
    T_D_BODY,
    T_D_FIRST,
    T_D_FRAME,
    T_D_SHAPES,
    T_D_TOTAL,
    T_D_VEC,
    T_E_DRIVE,
    T_E_KIND,
    T_E_LIN,
    T_E_MARK,
    T_E_NPAIRS,
    T_E_PAIRS,
    T_E_ROW,
    T_F_DFF,
    T_F_INV_M0,
    T_F_KFF,
    T_F_M0,
    T_F_MFF,
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
    T_R_IO,
    T_R_MASS,
    T_R_OFFSET,
    T_R_S,
    T_S_ACT,
    T_S_MARK,
    T_S_PAR,
    T_T_MARK,
    T_T_PAR,
    TORQUE,
    W_ANGLES,
    W_BASIS,
    W_COEF,
    W_FULL,
    W_GBAR,
    W_GGLOB,
    W_H6,
    W_MASS,
    W_MK_J,
    W_MK_V,
    W_NLIN,
    W_OFFSET,
    W_OM3,
    W_Q6,
    W_QCUR,
    W_QR6,
    W_QS,
    W_RBASIS,
    W_RIGID,
    W_ROT,
    W_S4,
    W_S34,
    W_SD2,
    W_SDDM,
    W_SDM,
    W_SDMM,
    W_SMAT,
    W_SMODES,
    W_SP4,
    W_SVEC,
    W_V3A,
    W_V3B,
    W_V3C,
    W_V3D,
    W_V3E,
    W_V3F,
    W_V3G,
    W_V3H,
    W_V3I,
    W_W6,
    W_WGT,
    W_WR6,
    W_Y6,
    W_Z6,
    YES,
    _f1,
    _f2,
    _f3,
    _f4,
    _f5,
    _i1,
    _i2,
    _i3,
)
from .rotations import (
    cross_into,
    d_rotated_basis_into,
    g_bar_into,
    g_global_into,
    rotation_into,
)
from .stiffening import body_stiffening

EQ_ROTATION, EQ_TRANSLATION = 1, 2
TWO_WAY, ONE_WAY, RIGID, NO_MRF = (np.int64(code) for code in range(4))  # non-literal


# --------------------------------------------------------------------------- markers
@njit(cache=True)
def body_frames(F, IN, H, WF, WI, WH, q):
    """A(p), Ḡ(p), G(p) and B(p) of every body into the workspace."""
    T_b_kind = _i1(IN, H, T_B_KIND)
    T_b_start = _i1(IN, H, T_B_START)
    W_basis = _f3(WF, WH, W_BASIS)
    W_gbar = _f3(WF, WH, W_GBAR)
    W_gglob = _f3(WF, WH, W_GGLOB)
    W_rot = _f3(WF, WH, W_ROT)
    for b in range(T_b_kind.size):
        p = q[T_b_start[b] + 3 : T_b_start[b] + 7]
        rotation_into(p, W_rot[b])
        g_bar_into(p, W_gbar[b])
        g_global_into(p, W_gglob[b])
        d_rotated_basis_into(p, W_basis[b])


@njit(cache=True)
def marker_vectors(
    T_b_nm,
    T_b_start,
    T_k_base,
    T_k_body,
    T_k_shapes,
    W_basis,
    W_mk_j,
    W_mk_v,
    W_rot,
    W_s4,
    q,
    k,
    with_jac,
):
    """V (4, 3) of marker k into W_mk_v[k] — v_0 = R + A s_0, v_a = A s_a with
    s = base + shapes ξ — and, with ``with_jac``, J (4, 3, n_b) into W_mk_j[k]
    (∂v/∂R = I for the point, ∂v/∂p = ∂(A s)/∂p, ∂v/∂ξ = A U). Needs :func:`body_frames`."""
    b = T_k_body[k]
    v = W_mk_v[k]
    if b < 0:
        for a in range(4):
            for c in range(3):
                v[a, c] = T_k_base[k, a, c]
        return
    start = T_b_start[b]
    nm = T_b_nm[b]
    rot = W_rot[b]
    basis = W_basis[b]
    s = W_s4
    for a in range(4):
        for c in range(3):
            acc = T_k_base[k, a, c]
            for j in range(nm):
                acc += T_k_shapes[k, a, c, j] * q[start + 7 + j]
            s[a, c] = acc
    for a in range(4):
        for c in range(3):
            v[a, c] = rot[c, 0] * s[a, 0] + rot[c, 1] * s[a, 1] + rot[c, 2] * s[a, 2]
    for c in range(3):
        v[0, c] += q[start + c]
    if not with_jac:
        return
    jac = W_mk_j[k]
    n = 7 + nm
    for a in range(4):
        for c in range(3):
            for col in range(n):
                jac[a, c, col] = 0.0
    for c in range(3):
        jac[0, c, c] = 1.0
    for a in range(4):
        for c in range(3):
            for m in range(4):
                jac[a, c, 3 + m] = (
                    s[a, 0] * basis[0, 4 * c + m]
                    + s[a, 1] * basis[1, 4 * c + m]
                    + s[a, 2] * basis[2, 4 * c + m]
                )
            for j in range(nm):
                jac[a, c, 7 + j] = (
                    rot[c, 0] * T_k_shapes[k, a, 0, j]
                    + rot[c, 1] * T_k_shapes[k, a, 1, j]
                    + rot[c, 2] * T_k_shapes[k, a, 2, j]
                )


# --------------------------------------------------------------------------- constraints
@njit(cache=True)
def equation_coefficients(F, IN, H, WF, WI, WH, prof):
    """The time-dependent coefficients at t: C[5, 1] = −sin θ_d, C[5, 2] = cos θ_d of the
    rotation drives into W_coef and s(t) of the translation drives into W_offset (the
    joints' C_k are copied into W_coef once, by ``make_workspace``)."""
    T_e_drive = _i1(IN, H, T_E_DRIVE)
    T_e_kind = _i1(IN, H, T_E_KIND)
    W_coef = _f3(WF, WH, W_COEF)
    W_offset = _f1(WF, WH, W_OFFSET)
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
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_base = _f3(F, H, T_K_BASE)
    T_k_shapes = _f4(F, H, T_K_SHAPES)
    W_basis = _f3(WF, WH, W_BASIS)
    W_mk_j = _f4(WF, WH, W_MK_J)
    W_mk_v = _f3(WF, WH, W_MK_V)
    W_rot = _f3(WF, WH, W_ROT)
    W_s4 = _f2(WF, WH, W_S4)
    T_k_body = _i1(IN, H, T_K_BODY)
    equation_coefficients(F, IN, H, WF, WI, WH, prof)
    for k in range(T_k_body.size):
        marker_vectors(
            T_b_nm,
            T_b_start,
            T_k_base,
            T_k_body,
            T_k_shapes,
            W_basis,
            W_mk_j,
            W_mk_v,
            W_rot,
            W_s4,
            q,
            k,
            NO,
        )
    _phi_rows(F, IN, H, WF, WI, WH, q, prof, phi)


@njit(cache=True)
def _phi_rows(F, IN, H, WF, WI, WH, q, prof, phi):
    T_b_kind = _i1(IN, H, T_B_KIND)
    T_b_norm = _i1(IN, H, T_B_NORM)
    T_b_start = _i1(IN, H, T_B_START)
    T_c_coord = _i1(IN, H, T_C_COORD)
    T_c_drive = _i1(IN, H, T_C_DRIVE)
    T_c_row = _i1(IN, H, T_C_ROW)
    T_e_lin = _f3(F, H, T_E_LIN)
    T_e_mark = _i2(IN, H, T_E_MARK)
    T_e_npairs = _i1(IN, H, T_E_NPAIRS)
    T_e_pairs = _i3(IN, H, T_E_PAIRS)
    T_e_row = _i1(IN, H, T_E_ROW)
    W_coef = _f3(WF, WH, W_COEF)
    W_mk_v = _f3(WF, WH, W_MK_V)
    W_offset = _f1(WF, WH, W_OFFSET)
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
def _add_weighted_jacobian(T_b_nm, T_b_start, T_k_body, W_mk_j, k, wgt, first, scale, out):
    """out[cols of marker k's body] += scale Σ_a wgt[first + a] · J_k[a] (no-op on ground)."""
    b = T_k_body[k]
    if b < 0:
        return
    start = T_b_start[b]
    n = 7 + T_b_nm[b]
    jac = W_mk_j[k]
    for a in range(4):  # rows of the weights that are zero (most axes) cost nothing
        w0, w1, w2 = wgt[first + a, 0], wgt[first + a, 1], wgt[first + a, 2]
        if w0 == 0.0 and w1 == 0.0 and w2 == 0.0:
            continue
        for col in range(n):
            out[start + col] += scale * (w0 * jac[a, 0, col] + w1 * jac[a, 1, col]
                                         + w2 * jac[a, 2, col])


@njit(cache=True)
def constraints_with_jacobian(F, IN, H, WF, WI, WH, q, prof, lam, phi, r):
    """Φ into ``phi`` and r += Φ_qᵀλ (markers with Jacobians into the workspace)."""
    T_e_lin = _f3(F, H, T_E_LIN)
    W_coef = _f3(WF, WH, W_COEF)
    T_b_nm = _i1(IN, H, T_B_NM)
    T_k_base = _f3(F, H, T_K_BASE)
    T_k_shapes = _f4(F, H, T_K_SHAPES)
    W_basis = _f3(WF, WH, W_BASIS)
    W_mk_j = _f4(WF, WH, W_MK_J)
    W_mk_v = _f3(WF, WH, W_MK_V)
    W_rot = _f3(WF, WH, W_ROT)
    W_s4 = _f2(WF, WH, W_S4)
    T_b_kind = _i1(IN, H, T_B_KIND)
    T_b_norm = _i1(IN, H, T_B_NORM)
    T_b_start = _i1(IN, H, T_B_START)
    T_c_coord = _i1(IN, H, T_C_COORD)
    T_c_row = _i1(IN, H, T_C_ROW)
    T_e_mark = _i2(IN, H, T_E_MARK)
    T_e_npairs = _i1(IN, H, T_E_NPAIRS)
    T_e_pairs = _i3(IN, H, T_E_PAIRS)
    T_e_row = _i1(IN, H, T_E_ROW)
    T_k_body = _i1(IN, H, T_K_BODY)
    W_wgt = _f2(WF, WH, W_WGT)
    equation_coefficients(F, IN, H, WF, WI, WH, prof)
    for k in range(T_k_body.size):
        marker_vectors(
            T_b_nm,
            T_b_start,
            T_k_base,
            T_k_body,
            T_k_shapes,
            W_basis,
            W_mk_j,
            W_mk_v,
            W_rot,
            W_s4,
            q,
            k,
            YES,
        )
    _phi_rows(F, IN, H, WF, WI, WH, q, prof, phi)
    for b in range(T_b_kind.size):
        s = T_b_start[b] + 3
        lam_b = lam[T_b_norm[b]]
        for m in range(4):
            r[s + m] += 2.0 * q[s + m] * lam_b
    for c in range(T_c_row.size):
        r[T_c_coord[c]] += lam[T_c_row[c]]
    wgt = W_wgt
    for e in range(T_e_row.size):
        _equation_weights(T_e_lin, T_e_mark, T_e_npairs, T_e_pairs, W_coef, W_mk_v, e, wgt)
        lam_e = lam[T_e_row[e]]
        _add_weighted_jacobian(
            T_b_nm, T_b_start, T_k_body, W_mk_j, T_e_mark[e, 0], wgt, ROWS_I, lam_e, r
        )
        _add_weighted_jacobian(
            T_b_nm, T_b_start, T_k_body, W_mk_j, T_e_mark[e, 1], wgt, ROWS_J, lam_e, r
        )


@njit(cache=True)
def jacobian_dense(F, IN, H, WF, WI, WH, out):
    """Φ_q (n_c x n_q) into ``out`` from the markers and coefficients of the last
    :func:`constraints_with_jacobian` call (same q, t)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_k_body = _i1(IN, H, T_K_BODY)
    W_mk_j = _f4(WF, WH, W_MK_J)
    T_e_lin = _f3(F, H, T_E_LIN)
    W_coef = _f3(WF, WH, W_COEF)
    W_mk_v = _f3(WF, WH, W_MK_V)
    T_b_kind = _i1(IN, H, T_B_KIND)
    T_b_norm = _i1(IN, H, T_B_NORM)
    T_b_start = _i1(IN, H, T_B_START)
    T_c_coord = _i1(IN, H, T_C_COORD)
    T_c_row = _i1(IN, H, T_C_ROW)
    T_e_mark = _i2(IN, H, T_E_MARK)
    T_e_npairs = _i1(IN, H, T_E_NPAIRS)
    T_e_pairs = _i3(IN, H, T_E_PAIRS)
    T_e_row = _i1(IN, H, T_E_ROW)
    W_qcur = _f1(WF, WH, W_QCUR)
    W_wgt = _f2(WF, WH, W_WGT)
    T_j_row, T_j_col = _i1(IN, H, T_J_ROW), _i1(IN, H, T_J_COL)
    for k in range(T_j_row.size):  # entries off the pattern are never written: stay 0
        out[T_j_row[k], T_j_col[k]] = 0.0
    q_rows = W_qcur
    for b in range(T_b_kind.size):
        s = T_b_start[b] + 3
        for m in range(4):
            out[T_b_norm[b], s + m] = 2.0 * q_rows[s + m]
    for c in range(T_c_row.size):
        out[T_c_row[c], T_c_coord[c]] = 1.0
    wgt = W_wgt
    for e in range(T_e_row.size):
        _equation_weights(T_e_lin, T_e_mark, T_e_npairs, T_e_pairs, W_coef, W_mk_v, e, wgt)
        row = out[T_e_row[e]]
        _add_weighted_jacobian(
            T_b_nm, T_b_start, T_k_body, W_mk_j, T_e_mark[e, 0], wgt, ROWS_I, 1.0, row
        )
        _add_weighted_jacobian(
            T_b_nm, T_b_start, T_k_body, W_mk_j, T_e_mark[e, 1], wgt, ROWS_J, 1.0, row
        )


# --------------------------------------------------------------------------- bodies
@njit(cache=True)
def rigid_residual(
    T_b_start,
    T_gravity,
    T_r_io,
    T_r_mass,
    T_r_offset,
    T_r_s,
    W_gbar,
    W_rot,
    W_v3a,
    W_v3b,
    W_v3c,
    W_v3d,
    W_v3e,
    W_v3f,
    W_v3g,
    W_v3h,
    W_v3i,
    b,
    q,
    qd,
    qdd,
    r,
):
    """r[body b] += M q̈ − Q_v − Q_g of a rigid body (RigidBody.residual):
    r_R = m (R̈ − g) + A(ω̄ × (ω̄ × S) − S × α̅), r_p = Ḡᵀ(I_O α̅ + ω̄ × I_O ω̄ + S × Aᵀ(R̈ − g))."""
    st = T_b_start[b]
    gb = W_gbar[b]
    io = T_r_io[b]
    w, alpha, acc = W_v3a, W_v3b, W_v3c
    iw, moment, tmp = W_v3d, W_v3e, W_v3f
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
        ws, wws, sa = W_v3g, W_v3h, W_v3i
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
def full_mass(F, IN, H, WF, WI, WH, f, nm, q, st, full):
    """full ← the two-way M̄(ξ) with its ξξ block M_ff (coupling._full_mass)."""
    T_f_N = _f4(F, H, T_F_N)
    T_f_Q = _f5(F, H, T_F_Q)
    T_f_m0 = _f3(F, H, T_F_M0)
    T_f_mff = _f3(F, H, T_F_MFF)
    W_nlin = _f2(WF, WH, W_NLIN)
    n6 = 6 + nm
    for i in range(n6):
        for j in range(n6):
            full[i, j] = T_f_m0[f, i, j]
    nlin = W_nlin
    for i in range(n6):
        for c in range(3):
            acc = 0.0
            for j in range(nm):
                acc += q[st + 7 + j] * T_f_N[f, j, i, c]
            nlin[i, c] = acc
    for i in range(n6):
        for c in range(3):
            full[i, 3 + c] += nlin[i, c]
            full[3 + c, i] += nlin[i, c]
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
    T_f_m0 = _f3(F, H, T_F_M0)
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
def general_qbar(F, IN, H, WF, WI, WH, f, nm, mbar, w, xi, xid, use_modes, out):
    """out ← Q̄ (6+n) of the body-frame mass ``mbar`` at quasi-velocities w, ξ, ξ̇
    (coupling._general_qbar; ``use_modes`` False: the n = 0 terms only, ξ = ξ̇ = 0)."""
    T_f_N = _f4(F, H, T_F_N)
    T_f_Q = _f5(F, H, T_F_Q)
    W_h6 = _f1(WF, WH, W_H6)
    W_om3 = _f1(WF, WH, W_OM3)
    W_qs = _f3(WF, WH, W_QS)
    W_v3a = _f1(WF, WH, W_V3A)
    W_v3b = _f1(WF, WH, W_V3B)
    n6 = 6 + nm
    h, t1, t2 = W_h6, W_v3a, W_v3b
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
    om = W_om3
    om[0], om[1], om[2] = o0, o1, o2
    qs = W_qs
    if use_modes:
        for j in range(nm):  # qs_j = Σ_i ξ_i (Q_ij + Q_ji)
            for a in range(3):
                for c in range(3):
                    acc = 0.0
                    for i in range(nm):
                        acc += xi[i] * (T_f_Q[f, i, j, a, c] + T_f_Q[f, j, i, a, c])
                    qs[j, a, c] = acc
        # n_xid = Σ_j ξ̇_j N_j ; out -= n_xid @ ω ; out[3:6] -= n_xidᵀ w + (Σ ξ̇_j qs_j) ω
        for i in range(n6):
            acc = 0.0
            for j in range(nm):
                xd = xid[j]
                acc += xd * (
                    T_f_N[f, j, i, 0] * o0 + T_f_N[f, j, i, 1] * o1 + T_f_N[f, j, i, 2] * o2
                )
            out[i] -= acc
        for c in range(3):
            acc = 0.0
            for j in range(nm):
                xd = xid[j]
                for i in range(n6):
                    acc += xd * T_f_N[f, j, i, c] * w[i]
                for b in range(3):
                    acc += xd * qs[j, c, b] * om[b]
            out[3 + c] -= acc
    # out[6:] += (N_jᵀ w) · ω + ½ ωᵀ qs_j ω
    for j in range(nm):
        acc = 0.0
        for c in range(3):
            nw = 0.0
            for i in range(n6):
                nw += T_f_N[f, j, i, c] * w[i]
            acc += nw * om[c]
        if use_modes:
            quad = 0.0
            for a in range(3):
                for c in range(3):
                    quad += qs[j, a, c] * om[a] * om[c]
            acc += 0.5 * quad
        out[6 + j] += acc


@njit(cache=True)
def flexible_residual(F, IN, H, WF, WI, WH, b, q, qd, qdd, r):
    """r[body b] += Cᵀ z + [0; 0; K_ff ξ + D_ff ξ̇], z = M̄ C q̈ − Q̄ − gravity rows
    (coupling.body_residual in the body's coupling mode)."""
    T_b_flex = _i1(IN, H, T_B_FLEX)
    T_b_mode = _i1(IN, H, T_B_MODE)
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_f_inv_m0 = _f3(F, H, T_F_INV_M0)
    T_f_S = _f3(F, H, T_F_S)
    T_f_dff = _f3(F, H, T_F_DFF)
    T_f_kff = _f3(F, H, T_F_KFF)
    T_f_m0 = _f3(F, H, T_F_M0)
    T_f_mff = _f3(F, H, T_F_MFF)
    T_gravity = _f1(F, H, T_GRAVITY)
    W_full = _f2(WF, WH, W_FULL)
    W_gbar = _f3(WF, WH, W_GBAR)
    W_mass = _f2(WF, WH, W_MASS)
    W_q6 = _f1(WF, WH, W_Q6)
    W_qr6 = _f1(WF, WH, W_QR6)
    W_rigid = _f2(WF, WH, W_RIGID)
    W_rot = _f3(WF, WH, W_ROT)
    W_v3a = _f1(WF, WH, W_V3A)
    W_w6 = _f1(WF, WH, W_W6)
    W_wr6 = _f1(WF, WH, W_WR6)
    W_y6 = _f1(WF, WH, W_Y6)
    W_z6 = _f1(WF, WH, W_Z6)
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
    full_mass(F, IN, H, WF, WI, WH, f, nm, q, st, full)
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
        general_qbar(F, IN, H, WF, WI, WH, f, nm, full, w, xi, xid, YES, qb)
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
            general_qbar(F, IN, H, WF, WI, WH, f, nm, full, w, xi, xid, YES, qr)
            for i in range(6, n6):
                qb[i] = qr[i]
    for i in range(n6):
        acc = 0.0
        for j in range(n6):
            acc += mass[i, j] * y[j]
        z[i] = acc - qb[i]
    g = T_gravity
    if g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0:
        gbv = W_v3a
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
    if _i1(IN, H, T_F_STIFF)[f]:
        n = 7 + nm
        sdm = _f2(WF, WH, W_SDM)  # (m, k, c: not used without the tangents)
        basis = _f2(WF, WH, W_RBASIS)  # the tangents' bases: not read here
        body_stiffening(_f4(F, H, T_F_SKA)[f], _f4(F, H, T_F_SKD)[f], _f5(F, H, T_F_SXC)[f],
                        mode, nm, a, gb, basis, basis, q[st:st + n], qd[st:st + n],
                        qdd[st:st + n], T_gravity, r[st:st + n], NO, sdm, sdm, sdm, sdm,
                        _f3(WF, WH, W_SDDM), _f2(WF, WH, W_SDMM), _f2(WF, WH, W_SVEC),
                        _f3(WF, WH, W_SMAT), _f3(WF, WH, W_SD2), _f2(WF, WH, W_SMODES),
                        _f3(WF, WH, W_SP4), _f2(WF, WH, W_S34))


# --------------------------------------------------------------------------- forces
@njit(cache=True)
def _add_generalized_load(
    T_b_nm,
    T_b_start,
    T_k_base,
    T_k_body,
    T_k_phi,
    T_k_psi,
    T_k_shapes,
    W_gbar,
    W_gglob,
    W_rot,
    W_v3g,
    W_v3h,
    W_v3i,
    k,
    vec,
    kind,
    scale,
    q,
    r,
):
    """r[body of marker k] −= scale · Jacᵀ vec (Jac: angular_jac for a torque, kind 0,
    force_jac for a force, kind 1); r holds −Q."""
    b = T_k_body[k]
    if b < 0:
        return
    st = T_b_start[b]
    nm = T_b_nm[b]
    a = W_rot[b]
    loc = W_v3g  # Aᵀ vec
    for c in range(3):
        loc[c] = a[0, c] * vec[0] + a[1, c] * vec[1] + a[2, c] * vec[2]
    if kind == 0:  # [0, Gᵀ T, Ψᵀ Aᵀ T]
        g = W_gglob[b]
        for m in range(4):
            r[st + 3 + m] -= scale * (g[0, m] * vec[0] + g[1, m] * vec[1] + g[2, m] * vec[2])
        for j in range(nm):
            r[st + 7 + j] -= scale * (
                T_k_psi[k, 0, j] * loc[0] + T_k_psi[k, 1, j] * loc[1] + T_k_psi[k, 2, j] * loc[2]
            )
        return
    # [F, Ḡᵀ(u × F̄), Φᵀ F̄] with u the lever arm of the marker (deformed where seen)
    arm, uf = W_v3h, W_v3i
    for c in range(3):
        acc = T_k_base[k, 0, c]
        for j in range(nm):
            acc += T_k_shapes[k, 0, c, j] * q[st + 7 + j]
        arm[c] = acc
        r[st + c] -= scale * vec[c]
    cross_into(arm, loc, uf)
    gb = W_gbar[b]
    for m in range(4):
        r[st + 3 + m] -= scale * (gb[0, m] * uf[0] + gb[1, m] * uf[1] + gb[2, m] * uf[2])
    for j in range(nm):
        r[st + 7 + j] -= scale * (
            T_k_phi[k, 0, j] * loc[0] + T_k_phi[k, 1, j] * loc[1] + T_k_phi[k, 2, j] * loc[2]
        )


@njit(cache=True)
def _apply_load(F, IN, H, WF, WI, WH, k, vec, kind, scale, q, r):
    """r −= scale · Jac_kᵀ vec for marker k (:func:`_add_generalized_load` with the
    views it needs taken here)."""
    _add_generalized_load(
        _i1(IN, H, T_B_NM),
        _i1(IN, H, T_B_START),
        _f3(F, H, T_K_BASE),
        _i1(IN, H, T_K_BODY),
        _f3(F, H, T_K_PHI),
        _f3(F, H, T_K_PSI),
        _f4(F, H, T_K_SHAPES),
        _f3(WF, WH, W_GBAR),
        _f3(WF, WH, W_GGLOB),
        _f3(WF, WH, W_ROT),
        _f1(WF, WH, W_V3G),
        _f1(WF, WH, W_V3H),
        _f1(WF, WH, W_V3I),
        k,
        vec,
        kind,
        scale,
        q,
        r,
    )


@njit(cache=True)
def actuator_loads(F, IN, H, WF, WI, WH, q, u, r):
    """r −= Q of the joint actuators: u z_i on marker j, −u z_i on marker i (z_i the
    z axis of marker i, from its vectors in the workspace)."""
    T_a_kind = _i1(IN, H, T_A_KIND)
    T_a_mark = _i2(IN, H, T_A_MARK)
    W_mk_v = _f3(WF, WH, W_MK_V)
    W_v3f = _f1(WF, WH, W_V3F)
    vec = W_v3f
    for act in range(T_a_kind.size):
        ki, kj = T_a_mark[act, 0], T_a_mark[act, 1]
        zi = W_mk_v[ki][3]
        for c in range(3):
            vec[c] = u[act] * zi[c]
        _apply_load(F, IN, H, WF, WI, WH, kj, vec, T_a_kind[act], 1.0, q, r)
        _apply_load(F, IN, H, WF, WI, WH, ki, vec, T_a_kind[act], -1.0, q, r)


@njit(cache=True)
def spring_state(F, IN, H, WF, WI, WH, s, qd, u, with_spring):
    """(f [N], L [m], L̇ [m/s]) of spring–damper–actuator s, its unit vector i → j into
    W_v3f and ḋ = J_j q̇_j − J_i q̇_i into W_v3e, from the markers' vectors and Jacobians
    in the workspace; ``with_spring`` False leaves out k (L − L0) (its non-conservative
    part). Coincident markers with a nonzero force give f = NaN (no line of action)."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_s_mark = _i2(IN, H, T_S_MARK)
    T_s_par = _f2(F, H, T_S_PAR)
    T_s_act = _i1(IN, H, T_S_ACT)
    W_mk_v = _f3(WF, WH, W_MK_V)
    W_mk_j = _f4(WF, WH, W_MK_J)
    unit = _f1(WF, WH, W_V3F)
    d_dot = _f1(WF, WH, W_V3E)
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
def force_element_loads(F, IN, H, WF, WI, WH, q, qd, u, r, with_spring):
    """r −= Q of the spring–damper–actuators (f u on marker i, −f u on j: tension pulls
    them together) and of the constant point loads; ``with_spring`` False: the springs'
    non-conservative part only (damper and actuator, for the power of the outputs)."""
    W_mk_v = _f3(WF, WH, W_MK_V)
    T_s_mark = _i2(IN, H, T_S_MARK)
    T_l_mark = _i1(IN, H, T_L_MARK)
    T_l_kind = _i1(IN, H, T_L_KIND)
    T_l_frame = _i1(IN, H, T_L_FRAME)
    T_l_vec = _f2(F, H, T_L_VEC)
    vec = _f1(WF, WH, W_V3D)
    unit = _f1(WF, WH, W_V3F)
    for s in range(T_s_mark.shape[0]):
        force, _, _ = spring_state(F, IN, H, WF, WI, WH, s, qd, u, with_spring)
        if force == 0.0:
            continue
        for c in range(3):
            vec[c] = force * unit[c]
        for k, scale in ((T_s_mark[s, 0], 1.0), (T_s_mark[s, 1], -1.0)):
            _apply_load(F, IN, H, WF, WI, WH, k, vec, FORCE, scale, q, r)
    for ld in range(T_l_mark.size):
        k = T_l_mark[ld]
        for c in range(3):
            if T_l_frame[ld] == 1:  # components along the marker's x, y, z axes
                vec[c] = (W_mk_v[k, 1, c] * T_l_vec[ld, 0] + W_mk_v[k, 2, c] * T_l_vec[ld, 1]
                          + W_mk_v[k, 3, c] * T_l_vec[ld, 2])
            else:
                vec[c] = T_l_vec[ld, c]
        _apply_load(F, IN, H, WF, WI, WH, k, vec, T_l_kind[ld], 1.0, q, r)


@njit(cache=True)
def torsion_state(F, IN, H, WF, WI, WH, s, qd, store):
    """(θ [rad], θ̇ [rad/s]) of rotational spring–damper s: θ = atan2(x_j·y_i, x_j·x_i)
    (the angle of x_j about z_i) continued from the workspace's last angle of s
    (W_ANGLES, NaN: none yet; replaced by θ when ``store``), as ``System.unwrap`` does;
    θ̇ = z_iᵀ(ω_j − ω_i) with ω = Ω q̇ of the markers (ω_j − ω_i into W_V3E). Needs the
    marker vectors and body frames of the last residual in the workspace."""
    T_b_nm = _i1(IN, H, T_B_NM)
    T_b_start = _i1(IN, H, T_B_START)
    T_k_body = _i1(IN, H, T_K_BODY)
    T_k_psi = _f3(F, H, T_K_PSI)
    T_t_mark = _i2(IN, H, T_T_MARK)
    W_mk_v = _f3(WF, WH, W_MK_V)
    W_rot = _f3(WF, WH, W_ROT)
    W_gglob = _f3(WF, WH, W_GGLOB)
    W_angles = _f1(WF, WH, W_ANGLES)
    w_rel = _f1(WF, WH, W_V3E)
    ki, kj = T_t_mark[s, 0], T_t_mark[s, 1]
    sn, cs = 0.0, 0.0
    for c in range(3):
        sn += W_mk_v[kj, 1, c] * W_mk_v[ki, 2, c]
        cs += W_mk_v[kj, 1, c] * W_mk_v[ki, 1, c]
    angle = np.arctan2(sn, cs)
    last = W_angles[s]
    if not np.isnan(last):
        angle += 2 * np.pi * np.round((last - angle) / (2 * np.pi))
    if store:
        W_angles[s] = angle
    for c in range(3):
        w_rel[c] = 0.0
    for k, sign in ((kj, 1.0), (ki, -1.0)):
        b = T_k_body[k]
        if b < 0:
            continue
        st, nm = T_b_start[b], T_b_nm[b]
        g, a = W_gglob[b], W_rot[b]
        for c in range(3):  # ω = G(p) ṗ + A Ψ ξ̇
            acc = 0.0
            for m in range(4):
                acc += g[c, m] * qd[st + 3 + m]
            for j in range(nm):
                xid = qd[st + 7 + j]
                for e in range(3):
                    acc += a[c, e] * T_k_psi[k, e, j] * xid
            w_rel[c] += sign * acc
    rate = 0.0
    for c in range(3):
        rate += W_mk_v[ki, 3, c] * w_rel[c]
    return angle, rate


@njit(cache=True)
def torsion_loads(F, IN, H, WF, WI, WH, q, qd, r, store, with_spring):
    """r −= Q of the rotational spring–dampers: τ z_i on marker j, −τ z_i on i, with
    τ = −k (θ − θ0) − c θ̇ (:func:`torsion_state`; the angle stored when ``store``);
    ``with_spring`` False: the damper part −c θ̇ only (for the power of the outputs)."""
    T_t_mark = _i2(IN, H, T_T_MARK)
    T_t_par = _f2(F, H, T_T_PAR)
    W_mk_v = _f3(WF, WH, W_MK_V)
    vec = _f1(WF, WH, W_V3D)
    for s in range(T_t_mark.shape[0]):
        angle, rate = torsion_state(F, IN, H, WF, WI, WH, s, qd, store)
        torque = -T_t_par[s, 1] * rate
        if with_spring:
            torque -= T_t_par[s, 0] * (angle - T_t_par[s, 2])
        if torque == 0.0:
            continue
        ki, kj = T_t_mark[s, 0], T_t_mark[s, 1]
        for c in range(3):
            vec[c] = torque * W_mk_v[ki, 3, c]
        _apply_load(F, IN, H, WF, WI, WH, kj, vec, TORQUE, 1.0, q, r)
        _apply_load(F, IN, H, WF, WI, WH, ki, vec, TORQUE, -1.0, q, r)


@njit(cache=True)
def distributed_loads(F, IN, H, WF, WI, WH, q, r):
    """r −= Q of the distributed loads: [A W f̄; Ḡᵀ(arm × f̄); (ΣwΦ)ᵀ f̄] with f̄ = F (body
    axes) or AᵀF (global), arm = Σwū0 + ΣwΦ ξ where the coupling mode shows the
    deformation (two-way, no-Mrf), and no ξ rows in rigid mode."""
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
    f_bar = _f1(WF, WH, W_V3D)
    arm = _f1(WF, WH, W_V3E)
    moment = _f1(WF, WH, W_V3F)
    for d in range(T_d_body.size):
        b = T_d_body[d]
        st, nm, mode = T_b_start[b], T_b_nm[b], T_b_mode[b]
        a = W_rot[b]
        for c in range(3):
            if T_d_frame[d] == 1:
                f_bar[c] = T_d_vec[d, c]
            else:
                f_bar[c] = (a[0, c] * T_d_vec[d, 0] + a[1, c] * T_d_vec[d, 1]
                            + a[2, c] * T_d_vec[d, 2])
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


# --------------------------------------------------------------------------- all
# inlined into the entry point: not a library of its own to optimize and link again
@njit(cache=True, inline="always")
def dynamic_residual(F, IN, H, WF, WI, WH, q, qd, qdd, lam, prof, u, r, phi):
    """r = M q̈ + Φ_qᵀλ − Q and Φ at (q, q̇, q̈, λ); profiles ``prof`` (nd, 3), actuator
    values ``u`` (na,). Leaves the markers and frames in the workspace for
    :func:`jacobian_dense`."""
    T_b_start = _i1(IN, H, T_B_START)
    T_gravity = _f1(F, H, T_GRAVITY)
    T_r_io = _f3(F, H, T_R_IO)
    T_r_mass = _f1(F, H, T_R_MASS)
    T_r_offset = _i1(IN, H, T_R_OFFSET)
    T_r_s = _f2(F, H, T_R_S)
    W_gbar = _f3(WF, WH, W_GBAR)
    W_rot = _f3(WF, WH, W_ROT)
    W_v3a = _f1(WF, WH, W_V3A)
    W_v3b = _f1(WF, WH, W_V3B)
    W_v3c = _f1(WF, WH, W_V3C)
    W_v3d = _f1(WF, WH, W_V3D)
    W_v3e = _f1(WF, WH, W_V3E)
    W_v3f = _f1(WF, WH, W_V3F)
    W_v3g = _f1(WF, WH, W_V3G)
    W_v3h = _f1(WF, WH, W_V3H)
    W_v3i = _f1(WF, WH, W_V3I)
    T_b_kind = _i1(IN, H, T_B_KIND)
    W_qcur = _f1(WF, WH, W_QCUR)
    for i in range(q.size):
        r[i] = 0.0
        W_qcur[i] = q[i]
    body_frames(F, IN, H, WF, WI, WH, q)
    constraints_with_jacobian(F, IN, H, WF, WI, WH, q, prof, lam, phi, r)
    for b in range(T_b_kind.size):
        if T_b_kind[b] == 0:
            rigid_residual(
                T_b_start,
                T_gravity,
                T_r_io,
                T_r_mass,
                T_r_offset,
                T_r_s,
                W_gbar,
                W_rot,
                W_v3a,
                W_v3b,
                W_v3c,
                W_v3d,
                W_v3e,
                W_v3f,
                W_v3g,
                W_v3h,
                W_v3i,
                b,
                q,
                qd,
                qdd,
                r,
            )
        else:
            flexible_residual(F, IN, H, WF, WI, WH, b, q, qd, qdd, r)
    actuator_loads(F, IN, H, WF, WI, WH, q, u, r)
    force_element_loads(F, IN, H, WF, WI, WH, q, qd, u, r, YES)
    distributed_loads(F, IN, H, WF, WI, WH, q, r)
    torsion_loads(F, IN, H, WF, WI, WH, q, qd, r, YES, YES)


@njit(cache=True)
def phi_only(F, IN, H, WF, WI, WH, q, prof, phi):
    """Φ at q (frames and marker vectors, no Jacobians)."""
    body_frames(F, IN, H, WF, WI, WH, q)
    constraint_values(F, IN, H, WF, WI, WH, q, prof, phi)
