"""Long runs keep their resources flat (issue 36; docs/results_file.md, "Steps"): a run
keeps its steps per output interval (flexmbs.results.steps, flexmbs.integrators.step_log)
and streaming statistics of its step times, so its memory and its results file grow with
the outputs and not with the steps. Checked here: the results file of the same outputs
taken with 4x the steps has the same datasets and shapes; the traced memory of a run does
not grow with its steps; the summaries equal those of per-step records (property tests);
files of format 1 (per-step datasets) are read into summaries and continued; the step-time
percentile against NumPy's; the servos' integral history and the run's warning record
stay bounded."""

from __future__ import annotations

import gc
import math
import tracemalloc
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case, run_case
from flexmbs.cases.run import case_system
from flexmbs.errors import ReadError
from flexmbs.integrators import simulate
from flexmbs.integrators.health import KEPT, NumericalWarnings
from flexmbs.integrators.real_time import BINS_PER_DECADE, StepTimes
from flexmbs.integrators.step_log import StepLog
from flexmbs.post import plots
from flexmbs.results import SimulationResult
from flexmbs.results.steps import STEP_FIELDS, StepSummary

ROOT = Path(__file__).resolve().parents[1]
PENDULUM = ROOT / "cases" / "seed_pendulum.toml"
FORMAT1 = ROOT / "tests" / "data" / "format1_pendulum_interrupted.res.h5"


def _shapes(path) -> dict:
    """{dataset path: shape} of an HDF5 file."""
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.setdefault(name, obj.shape)
                     if isinstance(obj, h5py.Dataset) else None)
    return out


def test_the_results_file_does_not_grow_with_the_steps(tmp_path):
    """The seed pendulum over 2 s with 21 outputs, at h = 1 ms (2000 steps) and at
    h = 0.25 ms (8000 steps): the same datasets of the same shapes, and file sizes within
    512 bytes (the case text and settings differ by a few digits). Per-step records
    (two 8-byte numbers per step) would differ by 96 kB."""
    sizes, shapes, steps = [], [], []
    for h, every in ((1e-3, 100), (2.5e-4, 400)):
        _, res = run_case(load_case(PENDULUM, {"solver.h": h, "solver.output_every": every}))
        assert res.success and len(res.t) == 21
        path = tmp_path / f"h{every}.res.h5"
        res.save(path)
        sizes.append(path.stat().st_size)
        shapes.append(_shapes(path))
        steps.append(res.statistics["steps"])
    assert steps == [2000, 8000]
    assert shapes[0] == shapes[1]
    assert all(n_steps not in shape for shape in shapes[1].values() for n_steps in steps)
    assert abs(sizes[0] - sizes[1]) < 512, sizes


def _traced_peak(system, steps: int, **options) -> int:
    """tracemalloc's peak [bytes] above its start over one run of ``steps`` steps with 21
    outputs."""
    gc.collect()  # the previous runs' cycles freed before, not during, this one
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        res = simulate(system, steps * 1e-3, 1e-3, rho_inf=1.0, output_every=steps // 20,
                       **options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.success and res.statistics["steps"] == steps and len(res.t) == 21
    return peak - base


@pytest.mark.parametrize("real_time", [False, True])
def test_the_traced_memory_of_a_run_does_not_grow_with_its_steps(real_time):
    """The seed pendulum with 21 outputs, 4000 and 20 000 steps (after two short runs
    with 21 outputs, which load the kernels and fill the caches once): the same peak of
    traced memory to within 32 kB. The 16 000 extra steps would add 128 kB for the
    smallest per-step record there is (one 8-byte list slot per step), and added 1.2 MB
    with the per-step lists this replaced (t, h, iterations: ~72 bytes per step; and the
    real-time step times, 8 bytes per step); measured difference: 0."""
    system = case_system(load_case(PENDULUM))
    for _ in range(2):  # kernels loaded, caches filled (150 kB more in the second run)
        _traced_peak(system, 1000, real_time=real_time)
    short = _traced_peak(system, 4000, real_time=real_time)
    long = _traced_peak(system, 20_000, real_time=real_time)
    assert abs(long - short) < 32_000, (short, long)


# ------------------------------------------------------------------ the summaries
steps_and_outputs = st.lists(
    st.tuples(st.floats(1e-4, 1e-2), st.integers(1, 12), st.integers(0, 3),
              st.booleans()), min_size=0, max_size=60)


@settings(max_examples=60, deadline=None)
@given(schedule=steps_and_outputs)
def test_the_streaming_record_equals_the_summary_of_per_step_records(schedule):
    """Steps (h, iterations) with outputs after some of them, through StepLog as a run
    feeds it, against StepSummary.from_steps of the per-step records (the reading of
    format 1 files): equal rows (the sums to round-off), and the same open interval."""
    log, t, hs, its = StepLog(), [0.0], [], []
    log.close()  # the initial output
    now = 0.0
    for h, iters, _, output in schedule:
        log.add(h, iters)
        now += h
        hs.append(h)
        its.append(iters)
        if output:
            log.close()
            t.append(now)
    got = log.summary()
    want, open_ = StepSummary.from_steps(t, hs, its)
    for name in STEP_FIELDS:
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-12,
                                   atol=0, equal_nan=True, err_msg=name)
    interval = log.open_interval()
    assert interval["count"] == open_["count"] and interval["h_min"] == open_["h_min"]
    assert interval["iterations"] == open_["iterations"]
    assert log.steps == len(hs) and log.iterations == sum(its)
    # merged windows of rows: the summary over every window-th output time
    window = 3
    merged = got.coarsened(window)
    ends = np.minimum(np.arange(window - 1, len(t) + window - 1, window), len(t) - 1)
    coarse, _ = StepSummary.from_steps(np.concatenate([[t[0]], np.asarray(t)[ends]]),
                                       hs, its)
    for name in ("count", "h_min", "h_max", "h_mean", "iterations", "iterations_max"):
        # (row 0, the initial output without steps, joins the first window)
        np.testing.assert_allclose(getattr(merged, name), getattr(coarse, name)[1:],
                                   rtol=1e-12, atol=0,
                                   equal_nan=True, err_msg=name)


def test_a_format1_file_is_read_into_summaries_and_continued():
    """The committed file of format 1 (per-step /h and /iterations; tests/data/README.md:
    the pendulum with variable steps, interrupted 6 steps after its 8th output) gives the
    rows and open interval of the same run made now, and continues to the uninterrupted
    run (same steps and iterations; the states to round-off).

    The file was written on another CPU: the NumPy path's LAPACK solves round as the
    CPU's OpenBLAS kernels do (its SkylakeX kernels reproduce the file bit for bit, the
    Zen, Haswell and generic ones differ by 1e-13 of the step sizes up to the file's end,
    and the continuation's by 5e-12: the error control sets them from differences of
    accelerations), so the step sizes are compared to 1e-10, the states to 1e-12 (1.4e-15
    measured), the counts exactly."""
    old = SimulationResult.load(FORMAT1)
    with h5py.File(FORMAT1, "r") as f:
        assert int(f.attrs["format_version"]) == 1 and "h" in f and "steps" not in f
        per_step = f["h"][()]
    assert len(old.steps) == len(old.t) == 8 and old.steps.total == per_step.size - 6
    assert old.checkpoint["interval"]["count"] == 6
    case = load_case(PENDULUM, {"solver.t_end": 0.6, "solver.output_every": 7,
                                "solver.error_tol": 1e-6, "solver.h": 0.01})
    _, full = run_case(case, engine="python")
    n = len(old.t)
    assert np.nanmax(full.steps.h_max) > 2 * np.nanmin(full.steps.h_min)  # h varied
    def same_steps(got, want):
        for name in STEP_FIELDS:
            np.testing.assert_allclose(getattr(got, name), want[name], err_msg=name,
                                       rtol=1e-10 if name.startswith("h_") else 0, atol=0)

    same_steps(old.steps, {name: getattr(full.steps, name)[:n] for name in STEP_FIELDS})
    _, cont = run_case(case, engine="python", restart=old)
    assert cont.status == "completed"
    same_steps(cont.steps, {name: getattr(full.steps, name) for name in STEP_FIELDS})
    assert cont.statistics["steps"] == full.statistics["steps"]
    assert cont.statistics["newton_iterations"] == full.statistics["newton_iterations"]
    np.testing.assert_allclose(cont.q, full.q, rtol=0, atol=1e-12)
    fig = plots.step_size(old)  # the step plot of an old file
    assert len(fig.axes[1].get_lines()[0].get_xdata()) == 7


def test_a_results_file_written_now_holds_the_steps_per_output(tmp_path):
    _, res = run_case(load_case(PENDULUM, {"solver.t_end": 0.1, "solver.output_every": 30}))
    path = tmp_path / "p.res.h5"
    res.save(path)
    with h5py.File(path, "r") as f:
        assert int(f.attrs["format_version"]) == 2 and "h" not in f
        assert {k: f["steps"][k].shape for k in f["steps"]} == {
            k: (len(res.t),) for k in STEP_FIELDS}
        assert {k: f["steps"][k].attrs["units"] for k in f["steps"]} == {
            k: units for k, (units, _) in STEP_FIELDS.items()}
    back = SimulationResult.load(path)
    assert list(back.steps.count) == [0, 30, 30, 30, 10]
    assert back.checkpoint["interval"]["count"] == 0  # the last step was an output
    with pytest.raises(AttributeError, match=r"result\.steps"):
        back.h  # noqa: B018
    with h5py.File(path, "a") as f:  # a damaged count is refused by name
        f["steps/count"][2] = -1
        del f.attrs["checksum"]  # (as a file written by another tool)
    with pytest.raises(ReadError, match=r"p\.res\.h5: dataset 'steps/count' holds -1"):
        SimulationResult.load(path)


# ------------------------------------------------------------------ step times
@settings(max_examples=50, deadline=None)
@given(times=st.lists(st.floats(1e-6, 10.0), min_size=1, max_size=400))
def test_the_step_time_percentile_is_within_one_bin_of_the_exact_one(times):
    """The histogram's 99th percentile is never below the exact order statistic
    (NumPy's inverted-CDF percentile) and above it by less than one bin."""
    clock = StepTimes(h=1e-3)
    for x in times:
        clock.add(x)
    exact = float(np.percentile(times, 99, method="inverted_cdf"))
    got = clock.percentile(99.0)
    ratio = 10.0 ** (1.0 / BINS_PER_DECADE)
    assert exact * (1 - 1e-12) <= got <= exact * ratio * (1 + 1e-12)
    assert clock.max == max(times) and clock.count == len(times)
    assert clock.overruns == sum(x > 1e-3 for x in times)
    assert math.isclose(clock.total, math.fsum(times), rel_tol=1e-9)


# ------------------------------------------------------------------ other records
def test_the_servo_integral_history_is_kept_per_output():
    """A PI servo (sampled integral, one value per step) with outputs every 25 steps:
    its history keeps about one value per output, and the servo torque at the outputs
    equals that of the run with an output at every step (the values read there kept)."""
    from test_servos import servo_link

    from flexmbs.model.drives import Constant

    def run(every):
        system = servo_link(Constant(0.3), kp=200.0, kd=5.0, ki=400.0)
        res = simulate(system, 0.5, 1e-3, output_every=every)
        servo = next(f for f in system.model.forces
                     if getattr(f, "element_kind", "") == "joint_servo")
        return res, len(servo._history.times)

    every, kept_every = run(1)
    sparse, kept_sparse = run(25)
    assert every.success and sparse.success and len(sparse.t) == 21
    assert kept_every >= 500 and kept_sparse <= len(sparse.t) + 2
    np.testing.assert_array_equal(sparse.sensor("torque"), every.sensor("torque")[::25])


def test_a_controllers_input_signal_is_kept_per_output():
    """A PD controller sampled at every step (period = h) on the arm's shoulder torque,
    outputs every 25 steps: the input signal keeps a few intervals per output, not one
    per sample, and reads at the outputs what the run with an output at every step (all
    intervals kept) reads; the motion is the same."""
    from flexmbs.assembly import System
    from flexmbs.cosim import Controller
    from flexmbs.cosim.inputs import bind_inputs

    def law(t, measured):
        return {"tau": 20.0 * (1.0 - measured["shoulder"]) - 2.0 * measured["shoulder_rate"]}

    def run(every):
        case = load_case(ROOT / "cases" / "arm_beam_pd.toml")
        ctrl = Controller("pd", law, ["shoulder", "shoulder_rate"],
                          {"tau": "forces.tau1.value"}, 1e-3)
        model, signals = bind_inputs(case.model, ctrl.targets)
        res = simulate(System(model), 0.1, 1e-3, "newmark", output_every=every,
                       controllers=[ctrl], signals=signals)
        return res, signals["pd.tau"]

    every, all_kept = run(1)
    sparse, thinned = run(25)
    assert every.success and sparse.success and len(sparse.t) == 5
    assert len(all_kept._t1) >= 100 and len(thinned._t1) <= 3 * len(sparse.t) + 2
    np.testing.assert_array_equal([thinned.value_at(t) for t in sparse.t],
                                  [all_kept.value_at(t) for t in sparse.t])
    np.testing.assert_array_equal(sparse.sensor("shoulder"), every.sensor("shoulder")[::25])
    np.testing.assert_array_equal(sparse.kinetic, every.kinetic[::25])


def test_the_warning_record_of_a_run_is_bounded():
    """A floating-point warning whose text differs at every step (as scipy's LinAlgWarning
    with its rcond) and another warning at every step: the record keeps KEPT kinds and
    KEPT warnings to pass on, and counts them all."""
    numerical = NumericalWarnings()
    with warnings.catch_warnings(record=True) as passed:
        warnings.simplefilter("always")
        with numerical:
            for k in range(3 * KEPT):
                warnings.warn(f"ill-conditioned matrix (rcond={k}e-17)", RuntimeWarning,
                              stacklevel=1)
                warnings.warn(f"a note at step {k}", UserWarning, stacklevel=1)
                numerical.collect(float(k))
    assert numerical.count == 3 * KEPT
    assert len(numerical.kinds) == KEPT + 1 and numerical.kinds["other"] == 2 * KEPT
    texts = [str(w.message) for w in passed]
    assert len(texts) == KEPT + 1 and f"{2 * KEPT} further warning(s)" in texts[-1]


@settings(max_examples=80, deadline=None)
@given(before=st.lists(st.tuples(st.sampled_from([1e-3, 5e-4]), st.integers(1, 6)),
                       max_size=3),
       rejected=st.integers(0, 2), closed=st.lists(st.integers(1, 8), max_size=6))
def test_steps_closed_at_once_equal_steps_closed_one_by_one(before, rejected, closed):
    """StepLog.add_closed (a batch whose every step is an output) against add + close
    per step, from any open interval: steps of a restart point and rejections before the
    batch go into its first output's row."""
    bulk, single = StepLog(), StepLog()
    for log in (bulk, single):
        for h, iterations in before:
            log.add(h, iterations)
        for _ in range(rejected):
            log.reject()
    bulk.add_closed(1e-3, closed)
    for iterations in closed:
        single.add(1e-3, iterations)
        single.close()
    assert bulk.summary().rows() == single.summary().rows()
    for name in ("steps", "iterations", "last_iterations", "count", "rejected"):
        assert getattr(bulk, name) == getattr(single, name), name
    assert bulk.open_interval() == single.open_interval()
