"""Mode-shape movies and images of modal data (``flexmbs modes DATA --animate J``):
ū₀ + s sin(2π n/N) Φ_J over one period, titled with the mode's number, frequency [Hz]
and the deformation scale s (docs/post_processing.md, "Mode movies").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._files import atomic_path
from ..errors import ValidationError, WriteError
from .animate import write_video
from .frames import check_scale
from .render import Scene, unstructured
from .scene_parts import LINK_RADIUS, across, extremes, tube_outline
from .sections import corner_nodes, prism_faces, section_points, swept_points


def mode_title(mode: int, frequency_hz: float, scale: float | None = None) -> str:
    """The label of a mode's image: "mode 3: f = 125.7 Hz" and, with ``scale``, the
    deformation scale ("    deformation × 0.05")."""
    text = f"mode {mode}: f = {frequency_hz:.4g} Hz"
    return text if scale is None else f"{text}    deformation × {scale:.3g}"


def _line_section(data, radius: float):
    """(lines, section vertices (k, 2) [m], vertices per loop, section z axis) of modal
    data made of line cells, drawn swept: the beam's outline when its metadata record
    one (:func:`~flexmbs.modal.fe.section_tables.section_outline`), else a tube of
    ``radius`` [m]; None for other meshes."""
    from ..modal.fe.section_tables import section_outline

    if set(data.cells) != {"line"}:
        return None
    lines = np.asarray(data.cells["line"], dtype=np.int64)
    outline = section_outline(data.metadata)
    if outline is not None:
        loops = outline["polygon"]
        pts, counts = section_points(polygon=np.concatenate(loops),
                                     loops=[len(loop) for loop in loops])
        return lines, pts, counts, np.asarray(outline["z_axis"], dtype=float)
    pts, counts = tube_outline(radius)
    return lines, pts, counts, across(np.ptp(data.nodes, axis=0))


def animate_mode(data, mode: int, path, *, frames: int = 24, fps: float = 12.0,
                 scale: float | None = None, camera="iso", window_size=(800, 600),
                 progress=None) -> Path:
    """A movie (.gif, .mp4) of one mode shape of a ModalData over one period, or its
    image at the peak of the period (.png): ū0 + s sin(2π n/frames) Φ_mode, coloured by
    the displacement magnitude per unit ξ (the data's shape units) × |sin|, titled with
    the mode number, its frequency and s. Beams are drawn as their section swept along
    the centreline (a tube sized to the body without a recorded section). Default
    scale: the largest displacement is 10 % of the body's size."""
    if not (isinstance(mode, int) and 1 <= mode <= data.n_modes):
        raise ValidationError(f"mode must be an integer in 1..{data.n_modes}, got {mode!r}")
    if not (isinstance(frames, int) and frames >= 2):
        raise ValidationError(f"frames must be an integer >= 2, got {frames!r}")
    path = Path(path)
    image = path.suffix.lower() == ".png"
    if image and not path.parent.is_dir():
        raise WriteError(f"cannot write {str(path)!r}: folder does not exist")
    shape = data.phi[:, mode - 1].reshape(-1, 3)
    mag = np.linalg.norm(shape, axis=1)
    size = float(max(np.max(np.ptp(data.nodes, axis=0)), 1e-9))
    if scale is None:
        scale = 0.1 * size / float(mag.max()) if mag.max() > 0 else 1.0
    else:  # a mode shape is displacement per unit ξ: the same bound on its peak
        scale = check_scale(scale, float(mag.max()), size)
    cloud = np.vstack([extremes(data.nodes + s * scale * shape) for s in (-1.0, 0.0, 1.0)])
    lo, hi = cloud.min(axis=0), cloud.max(axis=0)
    bounds = [v for pair in zip(lo, hi, strict=True) for v in pair]
    title = mode_title(mode, float(data.frequencies[mode - 1]), scale)
    section = _line_section(data, LINK_RADIUS * size)

    def drawn(s):
        points = data.nodes + scale * s * shape
        if section is None:
            return points, mag * abs(s)
        lines, outline, _, z_axis = section
        corners = corner_nodes(lines, len(outline))
        return swept_points(points, lines, outline, z_axis), (mag * abs(s))[corners]

    def images(phases):
        scene = Scene(bounds, camera, window_size, points=cloud)
        try:
            points, colour = drawn(0.0)
            mesh = (unstructured(points, dict(data.cells)) if section is None
                    else scene.pv.PolyData(points, prism_faces(len(section[0]), section[2],
                                                               section[1])))
            scene.add("mode", mesh, scalars=colour, clim=(0.0, float(mag.max()) or 1.0),
                      scalar_title="|φ| per unit ξ")
            for n, s in enumerate(phases):
                scene.update("mode", *drawn(s))
                scene.text(title)
                yield scene.image()
                if progress is not None:
                    progress(n + 1, len(phases))
        finally:
            scene.close()

    if image:
        import imageio.v2 as iio

        frames_of = images([1.0])
        try:
            picture = next(frames_of)
        finally:
            frames_of.close()
        with atomic_path(path, "mode image") as tmp:
            iio.imwrite(tmp, picture, extension=".png")
        return path
    return write_video(images(np.sin(2 * np.pi * np.arange(frames) / frames)), path, fps)
