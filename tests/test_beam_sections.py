"""Beam sections (flexmbs.modal.fe.sections, BeamSection constructors, ``flexmbs beam
--section``, ``beam = {...}`` in case files): section constants against published
formulas, stress points on the true outline, and the box-section root stress of a
cantilever under a tip load against P L c / I.

Formulas and sources used below (written out here, independently of the module):

* Areas and second moments: W. C. Young and R. G. Budynas, *Roark's Formulas for Stress
  and Strain*, 7th ed., Table A.1, with the parallel-axis theorem for built-up shapes.
* Torsion constants K (= J): Roark Table 10.1 — solid rectangle 2a × 2b (a ≥ b),
  K = a b³ (16/3 − 3.36 (b/a)(1 − b⁴/(12 a⁴))); solid/hollow circle K = π (r_o⁴ − r_i⁴)/2;
  hollow rectangle with uniform wall t (outer a × b), K = 2 t² (a − t)² (b − t)² /
  (a t + b t − 2 t²), which is Bredt's formula K = 4 A_m² t / s (A_m the area inside the
  median line, s its length); thin-walled open sections K = Σ b t³ / 3.
* Shear coefficients: G. R. Cowper, J. Appl. Mech. 33 (1966) 335–340, Table 1 —
  rectangle 10 (1 + ν)/(12 + 11 ν); circle 6 (1 + ν)/(7 + 6 ν); hollow circle
  (m = r_i/r_o) 6 (1 + ν)(1 + m²)² / ((7 + 6 ν)(1 + m²)² + (20 + 12 ν) m²). Thin-walled
  box and I: the shear area is the area of the walls along the shear (median line).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case
from flexmbs.cases.loader import case_system
from flexmbs.cli.main import main as cli
from flexmbs.errors import FlexmbsError, ValidationError
from flexmbs.modal import clamped_modes, read_modal
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.section_tables import section_from_spec, section_outline
from flexmbs.modal.fe.sections import hull_points, polygon_properties
from flexmbs.modal.stress import with_stress

REL = 1e-12
dims = st.floats(1e-3, 0.5)
fractions = st.floats(0.02, 0.98)
nus = st.floats(0.0, 0.5)


def _close(a, b, rel=REL):
    assert a == pytest.approx(b, rel=rel), (a, b)


def _outline_matches(section, rel=1e-10):
    """The outline polygon has the section's area and second moments, centroid at the
    origin and principal axes y, z."""
    props = polygon_properties(section.outline)
    scale = math.sqrt(section.A)
    _close(props["A"], section.A, rel)
    _close(props["Iy"], section.Iy, rel)
    _close(props["Iz"], section.Iz, rel)
    assert abs(props["Iyz"]) <= rel * max(section.Iy, section.Iz)
    assert np.hypot(*props["centroid"]) <= rel * scale


@settings(max_examples=80, deadline=None)
@given(b=dims, h=dims, nu=nus)
def test_rectangle_constants(b, h, nu):
    s = BeamSection.rectangle(b, h, nu=nu)
    _close(s.A, b * h)
    _close(s.Iy, b * h**3 / 12)
    _close(s.Iz, h * b**3 / 12)
    a_, b_ = max(b, h) / 2, min(b, h) / 2  # half-sides, Roark Table 10.1
    _close(s.J, a_ * b_**3 * (16 / 3 - 3.36 * b_ / a_ * (1 - b_**4 / (12 * a_**4))))
    _close(s.ky, 10 * (1 + nu) / (12 + 11 * nu))
    _close(s.kz, s.ky)
    _outline_matches(s)


@settings(max_examples=80, deadline=None)
@given(b=dims, h=dims, f=fractions)
def test_box_constants_and_bredt(b, h, f):
    t = f * min(b, h) / 2
    s = BeamSection.box(b, h, t)
    bi, hi = b - 2 * t, h - 2 * t
    _close(s.A, b * h - bi * hi)
    _close(s.Iy, (b * h**3 - bi * hi**3) / 12)
    _close(s.Iz, (h * b**3 - hi * bi**3) / 12)
    roark = 2 * t * t * (b - t) ** 2 * (h - t) ** 2 / (b * t + h * t - 2 * t * t)
    bredt = 4 * ((b - t) * (h - t)) ** 2 * t / (2 * (b - t) + 2 * (h - t))
    _close(s.J, roark, 1e-10)
    _close(s.J, bredt, 1e-12)
    _close(s.kz, 2 * (h - t) * t / s.A)  # the two webs (walls along z)
    _close(s.ky, 2 * (b - t) * t / s.A)  # the two flanges (walls along y)
    _outline_matches(s)


@settings(max_examples=80, deadline=None)
@given(d=dims, f=st.floats(0.02, 1.0), nu=nus)
def test_circle_and_tube_constants(d, f, nu):
    t = f * d / 2
    ro, ri = d / 2, max(d / 2 - t, 0.0)
    s = BeamSection.tube(d, t, nu=nu)
    _close(s.A, math.pi * (ro**2 - ri**2))
    _close(s.Iy, math.pi * (ro**4 - ri**4) / 4)
    _close(s.Iz, s.Iy)
    _close(s.J, math.pi * (ro**4 - ri**4) / 2)
    m2 = (ri / ro) ** 2
    _close(s.ky, 6 * (1 + nu) * (1 + m2) ** 2 / ((7 + 6 * nu) * (1 + m2) ** 2
                                                 + (20 + 12 * nu) * m2))
    c = BeamSection.circle(d, nu=nu)
    _close(c.J, math.pi * ro**4 / 2)
    _close(c.ky, 6 * (1 + nu) / (7 + 6 * nu))


@settings(max_examples=40, deadline=None)
@given(d=dims, f=st.floats(1e-4, 0.02))
def test_bredt_is_the_thin_tube_limit(d, f):
    """Bredt's J = 4 A_m² t / s of a thin round tube, 2π r_m³ t, against the exact
    J = π (r_o⁴ − r_i⁴)/2: equal to O((t/r)²)."""
    t = f * d
    r_m = (d - t) / 2
    bredt = 4 * (math.pi * r_m**2) ** 2 * t / (2 * math.pi * r_m)
    exact = BeamSection.tube(d, t).J
    assert exact == pytest.approx(bredt, rel=2 * (t / r_m) ** 2)


@settings(max_examples=80, deadline=None)
@given(b=dims, h=dims, ff=st.floats(0.02, 0.98), fw=st.floats(0.02, 0.98))
def test_i_and_channel_constants(b, h, ff, fw):
    tf, tw = ff * h / 2, fw * b
    hw = h - 2 * tf
    area = 2 * b * tf + hw * tw
    # parallel-axis sums over the two flanges and the web
    iy = 2 * (b * tf**3 / 12 + b * tf * ((h - tf) / 2) ** 2) + tw * hw**3 / 12
    open_j = (2 * b * tf**3 + hw * tw**3) / 3  # Σ b t³/3
    s = BeamSection.i_beam(b, h, tf, tw)
    _close(s.A, area)
    _close(s.Iy, iy, 1e-10)
    _close(s.Iz, 2 * tf * b**3 / 12 + hw * tw**3 / 12)
    _close(s.J, open_j)
    _close(s.kz, (h - tf) * tw / area)  # web between the flanges' median lines
    _close(s.ky, 2 * b * tf / area)
    _outline_matches(s)
    c = BeamSection.channel(b, h, tf, tw)
    ybar = (2 * b * tf * b / 2 + hw * tw * tw / 2) / area  # from the web's back
    iz = (2 * (tf * b**3 / 12 + b * tf * (b / 2 - ybar) ** 2)
          + hw * tw**3 / 12 + hw * tw * (tw / 2 - ybar) ** 2)
    _close(c.A, area)
    _close(c.Iy, iy, 1e-10)
    _close(c.Iz, iz, 1e-9)
    _close(c.J, open_j)
    _outline_matches(c, 1e-9)


def test_polygon_properties_of_a_known_shape():
    # a 4 × 2 rectangle centred at (1, 3), with a 1 × 1 hole centred at (1, 3)
    outer = [(-1, 2), (3, 2), (3, 4), (-1, 4)]
    hole = [(0.5, 2.5), (0.5, 3.5), (1.5, 3.5), (1.5, 2.5)]  # clockwise: any orientation
    p = polygon_properties([outer, hole])
    assert p["A"] == pytest.approx(7.0)
    np.testing.assert_allclose(p["centroid"], (1.0, 3.0))
    assert p["Iy"] == pytest.approx(4 * 8 / 12 - 1 / 12)
    assert p["Iz"] == pytest.approx(2 * 64 / 12 - 1 / 12)
    assert p["Iyz"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("section", [
    BeamSection.rectangle(0.02, 0.01), BeamSection.box(0.03, 0.015, 0.002),
    BeamSection.i_beam(0.1, 0.2, 0.01, 0.006), BeamSection.channel(0.05, 0.1, 0.008, 0.005)])
def test_stress_points_are_the_outer_corners(section):
    pts = section.fibre_points()
    outer = np.asarray(section.outline[0])
    lo, hi = outer.min(axis=0), outer.max(axis=0)
    corners = [[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]]
    np.testing.assert_allclose(pts, corners, atol=1e-15)  # order (−,−) (+,−) (+,+) (−,+)
    assert hull_points(tuple(map(tuple, pts))) == tuple(map(tuple, pts))


def test_round_sections_are_stressed_on_their_outer_circle():
    pts = BeamSection.tube(0.02, 0.002).fibre_points()
    np.testing.assert_allclose(np.hypot(pts[:, 0], pts[:, 1]), 0.01, rtol=1e-15)
    assert len(pts) == 16


@pytest.mark.parametrize("call, message", [
    (lambda: BeamSection.box(0.03, 0.015, 0.0075), "wall must be less than"),
    (lambda: BeamSection.box(0.03, -0.015, 0.002), "height_z must be positive"),
    (lambda: BeamSection.i_beam(0.1, 0.02, 0.01, 0.006), "2 flange_thickness"),
    (lambda: BeamSection.channel(0.05, 0.1, 0.008, 0.05), "web_thickness must be less"),
    (lambda: BeamSection.tube(0.02, 0.011), "wall_thickness must be at most"),
    (lambda: BeamSection.rectangle(0.02, 0.01, nu=0.7), "nu must satisfy"),
    (lambda: BeamSection.general(1e-4, 1e-9, 1e-9, 1e-9), "needs an outline or stress"),
    (lambda: BeamSection.general(1e-4, 1e-9, 1e-9, 1e-9, outline=[(0, 0), (1, 0), (1, 1)]),
     "centroid"),
    (lambda: BeamSection.general(1e-4, 1e-9, 1e-9, 1e-9, stress_points=[(0.0, "a")]),
     "stress_points"),
    (lambda: section_from_spec({"kind": "box", "width": 0.03, "height": 0.01}, "beam.section"),
     "missing \\['wall'\\]"),
    (lambda: section_from_spec({"kind": "hexagon"}), "kind must be one of"),
    (lambda: section_from_spec({"kind": "circle", "diameter": 0.01, "wall": 1}),
     "unknown keys \\['wall'\\]"),
])
def test_bad_sections_are_named(call, message):
    with pytest.raises(ValidationError, match=message):
        call()


def test_a_general_section_takes_its_outline_and_round_trips_through_metadata():
    box = BeamSection.box(0.03, 0.015, 0.002)
    s = BeamSection.general(box.A, box.Iy, box.Iz, box.J, outline=box.outline)
    np.testing.assert_allclose(s.fibre_points(), box.fibre_points())
    fe = straight_beam(0.5, 4, s, Material.aluminium())
    back = BeamSection(**json.loads(json.dumps(fe.metadata["section"])))
    assert back == s
    outline = section_outline({"source": fe.metadata})
    assert outline["width_y"] == pytest.approx(0.03) and len(outline["polygon"]) == 2


def test_constants_alone_warn_and_fall_back_on_the_equivalent_rectangle():
    box = BeamSection.box(0.03, 0.015, 0.002)
    bare = BeamSection(A=box.A, Iy=box.Iy, Iz=box.Iz, J=box.J)
    fe = straight_beam(0.5, 10, bare, Material.aluminium())
    with pytest.warns(UserWarning, match="equivalent rectangle"):
        data = with_stress(clamped_modes(fe, "root", 2), fe)
    assert data.modal_fields["fibre_stress"].shape[1] == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fe = straight_beam(0.5, 10, box, Material.aluminium())
        with_stress(clamped_modes(fe, "root", 2), fe)


# ------------------------------------------------------------------ root stress (issue 34)
L, P = 0.5, 20.0
B, H, T = 0.03, 0.015, 0.002


def _box_case(tmp_path, load=(0.0, 0.0, -P), section=None):
    section = section or f'{{ kind = "box", width = {B}, height = {H}, wall = {T} }}'
    text = f"""
title = "box cantilever"
[[bodies]]
name = "arm"
type = "flexible"
[bodies.beam]
length = {L}
elements = 40
modes = 4
material = "aluminium"
section = {section}
static_correction = "tip"
[[markers]]
body = "arm"
name = "root"
node = 1
[[markers]]
body = "arm"
name = "tip"
node = 41
[[markers]]
body = "ground"
name = "O"
[[joints]]
name = "clamp"
type = "fixed"
i = "ground.O"
j = "arm.root"
[[forces]]
name = "load"
type = "point-force"
marker = "arm.tip"
value = {list(load)}
[solver]
h = 1e-3
t_end = 0.01
"""
    path = tmp_path / "box.toml"
    path.write_text(text)
    return path


def _root_stress(path, capsys):
    """Fibre stresses at the root of the static solution of ``flexmbs static``."""
    capsys.readouterr()
    assert cli(["static", str(path), "--json"]) == 0
    coords = json.loads(capsys.readouterr().out)["coordinates"]
    body = case_system(load_case(path)).bodies[0]
    xi = np.array([coords[f"arm.xi{k + 1}"] for k in range(body.n_modes)])
    return body.data.modal_fields["fibre_stress"][0] @ xi


def test_box_root_stress_under_a_tip_load_is_PLc_over_I(tmp_path, capsys):
    area = B * H - (B - 2 * T) * (H - 2 * T)
    iy = (B * H**3 - (B - 2 * T) * (H - 2 * T) ** 3) / 12  # Roark Table A.1
    iz = (H * B**3 - (H - 2 * T) * (B - 2 * T) ** 3) / 12
    # tip load down (−z): bending about y, c = H/2; tension on top (+z corners 2, 3)
    sigma = _root_stress(_box_case(tmp_path), capsys)
    exact = P * L * (H / 2) / iy
    assert np.max(np.abs(sigma)) == pytest.approx(exact, rel=1e-6)
    np.testing.assert_allclose(sigma, [-exact, -exact, exact, exact], rtol=1e-6)
    # tip load along +y (the 30 mm width, the arm plane): c = B/2 about z
    sigma = _root_stress(_box_case(tmp_path, (0.0, P, 0.0)), capsys)
    exact = P * L * (B / 2) / iz
    assert np.max(np.abs(sigma)) == pytest.approx(exact, rel=1e-6)
    np.testing.assert_allclose(sigma, [exact, -exact, -exact, exact], rtol=1e-6)
    # the equivalent rectangle's fibres at y = √(3 I_z/A) were 19.75 % too far out
    assert math.sqrt(3 * iz / area) / (B / 2) - 1 == pytest.approx(0.1975, abs=5e-5)


@pytest.mark.parametrize("section, load, c_and_i", [
    ('{ kind = "I", width = 0.02, height = 0.03, flange = 0.002, web = 0.0015 }',
     (0.0, 5.0, 0.0), lambda s: (0.01, s.Iz)),
    ('{ kind = "channel", width = 0.02, height = 0.03, thickness = 0.002 }',
     (0.0, 5.0, 0.0), None),
])
def test_lateral_root_stress_of_open_sections(tmp_path, capsys, section, load, c_and_i):
    path = _box_case(tmp_path, load, section)
    sigma = _root_stress(path, capsys)
    sec = BeamSection(**case_system(load_case(path)).bodies[0].data.metadata["source"]
                      ["section"])
    if c_and_i is None:  # channel: the farthest fibre is the flange tips' b − ȳ
        area = 2 * 0.02 * 0.002 + 0.026 * 0.002
        ybar = (2 * 0.02 * 0.002 * 0.01 + 0.026 * 0.002 * 0.001) / area  # from the back
        c, inertia = 0.02 - ybar, sec.Iz
    else:
        c, inertia = c_and_i(sec)
    assert np.max(np.abs(sigma)) == pytest.approx(5.0 * L * c / inertia, rel=1e-6)


# ------------------------------------------------------------------ CLI, cases, renders
def test_cli_builds_each_kind(tmp_path):
    for kind, opts in [("box", ["--width", "0.03", "--height", "0.015", "--thickness", "0.002"]),
                       ("i", ["--width", "0.02", "--height", "0.03", "--flange-thickness",
                              "0.002", "--web-thickness", "0.0015"]),
                       ("channel", ["--width", "0.02", "--height", "0.03", "--thickness",
                                    "0.002"]),
                       ("tube", ["--diameter", "0.02", "--thickness", "0.002"])]:
        out = tmp_path / f"{kind}.fmd.h5"
        assert cli(["beam", "--length", "0.5", "--elements", "10", "--section", kind, *opts,
                    "--modes", "2", "--stress", "--no-stiffening", "-o", str(out)]) == 0
        data = read_modal(out)
        assert data.metadata["source"]["section"]["kind"] == kind
        outline = section_outline(data.metadata)
        assert len(outline["polygon"]) == (2 if kind in ("box", "tube") else 1)


def test_cli_general_section_from_constants_and_an_outline_file(tmp_path, capsys):
    """`--section general` with the 30 × 15 × 2 mm box's own constants and its two loops
    in a file gives the box's frequencies (1e-12) and stress points; a bad line is named."""
    box = BeamSection.box(0.03, 0.015, 0.002)
    outline = tmp_path / "box.txt"
    outline.write_text("# y, z [m]\n-0.015, -0.0075\n0.015, -0.0075\n0.015, 0.0075\n"
                       "-0.015, 0.0075\n\n-0.013 -0.0055\n0.013 -0.0055\n0.013 0.0055\n"
                       "-0.013 0.0055\n")
    common = ["beam", "--length", "0.5", "--elements", "10", "--modes", "3",
              "--no-stiffening"]
    assert cli([*common, "--section", "box", "--width", "0.03", "--height", "0.015",
                "--thickness", "0.002", "-o", str(tmp_path / "box.fmd.h5")]) == 0
    constants = f"{box.A!r},{box.Iy!r},{box.Iz!r},{box.J!r}"
    assert cli([*common, "--section", "general", "--constants", constants, "--outline",
                str(outline), "-o", str(tmp_path / "general.fmd.h5")]) == 0
    ref, general = read_modal(tmp_path / "box.fmd.h5"), read_modal(tmp_path / "general.fmd.h5")
    np.testing.assert_allclose(general.frequencies, ref.frequencies, rtol=1e-12)
    mine, theirs = (section_outline(d.metadata) for d in (general, ref))
    assert len(mine["polygon"]) == 2
    np.testing.assert_allclose(np.sort(mine["stress_points"], axis=0),
                               np.sort(theirs["stress_points"], axis=0), atol=1e-15)
    capsys.readouterr()
    outline.write_text("-0.015, -0.0075\n0.015 oops\n")
    assert cli([*common, "--section", "general", "--constants", constants, "--outline",
                str(outline), "-o", str(tmp_path / "bad.fmd.h5")]) == 2
    assert "--outline box.txt, line 2: '0.015 oops'" in capsys.readouterr().err
    outline.write_bytes(b"\xff\xfe\x00bad")
    assert cli([*common, "--section", "general", "--constants", constants, "--outline",
                str(outline), "-o", str(tmp_path / "bad.fmd.h5")]) == 2
    assert "--outline box.txt: cannot be read as text" in capsys.readouterr().err
    assert cli([*common, "--section", "box", "--width", "0.03", "--height", "0.015",
                "--thickness", "0.002", "--outline", str(outline),
                "-o", str(tmp_path / "bad.fmd.h5")]) == 2
    assert "--outline apply to --section general, not to --section box" in \
        capsys.readouterr().err


def test_cli_names_missing_section_options(tmp_path, capsys):
    code = cli(["beam", "--length", "0.5", "--section", "box", "--width", "0.03",
                "--height", "0.015", "--modes", "2", "-o", str(tmp_path / "b.fmd.h5")])
    assert code == 2
    assert "--section box needs --width, --height and --thickness" in capsys.readouterr().err


@pytest.mark.parametrize("section, message", [
    ('{ kind = "box", width = 0.03, height = 0.015 }', "missing \\['wall'\\]"),
    ('{ kind = "box", width = 0.03, height = 0.015, wall = 0.01 }', "wall must be less"),
])
def test_case_file_section_errors_name_the_body(tmp_path, section, message):
    with pytest.raises(FlexmbsError, match=message) as info:
        load_case(_box_case(tmp_path, section=section))
    assert "'arm'" in str(info.value) and "beam" in str(info.value)


def test_results_carry_and_renders_draw_the_true_outline(tmp_path):
    from flexmbs.cases import run_case
    from flexmbs.post.animate import _beam_section
    from flexmbs.post.frames import flexible_bodies
    from flexmbs.post.sections import prism_faces, swept_points
    from flexmbs.results import SimulationResult

    path = _box_case(tmp_path, section='{ kind = "I", width = 0.02, height = 0.03, '
                                       'thickness = 0.002 }')
    _, res = run_case(load_case(path, {"solver.t_end": 0.003}))
    res.save(tmp_path / "r.res.h5")
    back = SimulationResult.load(tmp_path / "r.res.h5")
    info = back.bodies["arm"]
    assert list(info["section_loops"]) == [12]
    np.testing.assert_allclose(info["section_size"], [0.02, 0.03])
    body = flexible_bodies(back)[0]
    lines, pts, loops, _, corners = _beam_section(back, body)
    np.testing.assert_allclose(pts, BeamSection.i_beam(0.02, 0.03, 0.002, 0.002).outline[0])
    # undeformed beam along x: each swept corner is its node plus (0, y, z)
    nodes = np.asarray(info["nodes"])
    drawn = swept_points(nodes, lines, pts, [0, 0, 1.0])
    np.testing.assert_allclose(drawn[:, 1:], np.tile(pts, (2 * len(lines), 1)), atol=1e-15)
    np.testing.assert_allclose(drawn[:, 0], nodes[corners, 0])
    faces = prism_faces(len(lines), loops, pts)
    assert faces.max() == len(drawn) - 1


def test_the_docs_page_runs_and_prints_what_it_says(capsys):
    import re
    from pathlib import Path

    import tomllib

    page = (Path(__file__).resolve().parents[1] / "docs" / "beam_sections.md").read_text()
    for block in re.findall(r"```python\n(.*?)```", page, re.S):
        exec(compile(block, "beam_sections.md", "exec"), {})
        printed = capsys.readouterr().out.split()
        assert printed == re.search(r"# ([\d. ]+)\(", block).group(1).split()
    for block in re.findall(r"```toml\n(.*?)```", page, re.S):
        spec = tomllib.loads(block)["bodies"][0]["beam"]
        assert section_from_spec(spec["section"]) == BeamSection.box(0.03, 0.015, 0.002)
