"""What the viewer draws of a flexible body's mesh: its outer surface as triangles, its
line cells and its lone vertices, over the nodes that surface uses.

A solid mesh is drawn by its boundary faces only (a face that belongs to one cell), so
the page carries the displayed surface's nodes and mode-shape rows, never the interior
nodes. Quadratic cells are drawn by their corner nodes (meshio's node order: corners
first), quads and other polygons split into triangles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Faces of each volume cell type by local corner index (meshio/VTK node order).
_VOLUME_FACES = {
    "tetra": ((0, 1, 2), (0, 1, 3), (1, 2, 3), (0, 2, 3)),
    "hexahedron": ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6),
                   (3, 0, 4, 7)),
    "wedge": ((0, 1, 2), (3, 4, 5), (0, 1, 4, 3), (1, 2, 5, 4), (2, 0, 3, 5)),
    "pyramid": ((0, 1, 2, 3), (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)),
}
#: Corner count of each cell type, by its linear family (quadratic types map to these).
_FAMILY = {"tetra": "tetra", "tetra10": "tetra", "hexahedron": "hexahedron",
           "hexahedron20": "hexahedron", "hexahedron27": "hexahedron", "wedge": "wedge",
           "wedge15": "wedge", "pyramid": "pyramid", "pyramid13": "pyramid",
           "triangle": "triangle", "triangle6": "triangle", "triangle7": "triangle",
           "quad": "quad", "quad8": "quad", "quad9": "quad", "line": "line",
           "line3": "line", "vertex": "vertex"}
_CORNERS = {"tetra": 4, "hexahedron": 8, "wedge": 6, "pyramid": 5, "triangle": 3,
            "quad": 4, "line": 2, "vertex": 1}


@dataclass(frozen=True)
class DisplayMesh:
    """The drawn part of a mesh: ``nodes`` (indices into the body's nodes, sorted) and,
    numbered over those, ``triangles`` (T, 3), ``lines`` (L, 2) and ``points`` (P,)."""

    nodes: np.ndarray
    triangles: np.ndarray
    lines: np.ndarray
    points: np.ndarray


def _polygons_to_triangles(faces: np.ndarray) -> np.ndarray:
    """(F, k) polygons → (F (k − 2), 3) triangles fanned from each polygon's first node."""
    k = faces.shape[1]
    if k == 3:
        return faces
    return np.concatenate([faces[:, [0, j, j + 1]] for j in range(1, k - 1)], axis=0)


def _boundary(faces: np.ndarray) -> np.ndarray:
    """The faces (F, k) that occur once (the same node set in no other face)."""
    if len(faces) == 0:
        return faces
    key = np.sort(faces, axis=1)
    _, index, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
    return faces[np.sort(index[counts == 1])]


def display_mesh(cells: dict, n_nodes: int) -> DisplayMesh:
    """The surface, lines and lone points of a mesh of ``n_nodes`` nodes with meshio-style
    ``cells`` ({type: (n_cells, nodes per cell)}); a mesh without cells is drawn as its
    nodes. Cell types it does not know are left out."""
    by_arity: dict[int, list[np.ndarray]] = {3: [], 4: []}
    surface: list[np.ndarray] = []
    lines, points = [], []
    for ctype, conn in cells.items():
        family = _FAMILY.get(str(ctype))
        conn = np.asarray(conn, dtype=np.int64)
        if family is None or conn.ndim != 2 or len(conn) == 0:
            continue
        corners = conn[:, :_CORNERS[family]]
        if family in _VOLUME_FACES:
            for face in _VOLUME_FACES[family]:
                by_arity[len(face)].append(corners[:, list(face)])
        elif family in ("triangle", "quad"):
            surface.append(_polygons_to_triangles(corners))
        elif family == "line":
            lines.append(corners)
        else:
            points.append(corners[:, 0])
    for faces in by_arity.values():
        if faces:
            surface.append(_polygons_to_triangles(_boundary(np.concatenate(faces))))
    tri = np.concatenate(surface) if surface else np.zeros((0, 3), np.int64)
    seg = np.concatenate(lines) if lines else np.zeros((0, 2), np.int64)
    pts = np.concatenate(points) if points else np.zeros(0, np.int64)
    if not cells:
        pts = np.arange(n_nodes)
    used = np.unique(np.concatenate([tri.ravel(), seg.ravel(), pts]))
    used = used[(used >= 0) & (used < n_nodes)]
    renumber = np.full(n_nodes, -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    keep_tri = np.all((tri >= 0) & (tri < n_nodes), axis=1)
    keep_seg = np.all((seg >= 0) & (seg < n_nodes), axis=1)
    keep_pts = (pts >= 0) & (pts < n_nodes)
    return DisplayMesh(used, renumber[tri[keep_tri]], renumber[seg[keep_seg]],
                       renumber[pts[keep_pts]])
