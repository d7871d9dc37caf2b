"""Animations and snapshots of results rendered off-screen with pyvista.

Each flexible body is drawn as its mesh deformed at every output time, the deformation
magnified by a display scale (default: the largest elastic displacement made 10 % of the
scene, :func:`~flexmbs.post.frames.default_scale`; the scale is written on every frame),
coloured by the elastic displacement magnitude [mm] (``field="displacement"``) or by one
mode's contribution (``field="modal"``, ``mode=j``) with a fixed colour range over the
whole animation; beams are drawn as their cross-section swept along the deformed
centreline (:mod:`flexmbs.post.sections`), and beams without a section as tubes sized to
the scene. Rigid bodies are drawn from what defines them (:mod:`flexmbs.post.scene_parts`:
links from the centre of mass to the markers, a sphere at the centre of mass, the
inertia ellipsoid where it is comparable to the scene, or their geometry file); joints as red
spheres, with a time label and a ground grid. The camera and the grid follow the model
over the whole run. GIF through imageio (pillow); MP4 through imageio-ffmpeg
(``pip install 'flexmbs[video]'``). Snapshot strips: :mod:`flexmbs.post.strips`; mode
movies of modal data: :mod:`flexmbs.post.mode_movie`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._files import atomic_path
from ..errors import FlexmbsError, ValidationError, WriteError
from .beam_forces import beam_names, node_stress
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
from .scene_parts import (
    COM_IN_ELLIPSOID_RADIUS,
    COM_RADIUS,
    ELLIPSOID_MIN_SEMI_AXIS,
    JOINT_RADIUS,
    LINK_RADIUS,
    across,
    beam_chains,
    ellipsoid_mesh,
    inertia_ellipsoid,
    joint_markers,
    link_mesh,
    marker_position,
    model_extent,
    rigid_parts,
    shape_mesh,
    sphere_mesh,
    tube_outline,
)
from .sections import corner_nodes, prism_faces, section_points, swept_points

__all__ = ["FIELDS", "FrameInfo", "ResultAnimation", "animate", "frame_info",
           "inertia_ellipsoid", "render_frames", "snapshot", "snapshot_strip", "write_video"]

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


#: Colours of the drawn parts (flexible bodies take the colour map).
COLOURS = {"link": "#8c8c8c", "ellipsoid": "#b8b8b8", "com": "#e67e22", "joint": "#c0392b",
           "shape": "#b8b8b8"}

_marker_position = marker_position  # the ParaView export's name
_joint_markers = joint_markers


def _rigid_shapes(result):
    """Every rigid body's points in its body frame as the ParaView export draws them
    (its frame origin and its markers' origins): [(name, coordinate start, points
    (k, 3))]."""
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
    spread) or ``every``, or ``indices`` (the output indices to draw), ``camera`` (see
    :func:`~flexmbs.post.render.parse_camera`), ``view_up`` (the world's up direction:
    "auto", the opposite of the model's gravity when the results record one; "none";
    an axis name or a vector, see :func:`~flexmbs.post.render.parse_view_up`),
    ``window_size`` (pixels), ``grid`` (ground grid on/off), ``colour_bar`` (False: no
    colour bar, the model drawn over the whole frame), ``axes`` (the global axes triad
    in the lower left corner), ``title`` (the frame label in place of the time, e.g.
    "mode 2: f = 8.36 Hz"). The camera frames, and the grid
    and the drawn sizes follow, the model over the whole run, whichever frames are
    drawn.
    """

    def __init__(self, result, *, scale: float | None = None, field: str = "displacement",
                 mode: int = 1, frames: int | None = None, every: int = 1, indices=None,
                 camera="auto", window_size=(800, 600), grid: bool = True, view_up="auto",
                 colour_bar: bool = True, axes: bool = False, title: str | None = None):
        self.result, self.field, self.mode, self.title = result, field, mode, title
        window_size = check_window_size(window_size)  # before any frame is computed
        up = parse_view_up(view_up, getattr(result, "model", {}).get("gravity"))
        self.info = frame_info(result, scale=scale, field=field, mode=mode, frames=frames,
                               every=every, indices=indices)
        self.bodies = flexible_bodies(result)
        self.parts = rigid_parts(result)
        self.chains = beam_chains(result)
        self.joints = joint_markers(result)
        self.extent = model_extent(result, self.info.scale, self.info.indices, self.parts)
        self.scene = Scene(self.extent.bounds, camera, window_size, grid=grid,
                           points=self.extent.cloud, up=up, colour_bar=colour_bar,
                           axes=axes)
        # enough decimals that consecutive frames' labels differ (GIF writers merge
        # identical frames)
        gaps = np.diff(np.asarray(result.t)[self.info.indices])
        gap = float(np.min(gaps[gaps > 0])) if np.any(gaps > 0) else 1.0
        self._digits = max(3, int(np.ceil(-np.log10(gap))) + 1)
        k0 = self.info.indices[0]
        size, pv = self.extent.size, self.scene.pv
        self.sections = {body.name: _beam_section(result, body, LINK_RADIUS * size)
                         for body in self.bodies}
        for body in self.bodies:
            points, colour = self._flexible(body, k0)
            section = self.sections[body.name]
            mesh = (unstructured(points, body.cells) if section is None
                    else pv.PolyData(points, prism_faces(len(section[0]), section[2],
                                                         section[1])))
            self.scene.add(f"flex:{body.name}", mesh, scalars=colour,
                           clim=self.info.clim, scalar_title=self.info.title)
        #: the rigid meshes of each body (body frame in field_data["local"]): [(start, key)]
        self.rigid = []
        for part in self.parts:
            for kind, mesh, opacity in self._rigid_meshes(part):
                if mesh is not None:
                    key = f"rigid-{kind}:{part.name}"
                    self.scene.add(key, mesh, color=COLOURS[kind], opacity=opacity)
                    self.rigid.append((part.start, key))
        self._tube = tube_outline(LINK_RADIUS * size)
        #: the nonlinear beams coloured by their fibre stress (field "stress")
        self.stressed = set(beam_names(result)) if field == "stress" else set()
        for name, starts in self.chains.items():
            lines = np.column_stack([np.arange(len(starts) - 1), np.arange(1, len(starts))])
            mesh = pv.PolyData(self._chain_points(starts, k0),
                               prism_faces(len(lines), self._tube[1], self._tube[0]))
            if name in self.stressed:
                self.scene.add(f"beam:{name}", mesh, scalars=self._chain_colour(name, k0),
                               clim=self.info.clim, scalar_title=self.info.title)
            else:
                self.scene.add(f"beam:{name}", mesh, color=COLOURS["link"])
        for jname, _ in self.joints:
            self.scene.add(f"joint:{jname}", sphere_mesh(pv, np.zeros(3),
                                                         JOINT_RADIUS * size),
                           color=COLOURS["joint"])

    def _rigid_meshes(self, part):
        """[(kind, mesh or None, opacity)] of a rigid body in its body frame: its
        geometry, or its links, inertia ellipsoid (where drawn) and centre-of-mass sphere."""
        pv, size = self.scene.pv, self.extent.size
        if part.shape is not None:
            return [("shape", shape_mesh(pv, part), 1.0)]
        inside = part.name in self.extent.ellipsoids
        ellipsoid = (ellipsoid_mesh(pv, part.ellipsoid, ELLIPSOID_MIN_SEMI_AXIS * size)
                     if inside else None)
        return [("link", link_mesh(pv, part, LINK_RADIUS * size), 1.0),
                ("ellipsoid", ellipsoid, 0.45),
                ("com", sphere_mesh(pv, part.com, size * (COM_IN_ELLIPSOID_RADIUS if inside
                                                          else COM_RADIUS)), 1.0)]

    def _chain_points(self, starts, k):
        """The swept tube of a nonlinear beam through its node bodies' origins at output
        k, its section's z axis across the root-to-tip line."""
        nodes = np.array([pose(self.result, s, k)[0] for s in starts])
        lines = np.column_stack([np.arange(len(nodes) - 1), np.arange(1, len(nodes))])
        return swept_points(nodes, lines, self._tube[0], across(nodes[-1] - nodes[0]))

    def _chain_colour(self, name, k):
        """A stressed nonlinear beam's tube colours at output k: its nodes' largest fibre
        stress [MPa] on their section points."""
        count = len(self.chains[name])
        lines = np.column_stack([np.arange(count - 1), np.arange(1, count)])
        return 1e-6 * node_stress(self.result, name, k)[corner_nodes(lines,
                                                                      len(self._tube[0]))]

    def label(self, k: int) -> str:
        """The frame label of output k: the title (or the time), the deformation scale
        when something deforms (the grid's square is added by the scene)."""
        words = [self.title if self.title else
                 f"t = {self.result.t[k]:.{self._digits}f} s"]
        if self.bodies:
            words.append(f"deformation × {self.info.scale:g}")
        return "    ".join(words)

    def image(self, k: int) -> np.ndarray:
        """Render output index ``k``: (height, width, 3) uint8."""
        result, info = self.result, self.info
        for body in self.bodies:
            self.scene.update(f"flex:{body.name}", *self._flexible(body, k))
        for start, key in self.rigid:
            r, a = pose(result, start, k)
            mesh = self.scene.meshes[key]
            mesh.points = r + mesh.field_data["local"] @ a.T
        for name, starts in self.chains.items():
            self.scene.update(f"beam:{name}", self._chain_points(starts, k),
                              self._chain_colour(name, k) if name in self.stressed else None)
        for jname, marker in self.joints:
            mesh = self.scene.meshes[f"joint:{jname}"]
            mesh.points = mesh.field_data["local"] + marker_position(result, marker, k,
                                                                     info.scale)
        self.scene.text(self.label(k))
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


def _beam_section(result, body, radius: float | None = None):
    """(lines, section vertices (k, 2) [m], vertices per loop, section z axis in the body
    frame, the node of each swept corner) of a flexible body of line cells drawn as a
    swept section, or None (a mesh of other cells). The true outline when the results
    carry it (``section_polygon``), else the rectangle of ``section_size``, else a tube
    of ``radius`` [m] (a beam whose data record no section; None without a radius)."""
    info = result.bodies.get(body.name, {})
    if set(body.cells) != {"line"} or ("section_size" not in info and radius is None):
        return None
    lines = np.asarray(body.cells["line"], dtype=np.int64)
    if "section_size" in info:
        pts, loops = section_points(info["section_size"], info.get("section_polygon"),
                                    info.get("section_loops"))
        z_axis = np.asarray(info["section_axes"], dtype=float)[1]
    else:
        pts, loops = tube_outline(radius)
        z_axis = across(np.ptp(body.nodes, axis=0))
    return lines, pts, loops, z_axis, corner_nodes(lines, len(pts))


def _von_mises(result, body, k) -> np.ndarray:
    """Von Mises stress [Pa] at ``body``'s nodes at output k from its stress modes
    (docs/stress.md); zeros without them."""
    from ..results.stress import von_mises_at

    stress = von_mises_at(result, body.name, k)
    return np.zeros(len(body.nodes)) if stress is None else stress


def frame_info(result, *, scale=None, field="displacement", mode=1, frames=None,
               every=1, indices=None) -> FrameInfo:
    """The output indices (``indices`` as given, else from ``frames`` or ``every``),
    display scale and colour range an animation uses."""
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
    indices = (_frame_indices(len(result.t), frames, every) if indices is None
               else [int(k) for k in indices])
    top = 0.0  # the colour range's top: the largest over the whole run (the peak between
    if field == "displacement":  # two frames drawn too), of the stresses over the frames
        top = 1e3 * max_displacement(result, bodies)
    elif field == "modal":  # |Φ_j ξ_j| peaks where |ξ_j| does
        for body in (b for b in bodies if mode <= b.n_modes):
            xi = result.q[:, body.start + 6 + mode]
            shape = np.linalg.norm(body.phi[:, mode - 1].reshape(-1, 3), axis=1)
            top = max(top, 1e3 * float(np.max(np.abs(xi))) * float(np.max(shape)))
    else:
        for k in indices:
            for body in bodies:
                top = max(top, float(np.max(_field(result, body, k, field, mode),
                                            initial=0.0)))
    beams = beam_names(result) if field == "stress" else []
    for k in indices:
        for name in beams:
            top = max(top, 1e-6 * float(np.max(node_stress(result, name, k), initial=0.0)))
    if field == "stress" and not beams and not any(
            stress_field_name(result.bodies.get(b.name, {}).get("fields", {})) is not None
            for b in bodies):
        raise ValidationError("field 'stress' needs stress modes in the results (reduce "
                              "the body with --stress, docs/stress.md) or a nonlinear "
                              "beam (docs/nonlinear_beam.md)")
    title = {"displacement": "|u| [mm]",
             "stress": "von Mises [MPa]" if not beams else "stress [MPa]"}.get(
        field, f"|u mode {mode}| [mm]")
    return FrameInfo(indices, float(scale), (0.0, top if top > 0 else 1.0), title,
                     FIELD_UNITS[field])


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
    """One frame as PNG at the output time nearest ``time`` (default: the last), in the
    whole run's framing and display scale (options of :class:`ResultAnimation`);
    returns what was drawn (its colour range is the frame's)."""
    import imageio.v2 as iio

    path = _png_path(path, "snapshot")
    k = len(result.t) - 1 if time is None else frame_index(result, time)
    options.pop("frames", None)
    anim = ResultAnimation(result, indices=[k], **options)
    try:
        with atomic_path(path, "snapshot") as tmp:
            iio.imwrite(tmp, anim.image(k), extension=".png")
    finally:
        anim.close()
    return anim.info


def snapshot_strip(result, path, times, *, window_size=None, **options) -> FrameInfo:
    """The frames at ``times`` [s] (the output times nearest them) in one PNG, in the
    framing, scale and colour range of the whole run (options of
    :class:`ResultAnimation`), with one colour bar for all of them: rows of up to four
    frames, each ``window_size`` (default: as large as keeps the strip within 1800
    pixels, at most 800 × 600; :func:`~flexmbs.post.strips.strip_layout`). Returns what
    was drawn."""
    from .strips import GAP, colour_bar_image, compose, strip_layout

    path = _png_path(path, "snapshot strip")
    times = [float(t) for t in times]
    if not times:
        raise ValidationError("a snapshot strip needs at least one time")
    indices = [frame_index(result, t) for t in times]  # refuses times outside the run
    if window_size is not None:
        window_size = check_window_size(window_size)
    columns, _, panel = strip_layout(len(times), window_size)
    options.pop("colour_bar", None)
    anim = ResultAnimation(result, window_size=panel, colour_bar=False, **options)
    try:
        images = [anim.image(k) for k in indices]
    finally:
        anim.close()
    import imageio.v2 as iio

    rows = -(-len(images) // columns)
    bar = (colour_bar_image(anim.info.clim, anim.info.title,
                            rows * panel[1] + (rows - 1) * GAP) if anim.bodies else None)
    with atomic_path(path, "snapshot strip") as tmp:
        iio.imwrite(tmp, compose(images, columns, bar), extension=".png")
    return anim.info
