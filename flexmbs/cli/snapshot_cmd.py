"""Render chosen times of a results file side by side in one PNG: a strip of frames for
a report, all in the framing, deformation scale and colour range of the whole run, with
one colour bar (``flexmbs snapshot RESULT --times 0,0.5,1 -o strip.png``)."""

from __future__ import annotations

import argparse

from ..errors import ValidationError
from ._common import emit_json

HELP = "render several times of a results file side by side in one PNG"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results file (.res.h5) written by flexmbs run")
    p.add_argument("--times", required=True,
                   help="comma-separated times [s]; each frame is the nearest output")
    p.add_argument("-o", "--output", required=True, help="strip.png")
    p.add_argument("--scale", type=float, help="deformation magnification (default: the "
                                              "largest displacement = 10 %% of the scene)")
    p.add_argument("--camera", default="auto", help="as for flexmbs animate")
    p.add_argument("--view-up", default="auto",
                   help="as for flexmbs animate (default: opposite to the model's gravity)")
    p.add_argument("--size", help="size of each frame WIDTHxHEIGHT (default: the largest "
                                  "4:3 frame, at most 800x600, that keeps the strip within "
                                  "1800 pixels; rows of up to 4 frames)")
    p.add_argument("--axes", action="store_true", help="as for flexmbs animate")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def run(args: argparse.Namespace) -> int:
    from ..post.animate import snapshot_strip
    from ..results import SimulationResult
    from .animate_cmd import _size, colour_range

    try:
        times = [float(v) for v in args.times.split(",") if v.strip()]
    except ValueError:
        raise ValidationError(f"--times {args.times!r}: expected numbers like 0,0.5,1"
                              ) from None
    if not times:
        raise ValidationError("--times is empty")
    result = SimulationResult.load(args.results)
    info = snapshot_strip(result, args.output, times, scale=args.scale, camera=args.camera,
                          view_up=args.view_up, axes=args.axes,
                          window_size=None if args.size is None else _size(args.size))
    summary = {"results": args.results, "output": args.output, "times": times,
               "scale": info.scale, **colour_range(info)}
    if args.json:
        emit_json(summary)
    else:
        print(f"flexmbs snapshot: {args.output} ({len(times)} frame(s) at "
              f"{', '.join(f'{t:g}' for t in times)} s, deformation × {info.scale:g})")
    return 0
