"""A nonlinear (geometrically exact) beam declared in a case file (docs/case_files.md,
docs/nonlinear_beam.md)::

    [[bodies]]
    name = "arm"
    type = "nonlinear-beam"
    length = 1.0
    elements = 16
    section = { kind = "rectangle", width = 0.02, height = 0.01 }
    material = "steel"            # or { E = ..., nu = ..., rho = ... }
    position = [0, 0, 0]          # the root node [m]
    axis = [1, 0, 0]              # along the beam
    up = [0, 0, 1]                # section axis z: the part of up across the beam
    # optional, replacing what section and material give:
    # stiffness = [EA, kGA_y, kGA_z, GJ, EI_y, EI_z]     [N, N m²]
    # inertia = [rhoA, rhoI_p, rhoI_y, rhoI_z]           [kg/m, kg m]

Its nodes are the bodies ``arm/1`` … ``arm/17``; markers name them on the beam with
``node = "root"``, ``"tip"`` or a label 1 … n+1 (``[[markers]] body = "arm"``).
"""

from __future__ import annotations

from ..errors import FlexmbsError
from .entry import _Table

#: The keys of a nonlinear-beam entry.
KEYS = {"name", "type", "length", "elements", "section", "material", "position", "axis",
        "up", "velocity", "angular_velocity", "stiffness", "inertia"}


def add_nonlinear_beam(path, b, k, entry) -> None:
    """Read the [[bodies]] entry #k of type "nonlinear-beam" into the builder ``b``;
    CaseError naming the file, the entry and the key."""
    from ..model.nonlinear_beam import beam_material, beam_section

    name = entry.get("name", f"#{k}")
    t = _Table(path, f"[[bodies]] #{k} {name!r}", entry, KEYS)
    elements = t.get("elements", required=True)
    if isinstance(elements, bool) or not isinstance(elements, int) or elements < 1:
        raise t.error("elements", f"must be an integer >= 1, got {elements!r}")
    try:
        section = beam_section(t.get("section", required=True))
    except FlexmbsError as exc:
        raise t.error("section", str(exc)) from None
    try:
        material = beam_material(t.get("material", "steel"))
    except (ValueError, TypeError, FlexmbsError) as exc:
        raise t.error("material", str(exc)) from None
    b.add_nonlinear_beam(t.text("name", required=True),
                         t.number("length", required=True, positive=True), elements,
                         section, material, position=t.vector("position", [0, 0, 0]),
                         axis=t.vector("axis", [1, 0, 0]), up=t.vector("up", [0, 0, 1]),
                         velocity=t.vector("velocity", [0, 0, 0]),
                         angular_velocity=t.vector("angular_velocity", [0, 0, 0]),
                         stiffness=t.numbers("stiffness"),
                         inertia=t.numbers("inertia"))
