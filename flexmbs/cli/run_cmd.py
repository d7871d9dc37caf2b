"""Run a TOML case: build the model, simulate, write the results file (HDF5) and print a
summary (JSON with --json); a progress bar goes to stderr.

Exit codes: 0 completed; 3 completed with warnings (the range checks: deflection beyond
linear FFRF, frame speed near the first elastic frequency without stiffening, an energy
balance that does not close); 4 diverged (stopped, with the reason); 1 failed (Newton
did not converge, or a profile, callable or controller raised: the results up to there
are kept); 130 interrupted (Ctrl-C: the results up to there are kept; 143 for SIGTERM);
2 bad input. The results file is written in every case but the last. A results file
that ended early (or a shorter run) is continued with --restart."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .._files import check_output
from ..cases import load_case, run_case
from ..errors import ValidationError
from ..integrators.options import CHOICES
from ._common import ProgressBar, emit_json

HELP = "simulate a case file and write its results"

#: Process exit code of each run status (docs/cli.md).
EXIT_CODES = {"completed": 0, "completed with warnings": 3, "diverged": 4, "failed": 1,
              "interrupted": 130}


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", help="case file (.toml), see docs/case_files.md")
    p.add_argument("-o", "--output", help="results file (default: from the case, .res.h5)")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--engine", choices=CHOICES["engine"],
                   help="compiled kernels or the NumPy reference path (default: the case's "
                        "[solver] engine, else auto: compiled where the model allows)")
    p.add_argument("--restart", metavar="RESULT",
                   help="continue the run in RESULT (a results file of this case that "
                        "ended early, or a shorter run) from its last step to the case's "
                        "t_end; the whole history is written, over RESULT unless -o is "
                        "given")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a case key (repeatable), e.g. --set solver.t_end=0.5 "
                        "or --set bodies.beam.modes=4 (docs/case_files.md)")
    p.add_argument("--real-time", action="store_true",
                   help="real-time mode: a fixed step, a fixed number of Newton iterations "
                        "with the iteration matrix rebuilt once per step, no step halving; "
                        "reports each step's worst and 99th-percentile wall time and the "
                        "overruns (docs/integrators.md, \"Real-time mode\")")
    p.add_argument("--from-equilibrium", action="store_true",
                   help="start at rest in the static equilibrium of the case "
                        "(flexmbs static) instead of its initial state")


def sensor_extremes(result) -> dict:
    """{sensor: {"units", "components": {component: {"min", "max", "final"}}}} of a run
    (None where a component has no finite value)."""
    from ..assembly.sensors import SensorHistory

    out = {}
    for name, rec in result.sensors.items():
        hist = SensorHistory(None, np.asarray(rec["values"], float), rec["units"],
                             tuple(rec["components"]))
        out[name] = {"units": rec["units"], "components": hist.extremes()}
    return out


def _num(value) -> str:
    return "–" if value is None else f"{value:.5g}"


def run(args: argparse.Namespace) -> int:
    from .study_cmd import parse_overrides

    case = load_case(args.case, parse_overrides(args.set))
    previous = {}
    if getattr(args, "restart", None):
        from ..results import SimulationResult

        previous = {"restart": SimulationResult.load(args.restart)}
        case.output = Path(args.restart)
    if args.output:
        case.output = Path(args.output)

    # before the run: an output that cannot be written, or that would overwrite one of
    # the run's inputs, is refused now, not after the whole run
    check_output(case.output, case.inputs, "results file")
    bar = ProgressBar(not (args.quiet or args.json) and sys.stderr.isatty())
    def compiling():
        if not (args.quiet or args.json):
            print("flexmbs: compiling kernels, once per install (a few minutes)...",
                  file=sys.stderr, flush=True)

    engine = {"engine": args.engine} if getattr(args, "engine", None) else {}
    if getattr(args, "real_time", False):
        engine["real_time"] = True
    if getattr(args, "from_equilibrium", False):
        if previous:
            raise ValidationError("--from-equilibrium and --restart cannot be combined: a "
                                  "restart continues from its own last state")
        engine["from_equilibrium"] = True
    system, result = run_case(case, progress=bar, on_compile=compiling, **engine,
                              **previous)
    bar.close()
    result.save(case.output)
    energy = result.kinetic + result.potential
    report = system.check(result.q[0], float(result.t[0]))
    summary = {
        "case": str(case.path), "title": case.title, "success": result.success,
        "status": result.status, "warnings": result.warnings,
        "exit_code": exit_code(result),
        "message": result.message, "output": str(case.output),
        "method": result.settings["method"], "h": result.settings["h"],
        "t_end": float(result.t[-1]), "steps": int(result.statistics["steps"]),
        "newton_iterations_mean": float(result.statistics["iterations_per_step"]),
        "wall_time_s": result.wall_time, "dof": report.dof,
        "real_time_factor": _ratio(float(result.t[-1] - result.t[0]), result.wall_time),
        # the run without the one-time loading (or compiling) of the kernels in this
        # process: what a study's or a sweep worker's further runs take
        "real_time_factor_loaded": _ratio(
            float(result.t[-1] - result.t[0]),
            result.wall_time - result.statistics.get("compile_time", 0.0)),
        "real_time_factor_steps": _ratio(float(result.t[-1] - result.t[0]),
                                         result.statistics.get("stepping_time", 0.0)),
        "coupling": result.coupling, "statistics": result.statistics,
        "max_constraint_violation": float(np.max(result.phi_violation)),
        "energy_initial_J": float(energy[0]), "energy_final_J": float(energy[-1]),
        "final_coordinates": dict(zip(result.coord_names, result.q[-1].tolist(),
                                      strict=True)),
        "contacts": {name: {"impacts": rec["impacts"],
                            "max_normal_force_N": float(np.max(rec["normal_force"])),
                            "max_penetration_m": float(np.max(rec["penetration"])),
                            "dissipated_J": float(rec["dissipated"][-1])}
                     for name, rec in result.contacts.items()},
        "sensors": sensor_extremes(result),
    }
    residual, involved = result.energy_balance()
    summary["energy_balance_residual_J"] = residual
    summary["energy_involved_J"] = involved
    if args.json:
        emit_json(summary)
    else:
        print(f"flexmbs run: {case.path}" + (f" — {case.title}" if case.title else ""))
        redundant = (f", {len(report.redundant)} redundant equation(s)"
                     if report.redundant else "")
        print(f"  {system.n_q} coordinates, {system.n_c} constraint equations, "
              f"{report.dof} degree(s) of freedom{redundant}")
        print(f"  {summary['method']}, h = {summary['h']:g} s, {summary['steps']} steps to "
              f"t = {summary['t_end']:.4g} s, {summary['newton_iterations_mean']:.2f} Newton "
              f"iterations per step, {summary['wall_time_s']:.2f} s wall time")
        st = result.statistics
        note = f" ({st['engine_note']})" if st.get("engine_note") else ""
        if st.get("kernels"):
            note = f", kernels {st['kernels']} (ready in {st['compile_time']:.2g} s)"
        print(f"  engine {st['engine']}{note}: {st['factorizations']} factorizations, "
              f"stepping {st['stepping_time']:.3g} s, "
              f"outputs {st['output_time']:.3g} s; real-time factor "
              f"{summary['real_time_factor']:.3g} ({summary['real_time_factor_loaded']:.3g} "
              f"with the kernels loaded, the steps alone "
              f"{summary['real_time_factor_steps']:.3g})")
        if st.get("halved_steps"):
            smallest = float(np.nanmin(result.steps.h_min, initial=np.inf))
            print(f"  Newton did not converge {st['halved_steps']} time(s) and those steps "
                  f"were taken again at half the size (smallest step {smallest:.3g} s): a "
                  f"larger max_iter or a smaller h would spare the retries")
        if st.get("real_time"):
            print(f"  real-time mode ({st['real_time_iterations']} Newton iterations, matrix "
                  f"{st['real_time_matrix']}): step wall time p99 "
                  f"{1e6 * st['step_time_p99_s']:.0f} µs, max {1e6 * st['step_time_max_s']:.0f}"
                  f" µs; {st['overruns']} overruns (steps longer than h); "
                  f"{st['bounded_steps']} steps accepted unconverged")
        print(f"  energy {summary['energy_initial_J']:.6g} J → {summary['energy_final_J']:.6g}"
              f" J; max |Φ| = {summary['max_constraint_violation']:.2g}")
        share = f" ({100 * residual / involved:.2g} % of {involved:.4g} J involved)" \
            if involved > 0 else ""
        print(f"  energy balance: max |T + V − W − E₀| = {residual:.3g} J{share}")
        if summary["coupling"]:
            print("  coupling: " + ", ".join(f"{body} {mode}" for body, mode
                                            in summary["coupling"].items()))
        if summary["sensors"]:
            print("  sensors (min / max / final):")
            for name, rec in summary["sensors"].items():
                parts = [f"{comp} {_num(v['min'])} / {_num(v['max'])} / {_num(v['final'])}"
                         for comp, v in rec["components"].items()]
                print(f"    {name} [{rec['units']}]: " + "; ".join(parts))
        for name, c in summary["contacts"].items():
            print(f"  contact {name}: {c['impacts']} impact(s), max force "
                  f"{c['max_normal_force_N']:.4g} N, max penetration "
                  f"{c['max_penetration_m']:.3g} m, dissipated {c['dissipated_J']:.4g} J")
        if result.status == "completed":
            print("  completed")
        elif result.status == "completed with warnings":
            print(f"  completed with {len(result.warnings)} warning(s):")
            for w in result.warnings:
                print(f"    - {w['message']}")
        else:
            print(f"  {result.status.upper()}: {result.message}")
        print(f"  results written to {case.output}")
    return exit_code(result)


def exit_code(result) -> int:
    """The process exit code of a run (:data:`EXIT_CODES`; 143 for a run stopped by
    SIGTERM, as a shell reports a process it terminated)."""
    if result.statistics.get("interrupted_by") == "SIGTERM":
        return 143
    return EXIT_CODES[result.status]


def _ratio(simulated: float, seconds: float) -> float:
    """Simulated time per wall-clock second (inf for an unmeasurably short time)."""
    return simulated / seconds if seconds > 0 else float("inf")
