"""The Python API refuses meaningless settings by name (ValidationError), as the case
files do: times and tolerances of simulate, coupling names, non-finite modal
coordinates."""

from __future__ import annotations

import numpy as np
import pytest
from test_range_checks import kane_beam, pendulum

from flexmbs.errors import ValidationError
from flexmbs.integrators import simulate


@pytest.mark.parametrize("kwargs, match", [
    ({"t_end": -1.0}, "t_end = -1.0 s must be a finite time after the start"),
    ({"t_end": 0.0}, "t_end = 0.0 s must be a finite time after the start"),
    ({"h_min": 0.5}, r"h_min must lie in \(0, h = 0.001\] s, got 0.5"),
    ({"rtol": -1e-8}, "rtol must be a positive number, got -1e-08"),
    ({"atol": float("nan")}, "atol must be a positive number, got nan"),
])
def test_simulate_refuses_meaningless_settings_by_name(kwargs, match):
    args = {"t_end": 0.1, **kwargs}
    with pytest.raises(ValidationError, match=match):
        simulate(pendulum(), args.pop("t_end"), 1e-3, **args)


def test_bad_coupling_and_non_finite_modal_coordinates_are_named():
    from flexmbs.frame.coupling import Coupling

    with pytest.raises(ValidationError, match="coupling 'three-way' is not one of"):
        Coupling("three-way")
    data = kane_beam()
    with pytest.raises(ValidationError, match="xi must be finite"):
        data.invariants.blocks([float("nan"), 0.0, 0.0])


@pytest.mark.parametrize("axis", [[0, 0, 0], [np.nan, 0, 1], [1, 0]])
def test_a_degenerate_rotation_axis_is_refused_before_numpy_warns(axis):
    import warnings

    from flexmbs.frame.rotations import axis_angle, frame_from_z

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value encountered in divide" first
        with pytest.raises(ValidationError, match=r"axis_angle: axis must be a 3-vector"):
            axis_angle(axis, 0.3)
        with pytest.raises(ValidationError, match=r"frame_from_z: z must be a 3-vector"):
            frame_from_z(axis)
