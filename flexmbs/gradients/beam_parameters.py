"""FE design parameters of the built-in beams of a case (docs/gradients.md, "FE design
parameters").

A case key under ``bodies.<b>.beam`` — a section dimension, the material's E, ν or ρ, a
payload's mass, inertia or offset (``bodies.<b>.beam.point_masses[0].mass``) — changes
the beam's FE matrices and, through its reduction, every part of the body's modal data:
the mode shapes, M_ff, K_ff, the inertia invariants, the damping matrix of its ratios.
Here:

1. dK and dM of the FE model are central differences of the FE matrices built at p ± δ
   (exact for E, ρ and payload masses and inertias, which they are linear in; O(δ²),
   about 1e-10 relative, for section dimensions);
2. the modal data's derivative comes from :mod:`flexmbs.modal.sensitivity`: Nelson's
   method for the clamped modes, the Rayleigh–Ritz derivative for static-correction
   modes (:class:`~flexmbs.modal.sensitivity.ModalTangent`);
3. the models at p ± δ carry the modal data on its tangent line, data ± δ·d(data)
   (:func:`~flexmbs.modal.sensitivity.along`), whose invariants follow from the shapes
   and the FE mass. The step equations' derivative is then the central difference
   between the Systems of those models (``how`` says "modal data by Nelson's method,
   step equations by differences"): the mode shapes never flip sign or swap between
   p + δ and p − δ, as independently reduced modal data may.

Keys that change the mesh or the reduction (length, elements, modes, axis, theory,
static_correction, …) and bodies with geometric stiffening are refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FlexmbsError, ModelError

#: Keys of a beam table whose change is not a smooth change of the FE matrices.
MESH_KEYS = frozenset({"length", "elements", "modes", "axis", "up", "theory",
                       "rotary_inertia", "static_correction", "stress", "substructures"})


@dataclass
class BeamTangent:
    """The derivative of a built-in beam's modal data along one parameter: the body's
    ``name``, the nominal FE model ``fe`` and modal ``data`` (the body's), the
    :class:`~flexmbs.modal.sensitivity.ModalTangent` ``tangent`` [per unit of the
    parameter], and the FE models at p ± δ."""

    name: str
    fe: object
    data: object
    tangent: object
    fe_plus: object
    fe_minus: object
    step: float


def beam_body(source, key) -> str | None:
    """The built-in beam body whose FE model ``key`` changes (a key
    ``bodies.<b>.beam.<field>…`` of a case source), or None."""
    from .parameters import split_key

    raw = getattr(source, "raw", None)
    if raw is None:
        return None
    parts, _ = split_key(key)
    if len(parts) < 4 or parts[0] != "bodies" or parts[2] != "beam":
        return None
    entry = next((e for e in raw.get("bodies", []) if isinstance(e, dict)
                  and e.get("name") == parts[1]), None)
    if entry is None or not isinstance(entry.get("beam"), dict):
        return None
    if parts[3] in MESH_KEYS:
        raise ModelError(f"parameter {key!r} changes the beam's mesh or its reduction "
                         f"({parts[3]}), which has no derivative here; section dimensions, "
                         f"material constants and payloads (point_masses) do")
    return str(parts[1])


def _spec(source, name) -> dict:
    entry = next(e for e in source.raw["bodies"] if e.get("name") == name)
    return entry["beam"]


def beam_tangent(source, key: str, value: float, step: float) -> BeamTangent:
    """The :class:`BeamTangent` of ``key`` at ``value`` (a case source:
    :class:`~flexmbs.gradients.parameters.CaseModels`), FE differences over ± ``step``."""
    from ..cases.beam_body import beam_fe
    from ..modal.sensitivity import clamped_tangent, static_correction_tangent

    name = beam_body(source, key)
    body = source.nominal().model.bodies[name]
    if body.stiffening:
        raise ModelError(f"parameter {key!r}: flexible body {name!r} has geometric "
                         f"stiffening on, whose matrices have no derivative here")
    if getattr(body, "nonlinear", False):
        raise ModelError(f"parameter {key!r}: flexible body {name!r} is nonlinear (modal "
                         f"derivatives), whose derivative coordinates and tensors have no "
                         f"derivative here; its stiffness_scale and damping_ratio have")
    fe, options = beam_fe(_spec(source, name))
    fe_plus = beam_fe(_spec(source.with_value(key, value + step), name))[0]
    try:
        fe_minus, span = beam_fe(_spec(source.with_value(key, value - step), name))[0], \
            2 * step
    except FlexmbsError:  # at a bound (a payload of 0 kg): one-sided, exact (linear)
        fe_minus, span = fe, step
    if fe_plus.nodes.shape != fe.nodes.shape or not np.array_equal(fe_plus.nodes, fe.nodes):
        raise ModelError(f"parameter {key!r} moves the beam's nodes; only parameters of "
                         f"the section, material and payloads have a derivative here")
    d_k = (fe_plus.stiffness - fe_minus.stiffness) / span
    d_m = (fe_plus.mass - fe_minus.mass) / span
    data = body.data
    n_kept = int(options["modes"])
    tangent = clamped_tangent(fe, d_k, d_m, data, n_kept)
    correction = options["static_correction"]
    if correction is not None:
        nodes, _, comps = str(correction).partition(":")
        tangent = static_correction_tangent(fe, d_k, d_m, data, tangent, n_kept,
                                            nodes.strip(), comps or "123")
    elif data.n_modes != n_kept:
        raise ModelError(f"parameter {key!r}: body {name!r} keeps {data.n_modes} of the "
                         f"beam's {n_kept} modes; differentiate the beam with all of them")
    return BeamTangent(name, fe, data, tangent, fe_plus, fe_minus, step)


def modal_variants(source, key: str, value: float, step: float):
    """(model at p + δ, model at p − δ, 2δ) with the body's modal data on its tangent
    line (module docstring) and everything else as at p."""
    from ..modal.sensitivity import along
    from ..modal.stress import with_stress

    bt = beam_tangent(source, key, value, step)
    out = []
    for sign, fe_end in ((1.0, bt.fe_plus), (-1.0, bt.fe_minus)):
        line = along(bt.data, bt.fe, bt.tangent, sign * step)
        if "stress" in bt.data.modal_fields:  # stresses per unit ξ: shapes and section
            line = with_stress(line, fe_end)
        out.append(source.model_with_data(bt.name, line))  # markers' rows from the line
    return out[0], out[1], 2.0 * step
