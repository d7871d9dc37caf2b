"""Where the numbers of a ModalData came from: one summary for every import route.

Each reader and reduction records what it did in ``ModalData.metadata`` under its own keys
(docs/modal_data_formats.md); :func:`provenance` gathers them into one dict with the same
five parts whatever the route, which ``flexmbs modes`` and ``flexmbs reduce`` print and put
in their ``--json`` output:

* ``files``: the files read, by role;
* ``mapping``: the format, the matrices, the DOF layout they were mapped by and the DOFs
  per node;
* ``dropped``: every DOF, point, node, element or mode left out or condensed, with why;
* ``units``: the unit system the source was read in, and whether the format states it;
* ``mass``: the total mass [kg] next to the source's own figure when it has one (Nastran's
  grid point weight generator), and the largest relative difference of φᵀMφ from M_ff.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Formats that carry no unit system: their units are what the user declared.
UNITLESS_FORMATS = ("nastran", "ansys", "abaqus", "matrix-market", "hbmat")

#: Metadata keys that list what was left out, and what each means.
DROPPED_KEYS = {
    "skipped_elements": "element cards not drawn (no mesh cell for them)",
    "dropped_nodes": "nodes without matrix rows, left out",
    "missing_dofs": "DOFs in neither matrix",
    "elements_outside_matrices": "elements on nodes the matrices do not have",
    "points_dropped": "OP2 rows of points without position, or unconnected grids",
    "rigid_modes_dropped": "rigid-body modes dropped from the modes read",
    "mass_incomplete": "mass missing from the matrices",
    "node_sets_with_dropped_nodes": "node sets that lost nodes",
    "constrained_nodes": "nodes constrained in the source (node set 'constrained')",
    "unconnected_dofs": "a-set DOFs without stiffness or mass (no element stiffens them)",
    "massless_dofs_condensed": "a-set DOFs without mass, condensed statically",
    "recovered_grids_without_position": "grids recovered through MUG1 (DTI TUG1) that no "
                                        "GRID card of the punch places",
}


def _layers(meta: dict) -> list[dict]:
    """The metadata and the source FE model's metadata beneath it (reductions)."""
    out = [meta]
    source = meta.get("source")
    if isinstance(source, dict):
        out.append(source)
    return out


def _find(layers: list[dict], key: str):
    for layer in layers:
        if key in layer:
            return layer[key]
    return None


def _files(layers: list[dict]) -> dict[str, str]:
    files: dict[str, str] = {}
    for layer in reversed(layers):
        if isinstance(layer.get("source_files"), dict):
            files.update({k: str(v) for k, v in layer["source_files"].items()})
        if isinstance(layer.get("source"), str):
            files.setdefault("file", layer["source"])
        if isinstance(layer.get("geometry"), str):
            files.setdefault("geometry", layer["geometry"])
        if layer.get("format") == "nastran-extse" and isinstance(layer.get("matrices"), str):
            files.setdefault("matrices", layer["matrices"])
    return files


def _format(layers: list[dict]) -> str | None:
    for layer in layers:
        fmt = layer.get("format")
        if isinstance(fmt, str):
            return fmt
        if "nastran" in layer:
            return "nastran-op4"
    return None


def provenance(data) -> dict[str, Any]:
    """The provenance summary of ``data`` (a :class:`~flexmbs.modal.data.ModalData`);
    see the module docstring."""
    meta = data.metadata if isinstance(data.metadata, dict) else {}
    layers = _layers(meta)
    fmt = _format(layers)
    nastran = _find(layers, "nastran") or {}
    mapping: dict[str, Any] = {"format": fmt}
    for key, value in (("matrices", nastran.get("matrices")),
                       ("layout", nastran.get("layout")),
                       ("dofs_per_node", nastran.get("dofs_per_grid")
                        or _find(layers, "fe_dofs_per_node")),
                       ("dofs_held_at_zero", nastran.get("dofs_held_at_zero")),
                       ("dof_labels", _find(layers, "dof_labels")),
                       ("reduction", _find(layers, "method")),
                       ("aset_order", _find(layers, "aset_order")),
                       ("aset_rigid_force_residual",
                        _find(layers, "aset_rigid_force_residual")),
                       ("wtmass", _find(layers, "wtmass")
                        if isinstance(_find(layers, "wtmass"), str) else None),
                       ("mass_description", data.mass_description),
                       ("mass_source", _find(layers, "mass_source"))):
        if value is not None:
            mapping[key] = value
    dropped: dict[str, Any] = {}
    for key, why in DROPPED_KEYS.items():
        value = _find(layers, key)
        if value:
            dropped[key] = {"what": why, "items": value}
    for key in ("scalar_points_condensed", "scalar_points_dropped"):
        if nastran.get(key):
            dropped[key] = {"what": ("scalar points condensed statically through the "
                                     "stiffness" if key.endswith("condensed")
                                     else f"scalar points dropped: {nastran.get('why')}"),
                            "items": nastran[key]}
    units = data.units
    unitless = fmt is not None and any(fmt.startswith(f) for f in UNITLESS_FORMATS)
    ratio = data.modal_mass_ratio if data.n_modes else np.ones(0)
    mass: dict[str, Any] = {"total_kg": data.total_mass,
                            "modal_mass_vs_phi_M_phi_max": (float(np.max(np.abs(ratio - 1)))
                                                            if ratio.size else 0.0)}
    weight = (_find(layers, "provenance") or {}).get("grid_point_weight")
    if weight:
        mass["source_total_kg"] = weight["mass_nastran"]
        mass["source"] = f"Nastran's grid point weight generator (grid {weight['reference_grid']})"
        mass["rigid_mass_relative_difference"] = weight["rigid_mass_relative_difference"]
    lumped = (_find(layers, "provenance") or {}).get("mass") or {}
    if lumped.get("cards"):
        mass["cards"] = lumped["cards"]
        if lumped.get("wtmass", 1.0) != 1.0:
            mass["wtmass"] = lumped["wtmass"]
        notes = [lumped[k] for k in ("warning", "approximate") if lumped.get(k)]
        if notes:
            mass["warning"] = "; ".join(notes)
    return {
        "files": _files(layers),
        "mapping": mapping,
        "dropped": dropped,
        "units": {"source": units,
                  "stated_by": ("the format has no unit system: the one given with "
                                "--units / units=, SI when none was given"
                                if unitless else "the file")},
        "mass": mass,
        "preparation": _find(layers, "preparation") or [],
    }


def format_provenance(summary: dict[str, Any]) -> list[str]:
    """The provenance summary as indented text lines (``flexmbs modes``)."""
    lines = ["  provenance:"]
    for role, path in summary["files"].items():
        lines.append(f"    {role}: {path}")
    mapping = summary["mapping"]
    shown = ", ".join(f"{k} {v}" for k, v in mapping.items() if v is not None)
    lines.append(f"    mapping: {shown}")
    units = summary["units"]
    lines.append(f"    units: {units['source']} ({units['stated_by']})")
    mass = summary["mass"]
    text = f"    mass: total {mass['total_kg']:.6g} kg"
    if "source_total_kg" in mass:
        text += (f"; the source's own {mass['source_total_kg']:.6g} kg ({mass['source']}; "
                 f"rigid mass differs by {mass['rigid_mass_relative_difference']:.2g})")
    text += f"; phi^T M phi vs M_ff: {mass['modal_mass_vs_phi_M_phi_max']:.2g} at most"
    lines.append(text)
    if mass.get("warning"):
        lines.append(f"    warning: {mass['warning']}")
    for step in summary["preparation"]:
        lines.append("    prepared: " + ", ".join(f"{k} {v}" for k, v in step.items()))
    for key, entry in summary["dropped"].items():
        items = entry["items"]
        if isinstance(items, dict):  # (lists by kind: each shortened)
            items = "; ".join(f"{kind} {_shortened(ids)}" for kind, ids in items.items())
        else:
            items = _shortened(items)
        lines.append(f"    left out ({key}): {entry['what']}: {items}")
    if not summary["dropped"]:
        lines.append("    left out: nothing")
    return lines


def _shortened(items):
    """A list of more than eight items as its first eight and the count, else as is."""
    if isinstance(items, (list, tuple)) and len(items) > 8:
        return f"{list(items[:8])} ... ({len(items)} in all)"
    return items
