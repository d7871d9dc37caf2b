"""Stress modes: the stresses each mode of a reduced body causes, stored as modal fields so
that a run recovers stresses as field @ ξ (docs/stress.md).

Each field is an array (N nodes, components, n modes) per unit modal coordinate:

* beams (the built-in beam FE, :func:`flexmbs.modal.fe.beam.straight_beam`):
  ``section_forces`` — N, Q_y, Q_z, T, M_y, M_z [N, N, N, N m, N m, N m] at each node
  in the section's axes, from the elements' end forces K_e d_e (the force and moment the
  part beyond the node exerts on the part before it, x along the beam), averaged over
  the node's elements; and ``fibre_stress`` — the normal stress
  σ = N/A + M_y z/I_y − M_z y/I_z [Pa] at the section's stress points: the corners of
  the true outline's convex hull (a rectangle's, a box's, an I's or a channel's four
  outer corners, in the order (−y,−z), (+y,−z), (+y,+z), (−y,+z)), or 16 points of a
  round section's outer circle (docs/beam_sections.md);
* solids (the built-in hexahedral box, or hexahedra, 20-node bricks and tetrahedra of FE
  files with an isotropic material): ``stress`` — σ_xx, σ_yy, σ_zz, σ_yz, σ_xz, σ_xy
  [Pa] in the body frame, Hooke's law at the elements' Gauss points extrapolated to their
  corners (trilinear from the 2 × 2 × 2 points, exact for a linear stress field; a
  20-node brick's midside node the mean of its edge's corners; a tetrahedron's one point
  as it is) and averaged over the elements at each node;
* shells (quadrilaterals of FE files with a thickness and an isotropic material,
  docs/theory_shells.md): ``shell_stress`` — the plane stress of the top surface
  (z = +t/2 along each element's normal, the right-hand normal of its node order) then
  of the bottom one, each as σ_xx, σ_yy, σ_zz, σ_yz, σ_xz, σ_xy [Pa] in the body frame,
  extrapolated from the Gauss points to the corners (bilinearly from a quadrilateral's
  2 × 2, linearly from a triangle's 3) and averaged over
  the elements at each node (a mesh's normals must agree for the sides to mean the same
  at a shared node).

Static correction (:func:`static_correction`): the static deflections under unit loads
at chosen nodes, made mass-orthogonal to the kept modes and turned into modes of their
own (a Rayleigh–Ritz solve on them alone, so the kept modes' shapes are unchanged, with
their stiffness coupling to the new ones kept), so that a few modes carry the stress of
a concentrated load (docs/stress.md).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import scipy.linalg as sla

from .._blas import solve_small
from ..errors import ValidationError
from .fe import shell_elements, solid_elements
from .fe.file_elements import file_elements_of
from .fe.sections import CIRCLE_POINTS
from .field_names import FIELD_COMPONENTS, FIELD_UNITS  # noqa: F401  (also here)

#: Natural coordinates of the corners (VTK order) and of the 2x2x2 Gauss points.
_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                     [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)


def _hex_extrapolation() -> np.ndarray:
    """(8 corners, 8 Gauss points): corner values of the trilinear field through the
    Gauss-point values (the Gauss points of :mod:`~flexmbs.modal.fe.solid_elements`
    lie at the corners' directions / √3)."""
    gauss = _CORNERS / np.sqrt(3.0)
    shape = np.prod(1.0 + gauss[:, None, :] * _CORNERS[None, :, :], axis=2) / 8.0
    return np.linalg.inv(shape)


def von_mises(name: str, values: np.ndarray) -> np.ndarray:
    """Von Mises stress [Pa] from field values (..., components): a solid's six
    components; for a beam's ``fibre_stress`` the largest |σ| of the corners (uniaxial:
    the shear stress of Q and T is not included)."""
    v = np.asarray(values, dtype=float)
    if name == "stress":
        sxx, syy, szz, syz, sxz, sxy = np.moveaxis(v, -1, 0)
        return np.sqrt(0.5 * ((sxx - syy) ** 2 + (syy - szz) ** 2 + (szz - sxx) ** 2)
                       + 3.0 * (syz**2 + sxz**2 + sxy**2))
    if name == "fibre_stress":
        return np.max(np.abs(v), axis=-1)
    if name == "shell_stress":  # the larger of the two surfaces'
        return np.maximum(von_mises("stress", v[..., :6]), von_mises("stress", v[..., 6:]))
    raise ValidationError(f"no von Mises stress for field {name!r}; stress fields are "
                          f"'stress' (solids), 'shell_stress' (shells) and 'fibre_stress' "
                          f"(beams)")


def stress_field_name(fields) -> str | None:
    """The field of ``fields`` (names) a von Mises stress comes from, or None."""
    for name in ("stress", "shell_stress", "fibre_stress"):
        if name in fields:
            return name
    return None


# ------------------------------------------------------------------------------- beams
def _beam_parts(fe):
    from .fe.beam import BeamSection, Material, beam_element_matrices

    meta = fe.metadata
    section = BeamSection(**meta["section"])
    material = Material(**{k: v for k, v in meta["material"].items() if k != "G"})
    ke, _ = beam_element_matrices(float(meta["element_length"]), section, material,
                                  meta["theory"], bool(meta.get("rotary_inertia", False)))
    return section, ke, np.asarray(meta["local_frame"], dtype=float)


def beam_section_forces(fe, vectors: np.ndarray) -> np.ndarray:
    """(N, 6, n) section forces N, Q_y, Q_z, T, M_y, M_z of the displacement vectors
    (6N, n) of the built-in beam ``fe`` (see the module docstring)."""
    _, ke, frame = _beam_parts(fe)
    conn = np.asarray(fe.cells["line"], dtype=np.int64)
    n = vectors.shape[1]
    nodal = vectors.reshape(fe.n_nodes, 6, n)
    # element DOFs in local axes: rows of ``frame`` are the local x, y, z
    d = np.concatenate([nodal[conn[:, 0]], nodal[conn[:, 1]]], axis=1)   # (E, 12, n)
    d_local = np.einsum("ij,ekjn->ekin", frame, d.reshape(len(conn), 4, 3, n))
    f = np.einsum("ab,ebn->ean", ke, d_local.reshape(len(conn), 12, n))   # end forces
    total = np.zeros((fe.n_nodes, 6, n))
    count = np.zeros(fe.n_nodes)
    np.add.at(total, conn[:, 0], -f[:, :6])   # on the part before node a: −f_a
    np.add.at(total, conn[:, 1], f[:, 6:])    # before node b: f_b
    np.add.at(count, conn[:, 0], 1.0)
    np.add.at(count, conn[:, 1], 1.0)
    return total / np.maximum(count, 1.0)[:, None, None]


def fibre_points(outline: dict) -> np.ndarray:
    """(k, 2) section points (y, z) [m] where ``fibre_stress`` is taken: the outline's
    ``stress_points`` (:func:`~flexmbs.modal.fe.section_tables.section_outline`: the corners of
    the true outline's convex hull, or points of a round section's outer circle); for an
    outline given by its size alone, a rectangle's four corners (−,−), (+,−), (+,+),
    (−,+), or :data:`CIRCLE_POINTS` points of a circle from +y towards +z."""
    if outline.get("stress_points") is not None:
        return np.asarray(outline["stress_points"], dtype=float).reshape(-1, 2)
    if outline.get("shape") == "circle":
        angle = 2 * np.pi * np.arange(CIRCLE_POINTS) / CIRCLE_POINTS
        return 0.5 * float(outline["diameter"]) * np.column_stack([np.cos(angle),
                                                                   np.sin(angle)])
    b, h = float(outline["width_y"]), float(outline["height_z"])
    return np.array([[-b, -h], [b, -h], [b, h], [-b, h]]) / 2.0


def beam_fibre_stress(fe, forces: np.ndarray, outline: dict) -> np.ndarray:
    """(N, k, n) normal stress [Pa] at the section's fibre points
    (:func:`fibre_points`) from the section forces."""
    from .fe.beam import BeamSection

    section = BeamSection(**fe.metadata["section"])
    corners = fibre_points(outline)
    axial, m_y, m_z = forces[:, 0], forces[:, 4], forces[:, 5]
    return (axial[:, None] / section.A
            + corners[None, :, 1, None] * m_y[:, None] / section.Iy
            - corners[None, :, 0, None] * m_z[:, None] / section.Iz)


# ------------------------------------------------------------------------------ solids
def _solid_parts(fe) -> tuple[dict, tuple[float, float]]:
    from .stiffening import _is_builtin_solid

    if _is_builtin_solid(fe):
        meta = fe.metadata
        return ({"hexahedron": np.asarray(fe.cells["hexahedron"], np.int64)},
                solid_elements.isotropic_lame(float(meta["E"]), float(meta["nu"])))
    elements = file_elements_of(fe, what="stress modes")
    return elements.cells, elements.lame


def solid_nodal_stress(fe, vectors: np.ndarray) -> np.ndarray:
    """(N, 6, n) nodal stresses [Pa] (xx, yy, zz, yz, xz, xy; body frame) of the
    displacement vectors (3N, n) of a solid FE model (see the module docstring)."""
    cells, lame = _solid_parts(fe)
    n = vectors.shape[1]
    total = np.zeros((fe.n_nodes, 6, n))
    count = np.zeros(fe.n_nodes)
    extrapolate = _hex_extrapolation()
    for kind, conn in cells.items():
        conn = np.asarray(conn, dtype=np.int64)
        dndx, _ = solid_elements.gradients(fe.nodes, conn, kind)
        for j in range(n):
            sigma = solid_elements.gauss_stresses(dndx, conn, vectors[:, j], lame)
            voigt = np.stack([sigma[..., 0, 0], sigma[..., 1, 1], sigma[..., 2, 2],
                              sigma[..., 1, 2], sigma[..., 0, 2], sigma[..., 0, 1]], axis=-1)
            if kind in ("hexahedron", "hexahedron20"):  # (2 x 2 x 2 points: trilinear)
                corner = np.einsum("ag,egc->eac", extrapolate, voigt)      # (E, 8, 6)
                if kind == "hexahedron20":  # a midside node: its edge's mean
                    corner = np.concatenate([corner, 0.5 * (
                        corner[:, [a for a, _ in solid_elements.HEX20_EDGES]]
                        + corner[:, [b for _, b in solid_elements.HEX20_EDGES]])], axis=1)
            else:
                corner = np.repeat(voigt, conn.shape[1], axis=1)  # (E, a, 6)
            np.add.at(total[:, :, j], conn, corner)
        np.add.at(count, conn, 1.0)
    return total / np.maximum(count, 1.0)[:, None, None]


# ------------------------------------------------------------------------------ shells
def shell_nodal_stress(fe, vectors: np.ndarray) -> np.ndarray:
    """(N, 12, n) nodal surface stresses [Pa] (top then bottom: xx, yy, zz, yz, xz, xy;
    body frame) of the displacement vectors (6N, n) of a shell FE model (see the module
    docstring)."""
    elements = file_elements_of(fe, what="stress modes")
    pairs = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))
    n = vectors.shape[1]
    total = np.zeros((fe.n_nodes, 12, n))
    count = np.zeros(fe.n_nodes)
    for kind, conn in elements.shells.items():
        extrapolate = shell_elements.gauss_to_corners(conn)    # (corner, Gauss point)
        for j in range(n):
            sigma = shell_elements.surface_stresses(fe.nodes, conn, elements.thickness[kind],
                                                    elements.young, elements.nu,
                                                    vectors[:, j], elements.labels.get(kind))
            voigt = np.concatenate([np.stack([sigma[:, :, side, a, b] for a, b in pairs],
                                             -1) for side in (1, 0)], axis=-1)  # (E, G, 12)
            np.add.at(total[:, :, j], conn, np.einsum("ag,egc->eac", extrapolate, voigt))
        count += np.bincount(conn.ravel(), minlength=fe.n_nodes)
    return total / np.maximum(count, 1)[:, None, None]


# ------------------------------------------------------------------------------ public
def stress_fields(fe, data) -> dict[str, np.ndarray]:
    """The stress modes of ``data`` (modes reduced from ``fe``): beam or solid fields as in
    the module docstring. ValidationError naming what is missing otherwise."""
    from .fe.section_tables import section_outline
    from .stiffening import _is_builtin_beam, mode_vectors

    if fe.n_nodes != data.nodes.shape[0]:
        raise ValidationError(f"stress modes: the FE model has {fe.n_nodes} nodes but the "
                              f"modal data {data.nodes.shape[0]}; give the FE model the "
                              "modes were reduced from")
    vectors = mode_vectors(fe, data)
    if _is_builtin_beam(fe):
        forces = beam_section_forces(fe, vectors)
        outline = section_outline({"source": fe.metadata,
                                   **{k: v for k, v in data.metadata.items()
                                      if k == "section_outline_m"}})
        if outline.get("equivalent"):
            warnings.warn("stress modes: the beam section was given by its constants alone "
                          "(no outline or stress points), so its fibre stresses are taken "
                          "at the corners of the equivalent rectangle √(12 I_z/A) × "
                          "√(12 I_y/A), which is not the true section (a box's are 20 % "
                          "too high); use BeamSection.box/tube/i_beam/channel or "
                          "BeamSection.general(..., outline=...) (docs/beam_sections.md)",
                          stacklevel=3)
        return {"section_forces": forces,
                "fibre_stress": beam_fibre_stress(fe, forces, outline)}
    if fe.dofs_per_node == 6:
        return {"shell_stress": shell_nodal_stress(fe, vectors)}
    return {"stress": solid_nodal_stress(fe, vectors)}


def with_stress(data, fe):
    """A copy of ``data`` with its stress modes (:func:`stress_fields`) as modal fields."""
    fields = {**data.modal_fields, **stress_fields(fe, data)}
    history = [*data.metadata.get("history", []), "with_stress()"]
    return replace(data, modal_fields=fields, metadata={**data.metadata, "history": history},
                   _invariants=data.invariants)


def static_correction(data, fe, nodes, components: str = "123"):
    """``data`` with static-correction modes appended: the static deflections of ``fe``
    under unit loads at ``nodes`` (a node-set name or labels) in the DOF ``components``
    ("1".."6": forces along x, y, z, moments about them; body frame), with the body's own
    frame condition (its attachment nodes held, or inertia relief for mean axes), made
    mass-orthogonal to the kept modes and diagonalized among themselves (Rayleigh–Ritz).
    The kept modes' shapes are unchanged; their stiffness coupling with the new ones is
    kept (zero for eigenmodes of the whole FE model, not for Craig–Bampton coordinates).
    The new ones are marked ``static`` in ``mode_kinds``.
    Stiffening matrices and modal fields are dropped (recompute them on the result).
    """
    from .kinds import ModeKind, ReferenceFrame
    from .stiffening import _attached_solver, _inertia_relief_solver, mode_vectors

    comps = sorted({int(c) for c in str(components) if c.strip()} or {0})
    top = fe.dofs_per_node
    if any(c < 1 or c > top for c in comps):
        raise ValidationError(f"static correction: components {components!r} must be digits "
                              f"1..{top} ({'forces x y z' if top == 3 else 'forces, moments'})")
    idx = np.asarray(fe.resolve_nodes(nodes, "static correction: nodes"), dtype=np.int64)
    attached = data.reference_frame is ReferenceFrame.ATTACHED
    solve = (_attached_solver(fe, data.node_sets[data.attach_set]) if attached
             else _inertia_relief_solver(fe))
    loads = np.zeros((fe.n_dof, len(idx) * len(comps)))
    for k, (node, comp) in enumerate((n, c) for n in idx for c in comps):
        loads[top * node + comp - 1, k] = 1.0
    static = np.column_stack([solve(loads[:, k]) for k in range(loads.shape[1])])
    kept = mode_vectors(fe, data)
    m_kept = fe.mass @ kept
    static -= kept @ solve_small(kept.T @ m_kept, m_kept.T @ static)  # M-orthogonal
    # an M-orthonormal basis of what is left (loads at held nodes, or loads whose
    # deflections the kept modes already hold, or repeat each other, add nothing)
    gram = static.T @ (fe.mass @ static)
    w, v = sla.eigh(0.5 * (gram + gram.T))
    useful = w > 1e-10 * max(float(np.max(w, initial=0.0)), 1e-300)
    if not np.any(useful):
        raise ValidationError(f"static correction: unit loads at {nodes!r} deflect the "
                              "body in nothing the kept modes do not already hold (are "
                              "the nodes held by the frame condition?)")
    basis = static @ (v[:, useful] / np.sqrt(w[useful]))
    k_b = basis.T @ (fe.stiffness @ basis)
    _, vec = sla.eigh(0.5 * (k_b + k_b.T))  # diagonal among themselves
    extra = basis @ vec
    shapes = extra.reshape(fe.n_nodes, top, -1)
    peak = np.max(np.abs(shapes[:, :3]), axis=(0, 1))  # the largest translation 1 [m],
    if top == 6:  # or, for a twist (its nodes move by round-off), the largest turn 1 rad
        size = max(float(np.max(np.ptp(fe.nodes, axis=0))), 1e-300)
        turn = np.max(np.abs(shapes[:, 3:]), axis=(0, 1))
        peak = np.where(peak < 1e-3 * size * turn, turn, peak)
    extra /= peak
    n_extra = extra.shape[1]
    trans = extra.reshape(fe.n_nodes, top, -1)
    m_extra = np.diag(np.einsum("im,im->m", extra, fe.mass @ extra))
    k_extra = np.diag(np.einsum("im,im->m", extra, fe.stiffness @ extra))
    # stiffness coupling with the kept coordinates: zero for eigenmodes of the whole FE
    # model (K Φ = M Φ Λ and the new modes are M-orthogonal), not for Craig–Bampton ones
    k_cross = kept.T @ (fe.stiffness @ extra)
    k_cross[np.abs(k_cross) <= 1e-12 * max(float(np.max(np.abs(k_extra))), 1e-300)] = 0.0
    kinds = (*(data.mode_kinds or (ModeKind.NORMAL,) * data.n_modes),
             *(ModeKind.STATIC,) * n_extra)
    history = [*data.metadata.get("history", []),
               f"static_correction({nodes!r}, {components!r}): {n_extra} mode(s)"]
    metadata = {**data.metadata, "history": history}
    if isinstance(metadata.get("per_mode"), dict):  # per-mode lists: none for the new ones
        metadata["per_mode"] = {k: [*v, *[None] * n_extra]
                                for k, v in metadata["per_mode"].items()}
    def grown(vector):  # a per-mode array, zero for the new modes
        return None if vector is None else np.concatenate([vector, np.zeros(n_extra)])

    def bordered(matrix, corner):  # an (n, n) modal matrix with the new modes' block
        return np.block([[matrix, np.zeros((data.n_modes, n_extra))],
                         [np.zeros((n_extra, data.n_modes)), corner]])

    k_ff = bordered(data.K_ff, k_extra)
    k_ff[:data.n_modes, data.n_modes:] = k_cross
    k_ff[data.n_modes:, :data.n_modes] = k_cross.T
    return replace(
        data,
        phi=np.concatenate([data.phi, trans[:, :3].reshape(3 * fe.n_nodes, -1)], axis=1),
        psi=(np.concatenate([data.psi, trans[:, 3:].reshape(3 * fe.n_nodes, -1)], axis=1)
             if top == 6 else data.psi),
        M_ff=bordered(data.M_ff, m_extra), K_ff=k_ff,
        damping_ratio=grown(data.damping_ratio),
        damping_matrix=(None if data.damping_matrix is None else
                        bordered(data.damping_matrix, np.zeros((n_extra, n_extra)))),
        mode_kinds=kinds, constraint_fraction=grown(data.constraint_fraction),
        stiffening={}, modal_fields={}, metadata=metadata)
