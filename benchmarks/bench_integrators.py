"""Benchmark: time per step and Newton iterations per step of the generalized-α
integrator with analytic and finite-difference Newton tangents, for the seed pendulum,
the seed double pendulum and a clamped flexible body with n_m = 2, 8, 32 modes; also the
number of iteration-matrix builds per run and the cost of one build (tangents +
factorisation), the part the tangents change.

Per-step time: process CPU time, the best of ``--repeat`` runs of 0.5 s at h = 1 ms
(stepping only, no post-processing), so that machine load inflates it less; "build
share" is the part of it spent building iteration matrices (builds × cost / steps).

Run:  python benchmarks/bench_integrators.py [--json] [--repeat 5]
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
from flexmbs.integrators.simulate import AlphaIntegrator
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


def run(system: System, tangents: str, repeat: int) -> dict:
    """Best-of-``repeat`` stepping time, Newton iterations, matrix builds and build cost."""
    best = np.inf
    for _ in range(repeat):
        integ = AlphaIntegrator(system, generalized_alpha(0.8), H, tangents=tangents)
        start = time.process_time()
        while integ.t < T_END - 1e-12:
            ok, message = integ.step()
            if not ok:
                raise RuntimeError(message)
        best = min(best, time.process_time() - start)
    steps = len(integ.stats.h)
    refreshes = integ.refreshes
    bp, gp = integ._coefficients(H)
    n_build = 20
    start = time.process_time()
    for _ in range(n_build):
        integ._refresh(integ.q, integ.qd, integ.qdd, integ.lam, integ.t, bp, gp, H)
    build = (time.process_time() - start) / n_build
    return {"ms_per_step": 1e3 * best / steps, "steps": steps,
            "newton_per_step": float(np.mean(integ.stats.iterations)),
            "matrix_builds": refreshes, "ms_per_build": 1e3 * build,
            "build_ms_per_step": 1e3 * build * refreshes / steps}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    cases = [("seed pendulum", System(load_case(ROOT / "cases/seed_pendulum.toml").model)),
             ("seed double pendulum",
              System(load_case(ROOT / "cases/seed_double_pendulum.toml").model))]
    cases += [(f"flexible, n_m = {n}", flexible_case(n)) for n in (2, 8, 32)]
    rows = []
    for name, system in cases:
        for tangents in ("analytic", "fd"):
            row = {"case": name, "n_q": system.n_q, "tangents": tangents,
                   **run(system, tangents, args.repeat)}
            rows.append(row)
            if not args.json:
                print(f"{name:22s} n_q={row['n_q']:3d} {tangents:8s} "
                      f"{row['ms_per_step']:6.3f} ms/step  {row['newton_per_step']:.2f} "
                      f"Newton it./step  {row['matrix_builds']} matrix builds, "
                      f"{row['ms_per_build']:6.2f} ms each (build share "
                      f"{row['build_ms_per_step']:.3f} ms/step)", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
