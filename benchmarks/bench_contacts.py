"""Benchmark: the shipped contact cases on the NumPy path and on the compiled engine.

For ``cases/ball_drop.toml``, ``beam_stop.toml`` and ``slider_crank_clearance.toml``:

- the whole run in this process as ``flexmbs.cases.run_case`` does it (case loading
  included, no results file), on ``engine="python"`` (the path contacts took before they
  had kernels) and ``engine="compiled"``, best of ``--repeat`` after a warm-up each;
- the stepping alone (``statistics["stepping_time"]``) and the time per step;
- ``flexmbs run CASE`` as a new process (Python start-up, kernel loading, the run, the
  results file), wall time, best of ``--repeat``;
- the real-time factor (simulated time / wall time) of each, and the compiled engine's
  speed-up over the NumPy path.

Both engines take the same steps and impacts (``tests/test_contact_compiled.py``).
Timing only: nothing here is asserted.

    python benchmarks/bench_contacts.py [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ("ball_drop", "beam_stop", "slider_crank_clearance")


def _in_process(name: str, engine: str, repeat: int) -> dict:
    from flexmbs.cases import load_case, run_case

    best = None
    for k in range(repeat + 1):  # the first: warm-up (imports, kernel loading)
        start = time.perf_counter()
        case = load_case(ROOT / "cases" / f"{name}.toml")
        _, result = run_case(case, engine=engine)
        wall = time.perf_counter() - start
        st = result.statistics
        row = {"wall_s": wall, "stepping_s": st["stepping_time"], "steps": st["steps"],
               "iterations": st["newton_iterations"], "engine": st["engine"],
               "t_end": float(result.t[-1]) - float(result.t[0])}
        if k and (best is None or wall < best["wall_s"]):
            best = row
    return best


def _command(name: str, repeat: int) -> float:
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "flexmbs.cli.main", "run",
                            str(ROOT / "cases" / f"{name}.toml"), "-o",
                            str(Path(tmp) / f"{name}.res.h5")],
                           check=True, capture_output=True, cwd=tmp)
            wall = time.perf_counter() - start
            best = wall if best is None else min(best, wall)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python-repeat", type=int, default=1,
                        help="repeats of the (slow) NumPy path (default 1)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = {}
    print(f"{'case':24s} {'engine':9s} {'wall s':>8s} {'step s':>8s} {'µs/step':>8s} "
          f"{'steps':>6s} {'RTF':>7s}")
    for name in CASES:
        slow = _in_process(name, "python", args.python_repeat)
        fast = _in_process(name, "compiled", args.repeat)
        command = _command(name, args.repeat)
        rows[name] = {"python": slow, "compiled": fast, "command_s": command}
        for label, r in (("python", slow), ("compiled", fast)):
            print(f"{name:24s} {label:9s} {r['wall_s']:8.3f} {r['stepping_s']:8.3f} "
                  f"{1e6 * r['stepping_s'] / r['steps']:8.1f} {r['steps']:6d} "
                  f"{r['t_end'] / r['wall_s']:7.2f}")
        print(f"{name:24s} {'command':9s} {command:8.3f} {'':8s} {'':8s} {'':6s} "
              f"{fast['t_end'] / command:7.2f}")
        print(f"{'':24s} compiled/python: whole run {fast['wall_s'] / slow['wall_s']:.3f} "
              f"({slow['wall_s'] / fast['wall_s']:.0f}x faster), stepping "
              f"{fast['stepping_s'] / slow['stepping_s']:.3f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
