"""Run status and range checks (flexmbs.integrators.health, docs/integrators.md).

The Kane–Ryan–Banerjee beam (L = 10 m, EI = 1.4e4 N m², ρA = 1.2 kg/m: first clamped
bending frequency ω₁ = 1.875² √(EI/ρA L⁴) = 3.80 rad/s) on a hub spun up beyond ω₁:
without geometric stiffening its effective bending stiffness ω₁² − Ω² turns negative
and the deflection grows exponentially, so the run must end as "diverged", never as
"completed". A slow spin stays completed; a pendulum at a huge step gains energy and
must end "completed with warnings".
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.assembly import System
from flexmbs.cli.main import main as cli_main
from flexmbs.errors import ValidationError
from flexmbs.integrators import SimulationResult, simulate, step_batch
from flexmbs.integrators.health import (
    BodyRange,
    RangeLimits,
    divergence,
    first_divergence,
    run_warnings,
)
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.reduction import clamped_modes
from flexmbs.model import ModelBuilder, SpinUp

LENGTH, EA, EI, RHO_A = 10.0, 2.8e7, 1.4e4, 1.2
OMEGA_1 = 1.875104**2 * np.sqrt(EI / (RHO_A * LENGTH**4))  # [rad/s]


def kane_beam(n_modes=3):
    """The Kane beam's clamped modes (E = 7e10 Pa, A = 4e-4 m², I = 2e-7 m⁴), along x,
    bending in the x–y plane about z."""
    section = BeamSection(A=EA / 7e10, Iy=EI / 7e10, Iz=EI / 7e10, J=2 * EI / 7e10)
    fe = straight_beam(LENGTH, 20, section, Material(E=7e10, nu=0.3, rho=RHO_A * 7e10 / EA))
    return clamped_modes(fe, "root", n_modes)


def spun_beam(omega, duration, n_modes=3):
    """The beam clamped to a massless-ish hub turning about z by the spin-up profile."""
    b = ModelBuilder()
    b.add_rigid_body("hub", 1.0, [0.1, 0.1, 0.1])
    b.add_marker("ground", "O")
    b.add_marker("hub", "axis")
    b.add_revolute("hinge", "ground.O", "hub.axis")
    b.add_drive("spin", "rotation", SpinUp(omega, duration), marker_i="ground.O",
                marker_j="hub.axis")
    b.add_flexible_body("beam", kane_beam(n_modes))
    b.add_marker("beam", "root", node=1)
    b.add_joint("clamp", "fixed", "hub.axis", "beam.root")
    return System(b.finalize())


def test_the_kane_beam_data_have_the_published_first_frequency():
    data = kane_beam()
    assert 2 * np.pi * data.frequencies[0] == pytest.approx(OMEGA_1, rel=1e-3)


def test_a_spin_beyond_the_first_frequency_without_stiffening_diverges():
    """Ω = 10 rad/s > ω₁: the run stops as diverged once the deflection passes the
    beam's length, keeps its history, and names the body; never "completed"."""
    result = simulate(spun_beam(10.0, 2.0), 8.0, 5e-3, "generalized-alpha")
    assert result.status == "diverged", result.message
    assert not result.success
    assert "'beam'" in result.message and "diverged" in result.message
    assert result.t[-1] < 8.0
    tip = BodyRange(spun_beam(10.0, 2.0).bodies[1], 7)
    xi = result.modal_coordinates("beam")
    assert tip.deflection(xi[-1:])[0] > LENGTH  # the recorded last state is the reason
    assert np.all(tip.deflection(xi[:-30]) < LENGTH)


def test_a_slow_spin_completes_without_warnings():
    """Ω = 0.5 rad/s ≈ 0.13 ω₁ over 15 s: small deflection, energy balance closed."""
    result = simulate(spun_beam(0.5, 15.0), 3.0, 1e-2, "generalized-alpha")
    assert result.status == "completed", result.warnings
    assert result.success and result.warnings == []


def test_a_spin_near_the_first_frequency_is_flagged():
    """Ω = 3 rad/s = 0.79 ω₁, reached by the Kane spin-up over 15 s: a "spin" warning
    naming the beam with the ratio of the measured peak frame speed (the drive's Ω) to
    ω₁ (the deflection stays below 10 % of L: no other warning)."""
    result = simulate(spun_beam(3.0, 15.0), 16.0, 1e-2, "generalized-alpha")
    spin = [w for w in result.warnings if w["code"] == "spin"]
    assert result.status == "completed with warnings" and result.success
    assert len(spin) == 1 == len(result.warnings) and spin[0]["subject"] == "beam"
    assert spin[0]["value"] == pytest.approx(3.0 / OMEGA_1, rel=1e-3)


def pendulum():
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_rigid_body("bob", 1.0, [1e-3, 1e-3, 1e-3], position=(1.0, 0.0, 0.0))
    b.add_marker("ground", "O")
    b.add_marker("bob", "pivot", (-1.0, 0.0, 0.0))
    b.add_joint("pin", "spherical", "ground.O", "bob.pivot")
    return System(b.finalize())


def test_an_energy_balance_that_does_not_close_is_a_warning():
    """The seed pendulum (undamped generalized-α, index 3) in one step of h = 5 s to
    t = 2 s gains some 9.7 J from −4.25 J: "completed with warnings" naming the energy
    balance, where it used to say "completed"; at its own step it completes. (The
    default for this method, stabilized index 2, keeps the energy to 1 % even there.)"""
    from pathlib import Path

    from flexmbs.cases import load_case, run_case
    from flexmbs.errors import AccuracyWarning

    case_file = Path(__file__).resolve().parents[1] / "cases" / "seed_pendulum.toml"
    with pytest.warns(AccuracyWarning, match="weakly unstable"):
        coarse = run_case(load_case(case_file, {"solver.h": 5.0,
                                                "solver.formulation": "index-3"}))[1]
    assert coarse.success and coarse.status == "completed with warnings"
    energy = [w for w in coarse.warnings if w["code"] == "energy"]
    assert len(energy) == 1 and energy[0]["value"] > 1.0
    assert "gained" in energy[0]["message"]
    fine = run_case(load_case(case_file))[1]
    assert fine.status == "completed", fine.warnings


@settings(max_examples=30, deadline=None)
@given(scale=st.floats(1e-3, 1e3), residual=st.floats(-2.0, 2.0))
def test_the_energy_check_flags_exactly_the_residuals_above_the_limit(scale, residual):
    """Synthetic histories: E(t) − E(0) − W(t) = residual·scale·s(t) with s from 0 to
    1, kinetic energy = scale: the warning appears iff |residual| > energy_warn."""
    n = 11
    s = np.linspace(0.0, 1.0, n)
    work = scale * s
    energy = -scale + work + residual * scale * s
    warns = run_warnings([], np.linspace(0, 1, n), np.zeros((n, 0)), np.zeros((n, 0)),
                         energy, work, np.full(n, scale), RangeLimits())
    flagged = bool(warns)
    assert flagged == (abs(residual) > 0.05) or abs(abs(residual) - 0.05) < 1e-9


def test_range_limits_are_validated():
    with pytest.raises(ValidationError, match="deflection_warn"):
        RangeLimits(deflection_warn=-1)
    with pytest.raises(ValidationError, match="unknown key"):
        simulate(pendulum(), 0.01, 1e-3, range_limits={"deflection": 0.2})
    result = simulate(pendulum(), 0.01, 1e-3, range_limits={"energy_warn": 0.2})
    assert result.status == "completed"


def test_status_and_warnings_are_saved_and_reach_the_command_line(tmp_path, capsys):
    """`flexmbs run` exits 3 on "completed with warnings" and lists them; the results
    file and --json carry the status and the warnings."""
    import json
    from pathlib import Path

    case = Path(__file__).resolve().parents[1] / "cases" / "arm_beam_seed.toml"
    out = tmp_path / "arm.res.h5"
    code = cli_main(["run", str(case), "-o", str(out), "--quiet", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 3 and summary["exit_code"] == 3
    assert summary["status"] == "completed with warnings"
    assert {w["code"] for w in summary["warnings"]} >= {"deflection"}
    from flexmbs.integrators import SimulationResult

    saved = SimulationResult.load(out)
    assert saved.status == "completed with warnings"
    assert saved.warnings == summary["warnings"]


def pendulum_with(actuator=None, drive_profile=None):
    """The test pendulum with a joint actuator callable, or a rotation drive profile."""
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_rigid_body("bob", 1.0, [1e-3, 1e-3, 1e-3], position=(1.0, 0.0, 0.0))
    b.add_marker("ground", "O")
    b.add_marker("bob", "pivot", (-1.0, 0.0, 0.0))
    b.add_revolute("pin", "ground.O", "bob.pivot")
    if actuator is not None:
        b.add_joint_actuator("controller", "ground.O", "bob.pivot", actuator)
    if drive_profile is not None:
        b.add_drive("motor", "rotation", drive_profile, marker_i="ground.O",
                    marker_j="bob.pivot")
    return System(b.finalize())


def test_a_raising_controller_keeps_the_run_so_far():
    """A controller callable that raises at t > 0.05 s: the run stops there as failed,
    names the exception, and keeps the 50 steps before it."""
    def controller(t, state):
        if t > 0.05:
            raise RuntimeError("sensor lost")
        return -1.0 * state.value

    result = simulate(pendulum_with(actuator=controller), 0.2, 1e-3)
    assert result.status == "failed" and not result.success
    assert "RuntimeError: sensor lost" in result.message
    assert 0.049 < result.t[-1] <= 0.051
    assert result.q.shape[0] == result.t.size


def test_a_nan_drive_profile_keeps_the_run_so_far():
    from flexmbs.model.drives import UserProfile

    profile = UserProfile(lambda t: 0.1 * t if t < 0.03 else float("nan"),
                          lambda t: 0.1, lambda t: 0.0)
    result = simulate(pendulum_with(drive_profile=profile), 0.1, 1e-3)
    assert result.status == "failed"
    assert "motor" in result.message
    assert 0.028 < result.t[-1] < 0.031


def test_an_interrupted_run_keeps_its_results_and_says_so(tmp_path):
    """Ctrl-C (KeyboardInterrupt) during the run, here raised by the progress callback
    (called after every step, or every batch of steps): status "interrupted", the steps
    so far kept and savable."""
    def progress(t, t_end):
        if t > 0.02:
            raise KeyboardInterrupt

    result = simulate(pendulum_with(), 0.2, 1e-3, progress=progress)
    assert result.status == "interrupted" and "Ctrl-C" in result.message
    # the first progress report after t = 0.02 s: a batch takes at most 1 / (1 + TAIL)
    # of the 199 steps before the last (at least step_batch.BATCH), so the 200-step run
    # stops by t = 0.153 s
    most = 199 / (1 + step_batch.TAIL)
    assert 0.02 < result.t[-1] <= 1e-3 * max(step_batch.BATCH, most) + 1e-12
    path = tmp_path / "cut.res.h5"
    result.save(path)
    assert SimulationResult.load(path).status == "interrupted"



def test_floating_point_warnings_in_the_steps_are_gathered_into_one_run_warning():
    """A callable that raises NumPy's "invalid value" at every call: one "numerical"
    run warning with the count and the first time, instead of one line per call; a
    warning of another kind still reaches the caller."""
    import warnings

    from flexmbs.errors import AccuracyWarning

    calls = []

    def torque(t, state):
        calls.append(t)
        np.sqrt(np.float64(-1.0))  # RuntimeWarning: invalid value encountered in sqrt
        if len(calls) == 1:
            warnings.warn("a user's own note", UserWarning, stacklevel=1)
        return 0.0

    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_rigid_body("bob", 1.0, [1e-3, 1e-3, 1e-3], position=(1.0, 0.0, 0.0))
    b.add_marker("ground", "O", orientation=[0, 0, 1])
    b.add_marker("bob", "pivot", (-1.0, 0.0, 0.0), orientation=[0, 0, 1])
    b.add_revolute("pin", "ground.O", "bob.pivot")
    b.add_joint_actuator("motor", "ground.O", "bob.pivot", torque)
    system = System(b.finalize())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = simulate(system, 0.05, 1e-2, "generalized-alpha", rho_inf=0.8)
    assert result.status == "completed with warnings"
    numerical = [w for w in result.warnings if w["code"] == "numerical"]
    assert len(numerical) == 1
    # the calls in the steps and the outputs counted (not the consistent start's)
    assert 0 < numerical[0]["value"] <= len(calls)
    assert numerical[0]["time"] == pytest.approx(0.01)
    assert "invalid value encountered in sqrt" in numerical[0]["message"]
    categories = [w.category for w in caught]
    # only the consistent initial state, computed before the run, forwards its own
    assert categories.count(RuntimeWarning) <= 1 and UserWarning in categories
    assert AccuracyWarning not in categories


class _Modes:
    """A stand-in flexible body: random mode shapes over ``n_nodes`` nodes."""

    def __init__(self, rng, n_nodes, n_modes):
        from types import SimpleNamespace

        self.name, self.n_modes, self.stiffening = "b", n_modes, False
        nodes, phi = rng.normal(size=(n_nodes, 3)), rng.normal(size=(3 * n_nodes, n_modes))
        peaks = np.array([max(np.linalg.norm(phi[3 * k:3 * k + 3, m]) for k in range(n_nodes))
                          for m in range(n_modes)])  # (ModalData.nodal_peaks, by hand)
        self.data = SimpleNamespace(nodes=nodes, phi=phi,
                                    frequencies=np.arange(1.0, n_modes + 1),
                                    nodal_peaks=(float(np.ptp(nodes, axis=0).max()), peaks))


def test_the_nodal_peaks_are_computed_once_per_modal_data():
    """ModalData.nodal_peaks: the nodes' largest extent and each mode's largest nodal
    translation (node by node here), computed on first use and then shared by every run
    on that data (the run checks' set-up no longer grows with the node count)."""
    from pathlib import Path

    from flexmbs.modal import read_modal

    data = read_modal(Path(__file__).resolve().parents[1] / "modal_data"
                      / "arm_steel_beam.fmd.h5")
    size, peaks = data.nodal_peaks
    nodes, phi = np.asarray(data.nodes), np.asarray(data.phi)
    assert size == pytest.approx(float(np.ptp(nodes, axis=0).max()), rel=0, abs=0)
    by_node = [[np.linalg.norm(phi[3 * k:3 * k + 3, m]) for k in range(len(nodes))]
               for m in range(data.n_modes)]
    np.testing.assert_allclose(peaks, np.max(by_node, axis=1), rtol=1e-15)
    assert data.nodal_peaks[1] is peaks and not peaks.flags.writeable


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_nodes=st.integers(1, 300), n_modes=st.integers(1, 8),
       n_t=st.integers(1, 80), level=st.floats(0.0, 1.5))
def test_the_bounded_deflection_peak_is_the_exact_one(seed, n_nodes, n_modes, n_t, level):
    """The peak deflection of the range checks, found from the modal bound with exact
    values only where it reaches the limit, equals the brute-force maximum over every
    node and output whenever that exceeds the limit (and is None otherwise); the bound
    is never below the exact value."""
    rng = np.random.default_rng(seed)
    body = BodyRange(_Modes(rng, n_nodes, n_modes), 0)
    xi = rng.normal(size=(n_t, n_modes)) * rng.uniform(0.01, 1.0, size=(n_t, 1))
    u = np.linalg.norm(np.einsum("scm,tm->tsc", body.rows, xi), axis=2).max(axis=1)
    assert np.all(body.bound(xi) >= u * (1 - 1e-12))
    limit = level * float(u.max())
    peak = body.peak(xi, limit)
    if u.max() > limit:
        k, value = peak
        assert value == pytest.approx(u.max(), rel=1e-12) and u[k] == pytest.approx(value)
        assert body.exceeds(xi[k], limit) == pytest.approx(value, rel=1e-12)
    else:
        assert peak is None and body.exceeds(xi[int(np.argmax(u))], limit) is None


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(1, 40), level=st.floats(0.2, 3.0),
       nan_row=st.integers(-1, 39))
def test_the_divergence_checks_over_rows_are_those_row_by_row(seed, n_rows, level, nan_row):
    """A batch checks its rows at once (first_divergence): the first row where the
    row-by-row divergence() finds the run diverged (a non-finite coordinate, or a body
    deflected beyond the stop), with the same reason, or None where it finds none."""
    rng = np.random.default_rng(seed)
    bodies = [BodyRange(_Modes(rng, 40, 3), 0), BodyRange(_Modes(rng, 30, 2), 10)]
    qs = rng.normal(size=(n_rows, 20)) * rng.uniform(0.01, level, size=(n_rows, 1))
    if 0 <= nan_row < n_rows:
        qs[nan_row, 5] = np.nan
    times = np.linspace(0.0, 1.0, n_rows)
    limits = RangeLimits(deflection_stop=1.5)
    expected = next(((j, r) for j in range(n_rows)
                     if (r := divergence(bodies, qs[j], float(times[j]), limits))), None)
    assert first_divergence(bodies, qs, times, limits) == expected
