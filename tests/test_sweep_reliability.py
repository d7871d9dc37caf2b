"""Sweeps that survive a lost worker (a killed local process, a killed Dask worker) and
sweeps resumed from the runs an earlier sweep saved (docs/studies.md)."""

from __future__ import annotations

import importlib
import json
import multiprocessing
import os
import signal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from flexmbs.cli.main import main
from flexmbs.errors import ValidationError
from flexmbs.studies import sweep
from flexmbs.studies.resume import _signals_from_json, _signals_json
from flexmbs.studies.signals import RunSignals

# the module (flexmbs.studies.sweep, the attribute, is the function of that name)
sweep_module = importlib.import_module("flexmbs.studies.sweep")
ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "cases" / "seed_pendulum.toml"
FORK = "fork" in multiprocessing.get_all_start_methods()


def _variants(n, t0=0.2, dt=0.05):
    """n runs of the seed pendulum on the Python engine (about 1 s of CPU per simulated
    second), each a different length, so that a sweep lasts long enough to lose a worker
    while runs are still queued or running."""
    return [(f"t_end={t0 + dt * i:.2f}", {"solver.engine": "python",
                                         "solver.t_end": round(t0 + dt * i, 2)})
            for i in range(n)]


def _same(a, b):
    """Records of the same runs: same outcome and bit-identical signals."""
    assert [r.label for r in a] == [r.label for r in b]
    for x, y in zip(a, b, strict=True):
        assert x.success and y.success, (x.message, y.message)
        assert x.steps == y.steps
        np.testing.assert_array_equal(x.signals.t, y.signals.t)
        for joint, angle in x.signals.joint_angles.items():
            np.testing.assert_array_equal(angle, y.signals.joint_angles[joint])
        np.testing.assert_array_equal(x.signals.energy_error, y.signals.energy_error)


@pytest.mark.skipif(not FORK, reason="the test kills a forked pool worker")
def test_sweep_survives_a_killed_local_worker_process(tmp_path):
    variants = _variants(6)
    killed = []

    def kill_one_worker(done, total, label):
        children = multiprocessing.active_children()
        if not killed and children:  # after the first run: the others queued or running
            os.kill(children[0].pid, signal.SIGKILL)
            killed.append(children[0].pid)

    records = sweep(SEED, variants, workers=2, save_dir=tmp_path, progress=kill_one_worker)
    assert killed
    assert sum(r.reruns for r in records) >= 1  # the killed worker's runs were run again
    _same(records, sweep(SEED, variants, workers=1))  # and give what a serial sweep gives
    for r in records:  # every run saved, with its record for --resume
        assert Path(r.result_file).is_file()
        assert Path(r.result_file.replace(".res.h5", ".run.json")).is_file()


def _killing_run_variant(case_path, overrides, label="", save_dir=None,
                         from_equilibrium=False):
    """run_variant, except that the run labelled "poison" kills its worker process (as a
    crash in compiled code or the out-of-memory killer would)."""
    if label == "poison":
        os.kill(os.getpid(), signal.SIGKILL)
    return _REAL_RUN_VARIANT(case_path, overrides, label, save_dir, from_equilibrium)


_REAL_RUN_VARIANT = sweep_module.run_variant


@pytest.mark.skipif(not FORK, reason="forked workers see the patched run_variant")
def test_a_run_that_kills_every_pool_stops_after_bounded_retries(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_module, "run_variant", _killing_run_variant)
    variants = [*_variants(2, 0.02, 0.01), ("poison", {"solver.t_end": 0.02})]
    records = sweep(SEED, variants, workers=2, save_dir=tmp_path)
    poison = records[-1]
    assert not poison.success
    assert "not finished: its worker process died" in poison.message
    assert f"{sweep_module.MAX_POOL_RESTARTS + 1} times" in poison.message
    assert poison.reruns == sweep_module.MAX_POOL_RESTARTS
    for r in records[:-1]:  # the others finished in one pool or another, and are saved
        assert r.success, r.message
        assert Path(r.result_file).is_file()
    assert not (tmp_path / "poison.res.h5").exists()


def test_sweep_survives_a_killed_dask_worker(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    variants = _variants(6)
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        pids = client.run(os.getpid)  # {worker address: its process id}
        killed = []

        def kill_one_worker(done, total, label):
            if not killed:  # after the first run: both workers hold a run
                pid = sorted(pids.values())[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

        records = sweep(SEED, variants, scheduler=client, save_dir=tmp_path,
                        progress=kill_one_worker)
    assert killed
    assert sum(r.reruns for r in records) >= 1  # Dask handed the lost runs out again
    _same(records, sweep(SEED, variants, workers=1))
    assert all(Path(r.result_file).is_file() for r in records)


def _counting(calls):
    def run_variant(case_path, overrides, label="", save_dir=None, from_equilibrium=False):
        calls.append(label)
        return _REAL_RUN_VARIANT(case_path, overrides, label, save_dir, from_equilibrium)
    return run_variant


def test_cli_resume_skips_finished_runs_and_reruns_changed_ones(tmp_path, monkeypatch,
                                                                capsys):
    calls: list = []
    monkeypatch.setattr(sweep_module, "run_variant", _counting(calls))
    case = tmp_path / "pendulum.toml"
    case.write_text(SEED.read_text())
    out = tmp_path / "study"

    def study(values, *extra):
        calls.clear()
        code = main(["study", "sweep", str(case), "--key", "solver.t_end", "--values",
                     values, "--set", "solver.h=0.002", "-o", str(out), "--workers", "1",
                     "--resume", "--json", *extra])
        assert code == 0
        summary = json.loads(capsys.readouterr().out)
        return list(calls), summary, (out / "sweep.csv").read_text()

    ran, first, table = study("0.02,0.04,0.06")
    assert len(ran) == 3 and first["resumed_runs"] == 0
    ran, again, table_again = study("0.02,0.04,0.06")
    assert ran == [] and again["resumed_runs"] == 3  # nothing run again
    assert table_again == table  # the same table, to the last digit
    assert again["rows"] == first["rows"]
    ran, changed, _ = study("0.02,0.04,0.08")  # one value changed: only that one runs
    assert ran == ["solver.t_end=0.08"] and changed["resumed_runs"] == 2
    ran, _, _ = study("0.02,0.04,0.08", "--set", "solver.rho_inf=0.9")  # other overrides
    assert len(ran) == 3
    ran, _, _ = study("0.02,0.04,0.08", "--set", "solver.rho_inf=0.9", "--from-equilibrium")
    assert len(ran) == 3
    case.write_text(SEED.read_text().replace("mass = 1.0", "mass = 2.0"))
    ran, _, _ = study("0.02,0.04,0.08", "--set", "solver.rho_inf=0.9", "--from-equilibrium")
    assert len(ran) == 3  # the case file changed: every run again


def test_resume_distrusts_a_replaced_results_file_or_a_broken_record(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(sweep_module, "run_variant", _counting(calls))
    variants = [("a", {"solver.t_end": 0.02}), ("b", {"solver.t_end": 0.03}),
                ("c", {"solver.t_end": 0.04})]
    first = sweep(SEED, variants, workers=1, save_dir=tmp_path)
    (tmp_path / "a.res.h5").write_bytes((tmp_path / "b.res.h5").read_bytes())
    (tmp_path / "b.run.json").write_text("{not json")
    calls.clear()
    second = sweep(SEED, variants, workers=1, save_dir=tmp_path, resume=True)
    assert calls == ["a", "b"]
    assert [r.resumed for r in second] == [False, False, True]
    _same(first, second)


def test_an_interrupted_run_is_not_recorded_as_finished(tmp_path):
    from dataclasses import replace

    from flexmbs.studies.resume import record_path, write_record

    (record,) = sweep(SEED, [("a", {"solver.t_end": 0.02})], workers=1, save_dir=tmp_path)
    record_path(tmp_path, "a").unlink()
    assert write_record(tmp_path, replace(record, status="interrupted"), "key") is None
    assert not record_path(tmp_path, "a").exists()  # so --resume runs it again
    assert write_record(tmp_path, record, "key") == record_path(tmp_path, "a")


def test_resume_needs_a_save_folder_and_distinct_file_names(tmp_path):
    with pytest.raises(ValidationError, match="resume=True needs save_dir"):
        sweep(SEED, _variants(1), resume=True)
    with pytest.raises(ValidationError, match=r"share results file names"):
        sweep(SEED, [("a b", {}), ("a_b", {})], save_dir=tmp_path)


floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=30, deadline=None)
@given(t=arrays(np.float64, st.integers(1, 6), elements=floats),
       modal=arrays(np.float64, (4, 2), elements=floats), node=st.integers(0, 10**6))
def test_signals_survive_the_json_record_exactly(t, modal, node):
    sig = RunSignals(t=t, modal={"beam": modal}, tip={"beam": modal[:, :1]},
                     tip_node={"beam": node}, size={"beam": float(t[0])},
                     shape_peak={"beam": modal[0]}, joint_angles={"j": t}, kinetic=t,
                     potential=None, elastic=t, energy_error=t)
    back = _signals_from_json(json.loads(json.dumps(_signals_json(sig))))
    for name in ("t", "kinetic", "elastic", "energy_error"):
        np.testing.assert_array_equal(getattr(back, name), getattr(sig, name))
    assert back.potential is None
    np.testing.assert_array_equal(back.modal["beam"], modal)
    np.testing.assert_array_equal(back.tip["beam"], modal[:, :1])
    assert back.tip_node == {"beam": node}
    np.testing.assert_array_equal(back.size["beam"], sig.size["beam"])  # NaN == NaN here


def test_resume_runs_again_when_a_file_the_case_reads_changed(tmp_path, monkeypatch):
    """The run key covers the files the case reads: a sweep resumed after its modal data
    file was replaced (the same name, other modes) reused the old runs before."""
    import shutil

    from flexmbs.modal import read_modal, write_modal

    calls: list = []
    monkeypatch.setattr(sweep_module, "run_variant", _counting(calls))
    (tmp_path / "cases").mkdir()
    (tmp_path / "modal_data").mkdir()
    case = tmp_path / "cases" / "cantilever.toml"
    shutil.copy(ROOT / "cases" / "cantilever_release.toml", case)
    modal = tmp_path / "modal_data" / "steel_cantilever.fmd.h5"
    shutil.copy(ROOT / "modal_data" / "steel_cantilever.fmd.h5", modal)
    variants = [(f"t={t}", {"solver.t_end": t}) for t in (0.02, 0.03)]

    def study():
        calls.clear()
        records = sweep(case, variants, save_dir=tmp_path, resume=True, workers=1)
        return list(calls), records

    ran, _ = study()
    assert len(ran) == 2
    ran, _ = study()
    assert ran == []  # nothing changed: both resumed
    write_modal(read_modal(modal).with_damping(ratio=0.05), modal)  # a damped beam now
    ran, _ = study()
    assert len(ran) == 2, ran
