"""flexmbs against Exudyn on the same reduced flexible beam: timing and accuracy.

Run::

    python benchmarks/bench_vs_exudyn.py            # all 12 rows (~15 min on 2 cores)
    python benchmarks/bench_vs_exudyn.py --quick    # h = 1e-3 only, shorter runs (~30 s)
    python benchmarks/bench_vs_exudyn.py --only drop --modes 4,16 --h 1e-3 --json out.json

Options: ``--only spin|drop``, ``--modes 4,8,16``, ``--h 1e-4,1e-3``, ``--repeats 3``,
``--cpu`` (table in process CPU time), ``--json [PATH]`` (stdout without PATH),
``--no-lmp``, ``--exudyn-fast`` (exudynCPPfast), ``--exudyn-full-newton``,
``--whole`` and ``--whole-dir DIR``, ``--equal-accuracy`` (below).

``--whole`` adds whole runs, timed as a user waits, against Exudyn with the gravity its
users run (built-in for the drop): in this process flexmbs's ``load_case`` +
``run_case`` of a case file (on the modal data written with ``write_modal``) against
``exudyn_beam.solve`` (load the FEMinterface file with its modes, build, Assemble,
SolveDynamic); as new processes ``flexmbs run CASE`` against ``python exudyn_beam.py``
(wall time). Outputs every 1 ms in both. ``--equal-accuracy`` adds flexmbs with
``newton="converged"`` against Exudyn with its defaults, and each code's deviation of
the tip from its own converged answer (flexmbs: every tolerance ten times tighter than
"converged"; Exudyn: Newton tolerances 1e-12/1e-14). Both print a table of their own
after the main one and go into the JSON (``whole``, ``equal`` of each row)::

    python benchmarks/bench_vs_exudyn.py --whole --equal-accuracy \
        --json benchmarks/results/exudyn_whole.json

Exudyn (``pip install exudyn``) is a benchmark-only dependency; without it the script
says so and prints the flexmbs figures alone.

Model. A clamped solid steel beam 1 m x 20 mm x 10 mm (x, y, z), 40 x 2 x 2 hexahedra of
flexmbs's own hex8 FE (``box_mesh``, consistent mass; E = 210 GPa, nu = 0.3, rho = 7850
kg/m^3; 369 nodes, 1107 DOF). The mesh is placed with its clamped face x = 0 centred on
the origin (``origin=(0, -ly/2, -lz/2)``), so the body frame of both codes sits at the
centre of that face and the tip node (free-end centre) is at (1, 0, 0) (the node
(1, 0.01, 0.005) of the mesh at box_mesh's default origin).

* flexmbs reduces it with ``clamped_modes(fe, "x0", n)`` (frame attached to the face).
* Exudyn gets the same sparse M, K and node coordinates in an ``FEMinterface``
  (``nodes``, ``massMatrix``, ``stiffnessMatrix``), computes its own clamped modes
  (``ComputeEigenModesWithBoundaryNodes`` with the x = 0 nodes fixed: Exudyn's
  ``ComputeEigenmodes`` has no boundary nodes) and builds ``ObjectFFRFreducedOrder``
  with ``ObjectFFRFreducedOrderInterface.AddObjectFFRFreducedOrder`` (Euler-parameter
  frame node). The joint acts on a ``MarkerNodeRigid`` on the frame's reference node,
  which is the clamped-face centre.

Cases (generalized-alpha, rho_inf = 0.9, index 3, fixed step, no step adaptivity):

* ``spin``: rotation about the global z axis through the clamped face prescribed as the
  Kane et al. spin-up (Omega = 2 rad/s reached at T = 1 s), 2 s, no gravity. flexmbs: a
  revolute joint (axis z) plus a ``rotation`` drive with ``SpinUp(2, 1)``. Exudyn: one
  ``ObjectJointGeneric`` with all six axes locked and an ``offsetUserFunction`` giving the
  rotation offset (0, 0, theta(t)) (a Tait-Bryan offset of the joint frame): the same
  constraint manifold (frame origin fixed, frame rotation = Rz(theta(t))).
* ``drop``: hinged at the clamped face about the global y axis, released horizontal under
  g = 9.81 m/s^2 in -z, 1 s. flexmbs: revolute joint (marker z axes along y),
  ``ModelBuilder(gravity=...)``. Exudyn: ``ObjectJointGeneric`` with the rotation about
  y free, and gravity as nodal loads: a ``MarkerSuperElementPosition`` over all nodes
  with the nodal masses as weights, loaded by ``LoadForceVector`` m g. (Exudyn's own
  ``gravity=`` of ``AddObjectFFRFreducedOrder``, a ``LoadMassProportional``, takes the
  gravity moment about the undeformed centre of mass; it is timed too, as "LMP", with
  its tip difference, to show that effect.)

Measured per row (interleaved in one process: one warm-up run of each code, which also
compiles flexmbs's numba kernels and gives the accuracy histories, then ``--repeats``
timed runs alternating between the codes; the best is kept):

* per-step time [us]: WALL time (``time.perf_counter``) of the stepping alone divided by
  the number of steps. flexmbs: ``SimulationResult.statistics["stepping_time"]`` when
  the result has it, otherwise the time between the progress callbacks after the first
  and the last step (setup, consistent initial accelerations and post-processing
  excluded). Exudyn: ``MainSolverImplicitSecondOrder.SolveSteps`` alone (between
  ``InitializeSolver`` and ``FinalizeSolver``, i.e. ``SolveDynamic`` without its setup).
  Process CPU times are in the JSON output too.
* Newton iterations per step and iteration-matrix factorisations (total) of each code:
  flexmbs from ``statistics`` (else the step record ``steps`` and the integrator's
  ``refreshes``), Exudyn from the solver's ``it.newtonStepsCount`` and
  ``it.newtonJacobiCount`` (one factorisation per Jacobian).
* max_t |d_flexmbs(t) - d_Exudyn(t)| / max_t |d_Exudyn(t)|, d the tip node's elastic
  displacement in the body frame (Phi_tip xi in flexmbs, Psi_tip xi in Exudyn; both
  frames are attached to the clamped face), sampled every 1 ms.

Timings on the shared 2-core project machine vary by +-20-30 % with load (more when
other jobs run: then compare the ``--cpu`` figures, or the JSON's cpu_us_per_step).
Exudyn runs on one thread (its default); flexmbs's small dense LU does not thread.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

# exudyn_beam.py, beside this script (on sys.path when it runs): Exudyn's side of the
# model, whose constants its standalone script shares
import exudyn_beam
import numpy as np
from exudyn_beam import GRAVITY, OMEGA, RAMP, RHO_INF, SAMPLE

#: Beam: lengths [m], elements, material (SI).
LX, LY, LZ = 1.0, 0.02, 0.01
NX, NY, NZ = 40, 2, 2
YOUNG, POISSON, DENSITY = 2.1e11, 0.3, 7850.0
#: Clamped face centred on the origin: the frame origin is the face centre.
ORIGIN = (0.0, -LY / 2, -LZ / 2)
TIP = (LX, 0.0, 0.0)
END_TIME = {"spin": 2.0, "drop": 1.0}
QUICK_END_TIME = {"spin": 1.0, "drop": 0.5}
CASES = ("spin", "drop")


# ----------------------------------------------------------------------------- model
@dataclass
class Mesh:
    fe: object
    clamp: np.ndarray  # node indices of the x = 0 face
    tip: int  # node index of the free-end centre
    node_mass: np.ndarray  # (N,) row sums of the scalar consistent mass [kg]


def build_mesh() -> Mesh:
    from flexmbs.modal.fe.solid import box_mesh

    fe = box_mesh(LX, LY, LZ, NX, NY, NZ, E=YOUNG, nu=POISSON, rho=DENSITY, origin=ORIGIN)
    clamp = np.asarray(fe.resolve_nodes("x0", "clamped face"), dtype=np.int64)
    tip = int(np.argmin(np.linalg.norm(np.asarray(fe.nodes) - TIP, axis=1)))
    if not np.allclose(fe.nodes[tip], TIP):
        raise RuntimeError(f"no node at the tip {TIP}")
    # M = M_s (x) I3: the x rows' sums are the nodal masses (gravity's consistent load)
    node_mass = np.asarray(fe.mass.sum(axis=1)).ravel()[0::3]
    return Mesh(fe, clamp, tip, node_mass)


def rotation_angle(case: str, a: np.ndarray) -> float:
    """Rotation of the body x axis about z (spin) or y (drop) from a rotation matrix."""
    if case == "spin":
        return float(math.atan2(a[1, 0], a[0, 0]))
    return float(math.atan2(-a[2, 0], a[0, 0]))


# --------------------------------------------------------------------------- flexmbs
@dataclass
class FlexRun:
    step_wall: float  # s per step
    step_cpu: float | None
    newton: float  # total Newton iterations
    factorizations: int | None
    steps: int
    engine: str
    compile_time: float | None
    wall_total: float
    timing_source: str
    t: np.ndarray | None = None
    tip: np.ndarray | None = None
    angle_end: float | None = None
    success: bool = True
    message: str = ""


class _StepClock:
    """Progress callback timing the step loop: first call after step 1, last after step
    n, so (last - first) covers n - 1 steps. On the last call it reads the integrator's
    iteration-matrix builds (``refreshes``) from the caller, for results without
    ``statistics``."""

    def __init__(self):
        self.first = self.last = None
        self.calls = 0
        self.refreshes = None

    def __call__(self, t, t_end):
        now = (time.perf_counter(), time.process_time())
        if self.first is None:
            self.first = now
        self.last = now
        self.calls += 1
        if t >= t_end - 1e-12 * max(1.0, abs(t_end)):
            frame = inspect.currentframe()
            caller = frame.f_back if frame is not None else None
            integ = caller.f_locals.get("integ") if caller is not None else None
            self.refreshes = getattr(integ, "refreshes", None)
            del frame, caller


def flexmbs_engine_option() -> tuple[bool, object]:
    """Whether simulate (or the integrator) takes an ``engine`` option, and its default."""
    mod = importlib.import_module("flexmbs.integrators.simulate")
    for func in (mod.simulate, getattr(mod, "AlphaIntegrator", None)):
        if func is None:
            continue
        params = inspect.signature(func).parameters
        if "engine" in params:
            return True, params["engine"].default
    return False, None


class FlexmbsModel:
    def __init__(self, mesh: Mesh, n_modes: int):
        from flexmbs.modal.reduction import clamped_modes

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.data = clamped_modes(mesh.fe, "x0", n_modes)
        nodes = np.asarray(self.data.nodes)
        k = int(np.argmin(np.linalg.norm(nodes - TIP, axis=1)))
        self.tip_rows = np.asarray(self.data.phi)[3 * k:3 * k + 3]  # (3, n)
        self.frequencies = np.asarray(self.data.frequencies, dtype=float)
        self.systems = {}

    def system(self, case: str):
        if case in self.systems:
            return self.systems[case]
        from flexmbs.assembly import System
        from flexmbs.model import ModelBuilder
        from flexmbs.model.drives import SpinUp

        if case == "spin":
            b = ModelBuilder()
            b.add_flexible_body("beam", self.data)
            b.add_marker("ground", "O")
            b.add_marker("beam", "root", node_set="x0")
            b.add_revolute("hub", "ground.O", "beam.root")
            b.add_drive("spin", "rotation", SpinUp(omega=OMEGA, duration=RAMP),
                        marker_i="ground.O", marker_j="beam.root")
        else:
            b = ModelBuilder(gravity=(0.0, 0.0, -GRAVITY))
            b.add_flexible_body("beam", self.data)
            b.add_marker("ground", "O", orientation=(0.0, 1.0, 0.0))
            b.add_marker("beam", "root", node_set="x0", orientation=(0.0, 1.0, 0.0))
            b.add_revolute("hinge", "ground.O", "beam.root")
        self.systems[case] = System(b.finalize())
        return self.systems[case]

    def run(self, case: str, t_end: float, h: float, *, record: bool,
            clock: bool, newton: str | dict = "default") -> FlexRun:
        """One run; ``newton``: a preset of NEWTON_PRESETS or a dict of tolerances."""
        from flexmbs.frame.rotations import rotation_matrix
        from flexmbs.integrators.simulate import simulate

        system = self.system(case)
        n_steps = round(t_end / h)
        every = max(1, round(SAMPLE / h)) if record else n_steps
        timer = _StepClock() if clock else None
        tolerances = {"newton": newton} if isinstance(newton, str) else dict(newton)
        start = time.perf_counter()
        res = simulate(system, t_end, h, "generalized-alpha", rho_inf=RHO_INF,
                       output_every=every, progress=timer, **tolerances)
        wall_total = time.perf_counter() - start
        stats = getattr(res, "statistics", None)
        stats = stats if isinstance(stats, dict) else {}
        iterations = np.asarray(res.steps.iterations)
        steps = int(stats.get("steps", res.steps.total) or res.steps.total)
        if "stepping_time" in stats:
            step_wall, step_cpu = float(stats["stepping_time"]) / steps, None
            if "stepping_cpu_time" in stats:
                step_cpu = float(stats["stepping_cpu_time"]) / steps
            source = "statistics"
        elif timer is not None and timer.calls > 1:
            step_wall = (timer.last[0] - timer.first[0]) / (timer.calls - 1)
            step_cpu = (timer.last[1] - timer.first[1]) / (timer.calls - 1)
            source = "progress callbacks"
        else:
            step_wall, step_cpu, source = float(res.wall_time) / steps, None, "wall_time"
        fact = stats.get("factorizations", timer.refreshes if timer is not None else None)
        run = FlexRun(step_wall=step_wall, step_cpu=step_cpu,
                      newton=float(stats.get("newton_iterations", iterations.sum())),
                      factorizations=None if fact is None else int(fact), steps=steps,
                      engine=str(stats.get("engine", "python")),
                      compile_time=stats.get("compile_time"), wall_total=wall_total,
                      timing_source=source, success=bool(res.success),
                      message=str(res.message))
        if record:
            run.t = np.asarray(res.t, dtype=float)
            run.tip = res.modal_coordinates("beam") @ self.tip_rows.T
            run.angle_end = rotation_angle(case, rotation_matrix(res.q[-1, 3:7]))
        return run


# ---------------------------------------------------------------------------- Exudyn
@dataclass
class ExuRun:
    step_wall: float
    step_cpu: float
    total_wall: float  # InitializeSolver + SolveSteps + FinalizeSolver, per step
    newton: int
    jacobians: int
    steps: int
    success: bool
    t: np.ndarray | None = None
    tip: np.ndarray | None = None
    angle_end: float | None = None


def import_exudyn(fast: bool):
    """The exudyn module, or None when it is not installed."""
    if fast:
        sys.exudynFast = True
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            import exudyn
    except ImportError:
        return None
    return exudyn


class ExudynModel:
    """The same FE data handed to Exudyn's FEMinterface, its clamped modes and the two
    multibody models built on ObjectFFRFreducedOrder."""

    def __init__(self, exu, mesh: Mesh, n_modes: int, full_newton: bool = False):
        from exudyn.FEM import FEMinterface, ObjectFFRFreducedOrderInterface

        self.exu, self.mesh, self.n_modes = exu, mesh, n_modes
        self.full_newton = full_newton
        fem = FEMinterface()
        fem.nodes = {"Position": np.array(mesh.fe.nodes, dtype=float)}
        fem.massMatrix = mesh.fe.mass.tocsr()
        fem.stiffnessMatrix = mesh.fe.stiffness.tocsr()
        with contextlib.redirect_stdout(io.StringIO()):  # it prints its progress
            fem.ComputeEigenModesWithBoundaryNodes(
                boundaryNodes=[int(i) for i in mesh.clamp], nEigenModes=n_modes,
                useSparseSolver=False)
        self.fem = fem
        self.frequencies = np.sqrt(np.asarray(fem.eigenValues)[:n_modes]) / (2 * np.pi)
        self.psi_tip = np.asarray(fem.modeBasis["matrix"])[3 * mesh.tip:3 * mesh.tip + 3]
        self.cms = ObjectFFRFreducedOrderInterface(fem)
        self.models = {}

    def model(self, case: str, gravity: str = "nodal"):
        """(SystemContainer, mbs, handles) of ``case``, assembled; ``gravity`` "nodal"
        (mass-weighted super-element marker and m g) or "lmp" (AddObjectFFRFreducedOrder's
        own): :func:`exudyn_beam.build_model`."""
        key = (case, gravity)
        if key not in self.models:
            sc, mbs, handles = exudyn_beam.build_model(self.exu, self.cms, case, gravity,
                                                       self.mesh.node_mass)
            mbs.Assemble()
            self.models[key] = (sc, mbs, handles)
        return self.models[key]

    def settings(self, t_end: float, h: float, record: bool, newton: str = "default"):
        return exudyn_beam.settings(self.exu, t_end, h, record=record, rho_inf=RHO_INF,
                                    full_newton=self.full_newton, newton=newton)

    def run(self, case: str, t_end: float, h: float, *, record: bool,
            gravity: str = "nodal", newton: str = "default") -> ExuRun:
        exu = self.exu
        _, mbs, handles = self.model(case, gravity)
        ss = self.settings(t_end, h, record, newton)
        solver = exu.MainSolverImplicitSecondOrder()
        w0 = time.perf_counter()
        ok = solver.InitializeSolver(mbs, ss)
        w1, c1 = time.perf_counter(), time.process_time()
        ok = solver.SolveSteps(mbs, ss) and ok is not False
        w2, c2 = time.perf_counter(), time.process_time()
        solver.FinalizeSolver(mbs, ss)
        w3 = time.perf_counter()
        it = solver.it
        steps = int(it.numberOfSteps) or round(t_end / h)
        success = bool(ok) and abs(float(it.currentTime) - t_end) < 1e-9 * max(1.0, t_end)
        run = ExuRun(step_wall=(w2 - w1) / steps, step_cpu=(c2 - c1) / steps,
                     total_wall=(w3 - w0) / steps, newton=int(it.newtonStepsCount),
                     jacobians=int(it.newtonJacobiCount), steps=steps, success=success)
        if record:
            data = np.asarray(mbs.GetSensorStoredData(handles["sensor"]))
            run.t = data[:, 0]
            run.tip = data[:, 1:] @ self.psi_tip.T
            a = np.asarray(mbs.GetNodeOutput(handles["nRigidBody"],
                                             exu.OutputVariableType.RotationMatrix))
            run.angle_end = rotation_angle(case, a.reshape(3, 3))
        return run


def tip_difference(t_ref, d_ref, t_other, d_other, h) -> tuple[float, float]:
    """(max_t |d_other - d_ref| / max_t |d_ref|, max_t |d_ref|) at the times of t_other
    (matched to the nearest t_ref)."""
    idx = np.clip(np.searchsorted(t_ref, t_other - 0.25 * h), 0, t_ref.size - 1)
    if np.max(np.abs(t_ref[idx] - t_other)) > 0.01 * h:
        raise RuntimeError("the two histories have no common sampling times")
    peak = float(np.max(np.linalg.norm(d_ref, axis=1)))
    diff = float(np.max(np.linalg.norm(d_other - d_ref[idx], axis=1)))
    return diff / peak, peak


# ------------------------------------------------------------------------- benchmark
@dataclass
class Row:
    case: str
    modes: int
    h: float
    t_end: float
    steps: int
    flex: dict = field(default_factory=dict)
    exu: dict = field(default_factory=dict)
    lmp: dict = field(default_factory=dict)
    tip_diff: float | None = None
    tip_peak_flexmbs: float | None = None
    tip_peak_exudyn: float | None = None
    angle_end_diff: float | None = None
    whole: dict = field(default_factory=dict)  # --whole
    equal: dict = field(default_factory=dict)  # --equal-accuracy


def _best(runs, key):
    vals = [getattr(r, key) for r in runs if getattr(r, key) is not None]
    return min(vals) if vals else None


#: flexmbs's own converged answer: every tolerance ten times tighter than the
#: "converged" preset (as docs/integrators.md measures the presets' deviations)
FLEXMBS_REFERENCE = {"rtol": 1e-13, "atol": 1e-15, "acc_rtol": 1e-11, "phi_tol": 1e-13}


def user_gravity(case: str) -> str:
    """The Exudyn gravity of what its users run: built-in ("lmp") for the drop."""
    return "lmp" if case == "drop" else "nodal"


def bench_row(case, n, h, t_end, flex_model, exu_model, repeats, lmp, log,
              equal: bool = False) -> Row:
    """One row: warm-up runs (the accuracy histories), then ``repeats`` rounds of timed
    runs alternating between the codes. ``equal``: also flexmbs with newton="converged"
    in each round, and the references of both codes (their own converged answers)."""
    row = Row(case, n, h, t_end, round(t_end / h))
    # warm-up runs: also the accuracy histories (flexmbs: numba compilation)
    f0 = flex_model.run(case, t_end, h, record=True, clock=False)
    has_stats = f0.timing_source == "statistics"
    if not f0.success:
        log(f"  flexmbs failed: {f0.message}")
    e0 = l0 = None
    if exu_model is not None:
        e0 = exu_model.run(case, t_end, h, record=True)
        if case == "drop" and lmp:
            l0 = exu_model.run(case, t_end, h, record=True, gravity="lmp")
    flex_runs, exu_runs, lmp_runs, conv_runs = [], [], [], []
    if equal:
        fc0 = flex_model.run(case, t_end, h, record=True, clock=False, newton="converged")
    for _ in range(repeats):
        flex_runs.append(flex_model.run(case, t_end, h, record=False, clock=not has_stats))
        if equal:
            conv_runs.append(flex_model.run(case, t_end, h, record=False,
                                            clock=not has_stats, newton="converged"))
        if exu_model is not None:
            exu_runs.append(exu_model.run(case, t_end, h, record=False))
            if l0 is not None:
                lmp_runs.append(exu_model.run(case, t_end, h, record=False, gravity="lmp"))
    last = flex_runs[-1]
    row.flex = {
        "us_per_step": 1e6 * _best(flex_runs, "step_wall"),
        "cpu_us_per_step": (None if _best(flex_runs, "step_cpu") is None
                            else 1e6 * _best(flex_runs, "step_cpu")),
        "newton_per_step": last.newton / last.steps,
        "factorizations": last.factorizations,
        "engine": last.engine,
        "compile_time_s": f0.compile_time,
        "timing_source": last.timing_source,
        "warmup_wall_s": f0.wall_total,
        "success": all(r.success for r in [f0, *flex_runs]),
        "tip_peak": float(np.max(np.linalg.norm(f0.tip, axis=1))),
    }
    if e0 is not None:
        row.exu = {
            "us_per_step": 1e6 * _best(exu_runs, "step_wall"),
            "cpu_us_per_step": 1e6 * _best(exu_runs, "step_cpu"),
            "solve_us_per_step": 1e6 * _best(exu_runs, "total_wall"),
            "newton_per_step": exu_runs[-1].newton / exu_runs[-1].steps,
            "factorizations": exu_runs[-1].jacobians,
            "success": all(r.success for r in [e0, *exu_runs]),
        }
        row.tip_diff, row.tip_peak_exudyn = tip_difference(e0.t, e0.tip, f0.t, f0.tip, h)
        row.tip_peak_flexmbs = row.flex["tip_peak"]
        row.angle_end_diff = abs(f0.angle_end - e0.angle_end)
    if l0 is not None:
        diff, _ = tip_difference(l0.t, l0.tip, f0.t, f0.tip, h)
        row.lmp = {
            "us_per_step": 1e6 * _best(lmp_runs, "step_wall"),
            "cpu_us_per_step": 1e6 * _best(lmp_runs, "step_cpu"),
            "newton_per_step": lmp_runs[-1].newton / lmp_runs[-1].steps,
            "factorizations": lmp_runs[-1].jacobians,
            "tip_diff_vs_flexmbs": diff,
        }
    if equal:
        row.equal = equal_accuracy(case, h, t_end, flex_model, exu_model, f0, fc0,
                                   conv_runs, {"nodal": e0, "lmp": l0}, row)
    return row


def equal_accuracy(case, h, t_end, flex_model, exu_model, f0, fc0, conv_runs, exu_default,
                   row) -> dict:
    """flexmbs with newton="converged" against Exudyn with its defaults (built-in gravity
    for the drop), and each code's deviation from its own converged answer: flexmbs's
    with every tolerance ten times tighter than "converged" (FLEXMBS_REFERENCE),
    Exudyn's with relative/absolute Newton tolerances 1e-12/1e-14. Deviations: max_t
    |Δ tip elastic displacement| / peak, as the main table's."""
    ref = flex_model.run(case, t_end, h, record=True, clock=False, newton=FLEXMBS_REFERENCE)
    out = {
        "flexmbs_converged_us_per_step": 1e6 * _best(conv_runs, "step_wall"),
        "flexmbs_converged_newton_per_step": conv_runs[-1].newton / conv_runs[-1].steps,
        "flexmbs_converged_factorizations": conv_runs[-1].factorizations,
        "flexmbs_default_dev": tip_difference(ref.t, ref.tip, f0.t, f0.tip, h)[0],
        "flexmbs_converged_dev": tip_difference(ref.t, ref.tip, fc0.t, fc0.tip, h)[0],
        "flexmbs_reference": FLEXMBS_REFERENCE,
        "success": all(r.success for r in [fc0, ref, *conv_runs]),
    }
    gravity = user_gravity(case)
    e_def = exu_default.get(gravity)
    if exu_model is None or e_def is None:
        return out
    e_ref = exu_model.run(case, t_end, h, record=True, gravity=gravity, newton="converged")
    part = row.lmp if gravity == "lmp" else row.exu
    out.update({
        "exudyn_gravity": "built-in" if gravity == "lmp" else "nodal (none: spin)",
        "exudyn_default_us_per_step": part["us_per_step"],
        "exudyn_default_newton_per_step": part["newton_per_step"],
        "exudyn_default_dev": tip_difference(e_ref.t, e_ref.tip, e_def.t, e_def.tip, h)[0],
        "exudyn_reference_tolerances": exudyn_beam.NEWTON_TOLERANCES["converged"],
        "exudyn_reference_success": e_ref.success,
        "converged_vs_converged": tip_difference(e_ref.t, e_ref.tip, fc0.t, fc0.tip, h)[0],
    })
    out["ratio"] = out["flexmbs_converged_us_per_step"] / out["exudyn_default_us_per_step"]
    return out


# ------------------------------------------------------------------------ whole runs
CASE_TOML = {
    "spin": """title = "bench_vs_exudyn: spin-up, {n} clamped modes"

[[bodies]]
name = "beam"
type = "flexible"
modal_data = "{fmd}"

[[markers]]
body = "ground"
name = "O"

[[markers]]
body = "beam"
name = "root"
node_set = "x0"

[[joints]]
name = "hub"
type = "revolute"
i = "ground.O"
j = "beam.root"

[[drives]]
name = "spin"
type = "rotation"
i = "ground.O"
j = "beam.root"
profile = {{ type = "spin-up", omega = {omega!r}, duration = {ramp!r} }}
""",
    "drop": """title = "bench_vs_exudyn: drop, {n} clamped modes"

[model]
gravity = [0.0, 0.0, {minus_g!r}]

[[bodies]]
name = "beam"
type = "flexible"
modal_data = "{fmd}"

[[markers]]
body = "ground"
name = "O"
z_axis = [0.0, 1.0, 0.0]

[[markers]]
body = "beam"
name = "root"
node_set = "x0"
z_axis = [0.0, 1.0, 0.0]

[[joints]]
name = "hinge"
type = "revolute"
i = "ground.O"
j = "beam.root"
""",
}
SOLVER_TOML = """
[solver]
method = "generalized-alpha"
rho_inf = {rho_inf!r}
h = {h!r}
t_end = {t_end!r}
output_every = {every}

[output]
file = "{out}"
"""


class WholeRuns:
    """The --whole columns: the same model as a user runs it. flexmbs: a case file on
    the modal data written with ``write_modal`` (``load_case`` + ``run_case`` in this
    process; ``flexmbs run CASE`` as a subprocess). Exudyn: ``exudyn_beam.py`` on an
    FEMinterface file with the same clamped modes (``exudyn_beam.solve`` in this
    process: load, build, Assemble, SolveDynamic; the script as a subprocess). Outputs
    every SAMPLE in both: flexmbs's output_every (the CLI writes its results file),
    Exudyn's sensor (in this process) or its solution file (the script). Both commands
    run on compiled bytecode, as installed packages do: flexmbs's modules are compiled
    once here (``compileall``), since this machine sets ``PYTHONDONTWRITEBYTECODE`` and a
    source tree without ``__pycache__`` would compile its 140 modules at every start
    (Exudyn's installed modules have theirs)."""

    def __init__(self, folder: str, flex_models: dict, exu_models: dict):
        import compileall

        import flexmbs

        self.folder = os.path.abspath(folder)
        os.makedirs(self.folder, exist_ok=True)
        self.fmd, self.fem = {}, {}
        for n, model in flex_models.items():
            self.fmd[n] = os.path.join(self.folder, f"beam{n}.fmd.h5")
            flexmbs.write_modal(model.data, self.fmd[n])
            if exu_models.get(n) is not None:
                base = os.path.join(self.folder, f"beam{n}")
                with contextlib.redirect_stdout(io.StringIO()):
                    exu_models[n].fem.SaveToFile(base)
                self.fem[n] = next(base + ext for ext in (".npy", ".npz", "")
                                   if os.path.isfile(base + ext))
        root = os.path.dirname(os.path.dirname(os.path.abspath(flexmbs.__file__)))
        compileall.compile_dir(os.path.dirname(os.path.abspath(flexmbs.__file__)), quiet=1)
        path = os.environ.get("PYTHONPATH")
        self.env = {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}
        script = os.path.join(os.path.dirname(sys.executable), "flexmbs")
        self.flexmbs_cmd = ([script] if os.path.isfile(script) else
                            [sys.executable, "-c", "from flexmbs.cli.main import entry; "
                             "entry()"])
        self.exudyn_script = os.path.abspath(exudyn_beam.__file__)

    def case_file(self, case: str, n: int, h: float, t_end: float) -> str:
        name = f"{case}{n}_h{h:g}"
        path = os.path.join(self.folder, name + ".toml")
        text = CASE_TOML[case].format(n=n, fmd=os.path.basename(self.fmd[n]), omega=OMEGA,
                                      ramp=RAMP, minus_g=-GRAVITY)
        text += SOLVER_TOML.format(rho_inf=RHO_INF, h=h, t_end=t_end,
                                   every=max(1, round(SAMPLE / h)), out=name + ".res.h5")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return path

    @staticmethod
    def flexmbs_in_process(path: str):
        """(wall [s], result) of load_case + run_case."""
        from flexmbs.cases import load_case, run_case

        start = time.perf_counter()
        _, result = run_case(load_case(path))
        return time.perf_counter() - start, result

    def exudyn_in_process(self, exu, case, n, h, t_end, gravity):
        """(wall [s], mbs, handles, solver, success) of exudyn_beam.solve."""
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            mbs, handles, solver, ok = exudyn_beam.solve(exu, self.fem[n], case, t_end, h,
                                                         gravity=gravity)
        return time.perf_counter() - start, mbs, handles, solver, ok

    def _timed(self, cmd: list) -> float:
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=self.folder, env=self.env, capture_output=True,
                              text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n"
                               f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return wall

    def flexmbs_cli(self, path: str) -> float:
        """Wall time [s] of ``flexmbs run CASE --quiet`` (writes its results file)."""
        return self._timed([*self.flexmbs_cmd, "run", path, "--quiet"])

    def exudyn_cli(self, case, n, h, t_end, gravity) -> float:
        """Wall time [s] of ``python exudyn_beam.py`` (writes its solution file)."""
        out = os.path.join(self.folder, f"exudyn_{case}{n}_h{h:g}.txt")
        return self._timed([sys.executable, self.exudyn_script, self.fem[n], case,
                            "--h", repr(h), "--t-end", repr(t_end), "--gravity", gravity,
                            "--solution", out])


def whole_row(row: Row, whole: WholeRuns, flex_model, exu_model, repeats: int,
              log) -> None:
    """--whole: in-process and CLI whole runs of both codes, interleaved (the in-process
    pair in alternating order), best of ``repeats`` after a warm-up of the in-process
    runs; Exudyn with the gravity its users run (built-in for the drop). Fills
    ``row.whole``."""
    case, n, h, t_end = row.case, row.modes, row.h, row.t_end
    gravity = "builtin"  # the drop's; the spin has no gravity
    path = whole.case_file(case, n, h, t_end)
    _, res0 = whole.flexmbs_in_process(path)  # warm-up
    out = {"exudyn_gravity": "built-in" if case == "drop" else "none",
           "output_every": max(1, round(SAMPLE / h)), "case_file": os.path.basename(path)}
    f_in, f_cli, e_in, e_cli, f_stats = [], [], [], [], []
    f_ok, e_ok = bool(res0.success), True
    exu = None if exu_model is None else exu_model.exu
    if exu is not None:
        _, mbs, handles, _, ok = whole.exudyn_in_process(exu, case, n, h, t_end, gravity)
        e_ok = ok
        data = np.asarray(mbs.GetSensorStoredData(handles["sensor"]))
        tip_f = res0.modal_coordinates("beam") @ flex_model.tip_rows.T
        try:  # the whole runs' own outputs: flexmbs's against Exudyn's sensor
            out["tip_diff_vs_exudyn"] = tip_difference(
                data[:, 0], data[:, 1:] @ exu_model.psi_tip.T, np.asarray(res0.t), tip_f,
                h)[0]
        except RuntimeError as exc:  # no common sampling times
            log(f"  whole runs' tip histories not compared: {exc}")
            out["tip_diff_vs_exudyn"] = None
    for k in range(repeats):
        # the in-process pair in turn order: the run right after the commands (new
        # processes, which leave the caches cold) is the slower one, by 2-3 ms on the
        # 4-mode drop; each code takes that place every other round
        for who in ("flexmbs", "exudyn") if k % 2 == 0 else ("exudyn", "flexmbs"):
            if who == "flexmbs":
                wall, res = whole.flexmbs_in_process(path)
                f_in.append(wall)
                f_stats.append(res.statistics)
                f_ok = f_ok and bool(res.success)
            elif exu is not None:
                wall, _, _, _, ok = whole.exudyn_in_process(exu, case, n, h, t_end,
                                                            gravity)
                e_in.append(wall)
                e_ok = e_ok and ok
        f_cli.append(whole.flexmbs_cli(path))
        if exu is not None:
            e_cli.append(whole.exudyn_cli(case, n, h, t_end, gravity))
    best = int(np.argmin(f_in))
    stats = f_stats[best]
    out.update({
        "flexmbs_s": min(f_in), "flexmbs_cli_s": min(f_cli),
        "flexmbs_runs_s": f_in, "flexmbs_cli_runs_s": f_cli,
        "flexmbs_statistics": {k: stats.get(k) for k in (
            "stepping_time", "compile_time", "output_time", "setup_time", "steps",
            "newton_iterations", "factorizations") if k in stats},
        "flexmbs_success": f_ok,
    })
    step_part = row.lmp if case == "drop" else row.exu
    out["flexmbs_step_us"] = row.flex["us_per_step"]
    if exu is not None:
        out.update({"exudyn_s": min(e_in), "exudyn_cli_s": min(e_cli),
                    "exudyn_runs_s": e_in, "exudyn_cli_runs_s": e_cli,
                    "exudyn_success": e_ok,
                    "exudyn_step_us": step_part.get("us_per_step") if step_part else None})
        out["ratio"] = out["flexmbs_s"] / out["exudyn_s"]
        out["cli_ratio"] = out["flexmbs_cli_s"] / out["exudyn_cli_s"]
        if out["exudyn_step_us"]:
            out["step_ratio"] = out["flexmbs_step_us"] / out["exudyn_step_us"]
    row.whole = out


def _fmt(value, spec, width):
    if value is None:
        return "–".rjust(width)
    return format(value, spec).rjust(width)


HEADER = (f"{'case':<5} {'n':>3} {'h':>6} {'steps':>6} {'flexmbs':>9} {'Exudyn':>8} "
          f"{'ratio':>6} {'f it/st':>7} {'f fact':>6} {'e it/st':>7} {'e fact':>6} "
          f"{'max|Δtip|/peak':>14} {'peak tip':>9} {'LMP µs':>7} {'LMP Δtip':>8}")
UNITS = (f"{'':<5} {'':>3} {'[s]':>6} {'':>6} {'[µs/st]':>9} {'[µs/st]':>8} "
         f"{'f/E':>6} {'':>7} {'':>6} {'':>7} {'':>6} {'':>14} {'[m]':>9} {'[µs/st]':>7} "
         f"{'':>8}")


def _per_step(part: dict, cpu: bool):
    """µs per step of one code: wall, or process CPU where measured (else wall)."""
    if not part:
        return None
    if cpu and part.get("cpu_us_per_step") is not None:
        return part["cpu_us_per_step"]
    return part["us_per_step"]


def format_row(r: Row, cpu: bool = False) -> str:
    f, e, lm = r.flex, r.exu, r.lmp
    f_us, e_us = _per_step(f, cpu), _per_step(e, cpu)
    ratio = f_us / e_us if e_us else None
    return (f"{r.case:<5} {r.modes:>3} {r.h:>6.0e} {r.steps:>6} "
            f"{_fmt(f_us, '.0f', 9)} {_fmt(e_us, '.0f', 8)} "
            f"{_fmt(ratio, '.1f', 6)} {_fmt(f['newton_per_step'], '.2f', 7)} "
            f"{_fmt(f['factorizations'], 'd', 6)} {_fmt(e.get('newton_per_step'), '.2f', 7)} "
            f"{_fmt(e.get('factorizations'), 'd', 6)} {_fmt(r.tip_diff, '.2e', 14)} "
            f"{_fmt(r.tip_peak_exudyn or f['tip_peak'], '.4e', 9)} "
            f"{_fmt(_per_step(lm, cpu), '.0f', 7)} "
            f"{_fmt(lm.get('tip_diff_vs_flexmbs'), '.1e', 8)}")


WHOLE_HEADER = (
    f"{'case':<5} {'n':>3} {'h':>6} | {'stepping [µs/step]':^22} | "
    f"{'whole run in process [s]':^24} | {'command, new process [s]':^24} | "
    f"{'Δtip/peak vs E':>14}\n"
    f"{'':<5} {'':>3} {'':>6} | {'flexmbs':>7} {'Exudyn':>7} {'f/E':>5} | "
    f"{'flexmbs':>7} {'Exudyn':>7} {'f/E':>6} | {'flexmbs':>7} {'Exudyn':>7} {'f/E':>6} | "
    f"{'user':>6} {'nodal':>7}")


def format_whole(r: Row) -> str:
    w = r.whole
    return (f"{r.case:<5} {r.modes:>3} {r.h:>6.0e} | {_fmt(w.get('flexmbs_step_us'), '.1f', 7)} "
            f"{_fmt(w.get('exudyn_step_us'), '.1f', 7)} {_fmt(w.get('step_ratio'), '.2f', 5)} | "
            f"{_fmt(w.get('flexmbs_s'), '.3f', 7)} {_fmt(w.get('exudyn_s'), '.3f', 7)} "
            f"{_fmt(w.get('ratio'), '.2f', 6)} | {_fmt(w.get('flexmbs_cli_s'), '.3f', 7)} "
            f"{_fmt(w.get('exudyn_cli_s'), '.3f', 7)} {_fmt(w.get('cli_ratio'), '.2f', 6)} | "
            f"{_fmt(w.get('tip_diff_vs_exudyn'), '.1e', 6)} {_fmt(r.tip_diff, '.1e', 7)}")


EQUAL_HEADER = (
    f"{'case':<5} {'n':>3} {'h':>6} | {'flexmbs converged':^18} | {'Exudyn defaults':^18} | "
    f"{'f/E':>5} | {'deviation from own converged':^29} | {'f conv':>7}\n"
    f"{'':<5} {'':>3} {'':>6} | {'µs/step':>8} {'it/step':>9} | {'µs/step':>8} "
    f"{'it/step':>9} | {'':>5} | {'f default':>9} {'f conv':>9} {'E default':>9} | "
    f"{'vs E conv':>7}")


def format_equal(r: Row) -> str:
    q = r.equal
    return (f"{r.case:<5} {r.modes:>3} {r.h:>6.0e} | "
            f"{_fmt(q.get('flexmbs_converged_us_per_step'), '.1f', 8)} "
            f"{_fmt(q.get('flexmbs_converged_newton_per_step'), '.2f', 9)} | "
            f"{_fmt(q.get('exudyn_default_us_per_step'), '.1f', 8)} "
            f"{_fmt(q.get('exudyn_default_newton_per_step'), '.2f', 9)} | "
            f"{_fmt(q.get('ratio'), '.2f', 5)} | {_fmt(q.get('flexmbs_default_dev'), '.1e', 9)} "
            f"{_fmt(q.get('flexmbs_converged_dev'), '.1e', 9)} "
            f"{_fmt(q.get('exudyn_default_dev'), '.1e', 9)} | "
            f"{_fmt(q.get('converged_vs_converged'), '.1e', 7)}")


def _git_rev() -> str:
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "flexmbs"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out + (" (flexmbs/ modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="h = 1e-3 only, end times spin 1 s, drop 0.5 s")
    p.add_argument("--only", choices=CASES, help="one case only")
    p.add_argument("--modes", default="4,8,16", help="mode counts, e.g. 4,16")
    p.add_argument("--h", default=None, help="step sizes, e.g. 1e-3 or 1e-4,1e-3")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per code (best kept)")
    p.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH",
                   help="also write the results as JSON to PATH (stdout without PATH)")
    p.add_argument("--cpu", action="store_true",
                   help="table in process CPU time per step instead of wall time")
    p.add_argument("--no-lmp", action="store_true",
                   help="drop: skip the runs with Exudyn's built-in gravity")
    p.add_argument("--exudyn-fast", action="store_true",
                   help="load exudynCPPfast (no range checks, AVX2) instead of exudynCPP")
    p.add_argument("--exudyn-full-newton", action="store_true",
                   help="Exudyn with full Newton (default: its modified Newton)")
    p.add_argument("--whole", action="store_true",
                   help="also whole runs, against Exudyn with its built-in gravity for the "
                        "drop: load_case + run_case against build + Assemble + "
                        "SolveDynamic in this process, and `flexmbs run CASE` against "
                        "benchmarks/exudyn_beam.py as new processes (wall time)")
    p.add_argument("--whole-dir", default=None, metavar="DIR",
                   help="folder for --whole's case, modal data and result files "
                        "(default: a temporary folder, removed afterwards)")
    p.add_argument("--equal-accuracy", action="store_true",
                   help="also flexmbs with newton='converged' against Exudyn with its "
                        "defaults, with each code's deviation from its own converged "
                        "answer")
    args = p.parse_args(argv)
    args.modes = [int(v) for v in _floats(args.modes)]
    args.h = _floats(args.h) if args.h else ([1e-3] if args.quick else [1e-4, 1e-3])
    args.cases = [args.only] if args.only else list(CASES)
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args



def ensure_kernels() -> None:
    """benchmarks/_kernels.py (beside this script)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _kernels import ensure_kernels as ensure

    ensure()


def main(argv=None) -> int:
    with contextlib.ExitStack() as cleanup:
        return _main(argv, cleanup)


def _main(argv, cleanup: contextlib.ExitStack) -> int:
    args = parse_args(argv)
    ensure_kernels()
    out = sys.stderr if args.json == "-" else sys.stdout

    def log(*parts):
        print(*parts, file=out, flush=True)

    import flexmbs

    exu = import_exudyn(args.exudyn_fast)
    engine_option, engine_default = flexmbs_engine_option()
    ends = QUICK_END_TIME if args.quick else END_TIME
    log("flexmbs vs Exudyn: clamped hex8 steel beam 1 m x 20 x 10 mm, 40x2x2 elements, "
        "369 nodes, 1107 DOF")
    log(f"machine: {platform.node()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f} (shared: timings vary ±20-30 %)")
    log(f"flexmbs {getattr(flexmbs, '__version__', '?')} at {_git_rev()}; numpy "
        f"{np.__version__}; simulate(engine=...): "
        f"{'yes, default ' + repr(engine_default) if engine_option else 'no such option'}")
    if exu is None:
        log("Exudyn is NOT installed (pip install exudyn): flexmbs figures only.")
    else:
        module = "exudynCPPfast" if "exudyn.exudynCPPfast" in sys.modules else "exudynCPP"
        log(f"Exudyn {exu.__version__} ({module}), "
            f"{'full' if args.exudyn_full_newton else 'modified'} Newton")
    log(f"generalized-α ρ∞ = {RHO_INF}, index 3, fixed step; end times: "
        + ", ".join(f"{c} {ends[c]:g} s" for c in args.cases)
        + f"; best of {args.repeats} after a warm-up, interleaved")

    mesh = build_mesh()
    if mesh.fe.n_nodes != 369 or mesh.fe.n_dof != 1107:
        raise RuntimeError(f"unexpected mesh: {mesh.fe.n_nodes} nodes, {mesh.fe.n_dof} DOF")
    flex_models, exu_models, freq = {}, {}, {}
    for n in args.modes:
        flex_models[n] = FlexmbsModel(mesh, n)
        exu_models[n] = (ExudynModel(exu, mesh, n, args.exudyn_full_newton)
                         if exu is not None else None)
        ef = exu_models[n].frequencies if exu is not None else None
        freq[n] = {"flexmbs_hz": flex_models[n].frequencies.tolist(),
                   "exudyn_hz": None if ef is None else ef.tolist()}

    n_max = max(args.modes)
    log(f"\nclamped eigenfrequencies, n = {n_max} [Hz]")
    log(f"{'mode':>4} {'flexmbs':>12} {'Exudyn':>12} {'rel. diff':>10}")
    fl = np.asarray(freq[n_max]["flexmbs_hz"])
    ex = None if exu is None else np.asarray(freq[n_max]["exudyn_hz"])
    for k in range(n_max):
        e_k = None if ex is None else ex[k]
        rel = None if ex is None else abs(fl[k] - ex[k]) / ex[k]
        log(f"{k + 1:>4} {fl[k]:>12.6f} {_fmt(e_k, '.6f', 12)} {_fmt(rel, '.1e', 10)}")
    for n in args.modes:
        if exu is not None:
            f_n, e_n = np.asarray(freq[n]["flexmbs_hz"]), np.asarray(freq[n]["exudyn_hz"])
            freq[n]["max_rel_diff"] = float(np.max(np.abs(f_n - e_n) / e_n))
            log(f"n = {n:>2}: max rel. frequency difference {freq[n]['max_rel_diff']:.1e}")

    rows = []
    clock = "process CPU" if args.cpu else "wall"
    log(f"\nper step: {clock} time of the stepping alone, best of the timed runs; 'fact' = "
        "iteration-matrix factorisations (total);\nΔtip: tip elastic displacement in the "
        "body frame, max over t of |flexmbs − Exudyn| / max |Exudyn|; LMP: Exudyn with its "
        "built-in gravity")
    log(HEADER)
    log(UNITS)
    whole = None
    if args.whole:
        if args.whole_dir is None:
            tmp = tempfile.TemporaryDirectory(prefix="bench_whole_")
            cleanup.callback(tmp.cleanup)
            args.whole_dir = tmp.name
        whole = WholeRuns(args.whole_dir, flex_models, exu_models)
    for case in args.cases:
        for h in args.h:
            for n in args.modes:
                row = bench_row(case, n, h, ends[case], flex_models[n], exu_models[n],
                                args.repeats, args.whole or not args.no_lmp, log,
                                equal=args.equal_accuracy)
                if whole is not None:
                    whole_row(row, whole, flex_models[n], exu_models[n], args.repeats, log)
                rows.append(row)
                log(format_row(row, args.cpu))
    if whole is not None:
        log("\nwhole runs (best of the timed runs, interleaved): stepping as above; in "
            "process: flexmbs load_case + run_case, Exudyn load + build + Assemble + "
            "SolveDynamic;\nnew process: `flexmbs run CASE` (results file) and "
            "`python exudyn_beam.py` (solution file), wall time; outputs every "
            f"{SAMPLE:g} s;\nExudyn with the gravity its users run (built-in: LMP) for the "
            "drop; Δtip vs E: user = the whole runs' own outputs, nodal = the accuracy "
            "reference above")
        log(WHOLE_HEADER)
        for r in rows:
            log(format_whole(r))
    if args.equal_accuracy:
        log("\nequal accuracy: flexmbs with newton='converged' against Exudyn with its "
            "defaults (built-in gravity for the drop), µs per step of the stepping;\n"
            "deviation: max_t |Δtip| / peak from the code's own converged answer (flexmbs: "
            "tolerances 10x tighter than 'converged'; Exudyn: rtol/atol 1e-12/1e-14)")
        log(EQUAL_HEADER)
        for r in rows:
            log(format_equal(r))
    engines = sorted({r.flex["engine"] for r in rows})
    sources = sorted({r.flex["timing_source"] for r in rows})
    compile_times = [r.flex["compile_time_s"] for r in rows if r.flex["compile_time_s"]]
    log(f"\nflexmbs engine: {', '.join(engines)}; flexmbs step timing from: "
        f"{', '.join(sources)}"
        + (f"; numba compile time (first run) {max(compile_times):.1f} s"
           if compile_times else ""))
    if args.cpu and any(r.flex["cpu_us_per_step"] is None for r in rows):
        log("(flexmbs figures in wall time: its statistics carry no CPU time)")
    if exu is not None:
        worst = max((r.angle_end_diff for r in rows if r.angle_end_diff is not None),
                    default=None)
        if worst is not None:
            log(f"largest difference of the final frame rotation angle: {worst:.1e} rad")
    bad = [f"{r.case} n={r.modes} h={r.h:g}" for r in rows
           if not r.flex["success"] or (r.exu and not r.exu["success"])
           or not r.whole.get("flexmbs_success", True)
           or not r.whole.get("exudyn_success", True)
           or not r.equal.get("success", True)
           or not r.equal.get("exudyn_reference_success", True)]
    if bad:
        log("FAILED runs: " + "; ".join(bad))
    if args.json is not None:
        payload = {
            "model": {"lengths_m": [LX, LY, LZ], "elements": [NX, NY, NZ], "E": YOUNG,
                      "nu": POISSON, "rho": DENSITY, "nodes": int(mesh.fe.n_nodes),
                      "dof": int(mesh.fe.n_dof), "origin": list(ORIGIN), "tip": list(TIP)},
            "settings": {"rho_inf": RHO_INF, "end_times": {c: ends[c] for c in args.cases},
                         "repeats": args.repeats,
                         "timing": "us_per_step: wall, cpu_us_per_step: process CPU; "
                                   "stepping only",
                         "exudyn": None if exu is None else exu.__version__,
                         "exudyn_fast": args.exudyn_fast,
                         "exudyn_newton": "full" if args.exudyn_full_newton else "modified",
                         "flexmbs_rev": _git_rev(), "cpu_count": os.cpu_count(),
                         "whole": args.whole, "equal_accuracy": args.equal_accuracy,
                         "flexmbs_reference_tolerances": FLEXMBS_REFERENCE,
                         "exudyn_newton_tolerances": exudyn_beam.NEWTON_TOLERANCES},
            "frequencies": {str(n): v for n, v in freq.items()},
            "rows": [vars(r) for r in rows],
        }
        text = json.dumps(payload, indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
            log(f"results written to {args.json}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
