"""The drawing of a body made of URDF links: their ``<visual>`` meshes and primitives,
placed in the body frame and joined into one :class:`~flexmbs.model.shapes.SurfaceShape`
(docs/urdf.md, renders).

Best effort: a mesh that cannot be found or read is left out and reported (the import
goes on); a body with nothing drawable keeps no shape and is drawn as its
inertia-equivalent box. Mesh files are read with trimesh (installed with yourdfpy; it
reads COLLADA .dae, STL, OBJ, PLY), else with meshio. ``package://NAME/rest`` names are
looked up in ``package_dirs`` (as ``DIR/NAME/rest`` and ``DIR/rest``), then relative to
the URDF file and its parent folders.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.shapes import SurfaceShape

#: Facets of the drawn cylinders and spheres (drawing only).
SECTIONS = 24


def resolve_mesh(filename: str, urdf_path: Path, package_dirs=()) -> Path | None:
    """The file a URDF mesh ``filename`` names, or None when none is found."""
    name = filename.removeprefix("file://")
    candidates = []
    if name.startswith("package://"):
        rest = name.removeprefix("package://")
        package, _, inner = rest.partition("/")
        for folder in package_dirs:
            candidates += [Path(folder) / package / inner, Path(folder) / inner]
        # the URDF's own folders: .../package/urdf/robot.urdf with inner below package
        for folder in urdf_path.resolve().parents:
            candidates += [folder / inner, folder / rest]
            if folder.name == package:
                candidates.append(folder / inner)
    else:
        path = Path(name)
        candidates += [path] if path.is_absolute() else [urdf_path.parent / path]
    return next((c for c in candidates if c.is_file()), None)


def _read_mesh(path: Path):
    """(points (N, 3), triangles (M, 3)) of a mesh file in its own units."""
    try:
        import trimesh
    except ImportError:
        trimesh = None
    if trimesh is not None:
        mesh = trimesh.load(str(path), force="mesh")
        if len(getattr(mesh, "faces", ())):
            return np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces)
    from ..model.shapes import read_shape

    shape = read_shape(path, what=f"URDF mesh {path.name!r}")
    return shape.points, shape.triangles


def _box(size):
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5)
                        for z in (-0.5, 0.5)]) * np.asarray(size, dtype=float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4),
             (1, 5, 7, 3)]
    tris = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    return corners, np.array(tris)


def _cylinder(radius, length):
    ang = np.linspace(0.0, 2 * np.pi, SECTIONS, endpoint=False)
    ring = np.column_stack([radius * np.cos(ang), radius * np.sin(ang)])
    points = np.vstack([np.column_stack([ring, np.full(SECTIONS, -length / 2)]),
                        np.column_stack([ring, np.full(SECTIONS, length / 2)]),
                        [[0, 0, -length / 2], [0, 0, length / 2]]])
    tris = []
    for k in range(SECTIONS):
        n = (k + 1) % SECTIONS
        tris += [(k, n, SECTIONS + n), (k, SECTIONS + n, SECTIONS + k),
                 (2 * SECTIONS, n, k), (2 * SECTIONS + 1, SECTIONS + k, SECTIONS + n)]
    return points, np.array(tris)


def _sphere(radius):
    lat = np.linspace(0.0, np.pi, SECTIONS // 2 + 1)[1:-1]
    lon = np.linspace(0.0, 2 * np.pi, SECTIONS, endpoint=False)
    rings = [radius * np.column_stack([np.sin(a) * np.cos(lon), np.sin(a) * np.sin(lon),
                                       np.full(SECTIONS, np.cos(a))]) for a in lat]
    points = np.vstack([*rings, [[0, 0, radius], [0, 0, -radius]]])
    top, bottom, tris = len(points) - 2, len(points) - 1, []
    for r in range(len(rings)):
        for k in range(SECTIONS):
            n = (k + 1) % SECTIONS
            a, b = r * SECTIONS + k, r * SECTIONS + n
            if r == 0:
                tris.append((top, a, b))
            if r == len(rings) - 1:
                tris.append((bottom, b, a))
            else:
                tris += [(a, a + SECTIONS, b + SECTIONS), (a, b + SECTIONS, b)]
    return points, np.array(tris)


def visual_geometry(visual, urdf_path: Path, package_dirs=()):
    """(points (N, 3) [m] in the link frame, triangles (M, 3)) of one visual, or a
    string saying why it cannot be drawn."""
    if visual.kind == "mesh":
        path = resolve_mesh(visual.filename, urdf_path, package_dirs)
        if path is None:
            return f"mesh {visual.filename!r} not found"
        try:
            points, tris = _read_mesh(path)
        except Exception as exc:  # any reader failure: leave the mesh out
            return f"mesh {str(path)!r} could not be read ({exc})"
        points = points * visual.scale
    elif visual.kind == "box":
        points, tris = _box(visual.size)
    elif visual.kind == "cylinder":
        points, tris = _cylinder(*visual.size)
    else:
        points, tris = _sphere(visual.size[0])
    rot, shift = visual.origin[:3, :3], visual.origin[:3, 3]
    return points @ rot.T + shift, np.asarray(tris, dtype=np.int64)


def body_shape(parts, urdf_path: Path, package_dirs=(), skipped=None):
    """One SurfaceShape of the visuals of ``parts`` = [(link, T (4, 4) of the link frame
    in the body frame)], or None when nothing can be drawn; each visual left out is
    appended to ``skipped`` as "link: reason"."""
    points, tris, count = [], [], 0
    for link, frame in parts:
        for visual in link.visuals:
            out = visual_geometry(visual, urdf_path, package_dirs)
            if isinstance(out, str):
                if skipped is not None:
                    skipped.append(f"{link.name}: {out}")
                continue
            p, t = out
            points.append(p @ frame[:3, :3].T + frame[:3, 3])
            tris.append(t + count)
            count += len(p)
    if not points:
        return None
    return SurfaceShape(np.vstack(points), np.vstack(tris), source=str(urdf_path))
