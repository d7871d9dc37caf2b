"""Benchmark: steps per second and Newton iterations per step of the generalized-α
integrator for the seed pendulum, the seed double pendulum and a clamped flexible body
with n_m = 2, 8, 32 modes.

Run:  python benchmarks/bench_integrators.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.integrators import simulate
from flexmbs.model import ModelBuilder

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from bench_ffrf import synthetic_body  # noqa: E402


def flexible_case(n_modes: int) -> System:
    data = synthetic_body(1000, n_modes)
    b = ModelBuilder(gravity=(0, 0, -9.81))
    b.add_flexible_body("f", data, xi=np.full(n_modes, 1e-4))
    b.add_marker("f", "root", node=1)
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", "f.root")
    return System(b.finalize())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    cases = [("seed pendulum", System(load_case(ROOT / "cases/seed_pendulum.toml").model)),
             ("seed double pendulum",
              System(load_case(ROOT / "cases/seed_double_pendulum.toml").model))]
    cases += [(f"flexible, n_m = {n}", flexible_case(n)) for n in (2, 8, 32)]
    rows = []
    for name, system in cases:
        res = simulate(system, 0.5, 1e-3, "generalized-alpha", rho_inf=0.8)
        row = {"case": name, "n_q": system.n_q, "steps": len(res.h),
               "steps_per_s": len(res.h) / res.wall_time,
               "newton_per_step": float(np.mean(res.iterations)),
               "ms_per_step": 1e3 * res.wall_time / len(res.h), "success": res.success}
        rows.append(row)
        if not args.json:
            print(f"{name:24s} n_q={row['n_q']:3d}  {row['steps_per_s']:7.0f} steps/s  "
                  f"{row['ms_per_step']:6.2f} ms/step  {row['newton_per_step']:.2f} Newton "
                  f"iterations/step", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
