"""Stress modes and stress recovery (flexmbs.modal.stress, flexmbs.results.stress,
``flexmbs stress``), against beam statics: σ = M c / I under a tip load and under
gravity, the section forces along a cantilever, a solid-hex beam in bending, and the
von Mises formula against principal stresses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case, run_case
from flexmbs.cli.main import main as cli
from flexmbs.errors import ValidationError
from flexmbs.modal import clamped_modes, read_modal, write_modal
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.stress import fibre_points, static_correction, von_mises, with_stress
from flexmbs.results import SimulationResult
from flexmbs.results.stress import field_history, stress_report

L, WIDTH, HEIGHT = 1.0, 0.02, 0.01
SECTION = BeamSection.rectangle(WIDTH, HEIGHT)
STEEL = Material.steel()
P = 10.0  # tip load [N] along body z


@pytest.fixture(scope="module")
def beam_fe():
    return straight_beam(L, 40, SECTION, STEEL)


def _tip_static(data, fe, force=(0.0, 0.0, P)):
    """Modal coordinates of the static response to a tip force: ξ = K_ff⁻¹ Φ_tipᵀ F."""
    tip = fe.node_sets["tip"][0]
    load = data.phi.reshape(-1, 3, data.n_modes)[tip].T @ np.asarray(force)
    return np.linalg.solve(data.K_ff, load)


def test_root_stress_under_a_tip_load_converges_with_modes_and_static_correction(beam_fe):
    exact = P * L * (HEIGHT / 2) / SECTION.Iy  # σ = M c / I at the root
    errors = []
    for n in (2, 4, 8, 16):
        data = with_stress(clamped_modes(beam_fe, "root", n), beam_fe)
        sigma = data.modal_fields["fibre_stress"][0] @ _tip_static(data, beam_fe)
        errors.append(abs(np.max(np.abs(sigma)) / exact - 1))
        corrected = with_stress(
            static_correction(clamped_modes(beam_fe, "root", n), beam_fe, "tip"), beam_fe)
        sigma = corrected.modal_fields["fibre_stress"][0] @ _tip_static(corrected, beam_fe)
        # the static deflection is in the basis: the FE's exact cubic solution
        assert np.max(np.abs(sigma)) == pytest.approx(exact, rel=2e-8)
    # modes alone converge, slowly (13.8 %, 4.4 %, 0.79 %, 0.31 %)
    assert errors == sorted(errors, reverse=True) and errors[-1] < 5e-3 < errors[0]


def test_section_forces_along_a_cantilever_follow_statics(beam_fe):
    data = with_stress(
        static_correction(clamped_modes(beam_fe, "root", 4), beam_fe, "tip"), beam_fe)
    forces = data.modal_fields["section_forces"] @ _tip_static(data, beam_fe)
    x = beam_fe.nodes[:, 0]
    scale = P * L
    np.testing.assert_allclose(forces[:, 0], 0.0, atol=1e-7 * P)           # N
    np.testing.assert_allclose(forces[:, 2], P, rtol=1e-7)                 # Q_z
    np.testing.assert_allclose(forces[:, 3], 0.0, atol=1e-7 * scale)       # T
    # the moment of the part beyond x on the cut face: M_y = −P (L − x)
    np.testing.assert_allclose(forces[:, 4], -P * (L - x), atol=1e-7 * scale)
    np.testing.assert_allclose(forces[:, 5], 0.0, atol=1e-7 * scale)
    # fibre stresses: linear across the section, tension at the bottom (z < 0) corners
    fibre = data.modal_fields["fibre_stress"] @ _tip_static(data, beam_fe)
    corners = fibre_points({"width_y": WIDTH, "height_z": HEIGHT})
    expected = (-P * (L - x))[:, None] * corners[None, :, 1] / SECTION.Iy  # M_y z / I_y
    np.testing.assert_allclose(fibre, expected, atol=1e-7 * np.max(np.abs(expected)))


def test_a_lateral_load_stresses_the_y_fibres(beam_fe):
    data = with_stress(
        static_correction(clamped_modes(beam_fe, "root", 4), beam_fe, "tip"), beam_fe)
    fibre = data.modal_fields["fibre_stress"][0] @ _tip_static(data, beam_fe, (0.0, P, 0.0))
    # bending in the stiff x–y plane: σ = M_z y / I_z = P L (b/2) / I_z at the root
    assert np.max(np.abs(fibre)) == pytest.approx(P * L * (WIDTH / 2) / SECTION.Iz, rel=1e-7)
    assert fibre[1] * fibre[0] < 0  # +y and −y corners on opposite sides


def test_round_sections_take_their_fibres_on_the_circle(tmp_path):
    out = tmp_path / "rod.fmd.h5"
    assert cli(["beam", "--length", "0.5", "--elements", "20", "--section", "circle",
                "--diameter", "0.01", "--modes", "4", "--stress", "--static-correction",
                "tip", "--no-stiffening", "-o", str(out)]) == 0
    data = read_modal(out)
    fe = straight_beam(0.5, 20, BeamSection.circle(0.01), STEEL)
    fibre = data.modal_fields["fibre_stress"][0] @ _tip_static(data, fe)
    inertia = np.pi * 0.01**4 / 64
    assert fibre.shape == (16,)
    assert np.max(np.abs(fibre)) == pytest.approx(P * 0.5 * 0.005 / inertia, rel=1e-7)


def _sag_case(modal_file, t_end=0.6):
    """The shipped released cantilever case, instead settling from rest under gravity
    with heavy modal damping, on the modal data ``modal_file``."""
    root = Path(__file__).resolve().parents[1]
    n = read_modal(modal_file).n_modes
    return load_case(root / "cases" / "cantilever_release.toml", {
        "model.gravity": [0.0, 0.0, -9.81], "bodies.beam.modal_data": str(modal_file),
        "bodies.beam.modes": n, "bodies.beam.xi": [0.0] * n,
        "bodies.beam.damping_ratio": 0.7, "solver.t_end": t_end,
        "solver.output_every": 10, "solver.h": 1e-3})


def test_gravity_sag_root_stress_of_a_run(tmp_path, beam_fe):
    expected = STEEL.rho * SECTION.A * 9.81 * L**2 * (HEIGHT / 2) / (2 * SECTION.Iy)
    finals = []
    for n in (4, 8):
        modal = tmp_path / f"beam{n}.fmd.h5"
        write_modal(with_stress(clamped_modes(beam_fe, "root", n), beam_fe), modal)
        _, res = run_case(_sag_case(modal))
        res.save(tmp_path / "sag.res.h5")
        back = SimulationResult.load(tmp_path / "sag.res.h5")
        fibre = field_history(back, "beam", "fibre_stress")
        assert np.max(np.abs(fibre[-1, 0] - fibre[-2, 0])) < 1e-6 * expected  # at rest
        finals.append(np.max(np.abs(fibre[-1, 0])))
    # ρ A g L² c / (2 I): 3.0 % low with 4 modes, 0.51 % with 8
    assert abs(finals[1] / expected - 1) < 6e-3 < abs(finals[0] / expected - 1) < 0.04
    # the CLI report: the peak (the damped overshoot) at the root node
    assert cli(["stress", str(tmp_path / "sag.res.h5"), "--json", "--top", "3"]) == 0


def test_stress_cli_reports_peak_time_node_and_hot_spots(tmp_path, beam_fe, capsys):
    modal = tmp_path / "beam8.fmd.h5"
    write_modal(with_stress(clamped_modes(beam_fe, "root", 8), beam_fe), modal)
    _, res = run_case(_sag_case(modal))
    res.save(tmp_path / "sag.res.h5")
    capsys.readouterr()
    assert cli(["stress", str(tmp_path / "sag.res.h5"), "--json", "--top", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    vm = np.max(np.abs(field_history(res, "beam", "fibre_stress")), axis=2)  # (t, N)
    k_t, k_n = np.unravel_index(np.argmax(vm), vm.shape)
    assert report["peak_von_mises_pa"] == pytest.approx(vm[k_t, k_n], rel=1e-12)
    assert report["peak_time_s"] == pytest.approx(res.t[k_t])
    assert report["peak_node"] == 1 and len(report["hot_spots"]) == 3
    assert [h["node"] for h in report["hot_spots"]] == [1, 2, 3]
    assert cli(["stress", str(tmp_path / "sag.res.h5")]) == 0
    assert "hot spots" in capsys.readouterr().out
    assert cli(["stress", str(tmp_path / "sag.res.h5"), "--body", "link"]) == 2
    assert "has no stress modes" in capsys.readouterr().err


def test_results_without_stress_modes_say_how_to_get_them(tmp_path, capsys):
    root = Path(__file__).resolve().parents[1]
    text = (root / "cases" / "seed_pendulum.toml").read_text()
    case = tmp_path / "p.toml"
    case.write_text(text)
    _, res = run_case(load_case(case, {"solver.t_end": 0.01}))
    res.save(tmp_path / "p.res.h5")
    assert cli(["stress", str(tmp_path / "p.res.h5")]) == 2
    assert "no stress modes" in capsys.readouterr().err
    with pytest.raises(ValidationError, match="no stress modes"):
        stress_report(res)


def test_the_results_file_carries_the_fields_for_any_reader(tmp_path, beam_fe):
    modal = tmp_path / "beam4.fmd.h5"
    write_modal(with_stress(clamped_modes(beam_fe, "root", 4), beam_fe), modal)
    _, res = run_case(_sag_case(modal, 0.05))
    res.save(tmp_path / "sag.res.h5")
    with h5py.File(tmp_path / "sag.res.h5", "r") as f:  # h5py alone
        group = f["bodies/0/fields"]
        names = {str(d.attrs["name"]): d for d in group.values()}
        assert set(names) == {"section_forces", "fibre_stress"}
        assert names["fibre_stress"].attrs["units"] == "Pa"
        assert names["fibre_stress"].shape == (41, 4, 4)


def test_solid_hex_beam_in_bending_against_beam_theory():
    """Built-in hexahedra (ν = 0 isolates bending from the section's Poisson
    contraction): σ_xx on the top face away from the clamp against M c / I, converging
    with the elements' length (the trilinear brick's shear locking goes as (a/b)²)."""
    length, side, load = 1.0, 0.1, 100.0
    inertia = side**4 / 12
    errors = []
    for nx in (40, 80):
        fe = box_mesh(length, side, side, nx, 2, 4, E=2.1e11, nu=0.0, rho=7850.0)
        data = with_stress(static_correction(clamped_modes(fe, "x0", 4), fe, "x1", "3"), fe)
        face = fe.node_sets["x1"]
        force = np.zeros((fe.n_nodes, 3))
        force[face, 2] = load / len(face)
        xi = np.linalg.solve(data.K_ff, data.phi.T @ force.ravel())
        stress = data.modal_fields["stress"] @ xi
        x, z = fe.nodes[:, 0], fe.nodes[:, 2]
        for station in (0.25, 0.5, 0.75):
            top = np.flatnonzero(np.isclose(x, station) & np.isclose(z, z.max()))
            expected = -load * (length - station) * (side / 2) / inertia
            err = stress[top, 0] / expected - 1
            assert np.ptp(err) < 1e-6  # the same across the width
            errors.append(float(np.mean(err)))
        inner = (x > 0.2) & (x < 0.8)  # away from the clamp and the loaded face
        assert np.max(np.abs(stress[inner, 1:3])) < 0.05 * np.max(np.abs(stress[inner, 0]))
    # 3.0 % (40 elements), 0.78 % (80): second order in the element length
    assert abs(errors[3]) < 0.01 and 3.5 < errors[0] / errors[3] < 4.5


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e8, 1e8), min_size=6, max_size=6))
def test_von_mises_against_principal_stresses(values):
    sxx, syy, szz, syz, sxz, sxy = values
    tensor = np.array([[sxx, sxy, sxz], [sxy, syy, syz], [sxz, syz, szz]])
    s1, s2, s3 = np.linalg.eigvalsh(tensor)
    expected = np.sqrt(0.5 * ((s1 - s2) ** 2 + (s2 - s3) ** 2 + (s3 - s1) ** 2))
    assert von_mises("stress", np.array(values)) == pytest.approx(expected, rel=1e-9,
                                                                  abs=1e-6)


def test_bad_stress_requests_are_named(beam_fe, tmp_path):
    data = clamped_modes(beam_fe, "root", 2)
    with pytest.raises(ValidationError, match=r"static correction: nodes 'nose' is not a "
                                              r"node set"):
        static_correction(data, beam_fe, "nose")
    with pytest.raises(ValidationError, match=r"components '7' must be digits 1..6"):
        static_correction(data, beam_fe, "tip", "7")
    other = straight_beam(L, 10, SECTION, STEEL)
    with pytest.raises(ValidationError, match=r"the FE model has 11 nodes but the modal "
                                              r"data 41"):
        with_stress(data, other)
    with pytest.raises(ValidationError, match="no von Mises stress for field 'temperature'"):
        von_mises("temperature", np.zeros(3))


def test_static_correction_keeps_the_modes_and_round_trips(beam_fe, tmp_path):
    data = clamped_modes(beam_fe, "root", 4)
    corrected = with_stress(static_correction(data, beam_fe, "tip"), beam_fe)
    np.testing.assert_allclose(corrected.frequencies[:4], data.frequencies, rtol=1e-12)
    np.testing.assert_array_equal(corrected.phi[:, :4], data.phi)
    assert [k.value for k in corrected.mode_kinds] == ["normal"] * 4 + ["static"] * 3
    # the new modes are mass- and stiffness-orthogonal to the kept eigenmodes: M_ff and
    # K_ff are the projections of the FE matrices, both diagonal
    from flexmbs.modal.stiffening import mode_vectors

    v = mode_vectors(beam_fe, corrected)
    m, k = v.T @ (beam_fe.mass @ v), v.T @ (beam_fe.stiffness @ v)
    assert np.max(np.abs(m - np.diag(np.diag(m)))) < 1e-9 * np.max(np.diag(m))
    assert np.max(np.abs(k - np.diag(np.diag(k)))) < 1e-9 * np.max(np.diag(k))
    np.testing.assert_allclose(corrected.K_ff, k, atol=1e-9 * np.max(np.diag(k)))
    write_modal(corrected, tmp_path / "c.fmd.h5")
    back = read_modal(tmp_path / "c.fmd.h5")
    assert [k.value for k in back.mode_kinds] == [k.value for k in corrected.mode_kinds]
    np.testing.assert_array_equal(back.modal_fields["fibre_stress"],
                                  corrected.modal_fields["fibre_stress"])


def test_animations_and_exports_colour_by_stress(tmp_path, beam_fe):
    import meshio

    from flexmbs.post.animate import ResultAnimation, frame_info
    from flexmbs.post.export import export

    modal = tmp_path / "beam4.fmd.h5"
    write_modal(with_stress(clamped_modes(beam_fe, "root", 4), beam_fe), modal)
    _, res = run_case(_sag_case(modal, 0.2))
    info = frame_info(res, field="stress", frames=5)
    vm = np.max(np.abs(field_history(res, "beam", "fibre_stress")), axis=2)
    # the colour range is the largest von Mises stress [MPa] of the drawn frames
    assert info.clim[1] == pytest.approx(1e-6 * vm[info.indices].max(), rel=1e-12)
    assert info.title == "von Mises [MPa]"
    anim = ResultAnimation(res, field="stress", frames=2, window_size=(320, 240))
    try:
        assert anim.image(anim.info.indices[-1]).shape == (240, 320, 3)
    finally:
        anim.close()
    export(res, tmp_path / "sag.pvd", every=5)
    files = sorted((tmp_path / "sag_vtu").glob("*.vtu"))
    for n, file in enumerate(files):
        mesh = meshio.read(file)
        flex = mesh.point_data["part"] == 0
        np.testing.assert_allclose(mesh.point_data["von_mises"][flex], vm[5 * n],
                                   rtol=1e-12, atol=1e-9)


def test_stress_colouring_needs_stress_modes(tmp_path):
    from flexmbs.post.animate import frame_info

    root = Path(__file__).resolve().parents[1]
    _, res = run_case(load_case(root / "cases" / "arm_beam_seed.toml",
                                {"solver.t_end": 0.01}))
    with pytest.raises(ValidationError, match="field 'stress' needs stress modes"):
        frame_info(res, field="stress")


def test_a_flexible_body_gives_its_von_mises_stress_at_a_state(beam_fe):
    from flexmbs.errors import ModelError
    from flexmbs.model import ModelBuilder

    data = with_stress(

        static_correction(clamped_modes(beam_fe, "root", 4), beam_fe, "tip"), beam_fe)
    b = ModelBuilder()
    b.add_flexible_body("beam", data)
    body = b.finalize().bodies["beam"]
    q = np.concatenate([[0, 0, 0, 1, 0, 0, 0], _tip_static(data, beam_fe)])
    vm = body.von_mises(q)
    assert vm[0] == pytest.approx(P * L * (HEIGHT / 2) / SECTION.Iy, rel=1e-7)
    assert vm[-1] == pytest.approx(0.0, abs=1e-6 * vm[0])  # no moment at the free tip
    b = ModelBuilder()
    b.add_flexible_body("plain", clamped_modes(beam_fe, "root", 2))
    with pytest.raises(ModelError, match="'plain': its ModalData has no stress modes"):
        b.finalize().bodies["plain"].von_mises(np.zeros(9))


def test_static_correction_of_craig_bampton_coordinates_keeps_their_coupling(beam_fe):
    """Craig–Bampton coordinates are not eigenmodes of the whole beam: the static modes
    couple with them through the stiffness, and K_ff holds that coupling (Vᵀ K V)."""
    from flexmbs.modal import craig_bampton
    from flexmbs.modal.stiffening import mode_vectors

    cb = craig_bampton(beam_fe, "tip", 4, attach="root")
    middle = int(beam_fe.node_ids[20])
    corrected = static_correction(cb, beam_fe, [middle])
    v = mode_vectors(beam_fe, corrected)
    k = v.T @ (beam_fe.stiffness @ v)
    scale = np.max(np.abs(k))
    assert np.max(np.abs(k[:cb.n_modes, cb.n_modes:])) > 1e-3 * scale  # real coupling
    np.testing.assert_allclose(corrected.K_ff, k, atol=1e-9 * scale)
    np.testing.assert_allclose(corrected.M_ff, v.T @ (beam_fe.mass @ v),
                               atol=1e-9 * np.max(np.abs(corrected.M_ff)))


def test_static_correction_at_a_held_node_is_refused_by_name(beam_fe):
    with pytest.raises(ValidationError, match=r"unit loads at 'root' deflect the body in "
                                              r"nothing"):
        static_correction(clamped_modes(beam_fe, "root", 2), beam_fe, "root")


def test_animate_states_the_stress_range_in_mpa_and_displacement_in_mm(tmp_path, beam_fe,
                                                                       capsys):
    """flexmbs animate --field stress: the colour bar, the printed range and the JSON
    give MPa (the von Mises stress of the frames / 1e6), the displacement field mm."""
    from flexmbs.post.animate import ResultAnimation

    modal = tmp_path / "beam4.fmd.h5"
    write_modal(with_stress(clamped_modes(beam_fe, "root", 4), beam_fe), modal)
    _, res = run_case(_sag_case(modal, 0.1))
    path = tmp_path / "sag.res.h5"
    res.save(path)
    vm = np.max(np.abs(field_history(res, "beam", "fibre_stress")), axis=2)
    for field, units, top in (("stress", "MPa", 1e-6 * vm[-1].max()),
                              ("displacement", "mm", None)):
        png = tmp_path / f"{field}.png"
        assert cli(["animate", str(path), "--field", field, "-o", str(png), "--size",
                    "160x120"]) == 0
        text = capsys.readouterr().out
        _, high, shown = re.search(r"colour range (\S+)–(\S+) (\w+)\)", text).groups()
        assert shown == units, text
        assert cli(["animate", str(path), "--field", field, "-o", str(png), "--size",
                    "160x120", "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["colour_units"] == units
        assert ("colour_range_mm" in report) == (units == "mm")
        if top is not None:  # the last frame's largest von Mises stress, in MPa
            assert report["colour_range"][1] == pytest.approx(top, rel=1e-12)
            assert float(high) == pytest.approx(top, rel=1e-2)
        anim = ResultAnimation(res, field=field, frames=1, window_size=(160, 120))
        try:
            bar = anim.scene.plotter.scalar_bars
            title = next(iter(bar.values())).GetTitle()
        finally:
            anim.close()
        assert title == {"stress": "von Mises [MPa]", "displacement": "|u| [mm]"}[field]


def test_a_static_twist_mode_is_scaled_to_a_turn_of_one_radian():
    """A tip torque's static mode twists the beam and moves its nodes by round-off only:
    scaled to its largest translation, it was blown up by ~1e12 and the modal data were
    refused ("M_ff is not positive definite"). Scaled to its largest turn, 1 rad, it is
    the linear twist θ(x) = x/L: modal mass ρI_pL/3, stiffness GJ/L, both exact for the
    beam's linear torsion elements."""
    steel = Material.steel()
    section = BeamSection.box(0.03, 0.015, 0.002)
    length = 0.5
    fe = straight_beam(length, 40, section, steel)
    data = static_correction(clamped_modes(fe, "root", 4), fe, "tip", "4")
    assert data.n_modes == 5
    m_twist, k_twist = data.M_ff[4, 4], data.K_ff[4, 4]
    np.testing.assert_allclose(m_twist, steel.rho * section.Ip * length / 3, rtol=1e-9)
    np.testing.assert_allclose(k_twist, steel.G * section.J / length, rtol=1e-9)


def test_stress_of_a_nonlinear_beam_run_points_to_its_section_forces(tmp_path, capsys):
    """A nonlinear beam has no FE model to reduce with --stress: the message names the
    beam and where its stresses are (it said to reduce the body's FE model again)."""
    out = tmp_path / "e.res.h5"
    root = Path(__file__).resolve().parents[1]
    assert cli(["run", str(root / "cases" / "elastica.toml"), "--set", "solver.t_end=0.002",
                "-o", str(out), "--quiet"]) in (0, 3)
    capsys.readouterr()
    assert cli(["stress", str(out)]) == 2
    err = capsys.readouterr().err
    assert "nonlinear beam(s)" in err and "beam_forces.fibre_stress" in err
