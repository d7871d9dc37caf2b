"""Initial conditions in joint coordinates (flexmbs.assembly.initial; docs/multibody.md):
against the hand-computed poses of the shipped arm case, against the forward kinematics
of a double pendulum with prescribed angles and rates, and bad input refused by name."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from flexmbs.assembly import System
from flexmbs.cases import load_case, run_case
from flexmbs.cases.loader import CaseError
from flexmbs.integrators import simulate
from flexmbs.model import ModelBuilder

ROOT = Path(__file__).resolve().parents[1]


def _arm_without_poses(tmp_path, initial: str) -> Path:
    """The seed arm case with every body's position and attitude removed (all bodies at
    the origin, along x) and the joint coordinates given instead."""
    text = (ROOT / "cases" / "arm_beam_seed.toml").read_text()
    blocks = re.split(r"(?m)^(?=\[)", text)  # table by table
    text = "".join(re.sub(r"(?m)^(position|axis|angle_deg) = .*$", "", block)
                   if block.startswith("[[bodies]]") else block for block in blocks)
    text = text.replace("../modal_data/", str(ROOT / "modal_data") + "/")
    path = tmp_path / "arm.toml"
    path.write_text(text + initial)
    return path


def test_joint_coordinates_place_the_arm_where_the_case_puts_it_by_hand(tmp_path):
    """Shoulder 0.5 rad, elbow 0 from every body at the origin: link1 turned by 0.5 rad
    about z, link2 at 0.4 (cos 0.5, sin 0.5), the beam at 0.7 (cos 0.5, sin 0.5), all
    turned alike (closed form, to 1e-12); and the shipped case's own start, whose
    hand-computed poses (11 digits) its assembly corrects by some 4e-7, to 1e-6."""
    path = _arm_without_poses(tmp_path, '''
[[initial]]
joint = "shoulder"
angle = 0.5

[[initial]]
joint = "elbow"
angle_deg = 0.0
''')
    system, new = run_case(load_case(path, {"solver.t_end": 0.01}))
    p = [np.cos(0.25), 0.0, 0.0, np.sin(0.25)]
    for body, arm in (("link1", 0.0), ("link2", 0.4), ("beam", 0.7)):
        sl = system.slices[system._body_index[body]]
        np.testing.assert_allclose(new.q[0, sl][:3], [arm * np.cos(0.5), arm * np.sin(0.5),
                                                      0.0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(new.q[0, sl][3:7], p, rtol=0, atol=1e-12)
    ref = run_case(load_case(ROOT / "cases" / "arm_beam_seed.toml",
                             {"solver.t_end": 0.01}))[1]
    np.testing.assert_allclose(new.q[0], ref.q[0], rtol=0, atol=1e-6)


def double_pendulum(angles=(0.7, -1.9), rates=(1.5, -0.4)):
    """Two 1 m links hinged about z, both built lying at the origin; the joint
    coordinates and rates are given instead of poses."""
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    for name in ("a", "b"):
        b.add_rigid_body(name, 1.0, [1e-3, 0.08, 0.08], com=[0.5, 0.0, 0.0])
        b.add_marker(name, "O")
        b.add_marker(name, "E", position=[1.0, 0.0, 0.0])
    b.add_marker("ground", "O")
    b.add_revolute("hip", "ground.O", "a.O")
    b.add_revolute("knee", "a.E", "b.O")
    b.set_initial("hip", angle=angles[0], rate=rates[0])
    b.set_initial("knee", angle=angles[1], rate=rates[1])
    b.add_sensor("hip", "joint", "angle", joint="hip")
    b.add_sensor("knee", "joint", "angle", joint="knee")
    b.add_sensor("knee_rate", "joint", "angle_rate", joint="knee")
    b.add_sensor("tip", "marker", "position", marker="b.E")
    b.add_sensor("tip_v", "marker", "velocity", marker="b.E")
    return System(b.finalize())


def test_double_pendulum_starts_at_its_joint_coordinates_and_rates():
    """The tip starts at (cos θ1 + cos(θ1+θ2), sin θ1 + sin(θ1+θ2)) with the velocity of
    the closed-form kinematics, and the joint sensors read the given values back."""
    (t1, t2), (w1, w2) = (0.7, -1.9), (1.5, -0.4)
    res = simulate(double_pendulum(), 0.01, 1e-3, "generalized-alpha", rho_inf=0.8)
    tip = [np.cos(t1) + np.cos(t1 + t2), np.sin(t1) + np.sin(t1 + t2), 0.0]
    tip_v = [-np.sin(t1) * w1 - np.sin(t1 + t2) * (w1 + w2),
             np.cos(t1) * w1 + np.cos(t1 + t2) * (w1 + w2), 0.0]
    np.testing.assert_allclose(res.sensor("tip")[0], tip, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.sensor("tip_v")[0], tip_v, rtol=0, atol=1e-10)
    assert res.sensor("hip")[0, 0] == pytest.approx(t1, abs=1e-10)
    assert res.sensor("knee")[0, 0] == pytest.approx(t2, abs=1e-10)
    assert res.sensor("knee_rate")[0, 0] == pytest.approx(w2, abs=1e-10)


def test_a_large_angle_is_reached_on_its_own_branch():
    """3 rad from a start at 0 (beyond the half turn where a one-shot projection could
    settle on θ − π): the continuation arrives at 3 rad."""
    res = simulate(double_pendulum(angles=(3.0, 2.5), rates=(0.0, 0.0)), 0.002, 1e-3,
                   "generalized-alpha", rho_inf=0.8)
    assert res.sensor("hip")[0, 0] == pytest.approx(3.0, abs=1e-10)
    assert res.sensor("knee")[0, 0] == pytest.approx(2.5, abs=1e-10)


def test_small_angles_take_fewer_continuation_steps_to_the_same_state(monkeypatch):
    """Angles only: as many steps as keep each within π/8 (0.5 rad and 0.4 rad: 2), at
    most STEPS (3 rad: 8); the state they reach is the 8-step continuation's to the
    assembly's tolerance, and a large angle still arrives on its branch."""
    from flexmbs.assembly import initial

    class Angle:
        quantity = "angle"

    class Shift:
        quantity = "displacement"

    steps = initial.continuation_steps
    assert steps([Angle(), Angle()], [0.0, 0.0], [0.5, -0.4]) == 2  # (0.5 / (π/8) = 1.3)
    assert steps([Angle()], [0.0], [3.0]) == initial.STEPS
    assert steps([Angle()], [0.2], [0.2]) == 1
    assert steps([Angle(), Shift()], [0.0, 0.0], [0.1, 0.01]) == initial.STEPS
    system = double_pendulum(angles=(0.5, -0.4), rates=(0.0, 0.0))
    few = initial.initial_state(system)
    monkeypatch.setattr(initial, "ANGLE_STEP", 1e-3)  # (every condition: STEPS steps)
    many = initial.initial_state(system)
    np.testing.assert_allclose(few[0], many[0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(few[1], many[1], rtol=0, atol=1e-9)


@pytest.mark.parametrize("entry, message", [
    ('joint = "wrist"\nangle = 0.1', "joint 'wrist': unknown joint"),
    ('joint = "weld"\nangle = 0.1', "a fixed joint has no angle"),
    ('joint = "shoulder"\nangle = 0.1\nangle_deg = 5.0',
     "give exactly one of angle, angle_deg, displacement"),
    ('joint = "shoulder"\ndisplacement = 0.1', "a revolute joint has no displacement"),
    ('joint = "shoulder"\nangle = "half"', "'angle'"),
    ('joint = "shoulder"\nangle = 0.1\nspeed = 1.0', "speed"),
])
def test_bad_initial_conditions_are_refused_by_name(tmp_path, entry, message):
    path = _arm_without_poses(tmp_path, f"\n[[initial]]\n{entry}\n")
    with pytest.raises(CaseError) as info:
        load_case(path)
    assert message in str(info.value)
