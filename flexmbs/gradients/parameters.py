"""Design parameters by key (docs/gradients.md, "Parameters"): their nominal value, the
model at another value, and what they change in it.

Keys are written as for ``flexmbs run --set``: dotted, arrays of tables addressed by
their entries' names, with an index for one entry of a list: ``model.gravity[1]``,
``bodies.link1.mass``, ``bodies.link1.inertia[2]``, ``bodies.bob.com[1]``,
``forces.shoulder_pd.stiffness``, ``forces.bush.stiffness[0]``,
``forces.servo.kp``, ``forces.lift.value.end`` (a field of a profile table),
``bodies.beam.damping_ratio[0]``. On a model built in Python the same keys address the
model's own fields (``gravity[1]``, ``bodies.link1.inertia[1,1]``,
``forces.servo.reference.end``, ``drives.spin.profile.omega``,
``markers.link1.tip.position[0]`` for a marker of a rigid body). One key exists for
both: ``bodies.<flexible body>.stiffness_scale``, a factor on K_ff (1 nominally; D_ff
held; on a nonlinear body on its cubic and quartic strain energy too).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import FlexmbsError, ModelError, ValidationError
from ..model.declarations import ProfileValue
from .model_diff import model_tangent

#: one dotted segment: a name, optionally with [i] (a list entry; [i,j] at the end only)
_SEGMENT = re.compile(r"^([A-Za-z_][\w\-]*)(?:\[(\d+)(?:,\s*(\d+))?\])?$")
#: Relative step of the model comparison (model_tangent): linear maps are exact at any
#: step; the others (an initial angle through sin and cos) keep ~1e-10.
REL_STEP = 1e-5
SCALE_KEY = "stiffness_scale"


def split_key(key: str):
    """(dotted path parts, index tuple) of ``key``; an index inside the path (a list of
    tables without names: ``beam.point_masses[0].mass``) is an int part. ValidationError
    when malformed."""
    text = str(key).strip()
    segments = [] if not text else _split_segments(text)
    parts: list = []
    index: tuple = ()
    for k, seg in enumerate(segments):
        match = _SEGMENT.match(seg)
        last = k == len(segments) - 1
        if match is None or (match.group(3) is not None and not last):
            raise ValidationError(f"parameter {key!r}: expected a dotted key as for --set, "
                                  f"optionally with an index, e.g. 'bodies.link1.mass' or "
                                  f"'model.gravity[1]'")
        parts.append(match.group(1))
        numbers = tuple(int(g) for g in match.groups()[1:] if g is not None)
        if last:
            index = numbers
        elif numbers:
            parts.append(numbers[0])
    if not parts:
        raise ValidationError(f"parameter {key!r}: expected a dotted key as for --set")
    return parts, index


def _split_segments(text: str) -> list[str]:
    """``text`` split at the dots outside brackets."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "." and depth == 0:
            out.append(text[start:k])
            start = k + 1
    out.append(text[start:])
    return out


@dataclass
class Parameter:
    """One scalar design parameter: its ``key``, nominal ``value`` and the ``source``
    (:class:`CaseModels` or :class:`ModelModels`) that makes the model at any value."""

    key: str
    value: float
    source: object
    _variants: tuple | None = field(default=None, repr=False)

    def model_at(self, value: float):
        """The model with this parameter at ``value``."""
        return self.source.model_at(self.key, float(value))

    @property
    def step(self) -> float:
        """δ of :meth:`variants` [units of the parameter]."""
        return REL_STEP * (abs(self.value) if self.value else 1.0)

    @property
    def beam(self) -> str | None:
        """The built-in beam body whose FE model this parameter changes (its modal data
        then come from :mod:`.beam_parameters`), or None."""
        from .beam_parameters import beam_body

        return beam_body(self.source, self.key)

    def variants(self):
        """(model at p + δ, model at p − δ, their parameter span 2δ); at a bound (a
        damping ratio of 0, where p − δ is refused) the nominal model and δ instead. A
        built-in beam's FE parameter gives the models with the body's modal data on its
        tangent line (:func:`~flexmbs.gradients.beam_parameters.modal_variants`)."""
        d = self.step
        if self._variants is None and self.beam is not None:
            from .beam_parameters import modal_variants

            self._variants = modal_variants(self.source, self.key, self.value, d)
        if self._variants is None:
            plus = self.model_at(self.value + d)
            try:
                self._variants = (plus, self.model_at(self.value - d), 2.0 * d)
            except FlexmbsError:
                self._variants = (plus, self.model_at(self.value), d)
        return self._variants

    def tangent(self) -> dict:
        """{leaf path: ∂leaf/∂p} (:func:`~flexmbs.gradients.model_diff.model_tangent`)."""
        plus, minus, span = self.variants()
        return model_tangent(plus, minus, span, f"parameter {self.key!r}")


def _set_index(value, index, new, key):
    """A copy of the list/array ``value`` with entry ``index`` set to ``new`` (both
    (i, j) and (j, i) of a square matrix)."""
    arr = np.array(value, dtype=float)
    try:
        arr[index] = new
        if len(index) == 2 and arr.ndim == 2 and arr.shape[0] == arr.shape[1]:
            arr[index[::-1]] = new
    except IndexError:
        raise ValidationError(f"parameter {key!r}: index {list(index)} is out of range for "
                              f"a value of shape {arr.shape}") from None
    return arr


def _get_index(value, index, key) -> float:
    if not index:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
            raise ValidationError(f"parameter {key!r} is {value!r}, not a number; name one "
                                  f"entry with an index, e.g. {key}[0]")
        return float(value)
    try:
        return float(np.asarray(value, dtype=float)[index])
    except (IndexError, TypeError, ValueError):
        raise ValidationError(f"parameter {key!r}: {value!r} has no entry {list(index)}"
                              ) from None


# ----------------------------------------------------------------------------- cases
class CaseModels:
    """Models of a case file at other parameter values, through the case reader itself
    (``load_case`` with the parameter as an override on top of ``overrides``);
    ``scales`` {flexible body: factor} are the stiffness scales set on top."""

    def __init__(self, path, overrides: dict | None = None, scales: dict | None = None):
        from ..cases.loader import read_case_toml
        from ..cases.overrides import apply_overrides

        self.path = Path(path)
        self.overrides = dict(overrides or {})
        self.scales = dict(scales or {})
        self.raw = read_case_toml(self.path)
        apply_overrides(self.raw, self.overrides, self.path.name)
        self._nominal = None
        self._read = _kept_reads({})

    def _load(self, overrides: dict, scales: dict, modal_data: dict | None = None):
        from ..cases.loader import load_case

        case = load_case(self.path, overrides, modal_data, self._read)
        for name, factor in scales.items():
            case.model = scale_stiffness(case.model, name, factor)
        return case

    def nominal(self):
        """The case as loaded (with ``overrides`` and ``scales``)."""
        if self._nominal is None:
            self._nominal = self._load(self.overrides, self.scales)
        return self._nominal

    def model_with_data(self, name: str, data):
        """The nominal model with the built-in beam ``name`` of modal data ``data`` (its
        markers' modal rows and distributed loads built from them)."""
        return self._load(self.overrides, self.scales, {name: data}).model

    def _node(self, parts, key, expand: bool = True):
        """The raw case value at ``parts`` (None when absent); arrays of tables by their
        entries' names, lists by int parts, a built-in beam's named material as its
        table (``expand``)."""
        node = self.raw
        for k, part in enumerate(parts):
            if isinstance(part, int):
                if not isinstance(node, list) or not 0 <= part < len(node):
                    raise ValidationError(f"parameter {key!r}: {'.'.join(map(str, parts[:k]))}"
                                          f" has no entry [{part}]")
                node = node[part]
            elif isinstance(node, list):
                match = [e for e in node if isinstance(e, dict) and e.get("name") == part]
                if not match:
                    names = [e.get("name") for e in node if isinstance(e, dict)]
                    raise ValidationError(f"parameter {key!r}: no [[{parts[k - 1]}]] entry "
                                          f"named {part!r}; entries: {names}")
                node = match[0]
            elif isinstance(node, str) and expand and k and parts[k - 1] == "material":
                node = _material_table(node, key).get(part)
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return None
        return node

    def _override(self, parts, index, value, key) -> tuple[str, object]:
        """(override key, value) that sets ``key`` to ``value``: the key itself, or the
        list or named material it lies in, copied with the entry changed (lists of tables
        without names and named materials cannot be addressed by --set keys)."""
        top = len(parts)
        for k in range(1, len(parts)):
            if isinstance(parts[k], int) or (parts[k - 1] == "material" and isinstance(
                    self._node(parts[:k], key, expand=False), str)):
                top = k
                break
        new = value
        if index:
            new = _set_index(self._node(parts, key), index, value, key).tolist()
        if top == len(parts):
            return ".".join(parts), new
        container = copy.deepcopy(self._node(parts[:top], key))
        if isinstance(container, str):  # a named material: as its table
            container = _material_table(container, key)
        node = container
        for part in parts[top:-1]:
            node = node[part]
        node[parts[-1]] = new
        return ".".join(map(str, parts[:top])), container

    @staticmethod
    def scale_body(parts):
        """The flexible body of a stiffness-scale key, or None."""
        if len(parts) == 3 and parts[0] == "bodies" and parts[2] == SCALE_KEY:
            return parts[1]
        return None

    def value(self, key: str) -> float:
        parts, index = split_key(key)
        if parts[0] in ("solver", "output"):
            raise ValidationError(f"parameter {key!r}: [{parts[0]}] settings are not "
                                  f"model parameters")
        name = self.scale_body(parts)
        if name is not None:
            self._flexible(name, key)
            return float(self.scales.get(name, 1.0))
        node = self._node(parts, key)
        if node is None:
            raise ValidationError(f"parameter {key!r} is not set in {self.path.name}; give "
                                  f"its value as KEY=VALUE (it is then set there)")
        return _get_index(node, index, key)

    def _flexible(self, name, key):
        body = self._load(self.overrides, {}).model.bodies.get(name) \
            if self._nominal is None else self._nominal.model.bodies.get(name)
        if body is None or not hasattr(body, "data"):
            raise ValidationError(f"parameter {key!r}: {name!r} is not a flexible body of "
                                  f"{self.path.name}")
        return body

    def with_value(self, key: str, value: float) -> CaseModels:
        """This source with ``key`` set to ``value``."""
        parts, index = split_key(key)
        name = self.scale_body(parts)
        if name is not None:
            self._flexible(name, key)
            return CaseModels(self.path, self.overrides, {**self.scales, name: value})
        where, new = self._override(parts, index, value, key)
        return CaseModels(self.path, {**self.overrides, where: new}, self.scales)

    def model_at(self, key: str, value: float):
        parts, index = split_key(key)
        name = self.scale_body(parts)
        overrides, scales = self.overrides, self.scales
        if name is not None:
            scales = {**scales, name: value}
        else:
            where, new = self._override(parts, index, value, key)
            overrides = {**overrides, where: new}
        try:
            return self._load(overrides, scales).model
        except FlexmbsError as exc:
            raise ModelError(f"parameter {key!r} = {value:.6g}: {exc}") from None


def _kept_reads(reads: dict):
    """A modal data reader (``read_modal``'s arguments) that reads each file with each set
    of options once and keeps it in ``reads``: the models at p ± δ of one case share the
    files' data (ModalData is immutable; truncation and damping make new objects)."""
    from .. import read_modal

    def read(file, **options):
        key = (str(file), repr(sorted(options.items())))
        if key not in reads:
            reads[key] = read_modal(file, **options)
        return reads[key]

    return read


def _material_table(name: str, key) -> dict:
    """{E, nu, rho, name} of a built-in beam's named material ("steel", "aluminium")."""
    from ..cases.beam_body import beam_material

    try:
        material = beam_material(name)
    except FlexmbsError as exc:
        raise ValidationError(f"parameter {key!r}: {exc}") from None
    return {"E": material.E, "nu": material.nu, "rho": material.rho, "name": material.name}


# ----------------------------------------------------------------------------- models
class ModelModels:
    """Models of a model built in Python at other parameter values: the key addresses
    the model's own fields (element, then attribute path)."""

    def __init__(self, model):
        self.model = model

    def _element(self, parts, key):
        """(container name, element name or None, element, attribute path)."""
        if parts[0] in ("gravity",) or parts[:2] == ["model", "gravity"]:
            return "gravity", None, self.model.gravity, []
        group = parts[0]
        if group == "markers" and len(parts) == 4 and parts[3] == "position":
            name = f"{parts[1]}.{parts[2]}"
            marker = self.model.markers.get(name)
            if marker is None:
                raise ValidationError(f"parameter {key!r}: no marker {name!r}; markers: "
                                      f"{sorted(self.model.markers)}")
            if hasattr(self.model.bodies.get(marker.body), "data"):
                raise ValidationError(f"parameter {key!r}: a marker on a flexible body "
                                      f"moves with its modes, not by its position")
            return "markers", name, marker, ["position"]
        if group not in ("bodies", "forces", "drives") or len(parts) < 3:
            raise ValidationError(f"parameter {key!r}: expected 'gravity[i]', "
                                  f"'bodies.<name>.<field>', 'forces.<name>.<field>', "
                                  f"'drives.<name>.<field>' or "
                                  f"'markers.<body>.<marker>.position[i]'")
        name = parts[1]
        if group == "bodies":
            element = self.model.bodies.get(name)
        else:
            element = next((e for e in getattr(self.model, group) if e.name == name), None)
        if element is None:
            names = (list(self.model.bodies) if group == "bodies"
                     else [e.name for e in getattr(self.model, group)])
            raise ValidationError(f"parameter {key!r}: no {group[:-1]} named {name!r}; "
                                  f"{group}: {names}")
        return group, name, element, parts[2:]

    def value(self, key: str) -> float:
        parts, index = split_key(key)
        group, _, element, attrs = self._element(parts, key)
        if group == "gravity":
            return _get_index(element, index, key)
        if attrs == [SCALE_KEY]:
            _flexible_data(element, key)
            return 1.0
        if attrs == ["damping_ratio"]:
            data = _flexible_data(element, key)
            ratio = (np.zeros(data.n_modes) if data.damping_ratio is None
                     else data.damping_ratio)
            return _get_index(ratio, index, key)
        node = element
        for attr in attrs:
            if not hasattr(node, attr) or attr.startswith("_"):
                raise ValidationError(f"parameter {key!r}: {type(node).__name__} has no "
                                      f"field {attr!r}")
            node = getattr(node, attr)
        return _get_index(node, index, key)

    def model_at(self, key: str, value: float):
        parts, index = split_key(key)
        group, name, element, attrs = self._element(parts, key)
        model = self.model
        if group == "gravity":
            return replace(model, gravity=_set_index(model.gravity, index, value, key))
        if attrs == [SCALE_KEY]:
            return scale_stiffness(model, name, value)
        if attrs == ["damping_ratio"]:
            data = _flexible_data(element, key)
            ratio = np.zeros(data.n_modes) if data.damping_ratio is None else \
                data.damping_ratio
            new = _set_index(ratio, index, value, key) if index else np.full(
                data.n_modes, value)
            changed = replace(element, data=data.with_damping(ratio=new))
        else:
            try:
                changed = _replaced(element, attrs, index, value, key)
            except FlexmbsError as exc:
                raise ModelError(f"parameter {key!r} = {value:.6g}: {exc}") from None
        return _with_element(model, group, name, changed)


def _flexible_data(element, key):
    data = getattr(element, "data", None)
    if data is None or not hasattr(data, "K_ff"):
        raise ValidationError(f"parameter {key!r}: {getattr(element, 'name', element)!r} is "
                              f"not a flexible body")
    return data


def _replaced(obj, attrs, index, value, key):
    """A copy of ``obj`` with the field path ``attrs`` (and entry ``index``) at value."""
    attr, rest = attrs[0], attrs[1:]
    if not is_dataclass(obj) or attr not in {f.name for f in fields(obj)}:
        raise ValidationError(f"parameter {key!r}: {type(obj).__name__} has no field "
                              f"{attr!r}")
    current = getattr(obj, attr)
    if rest:
        new = _replaced(current, rest, index, value, key)
    elif index:
        new = _set_index(current, index, value, key)
        if isinstance(current, tuple):
            new = tuple(new.tolist())
    else:
        _get_index(current, (), key)
        new = float(value)
    changes = {attr: new}
    if attr == "profile" and callable(getattr(obj, "function", None)):
        changes["function"] = ProfileValue(new)  # a joint actuator's value
    return replace(obj, **changes)


def _with_element(model, group, name, element):
    if group == "markers":
        markers = dict(model.markers)
        markers[name] = element
        return replace(model, markers=markers)
    if group == "bodies":
        bodies = dict(model.bodies)
        bodies[name] = element
        return replace(model, bodies=bodies)
    items = tuple(element if e.name == name else e for e in getattr(model, group))
    return replace(model, **{group: items})


def scale_stiffness(model, name: str, factor: float):
    """``model`` with K_ff of flexible body ``name`` times ``factor`` (D_ff held), and
    for a nonlinear body (modal derivatives) its whole strain energy: C₃ and C₄ too."""
    body = model.bodies[name]
    data = body.data
    scaled = replace(data, K_ff=data.K_ff * factor, damping_ratio=None,
                     damping_matrix=np.array(data.D_ff))
    bodies = dict(model.bodies)
    elastic = getattr(body, "elastic", None)
    if elastic is not None:
        bodies[name] = replace(body, data=scaled, elastic=replace(
            elastic, cubic=elastic.cubic * factor, quartic=elastic.quartic * factor))
    else:
        bodies[name] = replace(body, data=scaled)
    return replace(model, bodies=bodies)


def resolve(keys, source):
    """(parameters, source): the Parameters of ``keys`` (each "KEY" or "KEY=VALUE", the
    value setting the nominal one) on ``source``, and the source with those values set
    (the nominal model of the run); an unknown or repeated key is a ValidationError
    naming it."""
    pairs, seen = [], set()
    for item in keys:
        key, _, given = str(item).partition("=")
        key = key.strip()
        if key in seen:
            raise ValidationError(f"parameter {key!r} is given twice")
        seen.add(key)
        if given.strip():
            try:
                value = float(given)
            except ValueError:
                raise ValidationError(f"parameter {item!r}: the value must be a number"
                                      ) from None
            source = _with_value(source, key, value)
        pairs.append(key)
    if not pairs:
        raise ValidationError("no parameters given")
    return [Parameter(key, source.value(key), source) for key in pairs], source


def _with_value(source, key, value):
    """``source`` with ``key`` set to ``value`` (a parameter given as KEY=VALUE)."""
    if isinstance(source, CaseModels):
        return source.with_value(key, value)
    out = copy.copy(source)
    out.model = source.model_at(key, value)
    return out


def apply_bounds(bounds, keys, x0, low, high) -> None:
    """Write the bounds ``{key: (low, high)}`` of the parameters ``keys`` into ``low``
    and ``high`` (in place); ValidationError naming the key when it is not a parameter
    or its bounds do not hold the start value ``x0``."""
    for key, (lo, hi) in (bounds or {}).items():
        if key not in keys:
            raise ValidationError(f"bounds given for {key!r}, which is not a parameter "
                                  f"({keys})")
        j = keys.index(key)
        low[j], high[j] = float(lo), float(hi)
        if not low[j] < high[j] or not low[j] <= x0[j] <= high[j]:
            raise ValidationError(f"bounds of {key!r}: need low < high around the start "
                                  f"{x0[j]:g}, got ({lo}, {hi})")
