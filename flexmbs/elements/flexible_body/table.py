"""The flexible bodies' table (docs/compiled.md, docs/theory_ffrf.md): the invariants,
modal matrices and geometric stiffening terms, one row per flexible body, padded to
M = max(1, most modes) modes."""

from __future__ import annotations

import numpy as np

from ...elements.flexible_body.stiffening_reference import StiffeningTerms
from ...elements.floating_frame_reference import flat_invariants
from ..declaration import FLOAT, INT, Field, KindTables


def _build(system, ctx):
    nf, m = max(len(ctx.flexible), 1), ctx.big_m
    t = dict(
        f_m0=np.zeros((nf, 6 + m, 6 + m)), f_inv_m0=np.zeros((nf, 6 + m, 6 + m)),
        f_N=np.zeros((nf, m, 6 + m, 3)), f_Q=np.zeros((nf, m, m, 3, 3)),
        f_S=np.zeros((nf, 3, m)), f_mff=np.zeros((nf, m, m)), f_kff=np.zeros((nf, m, m)),
        f_dff=np.zeros((nf, m, m)), f_mass=np.zeros(nf), f_stiff=np.zeros(nf, np.int64),
        f_ska=np.zeros((nf, 3, m, m)), f_skd=np.zeros((nf, 3, m, m)),
        f_sxc=np.zeros((nf, 3, 3, m, m)))
    for f, k in enumerate(ctx.flexible):
        body = system.bodies[k]
        n = body.n_modes
        inv = body.data.invariants
        t["f_m0"][f, :6 + n, :6 + n] = flat_invariants(inv).m0
        t["f_inv_m0"][f, :6 + n, :6 + n] = inv.M0
        t["f_N"][f, :n, :6 + n] = inv.N
        t["f_Q"][f, :n, :n] = inv.Q
        t["f_S"][f, :, :n] = inv.S
        t["f_mff"][f, :n, :n] = body.data.M_ff
        t["f_kff"][f, :n, :n] = body.data.K_ff
        t["f_dff"][f, :n, :n] = body.data.D_ff
        t["f_mass"][f] = inv.mass
        if getattr(body, "stiffening", False):
            terms = StiffeningTerms(body.data.stiffening)
            t["f_stiff"][f] = 1
            t["f_ska"][f, :, :n, :n] = terms.ka
            t["f_skd"][f, :, :n, :n] = terms.kd
            t["f_sxc"][f, :, :, :n, :n] = terms.xi_coef
    return t


TABLE = KindTables("flexible_body", (
    Field("f_m0", FLOAT, "(nf, 6+M, 6+M) M̄(0) (flattened-invariant layout)"),
    Field("f_inv_m0", FLOAT, "(nf, 6+M, 6+M) invariant M0 (gravity rows of one-way/rigid)"),
    Field("f_N", FLOAT, "(nf, M, 6+M, 3)"),
    Field("f_Q", FLOAT, "(nf, M, M, 3, 3)"),
    Field("f_S", FLOAT, "(nf, 3, M)"),
    Field("f_mff", FLOAT, "(nf, M, M)"),
    Field("f_kff", FLOAT, "(nf, M, M)"),
    Field("f_dff", FLOAT, "(nf, M, M)"),
    Field("f_mass", FLOAT, "(nf,) total mass [kg] (potential energy)"),
    Field("f_stiff", INT, "(nf,) 1 when the body has geometric stiffening on "
                          "(docs/theory_stiffening.md)"),
    Field("f_ska", FLOAT, "(nf, 3, M, M) K_{a_x}, K_{a_y}, K_{a_z}"),
    Field("f_skd", FLOAT, "(nf, 3, M, M) K_{ω̇_x}, K_{ω̇_y}, K_{ω̇_z}"),
    Field("f_sxc", FLOAT, "(nf, 3, 3, M, M) Ξ_ab(ξ) = ξᵀ f_sxc[a, b] ξ"),
), _build)
