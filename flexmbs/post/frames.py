"""Geometry of a result at an output time, from the results file alone (no model code):
deformed flexible-body meshes, body poses, marker and joint positions.

A node k of flexible body b is at ``R + A(p)(ū0ₖ + s Φₖ ξ)`` (docs/theory_ffrf.md §2) with the
deformation magnified by the display scale s (s = 1: the computed motion). Elastic
displacements are reported unscaled, in global axes: ``A Φₖ ξ`` [m].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError
from ..frame.rotations import rotation_matrix


@dataclass(frozen=True)
class FlexibleGeometry:
    """What the result stores about one flexible body: name, coordinate offset, nodes
    (N, 3) [m, body frame], shapes Φ (3N, n), cells {type: connectivity}."""

    name: str
    start: int
    nodes: np.ndarray
    phi: np.ndarray
    cells: dict

    @property
    def n_modes(self) -> int:
        return self.phi.shape[1]


def flexible_bodies(result) -> list[FlexibleGeometry]:
    """The flexible bodies of a result, in coordinate order."""
    out = []
    for name, info in result.bodies.items():
        if "phi" in info:
            out.append(FlexibleGeometry(name, int(info["start"]), np.asarray(info["nodes"]),
                                        np.asarray(info["phi"]), dict(info.get("cells", {}))))
    return out


def frame_index(result, time: float) -> int:
    """Index of the output time nearest to ``time`` [s] (error if outside the run)."""
    t = np.asarray(result.t)
    if not (t[0] - 1e-12 <= time <= t[-1] + 1e-12):
        raise ValidationError(f"time {time:g} s is outside the results ({t[0]:g} to "
                              f"{t[-1]:g} s)")
    return int(np.argmin(np.abs(t - time)))


def pose(result, start: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(R (3,), A (3, 3)) of the body whose coordinates begin at ``start``, output k."""
    q = result.q[k, start:start + 7]
    return q[:3], rotation_matrix(q[3:7])


def modal_coordinates(result, body: FlexibleGeometry, k: int) -> np.ndarray:
    return result.q[k, body.start + 7:body.start + 7 + body.n_modes]


def deformed(result, body: FlexibleGeometry, k: int, scale: float = 1.0):
    """(points (N, 3) global [m] with the deformation × ``scale``, elastic displacement
    A Φ ξ (N, 3) global [m], unscaled) at output index ``k``."""
    r, a = pose(result, body.start, k)
    local = (body.phi @ modal_coordinates(result, body, k)).reshape(-1, 3)
    points = r + (body.nodes + scale * local) @ a.T
    return points, local @ a.T


def modal_contributions(result, body: FlexibleGeometry, k: int) -> np.ndarray:
    """(n, N, 3): mode j's share A Φⱼ ξⱼ of the elastic displacement, global axes [m]."""
    _, a = pose(result, body.start, k)
    xi = modal_coordinates(result, body, k)
    shapes = body.phi.T.reshape(body.n_modes, -1, 3)
    return np.einsum("jna,ba,j->jnb", shapes, a, xi)


def max_displacement(result, bodies=None) -> float:
    """Largest elastic displacement magnitude [m] over all outputs and flexible bodies
    (for the display scale and a fixed colour range)."""
    best = 0.0
    for body in bodies if bodies is not None else flexible_bodies(result):
        xi = result.q[:, body.start + 7:body.start + 7 + body.n_modes]
        disp = (xi @ body.phi.T).reshape(len(xi), -1, 3)
        best = max(best, float(np.max(np.linalg.norm(disp, axis=2), initial=0.0)))
    return best


def body_size(result) -> float:
    """A length [m] for the scene: the span of all body origins and flexible nodes."""
    pts = [result.q[:, info["start"]:info["start"] + 3]
           for info in result.bodies.values() if info.get("n_coords", 0) >= 7]
    for body in flexible_bodies(result):
        pts.append(deformed(result, body, 0)[0])
    if not pts:
        return 1.0
    allpts = np.vstack(pts)
    span = float(np.max(np.ptp(allpts, axis=0)))
    return span if span > 0 else 1.0


#: An explicit display scale may magnify the largest elastic displacement to at most this
#: many scene sizes (the default makes it 0.1): beyond, the bodies leave the picture and
#: the renderer's depth range, and VTK fails instead of drawing.
MAX_MAGNIFIED_SIZES = 100.0


def check_scale(scale, displacement: float, size: float) -> float:
    """``scale`` as a float, after refusing (ValidationError naming the value) one that is
    not a positive finite number or that would magnify ``displacement`` [m] beyond
    :data:`MAX_MAGNIFIED_SIZES` times the scene ``size`` [m]."""
    try:
        value = float(scale)
    except (TypeError, ValueError):
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise ValidationError(f"scale must be a positive number, got {scale!r}")
    if displacement > 0 and value * displacement > MAX_MAGNIFIED_SIZES * size:
        limit = MAX_MAGNIFIED_SIZES * size / displacement
        raise ValidationError(
            f"scale {value:g} magnifies the largest elastic displacement "
            f"({displacement:.3g} m) to {value * displacement:.3g} m, "
            f"{value * displacement / size:.3g} times the scene size ({size:.3g} m); give "
            f"at most {limit:.3g} (or omit --scale: the default makes it 10 % of the scene)")
    return value


def default_scale(result, fraction: float = 0.1) -> float:
    """A magnification making the largest elastic displacement ``fraction`` of the scene
    size (1 when that would shrink it, or when nothing deforms); rounded to 1, 2 or 5
    times a power of ten so that the label reads well."""
    d = max_displacement(result)
    if d <= 0:
        return 1.0
    raw = fraction * body_size(result) / d * (1.0 + 1e-9)  # 99.99999999999996 is 100
    if raw <= 1:
        return 1.0
    exp = np.floor(np.log10(raw))
    mant = raw / 10**exp
    nice = 1 if mant < 2 else 2 if mant < 5 else 5
    return float(nice * 10**exp)
