"""Co-simulation (flexmbs.cosim): the stepping API against one run, rollback, inputs held
or interpolated, sampled controllers (a Python law, a control FMU built with pythonfmu
and run with FMPy, and the arm exported as an FMU driven by that controller in an FMPy
master loop: the three agree), the pendulum FMU against flexmbs run, and bad input."""

from __future__ import annotations

import json
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pythonfmu")
pytest.importorskip("fmpy")

from flexmbs.cases import load_case, run_case
from flexmbs.cli.main import main as cli
from flexmbs.cosim import Controller, Simulation
from flexmbs.errors import FlexmbsError, ValidationError

ROOT = Path(__file__).resolve().parents[1]

KP, KD, REF, PERIOD = 20.0, 2.0, 1.0, 0.01


def pd_law(t, measured):
    return {"tau": KP * (REF - measured["shoulder"]) - KD * measured["shoulder_rate"]}


@pytest.fixture
def arm(tmp_path):
    """The shipped arm with its shoulder torque free for a controller
    (cases/arm_beam_pd.toml), in a folder with its modal data (as a user's project)."""
    (tmp_path / "modal_data").mkdir()
    (tmp_path / "modal_data" / "seed_tip_beam.fmd.h5").write_bytes(
        (ROOT / "modal_data" / "seed_tip_beam.fmd.h5").read_bytes())
    (tmp_path / "cases").mkdir()
    path = tmp_path / "cases" / "arm.toml"
    path.write_text((ROOT / "cases" / "arm_beam_pd.toml").read_text())
    return path


@pytest.fixture(scope="module")
def pd_fmu(tmp_path_factory):
    """The shipped PD controller source (cases/pd_controller.py) built with pythonfmu."""
    from pythonfmu.builder import FmuBuilder

    folder = tmp_path_factory.mktemp("pd")
    return Path(FmuBuilder.build_FMU(ROOT / "cases" / "pd_controller.py", dest=folder))


def test_stepping_in_pieces_equals_one_run(arm):
    case = load_case(arm, {"solver.t_end": 0.2, "solver.output_every": 10,
                           "forces.tau1.value": 2.0})
    _, ref = run_case(case)
    # the input starts at the case's value (the initial accelerations use it)
    sim = Simulation(case, inputs={"tau1": "forces.tau1.value"})
    assert sim.external == ["tau1"]
    outs = [sim.step_to(0.01 * k, {"tau1": 2.0}) for k in range(1, 21)]
    for name, column in (("shoulder", 0), ("hand.x", 0), ("hand.y", 1)):
        sensor = name.split(".")[0]
        got = np.array([o[name] for o in outs])
        np.testing.assert_allclose(got, ref.sensor(sensor)[1:, column], rtol=0, atol=1e-10)
    # the same steps whether stepped in pieces or at once (round-off of the landings)
    once = Simulation(case, inputs={"tau1": "forces.tau1.value"}).step_to(0.2, {"tau1": 2.0})
    assert once["shoulder"] == pytest.approx(outs[-1]["shoulder"], abs=1e-12)
    assert sim.integ.engine.value == "compiled" or "compiled" not in sim.integ.engine_note


def test_rollback_reproduces_a_step_exactly(arm):
    sim = Simulation(arm, inputs={"tau1": "forces.tau1.value"})
    sim.step_to(0.05, {"tau1": 1.0})
    state = sim.get_state()
    first = sim.step_to(0.06, {"tau1": 3.0})
    sim.step_to(0.08, {"tau1": -5.0})
    sim.set_state(state)
    assert sim.t == 0.05
    again = sim.step_to(0.06, {"tau1": 3.0})
    assert again == first  # bit for bit
    with pytest.raises(ValidationError, match="not a state of this simulation"):
        sim.set_state({"checkpoint": {}})


def test_inputs_held_or_interpolated(arm):
    held = Simulation(arm, inputs={"tau1": "forces.tau1.value"}, input_mode="hold")
    ramp = Simulation(arm, inputs={"tau1": "forces.tau1.value"}, input_mode="linear")
    for sim in (held, ramp):
        sim.step_to(0.1, {"tau1": 0.0})
        sim.step_to(0.2, {"tau1": 4.0})
    signal_h, signal_r = held.signals["tau1"], ramp.signals["tau1"]
    assert signal_h.value_at(0.15) == 4.0 and signal_h.value_at(0.05) == 0.0
    assert signal_r.value_at(0.15) == pytest.approx(2.0)  # halfway up the ramp
    assert signal_r.eval(0.15)[1] == pytest.approx(40.0)  # its slope [N m/s]
    # the ramped torque did half the held one's impulse over the interval: less rotation
    assert ramp.outputs()["shoulder"] < held.outputs()["shoulder"]


def test_three_ways_of_a_pd_controller_agree(arm, pd_fmu, tmp_path):
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    t_end, n = 0.4, 40
    # (a) the law in Python, sampled by the stepping API
    sim = Simulation(arm, controllers=[Controller(
        "pd", pd_law, ["shoulder", "shoulder_rate"], {"tau": "forces.tau1.value"},
        PERIOD)])
    in_process = np.array([sim.step_to(PERIOD * k)["shoulder"] for k in range(1, n + 1)])
    # (b) the same law as a control FMU in the case file, run by flexmbs run
    case_text = arm.read_text() + textwrap.dedent(f"""
        [[controllers]]
        name = "pd"
        fmu = "{pd_fmu.as_posix()}"
        period = {PERIOD}
        inputs = {{ angle = "shoulder", rate = "shoulder_rate" }}
        outputs = {{ tau = "forces.tau1.value" }}
        """)
    controlled = arm.with_name("arm_pd.toml")
    controlled.write_text(case_text)
    _, res = run_case(load_case(controlled, {"solver.t_end": t_end}))
    assert res.success, res.message
    steps = np.searchsorted(res.t, PERIOD * np.arange(1, n + 1) - 1e-12)
    from_case = res.sensor("shoulder")[steps, 0]
    np.testing.assert_allclose(from_case, in_process, rtol=0, atol=1e-12)
    # (c) the arm exported as an FMU, driven by the controller FMU in a master loop
    arm_fmu = tmp_path / "arm.fmu"
    assert cli(["fmu", str(arm), "-o", str(arm_fmu), "--input", "tau1=forces.tau1.value",
                "--output", "shoulder,shoulder_rate"]) == 0
    slaves = {}
    for name, path in (("arm", arm_fmu), ("pd", pd_fmu)):
        md = read_model_description(str(path))
        fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(str(path)),
                        modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
        fmu.instantiate()
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        slaves[name] = (fmu, {v.name: v.valueReference for v in md.modelVariables})
    (a_fmu, a_ref), (c_fmu, c_ref) = slaves["arm"], slaves["pd"]
    master = []
    for k in range(n):
        t = PERIOD * k
        angle, rate = a_fmu.getReal([a_ref["shoulder"], a_ref["shoulder_rate"]])
        c_fmu.setReal([c_ref["angle"], c_ref["rate"]], [angle, rate])
        c_fmu.doStep(currentCommunicationPoint=t, communicationStepSize=PERIOD)
        a_fmu.setReal([a_ref["tau1"]], c_fmu.getReal([c_ref["tau"]]))
        a_fmu.doStep(currentCommunicationPoint=t, communicationStepSize=PERIOD)
        master.append(a_fmu.getReal([a_ref["shoulder"]])[0])
    for fmu, _ in slaves.values():
        fmu.terminate()
        fmu.freeInstance()
    np.testing.assert_allclose(master, in_process, rtol=0, atol=1e-12)
    # and the controller does its job: the shoulder heads for the reference angle
    assert abs(in_process[-1] - REF) < abs(in_process[0] - REF)


def _pendulum_with_sensor(tmp_path) -> Path:
    path = tmp_path / "pendulum.toml"
    path.write_text((ROOT / "cases" / "seed_pendulum.toml").read_text() + textwrap.dedent("""
        [[sensors]]
        name = "angle"
        type = "joint"
        quantity = "angle"
        joint = "pivot"

        [[sensors]]
        name = "bob"
        type = "marker"
        quantity = "position"
        marker = "bob.O"
        """))
    return path


def test_the_pendulum_fmu_gives_the_sensors_of_a_direct_run(tmp_path):
    from fmpy import read_model_description, simulate_fmu

    case = _pendulum_with_sensor(tmp_path)
    fmu = tmp_path / "pendulum.fmu"
    assert cli(["fmu", str(case), "-o", str(fmu)]) == 0
    md = read_model_description(str(fmu))
    units = {v.name: v.unit for v in md.modelVariables}
    assert units["angle"] == "rad" and float(md.defaultExperiment.stopTime) == 2.0
    with zipfile.ZipFile(fmu) as z:  # the case is embedded
        assert any(name.endswith("pendulum.toml") for name in z.namelist())
    _, ref = run_case(load_case(case, {"solver.t_end": 0.5}))
    errors = []
    for comm in (1e-3, 4e-3, 8e-3, 16e-3):
        out = simulate_fmu(str(fmu), stop_time=0.48, step_size=comm, output_interval=comm,
                           fmi_type="CoSimulation")
        k = np.searchsorted(ref.t, out["time"] - 1e-12)
        err = np.max(np.abs(out["angle"] - ref.sensor("angle")[k, 0]))
        if comm == 1e-3:  # the integrator's own step: the same run
            assert err < 1e-9
        else:
            errors.append(err)
    # no inputs: a communication step that is a multiple of h changes nothing either
    assert max(errors) < 1e-9


def test_a_held_input_converges_at_first_order_in_the_communication_step(arm):
    """An input sampled from a smooth signal u(t) = 2 sin(5 t) and held over each
    interval: the shoulder angle at 0.4 s converges to the continuously driven run's
    with the communication step, at first order."""
    case = load_case(arm)
    from flexmbs.model.drives import Table

    times = np.linspace(0.0, 0.5, 501)
    smooth = Table(tuple(times), tuple(2.0 * np.sin(5.0 * times)))
    from dataclasses import replace

    model = case.model
    forces = tuple(replace(f, profile=smooth, function=lambda t, s, p=smooth: p.eval(t)[0])
                   if f.name == "tau1" else f for f in model.forces)
    from flexmbs.assembly import System
    from flexmbs.integrators import simulate

    exact = simulate(System(replace(model, forces=forces)), 0.4, 1e-3, "newmark")
    target = exact.sensor("shoulder")[-1, 0]
    errors = []
    for comm in (0.04, 0.02, 0.01):
        sim = Simulation(arm, inputs={"tau1": "forces.tau1.value"})
        for k in range(round(0.4 / comm)):
            t = k * comm
            out = sim.step_to(t + comm, {"tau1": 2.0 * np.sin(5.0 * t)})
        errors.append(abs(out["shoulder"] - target))
    rates = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all((rates > 0.8) & (rates < 1.3)), (errors, rates)


@pytest.mark.parametrize("inputs, outputs, message", [
    ({"tau1": "forces.missing.value"}, None, r"input 'tau1': the case has no force "
                                             r"'missing' \(it has: tau1\)"),
    ({"tau1": "forces.tau1.torque"}, None, r"takes forces.tau1.value, not 'torque'"),
    ({"tau1": "drives.motor.value"}, None, r"the case has no drive 'motor'"),
    ({"u": "bodies.link1.mass"}, None, r"target 'bodies.link1.mass' must read"),
    (None, ["shoulder", "elbow_angle"], r"unknown output\(s\) \['elbow_angle'\]"),
])
def test_bad_inputs_and_outputs_are_named(arm, inputs, outputs, message):
    with pytest.raises(ValidationError, match=message):
        Simulation(arm, inputs=inputs, outputs=outputs)


def test_unknown_and_mistyped_inputs_at_a_step(arm):
    sim = Simulation(arm, inputs={"tau1": "forces.tau1.value"})
    with pytest.raises(ValidationError, match=r"unknown input 'tau2'; the inputs are "
                                              r"\['tau1'\]"):
        sim.step_to(0.01, {"tau2": 1.0})
    with pytest.raises(ValidationError, match=r"input 'tau1' must be a number, got 'x'"):
        sim.step_to(0.01, {"tau1": "x"})
    with pytest.raises(ValidationError, match="before the current time"):
        sim.step_to(-1.0)


@pytest.mark.parametrize("edit, message", [
    ("fmu = \"nothing.fmu\"", r"FMU file .*nothing.fmu' not found"),
    ("fmu = \"fake.fmu\"", r"fake.fmu' is not an FMU"),
    ("inputs = { angel = \"shoulder\" }", r"has no input variable 'angel' \(it has: "
                                          r"\['angle', 'rate'\]\)"),
    ("inputs = { tau = \"shoulder\" }", r"variable 'tau' is an output, not an input"),
    ("outputs = { tau = \"forces.nope.value\" }", r"the case has no force 'nope'"),
    ("outputs = { steps = \"forces.tau1.value\" }", r"variable 'steps' is Integer; "
                                                     r"flexmbs exchanges Real variables"),
])
def test_bad_controller_entries_are_named(arm, pd_fmu, edit, message):
    (arm.parent / "fake.fmu").write_bytes(b"not a zip file")
    key = edit.split(" = ")[0]
    lines = {"fmu": f'fmu = "{pd_fmu.as_posix()}"',
             "inputs": 'inputs = { angle = "shoulder", rate = "shoulder_rate" }',
             "outputs": 'outputs = { tau = "forces.tau1.value" }'}
    lines[key] = edit
    entry = "\n".join(["[[controllers]]", 'name = "pd"', f"period = {PERIOD}",
                       *lines.values()])
    path = arm.with_name("bad.toml")
    path.write_text(arm.read_text() + "\n" + entry + "\n")
    with pytest.raises(FlexmbsError, match=message) as info:
        load_case(path)
    assert "bad.toml" in str(info.value)


def test_bad_fmu_export_arguments_exit_2(arm, tmp_path, capsys):
    assert cli(["fmu", str(arm), "-o", str(tmp_path / "x.zip")]) == 2
    assert "ends in .fmu" in capsys.readouterr().err
    assert cli(["fmu", str(arm), "-o", str(tmp_path / "x.fmu"), "--input", "tau1"]) == 2
    assert "expected NAME=TARGET" in capsys.readouterr().err
    assert not (tmp_path / "x.fmu").exists()


def test_missing_extras_are_named(monkeypatch, arm, tmp_path):
    import sys

    from flexmbs.cosim.fmu_export import export_fmu

    monkeypatch.setitem(sys.modules, "pythonfmu.builder", None)
    with pytest.raises(FlexmbsError, match=r"pip install 'flexmbs\[fmu\]'"):
        export_fmu(arm, tmp_path / "a.fmu")
    monkeypatch.setitem(sys.modules, "fmpy", None)
    from flexmbs.cosim.controllers import FmuController

    with pytest.raises(FlexmbsError, match=r"pip install 'flexmbs\[fmu\]'"):
        FmuController("pd", tmp_path / "a.fmu", {}, {}, 0.01)


def test_fmu_description_lists_units_and_start_values(arm, tmp_path):
    out = tmp_path / "arm.fmu"
    assert cli(["fmu", str(arm), "-o", str(out), "--input", "tau1=forces.tau1.value",
                "--json"]) == 0
    from fmpy import read_model_description

    md = read_model_description(str(out))
    variables = {v.name: v for v in md.modelVariables}
    assert variables["tau1"].causality == "input" and variables["tau1"].unit == "N.m"
    assert float(variables["tau1"].start) == 0.0
    assert variables["hand.x"].unit == "m" and variables["shoulder_rate"].unit == "rad/s"
    with zipfile.ZipFile(out) as z:
        config = json.loads(next(z.read(n) for n in z.namelist() if n.endswith("fmu.json")))
    assert config["inputs"][0]["target"] == "forces.tau1.value"


def test_a_rollback_can_go_back_and_forth(arm):
    """Save S1, go on, save S2, go back to S1 and take another branch, then return to S2:
    the inputs and the state are S2's again (what an FMI master may do)."""
    def run(steps):
        sim = Simulation(arm, inputs={"tau1": "forces.tau1.value"}, input_mode="linear")
        for t, u in steps:
            out = sim.step_to(t, {"tau1": u})
        return sim, out

    sim, _ = run([(0.05, 1.0)])
    s1 = sim.get_state()
    sim.step_to(0.06, {"tau1": 3.0})
    s2 = sim.get_state()
    sim.step_to(0.08, {"tau1": -5.0})
    sim.set_state(s1)
    sim.step_to(0.06, {"tau1": -7.0})  # another branch
    sim.set_state(s2)
    assert sim.t == 0.06 and sim.signals["tau1"].value_at(0.06) == 3.0
    back = sim.step_to(0.07, {"tau1": 1.0})
    _, straight = run([(0.05, 1.0), (0.06, 3.0), (0.07, 1.0)])
    assert back == straight


def test_angle_outputs_count_turns_like_the_sensors_of_a_run(arm):
    """A torque that swings the shoulder past π (the beam held rigid, which this torque
    would bend beyond linear FFRF): the output angle goes on counting, as the run's
    unwrapped sensor does."""
    case = load_case(arm, {"forces.tau1.value": 10.0, "solver.t_end": 0.6,
                           "solver.output_every": 20, "solver.coupling": "rigid"})
    _, ref = run_case(case)
    assert ref.sensor("shoulder")[-1, 0] > np.pi + 0.5
    sim = Simulation(case, inputs={"tau1": "forces.tau1.value"})
    got = [sim.step_to(0.02 * k, {"tau1": 10.0})["shoulder"] for k in range(1, 31)]
    np.testing.assert_allclose(got, ref.sensor("shoulder")[1:, 0], rtol=0, atol=1e-8)


def test_the_clock_follows_steps_cut_short_by_contacts():
    """A bouncing ball stepped every 10 ms: contact onsets shorten steps, and the time
    stays the sum of the steps taken (the communication point is reached by more steps,
    not by moving the clock)."""
    sim = Simulation(ROOT / "cases" / "ball_drop.toml")
    for k in range(1, 61):
        sim.step_to(0.01 * k)
        assert sim.t == pytest.approx(0.01 * k, abs=1e-12)
        assert abs(sim.integ.stats.h_sum - sim.t) < 1e-9  # (no outputs: one interval)
    assert sim.integ.onsets_located > 0


def test_a_run_with_controllers_is_not_continued_from_a_restart_point(arm):
    from flexmbs.assembly import System
    from flexmbs.integrators import simulate

    case = load_case(arm, {"solver.t_end": 0.02})
    _, first = run_case(case)
    ctrl = Controller("pd", pd_law, ["shoulder", "shoulder_rate"],
                      {"tau": "forces.tau1.value"}, PERIOD)
    with pytest.raises(ValidationError, match="cannot be continued from a restart point"):
        simulate(System(case.model), 0.04, 1e-3, "newmark", restart=first,
                 controllers=[ctrl], signals={})


def test_one_output_name_is_one_output(arm):
    """outputs="beam.xi1" is that one output (its characters were taken as names)."""
    case = load_case(arm, {"solver.t_end": 0.01})
    one = Simulation(case, outputs="beam.xi1")
    listed = Simulation(case, outputs=["beam.xi1"])
    assert one.output_names == listed.output_names == ["beam.xi1"]


PENDULUM = """
title = "a rigid pendulum without gravity, driven about its pivot"
[model]
gravity = [0.0, 0.0, 0.0]
[[bodies]]
name = "bob"
type = "rigid"
mass = 1.0
inertia = [0.03, 0.03, 0.05]
com = [0.0, -0.5, 0.0]
[[markers]]
body = "ground"
name = "O"
[[markers]]
body = "bob"
name = "O"
[[joints]]
name = "pivot"
type = "revolute"
i = "ground.O"
j = "bob.O"
{load}
[[sensors]]
name = "th"
type = "joint"
quantity = "angle"
joint = "pivot"
[[sensors]]
name = "thd"
type = "joint"
quantity = "angle_rate"
joint = "pivot"
[solver]
method = "generalized-alpha"
rho_inf = {rho_inf}
h = 1e-3
t_end = 1.0
"""
PIVOT_INERTIA = 0.05 + 1.0 * 0.5**2  # [kg m²] about the pivot
TORQUE = """[[forces]]
name = "tau"
type = "joint-torque"
i = "ground.O"
j = "bob.O"
value = 0.0"""
DRIVE = """[[drives]]
name = "motor"
type = "rotation"
i = "ground.O"
j = "bob.O"
profile = 0.2"""


@pytest.mark.parametrize("rho_inf", [1.0, 0.7])
def test_a_held_pd_loop_is_the_exact_sampled_data_system(tmp_path, rho_inf):
    """A PD law sampled every 10 ms and held on a free rotor: between samples the torque
    is constant, so the exact sampled-data motion is θ_k+1 = θ_k + θ̇_k Δt + u_k Δt²/2J.
    Each held value's jump restarts the integrator's accelerations (docs/cosimulation.md,
    "Inputs and outputs"); without the restart the first step after each jump carried the
    old torque for about half a step, 1.9e-3 rad away after 2 s, an error of order h."""
    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM.format(load=TORQUE, rho_inf=rho_inf))
    kp, kd, period = 3.0, 0.3, 0.01

    def law(t, measured):
        return {"tau": kp * (1.0 - measured["th"]) - kd * measured["thd"]}

    ctrl = Controller("pd", law, measure=["th", "thd"],
                      targets={"tau": "forces.tau.value"}, period=period)
    sim = Simulation(path, controllers=[ctrl], outputs=["th"])
    got = [sim.step_to(period * k)["th"] for k in range(1, 201)]
    theta, rate, exact = 0.0, 0.0, []
    for _ in range(200):
        u = kp * (1.0 - theta) - kd * rate
        theta, rate = (theta + rate * period + u * period**2 / (2 * PIVOT_INERTIA),
                       rate + u * period / PIVOT_INERTIA)
        exact.append(theta)
    np.testing.assert_allclose(got, exact, rtol=0, atol=2e-6)


def test_a_ramped_drive_set_point_keeps_its_rate_at_the_communication_points(tmp_path):
    """A drive's set-point ramped between communication points: at every point the joint
    turns at the last interval's slope (ρ∞ = 1, the trapezoidal rule, follows a linear
    motion exactly). The last step of an interval lands a round-off past its end, where
    the signal said its rate was 0: the joint was stopped at those points."""
    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM.format(load=DRIVE, rho_inf=1.0))
    sim = Simulation(path, inputs={"s": "drives.motor.value"}, outputs=["th", "thd"],
                     input_mode="linear")

    def s(t):
        return 0.2 + 0.5 * np.sin(3.0 * t)

    for k in range(1, 31):
        t0, t1 = 0.01 * (k - 1), 0.01 * k
        out = sim.step_to(t1, inputs={"s": s(t1)})
        slope = (s(t1) - (s(t0) if k > 1 else 0.2)) / 0.01
        assert out["th"] == pytest.approx(s(t1), abs=1e-9)
        assert out["thd"] == pytest.approx(slope, rel=1e-9), k  # (trapezoidal: exact)


def test_an_fmu_holds_its_inputs_and_names_are_unique(arm, tmp_path):
    """An FMI 2.0 master sets an input at the step's start, so a ramp towards it would lag
    one step: the FMU takes no linear input mode. An input named as an output would make
    two FMU variables of one name."""
    from flexmbs.cosim.fmu_export import export_fmu

    with pytest.raises(ValidationError, match="lag one communication step"):
        export_fmu(arm, tmp_path / "a.fmu", {"tau1": "forces.tau1.value"},
                   input_mode="linear")
    with pytest.raises(ValidationError, match=r"input name\(s\) \['shoulder'\] are also "
                                              "output names"):
        export_fmu(arm, tmp_path / "a.fmu", {"shoulder": "forces.tau1.value"})
    assert not (tmp_path / "a.fmu").exists()


def test_solver_keywords_over_the_case(arm):
    """A method given as a keyword drops the case's own method parameters (the case's
    ρ∞ reached HHT as an internal TypeError); a keyword of another method, a misspelt
    one, a Newton preset and a non-finite time are each named."""
    sim = Simulation(arm, method="hht")
    assert sim.integ.params.name.startswith("hht")
    assert Simulation(arm, method="newmark", beta=0.3).integ.params.beta == 0.3
    with pytest.raises(ValidationError, match="key 'rho_inf' does not apply to method 'hht'"):
        Simulation(arm, method="hht", rho_inf=0.5)
    with pytest.raises(ValidationError, match=r"unknown solver setting\(s\) \['hh'\]"):
        Simulation(arm, hh=1e-3)
    converged = Simulation(arm, newton="converged").integ
    from flexmbs.integrators.options import NEWTON_PRESETS

    assert converged.rtol == NEWTON_PRESETS["converged"]["rtol"]
    with pytest.raises(ValidationError, match="step_to: t = nan s must be a finite time"):
        sim.step_to(float("nan"))


def test_a_failing_controller_is_named(tmp_path):
    """A law that raises: through Simulation a ModelError naming the controller (a bare
    KeyError before); in a run, the run stops there, keeps its outputs and says which."""
    from flexmbs.assembly import System
    from flexmbs.cosim.inputs import bind_inputs
    from flexmbs.errors import ModelError
    from flexmbs.integrators.simulate import simulate

    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM.format(load=TORQUE, rho_inf=1.0))

    def law(t, measured):
        if t > 0.02:
            raise KeyError("gain_table")
        return {"tau": 0.1}

    def controller():
        return Controller("pd", law, measure=["th"], targets={"tau": "forces.tau.value"},
                          period=0.01)

    sim = Simulation(path, controllers=[controller()])
    with pytest.raises(ModelError, match="controller 'pd' failed: KeyError: 'gain_table'"):
        sim.step_to(0.05)
    ctrl = controller()
    model, signals = bind_inputs(load_case(path).model, ctrl.targets)
    result = simulate(System(model), 0.1, 1e-3, controllers=[ctrl], signals=signals)
    assert not result.success and result.t[-1] == pytest.approx(0.03)
    assert result.message == ("stopped at t = 0.03 s: controller 'pd' failed: KeyError: "
                              "'gain_table'")
