"""Post-processing: real off-screen renders, ParaView export read back with meshio, and
plots whose axes are read back from the figure objects."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from script_files import load_script  # tests/script_files.py

from flexmbs.cases import load_case, run_case
from flexmbs.cli.main import main
from flexmbs.errors import FlexmbsError, ValidationError, WriteError
from flexmbs.integrators import SimulationResult
from flexmbs.modal import read_modal
from flexmbs.post import plots
from flexmbs.post.animate import ResultAnimation, animate, snapshot
from flexmbs.post.export import export
from flexmbs.post.frames import default_scale as animate_scale
from flexmbs.post.mode_movie import animate_mode

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The shipped cantilever released from 1 mm in mode 1, over half a period (the tip
    goes from +1 mm to about −1 mm; the clamped root does not move)."""
    case = load_case(ROOT / "cases" / "cantilever_release.toml",
                     {"solver.t_end": 0.06, "solver.output_every": 5})
    _, result = run_case(case)
    path = tmp_path_factory.mktemp("post") / "released.res.h5"
    result.save(path)
    return SimulationResult.load(path)


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    """The seed arm: rigid links, joints and the flexible tip beam, 0.1 s."""
    case = load_case(ROOT / "cases" / "arm_beam_seed.toml",
                     {"solver.t_end": 0.1, "solver.output_every": 10})
    _, result = run_case(case)
    path = tmp_path_factory.mktemp("post") / "arm.res.h5"
    result.save(path)
    return SimulationResult.load(path)


def rotation(p):
    """A(p) = (2e0² − 1) I + 2(e eᵀ + e0 ẽ) for Euler parameters p = [e0, e]."""
    e0, e = p[0], p[1:]
    skew = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
    return (2 * e0**2 - 1) * np.eye(3) + 2 * (np.outer(e, e) + e0 * skew)


def expected_points(result, body, k):
    info = result.bodies[body]
    s, n = info["start"], info["n_modes"]
    q = result.q[k]
    u = info["nodes"] + (info["phi"] @ q[s + 7:s + 7 + n]).reshape(-1, 3)
    return q[s:s + 3] + u @ rotation(q[s + 3:s + 7]).T


# --------------------------------------------------------------------------- rendering
def with_static_twin(result, offset):
    """The result plus a copy 'still' of its flexible body, shifted by ``offset`` [m] and
    frozen at its initial state: a body that does not move."""
    from dataclasses import replace

    info = result.bodies["beam"]
    s, n = info["start"], info["n_coords"]
    twin = np.repeat(result.q[:1, s:s + n], len(result.t), axis=0)
    twin[:, :3] += offset
    bodies = dict(result.bodies)
    bodies["still"] = {**info, "start": result.q.shape[1]}
    return replace(result, q=np.hstack([result.q, twin]), bodies=bodies)


def test_frames_differ_where_the_body_moved_and_not_where_it_did_not(released):
    body = released.bodies["beam"]
    assert abs(body["phi"][-1, 0]) == 1.0  # mode 1 moves the tip along z
    scene_result = with_static_twin(released, [0.0, 0.0, 0.3])
    anim = ResultAnimation(scene_result, camera="xz", grid=False, scale=50.0)
    try:
        first, last = anim.image(0), anim.image(len(released.t) - 1)
        changed = np.any(first != last, axis=2)
        changed[:40] = False  # the time label changes by design
        # the frozen twin spans x 0..1 m at z = 0.3 m: rows around its projection
        twin = anim.scene.project([[0.0, 0.0, 0.3], [1.0, 0.0, 0.3]])
        moving = anim.scene.project([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
        row = round(float(twin[0, 0]))
        gap = int(abs(moving[0, 0] - twin[0, 0]) / 2)  # half-way to the moving beam
        cols = slice(int(twin[0, 1]) - 10, int(twin[1, 1]) + 10)
        twin_band = (slice(row - gap, row + gap), cols)
        assert np.any(first[twin_band] != 255)  # the twin is drawn there ...
        assert not changed[twin_band].any()  # ... and identically in both frames
        tip_row, tip_col = (round(float(v)) for v in moving[1])
        # the tip's drawn motion: ±50 mm (1 mm × scale 50) along z, projected
        reach = anim.scene.project([[1.0, 0.0, 0.05], [1.0, 0.0, -0.05]])[:, 0]
        span = int(np.max(np.abs(reach - moving[1, 0]))) + 10
        assert changed[max(tip_row - span, 0):tip_row + span,
                       max(tip_col - 10, 0):tip_col + 10].any()
    finally:
        anim.close()


def test_colour_range_is_the_displacement_range(released):
    """The colour bar spans the displacement of the whole run, not only of the frames
    drawn (a gallery animation's bar ended at 88 mm of a run that peaked at 105 mm)."""
    anim = ResultAnimation(released, indices=[3, 9, 15])  # (the release at t = 0 left out)
    try:
        phi = released.bodies["beam"]["phi"]
        xi = released.q[:, 7:7 + phi.shape[1]]
        disp = np.linalg.norm((xi @ phi.T).reshape(len(xi), -1, 3), axis=2)
        drawn = disp[anim.info.indices].max()
        assert drawn < 0.99 * disp.max()  # (the frames drawn miss the run's peak)
        assert anim.info.clim == (0.0, pytest.approx(1e3 * disp.max(), rel=1e-12))
        bars = list(anim.scene.plotter.scalar_bars.values())
        assert len(bars) == 1
        np.testing.assert_allclose(bars[0].GetLookupTable().GetRange(), anim.info.clim,
                                   rtol=1e-12)
        assert bars[0].GetTitle() == "|u| [mm]"
    finally:
        anim.close()


def test_gif_has_the_requested_frame_count_and_the_scale_label(released, tmp_path):
    import imageio.v3 as iio

    path = tmp_path / "a.gif"
    info = animate(released, path, frames=5, fps=10, window_size=(320, 240))
    assert info.indices == [0, 5, 10, 15, 20] and info.scale > 1
    frames = iio.imread(path)
    assert frames.shape[:3] == (5, 240, 320)
    assert not np.array_equal(frames[0], frames[-1])


def test_mp4_is_written_or_the_missing_extra_is_named(released, tmp_path):
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        with pytest.raises(FlexmbsError, match=r"flexmbs\[video\]"):
            animate(released, tmp_path / "a.mp4", frames=3)
        return
    import imageio.v2 as iio2

    path = tmp_path / "a.mp4"
    animate(released, path, frames=6, fps=10, window_size=(320, 240))
    with iio2.get_reader(path) as reader:  # the ffmpeg plugin
        assert reader.count_frames() == 6
        assert reader.get_data(0).shape == (240, 320, 3)


def test_snapshot_png_and_bad_names(released, tmp_path):
    import imageio.v3 as iio

    info = snapshot(released, tmp_path / "s.png", time=0.03, window_size=(300, 200))
    assert iio.imread(tmp_path / "s.png").shape == (200, 300, 3)
    assert info.scale == animate_scale(released)  # the run's scale, not the frame's
    with pytest.raises(WriteError, match="png"):
        snapshot(released, tmp_path / "s.jpg")
    with pytest.raises(ValidationError, match="outside the results"):
        snapshot(released, tmp_path / "s.png", time=5.0)
    with pytest.raises(WriteError, match=r"\.gif or \.mp4"):
        animate(released, tmp_path / "a.avi")


def test_arm_animation_draws_rigid_links_and_joints(arm, tmp_path):
    anim = ResultAnimation(arm, frames=2, window_size=(320, 240))
    try:
        names = set(anim.scene.meshes)
        assert {"flex:beam", "rigid-link:link1", "rigid-link:link2"} <= names
        assert {"rigid-com:link1", "rigid-com:link2"} <= names
        assert {"joint:shoulder", "joint:elbow", "joint:weld"} <= names
        # link 1's tubes run along its body x from its centre of mass (0.2 m) to the
        # shoulder (origin) and to the elbow marker 0.4 m away
        local = anim.scene.meshes["rigid-link:link1"].field_data["local"]
        np.testing.assert_allclose([local[:, 0].min(), local[:, 0].max()], [0.0, 0.4],
                                   atol=1e-6)
        anim.image(anim.info.indices[-1])
        # the elbow sphere is centred on link 1's end at that time
        k = anim.info.indices[-1]
        centre = anim.scene.meshes["joint:elbow"].points.mean(axis=0)
        q = arm.q[k]
        s = arm.bodies["link1"]["start"]
        np.testing.assert_allclose(centre, q[s:s + 3] + rotation(q[s + 3:s + 7])
                                   @ [0.4, 0, 0], atol=1e-6)
    finally:
        anim.close()


def test_mode_movie_has_one_period_of_frames(tmp_path):
    import imageio.v3 as iio

    data = read_modal(ROOT / "modal_data" / "seed_tip_beam.fmd.h5")
    path = animate_mode(data, 2, tmp_path / "m.gif", frames=8, window_size=(320, 240))
    frames = iio.imread(path)
    assert frames.shape[0] == 8
    assert not np.array_equal(frames[0], frames[2])  # quarter period: full deflection
    with pytest.raises(ValidationError, match=r"1\.\.2"):
        animate_mode(data, 3, tmp_path / "m.gif")


# --------------------------------------------------------------------------- export
def test_pvd_points_are_the_deformed_global_positions(arm, tmp_path):
    import meshio

    path = export(arm, tmp_path / "arm.pvd")
    text = path.read_text()
    files = [line.split('file="')[1].split('"')[0] for line in text.splitlines()
             if "DataSet" in line]
    times = [float(line.split('timestep="')[1].split('"')[0]) for line in text.splitlines()
             if "DataSet" in line]
    assert len(files) == len(arm.t)
    np.testing.assert_array_equal(times, arm.t)
    for k in (0, len(arm.t) // 2, len(arm.t) - 1):
        mesh = meshio.read(tmp_path / files[k])
        flex = mesh.point_data["part"] == 0  # the scene's flexible-body points
        np.testing.assert_allclose(mesh.points[flex], expected_points(arm, "beam", k),
                                   atol=1e-12)
        info = arm.bodies["beam"]
        s = info["start"]
        xi = arm.q[k, s + 7:s + 7 + info["n_modes"]]
        a = rotation(arm.q[k, s + 3:s + 7])
        shapes = info["phi"].T.reshape(info["n_modes"], -1, 3)
        np.testing.assert_allclose(mesh.point_data["beam.mode2"][flex],
                                   xi[1] * shapes[1] @ a.T, atol=1e-15)
        np.testing.assert_allclose(mesh.point_data["displacement"][flex],
                                   (shapes.transpose(1, 2, 0) @ xi) @ a.T, atol=1e-15)
        assert not mesh.point_data["displacement"][~flex].any()  # rigid parts, joints


def test_xdmf_reference_plus_motion_is_the_deformed_position(arm, tmp_path):
    import meshio

    path = export(arm, tmp_path / "arm.xdmf", every=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with meshio.xdmf.TimeSeriesReader(path) as reader:
            points, _ = reader.read_points_cells()
            assert reader.num_steps == len(range(0, len(arm.t), 2))
            for n in range(reader.num_steps):
                t, data, _ = reader.read_data(n)
                k = 2 * n
                assert t == pytest.approx(arm.t[k])
                flex = data["part"] == 0
                np.testing.assert_allclose((points + data["motion"])[flex],
                                           expected_points(arm, "beam", k), atol=1e-12)


def test_export_errors_name_the_problem(arm, tmp_path):
    with pytest.raises(WriteError, match=r"\.pvd or \.xdmf"):
        export(arm, tmp_path / "arm.vtk")
    with pytest.raises(WriteError, match="folder does not exist"):
        export(arm, tmp_path / "missing" / "arm.pvd")


# --------------------------------------------------------------------------- plots
def test_result_plots_carry_labels_with_units(arm, tmp_path):
    cases = {
        "energy": (plots.energy(arm), ["energy [J]", "energy balance residual [J]"]),
        "modal": (plots.modal(arm, "beam"), ["beam modal coordinates [-]"]),
        "tip": (plots.tip_deflection(arm, "beam"), ["beam node 21 deflection [mm]"]),
        "phi": (plots.constraint_violation(arm),
                ["constraint violation [m, rad; m/s, rad/s]"]),
        "steps": (plots.step_size(arm), ["step size [s] per output interval",
                                         "Newton iterations per step [-]"]),
        "coords": (plots.coordinates(arm, ["link1.x", "beam.xi1"]),
                   ["position [m]", "modal coordinate [-]"]),
    }
    for name, (fig, labels) in cases.items():
        assert [ax.get_ylabel() for ax in fig.axes] == labels, name
        for ext in ("png", "svg"):
            path = plots.save_figure(fig, tmp_path / f"{name}.{ext}")
            assert path.stat().st_size > 1000
    lines = cases["energy"][0].axes[0].get_lines()
    np.testing.assert_array_equal(lines[0].get_ydata(), arm.kinetic)
    with pytest.raises(ValidationError, match="unknown coordinate"):
        plots.coordinates(arm, ["link9.x"])
    with pytest.raises(WriteError, match=r"\.png or \.svg"):
        plots.save_figure(cases["energy"][0], tmp_path / "e.pdf")


def test_spectrum_peaks_at_the_signal_frequency():
    t = np.linspace(0.0, 2.0, 2001)
    fig = plots.spectrum(t, 0.3 * np.sin(2 * np.pi * 12.5 * t), label="x", unit="m")
    line = fig.axes[0].get_lines()[0]
    f, amp = line.get_xdata(), line.get_ydata()
    assert f[np.argmax(amp)] == pytest.approx(12.5, abs=0.5)
    assert amp.max() == pytest.approx(0.3, rel=0.05)  # window-corrected amplitude
    assert fig.axes[0].get_xlabel() == "frequency [Hz]"
    assert fig.axes[0].get_ylabel() == "x amplitude [m]"


# --------------------------------------------------------------------------- CLI
def test_cli_animate_export_plot_and_mode_movie(arm, tmp_path, capsys):
    import json

    res = tmp_path / "arm.res.h5"
    arm.save(res)
    assert main(["animate", str(res), "-o", str(tmp_path / "a.gif"), "--frames", "3",
                 "--size", "160x120", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["frames"] == 3 and report["colour_range_mm"][0] == 0.0
    assert main(["export", str(res), "-o", str(tmp_path / "x.pvd"), "--every", "5"]) == 0
    assert "time(s) written" in capsys.readouterr().out
    assert main(["plot", str(res), "energy", "-o", str(tmp_path / "e.svg")]) == 0
    assert main(["plot", str(res), "modal", "--body", "link1", "-o",
                 str(tmp_path / "m.png")]) == 2
    assert "not a flexible body" in capsys.readouterr().err
    assert main(["modes", str(ROOT / "modal_data" / "seed_tip_beam.fmd.h5"), "--animate",
                 "1", "-o", str(tmp_path / "m.gif"), "--frames", "4"]) == 0
    assert (tmp_path / "m.gif").stat().st_size > 1000
    assert main(["animate", str(res), "-o", str(tmp_path / "a.gif"), "--size", "big"]) == 2
    assert "WIDTHxHEIGHT" in capsys.readouterr().err


def test_gallery_script_renders_every_image(tmp_path):
    """docs/gallery.md and its images come from docs/scripts/build_gallery.py."""

    import imageio.v3 as iio

    path = ROOT / "docs" / "scripts" / "build_gallery.py"
    page = load_script(path).build(tmp_path, quick=True)
    text = page.read_text()
    images = [line.split("(")[1].rstrip(")") for line in text.splitlines()
              if line.startswith("![")]
    assert len(images) == 7
    for name in images:
        assert (tmp_path / name).stat().st_size > 1000
    assert iio.imread(tmp_path / "gallery" / "arm_beam.gif").shape[0] == 4
    assert iio.imread(tmp_path / "gallery" / "steel_beam_mode3.gif").shape[0] == 8
