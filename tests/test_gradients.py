"""Gradients of a run by the discrete adjoint (flexmbs.gradients, docs/gradients.md)
against central differences of the run itself — ``simulate``/``run_case`` on the NumPy
path with Newton converged towards round-off, the sensor history recomputed from its
results — on shipped cases and on small random models of every element kind; forward
sensitivities against the adjoint; the pendulum's quarter period against its analytic
length and gravity sensitivities; checkpointed sweeps against stored ones; the
objectives' weights against differences; bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ellipk
from test_flexible_body import random_modal

from flexmbs.assembly import System
from flexmbs.assembly.sensors import sensor_history
from flexmbs.cases import load_case
from flexmbs.cases.run import run_case
from flexmbs.errors import ModelError, ValidationError
from flexmbs.gradients import Objective, gradient, sensitivities
from flexmbs.gradients.parameters import ModelModels, resolve
from flexmbs.gradients.sensor_probe import find_sensor
from flexmbs.integrators import simulate
from flexmbs.model import ModelBuilder, Motor, Polynomial, SpinUp

CASES = "cases/"
#: Gradient against central differences of the run: the run's Newton noise (~1e-12 of
#: J) over the step (1e-4 relative) and the O(δ²) truncation stay near 1e-8; the
#: stabilized index-2 form holds its position correction's direction fixed (an O(h²)
#: relative difference, ~1e-7 here). 1e-5 leaves a margin of 100.
RTOL = 1e-5
FD_REL = 1e-4


def history_of(result, system, objective):
    """The objective's sensor component at every step of a result (outputs every step)."""
    sensor = find_sensor(system.model, objective.sensor)
    hist = sensor_history(system, sensor, result.t, result.q, result.qd, result.qdd,
                          result.lam)
    comp = 0 if objective.component is None else hist.components.index(objective.component)
    return objective.evaluate(result.t, hist.values[:, comp])[0]


def as_override(path, key, value) -> dict:
    """{case key: value} for --set, a key ending in [i] replacing entry i of its list."""
    import re
    from pathlib import Path

    import tomllib

    match = re.match(r"^(.*)\[(\d+)\]$", key)
    if match is None:
        return {key: value}
    base, index = match.group(1), int(match.group(2))
    node = tomllib.loads(Path(path).read_text())
    for part in base.split("."):
        node = (next(e for e in node if e.get("name") == part) if isinstance(node, list)
                else node[part])
    new = list(node)
    new[index] = value
    return {base: new}


def case_objective(path, objective, overrides, scale=None):
    case = load_case(path, overrides)
    if scale is not None:  # (body, factor): K_ff times factor, D_ff held
        from flexmbs.gradients.parameters import scale_stiffness

        case.model = scale_stiffness(case.model, *scale)
    system, result = run_case(case, engine="python", newton="converged")
    assert result.success, result.message
    return history_of(result, system, objective)


def assert_case_gradient(path, objective, keys, t_end, **kwargs):
    result = gradient(path, objective, keys, t_end=t_end, newton="converged", **kwargs)
    for key in keys:
        p = result.values[key]
        d = FD_REL * abs(p)
        fd = (case_objective(path, objective, {"solver.t_end": t_end,
                                               **as_override(path, key, p + d)})
              - case_objective(path, objective, {"solver.t_end": t_end,
                                                 **as_override(path, key, p - d)})) / (2 * d)
        assert result.gradient[key] == pytest.approx(fd, rel=RTOL), key
        assert result.how[key].startswith("analytic")
    return result


# ------------------------------------------------------------------ shipped cases
def test_pendulum_case_index2_against_differences_of_the_run():
    """seed_pendulum: ρ∞ = 1, so the stabilized index-2 form; length and gravity. The
    forward run on the compiled engine (the sweep's Jacobians come from it), and on the
    NumPy path with jacobian_engine="python": the same gradient to the Newton
    tolerance's effect."""
    keys = ["bodies.bob.com[1]", "model.gravity[1]"]
    objective = Objective("joint:angle:pivot", "rms")
    result = assert_case_gradient(CASES + "seed_pendulum.toml", objective, keys, 0.1)
    assert result.cost["formulation"] == "stabilized-index-2"
    assert result.cost["forward_engine"] == result.cost["jacobians"]
    numpy = gradient(CASES + "seed_pendulum.toml", objective, keys, t_end=0.1,
                     newton="converged", jacobian_engine="python")
    assert numpy.cost["forward_engine"] == "python"
    for key in keys:
        assert numpy.gradient[key] == pytest.approx(result.gradient[key], rel=1e-8), key


def test_arm_case_springs_actuator_profile_and_flexible_beam():
    """arm_vertical_pd (index 3, a steel beam welded on): PD spring–dampers, a joint
    torque profile's end value and a centre of mass."""
    assert_case_gradient(
        CASES + "arm_vertical_pd.toml", Objective("marker:position:link2.T", "final",
                                                  component="y"),
        ["forces.shoulder_pd.stiffness", "forces.elbow_pd.damping",
         "forces.shoulder_reference.value.end", "bodies.link2.com[0]"], 0.04)


def test_robot_arm_servos_with_rotor_inertia():
    """robot_arm: servos with motors (rotor inertia, gear, efficiency), index 2."""
    assert_case_gradient(CASES + "robot_arm.toml", Objective("payload", "max", component="y"),
                         ["forces.elbow_drive.kd", "forces.shoulder_drive.motor.efficiency"],
                         0.02)


def test_cantilever_modal_damping_with_checkpoints():
    """cantilever_release (Newmark, index 2): modal damping ratio and stiffness scale,
    every 5th state kept and the segments run again; the same gradient as keeping all."""
    path = CASES + "cantilever_release.toml"
    objective = Objective("modal:coordinates:beam", "integral", component="xi1")
    keys = ["bodies.beam.damping_ratio=0.02", "bodies.beam.stiffness_scale"]
    stored = gradient(path, objective, keys, t_end=0.03, newton="converged")
    kept = gradient(path, objective, keys, t_end=0.03, newton="converged",
                    checkpoint_every=5)
    assert kept.cost["recomputed_steps"] == kept.cost["steps"]
    assert kept.cost["memory_bytes"] < stored.cost["memory_bytes"]
    for key in stored.gradient:
        assert kept.gradient[key] == pytest.approx(stored.gradient[key], rel=1e-9)
    for key, value in (("bodies.beam.damping_ratio", 0.02),):
        d = 1e-2 * value
        fd = (case_objective(path, objective, {"solver.t_end": 0.03, key: value + d})
              - case_objective(path, objective, {"solver.t_end": 0.03, key: value - d})
              ) / (2 * d)
        assert stored.gradient[key] == pytest.approx(fd, rel=RTOL)
    base = {"solver.t_end": 0.03, "bodies.beam.damping_ratio": 0.02}
    fd = (case_objective(path, objective, base, ("beam", 1 + FD_REL))
          - case_objective(path, objective, base, ("beam", 1 - FD_REL))) / (2 * FD_REL)
    assert stored.gradient["bodies.beam.stiffness_scale"] == pytest.approx(fd, rel=RTOL)


def test_segments_run_again_bit_for_bit_from_checkpoints_with_their_matrices():
    """The pendulum (index 2) with every 15th state kept: each checkpoint holds the
    iteration matrix in use (they cost less than half the states spared), so the
    segments run again reproduce the stored run's states exactly, and the checkpointed
    gradient is the stored one to the last bit."""
    from flexmbs.gradients import forward
    from flexmbs.gradients.adjoint import _segments
    from flexmbs.gradients.api import setup

    objective = Objective("joint:angle:pivot", "rms")
    problem = setup(CASES + "seed_pendulum.toml", objective.sensor, None,
                    ["model.gravity[1]"], t_end=0.2)
    stored = forward.run(problem.system, problem.settings, problem.probe, 1)
    kept = forward.run(problem.system, problem.settings, problem.probe, 15)
    assert kept.matrix_bytes > 0 and kept.memory < stored.memory
    for first, last in _segments(kept):
        for k, (state, _) in forward.segment(problem.system, kept, first, last).items():
            assert np.array_equal(state.q, stored.states[k][0].q), k
            assert np.array_equal(state.lam, stored.states[k][0].lam), k
    a = gradient(CASES + "seed_pendulum.toml", objective, ["model.gravity[1]"], t_end=0.2)
    b = gradient(CASES + "seed_pendulum.toml", objective, ["model.gravity[1]"], t_end=0.2,
                 checkpoint_every=15)
    assert a.gradient == b.gradient


def test_initial_condition_and_profile_timing_parameters():
    """The pendulum's initial angle (the initial state differenced, the steps exact) and
    the start time of arm_vertical_pd's torque profile (a timing parameter)."""
    result = assert_case_gradient(CASES + "seed_pendulum.toml",
                                  Objective("joint:angle:pivot", "rms"),
                                  ["bodies.bob.angle_deg"], 0.1)
    assert result.how["bodies.bob.angle_deg"] == "analytic, initial state by differences"
    assert_case_gradient(CASES + "arm_vertical_pd.toml",
                         Objective("marker:position:link2.T", "final", component="y"),
                         ["forces.shoulder_reference.value.t0"], 0.12)


# ------------------------------------------------------------------ analytic
def test_pendulum_quarter_period_sensitivities_are_analytic():
    """The first zero crossing of the released pendulum (30°) is T/4 with
    T = 4 √(L/g) K(sin 15°): dt*/dL = t*/(2L), dt*/dg = −t*/(2g). The discrete run's
    quarter period is within the trapezoidal rule's period error (ωh)²/12 ≈ 2e-6 of it."""
    result = gradient(CASES + "seed_pendulum.toml", Objective("joint:angle:pivot",
                                                              "crossing"),
                      ["bodies.bob.com[1]", "model.gravity[1]"], t_end=0.4,
                      newton="converged")
    length, g = 0.5, 9.81
    quarter = math.sqrt(length / g) * ellipk(math.sin(math.radians(15)) ** 2)
    assert result.value == pytest.approx(quarter, rel=1e-5)
    # com[1] = −L, gravity[1] = −g
    assert -result.gradient["bodies.bob.com[1]"] == pytest.approx(quarter / (2 * length),
                                                                  rel=1e-5)
    assert -result.gradient["model.gravity[1]"] == pytest.approx(-quarter / (2 * g),
                                                                 rel=1e-5)


# ------------------------------------------------------------------ random models
KINDS = ["rigid", "spring", "rotational", "bushing", "servo", "servo_pi", "actuator",
         "loads", "flexible", "drive"]


def small_model(kind: str, seed: int, extra=None):
    """A pendulum (rigid link on a revolute hinge, gravity) with one element of ``kind``
    and random values; (model, parameter keys, objective). ``extra(builder)`` adds more
    before the model is finalized."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_marker("ground", "O")
    b.add_marker("ground", "A", (0.5, 0.4, 0.1))
    angle = rng.uniform(0.2, 1.0)
    b.add_rigid_body("link", rng.uniform(0.5, 2.0), rng.uniform(0.03, 0.05, 3),
                     com=(0.3 + 0.1 * rng.uniform(), 0.0, 0.0),
                     orientation=[[math.cos(angle), -math.sin(angle), 0],
                                  [math.sin(angle), math.cos(angle), 0], [0, 0, 1]],
                     angular_velocity=(0, 0, rng.normal()))
    b.add_marker("link", "O")
    b.add_marker("link", "T", (0.6, 0.0, 0.0))
    b.add_revolute("hinge", "ground.O", "link.O")
    keys = []
    if kind == "rigid":
        keys = ["bodies.link.mass", "bodies.link.inertia[2,2]", "bodies.link.com[0]",
                "gravity[1]"]
    elif kind == "spring":
        b.add_spring_damper("s", "ground.A", "link.T", stiffness=rng.uniform(5, 50),
                            damping=rng.uniform(0.1, 2), free_length=rng.uniform(0.1, 0.4),
                            actuator=Polynomial((rng.normal(), rng.normal())))
        keys = ["forces.s.stiffness", "forces.s.damping", "forces.s.free_length",
                "forces.s.actuator.coefficients[1]"]
    elif kind == "rotational":
        b.add_rotational_spring_damper("r", "ground.O", "link.O", stiffness=rng.uniform(1, 20),
                                       damping=rng.uniform(0.1, 1), angle0=rng.normal())
        keys = ["forces.r.stiffness", "forces.r.damping", "forces.r.angle0"]
    elif kind == "bushing":
        b.add_bushing("u", "ground.A", "link.T", stiffness=rng.uniform(1, 20, 3),
                      damping=rng.uniform(0.1, 1, 3), rotational_stiffness=rng.uniform(1, 5, 3),
                      preload_force=rng.normal(size=3))
        keys = ["forces.u.stiffness[0]", "forces.u.damping[1]",
                "forces.u.rotational_stiffness[2]", "forces.u.preload_force[1]"]
    elif kind == "servo":
        b.add_joint_servo("v", "hinge", kp=rng.uniform(0.05, 0.2), kd=rng.uniform(0.005, 0.02),
                          reference=Polynomial((angle, rng.normal(), rng.normal())),
                          motor=Motor(rng.uniform(1e-5, 1e-4), 10.0, 0.9))
        keys = ["forces.v.kp", "forces.v.kd", "forces.v.reference.coefficients[1]",
                "forces.v.motor.efficiency"]
    elif kind == "servo_pi":  # the sampled integral: a state of the discrete run
        b.add_joint_servo("v", "hinge", kp=rng.uniform(0.05, 0.2), kd=rng.uniform(0.005, 0.02),
                          ki=rng.uniform(3.0, 10.0),
                          reference=Polynomial((angle, rng.normal(), rng.normal())),
                          motor=Motor(rng.uniform(1e-5, 1e-4), 10.0, 0.9))
        keys = ["forces.v.ki", "forces.v.kp", "forces.v.reference.coefficients[1]",
                "forces.v.motor.efficiency", "bodies.link.mass"]
    elif kind == "actuator":
        b.add_joint_actuator("a", "ground.O", "link.O",
                             Polynomial((rng.normal(), rng.normal())))
        keys = ["forces.a.profile.coefficients[0]", "forces.a.profile.coefficients[1]"]
    elif kind == "loads":
        b.add_point_force("f", "link.T", rng.normal(size=3))
        b.add_point_torque("m", "link.T", rng.normal(size=3), frame="marker")
        keys = ["forces.f.value[0]", "forces.f.value[1]", "forces.m.value[2]"]
    elif kind == "flexible":
        data = random_modal(seed % 50, n_modes=2)[0].with_damping(
            ratio=rng.uniform(0.01, 0.05, 2))
        b.add_flexible_body("beam", data, position=(0.6, 0.0, 0.0))
        b.add_marker("beam", "root", node=1)
        b.add_joint("weld", "fixed", "link.T", "beam.root")
        b.add_distributed_load("w", "beam", rng.normal(size=3))
        keys = ["bodies.beam.stiffness_scale", "bodies.beam.damping_ratio[1]",
                "forces.w.value[1]"]
    elif kind == "drive":
        b.add_rigid_body("link2", 1.0, [0.01, 0.02, 0.02], com=(0.2, 0, 0),
                         position=(0.6 * math.cos(angle), 0.6 * math.sin(angle), 0.0))
        b.add_marker("link2", "O")
        b.add_revolute("elbow", "link.T", "link2.O")
        b.add_drive("spin", "rotation", SpinUp(rng.uniform(1, 3), 0.5),
                    marker_i="ground.O", marker_j="link.O")
        b.add_rotational_spring_damper("r", "link.T", "link2.O", stiffness=2.0, damping=0.1)
        b.add_sensor("angle2", "joint", "angle", joint="elbow")
        return b.finalize(), ["drives.spin.profile.omega",
                              "drives.spin.profile.duration"], Objective("angle2", "rms")
    measure = ["final", "integral", "rms", "max"][seed % 4]
    b.add_sensor("tip", "marker", "position", marker="link.T")
    if extra is not None:
        extra(b)
    return b.finalize(), keys, Objective("tip", measure, component="y")


def run_objective(model, objective, run):
    system = System(model)
    result = simulate(system, run["t_end"], run["h"], "generalized-alpha",
                      rho_inf=run["rho_inf"], engine="python", newton="converged")
    assert result.success, result.message
    return history_of(result, system, objective)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=2, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
def test_random_models_against_differences_of_the_run(kind, seed):
    model, keys, objective = small_model(kind, seed)
    run = {"t_end": 0.04, "h": 2e-3, "rho_inf": (0.7, 1.0)[seed % 2]}
    result = gradient(model, objective, keys, newton="converged", **run)
    direct = gradient(model, objective, keys, mode="forward", newton="converged", **run)
    params, _ = resolve(keys, ModelModels(model))
    for p in params:
        assert direct.gradient[p.key] == pytest.approx(result.gradient[p.key], rel=1e-9,
                                                       abs=1e-14)
        d = FD_REL * (abs(p.value) if p.value else 1.0)
        fd = (run_objective(p.model_at(p.value + d), objective, run)
              - run_objective(p.model_at(p.value - d), objective, run)) / (2 * d)
        scale = max(abs(fd), 1e-6 * abs(result.value) / (abs(p.value) or 1.0))
        assert abs(result.gradient[p.key] - fd) <= RTOL * scale, (p.key, fd)


def test_servo_integrals_through_checkpoints_and_a_longer_run():
    """A PI servo's sampled integral over 60 steps: the adjoint with every state kept,
    with checkpoints (segments run again, the integral restored at each) and the forward
    sensitivities agree, and match differences of the run; the integral's own share of
    the gradient is far above the tolerance (the sweep without it is off by percent)."""
    model, keys, objective = small_model("servo_pi", 11)
    run = {"t_end": 0.12, "h": 2e-3, "rho_inf": 0.8}
    stored = gradient(model, objective, keys, newton="converged", **run)
    segments = gradient(model, objective, keys, newton="converged", checkpoint_every=7,
                        **run)
    direct = gradient(model, objective, keys, mode="forward", newton="converged", **run)
    assert segments.cost["checkpoint_every"] == 7
    params, _ = resolve(keys, ModelModels(model))
    for p in params:
        for other in (segments, direct):
            assert other.gradient[p.key] == pytest.approx(stored.gradient[p.key], rel=1e-8,
                                                          abs=1e-14)
        d = FD_REL * abs(p.value)
        fd = (run_objective(p.model_at(p.value + d), objective, run)
              - run_objective(p.model_at(p.value - d), objective, run)) / (2 * d)
        assert stored.gradient[p.key] == pytest.approx(fd, rel=RTOL), p.key


def test_servo_integral_refusals_name_what_to_change():
    model, _, objective = small_model("servo", 2)
    with pytest.raises(ModelError, match="'v' has ki = 0"):
        gradient(model, objective, ["forces.v.ki"], t_end=0.01, h=2e-3)

    def torque_sensor(b):
        b.add_sensor("servo_torque", "force", "value", force="v")

    model, keys, _ = small_model("servo_pi", 2, extra=torque_sensor)
    with pytest.raises(ValidationError, match="integral term of joint servo 'v'"):
        gradient(model, Objective("servo_torque"), keys[:1], t_end=0.01, h=2e-3)


# ------------------------------------------------------------------ the rest
@settings(max_examples=10, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), measure=st.sampled_from(["final", "integral", "mean",
                                                             "rms", "max", "tracking",
                                                             "crossing"]))
def test_objective_weights_are_the_derivatives_of_the_measure(seed, measure):
    rng = np.random.default_rng(seed)
    t = np.cumsum(np.r_[0.0, rng.uniform(0.5, 1.5, 30)])
    s = np.sin(t / 3.0) + 0.3 + 0.1 * rng.normal(size=t.size)
    data = (np.linspace(0, t[-1], 7), rng.normal(size=7))
    objective = Objective("x", measure, data=data if measure == "tracking" else None,
                          level=0.3, sharpness=8.0)
    _, weights = objective.evaluate(t, s)
    h = 1e-6
    for k in rng.choice(t.size, 6, replace=False):
        e = np.zeros(t.size)
        e[k] = h
        fd = (objective.evaluate(t, s + e)[0] - objective.evaluate(t, s - e)[0]) / (2 * h)
        assert weights[k] == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_smooth_maximum_and_measures_on_known_histories():
    t = np.linspace(0.0, 2.0, 2001)
    s = np.sin(np.pi * t)
    assert Objective("x", "integral").evaluate(t, s)[0] == pytest.approx(0.0, abs=1e-9)
    assert Objective("x", "rms").evaluate(t, s)[0] == pytest.approx(math.sqrt(0.5),
                                                                    rel=1e-6)
    smooth = Objective("x", "max", sharpness=64).evaluate(t, s)[0]
    assert 0.95 < smooth < 1.0  # below max |s| by (time near it)^(1/P)
    assert Objective("x", "crossing", level=0.5).evaluate(t, s)[0] == pytest.approx(
        1.0 / 6.0, rel=1e-5)


def test_forward_sensitivities_of_the_history():
    """fm.sensitivities: ds_k/dp of the whole history; its weighted sum is the
    adjoint's gradient."""
    model, keys, objective = small_model("spring", 3)
    run = {"t_end": 0.03, "h": 2e-3, "method": "generalized-alpha"}
    sens = sensitivities(model, "tip", keys, component="y", **run)
    adj = gradient(model, objective, keys, **run)
    _, weights = objective.evaluate(sens.t, sens.values)
    for j, key in enumerate(sens.keys):
        assert weights @ sens.derivatives[:, j] == pytest.approx(adj.gradient[key],
                                                                 rel=1e-9)


def test_parameters_beyond_the_analytic_terms_take_differences():
    """A servo's gear ratio (inertia, torque and mass term at once) is taken by
    differences of the step equations; the result still matches the run."""
    model, _, objective = small_model("servo", 7)
    run = {"t_end": 0.03, "h": 2e-3, "rho_inf": 0.7}
    result = gradient(model, objective, ["forces.v.motor.gear_ratio"], newton="converged",
                      **run)
    assert result.how["forces.v.motor.gear_ratio"] == "differences"
    (p,), _ = resolve(["forces.v.motor.gear_ratio"], ModelModels(model))
    d = FD_REL * p.value
    fd = (run_objective(p.model_at(p.value + d), objective, run)
          - run_objective(p.model_at(p.value - d), objective, run)) / (2 * d)
    assert result.gradient[p.key] == pytest.approx(fd, rel=1e-4)


def elastica_with_constants(tmp_path):
    """The elastica case with its beam's section constants given (EA, GA_y, GA_z, GJ,
    EI_y, EI_z), written into ``tmp_path``: its path."""
    from pathlib import Path

    text = (Path(CASES) / "elastica.toml").read_text().replace(
        'material = "steel"',
        'material = "steel"\nstiffness = [4.2e6, 1.6e6, 1.6e6, 20.0, 1.4e3, 2.8]')
    path = tmp_path / "elastica.toml"
    path.write_text(text)
    return path


def test_a_nonlinear_beams_constants_take_differences_of_the_step_equations(tmp_path):
    """The elastica case (a nonlinear beam whipped by a tip load) with its section
    constants given: the tip's final height along the bending stiffness EI_y (by
    differences of the step equations: the beam's elements, with the bending
    flexibility in series with the shear) and the load (analytic) against central
    differences of the run (measured 5e-9 and 5e-11)."""
    path = elastica_with_constants(tmp_path)
    objective = Objective("tip", "final", component="z")
    keys = ["bodies.strip.stiffness[4]", "forces.load.value[2]"]
    result = gradient(str(path), objective, keys, newton="converged", t_end=0.02)
    assert result.how == {keys[0]: "differences", keys[1]: "analytic"}
    for key in keys:
        p = result.values[key]
        d = FD_REL * abs(p)
        fd = (case_objective(str(path), objective,
                             {"solver.t_end": 0.02, **as_override(str(path), key, p + d)})
              - case_objective(str(path), objective,
                               {"solver.t_end": 0.02, **as_override(str(path), key, p - d)})
              ) / (2 * d)
        assert result.gradient[key] == pytest.approx(fd, rel=RTOL), key


def test_marker_positions_take_differences_of_the_step_equations():
    """A rigid body's marker (the spring's end, and the hinge itself, which moves the
    initial state) by differences of the step equations and of the initial state."""
    model, _, objective = small_model("spring", 4)
    run = {"t_end": 0.03, "h": 2e-3, "rho_inf": 0.7}
    keys = ["markers.link.T.position[0]", "markers.link.O.position[1]"]
    result = gradient(model, objective, keys, newton="converged", **run)
    params, _ = resolve(keys, ModelModels(model))
    for p in params:
        assert result.how[p.key] == "differences"
        d = FD_REL * (abs(p.value) if p.value else 1.0)
        fd = (run_objective(p.model_at(p.value + d), objective, run)
              - run_objective(p.model_at(p.value - d), objective, run)) / (2 * d)
        assert result.gradient[p.key] == pytest.approx(fd, rel=RTOL)


def test_bad_input_is_refused_by_name():
    model, _, objective = small_model("spring", 1)
    run = {"t_end": 0.01, "h": 2e-3}
    with pytest.raises(ValidationError, match="no force named 'nope'"):
        gradient(model, objective, ["forces.nope.stiffness"], **run)
    with pytest.raises(ValidationError, match="has no field 'stifness'"):
        gradient(model, objective, ["forces.s.stifness"], **run)
    with pytest.raises(ValidationError, match="unknown sensor 'missing'"):
        gradient(model, Objective("missing"), ["forces.s.stiffness"], **run)
    with pytest.raises(ValidationError, match="components"):
        gradient(model, Objective("tip"), ["forces.s.stiffness"], **run)
    with pytest.raises(ValidationError, match="error-controlled"):
        gradient(model, objective, ["forces.s.stiffness"], error_tol=1e-3, **run)
    with pytest.raises(ValidationError, match="measure must be one of"):
        Objective("tip", "median")
    with pytest.raises(ValidationError, match="not model parameters"):
        gradient(CASES + "seed_pendulum.toml", Objective("joint:angle:pivot"), ["solver.h"])
    with pytest.raises(ValidationError, match="not set in"):
        gradient(CASES + "seed_pendulum.toml", Objective("joint:angle:pivot"),
                 ["forces.x.stiffness"])


def test_changes_of_the_modes_are_refused():
    """Changes of a flexible body's modes have derivatives only for the built-in beams of
    case files (tests/test_gradient_beams.py): a mode shape of a model built in Python
    (its modal data from elsewhere) is refused, naming the field, and so is a beam's
    geometric stiffening."""
    model, _, objective = small_model("flexible", 3)
    with pytest.raises(ModelError, match="built-in beams of case files"):
        gradient(model, objective, ["bodies.beam.data.phi[5,0]"], t_end=0.01, h=1e-3)
    with pytest.raises(ModelError, match="geometric stiffening"):
        gradient(CASES + "robot_arm.toml", Objective("payload", component="y"),
                 ["bodies.forearm.beam.section.height"], t_end=0.002)


def test_a_run_that_halves_its_steps_keeps_the_sizes_it_took():
    """The elastica as shipped, Newton converged: its steps halve where Newton fails, and
    the sweep must take the sizes the steps took (it took the size asked for, and the
    gradient along the load was 64 % off). The sizes add up to the run, some are halved,
    and the gradient matches central differences of the run on both engines. The failed
    attempts' diverging iterates (overflow) show the user no warning."""
    import warnings

    path = CASES + "elastica.toml"
    objective = Objective("tip", "final", component="z")
    key = "forces.load.value[2]"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = {engine: gradient(path, objective, [key], newton="converged",
                                    t_end=0.003, jacobian_engine=engine)
                   for engine in ("python", "compiled")}
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], caught
    value = results["python"].values[key]
    d = FD_REL * abs(value)
    fd = (case_objective(path, objective, {"solver.t_end": 0.003,
                                           **as_override(path, key, value + d)})
          - case_objective(path, objective, {"solver.t_end": 0.003,
                                             **as_override(path, key, value - d)})) / (2 * d)
    t = results["python"].t
    sizes = np.diff(t)
    assert t[-1] == pytest.approx(0.003) and sizes.min() < 0.6 * sizes.max()
    for engine, result in results.items():
        assert result.gradient[key] == pytest.approx(fd, rel=RTOL), engine


def test_a_sensor_that_reads_its_parameter_on_the_kernels_sweep():
    """The objective's sensor reads the parameter itself (the spring–damper's tension and
    its stiffness: ∂s/∂p at fixed state beside the motion's part), the adjoint on the
    compiled sweep (its objective terms taken apart from the kernel's steps) against the
    forward sensitivities and central differences of the run."""

    def extra(b):
        b.add_sensor("tension", "force", "value", force="s")

    model, _, _ = small_model("spring", 3, extra)
    objective = Objective("tension", "rms")
    keys = ["forces.s.stiffness", "forces.s.damping"]
    run = {"t_end": 0.04, "h": 2e-3, "rho_inf": 0.8}
    result = gradient(model, objective, keys, newton="converged", **run)
    assert result.cost["jacobians"] == "compiled"
    direct = gradient(model, objective, keys, mode="forward", newton="converged", **run)
    params, _ = resolve(keys, ModelModels(model))
    for p in params:
        assert direct.gradient[p.key] == pytest.approx(result.gradient[p.key], rel=1e-9)
        d = FD_REL * abs(p.value)
        fd = (run_objective(p.model_at(p.value + d), objective, run)
              - run_objective(p.model_at(p.value - d), objective, run)) / (2 * d)
        assert abs(result.gradient[p.key] - fd) <= RTOL * abs(fd), (p.key, fd)
