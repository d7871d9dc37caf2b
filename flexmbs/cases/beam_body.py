"""Flexible bodies declared in a case file as a built-in beam (``beam = {...}`` instead of
``modal_data``): meshed with :func:`~flexmbs.modal.fe.beam.straight_beam`, reduced to
clamped modes at the root (frame attached there, as ``flexmbs beam`` does), with
optional static-correction modes and stress modes (docs/beam_sections.md)::

    [[bodies]]
    name = "forearm"
    type = "flexible"

    [bodies.beam]
    length = 0.5
    modes = 6
    material = "aluminium"
    section = { kind = "box", width = 0.03, height = 0.015, wall = 0.002 }
    static_correction = "tip"
    point_masses = [{ node = "tip", mass = 0.5, inertia = [1e-4, 2e-4, 2e-4] }]

``scale_stiffness`` and ``scale_mass`` multiply the FE stiffness and mass before the
reduction (:func:`~flexmbs.modal.preparation.scale`, as ``flexmbs beam
--scale-stiffness``): without point masses every frequency scales by
sqrt(scale_stiffness / scale_mass); point masses are added after the scaling.
``substructures = k`` makes the beam k Craig–Bampton bodies joined at the cuts
(flexmbs.cases.substructured_case). ``point_masses`` are payloads added to the FE mass
before the reduction, so the modes carry them
(:func:`~flexmbs.modal.preparation.add_point_masses`): ``node`` a label 1..n+1 or a
one-node set ("root", "tip"), ``mass`` [kg], optional ``inertia`` [kg m²] about the
payload's centre of mass in the body axes (3 moments, 6 with the products Ixy, Ixz,
Iyz, or a 3x3) and ``offset`` [m] of that centre from the node.
"""

from __future__ import annotations

import math
from numbers import Integral

from ..errors import ValidationError

#: Keys of a ``beam`` table: required, then optional with their defaults.
REQUIRED = ("length", "section", "modes")
OPTIONAL = {"elements": 40, "material": "steel", "theory": "euler-bernoulli",
            "static_correction": None, "stress": True, "axis": (1.0, 0.0, 0.0),
            "up": (0.0, 0.0, 1.0), "rotary_inertia": False, "point_masses": (),
            "substructures": 1, "scale_stiffness": 1.0, "scale_mass": 1.0}


def beam_material(value):
    """The ``material`` of a beam table, as the nonlinear beam's and ``flexmbs beam
    --material`` take it; ValidationError naming ``beam.material``."""
    from ..model.nonlinear_beam import beam_material as material

    try:
        return material(value)
    except ValidationError as exc:
        raise ValidationError(f"beam.material: {exc}") from None
    except ValueError:
        raise ValidationError(f"beam.material must be 'steel', 'aluminium', 'E,nu,rho' or "
                              f"a table {{E = ..., nu = ..., rho = ...}} (SI), got {value!r}"
                              ) from None


def beam_fe(spec):
    """(FE model, options) of a ``beam`` table; ValidationError naming key and value."""
    from ..modal.fe.beam import straight_beam
    from ..modal.fe.section_tables import section_from_spec

    if not isinstance(spec, dict):
        raise ValidationError(f"beam must be a table {{length = ..., section = {{...}}, "
                              f"modes = ...}}, got {spec!r}")
    missing = [k for k in REQUIRED if k not in spec]
    unknown = sorted(set(spec) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        raise ValidationError("beam: " + "; ".join(
            ([f"missing {missing}"] if missing else [])
            + ([f"unknown keys {unknown}"] if unknown else []))
            + f" (keys: {list(REQUIRED) + list(OPTIONAL)})")
    opt = {**OPTIONAL, **spec}
    for key in ("modes", "elements"):
        value = opt[key]
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
            raise ValidationError(f"beam.{key} must be an integer >= 1, got {value!r}")
    for key in ("stress", "rotary_inertia"):
        if not isinstance(opt[key], bool):
            raise ValidationError(f"beam.{key} must be true or false, got {opt[key]!r}")
    section = section_from_spec(opt["section"], "beam.section")
    try:
        fe = straight_beam(opt["length"], opt["elements"], section, beam_material(opt["material"]),
                           axis=opt["axis"], up=opt["up"], theory=opt["theory"],
                           rotary_inertia=opt["rotary_inertia"])
    except ValidationError as exc:
        raise ValidationError(f"beam: {exc}") from None
    parts = opt["substructures"]
    if isinstance(parts, bool) or not isinstance(parts, Integral) or parts < 1:
        raise ValidationError(f"beam.substructures must be an integer >= 1, got {parts!r}")
    for key in ("scale_stiffness", "scale_mass"):
        value = opt[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not (math.isfinite(value) and value > 0):
            raise ValidationError(f"beam.{key} must be a positive number, got {value!r}")
    if opt["scale_stiffness"] != 1.0 or opt["scale_mass"] != 1.0:
        from ..modal.preparation import scale

        fe = scale(fe, opt["scale_stiffness"], opt["scale_mass"], what="beam")
    return _with_point_masses(fe, opt["point_masses"]), opt


def beam_parts(spec, stiffening: bool = False):
    """(SplitModel, [ModalData]) of a ``beam`` table with ``substructures = k``: k parts
    of equal length, each reduced by Craig–Bampton with ``modes`` fixed-interface modes
    (flexmbs.modal.substructures), stiffened by the whole beam's stresses
    (flexmbs.modal.part_stiffening) when asked; ``static_correction`` is refused (the cuts and the
    tip already carry constraint modes)."""
    from ..modal.part_stiffening import with_parts_stiffening
    from ..modal.stress import with_stress
    from ..modal.substructures import cuts_along, reduce_parts, split_line_model

    fe, opt = beam_fe(spec)
    if opt["static_correction"] is not None:
        raise ValidationError("beam.static_correction does not apply with substructures: "
                              "the tip and the cuts carry static constraint modes already")
    try:
        split = split_line_model(fe, cuts_along(fe, int(opt["substructures"])))
    except ValidationError as exc:
        raise ValidationError(f"beam.substructures = {opt['substructures']!r}: {exc}"
                              ) from None
    datas = reduce_parts(split, int(opt["modes"]))
    if stiffening:  # the stresses of the whole beam, each part its own elements'
        datas = with_parts_stiffening(split, datas)
    out = [with_stress(data, part.fe) if opt["stress"] else data
           for part, data in zip(split.parts, datas, strict=True)]
    return split, out


def beam_modal_data(spec, stiffening: bool = False, derivatives: bool = False):
    """The modal data of a ``beam`` table (keys :data:`REQUIRED` and :data:`OPTIONAL`),
    with the stiffening matrices or the modal derivatives when asked; ValidationError
    naming the key and its value. The data of a table reduced before come from where
    they were remembered (:mod:`flexmbs.cases.beam_cache`), with the warnings its
    reduction gave."""
    import warnings

    from . import beam_cache

    entry = beam_cache.key(spec, stiffening, derivatives)
    remembered = None if entry is None else beam_cache.recall(entry)
    if remembered is not None:
        data, said = remembered
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = _reduced_beam(spec, stiffening, derivatives)
        said = [(w.category, str(w.message)) for w in caught]
        if entry is not None:
            beam_cache.remember(entry, data, said)
    for category, message in said:  # (the reduction's warnings, made or remembered)
        warnings.warn(message, category, stacklevel=2)
    return data


def _reduced_beam(spec, stiffening: bool, derivatives: bool):
    """:func:`beam_modal_data` made afresh: meshed, reduced, with what is asked."""
    from ..modal import clamped_modes
    from ..modal.stiffening import with_stiffening
    from ..modal.stress import static_correction, with_stress

    fe, opt = beam_fe(spec)
    if opt["substructures"] != 1:
        raise ValidationError("beam.substructures > 1 makes several bodies "
                              "(flexmbs.cases.substructured_case), not one ModalData")
    data = clamped_modes(fe, "root", int(opt["modes"]))
    correction = opt["static_correction"]
    if correction is not None:
        if not isinstance(correction, str) or not correction.strip():
            raise ValidationError(f"beam.static_correction must be a node set and optional "
                                  f"components such as 'tip' or 'tip:3', got {correction!r}")
        nodes, _, comps = correction.partition(":")
        try:
            data = static_correction(data, fe, nodes.strip(), comps or "123")
        except ValidationError as exc:
            raise ValidationError(f"beam.static_correction {correction!r}: {exc}") from None
    if stiffening:
        data = with_stiffening(data, fe)
    if derivatives:
        from ..modal.derivatives import with_modal_derivatives

        data = with_modal_derivatives(data, fe)
    if opt["stress"]:
        data = with_stress(data, fe)
    return data


def _with_point_masses(fe, entries):
    """The beam's FE model with the ``point_masses`` entries of its table (a list of
    tables {node, mass, inertia, offset}); ValidationError naming the entry and value."""
    from ..modal.preparation import add_point_masses

    if not isinstance(entries, (list, tuple)) or not all(isinstance(e, dict)
                                                         for e in entries):
        raise ValidationError(f"beam.point_masses must be a list of tables {{node = ..., "
                              f"mass = ..., inertia = [...], offset = [...]}}, got "
                              f"{entries!r}")
    for k, entry in enumerate(entries, 1):
        fe = add_point_masses(fe, [entry], what=f"beam.point_masses #{k}")
    return fe
