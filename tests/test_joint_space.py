"""Joint-space functions (flexmbs.analysis.joint_space) called with one joint's name."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from flexmbs.analysis import inverse_dynamics, joint_accelerations, joint_coordinates
from flexmbs.assembly import System
from flexmbs.cases import load_case

CASES = Path(__file__).resolve().parents[1] / "cases"


def test_joint_space_functions_take_one_joint_name():
    """joint_coordinates, joint_accelerations and inverse_dynamics take one name as a
    list of one (its characters were taken as joint names: "joint 'e' is not a joint")."""
    system = System(load_case(CASES / "seed_double_pendulum.toml").model)
    q, qd = system.assemble(), np.zeros(system.n_q)
    joint = system.model.joints[-1].name
    for one, listed in (
            (joint_coordinates(system, joint, q, qd)[0],
             joint_coordinates(system, [joint], q, qd)[0]),
            (joint_accelerations(system, joint, q, qd),
             joint_accelerations(system, [joint], q, qd)),
            (inverse_dynamics(system, joint, q, qd, [0.5]),
             inverse_dynamics(system, [joint], q, qd, [0.5]))):
        assert one.shape == (1,)
        np.testing.assert_array_equal(one, listed)
