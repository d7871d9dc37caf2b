"""Exudyn's side of ``bench_vs_exudyn.py``'s steel beam, as a user's whole script.

Run as a script it is what an Exudyn user runs for the benchmark's cases: load the FE
data with its clamped modes (an ``FEMinterface`` file, ``FEMinterface.SaveToFile``),
build the ``ObjectFFRFreducedOrder`` model, ``Assemble`` and ``SolveDynamic``, writing
the solution file::

    python benchmarks/exudyn_beam.py beam4.npz drop --h 1e-3 --t-end 1 --gravity builtin

``bench_vs_exudyn.py --whole`` times it as a subprocess (wall time, Python start-up
included) against ``flexmbs run CASE``, and calls :func:`solve` in its own process for
the whole-run column. :func:`build_model` is also the model of the benchmark's stepping
columns (``ExudynModel.model``). This module imports only numpy and Exudyn.

Cases (generalized-alpha, index 3, fixed step): ``spin`` (rotation about z prescribed by
the Kane et al. spin-up through an ``ObjectJointGeneric`` offset user function, no
gravity) and ``drop`` (hinged about y, released horizontal under g in -z). Gravity of
the drop: ``builtin`` (``AddObjectFFRFreducedOrder(gravity=...)``, a
``LoadMassProportional``: what Exudyn's users run) or ``nodal`` (mass-weighted nodal
loads through a ``MarkerSuperElementPosition`` over all nodes, which keeps the
gravity moment of the deformation; the benchmark's accuracy reference).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import sys
import time

import numpy as np

#: Spin-up (Kane, Ryan and Banerjee 1987): final rate [rad/s], ramp duration [s].
OMEGA, RAMP = 2.0, 1.0
GRAVITY = 9.81
RHO_INF = 0.9
#: Output period of the sensors and the solution file [s].
SAMPLE = 1e-3
#: Newton tolerances (relative, absolute): Exudyn's defaults and a tight set that gives
#: its converged answer (the benchmark's equal-accuracy comparison).
NEWTON_TOLERANCES = {"default": (1e-8, 1e-10), "converged": (1e-12, 1e-14)}


def spin_angle(t: float) -> float:
    """theta(t) of the spin-up: omega = Omega/T (t - T/(2 pi) sin(2 pi t/T)) for t < T."""
    if t >= RAMP:
        return OMEGA * RAMP / 2 + OMEGA * (t - RAMP)
    k = 2 * math.pi / RAMP
    return OMEGA / RAMP * (t * t / 2 + (math.cos(k * t) - 1) / (k * k))


def node_masses(fem) -> np.ndarray:
    """Nodal masses: the x rows' sums of the consistent mass M = M_s (x) I3 [kg]."""
    return np.asarray(fem.massMatrix.sum(axis=1)).ravel()[0::3]


def build_model(exu, cms, case: str, gravity: str = "nodal", node_mass=None,
                tip_node: int | None = None):
    """(SystemContainer, mbs, handles) of ``case`` ("spin" or "drop") on the interface
    ``cms`` (``ObjectFFRFreducedOrderInterface``), not assembled. ``gravity`` of the
    drop: "nodal" (needs ``node_mass``) or "lmp"/"builtin". handles: the body's
    (``nRigidBody``, ``oFFRFreducedOrder``, ``nGenericODE2``...) and ``sensor`` (the
    modal coordinates, stored internally)."""
    import exudyn.itemInterface as eii

    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    builtin = case == "drop" and gravity in ("lmp", "builtin")
    body = cms.AddObjectFFRFreducedOrder(
        mbs, positionRef=[0.0, 0.0, 0.0], initialVelocity=[0.0, 0.0, 0.0],
        initialAngularVelocity=[0.0, 0.0, 0.0],
        gravity=[0.0, 0.0, -GRAVITY] if builtin else [0.0, 0.0, 0.0])
    ground = mbs.AddObject(eii.ObjectGround())
    m_ground = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=ground,
                                                 localPosition=[0.0, 0.0, 0.0]))
    m_frame = mbs.AddMarker(eii.MarkerNodeRigid(nodeNumber=body["nRigidBody"]))
    if case == "spin":
        def offset(mbs, t, item, parameters):
            return [0.0, 0.0, 0.0, 0.0, 0.0, spin_angle(t)]

        mbs.AddObject(eii.ObjectJointGeneric(markerNumbers=[m_ground, m_frame],
                                             constrainedAxes=[1, 1, 1, 1, 1, 1],
                                             offsetUserFunction=offset))
    else:
        mbs.AddObject(eii.ObjectJointGeneric(markerNumbers=[m_ground, m_frame],
                                             constrainedAxes=[1, 1, 1, 1, 0, 1]))
        if not builtin:
            mass = np.asarray(node_mass, dtype=float)
            marker = mbs.AddMarker(eii.MarkerSuperElementPosition(
                bodyNumber=body["oFFRFreducedOrder"],
                meshNodeNumbers=list(range(mass.size)),
                weightingFactors=list(mass / mass.sum())))
            mbs.AddLoad(eii.LoadForceVector(
                markerNumber=marker, loadVector=[0.0, 0.0, -GRAVITY * mass.sum()]))
    sensor = mbs.AddSensor(eii.SensorNode(
        nodeNumber=body["nGenericODE2"], storeInternal=True, writeToFile=False,
        outputVariableType=exu.OutputVariableType.Coordinates))
    return sc, mbs, {**body, "sensor": sensor}


def settings(exu, t_end: float, h: float, *, record: bool, period: float | None = None,
             rho_inf: float = RHO_INF, full_newton: bool = False,
             newton: str = "default", solution_file: str | None = None):
    """SimulationSettings: generalized-alpha ``rho_inf``, index 3, ``round(t_end/h)``
    fixed steps, modified Newton (Exudyn's default) with the ``newton`` tolerances;
    sensors stored every ``period`` (default: every step) when ``record``; the solution
    file written every ``period`` to ``solution_file`` (None: not written)."""
    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.startTime = 0.0
    ti.endTime = t_end
    ti.numberOfSteps = round(t_end / h)
    ti.adaptiveStep = False
    if hasattr(ti, "automaticStepSize"):
        ti.automaticStepSize = False
    ti.verboseMode = 0
    ti.newton.useModifiedNewton = not full_newton
    ti.newton.relativeTolerance, ti.newton.absoluteTolerance = NEWTON_TOLERANCES[newton]
    ga = ti.generalizedAlpha
    ga.spectralRadius = rho_inf
    ga.useIndex2Constraints = False
    ga.useNewmark = False
    ga.computeInitialAccelerations = True
    period = 0.5 * h if period is None else period
    if hasattr(ss, "solution"):  # 1.13 layout
        ss.solution.file.write = solution_file is not None
        if solution_file is not None:
            ss.solution.file.name = solution_file
            ss.solution.file.writePeriod = period
        ss.solution.sensors.active = record
        ss.solution.sensors.writePeriod = period
    else:
        ss.solutionSettings.writeSolutionToFile = solution_file is not None
        if solution_file is not None:
            ss.solutionSettings.coordinatesSolutionFileName = solution_file
            ss.solutionSettings.solutionWritePeriod = period
        ss.solutionSettings.sensorsStoreAndWriteFiles = record
        ss.solutionSettings.sensorsWritePeriod = period
    return ss


def load_interface(path: str):
    """(fem, cms): the FEMinterface saved at ``path`` (with its modes) and its
    ObjectFFRFreducedOrderInterface."""
    from exudyn.FEM import FEMinterface, ObjectFFRFreducedOrderInterface

    fem = FEMinterface()
    fem.LoadFromFile(path)
    return fem, ObjectFFRFreducedOrderInterface(fem)


def solve(exu, fem_file: str, case: str, t_end: float, h: float, *, gravity: str = "builtin",
          rho_inf: float = RHO_INF, newton: str = "default", solution_file: str | None = None,
          record: bool = True):
    """The whole run: load the FE data and modes, build, Assemble, SolveDynamic (sensors
    every SAMPLE). Returns (mbs, handles, solver, success)."""
    fem, cms = load_interface(fem_file)
    mass = node_masses(fem) if case == "drop" and gravity == "nodal" else None
    _, mbs, handles = build_model(exu, cms, case, gravity, mass)
    mbs.Assemble()
    ss = settings(exu, t_end, h, record=record, period=SAMPLE, rho_inf=rho_inf,
                  newton=newton, solution_file=solution_file)
    ok = mbs.SolveDynamic(ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    return mbs, handles, mbs.sys["dynamicSolver"], bool(ok)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("fem", help="FEMinterface file with the clamped modes (SaveToFile)")
    p.add_argument("case", choices=("spin", "drop"))
    p.add_argument("--h", type=float, required=True)
    p.add_argument("--t-end", type=float, required=True)
    p.add_argument("--gravity", choices=("builtin", "nodal"), default="builtin")
    p.add_argument("--rho-inf", type=float, default=RHO_INF)
    p.add_argument("--newton", choices=tuple(NEWTON_TOLERANCES), default="default")
    p.add_argument("--solution", default="solution/coordinatesSolution.txt",
                   help="solution file, written every SAMPLE")
    args = p.parse_args(argv)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        import exudyn as exu
    _, _, solver, ok = solve(exu, args.fem, args.case, args.t_end, args.h,
                             gravity=args.gravity, rho_inf=args.rho_inf, newton=args.newton,
                             solution_file=args.solution, record=False)
    it = solver.it
    print(f"Exudyn {exu.__version__}: {args.case}, {int(it.numberOfSteps)} steps, "
          f"{int(it.newtonStepsCount)} Newton iterations, {int(it.newtonJacobiCount)} "
          f"Jacobians, {time.perf_counter() - start:.3f} s after the start-up")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
