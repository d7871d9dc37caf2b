"""Gradient of a measure of one sensor's history over a run of a case with respect to
case parameters, by the discrete adjoint of the generalized-α steps (docs/gradients.md):
the exact derivative of the run as it is discretized. Parameters are case keys as for
--set (e.g. forces.spring.stiffness, bodies.link.mass, model.gravity[1],
bodies.beam.damping_ratio[0], bodies.beam.stiffness_scale, and a built-in beam's
section, material and payloads: bodies.arm.beam.section.height,
bodies.arm.beam.material.E, bodies.arm.beam.point_masses[0].mass); KEY=VALUE also sets
the nominal value. Prints the objective, the gradient and the cost (forward and backward
times, memory), or {"value", "gradient": {KEY: dJ/dp}, ...} with --json."""

from __future__ import annotations

import argparse

from ._common import emit_json

HELP = "gradient of a run's objective with respect to case parameters (adjoint)"


def add_args(p: argparse.ArgumentParser) -> None:
    from ..gradients.objectives import MEASURES

    p.add_argument("case", help="case file (.toml)")
    p.add_argument("--sensor", required=True,
                   help="a sensor of the case, or kind:quantity:target (joint:angle:pivot)")
    p.add_argument("--component", help="the sensor's component (x, y, z, ...; default: its "
                                       "only one)")
    p.add_argument("--measure", default="final", choices=MEASURES,
                   help="final value, integral, mean, rms, smooth max of |s| (p-norm, "
                        "--sharpness), mean-square tracking error against --data, or the "
                        "first crossing time of --level")
    p.add_argument("--data", metavar="CSV",
                   help="measured history of --measure tracking: time [s], value per line")
    p.add_argument("--param", action="append", default=[], metavar="KEY[=VALUE]",
                   required=True, help="a case key to differentiate by (repeatable)")
    p.add_argument("--sharpness", type=float, default=32.0, metavar="P",
                   help="p of the smooth maximum (default 32)")
    p.add_argument("--level", type=float, default=0.0,
                   help="the level of --measure crossing (sensor units, default 0)")
    p.add_argument("--mode", choices=("adjoint", "forward"), default="adjoint",
                   help="adjoint sweep (default) or forward sensitivities")
    p.add_argument("--t-end", type=float, metavar="T", help="end time [s] (default: the "
                                                            "case's)")
    p.add_argument("--newton", choices=("default", "converged"),
                   help="Newton tolerances (converged: towards round-off)")
    p.add_argument("--checkpoint-every", type=int, metavar="K",
                   help="keep every K-th state and recompute the rest backward (default: "
                        "every state that fits in 256 MB)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a case key (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")


def run(args: argparse.Namespace) -> int:
    from ..gradients import Objective, gradient
    from .study_cmd import parse_overrides

    run_options = {}
    if args.t_end is not None:
        run_options["t_end"] = args.t_end
    if args.newton is not None:
        run_options["newton"] = args.newton
    data = None
    if args.measure == "tracking" or args.data:
        from ..errors import ValidationError
        from ..gradients.fit import read_measurements

        if not (args.measure == "tracking" and args.data):
            raise ValidationError("--measure tracking and --data CSV go together")
        data = read_measurements(args.data)
    objective = Objective(args.sensor, args.measure, component=args.component,
                          sharpness=args.sharpness, level=args.level, data=data)
    result = gradient(args.case, objective, args.param, mode=args.mode,
                      checkpoint_every=("auto" if args.checkpoint_every is None
                                        else args.checkpoint_every),
                      overrides=parse_overrides(args.set), **run_options)
    summary = {"case": str(args.case), **result.to_dict()}
    if args.json:
        emit_json(summary)
        return 0
    units = f" {result.units}" if result.units and result.units != "-" else ""
    print(f"flexmbs sensitivity: {args.case}")
    print(f"  {result.objective} = {result.value:.10g}{units}")
    print(f"  {'parameter':<40} {'value':>13} {'dJ/dp':>15} {'(p/J) dJ/dp':>12}")
    for key, grad in result.gradient.items():
        value = result.values[key]
        rel = value * grad / result.value if result.value else float("nan")
        how = "" if result.how[key] == "analytic" else f"  ({result.how[key]})"
        print(f"  {key:<40} {value:>13.6g} {grad:>15.8g} {rel:>12.4g}{how}")
    c = result.cost
    memory = c["memory_bytes"] / 2**20
    print(f"  cost: {c['steps']} steps ({c['formulation']}), forward "
          f"{c['forward_seconds']:.2f} s, backward {c['backward_seconds']:.2f} s "
          f"({c['backward_over_forward']:.2f}x; kernels loaded in "
          f"{c['kernel_load_seconds']:.2f} s), memory {memory:.2f} MiB "
          f"({c['states_kept']} states kept, every {c['checkpoint_every']}; "
          f"{c['recomputed_steps']} steps recomputed; step Jacobians: {c['jacobians']})")
    return 0
