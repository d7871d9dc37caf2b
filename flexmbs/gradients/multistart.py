"""Multi-start fits (docs/gradients.md, "Several starts"): a least-squares fit
(:func:`~flexmbs.gradients.fit.fit`) from several starting points, run serially, in local
processes or on a Dask cluster (:func:`flexmbs.studies.tasks.run_tasks`), the best kept.

A fit of an oscillation's frequency or phase has as many local minima as the history has
periods; a start in the wrong one stays there. The starts are the given one and others
drawn within the parameters' bounds (or a factor of two of the start), each fitted by
itself; the result is the one of least RMS error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ValidationError


def _fit_task(case, sensor, data, items, component, bounds, max_evaluations, overrides,
              run):
    """One start's fit (a module-level function: it travels to worker processes)."""
    from .fit import _fit

    return _fit(case, sensor, data, items, component, bounds, max_evaluations, overrides,
                run)


def _source(case_or_system, overrides):
    from .parameters import CaseModels, ModelModels

    if isinstance(case_or_system, (str, Path)):
        return CaseModels(case_or_system, overrides)
    if type(case_or_system).__name__ == "Case":
        return CaseModels(case_or_system.path, overrides)
    model = getattr(case_or_system, "model", case_or_system)
    return ModelModels(model)


def start_points(keys, x0, bounds, starts, seed) -> list[np.ndarray]:
    """The start vectors: ``x0`` first, then the drawn or given ones (module docstring)."""
    if isinstance(starts, (list, tuple)):
        out = []
        for k, start in enumerate(starts):
            if not isinstance(start, dict) or set(start) - set(keys):
                raise ValidationError(f"starts[{k}] must be a table {{key: value}} of the "
                                      f"parameters {keys}, got {start!r}")
            out.append(np.array([float(start.get(key, x)) for key, x in
                                 zip(keys, x0, strict=True)]))
        return out
    if isinstance(starts, bool) or not isinstance(starts, int) or starts < 1:
        raise ValidationError(f"starts must be an integer >= 1 or a list of starts, got "
                              f"{starts!r}")
    rng = np.random.default_rng(seed)
    out = [np.asarray(x0, dtype=float)]
    for _ in range(starts - 1):
        point = []
        for key, x in zip(keys, x0, strict=True):
            low, high = (bounds or {}).get(key, (-np.inf, np.inf))
            if np.isfinite(low) and np.isfinite(high):
                point.append(rng.uniform(low, high))
            elif x:
                point.append(x * 2.0 ** rng.uniform(-1.0, 1.0))
            else:
                point.append(rng.uniform(-1.0, 1.0))
        out.append(np.array(point))
    return out


def multi_start(case_or_system, sensor, data, parameters, component, bounds,
                max_evaluations, overrides, run, starts, seed, workers, scheduler):
    """The best of the fits from :func:`start_points` (see :func:`flexmbs.gradients.fit.
    fit`); ValidationError when every start failed, with the first failure."""
    from ..studies.tasks import TaskFailure, run_tasks
    from .parameters import resolve

    if isinstance(parameters, str):
        parameters = [parameters]
    params, _ = resolve(parameters, _source(case_or_system, overrides))
    keys = [p.key for p in params]
    x0 = np.array([p.value for p in params])
    points = start_points(keys, x0, bounds, starts, seed)
    is_file = isinstance(case_or_system, (str, Path))
    if scheduler is not None and not is_file:
        raise ValidationError("multi-start fits on a Dask cluster take a case file (its "
                              "path, the same on the workers)")
    case = str(Path(case_or_system).resolve()) if is_file else case_or_system
    calls = [(case, sensor, data, [f"{k}={float(v)!r}" for k, v in zip(keys, point, strict=True)],
              component, bounds, max_evaluations, overrides, run) for point in points]
    results = run_tasks(_fit_task, calls, workers=workers if is_file else 1,
                        scheduler=scheduler)
    summaries = []
    for point, result in zip(points, results, strict=True):
        start = dict(zip(keys, map(float, point), strict=True))
        if isinstance(result, TaskFailure):
            summaries.append({"start": start, "values": None, "rms_final": None,
                              "evaluations": 0, "success": False,
                              "message": f"{result.kind}: {result.message}"})
        else:
            summaries.append({"start": start, "values": dict(result.values),
                              "rms_final": result.rms_final,
                              "evaluations": result.evaluations,
                              "success": result.success, "message": result.message})
    done = [(r.rms_final, k) for k, r in enumerate(results)
            if not isinstance(r, TaskFailure)]
    if not done:
        raise ValidationError(f"every one of the {len(points)} starts failed; the first: "
                              f"{summaries[0]['message']}")
    best = results[min(done)[1]]
    best.starts = summaries
    return best
