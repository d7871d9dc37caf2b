"""Objectives: scalar measures of one sensor component's history over a run's steps
(docs/gradients.md, "Objectives").

The history is the sensor at every step's state, s_k at t_k (k = 0…N), with the
trapezoidal weights w_k of the steps and T = t_N − t_0:

============  ================================================================
measure       J
============  ================================================================
``final``     s_N
``integral``  Σ w_k s_k                        (∫ s dt)
``mean``      Σ w_k s_k / T
``rms``       (Σ w_k s_k² / T)^½
``max``       (Σ w_k |s_k|^P / T)^(1/P), P = ``sharpness`` (32): a smooth
              maximum of |s|, below max |s| by the fraction of time spent near it
              to the power 1/P (the p-norm mean)
``tracking``  Σ w_k (s_k − m(t_k))² / T      (m: a measured history,
              interpolated linearly; the mean-square error)
``crossing``  the first time s crosses ``level`` (linear between steps)
============  ================================================================

Each measure returns J and ∂J/∂s_k, the weights the backward sweep gives each step's
sensor gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError

MEASURES = ("final", "integral", "mean", "rms", "max", "tracking", "crossing")


def trapezoid_weights(t: np.ndarray) -> np.ndarray:
    """w (N+1,) with Σ w_k f_k the trapezoidal rule of f over the times t."""
    w = np.zeros(t.size)
    dt = np.diff(t)
    w[:-1] += 0.5 * dt
    w[1:] += 0.5 * dt
    return w


@dataclass
class Objective:
    """J of the history of ``sensor``'s ``component`` (a sensor name of the model, a
    :class:`~flexmbs.model.sensors.Sensor`, or "kind:quantity:target").

    Parameters
    ----------
    sensor : str or Sensor
    measure : str
        One of :data:`MEASURES`.
    component : str or int, optional
        The sensor's component ("x", "angle", ...); default: its only one.
    sharpness : float
        P of the smooth maximum (``max``).
    data : (times [s], values) arrays, optional
        The measured history of ``tracking`` (in the sensor's units).
    level : float
        The level of ``crossing`` (in the sensor's units).
    """

    sensor: object
    measure: str = "final"
    component: object = None
    sharpness: float = 32.0
    data: tuple | None = None
    level: float = 0.0

    def __post_init__(self):
        if self.measure not in MEASURES:
            raise ValidationError(f"measure must be one of {list(MEASURES)}, got "
                                  f"{self.measure!r}")
        if self.measure == "max" and not self.sharpness >= 1:
            raise ValidationError(f"sharpness must be >= 1, got {self.sharpness!r}")
        if self.measure == "tracking":
            if self.data is None:
                raise ValidationError("measure 'tracking' needs data = (times, values)")
            times, values = (np.asarray(v, dtype=float).ravel() for v in self.data)
            if times.size < 2 or times.size != values.size or np.any(np.diff(times) <= 0):
                raise ValidationError(f"tracking data: need two or more (time, value) "
                                      f"pairs with increasing times; got {times.size} times "
                                      f"and {values.size} values")
            self.data = (times, values)

    @property
    def description(self) -> str:
        comp = "" if self.component is None else f".{self.component}"
        name = getattr(self.sensor, "name", self.sensor)
        return f"{self.measure}({name}{comp})"

    def measured(self, t: np.ndarray) -> np.ndarray:
        """The tracking data at the times t, linearly interpolated (held beyond)."""
        times, values = self.data
        if t[0] < times[0] - 1e-12 or t[-1] > times[-1] + 1e-12:
            raise ValidationError(f"tracking data cover [{times[0]:g}, {times[-1]:g}] s; "
                                  f"the run covers [{t[0]:g}, {t[-1]:g}] s")
        return np.interp(t, times, values)

    def evaluate(self, t, s):
        """(J, ∂J/∂s (N+1,)) of the history s at the step times t."""
        t, s = np.asarray(t, dtype=float), np.asarray(s, dtype=float)
        if not np.all(np.isfinite(s)):
            raise ValidationError(f"{self.description}: the sensor history is not finite")
        grad = np.zeros(s.size)
        w = trapezoid_weights(t)
        span = t[-1] - t[0]
        m = self.measure
        if m == "final":
            grad[-1] = 1.0
            return float(s[-1]), grad
        if m == "integral":
            return float(w @ s), w
        if m == "mean":
            return float(w @ s / span), w / span
        if m == "rms":
            value = float(np.sqrt(w @ (s * s) / span))
            if value == 0.0:
                return 0.0, grad
            return value, w * s / (span * value)
        if m == "max":
            return self._smooth_max(s, w, span)
        if m == "tracking":  # (a fit's residuals: one per measurement, flexmbs.gradients.fit)
            d = s - self.measured(t)
            return float(w @ (d * d) / span), 2.0 * w * d / span
        return self._crossing(t, s, grad)

    def _smooth_max(self, s, w, span):
        p = float(self.sharpness)
        top = float(np.max(np.abs(s)))
        if top == 0.0:
            return 0.0, np.zeros(s.size)
        x = np.abs(s) / top
        mean = float(w @ x**p / span)
        value = top * mean ** (1.0 / p)
        ratio = np.abs(s) / value
        return value, (w / span) * ratio ** (p - 1.0) * np.sign(s)

    def _crossing(self, t, s, grad):
        d = s - self.level
        hits = np.nonzero((d[:-1] * d[1:] < 0) | (d[1:] == 0))[0]
        if hits.size == 0:
            raise ValidationError(f"{self.description}: the sensor does not cross "
                                  f"{self.level:g} during the run")
        k = int(hits[0])
        a, b = d[k], d[k + 1]
        dt = t[k + 1] - t[k]
        frac = a / (a - b)
        grad[k] = dt * (-b) / (a - b) ** 2
        grad[k + 1] = dt * a / (a - b) ** 2
        return float(t[k] + frac * dt), grad
