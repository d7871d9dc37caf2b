"""Output quantities evaluated on a second thread while the steps run
(flexmbs.engine.concurrent_outputs, docs/compiled.md "Outputs during the run"): the
energies, power and violations are those of the evaluation after the run, bit for bit,
whichever blocks the worker took, and a block that fails there is evaluated again."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case, run_case
from flexmbs.engine import concurrent_outputs, prebuilt
from flexmbs.engine.compiled_system import CompiledSystem

CASES = Path(__file__).resolve().parents[1] / "cases"
#: Cases whose every output can be evaluated during the run (no callables): rigid,
#: flexible, contacts, rotational springs and servos (their turns with each block).
TAKEN = ("slider_crank_ideal", "spin_up_beam", "beam_stop", "seed_double_pendulum",
         "arm_vertical_pd", "robot_arm")
QUANTITIES = ("kinetic", "potential", "nonconservative_work", "phi_violation",
              "velocity_violation")

needs_worker = pytest.mark.skipif(
    prebuilt.find()[0] is None or concurrent_outputs._usable_cpus() < 2,
    reason="the worker runs with the prebuilt kernel on two or more CPUs")


def _run(name, concurrent: bool, monkeypatch, steps: int = 400, saving: float = 0.0):
    """A short run of a shipped case; ``saving``: MIN_SAVING (default 0: the worker is
    used whatever the outputs cost)."""
    monkeypatch.setenv(concurrent_outputs.ENV, "1" if concurrent else "0")
    monkeypatch.setattr(concurrent_outputs, "MIN_SAVING", saving)
    case = load_case(CASES / f"{name}.toml")
    case.solver = case.solver.replace(t_end=steps * float(case.solver["h"]))
    return run_case(case, engine="compiled")[1]


@needs_worker
@pytest.mark.parametrize("name", TAKEN)
def test_outputs_during_the_run_are_those_after_it_bit_for_bit(name, monkeypatch):
    after = _run(name, False, monkeypatch)
    during = _run(name, True, monkeypatch)
    assert after.statistics["outputs_during_run"] == 0
    taken = during.statistics["outputs_during_run"]
    assert 0.5 * len(during.t) < taken < len(during.t)  # the batches', not the first
    for key in ("t", "q", *QUANTITIES):
        np.testing.assert_array_equal(getattr(during, key), getattr(after, key),
                                      err_msg=key)
    assert during.status == after.status


@needs_worker
def test_a_block_that_fails_on_the_worker_is_evaluated_after_the_run(monkeypatch):
    calls = []
    real = CompiledSystem.outputs_with

    def flaky(self, kernel, buffers, q, *args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            calls.append(len(q))
            if len(calls) % 2:  # every other job fails on the worker
                raise RuntimeError("a block that failed")
        return real(self, kernel, buffers, q, *args, **kwargs)

    after = _run("slider_crank_ideal", False, monkeypatch)
    monkeypatch.setattr(concurrent_outputs, "CHUNK", 32)  # several jobs
    monkeypatch.setattr(CompiledSystem, "outputs_with", flaky)
    during = _run("slider_crank_ideal", True, monkeypatch)
    assert len(calls) >= 3
    assert 0 < during.statistics["outputs_during_run"] < len(during.t) - 1
    for key in QUANTITIES:
        np.testing.assert_array_equal(getattr(during, key), getattr(after, key),
                                      err_msg=key)


def test_models_whose_outputs_read_the_run_stay_after_it(monkeypatch):
    """The NumPy path and the switch off leave every output to the evaluation after
    the run."""
    monkeypatch.setenv(concurrent_outputs.ENV, "1")
    for name, engine in (("slider_crank_ideal", "python"),):
        case = load_case(CASES / f"{name}.toml")
        case.solver = case.solver.replace(t_end=50 * float(case.solver["h"]))
        result = run_case(case, engine=engine)[1]
        assert result.statistics.get("outputs_during_run", 0) == 0, name


@needs_worker
def test_cheap_outputs_stop_the_worker_after_its_first_job(monkeypatch):
    """Outputs worth less than MIN_SAVING in all: the first job (timed on the worker) is
    kept, the jobs handed over once its time is known are not, and the rest is left to
    the evaluation after the run (the same values). The first job is the first batch's
    599 outputs (about 1 ms of the worker's), done long before the next 300 steps end."""
    from flexmbs.integrators.step_batch import BATCH

    after = _run("slider_crank_ideal", False, monkeypatch, steps=1200)
    during = _run("slider_crank_ideal", True, monkeypatch, steps=1200,
                  saving=1e3)  # never worth a worker
    taken = during.statistics["outputs_during_run"]
    assert 0 < taken <= len(during.t) - BATCH  # (at least the last batch after the run)
    for key in QUANTITIES:
        np.testing.assert_array_equal(getattr(during, key), getattr(after, key),
                                      err_msg=key)


@needs_worker
def test_outputs_on_the_main_thread_count_as_output_time_not_stepping(monkeypatch):
    """The hand-over of the outputs to the worker runs on the main thread between two
    batches: its time goes to ``output_time``. A hand-over made to last 0.3 s shows
    where it went (an accounting check: the stepping of 1200 steps of this case takes a
    few tens of ms)."""
    import time as clock

    real = concurrent_outputs.ConcurrentOutputs._flush
    slept = []

    def slow(self):
        if not slept and self._pending:
            assert threading.current_thread() is threading.main_thread()
            clock.sleep(0.3)
            slept.append(1)
        return real(self)

    monkeypatch.setattr(concurrent_outputs.ConcurrentOutputs, "_flush", slow)
    for steps in (1200, 200):  # (200: fewer outputs than a job, handed over at the end)
        slept.clear()
        result = _run("slider_crank_ideal", True, monkeypatch, steps=steps, saving=0.0)
        stats = result.statistics
        assert slept == [1] and stats["outputs_during_run"] > 0, steps
        assert stats["output_time"] >= 0.3, steps
        assert 0.0 < stats["stepping_time"] < result.wall_time - 0.3, steps


@needs_worker
@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_process_starts_its_own_worker(monkeypatch):
    """After the parent's worker has run, a forked child's runs still finish (fork
    copies only the calling thread: the child starts a worker of its own)."""
    import multiprocessing

    _run("slider_crank_ideal", True, monkeypatch)  # the parent's worker is running
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        taken = pool.apply_async(_child_run).get(timeout=60)
    assert taken > 0


def _child_run() -> int:
    case = load_case(CASES / "slider_crank_ideal.toml")
    case.solver = case.solver.replace(t_end=400 * float(case.solver["h"]))
    return run_case(case, engine="compiled")[1].statistics["outputs_during_run"]


@needs_worker
def test_a_worker_that_takes_no_more_work_leaves_the_outputs_to_after_the_run(
        monkeypatch):
    """At interpreter exit the worker refuses new jobs (RuntimeError): the run goes on
    and evaluates every output after the steps, as without a worker."""
    from concurrent.futures import ThreadPoolExecutor

    closed = ThreadPoolExecutor(1)
    closed.shutdown()
    after = _run("slider_crank_ideal", False, monkeypatch)
    monkeypatch.setattr(concurrent_outputs, "_worker", lambda: closed)
    during = _run("slider_crank_ideal", True, monkeypatch)
    assert during.status == after.status
    assert during.statistics["outputs_during_run"] == 0
    for key in QUANTITIES:
        np.testing.assert_array_equal(getattr(during, key), getattr(after, key),
                                      err_msg=key)


@needs_worker
def test_an_interrupt_while_a_batch_is_recorded_keeps_the_run(monkeypatch):
    """Ctrl-C arriving while a batch's outputs are recorded: the run ends interrupted
    with the outputs so far and their energies, as without a worker."""
    from flexmbs.integrators.recorder import Recording

    real = Recording.add_states

    def interrupted(self, *args):
        if self._count > 150:
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(Recording, "add_states", interrupted)
    monkeypatch.setattr(concurrent_outputs, "CHUNK", 16)
    results = [_run("slider_crank_ideal", flag, monkeypatch) for flag in (False, True)]
    for result in results:
        assert result.status == "interrupted" and not result.success
    assert len(results[1].t) == len(results[0].t)
    for key in QUANTITIES:
        np.testing.assert_array_equal(getattr(results[1], key), getattr(results[0], key),
                                      err_msg=key)


WOUND = """
[[bodies]]
name = "rod"
type = "rigid"
mass = 1.0
inertia = [1e-3, 1e-2, 1e-2]
com = [0.2, 0.0, 0.0]
[[markers]]
body = "ground"
name = "O"
[[markers]]
body = "rod"
name = "O"
[[joints]]
name = "hinge"
type = "revolute"
i = "ground.O"
j = "rod.O"
[[forces]]
name = "spring"
type = "rotational-spring-damper"
i = "ground.O"
j = "rod.O"
stiffness = 0.05
damping = 0.0
[[forces]]
name = "drive"
type = "joint-torque"
i = "ground.O"
j = "rod.O"
value = 20.0
[solver]
h = 1e-3
t_end = 1.5
"""


@needs_worker
def test_a_spring_wound_many_turns_has_the_same_energies_during_the_run(tmp_path,
                                                                           monkeypatch):
    """A rod driven round 8.9 turns against a rotational spring: the spring's potential
    at each output needs its turns (a reference off by more than π picks another turn),
    and the worker's references give the evaluation after the run's values bit for bit."""
    path = tmp_path / "wound.toml"
    path.write_text(WOUND)
    monkeypatch.setattr(concurrent_outputs, "MIN_SAVING", 0.0)
    monkeypatch.setattr(concurrent_outputs, "CHUNK", 64)
    results = {}
    for flag in ("0", "1"):
        monkeypatch.setenv(concurrent_outputs.ENV, flag)
        results[flag] = run_case(load_case(path), engine="compiled")[1]
    after, during = results["0"], results["1"]
    assert during.statistics["outputs_during_run"] > 0.9 * len(during.t)
    turns = np.sqrt(2 * during.potential.max() / 0.05) / (2 * np.pi)
    assert turns > 8
    for key in ("t", "q", *QUANTITIES):
        np.testing.assert_array_equal(getattr(during, key), getattr(after, key),
                                      err_msg=key)


def _logged(before, rows, names, wanted):
    """(the memory after each step as dictionaries, from an AngleLog's columns, and the
    references) of :func:`batch_angles` on a batch logged after one output before it."""
    from flexmbs.integrators.output_angles import AngleLog, batch_angles

    log = AngleLog()
    log.add({"z": 9.0})  # an output before the batch (the per-step path's)
    filled, present, refs = batch_angles(before, rows, names, wanted)
    log.add_batch(before, names, filled, present)
    assert len(log) == len(rows) + 1
    keys = sorted({*names, *before, "z"})
    columns = {key: log.column(key) for key in keys}
    assert columns["z"][0] == 9.0 and all(np.isnan(columns[k][0]) for k in keys if k != "z")
    snaps = [{key: float(columns[key][k + 1]) for key in keys
              if not np.isnan(columns[key][k + 1])} for k in range(len(rows))]
    return snaps, refs


def test_angle_snapshots_keep_the_memory_as_the_steps_leave_it():
    """The memory after each step of a batch: a step's angle replaces the name's, NaN
    (no angle from that step) keeps the one before; the references give the memory of
    the names read after the run, NaN for the others, and None where one is missing."""
    nan = float("nan")
    rows = [[1.0, nan], [nan, 5.0], [3.0, 6.0]]
    snaps, refs = _logged({"a": 0.5, "b": 4.0}, rows, ["a", "b"], {"a", "b"})
    assert snaps == [{"a": 1.0, "b": 4.0}, {"a": 1.0, "b": 5.0}, {"a": 3.0, "b": 6.0}]
    np.testing.assert_array_equal(refs, [[1.0, 4.0], [1.0, 5.0], [3.0, 6.0]])
    snaps, refs = _logged({}, rows, ["a", "b"], {"a"})
    assert snaps[0] == {"a": 1.0}
    assert np.all(np.isnan(refs[:, 1]))
    np.testing.assert_array_equal(refs[:, 0], [1.0, 1.0, 3.0])
    assert _logged({}, rows, ["a", "b"], {"b"})[1] is None  # b: none at step 1


def _snapshots_step_by_step(before, rows, names, wanted):
    """The memory after each step, kept one step and one name at a time."""
    memory, snaps = dict(before), []
    refs = np.full((len(rows), len(names)), np.nan)
    for k, row in enumerate(rows):
        for name, angle in zip(names, row, strict=True):
            if angle == angle:
                memory[name] = angle
        snaps.append(dict(memory))
        for i, name in enumerate(names):
            if name in wanted:
                refs[k, i] = memory.get(name, np.nan)
    return snaps, refs


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(0, 12), st.data())
def test_angle_snapshots_are_the_step_by_step_memory(width, count, data):
    """Any batch: the snapshots and references are those of keeping the memory one step
    and one name at a time (random NaNs, names absent from the memory before, other
    names in it, any wanted subset)."""
    names = [f"s{i}" for i in range(width)]
    angle = st.one_of(st.just(float("nan")), st.floats(-10, 10))
    rows = data.draw(st.lists(st.lists(angle, min_size=width, max_size=width),
                              min_size=count, max_size=count))
    before = {name: data.draw(st.floats(-3, 3)) for name in names
              if data.draw(st.booleans())}
    before["other"] = 1.5
    wanted = {name for name in names if data.draw(st.booleans())}
    snaps, refs = _logged(before, rows, names, wanted)
    expected, expected_refs = _snapshots_step_by_step(before, rows, names, wanted)
    assert snaps == expected
    columns = [i for i, name in enumerate(names) if name in wanted]
    if np.all(np.isfinite(expected_refs[:, columns])):
        np.testing.assert_array_equal(refs[:, columns], expected_refs[:, columns])
    else:
        assert refs is None


@needs_worker
def test_the_jobs_shrink_towards_the_runs_end(monkeypatch):
    """Near the end a job goes as soon as it holds as many outputs as the run still
    expects after it, so the one handed over when the steps end is small (the main
    thread would wait for it): at most the last batch's outputs, far below CHUNK, and
    the values are still those of the evaluation after the run. (The first jobs are a
    batch's outputs, which may exceed CHUNK.)"""
    sizes = []
    real = concurrent_outputs.ConcurrentOutputs._flush

    def flush(self):
        sizes.append(self._n_pending)
        return real(self)

    after = _run("arm_beam_seed", False, monkeypatch, steps=1500)
    monkeypatch.setattr(concurrent_outputs.ConcurrentOutputs, "_flush", flush)
    during = _run("arm_beam_seed", True, monkeypatch, steps=1500)
    chunk = concurrent_outputs.CHUNK
    assert sizes[0] >= chunk and sizes[-1] == min(sizes), sizes
    # the last, at steps_done: under 64 (2 TAIL_FROM; without the rule the batches' own
    # halving leaves 99 here: [712, 393, 295, 99])
    assert sizes[-1] < 64 < chunk // 2 < sizes[0], sizes
    # every output but the initial state's (before the batches: every step is a
    # batch's, the last one too)
    assert during.statistics["outputs_during_run"] == len(during.t) - 1
    for key in QUANTITIES:
        np.testing.assert_array_equal(getattr(during, key), getattr(after, key),
                                      err_msg=key)
