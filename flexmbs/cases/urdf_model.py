"""A flexmbs model from a URDF robot: :func:`load_urdf` returns a ModelBuilder whose
bodies, markers and joints carry the URDF's link and joint names (docs/urdf.md).

- Every link that a revolute, continuous or prismatic joint moves (and, with
  ``base="floating"``, the root link) becomes a body whose frame is the link frame:
  a rigid body with the link's inertial (mass, centre of mass ``com``, inertia about
  it rotated into the link axes), or a flexible body for the links named in
  ``flexible``.
- A link hanging on a fixed joint is merged into its parent's body (its inertial added
  to the parent's, as Pinocchio does), so massless tool and sensor frames cost nothing;
  with ``merge_fixed=False`` a fixed-joint link with mass stays a body of its own, held
  by a flexmbs ``fixed`` joint of the same name. A link with mass on a fixed joint below
  a flexible link is always such a body (a payload held at the nearest node).
- With ``base="fixed"`` the root link and the links fixed to it are the ground.
- Each URDF joint with a coordinate becomes a flexmbs joint of the same name
  (continuous → revolute) between marker ``<joint>`` on the parent's body and marker
  ``<joint>`` on the child's; both markers have their z axis along the URDF axis, and
  x_j = x_i at zero coordinate, so the flexmbs joint angle (x_j about z_i) and
  displacement (z_iᵀ(r_j − r_i)) are the URDF joint coordinate (ROS, Pinocchio and
  MuJoCo's). Every link also has a marker named after it at its frame, on the body it
  belongs to (``"ground.<root>"`` for a fixed base).
- Limits, mimic relations and the link → body map are kept in ``builder.urdf``
  (:class:`UrdfImport`), not enforced. Joint ``<dynamics>`` (damping, friction) is
  not modelled.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError, ModelWarning, ValidationError
from ..frame.rotations import g_global, quaternion_from_matrix
from ..model import ModelBuilder
from .urdf_robot import MOVING, Robot, read_urdf

BASES = ("fixed", "floating")


@dataclass(frozen=True, eq=False)
class UrdfImport:
    """What :func:`load_urdf` made of a URDF: the parsed ``robot``, the ``base`` kind,
    the flexmbs ``joints`` made from its moving joints (tree order) with their
    ``kinds`` ("revolute" or "prismatic"), every link's body and frame
    (``body_of``: link → (body name, T (4, 4) link frame in the body frame)), the
    ``flexible`` links, and the visuals that could not be drawn (``skipped_visuals``)."""

    robot: Robot
    base: str
    joints: tuple[str, ...]
    kinds: dict
    body_of: dict
    flexible: tuple[str, ...] = ()
    skipped_visuals: tuple[str, ...] = ()

    @property
    def limits(self) -> dict:
        """Joint name → :class:`~flexmbs.cases.urdf_robot.JointLimit` (or None) of every
        flexmbs joint made from the URDF."""
        by_name = {j.name: j for j in self.robot.joints}
        return {name: by_name[name].limit for name in self.joints}

    def state(self, system, positions=None, rates=None, *, base_pose=None,
              base_velocity=(0.0, 0.0, 0.0), base_angular_velocity=(0.0, 0.0, 0.0)):
        """(q, q̇) of ``system`` (built from this import's model) with the URDF joints at
        ``positions`` and ``rates`` (joint name → [rad or m] and [rad/s or m/s], or
        arrays in :attr:`joints` order; missing ones zero), by forward kinematics.

        Flexible links start undeformed (ξ = ξ̇ = 0); bodies added to the builder after
        the import keep their declared coordinates. For a floating base,
        ``base_pose`` (4, 4) places the root link frame (default: the global frame) and
        ``base_velocity`` [m/s] (of its origin) and ``base_angular_velocity`` [rad/s]
        (global components) move it.
        """
        positions = self._by_name(positions, "positions")
        rates = self._by_name(rates, "rates")
        frames = self.robot.link_frames(positions, rates)
        pose = np.eye(4) if base_pose is None else np.asarray(base_pose, dtype=float)
        rot, origin = pose[:3, :3], pose[:3, 3]
        v_b = np.asarray(base_velocity, dtype=float)
        w_b = np.asarray(base_angular_velocity, dtype=float)
        q, qd = system.q0.copy(), system.qd0.copy()
        for link, (body, _) in self.body_of.items():
            k = system.body_index(body)
            if k < 0 or body != link:
                continue  # ground, or a link merged into another link's body
            t_rel, v_rel, w_rel = frames[link]
            r = origin + rot @ t_rel[:3, 3]
            p = quaternion_from_matrix(rot @ t_rel[:3, :3])
            w = w_b + rot @ w_rel
            v = v_b + np.cross(w_b, r - origin) + rot @ v_rel
            sl = system.slices[k]
            q[sl.start:sl.start + 7] = np.concatenate([r, p])
            qd[sl.start:sl.start + 7] = np.concatenate([v, 0.25 * g_global(p).T @ w])
            q[sl.start + 7:sl.stop] = 0.0
            qd[sl.start + 7:sl.stop] = 0.0
        return q, qd

    def _by_name(self, values, what) -> dict:
        if values is None:
            return {}
        if isinstance(values, dict):
            unknown = sorted(set(values) - set(self.joints))
            if unknown:
                raise ValidationError(f"{what}: {unknown} are not joints of the URDF "
                                      f"model (joints: {list(self.joints)})")
            return {k: float(v) for k, v in values.items()}
        arr = np.asarray(values, dtype=float).ravel()
        if arr.shape != (len(self.joints),) or not np.all(np.isfinite(arr)):
            raise ValidationError(f"{what} must be {len(self.joints)} finite numbers (one "
                                  f"per joint: {list(self.joints)}), got shape {arr.shape}")
        return dict(zip(self.joints, arr.tolist(), strict=True))


@dataclass
class UrdfModelBuilder(ModelBuilder):
    """A :class:`~flexmbs.model.ModelBuilder` made by :func:`load_urdf`; ``urdf`` says
    how the URDF's links and joints map to the model (:class:`UrdfImport`)."""

    urdf: UrdfImport | None = field(default=None)


def _frame(rot, pos) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = rot, pos
    return out


def axis_frame(axis) -> np.ndarray:
    """A rotation (columns x, y, z) whose z column is the unit ``axis``: the identity
    for z, otherwise x ⟂ axis from the coordinate axis least aligned with it."""
    a = np.asarray(axis, dtype=float)
    if np.allclose(a, (0.0, 0.0, 1.0)):
        return np.eye(3)
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    x = helper - (helper @ a) * a
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(a, x), a])


def _combined(parts):
    """(mass, com, inertia about com) of [(Inertial, T link in body)] (mass 0: none)."""
    parts = [(i, t) for i, t in parts if i is not None]
    mass = sum(i.mass for i, _ in parts)
    if not mass > 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    coms = [t[:3, :3] @ i.com + t[:3, 3] for i, t in parts]
    com = sum(i.mass * c for (i, _), c in zip(parts, coms, strict=True)) / mass
    inertia = np.zeros((3, 3))
    for (i, t), c in zip(parts, coms, strict=True):
        d = c - com
        inertia += t[:3, :3] @ i.inertia @ t[:3, :3].T + i.mass * (d @ d * np.eye(3)
                                                                   - np.outer(d, d))
    return mass, com, inertia


def beam_along_link(robot: Robot, link: str, spec: dict, stiffening: bool = False):
    """The ModalData of a built-in beam (a ``beam`` table of docs/case_files.md) along
    ``link``: from the link frame origin (the parent joint) towards the origin of its
    child joint, unless ``spec`` gives ``axis`` [link frame] and ``length`` [m];
    ``up`` defaults to the link axis (z, then x, then y) least parallel to the beam.
    Clamped at the root (flexmbs.cases.beam_body)."""
    from .beam_body import beam_modal_data

    if not isinstance(spec, dict):
        raise ValidationError(f"flexible link {link!r}: give a ModalData or a beam table "
                              f"{{section = ..., modes = ..., ...}}, got {spec!r}")
    spec = dict(spec)
    children = [j for j in robot.joints if j.parent == link]
    if "length" not in spec or "axis" not in spec:
        if len(children) != 1:
            raise ValidationError(
                f"flexible link {link!r} has {len(children)} child joints "
                f"({[j.name for j in children]}); give the beam's axis and length")
        offset = children[0].origin[:3, 3]
        if not np.linalg.norm(offset) > 0:
            raise ValidationError(f"flexible link {link!r}: its child joint "
                                  f"{children[0].name!r} sits at the link origin; give the "
                                  f"beam's axis and length")
        spec.setdefault("axis", (offset / np.linalg.norm(offset)).tolist())
        spec.setdefault("length", float(np.linalg.norm(offset)))
    try:
        axis = np.asarray(spec["axis"], dtype=float)
        norm = float(np.linalg.norm(axis)) if axis.shape == (3,) else 0.0
    except (TypeError, ValueError):
        norm = 0.0
    if "up" not in spec and np.isfinite(norm) and norm > 0:  # else the beam names axis
        spec["up"] = next(e for e in (np.eye(3)[2], np.eye(3)[0], np.eye(3)[1])
                          if abs(e @ axis) < 0.9 * norm).tolist()
    try:
        return beam_modal_data(spec, stiffening=stiffening)
    except ValidationError as exc:
        raise ValidationError(f"flexible link {link!r}: {exc}") from None


def _owners(robot: Robot, base: str, flexible, merge_fixed: bool):
    """link → (body, T link in body), and the fixed joints kept as flexmbs joints."""
    owner = {robot.root: ("ground" if base == "fixed" else robot.root, np.eye(4))}
    kept = []
    for joint in robot.joints:
        body, frame = owner[joint.parent]
        child = robot.links[joint.child]
        own = (joint.moving or joint.child in flexible
               or (child.inertial is not None
                   and (not merge_fixed or (body in flexible and body != "ground"))))
        if own:
            owner[joint.child] = (joint.child, np.eye(4))
            if not joint.moving:
                kept.append(joint.name)
        else:
            owner[joint.child] = (body, frame @ joint.origin)
    return owner, kept


def load_urdf(path, gravity=(0.0, 0.0, -9.81), flexible=None, base: str = "fixed", *,
              merge_fixed: bool = True, visuals: bool = True,
              package_dirs=()) -> UrdfModelBuilder:
    """A ModelBuilder of the URDF robot in ``path`` (module docstring; docs/urdf.md).

    Parameters
    ----------
    gravity : 3-vector
        [m/s²] in the global frame, which is the root link's frame at the start.
    flexible : dict, optional
        Link name → a ModalData (node coordinates in the link frame; the link's inertial
        is replaced by the modal data's) or a beam table (keys of docs/case_files.md's
        ``beam``; built along the link, :func:`beam_along_link`).
    base : "fixed" or "floating"
        The root link fixed as the ground, or free (7 coordinates).
    merge_fixed : bool
        Merge links on fixed joints into their parent's body (default), or keep those
        with mass as bodies held by fixed joints.
    visuals : bool
        Draw the bodies with the links' visual meshes and primitives (best effort).
    package_dirs : list of folders
        Where ``package://`` mesh names are looked up first.
    """
    from ..modal.data import ModalData

    robot = read_urdf(path)
    if base not in BASES:
        raise ValidationError(f"base must be 'fixed' or 'floating', got {base!r}")
    flexible = dict(flexible or {})
    unknown = sorted(set(flexible) - set(robot.links))
    if unknown:
        raise ValidationError(f"flexible: {unknown} are not links of {robot.path.name} "
                              f"(links: {list(robot.links)})")
    if base == "fixed" and robot.root in flexible:
        raise ValidationError(f"flexible: the root link {robot.root!r} is the ground with "
                              f"base='fixed'; use base='floating' to make it flexible")
    owner, kept = _owners(robot, base, flexible, merge_fixed)
    builder = UrdfModelBuilder(gravity=gravity)
    frames = robot.link_frames()
    bodies = {}
    for link, (body, frame) in owner.items():
        bodies.setdefault(body, []).append((robot.links[link], frame))
    skipped: list[str] = []
    for body, parts in bodies.items():
        if body == "ground":
            continue
        pose = frames[body][0]
        where = dict(position=pose[:3, 3], orientation=pose[:3, :3])
        if body in flexible:
            data = flexible[body]
            if not isinstance(data, ModalData):
                data = beam_along_link(robot, body, data)
            builder.add_flexible_body(body, data, **where)
            continue
        mass, com, inertia = _combined([(link.inertial, t) for link, t in parts])
        if not mass > 0:
            joint = robot.parent_joint(body)
            on = f"on joint {joint.name!r}" if joint else "as the floating base"
            raise ModelError(f"{robot.path.name}: link {body!r} {on} has no mass (no "
                             f"<inertial>, and none merged from fixed links): give it an "
                             f"inertial, or fix it to a parent (massless links are merged "
                             f"only across fixed joints)")
        shape = None
        if visuals:
            from .urdf_visuals import body_shape

            shape = body_shape([(link, t) for link, t in parts], robot.path, package_dirs,
                               skipped)
        builder.add_rigid_body(body, mass, inertia, com=com, shape=shape, **where)
    _markers_and_joints(builder, robot, owner, kept)
    if skipped:
        warnings.warn(f"{robot.path.name}: {len(skipped)} visual(s) not drawn: "
                      + "; ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else ""),
                      stacklevel=2)
    mimics = [j for j in robot.moving_joints if j.mimic is not None]
    if mimics:
        said = "; ".join(f"{j.name!r} = {j.mimic[1]:g} × {j.mimic[0]!r} {j.mimic[2]:+g}"
                         for j in mimics)
        warnings.warn(f"{robot.path.name}: mimic joints are not coupled, so the model has "
                      f"{len(mimics)} degree(s) of freedom more than the robot ({said}); "
                      f"flexmbs has no coupler between joints: where the mimicked joint's "
                      f"motion is prescribed, drive the mimic joint with the same profile "
                      f"scaled (docs/urdf.md)", ModelWarning, stacklevel=2)
    moving = tuple(j.name for j in robot.moving_joints)
    builder.urdf = UrdfImport(robot, base, moving,
                              {j.name: MOVING[j.kind] for j in robot.moving_joints},
                              owner, tuple(flexible), tuple(skipped))
    return builder


def _markers_and_joints(builder, robot: Robot, owner, kept) -> None:
    """Link markers, joint markers and the joints (module docstring)."""
    names: dict[str, str] = {}

    def marker(body, name, frame, what):
        key = f"{body}.{name}"
        if key in names:
            raise ModelError(f"{robot.path.name}: marker {key!r} would be both "
                             f"{names[key]} and {what}; rename one of them in the URDF")
        names[key] = what
        builder.add_marker(body, name, frame[:3, 3], frame[:3, :3])
        return key

    for link, (body, frame) in owner.items():
        marker(body, link, frame, f"the frame of link {link!r}")
    for joint in robot.joints:
        if not (joint.moving or joint.name in kept):
            continue
        parent_body, parent_frame = owner[joint.parent]
        rot = axis_frame(joint.axis) if joint.moving else np.eye(3)
        at_parent = parent_frame @ joint.origin @ _frame(rot, np.zeros(3))
        mi = marker(parent_body, joint.name, at_parent, f"joint {joint.name!r} (parent)")
        mj = marker(joint.child, joint.name, _frame(rot, np.zeros(3)),
                    f"joint {joint.name!r} (child)")
        builder.add_joint(joint.name, MOVING.get(joint.kind, "fixed"), mi, mj)
