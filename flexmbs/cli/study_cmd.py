"""Run a study over many runs of one case and write its table (CSV, Markdown) and plot
(PNG) to a folder:

  coupling    two-way, one-way, no-Mrf and rigid, differences against two-way
  truncation  the n lowest modes of a flexible body for each n, errors against the
              largest n (or a reference results file), with a convergence plot
  sweep       any case key over a list of values

Runs go to local worker processes (all cores by default) or, with --scheduler, to a Dask
cluster (optional extra: pip install 'flexmbs[dask]'). With --from-equilibrium every run
starts at rest in the static equilibrium of its own variant (docs/studies.md). With
--resume the runs an earlier study finished in the output folder are read back instead
of run again; a worker process that dies has its runs run again (docs/studies.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..errors import FlexmbsError, ValidationError
from ._common import ProgressBar, emit_json, parse_value, split_top_level

HELP = "coupling, truncation and parameter studies of a case"


def add_args(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="study", metavar="STUDY")
    sub.required = True
    kinds = {
        "coupling": "run the case two-way, one-way, no-Mrf and rigid and compare",
        "truncation": "run the case at several modal truncation levels and compare",
        "sweep": "run the case for each value of one case key",
    }
    for name, text in kinds.items():
        s = sub.add_parser(name, help=text, description=text)
        s.add_argument("case", help="case file (.toml)")
        if name == "coupling":
            s.add_argument("--couplings", default="two-way,one-way,no-Mrf,rigid",
                           help="comma-separated modes (two-way is always run)")
        elif name == "truncation":
            s.add_argument("--modes", required=True,
                           help="comma-separated truncation levels, e.g. 1,2,4,8,16")
            s.add_argument("--body", help="flexible body (needed if there are several)")
            s.add_argument("--reference", help="results file (.res.h5) to compare against "
                                               "instead of the largest level")
        else:
            s.add_argument("--key", required=True,
                           help="dotted case key, e.g. bodies.beam.damping_ratio")
            s.add_argument("--values", required=True,
                           help="comma-separated TOML values, e.g. 0,0.01,0.05")
        s.add_argument("-o", "--output", help=f"folder for the outputs (default: "
                                              f"<case name>_{name})")
        s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override a case key for every run (repeatable), e.g. "
                            "--set solver.t_end=0.5")
        s.add_argument("--workers", type=int, help="local worker processes (default: all "
                                                   "cores)")
        s.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
        s.add_argument("--save-runs", action="store_true",
                       help="also write every run's results file into the output folder")
        s.add_argument("--resume", action="store_true",
                       help="skip the runs an earlier study already finished in the output "
                            "folder (same case file text, keys and --from-equilibrium); "
                            "implies --save-runs")
        s.add_argument("--from-equilibrium", action="store_true",
                       help="start every run at rest in the static equilibrium of its own "
                            "variant (its coupling mode, modes, keys; flexmbs static) "
                            "instead of the case's initial state")
        s.add_argument("--json", action="store_true", help="machine-readable summary")
        s.add_argument("--quiet", action="store_true", help="no progress bar")
    text = "eigenfrequencies over the constant speeds of one drive (Campbell diagram)"
    s = sub.add_parser("campbell", help=text, description=text)
    s.add_argument("case", help="case file (.toml)")
    s.add_argument("--drive", required=True, help="rotation or translation drive to vary")
    s.add_argument("--speeds", required=True,
                   help="speeds [rad/s or m/s]: START:STOP:COUNT or a comma list")
    s.add_argument("--modes", type=int, default=8, help="modes to follow (default 8)")
    s.add_argument("-o", "--output", help="folder for the outputs (default: "
                                          "<case name>_campbell)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a case key (repeatable)")
    s.add_argument("--from-equilibrium", action="store_true",
                   help="linearize each speed about the static equilibrium at t = 0 (the "
                        "sag under gravity; flexmbs static) with the drive turning from "
                        "there, instead of about the case's initial state")
    s.add_argument("--json", action="store_true", help="machine-readable summary")


def parse_speeds(text: str) -> list[float]:
    """``"0:10:21"`` (start, stop, count) or ``"0,2,5"`` → speeds; errors name --speeds."""
    try:
        if ":" in text:
            start, stop, count = text.split(":")
            if int(count) < 1:
                raise ValueError
            return [float(v) for v in np.linspace(float(start), float(stop), int(count))]
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValidationError(f"--speeds {text!r}: expected START:STOP:COUNT (e.g. 0:10:21) "
                              f"or a comma list of numbers") from None


def _campbell(args, case: Path, folder: Path) -> int:
    from ..analysis import campbell
    from ..cases import load_case
    from ..cases.loader import case_system
    from ..post.plots import save_figure
    from ..studies.tables import write_csv

    speeds = parse_speeds(args.speeds)
    loaded = load_case(case, parse_overrides(args.set))
    system = case_system(loaded)
    result = campbell(system, args.drive, speeds, args.modes,
                      from_equilibrium=args.from_equilibrium)
    rows = result.rows()
    paths = {"csv": write_csv(rows, folder / "campbell.csv"),
             "png": save_figure(result.figure(), folder / "campbell.png")}
    if args.json:
        emit_json({"study": "campbell", "case": str(case), "drive": args.drive,
                   "start": "static equilibrium" if args.from_equilibrium else "initial",
                   "speeds": list(result.speeds), "frequencies_hz":
                   result.frequencies_hz.tolist(), "mac_min": result.mac_min.tolist(),
                   "modes": result.descriptions,
                   "files": {k: str(v) for k, v in paths.items()}})
    else:
        print(f"flexmbs study campbell: {case}, drive {args.drive!r}, "
              f"{len(speeds)} speeds, {result.frequencies_hz.shape[1]} modes followed "
              f"(smallest MAC of a step {min(result.mac_min, default=1.0):.3f})")
        for j, text in enumerate(result.descriptions):
            print(f"  mode {j + 1}: {result.frequencies_hz[0, j]:.5g} → "
                  f"{result.frequencies_hz[-1, j]:.5g} Hz ({text})")
        for kind, path in paths.items():
            print(f"  {kind}: {path}")
    return 0


def parse_overrides(items) -> dict:
    """``["KEY=VALUE", ...]`` → {key: TOML value} (errors name the item)."""
    out = {}
    for item in items:
        if "=" not in item:
            raise ValidationError(f"--set {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        out[key.strip()] = parse_value(value.strip())
    return out


def run(args: argparse.Namespace) -> int:
    case = Path(args.case)
    if not case.exists():
        raise ValidationError(f"case file {str(case)!r} does not exist")
    folder = Path(args.output or f"{case.stem}_{args.study}")
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if args.study == "campbell":
            return _campbell(args, case, folder)
        return _study(args, case, folder)
    except FlexmbsError:
        if created and not any(folder.iterdir()):
            folder.rmdir()  # refused before any run: leave no empty folder behind
        raise


def _study(args: argparse.Namespace, case: Path, folder: Path) -> int:
    from ..studies import coupling_study, sweep, truncation_study
    from ..studies.coupling import RunComparison

    bar = ProgressBar(not (args.quiet or args.json) and sys.stderr.isatty())
    options = dict(workers=args.workers, scheduler=args.scheduler,
                   progress=lambda done, total, label: bar(done, total,
                                                           f"{done}/{total} runs ({label})"),
                   save_dir=folder if (args.save_runs or args.resume) else None,
                   from_equilibrium=args.from_equilibrium, resume=args.resume)
    overrides = parse_overrides(args.set)
    if args.study == "coupling":
        modes = [m.strip() for m in args.couplings.split(",") if m.strip()]
        study = coupling_study(case, modes=modes, overrides=overrides, **options)
    elif args.study == "truncation":
        try:
            levels = [int(v) for v in args.modes.split(",")]
        except ValueError:
            raise ValidationError(f"--modes {args.modes!r}: expected integers like 1,2,4,8"
                                  ) from None
        study = truncation_study(case, levels, body=args.body, reference=args.reference,
                                 overrides=overrides, **options)
    else:
        values = [parse_value(v) for v in split_top_level(args.values)]
        if not values:
            raise ValidationError("--values is empty")
        variants = [(f"{args.key}={v}", {**overrides, args.key: v}) for v in values]
        records = sweep(case, variants, **options)
        study = RunComparison(str(case), {r.label: r for r in records}, None, "run",
                              f"sweep of {args.key}",
                              from_equilibrium=args.from_equilibrium)
    paths = study.write(folder, args.study)
    records = study.records.values() if isinstance(study.records, dict) else study.records
    for rec in records:  # --save-runs: every run's results file
        if rec.result_file:
            paths[f"run {rec.label}"] = Path(rec.result_file)
    rows = study.rows()
    runs = {"resumed": sum(r.resumed for r in records),
            "rerun after a lost worker": sum(r.reruns > 0 for r in records)}
    return _report(args, rows, paths, all(r.get("success") for r in rows), runs)


def _report(args, rows, paths, ok: bool, runs: dict | None = None) -> int:
    runs = runs or {}
    if args.json:
        emit_json({"study": args.study, "case": args.case, "success": ok,
                   "from_equilibrium": bool(getattr(args, "from_equilibrium", False)),
                   "resumed_runs": runs.get("resumed", 0),
                   "rerun_runs": runs.get("rerun after a lost worker", 0),
                   "rows": rows, "files": {k: str(v) for k, v in paths.items()}})
    else:
        import shutil

        from ..studies.tables import compact_table

        start = (", every run from its own static equilibrium"
                 if getattr(args, "from_equilibrium", False) else "")
        print(f"flexmbs study {args.study}: {args.case}{start}")
        text, hidden = compact_table(rows, shutil.get_terminal_size((100, 24)).columns)
        print(text, end="")
        if hidden:
            print(f"  ({len(hidden)} more column(s) in the CSV and Markdown files: "
                  f"{', '.join(hidden[:4])}{', ...' if len(hidden) > 4 else ''})")
        for kind, path in paths.items():
            print(f"  {kind}: {path}")
        if runs.get("resumed"):
            print(f"  resumed: {runs['resumed']} of {len(rows)} runs were finished in the "
                  f"output folder already and were not run again")
        if runs.get("rerun after a lost worker"):
            print(f"  LOST WORKER: {runs['rerun after a lost worker']} run(s) were run "
                  f"again after a worker process died")
        for r in rows:
            label = r.get("coupling", r.get("run", r.get("modes")))
            if not r.get("success"):
                print(f"  {str(r.get('status') or 'failed').upper()}: {label}: "
                      f"{r.get('message', '')}")
            elif r.get("warnings"):
                print(f"  COMPLETED WITH WARNINGS: {label}: {r['warnings']}")
    if not ok:
        return 1
    return 3 if any(r.get("warnings") for r in rows) else 0
