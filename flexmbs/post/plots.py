"""Plots with matplotlib's object API (no global pyplot state; renders without a screen).

Every function takes or returns a :class:`matplotlib.figure.Figure`; :func:`save_figure`
writes PNG or SVG by the file suffix. Axis labels carry their units, e.g.
``"tip deflection [mm]"``, so tests can read them back from the figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..errors import WriteError

FORMATS = (".png", ".svg")


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
        style = (styles or {}).get(label, {})
        ax.plot(t[k] if isinstance(t, (list, tuple)) else t, values, label=label, lw=1.2,
                **style)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(xlabel)
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8, loc="best")


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
    fig.savefig(path, dpi=120)
    return path
