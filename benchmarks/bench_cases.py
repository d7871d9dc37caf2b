"""Benchmark: ms per step (stepping only) and wall time of whole models and commands.

Models
------
- ``arm_beam_seed`` and ``arm_beam_steel`` (cases/*.toml), each with its own [solver]
  settings, simulated the way ``flexmbs.cases.run_case`` does (no results file written);
- ``flexmbs run cases/arm_beam_seed.toml``: wall time of the whole command in a
  subprocess (Python start-up, case loading, simulation, results file) and its real-time
  factor, simulated time / wall time;
- Simeon's flexible slider–crank of the validation suite: the model is built by
  ``validation/run.py``'s ``_simeon_crank_system`` (imported, not copied) and run as the
  validation does: 0.1 s, trapezoidal rule (Newmark), h = 10 µs;
- the IFToMM "N-four-bar" benchmark with N = 40 (see :func:`fourbar_chain`): 20 s,
  h = 2 ms, generalized-α (ρ∞ = 0.8, flexmbs's default); ``--t-end`` runs it shorter and
  extrapolates the stepping time to 20 s (rows labelled "extrapolated");
- ``flexmbs study truncation cases/arm_beam_steel.toml --modes 1,2,4,8,16``: wall time of
  the whole command (subprocess, outputs to a temporary folder, ``--workers 1`` unless
  ``--truncation-workers`` says otherwise).

The four-bar chain
------------------
41 vertical cranks (1 m) pinned to the ground at x = 0, 1, …, 40 m, their tips joined by
40 horizontal couplers (1 m); every link a uniform thin rod of 1 kg (inertia m L²/12
across the rod, 1e-6 kg m² along it); plane x–y, gravity −9.81 m/s² along y; at t = 0
the cranks are vertical and the first crank's tip moves at 1 m/s along +x, so every
crank turns at ω_z = −1 rad/s and the couplers translate at 1 m/s.

In 3D each closed planar loop of four revolute joints has 3 redundant equations (the
out-of-plane ones), which flexmbs refuses. Here every crank has a revolute joint (axis
z) at its ground pin and every coupler a revolute joint (axis z) at its left end, on
the tip of crank k; its right end is held on the tip of crank k+1 by a point-on-line
constraint whose line is the z axis through that tip (2 equations: the in-plane
coincidence x, y). The revolute joints alone keep every body in its plane (z, and the
rotations about x and y, are fixed), so the out-of-plane equation a spherical joint would
add there is the redundant one; the point-on-line constraint is the planar pin without
it. Count: 81 bodies × 6 = 486 freedoms; 81 revolutes × 5 + 40 × 2 = 485 independent
equations (+ 81 Euler-parameter normalisations): 1 degree of freedom and no redundant
equation by ``System.check()``, and the motion stays exactly planar (z ≡ 0). The
mechanism passes through singular positions (cranks horizontal: crank k+1 and coupler k
then lie on each other).

Timing
------
"ms/step" is the stepping time alone: ``SimulationResult.statistics["stepping_time"]``
when the installed flexmbs records it, otherwise the process CPU time spent in
``AlphaIntegrator.step()`` (as ``benchmarks/bench_integrators.py`` measures), by a
subclass swapped into ``flexmbs.integrators.simulate`` for the run; the wall-clock time
of the same calls is given next to it (the two differ when BLAS runs on both cores).
"wall" is the whole ``simulate()`` call (set-up, stepping, outputs) or the whole command.
Each figure is the best of ``--repeat`` runs (each column on its own). The project
machine has 2 cores and other work runs on it: the figures are noisy (±30 %).

flexmbs is imported from ``PYTHONPATH`` (its file is printed first) and ``cases/``,
``validation/`` and ``modal_data/`` are taken from that package's repository, so the same
script measures another tree, e.g. a git worktree of an older commit::

    PYTHONPATH=/tmp/flexmbs_before python benchmarks/bench_cases.py --repeat 3 --t-end 1 \
        --output benchmarks/results/cases_before.json
    PYTHONPATH=/tmp/flexmbs_before python benchmarks/bench_cases.py --only fourbar \
        --repeat 1 --output benchmarks/results/cases_before.json --merge

The command-line runs use ``python -m flexmbs.cli.main`` with the same interpreter and
the package's repository first on ``PYTHONPATH``, started in a temporary folder.

Run:  python benchmarks/bench_cases.py [--only arm,cli,slider-crank,fourbar,truncation]
      [--repeat 3] [--t-end 20] [--quick] [--json] [--output FILE [--merge]]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import importlib
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import flexmbs
from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.model import ModelBuilder

SIM = importlib.import_module("flexmbs.integrators.simulate")  # the module, not the function
ROOT = Path(flexmbs.__file__).resolve().parents[1]  # the imported package's repository
GROUPS = ("arm", "cli", "slider-crank", "fourbar", "truncation")

CHAIN_T_END, CHAIN_H, CHAIN_N = 20.0, 2e-3, 40
TRUNCATION_MODES = "1,2,4,8,16"


# ----------------------------------------------------------------------------- models
def fourbar_chain(n_loops: int = CHAIN_N, length: float = 1.0, mass: float = 1.0) -> System:
    """The IFToMM N-four-bar chain, n_loops loops (see the module docstring)."""
    across, along = mass * length**2 / 12, 1e-6
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    half = 0.5 * length
    omega = -1.0 / length  # first crank's tip at 1 m/s along +x
    for k in range(n_loops + 1):
        crank = f"crank{k}"  # along y, centre of mass at mid-length
        b.add_rigid_body(crank, mass, [across, along, across], position=(k * length, half, 0),
                         velocity=(-omega * half, 0, 0), angular_velocity=(0, 0, omega))
        b.add_marker("ground", f"pin{k}", (k * length, 0, 0))
        b.add_marker(crank, "base", (0, -half, 0))
        b.add_marker(crank, "tip", (0, half, 0))
        b.add_revolute(f"ground_pin{k}", f"ground.pin{k}", f"{crank}.base")
    for k in range(n_loops):
        coupler = f"coupler{k}"  # along x, translating
        b.add_rigid_body(coupler, mass, [along, across, across],
                         position=((k + 0.5) * length, length, 0),
                         velocity=(-omega * length, 0, 0))
        b.add_marker(coupler, "left", (-half, 0, 0))
        b.add_marker(coupler, "right", (half, 0, 0))
        b.add_revolute(f"hinge{k}", f"crank{k}.tip", f"{coupler}.left")
        # the right end on the z line through crank k+1's tip: in-plane pin, 2 equations
        b.add_joint(f"slot{k}", "point-on-line", f"crank{k + 1}.tip", f"{coupler}.right")
    return System(b.finalize())


def case_run(name: str, t_end: float | None = None):
    """(System, simulate args, simulate kwargs) of a case file with its own [solver]
    settings, as ``flexmbs.cases.run_case`` calls ``simulate``."""
    case = load_case(ROOT / "cases" / name)
    solver = dict(case.solver)
    system = System(case.model, coupling=solver.pop("coupling", None))
    end, h = float(solver.pop("t_end")), float(solver.pop("h"))
    method = solver.pop("method")
    times = solver.pop("output_times", None)
    if t_end is not None:
        end = min(end, t_end)
        times = None if times is None else [t for t in times if t <= end]
    return system, (end, h, method), {"t_out": times, **solver}


def validation_module():
    """``validation/run.py`` of the imported package's repository, as a module (it puts
    ``validation/`` on sys.path for ``slider_crank_reference``)."""
    path = ROOT / "validation" / "run.py"
    spec = importlib.util.spec_from_file_location("flexmbs_validation_run", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- timing
def statistics_supported() -> bool:
    """Whether ``SimulationResult`` has a ``statistics`` attribute (the compiled engine)."""
    cls = SIM.SimulationResult
    if hasattr(cls, "statistics"):
        return True
    return dataclasses.is_dataclass(cls) and any(
        f.name == "statistics" for f in dataclasses.fields(cls))


@contextlib.contextmanager
def timed_steps():
    """Swap a subclass of ``AlphaIntegrator`` timing its ``step()`` calls (process CPU
    and wall) into ``flexmbs.integrators.simulate``; yields the list of its instances."""
    base = SIM.AlphaIntegrator
    instances = []

    class TimedIntegrator(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.step_cpu = self.step_wall = 0.0
            instances.append(self)

        def step(self):
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return super().step()
            finally:
                self.step_cpu += time.process_time() - cpu
                self.step_wall += time.perf_counter() - wall

    SIM.AlphaIntegrator = TimedIntegrator
    try:
        yield instances
    finally:
        SIM.AlphaIntegrator = base


def one_simulation(system, args, kwargs) -> dict:
    """Run ``simulate`` once; stepping time, counts and wall time."""
    use_statistics = statistics_supported()
    with contextlib.ExitStack() as stack:
        instances = None if use_statistics else stack.enter_context(timed_steps())
        wall = time.perf_counter()
        result = SIM.simulate(system, *args, **kwargs)
        wall = time.perf_counter() - wall
    if not result.success:
        raise RuntimeError(f"simulation failed: {result.message}")
    stats = getattr(result, "statistics", None)
    if stats:
        steps = int(stats.get("steps", result.steps.total))
        stepping = float(stats["stepping_time"])
        return {"steps": steps, "stepping_s": stepping, "stepping_wall_s": None,
                "clock": "statistics['stepping_time']",
                "newton_iterations": int(stats.get("newton_iterations",
                                                   int(np.sum(result.steps.iterations)))),
                "factorizations": (None if stats.get("factorizations") is None
                                   else int(stats["factorizations"])),
                "compile_time_s": stats.get("compile_time"), "engine": stats.get("engine"),
                "wall_s": wall}
    if not instances:
        raise RuntimeError("no statistics on the result and no AlphaIntegrator was timed")
    integ = instances[-1]
    return {"steps": integ.stats.steps, "stepping_s": integ.step_cpu,
            "stepping_wall_s": integ.step_wall,
            "clock": "process CPU in AlphaIntegrator.step()",
            "newton_iterations": int(integ.stats.iterations),
            "factorizations": int(integ.refreshes), "compile_time_s": None,
            "engine": None, "wall_s": wall}


def best_of(system, args, kwargs, repeat: int) -> dict:
    """Best of ``repeat`` runs, each time figure on its own; counts from the first run
    (the same every run); compile time from the first run (later ones reuse it)."""
    runs = [one_simulation(system, args, kwargs) for _ in range(repeat)]
    row = dict(runs[0])
    for key in ("stepping_s", "stepping_wall_s", "wall_s"):
        values = [r[key] for r in runs if r[key] is not None]
        row[key] = min(values) if values else None
    row["runs"] = repeat
    row["all_stepping_s"] = [r["stepping_s"] for r in runs]
    row["all_wall_s"] = [r["wall_s"] for r in runs]
    return row


def simulation_row(model, system, args, kwargs, repeat, note="") -> dict:
    t_end, h, method = args
    row = {"model": model, "n_q": system.n_q, "n_c": system.n_c, "method": method, "h": h,
           "t_end": t_end, **best_of(system, args, kwargs, repeat), "note": note}
    steps = row["steps"]
    row["ms_per_step"] = 1e3 * row["stepping_s"] / steps
    row["ms_per_step_wall"] = (None if row["stepping_wall_s"] is None
                               else 1e3 * row["stepping_wall_s"] / steps)
    row["newton_per_step"] = row["newton_iterations"] / steps
    if row["engine"] is not None or row["compile_time_s"] is not None:
        row["note"] = "; ".join(filter(None, [
            note, f"engine {row['engine']}" if row["engine"] is not None else "",
            f"compile {row['compile_time_s']:.2f} s (first run)"
            if row["compile_time_s"] is not None else ""]))
    return row


def cli_command() -> tuple[list[str], dict, str]:
    """The ``flexmbs`` command of the imported package: (argv prefix, env, cwd)."""
    env = dict(os.environ)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and
            Path(p).resolve() != ROOT]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *rest])
    cwd = tempfile.mkdtemp(prefix="bench_cases_cli_")  # not a repository: "" ≠ a flexmbs
    probe = subprocess.run([sys.executable, "-c", "import flexmbs; print(flexmbs.__file__)"],
                           env=env, cwd=cwd, capture_output=True, text=True, check=True)
    if Path(probe.stdout.strip()).resolve() != Path(flexmbs.__file__).resolve():
        raise RuntimeError(f"the subprocess imports {probe.stdout.strip()}, not "
                           f"{flexmbs.__file__}")
    for prefix in ([sys.executable, "-m", "flexmbs.cli.main"],
                   [sys.executable, "-c",
                    "from flexmbs.cli.main import entry; entry()"]):
        if subprocess.run([*prefix, "--version"], env=env, cwd=cwd,
                          capture_output=True).returncode == 0:
            return prefix, env, cwd
    raise RuntimeError("neither 'python -m flexmbs.cli.main' nor main() runs")


def command_row(model, argv_tail, repeat, simulated=None, note="") -> dict:
    """Best-of-``repeat`` wall time of a ``flexmbs`` command (fresh output folder each)."""
    prefix, env, cwd = cli_command()
    walls = []
    try:
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="bench_cases_out_") as out:
                argv = [*prefix, *(a.format(out=out) for a in argv_tail)]
                wall = time.perf_counter()
                proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
                walls.append(time.perf_counter() - wall)
            # 3: "completed with warnings" (the seed arm's beam deflects beyond the range
            # of linear FFRF and turns fast for want of geometric stiffening: its warnings)
            if proc.returncode not in (0, 3):
                raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): "
                                   f"{proc.stderr.strip()[-2000:]}")
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    row = {"model": model, "command": "flexmbs " + " ".join(argv_tail), "wall_s": min(walls),
           "all_wall_s": walls, "runs": repeat, "t_end": simulated, "note": note,
           "argv_prefix": prefix}
    if simulated is not None:
        row["real_time_factor"] = simulated / row["wall_s"]
        row["note"] = (f"real-time factor {row['real_time_factor']:.3g} "
                       f"({simulated:g} s simulated / wall)" + (f"; {note}" if note else ""))
    return row


# ----------------------------------------------------------------------------- groups
def measure(group: str, args) -> list[dict]:
    quick, repeat = args.quick, args.repeat
    rows = []
    if group == "arm":
        for name in ("arm_beam_seed", "arm_beam_steel"):
            system, sim_args, kwargs = case_run(f"{name}.toml", 0.2 if quick else None)
            rows.append(simulation_row(name, system, sim_args, kwargs, repeat,
                                       "own [solver] settings"))
    elif group == "cli":
        case = ROOT / "cases" / "arm_beam_seed.toml"
        simulated = float(load_case(case).solver["t_end"])
        tail = [] if not quick else ["--set", "solver.t_end=0.2"]
        rows.append(command_row("flexmbs run arm_beam_seed",
                                ["run", str(case), "-o", "{out}/arm.res.h5", "--quiet",
                                 *tail], repeat, 0.2 if quick else simulated,
                                "whole command incl. Python start-up"))
    elif group == "slider-crank":
        validation = validation_module()
        system = validation._simeon_crank_system()
        ref = sys.modules["slider_crank_reference"]  # imported by the builder
        if Path(ref.__file__).resolve().parent != ROOT / "validation":
            raise RuntimeError(f"slider_crank_reference from {ref.__file__}")
        t_end = 0.01 if quick else float(ref.REFERENCE_T)
        rows.append(simulation_row("slider-crank (Simeon, validation)", system,
                                   (t_end, 1e-5, "newmark"), {}, repeat,
                                   "validation/run.py _simeon_crank_system"))
    elif group == "fourbar":
        system = fourbar_chain()
        report = system.check()
        if report.redundant:
            raise RuntimeError(f"four-bar chain: redundant equations {report.redundant}")
        t_end = min(args.t_end, 0.1) if quick else args.t_end
        row = simulation_row(f"four-bar chain N={CHAIN_N}, {t_end:g} s", system,
                             (t_end, CHAIN_H, "generalized-alpha"), {}, repeat,
                             f"check: {report.dof} DOF, {report.rank} independent "
                             f"equations, none redundant")
        row["dof"], row["rank"] = report.dof, report.rank
        rows.append(row)
        if t_end < CHAIN_T_END - 1e-12:
            steps = round(CHAIN_T_END / CHAIN_H)
            ext = {"model": f"four-bar chain N={CHAIN_N}, {CHAIN_T_END:g} s EXTRAPOLATED "
                            f"from {t_end:g} s",
                   "n_q": row["n_q"], "n_c": row["n_c"], "method": row["method"],
                   "h": CHAIN_H, "t_end": CHAIN_T_END, "steps": steps,
                   "ms_per_step": row["ms_per_step"],
                   "ms_per_step_wall": row["ms_per_step_wall"],
                   "newton_per_step": row["newton_per_step"], "factorizations": None,
                   "stepping_s": row["stepping_s"] * steps / row["steps"],
                   "wall_s": None, "extrapolated": True, "runs": row["runs"],
                   "note": f"stepping only: {row['ms_per_step']:.3g} ms/step × {steps} "
                           f"steps = {row['stepping_s'] * steps / row['steps']:.0f} s "
                           f"(not measured)"}
            rows.append(ext)
    elif group == "truncation":
        case = ROOT / "cases" / "arm_beam_steel.toml"
        tail = ["--set", "solver.t_end=0.05"] if quick else []
        rows.append(command_row(
            "flexmbs study truncation arm_beam_steel",
            ["study", "truncation", str(case), "--modes", TRUNCATION_MODES, "-o", "{out}",
             "--workers", str(args.truncation_workers), "--quiet", *tail],
            repeat, note=f"--modes {TRUNCATION_MODES}, --workers {args.truncation_workers}"))
    return rows


# ----------------------------------------------------------------------------- output
def _fmt(value, spec):
    return "–" if value is None else format(value, spec)


def markdown(rows: list[dict]) -> str:
    lines = ["| model | n_q | n_c | method | h [s] | t_end [s] | steps | ms/step | "
             "ms/step (wall) | Newton it./step | factorizations | wall time [s] | notes |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['model']} | {_fmt(r.get('n_q'), 'd')} | {_fmt(r.get('n_c'), 'd')} | "
            f"{r.get('method') or '–'} | {_fmt(r.get('h'), 'g')} | "
            f"{_fmt(r.get('t_end'), 'g')} | {_fmt(r.get('steps'), 'd')} | "
            f"{_fmt(r.get('ms_per_step'), '.3f')} | {_fmt(r.get('ms_per_step_wall'), '.3f')} | "
            f"{_fmt(r.get('newton_per_step'), '.2f')} | {_fmt(r.get('factorizations'), 'd')} | "
            f"{_fmt(r.get('wall_s'), '.2f')} | {r.get('note', '')} |")
    return "\n".join(lines)


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "flexmbs"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out.stdout.strip() + (" (flexmbs/ modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def environment() -> dict:
    import scipy

    return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "flexmbs_file": flexmbs.__file__, "repository": str(ROOT), "commit": git_commit(),
            "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "machine": platform.machine(),
            "cpus": os.cpu_count(), "load_average": list(os.getloadavg()),
            "statistics_on_result": statistics_supported(), "argv": sys.argv[1:]}



def ensure_kernels() -> None:
    """benchmarks/_kernels.py (beside this script)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _kernels import ensure_kernels as ensure

    ensure()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", help=f"comma-separated groups of {', '.join(GROUPS)}")
    p.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    p.add_argument("--t-end", type=float, default=CHAIN_T_END,
                   help="simulated time of the four-bar chain [s] (default 20; shorter: "
                        "the stepping time is extrapolated to 20 s)")
    p.add_argument("--truncation-workers", type=int, default=1,
                   help="--workers of the truncation study (default 1)")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: short runs, one repeat (figures not comparable)")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    p.add_argument("--output", type=Path, help="also write the results (JSON) to this file")
    p.add_argument("--merge", action="store_true",
                   help="keep the rows of --output's existing file not measured now")
    args = p.parse_args(argv)
    ensure_kernels()
    groups = GROUPS if not args.only else tuple(g.strip() for g in args.only.split(","))
    unknown = sorted(set(groups) - set(GROUPS))
    if unknown:
        p.error(f"unknown group(s) {unknown}; choose from {GROUPS}")
    if args.quick:
        args.repeat = 1
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    print(f"flexmbs imported from {flexmbs.__file__}", file=sys.stderr, flush=True)
    warnings.simplefilter("ignore")
    env = environment()
    rows = []
    for group in groups:
        start = time.perf_counter()
        new = measure(group, args)
        for row in new:
            row["group"] = group
        rows += new
        print(f"  {group}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    env["load_average_end"] = list(os.getloadavg())
    out = {"environment": env, "rows": rows}
    if args.output is not None:
        if args.merge and args.output.exists():
            old = json.loads(args.output.read_text())
            measured = {r["model"] for r in rows}
            kept = [r for r in old.get("rows", []) if r["model"] not in measured]
            out = {"environment": env, "rows": kept + rows,
                   "earlier_runs": [*old.get("earlier_runs", []), old.get("environment")]}
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(out, indent=1) + "\n")
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"flexmbs {env['flexmbs_file']} (commit {env['commit']}), best of "
              f"{args.repeat}, {env['cpus']} CPUs, load {env['load_average'][0]:.2f} → "
              f"{env['load_average_end'][0]:.2f}; noisy machine: ±30 %\n")
        print(markdown(out["rows"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
