"""The renders' up direction (flexmbs.post.render): with gravity the camera keeps −g up
and the floor grid lies across it under the model; without gravity (or with
``view_up="none"``) the views and the grid are those of a model without gravity.
Checked on the camera and grid parameters and on projected points, not on pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case, run_case
from flexmbs.cli.main import main
from flexmbs.errors import ValidationError
from flexmbs.post.animate import ResultAnimation
from flexmbs.post.render import Scene, parse_view_up, world_up

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def vertical_arm():
    """The steel arm moving in its vertical x-y plane under gravity −y."""
    return run_case(load_case(ROOT / "cases" / "arm_vertical_pd.toml",
                              {"solver.output_every": 50, "bodies.beam.modes": 4}))[1]


@pytest.fixture(scope="module")
def seed_arm():
    """The seed arm in its horizontal x-y plane, no gravity."""
    return run_case(load_case(ROOT / "cases" / "arm_beam_seed.toml",
                              {"solver.t_end": 0.5, "solver.output_every": 50}))[1]


def _view(scene):
    cam = scene.plotter.camera
    position, focal = np.array(cam.position), np.array(cam.focal_point)
    return (focal - position) / np.linalg.norm(focal - position), np.array(cam.up), focal


def _grid_points(scene):
    actor = next(a for a in scene.plotter.renderer.actors.values()
                 if a.mapper.dataset.n_points > 100
                 and "colour" not in a.mapper.dataset.point_data)
    return np.asarray(actor.mapper.dataset.points, dtype=float)


def _model_points(anim):
    return np.vstack([np.asarray(m.points) for m in anim.scene.meshes.values()])


def _appears_vertical(scene, focal, up):
    """A short segment along ``up`` at the focal point, in pixels: (column shift,
    row shift); up on the screen is a negative row shift."""
    (r0, c0), (r1, c1) = scene.project([focal, focal + 0.05 * scene.size * up])
    return c1 - c0, r1 - r0


def test_a_vertical_arm_stands_on_a_floor_across_gravity(vertical_arm):
    assert vertical_arm.model["gravity"] == [0.0, -9.81, 0.0]
    anim = ResultAnimation(vertical_arm, window_size=(400, 300))
    try:
        scene = anim.scene
        up = np.array([0.0, 1.0, 0.0])
        np.testing.assert_allclose(scene.up, up)
        view, cam_up, focal = _view(scene)
        # the isometric view turned so that y is up (from +z, −x, above: a − b + 0.8 up
        # with a = z, b = x), the camera's up −g as seen from there
        np.testing.assert_allclose(-view, np.array([-1.0, 0.8, 1.0]) / np.sqrt(2.64),
                                   atol=1e-9)
        assert abs(cam_up @ view) < 1e-9
        assert cam_up @ up == pytest.approx(np.sqrt(1 - 0.64 / 2.64), abs=1e-9)
        shift_col, shift_row = _appears_vertical(scene, focal, up)
        assert shift_row < -5 and abs(shift_col) < 1e-6 * abs(shift_row)
        # the floor: across y, 2 % of the scene below the lowest point the arm reaches
        grid = _grid_points(scene)
        cloud = anim.extent.cloud  # what the camera frames
        lowest = float(np.min(cloud[:, 1]))
        np.testing.assert_allclose(grid[:, 1], lowest - 0.02 * scene.size, atol=1e-5)
        assert np.ptp(grid[:, 0]) > 1.0 and np.ptp(grid[:, 2]) > 1.0
        assert np.min(_model_points(anim)[:, 1]) > grid[0, 1]
    finally:
        anim.close()


def test_without_gravity_the_views_are_unchanged(vertical_arm, seed_arm):
    """No gravity (the seed arm), or view_up="none": the floor lies across z under
    the scene and the view is the "iso" camera, from (1, −1, 0.8) with z up."""
    assert seed_arm.model["gravity"] == [0.0, 0.0, 0.0]
    for result, options in ((seed_arm, {}), (vertical_arm, {"view_up": "none"})):
        anim = ResultAnimation(result, window_size=(400, 300), **options)
        try:
            scene = anim.scene
            assert scene.up is None
            view, cam_up, _ = _view(scene)
            np.testing.assert_allclose(-view, np.array([1.0, -1.0, 0.8]) / np.sqrt(2.64),
                                       atol=1e-9)
            np.testing.assert_allclose(cam_up, [0.0, 0.0, 1.0], atol=1e-12)
            grid = _grid_points(scene)
            assert np.ptp(grid[:, 2]) < 1e-6 and np.ptp(grid[:, 0]) > 0.5
        finally:
            anim.close()
    # an older results file, written before the model recorded its gravity
    del vertical_arm.model["gravity"]
    try:
        anim = ResultAnimation(vertical_arm, window_size=(200, 150))
        assert anim.scene.up is None
        anim.close()
    finally:
        vertical_arm.model["gravity"] = [0.0, -9.81, 0.0]


def test_view_up_on_request_and_named_views(vertical_arm):
    anim = ResultAnimation(vertical_arm, view_up="z", camera="xy", window_size=(200, 150))
    try:  # looking along z, the requested up cannot be kept: the view's own up (y)
        np.testing.assert_allclose(_view(anim.scene)[1], [0.0, 1.0, 0.0], atol=1e-12)
        np.testing.assert_allclose(_grid_points(anim.scene)[:, 2],
                                   _grid_points(anim.scene)[0, 2], atol=1e-6)
    finally:
        anim.close()
    anim = ResultAnimation(vertical_arm, camera="xz", window_size=(200, 150))
    try:  # looking along y (gravity), z up as the view says
        np.testing.assert_allclose(_view(anim.scene)[1], [0.0, 0.0, 1.0], atol=1e-12)
    finally:
        anim.close()
    anim = ResultAnimation(vertical_arm, camera="yz", window_size=(200, 150))
    try:  # looking along x, y up
        np.testing.assert_allclose(_view(anim.scene)[1], [0.0, 1.0, 0.0], atol=1e-12)
    finally:
        anim.close()


def test_view_up_values_and_errors(tmp_path, vertical_arm, capsys):
    np.testing.assert_allclose(parse_view_up("auto", [0, 0, -9.81]), [0, 0, 1])
    assert parse_view_up("auto", [0, 0, 0]) is None and parse_view_up("auto") is None
    assert parse_view_up("none", [0, -9.81, 0]) is None
    np.testing.assert_allclose(parse_view_up("-x"), [-1, 0, 0])
    np.testing.assert_allclose(parse_view_up("0,3,4"), [0, 0.6, 0.8])
    np.testing.assert_allclose(world_up([3.0, 0.0, -4.0]), [-0.6, 0.0, 0.8])
    for bad in ("0,0,0", "up", "1,2", "nan,0,1"):
        with pytest.raises(ValidationError, match=f"view up '{bad}'"):
            parse_view_up(bad)
    res = tmp_path / "arm.res.h5"
    vertical_arm.save(res)
    assert main(["animate", str(res), "-o", str(tmp_path / "a.png"), "--size", "160x120",
                 "--view-up", "sideways"]) == 2
    assert "view up 'sideways'" in capsys.readouterr().err
    assert main(["snapshot", str(res), "--times", "0,0.5", "-o", str(tmp_path / "s.png"),
                 "--size", "160x120", "--view-up=-z"]) == 0


@settings(max_examples=8, deadline=None)
@given(gravity=st.tuples(*[st.floats(-1.0, 1.0)] * 3).filter(
           lambda g: np.linalg.norm(g) > 0.2),
       extent=st.tuples(*[st.floats(0.01, 1.0)] * 3), seed=st.integers(0, 100))
@example(gravity=(0.0, 1.0, 1.0), extent=(1.0, 0.03125, 1.0), seed=0)  # a plane at 45°
@example(gravity=(0.5, 0.875, -1.0), extent=(1.0, 1.0, 0.03125), seed=0)  # 44.8° off up
def test_any_gravity_keeps_its_up_on_the_screen_and_the_floor_below(gravity, extent, seed):
    rng = np.random.default_rng(seed)
    cloud = rng.uniform(-1.0, 1.0, (40, 3)) * np.array(extent)
    bounds = [v for lo, hi in zip(cloud.min(0), cloud.max(0), strict=True)
              for v in (lo, hi)]
    up = world_up(gravity)
    scene = Scene(bounds, "auto", (200, 150), points=cloud, up=up)
    try:
        view, cam_up, focal = _view(scene)
        assert abs(cam_up @ view) < 1e-9 and cam_up @ up > 0.3
        shift_col, shift_row = _appears_vertical(scene, focal, up)
        assert shift_row < 0 and abs(shift_col) < 1e-6 * abs(shift_row) + 1e-6
        heights = _grid_points(scene) @ up
        assert np.ptp(heights) < 1e-5 * scene.size
        assert heights[0] < np.min(cloud @ up)
    finally:
        scene.close()
