"""Simo and Vu-Quoc's flying spaghetti in space (1988) in flexmbs and in Exudyn, side by
side: an independent check of the nonlinear beam's free flight (the paper gives
pictures only) and a timing of the two codes on it.

Run::

    python benchmarks/spaghetti_vs_exudyn.py              # 10 elements, h = 0.02 s
    python benchmarks/spaghetti_vs_exudyn.py --elements 20 --h 0.01
    python benchmarks/spaghetti_vs_exudyn.py --case plane  # the plane variant

Problem: a free beam of length 10 from A = (6, 0, 0) to (0, 8, 0), EA = GA = 1e4,
GJ = EI = 500, ρA = 1, ρJ = diag(20, 10, 10) (torsion first), at rest; at end A a
force p(t)/10 along x and a torque p(t)·(0, −1/2, −1), both in global axes, with
p(t) = 80 t up to 2.5 s, 80 (5 − t) up to 5 s, then 0 (peaks 20 N and (0, −100, −200)
N m); 15 s, generalized-α with ρ∞ = 1, no damping. Output: the path of end A.
``--case plane``: the plane variant of the tests and docs/nonlinear_beam.md, force
(8, 0, 0) and torque (0, 0, 80) times the same triangle scaled to peak at 1 (the beam
stays in its plane; the centre of mass then moves by two fifths of the figures below).

Exact, whatever the code: the beam's mass is 10, so its centre of mass moves along x by
0.4 t³/3 up to 2.5 s and by 12.5 + 5 (t − 5) after 5 s (the impulse is 50 N s).

* flexmbs: ``tests/test_nonlinear_beam_dynamics.spaghetti`` (Simo–Reissner beams of
  Euler-parameter node bodies), the loads Python callables, the compiled engine.
* Exudyn: ``ObjectBeamGeometricallyExact`` on ``NodeRigidBodyEP`` nodes, the same
  section (``BeamSection``: stiffness diag(EA, GA, GA, GJ, EI, EI), inertia
  diag(20, 10, 10), ρA), the loads ``LoadForceVector`` and ``LoadTorqueVector`` with
  user functions; Newton tolerances 1e-8.

Prints the two paths' largest difference (on flexmbs's output times), end A's position
at 5, 10 and 15 s in both codes, and the wall times.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _beam_runs import beam_section, dynamics_models, solve_exudyn

#: End A, the beam's direction and length.
START, AXIS, LENGTH = np.array([6.0, 0.0, 0.0]), np.array([-0.6, 0.8, 0.0]), 10.0
#: The loads at the peak of the triangle (2.5 s): force [N] and torque [N m] in global
#: axes, per case.
CASES = {"space": (np.array([20.0, 0.0, 0.0]), np.array([0.0, -100.0, -200.0])),
         "plane": (np.array([8.0, 0.0, 0.0]), np.array([0.0, 0.0, 80.0]))}


def p(t: float) -> float:
    """The load factor: t/2.5 up to 2.5 s, (5 − t)/2.5 up to 5 s, then 0."""
    return t / 2.5 if t <= 2.5 else ((5.0 - t) / 2.5 if t <= 5.0 else 0.0)


def run_exudyn(case: str, elements: int, h: float, t_end: float):
    """(t, end A's position (n, 3), wall time [s]) of Exudyn's geometrically exact beams."""
    import exudyn as exu
    from exudyn.itemInterface import (
        LoadForceVector,
        LoadTorqueVector,
        MarkerNodePosition,
        MarkerNodeRigid,
        NodeRigidBodyEP,
        ObjectBeamGeometricallyExact,
        SensorNode,
    )
    from exudyn.rigidBodyUtilities import RotationMatrix2EulerParameters, RotationMatrixZ

    container = exu.SystemContainer()
    mbs = container.AddSystem()
    section = beam_section(exu, 1e4, 500.0)
    length = LENGTH / elements
    turned = RotationMatrixZ(np.arctan2(AXIS[1], AXIS[0]))  # the beam's x along AXIS
    ep = [float(v) for v in RotationMatrix2EulerParameters(turned)]
    nodes = [mbs.AddNode(NodeRigidBodyEP(
        referenceCoordinates=[*(START + k * length * AXIS).tolist(), *ep]))
        for k in range(elements + 1)]
    for k in range(elements):
        mbs.AddObject(ObjectBeamGeometricallyExact(nodeNumbers=[nodes[k], nodes[k + 1]],
                                                   length=length, sectionData=section))
    end = nodes[0]
    mbs.AddLoad(LoadForceVector(
        markerNumber=mbs.AddMarker(MarkerNodePosition(nodeNumber=end)),
        loadVector=[0.0, 0.0, 0.0],
        loadVectorUserFunction=lambda mbs, t, vector: (p(t) * CASES[case][0]).tolist()))
    mbs.AddLoad(LoadTorqueVector(
        markerNumber=mbs.AddMarker(MarkerNodeRigid(nodeNumber=end)),
        loadVector=[0.0, 0.0, 0.0],
        loadVectorUserFunction=lambda mbs, t, vector: (p(t) * CASES[case][1]).tolist()))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=end, storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    data, wall = solve_exudyn(exu, mbs, sensor, h, t_end)
    return data[:, 0], data[:, 1:4], wall


def run_flexmbs(case: str, elements: int, h: float, t_end: float):
    """(t, end A's position (n, 3), wall time [s]) of flexmbs's nonlinear beam."""
    module = dynamics_models()
    from flexmbs.integrators import simulate

    system = module.spaghetti(elements, *CASES[case])
    start = time.perf_counter()
    result = simulate(system, t_end, h, "generalized-alpha", rho_inf=1.0, engine="compiled")
    wall = time.perf_counter() - start
    if not result.success:
        raise SystemExit(f"flexmbs's run failed: {result.message}")
    path = np.column_stack([result.coordinate(f"s/1.{c}") for c in "xyz"])
    return result.t, path, wall


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=10, help="beam elements")
    parser.add_argument("--h", type=float, default=0.02, help="time step [s]")
    parser.add_argument("--t-end", type=float, default=15.0, help="end time [s]")
    parser.add_argument("--case", choices=tuple(CASES), default="space",
                        help="the loads: Simo and Vu-Quoc's in space, or the plane variant")
    args = parser.parse_args(argv)
    t_f, a_f, wall_f = run_flexmbs(args.case, args.elements, args.h, args.t_end)
    t_e, a_e, wall_e = run_exudyn(args.case, args.elements, args.h, args.t_end)
    on_f = np.column_stack([np.interp(t_f, t_e, a_e[:, c]) for c in range(3)])
    gap = np.linalg.norm(a_f - on_f, axis=1)
    travel = float(np.max(np.linalg.norm(a_e - a_e[0], axis=1)))
    print(f"{args.case}: {args.elements} elements, h = {args.h:g} s, {args.t_end:g} s")
    for t in (5.0, 10.0, 15.0):
        if t <= args.t_end + 1e-9:
            i, j = int(np.argmin(abs(t_f - t))), int(np.argmin(abs(t_e - t)))
            print(f"  end A at {t:4.1f} s: flexmbs {np.round(a_f[i], 3)}, "
                  f"Exudyn {np.round(a_e[j], 3)}")
    print(f"  largest distance between the two paths: {gap.max():.3f} at "
          f"{t_f[int(np.argmax(gap))]:.2f} s ({gap.max() / travel:.2%} of end A's "
          f"largest travel, {travel:.2f})")
    print(f"  wall time: flexmbs {wall_f:.2f} s, Exudyn {wall_e:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
