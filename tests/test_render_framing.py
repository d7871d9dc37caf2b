"""Report-quality framing of renders (flexmbs.post.render.Scene): the camera frames the
mechanism over the whole run, and the colour bar sits clear of the model. Measured on
the rendered pixels of the seed arm (its 2 s swing, 25 frames)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case, run_case
from flexmbs.post.animate import ResultAnimation
from flexmbs.post.render import LAYOUTS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def arm():
    return run_case(load_case(ROOT / "cases" / "arm_beam_seed.toml",
                              {"solver.output_every": 20}))[1]


def _model_mask(anim, with_bar: bool):
    """Union over the frames of the pixels that are not background (grid off)."""
    if not with_bar:
        anim.scene.plotter.remove_scalar_bar()
    union = None
    for img in anim.images():
        mask = np.any(img < 235, axis=2)
        union = mask if union is None else union | mask
    return union


def test_the_model_fills_the_frame_over_the_whole_run(arm):
    anim = ResultAnimation(arm, grid=False, frames=25)
    try:
        mask = _model_mask(anim, with_bar=False)
    finally:
        anim.close()
    height, width = mask.shape
    mask[: int(0.08 * height), : width // 2] = False  # the time label
    rows, cols = np.nonzero(mask)
    filled = np.ptp(cols) * np.ptp(rows) / (width * height)
    assert filled >= 0.40, filled


def test_the_colour_bar_never_overlaps_the_model(arm):
    anim = ResultAnimation(arm, grid=False, frames=25)
    try:
        layout = anim.scene.layout
        mask = _model_mask(anim, with_bar=False)
    finally:
        anim.close()
    height, width = mask.shape
    bar = LAYOUTS[layout]["bar"]
    # the bar with its labels and title: a margin of 6 % of the window around it
    x0 = int((bar["position_x"] - 0.06) * width)
    x1 = int((bar["position_x"] + bar["width"] + 0.06) * width)
    y0 = int((1 - bar["position_y"] - bar["height"] - 0.06) * height)
    y1 = int((1 - bar["position_y"] + 0.06) * height)
    assert not mask[max(y0, 0):y1, max(x0, 0):x1].any()


def test_snapshot_strip_puts_the_chosen_times_side_by_side(arm, tmp_path, capsys):
    """flexmbs snapshot --times 0,1,2: three 560 x 420 frames side by side (8-pixel gaps;
    the largest 4:3 frames that keep the strip within 1800 pixels) and one colour bar
    on the right; each frame is the one ResultAnimation draws at that output time
    without a colour bar; a time outside the run is refused by name (exit 2)."""
    import imageio.v2 as iio

    from flexmbs.cli.main import main

    res_path = tmp_path / "arm.res.h5"
    arm.save(res_path)
    out = tmp_path / "strip.png"
    assert main(["snapshot", str(res_path), "--times", "0,1,2", "-o", str(out)]) == 0
    strip = iio.imread(out)[..., :3]
    assert strip.shape == (420, 3 * 560 + 3 * 8 + 90, 3)
    anim = ResultAnimation(arm, window_size=(560, 420), colour_bar=False)
    try:  # the same sequence of renders (VTK's text placement follows the previous one)
        anim.image(0)
        middle = anim.image(int(np.argmin(np.abs(arm.t - 1.0))))
    finally:
        anim.close()
    np.testing.assert_array_equal(strip[:, 568:1128], middle)
    assert main(["snapshot", str(res_path), "--times", "0,7", "-o", str(out)]) == 2
    assert "time 7 s is outside the results" in capsys.readouterr().err


@settings(max_examples=30, deadline=None)
@given(semi=st.lists(st.floats(0.01, 2.0), min_size=3, max_size=3),
       q=st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
           lambda v: np.linalg.norm(v) > 0.1),
       mass=st.floats(0.1, 100.0))
def test_a_uniform_ellipsoid_is_drawn_as_itself(semi, q, mass):
    """The inertia ellipsoid of a uniform solid ellipsoid (I = m/5 (b² + c²), … about its
    centre, turned by a random rotation) has the ellipsoid's own semi-axes and axes."""
    from flexmbs.frame.rotations import rotation_matrix
    from flexmbs.post.scene_parts import inertia_ellipsoid

    a, b, c = semi
    rot = rotation_matrix(np.asarray(q) / np.linalg.norm(q))
    inertia = rot @ np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) @ rot.T * mass / 5
    centre, axes, found = inertia_ellipsoid(mass, inertia, [0.1, 0.2, 0.3])
    order = np.argsort(found)
    np.testing.assert_allclose(found[order], np.sort(semi), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(centre, [0.1, 0.2, 0.3])
    for k, axis in zip(order, found[order], strict=True):  # each axis carries its length
        match = int(np.argmin(np.abs(np.array(semi) - axis)))
        if np.sum(np.isclose(semi, axis, rtol=1e-6)) == 1:
            assert abs(abs(axes[:, k] @ rot[:, match]) - 1) < 1e-6


def test_the_ellipsoid_mesh_has_the_inertia_of_the_body():
    """The drawn ellipsoid's surface, filled with the body's mass uniformly (pyvista's
    volume of the closed mesh, inertia by the divergence theorem over its triangles), has
    the body's inertia within the faceting error (2 %)."""
    import pyvista as pv

    from flexmbs.post.scene_parts import ellipsoid_mesh, inertia_ellipsoid

    mass, inertia = 3.0, np.array([[0.04, 0.005, 0.0], [0.005, 0.03, 0.0], [0.0, 0.0, 0.02]])
    mesh = ellipsoid_mesh(pv, inertia_ellipsoid(mass, inertia, np.zeros(3)), 0.0)
    tris = mesh.triangulate().faces.reshape(-1, 4)[:, 1:]
    corners = np.asarray(mesh.points)[tris]  # (n, 3, 3) tetrahedra with the origin
    volume = np.einsum("ni,ni->n", corners[:, 0], np.cross(corners[:, 1], corners[:, 2])) / 6
    # second moments of each tetrahedron (origin, p1, p2, p3): V/20 (Σ p pᵀ + s sᵀ)
    total = corners.sum(axis=1)
    second = (np.einsum("n,nki,nkj->ij", volume, corners, corners)
              + np.einsum("n,ni,nj->ij", volume, total, total)) / 20
    density = mass / volume.sum()
    found = density * (np.trace(second) * np.eye(3) - second)
    np.testing.assert_allclose(found, inertia, rtol=0, atol=0.02 * np.max(np.abs(inertia)))


def test_the_ground_grid_is_dimensioned(arm):
    """The grid's squares have a round size (1, 2 or 5 × 10ᵏ m) stated in the label, and
    its lines are that far apart (projected grid corners against the stated size)."""
    from flexmbs.post.render import format_length, nice_length

    assert [nice_length(v) for v in (0.0937, 0.17, 0.42, 3.1)] == [0.05, 0.1, 0.2, 2.0]
    assert format_length(0.05) == "5 cm" and format_length(2.0) == "2 m"
    anim = ResultAnimation(arm)
    try:
        spacing = anim.scene.grid_spacing
        assert spacing == nice_length(spacing)
        anim.image(0)
        label = anim.scene._text.GetText(2)  # the upper-left corner's text
        assert label.endswith(f"grid {format_length(spacing)}")
        plane = next(a for a in anim.scene.plotter.renderer.actors.values()
                     if a.mapper.dataset.n_points > 100 and "colour"
                     not in a.mapper.dataset.point_data)
        xs = np.unique(np.round(plane.mapper.dataset.points[:, 0], 6))
        np.testing.assert_allclose(np.diff(xs), spacing, rtol=1e-5)  # float32 points
    finally:
        anim.close()


@pytest.mark.parametrize("camera", ["auto", "xy", "iso"])
def test_the_axes_triad_points_along_the_global_axes(arm, camera):
    """With ``axes=True`` the lower left corner gains three coloured arrows (the pixels
    that differ from the same frame without them); each colour's centroid lies from the
    triad's origin (least squares over the three) along its global axis as the camera
    projects it, within 12°, for every axis not seen end-on."""
    from flexmbs.post.render import AXES_COLOURS, AXES_VIEWPORT

    def frame(axes):
        anim = ResultAnimation(arm, window_size=(480, 360), indices=[len(arm.t) - 1],
                               camera=camera, axes=axes)
        try:
            img = anim.image(len(arm.t) - 1).astype(float)
            cam = anim.scene.plotter.camera
            view = np.subtract(cam.focal_point, cam.position)
            view /= np.linalg.norm(view)
            up = np.asarray(cam.up, float)
            up -= (up @ view) * view
            up /= np.linalg.norm(up)
            return img, np.cross(view, up), up
        finally:
            anim.close()

    bare, right, up = frame(False)
    drawn = frame(True)[0]
    height, width = bare.shape[:2]
    changed = np.abs(drawn - bare).sum(axis=2) > 60
    rows, cols = np.nonzero(changed)
    assert len(rows) > 50, "no axes triad drawn"
    assert cols.max() <= AXES_VIEWPORT[2] * width + 1
    assert rows.min() >= (1 - AXES_VIEWPORT[3]) * height - 1
    centroids, directions = [], []
    for k, hexcode in enumerate(AXES_COLOURS.values()):
        colour = np.array([int(hexcode[i:i + 2], 16) for i in (1, 3, 5)], float)
        near = changed & (np.abs(drawn - colour).max(axis=2) < 90)
        r, c = np.nonzero(near)
        assert len(r) > 5, f"axis {'xyz'[k]} not drawn"
        centroids.append(np.array([c.mean(), -r.mean()]))  # x right, y up on screen
        directions.append(np.array([right[k], up[k]]))
    # origin o: (c_k - o) parallel to d_k, i.e. cross(d_k, o) = cross(d_k, c_k)
    a = np.array([[-d[1], d[0]] for d in directions])
    b = np.array([d[0] * c[1] - d[1] * c[0] for c, d in zip(centroids, directions,
                                                           strict=True)])
    origin = np.linalg.lstsq(a, b, rcond=None)[0]
    for k, (c, d) in enumerate(zip(centroids, directions, strict=True)):
        if np.linalg.norm(d) < 0.4:  # seen nearly end-on: a dot at the origin
            continue
        seen = c - origin
        angle = np.degrees(np.arccos(seen @ d / np.linalg.norm(seen) / np.linalg.norm(d)))
        assert angle < 12, f"axis {'xyz'[k]}: {angle:.1f}° off its projection"
