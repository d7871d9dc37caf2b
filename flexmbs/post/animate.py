"""Animations, snapshots and mode-shape movies rendered off-screen with pyvista.

Each flexible body is drawn as its mesh deformed at every output time, the deformation
magnified by a display scale (default: the largest elastic displacement made 10 % of the
scene, :func:`~flexmbs.post.frames.default_scale`; the scale is written on every frame),
coloured by the elastic displacement magnitude [mm] (``field="displacement"``) or by one
mode's contribution (``field="modal"``, ``mode=j``) with a fixed colour range over the
whole animation; beams are drawn as their cross-section swept along the deformed
centreline (:mod:`flexmbs.post.sections`). Rigid bodies are drawn with their geometry
file when they have one, else as their inertia-equivalent box with rods through their
markers; joints as small spheres, with a time label and a ground grid.
GIF through imageio (pillow); MP4 through imageio-ffmpeg (``pip install
'flexmbs[video]'``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._files import atomic_path
from ..errors import FlexmbsError, ValidationError, WriteError
from .frames import (
    body_size,
    check_scale,
    default_scale,
    deformed,
    flexible_bodies,
    frame_index,
    max_displacement,
    modal_contributions,
    pose,
)
from .render import Scene, check_window_size, parse_view_up, unstructured
from .sections import corner_nodes, prism_faces, section_points, swept_points

FIELDS = ("displacement", "modal", "stress")
VIDEO_FORMATS = (".gif", ".mp4")


#: Units of each field's colour values (and of its colour range).
FIELD_UNITS = {"displacement": "mm", "modal": "mm", "stress": "MPa"}


@dataclass
class FrameInfo:
    """What was drawn: output indices, display scale, colour range (in ``units``: mm for
    displacements, MPa for stresses), the colour bar's title."""

    indices: list
    scale: float
    clim: tuple
    title: str
    units: str = "mm"

    def colour_range_text(self) -> str:
        """The colour range with its units, e.g. "0–12.5 MPa"."""
        return f"{self.clim[0]:.3g}–{self.clim[1]:.3g} {self.units}"


def _marker_position(result, marker: dict, k: int, scale: float = 1.0) -> np.ndarray:
    """Global position of a described marker at output k; on a flexible body its modal
    motion is magnified by the display ``scale`` like the drawn mesh."""
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


def _rigid_shapes(result):
    """Every rigid body's drawing points in its body frame (its frame origin and its
    markers' origins): [(name, coordinate start, points (k, 3))]."""
    shapes = []
    markers = getattr(result, "model", {}).get("markers", {})
    for name, info in result.bodies.items():
        if "phi" in info or info.get("n_coords", 0) < 7:
            continue
        pts = [np.asarray(m["position"], float) for m in markers.values()
               if m["body"] == name]
        pts = np.unique(np.round(np.vstack([np.zeros((1, 3)), *pts]) if pts
                                 else np.zeros((1, 3)), 12), axis=0)
        shapes.append((name, int(info["start"]), pts))
    return shapes


def _frame_indices(n_outputs: int, frames: int | None, every: int) -> list[int]:
    if frames is not None:
        if not (isinstance(frames, int) and frames >= 1):
            raise ValidationError(f"frames must be an integer >= 1, got {frames!r}")
        return [round(v) for v in np.linspace(0, n_outputs - 1, min(frames, n_outputs))]
    if not (isinstance(every, int) and every >= 1):
        raise ValidationError(f"every must be an integer >= 1, got {every!r}")
    return list(range(0, n_outputs, every))


def _field(result, body, k, field, mode):
    """Unscaled colour values of ``field`` on ``body``'s nodes at output k: displacement
    [mm], one mode's share [mm] (zero for a body with fewer modes than ``mode``), or the
    von Mises stress [MPa] of its stress modes (zero for a body without them)."""
    if field == "displacement":
        return 1e3 * np.linalg.norm(deformed(result, body, k)[1], axis=1)
    if field == "stress":
        return 1e-6 * _von_mises(result, body, k)
    if mode > body.n_modes:
        return np.zeros(len(body.nodes))
    return 1e3 * np.linalg.norm(modal_contributions(result, body, k)[mode - 1], axis=1)


class ResultAnimation:
    """The scene of a result, built once (fixed camera over all frames, fixed colour
    range); :meth:`image` renders output index k, :meth:`images` all frames.

    Options: ``scale`` (None: :func:`~flexmbs.post.frames.default_scale`), ``field``
    ("displacement", "modal" with ``mode``, or "stress"), ``frames`` (count, evenly
    spread) or ``every``, ``camera`` (see :func:`~flexmbs.post.render.parse_camera`),
    ``view_up`` (the world's up direction: "auto", the opposite of the model's gravity
    when the results record one; "none"; an axis name or a vector, see
    :func:`~flexmbs.post.render.parse_view_up`), ``window_size`` (pixels), ``grid``
    (ground grid on/off).
    """

    def __init__(self, result, *, scale: float | None = None, field: str = "displacement",
                 mode: int = 1, frames: int | None = None, every: int = 1, camera="auto",
                 window_size=(800, 600), grid: bool = True, view_up="auto"):
        self.result, self.field, self.mode = result, field, mode
        window_size = check_window_size(window_size)  # before any frame is computed
        up = parse_view_up(view_up, getattr(result, "model", {}).get("gravity"))
        self.info = frame_info(result, scale=scale, field=field, mode=mode, frames=frames,
                               every=every)
        self.bodies = flexible_bodies(result)
        self.rigid = _rigid_shapes(result)
        self.joints = _joint_markers(result)
        bounds, cloud = _scene_extent(result, self.info)
        self.scene = Scene(bounds, camera, window_size, grid=grid, points=cloud, up=up)
        # enough decimals that consecutive frames' labels differ (GIF writers merge
        # identical frames)
        gaps = np.diff(np.asarray(result.t)[self.info.indices])
        gap = float(np.min(gaps[gaps > 0])) if np.any(gaps > 0) else 1.0
        self._digits = max(3, int(np.ceil(-np.log10(gap))) + 1)
        k0 = self.info.indices[0]
        self.sections = {body.name: _beam_section(result, body) for body in self.bodies}
        for body in self.bodies:
            points, colour = self._flexible(body, k0)
            section = self.sections[body.name]
            mesh = (unstructured(points, body.cells) if section is None
                    else self.scene.pv.PolyData(points, prism_faces(len(section[0]),
                                                                    section[2], section[1])))
            self.scene.add(f"flex:{body.name}", mesh, scalars=colour,
                           clim=self.info.clim, scalar_title=self.info.title)
        for name, _, local in self.rigid:
            shape = _shape_mesh(self.scene, result.bodies[name])
            if shape is not None:  # its own geometry (docs/post_processing.md)
                self.scene.add(f"rigid-box:{name}", shape, color="#b8b8b8")
                continue
            self.scene.add(f"rigid:{name}", _rigid_mesh(self.scene, local), color="#9a9a9a")
            box = _inertia_box(self.scene, result.bodies[name])
            if box is not None:
                self.scene.add(f"rigid-box:{name}", box, color="#b8b8b8", opacity=0.85)
        sphere = self.scene.pv.Sphere(radius=0.02 * self.scene.size)
        for jname, _ in self.joints:
            mesh = sphere.copy()
            mesh.field_data["local"] = np.asarray(sphere.points)
            self.scene.add(f"joint:{jname}", mesh, color="#c0392b")

    def image(self, k: int) -> np.ndarray:
        """Render output index ``k``: (height, width, 3) uint8."""
        result, info = self.result, self.info
        for body in self.bodies:
            self.scene.update(f"flex:{body.name}", *self._flexible(body, k))
        for name, start, _ in self.rigid:
            r, a = pose(result, start, k)
            for key in (f"rigid:{name}", f"rigid-box:{name}"):
                mesh = self.scene.meshes.get(key)
                if mesh is not None:
                    mesh.points = r + mesh.field_data["local"] @ a.T
        for jname, marker in self.joints:
            mesh = self.scene.meshes[f"joint:{jname}"]
            mesh.points = mesh.field_data["local"] + _marker_position(result, marker, k,
                                                                      info.scale)
        self.scene.text(f"t = {result.t[k]:.{self._digits}f} s    deformation × "
                        f"{info.scale:g}")
        return self.scene.image()

    def _flexible(self, body, k):
        """(drawn points, colours) of a flexible body at output k: its deformed nodes, or
        for a beam drawn with its section the prism corners and their nodes' colours."""
        points = deformed(self.result, body, k, self.info.scale)[0]
        colour = _field(self.result, body, k, self.field, self.mode)
        section = self.sections[body.name]
        if section is None:
            return points, colour
        lines, outline, _, z_body, corners = section
        a = pose(self.result, body.start, k)[1]
        return swept_points(points, lines, outline, a @ z_body), colour[corners]

    def images(self, progress=None):
        """Yield every frame of :attr:`info` (``progress(done, total)`` after each)."""
        total = len(self.info.indices)
        for n, k in enumerate(self.info.indices):
            yield self.image(k)
            if progress is not None:
                progress(n + 1, total)

    def close(self) -> None:
        self.scene.close()


def render_frames(result, *, progress=None, **options):
    """Yield the frames of ``result`` (options of :class:`ResultAnimation`)."""
    anim = ResultAnimation(result, **options)
    try:
        yield from anim.images(progress)
    finally:
        anim.close()


def _rigid_mesh(scene, local):
    """A rigid body's solid in its body frame: cylinders joining its points in order
    along the body's main line (radius 1 % of the scene), or a box for a single point;
    the body-frame vertices are kept in ``field_data["local"]``."""
    pv = scene.pv
    radius = 0.01 * scene.size
    if len(local) >= 2:
        order = np.argsort(local @ (local[-1] - local[0]))  # along the body's main line
        pts = local[order]
        parts = []
        for k in range(len(pts) - 1):
            p0, p1 = pts[k], pts[k + 1]
            length = float(np.linalg.norm(p1 - p0))
            if length > 1e-12:
                parts.append(pv.Cylinder(center=0.5 * (p0 + p1), direction=p1 - p0,
                                         radius=radius, height=length, resolution=16))
        mesh = parts[0].append_polydata(*parts[1:]) if len(parts) > 1 else parts[0]
    else:
        side = 4 * radius
        mesh = pv.Cube(center=tuple(local[0]), x_length=side, y_length=side, z_length=side)
    mesh.field_data["local"] = np.asarray(mesh.points, dtype=float)
    return mesh


def inertia_box(mass: float, inertia, com) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, axes (3, 3) columns, side lengths (3,)) [m] of the uniform box with the
    body's mass and its inertia about the centre of mass: along principal axis k,
    a_k² = 6 (I_i + I_j − I_k) / m (a slender rod's inertia gives a thin box of its
    length)."""
    moments, axes = np.linalg.eigh(np.asarray(inertia, dtype=float))
    sides = np.sqrt(np.maximum(6.0 * (moments.sum() - 2.0 * moments) / mass, 0.0))
    return np.asarray(com, dtype=float), axes, sides


def _inertia_box(scene, info):
    """The rigid body's inertia-equivalent box in its body frame (sides at least 1.5 %
    of the scene, so that a slender body stays visible), or None without inertia data;
    the body-frame vertices are kept in ``field_data["local"]``."""
    if "inertia" not in info or not float(np.asarray(info["mass"])) > 0:
        return None
    centre, axes, sides = inertia_box(float(np.asarray(info["mass"])), info["inertia"],
                                      info["com"])
    sides = np.maximum(sides, 0.015 * scene.size)
    box = scene.pv.Box(bounds=(-sides[0] / 2, sides[0] / 2, -sides[1] / 2, sides[1] / 2,
                               -sides[2] / 2, sides[2] / 2))
    local = np.asarray(box.points, dtype=float) @ axes.T + centre
    box.points = local
    box.field_data["local"] = local
    return box


def _beam_section(result, body):
    """(lines, section vertices (k, 2) [m], vertices per loop, section z axis in the body
    frame, the node of each swept corner) of a flexible body drawn as a swept section,
    or None (a mesh of other cells, or no section outline in the results). The true
    outline when the results carry it (``section_polygon``), else the rectangle of
    ``section_size``."""
    info = result.bodies.get(body.name, {})
    if set(body.cells) != {"line"} or "section_size" not in info:
        return None
    lines = np.asarray(body.cells["line"], dtype=np.int64)
    pts, loops = section_points(info["section_size"], info.get("section_polygon"),
                                info.get("section_loops"))
    return (lines, pts, loops, np.asarray(info["section_axes"], dtype=float)[1],
            corner_nodes(lines, len(pts)))


def _framing_points(info, local):
    """A rigid body's points the camera must keep in view (body frame): its markers and,
    with a drawing geometry, the corners of that geometry's bounding box."""
    if "shape_points" not in info:
        return local
    shape = np.asarray(info["shape_points"], dtype=float)
    lo, hi = shape.min(axis=0), shape.max(axis=0)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])])
    return np.vstack([local, corners])


def _shape_mesh(scene, info):
    """A rigid body's drawing geometry (PolyData in its body frame, vertices kept in
    ``field_data["local"]``), or None when it has none."""
    if "shape_points" not in info:
        return None
    local = np.asarray(info["shape_points"], dtype=float)
    tris = np.asarray(info["shape_triangles"], dtype=np.int64)
    mesh = scene.pv.PolyData(local, np.hstack([np.full((len(tris), 1), 3), tris]).ravel())
    mesh.field_data["local"] = local
    return mesh


def _joint_markers(result):
    model = getattr(result, "model", {})
    markers = model.get("markers", {})
    return [(j["name"], markers[j["i"]]) for j in model.get("joints", [])
            if j["i"] in markers]


def _von_mises(result, body, k) -> np.ndarray:
    """Von Mises stress [Pa] at ``body``'s nodes at output k from its stress modes
    (docs/stress.md); zeros without them."""
    from ..results.stress import von_mises_at

    stress = von_mises_at(result, body.name, k)
    return np.zeros(len(body.nodes)) if stress is None else stress


def frame_info(result, *, scale=None, field="displacement", mode=1, frames=None,
               every=1) -> FrameInfo:
    """The output indices, display scale and colour range an animation uses."""
    from ..modal.stress import stress_field_name

    if field not in FIELDS:
        raise ValidationError(f"field must be one of {FIELDS}, got {field!r}")
    bodies = flexible_bodies(result)
    if field == "modal":
        n_max = max((b.n_modes for b in bodies), default=0)
        if not (isinstance(mode, int) and 1 <= mode <= n_max):
            raise ValidationError(f"mode must be an integer in 1..{n_max}, got {mode!r}")
    if scale is None:
        scale = default_scale(result)
    else:
        scale = check_scale(scale, max_displacement(result, bodies), body_size(result))
    indices = _frame_indices(len(result.t), frames, every)
    top = 0.0
    for k in indices:
        for body in bodies:
            if field == "modal" and mode > body.n_modes:
                continue
            top = max(top, float(np.max(_field(result, body, k, field, mode), initial=0.0)))
    if field == "stress" and not any(
            stress_field_name(result.bodies.get(b.name, {}).get("fields", {})) is not None
            for b in bodies):
        raise ValidationError("field 'stress' needs stress modes in the results: reduce "
                              "the body with --stress (docs/stress.md)")
    title = {"displacement": "|u| [mm]", "stress": "von Mises [MPa]"}.get(
        field, f"|u mode {mode}| [mm]")
    return FrameInfo(indices, float(scale), (0.0, top if top > 0 else 1.0), title,
                     FIELD_UNITS[field])


def _scene_extent(result, info: FrameInfo, limit: int = 4000):
    """(bounds (xmin, xmax, ymin, ymax, zmin, zmax) padded by 5 % of the largest extent,
    points) of the model over the drawn frames — flexible nodes and rigid bodies'
    points, in one pass; the points (what the camera frames) evenly thinned to at most
    ``limit``."""
    pts = []
    bodies = flexible_bodies(result)
    rigid = [(start, _framing_points(result.bodies[name], local))
             for name, start, local in _rigid_shapes(result)]  # body frame, once
    for k in info.indices:
        for body in bodies:
            pts.append(deformed(result, body, k, info.scale)[0])
        for start, local in rigid:
            r, a = pose(result, start, k)
            pts.append(r + local @ a.T)
    allpts = np.vstack(pts) if pts else np.zeros((1, 3))
    lo, hi = allpts.min(axis=0), allpts.max(axis=0)
    pad = 0.05 * max(float(np.max(hi - lo)), 1e-3)
    bounds = [v for pair in zip(lo - pad, hi + pad, strict=True) for v in pair]
    return bounds, allpts[::max(1, len(allpts) // limit)]


def write_video(images, path, fps: float = 20.0) -> Path:
    """Write a sequence of images to a GIF (pillow) or MP4 (imageio-ffmpeg)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in VIDEO_FORMATS:
        raise WriteError(f"cannot write {str(path)!r}: use a .gif or .mp4 file name")
    if not path.parent.is_dir():
        raise WriteError(f"cannot write {str(path)!r}: folder does not exist")
    if not fps > 0:
        raise ValidationError(f"fps must be positive, got {fps!r}")
    try:
        import imageio.v2 as iio
    except ImportError:
        raise FlexmbsError("writing animations needs imageio: pip install imageio") from None
    if suffix == ".mp4":
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise FlexmbsError("MP4 output needs the optional extra: pip install "
                               "'flexmbs[video]' (imageio-ffmpeg); or write a .gif") from None
    # frames go to a temporary file renamed over the target only once complete
    with atomic_path(path, "animation") as tmp:
        if suffix == ".mp4":
            writer = iio.get_writer(tmp, format="FFMPEG", fps=fps, macro_block_size=1)
        else:
            writer = iio.get_writer(tmp, format="GIF", mode="I", duration=1000.0 / fps,
                                    loop=0)
        count = 0
        with writer:
            for image in images:
                writer.append_data(image)
                count += 1
        if count == 0:
            raise ValidationError("no frames to write")
    return path


def animate(result, path, *, fps: float = 20.0, progress=None, **options) -> FrameInfo:
    """Render ``result`` (options of :class:`ResultAnimation`) into a GIF or MP4; returns
    what was drawn (indices, scale, colour range)."""
    anim = ResultAnimation(result, **options)
    try:
        write_video(anim.images(progress), path, fps)
    finally:
        anim.close()
    return anim.info


def _png_path(path, what: str) -> Path:
    """``path`` as a Path, after refusing (WriteError naming it) another suffix than .png
    or a missing folder."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise WriteError(f"cannot write {what} {str(path)!r}: use a .png file name")
    if not path.parent.is_dir():
        raise WriteError(f"cannot write {str(path)!r}: folder does not exist")
    return path


def snapshot(result, path, *, time: float | None = None, **options) -> FrameInfo:
    """One frame as PNG at the output time nearest ``time`` (default: the last), with the
    whole run's display scale; returns what was drawn (its colour range is the frame's)."""
    import imageio.v2 as iio

    path = _png_path(path, "snapshot")
    k = len(result.t) - 1 if time is None else frame_index(result, time)
    options.pop("frames", None)
    if options.get("scale") is None:
        options["scale"] = default_scale(result)  # the animation's scale, not one frame's
    else:  # bounded by the whole run's largest displacement, as in the animation
        options["scale"] = check_scale(options["scale"], max_displacement(result),
                                       body_size(result))
    anim = ResultAnimation(_Subset(result, k), **options)
    try:
        with atomic_path(path, "snapshot") as tmp:
            iio.imwrite(tmp, anim.image(0), extension=".png")
    finally:
        anim.close()
    return anim.info


def snapshot_strip(result, path, times, **options) -> FrameInfo:
    """The frames at ``times`` [s] (the output times nearest them) side by side in one
    PNG, in the framing, scale and colour range of the whole run (options of
    :class:`ResultAnimation`); returns what was drawn."""
    path = _png_path(path, "snapshot strip")
    times = [float(t) for t in times]
    if not times:
        raise ValidationError("a snapshot strip needs at least one time")
    indices = [frame_index(result, t) for t in times]  # refuses times outside the run
    anim = ResultAnimation(result, **options)
    try:
        images = [anim.image(k) for k in indices]
    finally:
        anim.close()
    import imageio.v2 as iio

    gap = np.full((images[0].shape[0], 8, 3), 255, dtype=np.uint8)
    strip = np.hstack([part for img in images for part in (img, gap)][:-1])
    with atomic_path(path, "snapshot strip") as tmp:
        iio.imwrite(tmp, strip, extension=".png")
    return anim.info


class _Subset:
    """A view of a result restricted to one output (for snapshots)."""

    def __init__(self, result, k):
        self.t = np.asarray(result.t)[k:k + 1]
        self.q = np.asarray(result.q)[k:k + 1]
        self.bodies = result.bodies
        self.model = getattr(result, "model", {})
        self._full = result

    def __getattr__(self, name):
        return getattr(self._full, name)


def animate_mode(data, mode: int, path, *, frames: int = 24, fps: float = 12.0,
                 scale: float | None = None, camera="iso", window_size=(800, 600),
                 progress=None) -> Path:
    """A movie of one mode shape of a ModalData: ū0 + s sin(2π n/frames) Φ_mode over one
    period, coloured by the displacement magnitude per unit ξ (the data's shape units)
    × |sin|. Default scale: the largest displacement is 10 % of the body's size."""
    if not (isinstance(mode, int) and 1 <= mode <= data.n_modes):
        raise ValidationError(f"mode must be an integer in 1..{data.n_modes}, got {mode!r}")
    if not (isinstance(frames, int) and frames >= 2):
        raise ValidationError(f"frames must be an integer >= 2, got {frames!r}")
    shape = data.phi[:, mode - 1].reshape(-1, 3)
    mag = np.linalg.norm(shape, axis=1)
    size = float(max(np.max(np.ptp(data.nodes, axis=0)), 1e-9))
    if scale is None:
        scale = 0.1 * size / float(mag.max()) if mag.max() > 0 else 1.0
    else:  # a mode shape is displacement per unit ξ: the same bound on its peak
        scale = check_scale(scale, float(mag.max()), size)
    lo = np.minimum(data.nodes.min(axis=0), (data.nodes - scale * np.abs(shape)).min(axis=0))
    hi = np.maximum(data.nodes.max(axis=0), (data.nodes + scale * np.abs(shape)).max(axis=0))
    bounds = [v for pair in zip(lo, hi, strict=True) for v in pair]
    freq = float(data.frequencies[mode - 1])

    def images():
        scene = Scene(bounds, camera, window_size)
        try:
            mesh = unstructured(data.nodes, dict(data.cells))
            scene.add("mode", mesh, scalars=np.zeros(len(mag)), clim=(0.0, float(mag.max())
                                                                     or 1.0),
                      scalar_title="|φ| per unit ξ")
            for n in range(frames):
                s = np.sin(2 * np.pi * n / frames)
                scene.update("mode", data.nodes + scale * s * shape, mag * abs(s))
                scene.text(f"mode {mode}: f = {freq:.4g} Hz    deformation × {scale:.3g}")
                yield scene.image()
                if progress is not None:
                    progress(n + 1, frames)
        finally:
            scene.close()

    return write_video(images(), path, fps)
