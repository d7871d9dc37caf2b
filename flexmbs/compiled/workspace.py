"""Buffers the compiled kernels write into, owned by one run (docs/compiled.md)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..contact.sample import N_SAMPLE, N_STATE


class Workspace(NamedTuple):
    """Scratch and state buffers, sized once from the model's tables
    (:class:`flexmbs.elements.registry.Tables`)."""

    rot: np.ndarray  # (nb, 3, 3) A(p)
    gbar: np.ndarray  # (nb, 3, 4) Ḡ(p)
    gglob: np.ndarray  # (nb, 3, 4) G(p)
    basis: np.ndarray  # (nb, 3, 12) B(p) of ∂(A s)/∂p
    mk_v: np.ndarray  # (nk, 4, 3) marker vectors
    mk_j: np.ndarray  # (nk, 4, 3, 7+M) marker Jacobians
    s4: np.ndarray  # (4, 3)
    coef: np.ndarray  # (ne, 8, 8) equation coefficients (the drives' updated at each t)
    offset: np.ndarray  # (ne,) translation-drive values s(t)
    wgt: np.ndarray  # (ne, 8, 3) each equation's weights ∂Φ_e/∂V at the last residual
    qcur: np.ndarray  # (n_q,) the q of the last residual
    v3a: np.ndarray
    v3b: np.ndarray
    v3c: np.ndarray
    v3d: np.ndarray
    v3e: np.ndarray
    v3f: np.ndarray
    v3g: np.ndarray
    v3h: np.ndarray
    v3i: np.ndarray
    om3: np.ndarray
    full: np.ndarray  # (6+M, 6+M)
    mass: np.ndarray
    rigid: np.ndarray
    nlin: np.ndarray  # (6+M, 3)
    qs: np.ndarray  # (M, 3, 3)
    y6: np.ndarray  # (6+M,)
    w6: np.ndarray
    z6: np.ndarray
    q6: np.ndarray
    h6: np.ndarray
    wr6: np.ndarray
    qr6: np.ndarray
    # Newton state of the step being computed
    q1: np.ndarray  # (n_q,)
    qd1: np.ndarray
    qdd1: np.ndarray
    lam1: np.ndarray  # (n_c,)
    r: np.ndarray  # (n_q,)
    phi: np.ndarray  # (n_c,)
    rhs: np.ndarray  # (n_q + n_c,)
    matrix: np.ndarray  # (n_q + n_c, n_q + n_c) iteration matrix (before factoring)
    jac: np.ndarray  # (n_c, n_q)
    a1: np.ndarray  # (n_q,)
    counters: np.ndarray  # int64 (4,): iteration, stale, residual at hand, inputs
    floats: np.ndarray  # (2,): last scaled correction, current one
    solve: np.ndarray  # (n_q + n_c,) scratch of the sparse triangular solves
    angles: np.ndarray  # (nt + nv,) last angle of each rotational spring–damper, then of
    # each joint servo [rad], NaN: none
    # geometric stiffening's scratch (stiffening.body_stiffening)
    sdm: np.ndarray  # (6+M, 6+M) ΔM̄
    sdmm: np.ndarray  # (6+M, 6+M) its coupling mode's part
    sddm: np.ndarray  # (max(M, 1), 6+M, 6+M) ∂ΔM̄/∂ξ_j
    svec: np.ndarray  # (6, 6+M) y, w, Q̄_s, z, ḡ, ∂Q̄_s/∂ξ_j
    smat: np.ndarray  # (3, 7+M, 7+M) ∂z/∂w, ∂ΔM̄_m/∂ξ_j, a product with C(p)
    sd2: np.ndarray  # (max(M, 1), 6+M, 6+M) ∂²ΔM̄/∂ξ_j∂ξ_i
    smodes: np.ndarray  # (6+M, max(M, 1)) ∂z/∂ξ
    sp4: np.ndarray  # (3, 6+M, 4) ∂y/∂p, ∂w/∂p, ∂z/∂p
    s34: np.ndarray  # (3, 4)
    # a rigid body's matrices and their scratch (tangents.rigid_body_matrices)
    rvec: np.ndarray  # (6, 6) y, w, Q̄, z, Aᵀg (then Aᵀ(R̈ − g)), R̈ − g
    rmat: np.ndarray  # (2, 6, 6) M̄, ∂Q̄/∂w
    rp4: np.ndarray  # (3, 6, 4) ∂y/∂p, ∂w/∂p, ∂z/∂p
    r34: np.ndarray  # (2, 3, 4)
    rbasis: np.ndarray  # (3, 12) B(p*) of the conjugate parameters
    rpc: np.ndarray  # (4,) p* = (e0, −e)
    rjc: np.ndarray  # (6, 7)
    rmkc: np.ndarray  # (3, 7, 7) M, K, C
    # the constraint Hessian of a marker pair (tangents.constraint_hessian_into)
    hcs: np.ndarray  # (2, 8, 8) Σ λ C, its symmetric part
    hv: np.ndarray  # (3, 8, 3) Σ λ l, the markers' vectors, their weights
    hhess: np.ndarray  # (2(7+M), 2(7+M))
    hjac: np.ndarray  # (8, 3, 2(7+M)) the markers' Jacobians side by side
    hsw: np.ndarray  # (2, 4, 3) a marker's deformed vectors s_a, Σ_a s_a wᵀ (3x3)
    hbasis: np.ndarray  # (3, 12)
    hunit: np.ndarray  # (4,)
    # a flexible body's matrices and their scratch (tangents.body_matrices)
    fmat: np.ndarray  # (6, 7+M, 7+M) two-way M̄, its coupling mode's, the tangents' M̄,
    #                   ∂Q̄/∂w, (∂Q̄/∂w) C, M̄ C
    fmodes: np.ndarray  # (4, 6+M, max(M, 1)) ∂Q̄/∂ξ, (∂M̄/∂ξ) w, (∂M̄/∂ξ)(ω̄ × v̄), ∂z/∂ξ
    fp4: np.ndarray  # (3, 6+M, 4) ∂y/∂p, ∂w/∂p, ∂z/∂p
    fgcol: np.ndarray  # (6+M, 3) the gravity columns
    fvec: np.ndarray  # (8, 7+M) y, w, Q̄, one Q̄ form, ω̄ × v̄, z, Aᵀg, a residual
    fmkc: np.ndarray  # (3, (7+M)²) M, K, C, each viewed as (7+n, 7+n)
    # the load tangents' scratch (tangents: actuators, spring–dampers, loads), N = 2(7+M)
    xblk: np.ndarray  # (2, N, N) K and C blocks of a marker pair
    x3n: np.ndarray  # (6, 3, N) Jacobians and their derivatives over both markers
    x3: np.ndarray  # (4, 3) lever arm, Aᵀ·load, rates, the load vector
    x34: np.ndarray  # (3, 3, 4)
    xbasis: np.ndarray  # (2, 3, 12)
    xp: np.ndarray  # (4,)
    # the outputs' scratch (outputs.outputs_entry, after the run)
    ovec: np.ndarray  # (2, n_q) Φ_qᵀλ, the loads
    ocon: np.ndarray  # (2, n_c) Φ, Φ_q q̇
    # the bushings' scratch (elements.bushing.kernels), N = 2(7+M)
    bu_vec: np.ndarray  # (3, 8, 3) the markers' vectors V, their rates J q̇, the weights
    bu_e: np.ndarray  # (3, 6) the deformation e, its rate ė, the load s
    bu_grad: np.ndarray  # (2, 6, N) ∇e and ∂ė/∂q over both markers' bodies
    bu_rate: np.ndarray  # (8, 3, N) ∂(J_a q̇)/∂q of the eight vectors
    bu_blk: np.ndarray  # (2, N, N) the K and C blocks of a bushing
    # the contacts (elements.contact.kernels), N = 2(7+M)
    ct_state: np.ndarray  # (nct, N_STATE) mode, v⁻ (NaN: none), anchored, anchors, offset
    ct_out: np.ndarray  # (nct, N_SAMPLE) each contact's sample (flexmbs.contact.sample)
    ct_vec: np.ndarray  # (4, 3) contact points on A and B, relative velocity, scratch
    ct_jac: np.ndarray  # (4, 3, N) a marker's force and torque Jacobians, J_cA, J_cB
    ct_gen: np.ndarray  # (2, N) generalized force of a contact, unperturbed and perturbed
    ct_blk: np.ndarray  # (2, N, N) the K and C blocks of a contact
    ct_q: np.ndarray  # (2, n_q) the perturbed q and q̇ of the difference quotients
    # the state-dependent callables (docs/compiled.md, "Callables"), n_u columns of u
    cb_du: np.ndarray  # (2, n_u, n_q) du/dq, du/dq̇ of each column (callables' only)
    cb_g: np.ndarray  # (n_q,) −∂Q/∂u of one column (the load per unit input)
    cb_v: np.ndarray  # (2, 3) a unit input's load vector, a load's value from u
    # the constraints' per-marker sums (elements.constraints.kernels)
    mk_w: np.ndarray  # (nk, 4, 3) Σ_e λ_e ∂Φ_e/∂v_a of each marker's vectors
    mk_vd: np.ndarray  # (nk, 4, 3) the rates J q̇ of each marker's vectors
    # a batch of steps with contacts (engine.newton.run_steps)
    ct_start: np.ndarray  # (nct, N_SAMPLE) each contact's sample at the step's start


def make_workspace(T) -> Workspace:
    """Zeroed buffers for the model of ``T``."""
    nb, nk, ne = T.b_kind.size, T.k_body.size, T.e_row.size
    nct = T.ct_mark.shape[0]
    big_m = T.f_N.shape[1]
    n6 = 6 + big_m
    n_q, n_c = T.n_q, T.n_c
    v3 = [np.zeros(3) for _ in range(10)]
    return Workspace(
        np.zeros((nb, 3, 3)), np.zeros((nb, 3, 4)), np.zeros((nb, 3, 4)),
        np.zeros((nb, 3, 12)), np.zeros((nk, 4, 3)), np.zeros((nk, 4, 3, 7 + big_m)),
        np.zeros((4, 3)), T.e_coef.copy(), np.zeros(ne), np.zeros((ne, 8, 3)),
        np.zeros(n_q), *v3, np.zeros((n6, n6)), np.zeros((n6, n6)), np.zeros((n6, n6)),
        np.zeros((n6, 3)), np.zeros((big_m, 3, 3)), *[np.zeros(n6) for _ in range(7)],
        np.zeros(n_q), np.zeros(n_q), np.zeros(n_q), np.zeros(n_c), np.zeros(n_q),
        np.zeros(n_c), np.zeros(n_q + n_c), np.zeros((n_q + n_c, n_q + n_c)),
        np.zeros((n_c, n_q)), np.zeros(n_q), np.zeros(4, np.int64), np.zeros(2),
        np.zeros(n_q + n_c), np.full(T.t_mark.shape[0] + T.v_mark.shape[0], np.nan),
        np.zeros((n6, n6)), np.zeros((n6, n6)), np.zeros((max(big_m, 1), n6, n6)),
        np.zeros((6, n6)), np.zeros((3, 7 + big_m, 7 + big_m)),
        np.zeros((max(big_m, 1), n6, n6)), np.zeros((n6, max(big_m, 1))),
        np.zeros((3, n6, 4)), np.zeros((3, 4)), np.zeros((6, 6)), np.zeros((2, 6, 6)),
        np.zeros((3, 6, 4)),
        np.zeros((2, 3, 4)), np.zeros((3, 12)), np.zeros(4), np.zeros((6, 7)),
        np.zeros((3, 7, 7)), np.zeros((2, 8, 8)), np.zeros((3, 8, 3)),
        np.zeros((2 * (7 + big_m), 2 * (7 + big_m))), np.zeros((8, 3, 2 * (7 + big_m))),
        np.zeros((2, 4, 3)), np.zeros((3, 12)), np.zeros(4),
        np.zeros((6, 7 + big_m, 7 + big_m)), np.zeros((4, n6, max(big_m, 1))),
        np.zeros((3, n6, 4)), np.zeros((n6, 3)), np.zeros((8, 7 + big_m)),
        np.zeros((3, (7 + big_m) ** 2)),
        np.zeros((2, 2 * (7 + big_m), 2 * (7 + big_m))), np.zeros((6, 3, 2 * (7 + big_m))),
        np.zeros((4, 3)), np.zeros((3, 3, 4)), np.zeros((2, 3, 12)), np.zeros(4),
        np.zeros((2, n_q)), np.zeros((2, n_c)),
        np.zeros((3, 8, 3)), np.zeros((3, 6)), np.zeros((2, 6, 2 * (7 + big_m))),
        np.zeros((8, 3, 2 * (7 + big_m))),
        np.zeros((2, 2 * (7 + big_m), 2 * (7 + big_m))),
        np.full((nct, N_STATE), np.nan), np.zeros((nct, N_SAMPLE)), np.zeros((4, 3)),
        np.zeros((4, 3, 2 * (7 + big_m))), np.zeros((2, 2 * (7 + big_m))),
        np.zeros((2, 2 * (7 + big_m), 2 * (7 + big_m))), np.zeros((2, n_q)),
        np.zeros((2, T.u_call.size, n_q)), np.zeros(n_q), np.zeros((2, 3)),
        np.zeros((nk, 4, 3)), np.zeros((nk, 4, 3)), np.zeros((nct, N_SAMPLE)))
