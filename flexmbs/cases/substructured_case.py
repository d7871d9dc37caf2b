"""Case-file parts cut into substructures: ``beam = { ..., substructures = 4 }`` on a
flexible body, or ``modal_data = "part.substructures.json"`` (the parts that ``flexmbs
beam/reduce --substructures`` wrote) (docs/case_files.md, docs/flexible_bodies.md
"Substructured parts").

The body ``name`` becomes the bodies ``name_1 … name_k`` joined by fixed joints at the
cuts (:func:`flexmbs.model.substructured.add_substructured_part`). A ``[[markers]]``
entry on ``name`` with ``node`` (a label 1 … n+1 of the whole beam) or ``node_set``
("root", "tip", or labels inside one part) goes on the part that holds the node, and
every later reference ``"name.marker"`` (joints, drives, forces, contacts, sensors)
is rewritten to that part's marker.
"""

from __future__ import annotations

from .case import CaseError

#: Body keys that make no sense for a substructured beam (each part has its own modes).
NOT_WITH_PARTS = ("modes", "xi", "xi_dot", "fixed", "modal_data", "damping_ratio")


def add_part(b, t, spec: dict, common: dict, parts: dict) -> None:
    """Add the substructured beam of table ``t`` (its ``beam`` table ``spec``)."""
    from ..model.substructured import add_substructured_part
    from .beam_body import beam_parts

    name = t.text("name", required=True)
    for key in NOT_WITH_PARTS:
        if key in t.data:
            raise t.error(key, f"does not apply to a beam with substructures = "
                               f"{spec['substructures']!r} (every part has its own modes: "
                               f"set beam.modes)")
    if t.get("nonlinear"):
        raise t.error("nonlinear", "does not apply to a beam with substructures (the parts "
                                   "are linear; modal derivatives need one body)")
    fixed = common.pop("fixed", ())
    if fixed:
        raise t.error("fixed", "does not apply to a substructured beam")
    split, datas = beam_parts(spec, stiffening=t.get("stiffening") is True)
    stiffening = t.get("stiffening")
    if stiffening is not None and not isinstance(stiffening, bool):
        raise t.error("stiffening", f"must be true or false, got {stiffening!r}")
    part = add_substructured_part(b, name, split, datas,
                                  coupling=t.get("coupling", "two-way"), **common)
    parts[name] = {"part": part, "aliases": {}}


def add_files_part(b, t, file, common: dict, parts: dict, inputs: list,
                   reader=None) -> None:
    """Add the parts named by the sidecar ``file`` (``modal_data`` of table ``t``); their
    files join the case's ``inputs`` and are read by ``reader`` (``read_modal``'s
    arguments; default :func:`flexmbs.read_modal`)."""
    from ..modal.substructure_files import read_substructures
    from ..model.substructured import add_substructured_part

    name = t.text("name", required=True)
    for key in ("modes", "xi", "xi_dot", "fixed", "damping_ratio", "modal_options",
                "nonlinear", "stiffening"):
        if key in t.data:
            raise t.error(key, f"does not apply to the parts of {file.name} (each part "
                               f"has its own modes, as its file holds them)")
    common.pop("fixed", None)  # (empty: refused above when given)
    split, datas = read_substructures(file, inputs, reader)
    part = add_substructured_part(b, name, split, datas,
                                  coupling=t.get("coupling", "two-way"), **common)
    parts[name] = {"part": part, "aliases": {}}


def route_marker(parts: dict, entry: dict) -> dict:
    """``entry`` (a [[markers]] table) with its body replaced by the part that holds its
    node; records the alias ``"name.marker"``."""
    body = entry.get("body")
    if not isinstance(body, str) or body not in parts:  # (a bad body: the marker says so)
        return entry
    part = parts[body]["part"]
    node, node_set = entry.get("node"), entry.get("node_set")
    if isinstance(node_set, dict) or (node is None and node_set is None):
        raise CaseError(f"marker on substructured body {body!r} needs node = label or "
                        f"node_set = name or [labels] (a position or geometric set cannot "
                        f"be routed to one of {list(part.bodies)})")
    owner = part.body_of(node, node_set)
    parts[body]["aliases"][f"{body}.{entry.get('name')}"] = f"{owner}.{entry.get('name')}"
    return {**entry, "body": owner}


def rewrite(parts: dict, entry: dict) -> dict:
    """``entry`` with every marker reference to a substructured body rewritten to the
    part's marker; a body reference to it is refused (name one of the parts)."""
    if not parts:
        return entry
    out = {}
    for key, value in entry.items():
        if isinstance(value, str):
            for name, info in parts.items():
                if value in info["aliases"]:
                    value = info["aliases"][value]
                elif value == name:
                    raise CaseError(f"key {key!r} = {value!r} names a substructured body; "
                                    f"name one of its parts {list(info['part'].bodies)}")
                elif value.startswith(f"{name}.") and key in ("i", "j", "marker"):
                    raise CaseError(f"key {key!r} = {value!r}: body {name!r} is "
                                    f"substructured and has no marker "
                                    f"{value.split('.', 1)[1]!r} (declare it in "
                                    f"[[markers]] with node or node_set)")
        out[key] = value
    return out
