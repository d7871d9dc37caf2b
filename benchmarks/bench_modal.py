"""Benchmark: modal reduction and inertia invariants from 10^3 to 10^5 nodes, and block
evaluation time versus N at fixed n_m (must be flat).

Run:  python benchmarks/bench_modal.py [--sizes 1000,10000,100000] [--modes 20] [--json]

Each size runs in its own process so that the peak resident memory (ru_maxrss) belongs
to that size alone. Models, each the same part refined: a 1 m x 80 mm x 80 mm hexahedral
steel bar (3 DOFs/node, isotropic consistent mass, 8 x 8 elements over the section,
refined along the length) reduced free–free, and a 1 m beam (6 DOFs/node) reduced
clamped at the root.
The beam at 10^4 and 10^5 nodes is beyond double precision (eigenvalue spread
(L/h)^4 > 1e15, flagged by an AccuracyWarning): its timings are valid, its frequencies not.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings


def one_size(kind: str, n_nodes: int, n_modes: int) -> dict:
    import numpy as np

    from flexmbs.modal import clamped_modes, free_free_modes
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.fe.solid import box_mesh
    from flexmbs.modal.invariants import compute_invariants

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    if kind == "solid":
        # the same 1 m x 80 mm x 80 mm steel bar, 8 x 8 elements over the section, refined
        # along its length: N = 81 (nx + 1)
        nx = max(n_nodes // 81 - 1, 2)
        fe = box_mesh(1.0, 0.08, 0.08, nx, 8, 8, E=210e9, nu=0.3, rho=7850)
    else:
        fe = straight_beam(1.0, n_nodes - 1, BeamSection.rectangle(0.02, 0.01),
                           Material.steel())
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = (free_free_modes(fe, n_modes) if kind == "solid"
            else clamped_modes(fe, "root", n_modes))
    t_reduce = time.perf_counter() - t0
    t0 = time.perf_counter()
    inv = compute_invariants(data.nodes, data.phi, data.mass, data.psi)
    t_inv = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    xis = rng.normal(size=(200, n_modes)) * 1e-3
    inv.blocks(xis[0])
    t0 = time.perf_counter()
    for xi in xis:
        inv.blocks(xi)
    t_blocks = (time.perf_counter() - t0) / len(xis)
    t_iso = None
    if inv.isotropic:
        t0 = time.perf_counter()
        for xi in xis:
            inv.blocks_isotropic(xi)
        t_iso = (time.perf_counter() - t0) / len(xis)
    return {
        "kind": kind, "n_nodes": fe.n_nodes, "n_dof": fe.n_dof, "n_modes": n_modes,
        "build_s": t_build, "reduce_s": t_reduce, "invariants_s": t_inv,
        "blocks_us": 1e6 * t_blocks,
        "blocks_isotropic_us": None if t_iso is None else 1e6 * t_iso,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "f1_hz": float(data.frequencies[0]),
        "eigenvalue_spread": data.metadata.get("eigenvalue_spread"),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--modes", type=int, default=20)
    p.add_argument("--kinds", default="solid,beam")
    p.add_argument("--json", action="store_true")
    p.add_argument("--_one", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._one:
        kind, n, m = args._one
        print(json.dumps(one_size(kind, int(n), int(m))))
        return 0
    rows = []
    for kind in args.kinds.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            res = subprocess.run([sys.executable, __file__, "--_one", kind, str(n),
                                  str(args.modes)], capture_output=True, text=True, check=True)
            rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
            if not args.json:
                r = rows[-1]
                iso = (f"{r['blocks_isotropic_us']:7.1f}" if r["blocks_isotropic_us"]
                       else "      -")
                print(f"{r['kind']:5s} N={r['n_nodes']:7d} dof={r['n_dof']:7d} "
                      f"build {r['build_s']:6.2f}s reduce {r['reduce_s']:7.2f}s "
                      f"invariants {r['invariants_s']:6.3f}s blocks {r['blocks_us']:7.1f}us "
                      f"(isotropic {iso}us) peak {r['peak_rss_mb']:7.0f} MB "
                      f"f1 {r['f1_hz']:.5g} Hz spread {r['eigenvalue_spread']:.1e}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
