"""Case files and `flexmbs run`: the shipped cases run and give the physics, and every
malformed case names its table and key."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ellipk

from flexmbs.cases import load_case, run_case
from flexmbs.cases.loader import CaseError
from flexmbs.cli.main import main
from flexmbs.integrators import SimulationResult

CASES = Path(__file__).resolve().parents[1] / "cases"


def test_seed_pendulum_case_runs_with_the_exact_period(tmp_path, capsys):
    out = tmp_path / "p.res.h5"
    assert main(["run", str(CASES / "seed_pendulum.toml"), "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["success"] and summary["dof"] == 1
    res = SimulationResult.load(out)
    theta = 2 * np.arcsin(res.coordinate("bob.e3"))
    idx = np.flatnonzero((theta[:-1] > 0) & (theta[1:] <= 0))
    t = res.t
    crossings = t[idx] - theta[idx] * (t[idx + 1] - t[idx]) / (theta[idx + 1] - theta[idx])
    period = np.diff(crossings)[0]
    exact = 4 * np.sqrt(0.5 / 9.81) * ellipk(np.sin(np.radians(15)) ** 2)
    assert abs(period - exact) / exact < 1e-5


def test_cantilever_case_oscillates_at_the_first_frequency(tmp_path):
    case = load_case(CASES / "cantilever_release.toml")
    case.output = tmp_path / "c.res.h5"
    system, res = run_case(case)
    assert res.success
    xi1 = res.modal_coordinates("beam")[:, 0]
    idx = np.flatnonzero((xi1[:-1] > 0) & (xi1[1:] <= 0))
    t = res.t
    crossings = t[idx] - xi1[idx] * (t[idx + 1] - t[idx]) / (xi1[idx + 1] - xi1[idx])
    f1 = system.bodies[0].data.frequencies[0]
    assert abs(np.mean(np.diff(crossings)) * f1 - 1) < 2e-4


def write(tmp_path, text):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    return path


BASE = """
[[bodies]]
name = "b"
type = "rigid"
mass = 1.0
inertia = [1.0, 1.0, 1.0]
{extra}
[solver]
h = 0.01
t_end = 0.1
"""


@pytest.mark.parametrize(("extra", "pattern"), [
    ("colour = 'red'", r"\[\[bodies\]\] #1 'b': unknown key\(s\) \['colour'\]"),
    ("type2 = 1\n", r"unknown key\(s\) \['type2'\]"),
])
def test_unknown_keys_are_named(tmp_path, extra, pattern):
    with pytest.raises(CaseError, match=pattern):
        load_case(write(tmp_path, BASE.format(extra=extra)))


@pytest.mark.parametrize(("text", "pattern"), [
    (BASE.format(extra="").replace("mass = 1.0", "mass = -1.0"),
     r"\[\[bodies\]\] #1 'b': key 'mass' must be a positive number, got -1"),
    (BASE.format(extra="").replace("h = 0.01", ""), r"\[solver\]: missing key 'h'"),
    (BASE.format(extra="").replace('type = "rigid"', 'type = "elastic"'),
     r"key 'type' must be 'rigid', 'flexible' or 'nonlinear-beam'"),
    (BASE.format(extra="").replace("inertia = [1.0, 1.0, 1.0]",
                                   'type2 = 0\ninertia = [1.0, 1.0, 1.0]'),
     r"unknown key"),
    ("[[bodies]]\nname='f'\ntype='flexible'\nmodal_data='nope.fmd.h5'\n[solver]\nh=1\nt_end=1",
     r"key 'modal_data' could not be read: .*does not exist"),
    ("[[joints]]\nname='j'\ntype='revolute'\ni='ground.X'\nj='ghost.A'\n[solver]\nh=1\n"
     "t_end=1", r"(?s)bad\.toml: .*the model has .*joint 'j': marker i 'ground\.X' not found"),
    ("this is not toml", r"not valid TOML"),
])
def test_bad_cases_name_table_and_key(tmp_path, text, pattern):
    with pytest.raises(CaseError, match=pattern):
        load_case(write(tmp_path, text))


def test_solver_settings_are_validated_when_loading(tmp_path):
    base = BASE.format(extra="")
    for change, pattern in (
        ("t_end = 0.1\nmethod = 'hht'\nrho_inf = 0.5",
         r"\[solver\]: key 'rho_inf' does not apply to method 'hht'"),
        ("t_end = 0.1\nmethod = 'hhtt'", r"\[solver\]: key 'method' must be one of"),
        ("t_end = 0.1\noutput_every = 2.5", r"key 'output_every' must be an integer"),
        ("t_end = 0.1\nrtol = 'tight'", r"key 'rtol' must be a positive number, got 'tight'"),
    ):
        with pytest.raises(CaseError, match=pattern):
            load_case(write(tmp_path, base.replace("t_end = 0.1", change)))


def test_entry_level_value_errors_name_the_entry(tmp_path):
    bad_inertia = BASE.format(extra="").replace("inertia = [1.0, 1.0, 1.0]",
                                                "inertia = 'big'")
    with pytest.raises(CaseError, match=r"\[\[bodies\]\] #1 'b'"):
        load_case(write(tmp_path, bad_inertia))
    with pytest.raises(CaseError, match=r"'bodies' must be an array of tables"):
        load_case(write(tmp_path, "[bodies]\nname = 'b'\n[solver]\nh=1\nt_end=1"))


def test_missing_case_file_is_a_clear_cli_error(capsys, tmp_path):
    assert main(["run", str(tmp_path / "none.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_arm_beam_seed_case_runs_in_every_coupling_mode():
    """Smoke test of the seed arm-plus-beam case (the study itself is issue 6): 0.2 s in
    each mode; the beam is excited with two-way and one-way coupling, frozen when rigid,
    and the rigid and no-Mrf frame motions coincide here (no mass coupling left)."""
    shoulder = {}
    for mode in ("two-way", "one-way", "no-Mrf", "rigid"):
        case = load_case(CASES / "arm_beam_seed.toml")
        case.solver = case.solver.replace(coupling=mode, t_end=0.2)
        _, res = run_case(case)
        assert res.success, (mode, res.message)
        xi = res.modal_coordinates("beam")
        shoulder[mode] = res.coordinate("link1.e3")
        if mode in ("two-way", "one-way"):
            assert np.max(np.abs(xi[:, 0])) > 1e-4
        if mode == "rigid":
            assert np.all(xi == 0)
    assert np.max(np.abs(shoulder["two-way"] - shoulder["rigid"])) > 1e-6


def test_every_shipped_case_loads_and_checks():
    """Each case in cases/ loads, compiles and has no redundant constraint equations
    (the quick part of running them; the physics is in the case-specific tests)."""
    from flexmbs.assembly import System

    names = sorted(p.name for p in CASES.glob("*.toml"))
    assert len(names) >= 9
    for name in names:
        system = System(load_case(CASES / name).model)
        report = system.check()
        assert not report.redundant, (name, report.message)


@pytest.mark.parametrize("coefficients", [[], ["fast"], [0.0, float("nan")]])
def test_bad_polynomial_drive_profiles_name_the_drive(coefficients):
    with pytest.raises(CaseError, match=r"motor.*'coefficients' must be a list of one or "
                                        r"more finite numbers"):
        load_case(CASES / "slider_crank_ideal.toml",
                  {"drives.motor.profile.coefficients": coefficients})
