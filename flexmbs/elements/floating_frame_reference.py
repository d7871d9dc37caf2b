"""The floating frame's NumPy reference: the generalized mass matrix and quadratic
velocity vector of a flexible body from its inertia invariants, in every coupling mode,
and the C-form tangent kernel shared with rigid bodies (docs/theory_ffrf.md §3, §5–6,
§9). The compiled kernels (:mod:`flexmbs.elements.floating_frame`,
:mod:`flexmbs.elements.flexible_body.kernels`) evaluate the same terms.

Pure functions of (invariants, M_ff, p, ξ, rates); cost O(n_m²) (plus O(n_m³) for the
dense (7+n)² products), never touching the FE nodes.

Quasi-velocities w = [v̄, ω̄, ξ̇] = C q̇ with C = blockdiag(Aᵀ, Ḡ, I). Body-frame mass
M̄(ξ) from the general invariant set (§9), with its ξξ block replaced by the body's modal
mass M_ff (identical when the mass description holds all inertia; otherwise the source's
M_ff keeps the frequencies right). q-form: M = Cᵀ M̄ C, Q_v = Cᵀ Q̄ (§5.2).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..frame.coupling import Coupling
from ..frame.rotations import (
    cross3,
    d_rotated,
    d_rotated_transpose,
    g_bar,
    g_bar_t_jac,
    rotation_matrix,
)
from ..modal.invariants import InertiaInvariants


class FlexibleState(NamedTuple):
    """Body-frame quantities shared by the mass and Q_v evaluations."""

    a: np.ndarray  # A(p)
    gb: np.ndarray  # Ḡ(p)
    mbar: np.ndarray  # M̄ (6+n)² (coupling mode applied)
    w: np.ndarray  # [v̄, ω̄, ξ̇]


def body_mass(inv: InertiaInvariants, m_ff: np.ndarray, xi, mode: Coupling) -> np.ndarray:
    """M̄ (6+n)x(6+n) in quasi-velocities for coupling ``mode`` (may be non-symmetric)."""
    return _mode_mass(inv, _full_mass(inv, m_ff, xi), mode)


class _FlatInvariants(NamedTuple):
    """The general invariant set rearranged once so that every ξ-sum is one mat-vec."""

    m0: np.ndarray  # M̄(0) as ``blocks(0).assemble()`` (its symmetric layout)
    n_rows: np.ndarray  # (n, (6+n)·3): ξ @ n_rows = Σ_j ξ_j N_j
    n_cols: np.ndarray  # (6+n, n·3): w @ n_cols = [N_jᵀ w]_j
    q_sym: np.ndarray  # (n, n·9): ξ @ q_sym = [Σ_i ξ_i (Q_ij + Q_ji)]_j
    q_flat: np.ndarray  # (n·n, 9): (ξ ⊗ ξ) @ q_flat = Σ_ij ξ_i ξ_j Q_ij


@lru_cache(maxsize=64)
def flat_invariants(inv: InertiaInvariants) -> _FlatInvariants:
    """:class:`_FlatInvariants` of ``inv`` (computed once per invariant set)."""
    n = inv.n_modes
    big_n, big_q = np.asarray(inv.N), np.asarray(inv.Q)
    return _FlatInvariants(inv.blocks(np.zeros(n)).assemble(), big_n.reshape(n, -1),
                           big_n.transpose(1, 0, 2).reshape(6 + n, 3 * n),
                           (big_q + big_q.transpose(1, 0, 2, 3)).reshape(n, 9 * n),
                           big_q.reshape(n * n, 9))


_flat = flat_invariants


def _full_mass(inv: InertiaInvariants, m_ff: np.ndarray, xi) -> np.ndarray:
    """The two-way M̄(ξ) = M0 + Σ_j ξ_j (N_j E_θᵀ + E_θ N_jᵀ) + Σ_ij ξ_i ξ_j E_θ Q_ij E_θᵀ
    (docs/theory_ffrf.md §3, what ``inv.blocks(ξ).assemble()`` gives) with its ξξ block replaced by
    the body's modal mass M_ff; O(n²)."""
    fl = _flat(inv)
    full = fl.m0.copy()
    if inv.n_modes:
        xi = np.asarray(xi, dtype=float)
        n_lin = (xi @ fl.n_rows).reshape(-1, 3)  # Σ ξ_j N_j
        full[:, 3:6] += n_lin
        full[3:6, :] += n_lin.T
        full[3:6, 3:6] += (np.outer(xi, xi).ravel() @ fl.q_flat).reshape(3, 3)
    full[6:, 6:] = m_ff
    return full


def _mode_mass(inv: InertiaInvariants, full: np.ndarray, mode: Coupling) -> np.ndarray:
    """M̄ of coupling ``mode`` from the two-way ``full`` (docs/theory_ffrf.md §9); ``full`` itself in
    two-way mode (not copied)."""
    if mode is Coupling.TWO_WAY:
        return full
    out = full.copy()
    if mode is Coupling.NO_MRF:
        out[:6, 6:] = 0.0
        out[6:, :6] = 0.0
        return out
    out[:6, :6] = _flat(inv).m0[:6, :6]  # the rigid blocks at ξ = 0
    out[:6, 6:] = 0.0
    if mode is Coupling.RIGID:
        out[6:, :6] = 0.0
    return out


def generalized_mass(inv, m_ff, p, xi, mode: Coupling = Coupling.TWO_WAY) -> np.ndarray:
    """M(q) = Cᵀ M̄ C, shape (7+n)x(7+n) (docs/theory_ffrf.md §5); singular along [0; p; 0]."""
    n = inv.n_modes
    c = c_matrix(p, n)
    return c.T @ body_mass(inv, m_ff, xi, mode) @ c


def c_matrix(p, n):
    c = np.zeros((6 + n, 7 + n))
    c[:3, :3] = rotation_matrix(p).T
    c[3:6, 3:7] = g_bar(p)
    c[6:, 7:] = np.eye(n)
    return c


def _general_qbar(inv: InertiaInvariants, mbar: np.ndarray, w: np.ndarray, xi, xid):
    """Q̄ of docs/theory_ffrf.md §3 for the body-frame mass ``mbar`` at (ξ, ξ̇) and w:

        Q̄ = −Ṁ̄ w − [ω̄ × h_R; ω̄ × h_θ + v̄ × h_R; −½ (wᵀ ∂_jM̄ w)_j] + M̄_{:,R}(ω̄ × v̄),

    h = M̄ w, Ṁ̄ w = Σ_j ξ̇_j (N_j ω̄ + E_θ (N_jᵀ w + qs_j ω̄)), qs_j = Σ_i ξ_i (Q_ij + Q_ji);
    every ξ-sum is one mat-vec on the flattened invariants."""
    n = inv.n_modes
    v, om = w[:3], w[3:6]
    h = mbar @ w
    out = mbar[:, :3] @ cross3(om, v)
    out[:3] -= cross3(om, h[:3])
    out[3:6] -= cross3(om, h[3:6]) + cross3(v, h[:3])
    if n:
        fl = _flat(inv)
        xi, xid = np.asarray(xi, dtype=float), np.asarray(xid, dtype=float)
        n_xid = (xid @ fl.n_rows).reshape(-1, 3)  # Σ ξ̇_j N_j
        qs = (xi @ fl.q_sym).reshape(n, 9)  # qs_j, flattened
        out -= n_xid @ om
        out[3:6] -= n_xid.T @ w + (xid @ qs).reshape(3, 3) @ om
        nw = (w @ fl.n_cols).reshape(n, 3)  # N_jᵀ w
        out[6:] += nw @ om + 0.5 * (qs @ np.outer(om, om).ravel())
    return out


def quadratic_velocity(inv, m_ff, p, xi, rd, pd, xid,
                       mode: Coupling = Coupling.TWO_WAY) -> np.ndarray:
    """Q_v = Cᵀ Q̄ (7+n), the closed-form quadratic velocity vector (docs/theory_ffrf.md §3, §6).

    p-rows are orthogonal to p (the multiplier-consistent form). In one-way and rigid
    modes the rigid rows use the ξ = 0 terms only (docs/theory_ffrf.md §9)."""
    n = inv.n_modes
    xi = np.asarray(xi, dtype=float)
    xid = np.asarray(xid, dtype=float)
    a = rotation_matrix(p)
    gb = g_bar(p)
    w = np.concatenate([a.T @ rd, gb @ pd, xid])
    qbar = _mode_qbar(inv, m_ff, w, xi, xid, mode)
    out = np.empty(7 + n)
    out[:3] = a @ qbar[:3]
    out[3:7] = gb.T @ qbar[3:6]
    out[7:] = qbar[6:]
    return out


def _mode_qbar(inv, m_ff, w, xi, xid, mode: Coupling, full=None) -> np.ndarray:
    """Body-frame Q̄ (6+n) of coupling ``mode`` at quasi-velocities w (docs/theory_ffrf.md §3, §9);
    ``full``: the two-way M̄(ξ) if already evaluated."""
    n = inv.n_modes
    if mode in (Coupling.TWO_WAY, Coupling.NO_MRF):
        # no-Mrf keeps the two-way Q_v unchanged (docs/theory_ffrf.md §9): use the full M̄
        if full is None:
            full = _full_mass(inv, m_ff, xi)
        return _general_qbar(inv, full, w, xi, xid)
    rigid = body_mass(inv, m_ff, np.zeros(n), Coupling.TWO_WAY)
    rigid[:6, 6:] = rigid[6:, :6] = 0.0
    wr = w.copy()
    wr[6:] = 0.0
    q_rigid = _general_qbar(inv, rigid, wr, np.zeros(n), np.zeros(n))
    qbar = np.zeros(6 + n)
    qbar[:6] = q_rigid[:6]
    if mode is Coupling.ONE_WAY:
        if full is None:
            full = _full_mass(inv, m_ff, xi)
        qbar[6:] = _general_qbar(inv, full, w, xi, xid)[6:]
    return qbar


def body_residual(inv, m_ff, p, xi, rd, pd, xid, acc, gravity,
                  mode: Coupling = Coupling.TWO_WAY) -> np.ndarray:
    """r_b = M(q) q̈ − Q_v − Q_g (7+n) in one pass, without forming M (docs/theory_ffrf.md §5–7, §9):

        r_b = Cᵀ z,   z = M̄ C q̈ − Q̄(ξ, C q̇) − [M̄_RR ḡ; M̄_Rθᵀ ḡ; S̄ᵀ ḡ],   ḡ = Aᵀ g,

    with C = blockdiag(Aᵀ, Ḡ, I), one M̄(ξ) for the mass and Q̄, and the gravity rows of
    :meth:`~flexmbs.model.flexible.FlexibleBody.generalized_forces` (rigid rows at ξ = 0
    in one-way and rigid modes, no ξ rows in rigid mode). The elastic and damping forces
    are not included. Cost O(n_m²) (O(n_m³) nowhere: only matrix-vector products).
    """
    n = inv.n_modes
    a = rotation_matrix(p)
    gb = g_bar(p)
    full = _full_mass(inv, m_ff, xi)
    y = np.concatenate([a.T @ acc[:3], gb @ acc[3:7], acc[7:]])
    w = np.concatenate([a.T @ rd, gb @ pd, xid])
    z = _mode_mass(inv, full, mode) @ y - _mode_qbar(inv, m_ff, w, xi, xid, mode, full)
    g = np.asarray(gravity, dtype=float)
    if np.any(g):
        g_bar_vec = a.T @ g
        rigid = full if mode in (Coupling.TWO_WAY, Coupling.NO_MRF) else inv.M0
        z[:3] -= rigid[:3, :3] @ g_bar_vec
        z[3:6] -= rigid[:3, 3:6].T @ g_bar_vec
        if mode is not Coupling.RIGID:
            z[6:] -= inv.S.T @ g_bar_vec
    out = np.empty(7 + n)
    out[:3] = a @ z[:3]
    out[3:7] = gb.T @ z[3:6]
    out[7:] = z[6:]
    return out


# --------------------------------------------------------------------------- tangents
class FrameInertia(NamedTuple):
    """The inertia data the Newton tangents of one body need (docs/theory_ffrf.md §3, §9).

    mbar_mass: M̄ of the coupling mode ((6+n)², may be non-symmetric); mbar_full: the
    two-way M̄ (with the body's M_ff), used by Q̄ in two-way/no-Mrf modes and by the ξ rows
    of one-way; mbar_rigid: M̄(0) rigid 6x6 block (Q̄ rigid rows in one-way/rigid);
    gcol: (6+n, 3), gravity's generalized force is Cᵀ gcol ḡ (docs/theory_ffrf.md §7);
    N (n, 6+n, 3), Q (n, n, 3, 3): the general invariant set; mode: coupling mode.
    A rigid body is the case n = 0 (M̄ = [[m I, −S̃], [S̃, I_O]], S = m c).
    """

    mbar_mass: np.ndarray
    mbar_full: np.ndarray
    mbar_rigid: np.ndarray
    gcol: np.ndarray
    N: np.ndarray
    Q: np.ndarray
    mode: Coupling


def frame_inertia(inv: InertiaInvariants, m_ff, xi, mode: Coupling) -> FrameInertia:
    """:class:`FrameInertia` of a flexible body at modal coordinates ``xi``."""
    full = inv.blocks(xi).assemble()
    full[6:, 6:] = m_ff
    rigid = np.array(inv.M0[:6, :6])
    mass = full.copy()
    if mode is Coupling.NO_MRF:
        mass[:6, 6:] = 0.0
        mass[6:, :6] = 0.0
    elif mode is not Coupling.TWO_WAY:
        mass[:6, :6] = rigid
        mass[:6, 6:] = 0.0
        if mode is Coupling.RIGID:
            mass[6:, :6] = 0.0
    gcol = _gravity_columns(inv, full[:3, 3:6] if mode in (Coupling.TWO_WAY, Coupling.NO_MRF)
                            else None, mode)
    return FrameInertia(mass, full, rigid, gcol, np.asarray(inv.N), np.asarray(inv.Q), mode)


def gravity_columns(inv: InertiaInvariants, xi, mode: Coupling) -> np.ndarray:
    """G (6+n, 3) of a flexible body at modal coordinates ``xi``: gravity's generalized
    force is Cᵀ G ḡ (docs/theory_ffrf.md §7), ``FrameInertia.gcol`` without the rest of
    :func:`frame_inertia` (the gradients' gravity derivative needs it alone)."""
    m_rt = inv.blocks(xi).M_Rθ if mode in (Coupling.TWO_WAY, Coupling.NO_MRF) else None
    return _gravity_columns(inv, m_rt, mode)


def _gravity_columns(inv, m_rt, mode: Coupling) -> np.ndarray:
    """G from the body's M_Rθ(ξ) [kg m] (the coupled modes) or its undeformed one."""
    gcol = np.zeros((6 + inv.n_modes, 3))
    gcol[:3] = inv.M0[:3, :3]
    gcol[3:6] = (inv.M0[:3, 3:6] if m_rt is None else m_rt).T
    if mode is not Coupling.RIGID:
        gcol[6:] = inv.S.T
    return gcol


def _qs(q_coef, xi) -> np.ndarray:
    """qs_j = Σ_i ξ_i (Q_ij + Q_ji) = ∂(Σ_il ξ_i ξ_l Q_il)/∂ξ_j, shape (n, 3, 3)."""
    return np.einsum("i,ijab->jab", xi, q_coef) + np.einsum("i,jiab->jab", xi, q_coef)


def _cross_cols(a, b) -> np.ndarray:
    """a × b column by column for (3, k) arrays (``np.cross`` is slow on small arrays)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def qbar_bilinear(mbar, n_coef, qs, w1, w2) -> np.ndarray:
    """The bilinear form B with B(w, w) = Q̄(w) of docs/theory_ffrf.md §3, batched over columns.

        Q̄ = −Ṁ̄ w − [ω̄ × h_R; ω̄ × h_θ + v̄ × h_R; −½ (wᵀ ∂_jM̄ w)_j] + M̄_{:,R}(ω̄ × v̄)

    with h = M̄ w, Ṁ̄ w = Σ_j ξ̇_j ∂_jM̄ w, ∂_jM̄ w = N_j ω̄ + E_θ(N_jᵀ w + qs_j ω̄). Each
    product is split into a first factor (from ``w1``) and a second (from ``w2``), so
    ∂Q̄/∂w = B(I, w) + B(w, I) exactly. ``w1``, ``w2``: (6+n, k); returns (6+n, k).
    """
    n = n_coef.shape[0]
    v1, om1, xd1 = w1[:3], w1[3:6], w1[6:]
    v2, om2 = w2[:3], w2[3:6]
    h2 = mbar @ w2
    out = mbar[:, :3] @ _cross_cols(om1, v2)
    out[:3] -= _cross_cols(om1, h2[:3])
    out[3:6] -= _cross_cols(om1, h2[3:6]) + _cross_cols(v1, h2[:3])
    if n:
        k = w2.shape[1]
        n_t = np.swapaxes(n_coef, 1, 2)  # N_jᵀ, (n, 3, 6+n)
        # −Ṁ̄ w: Σ_j ξ̇1_j (N_j ω̄2 + E_θ (N_jᵀ w2 + qs_j ω̄2))
        n_om2 = (n_coef.reshape(-1, 3) @ om2).reshape(n, -1, k)
        qs_om2 = qs @ om2  # (n, 3, k)
        out -= (xd1[:, None, :] * n_om2).sum(axis=0)
        out[3:6] -= (xd1[:, None, :] * (n_t @ w2 + qs_om2)).sum(axis=0)
        # ξ rows: +½ wᵀ ∂_jM̄ w = (N_jᵀ w1)·ω̄2 + ½ ω̄1ᵀ qs_j ω̄2
        out[6:] += ((n_t @ w1) * om2[None]).sum(axis=1) + 0.5 * (
            om1[None] * qs_om2).sum(axis=1)
    return out


def _mass_dxi(n_coef, qs, y, mode: Coupling) -> np.ndarray:
    """D (6+n, n) with D[:, j] = (∂M̄/∂ξ_j) y for the M̄ of ``mode`` (docs/theory_ffrf.md §3):
    ∂_jM̄ y = N_j y_θ + E_θ (N_jᵀ y + qs_j y_θ), with the blocks that ``mode`` removes
    (constant or zeroed, docs/theory_ffrf.md §9) left out."""
    n = n_coef.shape[0]
    out = np.zeros((6 + n, n))
    if n == 0 or mode is Coupling.RIGID:
        return out
    y_t = y[3:6]
    col = (n_coef @ y_t).T  # N_j y_θ, (6+n, n)
    if mode is Coupling.ONE_WAY:  # rigid rows at ξ = 0: only the ξ rows vary
        out[6:] = col[6:]
        return out
    if mode is Coupling.NO_MRF:  # no R/θ–ξ coupling blocks
        out[:6] = col[:6]
        out[3:6] += np.einsum("jab,a->bj", n_coef[:, :6], y[:6])
    else:
        out[:] = col
        out[3:6] += np.einsum("jab,a->bj", n_coef, y)
    out[3:6] += np.einsum("jab,b->aj", qs, y_t)
    return out


def quasi_rate_dp(p, x, pdot, n6) -> np.ndarray:
    """∂/∂p (n6 x 4) of the body-frame quasi-rates [Aᵀ x; Ḡ(p) ṗ; 0] at fixed x and ṗ
    (velocities w or accelerations y): ∂(Aᵀx)/∂p, and −Ḡ(ṗ) since Ḡ(p)ṗ = −Ḡ(ṗ)p."""
    out = np.zeros((n6, 4))
    out[:3] = d_rotated_transpose(p, x)
    out[3:6] = -g_bar(pdot)
    return out


def frame_tangents(fi: FrameInertia, p, xi, rd, pd, xid, acc, gravity):
    """Exact Newton tangents of one body's residual part r_b = M(q) q̈ − Q_v − Q_g.

    Everything is the C-form r_b = Cᵀ z (docs/theory_ffrf.md §5–7) with C = blockdiag(Aᵀ, Ḡ, I)
    and z = M̄ y − Q̄(ξ, w) − gcol ḡ, y = C q̈, w = C q̇, ḡ = Aᵀ g (body frame). A(p) is
    quadratic and Ḡ(p) linear in p, M̄ is quadratic in ξ (§9), so

        ∂r_b/∂p = ∂(Cᵀ z)/∂p|_z + Cᵀ (M̄ ∂y/∂p − ∂Q̄/∂w ∂w/∂p − gcol ∂ḡ/∂p)
        ∂r_b/∂ξ = Cᵀ (∂M̄/∂ξ y − ∂Q̄/∂ξ − ∂gcol/∂ξ ḡ),      ∂r_b/∂q̇ = −Cᵀ ∂Q̄/∂w C

    with ∂(Ḡ ṗ)/∂p = −Ḡ(ṗ) (E6) and nothing depending on R. The elastic and damping terms
    K_ff ξ + D_ff ξ̇ are not included. Returns (K, C), each (7+n, 7+n) [global q order].
    """
    mode = fi.mode
    n = fi.N.shape[0]
    n6 = 6 + n
    p = np.asarray(p, dtype=float)
    a = rotation_matrix(p)
    gb = g_bar(p)
    acc = np.asarray(acc, dtype=float)
    y = np.concatenate([a.T @ acc[:3], gb @ acc[3:7], acc[7:]])
    w = np.concatenate([a.T @ rd, gb @ pd, xid])
    qs = _qs(fi.Q, xi) if n else np.zeros((0, 3, 3))
    eye = np.eye(n6)
    # Q̄ of the mode and its derivatives
    rigid_rows = mode in (Coupling.ONE_WAY, Coupling.RIGID)
    jw = np.zeros((n6, n6))
    jxi = np.zeros((n6, n))
    qbar = np.zeros(n6)
    if rigid_rows:
        w6 = w[:6, None]
        none = fi.N[:0, :6]
        wk = np.repeat(w6, 6, axis=1)
        both = qbar_bilinear(fi.mbar_rigid, none, qs[:0], np.hstack([w6, np.eye(6), wk]),
                             np.hstack([w6, wk, np.eye(6)]))
        qbar[:6] = both[:, 0]
        jw[:6, :6] = both[:, 1:7] + both[:, 7:]
    if mode is not Coupling.RIGID:
        rows = slice(6, n6) if rigid_rows else slice(0, n6)
        mb = fi.mbar_full
        wc = w[:, None]
        wk = np.repeat(wc, n6, axis=1)
        # one batched call: [Q̄ | B(I, w) | B(w, I)]
        both = qbar_bilinear(mb, fi.N, qs, np.hstack([wc, eye, wk]), np.hstack([wc, wk, eye]))
        qbar[rows] = both[rows, 0]
        jw[rows] = (both[:, 1:n6 + 1] + both[:, n6 + 1:])[rows]
        if n:
            v, om = w[:3], w[3:6]
            dw = _mass_dxi(fi.N, qs, w, Coupling.TWO_WAY)  # ∂h/∂ξ
            full = -_cross_cols(om, dw[:3])
            th = -_cross_cols(om, dw[3:6]) - _cross_cols(v, dw[:3])
            q_om = fi.Q @ om  # (n, n, 3): Q_ij ω̄
            th -= (xid @ np.swapaxes(q_om, 0, 1)).T + (xid @ q_om).T
            ff = (q_om @ om).T  # [j, i] = ω̄ᵀ Q_ij ω̄ (symmetric in i, j)
            extra = _mass_dxi(fi.N, qs, np.concatenate([cross3(om, v), np.zeros(3 + n)]),
                              Coupling.TWO_WAY)
            jx = extra
            jx[:3] += full
            jx[3:6] += th
            jx[6:] += ff
            jxi[rows] = jx[rows]
    g = np.asarray(gravity, dtype=float)
    g_bar_vec = a.T @ g
    z = fi.mbar_mass @ y - qbar
    dz_dxi = _mass_dxi(fi.N, qs, y, mode) - jxi
    dy_dp = quasi_rate_dp(p, acc[:3], acc[3:7], n6)
    dw_dp = quasi_rate_dp(p, rd, pd, n6)
    dz_dp = fi.mbar_mass @ dy_dp - jw @ dw_dp
    if np.any(g):
        z -= fi.gcol @ g_bar_vec
        dz_dp -= fi.gcol @ d_rotated_transpose(p, g)
        if n and mode in (Coupling.TWO_WAY, Coupling.NO_MRF):
            dz_dxi[3:6] -= np.einsum("jab,a->bj", fi.N[:, :3], g_bar_vec)
    k = np.zeros((7 + n, 7 + n))
    k[:3, 3:7] = d_rotated(p, z[:3]) + a @ dz_dp[:3]
    k[3:7, 3:7] = g_bar_t_jac(z[3:6]) + gb.T @ dz_dp[3:6]
    k[7:, 3:7] = dz_dp[6:]
    k[:3, 7:] = a @ dz_dxi[:3]
    k[3:7, 7:] = gb.T @ dz_dxi[3:6]
    k[7:, 7:] = dz_dxi[6:]
    # C_t = −Cᵀ (∂Q̄/∂w) C
    jc = np.empty((n6, 7 + n))
    jc[:, :3] = jw[:, :3] @ a.T
    jc[:, 3:7] = jw[:, 3:6] @ gb
    jc[:, 7:] = jw[:, 6:]
    c = np.empty((7 + n, 7 + n))
    c[:3] = -(a @ jc[:3])
    c[3:7] = -(gb.T @ jc[3:6])
    c[7:] = -jc[6:]
    return k, c
