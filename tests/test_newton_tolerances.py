"""Newton's tolerances: their presets, their record in the results and what "converged"
buys (docs/integrators.md, "Newton tolerances")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from flexmbs.cases import load_case, run_case
from flexmbs.cases.case import CaseError
from flexmbs.cli.main import main as cli_main
from flexmbs.integrators.options import NEWTON_PRESETS
from flexmbs.results import load_result

CASE = "cases/arm_beam_seed.toml"


def _run(t_end=0.3, **solver):
    case = load_case(CASE)
    case.solver = case.solver.replace(t_end=t_end, **solver)
    return run_case(case)[1]


def test_the_tolerances_that_ran_are_recorded_with_their_preset():
    for preset, values in NEWTON_PRESETS.items():
        got = _run(0.02, newton=preset).statistics["newton_tolerances"]
        assert got == {"preset": preset, **values, "max_iter": 12}
    got = _run(0.02, newton="converged", rtol=1e-11).statistics["newton_tolerances"]
    assert got["rtol"] == 1e-11 and got["atol"] == NEWTON_PRESETS["converged"]["atol"]


def test_the_results_file_and_the_json_summary_carry_them(tmp_path, capsys):
    out = tmp_path / "arm.res.h5"
    assert cli_main(["run", "--json", CASE, "-o", str(out), "--set", "solver.t_end=0.02",
                     "--set", "solver.newton=converged"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["statistics"]["newton_tolerances"]["phi_tol"] == 1e-12
    assert load_result(out).statistics["newton_tolerances"]["acc_rtol"] == 1e-10


def test_a_bad_preset_names_the_key_and_the_choices(tmp_path):
    text = Path(CASE).read_text().replace("[solver]", '[solver]\nnewton = "tight"', 1)
    path = tmp_path / "arm.toml"
    path.write_text(text.replace('"../modal_data/', '"' + str(
        (load_case(CASE).path.parent.parent / "modal_data").resolve()) + "/"))
    with pytest.raises(CaseError, match=r"newton.*default or converged.*'tight'"):
        load_case(path)


def test_converged_newton_agrees_with_a_tighter_solve_where_the_default_does_not():
    """Against a solve at tolerances ten times tighter still, the "converged" preset's
    trajectory lies at least ten times closer than the default's (which stops where its
    corrections fall below 1e-8 relative); both run the same steps."""
    default = _run()
    converged = _run(newton="converged")
    tighter = _run(rtol=1e-13, atol=1e-15, acc_rtol=1e-11, phi_tol=1e-13)
    off_default = np.abs(default.q - tighter.q).max()
    off_converged = np.abs(converged.q - tighter.q).max()
    assert off_default > 1e-8
    assert off_converged < 0.1 * off_default
