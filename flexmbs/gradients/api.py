"""The gradient of a run's objective with respect to model parameters
(docs/gradients.md): ``fm.gradient(case_or_system, objective, parameters)`` and the
sensitivities of a whole sensor history, ``fm.sensitivities``.

Both run the case (or the System) once forward on the NumPy path, keeping states or
checkpoints, then either sweep backward once with the discrete adjoint (the cost of one
more run, whatever the number of parameters) or propagate forward sensitivities (one
solve per parameter and step). Either is the exact derivative of the discrete run: of
the steps the integrator takes, not of the continuous equations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._blas import single_threaded_blas
from ..errors import ValidationError
from ..integrators.options import Engine
from . import forward
from .adjoint import backward
from .direct import sensor_sensitivities
from .jacobian_source import TangentSource
from .objectives import Objective
from .parameters import CaseModels, ModelModels, resolve
from .prepared import PreparedParameter
from .sensor_probe import SensorProbe
from .servo_integrals import ServoIntegrals

MODES = ("adjoint", "forward")


@dataclass
class Problem:
    """A run ready for sensitivities: its System, settings, the parameters and their
    source, the sensor probe and the System's overrides (coupling, stiffening)."""

    system: object
    settings: forward.RunSettings
    parameters: list
    source: object
    probe: SensorProbe
    overrides: dict

    def prepare(self) -> list[PreparedParameter]:
        return [PreparedParameter(p, self.system, self.overrides, self.probe)
                for p in self.parameters]


def setup(case_or_system, sensor, component, parameters, *, overrides=None,
          **run) -> Problem:
    """A :class:`Problem`: ``case_or_system`` is a case file path, a loaded
    :class:`~flexmbs.cases.case.Case`, a :class:`~flexmbs.assembly.System` or a
    :class:`~flexmbs.model.Model`; ``run`` holds the run's settings (t_end, h, method
    and its options, Newton options) over a case's [solver] table, and ``overrides``
    case keys applied before (as ``--set``)."""
    from ..assembly import System

    if isinstance(parameters, str):
        parameters = [parameters]
    target = case_or_system
    if isinstance(target, (str, Path)) or type(target).__name__ == "Case":
        path = Path(target) if isinstance(target, (str, Path)) else target.path
        base = dict(getattr(target, "source", {}).get("overrides", {})) \
            if not isinstance(target, (str, Path)) else {}
        source = CaseModels(path, {**base, **(overrides or {})})
        params, source = resolve(parameters, source)
        case = source.nominal()
        solver = {**case.solver, **run}
        sys_overrides = {"coupling": solver.get("coupling"),
                         "stiffening": solver.get("stiffening")}
        from ..cases.run import case_system

        system = case_system(case, sys_overrides["coupling"], sys_overrides["stiffening"])
    else:
        if overrides:
            raise ValidationError("overrides apply to case files; change the model instead")
        if isinstance(target, System):
            model, sys_overrides = target.model, dict(target.overrides)
        elif hasattr(target, "bodies") and hasattr(target, "forces"):
            model, sys_overrides = target, {}
        else:
            raise ValidationError(f"case_or_system must be a case file, a Case, a System or "
                                  f"a Model; got {type(target).__name__}")
        params, source = resolve(parameters, ModelModels(model))
        system = System(source.model, **sys_overrides)
        solver = dict(run)
    settings = forward.run_settings(solver)
    return Problem(system, settings, params, source, SensorProbe(system, sensor, component),
                   sys_overrides)


@dataclass
class GradientResult:
    """The objective ``value``, ``gradient`` {key: dJ/dp}, the parameters' nominal
    ``values``, ``how`` each derivative was formed ("analytic" or "differences"), the
    sensor history (``t``, ``history``) and the ``cost`` (times [s], memory [bytes])."""

    objective: str
    value: float
    gradient: dict
    values: dict
    how: dict
    cost: dict
    t: np.ndarray = field(repr=False, default=None)
    history: np.ndarray = field(repr=False, default=None)
    units: str = ""

    def to_dict(self) -> dict:
        """A JSON-ready summary (what ``flexmbs sensitivity --json`` prints)."""
        return {"objective": self.objective, "value": self.value, "units": self.units,
                "gradient": dict(self.gradient), "parameters": dict(self.values),
                "how": dict(self.how), "cost": dict(self.cost)}


def gradient(case_or_system, objective: Objective, parameters, *, mode: str = "adjoint",
             checkpoint_every="auto", memory_limit: int = forward.MEMORY_LIMIT,
             jacobian_engine: str = "auto", overrides=None, **run) -> GradientResult:
    """dJ/dp of ``objective`` (an :class:`~flexmbs.gradients.objectives.Objective`) over a
    run of ``case_or_system`` for the ``parameters`` (keys as for ``--set``, optionally
    "KEY=VALUE"; :mod:`flexmbs.gradients.parameters`).

    ``mode``: "adjoint" (one backward sweep) or "forward" (forward sensitivities, for
    checking or few parameters). ``checkpoint_every``: "auto" keeps every state that fits
    in ``memory_limit`` bytes, else every k-th (k ≈ √N) and recomputes segments; an
    integer k forces that. ``jacobian_engine``: where the step Jacobians of the sweep
    are assembled, "auto" (the compiled engine's matrices where they are exact and the
    kernels are at hand), "compiled" or "python" (:mod:`.jacobian_source`); the forward
    run takes the compiled engine where the sweep's Jacobians do and the engine can run
    the model (:func:`forward_engine`). ``run`` and ``overrides``: see :func:`setup`.
    """
    if mode not in MODES:
        raise ValidationError(f"mode must be one of {list(MODES)}, got {mode!r}")
    if not isinstance(objective, Objective):
        raise ValidationError(f"objective must be an Objective, got "
                              f"{type(objective).__name__}")
    with single_threaded_blas():  # small matrices throughout: threads only contend
        problem = setup(case_or_system, objective.sensor, objective.component, parameters,
                        overrides=overrides, **run)
        prepared = problem.prepare()
        tic = time.perf_counter()
        source = TangentSource(problem.system, jacobian_engine)
        for prep in prepared:
            prep.use_engine(source)
        integrals = ServoIntegrals(problem.system, problem.probe, prepared)
        setup_seconds = time.perf_counter() - tic - source.load_seconds
        fwd = forward.run(problem.system, problem.settings, problem.probe,
                          checkpoint_every, memory_limit, forward_engine(source))
        value, weights = objective.evaluate(fwd.t, fwd.values)
        if mode == "adjoint":
            grad, seconds = backward(problem.system, fwd, problem.probe, weights, prepared,
                                     fwd.index2, source, integrals)
        else:
            ds, seconds = sensor_sensitivities(problem.system, fwd, problem.probe,
                                               prepared, fwd.index2, source, integrals)
            grad = weights @ ds
    keys = [p.key for p in problem.parameters]
    return GradientResult(
        objective.description, float(value),
        {k: float(g) for k, g in zip(keys, grad, strict=True)},
        {p.key: p.value for p in problem.parameters},
        {p.key: p.how for p in prepared},
        _cost(fwd, seconds + setup_seconds, mode, source), fwd.t, fwd.values,
        problem.probe.units)


def forward_engine(source: TangentSource) -> str:
    """The engine of the forward run: "auto" (the compiled engine when it can run the
    model: its states solve the same discrete equations as the NumPy path's, to Newton's
    tolerance) where the sweep's Jacobians come from the compiled engine, so that its
    kernels are at hand; else "python" (no compilation started for a gradient)."""
    return (Engine.AUTO if source.engine == Engine.COMPILED else Engine.PYTHON).value


def _cost(fwd, seconds, mode, source) -> dict:
    return {"mode": mode, "steps": fwd.steps, "forward_engine": fwd.engine,
            "formulation":
            "stabilized-index-2" if fwd.index2 else "index-3",
            "forward_seconds": fwd.seconds, "backward_seconds": seconds,
            "backward_over_forward": seconds / fwd.seconds if fwd.seconds else None,
            # the kernels' load, once per process: apart, as a run's compile_time
            "kernel_load_seconds": source.load_seconds,
            "jacobians": source.engine, "jacobians_note": source.note,
            "checkpoint_every": fwd.every,
            "states_kept": len(fwd.states) if fwd.every == 1 else len(fwd.checkpoints),
            "memory_bytes": fwd.memory, "recomputed_steps": fwd.recomputed}


@dataclass
class Sensitivities:
    """A sensor history ``values`` (N+1,) at the step times ``t`` and its derivatives
    ``derivatives`` (N+1, n_p) along ``keys`` (nominal ``parameter_values``)."""

    t: np.ndarray
    values: np.ndarray
    derivatives: np.ndarray
    keys: list
    parameter_values: np.ndarray
    cost: dict


def sensitivities(case_or_system, sensor, parameters, *, component=None,
                  checkpoint_every="auto", memory_limit: int = forward.MEMORY_LIMIT,
                  jacobian_engine: str = "auto", overrides=None,
                  **run) -> Sensitivities:
    """The history of ``sensor`` (its ``component``) over a run and its forward
    sensitivities to ``parameters`` (see :func:`gradient` for the arguments)."""
    with single_threaded_blas():
        problem = setup(case_or_system, sensor, component, parameters,
                        overrides=overrides, **run)
        prepared = problem.prepare()
        tic = time.perf_counter()
        source = TangentSource(problem.system, jacobian_engine)
        for prep in prepared:
            prep.use_engine(source)
        integrals = ServoIntegrals(problem.system, problem.probe, prepared)
        setup_seconds = time.perf_counter() - tic - source.load_seconds
        fwd = forward.run(problem.system, problem.settings, problem.probe,
                          checkpoint_every, memory_limit, forward_engine(source))
        ds, seconds = sensor_sensitivities(problem.system, fwd, problem.probe, prepared,
                                           fwd.index2, source, integrals)
        seconds += setup_seconds
    return Sensitivities(fwd.t, fwd.values, ds, [p.key for p in problem.parameters],
                         np.array([p.value for p in problem.parameters]),
                         _cost(fwd, seconds, "forward", source))
