"""The interactive viewer (flexmbs view, result.show(); docs/post_processing.md): what the
page carries (the displayed surface only, sizes proportional to frames × coordinates),
and, opened in headless Chromium with the network cut off, that it draws the bodies
where the results put them and that the animation plays."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flexmbs as fm
from flexmbs.errors import FlexmbsError, ValidationError
from flexmbs.view import page_html, scene_data, view_html, write_view
from flexmbs.view.geometry import display_mesh
from tests.cli_runner import run_cli
from tests.headless_chromium import dump_dom, screenshot

ASSETS = Path(fm.__file__).parent / "view" / "assets"


@pytest.fixture(scope="module")
def strip():
    """The getting-started pendulum (docs/index.md): a 1 m steel strip of 20 beam
    elements with its section, 4 clamped modes with their fibre stresses, hinged at its
    root and released horizontal under gravity, 0.5 s."""
    from flexmbs.modal.stress import with_stress

    fe = fm.straight_beam(1.0, 20, fm.BeamSection.rectangle(0.02, 0.01), fm.Material.steel())
    modes = with_stress(fm.clamped_modes(fe, "root", 4), fe)
    b = fm.ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_flexible_body("beam", modes)
    b.add_marker("beam", "root", node=1)
    b.add_marker("ground", "O")
    b.add_revolute("pivot", "ground.O", "beam.root")
    return fm.simulate(fm.System(b.finalize()), 0.5, 2e-3)


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    """cases/arm_beam_seed.toml over 0.3 s: two rigid links and a flexible tip beam."""
    from flexmbs.cases import load_case
    from flexmbs.cases.loader import case_system

    case = load_case(Path(__file__).parents[1] / "cases" / "arm_beam_seed.toml")
    return fm.simulate(case_system(case), 0.3, 1e-3)


def _decode(text: str, dtype) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype)


# ------------------------------------------------------------------ what the page carries
def _block(nx, ny, nz, tetra: bool):
    """Nodes and cells of a structured nx × ny × nz block of unit hexahedra (or each hex
    as the 6 tetrahedra around its main diagonal, which match across faces)."""
    idx = np.arange((nx + 1) * (ny + 1) * (nz + 1)).reshape(nx + 1, ny + 1, nz + 1)
    hexes = []
    for i in range(nx):
        for j in range(ny):
            for k in range(nz):
                c = idx[i:i + 2, j:j + 2, k:k + 2]
                hexes.append([c[0, 0, 0], c[1, 0, 0], c[1, 1, 0], c[0, 1, 0],
                              c[0, 0, 1], c[1, 0, 1], c[1, 1, 1], c[0, 1, 1]])
    hexes = np.array(hexes)
    if not tetra:
        return idx.size, {"hexahedron": hexes}
    paths = [(1, 2), (1, 5), (3, 2), (3, 7), (4, 5), (4, 7)]  # corner 0 → 6 via a, b
    tets = [[h[0], h[a], h[b], h[6]] for h in hexes for a, b in paths]
    return idx.size, {"tetra": np.array(tets)}


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.booleans())
def test_a_solid_is_drawn_by_its_surface(nx, ny, nz, tetra):
    """A block's drawn surface: 2 triangles per outer face square, 2 (nx ny + ny nz +
    nz nx) squares; its nodes all but the (nx − 1)(ny − 1)(nz − 1) interior ones."""
    n_nodes, cells = _block(nx, ny, nz, tetra)
    mesh = display_mesh(cells, n_nodes)
    assert len(mesh.triangles) == 4 * (nx * ny + ny * nz + nz * nx)
    assert len(mesh.nodes) == n_nodes - (nx - 1) * (ny - 1) * (nz - 1)
    # every triangle's nodes are shown nodes, and every shown node is on a triangle
    assert set(np.unique(mesh.triangles)) == set(range(len(mesh.nodes)))


def test_quadratic_cells_shells_lines_and_points():
    """Quadratic cells are drawn by their corners; quads as 2 triangles; lines and lone
    vertices kept; a mesh without cells is its nodes."""
    cells = {"quad8": np.array([[0, 1, 2, 3, 8, 9, 10, 11]]), "line": np.array([[3, 4]]),
             "vertex": np.array([[5]]), "triangle6": np.array([[1, 6, 2, 12, 13, 14]])}
    mesh = display_mesh(cells, 15)
    assert mesh.nodes.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert len(mesh.triangles) == 3 and len(mesh.lines) == 1 and len(mesh.points) == 1
    assert display_mesh({}, 4).points.tolist() == [0, 1, 2, 3]


def test_page_size_grows_with_frames_times_coordinates(strip):
    """Per frame the page carries the bodies' coordinates only (7 + 4 for the strip) and
    the von Mises stress of its 21 nodes (16 bits): 4 × 11 + 2 × 21 bytes per frame."""
    small, large = (scene_data(strip, frames=n) for n in (20, 60))
    assert small["nCoords"] == large["nCoords"] == 11
    for scene, n in ((small, 20), (large, 60)):
        assert _decode(scene["coords"], "<f4").size == n * 11
        assert _decode(scene["flexible"][0]["stress"], "<u2").size == n * 21
    # the body's static arrays do not depend on the frame count
    for key in ("nodes", "phi", "lines"):
        assert small["flexible"][0][key] == large["flexible"][0][key]
    grow = len(page_html(large)) - len(page_html(small))
    assert grow == pytest.approx(40 * (4 * 11 + 2 * 21 + 8) * 4 / 3, abs=64)  # + t (f64)


def test_solid_body_page_carries_its_surface_nodes_only():
    """A 6 × 3 × 3 hex block (built-in solid FE, 3 clamped modes): of its 112 nodes 10
    are inside; the page carries the 102 surface nodes' positions and mode-shape rows
    and the 2 × 2 (6·3 + 3·3 + 3·6) surface triangles."""
    from types import SimpleNamespace

    fe = fm.solid_box(0.6, 0.3, 0.3, 6, 3, 3, E=2e11, nu=0.3, rho=7800)
    modes = fm.clamped_modes(fe, fe.node_ids[fe.nodes[:, 0] < 1e-9], 3)
    q = np.zeros((2, 10))
    q[:, 3] = 1.0
    q[1, 7:] = [1e-3, 2e-3, 3e-3]
    result = SimpleNamespace(t=np.array([0.0, 1.0]), q=q, model={}, bodies={"block": {
        "start": 0, "n_coords": 10, "n_modes": 3, "nodes": modes.nodes, "phi": modes.phi,
        "cells": dict(modes.cells)}})
    body = scene_data(result)["flexible"][0]
    shown = 7 * 4 * 4 - 5 * 2 * 2
    assert len(modes.nodes) == 112 and body["nShown"] == shown
    assert _decode(body["phi"], "<f4").size == shown * 3 * 3
    assert _decode(body["triangles"], "<u4").size == 3 * 4 * (6 * 3 + 3 * 3 + 3 * 6)


def test_display_scale_is_the_renders(strip, arm):
    from flexmbs.post.frames import default_scale

    for result in (strip, arm):
        assert scene_data(result)["scale"] == default_scale(result)


def test_bad_options_are_refused(strip, arm, tmp_path):
    with pytest.raises(ValidationError, match="field must be one of"):
        scene_data(strip, field="modal")
    with pytest.raises(ValidationError, match="needs stress modes"):
        scene_data(arm, field="stress")
    with pytest.raises(ValidationError, match="scale must be a positive number"):
        scene_data(strip, scale=-1)
    with pytest.raises(ValidationError, match="frames must be an integer"):
        scene_data(strip, frames=0)
    with pytest.raises(ValidationError, match="speed must be a positive number"):
        scene_data(strip, speed=float("nan"))
    with pytest.raises(FlexmbsError, match=r"use an \.html file name"):
        write_view(strip, tmp_path / "view.png")


def test_page_loads_nothing_from_elsewhere(strip):
    """No element of the page names an outside address to load (the Chromium tests below
    also run with the network cut off), and three.js is the file the README names."""
    page = view_html(strip)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "import(url)" in page and "<script src" not in page
    readme = (ASSETS / "README.md").read_text()
    for name in ("three.module.min.js", "OrbitControls.js"):
        digest = hashlib.sha256((ASSETS / name).read_bytes()).hexdigest()
        assert f"{name} `{digest}`" in readme


def test_show_gives_the_page_inline(strip, monkeypatch):
    """result.show(): an iframe whose srcdoc is the very page flexmbs view writes; without
    IPython a clear error."""
    pytest.importorskip("IPython")
    shown = strip.show(height=400, frames=10)
    srcdoc = re.search(r'srcdoc="([^"]*)"', shown.data).group(1)
    assert html.unescape(srcdoc) == view_html(strip, frames=10)
    assert "height: 400px" in shown.data
    with pytest.raises(ValidationError, match="height"):
        strip.show(height=5)
    monkeypatch.setitem(__import__("sys").modules, "IPython.display", None)
    with pytest.raises(FlexmbsError, match="needs IPython"):
        strip.show()


def test_cli_view(strip, tmp_path):
    results = tmp_path / "strip.res.h5"
    strip.save(results)
    out = tmp_path / "view.html"
    code, stdout = run_cli(["view", str(results), "-o", str(out), "--frames", "30",
                            "--field", "stress", "--json"])
    assert code == 0, stdout
    summary = json.loads(stdout)
    assert summary["frames"] == 30 and summary["field"] == "stress"
    assert summary["bytes"] == out.stat().st_size
    scene = json.loads(re.search(r'id="flexmbs-scene">(.*?)</script>', out.read_text(),
                                 flags=re.S).group(1))
    assert scene["nFrames"] == 30 and scene["title"] == "flexmbs: strip.res.h5"
    for argv, message in (
            (["-o", str(tmp_path / "v.png")], "use an .html file name"),
            (["-o", str(out), "--frames", "0"], "--frames must be >= 1"),
            (["-o", str(out), "--scale", "0"], "scale must be a positive number"),
            (["-o", str(tmp_path / "no" / "v.html")], "folder does not exist")):
        code, printed = run_cli(["view", str(results), *argv])
        assert code == 2 and message in printed, (argv, printed)


# ------------------------------------------------------------------- opened in Chromium
def _probe(url: str, budget_ms: int = 500) -> dict:
    dom = dump_dom(url, budget_ms=budget_ms)
    text = re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S).group(1)
    return json.loads(html.unescape(text))


def test_rigid_links_carry_their_inertia_ellipsoids_as_the_renders_draw_them(arm):
    """The seed arm's links (slender rods) get the renders' inertia ellipsoid: the unit
    sphere's transform in the body frame has the principal axes scaled by the semi-axes
    of flexmbs.post.scene_parts.inertia_ellipsoid (at least the minimum of the scene
    size) and moves it to the centre of mass; the ellipsoid's inertia, m (b² + c²)/5 …,
    is the body's (within the minimum's inflation of the thin axes)."""
    from flexmbs.post.scene_parts import ELLIPSOID_MIN_SEMI_AXIS, inertia_ellipsoid

    data = scene_data(arm)
    size = data["view"]["size"]
    for entry in data["rigid"]:
        info = arm.bodies[entry["name"]]
        matrix = np.asarray(entry["ellipsoid"]["matrix"]).reshape(4, 4)
        centre, axes, semi = inertia_ellipsoid(float(info["mass"]), info["inertia"],
                                               info["com"])
        shown = np.maximum(semi, ELLIPSOID_MIN_SEMI_AXIS * size)
        np.testing.assert_allclose(matrix[:3, :3], axes * shown, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(matrix[:3, 3], centre)
        np.testing.assert_allclose(matrix[3], [0, 0, 0, 1])
        longest = int(np.argmax(semi))  # the rod's axis: its inertia across it is exact
        across = info["mass"] * (semi[longest] ** 2 + shown[(longest + 2) % 3] ** 2) / 5
        moment = axes[:, (longest + 1) % 3] @ np.asarray(info["inertia"]) @ axes[
            :, (longest + 1) % 3]
        assert across == pytest.approx(moment, rel=0.02)
    assert data["radii"]["comInEllipsoid"] < data["radii"]["com"]


def test_the_page_draws_the_bodies_where_the_results_put_them(strip, arm, tmp_path):
    """Paused at a time, the page's drawn nodes (computed in the browser from R, p, ξ and
    the mode shapes) are flexmbs.post.frames' deformed positions R + A(ū0 + s Φ ξ) at
    that output, to float32 round-off; rigid bodies sit at their R, p; joints at their
    first marker; the colours are |Φ ξ| over the run's largest."""
    from flexmbs.frame.rotations import rotation_matrix
    from flexmbs.post.frames import deformed, flexible_bodies

    for name, result, time, scale in (("strip", strip, 0.3, 40.0), ("arm", arm, 0.2, None)):
        path = write_view(result, tmp_path / f"{name}.html", scale=scale)
        probe = _probe(path.as_uri() + f"#paused&probe&t={time}")
        k = int(np.argmin(np.abs(result.t - probe["time"])))
        assert result.t[k] == pytest.approx(time, abs=1e-9)
        assert probe["time"] == pytest.approx(time, abs=1e-9)
        s = probe["scale"]
        for body, drawn in zip(flexible_bodies(result), probe["flexible"], strict=True):
            expected, disp = deformed(result, body, k, s)
            np.testing.assert_allclose(drawn["positions"], expected, rtol=0, atol=2e-6)
            top = max(np.linalg.norm(deformed(result, body, j)[1], axis=1).max()
                      for j in range(len(result.t)))
            np.testing.assert_allclose(drawn["value"], np.linalg.norm(disp, axis=1) / top,
                                       rtol=0, atol=1e-5)
        rigid = [n for n, i in result.bodies.items() if "phi" not in i]
        for name_, pose in zip(rigid, probe["rigid"], strict=True):
            start = result.bodies[name_]["start"]
            np.testing.assert_allclose(pose["position"], result.q[k, start:start + 3],
                                       atol=1e-6)
            p = result.q[k, start + 3:start + 7]
            np.testing.assert_allclose(np.abs(np.dot(pose["quaternion"],
                                                     [p[1], p[2], p[3], p[0]])), 1, atol=1e-6)
        markers = result.model["markers"]
        for joint, drawn in zip(result.model["joints"], probe["joints"], strict=True):
            m = markers[joint["i"]]
            info = result.bodies.get(m["body"])
            local = np.asarray(m["position"], float)
            if info is None:
                expected = local
            else:
                st_ = info["start"]
                if "phi" in m:
                    local = local + s * np.asarray(m["phi"]) @ result.q[
                        k, st_ + 7:st_ + 7 + info["n_modes"]]
                expected = result.q[k, st_:st_ + 3] + rotation_matrix(
                    result.q[k, st_ + 3:st_ + 7]) @ local
            np.testing.assert_allclose(drawn, expected, atol=2e-6)


def _canvas(image: np.ndarray) -> np.ndarray:
    return image[120:].astype(int)  # below the control bar


def _coloured(image: np.ndarray) -> np.ndarray:
    """Pixels of a saturated colour (the viridis-coloured strip, the red joints), not the
    white background, grey grid or grey text."""
    return (image.max(axis=2) - image.min(axis=2)) > 40


def test_the_viewer_draws_and_plays(strip, tmp_path):
    """Opened from disk with the network cut off, playing at half real time: its
    playback clock has run half the page time since the page started, and the picture
    is the last output at or before the clock. Chromium stops the page near its virtual
    time budget of 0.4 s and 0.8 s (then the run at 0.2 s and 0.4 s): never before it,
    within 0.1 s; after it, within 0.3 s, as a loaded host delays the stop (0.88 s and
    0.985 s for 0.8 s seen in .ci/run while kernels compiled beside the tests). Both
    screenshots show the strip (coloured pixels over the canvas), and it has swung
    between them (the hinge angle goes from −0.3 to −1.1 rad). Paused, two page times
    give the same picture."""
    url = write_view(strip, tmp_path / "strip.html", speed=0.5).as_uri()
    times = np.asarray(strip.t)
    for budget in (400, 800):
        probe = _probe(url + "#probe", budget_ms=budget)
        shown, clock, elapsed = probe["time"], probe["clock"], probe["elapsed"]
        assert clock - times[0] == pytest.approx(0.5 * elapsed, rel=1e-9, abs=1e-9)
        assert shown == times[np.searchsorted(times, clock + 1e-12, side="right") - 1]
        assert 1e-3 * budget - 0.1 <= elapsed <= 1e-3 * budget + 0.3
    first = screenshot(url, tmp_path / "first.png", budget_ms=400)
    second = screenshot(url, tmp_path / "second.png", budget_ms=800)
    a, b = _canvas(first), _canvas(second)
    # the strip (1 m, some 180 × 5 pixels) and the joint (300 pixels) are drawn
    assert _coloured(a).sum() > 800 and _coloured(b).sum() > 800
    # the strip's pixels moved: those coloured in one picture but not in the other
    assert (_coloured(a) ^ _coloured(b)).sum() > 1000
    still = [_canvas(screenshot(url + "#paused", tmp_path / f"paused{n}.png", budget_ms=n))
             for n in (300, 600)]
    assert _coloured(still[0]).sum() > 800
    assert np.array_equal(still[0], still[1])


def test_the_inline_view_draws_in_its_frame(strip, tmp_path):
    """result.show()'s output, as a notebook shows it (an iframe in the page), draws the
    strip with the network cut off."""
    pytest.importorskip("IPython")
    page = tmp_path / "notebook.html"
    page.write_text("<html><body><p>output</p>" + strip.show(height=450).data
                    + "</body></html>", encoding="utf-8")
    image = screenshot(page.as_uri(), tmp_path / "inline.png", budget_ms=400)
    assert _coloured(_canvas(image)).sum() > 800
