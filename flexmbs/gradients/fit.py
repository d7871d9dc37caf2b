"""Parameter identification: least squares between a sensor's history over a run and a
measured one (docs/gradients.md, "Fitting parameters to measurements").

The residuals are r_i = s(τ_i; p) − m_i, one per measurement (τ_i, m_i) within the run:
the model's sensor at the measurement times, sampled from its history at the run's steps
by :func:`sampling_weights` (the step's value where τ_i is a step time, else the cubic
through the four nearest steps, O(h⁴)); their Jacobian is the same sampling of the
forward sensitivities of the history (:func:`~flexmbs.gradients.api.sensitivities`: one
solve per parameter and step), and ``scipy.optimize.least_squares`` (trust-region
reflective, bounds allowed) takes both. The result carries standard errors from the
Gauss–Newton covariance σ̂² (GᵀG)⁻¹, G_ij = ds(τ_i)/dp_j, σ̂² = rᵀr/(n_r − n_p) with n_r
the number of measurements used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ValidationError
from .api import sensitivities
from .parameters import apply_bounds


@dataclass
class FitResult:
    """Fitted ``values`` {key: p}, their ``initial`` values and ``standard_errors``,
    the root-mean-square error before and after over the measurements used [sensor
    units], evaluations, success, the optimizer's message and ``measurements``, the
    number of measurements within the run (the residuals n_r)."""

    values: dict
    initial: dict
    standard_errors: dict
    rms_initial: float
    rms_final: float
    evaluations: int
    success: bool
    message: str
    measurements: int = 0
    starts: list = field(default_factory=list)
    """Multi-start fits: each start's {"start", "values", "rms_final", "evaluations",
    "success", "message"} (the result is the best of them)."""

    def to_dict(self) -> dict:
        return {"values": dict(self.values), "initial": dict(self.initial),
                "standard_errors": dict(self.standard_errors),
                "rms_initial": self.rms_initial, "rms_final": self.rms_final,
                "evaluations": self.evaluations, "success": self.success,
                "message": self.message, "measurements": self.measurements,
                "starts": list(self.starts)}


def standard_errors(residuals, jacobian) -> np.ndarray:
    """(n_p,) standard errors of the parameters of a least-squares fit from its residuals
    (n_r,) at the optimum and their Jacobian (n_r, n_p): the square roots of the diagonal
    of the Gauss–Newton covariance σ̂²(GᵀG)⁻¹, σ̂² = rᵀr / (n_r − n_p) (docs/gradients.md,
    "Fitting parameters to measurements"). NaN (null in JSON) where they are not defined: no more
    residuals than parameters (no degrees of freedom left to estimate σ̂² from) or a
    singular GᵀG."""
    residuals = np.asarray(residuals, dtype=float).ravel()
    jacobian = np.asarray(jacobian, dtype=float).reshape(residuals.size, -1)
    dof = residuals.size - jacobian.shape[1]
    if dof < 1:
        return np.full(jacobian.shape[1], np.nan)
    sigma2 = float(residuals @ residuals) / dof
    try:
        covariance = sigma2 * np.linalg.inv(jacobian.T @ jacobian)
    except np.linalg.LinAlgError:
        return np.full(jacobian.shape[1], np.nan)
    return np.sqrt(np.clip(np.diag(covariance), 0.0, None))


def sampling_weights(t, times) -> tuple[np.ndarray, np.ndarray]:
    """(index (n, 4), weight (n, 4)) with Σ_j weight[i, j] s[index[i, j]] the history s
    at the step times ``t`` (increasing) sampled at ``times`` (within [t_0, t_N]): the
    Lagrange cubic through the four steps nearest each time (the two each side where
    there are), exact at a step time and for cubics, O(h⁴) between steps (linear on a run
    of one step)."""
    t = np.asarray(t, dtype=float)
    times = np.clip(np.asarray(times, dtype=float), t[0], t[-1])
    width = min(4, t.size)
    k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, t.size - 2)
    first = np.clip(k - (width // 2 - 1), 0, t.size - width)
    index = first[:, None] + np.arange(width)[None, :]
    nodes = t[index]
    weight = np.ones(index.shape)
    for a in range(width):
        for b in range(width):
            if a != b:
                weight[:, a] *= (times - nodes[:, b]) / (nodes[:, a] - nodes[:, b])
    if width < 4:
        index = np.pad(index, ((0, 0), (0, 4 - width)))
        weight = np.pad(weight, ((0, 0), (0, 4 - width)))
    return index, weight


def measurement_data(data) -> tuple[np.ndarray, np.ndarray]:
    """(times [s], values) of ``data`` = (times, values) as float arrays; ValidationError
    unless they are finite, of one size and at least one."""
    try:
        times, values = (np.asarray(v, dtype=float).ravel() for v in data)
    except (TypeError, ValueError):
        raise ValidationError("data must be (times [s], values): two arrays of numbers"
                              ) from None
    if times.size < 1 or times.size != values.size:
        raise ValidationError(f"data: need (time, value) pairs; got {times.size} times and "
                              f"{values.size} values")
    if not (np.all(np.isfinite(times)) and np.all(np.isfinite(values))):
        raise ValidationError("data: the times and values must be finite numbers")
    return times, values


def within_run(times, t) -> np.ndarray:
    """The mask of the measurement ``times`` within the run's span [t_0, t_N] (to 1e-9 of
    its longest step); ValidationError when none is."""
    slack = 1e-9 * float(np.max(np.diff(t))) if t.size > 1 else 0.0
    inside = (times >= t[0] - slack) & (times <= t[-1] + slack)
    if not np.any(inside):
        raise ValidationError(f"no measurement within the run: the data cover "
                              f"[{times.min():g}, {times.max():g}] s, the run "
                              f"[{t[0]:g}, {t[-1]:g}] s")
    return inside


def check_max_evaluations(value) -> int:
    """``max_evaluations`` as a positive integer; ValidationError naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValidationError(f"max_evaluations (--max-evaluations) must be a positive "
                              f"integer, got {value!r}")
    return int(value)


def read_measurements(path) -> tuple[np.ndarray, np.ndarray]:
    """(times [s], values) from a CSV file of two columns (a header line is skipped);
    ValidationError naming the file when it cannot be read so."""
    import warnings

    try:
        with warnings.catch_warnings():  # (an empty file: said below, not by NumPy)
            warnings.simplefilter("ignore", UserWarning)
            data = np.genfromtxt(path, delimiter=",", dtype=float, comments="#")
    except (OSError, ValueError) as exc:
        raise ValidationError(f"measurements {str(path)!r}: {exc}") from None
    data = np.atleast_2d(data)
    data = data[~np.all(np.isnan(data), axis=1)] if data.size else data
    if data.ndim != 2 or data.shape[1] != 2 or data.shape[0] < 2:
        raise ValidationError(f"measurements {str(path)!r}: expected two columns (time "
                              f"[s], value) of finite numbers and two or more rows, got "
                              f"shape {data.shape}")
    bad = np.argwhere(~np.isfinite(data))
    if bad.size:
        row, col = bad[0]
        raise ValidationError(f"measurements {str(path)!r}: the {('time', 'value')[col]} "
                              f"of data row {row + 1} (after any header) reads as "
                              f"{float(data[row, col])}, not a finite number (nan, inf or "
                              f"text; {len(bad)} such entr{'y' if len(bad) == 1 else 'ies'})")
    return data[:, 0], data[:, 1]


def fit(case_or_system, sensor, data, parameters, *, component=None, bounds=None,
        max_evaluations: int = 50, starts=1, seed: int = 0, workers: int | None = None,
        scheduler=None, overrides=None, **run) -> FitResult:
    """Fit ``parameters`` (keys, optionally "KEY=START") so that ``sensor``'s
    ``component`` follows ``data`` = (times, values) over the run, within ``bounds``
    {key: (low, high)}.

    ``starts``: an integer N > 1 fits from N starts — the given one and N − 1 drawn
    (generator ``seed``) uniformly within each parameter's bounds, or within a factor of
    two of its start where it has none (log-uniform; ±1 about 0) — or a list of starts
    ({key: value}); the result is the fit of least RMS error, with every start's summary
    in ``starts``. They run in ``workers`` local processes (default: all cores) or on the
    Dask cluster of ``scheduler`` (an address or a ``dask.distributed.Client``; case
    files only, at the same absolute path on the workers) (:mod:`flexmbs.studies.tasks`).

    The residuals are the sensor at the measurement times within the run minus the
    measured values (:func:`sampling_weights`; measurements beyond the run are not used,
    ``measurements`` says how many were); ``max_evaluations``: runs at most per start, a
    positive integer.
    """
    max_evaluations = check_max_evaluations(max_evaluations)
    measurement_data(data)
    if isinstance(starts, int) and not isinstance(starts, bool) and starts == 1:
        return _fit(case_or_system, sensor, data, parameters, component, bounds,
                    max_evaluations, overrides, run)
    from .multistart import multi_start

    return multi_start(case_or_system, sensor, data, parameters, component, bounds,
                       max_evaluations, overrides, run, starts, seed, workers, scheduler)


def _fit(case_or_system, sensor, data, parameters, component, bounds, max_evaluations,
         overrides, run) -> FitResult:
    """One least-squares fit (:func:`fit`) from the start the parameters give."""
    from scipy.optimize import least_squares

    if isinstance(case_or_system, Path):
        case_or_system = str(case_or_system)

    keys = [str(k).partition("=")[0].strip() for k in parameters]
    times, measured = measurement_data(data)
    cache: dict = {}
    sample: dict = {}

    def keep(x, sens):
        if not sample:  # the measurements within the run (its steps do not move)
            inside = within_run(times, sens.t)
            sample["m"] = measured[inside]
            sample["index"], sample["weight"] = sampling_weights(sens.t, times[inside])
        index, weight = sample["index"], sample["weight"]
        values = np.einsum("ij,ij->i", weight, sens.values[index])
        if not np.all(np.isfinite(values)):
            raise ValidationError(f"the sensor {sensor!r} is not finite during the run at "
                                  f"{dict(zip(keys, map(float, x), strict=True))}")
        jac = np.einsum("ij,ijk->ik", weight, sens.derivatives[index])
        cache.clear()
        cache[tuple(x)] = (values - sample["m"], jac)
        return cache[tuple(x)]

    def evaluate(x):
        if tuple(x) not in cache:
            items = [f"{k}={float(v)!r}" for k, v in zip(keys, x, strict=True)]
            keep(x, sensitivities(case_or_system, sensor, items, component=component,
                                  overrides=overrides, **run))
        return cache[tuple(x)]

    first = sensitivities(case_or_system, sensor, parameters, component=component,
                          overrides=overrides, **run)
    x0 = np.array(first.parameter_values, dtype=float)
    keep(x0, first)
    low, high = np.full(x0.size, -np.inf), np.full(x0.size, np.inf)
    apply_bounds(bounds, keys, x0, low, high)
    e0 = cache[tuple(x0)][0]
    out = least_squares(lambda x: evaluate(x)[0], x0, jac=lambda x: evaluate(x)[1],
                        bounds=(low, high), x_scale="jac", max_nfev=max_evaluations,
                        xtol=1e-10, ftol=1e-12, gtol=1e-10)
    e, jac = evaluate(out.x)
    errors = standard_errors(e, jac)
    return FitResult(dict(zip(keys, map(float, out.x), strict=True)),
                     dict(zip(keys, map(float, x0), strict=True)),
                     dict(zip(keys, map(float, errors), strict=True)),
                     float(np.sqrt(np.mean(e0 ** 2))), float(np.sqrt(np.mean(e ** 2))),
                     int(out.nfev), bool(out.success), str(out.message), int(e.size))
