"""Start-up of `flexmbs run CASE` as a user waits: wall time of the whole command in fresh
processes, best of R, and the whole-run real-time factor (simulated time over that wall
time).

    python benchmarks/bench_startup.py                      # this tree, the seed arm
    python benchmarks/bench_startup.py --before /tmp/old    # interleaved with another tree
    python benchmarks/bench_startup.py --cases arm_beam_seed,seed_pendulum --repeats 9

Each tree is timed twice: without compiled bytecode (``__pycache__`` removed and
``PYTHONDONTWRITEBYTECODE=1``, what this machine's environment sets: every flexmbs module
is compiled from source at every start) and with it (``compileall`` first, as an
installed package has). Another tree (``--before``: e.g. ``git archive REV | tar -x -C
DIR``) runs interleaved with this one, so that the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import time

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

HERE = pathlib.Path(__file__).resolve().parents[1]


def _clean(tree: pathlib.Path) -> None:
    for folder in (tree / "flexmbs").rglob("__pycache__"):
        shutil.rmtree(folder, ignore_errors=True)


def _compile(tree: pathlib.Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "flexmbs")],
                   env=env, check=True, capture_output=True)


def _once(tree: pathlib.Path, case: str, out: pathlib.Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "flexmbs.cli.main", "run", str(tree / "cases" / f"{case}.toml"),
           "--quiet", "-o", str(out)]
    start = time.perf_counter()
    # cwd: not a source tree (``python -m`` puts the working folder first on the path)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=out.parent)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return wall


def _t_end(case: str) -> float:
    return float(tomllib.loads((HERE / "cases" / f"{case}.toml").read_text())["solver"]["t_end"])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="arm_beam_seed", help="shipped cases, comma-separated")
    p.add_argument("--repeats", type=int, default=5, help="runs per tree and variant")
    p.add_argument("--before", default=None, metavar="DIR",
                   help="another source tree to time interleaved with this one")
    args = p.parse_args(argv)
    trees = {"this": HERE}
    if args.before:
        trees = {"before": pathlib.Path(args.before).resolve(), "after": HERE}
    out = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / "flexmbs-startup.res.h5"
    print(f"load average {os.getloadavg()[0]:.2f}; best of {args.repeats}, interleaved")
    try:
        for pyc in (False, True):
            for tree in trees.values():
                (_compile if pyc else _clean)(tree)
            for case in args.cases.split(","):
                times = {name: [] for name in trees}
                for _ in range(args.repeats):
                    for name, tree in trees.items():
                        times[name].append(_once(tree, case, out))
                t_end = _t_end(case)
                cells = [f"{name}: {min(v):.3f} s (median {sorted(v)[len(v) // 2]:.3f}), "
                         f"real-time factor {t_end / min(v):.2f}" for name, v in times.items()]
                print(f"{case:20s} {'bytecode' if pyc else 'no bytecode':12s} "
                      + " | ".join(cells), flush=True)
    finally:
        for tree in trees.values():
            _clean(tree)
        out.unlink(missing_ok=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
