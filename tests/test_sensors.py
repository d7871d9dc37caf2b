"""Sensors (flexmbs.model.sensors, flexmbs.assembly.sensors; docs/sensors.md) against
independent values:

* the pendulum's pin force along the rod against Newton's law for its centre of mass,
  m (g cos θ + L θ̇²), and the marker acceleration against (F + m g)/m;
* the slider–crank's joint angles (unwrapped over several turns) and slider travel
  against the closed-form kinematics of the mechanism;
* a damped flexible cantilever under a tip load: the root reaction against statics
  (F and F × L), and the node sensors against finite differences of the node's
  position and against the modal coordinates;
* the results file (round trip, units), the case file and the command line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from flexmbs.cases import load_case, run_case
from flexmbs.cases.loader import CaseError
from flexmbs.cli.main import main
from flexmbs.integrators import SimulationResult

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"

PENDULUM_SENSORS = '''
[[markers]]
body = "bob"
name = "C"
position = [0.0, -0.5, 0.0]

[[sensors]]
name = "theta"
type = "joint"
quantity = "angle"
joint = "pivot"

[[sensors]]
name = "omega"
type = "joint"
quantity = "angle_rate"
joint = "pivot"

[[sensors]]
name = "pin"
type = "reaction"
quantity = "force"
joint = "pivot"
frame = "global"

[[sensors]]
name = "pin_local"
type = "reaction"
quantity = "force"
joint = "pivot"

[[sensors]]
name = "bob"
type = "marker"
quantity = "position"
marker = "bob.C"

[[sensors]]
name = "bob_acc"
type = "marker"
quantity = "acceleration"
marker = "bob.C"

[[sensors]]
name = "kinetic"
type = "energy"
quantity = "kinetic"
body = "bob"
'''


def _case_with(tmp_path, source, extra, name="case.toml"):
    text = (CASES / source).read_text() + extra
    path = tmp_path / name
    path.write_text(text.replace("../modal_data/", str(ROOT / "modal_data") + "/"))
    return path


@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    path = _case_with(tmp_path_factory.mktemp("pendulum"), "seed_pendulum.toml",
                      PENDULUM_SENSORS)
    return run_case(load_case(path, {"solver.t_end": 1.5}))[1]


def test_pendulum_pin_force_follows_newtons_law(pendulum):
    """Radial pin force on the bob = m (g cos θ + L θ̇²) (centripetal acceleration of
    the centre of mass; m = 1 kg, L = 0.5 m, g = 9.81 m/s²), with θ and θ̇ from the joint
    sensors, θ checked against the bob's position; the bob's acceleration sensor against
    (F + m g)/m."""
    m, length, g = 1.0, 0.5, 9.81
    theta, omega = pendulum.sensor("theta")[:, 0], pendulum.sensor("omega")[:, 0]
    bob = pendulum.sensor("bob")
    np.testing.assert_allclose(np.arctan2(bob[:, 0], -bob[:, 1]), theta, rtol=0, atol=1e-9)
    force = pendulum.sensor("pin")
    outward = np.stack([np.sin(theta), -np.cos(theta), np.zeros_like(theta)], axis=1)
    tension = -np.sum(force * outward, axis=1)
    expected = m * (g * np.cos(theta) + length * omega**2)
    np.testing.assert_allclose(tension, expected, rtol=0, atol=1e-6 * expected.max())
    np.testing.assert_allclose(m * pendulum.sensor("bob_acc"),
                               force + np.array([0.0, -m * g, 0.0]), rtol=0, atol=1e-4)
    np.testing.assert_allclose(pendulum.sensor("kinetic")[:, 0],
                               0.5 * m * (length * omega) ** 2, rtol=1e-7, atol=1e-12)
    # the joint frame: ground.O has the global axes, so both resolutions agree
    np.testing.assert_allclose(pendulum.sensor("pin_local"), force, rtol=0, atol=1e-12)
    assert pendulum.sensors["pin"]["units"] == "N"
    assert pendulum.sensors["theta"]["units"] == "rad"


def test_sensors_survive_the_results_file(pendulum, tmp_path):
    path = tmp_path / "p.res.h5"
    pendulum.save(path)
    back = SimulationResult.load(path)
    assert set(back.sensors) == set(pendulum.sensors)
    for name, record in pendulum.sensors.items():
        np.testing.assert_array_equal(back.sensors[name]["values"], record["values"])
        for key in ("units", "components", "kind", "quantity", "target", "frame", "node"):
            assert back.sensors[name][key] == record[key], (name, key)
    import h5py

    with h5py.File(path, "r") as f:  # readable without flexmbs
        assert f["sensors/pin"].attrs["units"] == "N"
        assert json.loads(f["sensors/pin"].attrs["components"]) == ["x", "y", "z"]


SLIDER_SENSORS = '''
[[sensors]]
name = "crank"
type = "joint"
quantity = "angle"
joint = "pivot"

[[sensors]]
name = "elbow"
type = "joint"
quantity = "angle"
joint = "crankpin"

[[sensors]]
name = "travel"
type = "joint"
quantity = "displacement"
joint = "slide"

[[sensors]]
name = "speed"
type = "joint"
quantity = "displacement_rate"
joint = "slide"
'''


def test_slider_crank_joint_coordinates_follow_the_closed_form(tmp_path):
    """Crank at ω = 10π rad/s for 0.45 s (2.25 turns, output every 5 ms): the crank angle
    is ωt unwrapped, the slider travels L1 cos θ + √(L2² − L1² sin²θ), the rod's angle
    relative to the crank is −asin(L1 sin θ / L2) − θ (wrapped to the nearest turn of
    the sensor's), and the slider speed is the time derivative of the travel."""
    path = _case_with(tmp_path, "slider_crank_ideal.toml", SLIDER_SENSORS)
    res = run_case(load_case(path, {"solver.t_end": 0.45, "solver.output_every": 50}))[1]
    assert res.success
    l1, l2, w = 0.05, 0.12, 10 * np.pi
    theta = w * res.t
    np.testing.assert_allclose(res.sensor("crank")[:, 0], theta, rtol=0, atol=1e-8)
    travel = l1 * np.cos(theta) + np.sqrt(l2**2 - (l1 * np.sin(theta)) ** 2)
    np.testing.assert_allclose(res.sensor("travel")[:, 0], travel, rtol=0, atol=1e-8)
    speed = (-l1 * w * np.sin(theta)
             - l1**2 * w * np.sin(theta) * np.cos(theta)
             / np.sqrt(l2**2 - (l1 * np.sin(theta)) ** 2))
    # velocities of the index-3 HHT run meet the velocity constraint only to the step's
    # accuracy (h = 0.1 ms): 1e-6 of the peak speed here
    np.testing.assert_allclose(res.sensor("speed")[:, 0], speed, rtol=0,
                               atol=1e-5 * np.abs(speed).max())
    relative = -np.arcsin(l1 * np.sin(theta) / l2) - theta
    elbow = res.sensor("elbow")[:, 0]
    turns = np.round((elbow - relative) / (2 * np.pi))
    assert np.all(turns == turns[0])  # unwrapped: one branch over the whole run
    np.testing.assert_allclose(elbow - 2 * np.pi * turns, relative, rtol=0, atol=1e-8)
    assert np.ptp(elbow) > 4 * np.pi  # more than two turns counted


CANTILEVER_SENSORS = '''
[[markers]]
body = "beam"
name = "tip"
node = 81

[[forces]]
name = "load"
type = "point-force"
marker = "beam.tip"
value = [0.0, 0.0, -20.0]

[[sensors]]
name = "root_force"
type = "reaction"
quantity = "force"
joint = "clamp"

[[sensors]]
name = "root_moment"
type = "reaction"
quantity = "torque"
joint = "clamp"

[[sensors]]
name = "tip_body"
type = "node"
quantity = "displacement"
body = "beam"
node = 81

[[sensors]]
name = "tip_global"
type = "node"
quantity = "displacement"
body = "beam"
node = 81
frame = "global"

[[sensors]]
name = "tip_velocity"
type = "node"
quantity = "velocity"
body = "beam"
node = 81
frame = "global"

[[sensors]]
name = "tip_point"
type = "marker"
quantity = "position"
marker = "beam.tip"

[[sensors]]
name = "xi"
type = "modal"
quantity = "coordinates"
body = "beam"
'''


def test_cantilever_root_reaction_balances_the_tip_load(tmp_path):
    """A 1 m clamped steel cantilever (4 modes, 50 % modal damping) under a 20 N tip load
    settles: the clamp's reaction on the beam is −F and the moment F × L about the root
    (statics, independent of the modes); the node sensors equal the modal coordinates
    times the node's shapes, and the global node velocity the time derivative of the
    node's position."""
    path = _case_with(tmp_path, "cantilever_release.toml", CANTILEVER_SENSORS)
    case = load_case(path, {"bodies.beam.xi": [0.0, 0.0, 0.0, 0.0],
                            "bodies.beam.damping_ratio": 0.5, "solver.t_end": 1.0})
    system, res = run_case(case)
    assert res.success
    load = np.array([0.0, 0.0, -20.0])
    np.testing.assert_allclose(res.sensor("root_force")[-1], -load, rtol=0, atol=1e-6)
    tip = res.sensor("tip_point")[-1]
    np.testing.assert_allclose(res.sensor("root_moment")[-1], -np.cross(tip, load),
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose(res.sensor("root_moment")[-1], [0.0, -20.0, 0.0], rtol=0,
                               atol=1e-3)  # F L with L = 1 m (the arm barely changes)
    xi = res.sensor("xi")
    np.testing.assert_array_equal(xi, res.modal_coordinates("beam"))
    body = system.bodies[0]
    shapes = body.data.phi.reshape(body.data.n_nodes, 3, -1)[80]  # node label 81
    np.testing.assert_allclose(res.sensor("tip_body"), xi @ shapes.T, rtol=0, atol=1e-15)
    np.testing.assert_allclose(res.sensor("tip_global"), res.sensor("tip_body"), rtol=0,
                               atol=1e-15)  # the frame does not move
    position = res.sensor("tip_point")
    rate = np.gradient(position, res.t, axis=0)
    vel = res.sensor("tip_velocity")
    late = res.t > 0.05  # after the load step's higher-mode transient (50 % damping)
    np.testing.assert_allclose(vel[late][:-2], rate[late][:-2], rtol=0,
                               atol=2e-3 * np.abs(vel).max())


def test_spring_damper_force_sensor_equals_its_law():
    """A 2 kg block on a spring–damper (k = 400 N/m, c = 3 N s/m, L0 = 0.3 m) hanging
    from the ground: the force sensor equals k (L − L0) + c L̇ with L, L̇ from the
    block's marker position and velocity sensors (API)."""
    from flexmbs.assembly import System
    from flexmbs.integrators import simulate
    from flexmbs.model import ModelBuilder

    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_rigid_body("block", 2.0, [0.01, 0.01, 0.01], position=[0.1, 0.0, -0.5])
    b.add_marker("ground", "top")
    b.add_marker("block", "hook")
    b.add_spring_damper("strut", "ground.top", "block.hook", stiffness=400.0, damping=3.0,
                        free_length=0.3)
    b.add_sensor("f", "force", "value", force="strut")
    b.add_sensor("r", "marker", "position", marker="block.hook")
    b.add_sensor("v", "marker", "velocity", marker="block.hook")
    res = simulate(System(b.finalize()), 0.5, 1e-3, "generalized-alpha", rho_inf=0.8)
    r, v = res.sensor("r"), res.sensor("v")
    length = np.linalg.norm(r, axis=1)
    rate = np.sum(r * v, axis=1) / length
    np.testing.assert_allclose(res.sensor("f")[:, 0], 400.0 * (length - 0.3) + 3.0 * rate,
                               rtol=1e-12, atol=1e-9)
    assert res.sensors["f"]["units"] == "N"
    np.testing.assert_allclose(v[1:-1], np.gradient(r, res.t, axis=0)[1:-1], rtol=0,
                               atol=1e-3 * np.abs(v).max())


@pytest.mark.parametrize("entry, message", [
    ('type = "joint"\nquantity = "angle"\njoint = "nope"', "unknown joint 'nope'"),
    ('type = "joint"\nquantity = "displacement"\njoint = "pivot"',
     "a revolute joint has no displacement"),
    ('type = "reaction"\nquantity = "moment"\njoint = "pivot"',
     "quantity 'moment' is not one that reaction sensors measure (['force', 'torque'])"),
    ('type = "gauge"\nquantity = "x"\njoint = "pivot"', "unknown sensor type 'gauge'"),
    ('type = "marker"\nquantity = "position"\nmarker = "bob.Q"', "marker 'bob.Q' not found"),
    ('type = "node"\nquantity = "displacement"\nbody = "bob"\nnode = 1',
     "body 'bob' is not flexible"),
    ('type = "reaction"\nquantity = "force"\njoint = "pivot"\nframe = "body"',
     "frame must be one of ['joint', 'global']"),
    ('type = "joint"\nquantity = "angle"\nmarker = "bob.O"', "joint sensors need joint="),
])
def test_bad_sensors_are_refused_by_name(tmp_path, entry, message):
    path = _case_with(tmp_path, "seed_pendulum.toml",
                      f'\n[[sensors]]\nname = "s1"\n{entry}\n')
    with pytest.raises(CaseError, match="sensor 's1'") as info:
        load_case(path)
    assert message in str(info.value)


def test_run_json_and_summary_give_each_sensors_extremes(tmp_path, capsys):
    path = _case_with(tmp_path, "seed_pendulum.toml", PENDULUM_SENSORS)
    out = tmp_path / "p.res.h5"
    assert main(["run", str(path), "-o", str(out), "--set", "solver.t_end=1.0",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    theta = report["sensors"]["theta"]
    assert theta["units"] == "rad"
    values = SimulationResult.load(out).sensor("theta")[:, 0]
    assert theta["components"]["angle"] == {"min": float(values.min()),
                                            "max": float(values.max()),
                                            "final": float(values[-1])}
    assert main(["run", str(path), "-o", str(out), "--set", "solver.t_end=1.0"]) == 0
    text = capsys.readouterr().out
    assert "sensors" in text and "theta [rad]" in text


def test_plot_draws_sensors_by_name(tmp_path, capsys):
    path = _case_with(tmp_path, "seed_pendulum.toml", PENDULUM_SENSORS)
    out = tmp_path / "p.res.h5"
    assert main(["run", str(path), "-o", str(out), "--set", "solver.t_end=0.3",
                 "--quiet"]) == 0
    png = tmp_path / "s.png"
    assert main(["plot", str(out), "sensor", "theta", "pin", "-o", str(png)]) == 0
    assert png.stat().st_size > 1000
    assert main(["plot", str(out), "sensor", "nope", "-o", str(png)]) == 2
    assert "no sensor 'nope'" in capsys.readouterr().err
