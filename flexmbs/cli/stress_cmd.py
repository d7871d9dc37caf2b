"""Stresses of a run: the peak von Mises stress of a flexible body with stress modes, its
time and node, and a hot-spot table (``flexmbs stress RESULT [--body B] [--json]``,
docs/stress.md)."""

from __future__ import annotations

import argparse

from ._common import emit_json

HELP = "peak stress and hot spots of a run (bodies with stress modes)"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results file (.res.h5) written by flexmbs run")
    p.add_argument("--body", help="flexible body (default: the only one with stress modes)")
    p.add_argument("--top", type=int, default=10, help="hot spots listed (default 10)")
    p.add_argument("--json", action="store_true", help="machine-readable report")


def run(args: argparse.Namespace) -> int:
    from ..results import SimulationResult
    from ..results.stress import stress_report

    result = SimulationResult.load(args.results)
    report = stress_report(result, args.body, args.top)
    if args.json:
        emit_json({"results": args.results, **report})
        return 0
    print(f"{report['body']}: peak {report['criterion']} {report['peak_von_mises_pa'] / 1e6:.4g}"
          f" MPa at t = {report['peak_time_s']:.6g} s, node {report['peak_node']}")
    print("\n  hot spots        node   peak [MPa]   at t [s]")
    for rank, spot in enumerate(report["hot_spots"], 1):
        print(f"  {rank:>9d} {spot['node']:>11d} {spot['von_mises_pa'] / 1e6:>12.4g} "
              f"{spot['time_s']:>10.6g}")
    return 0
