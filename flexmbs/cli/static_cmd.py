"""Find where a case's mechanism comes to rest under its loads: the static equilibrium at
a time (drives at their values there), solved by Newton with gravity in load steps
(docs/static_linear.md). Prints the coordinates that moved from the initial state and
the joint reactions' balance; --json gives everything."""

from __future__ import annotations

import argparse

import numpy as np

from ._common import emit_json

HELP = "static equilibrium of a case (where it comes to rest)"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", help="case file (.toml)")
    p.add_argument("--at", type=float, default=0.0, metavar="TIME",
                   help="time [s] of the drives' values (default 0)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a case key (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def run(args: argparse.Namespace) -> int:
    from ..analysis import static_equilibrium
    from ..cases import load_case
    from ..cases.loader import case_system
    from ..errors import ValidationError
    from .study_cmd import parse_overrides

    if not np.isfinite(args.at):
        raise ValidationError(f"--at {args.at!r}: the time of the drives' values must be a "
                              f"finite number of seconds")
    case = load_case(args.case, parse_overrides(args.set))
    system = case_system(case)
    start = system.assemble(t=args.at)
    res = static_equilibrium(system, args.at, start)
    moved = {n: float(v) for n, v, v0 in zip(res.coord_names, res.q, start, strict=True)
             if abs(v - v0) > 1e-12 * max(1.0, abs(v0))}
    summary = {"case": str(case.path), "t": res.t, "iterations": res.iterations,
               "max_residual": res.residual, "max_constraint_violation": res.violation,
               "coordinates": dict(zip(res.coord_names, res.q.tolist(), strict=True)),
               "moved": moved,
               "multipliers": dict(zip(res.constraint_names, res.lam.tolist(),
                                       strict=True))}
    if args.json:
        emit_json(summary)
        return 0
    print(f"flexmbs static: {case.path}" + (f" — {case.title}" if case.title else ""))
    print(f"  equilibrium at t = {res.t:g} s in {res.iterations} Newton iterations; "
          f"max |r| = {res.residual:.2g}, max |Φ| = {res.violation:.2g}")
    if moved:
        print("  moved from the initial state:")
        for name, value in moved.items():
            k = res.coord_names.index(name)
            print(f"    {name}: {start[k]:.6g} → {value:.6g}")
    else:
        print("  the initial state is already at rest")
    largest = np.argsort(-np.abs(res.lam))[:5]
    print("  largest multipliers (constraint forces): " + ", ".join(
        f"{res.constraint_names[k]} {res.lam[k]:.4g}" for k in largest if res.lam[k]))
    return 0
