"""flexmbs's nonlinear beam against Exudyn's planar beams on Kane et al.'s spin-up.

Run::

    python benchmarks/bench_nonlinear_beam.py --json benchmarks/results/nonlinear_beam.json
    git archive HEAD flexmbs | tar -x -C /tmp/clean   # then: --flexmbs-path /tmp/clean
    python benchmarks/bench_nonlinear_beam.py --repeats 1 --configs flexmbs,ge2d-quad8

Options: ``--h 0.01,0.005,0.0025`` (the step sizes tried, largest first),
``--repeats 3``, ``--configs`` (names below), ``--json [PATH]``, ``--exudyn-fast``
(exudynCPPfast, no range checks), ``--flexmbs-path DIR`` (the flexmbs runs import
flexmbs from DIR, e.g. a clean ``git archive`` of a commit, so that uncommitted edits of
the checkout, which would void the prebuilt kernel, do not count) with
``--flexmbs-commit LABEL`` (recorded), ``--worker`` (internal: one configuration's runs
in this process, JSON on stdout).

Problem (Kane, Ryan and Banerjee 1987; ``validation/kane_exact_reference.py``): a
cantilever L = 10 m, A = 4e-4 m², I = 2e-7 m⁴, E = 7e10 Pa, ρ = 3000 kg/m³, its root
turned about z by the spin-up profile θ(t) (Ω = 6 rad/s reached at T = 15 s), 20 s,
planar, no gravity, no damping. Output: the tip's transverse deflection in the rotating
frame, v(t) = −sin θ x_tip + cos θ y_tip [m], every 0.01 s in both codes.

Configurations (all generalized-α, ρ∞ = 0.9, index 3, fixed step, modified Newton):

* ``flexmbs``: ``ModelBuilder.add_nonlinear_beam`` (Simo–Reissner, 16 elements, 17
  node bodies with Euler parameters: a 3-D model, 119 coordinates and 23 constraint
  equations), ``BeamSection(A, Iy=I, Iz=I, J=2I, ky=1, kz=1)``, ``Material(E, nu=0.3,
  rho)``; a revolute joint and a ``rotation`` drive with ``SpinUp(6, 15)`` at the root;
  ``simulate(..., engine="compiled")`` (the prebuilt kernel) with BLAS on one thread
  (``OPENBLAS_NUM_THREADS=1``). ``flexmbs-blas``: the same with BLAS left at its default
  (two threads on this machine).
* ``ge2d``, ``ge2d-32``, ``ge2d-quad8``: Exudyn's ``ObjectBeamGeometricallyExact2D``
  (``NodeRigidBody2D`` nodes: x, y, φ) with 16 or 32 linear or 8 quadratic (3-node)
  elements; axial EA, bending EI, shear k G A (G = E / (2 (1 + ν)), ν = 0.3, k = 1),
  mass ρA and rotary inertia ρI per length. The root node's x and y are held by
  ``CoordinateConstraint`` to ground, its φ by one whose ``offsetUserFunction`` gives
  θ(t).
* ``ancf``: Exudyn's ``ObjectANCFCable2D`` (``NodePoint2DSlope1``: x, y, x', y'), 16
  elements, EA, EI, ρA; root x, y held, its slope set to (cos θ, sin θ) by two offset
  user functions (the constraint is on the slope's displacement from (1, 0)).

Exudyn runs ``SolveDynamic`` with its generalized-α defaults except Newton's absolute
tolerance: 1e-6 instead of 1e-10. With the default 1e-10, and with 1e-8 and 1e-7, its
Newton iteration stalls in the first 0.06 s (25 iterations, no convergence) and the
solver stops; 1e-6 is the tightest decade that runs (relative tolerance kept at 1e-8).

Equal accuracy. For each configuration, the step sizes of ``--h`` are tried from the
largest down, one run each; the first whose max over the outputs of |v − v_ref| is
within 2e-4 of the peak of the reference is the one timed. v_ref: the independent
planar ANCF solution of ``validation/kane_exact_reference.py`` (16 elements, Radau,
``kane_exact_tip``), computed once and cached in
``benchmarks/results/kane_reference_omega6.json``. A configuration that reaches it at no
step size is timed at the smallest one and marked so.

Timing: ``--repeats`` rounds; in each, every configuration runs in a new process
(interleaved, in the order given), which builds and solves the model twice: the first
call includes loading what the code loads on first use (flexmbs: the prebuilt kernel),
the second rebuilds the model and solves again. Whole solve: ``simulate`` or
``SolveDynamic`` alone (wall time; the model's build and, for Exudyn, ``Assemble`` are
timed apart). µs/step: the second call's whole solve over the steps (flexmbs's own
stepping time is in the JSON too). Best of the rounds. The load average is recorded
before every run. Timings are never asserted anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_FILE = ROOT / "benchmarks" / "results" / "kane_reference_omega6.json"
OMEGA, T_END, SAMPLE, TARGET, RHO_INF = 6.0, 20.0, 0.01, 2e-4, 0.9
NU, SHEAR_K = 0.3, 1.0
EXUDYN_ATOL = 1e-6
#: where the flexmbs workers import flexmbs from (``--flexmbs-path``; None: as installed)
FLEXMBS_PATH = None

#: name: (code, element, elements, nodes per element, BLAS threads or None)
CONFIGS = {
    "flexmbs": ("flexmbs", "nonlinear beam (Simo–Reissner, 3-D)", 16, 2, 1),
    "flexmbs-blas": ("flexmbs", "nonlinear beam, BLAS default threads", 16, 2, None),
    "ge2d": ("exudyn", "BeamGeometricallyExact2D, linear", 16, 2, None),
    "ge2d-32": ("exudyn", "BeamGeometricallyExact2D, linear", 32, 2, None),
    "ge2d-quad8": ("exudyn", "BeamGeometricallyExact2D, quadratic", 8, 3, None),
    "ancf": ("exudyn", "ANCFCable2D", 16, 2, None),
}

#: configurations that solve the same model as another one (the scan is not repeated)
SAME_MODEL = {"flexmbs-blas": "flexmbs"}


def _kane():
    name = "kane_exact_reference"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, ROOT / "validation" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def theta(t: float) -> float:
    """Root angle θ(t) [rad] of the spin-up (scalar maths, for Exudyn's user functions)."""
    ramp = _kane().KANE_BEAM[5]
    if t >= ramp:
        return OMEGA * ramp / 2 + OMEGA * (t - ramp)
    k = 2 * math.pi / ramp
    return OMEGA / ramp * (t * t / 2 + (math.cos(k * t) - 1) / (k * k))


def reference() -> dict:
    """The cached reference {t, v, peak, ...} on the 0.01 s grid (computed if missing)."""
    n_out = round(T_END / SAMPLE) + 1
    if REFERENCE_FILE.exists():
        ref = json.loads(REFERENCE_FILE.read_text())
        if ref["omega"] == OMEGA and len(ref["v"]) == n_out:
            return ref
    ker = _kane()
    t = np.round(np.arange(n_out) * SAMPLE, 10)
    start = time.perf_counter()
    v = ker.kane_exact_tip(OMEGA, t, elements=16)
    ref = {"omega": OMEGA, "t_end": T_END, "sample": SAMPLE, "elements": 16,
           "method": "kane_exact_tip (planar ANCF, Radau, rtol 1e-7, atol 1e-9)",
           "seconds": round(time.perf_counter() - start, 2),
           "peak": ker.peak_abs(t, v), "v": [float(f"{x:.10g}") for x in v]}
    REFERENCE_FILE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE_FILE.write_text(json.dumps(ref, separators=(",", ":")) + "\n")
    return ref


def error(t, v, ref) -> float:
    """max |v − v_ref| over the outputs, over the reference's peak."""
    idx = np.round(np.asarray(t) / SAMPLE).astype(int)
    if not np.allclose(t, idx * SAMPLE, atol=1e-9) or idx[-1] != len(ref["v"]) - 1:
        raise RuntimeError(f"outputs not on the {SAMPLE} s grid to {T_END} s: "
                           f"{len(t)} outputs, last {t[-1]}")
    return float(np.max(np.abs(np.asarray(v) - np.asarray(ref["v"])[idx])) / ref["peak"])


# ----------------------------------------------------------------------------- flexmbs
def _flexmbs_runs(h: float, calls: int, elements: int) -> dict:
    start = time.perf_counter()
    from flexmbs.assembly import System
    from flexmbs.integrators.simulate import simulate
    from flexmbs.modal.fe.beam import BeamSection, Material
    from flexmbs.model import ModelBuilder
    from flexmbs.model.drives import SpinUp
    imported = time.perf_counter() - start
    from flexmbs.compiled import kernel_tag
    where = {"flexmbs": str(Path(sys.modules["flexmbs"].__file__).parent),
             "kernel_tag": kernel_tag()}
    length, area, inertia, young, rho, ramp = _kane().KANE_BEAM

    def build():
        b = ModelBuilder()
        b.add_nonlinear_beam("beam", length, elements,
                             BeamSection(A=area, Iy=inertia, Iz=inertia, J=2 * inertia,
                                         ky=SHEAR_K, kz=SHEAR_K),
                             Material(E=young, nu=NU, rho=rho))
        b.add_marker("ground", "O")
        b.add_marker("beam", "root", node="root")
        b.add_joint("hub", "revolute", "ground.O", "beam.root")
        b.add_drive("spin", "rotation", SpinUp(OMEGA, ramp), marker_i="ground.O",
                    marker_j="beam.root")
        return System(b.finalize())

    out, tip = [], None
    for _ in range(calls):
        t0 = time.perf_counter()
        system = build()
        t1 = time.perf_counter()
        res = simulate(system, T_END, h, "generalized-alpha", rho_inf=RHO_INF,
                       engine="compiled", output_every=round(SAMPLE / h))
        t2 = time.perf_counter()
        if not res.success:
            raise RuntimeError(f"flexmbs run failed: {res.message}")
        st = res.statistics
        out.append({"build_s": t1 - t0, "solve_s": t2 - t1, "steps": int(st["steps"]),
                    "stepping_s": float(st["stepping_time"]),
                    "newton_iterations": int(st["newton_iterations"]),
                    "factorizations": int(st["factorizations"]),
                    "kernels": st.get("kernels"),
                    "compile_time_s": float(st.get("compile_time", 0.0)),
                    "unknowns": int(system.n_q + system.n_c)})
        if tip is None:
            th = np.array([theta(s) for s in res.t])
            x = res.coordinate(f"beam/{elements + 1}.x")
            y = res.coordinate(f"beam/{elements + 1}.y")
            tip = (np.asarray(res.t), -np.sin(th) * x + np.cos(th) * y)
    return {"import_s": imported, "calls": out, "tip": tip, **where}


# ----------------------------------------------------------------------------- Exudyn
def _exudyn_model(exu, kind: str, elements: int, per_element: int):
    import exudyn.itemInterface as eii

    length, area, inertia, young, rho, _ = _kane().KANE_BEAM
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddNode(eii.NodePointGround(referenceCoordinates=[0.0, 0.0, 0.0]))
    m_ground = mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    le = length / elements
    p = per_element - 1  # node intervals per element
    nodes = []
    if kind == "ge2d":
        for i in range(p * elements + 1):
            nodes.append(mbs.AddNode(eii.NodeRigidBody2D(
                referenceCoordinates=[i * le / p, 0.0, 0.0])))
        for e in range(elements):
            mbs.AddObject(eii.ObjectBeamGeometricallyExact2D(
                nodeNumbers=nodes[p * e:p * e + p + 1], length=le,
                massPerLength=rho * area, crossSectionInertia=rho * inertia,
                bendingStiffness=young * inertia, axialStiffness=young * area,
                shearStiffness=SHEAR_K * young / (2 * (1 + NU)) * area))
        offsets = [None, None, lambda mbs, t, item, off: theta(t)]
    else:
        for i in range(elements + 1):
            nodes.append(mbs.AddNode(eii.NodePoint2DSlope1(
                referenceCoordinates=[i * le, 0.0, 1.0, 0.0])))
        for e in range(elements):
            mbs.AddObject(eii.ObjectANCFCable2D(
                nodeNumbers=[nodes[e], nodes[e + 1]], length=le, massPerLength=rho * area,
                bendingStiffness=young * inertia, axialStiffness=young * area))
        offsets = [None, None, lambda mbs, t, item, off: math.cos(theta(t)) - 1.0,
                   lambda mbs, t, item, off: math.sin(theta(t))]
    for c, offset in enumerate(offsets):
        marker = mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=c))
        mbs.AddObject(eii.ObjectConnectorCoordinate(markerNumbers=[m_ground, marker],
                                                    offsetUserFunction=offset or 0))
    sensor = mbs.AddSensor(eii.SensorNode(
        nodeNumber=nodes[-1], storeInternal=True, writeToFile=False,
        outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    unknowns = (len(mbs.systemData.GetODE2Coordinates())
                + len(mbs.systemData.GetAECoordinates()))
    return sc, mbs, sensor, unknowns


def _exudyn_settings(exu, h: float):
    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.startTime, ti.endTime, ti.numberOfSteps = 0.0, T_END, round(T_END / h)
    ti.adaptiveStep = False
    ti.verboseMode = 0
    ti.newton.absoluteTolerance = EXUDYN_ATOL
    ti.generalizedAlpha.spectralRadius = RHO_INF
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = SAMPLE
    return ss


def _exudyn_runs(h: float, calls: int, kind: str, elements: int, per_element: int,
                 fast: bool) -> dict:
    if fast:
        sys.exudynFast = True
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        import exudyn as exu
    imported = time.perf_counter() - start
    out, tip = [], None
    for _ in range(calls):
        t0 = time.perf_counter()
        _sc, mbs, sensor, n_coords = _exudyn_model(exu, kind, elements, per_element)
        t1 = time.perf_counter()
        ok = mbs.SolveDynamic(_exudyn_settings(exu, h),
                              solverType=exu.DynamicSolverType.GeneralizedAlpha)
        t2 = time.perf_counter()
        if not ok:
            raise RuntimeError("Exudyn's SolveDynamic failed")
        it = mbs.sys["dynamicSolver"].it
        out.append({"build_s": t1 - t0, "solve_s": t2 - t1,
                    "steps": int(it.numberOfSteps),
                    "newton_iterations": int(it.newtonStepsCount),
                    "jacobians": int(it.newtonJacobiCount), "unknowns": int(n_coords)})
        if tip is None:
            d = mbs.GetSensorStoredData(sensor)
            th = np.array([theta(s) for s in d[:, 0]])
            tip = (d[:, 0], -np.sin(th) * d[:, 1] + np.cos(th) * d[:, 2])
    return {"import_s": imported, "exudyn": exu.__version__, "calls": out, "tip": tip}


def worker(name: str, h: float, calls: int, fast: bool) -> dict:
    """One configuration's runs in this process: timings, statistics and the error."""
    code, _, elements, per_element, _ = CONFIGS[name]
    if code == "flexmbs":
        out = _flexmbs_runs(h, calls, elements)
    else:
        kind = "ge2d" if name.startswith("ge2d") else "ancf"
        out = _exudyn_runs(h, calls, kind, elements, per_element, fast)
    t, v = out.pop("tip")
    out["error"] = error(t, v, reference())
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_info
        out["blas_threads"] = sorted({i["num_threads"] for i in threadpool_info()
                                      if i["user_api"] == "blas"})
    return out


def run_worker(name: str, h: float, calls: int, fast: bool) -> dict:
    """:func:`worker` in a new process (BLAS threads set through its environment; a
    flexmbs configuration imports flexmbs from FLEXMBS_PATH first, when set)."""
    env = dict(os.environ)
    if CONFIGS[name][0] == "flexmbs" and FLEXMBS_PATH:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (FLEXMBS_PATH,
                                                          env.get("PYTHONPATH"))))
    threads = CONFIGS[name][4]
    if threads is not None:
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--h", repr(h),
           "--calls", str(calls)] + (["--exudyn-fast"] if fast else [])
    load = os.getloadavg()[0]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode:
        return {"failed": done.stderr.strip().splitlines()[-1:] or ["?"], "load": load}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load"] = load
    return result


# ----------------------------------------------------------------------------- driver
def scan(names, hs, fast) -> dict:
    """Largest h of ``hs`` within TARGET for each configuration: {name: {h, reached,
    errors}}."""
    chosen = {}
    for name in names:
        if SAME_MODEL.get(name) in chosen:  # same model, same errors: not run again
            chosen[name] = dict(chosen[SAME_MODEL[name]])
            continue
        errors = {}
        for h in hs:
            r = run_worker(name, h, 1, fast)
            errors[h] = r.get("error", float("nan"))
            print(f"  scan {name:12s} h = {h:<7g} error/peak "
                  f"{errors[h]:.2e}{'  FAILED ' + str(r['failed']) if 'failed' in r else ''}",
                  flush=True)
            if errors[h] <= TARGET:
                break
        ok = [h for h in hs if errors.get(h, np.inf) <= TARGET]
        chosen[name] = {"h": max(ok) if ok else min(hs), "reached": bool(ok),
                        "errors": {repr(k): v for k, v in errors.items()}}
    return chosen


def summarize(name, runs) -> dict:
    good = [r for r in runs if "calls" in r]
    if not good:
        return {"failed": runs[-1].get("failed")}
    first = min(r["calls"][0]["solve_s"] for r in good)
    second = min(r["calls"][-1]["solve_s"] for r in good)
    c = good[0]["calls"][-1]
    row = {"first_solve_s": first, "second_solve_s": second, "steps": c["steps"],
           "us_per_step": 1e6 * second / c["steps"],
           "newton_iterations": c["newton_iterations"], "error": good[0]["error"],
           "build_s": min(r["calls"][-1]["build_s"] for r in good),
           "unknowns": c["unknowns"], "loads": [r["load"] for r in runs],
           "blas_threads": good[0].get("blas_threads")}
    if CONFIGS[name][0] == "flexmbs":
        row["factorizations"] = c["factorizations"]
        row["kernels"] = c["kernels"]
        row["kernel_tag"] = good[0]["kernel_tag"]
        row["flexmbs"] = good[0]["flexmbs"]
        row["first_call_compile_s"] = [r["calls"][0]["compile_time_s"] for r in good]
        row["stepping_us_per_step"] = 1e6 * min(r["calls"][-1]["stepping_s"]
                                                for r in good) / c["steps"]
    else:
        row["jacobians"] = c["jacobians"]
        row["exudyn"] = good[0]["exudyn"]
    return row


def table(rows, chosen) -> str:
    base = rows.get("flexmbs", {}).get("us_per_step")
    lines = ["| config | code | element | n | unknowns | h | steps | error/peak | whole run "
             "1st / 2nd call [s] | µs/step | flexmbs/this | Newton it., factorizations |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        code, element, n, _, _ = CONFIGS[name]
        if "failed" in row:
            lines.append(f"| {name} | {code} | {element} | {n} | | | | failed | | | | |")
            continue
        mark = "" if chosen[name]["reached"] else " (not reached)"
        ratio = f"{base / row['us_per_step']:.2f}" if base else ""
        fact = row.get("factorizations", row.get("jacobians"))
        lines.append(
            f"| {name} | {code} | {element} | {n} | {row['unknowns']} | {chosen[name]['h']:g} "
            f"| {row['steps']} "
            f"| {row['error']:.2e}{mark} | {row['first_solve_s']:.2f} / "
            f"{row['second_solve_s']:.2f} | {row['us_per_step']:.0f} | {ratio} | "
            f"{row['newton_iterations']}, {fact} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--h", default="0.01,0.005,0.0025")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--json", nargs="?", const="-", default=None)
    p.add_argument("--exudyn-fast", action="store_true")
    p.add_argument("--worker", choices=tuple(CONFIGS))
    p.add_argument("--calls", type=int, default=2)
    p.add_argument("--flexmbs-path", default=None,
                   help="import flexmbs from this folder in the flexmbs runs (e.g. a "
                        "clean `git archive` of a commit)")
    p.add_argument("--flexmbs-commit", default=None, help="label recorded in the JSON")
    args = p.parse_args(argv)
    global FLEXMBS_PATH
    FLEXMBS_PATH = args.flexmbs_path
    if args.worker:
        h = float(args.h)
        print(json.dumps(worker(args.worker, h, args.calls, args.exudyn_fast)))
        return 0
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = set(names) - set(CONFIGS)
    if unknown:
        p.error(f"unknown configs {sorted(unknown)}; known: {list(CONFIGS)}")
    hs = sorted((float(x) for x in args.h.split(",")), reverse=True)
    ref = reference()
    print(f"reference peak |v| = {ref['peak']:.7f} m; load {os.getloadavg()}", flush=True)
    chosen = scan(names, hs, args.exudyn_fast)
    runs = {name: [] for name in names}
    for k in range(args.repeats):
        for name in names:
            r = run_worker(name, chosen[name]["h"], args.calls, args.exudyn_fast)
            runs[name].append(r)
            solve = [f"{c['solve_s']:.2f}" for c in r.get("calls", [])]
            print(f"  round {k + 1} {name:12s} load {r['load']:.2f} solve {solve} s",
                  flush=True)
    rows = {name: summarize(name, runs[name]) for name in names}
    text = table(rows, chosen)
    print(text)
    if args.json:
        data = {"date": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(),
                "load_end": list(os.getloadavg()), "target": TARGET, "rho_inf": RHO_INF,
                "exudyn_newton_atol": EXUDYN_ATOL, "exudyn_fast": args.exudyn_fast,
                "flexmbs_path": FLEXMBS_PATH, "flexmbs_commit": args.flexmbs_commit,
                "reference_peak": ref["peak"], "scan": chosen, "rows": rows, "runs": runs,
                "table": text}
        out = json.dumps(data, indent=1, default=str)
        if args.json == "-":
            print(out)
        else:
            Path(args.json).write_text(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
