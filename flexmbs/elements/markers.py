"""What every element kind sees of a marker, in compiled code (docs/compiled.md).

The frames of the bodies (A(p), Ḡ(p), G(p), B(p)); a marker's four vectors
V = (point, x, y, z) and their Jacobians; the Hessian of wᵀV and the rates ∂(J q̇)/∂q
of its point and angular Jacobians; and a force or torque applied at a marker — the
generalized load Jᵀf on its body (rigid or flexible, in every coupling mode) with its
tangents, alone or as an action–reaction pair on two markers. The NumPy counterparts are
the bodies' ``marker_frame``, ``marker_hessian``, ``marker_jac_rate``, ``force_jac`` and
``angular_jac`` and their ``*_tangent`` methods (:mod:`flexmbs.model.bodies`).
"""

from __future__ import annotations

import numpy as np

from ..compiled._jit import njit
from ..compiled.packing import (
    ROWS_I,
    ROWS_J,
    W_BASIS,
    W_GBAR,
    W_GGLOB,
    W_HBASIS,
    W_HCS,
    W_HHESS,
    W_HJAC,
    W_HSW,
    W_HUNIT,
    W_HV,
    W_MK_J,
    W_MK_LOAD,
    W_MK_V,
    W_ROT,
    W_S4,
    W_X3,
    W_X3N,
    W_X34,
    W_XBASIS,
    W_XBLK,
    W_XP,
    YES,
    floats1,
    floats2,
    floats3,
    floats4,
    ints1,
)
from ..compiled.rotations import (
    conjugate_basis_into,
    cross_into,
    d_rot_t_into,
    d_rotated_basis_into,
    d_rotated_into,
    g_bar_into,
    g_bar_t_jac_rows,
    g_global_into,
    rotation_into,
)
from .registry import header_rows

#: Index of a marker's point among its four vectors (point, x, y, z); non-literal.
POINT = np.int64(0)

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_KIND, T_B_NM, T_B_START, T_K_BASE, T_K_BODY, T_K_PHI = header_rows(
    "b_kind", "b_nm", "b_start", "k_base", "k_body", "k_phi")
T_K_PSI, T_K_SHAPES = header_rows(
    "k_psi", "k_shapes")


@njit(cache=True)
def body_frames(F, IN, H, WF, WI, WH, q):
    """A(p), Ḡ(p), G(p) and B(p) of every body into the workspace."""
    for b in range(ints1(IN, H, T_B_KIND).size):
        body_frame(F, IN, H, WF, WI, WH, q, b)


@njit(cache=True)
def body_frame(F, IN, H, WF, WI, WH, q, b):
    """A(p), Ḡ(p), G(p) and B(p) of body b into the workspace (nothing for ground,
    b < 0)."""
    if b < 0:
        return
    st = ints1(IN, H, T_B_START)[b]
    p = q[st + 3:st + 7]
    rotation_into(p, floats3(WF, WH, W_ROT)[b])
    g_bar_into(p, floats3(WF, WH, W_GBAR)[b])
    g_global_into(p, floats3(WF, WH, W_GGLOB)[b])
    d_rotated_basis_into(p, floats3(WF, WH, W_BASIS)[b])


@njit(cache=True)
def marker_vectors(F, IN, H, WF, WI, WH, q, k, with_jac):
    """V (4, 3) of marker k into W_mk_v[k] — v_0 = R + A s_0, v_a = A s_a with
    s = base + shapes ξ — and, with ``with_jac``, J (4, 3, n_b) into W_mk_j[k]
    (∂v/∂R = I for the point, ∂v/∂p = ∂(A s)/∂p, ∂v/∂ξ = A U). Needs :func:`body_frames`."""
    T_b_nm, T_b_start = ints1(IN, H, T_B_NM), ints1(IN, H, T_B_START)
    T_k_base, T_k_body = floats3(F, H, T_K_BASE), ints1(IN, H, T_K_BODY)
    T_k_shapes = floats4(F, H, T_K_SHAPES)
    W_basis, W_mk_j = floats3(WF, WH, W_BASIS), floats4(WF, WH, W_MK_J)
    W_mk_v = floats3(WF, WH, W_MK_V)
    W_rot, W_s4 = floats3(WF, WH, W_ROT), floats2(WF, WH, W_S4)
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
        _body_vector_into(T_k_base, T_k_shapes, k, a, nm, q, start, s[a])
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


@njit(cache=True)
def all_marker_vectors(F, IN, H, WF, WI, WH, q, with_jac):
    """:func:`marker_vectors` of every marker (with their Jacobians if ``with_jac``)."""
    for k in range(ints1(IN, H, T_K_BODY).size):
        marker_vectors(F, IN, H, WF, WI, WH, q, k, with_jac)


@njit(cache=True)
def _marker_hessian(F, IN, H, WF, WI, WH, k, q, wgt, first, out, lo):
    """out[lo:, lo:] += ∂²/∂q² Σ_a wgt[first+a]ᵀ v_a(q) of marker k (A quadratic in p;
    p–ξ mixed terms from ∂A/∂p linear in s; R and ξ–ξ terms vanish)."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_k_base = floats3(F, H, T_K_BASE)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_k_shapes = floats4(F, H, T_K_SHAPES)
    b = T_k_body[k]
    if b < 0:
        return
    st = T_b_start[b]
    nm = T_b_nm[b]
    hsw = floats3(WF, WH, W_HSW)  # scratch: s (4x3), then Σ_a s_a wᵀ in its first rows
    s, sw = hsw[0], hsw[1]
    unit, basis = floats1(WF, WH, W_HUNIT), floats2(WF, WH, W_HBASIS)
    for a in range(4):
        _body_vector_into(T_k_base, T_k_shapes, k, a, nm, q, st, s[a])
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
def _scatter_n(F, IN, H, WF, WI, WH, bi, bj, ni, n, block, top, scale):
    """top[idx, idx] += scale block[:n, :n], idx = body i's ni coordinates then body
    j's."""
    T_b_start = ints1(IN, H, T_B_START)
    st_i = T_b_start[bi] if ni > 0 else 0
    st_j = T_b_start[bj] - ni if n > ni else 0
    for r in range(n):
        gr = st_i + r if r < ni else st_j + r
        for c in range(n):
            gc = st_i + c if c < ni else st_j + c
            top[gr, gc] += scale * block[r, c]


@njit(cache=True, inline="always")  # (small and called per vector: no call)
def _body_vector_into(T_k_base, T_k_shapes, k, a, nm, q, st, out):
    """out ← s_a(ξ) = base_a + U_a ξ: vector a (0 the point, 1–3 the axes) of marker k in
    body axes, deformed where the coupling mode shows it."""
    for c in range(3):
        acc = T_k_base[k, a, c]
        for j in range(nm):
            acc += T_k_shapes[k, a, c, j] * q[st + 7 + j]
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
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_k_base = floats3(F, H, T_K_BASE)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_k_phi = floats3(F, H, T_K_PHI)
    T_k_psi = floats3(F, H, T_K_PSI)
    T_k_shapes = floats4(F, H, T_K_SHAPES)
    W_gbar = floats3(WF, WH, W_GBAR)
    W_gglob = floats3(WF, WH, W_GGLOB)
    W_rot = floats3(WF, WH, W_ROT)
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
    arm = floats2(WF, WH, W_X3)[0]
    _body_vector_into(T_k_base, T_k_shapes, k, POINT, nm, q, st, arm)
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
    of ``kind`` of marker k (marker_kinematics.force_jac_tangent_kernel /
    angular_jac_tangent_kernel)."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_k_base = floats3(F, H, T_K_BASE)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_k_phi = floats3(F, H, T_K_PHI)
    T_k_psi = floats3(F, H, T_K_PSI)
    T_k_shapes = floats4(F, H, T_K_SHAPES)
    W_gbar = floats3(WF, WH, W_GBAR)
    W_rot = floats3(WF, WH, W_ROT)
    x3, x34 = floats2(WF, WH, W_X3), floats3(WF, WH, W_X34)
    basis_c, pc = floats3(WF, WH, W_XBASIS)[0], floats1(WF, WH, W_XP)
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
    _body_vector_into(T_k_base, T_k_shapes, k, POINT, nm, q, st, arm)
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
    """out[:, col0:col0+7+n_b] ← sign ∂(J q̇)/∂q of marker k's point
    (:func:`_vector_jacobian_rate_into` of vector 0)."""
    _vector_jacobian_rate_into(F, IN, H, WF, WI, WH, k, POINT, q, qd, out, col0, sign)


@njit(cache=True)
def _vector_jacobian_rate_into(F, IN, H, WF, WI, WH, k, a, q, qd, out, col0, sign):
    """out[:, col0:col0+7+n_b] ← sign ∂(J_a q̇)/∂q of marker k's vector a (0 the point,
    1–3 the axes), J_a = ∂(δ_a0 R + A s_a(ξ))/∂q: p columns ∂(A s_a)/∂p at ṗ plus
    ∂(A U_a ξ̇)/∂p, ξ columns Ȧ U_a (marker_kinematics.marker_jac_rate_kernel)."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_k_base = floats3(F, H, T_K_BASE)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_k_shapes = floats4(F, H, T_K_SHAPES)
    W_basis = floats3(WF, WH, W_BASIS)
    x3, x34, basis_pd = floats2(WF, WH, W_X3), floats3(WF, WH, W_X34), floats3(WF, WH, W_XBASIS)[1]
    b = T_k_body[k]
    nm, st = T_b_nm[b], T_b_start[b]
    basis = W_basis[b]
    arm, arm_rate = x3[0], x3[2]
    _body_vector_into(T_k_base, T_k_shapes, k, a, nm, q, st, arm)  # s_a(ξ)
    _modal_rate_into(T_k_shapes[k, a], nm, qd, st, arm_rate)  # U_a ξ̇
    d_rotated_basis_into(qd[st + 3:st + 7], basis_pd)
    d_rotated_into(basis_pd, arm, x34[1])
    d_rotated_into(basis, arm_rate, x34[2])
    for i in range(3):
        for j in range(3):
            out[i, col0 + j] = 0.0
        for m in range(4):
            out[i, col0 + 3 + m] = sign * (x34[1, i, m] + x34[2, i, m])
    for j in range(nm):  # ∂(A U_j)/∂p ṗ
        s0, s1, s2 = T_k_shapes[k, a, 0, j], T_k_shapes[k, a, 1, j], T_k_shapes[k, a, 2, j]
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
    (marker_kinematics.angular_rate_jac_kernel)."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_b_start = ints1(IN, H, T_B_START)
    T_k_body = ints1(IN, H, T_K_BODY)
    T_k_psi = floats3(F, H, T_K_PSI)
    W_basis = floats3(WF, WH, W_BASIS)
    x3, x34 = floats2(WF, WH, W_X3), floats3(WF, WH, W_X34)
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
def _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, kind, q, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of a load g on marker j with its reaction on marker
    i, Q = [−Jac_iᵀ g; Jac_jᵀ g] (Jac of ``kind``: jac[:, :ni] marker i's, jac[:, ni:n]
    marker j's, with n_i, n_j the bodies' column counts, 0 on the ground):
    K = −∂Q/∂q, C = −∂Q/∂q̇ from g at the
    state and ∂g/∂q, ∂g/∂q̇ (3, n) over both bodies' columns, plus the Jacobians' own
    q-dependence at fixed g (marker_pairs.pair_load_tangent). The caller leaves them in
    the load tangents' scratch: jac = x3n[0], g = x3[3], ∂g/∂q = x3n[4], ∂g/∂q̇ = x3n[5]."""
    x3n = floats3(WF, WH, W_X3N)
    jac, vec, g_dq, g_dqd = x3n[0], floats2(WF, WH, W_X3)[3], x3n[4], x3n[5]
    T_k_body, T_b_nm = ints1(IN, H, T_K_BODY), ints1(IN, H, T_B_NM)
    blocks = floats3(WF, WH, W_XBLK)
    k_blk, c_blk = blocks[0], blocks[1]
    bi, bj = T_k_body[ki], T_k_body[kj]
    ni = 7 + T_b_nm[bi] if bi >= 0 else 0
    nj = 7 + T_b_nm[bj] if bj >= 0 else 0
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


@njit(cache=True)
def _apply_load(F, IN, H, WF, WI, WH, k, vec, kind, scale, q, r):
    """r[body of marker k] −= scale · Jacᵀ vec (Jac: angular_jac for a torque, kind 0,
    force_jac for a force, kind 1); r holds −Q."""
    T_b_nm, T_b_start = ints1(IN, H, T_B_NM), ints1(IN, H, T_B_START)
    T_k_base, T_k_body = floats3(F, H, T_K_BASE), ints1(IN, H, T_K_BODY)
    T_k_phi, T_k_psi = floats3(F, H, T_K_PHI), floats3(F, H, T_K_PSI)
    T_k_shapes = floats4(F, H, T_K_SHAPES)
    W_gbar, W_gglob = floats3(WF, WH, W_GBAR), floats3(WF, WH, W_GGLOB)
    W_rot = floats3(WF, WH, W_ROT)
    b = T_k_body[k]
    if b < 0:
        return
    st = T_b_start[b]
    nm = T_b_nm[b]
    a = W_rot[b]
    loc = floats2(WF, WH, W_MK_LOAD)[0]  # Aᵀ vec
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
    mk_load = floats2(WF, WH, W_MK_LOAD)
    arm, uf = mk_load[1], mk_load[2]
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
def bilinear_hessian_into(F, IN, H, WF, WI, WH, ki, kj, q, top, scale):
    """top += scale ∂²/∂q² (Σ_ab C_ab v_aᵀv_b + Σ_a l_aᵀv_a) over markers ki and kj's
    vectors V = (r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j), with C (8, 8) and l (8, 3) given
    in the workspace (``hcs[0]``, ``hv[0]``): Σ_ab (C + Cᵀ)_ab J_aᵀ J_b plus the markers'
    Hessians with the weights (C + Cᵀ) V + l. The Hessian of any bilinear form in two
    markers' vectors (joints and drives, bushings). Needs the markers of the residual."""
    T_b_nm = ints1(IN, H, T_B_NM)
    T_k_body = ints1(IN, H, T_K_BODY)
    W_mk_j = floats4(WF, WH, W_MK_J)
    W_mk_v = floats3(WF, WH, W_MK_V)
    hcs, hv = floats3(WF, WH, W_HCS), floats3(WF, WH, W_HV)  # scratch: nothing allocated
    csum, sym, lsum, vecs, wgt = hcs[0], hcs[1], hv[0], hv[1], hv[2]
    hess, jac = floats2(WF, WH, W_HHESS), floats3(WF, WH, W_HJAC)
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


@njit(cache=True)
def add_weighted_jacobian(T_b_nm, T_b_start, T_k_body, W_mk_j, k, wgt, first, scale, out):
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
