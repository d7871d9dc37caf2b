"""One SolverOptions for the case files, the API and the command line (issue 32,
flexmbs/integrators/options.py): the [solver] table becomes one, simulate() checks its
step options with it, and a bad value gets the same words from both."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.errors import FlexmbsError, ValidationError
from flexmbs.frame.coupling import Coupling
from flexmbs.integrators import simulate
from flexmbs.integrators.options import Engine, SolverOptions, Tangents

CASE = Path(__file__).resolve().parents[1] / "cases" / "seed_pendulum.toml"


def test_a_case_files_solver_table_is_one_with_enums_and_reads_as_its_table():
    case = load_case(CASE, {"solver.engine": "python", "solver.coupling": "one-way",
                            "solver.rtol": 1e-9})
    options = case.solver
    assert isinstance(options, SolverOptions)
    assert options.engine is Engine.PYTHON and options.coupling is Coupling.ONE_WAY
    assert options.tangents is None and options.rtol == 1e-9
    as_table = {**options}  # what run_case passes on: the keys given, enums as text
    assert as_table["engine"] == "python" and type(as_table["engine"]) is str
    assert "tangents" not in as_table and as_table["h"] == options.h
    changed = options.replace(tangents="fd", rtol=None)
    assert changed.tangents is Tangents.FD and "rtol" not in changed
    assert options.rtol == 1e-9  # frozen: replace made a copy
    with pytest.raises(ValidationError, match="tangents must be analytic or fd, got 'ad'"):
        options.replace(tangents="ad")
    with pytest.raises(ValidationError, match="rtol must be a positive number, got -1"):
        SolverOptions(rtol=-1)  # made directly: checked all the same
    assert SolverOptions(engine="python").engine is Engine.PYTHON
    assert options == dict(options) and options != {**options, "rtol": 1e-3}
    with pytest.raises(ValidationError, match="output_times must be a non-empty list"):
        options.replace(output_times=[0.1, "x"])
    assert options.replace(output_times=[0.1, 0.2])["output_times"] == (0.1, 0.2)


def test_simulate_takes_none_as_a_default_and_numpy_numbers():
    """None is the default of h_max, error_tol and h_contact; numpy scalars are numbers;
    a key simulate() does not take is a TypeError naming it, not a value error."""
    system = System(load_case(CASE).model)
    result = simulate(system, 0.003, 1e-3, h_max=None, error_tol=None, h_contact=None,
                      rtol=np.float32(1e-8), max_iter=np.int64(20))
    assert result.success
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['coupling'\]"):
        simulate(system, 0.003, 1e-3, coupling="bogus")


@pytest.mark.parametrize(("key", "value", "words"), [
    ("rtol", "small", "must be a positive number, got 'small'"),
    ("atol", math.inf, "must be a positive number, got inf"),
    ("h_contact", -1.0, "must be a positive number, got -1.0"),
    ("max_iter", 0, "must be an integer >= 1, got 0"),
    ("real_time", "yes", "must be true or false, got 'yes'"),
    ("engine", "gpu", "must be auto, compiled or python, got 'gpu'"),
    ("formulation", "index-1", "must be auto, index-3 or stabilized-index-2, got 'index-1'"),
])
def test_a_bad_option_gets_the_same_words_from_a_case_file_and_from_simulate(
        tmp_path, key, value, words):
    text = CASE.read_text()
    path = tmp_path / "bad.toml"
    shown = "inf" if value == math.inf else (repr(value).replace("'", '"')
                                              if isinstance(value, str) else value)
    path.write_text(text.replace("[solver]\n", f"[solver]\n{key} = {shown}\n"))
    with pytest.raises(FlexmbsError) as from_file:
        load_case(path)
    assert f"key '{key}' {words}" in str(from_file.value)
    system = System(load_case(CASE).model)
    with pytest.raises(ValidationError) as from_api:
        simulate(system, 0.01, 1e-3, **{key: value})
    assert f"{key} {words}" in str(from_api.value)
