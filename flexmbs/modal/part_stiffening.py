"""Geometric stiffening of substructured parts from the stresses of the whole part
(docs/theory_stiffening.md, "Substructured parts").

A part cut into k substructures (:mod:`flexmbs.modal.substructures`,
:mod:`flexmbs.modal.solid_substructures`) carries, in each unit load case, the inertial
load of every part outboard of it through its cuts: the root part of a spinning blade
holds the centrifugal tension of the whole blade. A part's own unit cases
(:func:`~flexmbs.modal.stiffening.with_stiffening` on its FE model alone, its frame
condition at its own root-side cut) miss that load, so the parts would be stiffened by
their own inertia only. Here every unit case is solved once on the parent FE model,
clamped at the root set as the single body is, and each part takes the stresses of that
solution in its own elements:

    K_c^(j) = Φ_jᵀ K_G^(j)(u_c|part j) Φ_j,

with u_c the parent's static displacement of case c restricted to part j's nodes (a cut
node's displacement is the parent's, shared by both parts), K_G^(j) the geometric
stiffness of part j's elements and Φ_j its modes. The parts' element sets add up to the
parent's, so Σ_j K_G^(j) = K_G of the parent: joined, the parts are stiffened as the one
body is, to first order in the deflection. Every part's frame is the parent's FE frame
(the parts keep the parent's coordinates), so the unit fields a_c(r) = A_c r + b_c are
the same in both.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ValidationError
from .kinds import STIFFENING_CASES
from .stiffening import (
    _attached_solver,
    elements_of,
    geometric_matrix,
    mode_vectors,
    unit_displacement,
)


def parts_stiffening(split, datas, cases=STIFFENING_CASES) -> list[dict]:
    """The stiffening matrices (case name → (n_m, n_m)) of each part of ``split`` (a
    :class:`~flexmbs.modal.substructures.SplitModel`) for its modal data in ``datas``
    (the parts' reductions, same order), from the parent's unit-case stresses (module
    docstring). ValidationError when ``datas`` does not match the parts, or names what
    the stresses need and the parent lacks (elements, material)."""
    parent = split.parent
    if len(datas) != split.k:
        raise ValidationError(f"stiffening of parts: {len(datas)} modal data for "
                              f"{split.k} parts")
    unknown = sorted(set(cases) - set(STIFFENING_CASES))
    if unknown:
        raise ValidationError(f"stiffening: unknown load case(s) {unknown}; the cases are "
                              f"{list(STIFFENING_CASES)}")
    index = {int(label): i for i, label in enumerate(parent.node_ids)}
    root = np.array([index[int(label)] for label in split.parts[0].attach])
    elements = [elements_of(part.fe) for part in split.parts]
    dofs, modes = [], []
    for j, (part, data) in enumerate(zip(split.parts, datas, strict=True)):
        if data.n_nodes != part.fe.n_nodes:
            raise ValidationError(f"stiffening of parts: substructure {j + 1}'s modal data "
                                  f"have {data.n_nodes} nodes, the part "
                                  f"{part.fe.n_nodes}")
        rows = np.array([index[int(label)] for label in part.fe.node_ids])
        dofs.append(parent.node_dofs(rows))
        modes.append(mode_vectors(part.fe, data))
    static = _attached_solver(parent, root)
    out = [{} for _ in split.parts]
    for case in cases:
        u = unit_displacement(parent, static, case)
        for j, part in enumerate(split.parts):
            k_g = geometric_matrix(part.fe, u[dofs[j]], elements[j])
            proj = modes[j].T @ (k_g @ modes[j])
            out[j][case] = 0.5 * (proj + proj.T)
    return out


def with_parts_stiffening(split, datas) -> list:
    """Copies of ``datas`` (the parts of ``split``) with :func:`parts_stiffening`."""
    matrices = parts_stiffening(split, datas)
    out = []
    for data, stiffening in zip(datas, matrices, strict=True):
        history = [*data.metadata.get("history", []), "with_parts_stiffening()"]
        out.append(replace(data, stiffening=stiffening,
                           metadata={**data.metadata, "history": history},
                           _invariants=data.invariants))
    return out

