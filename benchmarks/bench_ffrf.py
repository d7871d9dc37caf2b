"""Benchmark: per-evaluation cost of a flexible body's M(q), Q_v (all body forces) and an
applied point force on the NumPy path, and per-step cost of the compiled engine, for
n_m = 2, 8, 32 modes and N = 10^2 versus 10^5 FE nodes.

The two node counts must give the same times within noise: the floating-frame terms come
from the inertia invariants only (docs/theory_ffrf.md §3), and the compiled engine's
tables hold the invariants and the loaded nodes' shapes, never the mesh.

Run:  python benchmarks/bench_ffrf.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

from flexmbs.assembly import System
from flexmbs.integrators import simulate
from flexmbs.modal import ModalData
from flexmbs.model import ModelBuilder


def ensure_kernels() -> None:
    """benchmarks/_kernels.py (beside this script)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _kernels import ensure_kernels as ensure

    ensure()


def synthetic_body(n_nodes: int, n_modes: int) -> ModalData:
    """Random shapes on a random node cloud, lumped masses, attached at node 0."""
    rng = np.random.default_rng(n_nodes + n_modes)
    nodes = rng.uniform(-0.5, 0.5, size=(n_nodes, 3)) * [2.0, 0.2, 0.1]
    phi = rng.normal(size=(3 * n_nodes, n_modes)) * 1e-2
    phi[:3] = 0.0
    masses = np.full(n_nodes, 10.0 / n_nodes)
    m_ff = phi.T @ (np.repeat(masses, 3)[:, None] * phi)
    k_ff = np.diag(np.geomspace(1e2, 1e5, n_modes)) * np.mean(np.diag(m_ff))
    return ModalData(nodes=nodes, phi=phi, M_ff=m_ff, K_ff=k_ff, mass=masses,
                     reference_frame="attached", attach_set="root",
                     node_sets={"root": [0]})


def per_call(fn, repeat=300) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat


def one_case(n_modes: int, n_nodes: int) -> dict:
    warnings.simplefilter("ignore")
    data = synthetic_body(n_nodes, n_modes)
    b = ModelBuilder(gravity=(0, 0, -9.81))
    b.add_flexible_body("f", data, angular_velocity=(0.3, 1.0, 0.2),
                        xi=np.full(n_modes, 1e-3))
    b.add_marker("f", "tip", node=n_nodes)
    b.add_point_force("push", "f.tip", [0.0, 1.0, 0.0])
    system = System(b.finalize())
    body = system.bodies[0]
    q, qd = system.q0, system.qd0 + 0.1
    g = system.model.gravity
    del data, b
    ensure_kernels()
    steps = []
    for _ in range(4):  # the first loads the kernels; best of the other three
        result = simulate(system, 0.2, 1e-3, engine="compiled")
        steps.append(result.statistics["stepping_time"] / result.statistics["steps"])
    return {"n_modes": n_modes, "n_nodes": n_nodes,
            "mass_us": 1e6 * per_call(lambda: body.mass_matrix(q)),
            "body_forces_us": 1e6 * per_call(lambda: body.generalized_forces(q, qd, 0.0, g)),
            "system_forces_us": 1e6 * per_call(lambda: system.forces(q, qd)),
            "compiled_step_us": 1e6 * min(steps[1:])}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--_one", nargs=2, type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._one:
        print(json.dumps(one_case(*args._one)))
        return 0
    rows = []
    for n_modes in (2, 8, 32):
        for n_nodes in (100, 100_000):
            # each case in a fresh process: large arrays of one case must not slow another
            res = subprocess.run([sys.executable, __file__, "--_one", str(n_modes),
                                  str(n_nodes)], capture_output=True, text=True, check=True)
            row = json.loads(res.stdout.strip().splitlines()[-1])
            rows.append(row)
            if not args.json:
                print(f"n_m={n_modes:3d} N={n_nodes:7d}  M {row['mass_us']:8.1f} µs  "
                      f"Q_v+gravity+elastic {row['body_forces_us']:8.1f} µs  "
                      f"all forces {row['system_forces_us']:8.1f} µs  "
                      f"compiled step {row['compiled_step_us']:7.1f} µs", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
