"""The inputs of the compiled kernels' many-state tasks (docs/gradients.md, "Chunks of
steps") and of the backward sweep's chunks (:func:`adjoint_sweep`), checked before the
kernel runs: it checks no bounds, so a shape that does not fit would read past an
array."""

from __future__ import annotations

import numpy as np

from ..compiled.codes import (
    SWEEP_COEFFICIENTS,
    TASK_ADJOINT_SWEEP,
    TASK_EQUATIONS_MANY,
    TASK_FORCES_MANY,
    TASK_JACOBIANS_MANY,
    TASK_PIECES_MANY,
)
from ..errors import ModelError, ValidationError

#: The tasks by the name :meth:`~flexmbs.engine.compiled_system.CompiledSystem.pieces_many`
#: takes.
TASKS = {"pieces": TASK_PIECES_MANY, "jacobians": TASK_JACOBIANS_MANY,
         "equations": TASK_EQUATIONS_MANY, "forces": TASK_FORCES_MANY}


def many_state_inputs(compiled, states, lams, times, refs, what: str, values=None):
    """(task, output shape, kernel arrays {states, lams, profs, us, refs}) of a
    many-state call on ``compiled`` (a :class:`~flexmbs.engine.compiled_system.
    CompiledSystem`; arguments as its ``pieces_many``). ModelError for a System with
    state-dependent callables or contacts (their values and states move state by
    state); ValidationError naming the argument whose shape does not fit."""
    if compiled.callbacks.items:
        raise ModelError(f"pieces_many: the callables {compiled.callbacks.names} are "
                         f"evaluated state by state")
    if compiled.contacts:
        raise ModelError("pieces_many: the contacts' states change between states; "
                         "evaluate a model with contacts state by state")
    if what not in TASKS:
        raise ValidationError(f"pieces_many: what must be one of {sorted(TASKS)}, got "
                              f"{what!r}")
    n, m, n_s = compiled.n_q, compiled.n_c, len(compiled.torsion_names)
    states = np.ascontiguousarray(states, dtype=float)
    if states.ndim != 3 or states.shape[1] < 3 or states.shape[2] != n:
        raise ValidationError(f"pieces_many: states must be (K, ≥3, n_q = {n}) rows q, q̇, "
                              f"q̈; got shape {states.shape}")
    count = states.shape[0]
    times = np.asarray(times, dtype=float)
    given = {"lams": (lams, (count, m)), "times": (times, (count,)),
             "refs": (refs, (count, n_s))}
    if values is not None:
        given["values[0]"] = (values[0], (count, compiled.n_rows, 3))
        given["values[1]"] = (values[1], (count, compiled.n_u))
    for name, (array, shape) in given.items():
        array = np.asarray(array, dtype=float)
        if array.size != int(np.prod(shape)) or (array.ndim > 1 and array.shape != shape):
            raise ValidationError(f"pieces_many: {name} must have shape {shape}, got "
                                  f"{array.shape}")
    profs, us = compiled.time_values_many(times) if values is None else (
        np.ascontiguousarray(values[0], dtype=float),
        np.ascontiguousarray(values[1], dtype=float))
    shape = {"pieces": (count, 3 * (n + m) ** 2 + n + 2 * m), "jacobians": (count, m, n),
             "equations": (count, n + 2 * m), "forces": (count, n + 2 * m)}[what]
    arrays = {"states": states,
              "lams": np.ascontiguousarray(lams, dtype=float).reshape(count, m),
              "profs": profs, "us": us,
              "refs": np.ascontiguousarray(refs, dtype=float).reshape(count, n_s)}
    return TASKS[what], shape, arrays


def adjoint_sweep(compiled, pieces, extras, steps, bars) -> tuple[np.ndarray, int]:
    """(μ (K, s), the first step whose Jacobian is singular to working precision or whose
    μ is not finite, or −1) of a chunk of the backward
    sweep on ``compiled``'s kernel (:func:`flexmbs.engine.adjoint_sweep.adjoint_sweep`,
    whose docstring gives the arrays' layout: ``pieces`` (K, w) the chunk's rows of
    ``pieces_many``'s "pieces", ``extras`` (K, 2 n_c or 0, n_q), ``steps`` (K, 6 + 3 n_q
    + n_c)); ``bars`` (4, n_q) is updated in place. ValidationError naming the argument
    whose shape does not fit."""
    n, m, count = compiled.n_q, compiled.n_c, len(steps)
    index2 = extras.ndim == 3 and extras.shape[1] > 0  # (Z and Pᵀ of each step)
    s0 = n + m
    expected = {"pieces": (pieces, (count, 3 * s0 * s0 + n + 2 * m)),
                "extras": (extras, (count, 2 * m if index2 else 0, n)),
                "steps": (steps, (count, SWEEP_COEFFICIENTS + 3 * n + m)),
                "bars": (bars, (4, n))}
    for name, (array, shape) in expected.items():
        if (array.shape != shape or array.dtype != np.float64
                or not array.flags.c_contiguous):
            raise ValidationError(f"adjoint_sweep: {name} must be float64 (C order) of "
                                  f"shape {shape}, got {array.dtype} {array.shape}")
    size = s0 + (m if index2 else 0)
    mus = np.zeros((count, size))
    if not count:
        return mus, -1
    code = compiled._call(TASK_ADJOINT_SWEEP, out=pieces, profs=extras, qs=steps, qds=bars,
                          lams=mus, us=np.empty((size, size)), lu=np.empty((size, size)),
                          piv=np.empty(size, dtype=np.int64))
    return mus, int(code)
