"""Static equilibrium under constant joint actuators (flexmbs.analysis.static;
docs/static_linear.md): load stepping scales a joint torque or force of constant value
with gravity, so a pendulum held out by a joint torque converges to the angle statics
gives, and a torque no pose can hold fails with a clear reason."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from flexmbs.analysis import static_equilibrium
from flexmbs.cases import load_case
from flexmbs.cases.loader import case_system
from flexmbs.cli.main import main
from flexmbs.errors import ConvergenceError

MASS, LENGTH, G = 1.0, 0.5, 9.81  # the bob [kg], pivot to bob [m], gravity [m/s²]
LOAD_ALL = (0.25, 0.5, 0.75, 1.0)  # to the full loads

PENDULUM = """title = "pendulum under a constant actuator"
[model]
gravity = [0.0, -9.81, 0.0]
[[bodies]]
name = "bob"
type = "rigid"
mass = 1.0
inertia = [1e-9, 1e-9, 1e-9]
com = [0.0, -0.5, 0.0]
[[markers]]
body = "ground"
name = "O"
[[markers]]
body = "ground"
name = "X"
z_axis = [1.0, 0.0, 0.0]
[[markers]]
body = "bob"
name = "O"
[[markers]]
body = "bob"
name = "C"
position = [0.0, -0.5, 0.0]
[[joints]]
name = "pivot"
type = "revolute"
i = "ground.O"
j = "bob.O"
[[forces]]
name = "act"
{actuator}
[solver]
method = "generalized-alpha"
h = 1e-3
t_end = 1.0
"""


def _torque(value: str) -> str:
    """A joint torque [N m] about the pivot's z axis on the bob."""
    return f'type = "joint-torque"\ni = "ground.O"\nj = "bob.O"\nvalue = {value}'


def _horizontal_force(value: str) -> str:
    """A joint force [N] along global x (the ground marker X's z axis) on the bob's
    centre of mass."""
    return f'type = "joint-force"\ni = "ground.X"\nj = "bob.C"\nvalue = {value}'


def _case(tmp_path, actuator: str):
    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM.replace("{actuator}", actuator))
    return path


def _angle(rest) -> float:
    """The bob's rotation about z [rad] from its Euler parameters."""
    return 2.0 * math.atan2(rest.coordinate("bob.e3"), rest.coordinate("bob.e0"))


@pytest.mark.parametrize("value", ["2.0", '{ type = "constant", value = 2.0 }'])
def test_a_joint_torque_above_a_quarter_of_mgl_holds_the_pendulum_at_asin(tmp_path, value):
    """τ = 2 N m on the 1 kg, 0.5 m pendulum (τ > m g L / 4, where the full torque
    against a quarter of gravity has no equilibrium): m g L sin θ = τ."""
    system = case_system(load_case(_case(tmp_path, _torque(value))))
    rest = static_equilibrium(system)
    assert _angle(rest) == pytest.approx(math.asin(2.0 / (MASS * G * LENGTH)), abs=1e-8)
    assert rest.residual < 1e-9 and rest.violation < 1e-12


def test_load_stepping_scales_the_actuators_with_gravity(tmp_path):
    """Stopped at a fraction of the loads (``load_steps`` ending below 1), the joint
    torque and the joint force are scaled with gravity, so the proportional loads hold
    the pendulum at the same angle: asin(τ/(m g L)) and atan(F/(m g))."""
    torque = case_system(load_case(_case(tmp_path, _torque("2.0"))))
    for steps in ((0.25,), (0.125, 0.5)):
        rest = static_equilibrium(torque, load_steps=steps)
        assert _angle(rest) == pytest.approx(math.asin(2.0 / (MASS * G * LENGTH)),
                                             abs=1e-8)
    force = case_system(load_case(_case(tmp_path, _horizontal_force("6.0"))))
    for steps in ((0.5,), LOAD_ALL):
        rest = static_equilibrium(force, load_steps=steps)
        assert _angle(rest) == pytest.approx(math.atan(6.0 / (MASS * G)), abs=1e-8)


def test_a_joint_torque_above_mgl_has_no_equilibrium_and_says_why(tmp_path, capsys):
    """τ = 6 N m > m g L = 4.905 N m: no pose holds it; the error says so, at the
    smallest increment the load stepping tries (1/256), and the CLI exits 2."""
    system = case_system(load_case(_case(tmp_path, _torque("6.0"))))
    with pytest.raises(ConvergenceError) as info:
        static_equilibrium(system)
    message = str(info.value)
    assert "0.390625 % of the loads" in message and "1/256" in message
    assert "joint torque or force larger than gravity" in message
    assert "bob.e" in message  # the coordinates whose forces do not balance
    assert main(["static", str(_case(tmp_path, _torque("6.0")))]) == 2
    assert "There may be no equilibrium" in capsys.readouterr().err


def test_cli_static_of_the_torque_pendulum(tmp_path, capsys):
    """`flexmbs static` of the pendulum at τ = 2 N m: the angle asin(τ/(m g L)) and the
    pin carrying m g."""
    assert main(["static", str(_case(tmp_path, _torque("2.0"))), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    q = report["coordinates"]
    angle = 2.0 * math.atan2(q["bob.e3"], q["bob.e0"])
    assert angle == pytest.approx(math.asin(2.0 / (MASS * G * LENGTH)), abs=1e-8)
    pin = np.hypot(report["multipliers"]["pivot[r.x]"], report["multipliers"]["pivot[r.y]"])
    assert pin == pytest.approx(MASS * G, rel=1e-9)


@pytest.mark.parametrize("at", ["nan", "inf", "-inf"])
def test_cli_static_refuses_a_non_finite_time(tmp_path, capsys, at):
    assert main(["static", str(_case(tmp_path, _torque("2.0"))), f"--at={at}"]) == 2
    err = capsys.readouterr().err
    assert f"--at {at}" in err and "finite" in err
