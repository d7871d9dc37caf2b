"""What a render draws of a result besides the flexible meshes, and how far the model
reaches over the whole run (docs/post_processing.md, "Rigid bodies" and "Framing").

A rigid body is drawn from what defines it, in its body frame, and moved by its pose at
every frame:

- its links: tubes from its centre of mass to each of its markers (the points where its
  joints, springs and loads attach), so a point mass on a massless rod shows the rod
  from the pivot to the mass;
- its centre of mass: a sphere sized to the scene, so that a point mass stays visible;
- its inertia ellipsoid (:func:`inertia_ellipsoid`) only where it is comparable in size
  to the scene (longest diameter from 0.1 to 3 times the scene size,
  flexmbs.frame.ellipsoid):
  the 1e-9 kg m² inertia of a point mass gets none;
- with a drawing geometry (``shape_points``), that surface alone.

A nonlinear beam's node bodies (``model["beams"]`` of the results) are drawn as one
tube through the nodes. Every size is a fraction of the scene size: the largest extent
of the model over the whole run (all outputs, evenly thinned to at most
:data:`EXTENT_FRAMES`, and the drawn ones), which the camera and the ground grid follow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..frame.ellipsoid import (
    ELLIPSOID_MIN_SEMI_AXIS,
    comparable,
    inertia_ellipsoid,
)
from .frames import deformed, flexible_bodies, pose

#: Sizes as fractions of the scene size: tubes of rigid links, of beams drawn without
#: a section and of nonlinear beams (radius); centre-of-mass spheres (radius; smaller
#: inside a drawn inertia ellipsoid, which shows the mass already) and joint spheres
#: (radius). The inertia ellipsoid's own sizes are in flexmbs.frame.ellipsoid.
LINK_RADIUS = 0.009
COM_RADIUS = 0.025
COM_IN_ELLIPSOID_RADIUS = 0.012
JOINT_RADIUS = 0.018
#: Points on the unit sphere (the 26 directions of a cube's faces, edges and corners)
#: whose images bound a drawn ellipsoid for the framing.
_SPHERE_POINTS = np.array([[x, y, z] for x in (-1, 0, 1) for y in (-1, 0, 1)
                           for z in (-1, 0, 1) if (x, y, z) != (0, 0, 0)], dtype=float)
_SPHERE_POINTS /= np.linalg.norm(_SPHERE_POINTS, axis=1)[:, None]
#: Sides of the polygon that draws a tube.
TUBE_SIDES = 12
#: At most this many output times (evenly spread, plus the drawn ones) set the extent.
EXTENT_FRAMES = 200

# 13 directions whose extreme points bound a point set's projection along any view
_DIRECTIONS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, -1, 0], [1, 0, 1],
                        [1, 0, -1], [0, 1, 1], [0, 1, -1], [1, 1, 1], [1, 1, -1],
                        [1, -1, 1], [-1, 1, 1]], dtype=float)


@dataclass(frozen=True)
class RigidPart:
    """A rigid body as drawn: name, coordinate start, centre of mass (3,) and markers
    (k, 3) in the body frame [m], its inertia ellipsoid (:func:`inertia_ellipsoid`, true
    size) or None without a positive mass, its drawing geometry (points (n, 3) [m], triangles
    (m, 3)) or None."""

    name: str
    start: int
    com: np.ndarray
    markers: np.ndarray
    ellipsoid: tuple | None
    shape: tuple | None

    def skeleton(self) -> np.ndarray:
        """(k, 3) body-frame points that the camera must keep in view [m]: the centre of
        mass, the markers and the corners of the geometry's bounding box."""
        pts = [self.com[None, :], self.markers]
        if self.shape is not None:
            lo, hi = self.shape[0].min(axis=0), self.shape[0].max(axis=0)
            pts.append(np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                                 for z in (lo[2], hi[2])]))
        return np.vstack(pts)


def beam_chains(result) -> dict:
    """{beam name: [coordinate starts of its node bodies, root to tip]} of the nonlinear
    beams the results describe (``model["beams"]``; none in older files)."""
    out = {}
    for name, nodes in getattr(result, "model", {}).get("beams", {}).items():
        starts = [int(result.bodies[n]["start"]) for n in nodes if n in result.bodies]
        if len(starts) >= 2:
            out[name] = starts
    return out


def rigid_parts(result) -> list[RigidPart]:
    """The rigid bodies of a result as drawn (nonlinear beams' node bodies excepted: they
    are drawn as their beam, :func:`beam_chains`)."""
    model = getattr(result, "model", {})
    markers = model.get("markers", {})
    chained = {n for nodes in model.get("beams", {}).values() for n in nodes}
    parts = []
    for name, info in result.bodies.items():
        if "phi" in info or info.get("n_coords", 0) < 7 or name in chained:
            continue
        pts = [np.asarray(m["position"], float) for m in markers.values()
               if m["body"] == name]
        pts = (np.unique(np.round(np.vstack(pts), 12), axis=0) if pts
               else np.zeros((0, 3)))
        mass = float(np.asarray(info.get("mass", 0.0)))
        com = np.asarray(info.get("com", np.zeros(3)), dtype=float)
        ellipsoid = (inertia_ellipsoid(mass, info["inertia"], com)
                     if "inertia" in info and mass > 0 else None)
        shape = ((np.asarray(info["shape_points"], dtype=float),
                  np.asarray(info["shape_triangles"], dtype=np.int64))
                 if "shape_points" in info else None)
        parts.append(RigidPart(name, int(info["start"]), com, pts, ellipsoid, shape))
    return parts


def joint_markers(result) -> list:
    """[(joint name, described marker i)] of the joints (drawn at marker i)."""
    model = getattr(result, "model", {})
    markers = model.get("markers", {})
    return [(j["name"], markers[j["i"]]) for j in model.get("joints", [])
            if j["i"] in markers]


def marker_position(result, marker: dict, k: int, scale: float = 1.0) -> np.ndarray:
    """Global position [m] of a described marker at output k; on a flexible body its
    modal motion is magnified by the display ``scale`` like the drawn mesh."""
    info = result.bodies.get(marker["body"])
    local = np.asarray(marker["position"], dtype=float)
    if info is None or info.get("n_coords", 0) < 7:  # ground
        return local
    r, a = pose(result, int(info["start"]), k)
    if "phi" in marker and "n_modes" in info:
        start = int(info["start"]) + 7
        local = local + scale * (np.asarray(marker["phi"])
                                 @ result.q[k, start:start + info["n_modes"]])
    return r + a @ local


def ellipsoid_drawn(part: RigidPart, size: float) -> bool:
    """Whether ``part``'s inertia ellipsoid is drawn in a scene of ``size`` [m]."""
    if part.ellipsoid is None or part.shape is not None:
        return False
    return comparable(part.ellipsoid[2], size)


def ellipsoid_points(ellipsoid, min_semi_axis: float) -> np.ndarray:
    """(26, 3) body-frame points [m] on an inertia ellipsoid with semi-axes at least
    ``min_semi_axis``: the images of the unit sphere's points along the cube's faces,
    edges and corners, which bound it for the framing."""
    centre, axes, semi = ellipsoid
    return centre + (_SPHERE_POINTS * np.maximum(semi, min_semi_axis)) @ axes.T


def extremes(points: np.ndarray) -> np.ndarray:
    """The points of a set that are extreme along 13 directions (the axes, the face and
    the space diagonals): a few that bound its projection along any view."""
    points = np.asarray(points, dtype=float)
    if len(points) <= 2 * len(_DIRECTIONS):
        return points
    proj = points @ _DIRECTIONS.T
    return points[np.unique(np.concatenate([proj.argmin(axis=0), proj.argmax(axis=0)]))]


def hull_points(points: np.ndarray) -> np.ndarray:
    """The vertices of the convex hull of ``points`` (n, 3): every point that can be
    extreme in a view (a perspective projection keeps the hull's vertices outermost);
    all the points when there are few or no hull can be made."""
    from scipy.spatial import ConvexHull, QhullError

    points = np.asarray(points, dtype=float)
    if len(points) <= 64:
        return points
    try:  # "QJ": joggled input, so flat and collinear clouds give hulls as well
        return points[ConvexHull(points, qhull_options="QJ").vertices]
    except (QhullError, ValueError):
        return points


def extent_indices(n_outputs: int, drawn=(), limit: int = EXTENT_FRAMES) -> np.ndarray:
    """Sorted output indices that set the extent: at most ``limit`` evenly spread over
    the run (first and last included) and the ``drawn`` ones."""
    spread = np.round(np.linspace(0, n_outputs - 1, min(limit, n_outputs))).astype(int)
    return np.unique(np.concatenate([spread, np.asarray(list(drawn), dtype=int)]))


@dataclass(frozen=True)
class Extent:
    """How far the model reaches over the run: ``bounds`` (xmin, xmax, ymin, ymax, zmin,
    zmax) padded by 5 % of ``size``, ``cloud`` (n, 3) the points the camera frames,
    ``size`` the largest extent of the model's points [m] (what drawn sizes are fractions
    of) and ``ellipsoids`` the rigid bodies whose inertia ellipsoid is drawn."""

    bounds: list
    cloud: np.ndarray
    size: float
    ellipsoids: frozenset


def model_extent(result, scale: float = 1.0, drawn=(), parts=None) -> Extent:
    """The :class:`Extent` of ``result`` over the whole run, flexible nodes deformed with
    the display ``scale``: flexible nodes, rigid bodies' skeletons
    (:meth:`RigidPart.skeleton`), nonlinear beams' nodes and joints, then the spheres'
    and drawn ellipsoids' reach at the sizes that extent gives."""
    parts = rigid_parts(result) if parts is None else parts
    bodies = flexible_bodies(result)
    chains = [s for starts in beam_chains(result).values() for s in starts]
    joints = joint_markers(result)
    skeletons = [(p, p.skeleton()) for p in parts]
    centres, poses = [], []  # sphere centres (CoM, joints); poses for the ellipsoids
    pts = [np.zeros((0, 3))]
    for k in extent_indices(len(result.t), drawn):
        for body in bodies:
            pts.append(extremes(deformed(result, body, k, scale)[0]))
        for part, local in skeletons:
            r, a = pose(result, part.start, k)
            pts.append(r + local @ a.T)
            poses.append((part.start, r, a))
            if part.shape is None:
                centres.append(r + a @ part.com)
        for start in chains:
            pts.append(pose(result, start, k)[0][None, :])
        for _, marker in joints:
            centres.append(marker_position(result, marker, k, scale))
    allpts = np.vstack([*pts, np.reshape(centres, (-1, 3))])
    if len(allpts) == 0:
        allpts = np.zeros((1, 3))
    size = max(float(np.max(np.ptp(allpts, axis=0))), 1e-3)
    with_ellipsoid = frozenset(p.name for p in parts if ellipsoid_drawn(p, size))
    reach = [allpts]
    if centres:  # the spheres' surfaces along the axes
        offsets = np.vstack([np.eye(3), -np.eye(3)]) * COM_RADIUS * size
        reach.append((np.asarray(centres)[:, None, :] + offsets[None]).reshape(-1, 3))
    surfaces = {p.start: ellipsoid_points(p.ellipsoid, ELLIPSOID_MIN_SEMI_AXIS * size)
                for p in parts if p.name in with_ellipsoid}
    reach += [r + surfaces[start] @ a.T for start, r, a in poses if start in surfaces]
    cloud = hull_points(np.vstack(reach))
    lo, hi = cloud.min(axis=0), cloud.max(axis=0)
    pad = 0.05 * size
    bounds = [v for pair in zip(lo - pad, hi + pad, strict=True) for v in pair]
    return Extent(bounds, cloud, size, with_ellipsoid)


def tube_outline(radius: float, sides: int = TUBE_SIDES) -> tuple[np.ndarray, tuple]:
    """(section vertices (sides, 2) [m], vertices per loop) of a tube of ``radius`` [m],
    for :func:`~flexmbs.post.sections.swept_points`."""
    angle = 2 * np.pi * np.arange(sides) / sides
    return radius * np.column_stack([np.cos(angle), np.sin(angle)]), (sides,)


def across(direction) -> np.ndarray:
    """The world axis least aligned with ``direction``: a section's z axis for a line
    along it (any normal serves a round tube)."""
    d = np.asarray(direction, dtype=float)
    return np.eye(3)[int(np.argmin(np.abs(d)))]


def _keep_local(mesh):
    mesh.field_data["local"] = np.asarray(mesh.points, dtype=float)
    return mesh


def link_mesh(pv, part: RigidPart, radius: float):
    """Tubes of ``radius`` [m] from the centre of mass to each marker farther than the
    radius from it (body frame; vertices kept in ``field_data["local"]``), or None."""
    tubes = []
    for p in part.markers:
        length = float(np.linalg.norm(p - part.com))
        if length > radius:
            tubes.append(pv.Cylinder(center=0.5 * (p + part.com), direction=p - part.com,
                                     radius=radius, height=length, resolution=TUBE_SIDES))
    if not tubes:
        return None
    return _keep_local(tubes[0].append_polydata(*tubes[1:]) if len(tubes) > 1 else tubes[0])


def sphere_mesh(pv, centre, radius: float):
    """A sphere of ``radius`` [m] at ``centre`` (vertices kept in ``field_data["local"]``)."""
    return _keep_local(pv.Sphere(radius=radius, center=tuple(np.asarray(centre, float)),
                                 theta_resolution=24, phi_resolution=16))


def ellipsoid_mesh(pv, ellipsoid, min_semi_axis: float):
    """An inertia ellipsoid with semi-axes at least ``min_semi_axis`` [m] along its
    principal axes, body frame (vertices kept in ``field_data["local"]``)."""
    centre, axes, semi = ellipsoid
    mesh = pv.Sphere(radius=1.0, theta_resolution=32, phi_resolution=20)
    mesh.points = ((np.asarray(mesh.points, dtype=float) * np.maximum(semi, min_semi_axis))
                   @ axes.T + centre)
    return _keep_local(mesh)


def shape_mesh(pv, part: RigidPart):
    """The body's drawing geometry (PolyData, body frame, vertices kept in
    ``field_data["local"]``)."""
    points, tris = part.shape
    return _keep_local(pv.PolyData(points, np.hstack([np.full((len(tris), 1), 3),
                                                      tris]).ravel()))
