"""Geometric stiffening of a flexible body in compiled code (docs/theory_stiffening.md,
docs/compiled.md): the kernels' copy of :class:`flexmbs.frame.stiffening.StiffeningTerms`.

Per stiffened body the tables hold ``ka`` = [K_{a_x}, K_{a_y}, K_{a_z}], ``kd`` =
[K_{ω̇_x}, …] (3, M, M) and ``xc`` (3, 3, M, M) with Ξ_ab(ξ) = ξᵀ xc[a, b] ξ. The mass
increment ΔM̄(ξ), its ξ-derivatives, the Boltzmann–Hamel quadratic-velocity form and the
closed-form tangents are those of the NumPy class, term by term.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .quadratic_velocity import frame_terms, frame_terms_jacobian, row_dot
from .rotations import d_rot, d_rot_t, g_bar_mat, g_bar_t_jac

#: coupling codes (tables.COUPLING_CODES)
_TWO_WAY, _ONE_WAY, _RIGID, _NO_MRF = (np.int64(code) for code in range(4))


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
def body_stiffening(ka, kd, xc, mode, nm, a, gb, p, qb, qdb, qddb, g, r, tangents, m, k,
                    c, dm, ddm, dm_m, vec):
    """r (7+nm) += the body's stiffening residual Cᵀ(ΔM̄_m y − Q̄_s − ΔM̄_{:,R} ḡ); with
    ``tangents`` also m += Cᵀ ΔM̄_m C and (k, c) += ∂/∂(q, q̇) of that residual.

    Scratch (the workspace's, sized for the most modes): ``dm``, ``dm_m`` (6+M, 6+M),
    ``ddm`` (max(M, 1), 6+M, 6+M) and ``vec`` (5, 6+M); the residual allocates nothing
    (the tangents, at a matrix refresh, do)."""
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
    dm, dm_m = dm[:n6, :n6].copy(), dm_m[:n6, :n6].copy()
    ddm = ddm[:max(nm, 1), :n6, :n6].copy()
    y, w, z, g_body = y[:n6].copy(), w[:n6].copy(), z[:n6].copy(), g_body[:3].copy()
    cm = np.zeros((n6, 7 + nm))  # C(p)
    cm[:3, :3] = a.T
    cm[3:6, 3:7] = gb
    for j in range(nm):
        cm[6 + j, 7 + j] = 1.0
    m += cm.T @ (dm_m @ cm)
    dz_dw = np.zeros((n6, n6))
    qbar_pair_jacobian(dm, ddm, nm, w, dz_dw)
    for row in range(n6):
        for col in range(n6):
            dz_dw[row, col] = -dz_dw[row, col]
    t1 = np.zeros(n6)
    dz_dxi = np.zeros((n6, max(nm, 1)))
    d2 = np.zeros((max(nm, 1), n6, n6))
    dj = np.zeros((n6, n6))
    for j in range(nm):
        for i in range(nm):
            delta_mass_d2(ka, xc, nm, j, i, d2[i])
        qbar_pair(ddm[j], d2, nm, w, w, t1)
        dj[:, :] = ddm[j]
        _mode_rows(dj, nm, mode)
        dd = ddm[j]
        for row in range(n6):
            dz_dxi[row, j] = row_dot(dj, row, y, n6) - t1[row] - row_dot(dd, row, g_body, 3)
    dy_dp = np.zeros((n6, 4))
    dw_dp = np.zeros((n6, 4))
    dy_dp[:3] = d_rot_t(p, qddb[:3])
    dw_dp[:3] = d_rot_t(p, qdb[:3])
    gy, gw = g_bar_mat(qddb[3:7]), g_bar_mat(qdb[3:7])
    dy_dp[3:6] = -gy
    dw_dp[3:6] = -gw
    dz_dp = dm_m @ dy_dp + dz_dw @ dw_dp - dm[:, :3] @ d_rot_t(p, g)
    if mode == _ONE_WAY:
        dz_dw[:6] = 0.0
        dz_dxi[:6] = 0.0
        dz_dp[:6] = 0.0
    c += cm.T @ (dz_dw @ cm)
    ct = cm.T
    k[:, 3:7] += ct @ dz_dp
    if nm:
        k[:, 7:] += ct @ dz_dxi[:, :nm]
    k[:3, 3:7] += d_rot(p, z[:3])
    k[3:7, 3:7] += g_bar_t_jac(z[3:6])


@njit(cache=True)
def stiffening_energies(ka, kd, xc, nm, a, gb, qb, qdb, g):
    """(T_s, V_s) = (½ wᵀ ΔM̄ w, −gᵀ A S_s) [J] of one body."""
    n6 = 6 + nm
    dm = np.zeros((n6, n6))
    delta_mass(ka, kd, xc, nm, qb[7:], dm)
    w = np.zeros(n6)
    for i in range(3):
        for j in range(3):
            w[i] += a[j, i] * qdb[j]
        for j in range(4):
            w[3 + i] += gb[i, j] * qdb[3 + j]
    for j in range(nm):
        w[6 + j] = qdb[7 + j]
    kin = 0.5 * (w @ (dm @ w))
    s = np.zeros(3)  # S_s from ΔM̄[:3, 3:6] = −s̃
    s[0], s[1], s[2] = dm[1, 5], dm[2, 3], dm[0, 4]
    pot = 0.0
    for i in range(3):
        pot -= g[i] * (a[i, 0] * s[0] + a[i, 1] * s[1] + a[i, 2] * s[2])
    return kin, pot
