"""Drawing geometry of a rigid body: a triangulated surface in the body frame, read from
an STL, OBJ, PLY or other mesh file through meshio (docs/post_processing.md, rigid-body
geometry).

The surface only draws the body (renders, animations, the ParaView export); its mass and
inertia stay those given for the body. Points are in the body frame [m] (the frame whose
origin is the body's reference point, ``com`` away from the centre of mass), after the
file's ``scale`` (for example 0.001 for a part drawn in millimetres), ``rotation`` and
``offset`` are applied: x_body = offset + R (scale x_file).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ValidationError

#: Surface cell types read from a file; quads and polygons are split into triangles.
_SURFACE_CELLS = ("triangle", "quad", "polygon")


@dataclass(frozen=True)
class SurfaceShape:
    """A triangulated surface: ``points`` (N, 3) [m, body frame], ``triangles`` (M, 3)
    point indices, and the ``source`` it was read from (for messages)."""

    points: np.ndarray
    triangles: np.ndarray
    source: str = ""

    def __post_init__(self) -> None:
        points = np.asarray(self.points, dtype=float)
        tris = np.asarray(self.triangles)
        what = f"shape {self.source!r}" if self.source else "shape"
        if points.ndim != 2 or points.shape[1] != 3 or len(points) < 3:
            raise ValidationError(f"{what}: points must be (N >= 3, 3), got shape "
                                  f"{points.shape}")
        if not np.all(np.isfinite(points)):
            raise ValidationError(f"{what}: points contain NaN or infinite values")
        if tris.ndim != 2 or tris.shape[1] != 3 or len(tris) == 0:
            raise ValidationError(f"{what}: triangles must be (M >= 1, 3), got shape "
                                  f"{tris.shape}")
        if not np.issubdtype(tris.dtype, np.integer):
            raise ValidationError(f"{what}: triangles must be integer point indices")
        if tris.min() < 0 or tris.max() >= len(points):
            raise ValidationError(f"{what}: triangle point index {int(tris.max())} out of "
                                  f"range for {len(points)} points")
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "triangles", tris.astype(np.int64))

    @property
    def bounds(self) -> np.ndarray:
        """(2, 3): smallest and largest body-frame coordinates [m]."""
        return np.vstack([self.points.min(axis=0), self.points.max(axis=0)])


def _triangulate(cells) -> np.ndarray:
    """Fan-triangulate meshio cell blocks of surface types (triangles kept as they are)."""
    out = []
    for block in cells:
        if block.type not in _SURFACE_CELLS:
            continue
        conn = np.asarray(block.data)
        if conn.ndim != 2 or conn.shape[1] < 3:
            continue
        for j in range(1, conn.shape[1] - 1):  # fan from the first corner
            out.append(conn[:, [0, j, j + 1]])
    return np.vstack(out) if out else np.zeros((0, 3), dtype=np.int64)


def read_shape(path, *, scale: float = 1.0, offset=(0.0, 0.0, 0.0), rotation=None,
               what: str = "geometry") -> SurfaceShape:
    """Read a surface mesh file (STL, OBJ, PLY, VTK, VTU, ... anything meshio reads) as
    a :class:`SurfaceShape` in the body frame: x_body = offset + R (scale x_file).

    ``scale`` [m per file unit] > 0; ``offset`` [m]; ``rotation``: 3x3 rotation (None:
    identity). Errors name ``what`` (the case field) and the file.
    """
    import meshio

    path = Path(path)
    try:
        factor = float(scale)
    except (TypeError, ValueError):
        factor = float("nan")
    if not (np.isfinite(factor) and factor > 0):
        raise ValidationError(f"{what}: scale must be a positive number, got {scale!r}")
    shift = np.asarray(offset, dtype=float)
    if shift.shape != (3,) or not np.all(np.isfinite(shift)):
        raise ValidationError(f"{what}: offset must be 3 finite numbers [m], got {offset!r}")
    rot = np.eye(3) if rotation is None else np.asarray(rotation, dtype=float)
    if rot.shape != (3, 3) or not np.allclose(rot.T @ rot, np.eye(3), atol=1e-9) \
            or np.linalg.det(rot) < 0:
        raise ValidationError(f"{what}: rotation must be a proper 3x3 rotation matrix")
    if not path.is_file():
        raise ValidationError(f"{what}: file {str(path)!r} not found")
    try:
        with np.errstate(all="ignore"):  # meshio's STL size check overflows a uint32
            mesh = meshio.read(path)
    except Exception as exc:  # meshio raises many kinds for unreadable files
        raise ValidationError(f"{what}: could not read {str(path)!r} as a mesh: "
                              f"{exc}") from None
    tris = _triangulate(mesh.cells)
    if len(tris) == 0:
        kinds = sorted({b.type for b in mesh.cells}) or ["none"]
        raise ValidationError(f"{what}: {str(path)!r} has no surface cells (triangles, "
                              f"quads or polygons); it has {', '.join(kinds)}")
    points = np.asarray(mesh.points, dtype=float)
    if points.shape[1] == 2:
        points = np.column_stack([points, np.zeros(len(points))])
    used = np.unique(tris)  # drop points no triangle uses (a file's stray vertices)
    index = np.full(len(points), -1, dtype=np.int64)
    index[used] = np.arange(len(used))
    points = shift + (factor * points[used]) @ rot.T
    return SurfaceShape(points, index[tris], source=str(path))
