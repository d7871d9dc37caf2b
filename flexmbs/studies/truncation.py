"""Truncation study: one case run with the n lowest modes of a flexible body for several n,
compared against the largest level (or a given reference results file).

Per level: the highest retained natural frequency, the tip-deflection error against the
reference (max and RMS over time of ‖u − u_ref‖, also relative to the reference's peak),
the dominant frequency of the tip motion, the peak elastic energy, the energy-balance
residual, run time and steps per second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._files import write_text
from ..errors import ValidationError
from ..results.histories import tip_history
from ..results.measures import dominant_frequency, norm_rows, peak, principal_direction, rms
from .coupling import start_note
from .sweep import RunRecord, sweep
from .tables import to_markdown, write_csv


@dataclass
class TruncationStudy:
    """Runs per truncation level and the reference tip history."""

    case: str
    body: str
    levels: list
    records: list
    frequencies: np.ndarray
    reference_label: str
    reference_t: np.ndarray | None
    reference_tip: np.ndarray | None
    reference_index: int | None = None
    """Position of the reference run in ``records`` (None: a reference file)."""
    from_equilibrium: bool = False
    """Whether every level's run started at rest in its own static equilibrium."""

    def rows(self) -> list[dict]:
        """One row per level; lengths in mm, frequencies in Hz, energies in J."""
        out = []
        ref_peak = peak(norm_rows(self.reference_tip)) if self.reference_tip is not None \
            else float("nan")
        for k, (n, rec) in enumerate(zip(self.levels, self.records, strict=True)):
            row: dict = {"modes": n, "success": rec.success,
                         "highest frequency [Hz]": float(self.frequencies[n - 1])}
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
            tip = sig.tip[self.body]
            err = self.tip_error(rec)
            row["tip peak [mm]"] = 1e3 * peak(norm_rows(tip))
            row["tip error max [mm]"] = 1e3 * peak(err) if err is not None else float("nan")
            row["tip error RMS [mm]"] = 1e3 * float(rms(err)) if err is not None else \
                float("nan")
            row["tip error max / reference peak"] = (peak(err) / ref_peak if err is not None
                                                     and ref_peak > 0 else float("nan"))
            row["tip dominant frequency [Hz]"] = dominant_frequency(
                sig.t, tip @ principal_direction(tip))
            row["peak elastic energy [J]"] = peak(sig.elastic)
            row["energy balance max error [J]"] = peak(sig.energy_error)
            row["run time [s]"] = rec.wall_time
            row["CPU time [s]"] = rec.cpu_time
            row["steps/s (CPU)"] = rec.steps_per_second
            row["reference"] = k == self.reference_index
            out.append(row)
        return out

    def tip_error(self, rec: RunRecord):
        """‖u(t) − u_ref(t)‖ on the run's output times (reference interpolated)."""
        if self.reference_tip is None or rec.signals is None:
            return None
        sig = rec.signals
        ref = np.column_stack([np.interp(sig.t, self.reference_t, self.reference_tip[:, c])
                               for c in range(3)])
        return norm_rows(sig.tip[self.body] - ref)

    def columns(self) -> list[str]:
        keys: list[str] = []
        for row in self.rows():
            keys += [k for k in row if k not in keys]
        return keys

    def to_markdown(self) -> str:
        return to_markdown(self.rows(), self.columns())

    def write(self, folder, stem: str = "truncation") -> dict[str, Path]:
        """CSV, Markdown and the convergence PNG in ``folder``; returns the paths."""
        from ..post.plots import save_figure

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = {"csv": write_csv(self.rows(), folder / f"{stem}.csv", self.columns())}
        md = folder / f"{stem}.md"
        write_text(md, f"# Truncation study: {Path(self.case).name}, body {self.body!r}\n\n"
                   f"Reference: {self.reference_label}\n\n{start_note(self)}\n\n"
                   + self.to_markdown(), "table")
        paths["markdown"] = md
        if any(r.signals is not None for r in self.records):
            paths["png"] = save_figure(self.figure(), folder / f"{stem}.png")
        return paths

    def figure(self):
        """Convergence of the tip error (log-log) and the tip histories per level."""
        from ..post.plots import convergence, new_figure, time_history

        fig, axes = new_figure(2, sharex=False)
        rows = [r for r in self.rows() if r["success"] and not r.get("reference")]
        levels = [r["modes"] for r in rows]
        convergence(axes[0], levels,
                    {"max": [r["tip error max [mm]"] for r in rows],
                     "RMS": [r["tip error RMS [mm]"] for r in rows]},
                    "number of modes", "tip deflection error [mm]",
                    title=f"truncation convergence against {self.reference_label}")
        axes[0].set_xticks(levels, [str(n) for n in levels])
        axes[0].minorticks_off()
        ok = [(n, r.signals) for n, r in zip(self.levels, self.records, strict=True)
              if r.signals is not None]
        ref = self.reference_tip
        direction = principal_direction(ref if ref is not None else np.zeros((1, 3)))
        time_history(axes[1], [s.t for _, s in ok],
                     {f"{n} mode{'s' if n > 1 else ''}": 1e3 * s.tip[self.body] @ direction
                      for n, s in ok},
                     f"{self.body} tip deflection [mm]")
        fig.suptitle(f"truncation study: {Path(self.case).name}"
                     + (", from equilibrium" if self.from_equilibrium else ""), fontsize=11)
        return fig


def _flexible_body(case_path, body, overrides=None):
    from ..cases import load_case

    case = load_case(case_path, overrides)
    flexible = {name: b for name, b in case.model.bodies.items() if hasattr(b, "data")}
    if not flexible:
        raise ValidationError(f"{Path(case_path).name}: the case has no flexible body, so "
                              f"there are no modes to truncate")
    if body is None:
        if len(flexible) != 1:
            raise ValidationError(f"{Path(case_path).name}: name the flexible body for the "
                                  f"truncation study (flexible bodies: {sorted(flexible)})")
        body = next(iter(flexible))
    if body not in flexible:
        raise ValidationError(f"{Path(case_path).name}: no flexible body {body!r} "
                              f"(flexible bodies: {sorted(flexible)})")
    return body


def truncation_study(case_path, levels, *, body: str | None = None, reference=None,
                     overrides: dict | None = None, **sweep_options) -> TruncationStudy:
    """Run ``case_path`` keeping the ``levels`` lowest modes of flexible body ``body``.

    ``body`` may name a beam of substructures (a case entry with ``substructures = k``):
    every part then keeps n fixed-interface modes at level n, and the part holding the
    beam's tip is measured (docs/studies.md, "Large-deflection models in studies").

    ``reference``: a results file (``.res.h5``) to compare against; by default the largest
    level is the reference. The file must be a run of this case (with ``overrides``: the
    same coordinates, the test of ``flexmbs linear --results``) that covers the study's
    time span, else a ValidationError naming it (:func:`check_reference`). The levels
    may not exceed the modes the body's data holds (the case's own ``modes`` key is
    replaced). ``sweep_options`` go to
    :func:`~flexmbs.studies.sweep.sweep`; with ``from_equilibrium=True`` each level
    starts at rest in its own static equilibrium (its sag with its n modes).
    """
    levels = sorted({int(n) for n in levels})
    parts = _substructured(case_path, body, overrides)
    if parts is not None:  # a beam of k parts: every part keeps n modes
        entry, names = parts
        if not levels or levels[0] < 1:
            raise ValidationError(f"truncation levels must be integers >= 1, got {levels}")
        key = f"bodies.{entry}.beam.modes"
        body = names[-1]  # the part that holds the beam's tip is measured
        available = _part_frequencies(case_path, overrides, key, body, levels)
    else:
        body = _flexible_body(case_path, body, overrides)
        # the case may already truncate: the levels available are those of the data file
        available = _available_modes(case_path, body, overrides)
        if not levels or levels[0] < 1 or levels[-1] > available.size:
            raise ValidationError(f"truncation levels must lie in 1..{available.size} (the "
                                  f"modes of {body!r}'s modal data), got {levels}")
        key = f"bodies.{body}.modes"
    if reference is not None:  # before any run: a wrong file would waste them all
        from ..cases import load_case

        result = check_reference(reference, case_path, overrides, body)
        span = study_span(load_case(case_path, overrides))
    initial = _initial_modal(case_path, body, overrides) if parts is None else {}
    variants = [(f"{n} modes", {**(overrides or {}), key: n,
                                **{f"bodies.{body}.{name}": _kept(values, n)
                                   for name, values in initial.items()}})
                for n in levels]
    records = sweep(case_path, variants, **sweep_options)
    if reference is None:
        ref_rec = records[-1]
        label = f"{levels[-1]} modes (largest level)"
        ref_t = ref_rec.signals.t if ref_rec.signals is not None else None
        ref_tip = ref_rec.signals.tip[body] if ref_rec.signals is not None else None
    else:
        ref_t, ref_tip = _over_span(np.asarray(result.t, float),
                                    tip_history(result, body)[0], span)
        label = f"results file {Path(reference).name}"
    return TruncationStudy(str(case_path), body, levels, records, available, label, ref_t,
                           ref_tip, len(levels) - 1 if reference is None else None,
                           bool(sweep_options.get("from_equilibrium", False)))


#: Round-off allowed at the ends of a reference's time span, relative to max(1 s, t_end).
SPAN_ROUND_OFF = 1e-9


def study_span(case) -> tuple[float, float]:
    """(first, last) output time [s] of a run of the loaded ``case``: from 0 to the
    [solver] ``t_end``, or over its ``output_times`` when it gives them."""
    times = case.solver.get("output_times")
    if times is not None and np.size(times):
        return float(np.min(times)), float(np.max(times))
    return 0.0, float(case.solver.get("t_end"))


def check_reference(reference, case_path, overrides=None, body: str | None = None):
    """The :class:`~flexmbs.results.SimulationResult` in the results file ``reference``,
    checked to be a run of the case ``case_path`` (with ``overrides``) — its coordinates
    are those of the case's system, as ``flexmbs linear --results`` checks, but for the
    modal coordinates of the studied ``body``, of which it may keep any number — whose
    output times cover the span a run of the case has (:func:`study_span`) to
    round-off (:data:`SPAN_ROUND_OFF`). Beyond its ends a reference has no values to
    compare with (an interpolation would hold its last value). Else a ValidationError
    naming the file, its span and the study's span."""
    from ..cases import load_case
    from ..cases.run import case_system
    from ..results import SimulationResult

    case = load_case(case_path, overrides)
    result = SimulationResult.load(reference)
    t = np.asarray(result.t, float)
    first, last = study_span(case)
    has = (f"{float(t[0]):g} to {float(t[-1]):g} s" if t.size else "no output times")
    where = (f"reference {Path(reference).name!r} (results over {has}; the study runs "
             f"{Path(case_path).name} over {first:g} to {last:g} s)")
    text = (getattr(result, "case", None) or {}).get("text")
    if text is not None and text != Path(case_path).read_text(encoding="utf-8"):
        raise ValidationError(f"{where} is not a run of this case: it records another "
                              f"case file's text ({(result.case or {}).get('path')!r}). "
                              "Give a results file of this case (`flexmbs run CASE -o "
                              "FILE`, with any --set keys)")

    def kept(names):  # the studied body's modal coordinates: as many as the file has
        return tuple(n for n in names if not (body and re.fullmatch(
            rf"{re.escape(body)}\.xi\d+", n)))

    ours, theirs = kept(case_system(case).coord_names), kept(result.coord_names)
    if theirs != ours:
        extra = [n for n in theirs if n not in ours][:4]
        missing = [n for n in ours if n not in theirs][:4]
        raise ValidationError(
            f"{where} is not a run of this case: its coordinates differ ({len(theirs)} "
            f"against the case's {len(ours)}"
            + (f"; not in the case: {', '.join(extra)}" if extra else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + "). Give a results file of this case, run with the same --set keys "
              "(`flexmbs run CASE -o FILE`)")
    slack = SPAN_ROUND_OFF * max(1.0, abs(first), abs(last))
    if not t.size or not (np.all(np.isfinite(t[[0, -1]])) and t[0] <= first + slack
                          and t[-1] >= last - slack):
        raise ValidationError(
            f"{where} does not cover the study's time span: the tip errors beyond its "
            f"ends would be made up. Give a reference run to the study's t_end (or "
            f"shorten the study with --set solver.t_end=...)")
    return result


def _over_span(t, values, span):
    """(t, values) of a reference cut to the samples from the last at or before the
    span's start to the first at or after its end (:func:`check_reference` made sure
    there are such): errors, the reference's peak and its direction are taken over the
    time the study compares, not over the rest of a longer run."""
    first, last = span
    slack = SPAN_ROUND_OFF * max(1.0, abs(first), abs(last))
    i0 = max(0, int(np.searchsorted(t, first + slack, side="right")) - 1)
    i1 = min(t.size - 1, int(np.searchsorted(t, last - slack, side="left")))
    return t[i0:i1 + 1], values[i0:i1 + 1]


def _substructured(case_path, body, overrides=None) -> tuple[str, list[str]] | None:
    """(the beam entry, its parts in order) when ``body`` names a case entry that is a
    beam of substructures (``beam_1`` … ``beam_k``), or, without ``body``, when the case's
    flexible bodies are the parts of one such beam; None otherwise."""
    from ..cases import load_case
    from ..cases.loader import tomllib

    case = load_case(case_path, overrides)
    flexible = [name for name, b in case.model.bodies.items() if hasattr(b, "data")]
    raw = tomllib.loads(case.source.get("text", "")) if case.source.get("text") else {}
    for entry in raw.get("bodies", []):
        beam = entry.get("beam") if isinstance(entry, dict) else None
        count = beam.get("substructures", 1) if isinstance(beam, dict) else 1
        overridden = (overrides or {}).get(f"bodies.{entry.get('name')}.beam.substructures")
        count = overridden if overridden is not None else count
        if not isinstance(count, int) or count < 2:
            continue
        name = str(entry.get("name"))
        parts = [f"{name}_{j}" for j in range(1, count + 1)]
        if body == name or (body is None and sorted(flexible) == sorted(parts)):
            return name, parts
    return None


def _part_frequencies(case_path, overrides, key, part, levels) -> np.ndarray:
    """(max level,) the highest natural frequency [Hz] of ``part`` when every part keeps
    n modes, at the ``levels`` (NaN between them)."""
    from ..cases import load_case

    out = np.full(levels[-1], np.nan)
    for n in levels:
        case = load_case(case_path, {**(overrides or {}), key: n})
        out[n - 1] = float(np.max(case.model.bodies[part].data.frequencies))
    return out


def _available_modes(case_path, body, overrides=None) -> np.ndarray:
    """Natural frequencies [Hz] of all modes of ``body``'s modal data, as the case with
    ``overrides`` names it (its own ``modes`` truncation and initial modal coordinates,
    one per mode it keeps, lifted)."""
    from ..cases import load_case

    lifted = {f"bodies.{body}.{key}": None for key in ("modes", *INITIAL_MODAL)}
    case = load_case(case_path, {**(overrides or {}), **lifted})
    return np.asarray(case.model.bodies[body].data.frequencies)


#: The case keys of a flexible body's initial modal coordinates and rates, one number per
#: mode the body keeps.
INITIAL_MODAL = ("xi", "xi_dot")


def _initial_modal(case_path, body, overrides=None) -> dict[str, list[float]]:
    """{key: values} of ``body``'s initial modal coordinates and rates that the case
    (with ``overrides``) gives (:data:`INITIAL_MODAL`), one per mode it keeps."""
    from ..cases.loader import read_case_toml
    from ..cases.overrides import apply_overrides

    raw = read_case_toml(Path(case_path))
    if overrides:
        apply_overrides(raw, overrides, Path(case_path).name)
    entry = next((e for e in raw.get("bodies", []) if isinstance(e, dict)
                  and e.get("name") == body), {})
    return {key: list(entry[key]) for key in INITIAL_MODAL
            if isinstance(entry.get(key), list)}


def _kept(values: list[float], n: int) -> list[float]:
    """``values`` of the case's modes at a level of ``n`` modes: those of the n lowest,
    and zero for modes the case does not keep (they start at rest)."""
    return [float(v) for v in values[:n]] + [0.0] * max(0, n - len(values))
