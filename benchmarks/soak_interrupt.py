"""Soak test: a run of 10⁶ steps driven through ``flexmbs run`` in a subprocess,
interrupted by SIGINT, continued with ``--restart`` and interrupted by SIGTERM,
continued again to the end, and compared with the same run made without interruption.

Each interruption must leave a valid results file (it loads: checksum and structure
verified) with status "interrupted" and exit code 130 (SIGINT) or 143 (SIGTERM); the
run continued twice must equal the uninterrupted one to round-off.

The model is the seed pendulum (cases/seed_pendulum.toml) run to t_end = 1000 s at its
own h = 1 ms (10⁶ steps), an output every 1000 steps. Usage::

    python benchmarks/soak_interrupt.py [--steps 1000000] [--after 4]

``--after``: seconds of stepping before each signal (the first run also loads the
kernels). Not part of the test suite (it takes about a minute); its output goes in
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flexmbs.integrators import SimulationResult  # noqa: E402


def flexmbs_run(case: Path, out: Path, t_end: float, *extra: str,
                signal_after: tuple[int, float] | None = None):
    """``flexmbs run`` in a subprocess; with ``signal_after`` = (signal, seconds) the
    signal is sent that long after the start. Returns (exit code, wall time [s])."""
    cmd = [sys.executable, "-m", "flexmbs.cli.main", "run", str(case), "--quiet",
           "--set", f"solver.t_end={t_end}", "--set", "solver.output_every=1000",
           "-o", str(out), *extra]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    if signal_after is not None:
        try:
            proc.wait(timeout=signal_after[1])
        except subprocess.TimeoutExpired:
            proc.send_signal(signal_after[0])
    stdout, stderr = proc.communicate()
    if proc.returncode not in (0, 130, 143):
        print(stdout, stderr, file=sys.stderr)
    return proc.returncode, time.perf_counter() - start


def get(result, key: str):
    """A result's array by name, "steps.<column>" for the step record's."""
    for part in key.split("."):
        result = getattr(result, part)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--after", type=float, default=4.0)
    args = parser.parse_args()
    t_end = args.steps * 1e-3
    work = Path(tempfile.mkdtemp(prefix="flexmbs_soak_"))
    try:
        case = work / "pendulum.toml"
        shutil.copy(ROOT / "cases" / "seed_pendulum.toml", case)
        whole, cut = work / "whole.res.h5", work / "cut.res.h5"
        code, wall = flexmbs_run(case, whole, t_end)
        reference = SimulationResult.load(whole)
        print(f"uninterrupted: exit {code}, {reference.statistics['steps']} steps, "
              f"{wall:.1f} s wall, {reference.statistics['stepping_time']:.1f} s stepping")
        failures = []
        for label, (signum, expected), restart in (
                ("SIGINT", (signal.SIGINT, 130), ()),
                ("SIGTERM", (signal.SIGTERM, 143), ("--restart", str(cut)))):
            code, wall = flexmbs_run(case, cut, t_end, *restart,
                                     signal_after=(signum, args.after))
            part = SimulationResult.load(cut)  # raises if the file is not valid
            print(f"{label} after {args.after:g} s: exit {code}, status {part.status!r}, "
                  f"stopped at t = {part.t[-1]:.3f} s ({part.statistics['steps']} steps), "
                  f"file valid, {wall:.1f} s wall")
            if code != expected or part.status != "interrupted":
                failures.append(f"{label}: exit {code}, status {part.status}")
        code, wall = flexmbs_run(case, cut, t_end, "--restart", str(cut))
        final = SimulationResult.load(cut)
        worst = max(float(np.nanmax(np.abs(get(final, k) - get(reference, k))))
                    for k in ("t", "q", "qd", "qdd", "lam", "steps.count", "steps.h_min",
                              "steps.h_max", "steps.h_mean", "steps.iterations"))
        same_shape = final.q.shape == reference.q.shape
        print(f"continued to the end: exit {code}, status {final.status!r}, restarts at "
              f"{[round(t, 3) for t in final.statistics.get('restarts', [])]} s; "
              f"largest difference from the uninterrupted run: {worst:.3g} "
              f"(same outputs: {same_shape})")
        if code != 0 or not same_shape or worst > 1e-12:
            failures.append("the continued run differs from the uninterrupted one")
        print("PASS" if not failures else "FAIL: " + "; ".join(failures))
        return 0 if not failures else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
