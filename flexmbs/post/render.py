"""A small off-screen pyvista scene whose meshes are updated in place from frame to frame
(no re-meshing per frame), with a fixed camera and a fixed colour range so that frames
compare pixel by pixel.
"""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError

#: Named camera directions: (view direction from the scene centre to the camera, up).
CAMERAS = {
    "xy": ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0)),
    "xz": ((0.0, -1.0, 0.0), (0.0, 0.0, 1.0)),
    "yz": ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
    "iso": ((1.0, -1.0, 0.8), (0.0, 0.0, 1.0)),
}


#: Image sides [pixels]: below 16 nothing is legible; above 8192 the off-screen frame
#: buffer (8192² RGBA = 256 MB, and more for depth) exceeds what OpenGL drivers allocate,
#: and VTK aborts the process instead of raising.
MIN_WINDOW, MAX_WINDOW = 16, 8192


def check_window_size(window_size, what: str = "window_size") -> tuple[int, int]:
    """(width, height) as ints, after refusing (ValidationError naming the value) sizes
    that are not two whole numbers in [MIN_WINDOW, MAX_WINDOW]."""
    try:
        w, h = (int(v) for v in window_size)
        exact = all(float(v) == int(v) for v in window_size)
    except (TypeError, ValueError):
        exact = False
    if not exact or not (MIN_WINDOW <= w <= MAX_WINDOW and MIN_WINDOW <= h <= MAX_WINDOW):
        raise ValidationError(f"{what} {window_size!r}: width and height must be whole "
                              f"numbers of pixels from {MIN_WINDOW} to {MAX_WINDOW}")
    return w, h


def _pyvista():
    import pyvista as pv

    pv.OFF_SCREEN = True
    _quiet_vtk()
    return pv


def _quiet_vtk() -> None:
    """VTK's log to stderr at errors only: off-screen rendering without a display makes
    it warn "bad X server connection" on every render, which says nothing to a user."""
    try:
        from vtkmodules.vtkCommonCore import vtkLogger
    except ImportError:  # an older VTK without the logger: nothing to quieten
        return
    vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_ERROR)


def unstructured(points, cells: dict):
    """pyvista UnstructuredGrid of ``points`` and meshio-style ``cells``
    ({type: connectivity}); a bare point cloud gets vertex cells."""
    import meshio

    pv = _pyvista()
    blocks = [meshio.CellBlock(t, np.asarray(c, dtype=np.int64)) for t, c in cells.items()]
    if not blocks:
        blocks = [meshio.CellBlock("vertex", np.arange(len(points))[:, None])]
    return pv.from_meshio(meshio.Mesh(np.asarray(points, dtype=float), blocks))


def auto_camera(bounds, up=None) -> str | tuple:
    """The view of ``bounds``: for a planar motion (one extent below 5 % of the largest)
    30° off the plane's normal, so the plane shows nearly in full and still in depth;
    otherwise "iso".

    With the world's ``up`` direction (a unit vector, :func:`world_up`) the view is
    (direction, camera up) with the camera's up along ``up`` as seen from there: a
    vertical plane is seen from 30° above, a horizontal one from 30° off the vertical,
    on the side of ``up``; anything else from :func:`iso_view` of ``up``."""
    b = np.asarray(bounds, dtype=float)
    extent = b[1::2] - b[0::2]
    thin = int(np.argmin(extent))
    planar = extent[thin] < 0.05 * np.max(extent)
    if up is None:
        if not planar:
            return "iso"
        normal = np.eye(3)[thin]
        first = np.eye(3)[(thin + 1) % 3]  # the plane's first in-plane axis, tilted towards
        direction = np.cos(np.radians(30)) * normal - np.sin(np.radians(30)) * first
        cam_up = np.cross(np.cross(direction, np.eye(3)[(thin + 2) % 3]), direction)
        return tuple(direction), tuple(cam_up / np.linalg.norm(cam_up))
    up = _unit(up)
    if not planar:
        return iso_view(up)
    normal = np.eye(3)[thin]
    tilt = np.sin(np.radians(30))
    if abs(normal @ up) >= np.cos(np.radians(45)):  # a horizontal plane: seen from above
        normal = normal * np.sign(normal @ up)
        slope = up - (up @ normal) * normal  # up's part in the plane (a tilted plane)
        if np.linalg.norm(slope) > 1e-6:  # tilt away from it: the camera stays below up
            away = _unit(slope)
        else:
            a = horizontal_axes(up)[0]
            away = _unit(a - (a @ normal) * normal)
        direction = np.cos(np.radians(30)) * normal - tilt * away
    else:  # a vertical plane: from its normal's side, horizontally, then 30° above (a
        # plane tilted by up to 45° from vertical: its normal's horizontal part)
        level = _unit(normal - (normal @ up) * up)
        direction = np.cos(np.radians(30)) * level + tilt * up
    return tuple(_unit(direction)), tuple(camera_up(up, direction))


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def world_up(gravity) -> np.ndarray | None:
    """The world's up direction, −g/|g|, of a gravity vector [m/s²]; None without
    gravity (None, or a zero vector)."""
    if gravity is None:
        return None
    g = np.asarray(gravity, dtype=float).reshape(-1)
    if g.size != 3 or not np.all(np.isfinite(g)) or not np.any(g):
        return None
    return -g / np.linalg.norm(g)


def horizontal_axes(up) -> tuple[np.ndarray, np.ndarray]:
    """(a, b): unit vectors perpendicular to ``up`` with (a, b, up) right-handed; a is
    the world axis after ``up``'s nearest one (x for up = z, z for up = y, y for up =
    x), made perpendicular to ``up``."""
    up = _unit(up)
    k = int(np.argmax(np.abs(up)))
    e = np.eye(3)[(k + 1) % 3]
    a = _unit(e - (e @ up) * up)
    return a, np.cross(up, a)


def iso_view(up) -> tuple:
    """(direction, camera up) of the isometric view with ``up`` up: direction a − b +
    0.8 up in :func:`horizontal_axes` (for up = z, the "iso" camera of :data:`CAMERAS`)."""
    a, b = horizontal_axes(up)
    direction = _unit(a - b + 0.8 * _unit(up))
    return tuple(direction), tuple(camera_up(up, direction))


def camera_up(up, direction, fallback=None) -> np.ndarray:
    """``up`` made perpendicular to the view ``direction`` (unit); ``fallback`` (or the
    world axis least aligned with the direction) when the two are nearly parallel."""
    d = _unit(direction)
    up = _unit(up)
    if abs(up @ d) > 0.99:
        up = (_unit(fallback) if fallback is not None
              else np.eye(3)[int(np.argmin(np.abs(d)))])
    v = up - (up @ d) * d
    return v / np.linalg.norm(v)


#: Names of --view-up: the world axes and their opposites.
AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0),
        "-x": (-1.0, 0.0, 0.0), "-y": (0.0, -1.0, 0.0), "-z": (0.0, 0.0, -1.0)}


def parse_view_up(text, gravity=None) -> np.ndarray | None:
    """The world's up direction of a render: "auto" (default: −g of ``gravity``, None
    without gravity), "none" (no up: the floor grid under z, the views of a model
    without gravity), an axis name of :data:`AXES`, or "ux,uy,uz"; a 3-vector is taken
    as it is. Raises ValidationError naming a value it cannot read."""
    if text is None or (isinstance(text, str) and text == "auto"):
        return world_up(gravity)
    if isinstance(text, str):
        if text == "none":
            return None
        if text in AXES:
            return np.array(AXES[text])
        try:
            values = [float(v) for v in text.split(",")]
        except ValueError:
            values = []
    else:
        try:
            values = [float(v) for v in np.asarray(text, dtype=float).reshape(-1)]
        except (TypeError, ValueError):
            values = []
    vector = np.asarray(values, dtype=float)
    if vector.size != 3 or not np.all(np.isfinite(vector)) or not np.any(vector):
        raise ValidationError(f"view up {text!r}: use auto, none, one of "
                              f"{', '.join(AXES)} or a non-zero vector 'ux,uy,uz'")
    return vector / np.linalg.norm(vector)


def parse_camera(text: str | None):
    """``None``/"auto" (:func:`auto_camera`)/"xy"/"xz"/"yz"/"iso", or
    "px,py,pz;fx,fy,fz;ux,uy,uz" (position, focal point, view-up)."""
    if text is None or text == "auto":
        return "auto"
    if text in CAMERAS:
        return text
    try:
        parts = [tuple(float(v) for v in part.split(",")) for part in text.split(";")]
    except ValueError:
        parts = []
    if len(parts) != 3 or any(len(p) != 3 for p in parts):
        raise ValidationError(f"camera {text!r}: use one of {sorted(CAMERAS)} or "
                              "'px,py,pz;fx,fy,fz;ux,uy,uz'")
    return parts


#: The layouts of a frame: where the model is drawn, (left, right, top, bottom)
#: fractions of the window, clear of the time label (top 7 %) and of the colour bar,
#: which stands on the right (tall models) or lies along the bottom (wide ones); "none"
#: for a frame without a colour bar (the panels of a snapshot strip, which share one).
LAYOUTS = {
    "none": {"region": (0.03, 0.97, 0.09, 0.96), "bar": None},
    "right": {"region": (0.03, 0.76, 0.09, 0.96),
              "bar": {"vertical": True, "position_x": 0.8, "position_y": 0.1,
                      "width": 0.07, "height": 0.7}},
    "bottom": {"region": (0.03, 0.97, 0.09, 0.80),
               "bar": {"vertical": False, "position_x": 0.2, "position_y": 0.02,
                       "width": 0.6, "height": 0.1}},
}
MODEL_REGION = LAYOUTS["right"]["region"]
#: The axes triad (on request): its corner of the frame (xmin, ymin, xmax, ymax
#: fractions, from the lower left) and the colours of the global x, y and z axes.
AXES_VIEWPORT = (0.0, 0.0, 0.2, 0.25)
AXES_COLOURS = {"x": "#d62728", "y": "#2ca02c", "z": "#1f3fd6"}


def nice_length(value: float) -> float:
    """The round length (1, 2 or 5 × 10ᵏ m) nearest ``value`` [m] from below."""
    exponent = np.floor(np.log10(value))
    base = value / 10**exponent
    return float(max(m for m in (1.0, 2.0, 5.0) if m <= base + 1e-12) * 10**exponent)


def format_length(value: float) -> str:
    """A length [m] in mm, cm or m, whichever reads best (``0.05`` → ``5 cm``)."""
    for unit, factor in (("m", 1.0), ("cm", 1e-2), ("mm", 1e-3), ("µm", 1e-6)):
        if value >= factor - 1e-15:
            return f"{value / factor:g} {unit}"
    return f"{value:g} m"


class Scene:
    """Off-screen plotter with updatable meshes.

    Parameters
    ----------
    bounds : (xmin, xmax, ymin, ymax, zmin, zmax) of everything over all frames [m];
        sets the camera and the ground grid once.
    camera : "auto", a name of :data:`CAMERAS`, (direction, camera up), or (position,
        focal point, view-up).
    window_size : (width, height) [pixels].
    points : (n, 3) every point the model takes [m] (framing; the grid's level).
    up : the world's up direction (:func:`world_up`: −g of the model's gravity), or
        None. With it the ground grid lies across ``up`` under the scene and the
        camera keeps ``up`` up (:func:`auto_camera`; the named views keep it when they
        do not look along it); without it the grid lies across z and the views are
        those of :data:`CAMERAS`.
    colour_bar : draw the colour bar of coloured meshes (False: the "none" layout, the
        model drawn over the whole frame).
    axes : draw the global frame's axes triad (x red, y green, z blue, the colours of
        :data:`AXES_COLOURS`) in the lower left corner, turned with the camera.
    """

    def __init__(self, bounds, camera="auto", window_size=(800, 600), grid: bool = True,
                 points=None, up=None, colour_bar: bool = True, axes: bool = False):
        window_size = check_window_size(window_size)
        pv = _pyvista()
        self.pv = pv
        self.plotter = pv.Plotter(off_screen=True, window_size=list(window_size))
        self.plotter.set_background("white")
        self.meshes: dict[str, object] = {}
        self.colour_bar = bool(colour_bar)
        b = np.asarray(bounds, dtype=float)
        lo, hi = b[0::2], b[1::2]
        center = 0.5 * (lo + hi)
        size = float(max(np.max(hi - lo), 1e-6))
        self.size = size
        #: the world's up direction (unit vector; None: z for the grid, views as without
        #: gravity), which the floor grid lies across and the camera keeps up
        self.up = None if up is None else _unit(up)
        #: side of the ground grid's squares [m] (None without a grid), a round number
        #: that the frame's label states
        self.grid_spacing = None
        if grid:
            spacing = nice_length(0.1 * size)
            count = int(np.ceil(1.2 * size / spacing))
            self.plotter.add_mesh(self._floor(pv, b, points, spacing, count),
                                  style="wireframe", color="#c8c8c8", line_width=1)
            self.grid_spacing = spacing
        camera = parse_camera(camera) if isinstance(camera, str) or camera is None else camera
        if camera == "auto":
            camera = auto_camera(b, self.up)
        elif camera == "iso" and self.up is not None:
            camera = iso_view(self.up)
        if isinstance(camera, str) or (len(camera) == 2):
            direction, view_up = (np.asarray(v, dtype=float) for v in
                                  (CAMERAS[camera] if isinstance(camera, str) else camera))
            direction /= np.linalg.norm(direction)
            if self.up is not None:  # a named axis view keeps the world's up if it can
                view_up = camera_up(self.up, direction, fallback=view_up)
            position = center + 2.0 * size * direction
            self.plotter.camera_position = [tuple(position), tuple(center), tuple(view_up)]
            # fit the scene's bounds (over all frames) once; the camera then stays put
            self.plotter.renderer.ResetCamera(*[float(v) for v in b])
            self.layout = self._pick_layout(b, points)
            self.fit(b, region=LAYOUTS[self.layout]["region"], points=points)
        else:
            self.plotter.camera_position = [tuple(v) for v in camera]
            self.layout = "right" if self.colour_bar else "none"
        self._text = None
        if axes:
            self.plotter.add_axes(interactive=False, line_width=3, color="black",
                                  viewport=AXES_VIEWPORT, **{
                                      f"{k}_color": c for k, c in AXES_COLOURS.items()})

    def _floor(self, pv, bounds, points, spacing: float, count: int):
        """The ground grid: ``count`` × ``count`` squares of side ``spacing`` [m] under
        the scene, across z (no up direction) or across :attr:`up`, its lines along
        :func:`horizontal_axes`, 2 % of the scene below the lowest point."""
        lo, hi = bounds[0::2], bounds[1::2]
        center = 0.5 * (lo + hi)
        side = count * spacing
        if self.up is None:
            return pv.Plane(center=(center[0], center[1], lo[2] - 0.02 * self.size),
                            direction=(0, 0, 1), i_size=side, j_size=side,
                            i_resolution=count, j_resolution=count)
        cloud = (np.asarray(points, dtype=float) if points is not None else
                 np.array([[x, y, z] for x in bounds[0:2] for y in bounds[2:4]
                           for z in bounds[4:6]]))
        level = float(np.min(cloud @ self.up)) - 0.02 * self.size
        origin = center + (level - center @ self.up) * self.up
        plane = pv.Plane(center=(0.0, 0.0, 0.0), direction=(0, 0, 1), i_size=side,
                         j_size=side, i_resolution=count, j_resolution=count)
        a, b = horizontal_axes(self.up)
        local = np.asarray(plane.points, dtype=float)
        plane.points = origin + local[:, :1] * a + local[:, 1:2] * b
        return plane

    def _pick_layout(self, bounds, points) -> str:
        """The layout in which the model's projection (at the current view direction)
        can be drawn largest."""
        if not self.colour_bar:
            return "none"
        b = np.asarray(bounds, dtype=float)
        cloud = (np.asarray(points, dtype=float) if points is not None else
                 np.array([[x, y, z] for x in b[0:2] for y in b[2:4] for z in b[4:6]]))
        rows, cols = self.project(cloud).T
        span_x, span_y = max(np.ptp(cols), 1e-9), max(np.ptp(rows), 1e-9)
        width, height = self.plotter.window_size

        def drawn_area(name):
            left, right, top, bottom = LAYOUTS[name]["region"]
            zoom = min((right - left) * width / span_x, (bottom - top) * height / span_y)
            return zoom * zoom * span_x * span_y

        return max(("right", "bottom"), key=drawn_area)

    def fit(self, bounds, region=MODEL_REGION, iterations: int = 8, points=None) -> None:
        """Zoom and pan the camera (its direction kept) so that ``points`` (every point
        the model takes over the run; default: the corners of the box ``bounds``)
        project as large as they can inside ``region`` = (left, right, top, bottom)
        fractions of the window: the model clear of the colour bar on the right and of
        the label on top."""
        b = np.asarray(bounds, dtype=float)
        corners = (np.asarray(points, dtype=float) if points is not None else
                   np.array([[x, y, z] for x in b[0:2] for y in b[2:4] for z in b[4:6]]))
        width, height = self.plotter.window_size
        left, right, top, bottom = region
        camera = self.plotter.camera
        for _ in range(iterations):
            rows, cols = self.project(corners).T
            span_x, span_y = np.ptp(cols), np.ptp(rows)
            if span_x <= 0 or span_y <= 0:
                return
            zoom = min((right - left) * width / span_x, (bottom - top) * height / span_y)
            # pan: the box's pixel centre onto the region's, moving camera and focus
            dx = 0.5 * (left + right) * width - 0.5 * (cols.min() + cols.max())
            dy = 0.5 * (top + bottom) * height - 0.5 * (rows.min() + rows.max())
            position = np.array(camera.position)
            focal = np.array(camera.focal_point)
            distance = np.linalg.norm(position - focal)
            view = (focal - position) / distance
            up = np.array(camera.up)
            up = up - (up @ view) * view
            up /= np.linalg.norm(up)
            right_dir = np.cross(view, up)
            per_pixel = 2 * distance * np.tan(np.radians(camera.view_angle) / 2) / height
            shift = per_pixel * (-dx * right_dir + dy * up)
            camera.position = tuple(position + shift)
            camera.focal_point = tuple(focal + shift)
            camera.zoom(float(np.clip(zoom, 0.5, 2.0)) ** 0.9)
            self.plotter.renderer.ResetCameraClippingRange()
            if abs(zoom - 1) < 0.01 and abs(dx) < 1 and abs(dy) < 1:
                return

    def add(self, name: str, mesh, *, scalars=None, clim=None, scalar_title=None,
            color="#5b7fa8", line_width: float | None = None, opacity=1.0) -> None:
        """Add ``mesh`` (kept by reference: update its points/scalars, then render).
        Lines are drawn as tubes ``line_width`` pixels wide (default: 1/130 of the
        window width)."""
        if line_width is None:
            line_width = max(2.0, self.plotter.window_size[0] / 130)
        kwargs = dict(render_lines_as_tubes=True, line_width=line_width, opacity=opacity,
                      show_edges=False)
        if scalars is not None:
            mesh.point_data["colour"] = np.asarray(scalars, dtype=float)
            kwargs.update(scalars="colour", clim=list(clim), cmap="viridis",
                          show_scalar_bar=self.colour_bar)
            if self.colour_bar:
                kwargs["scalar_bar_args"] = {"title": scalar_title or "", "color": "black",
                                             "fmt": "%.3g", **LAYOUTS[self.layout]["bar"],
                                             "title_font_size": 14, "label_font_size": 12}
        else:
            kwargs["color"] = color
        self.plotter.add_mesh(mesh, **kwargs)
        self.meshes[name] = mesh

    def update(self, name: str, points=None, scalars=None) -> None:
        mesh = self.meshes[name]
        if points is not None:
            mesh.points = np.asarray(points, dtype=float)
        if scalars is not None:
            mesh.point_data["colour"] = np.asarray(scalars, dtype=float)

    def text(self, text: str) -> None:
        """The frame's label (upper left), replacing the previous one; it states the
        ground grid's square size."""
        if self._text is not None:
            self.plotter.remove_actor(self._text)
        if self.grid_spacing is not None:
            text = f"{text}    grid {format_length(self.grid_spacing)}"
        self._text = self.plotter.add_text(text, position="upper_left", font_size=11,
                                           color="black")

    def project(self, points) -> np.ndarray:
        """Pixel (row, column) of world points [m] in :meth:`image` (row 0 at the top):
        the camera's composite projection, as VTK's WorldToDisplay, for all at once."""
        renderer = self.plotter.renderer
        width, height = self.plotter.window_size
        matrix = renderer.GetActiveCamera().GetCompositeProjectionTransformMatrix(
            renderer.GetTiledAspectRatio(), 0, 1)
        m = np.array([[matrix.GetElement(i, j) for j in range(4)] for i in range(4)])
        pts = np.atleast_2d(np.asarray(points, dtype=float))
        view = np.hstack([pts, np.ones((len(pts), 1))]) @ m.T
        view = view[:, :3] / view[:, 3:4]
        x0, y0, x1, y1 = renderer.GetViewport()
        x = (view[:, 0] + 1.0) * (width * (x1 - x0)) / 2.0 + width * x0
        y = (view[:, 1] + 1.0) * (height * (y1 - y0)) / 2.0 + height * y0
        return np.column_stack([height - 1 - y, x])

    def _project_one_by_one(self, points) -> np.ndarray:
        """:meth:`project` through VTK's own WorldToDisplay, point by point (the
        reference of the tests)."""
        renderer = self.plotter.renderer
        height = self.plotter.window_size[1]
        out = []
        for p in np.atleast_2d(np.asarray(points, dtype=float)):
            renderer.SetWorldPoint(float(p[0]), float(p[1]), float(p[2]), 1.0)
            renderer.WorldToDisplay()
            x, y, _ = renderer.GetDisplayPoint()
            out.append((height - 1 - y, x))
        return np.array(out)

    def image(self) -> np.ndarray:
        """The rendered frame, (height, width, 3) uint8."""
        self.plotter.render()
        return np.asarray(self.plotter.screenshot(return_img=True))

    def close(self) -> None:
        self.plotter.close()
