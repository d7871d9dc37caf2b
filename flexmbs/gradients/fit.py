"""Parameter identification: least squares between a sensor's history over a run and a
measured one (docs/gradients.md, "Fitting parameters to measurements").

The residuals are e_k = √(w_k/T) (s_k(p) − m(t_k)) over the run's steps (w_k the
trapezoidal weights, m the measurement interpolated linearly), so Σ e_k² is the mean
square error of the ``tracking`` objective; their Jacobian is the forward sensitivity of
the history (:func:`~flexmbs.gradients.api.sensitivities`: one solve per parameter and
step), and ``scipy.optimize.least_squares`` (trust-region reflective, bounds allowed)
takes both. The result carries standard errors from the Gauss–Newton covariance
σ̂² (GᵀG)⁻¹, G_kj = ds_k/dp_j, σ̂² the residual variance of the samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ValidationError
from .api import sensitivities
from .objectives import Objective
from .parameters import apply_bounds


@dataclass
class FitResult:
    """Fitted ``values`` {key: p}, their ``initial`` values and ``standard_errors``,
    the root-mean-square error before and after [sensor units], evaluations, success
    and the optimizer's message."""

    values: dict
    initial: dict
    standard_errors: dict
    rms_initial: float
    rms_final: float
    evaluations: int
    success: bool
    message: str
    starts: list = field(default_factory=list)
    """Multi-start fits: each start's {"start", "values", "rms_final", "evaluations",
    "success", "message"} (the result is the best of them)."""

    def to_dict(self) -> dict:
        return {"values": dict(self.values), "initial": dict(self.initial),
                "standard_errors": dict(self.standard_errors),
                "rms_initial": self.rms_initial, "rms_final": self.rms_final,
                "evaluations": self.evaluations, "success": self.success,
                "message": self.message, "starts": list(self.starts)}


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
    """
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
    tracking = Objective(sensor, "tracking", component=component, data=data)
    cache: dict = {}

    def keep(x, sens):
        e, scale = tracking.residuals(sens.t, sens.values)
        cache.clear()
        cache[tuple(x)] = (e, scale[:, None] * sens.derivatives, sens)
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
    e, _, sens = evaluate(out.x)
    errors = standard_errors(sens.values - tracking.measured(sens.t), sens.derivatives)
    return FitResult(dict(zip(keys, map(float, out.x), strict=True)),
                     dict(zip(keys, map(float, x0), strict=True)),
                     dict(zip(keys, map(float, errors), strict=True)),
                     float(np.sqrt(e0 @ e0)), float(np.sqrt(e @ e)), int(out.nfev),
                     bool(out.success), str(out.message))
