"""Beams drawn as swept sections: the section outline of a beam body moved along its
deformed centreline (docs/post_processing.md, renders).

Each two-node line cell becomes a prism of the section's true outline between its nodes
(the polygon the results carry, docs/beam_sections.md; the bounding rectangle for result
files written before outlines were stored). At a node the
section lies in the plane normal to the centreline's tangent there (the mean direction
of the node's elements): its z axis is the body's section z axis turned with the frame
and projected onto that plane, its y axis completes the right-handed set. So bending
tilts the section with the centreline; the twist of the section about the beam's axis
(a torsion mode) is not drawn, since the results carry the nodes' translations only.
"""

from __future__ import annotations

import numpy as np

_CORNER_SIGNS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])


def section_points(size=None, polygon=None, loops=None) -> tuple[np.ndarray, tuple]:
    """((k, 2) section vertices (y, z) [m], vertices per loop) to sweep: the true outline
    ``polygon`` (loops concatenated, ``loops`` their lengths, outer first, then holes),
    or a rectangle of ``size`` (width along y, height along z) with corners (−y, −z),
    (+y, −z), (+y, +z), (−y, +z)."""
    if polygon is not None:
        pts = np.asarray(polygon, dtype=float).reshape(-1, 2)
        counts = tuple(int(n) for n in (loops if loops is not None else [len(pts)]))
        return pts, counts
    return _CORNER_SIGNS * 0.5 * np.asarray(size, dtype=float), (4,)


def _convex(loop: np.ndarray) -> bool:
    edge = np.roll(loop, -1, axis=0) - loop
    cross = edge[:, 0] * np.roll(edge, -1, axis=0)[:, 1] - edge[:, 1] * np.roll(edge, -1,
                                                                              axis=0)[:, 0]
    return bool(np.all(cross >= 0) or np.all(cross <= 0))


def _ear_triangles(loop: np.ndarray) -> list[list[int]]:
    """Triangles (local vertex indices) of a simple polygon by ear clipping."""
    idx = list(range(len(loop)))
    area = 0.5 * np.sum(loop[:, 0] * np.roll(loop[:, 1], -1) - np.roll(loop[:, 0], -1)
                        * loop[:, 1])
    sign = 1.0 if area >= 0 else -1.0

    def cross(a, b, c):
        return sign * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))

    out = []
    while len(idx) > 3:
        for n in range(len(idx)):
            i, j, k = idx[n - 1], idx[n], idx[(n + 1) % len(idx)]
            a, b, c = loop[i], loop[j], loop[k]
            if cross(a, b, c) <= 0:
                continue  # reflex corner
            if any(cross(a, b, loop[m]) >= 0 and cross(b, c, loop[m]) >= 0
                   and cross(c, a, loop[m]) >= 0 for m in idx if m not in (i, j, k)):
                continue
            out.append([i, j, k])
            idx.pop(n)
            break
        else:  # degenerate: fan the rest
            out += [[idx[0], idx[m], idx[m + 1]] for m in range(1, len(idx) - 1)]
            return out
    return [*out, idx]


def prism_faces(n_elements: int, loops=(4,), points=None) -> np.ndarray:
    """VTK polygon connectivity ([n, a, b, ...] per face) of ``n_elements`` swept sections
    whose corners are numbered 2 k per element as in :func:`swept_points` (k section
    vertices: ``loops`` vertices per loop, outer first, then holes): the side quads of
    every loop and the end caps (a convex outline as one polygon, a concave one — I, C —
    in triangles from its section ``points``, a hollow one with a hole of as many vertices
    as the outer loop — box, tube — as the quads of the ring between them)."""
    loops = tuple(int(n) for n in loops)
    k = sum(loops)
    starts = np.concatenate([[0], np.cumsum(loops)[:-1]]).astype(int)
    faces: list[list[int]] = []
    for o, m in zip(starts, loops, strict=True):
        for i in range(m):
            j = (i + 1) % m
            faces.append([o + i, o + j, k + o + j, k + o + i])
    if len(loops) == 1:
        m = loops[0]
        loop = (np.asarray(points, dtype=float)[:m] if points is not None else None)
        if loop is None or _convex(loop):
            faces += [[0, *range(m - 1, 0, -1)], [k + i for i in range(m)]]
        else:
            for tri in _ear_triangles(loop):
                faces += [tri[::-1], [k + i for i in tri]]
    elif len(loops) == 2 and loops[0] == loops[1]:
        m, o = loops
        for i in range(m):
            j = (i + 1) % m
            faces += [[i, o + i, o + j, j], [k + i, k + j, k + o + j, k + o + i]]
    out = []
    for e in range(int(n_elements)):
        for face in faces:
            out += [len(face), *(2 * k * e + np.asarray(face)).tolist()]
    return np.asarray(out, dtype=np.int64)


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


def swept_points(points, lines, section, z_axis) -> np.ndarray:
    """(2 k E, 3) corners of the swept sections of the line cells ``lines`` (E, 2) at node
    positions ``points`` (N, 3) [m]: ``section`` the (k, 2) section vertices (y, z) [m]
    (:func:`section_points`), or a size (width along y, height along z) [m] for a
    rectangle; ``z_axis`` the section's z axis in the same frame as ``points`` (turned
    with the body). Per element: its first node's k corners, then its second node's.
    """
    points = np.asarray(points, dtype=float)
    lines = np.asarray(lines, dtype=np.int64)
    section = np.asarray(section, dtype=float)
    if section.shape == (2,):
        section = section_points(size=section)[0]
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
    offsets = (section[None, :, 0:1] * y[:, None, :]
               + section[None, :, 1:2] * z[:, None, :])  # (N, k, 3)
    corners = points[:, None, :] + offsets
    k = len(section)
    return np.concatenate([corners[lines[:, 0]], corners[lines[:, 1]]],
                          axis=1).reshape(-1, 3) if k else np.zeros((0, 3))


def corner_nodes(lines, k: int = 4) -> np.ndarray:
    """(2 k E,) the node of each swept corner (to carry nodal colours to the corners)."""
    lines = np.asarray(lines, dtype=np.int64)
    return np.repeat(lines, k, axis=1).reshape(-1)
