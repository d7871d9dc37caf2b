"""Real-time mode (docs/integrators.md, "Real-time mode"): a fixed step, a fixed number
of Newton iterations, the iteration matrix rebuilt once per step or frozen, no step
halving, and the step times a hardware-in-the-loop user needs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.assembly import System
from flexmbs.cases import load_case, run_case
from flexmbs.cases.case import CaseError
from flexmbs.cli.main import main as cli_main
from flexmbs.errors import ValidationError
from flexmbs.integrators import simulate
from flexmbs.integrators.alpha import generalized_alpha
from flexmbs.integrators.stepper import AlphaIntegrator
from flexmbs.model import ModelBuilder
from flexmbs.results.histories import revolute_angles

ARM = "cases/arm_beam_seed.toml"
ROOT = Path(__file__).resolve().parents[1]


def _arm(**solver):
    case = load_case(ARM)
    case.solver = case.solver.replace(**solver)
    return run_case(case)


def test_the_seed_arm_in_real_time_stays_within_1e_3_rad_of_the_converged_run():
    """Two Newton iterations per step with a fresh matrix, against the run with converged
    Newton (the accuracy check of the docs): every joint angle within 1e-3 rad over the
    2 s (measured: 1.5e-6 rad)."""
    system, fast = _arm(real_time=True)
    _, ref = _arm(newton="converged")
    assert fast.success and fast.statistics["engine"] == "compiled"
    st = fast.statistics
    assert st["real_time"] and st["real_time_iterations"] == 2
    assert st["real_time_matrix"] == "per-step"
    assert st["factorizations"] == st["steps"] == 2000  # one matrix per step
    steps = fast.steps
    assert np.nanmin(steps.h_min) == np.nanmax(steps.h_max) == 1e-3  # a fixed step
    assert steps.total == 2000 and np.all(steps.iterations_max <= 2)
    assert 0 < st["step_time_p99_s"] <= st["step_time_max_s"]
    assert isinstance(st["overruns"], int) and 0 <= st["overruns"] <= st["steps"]
    assert 0 <= st["bounded_steps"] <= st["steps"]
    angles, reference = revolute_angles(system, fast), revolute_angles(system, ref)
    worst = max(np.abs(angles[j] - reference[j]).max() for j in angles)
    assert worst < 1e-3


def pendulum(amplitude=0.05):
    """A 1 kg point pendulum on a 0.5 m rod swinging 0.05 rad: small motion."""
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_rigid_body("bob", 1.0, [1e-4, 1e-4, 1e-4],
                     position=(0.5 * np.sin(amplitude), -0.5 * np.cos(amplitude), 0.0))
    b.add_marker("ground", "O")
    b.add_marker("bob", "pin", position=(0.0, 0.0, 0.0), frame="global")
    b.add_revolute("pin", "ground.O", "bob.pin")
    return System(b.finalize())


def test_a_frozen_matrix_is_built_once_and_the_states_alternate_between_two_buffers():
    """With the matrix frozen: one factorization for the whole run, the period of the
    small swing 2π√(L/g) within 1 %, and each step writes into the other of two
    preallocated state sets (no arrays per step)."""
    system = pendulum()
    res = simulate(system, 2.0, 1e-3, real_time=True, real_time_matrix="frozen",
                   real_time_iterations=3)
    assert res.success and res.statistics["factorizations"] == 1
    x = res.q[:, 0]
    k = np.flatnonzero(np.sign(x[:-1]) != np.sign(x[1:]))  # zero crossings, interpolated
    crossings = res.t[k] - x[k] * (res.t[k + 1] - res.t[k]) / (x[k + 1] - x[k])
    period = 2 * np.diff(crossings).mean()
    assert period == pytest.approx(2 * np.pi * np.sqrt(0.5 / 9.81), rel=1e-2)
    integ = AlphaIntegrator(pendulum(), generalized_alpha(0.8), 1e-3, real_time=True)
    seen = set()
    for _ in range(4):
        assert integ.step()[0]
        seen.add(id(integ.q))
        assert any(integ.q is buf[0] for buf in integ._rt_buffers.sets)
    assert len(seen) == 2


def test_real_time_refuses_what_it_cannot_bound():
    system = pendulum()
    with pytest.raises(ValidationError, match="error_tol does not apply"):
        simulate(system, 0.1, 1e-3, real_time=True, error_tol=1e-4)
    with pytest.raises(ValidationError, match="needs the compiled engine"):
        simulate(system, 0.1, 1e-3, real_time=True, engine="python")
    with pytest.raises(ValidationError,
                       match=r"real_time_matrix must be frozen or per-step, got 'sometimes'"):
        simulate(system, 0.1, 1e-3, real_time=True, real_time_matrix="sometimes")
    with pytest.raises(ValidationError, match="real_time_iterations"):
        simulate(system, 0.1, 1e-3, real_time=True, real_time_iterations=0)


def test_a_real_time_step_that_fails_is_not_halved():
    """A frozen matrix on the arm's large motion diverges; the run stops there, never
    halving the step, and keeps what it computed."""
    _, res = _arm(real_time=True, real_time_matrix="frozen", t_end=1.0)
    assert not res.success and "no step halving" in res.message
    assert np.nanmin(res.steps.h_min) == np.nanmax(res.steps.h_max) == 1e-3


def test_case_files_and_the_command_line_take_it(tmp_path, capsys):
    out = tmp_path / "arm.res.h5"
    assert cli_main(["run", "--json", ARM, "-o", str(out), "--real-time",
                     "--set", "solver.t_end=0.05"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["statistics"]["real_time"] is True
    assert summary["statistics"]["step_time_p99_s"] > 0
    assert cli_main(["run", ARM, "-o", str(out), "--real-time", "--quiet",
                     "--set", "solver.t_end=0.05"]) == 0
    assert "real-time mode (2 Newton iterations, matrix per-step)" in capsys.readouterr().out
    with pytest.raises(CaseError, match=r"real_time_matrix.*frozen or per-step"):
        load_case(ARM, {"solver.real_time_matrix": "never"})
    with pytest.raises(CaseError, match=r"real_time.*true or false"):
        load_case(ARM, {"solver.real_time": "yes"})


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40))
def test_the_kernels_own_lu_factors_solve_like_lapack(seed, n):
    """The real-time step's in-kernel LU (partial pivoting, getrf's form) against
    scipy: same pivots as LAPACK's getrf and the solve of a random system to 1e-10 of
    its condition-scaled size."""
    from scipy.linalg.lapack import dgetrf

    from flexmbs.engine.newton import lu_factor_into, lu_solve

    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) + n * np.eye(n) * rng.uniform(0, 1)
    b = rng.normal(size=n)
    lu, piv = np.empty((n, n)), np.empty(n, dtype=np.int64)
    lu_factor_into(a, lu, piv)
    ref_lu, ref_piv, info = dgetrf(a)
    assert info == 0
    np.testing.assert_array_equal(piv, ref_piv)
    # (stored transposed: each column of L and U a contiguous row)
    np.testing.assert_allclose(lu.T, ref_lu, rtol=0, atol=1e-12 * np.abs(ref_lu).max())
    x = b.copy()
    lu_solve(lu, piv, x)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=0,
                               atol=1e-10 * np.linalg.cond(a) * np.abs(x).max())


def test_real_time_keeps_its_step_through_contacts(tmp_path):
    """A contact's onset is not located in real time (the step stays h, the onset is
    taken where the step ends), and h_contact, a smaller step in contact, is refused.
    Before, steps were cut to 1.25e-7 s near each impact and h_contact still applied."""
    text = (ROOT / "cases" / "ball_drop.toml").read_text()
    with pytest.raises(CaseError, match=r"h_contact = 0.0001 does not apply"):
        run_case(load_case(ROOT / "cases" / "ball_drop.toml", {"solver.real_time": True}))
    path = tmp_path / "ball.toml"
    path.write_text("\n".join(line for line in text.splitlines()
                              if not line.startswith("h_contact")))
    _, result = run_case(load_case(path, {"solver.real_time": True}))
    _, variable = run_case(load_case(path))
    assert result.success and result.statistics["steps"] == 1500
    np.testing.assert_allclose(np.diff(result.t), 1e-3, rtol=1e-9)
    impacts = [c["impacts"] for c in result.contacts.values()]
    assert impacts == [c["impacts"] for c in variable.contacts.values()] and impacts[0] > 0


def test_a_real_time_run_that_blows_up_says_why():
    """A fixed step far too large (the double pendulum at h = 0.15 s): the iterates turn
    non-finite after steps accepted unconverged; the message says so, not "a singular
    iteration matrix?" (the frozen matrix's condition number there is about 70)."""
    _, result = run_case(load_case(ROOT / "cases" / "seed_double_pendulum.toml",
                                   {"solver.real_time": True, "solver.h": 0.15,
                                    "solver.t_end": 20.0}))
    assert not result.success
    assert "in a real-time step (fixed h = 0.15 s, at most 2 iterations;" in result.message
    assert "accepted unconverged so far" in result.message
    assert "singular" not in result.message
