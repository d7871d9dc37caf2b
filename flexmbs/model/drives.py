"""Motion profiles s(t) with ṡ and s̈, used by drives (prescribed joint motion)."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, ValidationError


class Profile:
    """A prescribed motion: ``eval(t)`` returns (s, ṡ, s̈) in the drive's units."""

    def eval(self, t: float) -> tuple[float, float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def eval_many(self, t: np.ndarray) -> np.ndarray:
        """(n, 3): (s, ṡ, s̈) at each of the times ``t`` (n,), the values :meth:`eval`
        gives one by one (the kinds below evaluate them over the array at once)."""
        return np.array([self.eval(float(tk)) for tk in t], dtype=float).reshape(-1, 3)


@dataclass(frozen=True)
class Constant(Profile):
    """s(t) = value."""

    value: float = 0.0

    def eval(self, t):
        return float(self.value), 0.0, 0.0

    def eval_many(self, t):
        out = np.zeros((len(t), 3))
        out[:, 0] = float(self.value)
        return out


@dataclass(frozen=True)
class Polynomial(Profile):
    """s(t) = Σ c_k t^k (coefficients from the constant term up)."""

    coefficients: tuple[float, ...]

    def __post_init__(self):
        try:
            coefficients = tuple(float(c) for c in np.ravel(self.coefficients))
        except (TypeError, ValueError):
            raise ValidationError(f"Polynomial coefficients must be numbers, got "
                                  f"{self.coefficients!r}") from None
        if not coefficients or not all(np.isfinite(coefficients)):
            raise ValidationError(f"Polynomial coefficients must be one or more finite "
                                  f"numbers, got {self.coefficients!r}")
        object.__setattr__(self, "coefficients", coefficients)

    def eval(self, t):
        # Horner's rule on s, ṡ and s̈ together (called several times per Newton iteration)
        t = float(t)
        s = ds = dds = 0.0
        for c in reversed(self.coefficients):
            dds = dds * t + 2.0 * ds
            ds = ds * t + s
            s = s * t + c
        return s, ds, dds

    def eval_many(self, t):
        t = np.asarray(t, dtype=float)
        s, ds, dds = np.zeros_like(t), np.zeros_like(t), np.zeros_like(t)
        for c in reversed(self.coefficients):  # eval's operations, over the array
            dds = dds * t + 2.0 * ds
            ds = ds * t + s
            s = s * t + c
        return np.stack([s, ds, dds], axis=1)


@dataclass(frozen=True)
class SpinUp(Profile):
    """Smooth spin-up angle with ω(t) = Ω/T (t − T/(2π) sin(2πt/T)) for t < T, Ω after.

    θ(t) = Ω/T (t²/2 + (T/2π)² (cos(2πt/T) − 1)) for t < T, ΩT/2 + Ω(t − T) after
    (Kane, Ryan and Banerjee 1987). Ω [rad/s], T [s].
    """

    omega: float
    duration: float

    def __post_init__(self):
        if not (self.duration > 0 and math.isfinite(self.duration)):
            raise ValidationError(f"SpinUp.duration must be positive and finite, got "
                                  f"{self.duration}")
        if not math.isfinite(self.omega):
            raise ValidationError(f"SpinUp.omega must be a finite number, got {self.omega}")
        k = 2 * math.pi / self.duration
        if not (math.isfinite(k * k) and math.isfinite(abs(self.omega) / self.duration)):
            raise ValidationError(f"SpinUp.duration = {self.duration} is too short to "
                                  "represent: 2π/duration squared or omega/duration "
                                  "overflows")

    def eval(self, t):
        # scalar maths (math, not NumPy: a NumPy call on a float costs a microsecond, and
        # profiles are evaluated at every time level)
        t = float(t)
        big_w, T = self.omega, self.duration
        if t >= T:
            return big_w * T / 2 + big_w * (t - T), big_w, 0.0
        k = 2 * math.pi / T
        cos_kt = math.cos(k * t)
        theta = big_w / T * (t * t / 2 + (cos_kt - 1) / k**2)
        omega = big_w / T * (t - math.sin(k * t) / k)
        alpha = big_w / T * (1 - cos_kt)
        return theta, omega, alpha

    def eval_many(self, t):
        t = np.asarray(t, dtype=float)
        big_w, T = self.omega, self.duration
        k = 2 * math.pi / T
        cos_kt = np.cos(k * t)  # eval's operations, over the array
        out = np.stack([big_w / T * (t * t / 2 + (cos_kt - 1) / k**2),
                        big_w / T * (t - np.sin(k * t) / k), big_w / T * (1 - cos_kt)],
                       axis=1)
        held = t >= T
        if held.any():
            out[held] = np.stack([big_w * T / 2 + big_w * (t[held] - T),
                                  np.full(int(held.sum()), big_w),
                                  np.zeros(int(held.sum()))], axis=1)
        return out


@dataclass(frozen=True)
class Table(Profile):
    """Cubic-spline interpolation of a table (t_i, s_i); clamped ends (ṡ = 0) by default.

    Before the first time and after the last the profile goes on as a straight line with
    the end's value and slope (s̈ = 0): it holds the end value for the default clamped
    ends. (The end cubics continued would run away: a torque table of 0, 1, 0 N m over
    1 s gave 28 N m a second after it.) A periodic table repeats."""

    times: tuple[float, ...]
    values: tuple[float, ...]
    bc_type: str = "clamped"

    def __post_init__(self):
        t = np.asarray(self.times, dtype=float)
        if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
            raise ValidationError("Table.times must be at least two strictly increasing "
                                  f"values; got {self.times!r}")
        if len(self.values) != t.size:
            raise ValidationError(f"Table.values has {len(self.values)} entries; times has "
                                  f"{t.size}")
        from scipy.interpolate import CubicSpline  # imported on use: a run may need none

        spline = CubicSpline(t, np.asarray(self.values, float), bc_type=self.bc_type)
        object.__setattr__(self, "_spline", spline)
        # the pieces' breakpoints and cubic coefficients as Python floats, for eval
        object.__setattr__(self, "_breaks", tuple(float(x) for x in spline.x))
        object.__setattr__(self, "_pieces", tuple(zip(*(tuple(map(float, row))
                                                          for row in spline.c), strict=True)))
        # the ends' (value, slope), continued as straight lines beyond the table
        object.__setattr__(self, "_ends", tuple((float(spline(x)), float(spline(x, 1)))
                                                for x in (t[0], t[-1])))

    def eval(self, t):
        """The spline's piece at t (beyond the table: the end's straight line, or the
        periodic repeat), evaluated in scalar maths: ``CubicSpline.__call__`` costs some
        10 µs a call, and profiles are evaluated at every time level."""
        t = float(t)
        breaks = self._breaks
        if self.bc_type == "periodic":
            t = breaks[0] + (t - breaks[0]) % (breaks[-1] - breaks[0])
        elif not breaks[0] <= t <= breaks[-1]:
            end = breaks[0] if t < breaks[0] else breaks[-1]
            value, slope = self._ends[0 if t < breaks[0] else 1]
            return value + slope * (t - end), slope, 0.0
        i = min(max(bisect_right(breaks, t) - 1, 0), len(breaks) - 2)
        c3, c2, c1, c0 = self._pieces[i]
        d = t - breaks[i]
        return (((c3 * d + c2) * d + c1) * d + c0, (3.0 * c3 * d + 2.0 * c2) * d + c1,
                6.0 * c3 * d + 2.0 * c2)

    def eval_many(self, t):
        t = np.asarray(t, dtype=float)
        breaks = np.asarray(self._breaks)
        if self.bc_type == "periodic":
            t = breaks[0] + (t - breaks[0]) % (breaks[-1] - breaks[0])
        i = np.clip(np.searchsorted(breaks, t, side="right") - 1, 0, breaks.size - 2)
        c3, c2, c1, c0 = np.asarray(self._pieces)[i].T  # eval's operations, over the array
        d = t - breaks[i]
        out = np.stack([((c3 * d + c2) * d + c1) * d + c0,
                        (3.0 * c3 * d + 2.0 * c2) * d + c1, 6.0 * c3 * d + 2.0 * c2], axis=-1)
        if self.bc_type != "periodic":
            for outside, end, (value, slope) in ((t < breaks[0], breaks[0], self._ends[0]),
                                                 (t > breaks[-1], breaks[-1], self._ends[1])):
                if np.any(outside):
                    out[outside] = np.stack([value + slope * (t[outside] - end),
                                             np.full(int(np.sum(outside)), slope),
                                             np.zeros(int(np.sum(outside)))], axis=-1)
        return out


@dataclass(frozen=True)
class UserProfile(Profile):
    """User callables s(t), ṡ(t), s̈(t)."""

    value: Callable[[float], float]
    first: Callable[[float], float]
    second: Callable[[float], float]

    def eval(self, t):
        return float(self.value(t)), float(self.first(t)), float(self.second(t))


def as_profile(spec) -> Profile:
    """A Profile from a Profile, a number (constant) or a (s, ṡ, s̈) triple of callables."""
    if isinstance(spec, Profile):
        return spec
    if isinstance(spec, (int, float)):
        return Constant(float(spec))
    if isinstance(spec, (tuple, list)) and len(spec) == 3 and all(callable(f) for f in spec):
        return UserProfile(*spec)
    raise ValidationError(f"a drive profile must be a Profile, a number, or three callables "
                          f"(s, ds/dt, d2s/dt2); got {spec!r}")


def drive_values(drive, t: float) -> tuple[float, float, float]:
    """(s, ṡ, s̈) of a drive's profile at t (the drive's units); a failing or malformed
    profile raises a ModelError naming the drive."""
    try:
        values = drive.profile.eval(t)
        s, s_d, s_dd = (float(v) for v in values)
    except Exception as exc:
        raise ModelError(f"drive {drive.name!r}: its profile failed at t = {t:g}: "
                         f"{type(exc).__name__}: {exc}") from exc
    if not np.all(np.isfinite([s, s_d, s_dd])):
        raise ModelError(f"drive {drive.name!r}: its profile returned non-finite values "
                         f"({s}, {s_d}, {s_dd}) at t = {t:g}")
    return s, s_d, s_dd
