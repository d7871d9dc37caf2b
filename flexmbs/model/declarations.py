"""The declarations a ModelBuilder collects, checked and turned into model parts:
vectors, orientations and drawing shapes given by the user, markers on rigid and flexible
bodies (positions [m] and orientations in the body frame; a flexible body's marker with
its modal rows), distributed loads with their nodal weights, and the sensors' targets
(docs/multibody.md, docs/sensors.md).
Problems are collected, not raised, so that finalize() reports them all at once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ModelError, ValidationError
from ..frame.rotations import frame_from_z, rotation_matrix
from .drives import Profile
from .flexible import FlexibleBody
from .forces import DistributedLoad
from .marker_modes import interface_modes, node_modes, point_modes
from .markers import Marker
from .sensors import (
    DRIVE_QUANTITY,
    FORCE_COORDINATES,
    QUANTITIES,
    ROTATING_JOINTS,
    SLIDING_JOINTS,
)


def _floats(value) -> np.ndarray:
    """``value`` as a float array, or an empty (0,) array when it is not one (ragged
    lists, text, None): the callers then name the field and the value."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return np.zeros(0)


def _vec3(value, what, problems):
    arr = _floats(value)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        problems.append(f"{what} must be 3 finite numbers, got {value!r}")
        return np.zeros(3)
    return arr


def _shape(value, what, problems):
    """A rigid body's drawing geometry: None, a SurfaceShape, or a mesh file path."""
    from .shapes import SurfaceShape, read_shape

    if value is None or isinstance(value, SurfaceShape):
        return value
    if isinstance(value, (str, Path)):
        try:
            return read_shape(value, what=what)
        except ValidationError as exc:
            problems.append(str(exc))
            return None
    problems.append(f"{what} must be a SurfaceShape or a mesh file path, got "
                    f"{type(value).__name__}")
    return None


def _orientation(value, what, problems):
    """A rotation matrix from None, a 3x3 matrix, 4 Euler parameters or a z-axis (3,)."""
    if value is None:
        return np.eye(3)
    arr = np.asarray(value, dtype=float)
    if arr.shape == (3,):
        if not np.linalg.norm(arr) > 0:
            problems.append(f"{what} axis has zero length")
            return np.eye(3)
        return frame_from_z(arr)
    if arr.shape == (4,):
        if not np.linalg.norm(arr) > 0:
            problems.append(f"{what} Euler parameters are all zero")
            return np.eye(3)
        return rotation_matrix(arr / np.linalg.norm(arr))
    if arr.shape == (3, 3):
        if (not np.allclose(arr.T @ arr, np.eye(3), atol=1e-9)
                or np.linalg.det(arr) <= 0):
            problems.append(f"{what} is not a proper rotation matrix (orthonormal, det +1)")
            return np.eye(3)
        return arr
    problems.append(f"{what} must be a 3x3 rotation, 4 Euler parameters or a z-axis; got "
                    f"shape {arr.shape}")
    return np.eye(3)


def _marker_node_set(data, node_set) -> tuple[np.ndarray, str]:
    """The node indices of a marker's ``node_set`` and how the marker records it.

    ``node_set`` is a set name of the ModalData, a list of node labels (the same as a
    named set of those nodes) or a geometric spec (a dict with ``type``, or
    ``"KIND:key=value;..."``, :mod:`flexmbs.modal.node_selection`, body frame [m])."""
    from ..modal.node_selection import KINDS, format_spec, parse_spec, select_nodes

    if isinstance(node_set, str) and node_set in data.node_sets:
        return data.node_sets[node_set], node_set
    if isinstance(node_set, dict) or (isinstance(node_set, str)
                                      and node_set.partition(":")[0] in KINDS):
        try:
            spec = parse_spec(node_set, "node_set")
            return select_nodes(data.nodes, spec, "node_set"), format_spec(spec)
        except ValidationError as exc:
            raise ModelError(str(exc)) from None
    if isinstance(node_set, str):
        raise ModelError(f"node set {node_set!r} is not in its ModalData (sets: "
                         f"{sorted(data.node_sets)})")
    try:
        labels = list(node_set)
    except TypeError:
        raise ModelError(f"node_set must be a set name, a list of node labels or a "
                         f"geometric spec, got {node_set!r}") from None
    bad = [v for v in labels if isinstance(v, bool) or not isinstance(v, (int, np.integer))]
    if not labels or bad:
        raise ModelError(f"node_set {node_set!r}: a list of node labels needs one or more "
                         f"integers" + (f"; {bad[0]!r} is not one" if bad else ""))
    values, counts = np.unique(np.asarray(labels, dtype=np.int64), return_counts=True)
    dup = values[counts > 1].tolist()
    if dup:
        raise ModelError(f"node_set {node_set!r} repeats node label(s) {dup}")
    lookup = {int(v): i for i, v in enumerate(data.node_ids)}
    missing = [int(v) for v in labels if int(v) not in lookup]
    if missing:
        ids = data.node_ids
        raise ModelError(f"node_set {node_set!r}: node label(s) {missing[:5]} are not nodes "
                         f"of its ModalData (labels {int(ids.min())}..{int(ids.max())}, "
                         f"{ids.size} nodes)")
    members = np.array([lookup[int(v)] for v in labels], dtype=np.int64)
    return members, "[" + ", ".join(str(int(v)) for v in labels) + "]"


def _name_problem(kind: str, name) -> str | None:
    """Why ``name`` cannot name a ``kind`` (None when it can): names are non-empty
    strings, and body names hold no '.' (marker references are 'body.marker')."""
    if not isinstance(name, str) or not name.strip():
        return f"{kind} name must be a non-empty string, got {name!r}"
    if kind == "body" and "." in name:
        return (f"body name {name!r} must not contain '.' (markers are referred to as "
                f"'body.marker')")
    return None


@dataclass(frozen=True)
class ProfileValue:
    """f(t, state) = s(t) of a profile (a joint actuator given by a time profile)."""

    profile: Profile

    def __call__(self, t, state=None) -> float:
        return self.profile.eval(t)[0]


def _some(names, most: int = 8) -> str:
    """The first ``most`` of ``names`` for a message, with how many more there are."""
    names = [str(n) for n in names]
    shown = ", ".join(repr(n) for n in names[:most])
    return f"[{shown}{f', … {len(names) - most} more' if len(names) > most else ''}]"


def _marker_hint(ref, markers: dict, bodies: dict) -> str:
    """Why the marker reference ``ref`` ("body.marker") resolves to nothing: an unknown
    body (with the bodies there are) or a body without that marker (with its markers)."""
    body = str(ref).split(".", 1)[0]
    if body not in bodies:
        return f"unknown body {body!r}; bodies: {_some(bodies)}"
    own = [m.split(".", 1)[1] for m in markers if m.split(".", 1)[0] == body]
    return (f"body {body!r} has the markers {_some(own)}" if own
            else f"body {body!r} has no markers")


def resolve_markers(declared, bodies: dict, problems: list[str]
                    ) -> tuple[dict[str, Marker], dict[str, dict]]:
    """The markers of the ``declared`` tuples (body, name, position, orientation, frame,
    node, node_set, attach) on ``bodies``: positions [m] and orientations in the body
    frame, flexible-body markers with their modal rows (by body, then marker name).
    Every problem is appended to ``problems`` (the builder raises them at once)."""
    markers: dict[str, Marker] = {}
    flex_modes: dict[str, dict] = {}
    for body, name, position, orientation, frame, node, node_set, attach in declared:
        full = f"{body}.{name}"
        if (problem := _name_problem("marker", name)) is not None:
            problems.append(f"{problem} (on body {body!r})")
            continue
        if body not in bodies:
            problems.append(f"marker {full!r}: unknown body {body!r}; bodies: "
                            f"{_some(bodies)}")
            continue
        if full in markers:
            problems.append(f"duplicate marker {full!r}")
        pos = _vec3(position, f"marker {full!r} position", problems)
        rot = _orientation(orientation, f"marker {full!r} orientation", problems)
        b = bodies[body]
        if frame == "global" and b.n_coords:
            a = rotation_matrix(b.q0[3:7])  # every body's q0 starts with [R, p]
            pos = a.T @ (pos - b.q0[:3])
            rot = a.T @ rot
        elif frame not in ("body", "global"):
            problems.append(f"marker {full!r}: frame must be 'body' or 'global'")
        node_index = None
        if isinstance(b, FlexibleBody):
            try:
                if attach is not None and (node is not None or node_set is not None):
                    raise ModelError("attach applies to a marker at a position, not "
                                     "to one on a node or node set")
                if node is not None and node_set is None:
                    if isinstance(node, bool) or not isinstance(node, (int, np.integer)):
                        raise ModelError(f"node must be an integer node label, got "
                                         f"{node!r}")
                    hits = np.flatnonzero(b.data.node_ids == int(node))
                    if hits.size != 1:
                        raise ModelError(f"node label {node!r} is not a node of its "
                                         f"ModalData")
                    node_index = int(hits[0])
                    modes = node_modes(b.data, node_index)
                elif node is None and node_set is None:  # a point of the body
                    if attach is None:
                        attach = "frame" if not np.any(pos) else "nearest"
                    modes = point_modes(b.data, pos, attach)
                    flex_modes.setdefault(body, {})[name] = modes
                    markers[full] = Marker(body, name, pos, rot, None, None)
                    continue
                elif node_set is not None and node is None:
                    given = node_set
                    members, node_set = _marker_node_set(b.data, node_set)
                    try:
                        modes = (node_modes(b.data, int(members[0])) if members.size == 1
                                 else interface_modes(b.data, members))
                    except ModelError as exc:
                        raise ModelError(f"node_set {given!r}: {exc}") from None
                else:
                    raise ModelError("give exactly one of node= or node_set=")
                if np.any(np.asarray(position, dtype=float) != 0):
                    raise ModelError("position is taken from the node (set); do not "
                                     "give position=")
                pos = modes.u0
                flex_modes.setdefault(body, {})[name] = modes
            except ModelError as exc:
                problems.append(f"marker {full!r} on flexible body {body!r}: {exc}")
        elif node is not None or node_set is not None or attach is not None:
            problems.append(f"marker {full!r}: node/node_set/attach only apply to "
                            f"flexible bodies")
        markers[full] = Marker(body, name, pos, rot, node_index, node_set)
    return markers, flex_modes


def distributed_loads(declared, bodies: dict, problems: list[str]) -> list:
    """The DistributedLoad forces of the ``declared`` tuples (name, body, load, weights,
    frame): the nodal weights (mass, uniform or given per node) integrated once into
    the body's load integrals. Problems are appended to ``problems``."""
    loads = []
    for name, body, load, weights, frame in declared:
        b = bodies.get(body)
        if not isinstance(b, FlexibleBody):
            problems.append(f"distributed load {name!r}: {body!r} is not a flexible body")
            continue
        if isinstance(weights, str):
            if weights == "mass":
                if b.data.is_lumped:
                    w = b.data.mass
                else:  # Σ_l m_kl of the x-translation block (rotations excluded)
                    per = 3 if b.data.mass.shape[0] == 3 * b.data.n_nodes else 6
                    x_dofs = np.arange(b.data.n_nodes) * per
                    w = np.asarray(b.data.mass[x_dofs][:, x_dofs].sum(axis=1)).ravel()
            elif weights == "uniform":
                w = np.ones(b.data.n_nodes)
            else:
                problems.append(f"distributed load {name!r}: weights {weights!r} must "
                                f"be 'mass', 'uniform' or an array of {b.data.n_nodes}")
                continue
        else:
            w = np.asarray(weights, dtype=float).ravel()
            if w.shape != (b.data.n_nodes,) or not np.all(np.isfinite(w)):
                problems.append(f"distributed load {name!r}: weights must have "
                                f"{b.data.n_nodes} finite entries")
                continue
        if frame not in ("global", "body"):
            problems.append(f"distributed load {name!r}: frame must be 'global' or "
                            f"'body'")
        loads.append(DistributedLoad(name, body, load, b.load_integrals(w), frame))
    return loads


def sensor_target_problems(sensors, markers: dict, bodies: dict, joints, forces,
                           problems: list[str], drives=()) -> None:
    """Sensors against the model: unique names, targets (markers, bodies, joints, drives,
    forces, contacts) that exist and have the quantity; problems appended to
    ``problems``."""
    from ..contact.element import Contact

    seen: set[str] = set()
    joints = {j.name: j for j in joints}
    forces = {f.name: f for f in forces}
    drives = {d.name: d for d in drives}
    for sensor in sensors:
        who = f"sensor {sensor.name!r}"
        if sensor.name in seen:
            problems.append(f"duplicate sensor name {sensor.name!r}")
        seen.add(sensor.name)
        target, kind = sensor.target, sensor.kind
        if target is None or kind not in QUANTITIES:
            continue
        if kind == "marker" and target not in markers:
            problems.append(f"{who}: marker {target!r} not found "
                            f"({_marker_hint(target, markers, bodies)})")
        elif kind in ("node", "energy", "modal"):
            body = bodies.get(target)
            if body is None or target == "ground":
                problems.append(f"{who}: unknown body {target!r}")
            elif kind in ("node", "modal") and not isinstance(body, FlexibleBody):
                problems.append(f"{who}: body {target!r} is not flexible")
        elif kind in ("joint", "reaction"):
            spec = joints.get(target)
            if spec is None:
                problems.append(f"{who}: unknown joint {target!r}; joints: {_some(joints)}")
            elif kind == "joint":
                fits = (ROTATING_JOINTS if sensor.quantity.startswith("angle")
                        else SLIDING_JOINTS)
                if spec.kind not in fits:
                    problems.append(f"{who}: a {spec.kind} joint has no "
                                    f"{sensor.quantity} (joints with one: "
                                    f"{', '.join(fits)})")
        elif kind == "drive":
            _drive_sensor_problems(who, sensor.quantity, drives.get(target), target,
                                   problems)
        elif kind == "force":
            if target not in forces:
                problems.append(f"{who}: unknown force {target!r}")
            elif not hasattr(forces[target], "measured_value"):
                problems.append(f"{who}: force {target!r} "
                                f"({type(forces[target]).__name__}) has no single "
                                f"value to record")
            elif sensor.quantity in QUANTITIES[kind]:
                fits = tuple(getattr(forces[target], "sensor_quantities", ("value",)))
                if sensor.quantity not in fits:
                    problems.append(f"{who}: force {target!r} "
                                    f"({type(forces[target]).__name__}) records "
                                    f"{', '.join(fits)}, not {sensor.quantity!r}")
        elif kind == "contact" and not isinstance(forces.get(target), Contact):
            problems.append(f"{who}: unknown contact {target!r}")


def _drive_sensor_problems(who: str, quantity: str, drive, name: str,
                           problems: list[str]) -> None:
    """A drive sensor's drive: it exists, and records ``quantity`` (rotation drives a
    torque; translation drives and coordinate drives of x, y, z a force)."""
    if drive is None:
        problems.append(f"{who}: unknown drive {name!r}")
        return
    if drive.kind == "coordinate":
        coordinate = str(drive.coordinate).rpartition(".")[2]
        if coordinate not in FORCE_COORDINATES:
            problems.append(f"{who}: drive {name!r} prescribes coordinate "
                            f"{drive.coordinate!r}; drive sensors record rotation drives "
                            f"(torque), translation drives and coordinate drives of "
                            f"{', '.join(FORCE_COORDINATES)} (force)")
            return
    fits = DRIVE_QUANTITY.get(drive.kind)
    if fits is not None and quantity in QUANTITIES["drive"] and quantity != fits:
        problems.append(f"{who}: a {drive.kind} drive records a {fits}, not a "
                        f"{quantity} (drive {name!r})")


def initial_problems(initial, joints, problems: list[str]) -> None:
    """The initial conditions in joint coordinates against the ``joints``: the joint
    exists, has the quantity, and gets it once; problems appended to ``problems``."""
    joints = {j.name: j for j in joints}
    seen = set()
    for item in initial:
        who = f"initial condition of joint {item.joint!r}"
        spec = joints.get(item.joint)
        if spec is None:
            problems.append(f"{who}: unknown joint (joints: {sorted(joints)})")
            continue
        fits = ROTATING_JOINTS if item.quantity == "angle" else SLIDING_JOINTS
        if spec.kind not in fits:
            problems.append(f"{who}: a {spec.kind} joint has no {item.quantity} "
                            f"(joints with one: {', '.join(fits)})")
        if (item.joint, item.quantity) in seen:
            problems.append(f"{who}: its {item.quantity} is given twice")
        seen.add((item.joint, item.quantity))


def reference_problems(joints, drives, forces, markers: dict, bodies: dict,
                       problems: list[str]) -> None:
    """Names and references of the joints, drives and forces against the model: valid,
    unique names, markers that exist, two bodies per joint and drive, drive coordinates
    that are body coordinates; problems appended to ``problems``."""
    names: set[str] = set()
    for item in [*joints, *drives, *forces]:
        kind = {"JointSpec": "joint", "DriveSpec": "drive"}.get(type(item).__name__,
                                                                 "force")
        if (problem := _name_problem(kind, item.name)) is not None:
            problems.append(problem)
        if item.name in names:
            problems.append(f"duplicate name {item.name!r} among joints, drives and "
                            f"forces")
        names.add(item.name)
    for item in [*joints, *drives, *forces]:
        kind = {"JointSpec": "joint", "DriveSpec": "drive"}.get(
            type(item).__name__,
            str(getattr(item, "element_kind", type(item).__name__)).replace("_", " "))
        sides = ("a", "b", "") if kind == "contact" else ("i", "j", "")
        for side, attribute in zip(sides, ("marker_i", "marker_j", "marker"), strict=True):
            ref = getattr(item, attribute, None)
            if ref is not None and ref not in markers:
                label = f"marker {side}".rstrip()
                problems.append(f"{kind} {item.name!r}: {label} {ref!r} not found "
                                f"({_marker_hint(ref, markers, bodies)})")
    for joint in joints:
        mi, mj = markers.get(joint.marker_i), markers.get(joint.marker_j)
        if mi is not None and mj is not None and mi.body == mj.body:
            problems.append(f"joint {joint.name!r} connects two markers of body "
                            f"{mi.body!r}")
    for drive in drives:
        if drive.kind == "coordinate":
            body, _, coord = str(drive.coordinate).partition(".")
            b = bodies.get(body)
            if b is None or f"{body}.{coord}" not in b.coord_names:
                problems.append(f"drive {drive.name!r}: coordinate {drive.coordinate!r} "
                                f"is not a body coordinate (e.g. 'link.x', 'link.e1')")
        elif drive.marker_i is None or drive.marker_j is None:
            problems.append(f"drive {drive.name!r}: {drive.kind} drives need marker_i "
                            f"and marker_j")
        else:
            mi, mj = markers.get(drive.marker_i), markers.get(drive.marker_j)
            if mi is not None and mj is not None and mi.body == mj.body:
                problems.append(f"drive {drive.name!r} relates two markers of body "
                                f"{mi.body!r}")
    driven = {"torque": "rotation", "force": "translation"}  # what a servo's kind sets
    for servo in (f for f in forces if getattr(f, "element_kind", "") == "joint_servo"):
        pair = {servo.marker_i, servo.marker_j}
        for drive in drives:
            if drive.kind == driven.get(servo.kind) and {drive.marker_i,
                                                         drive.marker_j} == pair:
                problems.append(f"joint servo {servo.name!r} and drive {drive.name!r} "
                                f"both set the {drive.kind} of markers {sorted(pair)}: "
                                f"the drive prescribes it, so the servo's {servo.kind} "
                                f"would only go into the drive's reaction; keep one")
