"""Coupling study: one case run two-way, one-way, no-Mrf and rigid (docs/theory_ffrf.md §9), and the
differences of each against two-way; a case with geometrically stiffened bodies also runs
two-way without stiffening (docs/theory_stiffening.md), so the table shows what the
stiffening changes.

Per mode: peak and RMS of every modal coordinate, peak and RMS tip deflection, the final
angle of every revolute joint and its largest deviation from the two-way run, the change
of the peak of ξ₁ against two-way, the energy-balance residual and the run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._files import write_text
from ..results.measures import norm_rows, peak, principal_direction, rms
from .sweep import sweep
from .tables import to_markdown, write_csv

MODES = ("two-way", "one-way", "no-Mrf", "rigid")
REFERENCE = "two-way"


@dataclass
class RunComparison:
    """Runs of one case (label → :class:`RunRecord`) tabulated side by side, with
    differences against the run labelled ``reference`` (none if it is None)."""

    case: str
    records: dict
    reference: str | None = None
    label_column: str = "run"
    title: str = "runs"
    from_equilibrium: bool = False
    """Whether every run started at rest in the static equilibrium of its own variant."""

    def rows(self) -> list[dict]:
        """One row per run; lengths in mm, angles in rad, times in s."""
        ref_rec = self.records.get(self.reference) if self.reference else None
        ref = ref_rec.signals if ref_rec is not None and ref_rec.success else None
        vs = f"vs {self.reference}"
        out = []
        for mode, rec in self.records.items():
            row: dict = {self.label_column: mode, "success": rec.success}
            row["status"] = rec.status or "failed"
            if not rec.success:  # also for runs that stopped partway
                row["message"] = rec.message
            elif rec.warnings:  # completed, outside the model's range: the checks' codes
                row["warnings"] = ", ".join(f"{w['code']} ({w['subject']})"
                                            for w in rec.warnings)
            sig = rec.signals
            if sig is None:
                out.append(row)
                continue
            for body, xi in sig.modal.items():
                for j in range(xi.shape[1]):
                    row[f"{body}.xi{j + 1} peak"] = peak(xi[:, j])
                    row[f"{body}.xi{j + 1} RMS"] = float(rms(xi[:, j]))
                    if ref is not None and body in ref.modal and j > 0:
                        p_ref = peak(ref.modal[body][:, j])
                        row[f"{body}.xi{j + 1} peak change {vs} [%]"] = (
                            100.0 * (peak(xi[:, j]) - p_ref) / p_ref if p_ref > 0
                            else float("nan"))
                row[f"{body} tip peak [mm]"] = 1e3 * peak(norm_rows(sig.tip[body]))
                row[f"{body} tip RMS [mm]"] = 1e3 * float(rms(norm_rows(sig.tip[body])))
                if ref is not None and body in ref.modal:
                    p_ref = peak(ref.modal[body][:, 0])
                    row[f"{body}.xi1 peak change {vs} [%]"] = (
                        100.0 * (peak(xi[:, 0]) - p_ref) / p_ref if p_ref > 0 else float("nan"))
                    diff = sig.tip[body] - _on_grid(ref.t, sig.t, ref.tip[body])
                    row[f"{body} tip max diff {vs} [mm]"] = 1e3 * peak(norm_rows(diff))
            for joint, angle in sig.joint_angles.items():
                row[f"{joint} final [rad]"] = float(angle[-1])
                row[f"{joint} peak change [rad]"] = peak(angle - angle[0])
                row[f"{joint} RMS change [rad]"] = float(rms(angle - angle[0]))
                if ref is not None and joint in ref.joint_angles:
                    row[f"{joint} max diff {vs} [rad]"] = peak(
                        angle - _on_grid(ref.t, sig.t, ref.joint_angles[joint]))
            row["energy balance max error [J]"] = peak(sig.energy_error)
            row["run time [s]"] = rec.wall_time
            row["CPU time [s]"] = rec.cpu_time
            row["steps"] = rec.steps
            row["Newton iterations/step"] = rec.newton_mean
            out.append(row)
        return out

    def columns(self) -> list[str]:
        keys: list[str] = []
        for row in self.rows():
            keys += [k for k in row if k not in keys]
        return keys

    def to_markdown(self) -> str:
        return to_markdown(self.rows(), self.columns())

    def write(self, folder, stem: str | None = None) -> dict[str, Path]:
        """CSV, Markdown and PNG of the study in ``folder``; returns the paths."""
        from ..post.plots import save_figure

        stem = stem or self.label_column
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = {"csv": write_csv(self.rows(), folder / f"{stem}.csv", self.columns())}
        md = folder / f"{stem}.md"
        write_text(md, f"# {self.title}: {Path(self.case).name}\n\n{start_note(self)}\n\n"
                   + self.to_markdown(), "table")
        paths["markdown"] = md
        if any(r.signals is not None for r in self.records.values()):
            paths["png"] = save_figure(self.figure(), folder / f"{stem}.png")
        return paths

    def figure(self):
        """Tip deflection, the dominant modal coordinate (:func:`dominant_mode`) and the
        first joint angle of every run against time; a body whose modal amplitudes are
        all at round-off says so in its panel."""
        from ..post.plots import new_figure, time_history

        ok = {m: r.signals for m, r in self.records.items() if r.signals is not None}
        if not ok:
            from ..errors import ValidationError

            raise ValidationError(f"{self.title}: no run produced results to plot "
                                  f"({'; '.join(str(r.message) for r in self.records.values())})")
        first = next(iter(ok.values()))
        bodies = list(first.modal)
        joints = list(first.joint_angles)
        panels = 2 * len(bodies) + (1 if joints else 0)
        fig, axes = new_figure(max(panels, 1))
        k = 0
        for body in bodies:
            direction = principal_direction(ok[self.reference].tip[body]
                                             if self.reference in ok else first.tip[body])
            time_history(axes[k], [s.t for s in ok.values()],
                         {m: 1e3 * s.tip[body] @ direction for m, s in ok.items()},
                         f"{body} tip deflection [mm]",
                         title=f"tip deflection of {body} (along its main direction)")
            j, largest, noise = dominant_mode(ok.values(), body)
            time_history(axes[k + 1], [s.t for s in ok.values()],
                         {m: s.modal[body][:, j] for m, s in ok.items()},
                         f"{body} ξ{_subscript(j + 1)} [shape units]",
                         title=f"ξ{_subscript(j + 1)} of {body}" + (
                             "" if noise else ": the mode with the largest peak over the "
                                              "runs"))
            if noise:
                axes[k + 1].text(
                    0.5, 0.5, f"every modal amplitude of {body} is at round-off\n"
                    f"(largest |ξ| {largest:.2g}; no displacement reaches "
                    f"{ROUND_OFF:g} of its size):\nno elastic response in these runs",
                    transform=axes[k + 1].transAxes, ha="center", va="center",
                    fontsize=9, bbox={"facecolor": "white", "alpha": 0.85,
                                      "edgecolor": "#888888"})
            k += 2
        for joint in joints[:1] if joints else []:
            time_history(axes[k], [s.t for s in ok.values()],
                         {m: s.joint_angles[joint] for m, s in ok.items()},
                         f"{joint} angle [rad]")
        fig.suptitle(f"{self.title}: {Path(self.case).name}"
                     + (", from equilibrium" if self.from_equilibrium else ""), fontsize=11)
        return fig


#: A deflection below this fraction of a body's size is round-off and solver tolerance,
#: not a response (double precision resolves 1e-16 of a position; Newton tolerances
#: leave some 1e-12).
ROUND_OFF = 1e-10


def dominant_mode(signals, body: str) -> tuple[int, float, bool]:
    """(index j, largest |ξⱼ|, at round-off): the modal coordinate of ``body`` with the
    largest peak |ξⱼ| over all ``signals`` (the runs' RunSignals), and whether every
    modal amplitude of the body is at round-off: no mode's largest nodal displacement
    (|ξⱼ| times RunSignals.shape_peak) reaches :data:`ROUND_OFF` times the body's size
    (without those, the tip deflection against 1 m)."""
    signals = [s for s in signals if body in s.modal and s.modal[body].shape[1] > 0]
    if not signals:
        return 0, 0.0, True
    # runs may keep different numbers of modes (a sweep over a truncation key)
    each = [np.max(np.abs(s.modal[body]), axis=0, initial=0.0) for s in signals]
    peaks = np.zeros(max(p.size for p in each))
    for p in each:
        peaks[:p.size] = np.maximum(peaks[:p.size], p)
    j = int(np.argmax(peaks))
    if all(body in s.shape_peak and body in s.size for s in signals):
        displacement = max(float(np.max(p * s.shape_peak[body]))
                           for p, s in zip(each, signals, strict=True))
        size = max(s.size[body] for s in signals)
    else:  # signals from elsewhere: the tip only
        displacement = max(peak(norm_rows(s.tip[body])) for s in signals)
        size = 1.0
    return j, float(peaks[j]), bool(displacement <= ROUND_OFF * size)


def _subscript(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def start_note(study) -> str:
    """The sentence a study's Markdown file opens with: where its runs started."""
    if getattr(study, "from_equilibrium", False):
        return ("Every run starts at rest in the static equilibrium of its own variant "
                "(--from-equilibrium).")
    return "Every run starts from the case's initial state."


def _on_grid(t_from, t_to, values):
    """``values`` sampled at ``t_from`` interpolated onto ``t_to`` (any trailing shape)."""
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        return np.interp(t_to, t_from, values)
    return np.column_stack([np.interp(t_to, t_from, values[:, c])
                            for c in range(values.shape[1])])


def coupling_study(case_path, *, modes=MODES, overrides: dict | None = None,
                   **sweep_options) -> RunComparison:
    """Run ``case_path`` in each coupling mode (with extra ``overrides`` applied to all).

    ``sweep_options`` go to :func:`~flexmbs.studies.sweep.sweep` (workers, scheduler,
    progress, save_dir, from_equilibrium, resume). Two-way is always run: it is the
    reference.

    With ``from_equilibrium=True`` each mode's run starts at rest in the static
    equilibrium of that mode's own equations (one-way and rigid frames see the body
    undeformed; rigid has no sag), so that no run starts with a transient of its own
    and the differences are those of the response (docs/studies.md).
    """
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        from ..errors import ValidationError

        raise ValidationError(f"unknown coupling mode(s) {unknown}; use {list(MODES)}")
    _require_flexible_body(case_path, overrides)
    modes = list(dict.fromkeys([REFERENCE, *modes]))
    variants = [(m, {**(overrides or {}), "solver.coupling": m}) for m in modes]
    if _has_stiffening(case_path, overrides):  # what stiffening changes: two-way without
        variants.append((NO_STIFFENING, {**(overrides or {}), "solver.coupling": REFERENCE,
                                         "solver.stiffening": False}))
    records = sweep(case_path, variants, **sweep_options)
    labels = [label for label, _ in variants]
    return RunComparison(str(case_path), dict(zip(labels, records, strict=True)), REFERENCE,
                         "coupling", "coupling study",
                         bool(sweep_options.get("from_equilibrium", False)))


#: Label of the extra run of a case with stiffened bodies: two-way, stiffening off.
NO_STIFFENING = "two-way, no stiffening"


def _require_flexible_body(case_path, overrides) -> None:
    """ValidationError when the case has no flexible body: every coupling mode would give
    the same run. (A case that does not load is left to the runs, which say why.)"""
    from pathlib import Path

    from ..cases import load_case
    from ..errors import FlexmbsError, ValidationError

    try:
        case = load_case(case_path, dict(overrides or {}))
    except FlexmbsError:
        return
    if not any(hasattr(b, "data") for b in case.model.bodies.values()):
        raise ValidationError(f"{Path(case_path).name}: the coupling study compares the "
                              f"couplings of flexible bodies, and this case has no flexible "
                              f"body (bodies: {sorted(case.model.bodies)}); every mode would "
                              f"give the same run")


def _has_stiffening(case_path, overrides) -> bool:
    """Whether any flexible body of the case (with ``overrides``) has stiffening on."""
    from ..cases import load_case
    from ..errors import FlexmbsError

    try:
        case = load_case(case_path, dict(overrides or {}))
    except FlexmbsError:  # every run will fail and say why: no extra run
        return False
    if case.solver.get("stiffening") is False:
        return False
    return any(getattr(b, "stiffening", False) for b in case.model.bodies.values())


CouplingStudy = RunComparison  # what coupling_study returns
