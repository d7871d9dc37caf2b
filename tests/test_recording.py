"""What a run does around its steps: the recording of the outputs (references to the
integrator's arrays, stacked once after the run) and the profiles evaluated over all
output times at once give what the per-output evaluation gave (benchmarks/overhead.py
measures what they cost)."""

from __future__ import annotations

import numpy as np
import pytest

from flexmbs.assembly import System
from flexmbs.engine.compiled_system import CompiledSystem
from flexmbs.errors import ModelError
from flexmbs.integrators import simulate
from flexmbs.integrators.recorder import Recording
from flexmbs.model import Constant, ModelBuilder, Polynomial, SpinUp
from flexmbs.model.drives import Table, UserProfile

TIMES = np.concatenate([np.linspace(-0.5, 3.5, 401), [0.0, 1.0, 2.0, 1.5, 3.0]])


@pytest.mark.parametrize("profile", [
    Constant(2.5), Polynomial((0.1, -2.0, 0.5, 3.0)), SpinUp(6.0, 1.5),
    Table((0.0, 0.5, 1.2, 3.0), (0.0, 1.0, -0.3, 2.0)),
    Table((0.0, 1.0, 2.0), (1.0, 3.0, 1.0), bc_type="periodic"),
    UserProfile(np.sin, np.cos, lambda t: -np.sin(t))])
def test_profiles_over_an_array_are_their_values_one_by_one(profile):
    expected = np.array([profile.eval(float(t)) for t in TIMES])
    assert np.array_equal(profile.eval_many(TIMES), expected)


def pendulum(profile, actuator=None) -> System:
    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_rigid_body("link", 1.0, [0.01, 0.01, 0.01], position=(0.5, 0.0, 0.0))
    b.add_marker("ground", "O", orientation=(0.0, 1.0, 0.0))
    b.add_marker("link", "O", position=(-0.5, 0.0, 0.0), orientation=(0.0, 1.0, 0.0))
    b.add_revolute("pin", "ground.O", "link.O")
    if actuator is not None:
        b.add_joint_actuator("motor", "ground.O", "link.O", actuator)
    if profile is not None:
        b.add_drive("turn", "rotation", profile, marker_i="ground.O", marker_j="link.O")
    return System(b.finalize())


def test_output_profiles_at_once_are_the_values_time_by_time():
    compiled = CompiledSystem(pendulum(SpinUp(3.0, 0.4), Polynomial((1.0, 0.5))))
    prof, u = compiled.time_values_many(TIMES[TIMES >= 0])
    for k, t in enumerate(TIMES[TIMES >= 0]):
        p1, u1 = compiled.time_values(float(t))
        assert np.array_equal(prof[k], p1) and np.array_equal(u[k], u1)


def test_a_profile_failing_at_an_output_names_the_drive():
    def value(t):
        return float("nan") if t > 0.5 else t

    compiled = CompiledSystem(pendulum(UserProfile(value, lambda t: 1.0, lambda t: 0.0)))
    with pytest.raises(ModelError, match="turn"):
        compiled.time_values_many(np.linspace(0.0, 1.0, 11))


def test_recording_stacks_its_outputs():
    rows = np.arange(7 * 3, dtype=float).reshape(7, 3)
    for copy in (False, True):
        rec = Recording(3, 1, copy=copy)
        qs = list(rows)
        for k in range(7):
            rec.add(0.1 * k, qs[k], -rows[k], 2 * rows[k], np.array([k], float))
        assert len(rec) == 7 and rec.newest("t") == pytest.approx(0.6)
        assert (rec.newest("q") is qs[-1]) == (not copy)  # references unless copying
        t, q, qd, qdd, lam = rec.histories()
        assert np.array_equal(q, rows) and np.array_equal(qd, -rows)
        assert np.array_equal(qdd, 2 * rows) and lam.shape == (7, 1)
        rec.extend(t, q, qd, qdd, lam)
        assert np.array_equal(rec.histories()[1], np.vstack([rows, rows]))


def test_recording_keeps_rows_and_blocks_in_their_order():
    """Single outputs and batches' blocks interleaved stack in the order recorded, and
    the newest output's time can be set whichever it was."""
    rng = np.random.default_rng(3)
    rec = Recording(2, 1)
    want = []
    for k, size in enumerate((1, 4, 1, 1, 3, 2)):
        t = np.arange(size, dtype=float) + 10 * k
        q = rng.normal(size=(size, 2))
        lam = rng.normal(size=(size, 1))
        if size == 1 or k == 5:
            for j in range(size):
                rec.add(t[j], q[j], -q[j], 2 * q[j], lam[j])
        else:
            states = np.stack([q, -q, 2 * q], axis=1)  # a batch's (n, 3, n_q) rows
            rec.add_block(list(t), states[:, 0], states[:, 1], states[:, 2], lam)
        want.append((t, q, lam))
    rec.set_newest_time(99.0)
    assert rec.newest("q") is not None and len(rec) == 12
    t, q, qd, qdd, lam = rec.histories()
    t_want = np.concatenate([w[0] for w in want])
    t_want[-1] = 99.0
    np.testing.assert_array_equal(t, t_want)
    np.testing.assert_array_equal(q, np.concatenate([w[1] for w in want]))
    np.testing.assert_array_equal(qd, -q)
    np.testing.assert_array_equal(qdd, 2 * q)
    np.testing.assert_array_equal(lam, np.concatenate([w[2] for w in want]))
    rec.add_block([100.0], q[:1], qd[:1], qdd[:1], lam[:1])
    rec.set_newest_time(101.0)
    assert rec.histories()[0][-1] == 101.0 and rec.newest("t") == 101.0


    empty = Recording(2, 0)
    empty.add(0.0, np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(0))
    assert empty.histories()[4].shape == (1, 0)


def test_a_run_with_adaptive_steps_records_every_output():
    every = simulate(pendulum(None), 0.2, 0.05, error_tol=1e-9)
    # one step per output after the initial one: the step record's rows are the steps
    assert len(every.t) > 5 and list(every.steps.count) == [0] + [1] * (len(every.t) - 1)
    assert every.statistics["steps"] == len(every.t) - 1
    assert np.all(np.diff(every.t) > 0) and every.t[-1] == pytest.approx(0.2)
    np.testing.assert_allclose(every.t[1:], np.cumsum(every.steps.h_mean[1:]), rtol=1e-12)
    assert every.q.shape == (len(every.t), 7) and np.all(np.isfinite(every.kinetic))
