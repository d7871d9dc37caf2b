"""Benchmark: evaluation of Φ, Φ_q, γ, M and Q for pendulum chains of 10, 100 and 1000
rigid bodies (revolute joints, gravity), time per evaluation (must grow linearly).

Run:  python benchmarks/bench_multibody.py [--sizes 10,100,1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from flexmbs.assembly import System
from flexmbs.model import ModelBuilder


def chain(n: int) -> System:
    b = ModelBuilder(gravity=(0, -9.81, 0))
    b.add_marker("ground", "O", orientation=[0, 0, 1])
    prev = "ground.O"
    for k in range(n):
        b.add_rigid_body(f"l{k}", 1.0, [1e-3, 1e-2, 1e-2], position=(k + 0.5, 0, 0))
        b.add_marker(f"l{k}", "A", (-0.5, 0, 0))
        b.add_marker(f"l{k}", "B", (0.5, 0, 0))
        b.add_revolute(f"r{k}", prev, f"l{k}.A")
        prev = f"l{k}.B"
    return System(b.finalize())


def per_call(fn, repeat: int) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10,100,1000")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        system = chain(n)
        q = system.q0
        qd = np.random.default_rng(0).normal(size=system.n_q) * 0.1
        repeat = max(3, 2000 // n)
        row = {"bodies": n, "n_q": system.n_q, "n_c": system.n_c}
        calls = {"phi": lambda s=system, q=q: s.phi(q),
                 "jacobian": lambda s=system, q=q: s.jacobian(q),
                 "gamma": lambda s=system, q=q, qd=qd: s.gamma(q, qd),
                 "mass": lambda s=system, q=q: s.mass_matrix(q),
                 "forces": lambda s=system, q=q, qd=qd: s.forces(q, qd)}
        for key, fn in calls.items():
            row[f"{key}_ms"] = 1e3 * per_call(fn, repeat)
        row["total_us_per_body"] = 1e3 * sum(row[k] for k in row if k.endswith("_ms")) / n
        rows.append(row)
        if not args.json:
            print(f"N={n:5d} n_q={system.n_q:5d}  Φ {row['phi_ms']:8.3f} ms  Φ_q "
                  f"{row['jacobian_ms']:8.3f} ms  γ {row['gamma_ms']:8.3f} ms  M "
                  f"{row['mass_ms']:8.3f} ms  Q {row['forces_ms']:8.3f} ms  "
                  f"({row['total_us_per_body']:.0f} µs per body for all five)", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
