"""Static equilibrium and quasi-static analysis (flexmbs.analysis.static;
docs/static_linear.md) against statics worked by hand and beam theory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flexmbs.analysis import quasi_static, static_equilibrium
from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.cli.main import main
from flexmbs.errors import ConvergenceError
from flexmbs.model import ModelBuilder, Polynomial

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
GRAVITY_DOWN_Z = {"model.gravity": [0.0, 0.0, -9.81], "bodies.beam.xi": [0.0] * 4}


def test_the_pendulum_comes_to_rest_hanging_straight_down():
    """From 30°: the bob (1 kg, 0.5 m) below the pivot, the pin carrying m g = 9.81 N."""
    system = System(load_case(CASES / "seed_pendulum.toml").model)
    rest = static_equilibrium(system)
    np.testing.assert_allclose(rest.q[3:7], [1.0, 0.0, 0.0, 0.0], atol=1e-12)
    pin = [rest.lam[k] for k, n in enumerate(rest.constraint_names) if n == "pivot[r.y]"]
    assert abs(pin[0]) == pytest.approx(9.81, rel=1e-12)
    assert rest.residual < 1e-9 and rest.violation < 1e-12


def test_cantilever_under_its_weight_against_beam_theory_and_statics():
    """The shipped steel cantilever (4 clamped modes) under gravity: tip deflection
    ρAgL⁴/(8EI) with EI/ρA from its first frequency (ω₁ = 1.8751² √(EI/ρAL⁴)) to 0.5 %
    (modal truncation), and the clamp carrying the weight m g and the moment m g L/2
    exactly (statics)."""
    case = load_case(CASES / "cantilever_release.toml", GRAVITY_DOWN_Z)
    system = System(case.model)
    rest = static_equilibrium(system)
    body = system.bodies[0]
    data = body.data
    xi = rest.q[7:]
    tip = data.phi.reshape(data.n_nodes, 3, -1)[np.argmax(data.nodes[:, 0])] @ xi
    length = float(np.ptp(data.nodes[:, 0]))
    omega1 = 2 * np.pi * data.frequencies[0]
    ei_per_rho_a = omega1**2 * length**4 / 1.875104068711961**4
    expected = 9.81 * length**4 / (8 * ei_per_rho_a)
    assert tip[2] == pytest.approx(-expected, rel=5e-3)
    mass = data.invariants.mass
    lam = dict(zip(rest.constraint_names, rest.lam, strict=True))
    assert abs(lam["clamp[r.z]"]) == pytest.approx(mass * 9.81, rel=1e-10)
    moments = [abs(v) for k, v in lam.items() if k.startswith("clamp[") and "r." not in k]
    assert max(moments) == pytest.approx(mass * 9.81 * length / 2, rel=1e-6)


def test_a_run_from_equilibrium_stays_at_rest(tmp_path, capsys):
    out = tmp_path / "c.res.h5"
    sets = ["--set", "model.gravity=[0, 0, -9.81]", "--set", "bodies.beam.xi=[0,0,0,0]",
            "--set", "solver.t_end=0.05"]
    assert main(["run", str(CASES / "cantilever_release.toml"), "-o", str(out),
                 "--from-equilibrium", "--quiet", *sets]) == 0
    from flexmbs.results import SimulationResult

    res = SimulationResult.load(out)
    xi = res.modal_coordinates("beam")
    assert np.ptp(xi[:, 0]) < 1e-9 * abs(xi[0, 0])
    assert abs(xi[0, 0]) > 1e-3  # it did start deflected


def test_a_body_nothing_holds_has_no_equilibrium_and_the_error_says_where():
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_rigid_body("loose", 1.0, [0.01, 0.01, 0.01])
    with pytest.raises(ConvergenceError, match=r"do not balance are on loose\.y"):
        static_equilibrium(System(b.finalize()), max_iter=5)


def test_quasi_static_drive_torque_holds_the_pendulum():
    """A 2 kg point-like bob on a 0.8 m arm turned slowly by a rotation drive: at each
    angle θ from hanging down the drive holds the gravity moment m g L sin θ."""
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_rigid_body("arm", 2.0, [1e-6, 1e-6, 1e-6], com=[0.0, -0.8, 0.0])
    b.add_marker("ground", "O")
    b.add_marker("arm", "O")
    b.add_revolute("pivot", "ground.O", "arm.O")
    b.add_drive("turn", "rotation", Polynomial((0.0, 1.0)), marker_i="ground.O",
                marker_j="arm.O")
    angles = np.linspace(0.0, 1.2, 7)
    states = quasi_static(System(b.finalize()), angles)
    for theta, rest in zip(angles, states, strict=True):
        torque = rest.lam[rest.constraint_names.index("turn[value]")]
        assert abs(torque) == pytest.approx(2.0 * 9.81 * 0.8 * np.sin(theta), abs=1e-9)


def test_static_command_reports_what_moved(capsys):
    assert main(["static", str(CASES / "seed_pendulum.toml")]) == 0
    text = capsys.readouterr().out
    assert "bob.e3: 0.258819 → 0" in text and "pivot[r.y] -9.81" in text


def test_arm_pose_under_a_shoulder_torque_held_by_springs(tmp_path):
    """The seed arm (no gravity) with rotational springs at the shoulder (k₁ = 8 N m/rad,
    rest at 0.5 rad, the start) and the elbow (k₂ = 5 N m/rad, rest 0): the 2 N m shoulder
    torque turns link 1 by τ/k₁ = 0.25 rad and nothing else — the elbow and the beam carry
    no moment (hand statics)."""
    text = (CASES / "arm_beam_seed.toml").read_text().replace(
        "../modal_data/", str(ROOT / "modal_data") + "/") + """
[[forces]]
name = "shoulder_spring"
type = "rotational-spring-damper"
i = "ground.O"
j = "link1.O"
stiffness = 8.0
angle0 = 0.5

[[forces]]
name = "elbow_spring"
type = "rotational-spring-damper"
i = "link1.E"
j = "link2.O"
stiffness = 5.0
"""
    path = tmp_path / "arm.toml"
    path.write_text(text)
    system = System(load_case(path).model)
    rest = static_equilibrium(system)
    from flexmbs.model.forces import relative_rotation

    zero = np.zeros(system.n_q)
    shoulder = relative_rotation(system, "ground.O", "link1.O", rest.q, zero)[0]
    elbow = relative_rotation(system, "link1.E", "link2.O", rest.q, zero)[0]
    assert shoulder == pytest.approx(0.5 + 2.0 / 8.0, abs=1e-10)
    assert elbow == pytest.approx(0.0, abs=1e-10)
    np.testing.assert_allclose(rest.q[system.slices[2]][7:], 0.0, atol=1e-12)


def test_quasi_static_over_a_load_that_grows_with_time():
    """A rotational spring (k = 40 N m/rad) against a joint torque τ(t) = 2 t N m (no
    gravity): the quasi-static angles are τ/k at every step of the load."""
    b = ModelBuilder()
    b.add_rigid_body("arm", 1.0, [0.01, 0.01, 0.01], com=[0.3, 0.0, 0.0])
    b.add_marker("ground", "O")
    b.add_marker("arm", "O")
    b.add_revolute("pivot", "ground.O", "arm.O")
    b.add_rotational_spring_damper("spring", "ground.O", "arm.O", stiffness=40.0)
    b.add_joint_actuator("motor", "ground.O", "arm.O", Polynomial((0.0, 2.0)))
    system = System(b.finalize())
    from flexmbs.model.forces import relative_rotation

    times = np.linspace(0.0, 5.0, 6)
    for t, rest in zip(times, quasi_static(system, times), strict=True):
        angle = relative_rotation(system, "ground.O", "arm.O", rest.q,
                                  np.zeros(system.n_q))[0]
        assert angle == pytest.approx(2.0 * t / 40.0, abs=1e-10)


def _bent_chain(n_seg):
    """Bathe and Bolourchi's 45° bend (R = 100, unit square section, E = 1e7) as
    ``n_seg`` geometrically exact beams of one element each, joined by fixed joints,
    clamped at one end, 600 out of plane at the other."""
    from flexmbs.modal.fe.beam import BeamSection, Material

    section, material = BeamSection.rectangle(1.0, 1.0), Material(E=1e7, nu=0.0, rho=1.0)
    phi = np.linspace(0.0, np.pi / 4, n_seg + 1)
    nodes = np.stack([100 * np.sin(phi), 100 - 100 * np.cos(phi), 0 * phi], axis=1)
    b = ModelBuilder()
    b.add_marker("ground", "O")
    for j in range(n_seg):
        d = nodes[j + 1] - nodes[j]
        b.add_nonlinear_beam(f"s{j}", float(np.linalg.norm(d)), 1, section, material,
                             position=nodes[j], axis=d, up=(0, 0, 1))
        for end, node, p in (("a", "root", nodes[j]), ("b", "tip", nodes[j + 1])):
            b.add_marker(f"s{j}", end, p, node=node, orientation=np.eye(3), frame="global")
    b.add_joint("clamp", "fixed", "ground.O", "s0.a")
    for j in range(1, n_seg):
        b.add_joint(f"k{j}", "fixed", f"s{j - 1}.b", f"s{j}.a")
    b.add_point_force("P", f"s{n_seg - 1}.b", [0.0, 0.0, 600.0])
    return System(b.finalize())


def test_a_diverging_load_increment_is_given_up_early_and_halved(monkeypatch):
    """The bend as 15 joined beams: Newton diverges under the first quarter of the load
    (its residual climbs past a million times the start's); it is given up within a few
    iterations, the increment halved, and the equilibrium found (the tip as with 8
    segments within 0.1 % of its distance), with fewer than 200 residual evaluations in all (the
    diverging increment alone took over 1200 when only max_iter stopped it)."""
    import flexmbs.analysis.static as static
    from flexmbs.model.joints import marker_state

    evaluations = []
    residuals = static._residuals
    monkeypatch.setattr(static, "_residuals",
                        lambda *a: evaluations.append(1) or residuals(*a))
    tips = []
    for n_seg in (15, 8):
        evaluations.clear()
        system = _bent_chain(n_seg)
        res = static_equilibrium(system, max_iter=200)
        body, marker, sl = system.marker_info(f"s{n_seg - 1}.b")
        tips.append(marker_state(body, marker, res.q[sl], jac_needed=False).r)
        if n_seg == 15:
            assert len(evaluations) < 200, len(evaluations)
    np.testing.assert_allclose(tips[0], tips[1], rtol=0,  # (polygons of 15 and 8 sides)
                               atol=1e-3 * np.linalg.norm(tips[1]))
