"""Geometric stiffening in the equations of a floating-frame body
(docs/theory_stiffening.md, "In the equations of motion").

The deflected body's points also move by a second-order (foreshortening) displacement
u_s(ξ), quadratic in ξ. Its kinetic and gravity energy, to second order in ξ, need only
three moments of it, and the twelve stiffening matrices of the unit load cases are
exactly those moments (½ ξᵀ K_c ξ = −∫ f_c · u_s dV for the unit load f_c):

* S_s(ξ) = ∫ρ u_s dV,        S_s,k = ½ ξᵀ K_{a_k} ξ;
* h(ξ) = ∫ρ r × u_s dV,      h_k = ½ ξᵀ K_{ω̇_k} ξ;
* ½ ω̄ᵀ ΔI ω̄ = −½ ξᵀ K_ω(ω̄) ξ,  K_ω = Σ_{a≤b} ω̄_a ω̄_b K_{ω_aω_b}.

So T_s = v̄ · (ω̄ × S_s) + v̄ · Ṡ_s + ω̄ · ḣ − ½ ξᵀ K_ω ξ and V_s = −ḡ · S_s: a body-frame
mass increment ΔM̄(ξ) in the quasi-velocities w = [v̄, ω̄, ξ̇],

    ΔM̄_Rθ = −S̃_s(ξ),  ΔM̄_Rf = ∂S_s/∂ξ,  ΔM̄_θθ = −Ξ(ξ),  ΔM̄_θf = ∂h/∂ξ,

(Ξ_aa = ξᵀK_{ω_aω_a}ξ, Ξ_ab = ½ ξᵀK_{ω_aω_b}ξ), symmetric, linear in ξ off the θθ and Rθ
blocks and quadratic in them. Its quadratic-velocity vector follows from the same
Boltzmann–Hamel form as the body's own
(:func:`flexmbs.elements.floating_frame_reference._general_qbar`), applied to ΔM̄. The
elastic rows of the result are K_eff − K_ff applied to ξ, with
K_eff = K_ff + K_ω(ω̄) + Σ (ā − ḡ)_k K_{a_k} + Σ ω̄̇_k K_{ω̇_k} (ā the frame origin's
acceleration in body axes), and the frame rows carry the matching reactions: the model
keeps its energy and momentum balance.
"""

from __future__ import annotations

import numpy as np

from ...frame.coupling import Coupling
from ...frame.rotations import cross3, g_bar, rotation_matrix, skew
from ..floating_frame_reference import quasi_rate_dp

_PAIRS = ((0, 0, "ww_xx"), (1, 1, "ww_yy"), (2, 2, "ww_zz"), (0, 1, "ww_xy"),
          (0, 2, "ww_xz"), (1, 2, "ww_yz"))


class StiffeningTerms:
    """ΔM̄(ξ), its ξ-derivatives and Q̄_s of one body's stiffening matrices
    (``ModalData.stiffening``: the twelve unit load cases)."""

    def __init__(self, stiffening: dict):
        self.ka = np.stack([stiffening[f"a_{c}"] for c in "xyz"])  # (3, n, n)
        self.kd = np.stack([stiffening[f"dw_{c}"] for c in "xyz"])  # (3, n, n)
        n = self.ka.shape[1]
        xi_coef = np.zeros((3, 3, n, n))  # Ξ_ab(ξ) = ξᵀ xi_coef[a, b] ξ
        for a, b, case in _PAIRS:
            if a == b:
                xi_coef[a, a] = stiffening[case]
            else:
                xi_coef[a, b] = xi_coef[b, a] = 0.5 * stiffening[case]
        self.xi_coef = xi_coef
        self.n = n

    def first_moment(self, xi) -> np.ndarray:
        """S_s(ξ) = ∫ρ u_s dV (3,) [kg m], body axes."""
        return 0.5 * np.einsum("i,kij,j->k", xi, self.ka, xi)

    def delta_mass(self, xi) -> np.ndarray:
        """ΔM̄(ξ) (6+n, 6+n), symmetric."""
        n = self.n
        out = np.zeros((6 + n, 6 + n))
        m_rt = -skew(self.first_moment(xi))
        out[:3, 3:6] = m_rt
        out[3:6, :3] = m_rt.T
        b_a = self.ka @ xi  # (3, n): ∂S_s/∂ξ
        b_d = self.kd @ xi  # (3, n): ∂h/∂ξ
        out[:3, 6:] = b_a
        out[6:, :3] = b_a.T
        out[3:6, 6:] = b_d
        out[6:, 3:6] = b_d.T
        out[3:6, 3:6] = -np.einsum("i,abij,j->ab", xi, self.xi_coef, xi)
        return out

    def delta_mass_derivatives(self, xi) -> np.ndarray:
        """∂ΔM̄/∂ξ_j stacked (n, 6+n, 6+n)."""
        n = self.n
        out = np.zeros((n, 6 + n, 6 + n))
        d_first = self.ka @ xi  # (3, n): column j = ∂S_s/∂ξ_j
        d_xi = 2.0 * np.einsum("abjk,k->jab", self.xi_coef, xi)  # ∂Ξ/∂ξ_j
        for j in range(n):
            m_rt = -skew(d_first[:, j])
            out[j, :3, 3:6] = m_rt
            out[j, 3:6, :3] = m_rt.T
            out[j, :3, 6:] = self.ka[:, :, j]
            out[j, 6:, :3] = self.ka[:, :, j].T
            out[j, 3:6, 6:] = self.kd[:, :, j]
            out[j, 6:, 3:6] = self.kd[:, :, j].T
            out[j, 3:6, 3:6] = -d_xi[j]
        return out

    def qbar(self, w, xi, xid, dm=None, ddm=None) -> np.ndarray:
        """Q̄_s (6+n) at quasi-velocities w: the Boltzmann–Hamel form of
        :func:`flexmbs.elements.floating_frame_reference._general_qbar` for the mass ΔM̄(ξ),

            Q̄ = −Ṁ̄ w − [ω̄ × h_R; ω̄ × h_θ + v̄ × h_R; −½ (wᵀ ∂_jM̄ w)_j] + M̄_{:,R}(ω̄ × v̄),

        h = ΔM̄ w, Ṁ̄ = Σ_j ξ̇_j ∂_jΔM̄."""
        dm = self.delta_mass(xi) if dm is None else dm
        ddm = self.delta_mass_derivatives(xi) if ddm is None else ddm
        w_rates = np.concatenate([w[:6], xid])
        return self._qbar_bilinear(w_rates, w, dm, ddm)

    # ------------------------------------------------------------------ body level
    def mode_mass(self, dm: np.ndarray, mode: Coupling) -> np.ndarray:
        """ΔM̄ as the coupling ``mode`` uses it (the same blocks as
        :func:`flexmbs.elements.floating_frame_reference._mode_mass` keeps of M̄; ΔM̄(0) = 0)."""
        if mode is Coupling.TWO_WAY:
            return dm
        out = dm.copy()
        if mode is Coupling.NO_MRF:
            out[:6, 6:] = 0.0
            out[6:, :6] = 0.0
            return out
        out[:6, :] = 0.0  # one-way and rigid: the rigid rows are the rigid body's
        if mode is Coupling.RIGID:
            out[6:, :] = 0.0
        return out

    def residual(self, p, xi, rd, pd, xid, acc, gravity, mode: Coupling) -> np.ndarray:
        """The body residual's stiffening part Cᵀ (ΔM̄ C q̈ − Q̄_s − ΔM̄_{:,R} ḡ) (7+n),
        rows as :func:`flexmbs.elements.floating_frame_reference.body_residual`
        (coupling ``mode``: two-way and no-Mrf keep every row of Q̄_s and gravity, one-way
        the elastic rows, rigid none)."""
        n = self.n
        out = np.zeros(7 + n)
        if mode is Coupling.RIGID:
            return out
        a = rotation_matrix(p)
        gb = g_bar(p)
        dm = self.delta_mass(xi)
        ddm = self.delta_mass_derivatives(xi)
        y = np.concatenate([a.T @ acc[:3], gb @ acc[3:7], acc[7:]])
        w = np.concatenate([a.T @ rd, gb @ pd, xid])
        z = self.mode_mass(dm, mode) @ y - self.qbar(w, xi, xid, dm, ddm)
        g = np.asarray(gravity, dtype=float)
        if np.any(g):
            z -= dm[:, :3] @ (a.T @ g)
        if mode is Coupling.ONE_WAY:
            z[:6] = 0.0
        out[:3] = a @ z[:3]
        out[3:7] = gb.T @ z[3:6]
        out[7:] = z[6:]
        return out

    def second_derivatives(self) -> np.ndarray:
        """∂²ΔM̄/∂ξ_i∂ξ_j (n, n, 6+n, 6+n), constant (ΔM̄ is at most quadratic in ξ)."""
        cached = getattr(self, "_d2", None)
        if cached is not None:
            return cached
        n = self.n
        out = np.zeros((n, n, 6 + n, 6 + n))
        for i in range(n):
            for j in range(n):
                m_rt = -skew(self.ka[:, i, j])
                out[i, j, :3, 3:6] = m_rt
                out[i, j, 3:6, :3] = m_rt.T
                out[i, j, 3:6, 3:6] = -2.0 * self.xi_coef[:, :, i, j]
        self._d2 = out
        return out

    def tangents(self, p, xi, rd, pd, xid, acc, gravity, mode: Coupling):
        """(K, C) = ∂/∂(q, q̇) of :meth:`residual`, closed form: r = Cᵀ(p) z with
        z = ΔM̄_m y − Q̄_s(w, ξ) − ΔM̄_{:,R} ḡ, y = C q̈ (+ its p-dependence), w = C q̇,
        ḡ = Aᵀg. Q̄_s is quadratic in w and the Boltzmann–Hamel form is linear in the pair
        (ΔM̄, ∂ΔM̄), so ∂Q̄_s/∂w follows from the polarized form and ∂Q̄_s/∂ξ_j from
        the pair (∂_jΔM̄, ∂_j∂ΔM̄); the p-derivatives use ∂(Aᵀx)/∂p, Ḡ(p)x = −Ḡ(x)p
        and ∂(Ḡᵀx)/∂p. R enters nowhere."""
        from ...frame.rotations import d_rotated, d_rotated_transpose, g_bar_t_jac

        n = self.n
        size = 7 + n
        k_out, c_out = np.zeros((size, size)), np.zeros((size, size))
        if mode is Coupling.RIGID:
            return k_out, c_out
        a = rotation_matrix(p)
        gb = g_bar(p)
        dm = self.delta_mass(xi)
        ddm = self.delta_mass_derivatives(xi)
        d2 = self.second_derivatives()
        dm_m = self.mode_mass(dm, mode)
        y = np.concatenate([a.T @ acc[:3], gb @ acc[3:7], acc[7:]])
        w = np.concatenate([a.T @ rd, gb @ pd, xid])
        g = np.asarray(gravity, dtype=float)
        g_body = a.T @ g
        # ∂z/∂w (6+n, 6+n): −∂Q̄_s/∂w by polarization of the quadratic form
        dz_dw = np.zeros((6 + n, 6 + n))
        for col in range(6 + n):
            e = np.zeros(6 + n)
            e[col] = 1.0
            dz_dw[:, col] = -(self._qbar_bilinear(e, w, dm, ddm)
                              + self._qbar_bilinear(w, e, dm, ddm))
        # ∂z/∂ξ_j (6+n, n)
        dz_dxi = np.zeros((6 + n, n))
        for j in range(n):
            dz_dxi[:, j] = (self.mode_mass(ddm[j], mode) @ y
                            - self.qbar(w, xi, w[6:], ddm[j], d2[j]) - ddm[j][:, :3] @ g_body)
        # ∂z/∂p (6+n, 4): through y, w and ḡ
        dy_dp = quasi_rate_dp(p, acc[:3], acc[3:7], 6 + n)
        dw_dp = quasi_rate_dp(p, rd, pd, 6 + n)
        dz_dp = dm_m @ dy_dp + dz_dw @ dw_dp - dm[:, :3] @ d_rotated_transpose(p, g)
        z = dm_m @ y - self.qbar(w, xi, w[6:], dm, ddm) - dm[:, :3] @ g_body
        if mode is Coupling.ONE_WAY:
            for arr in (z, dz_dw, dz_dxi, dz_dp):
                arr[:6] = 0.0
        c_map = np.zeros((6 + n, size))  # C(p): w = C q̇
        c_map[:3, :3] = a.T
        c_map[3:6, 3:7] = gb
        c_map[6:, 7:] = np.eye(n)
        ct = c_map.T
        c_out[:] = ct @ dz_dw @ c_map
        k_out[:, 3:7] = ct @ dz_dp
        k_out[:, 7:] = ct @ dz_dxi
        k_out[:3, 3:7] += d_rotated(p, z[:3])  # ∂(A z_R)/∂p
        k_out[3:7, 3:7] += g_bar_t_jac(z[3:6])  # ∂(Ḡᵀ z_θ)/∂p
        return k_out, c_out

    def _qbar_bilinear(self, w1, w2, dm, ddm) -> np.ndarray:
        """A bilinear form B(w1, w2) with Q̄_s(w) = B(w, w) (the elastic rates inside Ṁ̄
        taken from w1): ∂Q̄_s/∂w δ = B(δ, w) + B(w, δ)."""
        v1, om1, xid1 = w1[:3], w1[3:6], w1[6:]
        v2 = w2[:3]
        h2 = dm @ w2
        out = dm[:, :3] @ cross3(om1, v2) - np.einsum("j,jab,b->a", xid1, ddm, w2)
        out[:3] -= cross3(om1, h2[:3])
        out[3:6] -= cross3(om1, h2[3:6]) + cross3(v1, h2[:3])
        out[6:] += 0.5 * np.einsum("a,jab,b->j", w1, ddm, w2)
        return out

    def kinetic_energy(self, p, xi, rd, pd, xid) -> float:
        """T_s = ½ wᵀ ΔM̄ w [J]."""
        a = rotation_matrix(p)
        w = np.concatenate([a.T @ rd, g_bar(p) @ pd, xid])
        return 0.5 * float(w @ self.delta_mass(xi) @ w)

    def potential_energy(self, p, xi, gravity) -> float:
        """V_s = −gᵀ A S_s(ξ) [J]."""
        return -float(np.asarray(gravity, float) @ (rotation_matrix(p)
                                                    @ self.first_moment(xi)))
