"""Soak benchmark of resources: a long ``flexmbs run`` in a subprocess, its resident memory
(RSS, from /proc/<pid>/status) sampled through the run, and the results file's size
against the number of outputs (issue 36, "Long runs keep their resources flat").

The model is the seed pendulum (cases/seed_pendulum.toml) at its own h = 1 ms, run three
times: a tenth of ``--steps`` (default 10⁶) with an output every ``--every`` (1000) steps,
``--steps`` with the same output interval (ten times the outputs), and ``--steps`` with
ten times the interval (the first run's number of outputs). Memory must stay flat over a
run (no growth with the steps), and the file must grow only with the outputs: the same
size for the same outputs whatever the steps. Linux only (/proc). Usage::

    python benchmarks/soak_resources.py [--steps 1000000] [--every 1000]

Not part of the test suite (it takes about two minutes); its output goes in
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def rss_mb(pid: int) -> float | None:
    """Resident set size [MB] of process ``pid`` (None once it has gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def soak(case: Path, out: Path, steps: int, every: int, period: float = 0.2):
    """Run ``steps`` steps; returns (exit code, wall [s], samples (n, 2): time [s], RSS
    [MB])."""
    cmd = [sys.executable, "-m", "flexmbs.cli.main", "run", str(case), "--quiet",
           "--set", f"solver.t_end={steps * 1e-3}", "--set", f"solver.output_every={every}",
           "-o", str(out)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    samples = []
    while proc.poll() is None:
        value = rss_mb(proc.pid)
        if value is not None:
            samples.append((time.perf_counter() - start, value))
        time.sleep(period)
    err = proc.stderr.read()
    if proc.returncode != 0:
        print(err, file=sys.stderr)
    return proc.returncode, time.perf_counter() - start, np.array(samples).reshape(-1, 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--every", type=int, default=1000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="flexmbs_soak_"))
    try:
        case = work / "pendulum.toml"
        shutil.copy(ROOT / "cases" / "seed_pendulum.toml", case)
        rows = []
        for steps, every in ((args.steps // 10, args.every), (args.steps, args.every),
                             (args.steps, 10 * args.every)):
            out = work / f"run{steps}_{every}.res.h5"
            code, wall, samples = soak(case, out, steps, every)
            size = out.stat().st_size if out.exists() else 0
            rows.append((steps, every, code, wall, samples, size))
        failures = []
        for steps, every, code, wall, samples, size in rows:
            n_out = steps // every + 1
            t, mem = samples[:, 0], samples[:, 1]
            late = t > 0.5 * t[-1]  # the second half: the run is in its steps
            slope = float(np.polyfit(t[late], mem[late], 1)[0]) if late.sum() > 2 else 0.0
            print(f"{steps} steps, output every {every}: exit {code}, {wall:.1f} s wall; RSS "
                  f"at 25/50/75/100 % of "
                  f"the run {np.interp([0.25, 0.5, 0.75, 1.0], t / t[-1], mem).round(1)} MB, "
                  f"max {mem.max():.1f} MB, second-half slope {slope:+.3f} MB/s; results "
                  f"file {size / 1024:.0f} KiB for {n_out} outputs "
                  f"({size / n_out:.0f} B per output)")
            if code != 0:
                failures.append(f"{steps} steps: exit {code}")
        (s1, _, _, _, m1, z1), (s2, _, _, _, m2, z2), (s3, _, _, _, m3, z3) = rows
        growth = m2[:, 1].max() - m1[:, 1].max()
        per_output = (z2 - z1) / ((s2 - s1) / args.every)
        print(f"10x the steps and outputs: peak RSS {growth:+.1f} MB, file "
              f"{(z2 - z1) / 1024:+.0f} KiB = {per_output:.0f} B per extra output")
        same = m3[:, 1].max() - m1[:, 1].max()
        per_step = (z3 - z1) / (s3 - s1)
        print(f"10x the steps, the same outputs: peak RSS {same:+.1f} MB, file "
              f"{z3 - z1:+d} B = {per_step:.2g} B per extra step")
        if growth > 20.0 or same > 20.0:
            failures.append(f"the peak RSS grew by {max(growth, same):.1f} MB with 10x "
                            f"the steps")
        if abs(z3 - z1) > 1024:
            failures.append(f"the file of the same outputs grew by {z3 - z1} B with 10x "
                            f"the steps")
        print("PASS" if not failures else "FAIL: " + "; ".join(failures))
        return 0 if not failures else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
