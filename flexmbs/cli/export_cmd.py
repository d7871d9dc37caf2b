"""Export the scene over time for ParaView: the deformed flexible-body meshes, the rigid
bodies (lines through their markers) and the joints, as a .pvd collection of VTU files
(moving points; the sensors as field data) or an .xdmf time series (initial mesh + point
data 'motion' for Warp By Vector). Point data: part (flexible, rigid, joint), elastic
displacement, its magnitude and each mode's contribution."""

from __future__ import annotations

import argparse
import sys

from ._common import ProgressBar, emit_json

HELP = "export the scene over time for ParaView (.pvd or .xdmf)"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results file (.res.h5) written by flexmbs run")
    p.add_argument("-o", "--output", required=True, help="out.pvd or out.xdmf")
    p.add_argument("--every", type=int, default=1, help="every N-th output time")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from ..post.export import export, heavy_data_path
    from ..results import SimulationResult

    result = SimulationResult.load(args.results)
    bar = ProgressBar(not (args.quiet or args.json) and sys.stderr.isatty())
    path = export(result, args.output, every=args.every,
                  progress=lambda d, n: bar(d, n, f"time {d}/{n}"))
    n = len(range(0, len(result.t), args.every))
    extra = heavy_data_path(path) if path.suffix.lower() == ".xdmf" else None
    if args.json:
        emit_json({"results": args.results, "output": str(path), "times": n}
                  | ({"heavy_data": str(extra)} if extra else {}))
    else:
        print(f"flexmbs export: {n} time(s) written to {path}"
              + (f" (heavy data: {extra})" if extra else ""))
    return 0
