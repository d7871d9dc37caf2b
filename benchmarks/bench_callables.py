"""The PD-controlled arm on the NumPy path and on the compiled engine (docs/compiled.md,
"Callables").

Run::

    python benchmarks/bench_callables.py            # 1 s of cases/arm_beam_pd.toml
    python benchmarks/bench_callables.py --t-end 2 --repeat 3

The arm of ``cases/arm_beam_pd.toml`` with its shoulder torque from a PD law in Python,
τ = 20 (1 − θ) − 2 θ̇ [N m] (a joint actuator with a callable: the compiled kernel
returns to Python for its value at every Newton iterate). Newmark, h = 1e-3. Best of
``--repeat`` whole runs (``simulate`` wall time, the System built once, after a warm-up
run that loads the kernels) on each engine, the compiled run's call-back statistics,
and the largest difference of the trajectories relative to the largest coordinate.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.engine.warmup import ensure_compiled
from flexmbs.integrators import simulate
from flexmbs.model.forces import JointActuator

CASE = Path(__file__).resolve().parents[1] / "cases" / "arm_beam_pd.toml"


def pd(t, state):
    return 20.0 * (1.0 - state.value) - 2.0 * state.rate


def pd_arm() -> System:
    model = load_case(CASE).model
    forces = [f for f in model.forces if f.name != "tau1"]
    forces.append(JointActuator("pd", "ground.O", "link1.O", pd))
    return System(replace(model, forces=tuple(forces)))


def run(system, engine, t_end):
    start = time.perf_counter()
    result = simulate(system, t_end, 1e-3, method="newmark", engine=engine)
    return time.perf_counter() - start, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    ensure_compiled()
    system = pd_arm()
    run(system, "compiled", 0.01)  # the kernels loaded
    best = {}
    for engine in ("python", "compiled"):
        for _ in range(args.repeat):
            wall, result = run(system, engine, args.t_end)
            if engine not in best or wall < best[engine][0]:
                best[engine] = (wall, result)
    (t_np, ref), (t_c, res) = best["python"], best["compiled"]
    stats = res.statistics
    print(f"PD arm, {args.t_end:g} s, h = 1e-3, Newmark; best of {args.repeat}")
    for name, wall, r in (("NumPy path", t_np, ref), ("compiled", t_c, res)):
        s = r.statistics
        print(f"  {name:11s} {wall:7.3f} s whole run, {s['stepping_time']:7.3f} s stepping, "
              f"{s['steps']} steps, {s['newton_iterations']} Newton iterations, "
              f"{s['factorizations']} factorizations")
    cb = stats["callbacks"]
    print(f"  call-backs: {cb['count']} returns to Python, {cb['calls']} calls of the "
          f"callables, {cb['time_s']:.3f} s in Python ({cb['callables']})")
    diff = np.abs(res.q - ref.q).max() / np.abs(ref.q).max()
    print(f"  speed-up {t_np / t_c:.1f}x; max |q_compiled - q_numpy| / max |q| = {diff:.2e}")


if __name__ == "__main__":
    main()
