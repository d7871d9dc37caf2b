"""Plot defaults that hold for many modes and long runs (flexmbs.post.plots), checked on
the drawn figures: legends of 2 and of 20 series inside the figure, log axes scaled by
the data when a value is exactly zero, readable per-step plots of long runs, and a
spectrum axis fitted to the content."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from flexmbs.post import plots
from flexmbs.results.steps import StepSummary


def _result(n_modes: int, n_t: int = 400, n_steps: int = 399):
    t = np.linspace(0.0, 2.0, n_t)
    xi = np.stack([np.sin((j + 1) * 3.0 * t) / (j + 1) ** 2 for j in range(n_modes)], 1)
    phi = np.abs(np.sin(12 * t)) * 1e-9
    phi[0] = 0.0  # exact zero at t0, as after assembly
    # steps of equal size (outputs on steps when n_t − 1 divides n_steps)
    steps, _ = StepSummary.from_steps(t, np.full(n_steps, 2.0 / n_steps),
                                      np.random.default_rng(0).integers(2, 6, n_steps))
    return SimpleNamespace(
        t=t, steps=steps,
        phi_violation=phi, velocity_violation=np.zeros(n_t) + 1e-12,
        modal_coordinates=lambda body: xi)


def _inside(fig) -> bool:
    """Every legend of ``fig`` lies within the figure once drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    box = fig.bbox
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is None:
            continue
        lb = leg.get_window_extent(renderer)
        if lb.x0 < box.x0 - 1 or lb.x1 > box.x1 + 1 or lb.y0 < box.y0 - 1 or lb.y1 > box.y1 + 1:
            return False
    return True


@pytest.mark.parametrize("n_modes", [2, 20])
def test_modal_plot_legend_stays_in_the_figure(n_modes):
    fig = plots.modal(_result(n_modes), "beam")
    leg = fig.axes[0].get_legend()
    assert len(leg.get_texts()) == n_modes
    assert _inside(fig)
    if n_modes == 20:  # outside the axes, in columns
        assert leg._ncols >= 2


def test_log_axis_of_the_constraint_plot_skips_exact_zeros():
    fig = plots.constraint_violation(_result(2))
    low, _ = fig.axes[0].get_ylim()
    assert fig.axes[0].get_yscale() == "log"
    assert low > 1e-20  # scaled by the data (≥ 1e-12 here), not by a floor near 1e-308


def test_iteration_plot_of_a_long_run_is_drawn_by_windows():
    # 10⁴ output intervals of 10 steps: merged into windows of intervals
    fig = plots.step_size(_result(2, n_t=10_001, n_steps=100_000))
    for ax in fig.axes:
        points = max(len(line.get_xdata()) for line in ax.get_lines())
        assert points <= plots.STEPS_DRAWN_UP_TO
    assert "mean" in [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert "window of" in fig.axes[0].get_ylabel()
    fig = plots.step_size(_result(2, n_t=101, n_steps=1000))  # intervals: mean and range
    assert len(fig.axes[1].get_lines()[0].get_xdata()) == 100
    assert "per output interval" in fig.axes[0].get_ylabel()
    fig = plots.step_size(_result(2, n_t=501, n_steps=500))  # an output at every step:
    assert fig.axes[1].get_lines()[0].get_linestyle() == "None"  # every step, as dots
    assert len(fig.axes[1].get_lines()[0].get_xdata()) == 500


def test_spectrum_axis_ends_near_the_content():
    t = np.linspace(0.0, 4.0, 4001)  # 1 kHz sampling: Nyquist 500 Hz
    fig = plots.spectrum(t, np.sin(2 * np.pi * 5.0 * t) + 0.2 * np.sin(2 * np.pi * 18.0 * t))
    _, high = fig.axes[0].get_xlim()
    assert 18.0 < high < 50.0
