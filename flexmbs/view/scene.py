"""The scene of a result for the interactive viewer (docs/post_processing.md), from the
results file alone: what each body draws in its body frame, and per output frame only
the bodies' coordinates.

The page computes a flexible body's drawn node k at every frame as
``R + A(p) (ū0ₖ + s Φₖ ξ)`` (docs/theory_ffrf.md §2) from the frame's coordinates
(R [m], Euler parameters p, modal coordinates ξ) and the display scale s, which the
reader changes on the page; the elastic displacement's magnitude |Φₖ ξ| [mm] colours it.
So the page carries, per flexible body, the displayed surface's nodes and mode-shape
rows once (``4 B × N_shown × (3 + 3 n_modes)``), and per frame the coordinates of the
drawn bodies (``4 B × Σ (7 + n_modes)``): its size grows with the frames times the
coordinates, never with the FE nodes per frame. The one field stored per frame and node
is the von Mises stress of bodies with stress modes (``2 B × frames × N_shown``), since
it is not linear in ξ.

Rigid bodies are drawn with their geometry file when they have one, else as rods joining
their frame origin, markers and centre of mass, with a sphere at the centre of mass and
the translucent inertia ellipsoid where the renders draw one (:func:`_ellipsoid`);
joints as red spheres at their first marker; beams as their section swept along the
deformed centreline (a square of 1.5 % of the scene for a beam without section data).
"""

from __future__ import annotations

import base64

import numpy as np

from ..errors import ValidationError
from ..frame.rotations import rotation_matrix
from .geometry import display_mesh

#: Fields the page colours flexible bodies by, and their units.
FIELDS = {"displacement": "mm", "stress": "MPa", "none": ""}
#: At most this many frames unless asked (evenly spread over the outputs): enough for a
#: smooth playback, and it bounds the stress field's per-frame share of the page.
MAX_FRAMES = 1000
#: Playback speeds offered (simulated seconds per second of playback).
SPEEDS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
          20.0, 50.0, 100.0)


def b64(array, dtype) -> str:
    """Base64 of ``array``'s values as little-endian ``dtype`` (C order)."""
    data = np.ascontiguousarray(np.asarray(array), dtype=np.dtype(dtype).newbyteorder("<"))
    return base64.b64encode(data.tobytes()).decode("ascii")


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def nice_length(value: float) -> float:
    """The round length (1, 2 or 5 × 10ᵏ m) nearest ``value`` [m] from below."""
    exponent = np.floor(np.log10(value))
    base = value / 10**exponent
    return float(max(m for m in (1.0, 2.0, 5.0) if m <= base + 1e-12) * 10**exponent)


def _frames(n_outputs: int, frames) -> np.ndarray:
    if frames is None:
        frames = min(n_outputs, MAX_FRAMES)
    elif isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or frames < 1:
        raise ValidationError(f"frames must be an integer >= 1, got {frames!r}")
    return np.unique(np.round(np.linspace(0, n_outputs - 1, min(int(frames), n_outputs)))
                     .astype(int))


def _flexible(result) -> list[tuple[str, dict]]:
    return [(name, info) for name, info in result.bodies.items() if "phi" in info]


def _rigid(result) -> list[tuple[str, dict]]:
    return [(name, info) for name, info in result.bodies.items()
            if "phi" not in info and int(info.get("n_coords", 0)) >= 7]


def _modal(result, info) -> np.ndarray:
    start = int(info["start"]) + 7
    return np.asarray(result.q)[:, start:start + int(info["n_modes"])]


def default_scale(result) -> float:
    """The display scale of the renders (flexmbs.post.frames.default_scale, restated
    here because the results stage shows this view and post reads results): the largest
    elastic displacement over the run made 10 % of the bodies' span, rounded to 1, 2 or
    5 × 10ᵏ, at least 1."""
    q = np.asarray(result.q)
    largest, pts = 0.0, []
    for _, info in result.bodies.items():
        if int(info.get("n_coords", 0)) >= 7:
            pts.append(q[:, int(info["start"]):int(info["start"]) + 3])
    for _, info in _flexible(result):
        phi = np.asarray(info["phi"], dtype=float)
        disp = (_modal(result, info) @ phi.T).reshape(len(q), -1, 3)
        largest = max(largest, float(np.max(np.linalg.norm(disp, axis=2), initial=0.0)))
        start = int(info["start"])
        a = rotation_matrix(q[0, start + 3:start + 7])
        pts.append(q[0, start:start + 3] + (np.asarray(info["nodes"]) + disp[0]) @ a.T)
    span = float(np.max(np.ptp(np.vstack(pts), axis=0))) if pts else 1.0
    span = span if span > 0 else 1.0
    if largest <= 0:
        return 1.0
    raw = 0.1 * span / largest * (1.0 + 1e-9)
    if raw <= 1:
        return 1.0
    exp = np.floor(np.log10(raw))
    mant = raw / 10**exp
    return float((1 if mant < 2 else 2 if mant < 5 else 5) * 10**exp)


def _section(info, size: float):
    """The swept section of a beam body: (y, z) vertices [m], vertices per loop, the
    section's z axis in the body frame and whether it is the body's own (else a square of
    1.5 % of the scene about the body's z axis); None for a body of other cells."""
    cells = info.get("cells", {})
    if set(cells) - {"line", "line3"} or not cells:
        return None
    if "section_size" in info:
        if "section_polygon" in info:
            pts = np.asarray(info["section_polygon"], dtype=float).reshape(-1, 2)
            loops = [int(n) for n in np.asarray(info.get("section_loops", [len(pts)]))]
        else:
            w, h = np.asarray(info["section_size"], dtype=float)
            pts = 0.5 * np.array([[-w, -h], [w, -h], [w, h], [-w, h]])
            loops = [4]
        z_axis = np.asarray(info["section_axes"], dtype=float)[1]
        return {"points": pts.tolist(), "loops": loops, "z": z_axis.tolist(), "own": True}
    half = 0.0075 * size
    pts = half * np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    return {"points": pts.tolist(), "loops": [4], "z": [0.0, 0.0, 1.0], "own": False}


def _stress(result, info, frames, shown) -> np.ndarray | None:
    """Von Mises stress [MPa] (frames, N_shown) of a body's stress modes, or None."""
    from ..modal.stress import stress_field_name, von_mises

    fields = info.get("fields", {})
    name = stress_field_name(fields)
    if name is None:
        return None
    field = np.asarray(fields[name], dtype=float)[shown]  # (N_shown, c, n)
    values = np.einsum("ncj,tj->tnc", field, _modal(result, info)[frames])
    return 1e-6 * von_mises(name, values)


def _rigid_drawing(result, name, info) -> dict:
    """A rigid body's drawing in its body frame: its points (frame origin, markers,
    centre of mass) in order along its main line, its centre of mass, its geometry."""
    markers = getattr(result, "model", {}).get("markers", {})
    pts = [np.zeros(3)] + [np.asarray(m["position"], float) for m in markers.values()
                           if m["body"] == name]
    com = np.asarray(info["com"], dtype=float) if "com" in info else None
    if com is not None:
        pts.append(com)
    pts = np.unique(np.round(np.vstack(pts), 12), axis=0)
    if len(pts) >= 2:  # along the body's main line, as the renders join them
        centred = pts - pts.mean(axis=0)
        axis = np.linalg.svd(centred, full_matrices=False)[2][0]
        pts = pts[np.argsort(centred @ axis)]
    out = {"name": name, "offset": 0, "points": pts.tolist(),
           "com": None if com is None else com.tolist()}
    if "shape_points" in info:
        out["shape"] = {"points": b64(info["shape_points"], "<f4"),
                        "triangles": b64(info["shape_triangles"], "<u4")}
    return out


def _ellipsoid(name, info, size: float) -> dict | None:
    """A rigid body's inertia ellipsoid as the renders draw it (the uniform solid
    ellipsoid of its mass and inertia, drawn where comparable in size to the scene:
    flexmbs.frame.ellipsoid): {"matrix": the 4 × 4 body-frame transform of the
    unit sphere, row by row} with semi-axes at least ELLIPSOID_MIN_SEMI_AXIS of the
    scene ``size`` [m], or None."""
    from ..frame.ellipsoid import ELLIPSOID_MIN_SEMI_AXIS, comparable, inertia_ellipsoid

    mass = float(np.asarray(info.get("mass", 0.0)))
    if "inertia" not in info or mass <= 0 or "shape_points" in info:
        return None
    com = np.asarray(info.get("com", np.zeros(3)), dtype=float)
    ellipsoid = inertia_ellipsoid(mass, info["inertia"], com)
    if not comparable(ellipsoid[2], size):
        return None
    centre, axes, semi = ellipsoid
    matrix = np.eye(4)
    matrix[:3, :3] = axes * np.maximum(semi, ELLIPSOID_MIN_SEMI_AXIS * size)
    matrix[:3, 3] = centre
    return {"matrix": matrix.ravel().tolist()}


def horizontal_axes(up) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) perpendicular to ``up`` with (a, b, up) right-handed (a: the world axis after
    up's nearest one, made perpendicular to it)."""
    up = _unit(up)
    k = int(np.argmax(np.abs(up)))
    e = np.eye(3)[(k + 1) % 3]
    a = _unit(e - (e @ up) * up)
    return a, np.cross(up, a)


def camera(lo, hi, up) -> tuple[np.ndarray, np.ndarray]:
    """(view direction from the scene's centre to the camera, camera up): a planar motion
    seen 30° off its plane (a vertical plane from above its normal, a horizontal one
    from 30° off the vertical), anything else from the isometric direction a − b + 0.8 up
    of :func:`horizontal_axes`; ``up`` (z without gravity) stays up on the screen."""
    up = np.array([0.0, 0.0, 1.0]) if up is None else _unit(up)
    extent = np.asarray(hi) - np.asarray(lo)
    thin = int(np.argmin(extent))
    a, b = horizontal_axes(up)
    iso = _unit(a - b + 0.8 * up)
    direction = iso
    if extent[thin] < 0.05 * np.max(extent):
        normal = np.eye(3)[thin]
        normal = normal if normal @ iso >= 0 else -normal
        if abs(normal @ up) < np.cos(np.radians(45)):  # a vertical plane: from above
            side = _unit(normal - (normal @ up) * up)
            direction = np.cos(np.radians(30)) * side + np.sin(np.radians(30)) * up
        else:  # a horizontal plane: from above, 30° off the vertical
            direction = (np.cos(np.radians(30)) * up
                         + np.sin(np.radians(30)) * _unit(a - b))
    cam_up = up - (up @ direction) * direction
    return _unit(direction), _unit(cam_up)


def world_up(gravity) -> np.ndarray | None:
    """−g/|g| of a gravity vector [m/s²]; None without gravity."""
    if gravity is None:
        return None
    g = np.asarray(gravity, dtype=float).reshape(-1)
    if g.size != 3 or not np.all(np.isfinite(g)) or not np.any(g):
        return None
    return -g / np.linalg.norm(g)


def scene_data(result, *, scale=None, field: str = "displacement", frames=None,
               speed=None, title: str | None = None) -> dict:
    """The scene the page draws (JSON-ready: arrays as base64 strings): see the module
    docstring. ``scale``: the initial display scale (default :func:`default_scale`);
    ``field``: the initial colouring ("displacement" [mm], "stress" [MPa] of the bodies'
    stress modes, "none"); ``frames``: how many output frames, evenly spread (default
    every output, at most :data:`MAX_FRAMES`); ``speed``: simulated seconds per second
    of playback (default: the run plays in about 10 s, or in real time when it lasts
    2 to 20 s)."""
    if field not in FIELDS:
        raise ValidationError(f"field must be one of {tuple(FIELDS)}, got {field!r}")
    t = np.asarray(result.t, dtype=float)
    q = np.asarray(result.q, dtype=float)
    if len(t) == 0:
        raise ValidationError("the results hold no output time to show")
    if scale is None:
        scale = default_scale(result)
    else:
        try:
            scale = float(scale)
        except (TypeError, ValueError):
            scale = float("nan")
        if not (np.isfinite(scale) and scale > 0):
            raise ValidationError(f"scale must be a positive number, got {scale!r}")
    if speed is not None and not (isinstance(speed, (int, float)) and np.isfinite(speed)
                                  and speed > 0):
        raise ValidationError(f"speed must be a positive number, got {speed!r}")
    k = _frames(len(t), frames)
    flexible, rigid = _flexible(result), _rigid(result)
    columns, bodies, drawn = [], [], []  # per-frame coordinate columns; body entries

    def claim(info) -> int:
        offset = sum(len(c) for c in columns)
        n = 7 + int(info.get("n_modes", 0)) if "phi" in info else 7
        columns.append(np.arange(int(info["start"]), int(info["start"]) + n))
        return offset

    largest_stress = 0.0
    for name, info in flexible:
        nodes = np.asarray(info["nodes"], dtype=float)
        phi = np.asarray(info["phi"], dtype=float).reshape(len(nodes), 3, -1)
        mesh = display_mesh(info.get("cells", {}), len(nodes))
        entry = {"name": name, "offset": claim(info), "nModes": int(info["n_modes"]),
                 "nodes": b64(nodes[mesh.nodes], "<f4"),
                 "phi": b64(phi[mesh.nodes], "<f4"), "nShown": len(mesh.nodes),
                 "triangles": b64(mesh.triangles, "<u4"), "lines": b64(mesh.lines, "<u4"),
                 "points": b64(mesh.points, "<u4")}
        stress = _stress(result, info, k, mesh.nodes)
        if stress is not None:
            entry["stressMax"] = float(np.max(stress, initial=0.0))
            largest_stress = max(largest_stress, entry["stressMax"])
            entry["_stress"] = stress
        bodies.append(entry)
        drawn.append((info, nodes[mesh.nodes], phi[mesh.nodes], mesh))
    rigid_entries = []
    for name, info in rigid:
        entry = _rigid_drawing(result, name, info)
        entry["offset"] = claim(info)
        rigid_entries.append(entry)
    if field == "stress" and not any("stressMax" in b for b in bodies):
        raise ValidationError("field 'stress' needs stress modes in the results: reduce "
                              "the body with --stress (docs/stress.md)")
    # stress quantized to 16 bits of the common colour range
    top_stress = largest_stress if largest_stress > 0 else 1.0
    for entry in bodies:
        stress = entry.pop("_stress", None)
        if stress is not None:
            entry["stress"] = b64(np.round(np.clip(stress / top_stress, 0, 1) * 65535),
                                  "<u2")
    coords = q[np.ix_(k, np.concatenate(columns))] if columns else np.zeros((len(k), 0))
    markers, joints = _markers(result, flexible, rigid, bodies, rigid_entries)
    lo, hi, largest = _extent(result, q, k, scale, drawn, rigid_entries, rigid, markers)
    size = float(max(np.max(hi - lo), 1e-6))
    for entry, (info, _, _, mesh) in zip(bodies, drawn, strict=True):
        entry["section"] = _section(info, size) if len(mesh.lines) else None
    for entry, (name, info) in zip(rigid_entries, rigid, strict=True):
        entry["ellipsoid"] = _ellipsoid(name, info, size)
    up = world_up(getattr(result, "model", {}).get("gravity"))
    direction, _ = camera(lo, hi, up)
    duration = float(t[k[-1]] - t[k[0]])
    return {
        "title": title or "flexmbs results",
        "t": b64(t[k], "<f8"), "nFrames": len(k), "coords": b64(coords, "<f4"),
        "nCoords": coords.shape[1], "flexible": bodies, "rigid": rigid_entries,
        "markers": markers, "joints": joints,
        "scale": float(scale), "field": field if bodies else "none",
        "fields": {"displacement": {"units": "mm", "max": 1e3 * largest or 1.0},
                   **({"stress": {"units": "MPa", "max": top_stress}}
                      if largest_stress > 0 else {})},
        "speed": float(speed) if speed is not None else _speed(duration),
        "speeds": sorted({*SPEEDS, float(speed)} if speed is not None else SPEEDS),
        "view": {"center": (0.5 * (lo + hi)).tolist(), "lo": lo.tolist(), "hi": hi.tolist(),
                 "radius": 0.5 * float(np.linalg.norm(hi - lo)) or 1.0,
                 "direction": direction.tolist(),
                 "up": [0.0, 0.0, 1.0] if up is None else up.tolist(), "size": size,
                 "grid": _grid(lo, hi, size, up)},
        "radii": {"rod": 0.01 * size, "joint": 0.02 * size, "com": 0.025 * size,
                  "comInEllipsoid": 0.012 * size},
    }


def _speed(duration: float) -> float:
    """Real time for a run of 2 to 20 s; else the offered speed nearest a 10 s playback."""
    if 2.0 <= duration <= 20.0 or duration <= 0:
        return 1.0
    return min(SPEEDS, key=lambda s: abs(np.log(duration / 10.0 / s)))


def _markers(result, flexible, rigid, bodies, rigid_entries):
    """The joints' first markers: [{kind ground|rigid|flexible, body index, position,
    phi (3 × n, flexible)}] and the joints [{name, marker index}]."""
    model = getattr(result, "model", {})
    described = model.get("markers", {})
    flex_index = {name: i for i, (name, _) in enumerate(flexible)}
    rigid_index = {name: i for i, (name, _) in enumerate(rigid)}
    markers, joints, seen = [], [], {}
    for joint in model.get("joints", []):
        full = joint.get("i")
        if full not in described:
            continue
        if full not in seen:
            m = described[full]
            entry = {"kind": "ground", "body": -1,
                     "position": [float(v) for v in m["position"]]}
            if m["body"] in flex_index:
                entry.update(kind="flexible", body=flex_index[m["body"]])
                if "phi" in m:
                    entry["phi"] = np.asarray(m["phi"], dtype=float).reshape(-1).tolist()
            elif m["body"] in rigid_index:
                entry.update(kind="rigid", body=rigid_index[m["body"]])
            seen[full] = len(markers)
            markers.append(entry)
        joints.append({"name": str(joint.get("name", "")), "marker": seen[full]})
    return markers, joints


def _extent(result, q, k, scale, drawn, rigid_entries, rigid, markers):
    """(lowest corner, highest corner) [m] of everything drawn over the frames (at most
    200 of them, evenly spread) at the display ``scale``, and the largest elastic
    displacement [m] over every frame."""
    sample = k[np.unique(np.round(np.linspace(0, len(k) - 1, min(len(k), 200))).astype(int))]
    pts, largest = [], 0.0
    for info, nodes, phi, _ in drawn:
        start, n = int(info["start"]), int(info["n_modes"])
        xi = q[k, start + 7:start + 7 + n]
        disp = np.einsum("nij,tj->tni", phi, xi)
        largest = max(largest, float(np.max(np.linalg.norm(disp, axis=2), initial=0.0)))
        for j in np.searchsorted(k, sample):
            a = rotation_matrix(q[k[j], start + 3:start + 7])
            pts.append(q[k[j], start:start + 3] + (nodes + scale * disp[j]) @ a.T)
    for (_, info), entry in zip(rigid, rigid_entries, strict=True):
        start = int(info["start"])
        local = np.asarray(entry["points"], dtype=float)
        if "shape_points" in info:
            shape = np.asarray(info["shape_points"], dtype=float)
            local = np.vstack([local, shape.min(axis=0), shape.max(axis=0)])
        for j in sample:
            pts.append(q[j, start:start + 3] + local @ rotation_matrix(q[j, start + 3:
                                                                          start + 7]).T)
    pts += [np.asarray(m["position"], float)[None] for m in markers if m["kind"] == "ground"]
    allpts = np.vstack(pts) if pts else np.zeros((1, 3))
    lo, hi = allpts.min(axis=0), allpts.max(axis=0)
    pad = 0.05 * max(float(np.max(hi - lo)), 1e-3)
    return lo - pad, hi + pad, largest


def _grid(lo, hi, size: float, up) -> dict:
    """The floor grid: squares of a round side (about a tenth of the scene) across ``up``
    (z without gravity), 2 % of the scene below the lowest point, centred under the
    scene."""
    up = np.array([0.0, 0.0, 1.0]) if up is None else _unit(up)
    spacing = nice_length(0.1 * size)
    count = int(np.ceil(1.2 * size / spacing))
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])])
    level = float(np.min(corners @ up)) - 0.02 * size
    center = 0.5 * (lo + hi)
    origin = center + (level - center @ up) * up
    a, b = horizontal_axes(up)
    return {"origin": origin.tolist(), "a": a.tolist(), "b": b.tolist(),
            "spacing": spacing, "count": count}
