"""Geometric stiffening of a flexible body in compiled code (docs/theory_stiffening.md,
docs/compiled.md): the kernels' copy of
:class:`flexmbs.elements.flexible_body.stiffening_reference.StiffeningTerms`.

Per stiffened body the tables hold ``ka`` = [K_{a_x}, K_{a_y}, K_{a_z}], ``kd`` =
[K_{ω̇_x}, …] (3, M, M) and ``xc`` (3, 3, M, M) with Ξ_ab(ξ) = ξᵀ xc[a, b] ξ. The mass
increment ΔM̄(ξ), its ξ-derivatives, the Boltzmann–Hamel quadratic-velocity form and the
closed-form tangents are those of the NumPy class, term by term.
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    W_BASIS,
    W_FMKC,
    W_GBAR,
    W_RBASIS,
    W_ROT,
    W_S34,
    W_SD2,
    W_SDDM,
    W_SDM,
    W_SDMM,
    W_SMAT,
    W_SMODES,
    W_SP4,
    W_SVEC,
    floats1,
    floats2,
    floats3,
    floats4,
    floats5,
    ints1,
    packed_view,
)
from ...compiled.quadratic_velocity import frame_terms, frame_terms_jacobian, row_dot
from ...compiled.rotations import (
    add_ct_times,
    add_ct_x_c,
    d_rot_t_into,
    d_rotated_into,
    g_bar_into,
    g_bar_t_jac_rows,
)
from ..registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_FLEX, T_B_MODE, T_B_NM, T_B_START, T_F_SKA, T_F_SKD = header_rows(
    "b_flex", "b_mode", "b_nm", "b_start", "f_ska", "f_skd")
T_F_SXC, T_GRAVITY = header_rows(
    "f_sxc", "gravity")

#: coupling codes (tables.COUPLING_CODES)
_TWO_WAY, _ONE_WAY, _RIGID, _NO_MRF = (np.int64(code) for code in range(4))  # non-literal


@njit(cache=True)
def _put_rt_component(out, k, sk):
    """The entries of s_k in out[:3, 3:6] = −s̃ and in its transpose below (the diagonal
    stays as it is)."""
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    out[k1, 3 + k2] = sk
    out[k2, 3 + k1] = -sk
    out[3 + k2, k1] = sk
    out[3 + k1, k2] = -sk


@njit(cache=True)
def _zero(out, n6):
    for i in range(n6):
        for j in range(n6):
            out[i, j] = 0.0


@njit(cache=True)
def delta_mass(ka, kd, xc, nm, xi, out):
    """ΔM̄(ξ) into out[:6+nm, :6+nm] (zeroed first)."""
    n6 = 6 + nm
    _zero(out, n6)
    for k in range(3):
        sk = 0.0
        for i in range(nm):
            ba = 0.0
            bd = 0.0
            for j in range(nm):
                ba += ka[k, i, j] * xi[j]
                bd += kd[k, i, j] * xi[j]
            sk += 0.5 * xi[i] * ba
            out[k, 6 + i] = ba
            out[6 + i, k] = ba
            out[3 + k, 6 + i] = bd
            out[6 + i, 3 + k] = bd
        _put_rt_component(out, k, sk)
    for a in range(3):
        for b in range(3):
            acc = 0.0
            for i in range(nm):
                for j in range(nm):
                    acc += xi[i] * xc[a, b, i, j] * xi[j]
            out[3 + a, 3 + b] = -acc


@njit(cache=True)
def delta_mass_dxi(ka, kd, xc, nm, xi, out):
    """∂ΔM̄/∂ξ_j into out[j, :6+nm, :6+nm] for j < nm (zeroed first)."""
    n6 = 6 + nm
    for j in range(nm):
        d = out[j]
        _zero(d, n6)
        for k in range(3):
            acc = 0.0
            for i in range(nm):
                acc += ka[k, j, i] * xi[i]
            _put_rt_component(d, k, acc)
            for i in range(nm):
                d[k, 6 + i] = ka[k, i, j]
                d[6 + i, k] = ka[k, i, j]
                d[3 + k, 6 + i] = kd[k, i, j]
                d[6 + i, 3 + k] = kd[k, i, j]
        for a in range(3):
            for b in range(3):
                acc = 0.0
                for i in range(nm):
                    acc += xc[a, b, j, i] * xi[i]
                d[3 + a, 3 + b] = -2.0 * acc


@njit(cache=True)
def delta_mass_d2(ka, xc, nm, i, j, out):
    """∂²ΔM̄/∂ξ_i∂ξ_j into out[:6+nm, :6+nm] (zeroed first; constant)."""
    _zero(out, 6 + nm)
    for k in range(3):
        _put_rt_component(out, k, ka[k, i, j])
    for a in range(3):
        for b in range(3):
            out[3 + a, 3 + b] = -2.0 * xc[a, b, i, j]


@njit(cache=True)
def qbar_pair(dm, ddm, nm, w1, w2, out):
    """out ← B(w1, w2), the bilinear form with Q̄_s(w) = B(w, w): the Boltzmann–Hamel
    quadratic-velocity vector of the mass dm with ξ-derivatives ddm (elastic rates in
    Ṁ̄ from w1)."""
    n6 = 6 + nm
    frame_terms(dm, n6, w1, w2, out)
    for j in range(nm):  # − Σ_j ξ̇1_j (∂ΔM̄/∂ξ_j) w2
        rate = w1[6 + j]
        if rate != 0.0:
            d = ddm[j]
            for r in range(n6):
                out[r] -= rate * row_dot(d, r, w2, n6)
    for j in range(nm):
        acc = 0.0
        for r in range(n6):
            for c in range(n6):
                acc += w1[r] * ddm[j, r, c] * w2[c]
        out[6 + j] += 0.5 * acc


@njit(cache=True)
def qbar_pair_jacobian(dm, ddm, nm, w, out):
    """out ← ∂Q̄_s(w)/∂w (6+nm square) of Q̄_s(w) = B(w, w) with the form of
    :func:`qbar_pair`: the frame terms of ΔM̄ (quadratic_velocity.frame_terms_jacobian),
    − Σ_j ξ̇_j ∂ΔM̄/∂ξ_j w and ½ wᵀ ∂ΔM̄/∂ξ_j w in row 6 + j. O(nm (6+nm)²) work
    instead of the 2 (6+nm) forms of the column-by-column product."""
    n6 = 6 + nm
    frame_terms_jacobian(dm, n6, w, 0, out)
    for j in range(nm):
        xd = w[6 + j]
        d = ddm[j]
        for r in range(n6):
            # − ξ̇_j (∂ΔM̄/∂ξ_j w)_r: ∂/∂ξ̇_j, and ∂/∂w_k through w
            out[r, 6 + j] -= row_dot(d, r, w, n6)
            if xd != 0.0:
                for k in range(n6):
                    out[r, k] -= xd * d[r, k]
        for k in range(n6):  # ½ wᵀ (∂ΔM̄/∂ξ_j) w
            acc = 0.0
            for c in range(n6):
                acc += (d[k, c] + d[c, k]) * w[c]
            out[6 + j, k] += 0.5 * acc


@njit(cache=True)
def _mode_rows(mat, nm, mode):
    """The coupling mode's part of ΔM̄ (stiffening.StiffeningTerms.mode_mass), in place."""
    n6 = 6 + nm
    if mode == _NO_MRF:
        for r in range(6):
            for c in range(6, n6):
                mat[r, c] = 0.0
                mat[c, r] = 0.0
    elif mode != _TWO_WAY:
        for r in range(6):
            for c in range(n6):
                mat[r, c] = 0.0
        if mode == _RIGID:
            for r in range(6, n6):
                for c in range(n6):
                    mat[r, c] = 0.0


@njit(cache=True)
def mkc_views(WF, WH, n):
    """(M, K, C) of a flexible body as (n, n) views of the rows of the workspace's
    ``fmkc`` (reshape would carry an error path)."""
    row0, width = WH[W_FMKC, 1], floats2(WF, WH, W_FMKC).shape[1]
    return (packed_view(WF, row0, (n, n)), packed_view(WF, row0 + width, (n, n)),
            packed_view(WF, row0 + 2 * width, (n, n)))


@njit(cache=True)
def body_stiffening(F, IN, H, WF, WI, WH, b, q, qd, qdd, r, tangents):
    """r (7+nm) += flexible body b's stiffening residual Cᵀ(ΔM̄_m y − Q̄_s − ΔM̄_{:,R} ḡ)
    at (q, q̇, q̈); with ``tangents`` also M += Cᵀ ΔM̄_m C and (K, C) += ∂/∂(q, q̇) of that
    residual, into the body's matrices in the workspace (:func:`mkc_views`).

    Reads the body's frames (A, Ḡ, the basis of ∂(A s)/∂p) and, for the tangents, the
    conjugate basis (``rbasis``) from the workspace, the stiffening matrices K_a, K_ω̇
    and Ξ's coefficients from the tables. Scratch (the workspace's, sized for the most
    modes M): ``sdm``, ``sdmm`` (6+M, 6+M), ``sddm`` and ``sd2`` (max(M, 1), 6+M, 6+M),
    ``svec`` (6, 6+M), ``smat`` (3, 7+M, 7+M), ``smodes`` (6+M, max(M, 1)), ``sp4``
    (3, 6+M, 4) and ``s34`` (3, 4): nothing allocated."""
    st, nm = ints1(IN, H, T_B_START)[b], ints1(IN, H, T_B_NM)[b]
    f, mode = ints1(IN, H, T_B_FLEX)[b], ints1(IN, H, T_B_MODE)[b]
    ka, kd, xc = floats4(F, H, T_F_SKA)[f], floats4(F, H, T_F_SKD)[f], floats5(F, H, T_F_SXC)[f]
    a, gb = floats3(WF, WH, W_ROT)[b], floats3(WF, WH, W_GBAR)[b]
    basis, basis_c = floats3(WF, WH, W_BASIS)[b], floats2(WF, WH, W_RBASIS)
    n_b = 7 + nm
    qb, qdb, qddb = q[st:st + n_b], qd[st:st + n_b], qdd[st:st + n_b]
    g = floats1(F, H, T_GRAVITY)
    dm, dm_m, vec = floats2(WF, WH, W_SDM), floats2(WF, WH, W_SDMM), floats2(WF, WH, W_SVEC)
    ddm, sd2, smat = floats3(WF, WH, W_SDDM), floats3(WF, WH, W_SD2), floats3(WF, WH, W_SMAT)
    smodes, sp4, s34 = floats2(WF, WH, W_SMODES), floats3(WF, WH, W_SP4), floats2(WF, WH, W_S34)
    if mode == _RIGID:
        return
    n6 = 6 + nm
    delta_mass(ka, kd, xc, nm, qb[7:], dm)
    delta_mass_dxi(ka, kd, xc, nm, qb[7:], ddm)
    for i in range(n6):
        for j in range(n6):
            dm_m[i, j] = dm[i, j]
    _mode_rows(dm_m, nm, mode)
    y, w, qs, z, g_body = vec[0], vec[1], vec[2], vec[3], vec[4]
    for i in range(3):
        y[i], w[i], g_body[i] = 0.0, 0.0, 0.0
        y[3 + i], w[3 + i] = 0.0, 0.0
        for j in range(3):
            y[i] += a[j, i] * qddb[j]
            w[i] += a[j, i] * qdb[j]
            g_body[i] += a[j, i] * g[j]
        for j in range(4):
            y[3 + i] += gb[i, j] * qddb[3 + j]
            w[3 + i] += gb[i, j] * qdb[3 + j]
    for j in range(nm):
        y[6 + j] = qddb[7 + j]
        w[6 + j] = qdb[7 + j]
    qbar_pair(dm, ddm, nm, w, w, qs)
    for i in range(n6):
        z[i] = (0.0 if mode == _ONE_WAY and i < 6 else
                row_dot(dm_m, i, y, n6) - qs[i] - row_dot(dm, i, g_body, 3))
    for i in range(3):  # r += C(p)ᵀ z, C(p) = diag(Aᵀ, Ḡ, I)
        r[i] += a[i, 0] * z[0] + a[i, 1] * z[1] + a[i, 2] * z[2]
    for i in range(4):
        r[3 + i] += gb[0, i] * z[3] + gb[1, i] * z[4] + gb[2, i] * z[5]
    for j in range(nm):
        r[7 + j] += z[6 + j]
    if not tangents:
        return
    m, k, c = mkc_views(WF, WH, n_b)
    dz_dw, dj, tmp = smat[0], smat[1], smat[2]
    dz_dxi, t1 = smodes, vec[5]
    dy_dp, dw_dp, dz_dp = sp4[0], sp4[1], sp4[2]
    add_ct_x_c(a, gb, nm, dm_m, tmp, m, 1.0)  # m += Cᵀ ΔM̄_m C
    qbar_pair_jacobian(dm, ddm, nm, w, dz_dw)
    for row in range(n6):
        for col in range(n6):
            dz_dw[row, col] = -dz_dw[row, col]
    for j in range(nm):  # ∂z/∂ξ_j = (∂ΔM̄_m/∂ξ_j) y − ∂Q̄_s/∂ξ_j − (∂ΔM̄/∂ξ_j)[:, :3] ḡ
        for i in range(nm):
            delta_mass_d2(ka, xc, nm, j, i, sd2[i])
        qbar_pair(ddm[j], sd2, nm, w, w, t1)
        dd = ddm[j]
        for row in range(n6):
            for col in range(n6):
                dj[row, col] = dd[row, col]
        _mode_rows(dj, nm, mode)
        for row in range(n6):
            dz_dxi[row, j] = row_dot(dj, row, y, n6) - t1[row] - row_dot(dd, row, g_body, 3)
    # ∂y/∂p, ∂w/∂p: [∂(Aᵀ R̈)/∂p; −Ḡ(p̈); 0] and [∂(Aᵀ Ṙ)/∂p; −Ḡ(ṗ); 0]
    for row in range(n6):
        for col in range(4):
            dy_dp[row, col], dw_dp[row, col] = 0.0, 0.0
    d_rot_t_into(basis_c, qddb[:3], s34)
    for row in range(3):
        for col in range(4):
            dy_dp[row, col] = s34[row, col]
    d_rot_t_into(basis_c, qdb[:3], s34)
    for row in range(3):
        for col in range(4):
            dw_dp[row, col] = s34[row, col]
    g_bar_into(qddb[3:7], s34)
    for row in range(3):
        for col in range(4):
            dy_dp[3 + row, col] = -s34[row, col]
    g_bar_into(qdb[3:7], s34)
    for row in range(3):
        for col in range(4):
            dw_dp[3 + row, col] = -s34[row, col]
    d_rot_t_into(basis_c, g, s34)  # ∂z/∂p = ΔM̄_m ∂y/∂p + ∂z/∂w ∂w/∂p − ΔM̄[:, :3] ∂ḡ/∂p
    for row in range(n6):
        for col in range(4):
            acc = 0.0
            for l1 in range(6):
                acc += dm_m[row, l1] * dy_dp[l1, col] + dz_dw[row, l1] * dw_dp[l1, col]
            for l1 in range(3):
                acc -= dm[row, l1] * s34[l1, col]
            dz_dp[row, col] = acc
    if mode == _ONE_WAY:
        for row in range(6):
            for col in range(n6):
                dz_dw[row, col] = 0.0
            for col in range(nm):
                dz_dxi[row, col] = 0.0
            for col in range(4):
                dz_dp[row, col] = 0.0
    add_ct_x_c(a, gb, nm, dz_dw, tmp, c, 1.0)  # c += Cᵀ (∂z/∂w) C
    # k += Cᵀ ∂z/∂q, and Cᵀ's own p terms (integer arguments as int64: one compiled copy)
    add_ct_times(a, gb, nm, dz_dp, np.int64(4), k, np.int64(3), 1.0)
    add_ct_times(a, gb, nm, dz_dxi, nm, k, np.int64(7), 1.0)
    d_rotated_into(basis, z[:3], s34)
    gtj = g_bar_t_jac_rows(z[3:6])
    for row in range(4):
        for col in range(4):
            k[3 + row, 3 + col] += gtj[row][col]
            if row < 3:
                k[row, 3 + col] += s34[row, col]


@njit(cache=True)
def stiffening_energies(ka, kd, xc, nm, a, gb, qb, qdb, g, dm, w):
    """(T_s, V_s) = (½ wᵀ ΔM̄ w, −gᵀ A S_s) [J] of one body; scratch ``dm`` (6+M, 6+M)
    and ``w`` (6+M,): nothing allocated."""
    n6 = 6 + nm
    delta_mass(ka, kd, xc, nm, qb[7:], dm)
    for i in range(3):
        w[i] = a[0, i] * qdb[0] + a[1, i] * qdb[1] + a[2, i] * qdb[2]
        w[3 + i] = gb[i, 0] * qdb[3] + gb[i, 1] * qdb[4] + gb[i, 2] * qdb[5] + gb[i, 3] * qdb[6]
    for j in range(nm):
        w[6 + j] = qdb[7 + j]
    kin = 0.0
    for i in range(n6):
        kin += 0.5 * w[i] * row_dot(dm, i, w, n6)
    s0, s1, s2 = dm[1, 5], dm[2, 3], dm[0, 4]  # S_s from ΔM̄[:3, 3:6] = −s̃
    pot = 0.0
    for i in range(3):
        pot -= g[i] * (a[i, 0] * s0 + a[i, 1] * s1 + a[i, 2] * s2)
    return kin, pot
