"""Beams drawn as swept sections: the section outline of a beam body moved along its
deformed centreline (docs/post_processing.md, renders).

Each two-node line cell becomes a rectangular prism between its nodes. At a node the
section lies in the plane normal to the centreline's tangent there (the mean direction
of the node's elements): its z axis is the body's section z axis turned with the frame
and projected onto that plane, its y axis completes the right-handed set. So bending
tilts the section with the centreline; the twist of the section about the beam's axis
(a torsion mode) is not drawn, since the results carry the nodes' translations only.
"""

from __future__ import annotations

import numpy as np

#: Quads of one element's prism: corners 0–3 at its first node, 4–7 at its second,
#: both in the order (−y, −z), (+y, −z), (+y, +z), (−y, +z); four sides and two ends.
_PRISM_FACES = np.array([[0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7],
                         [0, 3, 2, 1], [4, 5, 6, 7]])
_CORNER_SIGNS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])


def prism_faces(n_elements: int) -> np.ndarray:
    """VTK polygon connectivity ([4, a, b, c, d] per quad) of ``n_elements`` prisms whose
    corners are numbered 8 per element as in :func:`swept_points`."""
    quads = (8 * np.arange(n_elements)[:, None, None] + _PRISM_FACES[None]).reshape(-1, 4)
    return np.hstack([np.full((len(quads), 1), 4), quads]).ravel()


def node_tangents(points: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """(N, 3) unit tangents of a line mesh at its nodes: the mean of the unit directions
    of the elements meeting there (a node without elements gets x)."""
    seg = points[lines[:, 1]] - points[lines[:, 0]]
    seg /= np.maximum(np.linalg.norm(seg, axis=1, keepdims=True), 1e-300)
    tangent = np.zeros_like(points)
    np.add.at(tangent, lines[:, 0], seg)
    np.add.at(tangent, lines[:, 1], seg)
    norm = np.linalg.norm(tangent, axis=1, keepdims=True)
    tangent = np.where(norm > 0, tangent / np.maximum(norm, 1e-300), [1.0, 0.0, 0.0])
    return tangent


def swept_points(points, lines, size, z_axis) -> np.ndarray:
    """(8 E, 3) corners of the prisms of the line cells ``lines`` (E, 2) at node positions
    ``points`` (N, 3) [m]: section ``size`` = (width along y, height along z) [m],
    ``z_axis`` the section's z axis in the same frame as ``points`` (turned with the body).
    """
    points = np.asarray(points, dtype=float)
    lines = np.asarray(lines, dtype=np.int64)
    tangent = node_tangents(points, lines)
    z_ref = np.asarray(z_axis, dtype=float)
    z = z_ref - (tangent @ z_ref)[:, None] * tangent
    norm = np.linalg.norm(z, axis=1, keepdims=True)
    # where the tangent runs along z_ref (a beam bent 90°), fall back on any normal
    fallback = np.cross(tangent, [1.0, 0.0, 0.0])
    fallback = np.where(np.linalg.norm(fallback, axis=1, keepdims=True) > 1e-6, fallback,
                        np.cross(tangent, [0.0, 1.0, 0.0]))
    z = np.where(norm > 1e-9, z, fallback)
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    y = np.cross(z, tangent)
    half = 0.5 * np.asarray(size, dtype=float)
    offsets = (_CORNER_SIGNS[None, :, 0:1] * half[0] * y[:, None, :]
               + _CORNER_SIGNS[None, :, 1:2] * half[1] * z[:, None, :])  # (N, 4, 3)
    corners = points[:, None, :] + offsets
    return np.concatenate([corners[lines[:, 0]], corners[lines[:, 1]]], axis=1).reshape(-1, 3)


def corner_nodes(lines) -> np.ndarray:
    """(8 E,) the node of each prism corner (to carry nodal colours to the corners)."""
    lines = np.asarray(lines, dtype=np.int64)
    return np.repeat(lines, 4, axis=1).reshape(-1)

