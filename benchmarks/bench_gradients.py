"""Cost and accuracy of gradients by the discrete adjoint (docs/gradients.md):

    python benchmarks/bench_gradients.py [--repeat 3] [--json results/gradients.json]

For each shipped case (short end times): the forward run and the backward sweep [s]
(best of ``--repeat``, BLAS on one thread as the sweeps run it), with every state kept
and with every k-th state kept (k ≈ √N, segments run again backward), the memory of the
states kept, the largest relative difference of the gradient from central differences
of the run itself (Newton converged; relative step 1e-4; the reference runs are
``run_case`` on the NumPy path, not the gradient's own forward run), and, for scale, the
same run on the compiled engine (``run_case(engine="compiled")``, best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flexmbs.assembly.sensors import sensor_history  # noqa: E402
from flexmbs.cases import load_case  # noqa: E402
from flexmbs.cases.run import run_case  # noqa: E402
from flexmbs.gradients import Objective, gradient  # noqa: E402
from flexmbs.gradients.sensor_probe import find_sensor  # noqa: E402

CASES = [
    ("seed_pendulum.toml", 0.5, Objective("joint:angle:pivot", "rms"),
     ["bodies.bob.com[1]", "model.gravity[1]"]),
    ("arm_vertical_pd.toml", 0.2, Objective("marker:position:link2.T", "final",
                                            component="y"),
     ["forces.shoulder_pd.stiffness", "forces.elbow_pd.damping", "bodies.link1.mass",
      "model.gravity[1]", "forces.shoulder_reference.value.end"]),
    ("robot_arm.toml", 0.2, Objective("payload", "max", component="y"),
     ["forces.shoulder_drive.kp", "forces.elbow_drive.kd",
      "forces.shoulder_drive.motor.efficiency"]),
    ("cantilever_release.toml", 0.2, Objective("modal:coordinates:beam", "rms",
                                               component="xi1"),
     ["bodies.beam.damping_ratio=0.02"]),
]


def reference(path, objective, t_end, key, value) -> float:
    """The objective of ``run_case`` with ``key`` = ``value`` (indexed keys: the list)."""
    import re

    import tomllib

    overrides = {"solver.t_end": t_end}
    match = re.match(r"^(.*)\[(\d+)\]$", key)
    if match:
        node = tomllib.loads(Path(path).read_text())
        for part in match.group(1).split("."):
            node = (next(e for e in node if e.get("name") == part)
                    if isinstance(node, list) else node[part])
        new = list(node)
        new[int(match.group(2))] = value
        overrides[match.group(1)] = new
    else:
        overrides[key] = value
    system, result = run_case(load_case(path, overrides), engine="python",
                              newton="converged")
    sensor = find_sensor(system.model, objective.sensor)
    hist = sensor_history(system, sensor, result.t, result.q, result.qd, result.qdd,
                          result.lam)
    comp = 0 if objective.component is None else hist.components.index(objective.component)
    return objective.evaluate(result.t, hist.values[:, comp])[0]


def compiled_run(path, t_end, repeat) -> float:
    """Seconds of the case's run on the compiled engine (best of ``repeat``)."""
    from flexmbs.engine.warmup import ensure_compiled

    ensure_compiled()
    best = math.inf
    for _ in range(repeat):
        case = load_case(path, {"solver.t_end": t_end})
        tic = time.perf_counter()
        run_case(case, engine="compiled", newton="converged")
        best = min(best, time.perf_counter() - tic)
    return best


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    for name, t_end, objective, keys in CASES:
        path = str(ROOT / "cases" / name)
        best = {}
        for label, every in (("all", "auto"), ("sqrt", None)):
            for _ in range(args.repeat):
                r = gradient(path, objective, keys, t_end=t_end, newton="converged",
                             checkpoint_every=every or max(2, math.ceil(math.sqrt(
                                 best["all"].cost["steps"]))))
                if label not in best or (r.cost["forward_seconds"]
                                         + r.cost["backward_seconds"]) < (
                        best[label].cost["forward_seconds"]
                        + best[label].cost["backward_seconds"]):
                    best[label] = r
        res = best["all"]
        errors = {}
        tic = time.perf_counter()
        for key in res.gradient:
            p = res.values[key]
            d = 1e-4 * abs(p)
            fd = (reference(path, objective, t_end, key, p + d)
                  - reference(path, objective, t_end, key, p - d)) / (2 * d)
            errors[key] = abs(res.gradient[key] - fd) / abs(fd)
        row = {"case": name, "t_end": t_end, "objective": res.objective,
               "steps": res.cost["steps"], "formulation": res.cost["formulation"],
               "forward_s": res.cost["forward_seconds"],
               "backward_s": res.cost["backward_seconds"],
               "ratio": res.cost["backward_over_forward"],
               "memory_kib": res.cost["memory_bytes"] / 1024,
               "ckpt_every": best["sqrt"].cost["checkpoint_every"],
               "ckpt_backward_s": best["sqrt"].cost["backward_seconds"],
               "ckpt_ratio": best["sqrt"].cost["backward_over_forward"],
               "ckpt_memory_kib": best["sqrt"].cost["memory_bytes"] / 1024,
               "max_rel_error": max(errors.values()), "errors": errors,
               "reference_s": time.perf_counter() - tic,
               "jacobians": res.cost["jacobians"],
               "compiled_run_s": compiled_run(path, t_end, args.repeat)}
        rows.append(row)
        print(f"{name:<26} {row['steps']:>5} steps {row['formulation']:<19} "
              f"fwd {row['forward_s']:.3f} s  bwd {row['backward_s']:.3f} s "
              f"({row['ratio']:.2f}x, {row['memory_kib']:.0f} KiB)  "
              f"k={row['ckpt_every']}: bwd {row['ckpt_backward_s']:.3f} s "
              f"({row['ckpt_ratio']:.2f}x, {row['ckpt_memory_kib']:.0f} KiB)  "
              f"max rel. error {row['max_rel_error']:.1e}  (compiled run "
              f"{row['compiled_run_s']:.3f} s)", flush=True)
        for key, err in errors.items():
            print(f"    {key:<40} {err:.1e}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
