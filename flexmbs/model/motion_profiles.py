"""Point-to-point motion profiles and sequences of moves (docs/multibody.md#motion-profiles).

A move goes from ``start`` to ``end`` in ``duration`` seconds from ``t0``, holding
``start`` before and ``end`` after. With u = (t − t0)/T and D = end − start the position
is s = start + D f(u), ṡ = D f′(u)/T and s̈ = D f″(u)/T², where f rises from 0 to 1:

- ``quintic``: f = u³(10 − 15u + 6u²), zero velocity and acceleration at both ends;
- ``step5``: Adams' STEP5(t, t0, start, t0 + T, end), the same polynomial in Adams' terms;
- ``cycloidal``: f = u − sin(2πu)/(2π), acceleration a full sine period;
- ``trapezoidal``: constant acceleration for t_a, cruise, constant deceleration for t_a
  (velocity continuous, acceleration jumps; t_a = T/2 is the triangular profile).

:class:`Sequence` chains moves and dwells, each starting where the last one ended.
Everything is closed form and evaluated in scalar maths in ``eval`` (profiles are
evaluated at every time level) and over arrays in ``eval_many``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError
from .drives import Profile

#: The shapes of a point-to-point move; the first is the default.
SHAPES = ("quintic", "cycloidal", "trapezoidal", "step5")
#: The acceleration fraction of a trapezoidal move given neither it nor v_max/a_max.
DEFAULT_ACCEL_FRACTION = 1.0 / 3.0
_TWO_PI = 2.0 * math.pi


class ProfileKeyError(ValidationError):
    """A bad parameter of a motion profile: ``key`` names it and ``detail`` says what is
    wrong with its value (case files re-raise it naming the file and the entry)."""

    def __init__(self, owner: str, key: str, detail: str):
        self.owner, self.key, self.detail = owner, key, detail
        super().__init__(f"{owner}: key {key!r} {detail}")


def _number(owner, key, value, *, positive=False, optional=False):
    if value is None:
        if optional:
            return None
        raise ProfileKeyError(owner, key, "is missing")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating,
                                                         np.integer)):
        raise ProfileKeyError(owner, key, f"must be a finite number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ProfileKeyError(owner, key, f"must be a finite number, got {value!r}")
    if positive and not value > 0:
        raise ProfileKeyError(owner, key, f"must be a positive number, got {value!r}")
    return value


def _trapezoid_timing(owner, distance, duration, accel_fraction, v_max, a_max):
    """(T, t_a) of a trapezoidal move over |D| = ``distance`` from whichever of its
    parameters are given: accel_fraction (with duration; 1/3 by default), a_max or v_max
    (with duration), or v_max and a_max (the shortest move within both limits)."""
    given = [k for k, v in (("accel_fraction", accel_fraction), ("v_max", v_max),
                            ("a_max", a_max)) if v is not None]
    if accel_fraction is not None and len(given) > 1:
        raise ProfileKeyError(owner, given[1], "and 'accel_fraction' both set the "
                              "acceleration phase; give one of them")
    if duration is not None and v_max is not None and a_max is not None:
        raise ProfileKeyError(owner, "duration", f"= {duration!r} with both 'v_max' and "
                              "'a_max' over-determines the trapezoid; give two of "
                              "duration, v_max and a_max")
    if duration is None:
        if v_max is None or a_max is None:
            raise ProfileKeyError(owner, "duration", "is missing (a trapezoidal move "
                                  "without a duration needs both 'v_max' and 'a_max')")
        if distance <= v_max * v_max / a_max:  # triangular: v_max is not reached
            t_a = math.sqrt(distance / a_max)
            return 2.0 * t_a, t_a
        return distance / v_max + v_max / a_max, v_max / a_max
    T = duration
    if accel_fraction is not None or not given:
        fraction = DEFAULT_ACCEL_FRACTION if accel_fraction is None else accel_fraction
        if not 0.0 < fraction <= 0.5:
            raise ProfileKeyError(owner, "accel_fraction", f"must be in (0, 0.5] (the "
                                  f"acceleration time over the duration; 0.5 is the "
                                  f"triangular profile), got {accel_fraction!r}")
        return T, fraction * T
    if distance == 0.0:  # nothing to move: any limit will do
        return T, T / 3.0
    if a_max is not None:
        a_min = 4.0 * distance / (T * T)  # the triangular profile's acceleration
        if a_max < a_min * (1.0 - 1e-12):
            raise ProfileKeyError(owner, "a_max", f"= {a_max!r} is too small: moving "
                                  f"{distance:g} in duration = {T:g} needs an acceleration "
                                  f"of at least 4|end − start|/duration² = {a_min:g} (the "
                                  f"triangular profile)")
        # the root of a t_a² − a T t_a + |D| = 0 with t_a ≤ T/2, without cancellation
        disc = max(T * T - 4.0 * distance / a_max, 0.0)
        return T, min(2.0 * distance / a_max / (T + math.sqrt(disc)), 0.5 * T)
    v_low, v_high = distance / T, 2.0 * distance / T
    if not v_low < v_max <= v_high * (1.0 + 1e-12):
        raise ProfileKeyError(owner, "v_max", f"= {v_max!r} cannot be the cruise speed of "
                              f"a move of {distance:g} in duration = {T:g}: it must exceed "
                              f"|end − start|/duration = {v_low:g} and be at most twice "
                              f"that, {v_high:g} (the triangular profile's peak)")
    return T, min(T - distance / v_max, 0.5 * T)


@dataclass(frozen=True)
class PointToPoint(Profile):
    """A move from ``start`` to ``end`` in ``duration`` seconds from ``t0``, holding
    before and after; ``shape`` one of :data:`SHAPES` (default quintic).

    Trapezoidal moves take one of: ``accel_fraction`` (acceleration time over the
    duration, in (0, 0.5]; 1/3 when nothing is given, 0.5 is triangular); ``a_max`` or
    ``v_max`` with the duration (the acceleration or the cruise speed used; the move must
    be feasible); or ``v_max`` and ``a_max`` without a duration (the shortest move within
    both, triangular when v_max is not reached).
    """

    start: float
    end: float
    duration: float | None = None
    shape: str = "quintic"
    t0: float = 0.0
    accel_fraction: float | None = None
    v_max: float | None = None
    a_max: float | None = None

    def __post_init__(self):
        owner = type(self).__name__
        if self.shape not in SHAPES:
            raise ProfileKeyError(owner, "shape", f"must be one of {', '.join(SHAPES)}; "
                                  f"got {self.shape!r}")
        start, end = _number(owner, "start", self.start), _number(owner, "end", self.end)
        t0 = _number(owner, "t0", self.t0)
        duration = _number(owner, "duration", self.duration, positive=True,
                           optional=self.shape == "trapezoidal")
        extras = {k: _number(owner, k, getattr(self, k), positive=True, optional=True)
                  for k in ("accel_fraction", "v_max", "a_max")}
        if self.shape != "trapezoidal":
            for key, value in extras.items():
                if value is not None:
                    raise ProfileKeyError(owner, key, f"= {value!r} applies to the "
                                          f"trapezoidal shape only, not {self.shape!r}")
            T, t_a = duration, 0.0
        else:
            T, t_a = _trapezoid_timing(owner, abs(end - start), duration, **extras)
        for name, value in (("start", start), ("end", end), ("t0", t0),
                            ("duration", duration), *extras.items()):
            object.__setattr__(self, name, value)
        D = end - start
        if D != 0.0 and not (t0 + T > t0 and math.isfinite(abs(D) / T / T)):
            key = "duration" if duration is not None else "a_max"
            raise ProfileKeyError(owner, key, f"gives a move of {abs(D):g} in {T:g} s "
                                  f"from t0 = {t0:g}: too short to represent (the time "
                                  "does not advance over it or the acceleration "
                                  "overflows)")
        object.__setattr__(self, "_T", T)
        object.__setattr__(self, "_t1", t0 + T)
        object.__setattr__(self, "_t_a", t_a)
        # trapezoid: cruise speed and acceleration (signed as D)
        v_c = D / (T - t_a) if T > 0 else 0.0
        object.__setattr__(self, "_v_c", v_c)
        object.__setattr__(self, "_acc", v_c / t_a if t_a > 0 else 0.0)

    @property
    def move_time(self) -> float:
        """The time the move takes [s] (the duration, or the one v_max and a_max give)."""
        return self._T

    @property
    def t_end(self) -> float:
        """The time the move ends and the hold at ``end`` begins."""
        return self._t1

    @property
    def accel_time(self) -> float:
        """A trapezoidal move's acceleration (and deceleration) time t_a; 0 otherwise."""
        return self._t_a

    def eval(self, t):
        t = float(t)
        if t < self.t0:
            return self.start, 0.0, 0.0
        if t >= self._t1:  # (not tau >= T: the hold begins exactly at t_end)
            return self.end, 0.0, 0.0
        tau, T = t - self.t0, self._T
        D, shape = self.end - self.start, self.shape
        if shape == "trapezoidal":  # each piece from its start (right-continuous s̈)
            t_a, acc, v_c = self._t_a, self._acc, self._v_c
            if tau < t_a:
                return self.start + 0.5 * acc * tau * tau, acc * tau, acc
            if tau < T - t_a:
                return self.start + 0.5 * acc * t_a * t_a + v_c * (tau - t_a), v_c, 0.0
            r = T - tau
            return self.end - 0.5 * acc * r * r, acc * r, -acc
        u = tau / T
        if shape == "cycloidal":
            w = _TWO_PI * u
            f, f1, f2 = u - math.sin(w) / _TWO_PI, 1.0 - math.cos(w), _TWO_PI * math.sin(w)
        else:  # quintic and step5
            f = u * u * u * (10.0 + u * (-15.0 + 6.0 * u))
            f1 = 30.0 * u * u * (1.0 - u) * (1.0 - u)
            f2 = 60.0 * u * (1.0 - u) * (1.0 - 2.0 * u)
        return self.start + D * f, D * f1 / T, D * f2 / (T * T)

    def eval_many(self, t):
        t = np.asarray(t, dtype=float).reshape(-1)
        T, D = self._T, self.end - self.start
        out = np.zeros((t.size, 3))
        out[:, 0] = np.where(t < self.t0, self.start, self.end)
        moving = (t >= self.t0) & (t < self._t1)
        if not moving.any():
            return out
        x = t[moving] - self.t0
        if self.shape == "trapezoidal":
            t_a, acc, v_c = self._t_a, self._acc, self._v_c
            r = T - x
            rising, falling = x < t_a, (x >= t_a) & (x >= T - t_a)
            s = np.where(rising, self.start + 0.5 * acc * x * x,
                         np.where(falling, self.end - 0.5 * acc * r * r,
                                  self.start + 0.5 * acc * t_a * t_a + v_c * (x - t_a)))
            v = np.where(rising, acc * x, np.where(falling, acc * r, v_c))
            a = np.where(rising, acc, np.where(falling, -acc, 0.0))
            out[moving] = np.stack([s, v, a], axis=1)
            return out
        u = x / T
        if self.shape == "cycloidal":
            w = _TWO_PI * u
            f, f1, f2 = u - np.sin(w) / _TWO_PI, 1.0 - np.cos(w), _TWO_PI * np.sin(w)
        else:
            f = u * u * u * (10.0 + u * (-15.0 + 6.0 * u))
            f1 = 30.0 * u * u * (1.0 - u) * (1.0 - u)
            f2 = 60.0 * u * (1.0 - u) * (1.0 - 2.0 * u)
        out[moving] = np.stack([self.start + D * f, D * f1 / T, D * f2 / (T * T)], axis=1)
        return out


def Step5(x0: float, h0: float, x1: float, h1: float) -> PointToPoint:
    """Adams' STEP5(t, x0, h0, x1, h1) as a profile: h0 before x0, h1 after x1, and
    h0 + (h1 − h0) Δ³(10 − 15Δ + 6Δ²) with Δ = (t − x0)/(x1 − x0) between (x1 > x0)."""
    x0 = _number("Step5", "x0", x0)
    x1 = _number("Step5", "x1", x1)
    if not x1 > x0:
        raise ProfileKeyError("Step5", "x1", f"= {x1!r} must be after x0 = {x0!r}")
    try:
        return PointToPoint(h0, h1, x1 - x0, "step5", t0=x0)
    except ProfileKeyError as exc:  # in Adams' names
        key = {"start": "h0", "end": "h1"}.get(exc.key, exc.key)
        raise ProfileKeyError("Step5", key, exc.detail) from None


@dataclass(frozen=True)
class Move:
    """One move of a :class:`Sequence`: to ``end`` (or by ``by`` from where the last move
    ended) with :class:`PointToPoint`'s shape and parameters."""

    end: float | None = None
    duration: float | None = None
    shape: str = "quintic"
    by: float | None = None
    accel_fraction: float | None = None
    v_max: float | None = None
    a_max: float | None = None


@dataclass(frozen=True)
class Dwell:
    """A hold of ``duration`` seconds in a :class:`Sequence`."""

    duration: float


@dataclass(frozen=True)
class Sequence(Profile):
    """Moves and dwells one after the other from ``start`` at ``t0``: each move starts
    where and when the last one ended; before ``t0`` the profile holds ``start``, after
    the last move its end. ``moves``: :class:`Move` and :class:`Dwell` entries."""

    start: float
    moves: tuple
    t0: float = 0.0

    def __post_init__(self):
        start = _number("Sequence", "start", self.start)
        t = _number("Sequence", "t0", self.t0)
        moves = tuple(self.moves) if isinstance(self.moves, (list, tuple)) else None
        if not moves:
            raise ProfileKeyError("Sequence", "moves", f"must be a non-empty list of "
                                  f"Move and Dwell entries, got {self.moves!r}")
        segments, s = [], start
        for k, move in enumerate(moves):
            owner = f"Sequence moves[{k}]"
            if isinstance(move, Dwell):
                t += _number(owner, "duration", move.duration, positive=True)
                continue
            if not isinstance(move, Move):
                raise ProfileKeyError("Sequence", f"moves[{k}]", f"must be a Move or a "
                                      f"Dwell, got {move!r}")
            if (move.end is None) == (move.by is None):
                raise ProfileKeyError(owner, "end", "or 'by' must be given (one of them: "
                                      "where the move ends, or how far it goes)")
            end = (_number(owner, "end", move.end) if move.by is None
                   else s + _number(owner, "by", move.by))
            try:
                segment = PointToPoint(s, end, move.duration, move.shape, t0=t,
                                       accel_fraction=move.accel_fraction,
                                       v_max=move.v_max, a_max=move.a_max)
            except ProfileKeyError as exc:
                raise ProfileKeyError(owner, exc.key, exc.detail) from None
            segments.append(segment)
            s, t = end, segment.t_end
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "t0", _number("Sequence", "t0", self.t0))
        object.__setattr__(self, "moves", moves)
        object.__setattr__(self, "_segments", tuple(segments))
        object.__setattr__(self, "_starts", tuple(seg.t0 for seg in segments))
        object.__setattr__(self, "_end", s)
        object.__setattr__(self, "_t_end", t)

    @property
    def segments(self) -> tuple[PointToPoint, ...]:
        """The moves as :class:`PointToPoint` profiles with their starts and times."""
        return self._segments

    @property
    def t_end(self) -> float:
        """The time the last move or dwell ends."""
        return self._t_end

    @property
    def end(self) -> float:
        """Where the last move ends."""
        return self._end

    def eval(self, t):
        t = float(t)
        k = bisect_right(self._starts, t) - 1  # the last move started by t
        if k < 0:
            return self.start, 0.0, 0.0
        return self._segments[k].eval(t)  # it holds its end until the next one starts

    def eval_many(self, t):
        t = np.asarray(t, dtype=float).reshape(-1)
        out = np.zeros((t.size, 3))
        out[:, 0] = self.start
        k = np.searchsorted(np.asarray(self._starts), t, side="right") - 1
        for j, segment in enumerate(self._segments):
            mine = k == j
            if mine.any():
                out[mine] = segment.eval_many(t[mine])
        return out
