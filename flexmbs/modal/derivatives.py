"""Static modal derivatives of reduced flexible bodies and the coordinates of a body with
them (docs/theory_modal_derivatives.md).

A mode φ_j of amplitude ξ_j stresses the body at second order: the tangent stiffness
changes by ∂K/∂q_j ξ_j. The static modal derivative (Idelsohn and Cardona 1985)

    θ_ij = −K⁻¹ (∂K/∂q_j) φ_i = −K⁻¹ ∂³U(φ_i, φ_j, ·)

is the static response to that change: for a beam bent by φ_i and φ_j, the axial
foreshortening that bending drags along. It is symmetric in i, j (the third derivative
of the strain energy U is), so the n modes give n(n + 1)/2 of them; they are solved with
the body's own frame condition (the attachment node set held, or, for mean axes, inertia
relief with the mean-axis condition, as for the stiffening matrices).

Following Wu and Tiso (2016), the derivatives enrich the *linear* basis: a body with
``nonlinear = true`` has the coordinates η of V = [Φ, Θ̃], Θ̃ the derivatives made
mass-orthogonal to the modes and to each other (those that the others already span
dropped), with the FE strain energy U(V η) as the polynomial ½ ηᵀK η + ⅙ C₃ηηη +
¹⁄₂₄ C₄ηηηη: exactly, for the St Venant–Kirchhoff solids, and to fourth order for the
beam (:mod:`flexmbs.modal.fe.nonlinear_energy`). The inertia is that of any linear modal
basis: the full floating-frame mass matrix and quadratic velocity vector of V, nothing
dropped.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import scipy.linalg as sla

from .._blas import solve_small
from ..errors import ValidationError
from .derivative_data import ElasticPolynomial, ModalDerivatives
from .kinds import ModeKind, ReferenceFrame

#: A derivative whose part outside the modes and the other derivatives keeps less than
#: this fraction of its mass norm² is dropped from the enriched basis (the others span it).
DEPENDENT_TOL = 1e-8

#: A derivative θ_ij smaller (in the mass norm) than this fraction of √(‖θ_ii‖ ‖θ_jj‖)
#: is round-off, not a derivative (pairs of modes that do not stress each other, such as
#: bending in two planes of a round beam), and is not used.
NULL_TOL = 1e-6

#: The largest quartic tensor stored, in numbers (m⁴ of the raw basis m = n + n(n+1)/2:
#: 4.2e7 numbers, 336 MB, is n = 10; n = 8 gives 3.7e6, 30 MB).
MAX_QUARTIC = 45_000_000

#: Points per chunk when summing the tensors (bounds the (P, m, m, k) work arrays).
_CHUNK = 256


def derivative_loads(points, modes: np.ndarray, pairs) -> np.ndarray:
    """∂³U(φ_i, φ_j, ·) (n_dof, n_pairs) [N per unit²] of the FE modes ``modes``
    (n_dof, n) for each pair (i, j): the change of the tangent stiffness along φ_j
    applied to φ_i (= (∂K/∂q_j) φ_i), from the cubic energy of ``points``
    (:class:`~flexmbs.modal.fe.nonlinear_energy.StrainPoints`)."""
    out = np.zeros((modes.shape[0], len(pairs)))
    for group in points.groups:
        d = group.derivatives(modes)                     # (P, S, n, p)
        beta, lam_, dmod = group.beta, group.linear, group.modulus
        stress = np.einsum("s,gsnp->gnp", beta, d) @ lam_.T @ dmod   # D Λ d̄ (P, n, k)
        hd = np.einsum("cpq,gsnq->gsncp", group.quadratic, d)        # H_c d
        for col, (i, j) in enumerate(pairs):
            q_ij = np.einsum("s,gsp,gscp->gc", beta, d[:, :, i], hd[:, :, j])  # (P, k)
            z = (np.einsum("gc,cp->gp", q_ij @ dmod, lam_)[:, None, :]
                 + np.einsum("gc,gscp->gsp", stress[:, i], hd[:, :, j])
                 + np.einsum("gc,gscp->gsp", stress[:, j], hd[:, :, i]))
            z *= group.weight[:, None, None] * beta[None, :, None]
            out[:, col] += group.grad.T @ z.reshape(-1)
    return out


def energy_tensors(points, basis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(C₃, C₄): the third and fourth derivatives of the cubic and quartic strain energy
    of ``points`` along the columns of ``basis`` (n_dof, m), symmetric."""
    m = basis.shape[1]
    u3 = np.zeros((m, m, m))        # U₃(η) = u3(η, η, η)
    u4 = np.zeros((m * m, m * m))   # U₄(η) = u4(η, η, η, η)
    for group in points.groups:
        d_all = group.derivatives(basis)                 # (P, S, m, p)
        n_p = d_all.shape[0]
        for start in range(0, n_p, _CHUNK):
            sl = slice(start, min(start + _CHUNK, n_p))
            d, w = d_all[sl], group.weight[sl]
            dbar = np.einsum("s,gsmp->gmp", group.beta, d)
            stress = (dbar @ group.linear.T @ group.modulus) * w[:, None, None]  # (g, m, k)
            q = np.einsum("s,gsap,cpq,gsbq->gabc", group.beta, d, group.quadratic, d,
                          optimize=True)                 # 2 s_c = q (g, m, m, k)
            u3 += 0.5 * np.einsum("gak,gbck->abc", stress, q, optimize=True)
            qd = (q @ group.modulus) * w[:, None, None, None]
            u4 += 0.125 * (qd.transpose(1, 2, 0, 3).reshape(m * m, -1)
                           @ q.transpose(0, 3, 1, 2).reshape(-1, m * m))
            for c, coef, (i, j, k) in group.cubic:       # ε_c D_c· t_c: one sub-point
                left = (coef * stress[:, :, c, None] * d[:, 0, None, :, i]).reshape(-1, m * m)
                right = (d[:, 0, :, None, j] * d[:, 0, None, :, k]).reshape(-1, m * m)
                u4 += left.T @ right
    return _symmetrized(u3), _symmetrized(u4.reshape(m, m, m, m))


def _symmetrized(tensor: np.ndarray) -> np.ndarray:
    """Σ over all index permutations: the derivative tensor ∂ⁿP/∂ηⁿ of the form
    P(η) = tensor(η, …, η)."""
    return sum(tensor.transpose(p) for p in itertools.permutations(range(tensor.ndim)))


def _symmetric(tensor: np.ndarray) -> np.ndarray:
    """The mean over all index permutations (removes round-off asymmetry)."""
    perms = list(itertools.permutations(range(tensor.ndim)))
    return sum(tensor.transpose(p) for p in perms) / len(perms)


def with_modal_derivatives(data, fe):
    """A copy of ``data`` carrying the static modal derivatives of all pairs of its modes
    and the tensors of the enriched basis (``data.derivatives``), computed from ``fe``,
    the FE model its modes were reduced from (same nodes): the built-in beam or
    hexahedral box, or FE data with solid elements and an isotropic material.

    ValidationError naming what is missing (element information, the material, the
    attachment set) or when the nodes differ."""
    from .fe.nonlinear_energy import strain_points
    from .stiffening import _attached_solver, _inertia_relief_solver, mode_vectors

    if np.asarray(data.nodes).shape != fe.nodes.shape or not np.allclose(data.nodes,
                                                                          fe.nodes):
        raise ValidationError("modal derivatives: the modal data's nodes are not the FE "
                              "model's")
    if data.generalized_shapes is not None:
        raise ValidationError("modal derivatives: modal data with generalized coordinates "
                              "(a Nastran superelement) have no FE model to differentiate")
    points = strain_points(fe)
    attached = data.reference_frame is ReferenceFrame.ATTACHED
    if attached and data.attach_set is None:
        raise ValidationError("modal derivatives: the modal data have an attached frame "
                              "without an attachment node set")
    static = (_attached_solver(fe, data.node_sets[data.attach_set]) if attached
              else _inertia_relief_solver(fe))
    modes = mode_vectors(fe, data)
    n = data.n_modes
    pairs = [(i, j) for i in range(n) for j in range(i, n)]
    if (n + len(pairs)) ** 4 > MAX_QUARTIC:
        raise ValidationError(
            f"modal derivatives: {n} modes give {len(pairs)} derivatives and a quartic "
            f"tensor of {(n + len(pairs)) ** 4:.3g} numbers ({8e-6 * (n + len(pairs)) ** 4:.0f}"
            f" MB); keep at most 10 modes (docs/theory_modal_derivatives.md, 'Cost')")
    loads = derivative_loads(points, modes, pairs)
    theta = np.column_stack([-static(loads[:, k]) for k in range(len(pairs))])
    basis = np.hstack([modes, theta])
    stiffness = basis.T @ (fe.stiffness @ basis)
    mass = basis.T @ (fe.mass @ basis)
    cubic, quartic = energy_tensors(points, basis)
    per = fe.dofs_per_node
    nodal = theta.reshape(fe.n_nodes, per, -1)
    derivs = ModalDerivatives(
        pairs=np.array(pairs, dtype=np.int64),
        theta=nodal[:, :3].reshape(3 * fe.n_nodes, -1),
        theta_psi=nodal[:, 3:].reshape(3 * fe.n_nodes, -1) if per == 6 else None,
        stiffness=0.5 * (stiffness + stiffness.T), mass=0.5 * (mass + mass.T),
        cubic=cubic, quartic=quartic, energy=points.description)
    history = [*data.metadata.get("history", []),
               f"with_modal_derivatives(): {len(pairs)} derivative(s)"]
    return replace(data, derivatives=derivs, metadata={**data.metadata, "history": history},
                   _invariants=data.invariants)


def enriched_transform(derivs: ModalDerivatives, n: int) -> np.ndarray:
    """T (m, n + r): the raw enriched coordinates (modes, then derivatives) of the
    enriched body's coordinates η = [ξ; ζ]. The modes stay; each new ζ_k is a
    combination of derivatives made mass-orthogonal to the modes (a mode's ξ then carries
    all of that mode's motion), to each other, and stiffness-diagonal among themselves;
    derivatives that are round-off (:data:`NULL_TOL`) are not used, and combinations
    holding less than :data:`DEPENDENT_TOL` of a derivative's mass are dropped (scaled
    to unit modal mass here; :func:`enriched_data` scales them to their peaks)."""
    m_all, k_all = derivs.mass, derivs.stiffness
    n_d = m_all.shape[0] - n
    if n_d == 0:
        return np.eye(n)
    norm = np.sqrt(np.clip(np.diag(m_all)[n:], 0.0, None))
    own = {int(i): norm[k] for k, (i, j) in enumerate(derivs.pairs) if i == j}
    big = max(float(np.max(norm, initial=0.0)), 1e-300)
    live = np.array([norm[k] > NULL_TOL * (big if i == j else
                                           np.sqrt(own.get(int(i), big) * own.get(int(j), big)))
                     for k, (i, j) in enumerate(derivs.pairs)], dtype=bool)
    if not np.any(live):
        return np.eye(n)
    m_ff, m_fd = m_all[:n, :n], m_all[:n, n:]
    proj = np.vstack([-solve_small(m_ff, m_fd), np.eye(n_d)])[:, live]   # (m, n_live)
    gram = proj.T @ m_all @ proj
    scale = norm[live]
    w, v = np.linalg.eigh(0.5 * (gram + gram.T) / np.outer(scale, scale))
    keep = w > DEPENDENT_TOL * max(float(np.max(w, initial=0.0)), 1e-300)
    basis = (v[:, keep] / np.sqrt(w[keep])) / scale[:, None]   # M-orthonormal in proj
    k_b = basis.T @ (proj.T @ k_all @ proj) @ basis
    _, q = sla.eigh(0.5 * (k_b + k_b.T))
    new = proj @ basis @ q                                      # (m, r)
    return np.hstack([np.vstack([np.eye(n), np.zeros((n_d, n))]), new])


def _peaks(phi, psi, size):
    """Peak nodal translation of each shape (columns of ``phi``), or its peak rotation
    (``psi``) when its translations are below 1e-6 of the rotation times the body's
    ``size`` [m] (a twist)."""
    peak = np.max(np.abs(phi), axis=0)
    if psi is not None:
        rot = np.max(np.abs(psi), axis=0)
        peak = np.where(peak > 1e-6 * rot * size, peak, rot)
    return np.where(peak > 0, peak, 1.0)


def enriched_data(data):
    """(ModalData, ElasticPolynomial) of a body with modal derivatives: ``data`` with the
    derivatives appended as coordinates (:func:`enriched_transform`, mode kind
    ``derivative``, zero damping), its modal mass and stiffness over the whole basis,
    and the nonlinear elastic force of those coordinates. The stiffening matrices and
    stress modes are not carried over (docs/theory_modal_derivatives.md)."""
    derivs = data.derivatives
    if derivs is None:
        raise ValidationError("the modal data carry no modal derivatives (flexmbs beam/"
                              "reduce --modal-derivatives, or flexmbs.modal.derivatives."
                              "with_modal_derivatives(data, fe))")
    n = data.n_modes
    t = enriched_transform(derivs, n)
    r = t.shape[1] - n
    raw_psi = None if data.psi is None else np.hstack([data.psi, derivs.theta_psi])
    raw_phi = np.hstack([data.phi, derivs.theta])
    size = float(np.max(np.ptp(data.nodes, axis=0)))
    t[:, n:] /= _peaks(raw_phi @ t[:, n:], None if raw_psi is None else raw_psi @ t[:, n:],
                       size)  # each derivative coordinate: peak translation 1 m
    phi = raw_phi @ t
    psi = None if raw_psi is None else raw_psi @ t
    m_ff = t.T @ derivs.mass @ t
    k_ff = t.T @ derivs.stiffness @ t
    m_ff[:n, :n], k_ff[:n, :n] = data.M_ff, data.K_ff   # the modes as the data state them
    cubic = np.einsum("abc,ai,bj,ck->ijk", derivs.cubic, t, t, t, optimize=True)
    quartic = np.einsum("abcd,ai,bj,ck,dl->ijkl", derivs.quartic, t, t, t, t,
                        optimize=True)

    def grown(vector):
        return None if vector is None else np.concatenate([vector, np.zeros(r)])

    damping = None
    if data.damping_matrix is not None:
        damping = np.zeros((n + r, n + r))
        damping[:n, :n] = data.damping_matrix
    metadata = {**data.metadata, "history": [*data.metadata.get("history", []),
                                             f"enriched_data(): {r} derivative "
                                             f"coordinate(s) of {derivs.n_derivatives}"]}
    if isinstance(metadata.get("per_mode"), dict):
        metadata["per_mode"] = {k: [*v, *[None] * r] for k, v in metadata["per_mode"].items()}
    out = replace(
        data, phi=phi, psi=psi, M_ff=0.5 * (m_ff + m_ff.T), K_ff=0.5 * (k_ff + k_ff.T),
        damping_ratio=grown(data.damping_ratio), damping_matrix=damping,
        mode_kinds=(*data.mode_kinds, *(ModeKind.DERIVATIVE,) * r),
        constraint_fraction=grown(data.constraint_fraction), modal_fields={},
        stiffening={}, derivatives=None, metadata=metadata)
    return out, ElasticPolynomial(_symmetric(cubic), _symmetric(quartic))
