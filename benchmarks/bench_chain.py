"""Many bodies: a planar chain of N flexible beams, flexmbs against Exudyn.

Run::

    python benchmarks/bench_chain.py                       # N = 1, 4, 16, 64, 256
    python benchmarks/bench_chain.py --n 1,4 --t-end 0.2   # a quick look
    python benchmarks/bench_chain.py --flexmbs-only --n 4,8,12,16 --sparse-from 0
    python benchmarks/bench_chain.py --json benchmarks/results/chain.json

Options: ``--n``, ``--t-end`` (s, default 1), ``--t-end-for N=T,...`` (a shorter run for
some N, in both codes), ``--repeats 3``, ``--exudyn-solver sparse|dense``,
``--exudyn-gravity builtin|nodal``, ``--flexmbs-only``, ``--sparse-from ORDER``
(flexmbs's dense/sparse factorisation switch for this run, see below), ``--json PATH``.

Model. N copies of bench_vs_exudyn.py's clamped steel beam (1 m x 20 mm x 10 mm, 40 x 2 x
2 hex8 elements of flexmbs's FE, 369 nodes, 1107 DOF; the same sparse M and K in both
codes, 4 clamped modes each: flexmbs's ``clamped_modes``, Exudyn's
``ComputeEigenModesWithBoundaryNodes``; the frame on the clamped face x = 0). Beam k's
frame starts at (k, 0, 0), all along x. Revolute joints about z: ground to beam 0's
clamped face, and the free-end face (x = 1) of beam k - 1 to the clamped face of beam
k. flexmbs: ``node_set`` interface markers (mean and least-squares rotation of the face
nodes). Exudyn: ``MarkerNodeRigid`` on the frame node and ``MarkerSuperElementRigid``
over the free-end face nodes (uniform weights), ``ObjectJointRevoluteZ``. Gravity
g = 9.81 m/s^2 in -y (in the chain's plane): flexmbs's; Exudyn's built-in
(``AddObjectFFRFreducedOrder(gravity=...)``, what its users run, which leaves out the
gravity moment of the deformation, 3 % of the deflection in bench_vs_exudyn.py's drop)
or, with ``--exudyn-gravity nodal``, mass-weighted nodal loads. Released at rest;
generalized-alpha rho_inf = 0.8, index 3, h = 1e-3, fixed step, modified Newton with
each code's default tolerances. Exudyn's linear solver: ``EigenSparse`` by default (its
advice for larger systems; ``EXUdense`` is its default).

Measured per N, interleaved (one warm-up run of each code, then ``--repeats`` rounds
alternating between them; the best is kept), wall time:

* stepping per step: flexmbs ``statistics["stepping_time"]``; Exudyn ``SolveSteps``;
* whole run: flexmbs builds the model (ModelBuilder, System) and ``simulate``s
  (setup, steps, outputs every 10 ms); Exudyn builds the model, ``Assemble``s and runs
  ``InitializeSolver`` + ``SolveSteps`` + ``FinalizeSolver`` (``SolveDynamic``'s
  ``SolveSystem``), a sensor storing the tip every 10 ms. The modal data (flexmbs) and
  the FEMinterface with its modes (Exudyn) are made once, outside the timings;
* Newton iterations per step and factorisations;
* the tip motion: the global position of the last beam's free-end centre node over
  time, max_t |r_flexmbs - r_Exudyn| [m] (every 10 ms).

flexmbs factors its iteration matrix (order n_q + n_c = 17 N here) dense (LAPACK getrf)
below ``flexmbs.engine.compiled_system.SPARSE_FROM`` and sparse (SuperLU) from it on
(docs/compiled.md, "Factorisation: dense or sparse"); ``--sparse-from`` overrides the
switch for this process (benchmarking the switch, not a user option).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
from bench_vs_exudyn import LX, TIP, _fmt, _git_rev, build_mesh, ensure_kernels, import_exudyn

GRAVITY = 9.81
RHO_INF = 0.8
H = 1e-3
N_MODES = 4
#: Output (flexmbs) and sensor (Exudyn) period [s].
SAMPLE = 1e-2


# --------------------------------------------------------------------------- flexmbs
class FlexChain:
    def __init__(self, mesh):
        from flexmbs.modal.reduction import clamped_modes

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.data = clamped_modes(mesh.fe, "x0", N_MODES)
        nodes = np.asarray(self.data.nodes)
        k = int(np.argmin(np.linalg.norm(nodes - TIP, axis=1)))
        self.tip_point = nodes[k]
        self.tip_rows = np.asarray(self.data.phi)[3 * k:3 * k + 3]

    def system(self, n_bodies: int):
        from flexmbs.assembly import System
        from flexmbs.model import ModelBuilder

        b = ModelBuilder(gravity=(0.0, -GRAVITY, 0.0))
        b.add_marker("ground", "O")
        previous = "ground.O"
        for k in range(n_bodies):
            name = f"beam{k}"
            b.add_flexible_body(name, self.data, position=(k * LX, 0.0, 0.0))
            b.add_marker(name, "root", node_set="x0")
            if k < n_bodies - 1:
                b.add_marker(name, "tip", node_set="x1")
            b.add_revolute(f"joint{k}", previous, f"{name}.root")
            previous = f"{name}.tip"
        return System(b.finalize())

    def run(self, n_bodies: int, t_end: float, record: bool) -> dict:
        from flexmbs.frame.rotations import rotation_matrix
        from flexmbs.integrators.simulate import simulate

        start = time.perf_counter()
        system = self.system(n_bodies)
        res = simulate(system, t_end, H, "generalized-alpha", rho_inf=RHO_INF,
                       output_every=round(SAMPLE / H))
        wall = time.perf_counter() - start
        st = res.statistics
        out = {"whole_s": wall, "step_s": st["stepping_time"] / st["steps"],
               "steps": int(st["steps"]), "newton": int(st["newton_iterations"]),
               "factorizations": st.get("factorizations"), "success": bool(res.success),
               "message": str(res.message), "n_q": system.n_q, "n_c": system.n_c}
        if record:
            sl = system.slices[-1]
            q = np.asarray(res.q)
            tips = []
            for row in q:
                a = rotation_matrix(row[sl.start + 3:sl.start + 7])
                xi = row[sl.start + 7:sl.start + 7 + N_MODES]
                tips.append(row[sl.start:sl.start + 3] + a @ (self.tip_point
                                                              + self.tip_rows @ xi))
            out["t"], out["tip"] = np.asarray(res.t), np.asarray(tips)
        return out


# ---------------------------------------------------------------------------- Exudyn
class ExuChain:
    def __init__(self, exu, mesh, solver: str, gravity: str):
        from exudyn.FEM import FEMinterface, ObjectFFRFreducedOrderInterface

        self.exu, self.mesh, self.solver, self.gravity = exu, mesh, solver, gravity
        fem = FEMinterface()
        fem.nodes = {"Position": np.array(mesh.fe.nodes, dtype=float)}
        fem.massMatrix = mesh.fe.mass.tocsr()
        fem.stiffnessMatrix = mesh.fe.stiffness.tocsr()
        with contextlib.redirect_stdout(io.StringIO()):
            fem.ComputeEigenModesWithBoundaryNodes(
                boundaryNodes=[int(i) for i in mesh.clamp], nEigenModes=N_MODES,
                useSparseSolver=False)
        self.cms = ObjectFFRFreducedOrderInterface(fem)
        nodes = np.asarray(mesh.fe.nodes)
        self.free_end = [int(i) for i in np.flatnonzero(np.isclose(nodes[:, 0], LX))]

    def build(self, n_bodies: int):
        exu = self.exu
        import exudyn.itemInterface as eii

        sc = exu.SystemContainer()
        mbs = sc.AddSystem()
        builtin = self.gravity == "builtin"
        ground = mbs.AddObject(eii.ObjectGround())
        previous = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=ground,
                                                     localPosition=[0.0, 0.0, 0.0]))
        weights = [1.0 / len(self.free_end)] * len(self.free_end)
        mass = self.mesh.node_mass
        body = None
        for k in range(n_bodies):
            body = self.cms.AddObjectFFRFreducedOrder(
                mbs, positionRef=[k * LX, 0.0, 0.0], initialVelocity=[0.0, 0.0, 0.0],
                initialAngularVelocity=[0.0, 0.0, 0.0],
                gravity=[0.0, -GRAVITY, 0.0] if builtin else [0.0, 0.0, 0.0])
            root = mbs.AddMarker(eii.MarkerNodeRigid(nodeNumber=body["nRigidBody"]))
            mbs.AddObject(eii.ObjectJointRevoluteZ(markerNumbers=[previous, root]))
            if k < n_bodies - 1:
                previous = mbs.AddMarker(eii.MarkerSuperElementRigid(
                    bodyNumber=body["oFFRFreducedOrder"], offset=[0.0, 0.0, 0.0],
                    meshNodeNumbers=self.free_end, weightingFactors=weights))
            if not builtin:
                marker = mbs.AddMarker(eii.MarkerSuperElementPosition(
                    bodyNumber=body["oFFRFreducedOrder"],
                    meshNodeNumbers=list(range(mass.size)),
                    weightingFactors=list(mass / mass.sum())))
                mbs.AddLoad(eii.LoadForceVector(
                    markerNumber=marker, loadVector=[0.0, -GRAVITY * mass.sum(), 0.0]))
        tip = mbs.AddMarker(eii.MarkerSuperElementPosition(
            bodyNumber=body["oFFRFreducedOrder"], meshNodeNumbers=[self.mesh.tip],
            weightingFactors=[1.0]))
        sensor = mbs.AddSensor(eii.SensorMarker(
            markerNumber=tip, storeInternal=True, writeToFile=False,
            outputVariableType=exu.OutputVariableType.Position))
        return sc, mbs, sensor

    def settings(self, t_end: float):
        exu = self.exu
        ss = exu.SimulationSettings()
        ti = ss.timeIntegration
        ti.startTime, ti.endTime = 0.0, t_end
        ti.numberOfSteps = round(t_end / H)
        ti.adaptiveStep = False
        ti.automaticStepSize = False
        ti.verboseMode = 0
        ti.newton.useModifiedNewton = True
        ga = ti.generalizedAlpha
        ga.spectralRadius = RHO_INF
        ga.useIndex2Constraints = False
        ga.useNewmark = False
        ga.computeInitialAccelerations = True
        ss.solution.file.write = False
        ss.solution.sensors.active = True
        ss.solution.sensors.writePeriod = SAMPLE
        ss.linearSolver.solverType = (exu.LinearSolverType.EigenSparse
                                      if self.solver == "sparse"
                                      else exu.LinearSolverType.EXUdense)
        return ss

    def run(self, n_bodies: int, t_end: float, record: bool) -> dict:
        exu = self.exu
        w0 = time.perf_counter()
        sc, mbs, sensor = self.build(n_bodies)
        mbs.Assemble()
        ss = self.settings(t_end)
        solver = exu.MainSolverImplicitSecondOrder()
        ok = solver.InitializeSolver(mbs, ss)
        w1 = time.perf_counter()
        ok = solver.SolveSteps(mbs, ss) and ok is not False
        w2 = time.perf_counter()
        solver.FinalizeSolver(mbs, ss)
        w3 = time.perf_counter()
        it = solver.it
        steps = int(it.numberOfSteps) or round(t_end / H)
        out = {"whole_s": w3 - w0, "step_s": (w2 - w1) / steps, "steps": steps,
               "newton": int(it.newtonStepsCount), "factorizations": int(it.newtonJacobiCount),
               "success": bool(ok) and abs(float(it.currentTime) - t_end) < 1e-9}
        if record:
            data = np.asarray(mbs.GetSensorStoredData(sensor))
            out["t"], out["tip"] = data[:, 0], data[:, 1:4]
        del sc
        return out


# ------------------------------------------------------------------------- benchmark
@dataclass
class Result:
    n: int
    t_end: float
    flex: dict
    exu: dict | None
    tip_max_diff_m: float | None = None
    tip_max_diff_rel: float | None = None


def _best(runs, key):
    return min(r[key] for r in runs)


def tip_deviation(f: dict, e: dict) -> tuple[float, float]:
    """(max_t |r_f - r_e| [m], the same over max_t |r_e(t) - r_e(0)|) at common times."""
    idx = np.clip(np.searchsorted(e["t"], f["t"] - 0.25 * H), 0, e["t"].size - 1)
    keep = np.abs(e["t"][idx] - f["t"]) < 0.01 * H
    if not keep.any():
        raise RuntimeError("no common sampling times")
    diff = float(np.max(np.linalg.norm(f["tip"][keep] - e["tip"][idx[keep]], axis=1)))
    travel = float(np.max(np.linalg.norm(e["tip"] - e["tip"][0], axis=1)))
    return diff, diff / travel


def summary(runs: list, warm: dict) -> dict:
    last = runs[-1]
    out = {"step_us": 1e6 * _best(runs, "step_s"), "whole_s": _best(runs, "whole_s"),
           "steps": last["steps"], "newton_per_step": last["newton"] / last["steps"],
           "factorizations": last["factorizations"],
           "success": all(r["success"] for r in [warm, *runs]),
           "step_us_runs": [1e6 * r["step_s"] for r in runs],
           "whole_s_runs": [r["whole_s"] for r in runs]}
    for key in ("n_q", "n_c", "message"):
        if key in last:
            out[key] = last[key]
    return out


def bench(n: int, t_end: float, flex: FlexChain, exu: ExuChain | None, repeats: int,
          log) -> Result:
    f0 = flex.run(n, t_end, record=True)  # warm-up and the tip history
    e0 = exu.run(n, t_end, record=True) if exu is not None else None
    f_runs, e_runs = [], []
    for _ in range(repeats):
        f_runs.append(flex.run(n, t_end, record=False))
        if exu is not None:
            e_runs.append(exu.run(n, t_end, record=False))
    res = Result(n, t_end, summary(f_runs, f0), None if exu is None else summary(e_runs, e0))
    if e0 is not None:
        try:
            res.tip_max_diff_m, res.tip_max_diff_rel = tip_deviation(f0, e0)
        except RuntimeError as exc:
            log(f"  N = {n}: tip histories not compared: {exc}")
    if not f0["success"]:
        log(f"  N = {n}: flexmbs: {f0['message']}")
    return res


HEADER = (f"{'N':>4} {'n':>5} {'t_end':>5} | {'stepping [µs/step]':^28} | "
          f"{'whole run [s]':^21} | {'it/step':^11} | {'factorisations':^13} | "
          f"{'max|Δtip|':>9} {'/travel':>8}\n"
          f"{'':>4} {'':>5} {'[s]':>5} | {'flexmbs':>8} {'/N':>6} {'Exudyn':>8} {'f/E':>4} | "
          f"{'flexmbs':>7} {'Exudyn':>7} {'f/E':>5} | {'f':>5} {'E':>5} | {'f':>6} {'E':>6} | "
          f"{'[m]':>9} {'':>8}")


def format_result(r: Result) -> str:
    f, e = r.flex, r.exu or {}
    step_ratio = f["step_us"] / e["step_us"] if e else None
    whole_ratio = f["whole_s"] / e["whole_s"] if e else None
    return (f"{r.n:>4} {f['n_q'] + f['n_c']:>5} {r.t_end:>5g} | {f['step_us']:>8.0f} "
            f"{f['step_us'] / r.n:>6.1f} {_fmt(e.get('step_us'), '.0f', 8)} "
            f"{_fmt(step_ratio, '.2f', 4)} | {f['whole_s']:>7.3f} "
            f"{_fmt(e.get('whole_s'), '.3f', 7)} {_fmt(whole_ratio, '.2f', 5)} | "
            f"{f['newton_per_step']:>5.2f} {_fmt(e.get('newton_per_step'), '.2f', 5)} | "
            f"{_fmt(f['factorizations'], 'd', 6)} {_fmt(e.get('factorizations'), 'd', 6)} | "
            f"{_fmt(r.tip_max_diff_m, '.1e', 9)} {_fmt(r.tip_max_diff_rel, '.1e', 8)}")


def compare_switch(args, flex: FlexChain, compiled_system, log) -> int:
    """flexmbs's stepping per step with each switch order of --compare-sparse-from:
    one warm-up run per order, then --repeats rounds over the orders; best kept."""
    orders = args.compare_sparse_from
    log("flexmbs only: µs per step of the stepping (best of the rounds) with the sparse "
        "factorisation from the given matrix orders on; factorisations in brackets")
    log(f"{'N':>4} {'n':>5} " + " ".join(f"{'from ' + str(o):>22}" for o in orders))
    rows = []
    for n in args.n:
        t_end = args.t_end_for.get(n, args.t_end)
        runs = {o: [] for o in orders}
        for round_ in range(args.repeats + 1):  # round 0: warm-up
            for o in orders:
                compiled_system.SPARSE_FROM = o
                r = flex.run(n, t_end, record=False)
                if round_ > 0:
                    runs[o].append(r)
        first = runs[orders[0]][-1]
        size = first["n_q"] + first["n_c"]
        cells = []
        for o in orders:
            best = 1e6 * _best(runs[o], "step_s")
            kind = "sparse" if size >= o else "dense"
            cells.append(f"{best:>10.1f} ({kind}, {runs[o][-1]['factorizations']})")
        rows.append({"n": n, "order": size, "t_end": t_end,
                     "step_us": {str(o): 1e6 * _best(runs[o], "step_s") for o in orders},
                     "step_us_runs": {str(o): [1e6 * r["step_s"] for r in runs[o]]
                                      for o in orders}})
        log(f"{n:>4} {size:>5} " + " ".join(f"{c:>22}" for c in cells))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"settings": {"orders": orders, "repeats": args.repeats,
                                              "flexmbs_rev": _git_rev()},
                                 "rows": rows}, indent=1) + "\n")
        log(f"results written to {args.json}")
    return 0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", default="1,4,16,64,256", help="chain lengths, e.g. 1,4,16")
    p.add_argument("--t-end", type=float, default=1.0, help="simulated time [s]")
    p.add_argument("--t-end-for", default="", metavar="N=T,...",
                   help="a shorter simulated time for some N (both codes), e.g. 256=0.25")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per code (best kept)")
    p.add_argument("--exudyn-solver", choices=("sparse", "dense"), default="sparse",
                   help="Exudyn's linear solver: EigenSparse (default) or EXUdense")
    p.add_argument("--exudyn-gravity", choices=("builtin", "nodal"), default="builtin")
    p.add_argument("--flexmbs-only", action="store_true", help="leave Exudyn out")
    p.add_argument("--sparse-from", type=int, default=None, metavar="ORDER",
                   help="flexmbs: factor sparse from this matrix order on (this process)")
    p.add_argument("--compare-sparse-from", default=None, metavar="A,B,...",
                   help="flexmbs only: stepping per step with each of these switch orders, "
                        "interleaved (e.g. 0,1000000000: sparse against dense)")
    p.add_argument("--json", default=None, metavar="PATH", help="also write JSON to PATH")
    args = p.parse_args(argv)
    args.n = [int(v) for v in args.n.split(",") if v.strip()]
    if args.compare_sparse_from is not None:
        args.compare_sparse_from = [int(float(v)) for v in args.compare_sparse_from.split(",")
                                    if v.strip()]
    args.t_end_for = {int(k): float(v) for k, v in
                      (item.split("=") for item in args.t_end_for.split(",") if item.strip())}
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    ensure_kernels()

    def log(*parts):
        print(*parts, flush=True)

    import flexmbs
    import flexmbs.engine.compiled_system as compiled_system

    if args.sparse_from is not None:
        compiled_system.SPARSE_FROM = args.sparse_from
    exu = None if args.flexmbs_only else import_exudyn(False)
    log(f"chain of N flexible beams (1 m steel, 369 nodes, {N_MODES} clamped modes each), "
        f"revolute joints about z, gravity -y; generalized-α ρ∞ = {RHO_INF}, h = {H:g}")
    log(f"machine: {platform.node()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f} (shared); best of {args.repeats} after a warm-up, "
        "interleaved")
    log(f"flexmbs {getattr(flexmbs, '__version__', '?')} at {_git_rev()}; sparse "
        f"factorisation from order {compiled_system.SPARSE_FROM}"
        + ("" if exu is None else f"; Exudyn {exu.__version__}, {args.exudyn_solver} "
           f"solver, {args.exudyn_gravity} gravity, modified Newton"))
    mesh = build_mesh()
    flex = FlexChain(mesh)
    if args.compare_sparse_from:
        return compare_switch(args, flex, compiled_system, log)
    exu_chain = (None if exu is None
                 else ExuChain(exu, mesh, args.exudyn_solver, args.exudyn_gravity))
    log(HEADER)
    results = []
    for n in args.n:
        r = bench(n, args.t_end_for.get(n, args.t_end), flex, exu_chain, args.repeats, log)
        results.append(r)
        log(format_result(r))
    per_body = [r.flex["step_us"] / r.n for r in results]
    log("\nflexmbs stepping per body and step: "
        + ", ".join(f"N={r.n}: {p:.1f} µs" for r, p in zip(results, per_body, strict=True)))
    bad = [r.n for r in results if not r.flex["success"] or (r.exu and not r.exu["success"])]
    if bad:
        log(f"FAILED runs: N = {bad}")
    if args.json:
        payload = {"settings": {"rho_inf": RHO_INF, "h": H, "modes": N_MODES,
                                "gravity": GRAVITY, "sample": SAMPLE, "repeats": args.repeats,
                                "sparse_from": compiled_system.SPARSE_FROM,
                                "exudyn": None if exu is None else exu.__version__,
                                "exudyn_solver": args.exudyn_solver,
                                "exudyn_gravity": args.exudyn_gravity,
                                "flexmbs_rev": _git_rev(), "cpu_count": os.cpu_count()},
                   "rows": [vars(r) for r in results]}
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(payload, indent=1) + "\n")
        log(f"results written to {args.json}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
