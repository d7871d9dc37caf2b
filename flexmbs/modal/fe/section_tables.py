"""Beam sections from the tables users write and the metadata files carry: a case
file's or the CLI's section table (:func:`section_from_spec`) and the drawn and stressed
outline of a built-in beam's modal data (:func:`section_outline`); docs/beam_sections.md.
The section kinds and their constants are :mod:`flexmbs.modal.fe.sections`."""

from __future__ import annotations

import math

import numpy as np

from ...errors import ValidationError
from .beam import GENERATOR, BeamSection
from .sections import SPEC_KEYS, _circle, _rect, hull_points, positive, section_kind


def section_from_spec(spec: dict, where: str = "section"):
    """A :class:`~flexmbs.modal.fe.beam.BeamSection` from a spec table, e.g.
    ``{kind = "box", width = 0.03, height = 0.015, wall = 0.002}``; keys per kind in
    :data:`SPEC_KEYS` (``thickness`` stands for ``wall``, or for both ``flange`` and
    ``web``). ValidationError naming ``where``, the key and the value."""
    if not isinstance(spec, dict):
        raise ValidationError(f"{where} must be a table such as {{kind = \"box\", width = "
                              f"0.03, height = 0.015, wall = 0.002}}, got {spec!r}")
    spec = dict(spec)
    kind = section_kind(spec.pop("kind", spec.pop("type", "rectangle")), where)
    if "thickness" in spec:
        thick = spec.pop("thickness")
        for key in ("wall",) if kind in ("box", "tube") else ("flange", "web"):
            spec.setdefault(key, thick)
    required, optional = SPEC_KEYS[kind]
    missing = [k for k in required if k not in spec]
    unknown = sorted(set(spec) - set(required) - set(optional))
    if missing or unknown:
        raise ValidationError(f"{where} (kind {kind!r}): "
                              + (f"missing {missing}" if missing else "")
                              + ("; " if missing and unknown else "")
                              + (f"unknown keys {unknown}" if unknown else "")
                              + f"; a {kind} takes {list(required) + list(optional)}")
    try:
        if kind == "general":
            return BeamSection.general(**spec)
        make = {"rectangle": BeamSection.rectangle, "box": BeamSection.box,
                "circle": BeamSection.circle, "tube": BeamSection.tube,
                "i": BeamSection.i_beam, "channel": BeamSection.channel}[kind]
        names = {"width": "width_y", "height": "height_z", "diameter": "outer_diameter",
                 "flange": "flange_thickness", "web": "web_thickness"}
        if kind == "tube":
            names["wall"] = "wall_thickness"
        if kind == "circle":
            names["diameter"] = "d"
        return make(**{names.get(k, k): v for k, v in spec.items()})
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc}") from None



def section_outline(metadata: dict) -> dict | None:
    """The outline of a built-in beam's cross-section from modal data metadata, or None
    when the data do not come from a beam: ``polygon`` (loops of (y, z) [m], outer first),
    ``stress_points`` ((k, 2) [m], where fibre stresses are taken), ``width_y`` and
    ``height_z`` (the outline's bounding box [m]), the section axes ``y_axis``, ``z_axis``
    (body frame, unit) and ``equivalent`` (True when the section was given by its
    constants alone and is drawn and stressed as the rectangle √(12 I_z/A) × √(12 I_y/A)).

    An explicit ``metadata["section_outline_m"]`` (``{"width_y", "height_z"}`` or
    ``{"shape": "circle", "diameter"}``, files made before sections had outlines) wins;
    otherwise the section stored in the FE metadata of
    :func:`~flexmbs.modal.fe.beam.straight_beam` (``metadata["source"]``).
    """
    if not isinstance(metadata, dict):
        return None
    source = metadata.get("source")
    source = source if isinstance(source, dict) else {}
    frame = np.asarray(source.get("local_frame", np.eye(3)), dtype=float)
    if frame.shape != (3, 3):
        frame = np.eye(3)
    given = metadata.get("section_outline_m")
    extra: dict = {}
    points = None
    try:
        if isinstance(given, dict) and given.get("shape") == "circle" and "diameter" in given:
            diameter = positive(float(given["diameter"]), "diameter")
            loops = (_circle(diameter / 2),)
            extra = {"shape": "circle", "diameter": diameter}
        elif isinstance(given, dict) and {"width_y", "height_z"} <= set(given):
            loops = (_rect(positive(float(given["width_y"]), "width_y") / 2,
                           positive(float(given["height_z"]), "height_z") / 2),)
        elif isinstance(source.get("section"), dict) and source.get("generator") == GENERATOR:
            section = BeamSection(**source["section"])
            points = section.fibre_points()
            if section.outline is not None:
                loops = section.outline
            else:
                loops = (_rect(math.sqrt(3.0 * section.Iz / section.A),
                               math.sqrt(3.0 * section.Iy / section.A)),)
                extra = {"equivalent": points is None}
        else:
            return None
    except (KeyError, TypeError, ValueError):
        return None
    if points is None:
        points = np.asarray(hull_points(loops[0]), dtype=float)
    outer = np.asarray(loops[0], dtype=float)
    width, height = np.ptp(outer, axis=0)
    return {"width_y": float(width), "height_z": float(height),
            "polygon": [[list(p) for p in loop] for loop in loops],
            "stress_points": np.asarray(points, dtype=float).tolist(),
            "y_axis": frame[1].tolist(), "z_axis": frame[2].tolist(), **extra}
