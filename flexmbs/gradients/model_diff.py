"""What a parameter changes in a model: the numeric leaves of a
:class:`~flexmbs.model.Model` and their derivatives (docs/gradients.md, "Parameters").

A parameter is known by the models it gives (:meth:`Parameter.model_at
<flexmbs.gradients.parameters.Parameter.model_at>`), whatever the path from its key to the
model: a case key goes through the case reader, a model key through the element's
fields. :func:`model_tangent` compares the models at p ± δ leaf by leaf and returns the
leaves that change with their central-difference derivatives: for the maps the shipped
parameters take (a field copied, a list of principal moments put on a diagonal, damping
ratios into D_ff) these are linear, and the difference is exact to round-off.

Leaves are addressed by tuples: ``("gravity",)``, ``("bodies", name, field, ...)``,
``("markers", name, field)``, ``("forces", name, field, ...)``,
``("drives", name, "profile", field)``, ``("initial", k, field)``. A flexible body's
modal data contributes K_ff, M_ff, D_ff, its shapes and nodes (``("bodies", name,
"data", "K_ff")``); callables (a joint actuator's function) are left out, their profile
is not.
"""

from __future__ import annotations

import dataclasses
import enum
from numbers import Number

import numpy as np

from ..errors import ModelError

#: The arrays of a flexible body's modal data that the dynamics see.
MODAL_LEAVES = ("K_ff", "M_ff", "D_ff", "phi", "psi", "nodes", "generalized_shapes")
#: Fields never compared: names, drawing geometry, bookkeeping.
SKIPPED_FIELDS = frozenset({"name", "shape", "fixed", "n_coords", "element_kind"})


def leaves(model) -> dict[tuple, object]:
    """{path: value} of every leaf of ``model``: floats and float arrays, or other values
    (strings, enums, None) that must stay equal."""
    out: dict[tuple, object] = {("gravity",): np.asarray(model.gravity, dtype=float)}
    for name, body in model.bodies.items():
        _walk(body, ("bodies", name), out)
    for name, marker in model.markers.items():
        out[("markers", name, "position")] = np.asarray(marker.position, dtype=float)
        out[("markers", name, "orientation")] = np.asarray(marker.orientation, dtype=float)
        out[("markers", name, "body")] = marker.body
    for group in ("joints", "drives", "forces"):
        for item in getattr(model, group):
            _walk(item, (group, item.name), out)
    for k, item in enumerate(getattr(model, "initial", ())):
        _walk(item, ("initial", k), out)
    return out


def _walk(obj, path, out) -> None:
    if obj is None or isinstance(obj, (str, bool, enum.Enum)):
        out[path] = obj
    elif isinstance(obj, Number):
        out[path] = float(obj)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fiu":
            out[path] = np.asarray(obj, dtype=float)
        else:
            out[path] = repr(obj.tolist())
    elif type(obj).__name__ == "ModalData":
        for key in MODAL_LEAVES:
            value = getattr(obj, key, None)
            out[(*path, key)] = None if value is None else np.asarray(value, dtype=float)
        for key, value in sorted(getattr(obj, "stiffening", {}).items()):
            out[(*path, "stiffening", key)] = np.asarray(value, dtype=float)
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            _walk(obj[key], (*path, str(key)), out)
    elif isinstance(obj, (list, tuple)):
        if all(isinstance(v, Number) and not isinstance(v, bool) for v in obj):
            out[path] = np.asarray(obj, dtype=float)
        else:
            for k, value in enumerate(obj):
                _walk(value, (*path, k), out)
    elif dataclasses.is_dataclass(obj):
        out[(*path, "@type")] = type(obj).__name__
        profile_set = getattr(obj, "profile", None) is not None
        for f in dataclasses.fields(obj):
            if f.name.startswith("_") or f.name in SKIPPED_FIELDS:
                continue
            value = getattr(obj, f.name)
            if f.name == "function" and profile_set:
                continue  # a joint actuator's profile wrapper: its profile is compared
            _walk(value, (*path, f.name), out)
    elif callable(obj):
        out[path] = "<callable>"
    # other objects (none in a model's numeric content) are not compared


def model_tangent(plus, minus, span: float, where: str) -> dict[tuple, np.ndarray]:
    """{path: (leaf(plus) − leaf(minus)) / span} over the leaves that differ between the
    models at two parameter values ``span`` apart (p ± δ: span = 2δ); ModelError (naming
    ``where``) when the two differ in structure (a leaf added, removed, or a non-numeric
    one changed)."""
    a, b = leaves(plus), leaves(minus)
    if a.keys() != b.keys():
        extra = sorted(map(_name, set(a) ^ set(b)))[:4]
        raise ModelError(f"{where}: changing it changes the model's structure ({extra})")
    out = {}
    for path, va in a.items():
        vb = b[path]
        if isinstance(va, (np.ndarray, float)):
            va_arr, vb_arr = np.asarray(va), np.asarray(vb)
            if va_arr.shape != vb_arr.shape:
                raise ModelError(f"{where}: changing it changes the shape of "
                                 f"{_name(path)}")
            if not np.array_equal(va_arr, vb_arr):
                out[path] = (va_arr - vb_arr) / span
        elif va != vb and not (va is None and vb is None):
            raise ModelError(f"{where}: changing it changes {_name(path)} from {vb!r} to "
                             f"{va!r}, which has no derivative")
    return out


def _name(path) -> str:
    return ".".join(str(p) for p in path)


def path_name(path) -> str:
    """A leaf path written as a dotted name (messages)."""
    return _name(path)


def moved(model, tangent: dict, delta: float):
    """``model`` with each leaf of ``tangent`` ({path: derivative}, :func:`model_tangent`)
    moved by ``delta`` times its derivative: the model on the parameter's tangent line,
    built in memory (no case file read again). Covers gravity and the fields of bodies
    (a flexible body's modal data by its arrays) and forces; derived fields (not
    constructor arguments) follow from the others. ModelError for any other leaf.

    A flexible body's modal damping stays a matrix: given by ratios, D_ff =
    M X diag(2ζω) Xᵀ M would follow K_ff through ω; D_ff goes first, from the nominal."""
    for path, slope in sorted(tangent.items(), key=lambda item: item[0][-1] != "D_ff"):
        head = path[0]
        if head == "gravity":
            model = dataclasses.replace(model, gravity=_shifted(model.gravity, slope, delta))
        elif head in ("bodies", "forces") and len(path) > 2:
            name = path[1]
            if head == "bodies":
                bodies = dict(model.bodies)
                bodies[name] = _moved_field(bodies[name], path[2:], slope, delta)
                model = dataclasses.replace(model, bodies=bodies)
            else:
                model = dataclasses.replace(model, forces=tuple(
                    _moved_field(f, path[2:], slope, delta) if f.name == name else f
                    for f in model.forces))
        else:
            raise ModelError(f"{_name(path)} cannot be moved in memory")
    return model


def _shifted(value, slope, delta):
    """``value`` + delta × slope in ``value``'s own type (float, array, list, tuple)."""
    new = np.asarray(value, dtype=float) + delta * np.asarray(slope, dtype=float)
    if isinstance(value, Number):
        return float(new)
    if isinstance(value, (list, tuple)):
        return type(value)(new.tolist())
    return new


def _moved_field(obj, rest, slope, delta):
    """A copy of ``obj`` with the leaf at the field path ``rest`` moved."""
    if not rest:
        return _shifted(obj, slope, delta)
    key = rest[0]
    if type(obj).__name__ == "ModalData":
        if rest == ("D_ff",):  # a property: as a matrix
            return dataclasses.replace(obj, damping_ratio=None,
                                       damping_matrix=_shifted(obj.D_ff, slope, delta))
        if obj.damping_ratio is not None:  # D_ff held as it is (not through ω)
            obj = dataclasses.replace(obj, damping_ratio=None, damping_matrix=obj.D_ff)
    if dataclasses.is_dataclass(obj):
        field_ = next((f for f in dataclasses.fields(obj) if f.name == key), None)
        if field_ is None:
            raise ModelError(f"{type(obj).__name__} has no field {key!r}")
        if not field_.init:  # derived: recomputed from the fields it follows
            return obj
        return dataclasses.replace(obj, **{key: _moved_field(getattr(obj, key), rest[1:],
                                                              slope, delta)})
    if isinstance(obj, dict):
        out = dict(obj)
        out[key] = _moved_field(obj[key], rest[1:], slope, delta)
        return out
    if isinstance(obj, (list, tuple)) and isinstance(key, int):
        items = list(obj)
        items[key] = _moved_field(obj[key], rest[1:], slope, delta)
        return type(obj)(items)
    raise ModelError(f"cannot move the leaf {key!r} of a {type(obj).__name__}")
