"""Render a results file off-screen: every flexible body's mesh deformed at each output
time (magnified; the scale is shown), coloured by displacement, rigid bodies as rods,
joints as spheres, a time label and a ground grid. A .gif or .mp4 gives an animation
(MP4 needs: pip install 'flexmbs[video]'); a .png gives one frame (--time)."""

from __future__ import annotations

import argparse
import sys

from ..errors import ValidationError
from ..post.render import MAX_WINDOW, MIN_WINDOW
from ._common import ProgressBar, emit_json

HELP = "animate a results file (GIF/MP4) or render one frame (PNG)"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="results file (.res.h5) written by flexmbs run, or a "
                                   "case file (.toml): then --mode K draws its linear "
                                   "mode K about the static equilibrium")
    p.add_argument("-o", "--output", required=True, help="out.gif, out.mp4 or out.png")
    p.add_argument("--scale", type=float, help="deformation magnification (default: the "
                                              "largest displacement = 10 %% of the scene)")
    p.add_argument("--field", default="displacement",
                   choices=("displacement", "modal", "stress"),
                   help="colour by the elastic displacement, by one mode's part, or by the "
                        "von Mises stress of the bodies' stress modes (docs/stress.md)")
    p.add_argument("--mode", type=int, default=1,
                   help="mode for --field modal; with a case file, the linear mode to draw "
                        "(as listed by flexmbs linear)")
    p.add_argument("--fps", type=float, default=20.0, help="frames per second")
    p.add_argument("--frames", type=int, help="number of frames (default: every output, "
                                              "at most 200)")
    p.add_argument("--time", type=float, help="time of the frame for a .png (default: last)")
    p.add_argument("--camera", default="auto",
                   help="auto (default: a planar motion seen 30° off its plane's normal, "
                        "from above when the model has gravity, else iso; the camera's up "
                        "is --view-up), xy, xz, yz, iso, or 'px,py,pz;fx,fy,fz;ux,uy,uz'")
    p.add_argument("--view-up", default="auto",
                   help="the world's up direction, which the camera keeps up and the floor "
                        "grid lies across: auto (default: opposite to the model's gravity; "
                        "z for the grid without gravity), none (as without gravity), x, y, "
                        "z, -x, -y, -z or 'ux,uy,uz'")
    p.add_argument("--size", default="800x600", help="image size WIDTHxHEIGHT in pixels")
    p.add_argument("--axes", action="store_true",
                   help="draw the global x, y, z axes (red, green, blue) in the lower left "
                        "corner")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValidationError(f"--size {text!r}: expected WIDTHxHEIGHT, e.g. 800x600") from None
    if not (MIN_WINDOW <= w <= MAX_WINDOW and MIN_WINDOW <= h <= MAX_WINDOW):
        raise ValidationError(f"--size {text!r}: width and height must be from {MIN_WINDOW} "
                              f"to {MAX_WINDOW} pixels")
    return w, h


def _linear_mode(args: argparse.Namespace) -> int:
    """``flexmbs animate CASE.toml --mode K -o FILE``: linear mode K of the case about its
    static equilibrium (the same drawing as ``flexmbs linear CASE --animate K``)."""
    from ..analysis import eigenmodes, linearize, static_equilibrium
    from ..cases import load_case
    from ..cases.loader import case_system
    from .linear_cmd import draw_mode

    case = load_case(args.results)
    system = case_system(case)
    rest = static_equilibrium(system)
    lin = linearize(system, rest.q, lam=rest.lam)
    mode = draw_mode(system, lin, eigenmodes(lin), args.mode, args.output,
                     camera=args.camera, view_up=args.view_up, scale=args.scale,
                     window_size=_size(args.size))
    if args.json:
        emit_json({"case": args.results, "output": args.output, "mode": args.mode,
                   "frequency_hz": mode.frequency_hz})
    else:
        print(f"flexmbs animate: {args.output} (linear mode {args.mode} of "
              f"{args.results}, {mode.frequency_hz:.6g} Hz)")
    return 0


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    if str(args.results).lower().endswith(".toml"):
        return _linear_mode(args)

    from ..post.animate import animate, snapshot
    from ..results import SimulationResult

    result = SimulationResult.load(args.results)
    out = Path(args.output)
    options = dict(scale=args.scale, field=args.field, mode=args.mode, camera=args.camera,
                   view_up=args.view_up, window_size=_size(args.size), axes=args.axes)
    if args.frames is not None and args.frames < 1:
        raise ValidationError(f"--frames must be >= 1, got {args.frames}")
    if out.suffix.lower() == ".png":
        info = snapshot(result, out, time=args.time, **options)
    else:
        n_frames = args.frames or min(len(result.t), 200)
        bar = ProgressBar(not (args.quiet or args.json) and sys.stderr.isatty())
        info = animate(result, out, fps=args.fps, frames=n_frames,
                       progress=lambda d, n: bar(d, n, f"frame {d}/{n}"), **options)
    path = out
    summary = {"results": args.results, "output": str(path), "frames": len(info.indices),
               "scale": info.scale, **colour_range(info)}
    if args.json:
        emit_json(summary)
    else:
        print(f"flexmbs animate: {path} ({summary['frames']} frame(s), deformation × "
              f"{info.scale:g}, colour range {info.colour_range_text()})")
    return 0


def colour_range(info) -> dict:
    """The JSON entries of a frame's colour range: ``colour_range`` and
    ``colour_units`` ("mm" or "MPa"), and for displacements also the older
    ``colour_range_mm``."""
    out = {"colour_range": list(info.clim), "colour_units": info.units}
    if info.units == "mm":
        out["colour_range_mm"] = list(info.clim)
    return out
