"""Linearize a case about a state and report its eigenmodes: natural frequencies [Hz],
damping ratios and what moves (docs/static_linear.md, "Linear analysis"). The state is
the static equilibrium (default), the initial state, or an output time of a results
file of the case (--results RESULT --at TIME: a steady spin, say). A state that turns
steadily with a rotation drive (its rate constant there and the whole model turning
with it) is linearized in the chart that turns with the drive, as a Campbell diagram
is (:func:`~flexmbs.analysis.steady_spin.spin_at`)."""

from __future__ import annotations

import argparse

import numpy as np

from ..errors import ValidationError
from ._common import emit_json

HELP = "eigenfrequencies of a case linearized about a state"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", help="case file (.toml)")
    p.add_argument("--at", default="equilibrium",
                   help="equilibrium (default), initial, or a time [s] of --results")
    p.add_argument("--results", metavar="RESULT",
                   help="results file of this case whose state at --at TIME is used")
    p.add_argument("--modes", type=int, default=12, help="modes to list (default 12)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a case key (repeatable)")
    p.add_argument("--animate", type=int, metavar="K",
                   help="draw mode K (1-based, as listed) over one period into -o")
    p.add_argument("-o", "--output",
                   help="with --animate: mode.gif / .mp4 / .png (a frame), or .pvd / .xdmf "
                        "for ParaView")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def _state(args, system):
    """(q, q̇, q̈, λ, t, description) of the state asked for."""
    from ..analysis import static_equilibrium
    from ..analysis.linear import initial_state

    if args.at == "equilibrium":
        if args.results:
            raise ValidationError("--results applies to --at TIME, not to the equilibrium")
        rest = static_equilibrium(system)
        zero = np.zeros(system.n_q)
        return rest.q, zero, zero, rest.lam, rest.t, "static equilibrium"
    if args.at == "initial":
        return (*initial_state(system), 0.0, "initial state")
    try:
        time = float(args.at)
    except ValueError:
        raise ValidationError(f"--at {args.at!r}: use equilibrium, initial or a time [s]"
                              ) from None
    if not args.results:
        raise ValidationError(f"--at {time:g} needs --results RESULT (a results file of "
                              f"this case)")
    from ..post.frames import frame_index
    from ..results import SimulationResult

    res = SimulationResult.load(args.results)
    if tuple(res.coord_names) != tuple(system.coord_names):
        raise ValidationError(f"--results {args.results!r} is not a run of this case: its "
                              f"coordinates differ")
    k = frame_index(res, time)
    return (res.q[k], res.qd[k], res.qdd[k], res.lam[k], float(res.t[k]),
            f"t = {float(res.t[k]):g} s of {args.results}")


def draw_mode(system, lin, modes, k: int, output, **options):
    """Mode ``k`` (1-based, as listed) over one period into ``output`` (an animation, a
    frame at the peak of the period or a ParaView collection, by its suffix), titled
    with the mode's number and frequency (render ``options`` of
    :class:`~flexmbs.post.animate.ResultAnimation`: camera, view_up, window_size,
    scale); returns the mode."""
    from pathlib import Path

    from ..analysis.linear import mode_motion
    from ..post.mode_movie import mode_title

    if not output:
        raise ValidationError("drawing a mode needs -o FILE (.gif, .mp4, .png, .pvd or "
                              ".xdmf)")
    if not 1 <= k <= len(modes):
        raise ValidationError(f"mode {k}: the model has modes 1 to {len(modes)}")
    mode = modes[k - 1]
    motion = mode_motion(system, lin, mode)
    out = Path(output)
    suffix = out.suffix.lower()
    if suffix in (".pvd", ".xdmf"):
        from ..post.export import export

        export(motion, out)
    elif suffix == ".png":
        from ..post.animate import snapshot

        # the peak of the period: the output farthest from the mean position
        q = np.asarray(motion.q)
        peak = int(np.argmax(np.linalg.norm(q - q.mean(axis=0), axis=1)))
        snapshot(motion, out, time=float(motion.t[peak]),
                 title=mode_title(k, mode.frequency_hz), **options)
    else:
        from ..post.animate import animate

        animate(motion, out, title=mode_title(k, mode.frequency_hz), **options)
    return mode


def run(args: argparse.Namespace) -> int:
    from ..analysis import eigenmodes, linearize
    from ..analysis.steady_spin import spin_at
    from ..cases import load_case
    from ..cases.loader import case_system
    from .study_cmd import parse_overrides

    case = load_case(args.case, parse_overrides(args.set))
    system = case_system(case)
    q, qd, qdd, lam, t, where = _state(args, system)
    turning = spin_at(system, q, t) if args.results else None
    spin = None
    if turning is not None:
        drive, axis, omega = turning
        spin = (axis, omega)
        where += (f", in the chart that turns with drive {drive!r} at {omega:g} rad/s "
                  f"(a steady spin)")
    lin = linearize(system, q, qd, qdd, lam, t, spin=spin)
    all_modes = eigenmodes(lin)
    modes = all_modes[: max(args.modes, 0)]
    if args.animate is not None:
        draw_mode(system, lin, all_modes, args.animate, args.output)
    rows = [{"frequency_hz": m.frequency_hz, "damped_frequency_hz": m.damped_frequency_hz,
             "damping_ratio": m.damping_ratio, "rigid": m.rigid,
             "description": ("rigid-body mode: " if m.rigid else "")
             + m.describe(lin.coord_names)} for m in modes]
    if args.json:
        emit_json({"case": str(case.path), "state": where, "dof": int(lin.M.shape[0]),
                   "frequencies_hz": [r["frequency_hz"] for r in rows],
                   "damping_ratios": [r["damping_ratio"] for r in rows], "modes": rows})
        return 0
    print(f"flexmbs linear: {case.path} about the {where} ({lin.M.shape[0]} degree(s) "
          f"of freedom)")
    print("  mode   f [Hz]        damping    moves most")
    for k, r in enumerate(rows, 1):
        freq = "rigid" if r["rigid"] else f"{r['frequency_hz']:.6g}"
        print(f"  {k:4d}   {freq:<12}  {r['damping_ratio']:<9.3g}  {r['description']}")
    return 0
