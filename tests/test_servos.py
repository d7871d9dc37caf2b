"""Joint servos with motors and gears (docs/servos.md): against the ODE of a servoed rigid
link, the reflected inertia in the linearized frequencies, the integral term, the
tangents against finite differences, and both engines against each other."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

import flexmbs as fm
from flexmbs.analysis import eigenmodes, linearize
from flexmbs.cases import load_case
from flexmbs.errors import FlexmbsError, ModelError
from flexmbs.model.drives import Constant
from flexmbs.model.motion_profiles import PointToPoint
from flexmbs.model.servos import Motor

MASS, R_C, I_C, G = 2.0, 0.25, 0.05, 9.81  # the link: kg, m (pivot to COM), kg m², m/s²
J_PIVOT = I_C + MASS * R_C ** 2  # about the pivot [kg m²]
MOVE = PointToPoint(0.0, math.pi / 2, 0.5)  # quintic, 0.5 s


def servo_link(reference=MOVE, gravity=True, **servo):
    """A rigid link on a revolute joint about the global z axis, its centre of mass R_C
    from the pivot along its x axis, with a servo on the joint."""
    b = fm.ModelBuilder(gravity=(0.0, -G if gravity else 0.0, 0.0))
    b.add_rigid_body("link", mass=MASS, inertia=np.diag([0.002, I_C, I_C]),
                     position=(R_C, 0, 0))
    b.add_marker("ground", "O")
    b.add_marker("link", "pivot", position=(-R_C, 0, 0))
    b.add_revolute("shoulder", "ground.O", "link.pivot")
    b.add_joint_servo("servo", "shoulder", reference=reference, **servo)
    b.add_sensor("angle", "joint", "angle", joint="shoulder")
    b.add_sensor("torque", "force", "value", force="servo")
    return fm.System(b.finalize())


def ode_angle(t_out, kp, kd, limit=math.inf, motor=None, gravity=True):
    """θ(t) of (J + n² J_m) θ̈ = η n clip(kp n e + kd n ė) − m g r_c cos θ (solve_ivp)."""
    n, eta, jm = (1.0, 1.0, 0.0) if motor is None else (motor.gear_ratio, motor.efficiency,
                                                        motor.inertia)
    inertia = J_PIVOT + n * n * jm

    def rhs(t, y):
        ref, ref_rate, _ = MOVE.eval(t)
        tau_m = kp * n * (ref - y[0]) + kd * n * (ref_rate - y[1])
        tau_m = min(limit, max(-limit, tau_m))
        weight = MASS * G * R_C * math.cos(y[0]) if gravity else 0.0
        return [y[1], (eta * n * tau_m - weight) / inertia]

    sol = solve_ivp(rhs, (0.0, t_out[-1]), [0.0, 0.0], t_eval=t_out, rtol=1e-12,
                    atol=1e-12, method="DOP853", max_step=1e-3)
    return sol.y[0]


def run(system, t_end=1.0, h=1e-4, engine="auto"):
    res = fm.simulate(system, t_end, h, engine=engine, rho_inf=0.9, newton="converged")
    assert res.success, res.message
    return res


@pytest.mark.parametrize("servo, label", [
    (dict(kp=200.0, kd=5.0), "PD on the joint"),
    (dict(kp=2.0, kd=0.05, motor=Motor(inertia=1e-4, gear_ratio=50.0, efficiency=0.9)),
     "PD on the motor side through a gear"),
])
def test_servo_on_a_rigid_link_follows_its_ode(servo, label):
    """The run's joint angle equals the servo ODE's to 1e-5 rad (the issue's figure)."""
    res = run(servo_link(**servo))
    expected = ode_angle(res.t, servo["kp"], servo["kd"], motor=servo.get("motor"))
    err = np.max(np.abs(res.sensor("angle")[:, 0] - expected))
    assert err < 1e-5, f"{label}: {err:.3g} rad"


def test_saturated_servo_follows_its_ode_and_holds_the_limit():
    limit = 3.0
    res = run(servo_link(kp=200.0, kd=5.0, torque_limit=limit))
    torque = res.sensor("torque")[:, 0]
    assert np.max(np.abs(torque)) <= limit * (1 + 1e-12)
    assert np.mean(np.isclose(np.abs(torque), limit)) > 0.3  # it does saturate
    expected = ode_angle(res.t, 200.0, 5.0, limit=limit)
    # a switching ODE: the step error near the switches is first order in h
    assert np.max(np.abs(res.sensor("angle")[:, 0] - expected)) < 2e-4


def test_integral_term_removes_the_static_error_and_converges_first_order():
    """Holding 0.3 rad against gravity: PD leaves m g r_c cos θ / kp; PI removes it. The
    sampled integral converges to the continuous PID's ODE at first order in h."""
    ref = 0.3
    pd = run(servo_link(Constant(ref), kp=200.0, kd=5.0), t_end=3.0, h=1e-3)
    weight = MASS * G * R_C * math.cos(pd.sensor("angle")[-1, 0])
    assert pd.sensor("angle")[-1, 0] == pytest.approx(ref - weight / 200.0, abs=1e-7)
    pi = run(servo_link(Constant(ref), kp=200.0, kd=5.0, ki=400.0), t_end=10.0, h=1e-3)
    assert abs(pi.sensor("angle")[-1, 0] - ref) < 1e-6

    def pid(t, y):  # θ, θ̇, ∫e
        e = ref - y[0]
        return [y[1], (200.0 * e - 5.0 * y[1] + 400.0 * y[2]
                       - MASS * G * R_C * math.cos(y[0])) / J_PIVOT, e]

    t_out = np.linspace(0.0, 2.0, 201)
    exact = solve_ivp(pid, (0, 2.0), [0, 0, 0], t_eval=t_out, rtol=1e-12, atol=1e-12).y[0]
    errors = []
    for h in (2e-3, 1e-3):
        res = fm.simulate(servo_link(Constant(ref), kp=200.0, kd=5.0, ki=400.0), 2.0, h,
                          t_out=t_out, rho_inf=0.9, newton="converged")
        errors.append(np.max(np.abs(res.sensor("angle")[:, 0] - exact)))
    assert errors[1] < 2e-3
    assert 1.6 < errors[0] / errors[1] < 2.4, errors


@pytest.mark.parametrize("n, jm, eta", [(1.0, 0.0, 1.0), (30.0, 2e-4, 1.0), (100.0, 5e-5, 0.8)])
def test_reflected_inertia_in_the_linearized_frequency(n, jm, eta):
    """ω = √(η n² kp / (J + n² J_m)) to 1e-9, gravity off, damping off."""
    kp = 3.0
    system = servo_link(Constant(0.0), gravity=False, kp=kp, kd=0.0,
                        motor=Motor(inertia=jm, gear_ratio=n, efficiency=eta))
    q = system.assemble()
    modes = [m for m in eigenmodes(linearize(system, q)) if not m.rigid]
    expected = math.sqrt(eta * n * n * kp / (J_PIVOT + n * n * jm)) / (2 * math.pi)
    assert modes[0].frequency_hz == pytest.approx(expected, rel=1e-9)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), motor=st.booleans(), moving=st.booleans())
def test_servo_tangents_equal_finite_differences(seed, motor, moving):
    """K and C of the servo (NumPy declaration) against central differences of its
    generalized force, at states where the terms it leaves out vanish: q̇ = 0 with a
    rotor (its velocity part is quadratic in q̇), any q̇ without one."""
    rng = np.random.default_rng(seed)
    system = servo_link(kp=rng.uniform(1, 300), kd=rng.uniform(0, 10),
                        motor=Motor(1e-4, rng.uniform(1, 20), rng.uniform(0.5, 1))
                        if motor else None)
    servo = system.model.forces[0]
    q = system.assemble() + 0.1 * rng.standard_normal(system.n_q)
    qd = rng.standard_normal(system.n_q) if moving and not motor else np.zeros(system.n_q)
    t = rng.uniform(0, 0.6)
    idx, k, c = servo.tangents(system, q, qd, t)

    def force(qq, qqd):
        out = np.zeros(system.n_q)
        system.angle_memory = {}
        servo.apply(system, qq, qqd, t, out)
        return out[idx]

    eps = 1e-6
    k_fd, c_fd = np.zeros_like(k), np.zeros_like(c)
    for col, gcol in enumerate(idx):
        dq = np.zeros(system.n_q)
        dq[gcol] = eps
        k_fd[:, col] = -(force(q + dq, qd) - force(q - dq, qd)) / (2 * eps)
        c_fd[:, col] = -(force(q, qd + dq) - force(q, qd - dq)) / (2 * eps)
    scale = max(1.0, np.abs(k).max())
    assert np.allclose(k, k_fd, atol=1e-6 * scale)
    assert np.allclose(c, c_fd, atol=1e-6 * max(1.0, np.abs(c).max()))


@pytest.mark.parametrize("servo", [
    dict(kp=200.0, kd=5.0, ki=50.0, torque_limit=8.0),
    dict(kp=2.0, kd=0.05, motor=Motor(inertia=1e-4, gear_ratio=50.0, efficiency=0.9)),
])
def test_both_engines_agree_and_the_energy_balance_closes(servo):
    """The compiled kernels and the NumPy declaration give the same run (to the Newton
    tolerance), with the rotor's kinetic energy and the controller's work in the energy
    balance (T + V − W stays constant)."""
    runs = [run(servo_link(**servo), t_end=0.6, h=1e-3, engine=e) for e in ("auto", "python")]
    assert runs[0].statistics["engine"] == "compiled"
    assert runs[1].statistics["engine"] == "python"
    diff = np.max(np.abs(runs[0].sensor("angle") - runs[1].sensor("angle")))
    assert diff < 1e-9
    for res in runs:  # "completed with warnings" when the energy balance does not close
        assert res.status == "completed", res.message


def test_case_file_joint_servo(tmp_path):
    text = textwrap.dedent("""
        [model]
        gravity = [0.0, -9.81, 0.0]
        [[bodies]]
        name = "link"
        mass = 2.0
        inertia = [0.002, 0.05, 0.05]
        position = [0.25, 0.0, 0.0]
        [[markers]]
        body = "ground"
        name = "O"
        [[markers]]
        body = "link"
        name = "pivot"
        position = [-0.25, 0.0, 0.0]
        [[joints]]
        name = "shoulder"
        type = "revolute"
        i = "ground.O"
        j = "link.pivot"
        [[forces]]
        name = "servo"
        type = "joint-servo"
        joint = "shoulder"
        kp = 2.0
        kd = 0.05
        reference = { type = "quintic", start = 0.0, end = 1.5707963267948966, \
duration = 0.5 }
        motor = { inertia = 1e-4, gear_ratio = 50.0, efficiency = 0.9 }
        [solver]
        t_end = 0.1
        h = 1e-3
    """)
    path = tmp_path / "servo.toml"
    path.write_text(text)
    servo = load_case(path).model.forces[0]
    assert servo.kp == 2.0 and servo.motor.reflected_inertia == pytest.approx(0.25)
    assert servo.reference.eval(0.5)[0] == pytest.approx(math.pi / 2)
    bad = text.replace("gear_ratio = 50.0", "gear_ratio = -50.0")
    path.write_text(bad)
    with pytest.raises(FlexmbsError, match=r"servo.*gear_ratio"):
        load_case(path)
    path.write_text(text.replace('joint = "shoulder"', 'joint = "elbow"'))
    with pytest.raises(FlexmbsError, match=r"servo.*'elbow'"):
        load_case(path)
    path.write_text(text.replace("kp = 2.0", "kp = 2.0\nstiffness = 3.0"))
    with pytest.raises(FlexmbsError, match="stiffness"):
        load_case(path)


def test_bad_servo_declarations_name_the_servo():
    with pytest.raises(ModelError, match=r"servo 's'.*kp"):
        fm.model.servos.JointServo("s", "a.i", "b.j", kp=-1.0, kd=0.0, reference=MOVE)
    with pytest.raises(ModelError, match="efficiency"):
        Motor(inertia=1.0, gear_ratio=2.0, efficiency=1.5)
    b = fm.ModelBuilder()
    b.add_rigid_body("link", mass=1.0, inertia=(1.0, 1.0, 1.0))
    b.add_marker("ground", "O")
    b.add_marker("link", "P")
    b.add_spherical("ball", "ground.O", "link.P")
    b.add_joint_servo("s", "ball", kp=1.0, kd=1.0, reference=0.0)
    with pytest.raises(ModelError, match=r"servo 's'.*spherical"):
        b.finalize()


def servo_slider(**servo):
    """A 3 kg slider on a vertical prismatic joint (axis z_i = global y) under gravity,
    its servo tracking a 0.2 m quintic lift in 0.5 s."""
    b = fm.ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_rigid_body("carriage", mass=3.0, inertia=(0.01, 0.01, 0.01))
    up = (0.0, 1.0, 0.0)  # the markers' z axis (global y)
    b.add_marker("ground", "rail", orientation=up)
    b.add_marker("carriage", "nut", orientation=up)
    b.add_prismatic("lift", "ground.rail", "carriage.nut")
    b.add_joint_servo("servo", "lift", reference=PointToPoint(0.0, 0.2, 0.5), **servo)
    b.add_sensor("height", "joint", "displacement", joint="lift")
    b.add_sensor("force", "force", "value", force="servo")
    return fm.System(b.finalize())


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_servo_on_a_prismatic_joint_through_a_ball_screw_follows_its_ode(engine):
    """(m + n² J_m) s̈ = η n τ_m − m g with n = 2π/lead [rad/m]: to 1e-7 m."""
    lead = 0.01
    motor = Motor(inertia=2e-5, gear_ratio=2 * math.pi / lead, efficiency=0.85)
    kp, kd = 0.05, 2e-4  # N m/rad, N m s/rad on the motor
    system = servo_slider(kp=kp, kd=kd, motor=motor)
    res = fm.simulate(system, 0.8, 2e-4 if engine == "auto" else 1e-3, engine=engine,
                      rho_inf=0.9, newton="converged")
    assert res.success, res.message
    n, eta = motor.gear_ratio, motor.efficiency
    profile = PointToPoint(0.0, 0.2, 0.5)

    def rhs(t, y):
        ref, ref_rate, _ = profile.eval(t)
        tau_m = kp * n * (ref - y[0]) + kd * n * (ref_rate - y[1])
        return [y[1], (eta * n * tau_m - 3.0 * G) / (3.0 + n * n * motor.inertia)]

    exact = solve_ivp(rhs, (0, 0.8), [0.0, 0.0], t_eval=res.t, rtol=1e-12, atol=1e-13,
                      method="DOP853", max_step=1e-3).y
    err = np.max(np.abs(res.sensor("height")[:, 0] - exact[0]))
    assert err < (1e-7 if engine == "auto" else 3e-6), err
    ref = profile.eval_many(res.t)  # the force the drive train delivers: η n τ_m
    force = eta * n * (kp * n * (ref[:, 0] - exact[0]) + kd * n * (ref[:, 1] - exact[1]))
    scale = np.max(np.abs(force))
    assert np.max(np.abs(res.sensor("force")[:, 0] - force)) < (1e-5 if engine == "auto"
                                                                else 3e-4) * scale


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), motor=st.booleans())
def test_prismatic_servo_tangents_equal_finite_differences(seed, motor):
    rng = np.random.default_rng(seed)
    system = servo_slider(kp=rng.uniform(1, 300), kd=rng.uniform(0, 10),
                          motor=Motor(1e-4, rng.uniform(1, 600), rng.uniform(0.5, 1))
                          if motor else None)
    servo = system.model.forces[0]
    q = system.assemble() + 0.1 * rng.standard_normal(system.n_q)
    qd = np.zeros(system.n_q) if motor else rng.standard_normal(system.n_q)
    idx, k, c = servo.tangents(system, q, qd, 0.3)

    def force(qq, qqd):
        out = np.zeros(system.n_q)
        servo.apply(system, qq, qqd, 0.3, out)
        return out[idx]

    eps = 1e-6
    for col, gcol in enumerate(idx):
        dq = np.zeros(system.n_q)
        dq[gcol] = eps
        k_fd = -(force(q + dq, qd) - force(q - dq, qd)) / (2 * eps)
        c_fd = -(force(q, qd + dq) - force(q, qd - dq)) / (2 * eps)
        assert np.allclose(k[:, col], k_fd, atol=1e-6 * max(1.0, np.abs(k).max()))
        assert np.allclose(c[:, col], c_fd, atol=1e-6 * max(1.0, np.abs(c).max()))


def test_a_restart_point_before_the_first_step_restarts_the_integral_at_zero():
    """Restoring the step object to its start, after it has run on, continues with the
    integral of the start (none), not with the one its System last held: the same steps
    as the first time, bit for bit (the gradients' checkpointed sweeps rely on it)."""
    from flexmbs.integrators.alpha import generalized_alpha
    from flexmbs.integrators.stepper import AlphaIntegrator

    system = servo_link(Constant(0.4), kp=200.0, kd=5.0, ki=400.0)
    integ = AlphaIntegrator(system, generalized_alpha(0.9), 1e-3, engine="python")
    start = integ.checkpoint()
    first = []
    for _ in range(30):
        assert integ.step()[0]
        first.append(integ.q.copy())
    assert system.angle_memory["@integral:servo"] > 0.0
    integ.restore(start)
    assert "@integral:servo" not in system.angle_memory
    for q in first:
        assert integ.step()[0]
        np.testing.assert_array_equal(integ.q, q)


def test_the_api_takes_the_case_files_default_gains():
    """kp and kd default to 0 in the API as in a case file (docs/servos.md's table)."""
    only_kd = servo_link(kd=0.5).model.forces[0]
    assert (only_kd.kp, only_kd.kd) == (0.0, 0.5)


@pytest.mark.parametrize("markers", [("ground.O", "link.pivot"), ("link.pivot", "ground.O")])
def test_a_servo_on_a_joint_a_drive_already_moves_is_refused(markers):
    """A servo and a rotation drive on the same joint's markers (either order): the drive
    prescribes the angle and the servo's torque only went into the drive's reaction,
    silently. Refused naming both."""
    b = fm.ModelBuilder()
    b.add_rigid_body("link", mass=MASS, inertia=np.diag([0.002, I_C, I_C]),
                     position=(R_C, 0, 0))
    b.add_marker("ground", "O")
    b.add_marker("link", "pivot", position=(-R_C, 0, 0))
    b.add_revolute("shoulder", "ground.O", "link.pivot")
    b.add_joint_servo("servo", "shoulder", reference=0.0, kp=2.0)
    b.add_drive("motor", "rotation", MOVE, marker_i=markers[0], marker_j=markers[1])
    with pytest.raises(ModelError, match=r"joint servo 'servo' and drive 'motor' both set "
                                         r"the rotation"):
        b.finalize()
