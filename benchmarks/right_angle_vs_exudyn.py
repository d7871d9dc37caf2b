"""Simo and Vu-Quoc's right-angle cantilever in flexmbs and in Exudyn, side by side: an
independent check of the nonlinear beam's motion (the paper gives curves only) and a
timing of the two codes on it.

Run::

    python benchmarks/right_angle_vs_exudyn.py            # 10 elements per leg, h = 0.02
    python benchmarks/right_angle_vs_exudyn.py --elements 20 --h 0.01

Problem (Simo and Vu-Quoc 1988): two legs of length 10, the first along y clamped at the
origin, the second along x, joined rigidly at the elbow; EA = GA = 1e6, GJ = EI = 1e3,
ρA = 1, ρJ = diag(20, 10, 10) (torsion first); an out-of-plane force at the elbow rising
from 0 to 50 at t = 1 and back to 0 at t = 2; 30 s, generalized-α with ρ∞ = 1, no
damping. Output: the free end's out-of-plane displacement z(t).

* flexmbs: ``tests/test_nonlinear_beam_dynamics.right_angle_cantilever`` (Simo–Reissner
  beams of Euler-parameter node bodies, helicoidal strains, the consistent inertia of
  the Hermite centre line), the load a Python callable, the compiled engine.
* Exudyn: ``ObjectBeamGeometricallyExact`` on ``NodeRigidBodyEP`` nodes, the same
  section (``BeamSection``: stiffness diag(EA, GA, GA, GJ, EI, EI), inertia
  diag(20, 10, 10), ρA), the legs clamped and joined by ``GenericJoint``s, the load a
  ``loadVectorUserFunction``; Newton tolerances 1e-8.

Prints each run's extremes (value and time), the largest difference of the two
histories over the 30 s (on flexmbs's output times) and the wall times.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _beam_runs import beam_section, dynamics_models, solve_exudyn


def pulse_force(t: float) -> float:
    """The elbow's out-of-plane force [N]: 50 t up to 1 s, 50 (2 − t) up to 2 s, then 0."""
    return 50.0 * t if t < 1.0 else (50.0 * (2.0 - t) if t < 2.0 else 0.0)


def run_exudyn(elements: int, h: float, t_end: float = 30.0):
    """(t, z of the free end, wall time [s]) of Exudyn's geometrically exact beams."""
    import exudyn as exu
    from exudyn.itemInterface import (
        GenericJoint,
        LoadForceVector,
        MarkerNodePosition,
        MarkerNodeRigid,
        NodePointGround,
        NodeRigidBodyEP,
        ObjectBeamGeometricallyExact,
        SensorNode,
    )
    from exudyn.rigidBodyUtilities import RotationMatrix2EulerParameters, RotationMatrixZ

    container = exu.SystemContainer()
    mbs = container.AddSystem()
    section = beam_section(exu, 1e6, 1e3)
    length = 10.0 / elements
    along_y = RotationMatrixZ(np.pi / 2)  # the first leg's frame: its x along global y
    turned = [float(v) for v in RotationMatrix2EulerParameters(along_y)]
    first = [mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[0.0, k * length, 0.0, *turned]))
             for k in range(elements + 1)]
    second = [mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[k * length, 10.0, 0.0, 1.0,
                                                                0.0, 0.0, 0.0]))
              for k in range(elements + 1)]
    for leg in (first, second):
        for k in range(elements):
            mbs.AddObject(ObjectBeamGeometricallyExact(nodeNumbers=[leg[k], leg[k + 1]],
                                                       length=length, sectionData=section))
    ground = mbs.AddNode(NodePointGround())
    clamp = mbs.AddMarker(MarkerNodeRigid(nodeNumber=ground, localHT=exu.HT(rotation=along_y)))
    mbs.AddObject(GenericJoint(markerNumbers=[clamp, mbs.AddMarker(
        MarkerNodeRigid(nodeNumber=first[0]))]))
    elbow = mbs.AddMarker(MarkerNodeRigid(nodeNumber=first[-1],
                                          localHT=exu.HT(rotation=along_y.T)))
    mbs.AddObject(GenericJoint(markerNumbers=[elbow, mbs.AddMarker(
        MarkerNodeRigid(nodeNumber=second[0]))]))
    mbs.AddLoad(LoadForceVector(
        markerNumber=mbs.AddMarker(MarkerNodePosition(nodeNumber=first[-1])),
        loadVector=[0.0, 0.0, 0.0],
        loadVectorUserFunction=lambda mbs, t, vector: [0.0, 0.0, pulse_force(t)]))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=second[-1], storeInternal=True,
                                      outputVariableType=exu.OutputVariableType.Displacement))
    mbs.Assemble()
    data, wall = solve_exudyn(exu, mbs, sensor, h, t_end)
    return data[:, 0], data[:, 3], wall


def run_flexmbs(elements: int, h: float, t_end: float = 30.0):
    """(t, z of the free end, wall time [s]) of flexmbs's nonlinear beams."""
    module = dynamics_models()
    from flexmbs.integrators import simulate

    system = module.right_angle_cantilever(elements)
    start = time.perf_counter()
    result = simulate(system, t_end, h, "generalized-alpha", rho_inf=1.0, engine="compiled")
    wall = time.perf_counter() - start
    return result.t, result.coordinate(f"b/{elements + 1}.z"), wall


def extremes(t, z) -> str:
    i, j = int(np.argmax(z)), int(np.argmin(z))
    return f"max {z[i]:+.3f} at {t[i]:.2f} s, min {z[j]:+.3f} at {t[j]:.2f} s"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=10, help="elements per leg")
    parser.add_argument("--h", type=float, default=0.02, help="time step [s]")
    args = parser.parse_args(argv)
    t_f, z_f, wall_f = run_flexmbs(args.elements, args.h)
    t_e, z_e, wall_e = run_exudyn(args.elements, args.h)
    difference = float(np.max(np.abs(z_f - np.interp(t_f, t_e, z_e))))
    print(f"{args.elements} elements per leg, h = {args.h:g} s, 30 s")
    print(f"  flexmbs: {extremes(t_f, z_f)}; {wall_f:.2f} s")
    print(f"  Exudyn:  {extremes(t_e, z_e)}; {wall_e:.2f} s")
    print(f"  largest difference of the histories: {difference:.3f} "
          f"({difference / np.max(np.abs(z_e)):.1%} of Exudyn's largest |z|)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
