"""Read a URDF robot description (through yourdfpy, the optional extra ``urdf``) into a
plain, checked description: links with their inertials and visuals, joints with their
frames, axes and limits, the kinematic tree and its forward kinematics
(docs/urdf.md).

Frames follow the URDF: a joint's frame sits at ``origin`` (xyz [m], roll-pitch-yaw
[rad] about fixed x, y, z) in its parent link's frame; the child link's frame is the
joint frame at zero joint coordinate, turned about (revolute, continuous) or slid along
(prismatic) the joint ``axis`` (a unit vector in the joint frame, (1, 0, 0) when not
given) by the joint coordinate q [rad or m]. A link's inertial gives its mass [kg], the
centre of mass (``origin`` xyz in the link frame) and the inertia tensor about the
centre of mass [kg m²] in the axes of the inertial ``origin`` (its rpy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ModelError, ReadError, problem_report

#: URDF joint types this reader takes, and the flexmbs joint of each moving one.
MOVING = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic"}
SUPPORTED = (*MOVING, "fixed")

#: The message when the optional dependency is missing.
MISSING_YOURDFPY = ("reading URDF files needs yourdfpy, the optional extra 'urdf': "
                    "pip install 'flexmbs[urdf]' (or pip install yourdfpy)")


@dataclass(frozen=True)
class Inertial:
    """A link's mass [kg], centre of mass ``com`` (3,) [m] and inertia (3, 3) about the
    centre of mass [kg m²], both in the link frame (rotated from the inertial's axes)."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray


@dataclass(frozen=True)
class Visual:
    """A drawing of a link: ``origin`` (4, 4) in the link frame, ``kind`` "mesh", "box",
    "cylinder" or "sphere", the mesh ``filename`` as written in the URDF, ``scale`` (3,)
    of the mesh, and ``size`` (box: 3 edge lengths; cylinder: radius and length;
    sphere: radius) [m]."""

    origin: np.ndarray
    kind: str
    filename: str | None = None
    scale: np.ndarray = field(default_factory=lambda: np.ones(3))
    size: tuple = ()


@dataclass(frozen=True)
class Link:
    """A URDF link: its name, inertial (None: no inertial, or zero mass) and visuals."""

    name: str
    inertial: Inertial | None
    visuals: tuple[Visual, ...] = ()


@dataclass(frozen=True)
class JointLimit:
    """A joint's limits as the URDF gives them (None where absent): ``lower`` and
    ``upper`` [rad or m], ``effort`` [N m or N], ``velocity`` [rad/s or m/s]."""

    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None


@dataclass(frozen=True)
class Joint:
    """A URDF joint: ``kind`` (revolute, continuous, prismatic, fixed), ``parent`` and
    ``child`` links, ``origin`` (4, 4) of the joint frame in the parent link frame,
    the unit ``axis`` (3,) in the joint frame, ``limit`` and ``mimic`` ((joint,
    multiplier, offset) or None; read, not enforced)."""

    name: str
    kind: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    limit: JointLimit | None = None
    mimic: tuple | None = None

    @property
    def moving(self) -> bool:
        """True for the joints with a coordinate (revolute, continuous, prismatic)."""
        return self.kind in MOVING


@dataclass(frozen=True, eq=False)
class Robot:
    """A checked URDF tree: ``links`` (name → Link, file order), ``joints`` in
    depth-first order from the ``root`` link (children in file order; the order of
    Pinocchio's joints), and the ``path`` it was read from."""

    name: str
    path: Path
    links: dict
    joints: tuple[Joint, ...]
    root: str

    @property
    def moving_joints(self) -> tuple[Joint, ...]:
        """The joints with a coordinate, in tree order."""
        return tuple(j for j in self.joints if j.moving)

    def parent_joint(self, link: str) -> Joint | None:
        """The joint whose child is ``link`` (None for the root)."""
        return next((j for j in self.joints if j.child == link), None)

    def link_frames(self, positions=None, rates=None):
        """Forward kinematics: link name → (T (4, 4) link frame in the root frame,
        v (3,) velocity of its origin [m/s], ω (3,) angular velocity [rad/s]), both in
        root-frame components, for the root at rest.

        ``positions`` / ``rates``: joint name → q [rad or m] and q̇ [rad/s or m/s]
        (missing joints at zero).
        """
        positions = positions or {}
        rates = rates or {}
        out = {self.root: (np.eye(4), np.zeros(3), np.zeros(3))}
        for joint in self.joints:  # depth-first: the parent is always known
            t_p, v_p, w_p = out[joint.parent]
            t_j = t_p @ joint.origin
            q, qd = float(positions.get(joint.name, 0.0)), float(rates.get(joint.name, 0.0))
            axis = t_j[:3, :3] @ joint.axis
            motion = np.eye(4)
            w_c, v_c = w_p.copy(), v_p + np.cross(w_p, t_j[:3, 3] - t_p[:3, 3])
            if joint.kind in ("revolute", "continuous"):
                motion[:3, :3] = rotation_about(joint.axis, q)
                w_c = w_c + axis * qd
            elif joint.kind == "prismatic":
                motion[:3, 3] = joint.axis * q
                v_c = v_c + np.cross(w_p, axis * q) + axis * qd
            out[joint.child] = (t_j @ motion, v_c, w_c)
        return out


def rotation_about(axis, angle: float) -> np.ndarray:
    """Rotation matrix by ``angle`` [rad] about the unit vector ``axis`` (Rodrigues)."""
    a = np.asarray(axis, dtype=float)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def _frame(origin) -> np.ndarray:
    return np.eye(4) if origin is None else np.asarray(origin, dtype=float)


def _import_yourdfpy():
    try:
        import yourdfpy
    except ImportError as exc:
        raise ImportError(MISSING_YOURDFPY) from exc
    return yourdfpy


def _check_xml(path: Path) -> bytes:
    """The bytes of ``path``; ReadError for what is not a readable URDF (yourdfpy would
    try to recover broken XML)."""
    import xml.etree.ElementTree as ET

    if not path.is_file():
        raise ReadError(f"URDF file {str(path)!r} not found")
    if path.suffix.lower() == ".xacro":
        raise ReadError(f"{path.name} is a xacro file; expand it to URDF first "
                        f"(xacro {path.name} > robot.urdf)")
    try:
        data = path.read_bytes()
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ReadError(f"{path.name} is not valid XML: {exc}") from None
    except OSError as exc:
        raise ReadError(f"URDF file {str(path)!r} cannot be read ({exc})") from None
    if root.tag != "robot":
        raise ReadError(f"{path.name}: the root element is <{root.tag}>, expected <robot>")
    return data


def _inertial(link, problems) -> Inertial | None:
    inertial = link.inertial
    if inertial is None or inertial.mass is None or float(inertial.mass) == 0.0:
        return None
    mass = float(inertial.mass)
    frame = _frame(inertial.origin)
    inertia = (np.zeros((3, 3)) if inertial.inertia is None
               else np.asarray(inertial.inertia, dtype=float))
    if not (np.isfinite(mass) and mass > 0):
        problems.append(f"link {link.name!r}: inertial mass must be positive, got {mass!r}")
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        problems.append(f"link {link.name!r}: inertia must be 6 finite numbers")
        inertia = np.zeros((3, 3))
    rot = frame[:3, :3]
    return Inertial(mass, frame[:3, 3].copy(), rot @ inertia @ rot.T)


def _visual(visual) -> Visual | None:
    geometry = visual.geometry
    origin = _frame(visual.origin)
    if geometry is None:
        return None
    if geometry.mesh is not None:
        scale = geometry.mesh.scale
        scale = np.ones(3) if scale is None else np.broadcast_to(
            np.asarray(scale, dtype=float), (3,)).copy()
        return Visual(origin, "mesh", filename=str(geometry.mesh.filename), scale=scale)
    if geometry.box is not None:
        return Visual(origin, "box", size=tuple(float(s) for s in geometry.box.size))
    if geometry.cylinder is not None:
        return Visual(origin, "cylinder", size=(float(geometry.cylinder.radius),
                                                float(geometry.cylinder.length)))
    if geometry.sphere is not None:
        return Visual(origin, "sphere", size=(float(geometry.sphere.radius),))
    return None


def _joint(joint, problems) -> Joint:
    who = f"joint {joint.name!r}"
    if joint.type not in SUPPORTED:
        problems.append(f"{who}: type {joint.type!r} is not supported (supported: "
                        f"{', '.join(SUPPORTED)})")
    axis = np.array([1.0, 0.0, 0.0]) if joint.axis is None else np.asarray(joint.axis,
                                                                           dtype=float)
    norm = float(np.linalg.norm(axis)) if np.all(np.isfinite(axis)) else 0.0
    if joint.type in MOVING and not norm > 0:
        problems.append(f"{who}: axis must be a non-zero vector, got {axis.tolist()}")
    axis = axis / norm if norm > 0 else np.array([1.0, 0.0, 0.0])
    limit = None
    if joint.limit is not None:
        lim = joint.limit
        limit = JointLimit(*(None if v is None else float(v)
                             for v in (lim.lower, lim.upper, lim.effort, lim.velocity)))
    mimic = None
    if joint.mimic is not None:
        mimic = (joint.mimic.joint, float(joint.mimic.multiplier or 1.0),
                 float(joint.mimic.offset or 0.0))
    return Joint(joint.name, joint.type, joint.parent, joint.child, _frame(joint.origin),
                 axis, limit, mimic)


def _tree(name, links, joints, problems):
    """Root link and the joints in depth-first order; problems for a broken tree."""
    children = {}
    parent_of = {}
    for j in joints:
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                problems.append(f"joint {j.name!r}: {role} link {link!r} is not a link of "
                                f"the robot")
        if j.child in parent_of:
            problems.append(f"link {j.child!r} is the child of two joints "
                            f"({parent_of[j.child]!r} and {j.name!r}); URDF is a tree")
        parent_of[j.child] = j.name
        children.setdefault(j.parent, []).append(j)
    roots = [link for link in links if link not in parent_of]
    if len(roots) != 1:
        problems.append(f"robot {name!r} must have exactly one root link (a link that is "
                        f"no joint's child); found {roots or 'none (a loop)'}")
        return (roots[0] if roots else next(iter(links), "")), tuple(joints)
    ordered, seen = [], {roots[0]}
    stack = list(reversed(children.get(roots[0], [])))
    while stack:  # depth-first, children in file order
        j = stack.pop()
        if j.child in seen:
            continue
        seen.add(j.child)
        ordered.append(j)
        stack.extend(reversed(children.get(j.child, [])))
    if len(ordered) != len(joints):
        lost = sorted({j.name for j in joints} - {j.name for j in ordered})
        problems.append(f"robot {name!r}: joints not reachable from the root link "
                        f"{roots[0]!r}: {lost}")
    return roots[0], tuple(ordered)


def read_urdf(path) -> Robot:
    """Read and check the URDF file ``path``; ReadError for an unreadable file,
    ModelError listing every problem (unsupported joint types, broken tree, bad
    inertials, duplicate names)."""
    import io

    from . import urdf_cache

    path = Path(path)
    data = _check_xml(path)
    entry = urdf_cache.key(data)  # (None: yourdfpy is not installed)
    remembered = None if entry is None else urdf_cache.recall(entry, path)
    if remembered is not None:  # read before from these bytes (docs/urdf.md)
        return remembered
    yourdfpy = _import_yourdfpy()
    try:  # (the bytes checked and hashed, not the file again)
        urdf = yourdfpy.URDF.load(io.BytesIO(data), mesh_dir=str(path.parent),
                                  build_scene_graph=False, load_meshes=False,
                                  load_collision_meshes=False)
    except Exception as exc:  # yourdfpy raises many kinds for malformed descriptions
        raise ReadError(f"{path.name}: could not read the URDF: {exc}") from None
    problems: list[str] = []
    links = {}
    for link in urdf.robot.links:
        if link.name in links:
            problems.append(f"duplicate link name {link.name!r}")
        visuals = tuple(v for v in (_visual(v) for v in link.visuals) if v is not None)
        links[link.name] = Link(link.name, _inertial(link, problems), visuals)
    joints = []
    for joint in urdf.robot.joints:
        if any(j.name == joint.name for j in joints):
            problems.append(f"duplicate joint name {joint.name!r}")
        joints.append(_joint(joint, problems))
    names = {j.name for j in joints}
    for j in joints:
        if j.mimic is not None and j.mimic[0] not in names:
            problems.append(f"joint {j.name!r}: mimics joint {j.mimic[0]!r}, which the "
                            f"robot does not have")
    if not links:
        problems.append("the robot has no links")
    root, ordered = _tree(urdf.robot.name, links, joints, problems)
    if problems:
        raise ModelError(f"{path.name}: " + problem_report(problems, "URDF"))
    robot = Robot(str(urdf.robot.name), path, links, ordered, root)
    if entry is not None:
        urdf_cache.remember(entry, robot)
    return robot
