"""Batches of steps in one kernel call (flexmbs.integrators.step_batch,
docs/compiled.md "Batches of steps"): the same steps as the per-step path, the same
bookkeeping, and the per-step path wherever a run needs Python between its steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.assembly import System
from flexmbs.cases import load_case, run_case
from flexmbs.engine.compiled_system import CompiledSystem
from flexmbs.engine.linear_solves import lu_factor_into
from flexmbs.integrators import simulate, step_batch

CASES = Path(__file__).resolve().parents[1] / "cases"


def _run(path, batch: bool, monkeypatch, steps=300, **options):
    monkeypatch.setattr(step_batch, "BATCH", step_batch.BATCH if batch else 0)
    case = load_case(path)
    case.solver = case.solver.replace(t_end=steps * float(case.solver["h"]))
    return run_case(case, engine="compiled", **options)[1]


def _batched_cases():
    out = []
    for path in sorted(CASES.glob("*.toml")):
        case = load_case(path)
        result = simulate(System(case.model), 5 * float(case.solver["h"]),
                          float(case.solver["h"]), case.solver.get("method", "newmark"),
                          engine="compiled")
        if result.statistics["batched_steps"]:
            out.append(path.name)
    return out


BATCHED = _batched_cases()


def test_most_shipped_cases_run_in_batches():
    """The cases without sampled controllers or servos with integral action (rotational
    springs, contacts and PD servos included: the PD-held arm, the clearance joint, the
    ball, the beam stop, the servo-driven robot arms)."""
    assert {"arm_beam_seed.toml", "seed_pendulum.toml", "cantilever_release.toml",
            "slider_crank_ideal.toml", "arm_vertical_pd.toml",
            "slider_crank_clearance.toml", "ball_drop.toml", "beam_stop.toml",
            "robot_arm.toml", "urdf_arm.toml"} <= set(BATCHED)


def test_a_servo_with_integral_action_runs_step_by_step(monkeypatch):
    """A servo with ki > 0 commits its integral after each accepted step in Python: its
    run takes no batch, and the reason says so; the same model without it batches."""
    monkeypatch.setattr(step_batch, "BATCH", step_batch.BATCH)
    case = load_case(CASES / "robot_arm.toml", {"forces.shoulder_drive.ki": 0.5})
    case.solver = case.solver.replace(t_end=50 * float(case.solver["h"]))
    result = run_case(case, engine="compiled")[1]
    assert result.success and result.statistics["batched_steps"] == 0
    reason = CompiledSystem(System(case.model)).batch_reason()
    assert "integral action (ki > 0)" in reason


@pytest.mark.parametrize("name", BATCHED)
@pytest.mark.parametrize("output_every", [1, 7])
def test_batches_take_the_per_step_paths_steps(name, output_every, monkeypatch):
    """Against the per-step path (BATCH = 0): the same steps, Newton iterations and
    factorizations, per output interval too, and the same outputs, q to 1e-12 relative
    (the kernel's factorization rounds otherwise than LAPACK's; contact cases to 1e-10,
    comment below); every step was batched, the last one (landing on t_end) too, but
    for a fifth at most of a contact case's and its last two."""
    new = _run(CASES / name, True, monkeypatch, output_every=output_every)
    ref = _run(CASES / name, False, monkeypatch, output_every=output_every)
    assert ref.statistics["batched_steps"] == 0
    # (a contact's onsets, switches and impulses are per step: the test below)
    assert new.statistics["batched_steps"] >= new.statistics["steps"] - (
        2 + new.statistics["steps"] // 5 if new.contacts else 0)
    for key in ("steps", "newton_iterations", "factorizations", "rejected_steps"):
        assert new.statistics[key] == ref.statistics[key], key
    np.testing.assert_array_equal(new.steps.iterations, ref.steps.iterations)
    np.testing.assert_array_equal(new.steps.count, ref.steps.count)
    # an onset located inside a step is interpolated from the states at its ends, whose
    # last bits follow the factorization, and impacts amplify such differences: the
    # steps' ends and states of a contact case agree to 1e-10 relative
    close = 1e-10 if new.contacts else 0.0
    np.testing.assert_allclose(new.t, ref.t, rtol=0, atol=close * ref.t[-1])
    scale = max(1.0, np.abs(ref.q).max())
    np.testing.assert_allclose(new.q, ref.q, rtol=0, atol=max(close, 1e-12) * scale)
    assert new.status == ref.status and new.message == ref.message
    # the energies after the run take the rotational springs' turns from the angle
    # memory kept with each output
    energy = max(1.0, np.abs(ref.potential).max(), np.abs(ref.kinetic).max())
    for key in ("potential", "kinetic", "nonconservative_work"):
        np.testing.assert_allclose(getattr(new, key), getattr(ref, key), rtol=0,
                                   atol=1e-9 * energy, err_msg=key)


def test_a_divergence_inside_a_batch_stops_where_the_per_step_path_does(monkeypatch):
    """A range limit crossed inside a batch: the run stops at the same check, with the
    same message and the diverged state recorded last, as per step."""
    limits = {"check_every": 3, "deflection_stop": 0.05}
    new = _run(CASES / "arm_beam_seed.toml", True, monkeypatch, steps=1000,
               range_limits=limits)
    ref = _run(CASES / "arm_beam_seed.toml", False, monkeypatch, steps=1000,
               range_limits=limits)
    assert not ref.success and "deflection" in ref.message and ref.t[-1] < 0.99
    assert new.message == ref.message and new.status == ref.status
    np.testing.assert_array_equal(new.t, ref.t)
    np.testing.assert_allclose(new.q, ref.q, rtol=0, atol=1e-12)


def test_a_step_that_fails_in_a_batch_is_taken_again_per_step(monkeypatch):
    """With Newton held to 3 iterations the seed arm's steps fail now and then (it needs
    3.9 on average): each failure ends its batch and the per-step path takes the step
    again with a new iteration matrix, halving it only if that fails too. The run
    completes on the constraints and, taking its steps whole, stays as close to the run
    with the default 12 iterations as Newton's tolerance (3e-9 measured; the per-step
    path, which halves the step its stale matrix failed, lies 4e-6 away)."""
    new = _run(CASES / "arm_beam_seed.toml", True, monkeypatch, steps=400, max_iter=3)
    default = _run(CASES / "arm_beam_seed.toml", False, monkeypatch, steps=400)
    assert new.success
    assert 0 < new.statistics["batched_steps"] < new.statistics["steps"] - 2
    assert np.max(np.abs(new.phi_violation)) < 1e-9
    assert new.t[-1] == default.t[-1]
    assert np.abs(new.q[-1] - default.q[-1]).max() < 1e-7


def test_progress_is_reported_after_each_batch(monkeypatch):
    """progress(t, t_end) after every batch and every single step, at increasing times
    ending at t_end."""
    from flexmbs.integrators.step_batch import StepBatches
    from flexmbs.integrators.stepper import AlphaIntegrator

    seen, calls = [], []
    take, step = StepBatches.take, AlphaIntegrator.step
    monkeypatch.setattr(StepBatches, "take",
                        lambda self, *a: calls.append("batch") or take(self, *a))
    monkeypatch.setattr(AlphaIntegrator, "step",
                        lambda self, *a: calls.append("step") or step(self, *a))
    _run(CASES / "seed_pendulum.toml", True, monkeypatch, steps=200,
         progress=lambda t, t_end: seen.append((t, t_end)))
    times = [t for t, _ in seen]
    assert "batch" in calls and len(seen) == len(calls)
    assert times == sorted(times) and times[-1] == seen[-1][1]


def test_runs_needing_python_between_steps_take_them_one_by_one(monkeypatch):
    """Outputs at given times and adaptive steps: no batch."""
    path = CASES / "seed_pendulum.toml"
    assert _run(path, True, monkeypatch, output_times=[0.05, 0.1]).statistics[
        "batched_steps"] == 0
    assert _run(path, True, monkeypatch, error_tol=1e-3).statistics["batched_steps"] == 0


def _kernel_factors(self, matrix):
    """CompiledSystem.factor with the kernel's own LU (as the batches factor) instead
    of LAPACK's: both paths then round alike."""
    lu, piv = np.empty_like(matrix), np.empty(matrix.shape[0], dtype=np.int64)
    lu_factor_into(matrix, lu, piv)
    return self.placeholder_factors()._replace(lu=lu, piv=piv)


def _whole(name, batch: bool, monkeypatch, **options):
    monkeypatch.setattr(step_batch, "BATCH", step_batch.BATCH if batch else 0)
    monkeypatch.setattr(CompiledSystem, "factor", _kernel_factors)
    return run_case(load_case(CASES / name), engine="compiled", **options)[1]


@pytest.mark.parametrize("name", ["slider_crank_clearance.toml", "ball_drop.toml",
                                  "beam_stop.toml"])
def test_contact_runs_in_batches_take_the_per_step_paths_impacts(name, monkeypatch):
    """The whole contact cases, in batches and per step, both factoring with the
    kernel's LU (LAPACK's rounds otherwise, and the impacts amplify the last bits: the
    clearance joint's located onsets then move by 2e-10 s over its 33 impacts): the same
    steps (h_contact while a contact is closed), Newton iterations, impacts, contact
    records (gap, state, forces, dissipated energy) and states; the batches end at each
    onset, switch and impulse, which the per-step path then handles, and carry most
    steps."""
    new = _whole(name, True, monkeypatch)
    ref = _whole(name, False, monkeypatch)
    assert new.success and ref.success
    assert ref.statistics["batched_steps"] == 0
    assert new.statistics["batched_steps"] > 0.9 * new.statistics["steps"]
    for key in ("steps", "rejected_steps", "newton_iterations", "factorizations"):
        assert new.statistics[key] == ref.statistics[key], key
    np.testing.assert_allclose(new.t, ref.t, rtol=0, atol=1e-14 * ref.t[-1])
    scale = max(1.0, np.abs(ref.q).max())
    np.testing.assert_allclose(new.q, ref.q, rtol=0, atol=1e-12 * scale)
    for contact, record in ref.contacts.items():
        assert new.contacts[contact]["impacts"] == record["impacts"] > 0
        np.testing.assert_array_equal(new.contacts[contact]["state"], record["state"])
        for key in ("gap", "normal_force", "dissipated"):
            peak = max(1e-12, np.abs(record[key]).max())
            np.testing.assert_allclose(new.contacts[contact][key], record[key], rtol=0,
                                       atol=1e-9 * peak, err_msg=f"{contact} {key}")
    energy = max(1.0, np.abs(ref.kinetic).max())
    np.testing.assert_allclose(new.nonconservative_work, ref.nonconservative_work,
                               rtol=0, atol=1e-7 * energy)


@settings(max_examples=300, deadline=None)
@given(step=st.floats(1e-6, 10.0), ratio=st.floats(0.0, 3.0, exclude_min=True),
       t_end=st.floats(0.0, 1e7))
def test_the_last_step_leaves_no_sliver(step, ratio, t_end):
    """last_step gives the step or what is left; what remains after it is none (within
    the time's rounding) or more than STRETCH_LAST of a step, and a step is never
    stretched by more than that."""
    left = ratio * step
    taken = step_batch.last_step(step, left, t_end)
    assert taken in (step, left)
    assert taken <= step * (1 + step_batch.STRETCH_LAST)
    remains = left - taken
    assert remains <= step_batch.time_rounding(t_end) or remains > step_batch.STRETCH_LAST * step


def test_a_long_run_lands_on_t_end_without_a_sliver_step():
    """Times summed step by step from t = 300 s drift 4.7e-10 s behind t0 + k h over
    20 000 steps of 1 ms, more than the time's rounding at 320 s (3.2e-10 s): the run
    took a 20 001st step of 4.7e-10 s and wrote an output row beside the one before.
    Now its last step is stretched by the drift: 20 000 steps, outputs every second."""
    case = load_case(CASES / "seed_pendulum.toml")
    _, result = run_case(case, t0=300.0, t_end=320.0, output_every=1000,
                         engine="compiled")
    assert result.success
    assert result.statistics["steps"] == 20000
    np.testing.assert_allclose(result.t, 300.0 + np.arange(21), rtol=0, atol=1e-8)
    assert result.t[-1] == 320.0


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_a_t_end_just_past_a_whole_step_is_reached_in_one_stretched_step(engine):
    """t_end = 10.0005 ms with h = 1 ms: ten steps, the last 1.0005 ms (a twentieth of a
    thousandth past: within STRETCH_LAST), not ten steps and one of 0.5 µs."""
    case = load_case(CASES / "seed_pendulum.toml")
    _, result = run_case(case, t_end=0.0100005, output_every=1, engine=engine)
    assert result.statistics["steps"] == 10
    np.testing.assert_allclose(np.diff(result.t), [1e-3] * 9 + [1.0005e-3], rtol=1e-9)
    assert result.t[-1] == 0.0100005
