"""Node sets chosen by geometry: a plane, a box, a cylinder, or the nodes nearest a point.

Each selector is a pure function of the node coordinates (shape (N, 3), metres, in the
frame the nodes are given in — the FE/body frame of an :class:`~flexmbs.modal.femodel.FEModel`
or :class:`~flexmbs.modal.data.ModalData`) and returns sorted 0-based node *indices*.

A selection can also be written as a *spec*, the same keys in two spellings:

* on the command line, ``KIND:key=value;key=value`` with vectors as ``x,y,z``::

      plane:x=0                                   (the coordinate plane x = 0)
      plane:point=0,0,0;normal=1,0,0;tol=1e-6
      box:min=-1,-1,0.99;max=1,1,1.01
      cylinder:point=0,0,0;axis=0,0,1;radius=0.005;inner=0.004
      nearest:0.5,0,0        or   nearest:point=0.5,0,0;count=4

* in a case file or in Python, a table/dict with ``type`` and the same keys:
  ``{type = "box", min = [-1, -1, 0.99], max = [1, 1, 1.01]}``.

:func:`parse_spec` turns either into a canonical dict, :func:`select_nodes` evaluates it
(an empty result is an error naming the spec and the nodes' bounding box) and
:func:`with_node_sets` returns an FEModel with named sets added.

Tolerances ``tol`` are distances [m]. Their default, :data:`DEFAULT_TOL_REL` times the
diagonal of the nodes' bounding box, only absorbs the round-off of coordinates that lie
on the surface by construction.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import ValidationError

__all__ = [
    "DEFAULT_TOL_REL",
    "KINDS",
    "bounding_box_text",
    "format_spec",
    "nearest_nodes",
    "nodes_in_box",
    "nodes_in_cylinder",
    "nodes_in_plane",
    "parse_spec",
    "select_nodes",
    "with_node_sets",
]

#: Default tolerance as a fraction of the bounding-box diagonal: coordinates written with
#: ~7 significant digits (FE text files) still land on the plane or face they were meant on.
DEFAULT_TOL_REL = 1e-6

#: The keys each kind takes, and which of them are required. Vectors are 3-vectors [m]
#: (``normal`` and ``axis`` are directions of any non-zero length).
KINDS: dict[str, dict[str, tuple[str, ...]]] = {
    "plane": {"required": (), "optional": ("point", "normal", "x", "y", "z", "tol")},
    "box": {"required": ("min", "max"), "optional": ("tol",)},
    "cylinder": {"required": ("point", "axis", "radius"), "optional": ("inner", "tol")},
    "nearest": {"required": ("point",), "optional": ("count",)},
}
_VECTOR_KEYS = {"point", "normal", "min", "max", "axis"}
_SCALAR_KEYS = {"x", "y", "z", "tol", "radius", "inner"}


# ---------------------------------------------------------------------- pure selectors
def _points(nodes) -> np.ndarray:
    pts = np.asarray(nodes, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise ValidationError(f"node coordinates must have shape (N, 3); got {pts.shape}")
    return pts


def _unit(vec, name: str) -> np.ndarray:
    v = np.asarray(vec, dtype=float).reshape(3)
    norm = float(np.linalg.norm(v))
    if not norm > 0 or not np.isfinite(norm):
        raise ValidationError(f"{name} must be a non-zero finite direction, got {v.tolist()}")
    return v / norm


def nodes_in_plane(nodes, point, normal, tol: float) -> np.ndarray:
    """Indices of nodes within ``tol`` [m] of the plane through ``point`` [m] with
    normal ``normal`` (any length): ``|(x − point)·n̂| ≤ tol``."""
    pts = _points(nodes)
    n_hat = _unit(normal, "plane normal")
    dist = np.abs((pts - np.asarray(point, dtype=float)) @ n_hat)
    return np.flatnonzero(dist <= tol)


def nodes_in_box(nodes, lower, upper, tol: float = 0.0) -> np.ndarray:
    """Indices of nodes in the axis-aligned box ``lower ≤ x ≤ upper`` (each component,
    widened by ``tol`` [m] on every side); corners in the nodes' frame [m]."""
    pts = _points(nodes)
    lo = np.asarray(lower, dtype=float) - tol
    hi = np.asarray(upper, dtype=float) + tol
    return np.flatnonzero(np.all((pts >= lo) & (pts <= hi), axis=1))


def nodes_in_cylinder(nodes, point, axis, radius: float, tol: float = 0.0,
                      inner: float = 0.0) -> np.ndarray:
    """Indices of nodes whose distance d [m] from the infinite axis line through
    ``point`` along ``axis`` satisfies ``inner − tol ≤ d ≤ radius + tol``.

    ``inner = 0`` (default) selects the solid cylinder; ``inner = radius`` the nodes on
    the cylindrical surface (a bolt hole's wall), within ``tol``.
    """
    pts = _points(nodes)
    a_hat = _unit(axis, "cylinder axis")
    rel = pts - np.asarray(point, dtype=float)
    radial = rel - np.outer(rel @ a_hat, a_hat)
    dist = np.linalg.norm(radial, axis=1)
    return np.flatnonzero((dist >= inner - tol) & (dist <= radius + tol))


def nearest_nodes(nodes, point, count: int = 1) -> np.ndarray:
    """Indices of the ``count`` nodes nearest ``point`` [m] (Euclidean distance; ties go
    to the lower index), sorted by index."""
    pts = _points(nodes)
    dist = np.linalg.norm(pts - np.asarray(point, dtype=float), axis=1)
    order = np.argsort(dist, kind="stable")
    return np.sort(order[:count])


# ---------------------------------------------------------------------- specs
def _bad(what: str, spec_text: str, message: str) -> ValidationError:
    return ValidationError(f"{what} {spec_text!r}: {message}")


def _number(value, key: str, what: str, spec_text: str) -> float:
    if isinstance(value, bool):
        raise _bad(what, spec_text, f"{key} must be a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise _bad(what, spec_text, f"{key} must be a number, got {value!r}") from None
    if not np.isfinite(out):
        raise _bad(what, spec_text, f"{key} must be finite, got {value!r}")
    return out


def _vector(value, key: str, what: str, spec_text: str) -> list[float]:
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != 3:
        raise _bad(what, spec_text, f"{key} must be 3 numbers x,y,z, got {value!r}")
    return [_number(v, key, what, spec_text) for v in value]


def _split_text(text: str, what: str) -> dict[str, Any]:
    """``"box:min=0,0,0;max=1,1,1"`` → ``{"type": "box", "min": "0,0,0", ...}``."""
    kind, sep, rest = text.partition(":")
    kind = kind.strip()
    if not sep:
        raise _bad(what, text, f"expected KIND:key=value;... with KIND one of "
                               f"{sorted(KINDS)}")
    out: dict[str, Any] = {"type": kind}
    parts = [p.strip() for p in rest.split(";") if p.strip()]
    if kind == "nearest" and len(parts) >= 1 and "=" not in parts[0]:
        out["point"] = parts.pop(0)  # nearest:x,y,z
    for part in parts:
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise _bad(what, text, f"cannot read {part!r}; expected key=value")
        if key in out:
            raise _bad(what, text, f"key {key!r} is given twice")
        out[key] = value.strip()
    return out


def parse_spec(spec, what: str = "node set") -> dict[str, Any]:
    """A geometric node-set spec as a canonical dict (type, floats and 3-lists).

    Parameters
    ----------
    spec : str or dict
        ``"KIND:key=value;..."`` or a mapping with ``type`` and the kind's keys
        (see the module docstring and :data:`KINDS`).
    what : str
        How to name the spec in errors, e.g. ``"--node-set root"``.

    Raises
    ------
    ValidationError
        Naming ``what``, the spec and the bad key or value: an unknown kind or key, a
        missing key, a non-numeric value, a zero direction, a negative radius or
        tolerance, a box with min > max, a count below 1.
    """
    if isinstance(spec, str):
        text = spec
        raw = _split_text(spec, what)
    elif isinstance(spec, dict):
        raw = dict(spec)
        text = format_spec(raw) if "type" in raw else repr(spec)
    else:
        raise ValidationError(f"{what}: a geometric node set must be a string "
                              f"'KIND:key=value;...' or a table with 'type', got {spec!r}")
    kind = raw.pop("type", None)
    if kind not in KINDS:
        raise _bad(what, text, f"unknown kind {kind!r}; expected one of {sorted(KINDS)}")
    allowed = set(KINDS[kind]["required"]) | set(KINDS[kind]["optional"])
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise _bad(what, text, f"unknown key(s) {unknown} for {kind}; allowed: "
                               f"{sorted(allowed)}")
    missing = [k for k in KINDS[kind]["required"] if k not in raw]
    if missing:
        raise _bad(what, text, f"{kind} needs {', '.join(missing)}")
    out: dict[str, Any] = {"type": kind}
    for key, value in raw.items():
        if key in _VECTOR_KEYS:
            out[key] = _vector(value, key, what, text)
        elif key == "count":
            integral = (isinstance(value, str) and value.strip().isdigit()) or (
                isinstance(value, (int, np.integer)) and not isinstance(value, bool))
            count = int(value) if integral else None
            if count is None or count < 1:
                raise _bad(what, text, f"count must be an integer >= 1, got {value!r}")
            out[key] = count
        else:
            out[key] = _number(value, key, what, text)
    for key in ("tol", "radius", "inner"):
        if key in out and out[key] < 0:
            raise _bad(what, text, f"{key} must not be negative, got {out[key]!r}")
    if kind == "plane":
        coord = [k for k in ("x", "y", "z") if k in out]
        explicit = "point" in out or "normal" in out
        if len(coord) > 1 or (coord and explicit) or (
                not coord and not ("point" in out and "normal" in out)):
            raise _bad(what, text, "a plane is point=..;normal=.. or one coordinate plane "
                                   "x=.., y=.. or z=..")
        if coord:
            axis = "xyz".index(coord[0])
            point, normal = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
            point[axis], normal[axis] = out.pop(coord[0]), 1.0
            out["point"], out["normal"] = point, normal
    for key in ("normal", "axis"):
        if key in out and not np.linalg.norm(out[key]) > 0:
            raise _bad(what, text, f"{key} must not be the zero vector")
    if kind == "box" and any(lo > hi for lo, hi in zip(out["min"], out["max"], strict=True)):
        raise _bad(what, text, f"min {out['min']} exceeds max {out['max']} in some "
                               f"component")
    if kind == "cylinder" and out.get("inner", 0.0) > out["radius"]:
        raise _bad(what, text, f"inner {out['inner']!r} exceeds radius {out['radius']!r}")
    return out


def format_spec(spec: dict) -> str:
    """The command-line spelling ``KIND:key=value;...`` of a spec dict."""
    def value(v):
        if isinstance(v, (list, tuple, np.ndarray)):
            return ",".join(f"{float(x):.15g}" if _is_num(x) else str(x) for x in v)
        return f"{float(v):.15g}" if _is_num(v) else str(v)

    body = ";".join(f"{k}={value(v)}" for k, v in spec.items() if k != "type")
    return f"{spec.get('type')}:{body}"


def _is_num(x) -> bool:
    return isinstance(x, (int, float, np.number)) and not isinstance(x, bool)


def bounding_box_text(nodes) -> str:
    """``"x 0..1, y -0.01..0.01, z -0.005..0.005 m"`` for error messages."""
    pts = _points(nodes)
    if pts.shape[0] == 0:
        return "no nodes"
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return ", ".join(f"{c} {a:.6g}..{b:.6g}" for c, a, b in zip("xyz", lo, hi, strict=True)
                     ) + " m"


def default_tol(nodes) -> float:
    """:data:`DEFAULT_TOL_REL` times the bounding-box diagonal [m] (1e-12 m for a single
    node or coincident nodes)."""
    pts = _points(nodes)
    diag = float(np.linalg.norm(np.ptp(pts, axis=0))) if pts.shape[0] else 0.0
    return DEFAULT_TOL_REL * diag if diag > 0 else 1e-12


def select_nodes(nodes, spec, what: str = "node set") -> np.ndarray:
    """Evaluate a spec (string or dict, see :func:`parse_spec`) on ``nodes`` [m].

    Returns
    -------
    ndarray of int
        Sorted 0-based node indices, never empty.

    Raises
    ------
    ValidationError
        For a bad spec, or when no node is selected (the message names ``what``, the spec
        and the nodes' bounding box).
    """
    parsed = parse_spec(spec, what)
    pts = _points(nodes)
    tol = parsed.get("tol", default_tol(pts))
    kind = parsed["type"]
    if kind == "plane":
        idx = nodes_in_plane(pts, parsed["point"], parsed["normal"], tol)
    elif kind == "box":
        idx = nodes_in_box(pts, parsed["min"], parsed["max"], tol)
    elif kind == "cylinder":
        idx = nodes_in_cylinder(pts, parsed["point"], parsed["axis"], parsed["radius"], tol,
                                parsed.get("inner", 0.0))
    else:
        count = parsed.get("count", 1)
        if count > pts.shape[0]:
            raise _bad(what, format_spec(parsed), f"count {count} exceeds the "
                                                  f"{pts.shape[0]} nodes")
        idx = nearest_nodes(pts, parsed["point"], count)
    if idx.size == 0:
        tol_note = "" if kind == "nearest" else f" (tolerance {tol:.3g} m)"
        raise ValidationError(f"{what} {format_spec(parsed)!r} selects no node{tol_note}; "
                              f"the nodes' bounding box is {bounding_box_text(pts)}")
    return idx.astype(np.int64)


def with_node_sets(fe, sets: dict, *, replace_existing: bool = False,
                   what: str = "node set"):
    """A copy of FEModel ``fe`` with named node sets added.

    Parameters
    ----------
    fe : FEModel
    sets : dict[str, spec or array_like of int]
        Name → a geometric spec (string or dict, evaluated on ``fe.nodes`` [m], FE frame)
        or 0-based node indices.
    replace_existing : bool
        Allow a name that ``fe`` already has (default: an error naming it).
    what : str
        How errors name a set, followed by its name (the CLI passes ``"--node-set"``).

    Returns
    -------
    FEModel
        With the sets in ``node_sets`` and, for geometric ones, a record in
        ``metadata["preparation"]`` (name, spec, node count).
    """
    new_sets = dict(fe.node_sets)
    record = list(fe.metadata.get("preparation", []))
    for name, spec in sets.items():
        label = f"{what} {name}"
        if not isinstance(name, str) or not name.strip() or name[:1].isdigit():
            raise ValidationError(f"{what}: the name {name!r} must be a word that does not "
                                  f"start with a digit (digits are node labels)")
        if name in fe.node_sets and not replace_existing:
            raise ValidationError(f"{label}: the model already has a set {name!r} "
                                  f"({fe.node_sets[name].size} nodes); choose another name")
        if isinstance(spec, (str, dict)):
            idx = select_nodes(fe.nodes, spec, label)
            record.append({"step": "node_set", "name": name,
                           "spec": format_spec(parse_spec(spec, label)),
                           "n_nodes": int(idx.size)})
        else:
            idx = np.asarray(spec, dtype=np.int64).ravel()
        new_sets[name] = idx
    return replace(fe, node_sets=new_sets, metadata={**fe.metadata, "preparation": record})
