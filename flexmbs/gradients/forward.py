"""The forward run of a gradient: the run itself (on the compiled engine where the
sweep's Jacobians come from it, else the NumPy path), with its sensor history and
checkpoints for the backward sweep (docs/gradients.md, "Checkpoints").

The run is :class:`~flexmbs.integrators.AlphaIntegrator` with the case's (or the
caller's) method, step and Newton settings, stepped as ``simulate`` steps it: a fixed
step, the last one shortened to land on t_end. It keeps every state when they fit in
``memory_limit``; otherwise the state at every k-th step (k ≈ √N), and the backward
sweep runs each segment again from its checkpoint (one more forward run in all), with
one step object for all segments. A checkpoint holds the iteration matrix in use (shared
between checkpoints until the run refreshes it) when the matrices cost less than half
the states they spare: the segment then repeats the forward run's steps bit for bit.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConvergenceError, ValidationError
from .residual_terms import State

#: Default memory for stored states [bytes].
MEMORY_LIMIT = 256 * 2**20
#: Options of a run that a gradient cannot follow, with the reason.
REFUSED = {"error_tol": "error-controlled steps (the step sizes would depend on the "
                        "parameters)",
           "real_time": "real-time mode (bounded Newton iterations)",
           "controllers": "sampled controllers", "restart": "a restart"}


@dataclass
class RunSettings:
    """Method parameters, the step h [s], the end t_end [s] and the step object's options."""

    params: object
    h: float
    t_end: float
    options: dict


def run_settings(solver: dict) -> RunSettings:
    """:class:`RunSettings` from a case's [solver] table or ``simulate``'s arguments
    (method, h, t_end, method and step options, ``newton`` preset); the coupling and
    stiffening overrides belong to the System. ValidationError for what a gradient
    cannot differentiate (:data:`REFUSED`)."""
    from ..integrators.options import METHOD_OPTIONS, NEWTON_PRESETS, STEP_OPTIONS
    from ..integrators.simulate import METHODS

    solver = {k: v for k, v in solver.items()
              if k not in ("coupling", "stiffening", "output_every", "output_times",
                           "t_out", "progress", "range_limits")}
    for key, why in REFUSED.items():
        if solver.get(key):
            raise ValidationError(f"gradients cannot follow {why}: remove {key!r}")
    method = solver.pop("method", "generalized-alpha")
    if method not in METHODS:
        raise ValidationError(f"method {method!r} is not one of {sorted(METHODS)}")
    try:
        h, t_end = float(solver.pop("h")), float(solver.pop("t_end"))
    except KeyError as exc:
        raise ValidationError(f"the run needs {exc.args[0]!r}") from None
    newton = solver.pop("newton", "default")
    if newton not in NEWTON_PRESETS:
        raise ValidationError(f"newton must be one of {list(NEWTON_PRESETS)}, got "
                              f"{newton!r}")
    for key, value in NEWTON_PRESETS[newton].items():
        solver.setdefault(key, value)
    unknown = set(solver) - METHOD_OPTIONS[method] - STEP_OPTIONS
    if unknown:
        raise ValidationError(f"unknown run option(s) {sorted(unknown)}")
    params = METHODS[method](**{k: solver.pop(k) for k in list(solver)
                                if k in METHOD_OPTIONS[method]})
    return RunSettings(params, h, t_end, solver)


def start(system, settings: RunSettings, engine: str = "python"):
    """The step object at the run's consistent initial state (joint-coordinate initial
    conditions of the model applied as ``simulate`` applies them), on ``engine`` (an
    engine given in the run's options wins)."""
    from ..integrators.stepper import AlphaIntegrator

    options = {"engine": engine, **settings.options}
    if getattr(system.model, "initial", ()) and "q0" not in options and "qd0" not in options:
        from ..assembly.initial import initial_state

        options["q0"], options["qd0"] = initial_state(system, float(options.get("t0", 0.0)))
    integ = AlphaIntegrator(system, settings.params, settings.h, **options)
    if integ.contacts or any(getattr(f, "element_kind", None) == "contact"
                             for f in system.model.forces):
        raise ValidationError("gradients cannot follow contacts (their events switch "
                              "the equations)")
    return integ


def initial_state(system, settings: RunSettings) -> State:
    """The run's initial :class:`State` (:func:`start`)."""
    integ = start(system, settings)
    return State(integ.t, integ.q.copy(), integ.qd.copy(), integ.qdd.copy(),
                 integ.lam.copy())


@dataclass
class ForwardRun:
    """The run: times t (N+1,), step sizes h (N,), the objective's sensor values (N+1,),
    the states kept (index → (State, angle memory)), checkpoints (index → restart point)
    and the cost."""

    settings: RunSettings
    t: np.ndarray
    h: np.ndarray
    values: np.ndarray
    every: int
    states: dict = field(default_factory=dict)
    checkpoints: dict = field(default_factory=dict)
    seconds: float = 0.0
    state_bytes: int = 0
    recomputed: int = 0
    index2: bool = False
    """Whether the run took the stabilized index-2 form."""
    matrix_bytes: int = 0
    """Bytes of the distinct iteration matrices the checkpoints hold."""
    restarter: object = field(default=None, repr=False)
    """The step object that runs segments again (made at the first)."""
    engine: str = "python"
    """The engine that ran the steps ("compiled" or "python"); segments run again on
    it, so they repeat its steps."""

    @property
    def steps(self) -> int:
        return self.h.size

    @property
    def memory(self) -> int:
        """Bytes of the states and checkpoints kept (the largest at any time)."""
        kept = len(self.states) if self.every == 1 else len(self.checkpoints) + self.every
        return kept * self.state_bytes + self.matrix_bytes


def _state_of(integ) -> tuple:
    return (State(integ.t, integ.q.copy(), integ.qd.copy(), integ.qdd.copy(),
                  integ.lam.copy()), dict(integ.system.angle_memory))


def _advance(integ, h: float, t_end: float) -> None:
    integ.h = h
    ok, message = integ.step()
    if not ok:
        raise ConvergenceError(f"the forward run failed: {message}")
    if abs(integ.t - t_end) < 1e-12 * max(1.0, abs(t_end)):
        integ.t = float(t_end)


def _checkpoint(integ, keep_matrix: bool) -> dict:
    """The integrator's restart point; with ``keep_matrix`` its iteration matrix in use
    (by reference: checkpoints between two refreshes share it), so that the segment run
    again from it takes the forward run's very steps, bit for bit; else none (rebuilt on
    restore: the segment's states then differ from the forward run's within its Newton
    tolerance)."""
    cp = integ.checkpoint()
    if not keep_matrix:
        cp["matrix"] = None
    return cp


def run(system, settings: RunSettings, probe, checkpoint_every="auto",
        memory_limit: int = MEMORY_LIMIT, engine: str = "python") -> ForwardRun:
    """Run forward on ``engine`` ("auto": the compiled engine where it can run the model;
    "python": the NumPy path), recording ``probe``'s value (a
    :class:`~flexmbs.gradients.sensor_probe.SensorProbe`) at every step and keeping the
    states or checkpoints (``checkpoint_every``: "auto", or k ≥ 1 to keep every k-th)."""
    tic = time.perf_counter()
    integ = start(system, settings, engine)
    t_end, h = settings.t_end, settings.h
    if not (np.isfinite(t_end) and t_end > integ.t):
        raise ValidationError(f"t_end = {t_end!r} s must lie after the start {integ.t:g} s")
    n_est = math.ceil((t_end - integ.t) / h - 1e-9)
    state_bytes = 8 * (4 * system.n_q + system.n_c + 8) + 64 * len(system.angle_memory)
    if checkpoint_every == "auto":
        every = 1 if (n_est + 1) * state_bytes <= memory_limit else max(
            2, math.ceil(math.sqrt(n_est)))
    elif isinstance(checkpoint_every, int) and checkpoint_every >= 1:
        every = checkpoint_every
    else:
        raise ValidationError(f"checkpoint_every must be 'auto' or an integer >= 1, got "
                              f"{checkpoint_every!r}")
    from ..integrators.options import Formulation

    out = ForwardRun(settings, np.zeros(0), np.zeros(0), np.zeros(0), every,
                     state_bytes=state_bytes,
                     index2=integ.formulation is Formulation.STABILIZED_INDEX2,
                     engine=integ.engine.value)
    times, sizes, values = [integ.t], [], []
    state, angles = _state_of(integ)
    values.append(probe.value(state))
    out.states[0] = (state, angles)
    # matrices kept when they cost under half the states: a sparse engine's by its
    # nonzeros' values (their rows and columns are the engine's own, shared)
    pattern = None if integ.compiled is None else integ.compiled.pattern
    size = system.n_q + system.n_c
    matrix_bytes = 8 * (size * size if pattern is None else pattern[0].size)
    keep = every > 1 and (n_est // every + 1) * (state_bytes + matrix_bytes) <= min(
        memory_limit, (n_est + 1) * state_bytes // 2)
    out.checkpoints[0] = _checkpoint(integ, keep)
    k = 0
    while integ.t < t_end - 1e-12 * max(1.0, abs(t_end)):
        _advance(integ, min(h, t_end - integ.t), t_end)
        k += 1
        sizes.append(integ.last_step)  # the size it took: h/2ⁱ after halvings
        times.append(integ.t)
        state, angles = _state_of(integ)
        values.append(probe.value(state))
        if every == 1:
            out.states[k] = (state, angles)
        elif k % every == 0:
            out.checkpoints[k] = _checkpoint(integ, keep)
    if every > 1:
        out.states = {}
        held = {id(cp["matrix"]): cp["matrix"] for cp in out.checkpoints.values()
                if cp.get("matrix") is not None}
        out.matrix_bytes = sum(getattr(m, "values", m).nbytes for m in held.values())
        if pattern is not None and held:  # (the entries' rows and columns, shared)
            out.matrix_bytes += pattern[0].nbytes + pattern[1].nbytes
    out.t, out.h, out.values = np.array(times), np.array(sizes), np.array(values)
    out.seconds = time.perf_counter() - tic
    return out


def segment(system, run_: ForwardRun, first: int, last: int) -> dict:
    """{index: (State, angle memory)} of the steps first..last, from the states kept or
    by running again from the checkpoint at ``first`` with the recorded step sizes."""
    if run_.every == 1:
        return {k: run_.states[k] for k in range(first, last + 1)}
    if run_.restarter is None:
        run_.restarter = start(system, run_.settings, run_.engine)
    integ = run_.restarter
    integ.restore(run_.checkpoints[first])
    out = {first: _state_of(integ)}
    for k in range(first, last):
        _advance(integ, float(run_.h[k]), run_.settings.t_end)
        integ.t = float(run_.t[k + 1])
        out[k + 1] = _state_of(integ)
        run_.recomputed += 1
    return out
