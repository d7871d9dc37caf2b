"""Whole-run overhead: everything in a run except the stepping, against the stepping.

Run::

    python benchmarks/overhead.py                   # every shipped case + solid beam rows
    python benchmarks/overhead.py --only arm,spin   # rows whose name contains a word
    python benchmarks/overhead.py --nodes           # per-output cost against FE nodes
    python benchmarks/overhead.py --json out.json

In one process, after a warm-up run of each row (kernels loaded, caches filled), best of
``--repeat`` (3) runs:

* ``stepping``: ``statistics["stepping_time"]`` (the wall time of the steps alone);
* ``whole``: the wall time of ``run_case`` (a shipped case: its System built from the
  loaded case, then ``simulate``) or of ``simulate`` (the solid beam of
  ``bench_vs_exudyn.py``, 369 nodes, its System built once), and ``overhead`` =
  whole − stepping, with the ratio overhead / stepping (the goal: ≤ 10 %);
* ``write``: ``result.save`` to an HDF5 file (a separate column: the command writes it);
* ``compile``: ``statistics["compile_time"]`` of a warm run (the kernel's warm-up call;
  in a fresh process it is the prebuilt kernel's link or numba's load, reported apart).

The breakdown comes from a separate instrumented run (wrapped functions; its timers
cost a little): ``setup`` (System, integrator, initial state, model check: up to the
first step, compile time excluded), ``checks`` (the in-run range checks), ``record``
(what the step loop does besides the steps and checks: recording outputs), ``outputs``
(``statistics["output_time"]``: the output quantities after the run), ``finish`` (the
rest: sensors, the model description, the result). All times in ms.

``--nodes``: the synthetic flexible body of ``bench_ffrf.py`` (4 modes, 10² … 10⁵ nodes,
output every step): overhead per output [µs] and setup [ms] against the node count.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("FLEXMBS_BACKGROUND_COMPILE", "off")

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


# ----------------------------------------------------------------------------- rows
def case_rows() -> list[tuple[str, object]]:
    """(name, run()) of every shipped case: run() -> result (run_case of the loaded case)."""
    from flexmbs.cases import load_case, run_case

    rows = []
    for path in sorted((ROOT / "cases").glob("*.toml")):
        case = load_case(path)

        def run(case=case):
            return run_case(case)[1]

        rows.append((path.stem, run))
    return rows


def beam_rows(modes=(4, 8, 16), h=1e-3) -> list[tuple[str, object]]:
    """The solid beam of bench_vs_exudyn.py (369 nodes): spin 2 s, drop 1 s, output
    every step."""
    import bench_vs_exudyn as bv

    from flexmbs.integrators.simulate import simulate

    mesh = bv.build_mesh()
    rows = []
    for n in modes:
        model = bv.FlexmbsModel(mesh, n)
        for case in bv.CASES:
            system = model.system(case)

            def run(system=system, case=case):
                return simulate(system, bv.END_TIME[case], h, "generalized-alpha",
                                rho_inf=bv.RHO_INF)

            rows.append((f"beam {case} {n} modes", run))
    return rows


def node_rows(counts=(100, 1000, 10_000, 100_000), n_modes=4) -> list[tuple[str, object]]:
    """A free synthetic flexible body under gravity (bench_ffrf.synthetic_body), 0.2 s at
    h = 1 ms, output every step."""
    from bench_ffrf import synthetic_body

    from flexmbs.assembly import System
    from flexmbs.integrators.simulate import simulate
    from flexmbs.model import ModelBuilder

    rows = []
    for n in counts:
        b = ModelBuilder(gravity=(0, 0, -9.81))
        b.add_flexible_body("f", synthetic_body(n, n_modes), angular_velocity=(0.3, 1, 0.2),
                            xi=np.full(n_modes, 1e-3))
        b.add_marker("f", "tip", node=n)
        b.add_point_force("push", "f.tip", [0.0, 1.0, 0.0])
        system = System(b.finalize())

        def run(system=system):
            return simulate(system, 0.2, 1e-3)

        rows.append((f"{n} nodes", run))
    return rows


# ----------------------------------------------------------------------------- timing
class Probe:
    """Wraps the step loop and the range check of flexmbs.integrators.simulate to time
    the phases of one run."""

    def __init__(self):
        import importlib

        self.sim = importlib.import_module("flexmbs.integrators.simulate")
        self.loop_in = self.loop_out = 0.0
        self.checks = 0.0

    @contextlib.contextmanager
    def installed(self):
        sim, loop, check = self.sim, self.sim._step_loop, self.sim.divergence

        def timed_loop(*args, **kwargs):
            self.loop_in = time.perf_counter()
            try:
                return loop(*args, **kwargs)
            finally:
                self.loop_out = time.perf_counter()

        def timed_check(*args, **kwargs):
            tic = time.perf_counter()
            try:
                return check(*args, **kwargs)
            finally:
                self.checks += time.perf_counter() - tic

        sim._step_loop, sim.divergence = timed_loop, timed_check
        try:
            yield self
        finally:
            sim._step_loop, sim.divergence = loop, check


def one_run(run) -> dict:
    start = time.perf_counter()
    result = run()
    whole = time.perf_counter() - start
    if not result.success:
        raise RuntimeError(f"run failed: {result.message}")
    s = result.statistics
    return {"whole": whole, "stepping": s["stepping_time"], "compile": s["compile_time"],
            "outputs": s["output_time"], "n_out": len(result.t), "steps": s["steps"],
            "result": result}


def breakdown(run) -> dict:
    probe = Probe()
    with probe.installed():
        start = time.perf_counter()
        r = one_run(run)
        end = start + r["whole"]
    loop = probe.loop_out - probe.loop_in
    return {"setup": probe.loop_in - start - r["compile"], "checks": probe.checks,
            "record": loop - r["stepping"] - probe.checks, "outputs": r["outputs"],
            "finish": end - probe.loop_out - r["outputs"]}


def write_time(result) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "result.h5"
        tic = time.perf_counter()
        result.save(path)
        return time.perf_counter() - tic


def measure(name, run, repeat) -> dict:
    one_run(run)  # warm-up
    runs = [one_run(run) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["whole"] - r["stepping"])
    parts = min((breakdown(run) for _ in range(repeat)),
                key=lambda p: sum(p.values()))
    row = {"name": name, "steps": best["steps"], "outputs_n": best["n_out"],
           "stepping": min(r["stepping"] for r in runs),
           "whole": min(r["whole"] for r in runs),
           "overhead": best["whole"] - best["stepping"], "compile": best["compile"],
           "write": min(write_time(best["result"]) for _ in range(repeat)), **parts}
    row["ratio"] = row["overhead"] / row["stepping"]
    row["per_output_us"] = 1e6 * (row["record"] + row["outputs"]) / row["outputs_n"]
    return row


HEAD = (f"{'row':28s} {'steps':>6s} {'outs':>6s} {'stepping':>9s} {'whole':>9s} "
        f"{'overhead':>9s} {'ratio':>6s} | {'setup':>7s} {'checks':>7s} {'record':>7s} "
        f"{'outputs':>7s} {'finish':>7s} | {'write':>7s} {'compile':>7s} {'µs/out':>7s}")


def line(r: dict) -> str:
    ms = {k: 1e3 * r[k] for k in ("stepping", "whole", "overhead", "setup", "checks",
                                   "record", "outputs", "finish", "write", "compile")}
    return (f"{r['name']:28s} {r['steps']:6d} {r['outputs_n']:6d} {ms['stepping']:9.2f} "
            f"{ms['whole']:9.2f} {ms['overhead']:9.2f} {100 * r['ratio']:5.1f}% | "
            f"{ms['setup']:7.2f} {ms['checks']:7.2f} {ms['record']:7.2f} "
            f"{ms['outputs']:7.2f} {ms['finish']:7.2f} | {ms['write']:7.2f} "
            f"{ms['compile']:7.2f} {r['per_output_us']:7.2f}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="", help="comma-separated words of row names")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--nodes", action="store_true", help="the node-count rows instead")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = node_rows() if args.nodes else case_rows() + beam_rows()
    words = [w for w in args.only.split(",") if w]
    if words:
        rows = [(n, r) for n, r in rows if any(w in n for w in words)]
    print(HEAD, flush=True)
    out = []
    for name, run in rows:
        r = measure(name, run, args.repeat)
        out.append(r)
        print(line(r), flush=True)
    worst = max(out, key=lambda r: r["ratio"])
    print(f"worst ratio: {100 * worst['ratio']:.1f} % ({worst['name']})")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
