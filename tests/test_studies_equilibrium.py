"""Studies that start from the static equilibrium (``--from-equilibrium``,
``from_equilibrium=True``) on cases/arm_vertical_pd.toml: the steel arm in a vertical
plane, its shoulder a PD servo. With the move switched off nothing drives the arm, so a
run from its equilibrium must stay at rest — in every coupling mode, truncation level and
sweep value, serially, in worker processes and on Dask — while the same run from the
case's initial state does not. The rest pose itself is checked against hand statics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import fsolve

from flexmbs import read_modal
from flexmbs.cases import load_case, run_case
from flexmbs.cli.main import main
from flexmbs.errors import ConvergenceError
from flexmbs.studies import coupling_study, parameter_sweep, sweep, truncation_study

ROOT = Path(__file__).resolve().parents[1]
VERTICAL = ROOT / "cases" / "arm_vertical_pd.toml"
SEED = ROOT / "cases" / "arm_beam_seed.toml"
#: the move switched off, a short run and 4 modes: nothing drives the arm
AT_REST = {"forces.shoulder_reference.value": 0.0, "solver.t_end": 0.05,
           "bodies.beam.modes": 4}


def _assert_at_rest(record, atol_angle=1e-9):
    """Every joint angle and modal coordinate of the run keeps its first value."""
    assert record.success, record.message
    assert record.settings["start"] == "static equilibrium"
    sig = record.signals
    for joint, angle in sig.joint_angles.items():
        assert np.ptp(angle) < atol_angle, (record.label, joint, np.ptp(angle))
    for xi in sig.modal.values():
        scale = max(float(np.max(np.abs(xi))), 1e-6)
        assert np.max(np.ptp(xi, axis=0)) < 1e-7 * scale, (record.label, np.ptp(xi, 0))


def _hand_statics():
    """(shoulder, elbow) angles [rad] at rest, the arm taken rigid (the beam's sag moves
    its centre of mass by micrometres): the PD springs balance gravity's moments,
    k₁ θ₁ = −g Σ mᵢ xᵢ(θ) about the shoulder and k₂ θ₂ = −g Σ mᵢ xᵢ(θ) of link 2 and
    the beam about the elbow."""
    inv = read_modal(ROOT / "modal_data" / "arm_steel_beam.fmd.h5").invariants
    m_beam, x_beam = inv.mass, inv.S0[0] / inv.mass  # beam CoM from its root
    g = 9.81

    def residual(v):
        t1, t2 = v
        elbow = g * (0.8 * 0.15 + m_beam * (0.3 + x_beam)) * np.cos(t1 + t2)
        shoulder = g * (1.2 * 0.2 + (0.8 + m_beam) * 0.4) * np.cos(t1) + elbow
        return [400.0 * t1 + shoulder, 200.0 * t2 + elbow]

    return fsolve(residual, [0.0, 0.0], xtol=1e-13)


def test_every_coupling_mode_starts_at_rest_in_its_own_equilibrium():
    """Each mode's run from its own equilibrium stays at rest, the pose is the hand
    statics' (1e-4), and the initial accelerations vanish; from the case's initial state
    the beam drops into its sag instead."""
    study = coupling_study(VERTICAL, overrides=AT_REST, workers=1, from_equilibrium=True)
    assert study.from_equilibrium
    assert list(study.records) == ["two-way", "one-way", "no-Mrf", "rigid"]
    shoulder, elbow = _hand_statics()
    for record in study.records.values():
        _assert_at_rest(record)
        angles = record.signals.joint_angles
        assert angles["shoulder"][0] == pytest.approx(shoulder, rel=1e-4)
        assert angles["elbow"][0] == pytest.approx(elbow, rel=1e-4)
    sag = study.records["two-way"].signals.modal["beam"][0]
    # the beam's own sag: a cantilever under its weight, ρAgL⁴/(8EI) at the tip, EI/ρA
    # from its first (clamped) frequency ω₁ = 1.8751² √(EI/(ρA L⁴)), tilted by θ₁ + θ₂
    length = 0.5
    omega1 = 2 * np.pi * read_modal(ROOT / "modal_data" / "arm_steel_beam.fmd.h5"
                                    ).frequencies[0]
    stiffness = (omega1 * length**2 / 1.875104**2) ** 2  # EI/ρA [m⁴/s²]
    tip = np.linalg.norm(study.records["two-way"].signals.tip["beam"][0])
    assert tip == pytest.approx(9.81 * length**4 / (8 * stiffness)
                                * np.cos(shoulder + elbow), rel=2e-3)
    assert abs(sag[0]) > 1e-4  # it did start sagged ...
    np.testing.assert_array_equal(study.records["rigid"].signals.modal["beam"], 0.0)
    # ... and one-way sags as two-way (its frame sees the body undeformed, its modes
    # carry the same gravity load)
    np.testing.assert_allclose(study.records["one-way"].signals.modal["beam"][0], sag,
                               rtol=1e-4, atol=1e-12)

    case = load_case(VERTICAL, AT_REST)
    _, rest = run_case(case, from_equilibrium=True)
    _, fall = run_case(case)
    assert np.max(np.abs(rest.qdd[0])) < 1e-6
    assert np.max(np.abs(fall.qdd[0])) > 1.0  # gravity, unbalanced
    assert rest.settings["start"] == "static equilibrium" and "start" not in fall.settings
    xi = fall.modal_coordinates("beam")[:, 0]
    assert np.ptp(xi) > 0.5 * abs(sag[0])


def test_the_option_reaches_truncation_sweeps_and_worker_processes():
    levels = truncation_study(VERTICAL, [1, 2], overrides=AT_REST, workers=2,
                              from_equilibrium=True)
    assert levels.from_equilibrium
    for record in levels.records:
        _assert_at_rest(record)
    values = parameter_sweep(VERTICAL, "forces.elbow_pd.stiffness", [100.0, 300.0],
                             overrides=AT_REST, workers=2, from_equilibrium=True)
    for record in values:
        _assert_at_rest(record)
    # a stiffer elbow PD holds the elbow closer to straight: the option reached each run
    first = [r.signals.joint_angles["elbow"][0] for r in values]
    assert first[0] == pytest.approx(3 * first[1], rel=0.02)


def test_the_option_reaches_dask_workers():
    distributed = pytest.importorskip("dask.distributed")
    variants = [("k=100", {**AT_REST, "forces.elbow_pd.stiffness": 100.0})]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        (record,) = sweep(VERTICAL, variants, scheduler=cluster.scheduler_address,
                          from_equilibrium=True)
    _assert_at_rest(record)


def test_cli_study_from_equilibrium_says_so_in_json_and_table(tmp_path, capsys):
    out = tmp_path / "sweep"
    code = main(["study", "sweep", str(VERTICAL), "--key", "forces.elbow_pd.damping",
                 "--values", "1.0,4.0", "--from-equilibrium", "--workers", "1", "-o",
                 str(out), "--json", *[f"--set={k}={v}" for k, v in AT_REST.items()]])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["from_equilibrium"] is True
    for row in report["rows"]:
        assert row["shoulder peak change [rad]"] < 1e-9
        assert row["elbow peak change [rad]"] < 1e-9
    text = (out / "sweep.md").read_text()
    assert "Every run starts at rest in the static equilibrium of its own variant" in text


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")  # its singular Newton
def test_a_case_without_equilibrium_fails_each_run_with_the_reason():
    """The seed arm's 2 N m step at the shoulder has no equilibrium: nothing holds it."""
    with pytest.raises(ConvergenceError, match=r"arm_beam_seed\.toml: no start from the "
                                               r"static equilibrium.*link1"):
        run_case(load_case(SEED, {"solver.t_end": 0.01}), from_equilibrium=True)
    (record,) = sweep(SEED, [("base", {"solver.t_end": 0.01})], workers=1,
                      from_equilibrium=True)
    assert not record.success and "no start from the static equilibrium" in record.message



def test_why_each_mode_starts_from_its_own_equilibrium():
    """Given two-way's rest state, the rigid run (no elastic coupling, ξ held by K_ff
    alone) rings with the sag as amplitude, and one-way (its frame sees the body
    undeformed) creeps; from their own rest states both stay put."""
    from flexmbs.cases.run import case_system, equilibrium_start

    case = load_case(VERTICAL, {**AT_REST, "solver.t_end": 0.1})
    two_way = equilibrium_start(case, case_system(case, "two-way"))
    sag = abs(two_way["q0"][case_system(case).coord_names.index("beam.xi1")])
    for mode, least in (("rigid", 1.5 * sag), ("one-way", 1e-9)):
        _, given = run_case(case, coupling=mode, **two_way)
        _, own = run_case(case, coupling=mode, from_equilibrium=True)
        assert np.ptp(given.modal_coordinates("beam")[:, 0]) > least
        assert np.ptp(own.modal_coordinates("beam")[:, 0]) < 1e-12
