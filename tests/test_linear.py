"""Linearization and eigenanalysis (flexmbs.analysis.linear; docs/static_linear.md)
against closed forms and the published rotating-cantilever frequencies."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.analysis import eigenmodes, linearize, static_equilibrium
from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.cli.main import main
from flexmbs.integrators.reference import accelerations
from flexmbs.modal.stiffening import with_stiffening
from flexmbs.model import ModelBuilder, Polynomial

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"


def test_pendulum_about_its_equilibrium_swings_at_sqrt_g_over_l():
    system = System(load_case(CASES / "seed_pendulum.toml").model)
    rest = static_equilibrium(system)
    (mode,) = eigenmodes(linearize(system, rest.q, lam=rest.lam))
    # a 1 kg point mass (inertia 1e-9 kg m² about its centre) on 0.5 m
    expected = np.sqrt(9.81 * 1.0 * 0.5 / (1.0 * 0.5**2 + 1e-9)) / (2 * np.pi)
    assert mode.frequency_hz == pytest.approx(expected, rel=1e-9)
    assert abs(mode.damping_ratio) < 1e-12 and not mode.rigid


def test_a_clamped_body_has_its_modal_frequencies_and_a_free_one_six_rigid_modes():
    clamped = System(load_case(CASES / "cantilever_release.toml",
                               {"bodies.beam.xi": [0.0] * 4}).model)
    modes = eigenmodes(linearize(clamped, clamped.assemble()))
    np.testing.assert_allclose([m.frequency_hz for m in modes],
                               clamped.bodies[0].data.frequencies, rtol=1e-10)
    # undamped: ratios of 0, none of them −0 (which --json printed as -0.0)
    assert all(np.copysign(1.0, m.damping_ratio) == 1.0 for m in modes)
    b = ModelBuilder()
    b.add_rigid_body("free", 1.0, [0.1, 0.2, 0.3])
    free = System(b.finalize())
    modes = eigenmodes(linearize(free, free.assemble()))
    assert len(modes) == 6 and all(m.rigid for m in modes)


def _spinning_beam(omega):
    """A 10 m beam (Kane et al.'s section, the same bending stiffness in both planes),
    12 clamped modes with their stiffening matrices, spun about z at constant Ω."""
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.reduction import clamped_modes

    fe = straight_beam(10.0, 40, BeamSection(A=4e-4, Iy=2e-7, Iz=2e-7, J=4e-7),
                       Material(E=7e10, nu=0.3, rho=3000.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = with_stiffening(clamped_modes(fe, "root", 12), fe)
    b = ModelBuilder()
    b.add_flexible_body("beam", data)
    b.add_marker("beam", "root", node=1)
    b.add_marker("ground", "O")
    b.add_revolute("hub", "ground.O", "beam.root")
    b.add_drive("spin", "rotation", Polynomial((0.0, omega)), marker_i="ground.O",
                marker_j="beam.root")
    return System(b.finalize()), data


@pytest.mark.parametrize("lam, flap", [(1.0, 3.6816), (2.0, 4.1373)])
def test_spinning_cantilever_against_the_published_rotating_frequencies(lam, flap):
    """Linearized about its steady spin at λ = Ω√(ρAL⁴/EI): the first flapwise
    frequency against Hodges and Rutkowski (1981) / Wright et al. (1982), and the first
    in-plane one against √(ω_flap² − Ω²) (the in-plane bending softened by the spin; the
    gyroscopic terms are what give it) — in units √(EI/ρAL⁴), to 1e-4."""
    unit = np.sqrt(7e10 * 2e-7 / (3000.0 * 4e-4 * 10.0**4))
    system, data = _spinning_beam(lam * unit)
    q = system.assemble()
    qd = system.project_velocity(q, None, 0.0)
    qdd, mult = accelerations(system, q, qd, 0.0)
    modes = eigenmodes(linearize(system, q, qd, qdd, mult, 0.0))
    tip = data.phi.reshape(data.n_nodes, 3, -1)[-1]
    found = {"flap": [], "in-plane": []}
    for mode in modes:
        motion = np.abs(tip @ mode.shape[7:])
        found["flap" if motion[2] > motion[1] else "in-plane"].append(
            2 * np.pi * mode.frequency_hz / unit)
    assert min(found["flap"]) == pytest.approx(flap, rel=1e-4)
    assert min(found["in-plane"]) == pytest.approx(np.sqrt(flap**2 - lam**2), rel=1e-4)


def test_linear_command_reports_frequencies_and_states(tmp_path, capsys):
    assert main(["linear", str(CASES / "seed_pendulum.toml"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["frequencies_hz"][0] == pytest.approx(0.7049683707, rel=1e-8)
    assert report["modes"][0]["description"].startswith("bob.e3")
    out = tmp_path / "p.res.h5"
    assert main(["run", str(CASES / "seed_pendulum.toml"), "-o", str(out), "--quiet",
                 "--set", "solver.t_end=0.2"]) == 0
    capsys.readouterr()
    assert main(["linear", str(CASES / "seed_pendulum.toml"), "--at", "0.1",
                 "--results", str(out), "--json"]) == 0
    assert "t = 0.1 s" in json.loads(capsys.readouterr().out)["state"]
    assert main(["linear", str(CASES / "seed_pendulum.toml"), "--at", "0.1"]) == 2
    assert "--at 0.1 needs --results" in capsys.readouterr().err
    assert "chart that turns" not in capsys.readouterr().out  # (no drive)


def test_linear_command_takes_a_runs_steady_spin_in_the_turning_chart(tmp_path, capsys):
    """Kane's beam after its spin-up to 6 rad/s (its drive's rate constant from 15 s):
    `flexmbs linear --results R --at 16` says it linearizes in the chart that turns with
    the drive, and gives the Campbell line's frequencies at 6 rad/s within 1e-5."""
    from flexmbs.analysis import campbell
    from flexmbs.cases.loader import case_system

    case = CASES / "spin_up_beam.toml"
    out = tmp_path / "spin.res.h5"
    assert main(["run", str(case), "-o", str(out), "--quiet", "--set",
                 "solver.t_end=16"]) == 0
    capsys.readouterr()
    assert main(["linear", str(case), "--at", "16", "--results", str(out), "--modes", "8",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "chart that turns with drive 'spin' at 6 rad/s" in report["state"]
    elastic = [m["frequency_hz"] for m in report["modes"] if not m["rigid"]][:4]
    line = campbell(case_system(load_case(case)), "spin", [6.0], n_modes=4)
    np.testing.assert_allclose(elastic, line.frequencies_hz[0], rtol=1e-5)


def test_campbell_diagram_follows_each_mode_through_the_crossing_at_rest(tmp_path,
                                                                         capsys):
    """The spinning cantilever over λ = 0 … 2: at rest its flapwise and in-plane modes
    coincide (3.5160); tracked by MAC, one line rises as Hodges–Rutkowski's flapwise
    values (3.6816 at λ = 1, 4.1373 at λ = 2) and the other as √(ω_flap² − Ω²)."""
    from flexmbs.analysis import campbell

    unit = np.sqrt(7e10 * 2e-7 / (3000.0 * 4e-4 * 10.0**4))
    system, _ = _spinning_beam(0.0)
    result = campbell(system, "spin", unit * np.array([0.0, 0.5, 1.0, 1.5, 2.0]),
                      n_modes=2)
    lines = 2 * np.pi * result.frequencies_hz / unit
    np.testing.assert_allclose(lines[0], 3.5160, rtol=1e-4)
    flap = int(np.argmax(lines[-1]))
    np.testing.assert_allclose(lines[[2, 4], flap], [3.6816, 4.1373], rtol=1e-4)
    np.testing.assert_allclose(lines[[2, 4], 1 - flap],
                               np.sqrt(np.array([3.6816, 4.1373]) ** 2 - [1.0, 4.0]),
                               rtol=1e-4)
    assert np.all(np.diff(lines[:, flap]) > 0) and result.mac_min.min() > 0.99
    out = tmp_path / "campbell"
    assert main(["study", "campbell", str(CASES / "spin_up_beam.toml"), "--drive", "spin",
                 "--speeds", "0:6:4", "--modes", "3", "-o", str(out)]) == 0
    assert "3 modes followed" in capsys.readouterr().out
    header = (out / "campbell.csv").read_text().splitlines()[0]
    assert header.startswith("speed,mode 1 [Hz],mode 2 [Hz],mode 3 [Hz]")
    assert (out / "campbell.png").stat().st_size > 10_000
    assert main(["study", "campbell", str(CASES / "spin_up_beam.toml"), "--drive", "nope",
                 "--speeds", "0:6:4", "-o", str(out)]) == 2
    assert "no drive 'nope'" in capsys.readouterr().err


def test_campbell_from_equilibrium_starts_every_speed_from_the_sag(tmp_path, capsys):
    """The seed double pendulum with its shoulder driven: from the static equilibrium
    (rod 2 hanging below the held rod 1) the elbow's line at Ω = 0 is the pendulum's
    ω² = m g r / (m r² + I_zz); from the case's initial state (rod 2 at 30°, not at rest)
    it is not."""
    text = (CASES / "seed_double_pendulum.toml").read_text() + (
        '\n[[drives]]\nname = "turn"\ntype = "rotation"\ni = "ground.O"\nj = "rod1.O"\n'
        'profile = 0.0\n')
    case = tmp_path / "driven.toml"
    case.write_text(text.replace('file = "seed_double_pendulum.res.h5"', ""))
    lines = {}
    for flag in ([], ["--from-equilibrium"]):
        assert main(["study", "campbell", str(case), "--drive", "turn", "--speeds",
                     "0,1,2", "--modes", "1", "-o", str(tmp_path / f"c{len(flag)}"),
                     "--json", *flag]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["start"] == ("static equilibrium" if flag else "initial")
        lines[bool(flag)] = np.array(report["frequencies_hz"])[:, 0]
    omega = np.sqrt(1.0 * 9.81 * 0.5 / (1.0 * 0.5**2 + 1e-9))
    np.testing.assert_allclose(2 * np.pi * lines[True][0], omega, rtol=1e-9)
    assert abs(2 * np.pi * lines[False][0] / omega - 1) > 1e-3
    assert np.all(np.diff(lines[True]) > 0)  # the centrifugal field stiffens the elbow


def test_double_pendulum_frequencies_against_the_closed_form():
    """Two 1 kg point masses on 0.5 m rods hanging at rest: ω² = (g/L)(2 ∓ √2)."""
    system = System(load_case(CASES / "seed_double_pendulum.toml").model)
    rest = static_equilibrium(system)
    modes = eigenmodes(linearize(system, rest.q, lam=rest.lam))
    expected = np.sqrt(9.81 / 0.5 * (2 - np.array([1.0, -1.0]) * np.sqrt(2))) / (2 * np.pi)
    np.testing.assert_allclose([m.frequency_hz for m in modes], expected, rtol=1e-7)


def test_free_floating_flexible_body_and_a_part_held_through_a_rigid_link():
    """Free–free modes of a beam as a free body: six rigid-body modes and the modal data's
    elastic frequencies; the clamped modes of the same beam welded to the ground through a
    rigid link: exactly the part's frequencies."""
    from flexmbs.modal import clamped_modes, free_free_modes
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam

    fe = straight_beam(1.0, 20, BeamSection.rectangle(0.02, 0.01), Material.steel())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        free = free_free_modes(fe, 4)
        clamped = clamped_modes(fe, "root", 4)
    b = ModelBuilder()
    b.add_flexible_body("beam", free)
    system = System(b.finalize())
    modes = eigenmodes(linearize(system, system.assemble()))
    assert sum(m.rigid for m in modes) == 6
    np.testing.assert_allclose([m.frequency_hz for m in modes if not m.rigid],
                               free.frequencies, rtol=1e-8)
    b = ModelBuilder()
    b.add_rigid_body("link", 3.0, [0.01, 0.02, 0.03], position=[-0.3, 0.0, 0.0])
    b.add_flexible_body("beam", clamped)
    b.add_marker("ground", "O", position=[-0.3, 0.0, 0.0])
    b.add_marker("link", "O")
    b.add_marker("link", "tip", position=[0.3, 0.0, 0.0])
    b.add_marker("beam", "root", node=1)
    b.add_joint("base", "fixed", "ground.O", "link.O")
    b.add_joint("weld", "fixed", "link.tip", "beam.root")
    system = System(b.finalize())
    modes = eigenmodes(linearize(system, system.assemble()))
    np.testing.assert_allclose([m.frequency_hz for m in modes], clamped.frequencies,
                               rtol=1e-9)


def test_without_stiffening_in_plane_bending_softens_as_omega_squared():
    """The spinning cantilever with stiffening switched off: its in-plane modes follow
    ω² = ω₁² − Ω² (linear FFRF's centrifugal softening), its flapwise ones stay at ω₁."""
    unit = np.sqrt(7e10 * 2e-7 / (3000.0 * 4e-4 * 10.0**4))
    omega = 0.8 * unit
    system, data = _spinning_beam(omega)
    system = System(system.model, stiffening=False)
    q = system.assemble()
    qd = system.project_velocity(q, None, 0.0)
    qdd, mult = accelerations(system, q, qd, 0.0)
    modes = eigenmodes(linearize(system, q, qd, qdd, mult, 0.0))
    tip = data.phi.reshape(data.n_nodes, 3, -1)[-1]
    w1 = 2 * np.pi * data.frequencies[0]
    in_plane = [2 * np.pi * m.frequency_hz for m in modes
                if np.abs(tip @ m.shape[7:])[1] > np.abs(tip @ m.shape[7:])[2]]
    flap = [2 * np.pi * m.frequency_hz for m in modes
            if np.abs(tip @ m.shape[7:])[2] >= np.abs(tip @ m.shape[7:])[1]]
    assert min(in_plane) == pytest.approx(np.sqrt(w1**2 - omega**2), rel=1e-5)
    assert min(flap) == pytest.approx(w1, rel=1e-7)


def test_a_linear_mode_is_drawn_over_one_period(tmp_path):
    """flexmbs linear --animate 1: the clamped cantilever's first mode as a motion over
    one period (q* + a Re(δq e^{iωt}), a = 0.1 over the largest coordinate), written as a
    ParaView collection and as a GIF."""
    from flexmbs.analysis.linear import mode_motion

    clamped = System(load_case(CASES / "cantilever_release.toml",
                               {"bodies.beam.xi": [0.0] * 4}).model)
    lin = linearize(clamped, clamped.assemble())
    mode = eigenmodes(lin)[0]
    motion = mode_motion(clamped, lin, mode, frames=12)
    assert motion.t[-1] == pytest.approx(1.0 / mode.frequency_hz)
    np.testing.assert_allclose(motion.q[0] - lin.q, 0.1 * np.real(mode.shape), atol=1e-15)
    np.testing.assert_allclose(motion.q[-1], motion.q[0], atol=1e-12)  # one full period
    case = str(CASES / "cantilever_release.toml")
    sets = ["--set", "bodies.beam.xi=[0,0,0,0]", "--at", "initial", "--animate", "1"]
    assert main(["linear", case, *sets, "-o", str(tmp_path / "m.pvd")]) == 0
    assert len(list((tmp_path / "m_vtu").glob("*.vtu"))) == 24
    assert main(["linear", case, *sets, "-o", str(tmp_path / "m.gif")]) == 0
    assert (tmp_path / "m.gif").stat().st_size > 10_000
    assert main(["linear", case, "--animate", "9", "-o", str(tmp_path / "x.gif"),
                 "--set", "bodies.beam.xi=[0,0,0,0]", "--at", "initial"]) == 2
    # flexmbs animate CASE.toml --mode K: the same drawing about the static equilibrium
    assert main(["animate", str(CASES / "seed_double_pendulum.toml"), "--mode", "2",
                 "-o", str(tmp_path / "dp.pvd")]) == 0  # (the GIF's drawing: above)
    assert len(list((tmp_path / "dp_vtu").glob("*.vtu"))) == 24


def test_slider_crank_frequency_at_several_crank_angles_against_an_energy_model(tmp_path):
    """The ideal slider–crank without its motor, the slider held by a spring along the
    guide (k = 500 N/m, unstretched at the chosen crank angle θ*, no gravity): one degree
    of freedom whose frequency is ω² = k x'(θ*)² / M(θ*), with the slider travel x(θ)
    and the generalized inertia M(θ) = I_crank,O + m_rod |r_rod'(θ)|² + I_rod φ'(θ)² +
    m_slider x'(θ)² written here from the mechanism's closed-form kinematics (an
    independent model); flexmbs: [[initial]] at θ*, static equilibrium, linearization."""
    l1, l2, k = 0.05, 0.12, 500.0
    mc, ic, dc = 0.30, 1e-4, 0.025  # crank: mass, inertia about its centre, centre at dc
    mr, ir, dr = 0.21, 2.5e-4, 0.06
    ms = 0.14
    base = (CASES / "slider_crank_ideal.toml").read_text()
    base = base[:base.index("[[drives]]")] + base[base.index("[solver]"):]
    for theta in np.radians([35.0, 70.0, 110.0]):
        phi = -np.arcsin(l1 * np.sin(theta) / l2)
        dphi = -l1 * np.cos(theta) / (l2 * np.cos(phi))
        x = l1 * np.cos(theta) + l2 * np.cos(phi)
        dx = -l1 * np.sin(theta) - l2 * np.sin(phi) * dphi
        d_rod = (l1 * np.array([-np.sin(theta), np.cos(theta)])
                 + dr * dphi * np.array([-np.sin(phi), np.cos(phi)]))
        inertia = ic + mc * dc**2 + mr * d_rod @ d_rod + ir * dphi**2 + ms * dx**2
        expected = np.sqrt(k * dx**2 / inertia) / (2 * np.pi)
        text = base.replace("gravity = [0.0, -9.81, 0.0]", "gravity = [0.0, 0.0, 0.0]") + f"""
[[markers]]
body = "ground"
name = "anchor"
position = [1.0, 0.0, 0.0]

[[forces]]
name = "spring"
type = "spring-damper"
i = "ground.anchor"
j = "slider.P"
stiffness = {k}
free_length = {float(1.0 - x)!r}

[[initial]]
joint = "pivot"
angle = {float(theta)!r}
rate = 0.0
"""
        path = tmp_path / "sc.toml"
        path.write_text(text)
        case = load_case(path)
        system = System(case.model)
        from flexmbs.assembly.initial import initial_state

        q0, _ = initial_state(system)
        rest = static_equilibrium(system, q0=q0)
        modes = [m for m in eigenmodes(linearize(system, rest.q, lam=rest.lam))
                 if not m.rigid]
        assert len(modes) == 1
        assert modes[0].frequency_hz == pytest.approx(expected, rel=1e-8), np.degrees(theta)


def test_the_tangents_of_a_linearization_equal_finite_differences_of_the_residual():
    """At the spinning cantilever's steady state (q̇ ≠ 0, stiffening on) the K_t and C_t
    that the linearization uses are the central differences of the full residual
    r = M q̈ + Φ_qᵀλ − Q in q and q̇ (relative to the largest entry)."""
    unit = np.sqrt(7e10 * 2e-7 / (3000.0 * 4e-4 * 10.0**4))
    system, _ = _spinning_beam(1.5 * unit)
    q = system.assemble()
    qd = system.project_velocity(q, None, 0.0)
    qdd, lam = accelerations(system, q, qd, 0.0)
    k_t, c_t = (np.asarray(m.toarray() if hasattr(m, "toarray") else m) for m in
                system.residual_tangents(q, qd, qdd, lam, 0.0, sparse=False))

    def residual(qq, qqd):
        return np.asarray(system.dynamic_residual(qq, qqd, qdd, lam, 0.0,
                                                  sparse=False)[0])

    step = 1e-6
    k_fd, c_fd = np.zeros_like(k_t), np.zeros_like(c_t)
    for j in range(system.n_q):
        e = np.zeros(system.n_q)
        e[j] = step
        k_fd[:, j] = (residual(q + e, qd) - residual(q - e, qd)) / (2 * step)
        c_fd[:, j] = (residual(q, qd + e) - residual(q, qd - e)) / (2 * step)
    np.testing.assert_allclose(k_t, k_fd, rtol=0, atol=1e-6 * np.abs(k_t).max())
    np.testing.assert_allclose(c_t, c_fd, rtol=0, atol=1e-6 * np.abs(c_t).max())


@pytest.mark.parametrize("inertia_x", [1e-4, 0.05])
def test_a_blade_hinged_on_a_spinning_hub_flaps_at_the_centrifugal_frequency(inertia_x):
    """A rigid blade (2 kg, 1 m, centre 0.5 m out) on a flap hinge at the axis of a hub
    driven at Ω: the flap frequency is Ω √((I_z − I_x)/I_y) about the hinge (the
    centrifugal restoring moment over the flap inertia), Ω for a thin blade. The
    blade's Euler parameters turn with the hub, so this needs the turning chart: held
    still, the linearization gave 0.968 Ω (a time run of the thin blade knocked out of
    plane flaps at 1.9997 rad/s at Ω = 2, docs/static_linear.md)."""
    from flexmbs.analysis import campbell

    b = ModelBuilder()
    b.add_marker("ground", "O")
    b.add_rigid_body("hub", 1.0, np.eye(3) * 0.01)
    b.add_marker("hub", "c")
    b.add_revolute("spin_joint", "ground.O", "hub.c")
    b.add_drive("spin", "rotation", Polynomial((0.0, 0.0)), marker_i="ground.O",
                marker_j="hub.c")
    mass, length = 2.0, 1.0
    centre = mass * length**2 / 12
    b.add_rigid_body("blade", mass, np.diag([inertia_x, centre, centre]),
                     position=(length / 2, 0, 0))
    hinge = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])  # z along the global y
    b.add_marker("hub", "h", orientation=hinge)
    b.add_marker("blade", "h", position=(-length / 2, 0, 0), orientation=hinge)
    b.add_revolute("flap", "hub.h", "blade.h")
    system = System(b.finalize())
    speeds = np.array([1.0, 2.0, 5.0])
    result = campbell(system, "spin", speeds, n_modes=1)
    about_hinge = centre + mass * (length / 2) ** 2
    expected = speeds * np.sqrt((about_hinge - inertia_x) / about_hinge)
    np.testing.assert_allclose(2 * np.pi * result.frequencies_hz[:, 0], expected,
                               rtol=1e-9)


def test_campbell_leaves_bodies_that_do_not_turn_with_the_drive_alone():
    """A body beside the rotor (on its own hinge across the spin axis, 3 m off it, held
    by a torsional spring): the rigid turn of the whole model would break its hinge, so
    no steady spin is solved for, and its line stays at √(k/I) whatever the speed."""
    from flexmbs.analysis import campbell

    b = ModelBuilder()
    b.add_marker("ground", "O")
    b.add_rigid_body("hub", 1.0, np.diag([0.01, 0.01, 0.02]))
    b.add_marker("hub", "c")
    b.add_revolute("spin_joint", "ground.O", "hub.c")
    b.add_drive("spin", "rotation", Polynomial((0.0, 0.0)), marker_i="ground.O",
                marker_j="hub.c")
    across = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])  # its hinge along global y
    b.add_marker("ground", "P", (3.0, 0.0, 0.0), orientation=across)
    b.add_rigid_body("side", 2.0, np.diag([0.2, 0.1, 0.3]), position=(3.0, 0.0, 0.0))
    b.add_marker("side", "c", orientation=across)
    b.add_revolute("side_hinge", "ground.P", "side.c")
    b.add_rotational_spring_damper("k", "ground.P", "side.c", stiffness=1.96, damping=0.0)
    system = System(b.finalize())
    result = campbell(system, "spin", np.array([0.5, 1.0, 2.0]), n_modes=1)
    np.testing.assert_allclose(2 * np.pi * result.frequencies_hz[:, 0],
                               np.sqrt(1.96 / 0.1), rtol=1e-9)


@pytest.mark.parametrize("turn", [0.0, 0.3, np.pi / 4, 1.2])
def test_a_repeated_frequency_takes_the_basis_the_next_speed_continues(turn):
    """Two modes of one repeated frequency come in any basis of their plane (the
    eigensolver's round-off picks it: with one BLAS thread the spinning cantilever's
    crossing at rest came out turned, MAC 0.63 to the next speed). ``aligned`` gives them
    the next speed's shapes projected onto that plane, so the matching that follows has
    MAC 1, whatever the basis; a lone mode is left as it is."""
    from flexmbs.analysis.campbell import aligned, mac
    from flexmbs.analysis.linear import Mode

    def mode(f, shape):
        shape = np.asarray(shape, dtype=complex)
        return Mode(f, f, 0.0, 2j * np.pi * f, shape / shape[np.argmax(np.abs(shape))],
                    False)

    c, s = np.cos(turn), np.sin(turn)
    tracked = [mode(3.516, [c, s, 0, 0]), mode(3.516, [-s, c, 0, 0]),
               mode(22.03, [0, 0, 1, 0.1])]
    # the next speed: the plane's two modes split apart (slightly out of the plane), a
    # third mode above
    candidates = [mode(3.60, [0.01, 1, 0.001, 0]), mode(3.68, [1, -0.02, 0, 0.001]),
                  mode(22.1, [0, 0, 1, 0.11])]
    got = aligned(tracked, candidates)
    macs = np.array([[mac(a.shape, b.shape) for b in candidates] for a in got])
    assert sorted(macs[:2, :2].max(axis=1)) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert {int(np.argmax(row)) for row in macs[:2]} == {0, 1}
    assert got[2] is tracked[2]
    for a, b in zip(got[:2], tracked[:2], strict=True):  # still in the plane: eigenvectors
        assert np.abs(a.shape[2:]).max() == 0.0 and np.abs(a.shape).max() == pytest.approx(1)
        assert a.frequency_hz == b.frequency_hz


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 8), spread=st.floats(1.0, 4.0))
def test_undamped_modes_have_a_damping_ratio_of_exactly_zero(seed, n, spread):
    """Undamped M, K (C = 0): the first-order eigenvalues' real parts are the solver's
    round-off, of either sign; they printed ζ = −0.0000 (a tutorial's output differed by
    its sign between machines). Every ratio is 0.0 and none is negative."""
    from flexmbs.analysis.linear import LinearSystem

    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    m = a @ a.T + n * np.eye(n)
    b = rng.normal(size=(n, n)) * np.logspace(0, spread, n)
    k = b @ b.T + np.eye(n)
    system = LinearSystem(m, np.zeros((n, n)), k, np.eye(n), np.zeros(n), 0.0,
                          tuple(f"z{i}" for i in range(n)))
    modes = eigenmodes(system)  # (frequencies within 1e4 of each other: none is taken
    assert len(modes) == n      # for a rigid mode, |s| < rigid_tol = 1e-6 of the largest)
    assert not any(mode.rigid for mode in modes)
    for mode in modes:
        assert mode.damping_ratio == 0.0 and not np.signbit(mode.damping_ratio)
    want = np.sqrt(sla.eigh(k, m, eigvals_only=True)) / (2 * np.pi)
    got = np.sort([mo.frequency_hz for mo in modes])
    # (the first-order eigenproblem resolves ω² to about ε ω_max²: δω ≈ ε ω_max²/ω)
    eps = np.finfo(float).eps
    assert np.all(np.abs(got - want) <= 1e3 * eps * (want + want.max() ** 2 / want))
