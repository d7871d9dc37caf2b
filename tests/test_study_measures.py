"""What the study tables and plots report: the dominant frequency of a tip's oscillation
(flexmbs.results.measures.dominant_frequency) against synthetic signals of known
frequency riding on a large drift and against the linearized frequency of the study
case, and the coupling plot's choice of the modal coordinate it draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.analysis import eigenmodes, linearize
from flexmbs.analysis.linear import initial_state
from flexmbs.cases import load_case
from flexmbs.cases.run import case_system
from flexmbs.results.measures import MIN_PERIODS, dominant_frequency
from flexmbs.studies import RunSignals, coupling_study, truncation_study
from flexmbs.studies.coupling import ROUND_OFF, RunComparison, dominant_mode
from flexmbs.studies.sweep import RunRecord

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "cases" / "arm_beam_seed.toml"


def _move(t, amplitude):
    """A quintic move over the whole record plus a parabola: a smooth drift, like the
    quasi-static deflection that follows an arm's motion."""
    s = (t - t[0]) / (t[-1] - t[0])
    return amplitude * (10 * s**3 - 15 * s**4 + 6 * s**5 + 0.3 * s**2)


@settings(max_examples=40, deadline=None)
@given(periods=st.floats(6.0, 300.0), drift=st.floats(0.0, 100.0),
       phase=st.floats(0.0, 6.3), duration=st.floats(0.5, 3.0))
def test_dominant_frequency_of_an_oscillation_on_a_large_drift(periods, drift, phase,
                                                               duration):
    """A sine of known frequency f₀ (6 to 300 periods in the record, at least 20
    samples per period of its harmonic) on a slow drift up to 100 times its amplitude,
    with a weaker second line at 2.3 f₀: the result is f₀ within 0.2 % (a fiftieth of
    a bin)."""
    f0 = periods / duration
    n = int(max(1000, 20 * periods * 2.3)) + 1
    t = np.linspace(0.0, duration, n)
    x = (np.sin(2 * np.pi * f0 * t + phase) + 0.3 * np.sin(2 * np.pi * 2.3 * f0 * t)
         + _move(t, drift))
    assert dominant_frequency(t, x) == pytest.approx(f0, rel=2e-3)


@settings(max_examples=15, deadline=None)
@given(periods=st.floats(20.0, 300.0), phase=st.floats(0.0, 6.3))
def test_dominant_frequency_under_a_drift_a_thousand_times_larger(periods, phase):
    t = np.linspace(0.0, 1.0, int(20 * periods) + 1)
    x = np.sin(2 * np.pi * periods * t + phase) + _move(t, 1000.0)
    assert dominant_frequency(t, x) == pytest.approx(periods, rel=2e-3)


def test_the_old_filtering_artefact_is_gone():
    """10.5 Hz over 1.5 s on a drift: the lower end of the old search band (21 bins,
    13.99 Hz) is not the answer, and a drift alone has no dominant frequency."""
    t = np.linspace(0.0, 1.5, 1501)
    x = 1e-3 * np.sin(2 * np.pi * 10.5 * t) + _move(t, 0.05)
    assert dominant_frequency(t, x) == pytest.approx(10.5, rel=1e-3)
    for drift in (_move(t, 0.05), 1.0 - np.exp(-3 * t), np.cos(np.pi * t / 1.5),
                  np.sqrt(t + 0.01)):
        assert np.isnan(dominant_frequency(t, drift))
    assert dominant_frequency(t, np.zeros_like(t)) == 0.0
    # a vibration of fewer periods than MIN_PERIODS cannot be told from the drift
    slow = 0.8 * MIN_PERIODS / 1.5
    assert np.isnan(dominant_frequency(t, np.sin(2 * np.pi * slow * t) + _move(t, 5.0)))


def _linear_frequency(modes: int) -> float:
    """First elastic natural frequency [Hz] of the seed arm with ``modes`` beam modes,
    linearized about its initial state (flexmbs linear --at initial)."""
    system = case_system(load_case(SEED, {"bodies.beam.modes": modes}))
    found = eigenmodes(linearize(system, *initial_state(system)))
    return min(m.frequency_hz for m in found if m.frequency_hz > 1.0)


def test_truncation_table_reports_the_coupled_beam_frequency():
    """The seed arm over 1.5 s gave "13.99 Hz" (the first line the old search looked
    at); its tip vibrates at the coupled arm–beam frequency, 10.73 Hz with both modes
    and 10.88 Hz with one, linearized at the start (the arm's pose changes during the
    run: 3 %)."""
    study = truncation_study(SEED, [1, 2], overrides={"solver.t_end": 1.5}, workers=1)
    for row in study.rows():
        assert row["tip dominant frequency [Hz]"] == pytest.approx(
            _linear_frequency(row["modes"]), rel=0.03)


def _signals(xi, size=0.5, shape_peak=None):
    xi = np.asarray(xi, float)
    t = np.linspace(0.0, 1.0, xi.shape[0])
    shape_peak = np.ones(xi.shape[1]) if shape_peak is None else np.asarray(shape_peak)
    tip = np.column_stack([np.zeros_like(t), xi @ shape_peak, np.zeros_like(t)])
    return RunSignals(t=t, modal={"beam": xi}, tip={"beam": tip}, tip_node={"beam": 3},
                      size={"beam": size}, shape_peak={"beam": shape_peak},
                      joint_angles={}, energy_error=np.zeros_like(t))


def _comparison(runs):
    records = {label: RunRecord(label, {}, True, "", signals=sig)
               for label, sig in runs.items()}
    return RunComparison("arm.toml", records, "two-way", "coupling", "coupling study")


def test_the_plot_draws_the_mode_with_the_largest_peak():
    t = np.linspace(0.0, 1.0, 50)
    noise = 1e-13 * np.sin(40 * t)
    real = 2e-3 * np.sin(7 * t)
    runs = {"two-way": _signals(np.column_stack([noise, real, 0.1 * real])),
            "one-way": _signals(np.column_stack([2 * noise, 1.5 * real, 0.2 * real]))}
    assert dominant_mode(runs.values(), "beam")[:2] == (1, pytest.approx(3e-3, rel=1e-3))
    fig = _comparison(runs).figure()
    assert fig.axes[1].get_ylabel() == "beam ξ₂ [shape units]"
    assert not fig.axes[1].texts
    np.testing.assert_allclose(fig.axes[1].get_lines()[1].get_ydata(), 1.5 * real)


def test_the_plot_says_when_every_modal_amplitude_is_round_off():
    """1e-13 in ξ of a 0.5 m body with unit shapes is 2e-13 of its size: round-off."""
    t = np.linspace(0.0, 1.0, 50)
    runs = {"two-way": _signals(np.column_stack([1e-13 * np.sin(40 * t),
                                                 3e-14 * np.cos(9 * t)]))}
    j, largest, noise = dominant_mode(runs.values(), "beam")
    assert (j, noise) == (0, True) and largest == pytest.approx(1e-13, rel=1e-3)
    text = _comparison(runs).figure().axes[1].texts[0].get_text()
    assert "every modal amplitude of beam is at round-off" in text
    # the threshold is ROUND_OFF of the body's size: just above it is a response
    big = _signals(np.column_stack([2.0 * ROUND_OFF * 0.5 * np.sin(40 * t)]))
    assert dominant_mode([big], "beam")[2] is False


def test_a_study_where_nothing_deforms_says_so():
    """The seed arm without its torque: nothing moves, every ξ stays exactly zero."""
    study = coupling_study(SEED, modes=("rigid",), workers=1,
                           overrides={"forces.tau1.value": 0.0, "solver.t_end": 0.02})
    assert dominant_mode([r.signals for r in study.records.values()], "beam")[2]
    assert "round-off" in study.figure().axes[1].texts[0].get_text()
