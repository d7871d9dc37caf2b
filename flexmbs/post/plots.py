"""Plots with matplotlib's object API (no global pyplot state; renders without a screen).

Every function takes or returns a :class:`matplotlib.figure.Figure`; :func:`save_figure`
writes PNG or SVG by the file suffix. Axis labels carry their units, e.g.
``"tip deflection [mm]"``, so tests can read them back from the figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .._files import atomic_path
from ..errors import ValidationError, WriteError
from ..results.histories import tip_history
from ..results.measures import amplitude_spectrum

FORMATS = (".png", ".svg")
#: Legends of more series than this go outside the axes, in columns of at most
#: :data:`LEGEND_ROWS` entries.
LEGEND_INSIDE_UP_TO = 6
LEGEND_ROWS = 10
#: Step plots of more output intervals than this merge them into windows.
STEPS_DRAWN_UP_TO = 2000


def new_figure(n_rows: int = 1, n_cols: int = 1, *, width: float = 7.0,
               row_height: float = 2.6, sharex: bool = True):
    """(Figure, list of Axes) with ``n_rows`` x ``n_cols`` panels."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, row_height * n_rows + 0.6), layout="constrained")
    axes = fig.subplots(n_rows, n_cols, sharex=sharex, squeeze=False)
    return fig, list(axes.ravel())


def time_history(ax, t, series: Mapping[str, np.ndarray], ylabel: str, *,
                 title: str | None = None, xlabel: str = "time [s]", styles=None) -> None:
    """One line per entry of ``series`` (label → values), legend if > 1.

    ``t`` is one time array shared by all series, or a list/tuple with one per series."""
    for k, (label, values) in enumerate(series.items()):
        style = dict((styles or {}).get(label, {}))
        if k >= 10:  # the colour cycle has 10 colours: later series dashed, then dotted
            style.setdefault("linestyle", ("--", ":")[min(k // 10 - 1, 1)])
        ax.plot(t[k] if isinstance(t, (list, tuple)) else t, values, label=label, lw=1.2,
                **style)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(xlabel)
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    if len(series) > 1:
        legend(ax, len(series))


def legend(ax, n: int) -> None:
    """A legend inside the axes for a few series, outside to the right in columns of
    at most :data:`LEGEND_ROWS` entries for many (20 modal coordinates stay readable)."""
    if n <= LEGEND_INSIDE_UP_TO:
        ax.legend(fontsize=8, loc="best")
        return
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              ncols=int(np.ceil(n / LEGEND_ROWS)), frameon=False)


def positive_only(values) -> np.ndarray:
    """Values for a log axis: exact zeros and negatives become gaps (NaN), so that the
    axis is scaled by the data rather than by a floor near 1e-308."""
    out = np.asarray(values, dtype=float).copy()
    out[~(out > 0)] = np.nan
    return out


def convergence(ax, x, series: Mapping[str, np.ndarray], xlabel: str, ylabel: str, *,
                title: str | None = None) -> None:
    """Log-log markers-and-lines plot of errors against a level (zeros are left out)."""
    x = np.asarray(x, dtype=float)
    for label, values in series.items():
        y = np.asarray(values, dtype=float)
        keep = y > 0
        ax.loglog(x[keep], y[keep], "o-", label=label, lw=1.2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8)


def save_figure(fig, path) -> Path:
    """Write ``fig`` as PNG or SVG (by suffix); returns the path."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise WriteError(f"cannot write plot {str(path)!r}: use a {' or '.join(FORMATS)} "
                         "file name")
    if not path.parent.is_dir():
        raise WriteError(f"cannot write plot {str(path)!r}: folder does not exist")
    with atomic_path(path, "plot") as tmp:
        fig.savefig(tmp, dpi=120, format=path.suffix[1:].lower())
    return path


# ----------------------------------------------------------------------------- results
def coordinates(result, names) -> object:
    """Time histories of the named coordinates (``"link1.x"``, ``"beam.xi1"``): one panel
    per kind (positions [m], Euler parameters [-], modal [-])."""
    names = list(names)
    unknown = [n for n in names if n not in result.coord_names]
    if not names or unknown:
        raise ValidationError(f"unknown coordinate(s) {unknown or names}; the result has "
                              f"{list(result.coord_names)[:12]}...")
    groups: dict[str, dict] = {}
    for name in names:
        kind = name.rsplit(".", 1)[1]
        label = ("position [m]" if kind in ("x", "y", "z") else
                 "Euler parameter [-]" if kind.startswith("e") else "modal coordinate [-]")
        groups.setdefault(label, {})[name] = result.coordinate(name)
    fig, axes = new_figure(len(groups))
    for ax, (label, series) in zip(axes, groups.items(), strict=True):
        time_history(ax, result.t, series, label)
    return fig


def sensors(result, names) -> object:
    """Histories of the named sensors: one panel per unit, each component a line
    labelled ``sensor.component``."""
    names = list(names)
    for name in names:
        result.sensor(name)  # ValidationError naming an unknown sensor
    groups: dict[str, dict] = {}
    for name in names:
        rec = result.sensors[name]
        values = np.asarray(rec["values"])
        for c, comp in enumerate(rec["components"]):
            label = name if len(rec["components"]) == 1 else f"{name}.{comp}"
            groups.setdefault(f"[{rec['units']}]", {})[label] = values[:, c]
    fig, axes = new_figure(len(groups))
    for ax, (label, series) in zip(axes, groups.items(), strict=True):
        time_history(ax, result.t, series, f"sensors {label}")
    return fig


def modal(result, body: str):
    """ξ_j(t) of every mode of flexible body ``body``."""
    xi = result.modal_coordinates(body)
    fig, axes = new_figure(1)
    time_history(axes[0], result.t, {f"ξ{j + 1}": xi[:, j] for j in range(xi.shape[1])},
                 f"{body} modal coordinates [-]")
    return fig


def tip_deflection(result, body: str, node: int | None = None):
    """Elastic displacement of the tip node (farthest from the frame origin, or ``node``
    index) in body axes, components and magnitude [mm]."""
    tip, k = tip_history(result, body, node)
    labels = result.bodies[body].get("node_ids")
    label = int(labels[k]) if labels is not None and len(labels) > k else k
    fig, axes = new_figure(1)
    series = {f"u{c} (body axes)": 1e3 * tip[:, i] for i, c in enumerate("xyz")}
    series["|u|"] = 1e3 * np.linalg.norm(tip, axis=1)
    time_history(axes[0], result.t, series, f"{body} node {label} deflection [mm]")
    return fig


def energy(result):
    """Kinetic, potential (of which elastic), non-conservative work W and the balance
    residual T + V − W − E₀ [J]."""
    fig, axes = new_figure(2)
    e0 = result.kinetic[0] + result.potential[0]
    time_history(axes[0], result.t, {"kinetic T": result.kinetic,
                                     "potential V": result.potential,
                                     "elastic (in V)": result.elastic,
                                     "work W (non-conservative)": result.nonconservative_work},
                 "energy [J]")
    time_history(axes[1], result.t,
                 {"T + V − W − E₀": result.kinetic + result.potential
                  - result.nonconservative_work - e0}, "energy balance residual [J]")
    return fig


def constraint_violation(result):
    """max |Φ| and max |Φ_q q̇ − ν| over time (log scale)."""
    fig, axes = new_figure(1)
    series = {"position max |Φ|": positive_only(result.phi_violation),
              "velocity max |Φ_q q̇ − ν|": positive_only(result.velocity_violation)}
    time_history(axes[0], result.t, series, "constraint violation [m, rad; m/s, rad/s]")
    if any(np.any(np.isfinite(v)) for v in series.values()):
        axes[0].set_yscale("log")  # exact zeros (e.g. at t0) are gaps, not 1e-308
    return fig


def step_size(result):
    """Step size h [s] and Newton iterations per step against time, per output interval
    (``result.steps``, :class:`~flexmbs.results.steps.StepSummary`): with an output at
    every step, each step (iterations as dots); otherwise the mean h of each interval
    with its smallest–largest band, and the mean and most iterations per step. More
    than :data:`STEPS_DRAWN_UP_TO` intervals are merged into windows of intervals."""
    fig, axes = new_figure(2)
    steps, t = result.steps, np.asarray(result.t, float)
    window = 1
    if len(steps) > STEPS_DRAWN_UP_TO:  # windows of intervals: a readable plot
        window = int(np.ceil(len(steps) / (STEPS_DRAWN_UP_TO // 2)))
        ends = np.minimum(np.arange(window - 1, len(steps) + window - 1, window),
                          len(steps) - 1)
        steps, t = steps.coarsened(window), t[ends]
    some = steps.count > 0
    t, per_step = t[some], steps.per_step[some]
    if window == 1 and np.all(steps.count[some] == 1):  # every step is an output
        time_history(axes[0], t, {"h": steps.h_mean[some]}, "step size [s]")
        axes[1].plot(t, per_step, ".", ms=3, label="iterations")
    else:
        what = "output interval" if window == 1 else f"window of {window} output intervals"
        time_history(axes[0], t, {"mean h": steps.h_mean[some]},
                     f"step size [s] per {what}")
        axes[0].fill_between(t, steps.h_min[some], steps.h_max[some], alpha=0.25, lw=0,
                             label="smallest–largest h")
        axes[0].legend(fontsize=8, loc="best")
        axes[1].plot(t, steps.iterations_max[some], lw=0.8, ls="--", label="most in a step")
        axes[1].plot(t, per_step, lw=1.2, label="mean")
        axes[1].legend(fontsize=8, loc="best")
    axes[1].set_ylabel("Newton iterations per step [-]")
    axes[1].set_xlabel("time [s]")
    axes[1].grid(True, alpha=0.3)
    top = max(float(np.max(steps.iterations_max[some])) if some.any() else 1.0, 1.0)
    axes[1].set_ylim(0, top + 1)
    return fig


def content_range(freqs, amp, share: float = 1e-3) -> float:
    """Upper end of a spectrum's axis [Hz]: 1.5 times the highest frequency whose
    amplitude exceeds ``share`` of the peak (at least 5 frequency bins), so the axis
    shows the content rather than everything up to the Nyquist frequency."""
    freqs, amp = np.asarray(freqs, float), np.asarray(amp, float)
    if freqs.size < 2 or not np.any(amp > 0):
        return float(freqs[-1]) if freqs.size else 1.0
    above = np.flatnonzero(amp > share * np.max(amp))
    return float(min(freqs[-1], max(1.5 * freqs[above[-1]], 5 * freqs[1])))


def spectrum(t, signal, *, label: str = "signal", unit: str = "-"):
    """Amplitude spectrum of a signal sampled at times ``t`` (resampled uniformly, mean
    removed, Hann window; amplitude corrected for the window): the figure of
    :func:`~flexmbs.results.measures.amplitude_spectrum`."""
    freqs, amp = amplitude_spectrum(t, signal)  # ValidationError below 4 samples
    fig, axes = new_figure(1, sharex=False)
    axes[0].plot(freqs, amp, lw=1.2, label=label)
    axes[0].set_xlim(0.0, content_range(freqs, amp))
    axes[0].set_xlabel("frequency [Hz]")
    axes[0].set_ylabel(f"{label} amplitude [{unit}]")
    axes[0].grid(True, alpha=0.3)
    return fig
