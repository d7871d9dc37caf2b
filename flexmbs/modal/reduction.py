"""Modal reduction of FE mass and stiffness: free–free, clamped and Craig–Bampton.

All three solve sparse generalized eigenproblems with shift-invert Lanczos
(``scipy.sparse.linalg.eigsh``), so 10^5 DOFs are practical, and return a
:class:`~flexmbs.modal.data.ModalData` in ascending frequency whose reference-frame
condition is stated and checked:

* :func:`free_free_modes` — mean axes: the six rigid-body modes are found, checked to be
  rigid (they must span the analytic rigid motions) and removed; the elastic modes are
  re-orthogonalised to rigid motion.
* :func:`clamped_modes` — frame attached to the clamped nodes.
* :func:`craig_bampton` — fixed-interface normal modes plus static constraint modes of
  the interface DOFs, orthonormalised so that M_ff and K_ff are diagonal. With
  ``attach`` the frame rides on those nodes (their DOFs are fixed in the body frame, so
  they get no constraint modes); without it the basis is free–free and its six rigid
  modes are removed after orthonormalisation (mean axes).

Mode normalisation: ``"displacement"`` (default) scales each mode to a largest
translational nodal displacement of 1 m, so ξ_j is that displacement in metres and
M_ff holds modal masses in kg; ``"mass"`` gives M_ff = I.
"""

from __future__ import annotations

import time
import warnings
from typing import Literal

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .._blas import solve_small
from ..errors import AccuracyWarning, ConvergenceError, ValidationError
from .data import ModalData, ModeKind, ReferenceFrame, plausibility_warnings
from .eigen import DENSE_LIMIT, eigen
from .femodel import FEModel
from .rigid_motions import check_restrains, diag_ratio, rigid_body_basis

Normalization = Literal["displacement", "mass"]

#: An eigenvalue below this fraction of the first elastic one counts as a rigid mode.
RIGID_EIG_RTOL = 1e-6
#: Rigid modes must lie in the span of the analytic rigid motions to this (M-norm) residual.
RIGID_SPAN_RTOL = 1e-6
#: Warn above this eigenvalue spread max(K_ii/M_ii)/λ₁: a 1 m beam of 999 elements
#: (spread 1.4e14) keeps f₁ to 2e-6, of 9999 elements (1.4e18) loses 2.5 %.
SPREAD_WARN = 1e15
#: An eigenvector within this M-norm residual of the rigid motions is classified rigid.
RIGID_CLASSIFY_RTOL = 1e-3
#: The first elastic eigenvalue must exceed the rigid ones' noise level by this factor
#: (rigid eigenvalues come out at round-off ~1e-16·max λ; a 40 m, 4 cm bar has λ₁/noise
#: ~ 5e3, a mechanism's extra zero modes sit at the noise level).
RIGID_GAP = 100.0


def _normalize(modes: np.ndarray, m_full: sp.spmatrix, fe: FEModel,
               normalization: Normalization) -> np.ndarray:
    if normalization == "mass":
        gen = np.einsum("ij,ij->j", modes, m_full @ modes)
        return modes / np.sqrt(gen)
    if normalization != "displacement":
        raise ValidationError(f"normalization {normalization!r} must be 'displacement' or "
                              "'mass'")
    out = modes.copy()
    for j, rows in enumerate(normalization_rows(modes, fe)):
        vec = modes[rows, j]
        peak = float(np.linalg.norm(vec))
        # sign: the largest component of the peak node positive (deterministic output)
        sign = np.sign(vec[np.argmax(np.abs(vec))]) or 1.0
        out[:, j] *= sign / peak
    return out


def normalization_rows(modes: np.ndarray, fe: FEModel) -> list[np.ndarray]:
    """Per mode, the three DOFs whose norm the displacement normalization makes 1: the
    translations of the node that moves most, or — for a rotation-dominated mode (torsion
    of a beam about its node line) — the rotations of the node that turns most."""
    trans = modes[fe.translational_dofs].reshape(fe.n_nodes, 3, -1)
    t_norm = np.linalg.norm(trans, axis=1)  # (N, n)
    size = max(float(np.max(np.ptp(fe.nodes, axis=0))), 1e-300)
    r_norm = np.zeros_like(t_norm)
    if fe.dofs_per_node == 6:
        rot = modes.reshape(fe.n_nodes, 6, -1)[:, 3:, :]
        r_norm = np.linalg.norm(rot, axis=1)
    out = []
    for j in range(modes.shape[1]):
        k = int(np.argmax(t_norm[:, j]))
        rows = fe.node_dofs([k], translational_only=True)
        if t_norm[k, j] < 1e-3 * size * np.max(r_norm[:, j]):
            k = int(np.argmax(r_norm[:, j]))
            rows = fe.node_dofs([k])[3:]
        out.append(rows)
    return out


def _assemble_modal(fe: FEModel, modes: np.ndarray, *, frame: ReferenceFrame,
                    attach_set: str | None, node_sets: dict, kinds, fraction,
                    metadata: dict, normalization: Normalization,
                    eigenvalues: np.ndarray) -> ModalData:
    """Normalise the eigenvectors and build the ModalData.

    M_ff = Φᵀ M Φ is formed from the vectors; K_ff = Λ M_ff from the eigenvalues, not as
    Φᵀ K Φ, because for very fine meshes K is so ill-conditioned (cond ~ (L/h)⁴) that
    Φᵀ K Φ loses all digits (seen: a negative eigenvalue of Φᵀ K Φ for a 10⁵-element
    beam). The eigen-residual ‖KΦ − MΦΛ‖/‖MΦΛ‖ is recorded instead.
    """
    modes = _normalize(modes, fe.mass, fe, normalization)
    lam = np.clip(np.asarray(eigenvalues, dtype=float), 0.0, None)
    m_phi = fe.mass @ modes
    m_ff = modes.T @ m_phi
    m_ff = 0.5 * (m_ff + m_ff.T)
    diag_m = np.diag(m_ff)
    off_m = (np.max(np.abs(m_ff - np.diag(diag_m))) / np.max(np.abs(diag_m))
             if modes.shape[1] > 1 else 0.0)
    rows = np.arange(fe.n_dof)  # the equations' rows: not those of DOFs held fixed,
    if attach_set is not None and attach_set in node_sets:  # which carry the reactions
        rows = np.setdiff1d(rows, fe.node_dofs(node_sets[attach_set]))
    residual = (fe.stiffness @ modes - m_phi * lam)[rows]
    eig_res = np.linalg.norm(residual, axis=0) / np.maximum(
        np.linalg.norm((m_phi * lam)[rows], axis=0), 1e-300)
    metadata = {**metadata, "orthogonality_residual": float(off_m),
                "eigen_residual_max": float(np.max(eig_res)) if eig_res.size else 0.0}
    if lam.size and lam[0] > 0:
        spread = diag_ratio(fe) / lam[0]
        metadata["eigenvalue_spread"] = spread
        if spread > SPREAD_WARN:
            warnings.warn(
                f"reduction: the model's eigenvalue spread max(K_ii/M_ii)/λ₁ = {spread:.2g} "
                f"exceeds what double precision resolves (~{SPREAD_WARN:.0e}); the lowest "
                f"frequencies may be wrong by ~{100 * spread * 1e-16:.2g} % — use fewer, "
                f"longer elements (for beams the spread grows as (L/h)⁴)",
                AccuracyWarning, stacklevel=3)
    if off_m > 1e-6:
        raise ConvergenceError(
            f"reduction: the computed modes are not mass-orthogonal (relative off-diagonal "
            f"{off_m:.3g} of Φᵀ M Φ); the eigen solver did not converge"
        )
    m_ff = np.diag(diag_m)
    k_ff = np.diag(lam * diag_m)
    trans = fe.translational_dofs
    psi = None
    if fe.dofs_per_node == 6:
        rot = fe.node_dofs(np.arange(fe.n_nodes))[np.tile([False] * 3 + [True] * 3,
                                                          fe.n_nodes)]
        psi = modes[rot]
    sets = dict(fe.node_sets)
    sets.update(node_sets)
    metadata.setdefault("normalization", normalization)
    metadata["fe_dofs_per_node"] = fe.dofs_per_node
    metadata["fe_n_dof"] = fe.n_dof
    metadata["mass_description"] = (
        "consistent FE mass" + (" of all 6 DOFs per node: the invariants include the "
                                "rotary inertia of the nodes (rotational rows [0, I, Ψ])"
                                if fe.dofs_per_node == 6 else "")
    )
    metadata.setdefault("source", fe.metadata)
    if fe.dofs_per_node == 6:
        neglect = translational_mass_neglect(fe, modes)
        metadata["per_mode"] = {
            "point_mass_kinetic_energy_fraction": neglect.pop("kinetic_energy_fraction_kept")}
        metadata["translational_mass_neglect"] = neglect
    data = ModalData(
        nodes=fe.nodes, phi=modes[trans], psi=psi, M_ff=m_ff, K_ff=k_ff,
        mass=fe.mass, reference_frame=frame, attach_set=attach_set,
        cells=fe.cells, node_sets=sets, node_ids=fe.node_ids, mode_kinds=kinds,
        constraint_fraction=fraction, units=fe.metadata.get("source_units", "SI"),
        metadata=metadata,
    )
    plausibility_warnings(data)
    return data


def translational_mass_neglect(fe: FEModel, modes: np.ndarray) -> dict:
    """What a translational-only mass description would lose for a 6-DOF FE model.

    flexmbs's invariants use the full 6-DOF mass; this report measures the alternative
    (nodes as point masses, the usual simplification) so the choice is documented.

    Returns, per mode, the fraction of the full-FE-mass kinetic energy that the
    translational partition keeps (φ_tᵀ M_tt φ_t / φᵀ M φ), and the inertia tensor about
    the frame origin from the full FE mass (rigid rotations including the nodal rotation
    DOFs) next to the one from the translational mass [kg m²].
    """
    t = fe.translational_dofs
    m_tt = fe.translational_mass()
    full = np.einsum("ij,ij->j", modes, fe.mass @ modes)
    kept = np.einsum("ij,ij->j", modes[t], m_tt @ modes[t])
    rigid = rigid_body_basis(fe)
    inertia_full = rigid[:, 3:].T @ (fe.mass @ rigid[:, 3:])
    inertia_t = rigid[t, 3:].T @ (m_tt @ rigid[t, 3:])
    return {
        "kinetic_energy_fraction_kept": (kept / full).tolist(),
        "inertia_origin_full_fe": inertia_full.tolist(),
        "inertia_origin_translational": inertia_t.tolist(),
    }


def _free_shift(fe: FEModel, rigid: np.ndarray) -> float:
    """A negative shift of the order of the first elastic eigenvalue of a free body.

    Shift-invert Lanczos separates the wanted eigenvalues only when |σ| is comparable to
    them: with |σ| ≫ λ₁ the rigid cluster and the low elastic modes map to nearly the same
    1/(λ−σ) and ARPACK crawls (a slender 40 m bar took minutes). So estimate λ₁ first:
    four steps of inverse iteration with a nearly singular shift σ₀ = −10⁻¹² max(K_ii/M_ii)
    (the near-null space is the rigid motions, projected out in the M-norm each step),
    then a Rayleigh quotient ρ ≥ λ₁. The returned shift is −ρ.
    """
    sigma0 = -1e-12 * diag_ratio(fe)
    try:
        lu = spla.splu((fe.stiffness - sigma0 * fe.mass).tocsc())
    except RuntimeError:
        return sigma0
    x = np.random.default_rng(0).standard_normal(fe.n_dof)
    for _ in range(4):
        x = _mass_orthogonalize(lu.solve(fe.mass @ x)[:, None], rigid, fe.mass)[:, 0]
        x /= np.linalg.norm(x)
    rho = float(x @ (fe.stiffness @ x)) / float(x @ (fe.mass @ x))
    return -rho if rho > 0 else sigma0


def _mass_orthogonalize(modes: np.ndarray, basis: np.ndarray, m_mat) -> np.ndarray:
    """Remove the M-projection of ``modes`` on span(``basis``)."""
    mb = m_mat @ basis
    gram = basis.T @ mb
    try:
        coef = solve_small(gram, mb.T @ modes)
    except np.linalg.LinAlgError:
        raise ValidationError(
            "the rigid-body mass matrix of the nodes is singular: the six rigid motions are "
            "not independent under this mass (collinear or coincident nodes without "
            "rotational DOFs?); free–free modes and mean axes are undefined for it"
        ) from None
    return modes - basis @ coef


# ---------------------------------------------------------------------- public API
def free_free_modes(fe: FEModel, n_modes: int, *,
                    normalization: Normalization = "displacement") -> ModalData:
    """Free–free elastic modes with the six rigid-body modes found and removed.

    Parameters
    ----------
    fe : FEModel
        Unconstrained FE model (SI).
    n_modes : int
        Number of elastic modes to keep.
    normalization : {"displacement", "mass"}
        See the module docstring.

    Returns
    -------
    ModalData
        Mean-axis reference frame; rigid content of every mode is reported in
        ``metadata["rigid_content_max"]``.

    Raises
    ------
    ValidationError
        If the structure does not have exactly six rigid-body modes (a mechanism or a
        grounded model), or the near-zero modes are not rigid motions.
    """
    _check_count(n_modes, "free_free_modes: n_modes")
    _check_matrices(fe, "free_free_modes")
    if n_modes + 6 > fe.n_dof:
        raise ValidationError(
            f"free_free_modes: asked for {n_modes} elastic modes, but the model has "
            f"{fe.n_dof} DOFs, six of them rigid-body motions: at most "
            f"{max(fe.n_dof - 6, 0)} elastic modes")
    start = time.perf_counter()
    rigid = rigid_body_basis(fe)
    sigma = _free_shift(fe, rigid) if fe.n_dof > DENSE_LIMIT else -1e-6 * diag_ratio(fe)
    active = _active(fe)
    lam, vec_a = eigen(fe.stiffness[active][:, active], fe.mass[active][:, active],
                        n_modes + 6, sigma, "free_free_modes")
    vec = np.zeros((fe.n_dof, lam.size))
    vec[active] = vec_a
    if lam.size < 7:
        raise ValidationError("free_free_modes: the model is too small for 6 rigid + elastic "
                              "modes")
    residuals = _span_residuals(vec, rigid, fe.mass)
    is_rigid = residuals < RIGID_CLASSIFY_RTOL
    n_rigid = int(np.sum(is_rigid))
    rigid_scale = float(np.max(np.abs(lam[is_rigid]))) if n_rigid else 0.0
    elastic_lam = lam[~is_rigid]
    n_zero = int(np.sum(np.abs(lam) < 1e-12 * diag_ratio(fe)))
    floppy = (elastic_lam.size and rigid_scale > 0
              and elastic_lam[0] < RIGID_GAP * rigid_scale)
    if n_rigid != 6 or floppy or not np.all(is_rigid[:6]):
        raise ValidationError(
            f"free_free_modes: found {n_rigid} rigid-body modes among the lowest "
            f"{lam.size} eigenpairs (a free body has exactly six, each a rigid motion)"
            + (f" and zero-frequency non-rigid modes (λ = {elastic_lam[0]:.3g})"
               if floppy else "")
            + f". Lowest eigenvalues: {np.array2string(lam[:8], precision=4)}; "
            + ("the model has a mechanism or unconnected parts"
               if floppy or n_rigid > 6 or n_zero > 6
               else "its zero-frequency modes are not rigid motions of the node "
                    "coordinates: the nodes do not match the matrices (their order, count "
                    "or DOFs per node)" if n_zero == 6
               else "the model may be grounded (use clamped_modes)")
        )
    residual = float(np.max(residuals[:6]))
    if residual > RIGID_SPAN_RTOL:
        raise ValidationError(
            f"free_free_modes: the six near-zero modes are not rigid-body motions (residual "
            f"{residual:.3e} in the mass norm, limit {RIGID_SPAN_RTOL:g})"
        )
    elastic = _mass_orthogonalize(vec[:, 6:], rigid, fe.mass)
    meta = {
        "method": "free-free",
        "solver": "eigsh shift-invert" if fe.n_dof > DENSE_LIMIT else "dense eigh",
        "shift": sigma,
        "rigid_eigenvalues": lam[:6].tolist(),
        "rigid_span_residual": residual,
        "time_s": time.perf_counter() - start,
    }
    return _assemble_modal(fe, elastic, frame=ReferenceFrame.MEAN_AXIS, attach_set=None,
                           node_sets={}, kinds=[ModeKind.NORMAL] * n_modes, fraction=None,
                           metadata=meta, normalization=normalization,
                           eigenvalues=lam[6:])


def clamped_modes(fe: FEModel, clamp, n_modes: int, *, set_name: str | None = None,
                  normalization: Normalization = "displacement") -> ModalData:
    """Modes with all DOFs of the ``clamp`` nodes fixed; the frame is attached there.

    Parameters
    ----------
    clamp : str or array_like of int
        A node-set name or external node labels.
    set_name : str, optional
        Name of the attachment node set in the result (default: the set name, or
        ``"clamp"``).
    """
    _check_count(n_modes, "clamped_modes: n_modes")
    _check_matrices(fe, "clamped_modes")
    start = time.perf_counter()
    nodes = fe.resolve_nodes(clamp, "clamped_modes: clamp")
    fixed = fe.node_dofs(nodes)
    check_restrains(fe, fixed, f"clamped_modes: clamping nodes {fe.node_ids[nodes][:6].tolist()}")
    free = np.setdiff1d(_active(fe), fixed)
    k_ff = fe.stiffness[free][:, free]
    m_ff = fe.mass[free][:, free]
    lam, vec = eigen(k_ff, m_ff, n_modes, 0.0, "clamped_modes")
    if lam[0] <= 1e-9 * max(abs(lam[-1]), 1e-300):
        raise ValidationError(
            f"clamped_modes: the clamped model still has a zero-frequency mode (λ = "
            f"{lam[0]:.3g}); clamping nodes {fe.node_ids[nodes][:6].tolist()} does not remove "
            f"all rigid motion"
        )
    modes = np.zeros((fe.n_dof, n_modes))
    modes[free] = vec
    name = set_name or (clamp if isinstance(clamp, str) else "clamp")
    meta = {"method": "clamped", "clamp_nodes": fe.node_ids[nodes].tolist(),
            "time_s": time.perf_counter() - start}
    return _assemble_modal(fe, modes, frame=ReferenceFrame.ATTACHED, attach_set=name,
                           node_sets={name: nodes}, kinds=[ModeKind.NORMAL] * n_modes,
                           fraction=None, metadata=meta, normalization=normalization,
                           eigenvalues=lam)


def craig_bampton(fe: FEModel, interface, n_normal: int, *, attach=None,
                  n_modes: int | None = None,
                  normalization: Normalization = "displacement") -> ModalData:
    """Craig–Bampton reduction, orthonormalised so that M_ff and K_ff are diagonal.

    Parameters
    ----------
    fe : FEModel
    interface : str or array_like of int
        Interface node set (name) or labels: each DOF of these nodes gets a static
        constraint mode Ψ = −K_ii⁻¹ K_ib, except the DOFs of ``attach`` nodes.
    n_normal : int
        Number of fixed-interface normal modes (all interface and attach DOFs fixed).
    attach : str or array_like of int, optional
        Nodes fixed to the body frame (attached/tangent frame). ``None``: the free–free
        Craig–Bampton basis, whose six rigid modes are removed after orthonormalisation
        (mean axes); the interface must then be able to carry all rigid motions.
    n_modes : int, optional
        Keep only the lowest ``n_modes`` orthonormalised modes (default: all).

    Returns
    -------
    ModalData
        ``mode_kinds`` marks each orthonormalised coordinate ``constraint`` when more than
        half of its (reduced-basis) kinetic norm is constraint-mode content, else
        ``normal``; ``constraint_fraction`` holds that share.
    """
    _check_count(n_normal, "craig_bampton: n_normal", allow_zero=True)
    _check_matrices(fe, "craig_bampton")
    start = time.perf_counter()
    iface = np.unique(fe.resolve_nodes(interface, "craig_bampton: interface"))
    attached = (np.zeros(0, dtype=np.int64) if attach is None
                else np.unique(fe.resolve_nodes(attach, "craig_bampton: attach")))
    iface = np.setdiff1d(iface, attached)
    active = _active(fe)
    b_dofs = np.intersect1d(fe.node_dofs(iface), active)
    a_dofs = np.intersect1d(fe.node_dofs(attached), active)
    i_dofs = np.setdiff1d(active, np.concatenate([b_dofs, a_dofs]))
    if attach is not None:
        check_restrains(fe, a_dofs, f"craig_bampton: attaching nodes "
                                     f"{fe.node_ids[attached][:6].tolist()} to the frame")
    check_restrains(fe, np.concatenate([b_dofs, a_dofs]),
                     "craig_bampton: fixing the interface (and attach) nodes "
                     f"{fe.node_ids[np.concatenate([iface, attached])][:6].tolist()}")
    k_mat, m_mat = fe.stiffness.tocsr(), fe.mass.tocsr()
    k_ii = k_mat[i_dofs][:, i_dofs].tocsc()
    m_ii = m_mat[i_dofs][:, i_dofs].tocsc()
    lam_n, phi_n = eigen(k_ii, m_ii, n_normal, 0.0, "craig_bampton (fixed-interface modes)")
    if b_dofs.size:
        try:
            lu = spla.splu(k_ii)
        except RuntimeError as exc:
            raise ValidationError(
                "craig_bampton: K_ii with the interface and attach DOFs fixed is singular; "
                "the interface does not restrain all rigid motion of the interior"
            ) from exc
        k_ib = k_mat[i_dofs][:, b_dofs].toarray()
        psi_ib = -lu.solve(k_ib)
    else:
        psi_ib = np.zeros((i_dofs.size, 0))
    n_b = b_dofs.size
    basis = np.zeros((fe.n_dof, n_normal + n_b))
    basis[i_dofs, :n_normal] = phi_n
    basis[i_dofs, n_normal:] = psi_ib
    basis[b_dofs, n_normal:] = np.eye(n_b)
    sets = {"interface": iface} if iface.size else {}
    attach_name = None
    if attach is not None:
        attach_name = attach if isinstance(attach, str) else "attach"
        sets[attach_name] = attached
    meta = {
        "method": "craig-bampton",
        "interface_nodes": fe.node_ids[iface].tolist(),
        "attach_nodes": fe.node_ids[attached].tolist(),
        "n_normal": n_normal,
        "n_constraint": n_b,
        "fixed_interface_frequencies_hz": (np.sqrt(np.clip(lam_n, 0, None))
                                           / (2 * np.pi)).tolist(),
    }
    return reduce_on_basis(fe, basis, n_normal, attached=None if attach is None else attached,
                           attach_name=attach_name, node_sets=sets, metadata=meta,
                           normalization=normalization, n_modes=n_modes, start=start)


def reduce_on_basis(fe: FEModel, basis: np.ndarray, n_normal: int, *, attached,
                    attach_name: str | None, node_sets: dict, metadata: dict,
                    normalization: Normalization = "displacement",
                    n_modes: int | None = None, start: float | None = None) -> ModalData:
    """ModalData of a Craig–Bampton ``basis`` (n_dof, n_normal + n_b; fixed-interface
    modes first), orthonormalised by the reduced eigenproblem. ``attached``: node
    indices fixed to the frame, or None (free–free basis, mean axes: six rigid modes
    removed). For :func:`craig_bampton` and :mod:`flexmbs.modal.solid_substructures`."""
    start, attach = time.perf_counter() if start is None else start, attached
    m_mat, k_mat = fe.mass.tocsr(), fe.stiffness.tocsr()
    m_cb = basis.T @ (m_mat @ basis)
    k_cb = basis.T @ (k_mat @ basis)
    m_cb = 0.5 * (m_cb + m_cb.T)
    k_cb = 0.5 * (k_cb + k_cb.T)
    lam, x = sla.eigh(k_cb, m_cb)
    n_rigid = 0
    meta_extra = {}
    if attach is not None and lam[0] < 1e-12 * diag_ratio(fe):
        raise ValidationError(
            f"craig_bampton: with nodes {fe.node_ids[attached][:6].tolist()} attached to the "
            f"frame the reduced model still has a zero-frequency mode (λ = {lam[0]:.3g}); "
            f"the attach set does not remove all rigid motion"
        )
    if attach is None:
        ref = abs(lam[min(6, lam.size - 1)]) or 1.0
        n_rigid = int(np.sum(np.abs(lam) < RIGID_EIG_RTOL * ref))
        if n_rigid != 6:
            raise ValidationError(
                f"craig_bampton without attach (mean axes): the reduced basis has {n_rigid} "
                f"rigid-body modes, expected 6; give an interface that can carry all six "
                f"rigid motions (or attach the frame to a node set)"
            )
        rigid = rigid_body_basis(fe)
        residual = _span_residual(basis @ x[:, :6], rigid, m_mat)
        if residual > RIGID_SPAN_RTOL:
            raise ValidationError(f"craig_bampton: the six zero modes are not rigid motions "
                                  f"(residual {residual:.3e})")
        meta_extra["rigid_span_residual"] = residual
    x = x[:, n_rigid:]
    lam = lam[n_rigid:]
    if n_modes is not None:
        _check_count(n_modes, "craig_bampton: n_modes")
        if n_modes > lam.size:
            raise ValidationError(f"craig_bampton: n_modes = {n_modes} exceeds the "
                                  f"{lam.size} available modes")
        x, lam = x[:, :n_modes], lam[:n_modes]
    modes = basis @ x
    if attach is None:
        modes = _mass_orthogonalize(modes, rigid_body_basis(fe), m_mat)
    mn = np.einsum("ij,ij->j", x[:n_normal], m_cb[:n_normal, :n_normal] @ x[:n_normal])
    mb = np.einsum("ij,ij->j", x[n_normal:], m_cb[n_normal:, n_normal:] @ x[n_normal:])
    fraction = mb / (mn + mb)
    kinds = [ModeKind.CONSTRAINT if f > 0.5 else ModeKind.NORMAL for f in fraction]
    meta = {**metadata, "time_s": time.perf_counter() - start, **meta_extra}
    frame = ReferenceFrame.ATTACHED if attach is not None else ReferenceFrame.MEAN_AXIS
    return _assemble_modal(fe, modes, frame=frame, attach_set=attach_name, node_sets=node_sets,
                           kinds=kinds, fraction=fraction, metadata=meta,
                           normalization=normalization, eigenvalues=lam)


def _span_residuals(vectors: np.ndarray, basis: np.ndarray, m_mat) -> np.ndarray:
    """Relative M-norm residual of each column of ``vectors`` off span(``basis``)."""
    rest = _mass_orthogonalize(vectors, basis, m_mat)
    num = np.einsum("ij,ij->j", rest, m_mat @ rest)
    den = np.einsum("ij,ij->j", vectors, m_mat @ vectors)
    return np.sqrt(np.abs(num) / den)


def _span_residual(vectors: np.ndarray, basis: np.ndarray, m_mat) -> float:
    """Largest relative M-norm residual of ``vectors`` projected on span(``basis``)."""
    return float(np.max(_span_residuals(vectors, basis, m_mat)))


def _active(fe: FEModel) -> np.ndarray:
    """The DOFs that are part of the model (not :attr:`FEModel.inactive_dofs`)."""
    return np.setdiff1d(np.arange(fe.n_dof), fe.inactive_dofs)


def _check_matrices(fe: FEModel, what: str) -> None:
    """Refuse an FE model whose stiffness or mass matrix is all zero (an empty or wrong
    file, not a mechanism or a grounded model), naming the file when it is known."""
    files = fe.metadata.get("source_files", {}) if isinstance(fe.metadata, dict) else {}
    for name, mat in (("stiffness", fe.stiffness), ("mass", fe.mass)):
        if mat.count_nonzero() == 0:
            source = f" (read from {files[name]!r})" if name in files else ""
            raise ValidationError(
                f"{what}: the {name} matrix{source} is all zero ({mat.shape[0]} x "
                f"{mat.shape[1]}, no non-zero entry); it holds no {name} at all, so there "
                f"are no modes to compute: check that the right file was exported")


def _check_count(n, name: str, allow_zero: bool = False) -> None:
    low = 0 if allow_zero else 1
    if not isinstance(n, (int, np.integer)) or n < low:
        raise ValidationError(f"{name} must be an integer >= {low}, got {n!r}")
