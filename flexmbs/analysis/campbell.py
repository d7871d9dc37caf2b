"""Campbell diagrams: the eigenfrequencies of a model over the speeds of one of its drives,
with the modes tracked from speed to speed (docs/static_linear.md, "Campbell diagrams").

At each speed Ω the drive turns (or slides) at the constant rate Ω from t = 0 (its
profile replaced by Ω t), the model is linearized about that steady motion at t = 0
(:func:`flexmbs.analysis.linear.linearize`; a spin about a fixed axis first solved for
its steady state, :mod:`flexmbs.analysis.steady_spin`, and linearized in the chart that
turns with it) and its elastic modes are found
(:func:`flexmbs.analysis.linear.eigenmodes`). A mode at one speed is matched to the mode
at the next speed whose shape is most alike — the modal assurance criterion
MAC(a, b) = |aᴴb|² / (aᴴa · bᴴb), assigned one to one (linear_sum_assignment) — so that
each line of the diagram follows one physical mode through crossings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..errors import ValidationError
from ..model.drives import Polynomial
from .linear import eigenmodes, initial_state, linearize
from .steady_spin import drive_spin, steady_spin


@dataclass(frozen=True)
class CampbellResult:
    """``speeds`` (n_s,) [rad/s or m/s], tracked ``frequencies_hz`` and
    ``damping_ratios`` (n_s, n_m) (column j: one mode followed over the speeds), the
    smallest MAC of each step's matching (n_s − 1,), and each line's description at the
    first speed."""

    drive: str
    speeds: np.ndarray
    frequencies_hz: np.ndarray
    damping_ratios: np.ndarray
    mac_min: np.ndarray
    descriptions: list

    def rows(self) -> list[dict]:
        out = []
        for k, speed in enumerate(self.speeds):
            row = {"speed": float(speed)}
            for j in range(self.frequencies_hz.shape[1]):
                row[f"mode {j + 1} [Hz]"] = float(self.frequencies_hz[k, j])
            for j in range(self.damping_ratios.shape[1]):
                row[f"mode {j + 1} damping"] = float(self.damping_ratios[k, j])
            out.append(row)
        return out

    def figure(self, orders=(1, 2)):
        """The diagram: tracked frequencies against speed, with the excitation lines
        f = k Ω/2π of the given orders."""
        from ..post.plots import new_figure

        fig, axes = new_figure(1, width=7.0, row_height=4.0)
        ax = axes[0]
        for j in range(self.frequencies_hz.shape[1]):
            ax.plot(self.speeds, self.frequencies_hz[:, j], "o-", ms=3, lw=1.2,
                    label=f"mode {j + 1}")
        top = float(np.nanmax(self.frequencies_hz)) if self.frequencies_hz.size else 1.0
        for order in orders:
            ax.plot(self.speeds, order * self.speeds / (2 * np.pi), "k--", lw=0.8,
                    alpha=0.5, label=f"{order}P")
        ax.set_ylim(0, 1.1 * top)
        ax.set_xlabel(f"speed of drive {self.drive!r}")
        ax.set_ylabel("frequency [Hz]")
        ax.grid(True, alpha=0.3)
        from ..post.plots import legend

        legend(ax, len(ax.get_lines()))
        return fig


def _at_speed(system, drive: str, speed: float):
    from ..assembly import System

    specs = {d.name: d for d in system.model.drives}
    if drive not in specs:
        raise ValidationError(f"no drive {drive!r} in the model; drives: {sorted(specs)}")
    spec = specs[drive]
    if spec.kind == "coordinate":
        raise ValidationError(f"drive {drive!r} prescribes a coordinate; a Campbell "
                              f"diagram needs a rotation or translation drive")
    drives = tuple(replace(d, profile=Polynomial((0.0, float(speed)))) if d.name == drive
                   else d for d in system.model.drives)
    return System(replace(system.model, drives=drives), **system.overrides)


def _steady_modes(system, drive, speed, start=None):
    moving = _at_speed(system, drive, speed)
    state = initial_state(moving, 0.0, start)
    spin = drive_spin(moving, drive, speed, state[0])
    if spin is not None:  # the spin's own stretch and the loads it carries
        axis, origin = spin
        state = steady_spin(moving, state[0], state[3], axis, origin, speed)
        spin = (axis, speed)
    lin = linearize(moving, *state, 0.0, spin=spin)
    return lin, [m for m in eigenmodes(lin) if not m.rigid]


def mac(a: np.ndarray, b: np.ndarray) -> float:
    """Modal assurance criterion of two (complex) shapes, in [0, 1]."""
    num = abs(np.vdot(a, b)) ** 2
    den = np.vdot(a, a).real * np.vdot(b, b).real
    return float(num / den) if den > 0 else 0.0


#: Frequencies within this relative distance are one repeated eigenvalue (:func:`aligned`).
REPEATED_RTOL = 1e-6


def aligned(tracked, candidates) -> list:
    """``tracked`` (modes at one speed) with each group of repeated frequencies (within
    :data:`REPEATED_RTOL`) given, in the span of its shapes, the shapes of the
    ``candidates`` (the modes at the next speed) that lie most in that span, projected
    onto it (and normalized to max |δq| = 1, in the candidates' order). The basis of a
    repeated eigenvalue is arbitrary — it follows the eigensolver's round-off, the BLAS
    threads' order of sums included — and the modes that leave it (a crossing at rest)
    are those the next speed continues."""
    out, done = list(tracked), set()
    freqs = [m.frequency_hz for m in tracked]
    for i, f in enumerate(freqs):
        group = [j for j in range(i, len(tracked)) if j not in done
                 and abs(freqs[j] - f) <= REPEATED_RTOL * abs(f)]
        done.update(group)
        if len(group) < 2 or len(candidates) < len(group):
            continue
        basis, _ = np.linalg.qr(np.column_stack([tracked[j].shape for j in group]))
        parts = [basis @ (basis.conj().T @ c.shape) for c in candidates]
        share = [np.vdot(p, p).real / max(np.vdot(c.shape, c.shape).real, 1e-300)
                 for p, c in zip(parts, candidates, strict=True)]
        chosen = sorted(np.argsort(share)[::-1][:len(group)])
        for j, c in zip(group, chosen, strict=True):
            shape = parts[c]
            out[j] = replace(tracked[j], shape=shape / shape[np.argmax(np.abs(shape))])
    return out


def campbell(system, drive: str, speeds, n_modes: int = 8, *,
             from_equilibrium: bool = False) -> CampbellResult:
    """The Campbell diagram of ``system`` over the constant speeds of ``drive``
    (module docstring); the lowest ``n_modes`` elastic modes at the first speed are
    followed.

    ``from_equilibrium``: every speed starts from the static equilibrium of ``system``
    at t = 0 (:func:`~flexmbs.analysis.static.static_equilibrium`: gravity and constant
    loads, ``drive`` held where the diagram's motion Ω t starts and the other drives at
    their values there) instead of the case's initial state —
    the sag under gravity, as the time studies' ``--from-equilibrium`` — and the drive
    turns at each speed from there, the other coordinates at rest.

    A rotation drive whose marker i is on the ground, with gravity along its axis (or
    none), is a steady motion: at each speed the model's steady spin is solved for (the
    centrifugal stretch and the loads it carries, :mod:`~flexmbs.analysis.steady_spin`)
    and linearized in the frame that turns with it (:func:`~flexmbs.analysis.linear.
    rotating_chart`). Otherwise the initial state is linearized as it is."""
    speeds = np.asarray(speeds, dtype=float)
    if speeds.ndim != 1 or speeds.size == 0 or not np.all(np.isfinite(speeds)):
        raise ValidationError(f"speeds must be a list of finite numbers, got {speeds!r}")
    start = None
    if from_equilibrium:
        from .static import static_equilibrium

        start = static_equilibrium(_at_speed(system, drive, 0.0), 0.0).q
    lin, modes = _steady_modes(system, drive, speeds[0], start)
    tracked = modes[:n_modes]
    count = len(tracked)
    freqs = np.full((speeds.size, count), np.nan)
    damping = np.full((speeds.size, count), np.nan)
    freqs[0] = [m.frequency_hz for m in tracked]
    damping[0] = [m.damping_ratio for m in tracked]
    # the next speed's modes, with some room above for modes that cross in
    candidates = (_steady_modes(system, drive, speeds[1], start)[1][: count + 4]
                  if speeds.size > 1 else [])
    tracked = aligned(tracked, candidates)  # (described in the basis the lines continue)
    descriptions = [m.describe(lin.coord_names) for m in tracked]
    macs = []
    for k in range(1, speeds.size):
        if k > 1:
            candidates = _steady_modes(system, drive, speeds[k], start)[1][: count + 4]
            tracked = aligned(tracked, candidates)
        table = np.array([[mac(a.shape, b.shape) for b in candidates] for a in tracked])
        rows, cols = linear_sum_assignment(-table)
        macs.append(float(table[rows, cols].min()) if rows.size else 0.0)
        new = list(tracked)
        for r, c in zip(rows, cols, strict=True):
            new[r] = candidates[c]
            freqs[k, r] = candidates[c].frequency_hz
            damping[k, r] = candidates[c].damping_ratio
        tracked = new
    return CampbellResult(drive, speeds, freqs, damping, np.array(macs), descriptions)
