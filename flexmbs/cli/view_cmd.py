"""Write the interactive viewer of a results file: one self-contained HTML page (three.js
inside, no network needed) that any browser opens from disk, with a time slider, play
and pause, the deformation scale and the colouring field (elastic displacement [mm] or
the von Mises stress [MPa] of the bodies' stress modes). In Jupyter, result.show()
gives the same view inline."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ValidationError
from ._common import emit_json

HELP = "write the interactive 3D viewer of a results file (one self-contained .html)"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results file (.res.h5) written by flexmbs run")
    p.add_argument("-o", "--output", required=True, help="view.html")
    p.add_argument("--scale", type=float, help="initial deformation magnification (default: "
                                              "the largest displacement = 10 %% of the "
                                              "scene; changeable on the page)")
    p.add_argument("--field", default="displacement",
                   choices=("displacement", "stress", "none"),
                   help="initial colouring: elastic displacement [mm], von Mises stress of "
                        "the bodies' stress modes [MPa] (docs/stress.md), or none "
                        "(changeable on the page)")
    p.add_argument("--frames", type=int, help="number of output frames on the page, evenly "
                                              "spread (default: every output, at most 1000)")
    p.add_argument("--speed", type=float, help="playback speed, simulated seconds per second "
                                              "(default: real time for runs of 2 to 20 s, "
                                              "else the run plays in about 10 s)")
    p.add_argument("--title", help="the page's title (default: the results file's name)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def run(args: argparse.Namespace) -> int:
    from .._files import write_text
    from ..results import SimulationResult
    from ..view import page_html, scene_data
    from ..view.page import check_output

    if args.frames is not None and args.frames < 1:
        raise ValidationError(f"--frames must be >= 1, got {args.frames}")
    out = check_output(args.output)  # before the results are read
    result = SimulationResult.load(args.results)
    title = args.title or f"flexmbs: {Path(args.results).name}"
    scene = scene_data(result, scale=args.scale, field=args.field, frames=args.frames,
                       speed=args.speed, title=title)
    write_text(out, page_html(scene), "viewer page")
    summary = {"results": args.results, "output": str(out), "frames": scene["nFrames"],
               "scale": scene["scale"], "field": scene["field"],
               "bytes": out.stat().st_size}
    if args.json:
        emit_json(summary)
    else:
        print(f"flexmbs view: {out} ({summary['frames']} frame(s), deformation × "
              f"{scene['scale']:g}, {summary['bytes'] / 1e6:.2f} MB; open it in a browser)")
    return 0
