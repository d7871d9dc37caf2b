"""Shared by the nonlinear-beam comparisons with Exudyn (right_angle_vs_exudyn.py,
spaghetti_vs_exudyn.py): the tests' model builders, and Exudyn's solve with the
settings both scripts use."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dynamics_models():
    """The module ``tests/test_nonlinear_beam_dynamics.py``, whose builders
    (``right_angle_cantilever``, ``spaghetti``) make flexmbs's side of the comparisons."""
    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location(
        "nonlinear_beam_dynamics", ROOT / "tests" / "test_nonlinear_beam_dynamics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def solve_exudyn(exu, mbs, sensor, h: float, t_end: float):
    """(sensor data (n, 1 + k): time then values, wall time [s]) of Exudyn's
    ``SolveDynamic`` on the assembled ``mbs``: fixed step h [s] to t_end [s],
    generalized-α with ρ∞ = 1, Newton tolerances 1e-8, the sparse solver, the sensor
    stored every step, no solution file."""
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = round(t_end / h)
    settings.timeIntegration.endTime = t_end
    settings.timeIntegration.generalizedAlpha.spectralRadius = 1.0
    settings.timeIntegration.newton.relativeTolerance = 1e-8
    settings.timeIntegration.newton.absoluteTolerance = 1e-8
    settings.timeIntegration.verboseMode = 0
    settings.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = h
    start = time.perf_counter()
    mbs.SolveDynamic(settings)
    wall = time.perf_counter() - start
    return mbs.GetSensorStoredData(sensor), wall


def beam_section(exu, axial_shear: float, bending_torsion: float):
    """Exudyn's ``BeamSection`` of the Simo–Vu-Quoc examples: stiffness diag(EA, GA, GA)
    = ``axial_shear`` [N] and diag(GJ, EI, EI) = ``bending_torsion`` [N m²], rotary
    inertia diag(20, 10, 10) [kg m], mass 1 kg/m."""
    import numpy as np

    section = exu.BeamSection()
    section.stiffnessMatrix = np.diag([axial_shear] * 3 + [bending_torsion] * 3)
    section.inertia = np.diag([20.0, 10.0, 10.0])
    section.massPerLength = 1.0
    return section
