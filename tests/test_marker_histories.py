"""flexmbs.assembly.marker_histories: a marker's frame over a whole run at once is, at
every output, what its body's ``marker_frame`` and ``angular_jac`` give for that output
alone (random models of every body kind and coupling mode, random states), and the
batched rotation helpers are A(p), its rate (against central differences) and G(p) ṗ."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled import random_chain, random_model

from flexmbs.assembly.marker_histories import BATCH_FROM, marker_history
from flexmbs.frame.rotations import (
    angular_velocities,
    g_global,
    rotation_matrices,
    rotation_matrix,
    rotation_matrix_rates,
)

#: Round-off of the same sums in another order, relative to the largest entry.
ROUND_OFF = 1e-13


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), chain=st.booleans(),
       n_t=st.sampled_from([1, 2, BATCH_FROM - 1, BATCH_FROM, BATCH_FROM + 3]))
def test_every_output_is_the_bodys_own_marker_frame(seed, chain, n_t):
    """Below BATCH_FROM outputs the frames are the bodies' own output by output, from it
    on the array formulas: both are checked here against the bodies."""
    system = (random_chain if chain else random_model)(seed)
    rng = np.random.default_rng(seed)
    q = system.q0 + 0.3 * rng.standard_normal((n_t, system.n_q))
    qd = rng.standard_normal((n_t, system.n_q))
    for name in system.model.markers:
        history = marker_history(system, name, q, qd)
        plain = marker_history(system, name, q)
        turning = marker_history(system, name, q, qd, velocities=False)
        assert turning.velocities is None
        np.testing.assert_array_equal(turning.angular_velocities, history.angular_velocities)
        np.testing.assert_array_equal(turning.axes, history.axes)
        body, marker, sl = system.marker_info(name)
        for k in range(n_t):
            point, axes, jac, _ = body.marker_frame(q[k, sl], marker, qd[k, sl])
            moves = sl.stop > sl.start
            velocity = jac[0] @ qd[k, sl] if moves else np.zeros(3)
            omega = body.angular_jac(q[k, sl], marker) @ qd[k, sl] if moves else np.zeros(3)
            for got, want in ((history.points[k], point), (history.axes[k], axes),
                              (plain.points[k], point), (plain.axes[k], axes),
                              (history.velocities[k], velocity),
                              (history.angular_velocities[k], omega)):
                np.testing.assert_allclose(got, want, rtol=0, err_msg=name,
                                           atol=ROUND_OFF * max(1.0, np.abs(want).max()))
        assert plain.velocities is None and plain.angular_velocities is None


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_batched_rotations_are_the_single_ones_and_the_rate_is_the_derivative(seed):
    rng = np.random.default_rng(seed)
    p, pd = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    a = rotation_matrices(p)
    omega = angular_velocities(p, pd)
    rate = rotation_matrix_rates(p, pd)
    eps = 1e-6
    differences = (rotation_matrices(p + eps * pd) - rotation_matrices(p - eps * pd)) / (2 * eps)
    for k in range(4):
        np.testing.assert_allclose(a[k], rotation_matrix(p[k]), rtol=0,
                                   atol=1e-15 * max(1.0, np.abs(p[k]).max() ** 2))
        np.testing.assert_allclose(omega[k], g_global(p[k]) @ pd[k], rtol=0, atol=1e-13)
    # A is quadratic in p: the central difference is exact up to round-off
    np.testing.assert_allclose(rate, differences, rtol=0,
                               atol=1e-8 * max(1.0, np.abs(rate).max()))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_t=st.sampled_from([1, 3, BATCH_FROM, BATCH_FROM + 5]))
def test_a_servos_force_sensor_is_its_measured_value_output_by_output(seed, n_t):
    """The whole-run servo torque of the force sensors is, at every output, the servo's
    own ``measured_value`` with the sensor's angle memory set to the run's angle there
    (revolute and prismatic servos, with and without motors and torque limits)."""
    from flexmbs.assembly.sensors import _servo_values
    from flexmbs.model.servos import JointServo

    system = random_model(seed)
    rng = np.random.default_rng(seed)
    q = system.q0 + 0.3 * rng.standard_normal((n_t, system.n_q))
    qd = rng.standard_normal((n_t, system.n_q))
    t = np.sort(rng.uniform(0, 2, n_t))
    for servo in (f for f in system.model.forces if isinstance(f, JointServo)):
        turns = rng.uniform(-20, 20, n_t)
        turns[rng.uniform(size=n_t) < 0.2] = np.nan  # no memory there
        batched = _servo_values(system, servo, t, q, qd, turns)
        for k in range(n_t):
            system.angle_memory = {f"@sensor:{servo.name}": float(turns[k])}
            value, _ = servo.measured_value(system, q[k], qd[k], float(t[k]))
            assert abs(batched[k] - value) <= 1e-12 * max(1.0, abs(value)), (servo.name, k)
