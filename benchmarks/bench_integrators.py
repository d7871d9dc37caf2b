"""Benchmark: time per step and Newton iterations per step of the generalized-α
integrator with analytic and finite-difference Newton tangents, for the seed pendulum,
the seed double pendulum and a clamped flexible body with n_m = 2, 8, 32 modes, and for
the two arm cases (cases/arm_beam_seed.toml, cases/arm_beam_steel.toml) with their own
method and step; also the number of iteration-matrix builds (per run and per step) and
the cost of one build (tangents + factorisation) and of one residual evaluation
(r = M q̈ + Φ_qᵀλ − Q with Φ and Φ_q), the two costs the rebuild policy trades.

Per-step time: process CPU time, the best of ``--repeat`` runs of 0.5 s (h = 1 ms, or
the case's h; stepping only, no post-processing), so that machine load inflates it less;
"build share" is the part of it spent building iteration matrices (builds × cost /
steps).

Run:  python benchmarks/bench_integrators.py [--json] [--repeat 5] [--only arm]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.integrators.alpha import generalized_alpha
from flexmbs.integrators.simulate import METHODS, AlphaIntegrator
from flexmbs.model import ModelBuilder

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from bench_ffrf import synthetic_body  # noqa: E402

T_END, H = 0.5, 1e-3


def flexible_case(n_modes: int) -> System:
    data = synthetic_body(1000, n_modes)
    b = ModelBuilder(gravity=(0, 0, -9.81))
    b.add_flexible_body("f", data, xi=np.full(n_modes, 1e-4))
    b.add_marker("f", "root", node=1)
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", "f.root")
    return System(b.finalize())


def arm_case(name: str):
    """(System, AlphaParameters, h) of a case file with its own method and step."""
    case = load_case(ROOT / "cases" / name)
    solver = dict(case.solver)
    method = solver.pop("method")
    keys = {"newmark": ("beta", "gamma"), "hht": ("alpha",),
            "generalized-alpha": ("rho_inf",)}[method]
    params = METHODS[method](**{k: solver[k] for k in keys if k in solver})
    return System(case.model), params, float(solver["h"])


def cpu_per_call(function, calls: int = 20, repeat: int = 5) -> float:
    """Best-of-``repeat`` process CPU time of one call [s]."""
    best = np.inf
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(calls):
            function()
        best = min(best, (time.process_time() - start) / calls)
    return best


def run(system: System, tangents: str, repeat: int, params=None, h: float = H) -> dict:
    """Best-of-``repeat`` stepping time, Newton iterations, matrix builds and build cost."""
    params = generalized_alpha(0.8) if params is None else params
    best = np.inf
    for _ in range(repeat):
        integ = AlphaIntegrator(system, params, h, tangents=tangents)
        start = time.process_time()
        while integ.t < T_END - 1e-12:
            ok, message = integ.step()
            if not ok:
                raise RuntimeError(message)
        best = min(best, time.process_time() - start)
    steps = integ.stats.steps
    refreshes = integ.refreshes
    bp, gp = integ._coefficients(h)
    state = (integ.q, integ.qd, integ.qdd, integ.lam, integ.t)
    build = cpu_per_call(lambda: integ._refresh(*state, bp, gp, h), 10, 3)
    residual = cpu_per_call(lambda: integ._residual(*state), 50, 5)
    return {"ms_per_step": 1e3 * best / steps, "steps": steps,
            "newton_per_step": integ.stats.iterations / steps,
            "matrix_builds": refreshes, "builds_per_step": refreshes / steps,
            "ms_per_build": 1e3 * build, "ms_per_residual": 1e3 * residual,
            "build_ms_per_step": 1e3 * build * refreshes / steps}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--only", choices=("pendulum", "flexible", "arm"),
                   help="run one group of cases")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    cases = []  # (name, system, params or None, h)
    if args.only in (None, "pendulum"):
        cases += [(name, System(load_case(ROOT / "cases" / f"{file}.toml").model), None, H)
                  for name, file in (("seed pendulum", "seed_pendulum"),
                                     ("seed double pendulum", "seed_double_pendulum"))]
    if args.only in (None, "flexible"):
        cases += [(f"flexible, n_m = {n}", flexible_case(n), None, H) for n in (2, 8, 32)]
    if args.only in (None, "arm"):
        cases += [(name, *arm_case(f"{name}.toml")) for name in ("arm_beam_seed",
                                                                 "arm_beam_steel")]
    rows = []
    for name, system, params, h in cases:
        for tangents in ("analytic", "fd"):
            row = {"case": name, "n_q": system.n_q, "tangents": tangents, "h": h,
                   **run(system, tangents, args.repeat, params, h)}
            rows.append(row)
            if not args.json:
                print(f"{name:22s} n_q={row['n_q']:3d} {tangents:8s} "
                      f"{row['ms_per_step']:6.3f} ms/step  {row['newton_per_step']:.2f} "
                      f"Newton it./step  {row['matrix_builds']} matrix builds "
                      f"({row['builds_per_step']:.3f}/step), {row['ms_per_build']:6.2f} ms "
                      f"each (build share {row['build_ms_per_step']:.3f} ms/step); "
                      f"residual {row['ms_per_residual']:.3f} ms", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
