"""The arm-plus-beam studies: energy balance of the seed case, one-way versus two-way
coupling as the beam stiffens, truncation convergence of the steel case, and sweeps that
give identical results serially, in local processes and on a Dask LocalCluster."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from script_files import load_script  # tests/script_files.py

from flexmbs.cases import load_case, run_case
from flexmbs.cases.loader import CaseError
from flexmbs.cli.main import main
from flexmbs.modal import ModalData, read_modal, write_modal
from flexmbs.modal.shipped import _fields
from flexmbs.studies import coupling_study, parameter_sweep, run_variant, sweep
from flexmbs.studies.coupling import RunComparison
from flexmbs.studies.truncation import truncation_study

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "cases" / "arm_beam_seed.toml"
STEEL = ROOT / "cases" / "arm_beam_steel.toml"


def test_seed_case_conserves_energy_without_torque_trapezoidal():
    """τ₁ = 0, no damping, trapezoidal Newmark, the arm spinning and the beam vibrating:
    T + V stays constant (measured drift 5.8e-6 of T + V over 0.5 s at h = 1 ms)."""
    rec = run_variant(str(SEED), {"forces.tau1.value": 0.0, "solver.t_end": 0.5,
                                  "bodies.link1.angular_velocity": [0.0, 0.0, 2.0],
                                  "bodies.beam.xi": [0.01, 0.0]})
    assert rec.success, rec.message
    sig = rec.signals
    energy = sig.kinetic + sig.potential
    assert energy[0] > 0.05  # something moves: ~0.087 J
    assert np.max(np.abs(sig.modal["beam"][:, 1])) > 1e-3  # mode 2 is excited by coupling
    assert np.ptp(energy) < 1e-4 * energy[0]


def test_seed_case_torque_work_equals_energy_change():
    """With τ₁ = 2 N m: T + V − W_τ stays at its initial value (measured residual 2.3e-5 J
    for 3.0 J of work over 0.5 s)."""
    rec = run_variant(str(SEED), {"solver.t_end": 0.5})
    sig = rec.signals
    work = sig.kinetic + sig.potential - (sig.kinetic + sig.potential)[0] - sig.energy_error
    assert np.max(np.abs(work)) > 1.0
    assert np.max(np.abs(sig.energy_error)) < 1e-4 * np.max(np.abs(work))
    # the work is the torque times the shoulder rotation: W = τ Δθ₁
    angle = sig.joint_angles["shoulder"]
    np.testing.assert_allclose(work, 2.0 * (angle - angle[0]), atol=1e-4 * np.max(work))


def _scaled_beam(tmp_path, factor):
    data = read_modal(ROOT / "modal_data" / "seed_tip_beam.fmd.h5")
    path = tmp_path / f"beam_k{factor:g}.fmd.h5"
    write_modal(ModalData(**{**_fields(data), "K_ff": data.K_ff * factor}), path)
    return str(path)


def test_one_way_and_two_way_agree_with_rigid_as_the_beam_stiffens(tmp_path):
    """The joint-angle difference one-way/two-way shrinks like 1/k (measured 5.0e-3,
    5.4e-5, 4.9e-7 rad for K × 1, 100, 10⁴); one-way's rigid motion is the rigid run's."""
    diffs = []
    for factor in (1.0, 100.0, 1e4):
        study = coupling_study(SEED, modes=("one-way", "rigid"), workers=1, overrides={
            "bodies.beam.modal_data": _scaled_beam(tmp_path, factor), "solver.t_end": 0.3,
            "solver.method": "generalized-alpha"})
        rows = {r["coupling"]: r for r in study.rows()}
        assert all(r["success"] for r in rows.values())
        one, rigid = study.records["one-way"].signals, study.records["rigid"].signals
        for joint in ("shoulder", "elbow"):  # the same rigid equations, to Newton rtol
            np.testing.assert_allclose(one.joint_angles[joint], rigid.joint_angles[joint],
                                       rtol=0, atol=1e-8)
        diffs.append(rows["one-way"]["elbow max diff vs two-way [rad]"])
    assert diffs[0] > 1e-3  # a flexible beam changes the arm's motion
    assert diffs[1] < 0.05 * diffs[0]
    assert diffs[2] < 0.05 * diffs[1]


def test_truncation_error_decreases_as_in_plane_modes_are_added():
    """Steel arm beam, 0.2 s: levels 1, 3, 6 and 10 against 20 modes. Each level adds
    in-plane bending modes (3 at 126 Hz; 4 and 6 at 352 and 690 Hz; 8 and 10 at 1140 and
    1703 Hz), the ones the planar arm excites, so the tip error must fall at every level."""
    study = truncation_study(STEEL, [1, 3, 6, 10, 20], overrides={"solver.t_end": 0.2},
                             workers=2)
    rows = study.rows()
    assert all(r["success"] for r in rows)
    errors = [r["tip error max [mm]"] for r in rows[:-1]]
    assert rows[-1]["reference"] and rows[-1]["tip error max [mm]"] == 0
    assert np.all(np.diff(errors) < 0), errors
    # measured: 38 % of the peak with mode 1 alone (its phase drifts: the coupled
    # frequency needs the second in-plane mode), 1.3 % with 3 modes, 1e-4 with 10
    assert rows[1]["tip error max / reference peak"] < 0.05
    assert rows[3]["tip error max / reference peak"] < 1e-3
    np.testing.assert_allclose([r["highest frequency [Hz]"] for r in rows],
                               read_modal(ROOT / "modal_data" / "arm_steel_beam.fmd.h5")
                               .frequencies[[0, 2, 5, 9, 19]], rtol=1e-12)


def test_truncation_levels_take_the_cases_initial_modal_coordinates():
    """The beam stop gives xi (and here xi_dot) for its 8 modes: each level keeps those
    of its n lowest modes and starts the modes the case does not keep at rest. Before,
    every level but the case's own was refused ("xi must be 20 finite numbers")."""
    case_path = ROOT / "cases" / "beam_stop.toml"
    rates = [0.0, 0.2] + [0.0] * 6
    overrides = {"solver.t_end": 0.002, "bodies.beam.xi_dot": rates}
    study = truncation_study(case_path, [2, 8, 12], overrides=overrides, workers=1)
    assert all(r.success for r in study.records)
    _, own = run_case(load_case(case_path, overrides))  # the case as written: 8 modes
    for record in study.records:
        n = record.signals.modal["beam"].shape[1]
        expected = np.zeros(n)
        expected[:min(n, 8)] = own.modal_coordinates("beam")[0][:min(n, 8)]
        np.testing.assert_allclose(record.signals.modal["beam"][0], expected, atol=1e-15)
    np.testing.assert_allclose(study.records[1].signals.modal["beam"],
                               own.modal_coordinates("beam"), rtol=1e-12, atol=1e-15)


def _same_records(a, b):
    assert [r.label for r in a] == [r.label for r in b]
    for ra, rb in zip(a, b, strict=True):
        assert ra.success and rb.success
        np.testing.assert_array_equal(ra.signals.t, rb.signals.t)
        for body in ra.signals.modal:
            np.testing.assert_array_equal(ra.signals.modal[body], rb.signals.modal[body])
            np.testing.assert_array_equal(ra.signals.tip[body], rb.signals.tip[body])
        for joint in ra.signals.joint_angles:
            np.testing.assert_array_equal(ra.signals.joint_angles[joint],
                                          rb.signals.joint_angles[joint])


SWEEP = dict(case_path=SEED, key="forces.tau1.value", values=[0.5, 1.0, 2.0])
SHORT = {"solver.t_end": 0.05}


def _sweep(**options):
    # one engine on every side: a process whose kernels were still compiling in the
    # background when it started runs on the NumPy path, a fresh Dask worker on the
    # compiled one, and the two agree to round-off, not bit for bit
    variants = [(f"tau={v}", {**SHORT, "solver.engine": "python", SWEEP["key"]: v})
                for v in SWEEP["values"]]
    return sweep(SWEEP["case_path"], variants, **options)


def test_sweep_serial_and_local_processes_are_identical():
    serial = _sweep(workers=1)
    local = _sweep(workers=2)
    _same_records(serial, local)
    # the runs differ from each other: ξ₁ grows with the torque
    peaks = [np.max(np.abs(r.signals.modal["beam"][:, 0])) for r in serial]
    assert peaks[0] < peaks[1] < peaks[2]


def test_sweep_on_a_dask_local_cluster_equals_serial():
    distributed = pytest.importorskip("dask.distributed")
    serial = _sweep(workers=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        on_dask = _sweep(scheduler=cluster.scheduler_address)
    _same_records(serial, on_dask)


def test_parameter_sweep_labels_and_failed_runs_are_reported():
    records = parameter_sweep(SEED, "solver.h", [1e-3, -1.0], overrides=SHORT, workers=1)
    assert [r.label for r in records] == ["solver.h=0.001", "solver.h=-1.0"]
    assert records[0].success and records[0].steps == 50
    assert not records[1].success and records[1].signals is None
    assert "'h'" in records[1].message and "positive" in records[1].message


def test_overrides_name_the_key_and_the_entries():
    with pytest.raises(CaseError, match=r"no \[\[bodies\]\] entry named 'bem'.*'link1'"):
        load_case(SEED, {"bodies.bem.modes": 1})
    with pytest.raises(CaseError, match="name the entry"):
        load_case(SEED, {"bodies.modes": 1})
    with pytest.raises(CaseError, match=r"\[solver\].*'h'"):
        load_case(SEED, {"solver.h": "fast"})
    with pytest.raises(CaseError, match=r"'h' must be a finite number, got inf"):
        load_case(SEED, {"solver.h": float("inf")})
    with pytest.raises(CaseError, match=r"'coupling' must be two-way, one-way"):
        load_case(SEED, {"solver.coupling": "half-way"})
    with pytest.raises(CaseError, match=r"'modes' must be an integer >= 1, got 2.5"):
        load_case(SEED, {"bodies.beam.modes": 2.5})
    case = load_case(SEED, {"bodies.beam.coupling": "one-way", "solver.t_end": 0.1})
    assert case.model.bodies["beam"].coupling.value == "one-way"
    assert case.solver["t_end"] == 0.1


def test_cli_coupling_study_writes_table_markdown_and_plot(tmp_path, capsys):
    out = tmp_path / "study"
    code = main(["study", "coupling", str(SEED), "-o", str(out), "--set",
                 "solver.t_end=0.05", "--workers", "1", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    modes = [r["coupling"] for r in report["rows"]]
    assert modes == ["two-way", "one-way", "no-Mrf", "rigid"]
    rows = {r["coupling"]: r for r in report["rows"]}
    assert rows["rigid"]["beam.xi1 peak"] == 0.0
    assert rows["no-Mrf"]["beam.xi1 peak"] < 1e-12  # M_rf is what excites the modes here
    assert rows["two-way"]["beam.xi1 peak"] > 1e-4
    csv_lines = (out / "coupling.csv").read_text().splitlines()
    assert csv_lines[0].startswith("coupling,success,status,beam.xi1 peak")
    assert len(csv_lines) == 5
    assert "| two-way | yes |" in (out / "coupling.md").read_text()
    assert (out / "coupling.png").stat().st_size > 10_000


def test_study_figures_carry_axis_labels_with_units():
    study = coupling_study(SEED, modes=("rigid",), overrides=SHORT, workers=1)
    fig = study.figure()
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ["beam tip deflection [mm]", "beam ξ₁ [shape units]",
                      "shoulder angle [rad]"]
    assert all(ax.get_xlabel() == "time [s]" for ax in fig.axes)
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["two-way", "rigid"]


def test_truncation_against_a_reference_file_and_with_overridden_data(tmp_path):
    """--reference: errors against a results file; overrides reach the mode table."""
    ref_path = tmp_path / "ref.res.h5"
    _, ref = run_case(load_case(STEEL, {"solver.t_end": 0.05}))
    ref.save(ref_path)
    study = truncation_study(STEEL, [1, 20], reference=ref_path,
                             overrides={"solver.t_end": 0.05}, workers=1)
    rows = study.rows()
    assert rows[1]["tip error max [mm]"] == pytest.approx(0.0, abs=1e-12)  # same run
    assert rows[0]["tip error max [mm]"] > 0 and not any(r["reference"] for r in rows)
    seed_data = str(ROOT / "modal_data" / "seed_tip_beam.fmd.h5")
    other = truncation_study(STEEL, [1, 2], overrides={"solver.t_end": 0.02,
                                                       "bodies.beam.modal_data": seed_data},
                             workers=1)
    np.testing.assert_allclose([r["highest frequency [Hz]"] for r in other.rows()],
                               read_modal(seed_data).frequencies, rtol=1e-12)


def test_cli_study_errors_name_the_problem(tmp_path, capsys):
    assert main(["study", "truncation", str(STEEL), "--modes", "0,30", "-o",
                 str(tmp_path / "t")]) == 2
    assert "truncation levels must lie in 1..20" in capsys.readouterr().err
    assert main(["study", "sweep", str(SEED), "--key", "solver.h", "--values", "1e-3",
                 "--set", "solver", "-o", str(tmp_path / "s")]) == 2
    assert "--set 'solver': expected KEY=VALUE" in capsys.readouterr().err
    assert main(["study", "coupling", str(SEED), "--couplings", "two-way,foo", "-o",
                 str(tmp_path / "c")]) == 2
    assert "unknown coupling mode(s) ['foo']" in capsys.readouterr().err
    assert main(["study", "coupling", str(SEED), "--scheduler", "nowhere", "-o",
                 str(tmp_path / "c")]) == 2
    assert "cannot reach the Dask scheduler 'nowhere'" in capsys.readouterr().err


def _tutorial_script():
    return load_script(ROOT / "docs" / "scripts" / "build_tutorial_arm_beam.py")


def test_locked_elbow_peak_matches_the_quasi_static_step_estimate():
    """Elbow welded: the arm turns as one rigid body with α = τ/J, and the first peak of
    ξ₁ is twice the quasi-static f₁/k₁ (undamped step response). Measured: 5.10e-3
    against the estimate 5.01e-3 (+2 %, coupling with mode 2 and the arm)."""
    est = _tutorial_script().quasi_static_estimate()
    rec = run_variant(str(SEED), {"joints.elbow.type": "fixed", "solver.t_end": 0.15})
    peak_xi1 = np.max(np.abs(rec.signals.modal["beam"][:, 0]))
    np.testing.assert_allclose(peak_xi1, est["peak1"], rtol=0.05)


def test_tutorial_script_regenerates_the_page(tmp_path):
    """The tutorial's tables and plots come from the script (quick mode here)."""
    target = _tutorial_script().build(tmp_path, quick=True, workers=2)
    text = target.read_text()
    assert "{{" not in text
    assert "| two-way |" in text and "| 16 |" in text
    for name in ("coupling_seed", "coupling_locked_elbow", "coupling_gravity",
                 "truncation_steel"):
        for ext in ("csv", "md", "png"):
            assert (tmp_path / "tutorial_arm_beam" / f"{name}.{ext}").stat().st_size > 100


def test_cli_study_where_every_run_fails_reports_each_reason_without_a_plot(tmp_path,
                                                                          capsys):
    out = tmp_path / "failed"
    code = main(["study", "coupling", str(SEED), "-o", str(out), "--set", "solver.h=-1",
                 "--workers", "1", "--json"])
    assert code == 1
    # strict JSON: undefined numbers would be NaN; every failed row says why
    report = json.loads(capsys.readouterr().out, parse_constant=pytest.fail)
    assert not report["success"] and "png" not in report["files"]
    assert all("positive" in r["message"] for r in report["rows"])
    assert not (out / "coupling.png").exists() and (out / "coupling.csv").exists()


def test_a_run_that_stops_partway_keeps_its_figures_and_its_reason():
    # one Newton iteration allowed and no step halving: the first hard step fails
    records = sweep(SEED, [("strict", {**SHORT, "solver.max_iter": 1,
                                       "solver.h_min": 1e-3})], workers=1)
    comparison = RunComparison(str(SEED), {"strict": records[0]}, None, "run")
    (row,) = comparison.rows()
    assert row["success"] is False and row["message"]
    assert records[0].signals is not None and records[0].message in row["message"]


def test_cli_save_runs_lists_every_results_file_in_the_json(tmp_path, capsys):
    from flexmbs.integrators import SimulationResult

    out = tmp_path / "runs"
    code = main(["study", "sweep", str(SEED), "--key", "solver.h", "--values",
                 "0.002,0.001", "--set", "solver.t_end=0.02", "-o", str(out),
                 "--workers", "1", "--save-runs", "--json"])
    assert code == 0
    files = json.loads(capsys.readouterr().out)["files"]
    runs = sorted(v for k, v in files.items() if k.startswith("run "))
    assert len(runs) == 2
    steps = sorted(len(SimulationResult.load(f).t) for f in runs)
    assert steps == [11, 21]  # 0.02 s at 2 ms and at 1 ms, the start included


def test_terminal_study_table_fits_the_terminal_and_names_what_it_leaves_out(tmp_path,
                                                                              capsys,
                                                                              monkeypatch):
    """A coupling study's table (some 20 columns) printed in an 80-column terminal: no
    line wider than 80, the coupling and status columns shown, the rest named with the
    files that hold them; the full table is in the CSV."""
    import shutil

    from flexmbs.studies.tables import compact_table

    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=None: os.terminal_size(
        (80, 24)))
    out = tmp_path / "study"
    assert main(["study", "coupling", str(SEED), "-o", str(out), "--set",
                 "solver.t_end=0.05", "--workers", "1"]) == 0
    text = capsys.readouterr().out
    table = text.split("\n", 1)[1].split("\n  coupling.csv")[0].split("  (")[0]
    assert max(len(line) for line in table.splitlines()) <= 80
    assert table.splitlines()[0].startswith("coupling  status")
    header = (out / "coupling.csv").read_text().splitlines()[0].split(",")
    _, hidden = compact_table([dict.fromkeys(header, 1.0)], 80)
    assert f"{len(hidden)} more column(s) in the CSV and Markdown files" in text
    assert len(header) > len(table.splitlines()[0].split())
