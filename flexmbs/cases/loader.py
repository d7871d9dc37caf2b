"""Read and validate a TOML case file into a Model plus solver and output settings.

The format is documented in ``docs/case_files.md``. Every error names the table, the
entry and the key: ``case.toml: [[bodies]] #2 'link2': key 'mass' must be a positive
number, got -1``. Relative paths (modal data, outputs) are resolved from the case file.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from .._blas import one_blas_thread
from ..errors import FieldError, FlexmbsError, ModelError, ValidationError
from ..frame.rotations import axis_angle, rotation_matrix
from ..integrators.options import SOLVER_TABLE_KEYS, SolverOptions
from ..model import ModelBuilder
from .case import Case, CaseError
from .contacts import _add_contact
from .entry import _orientation, _profile, _Table, modal_options
from .overrides import _as_toml, apply_overrides
from .run import case_system, run_case  # noqa: F401  (public here too: flexmbs.cases.loader)
from .substructured_case import add_files_part, add_part, rewrite, route_marker
from .tables import read_table

try:  # Python ≥ 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def _clipped(value, width: int = 60) -> str:
    """``repr(value)`` cut to ``width`` characters for a one-line message."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _entries(path: Path, raw: dict, key: str) -> list:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise CaseError(f"{path.name}: '{key}' must be an array of tables ([[{key}]]), got "
                        f"{type(value).__name__} {_clipped(value)}")
    return value


def _guard(path: Path, where: str, action):
    """Run ``action``; turn any non-flexmbs error into a CaseError naming ``where``."""
    try:
        return action()
    except CaseError:
        raise
    except (FlexmbsError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise CaseError(f"{path.name}: {where}: {exc}") from None




#: First bytes of binary files a user may pass as the case by mistake, with their kind.
BINARY_SIGNATURES = ((b"\x89HDF\r\n\x1a\n", "an HDF5 file (results or modal data?)"),
                     (b"PK\x03\x04", "a ZIP archive"), (b"%PDF", "a PDF document"),
                     (b"\x89PNG", "a PNG image"), (b"\x7fELF", "an executable"))


def read_case_toml(path: Path) -> dict:
    """The parsed TOML of the case file ``path``, after refusing (CaseError naming it) a missing
    path, a folder, an unreadable or binary file, and text that is not UTF-8."""
    if not path.exists():
        raise CaseError(f"case file {str(path)!r} does not exist")
    if path.is_dir():
        raise CaseError(f"case file {str(path)!r} is a folder, not a TOML file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CaseError(f"case file {str(path)!r} cannot be read ({exc.strerror})") from None
    for signature, kind in BINARY_SIGNATURES:
        if data.startswith(signature):
            raise CaseError(f"case file {str(path)!r} is {kind}, not a TOML case file")
    if b"\0" in data:
        raise CaseError(f"case file {str(path)!r} is a binary file (it contains NUL "
                        f"bytes), not a TOML case file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise CaseError(f"case file {str(path)!r} is not UTF-8 text (byte "
                        f"{data[exc.start]:#04x} at line {line}); save it as UTF-8"
                        ) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(f"{path.name}: not valid TOML ({exc})") from None
    _check_magnitudes(path, raw)
    return raw


#: The magnitudes a finite number of a case file may have (SI units): beyond them a value
#: is a typing or units slip that would overflow or vanish in the equations.
MAGNITUDES = (1e-100, 1e100)


def _check_magnitudes(path: Path, node, where: str = "") -> None:
    """CaseError naming the key and the value of the first finite non-zero number whose
    magnitude lies outside :data:`MAGNITUDES`."""
    if isinstance(node, dict):
        for key, value in node.items():
            _check_magnitudes(path, value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list):
        for k, value in enumerate(node):
            _check_magnitudes(path, value, f"{where}[{k}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        size = abs(float(node))
        if math.isfinite(size) and size and not MAGNITUDES[0] <= size <= MAGNITUDES[1]:
            raise CaseError(f"{path.name}: key {where!r} = {node!r} lies outside the "
                            f"magnitudes a case file takes ({MAGNITUDES[0]:g} to "
                            f"{MAGNITUDES[1]:g} in SI units)")


@one_blas_thread
def load_case(path, overrides: dict | None = None, modal_data: dict | None = None,
              reader=None) -> Case:
    """Parse and validate ``path``; raises CaseError naming table and key.

    ``overrides`` maps dotted keys to values applied to the file's tables before
    validation (see :func:`apply_overrides`), e.g. ``{"solver.coupling": "one-way",
    "bodies.beam.modes": 4}``. ``modal_data`` {body name: ModalData} stands in for the
    reduction of those built-in beams (gradients: the modal data on a tangent line).
    ``reader``: reads the modal data files (``read_modal``'s arguments; default
    :func:`flexmbs.read_modal`), e.g. one that keeps what it read for the next load.
    """
    from .. import read_modal

    if reader is not None:
        read_modal = reader

    path = Path(path)
    raw = read_case_toml(path)
    source = {"path": str(path), "text": path.read_text(encoding="utf-8"),
              "overrides": {str(k): _as_toml(v) for k, v in (overrides or {}).items()}}
    if overrides:  # (as the file's own values: the same magnitudes)
        apply_overrides(raw, overrides, path.name)
        _check_magnitudes(path, raw)
    top = _Table(path, "top level", raw, {"title", "notes", "model", "bodies", "markers",
                                         "joints", "drives", "forces", "contacts", "sensors",
                                         "initial", "controllers", "solver", "output"})
    model = raw.get("model", {})
    inputs = [path]
    if isinstance(model, dict) and "urdf" in model:  # a URDF robot (flexmbs.cases.urdf_case)
        from .urdf_case import URDF_KEYS, urdf_builder

        b = urdf_builder(path, _Table(path, "[model]", model, {"gravity", *URDF_KEYS}),
                         inputs, reader)
    else:
        model_t = _Table(path, "[model]", model, {"gravity", "urdf"})
        b = ModelBuilder(gravity=model_t.vector("gravity", [0.0, 0.0, 0.0]))
    if not isinstance(top.get("notes", []), list) or not all(
            isinstance(n, str) for n in top.get("notes", [])):
        raise top.error("notes", "must be a list of strings")
    # the entry tables in order, with the key that names an entry in messages
    parts: dict = {}  # substructured beams: name → its part and marker aliases
    sections = (
        ("bodies", "name", lambda k, e: _add_body(path, b, k, e, read_modal, inputs, parts,
                                                  modal_data or {})),
        ("markers", "name", lambda k, e: _add_marker(path, b, k, route_marker(parts, e))),
        ("joints", "name", lambda k, e: _add_joint(path, b, k, rewrite(parts, e))),
        ("drives", "name", lambda k, e: _add_drive(path, b, k, rewrite(parts, e))),
        ("forces", "name", lambda k, e: _add_force(path, b, k, rewrite(parts, e))),
        ("contacts", "name", lambda k, e: _add_contact(path, b, k, rewrite(parts, e))),
        ("sensors", "name", lambda k, e: _add_sensor(path, b, k, rewrite(parts, e))),
        ("initial", "joint", lambda k, e: _add_initial(path, b, k, e)),
    )
    for key, _, _ in sections:
        _entries(path, raw, key)
    for key, label, add in sections:
        for k, entry in enumerate(raw.get(key, []), 1):
            _guard(path, f"[[{key}]] #{k} {entry.get(label, '')!r}",
                   lambda k=k, entry=entry, add=add: add(k, entry))
    case = _finish(path, raw, top, b, inputs)
    case.source = source
    if raw.get("controllers"):  # read by flexmbs.cosim (flexmbs.cases.tables)
        read_table(path, "controllers", raw["controllers"], case)
    return case


def _add_initial(path, b, k, entry):
    """[[initial]]: joint and one of angle [rad], angle_deg, displacement [m]; rate."""
    t = _Table(path, f"[[initial]] #{k} {entry.get('joint', '')!r}", entry,
               {"joint", "angle", "angle_deg", "displacement", "rate"})
    b.set_initial(t.text("joint", required=True),
                  **{key: t.number(key) for key in ("angle", "angle_deg", "displacement",
                                                     "rate") if key in t.data})


def _add_sensor(path, b, k, entry):
    """[[sensors]]: name, type (the kind), quantity and the target key of the kind
    (marker, body with node, joint, drive, force, contact), frame where the kind takes
    one."""
    t = _Table(path, f"[[sensors]] #{k} {entry.get('name', '')!r}", entry,
               {"name", "type", "quantity", "marker", "body", "node", "joint", "drive",
                "force", "contact", "frame"})
    kind = t.text("type", required=True)
    node = t.get("node")
    if node is not None and (isinstance(node, bool) or not isinstance(node, int)):
        raise t.error("node", f"must be an integer node label, got {node!r}")
    b.add_sensor(t.text("name", required=True), kind, t.text("quantity", required=True),
                 **{key: t.text(key) for key in ("marker", "body", "joint", "drive",
                                                  "force", "contact", "frame")
                    if key in t.data},
                 node=node)



def _geometry(path, t: _Table, inputs):
    """A rigid body's ``geometry``: a mesh file path (relative to the case), or a table
    {file, scale [m per file unit], offset [m], axis + angle_deg} (docs/case_files.md)."""
    from ..errors import ValidationError
    from ..model.shapes import read_shape

    value = t.get("geometry")
    if value is None:
        return None
    if isinstance(value, str):
        value = {"file": value}
    if not isinstance(value, dict):
        raise t.error("geometry", f"must be a mesh file name or a table {{file, scale, "
                                  f"offset}}, got {value!r}")
    g = _Table(path, f"{t.where}.geometry", value,
               {"file", "scale", "offset", "axis", "angle_deg"})
    file = (path.parent / g.text("file", required=True)).resolve()
    rotation = None
    if "axis" in value or "angle_deg" in value:
        axis = g.vector("axis", required=True)
        if not np.linalg.norm(axis) > 0:
            raise g.error("axis", f"must not be the zero vector, got {value['axis']!r}")
        rotation = rotation_matrix(axis_angle(axis, np.radians(g.number("angle_deg",
                                                                        required=True))))
    inputs.append(file)
    try:
        return read_shape(file, scale=g.number("scale", 1.0, positive=True),
                          offset=g.vector("offset", [0, 0, 0]), rotation=rotation,
                          what=f"{path.name}: {t.where}.geometry")
    except ValidationError as exc:
        raise CaseError(str(exc)) from None


#: Options of ``read_modal`` that name files (relative to the case file).
_OPTION_FILES = ("geometry", "mass", "matrices")


def _modal_options(path, t: _Table, inputs) -> dict:
    """A flexible body's ``modal_options``: keyword options of the modal data's reader,
    e.g. ``{ geometry = "part.bdf", mass = "part.op4:MGG", units = "mm-t-s" }`` for a
    Nastran OP2 (docs/case_files.md); file options are relative to the case file."""
    options = t.get("modal_options", {})
    if not isinstance(options, dict):
        raise t.error("modal_options", f"must be a table of reader options, got {options!r}")
    out = dict(options)
    for key in _OPTION_FILES:
        if key in out:
            if not isinstance(out[key], str):
                raise t.error("modal_options", f"{key} must be a file name, got {out[key]!r}")
            from ..modal.io.nastran import split_spec  # the Nastran readers: only here

            file, name = split_spec(out[key])
            full = (path.parent / file).resolve()
            inputs.append(full)
            out[key] = f"{full}:{name}" if name else str(full)
    return out


def _add_body(path, b, k, entry, read_modal, inputs, parts=None, given=None):
    if entry.get("type") == "nonlinear-beam":
        from .nonlinear_beam_case import add_nonlinear_beam

        return add_nonlinear_beam(path, b, k, entry)
    name = entry.get("name", f"#{k}")
    if "point_masses" in entry:  # a payload enters the reduction: the beam table's key
        raise CaseError(f"{path.name}: [[bodies]] #{k} {name!r}: key 'point_masses' "
                        f"belongs in the body's beam table ([bodies.beam] point_masses = "
                        f"[...]); modal data files carry theirs from the reduction "
                        f"(flexmbs reduce/beam --add-mass), or join a rigid body with a "
                        f"fixed joint (docs/modal_front_end.md, 'Payloads')")
    t = _Table(path, f"[[bodies]] #{k} {name!r}", entry,
               {"name", "type", "mass", "inertia", "com", "position", "orientation",
                "axis", "angle_deg", "z_axis", "velocity", "angular_velocity",
                "modal_data", "modes", "coupling", "damping_ratio", "xi", "xi_dot",
                "fixed", "stiffening", "nonlinear", "geometry", "modal_options", "beam"})
    kind = t.get("type", "rigid")
    other = sorted(set(t.data) & (FLEXIBLE_ONLY if kind == "rigid" else RIGID_ONLY))
    if other and kind in ("rigid", "flexible"):  # (they were read by nothing, silently)
        raise t.error(other[0], f"does not apply to a {kind} body")
    common = dict(position=t.vector("position", [0, 0, 0]), orientation=_orientation(t),
                  velocity=t.vector("velocity", [0, 0, 0]),
                  angular_velocity=t.vector("angular_velocity", [0, 0, 0]),
                  fixed=_names(t.get("fixed", [])))
    if kind == "rigid":
        inertia = t.get("inertia", required=True)
        try:
            if not isinstance(inertia, list):
                raise TypeError(inertia)
            inertia = np.asarray(inertia, dtype=float)
        except (TypeError, ValueError):
            raise t.error("inertia", f"must be 3 principal moments or a 3x3 matrix of "
                                     f"numbers [kg m²], got {inertia!r}") from None
        b.add_rigid_body(t.text("name", required=True),
                         t.number("mass", required=True, positive=True), inertia,
                         com=t.vector("com", [0, 0, 0]), shape=_geometry(path, t, inputs),
                         **common)
    elif kind == "flexible" and t.get("beam") is not None:  # a built-in beam
        from .beam_body import beam_modal_data

        if t.get("modal_data") is not None:
            raise t.error("beam", "and modal_data are both given; give one of them")
        spec = t.get("beam")
        if isinstance(spec, dict) and spec.get("substructures", 1) != 1:
            try:  # k bodies joined at the cuts (flexmbs.cases.substructured_case)
                return add_part(b, t, spec, common, parts)
            except CaseError:  # already names the file, the entry and the key
                raise
            except FlexmbsError as exc:
                raise t.error("beam", str(exc)) from None
        try:
            data = (given or {}).get(t.get("name")) or beam_modal_data(
                t.get("beam"), stiffening=t.get("stiffening") is True,
                derivatives=t.get("nonlinear") is True)
        except FlexmbsError as exc:
            raise t.error("beam", str(exc)) from None
        _add_flexible(b, t, data, common, "a built-in beam")
    elif kind == "flexible":
        file = (path.parent / t.text("modal_data", required=True)).resolve()
        inputs.append(file)
        if file.name.endswith(".substructures.json"):  # k parts joined at their cuts
            try:
                return add_files_part(b, t, file, common, parts, inputs, read_modal)
            except CaseError:
                raise
            except FlexmbsError as exc:
                raise t.error("modal_data", str(exc)) from None
        options = _modal_options(path, t, inputs)
        try:
            data = read_modal(file, **options)
        except TypeError as exc:  # an option the file's reader does not take
            raise t.error("modal_options", f"{sorted(options)} do not apply to "
                                           f"{file.name}: {exc}") from None
        except FlexmbsError as exc:
            raise t.error("modal_data", f"could not be read: {exc}") from exc
        _add_flexible(b, t, data, common, file.name)
    else:
        raise t.error("type", f"must be 'rigid', 'flexible' or 'nonlinear-beam', got "
                              f"{kind!r}")


def _add_flexible(b, t, data, common, what: str) -> None:
    """Add a flexible body of ``data`` with the entry's modes, damping and stiffening."""
    data = modal_options(t, data)
    stiffening = t.get("stiffening")
    if stiffening is not None and not isinstance(stiffening, bool):
        raise t.error("stiffening", f"must be true or false, got {stiffening!r}")
    if stiffening and not data.has_stiffening:
        raise t.error("stiffening", f"is true but {what} carries no stiffening "
                                    f"matrices (make the modal data with flexmbs beam, "
                                    f"or flexmbs.modal.stiffening.with_stiffening)")
    nonlinear = t.get("nonlinear", False)
    if not isinstance(nonlinear, bool):
        raise t.error("nonlinear", f"must be true or false, got {nonlinear!r}")
    if nonlinear and not data.has_derivatives:
        raise t.error("nonlinear", f"is true but {what} carries no modal derivatives "
                                   f"(make the modal data with flexmbs beam/reduce "
                                   f"--modal-derivatives)")
    if nonlinear and stiffening:
        raise t.error("nonlinear", "and stiffening are both true; they are exclusive (the "
                                   "modal derivatives carry the stiffening)")
    b.add_flexible_body(t.text("name", required=True), data,
                        coupling=t.get("coupling", "two-way"),
                        xi=t.numbers("xi"), xi_dot=t.numbers("xi_dot"),
                        stiffening=stiffening, nonlinear=nonlinear,
                        **common)


def _add_marker(path, b, k, entry):
    t = _Table(path, f"[[markers]] #{k} {entry.get('name', '')!r}", entry,
               {"body", "name", "position", "frame", "orientation", "axis", "angle_deg",
                "z_axis", "node", "node_set", "attach"})
    b.add_marker(t.text("body", required=True), t.text("name", required=True),
                 t.vector("position", [0, 0, 0]), _orientation(t),
                 frame=t.get("frame", "body"), node=t.get("node"),
                 node_set=_marker_node_set(t), attach=t.get("attach"))


def _marker_node_set(t: _Table):
    """A marker's ``node_set``: a set name, a list of node labels, or a table giving the
    set by geometry ({type = "plane" | "box" | "cylinder" | "nearest", ...}, body frame
    [m], docs/case_files.md); anything else is a CaseError naming the marker and value."""
    from ..modal.node_selection import parse_spec

    value = t.get("node_set")
    if value is None:
        return None
    if isinstance(value, str):
        return t.text("node_set")
    if isinstance(value, list):
        bad = [v for v in value if isinstance(v, bool) or not isinstance(v, int)]
        if not value or bad:
            raise t.error("node_set", f"= {value!r}: a list of node labels must hold one or "
                                      f"more integers" + (f"; {bad[0]!r} is not an integer "
                                                          f"label" if bad else ""))
        values, counts = np.unique(np.asarray(value, dtype=np.int64), return_counts=True)
        dup = values[counts > 1].tolist()
        if dup:
            raise t.error("node_set", f"= {value!r} repeats node label(s) {dup}")
        return list(value)
    if isinstance(value, dict):
        try:
            return parse_spec(value, "node_set")
        except ValidationError as exc:
            raise t.error("node_set", f"= {value!r}: {exc}") from None
    raise t.error("node_set", f"must be a set name, a list of node labels or a geometry "
                              f"table {{type = ...}}, got {value!r}")


def _add_joint(path, b, k, entry):
    t = _Table(path, f"[[joints]] #{k} {entry.get('name', '')!r}", entry,
               {"name", "type", "i", "j"})
    b.add_joint(t.text("name", required=True), t.get("type", required=True),
                t.text("i", required=True), t.text("j", required=True))


def _add_drive(path, b, k, entry):
    t = _Table(path, f"[[drives]] #{k} {entry.get('name', '')!r}", entry,
               {"name", "type", "i", "j", "coordinate", "profile"})
    wrong = sorted(set(t.data) & ({"i", "j"} if t.get("type") == "coordinate"
                                  else {"coordinate"}))
    if wrong:  # (read by nothing, silently)
        raise t.error(wrong[0], f"does not apply to type {t.get('type')!r}")
    b.add_drive(t.text("name", required=True), t.get("type", required=True),
                _profile(t, "profile"), marker_i=t.text("i"), marker_j=t.text("j"),
                coordinate=t.text("coordinate"))


#: [[bodies]] keys of one body type only.
RIGID_ONLY = frozenset({"mass", "inertia", "com", "geometry"})
FLEXIBLE_ONLY = frozenset({"modal_data", "modes", "coupling", "damping_ratio", "xi",
                           "xi_dot", "stiffening", "nonlinear", "modal_options", "beam"})


#: Keys of the [[forces]] types read by hand below (besides those of the registered
#: kinds' case forms, ``elements.registry.CASE_FORMS``).
FORCE_KEYS = {"name", "type", "i", "j", "marker", "body", "stiffness", "damping",
              "free_length", "angle0", "value", "frame", "weights", "actuator"}

#: The [[forces]] types read by hand below (the registered kinds' are read through
#: their case forms).
HAND_READ_TYPES = ("spring-damper", "rotational-spring-damper", "joint-servo",
                   "joint-torque", "joint-force", "point-force", "point-torque",
                   "distributed")

#: The keys each type read by hand takes besides name and type (a key of :data:`FORCE_KEYS`
#: that the type does not read is an error, not ignored).
HAND_READ_KEYS = {
    "spring-damper": ("i", "j", "stiffness", "damping", "free_length", "actuator"),
    "rotational-spring-damper": ("i", "j", "stiffness", "damping", "angle0"),
    "joint-torque": ("i", "j", "value"), "joint-force": ("i", "j", "value"),
    "point-force": ("marker", "value", "frame"), "point-torque": ("marker", "value", "frame"),
    "distributed": ("body", "value", "weights", "frame"),
}


@functools.cache
def _force_forms():
    """(the registered kinds' case forms by type, each type's own keys (those no other
    type shares), the keys a [[forces]] entry may have), made once."""
    from ..elements.registry import CASE_FORMS  # the kinds' tables, at first use

    clash = sorted(set(CASE_FORMS) & set(HAND_READ_TYPES))
    if clash:
        raise AssertionError(f"element kinds register case types read by hand: {clash}")
    own = {form.type: frozenset(set(form.keys) - FORCE_KEYS)
           for form in CASE_FORMS.values()}
    own["joint-servo"] = frozenset(SERVO_KEYS)
    return CASE_FORMS, own, FORCE_KEYS.union(*own.values())


def _force_types(forms) -> str:
    types = [*HAND_READ_TYPES[:2], *forms, *HAND_READ_TYPES[2:]]
    return f"{', '.join(types[:-1])} or {types[-1]}"


def _add_force(path, b, k, entry):
    forms, own, allowed = _force_forms()
    t = _Table(path, f"[[forces]] #{k} {entry.get('name', '')!r}", entry, allowed)
    name, kind = t.text("name", required=True), t.get("type", required=True)
    if not isinstance(kind, str):
        raise t.error("type", f"must be {_force_types(forms)}; got {kind!r}")
    for owner, keys in own.items():
        misplaced = sorted((keys - own.get(kind, set())) & set(t.data)) if kind != owner else []
        if misplaced:
            raise t.error(misplaced[0], f"belongs to type {owner!r}, not {kind!r}")
    takes = HAND_READ_KEYS.get(kind)
    unread = sorted(set(t.data) - {"name", "type", *takes}) if takes else []
    if unread:  # (a shared key another type reads: it was silently ignored)
        raise t.error(unread[0], f"does not apply to type {kind!r} (its keys: "
                                 f"{', '.join(takes)})")
    if kind in forms:
        b.add_force(_registered_force(t, name, forms[kind]))
    elif kind == "spring-damper":
        b.add_spring_damper(name, t.text("i", required=True), t.text("j", required=True),
                            stiffness=t.number("stiffness", 0.0),
                            damping=t.number("damping", 0.0),
                            free_length=t.number("free_length", 0.0),
                            actuator=(_profile(t, "actuator") if "actuator" in t.data
                                      else None))
    elif kind == "rotational-spring-damper":
        b.add_rotational_spring_damper(name, t.text("i", required=True),
                                       t.text("j", required=True),
                                       stiffness=t.number("stiffness", 0.0),
                                       damping=t.number("damping", 0.0),
                                       angle0=t.number("angle0", 0.0))
    elif kind == "joint-servo":
        _add_servo(b, t, name)
    elif kind in ("joint-torque", "joint-force"):
        prof = _profile(t, "value")
        b.add_joint_actuator(name, t.text("i", required=True), t.text("j", required=True),
                             prof, kind="torque" if kind == "joint-torque" else "force")
    elif kind in ("point-force", "point-torque"):
        vec = t.vector("value", required=True)
        add = b.add_point_force if kind == "point-force" else b.add_point_torque
        add(name, t.text("marker", required=True), vec, frame=t.get("frame", "global"))
    elif kind == "distributed":
        b.add_distributed_load(name, t.text("body", required=True),
                               t.vector("value", required=True),
                               weights=t.get("weights", "mass"),
                               frame=t.get("frame", "global"))
    else:
        raise t.error("type", f"must be {_force_types(forms)}; got {kind!r}")


#: Keys of a [[forces]] entry of type "joint-servo" besides name and type.
SERVO_KEYS = ("joint", "kp", "kd", "ki", "reference", "torque_limit", "motor", "coordinate")


def _add_servo(b, t, name):
    """A joint servo (docs/servos.md): joint, kp, kd, reference (a profile table or a
    number), optional ki, torque_limit and motor = {inertia, gear_ratio, efficiency}."""
    foreign = sorted(set(t.data) - {"name", "type", *SERVO_KEYS})
    if foreign:
        raise t.error(foreign[0], f"does not apply to type 'joint-servo' (its keys: "
                                  f"{', '.join(SERVO_KEYS)})")
    motor = t.get("motor")
    if motor is not None and not isinstance(motor, dict):
        raise t.error("motor", f"must be a table {{inertia, gear_ratio, efficiency}}, got "
                               f"{motor!r}")
    b.add_joint_servo(name, t.text("joint", required=True), kp=t.number("kp", 0.0),
                      kd=t.number("kd", 0.0), ki=t.number("ki", 0.0),
                      reference=_profile(t, "reference"),
                      torque_limit=t.number("torque_limit", positive=True), motor=motor,
                      coordinate=t.text("coordinate"))


def _registered_force(t, name, form):
    """The declaration of a registered kind's force from its entry (``form``: the
    kind's :class:`~flexmbs.elements.declaration.CaseForm`): the values as written,
    checked by the declaration, whose errors name the case key."""
    extra = sorted(set(t.data) - {"name", "type", *form.keys})
    if extra:
        raise t.error(extra[0], f"does not apply to type {form.type!r} (its keys: name, "
                                f"{', '.join(form.keys)})")
    values = {keyword: (t.text(key, required=True) if key in form.required
                        else t.get(key)) for key, keyword in form.keys.items()
              if key in form.required or key in t.data}
    try:
        return form.declaration(name, **values)
    except FieldError as exc:
        key = next((k for k, keyword in form.keys.items() if keyword == exc.field),
                   exc.field)
        raise t.error(key, exc.detail) from None


def _finish(path, raw, top, b, inputs):
    try:
        model = b.finalize()
    except ModelError as exc:
        raise CaseError(f"{path.name}: {exc}") from None
    solver_t = _Table(path, "[solver]", raw.get("solver", {}), set(SOLVER_TABLE_KEYS))
    solver_t.number("h", required=True, positive=True)
    solver_t.number("t_end", required=True, positive=True)
    solver = SolverOptions.from_table(solver_t.data, solver_t.error)
    out_t = _Table(path, "[output]", raw.get("output", {}), {"file"})
    output = path.parent / out_t.get("file", path.name.rsplit(".", 1)[0] + ".res.h5")
    return Case(path, model, solver, output, str(top.get("title", "")),
                list(top.get("notes", [])), inputs)


def _names(value) -> tuple:
    """A list of names, or one name given alone (``fixed = "e0"``: not its letters)."""
    return (value,) if isinstance(value, str) else tuple(value)
