"""Fit case parameters to a measured history of one sensor: least squares
(scipy.optimize.least_squares, trust-region reflective) between the measured values and
the sensor at the measurement times within the run (sampled from the run's steps: the
step's value at a step time, else a cubic through the four nearest steps), with the
Jacobian from forward sensitivities of the discrete run (docs/gradients.md, "Fitting
parameters to measurements"). The data file is CSV with two columns, time [s] and value
(in the sensor's units; a header line is skipped); measurements beyond the run are not
used. Parameters are case keys as for --set; KEY=START sets the starting value, --bounds
KEY=LOW:HIGH limits one. --starts N fits from N starts (the given one and N − 1 drawn
within the bounds) in local processes or on a Dask cluster (--scheduler) and keeps the
best."""

from __future__ import annotations

import argparse

from ..errors import ValidationError
from ._common import emit_json

HELP = "fit case parameters to a measured sensor history (least squares)"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", help="case file (.toml)")
    p.add_argument("--data", required=True, metavar="CSV",
                   help="measured history: time [s], value per line")
    p.add_argument("--sensor", required=True,
                   help="a sensor of the case, or kind:quantity:target (joint:angle:pivot)")
    p.add_argument("--component", help="the sensor's component (default: its only one)")
    p.add_argument("--param", action="append", default=[], metavar="KEY[=START]",
                   required=True, help="a case key to fit (repeatable)")
    p.add_argument("--bounds", action="append", default=[], metavar="KEY=LOW:HIGH",
                   help="bounds of a parameter (repeatable)")
    p.add_argument("--max-evaluations", type=int, default=50, metavar="N",
                   help="runs at most, per start (default 50)")
    p.add_argument("--starts", type=int, default=1, metavar="N",
                   help="fit from N starts: the given one and N-1 drawn uniformly within "
                        "the bounds (or a factor of 2 of the start), keep the best")
    p.add_argument("--seed", type=int, default=0, help="seed of the drawn starts")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes of the starts (default: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the starts on a Dask cluster (tcp://host:8786; needs "
                        "flexmbs[dask])")
    p.add_argument("--t-end", type=float, metavar="T", help="end time [s] (default: the "
                                                            "case's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a case key (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def _bounds(items) -> dict:
    out = {}
    for item in items:
        key, _, span = item.partition("=")
        low, _, high = span.partition(":")
        try:
            out[key.strip()] = (float(low), float(high))
        except ValueError:
            raise ValidationError(f"--bounds {item!r}: expected KEY=LOW:HIGH") from None
    return out


def run(args: argparse.Namespace) -> int:
    from ..gradients.fit import fit, read_measurements
    from .study_cmd import parse_overrides

    run_options = {} if args.t_end is None else {"t_end": args.t_end}
    data = read_measurements(args.data)
    result = fit(args.case, args.sensor, data, args.param,
                 component=args.component, bounds=_bounds(args.bounds),
                 max_evaluations=args.max_evaluations, starts=args.starts, seed=args.seed,
                 workers=args.workers, scheduler=args.scheduler,
                 overrides=parse_overrides(args.set), **run_options)
    if args.json:
        emit_json({"case": str(args.case), "data": str(args.data), **result.to_dict()})
        return 0 if result.success else 1
    print(f"flexmbs fit: {args.case} to {args.data}")
    print(f"  rms error {result.rms_initial:.6g} → {result.rms_final:.6g} in "
          f"{result.evaluations} runs ({result.message})")
    unused = data[0].size - result.measurements
    print(f"  {result.measurements} measurements within the run"
          + (f" ({unused} beyond it not used)" if unused else ""))
    print(f"  {'parameter':<40} {'start':>13} {'fitted':>15} {'std. error':>12}")
    for key, value in result.values.items():
        print(f"  {key:<40} {result.initial[key]:>13.6g} {value:>15.8g} "
              f"{result.standard_errors[key]:>12.3g}")
    if result.starts:
        print(f"  {len(result.starts)} starts (the best kept):")
        for k, start in enumerate(result.starts, 1):
            rms = "failed" if start["rms_final"] is None else f"rms {start['rms_final']:.4g}"
            print(f"    {k:>3}: {start['start']} → {rms} ({start['message']})")
    return 0 if result.success else 1
