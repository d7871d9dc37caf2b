"""Motion profiles (issue 34 item 3): point-to-point moves (quintic, cycloidal, trapezoidal
velocity, Adams STEP5) and sequences of moves and dwells, against their closed forms with
hypothesis over the parameters; case-file syntax and errors; a driven joint following a
profile on both engines."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case, run_case
from flexmbs.cases.case import CaseError
from flexmbs.errors import ValidationError
from flexmbs.model import (
    Dwell,
    ModelBuilder,
    Move,
    PointToPoint,
    Sequence,
    SpinUp,
    Step5,
)
from flexmbs.model.motion_profiles import SHAPES

EPS = np.finfo(float).eps
positions = st.floats(-10.0, 10.0, allow_subnormal=False)
durations = st.floats(0.05, 5.0)
starts = st.floats(-1.0, 2.0)
fractions = st.floats(0.02, 0.5)

# the bounds of |f‴| and |f⁗| of the normalized shapes f(u) (u in [0, 1]): quintic
# f‴ = 60 − 360u + 360u², f⁗ = 720u − 360; cycloidal f‴ = 4π² cos 2πu, f⁗ = −8π³ sin 2πu
JERK = {"quintic": 60.0, "step5": 60.0, "cycloidal": 4 * math.pi**2, "trapezoidal": 0.0}
SNAP = {"quintic": 360.0, "step5": 360.0, "cycloidal": 8 * math.pi**3, "trapezoidal": 0.0}


@st.composite
def moves(draw, shapes=SHAPES):
    shape = draw(st.sampled_from(shapes))
    start, end = draw(positions), draw(positions)
    kwargs = {}
    if shape == "trapezoidal":
        kwargs["accel_fraction"] = draw(fractions)
    return PointToPoint(start, end, draw(durations), shape, t0=draw(starts), **kwargs)


def assert_close(got, want, atol):
    """|got − want| ≤ atol[k] in each column k (s, ṡ, s̈)."""
    got, want = np.atleast_2d(got), np.atleast_2d(want)
    for k, tol in enumerate(atol):
        np.testing.assert_allclose(got[:, k], want[:, k], rtol=0, atol=tol,
                                   err_msg=["s", "ṡ", "s̈"][k])


def reference(p: PointToPoint, t: float):
    """(s, ṡ, s̈) written out independently of motion_profiles: the quintic from its six
    boundary conditions (a linear solve), STEP5 by Adams' formula, the cycloid, and the
    trapezoid by integrating its piecewise-constant acceleration."""
    T, D = p.move_time, p.end - p.start
    tau = min(max(t - p.t0, 0.0), T)
    if p.shape == "quintic":
        rows = []
        for x in (0.0, T):
            rows += [[x**k for k in range(6)], [k * x ** (k - 1) if k else 0.0
                                                 for k in range(6)],
                     [k * (k - 1) * x ** (k - 2) if k > 1 else 0.0 for k in range(6)]]
        c = np.linalg.solve(np.array(rows), [p.start, 0, 0, p.end, 0, 0])
        return (sum(c[k] * tau**k for k in range(6)),
                sum(k * c[k] * tau ** (k - 1) for k in range(1, 6)),
                sum(k * (k - 1) * c[k] * tau ** (k - 2) for k in range(2, 6)))
    if p.shape == "step5":  # STEP5(x, x0, h0, x1, h1)
        x0, x1, h0, h1 = p.t0, p.t0 + T, p.start, p.end
        d = (min(max(t, x0), x1) - x0) / (x1 - x0)
        return (h0 + (h1 - h0) * d**3 * (10 - 15 * d + 6 * d**2),
                (h1 - h0) * 30 * d**2 * (1 - d) ** 2 / (x1 - x0),
                (h1 - h0) * 60 * d * (1 - d) * (1 - 2 * d) / (x1 - x0) ** 2)
    if p.shape == "cycloidal":
        w = 2 * math.pi / T
        return (p.start + D * (tau / T - math.sin(w * tau) / (2 * math.pi)),
                D / T * (1 - math.cos(w * tau)), D / T * w * math.sin(w * tau))
    ta = p.accel_time
    a = D / (ta * (T - ta))  # the cruise speed D/(T − t_a) reached in t_a
    if t >= p.t_end or t < p.t0:
        return p.start + D * (t >= p.t0), 0.0, 0.0
    t1, t2 = min(tau, ta), min(max(tau - ta, 0.0), T - 2 * ta)
    t3 = max(tau - (T - ta), 0.0)
    v = a * t1 - a * t3
    s = p.start + 0.5 * a * t1**2 + a * ta * t2 + a * ta * t3 - 0.5 * a * t3**2
    acc = a if tau < ta else (-a if tau >= T - ta else 0.0)
    return s, v, acc


def scales(p: PointToPoint):
    """Bounds of |s|, |ṡ|, |s̈| and the jerk and snap bounds of a move."""
    T, D = p.move_time, abs(p.end - p.start)
    f1 = {"quintic": 1.875, "step5": 1.875, "cycloidal": 2.0}  # max f′
    f2 = {"quintic": 10 / math.sqrt(3), "step5": 10 / math.sqrt(3), "cycloidal": 2 * math.pi}
    if p.shape == "trapezoidal":
        v = D / (T - p.accel_time)
        a = v / p.accel_time
    else:
        v, a = D * f1[p.shape] / T, D * f2[p.shape] / T**2
    return (max(abs(p.start), abs(p.end)), v, a, D * JERK[p.shape] / T**3,
            D * SNAP[p.shape] / T**4)


def joints(p: PointToPoint):
    """The times where a move's pieces meet."""
    out = [p.t0, p.t_end]
    if p.shape == "trapezoidal":
        out += [p.t0 + p.accel_time, p.t_end - p.accel_time]
    return out


# --------------------------------------------------------------------- closed forms
@settings(max_examples=200, deadline=None)
@given(moves(), st.lists(st.floats(-0.3, 1.3), min_size=1, max_size=8))
def test_moves_equal_their_closed_forms(p, us):
    s_max, v_max, a_max, *_ = scales(p)
    for u in [*us, 0.0, 1.0, 0.5]:
        t = p.t0 + u * p.move_time
        got, want = p.eval(t), reference(p, t)
        assert_close(got, want, [1e-12 * (s_max + 1), 1e-11 * (v_max + 1),
                                 1e-10 * (a_max + 1)])


@settings(max_examples=200, deadline=None)
@given(moves())
def test_boundary_values_and_holds(p):
    s_max, v_max, a_max, *_ = scales(p)
    T = p.move_time
    assert p.eval(p.t0) [:2] == (p.start, 0.0)
    assert p.eval(p.t0 - 0.1 * T) == (p.start, 0.0, 0.0)
    assert p.eval(p.t_end) == (p.end, 0.0, 0.0)
    assert p.eval(p.t_end + 7.0) == (p.end, 0.0, 0.0)
    if p.shape != "trapezoidal":  # zero acceleration at the start as well
        assert p.eval(p.t0)[2] == 0.0
    # the limits from inside the move
    inside = [p.eval(p.t0 + 1e-9 * T), p.eval(p.t_end - 1e-9 * T)]
    for (s, v, _), target in zip(inside, (p.start, p.end), strict=True):
        assert abs(s - target) <= 1e-8 * v_max * T + 4 * EPS * s_max
        assert abs(v) <= 2e-9 * a_max * T + 1e-13 * v_max


@settings(max_examples=200, deadline=None)
@given(moves())
def test_continuity_at_the_joints(p):
    """Position and velocity are continuous at every joint of the pieces (C¹); so is the
    acceleration for quintic, cycloidal and STEP5 (C²); a trapezoid's acceleration jumps
    by its value a at each of its joints."""
    s_max, v_max, a_max, jerk, _ = scales(p)
    e = 1e-7 * p.move_time
    for tj in joints(p):
        (s0, v0, a0), (s1, v1, a1) = p.eval(tj - e), p.eval(tj + e)
        assert abs(s1 - s0) <= 2 * e * v_max + 8 * EPS * s_max
        assert abs(v1 - v0) <= 2 * e * a_max + 8 * EPS * v_max
        if p.shape == "trapezoidal":  # the jumps of the reference's acceleration
            jump = reference(p, tj + e)[2] - reference(p, tj - e)[2]
            assert abs((a1 - a0) - jump) <= 1e-12 * a_max
        else:
            assert abs(a1 - a0) <= 2 * e * jerk + 8 * EPS * a_max


@settings(max_examples=200, deadline=None)
@given(moves(), st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_velocity_and_acceleration_are_the_derivatives(p, us):
    """ṡ = (s(t + h) − s(t − h))/(2h) and s̈ likewise from ṡ: the central difference's
    error is h²/6 max|s‴| (resp. s⁗) plus the rounding of s and t over 2h, both bounded
    explicitly; points within h of a joint are left out (the trapezoid's kinks)."""
    s_max, v_max, a_max, jerk, snap = scales(p)
    h = 1e-5 * p.move_time
    for u in us:
        t = p.t0 + u * p.move_time
        if min(abs(t - tj) for tj in joints(p)) <= 2 * h:
            continue
        (sm, vm, _), (_, v, a), (sp, vp, _) = p.eval(t - h), p.eval(t), p.eval(t + h)
        # rounding: of s (a few ulps of its terms) and of t ± h (an ulp of |t|)
        span = abs(t) + p.move_time
        assert abs((sp - sm) / (2 * h) - v) <= h * h / 6 * jerk + 8 * EPS * (
            s_max + span * v_max) / h
        assert abs((vp - vm) / (2 * h) - a) <= h * h / 6 * snap + 8 * EPS * (
            v_max + span * a_max) / h


def gauss_integral(f, a: float, b: float, n: int = 24) -> float:
    x, w = np.polynomial.legendre.leggauss(n)
    return float(0.5 * (b - a) * np.dot(w, f(0.5 * (b - a) * x + 0.5 * (a + b))))


@settings(max_examples=200, deadline=None)
@given(moves())
def test_the_integral_of_velocity_is_the_displacement(p):
    """∫ ṡ dt over the move = end − start, and ∫ s̈ dt = 0 (Gauss–Legendre, 24 points
    on each piece: exact for the polynomial pieces, 1e-15 for the cycloid)."""
    s_max, v_max, a_max, *_ = scales(p)
    pieces = sorted(joints(p))
    disp = sum(gauss_integral(lambda t: p.eval_many(t)[:, 1], a, b)
               for a, b in itertools.pairwise(pieces))
    dv = sum(gauss_integral(lambda t: p.eval_many(t)[:, 2], a, b)
             for a, b in itertools.pairwise(pieces))
    assert abs(disp - (p.end - p.start)) <= 1e-13 * (s_max + v_max * p.move_time)
    assert abs(dv) <= 1e-13 * (v_max + a_max * p.move_time)


@settings(max_examples=100, deadline=None)
@given(moves(), st.lists(st.floats(-0.5, 1.5), min_size=1, max_size=20))
def test_eval_many_equals_eval(p, us):
    t = np.array([*(p.t0 + u * p.move_time for u in us), *joints(p)])
    many = p.eval_many(t)
    one = np.array([p.eval(tk) for tk in t])
    s_max, v_max, a_max, *_ = scales(p)
    assert_close(many, one, [4 * EPS * s_max, 4 * EPS * v_max, 4 * EPS * a_max])


def test_step5_is_adams_formula_and_the_quintic():
    p = Step5(0.2, -1.0, 0.7, 3.0)
    assert (p.t0, p.start, p.move_time, p.end) == (0.2, -1.0, pytest.approx(0.5), 3.0)
    q = PointToPoint(-1.0, 3.0, 0.7 - 0.2, "quintic", t0=0.2)
    t = np.linspace(0.0, 1.0, 101)
    np.testing.assert_array_equal(p.eval_many(t), q.eval_many(t))
    for tk in t:
        np.testing.assert_allclose(p.eval(tk), reference(p, tk), rtol=0, atol=1e-12)
    with pytest.raises(ValidationError, match=r"key 'x1' = 0\.1 must be after x0 = 0\.2"):
        Step5(0.2, 0.0, 0.1, 1.0)
    with pytest.raises(ValidationError, match="Step5: key 'h0' must be a finite number, "
                                              "got nan"):
        Step5(0.0, math.nan, 1.0, 1.0)


# --------------------------------------------------------------------- trapezoids
@settings(max_examples=200, deadline=None)
@given(positions, positions, durations, st.floats(1.0, 1e3))
def test_trapezoid_from_a_max(start, end, T, factor):
    """With a_max ≥ 4|D|/T², the move accelerates at exactly a_max for t_a and t_a
    solves a t_a (T − t_a) = |D|."""
    D = abs(end - start)
    assume(D > 1e-6)
    a_max = 4 * D / T**2 * factor
    p = PointToPoint(start, end, T, "trapezoidal", a_max=a_max)
    ta = p.accel_time
    assert 0 < ta <= T / 2
    assert abs(a_max * ta * (T - ta) - D) <= 1e-12 * D
    assert abs(abs(p.eval(p.t0 + 0.5 * ta)[2]) - a_max) <= 1e-12 * a_max
    with pytest.raises(ValidationError, match=r"key 'a_max' = .* is too small"):
        PointToPoint(start, end, T, "trapezoidal", a_max=0.99 * 4 * D / T**2)


@settings(max_examples=200, deadline=None)
@given(positions, positions, durations, st.floats(1.0001, 2.0))
def test_trapezoid_from_v_max(start, end, T, factor):
    D = abs(end - start)
    assume(D > 1e-6)
    v_max = D / T * factor
    p = PointToPoint(start, end, T, "trapezoidal", v_max=v_max)
    assert abs(abs(p.eval(p.t0 + 0.5 * T)[1]) - v_max) <= 1e-12 * v_max
    for bad in (0.999 * D / T, 2.001 * D / T):
        with pytest.raises(ValidationError, match=r"key 'v_max' = .* cannot be the "
                                                  r"cruise speed"):
            PointToPoint(start, end, T, "trapezoidal", v_max=bad)


@settings(max_examples=200, deadline=None)
@given(positions, positions, st.floats(0.1, 10.0), st.floats(0.1, 100.0))
def test_shortest_trapezoid_within_v_max_and_a_max(start, end, v_max, a_max):
    """Without a duration: the shortest move within both limits, T = |D|/v + v/a when
    v_max is reached (|D| > v²/a), else the triangle T = 2√(|D|/a)."""
    D = abs(end - start)
    assume(D > 1e-6)
    p = PointToPoint(start, end, None, "trapezoidal", v_max=v_max, a_max=a_max)
    T = D / v_max + v_max / a_max if v_max**2 / a_max < D else 2 * math.sqrt(D / a_max)
    assert abs(p.move_time - T) <= 1e-12 * T
    peak = p.eval_many(p.t0 + np.linspace(0, 1, 201) * T)
    assert np.max(np.abs(peak[:, 1])) <= v_max * (1 + 1e-12)
    assert np.max(np.abs(peak[:, 2])) <= a_max * (1 + 1e-12)
    assert abs(p.eval(p.t_end)[0] - end) == 0.0


def test_triangular_trapezoid_has_no_cruise():
    p = PointToPoint(0.0, 2.0, 1.0, "trapezoidal", accel_fraction=0.5)
    assert p.accel_time == 0.5
    assert p.eval(0.5) == pytest.approx((1.0, 4.0, -8.0), abs=1e-14)  # peak 2D/T
    assert p.eval(0.25)[2] == 8.0 and p.eval(0.75)[2] == -8.0
    q = PointToPoint(0.0, 2.0, 1.0, "trapezoidal", a_max=8.0)  # the limit: triangular
    assert q.accel_time == pytest.approx(0.5, abs=1e-12)
    r = PointToPoint(0.0, 2.0, 1.0, "trapezoidal", v_max=4.0)
    assert r.accel_time == pytest.approx(0.5, abs=1e-12)
    default = PointToPoint(0.0, 2.0, 1.0, "trapezoidal")  # 1/3 accelerating by default
    assert default.accel_time == pytest.approx(1 / 3, abs=1e-15)


def test_a_zero_move_holds():
    for shape in SHAPES:
        p = PointToPoint(0.3, 0.3, 1.0, shape)
        np.testing.assert_array_equal(p.eval_many(np.linspace(-1, 2, 9)),
                                      [[0.3, 0.0, 0.0]] * 9)
    p = PointToPoint(0.3, 0.3, None, "trapezoidal", v_max=1.0, a_max=1.0)
    assert p.move_time == 0.0 and p.eval(0.0) == (0.3, 0.0, 0.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"duration": -0.5}, "key 'duration' must be a positive number, got -0.5"),
    ({"duration": 0.0}, "key 'duration' must be a positive number, got 0.0"),
    ({"duration": None}, "key 'duration' is missing"),
    ({"duration": math.inf}, "key 'duration' must be a finite number, got inf"),
    ({"end": math.nan}, "key 'end' must be a finite number, got nan"),
    ({"start": "zero"}, "key 'start' must be a finite number, got 'zero'"),
    ({"t0": True}, "key 't0' must be a finite number, got True"),
    ({"shape": "sine"}, "key 'shape' must be one of quintic, cycloidal, trapezoidal, "
                        "step5; got 'sine'"),
    ({"v_max": 1.0}, "key 'v_max' = 1.0 applies to the trapezoidal shape only"),
    ({"shape": "trapezoidal", "accel_fraction": 0.7}, r"key 'accel_fraction' must be in "
                                                      r"\(0, 0.5\]"),
    ({"shape": "trapezoidal", "accel_fraction": 0.0}, "key 'accel_fraction' must be a "
                                                      "positive number, got 0.0"),
    ({"shape": "trapezoidal", "a_max": -1.0}, "key 'a_max' must be a positive number"),
    ({"shape": "trapezoidal", "a_max": 3.0}, r"key 'a_max' = 3.0 is too small: moving 1 "
                                             r"in duration = 1 needs an acceleration of "
                                             r"at least .* = 4"),
    ({"shape": "trapezoidal", "v_max": 3.0, "a_max": 5.0}, "over-determines"),
    ({"shape": "trapezoidal", "v_max": 3.0, "accel_fraction": 0.2}, "both set the "
                                                                   "acceleration phase"),
    ({"shape": "trapezoidal", "duration": None, "v_max": 3.0}, "key 'duration' is missing"),
    # too short for floating point: the acceleration D/T² overflows, or t0 + T == t0
    ({"duration": 1e-300}, "key 'duration' gives a move of 1 in 1e-300 s .* too short"),
    ({"shape": "cycloidal", "duration": 1e-170}, "key 'duration' gives .* too short"),
    ({"shape": "trapezoidal", "duration": 1e-300}, "key 'duration' gives .* too short"),
    ({"duration": 1e-20, "t0": 1.0}, "key 'duration' gives a move of 1 in 1e-20 s from "
                                     "t0 = 1: too short"),
])
def test_bad_moves_name_the_key_and_value(kwargs, match):
    args = {"start": 0.0, "end": 1.0, "duration": 1.0, **kwargs}
    with pytest.raises(ValidationError, match=match):
        PointToPoint(**args)


# --------------------------------------------------------------------- sequences
@st.composite
def sequences(draw):
    items, last = [], draw(positions)
    start = last
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            items.append(Dwell(draw(st.floats(0.01, 1.0))))
        shape = draw(st.sampled_from(SHAPES))
        kwargs = {"accel_fraction": draw(fractions)} if shape == "trapezoidal" else {}
        if draw(st.booleans()):
            items.append(Move(draw(positions), draw(durations), shape, **kwargs))
        else:
            items.append(Move(None, draw(durations), shape, by=draw(positions), **kwargs))
    return Sequence(start, tuple(items), t0=draw(starts))


@settings(max_examples=150, deadline=None)
@given(sequences(), st.lists(st.floats(-0.2, 1.2), min_size=1, max_size=10))
def test_sequence_is_its_moves_one_after_the_other(seq, us):
    t_first = seq.segments[0].t0 if seq.segments else seq.t0
    span = seq.t_end - seq.t0
    times = [seq.t0 + u * span for u in us]
    # where each move starts: where the last ended, when the last ended (plus dwells)
    s = seq.start
    for seg in seq.segments:
        assert seg.start == s
        s = seg.end
    assert seq.end == s
    assert seq.eval(seq.t0 - 1.0) == (seq.start, 0.0, 0.0)
    assert seq.eval(min(seq.t0, t_first) - 1e-9) == (seq.start, 0.0, 0.0)
    assert seq.eval(seq.t_end + 1.0) == (seq.end, 0.0, 0.0)
    for t in times:
        active = [g for g in seq.segments if g.t0 <= t]
        want = active[-1].eval(t) if active else (seq.start, 0.0, 0.0)
        assert seq.eval(t) == want
    # eval_many elementwise, including every joint
    allt = np.array([*times, *(j for g in seq.segments for j in joints(g))])
    np.testing.assert_allclose(seq.eval_many(allt), [seq.eval(t) for t in allt], rtol=0,
                               atol=1e-14 * (1 + max(max(scales(g)[:3])
                                                     for g in seq.segments)))


@settings(max_examples=150, deadline=None)
@given(sequences())
def test_sequence_continuity_at_the_joints_between_moves(seq):
    """C¹ everywhere, C² where no trapezoidal move meets the joint."""
    segs = seq.segments
    e = 1e-7 * min(g.move_time for g in segs)
    s_max = max(max(abs(g.start), abs(g.end)) for g in segs)
    for tj in sorted({t for g in segs for t in (g.t0, g.t_end)}):
        near = [g for g in segs if g.t0 <= tj + e and g.t_end >= tj - e]
        v_max, a_max, jerk = (max(scales(g)[k] for g in near) for k in (1, 2, 3))
        (s0, v0, a0), (s1, v1, a1) = seq.eval(tj - e), seq.eval(tj + e)
        assert abs(s1 - s0) <= 2 * e * v_max + 8 * EPS * (s_max + abs(tj) * v_max)
        assert abs(v1 - v0) <= 2 * e * a_max + 8 * EPS * (v_max + abs(tj) * a_max)
        if all(g.shape != "trapezoidal" for g in near):
            assert abs(a1 - a0) <= 2 * e * jerk + 8 * EPS * (a_max + abs(tj) * jerk)


def test_sequence_example():
    seq = Sequence(0.0, [Move(1.0, 0.5), Dwell(0.2), Move(0.0, 0.5, "cycloidal")])
    assert [(g.start, g.end, g.t0, g.t_end) for g in seq.segments] == [
        (0.0, 1.0, 0.0, 0.5), (1.0, 0.0, 0.7, pytest.approx(1.2))]
    assert seq.eval(0.6) == (1.0, 0.0, 0.0)  # the dwell
    assert seq.eval(0.95) == pytest.approx((0.5, -4.0, 0.0), abs=1e-14)  # cycloid's middle
    with pytest.raises(ValidationError, match=r"Sequence moves\[1\]: key 'duration' must "
                                              r"be a positive number, got -0.2"):
        Sequence(0.0, [Move(1.0, 0.5), Dwell(-0.2)])
    with pytest.raises(ValidationError, match=r"Sequence moves\[2\]: key 'a_max' = 1.0 is "
                                              r"too small"):
        Sequence(0.0, [Move(1.0, 0.5), Dwell(0.2), Move(0.0, 0.5, "trapezoidal",
                                                        a_max=1.0)])
    with pytest.raises(ValidationError, match=r"moves\[0\]: key 'end' or 'by' must be "
                                              r"given"):
        Sequence(0.0, [Move(1.0, 0.5, by=1.0)])
    with pytest.raises(ValidationError, match="key 'moves' must be a non-empty list"):
        Sequence(0.0, [])


# --------------------------------------------------------------------- case files
CASE = """
[model]
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "arm"
type = "rigid"
mass = 2.0
inertia = [1e-3, 0.02, 0.02]
com = [0.3, 0.0, 0.0]

[[markers]]
body = "ground"
name = "O"
z_axis = [0.0, 0.0, 1.0]

[[markers]]
body = "arm"
name = "O"
z_axis = [0.0, 0.0, 1.0]

[[joints]]
name = "shoulder"
type = "revolute"
i = "ground.O"
j = "arm.O"

[[drives]]
name = "motor"
type = "rotation"
i = "ground.O"
j = "arm.O"
profile = { type = "point-to-point", start = 0.0, end = 1.5707963267948966, duration = 0.5 }

[solver]
h = 2e-3
t_end = 1.0
"""

SEQUENCE = ('{ type = "sequence", start = 0.0, t0 = 0.1, moves = [ '
            '{type = "quintic", end = 1.0, duration = 0.3}, {type = "dwell", duration = 0.1},'
            ' {type = "trapezoidal", by = -2.0, duration = 0.3, accel_fraction = 0.25}, '
            '{type = "point-to-point", shape = "cycloidal", end = 0.0, duration = 0.2} ] }')


def write_case(tmp_path: Path, profile: str | None = None) -> Path:
    text = CASE if profile is None else CASE.replace(
        'profile = { type = "point-to-point", start = 0.0, end = 1.5707963267948966, '
        'duration = 0.5 }', f"profile = {profile}")
    path = tmp_path / "arm.toml"
    path.write_text(text)
    return path


def test_issue_example_is_a_quintic_profile(tmp_path):
    p = load_case(write_case(tmp_path)).model.drives[0].profile
    assert p == PointToPoint(0.0, math.pi / 2, 0.5, "quintic")


@pytest.mark.parametrize("profile, want", [
    ('{ type = "cycloidal", start = 1.0, end = 2.0, duration = 0.4, t0 = 0.1 }',
     PointToPoint(1.0, 2.0, 0.4, "cycloidal", t0=0.1)),
    ('{ type = "point-to-point", shape = "trapezoidal", start = 0, end = 1, v_max = 2.0, '
     'a_max = 8.0 }', PointToPoint(0.0, 1.0, None, "trapezoidal", v_max=2.0, a_max=8.0)),
    ('{ type = "trapezoidal", start = 0, end = 1, duration = 1, a_max = 5 }',
     PointToPoint(0.0, 1.0, 1.0, "trapezoidal", a_max=5.0)),
    ('{ type = "step5", x0 = 0.2, h0 = 0.0, x1 = 0.7, h1 = 1.0 }', Step5(0.2, 0.0, 0.7, 1.0)),
    ('{ type = "step5", start = 0.0, end = 1.0, duration = 0.5, t0 = 0.2 }',
     PointToPoint(0.0, 1.0, 0.5, "step5", t0=0.2)),
    (SEQUENCE, Sequence(0.0, (Move(1.0, 0.3), Dwell(0.1),
                              Move(None, 0.3, "trapezoidal", by=-2.0, accel_fraction=0.25),
                              Move(0.0, 0.2, "cycloidal")), t0=0.1)),
])
def test_case_file_profiles(tmp_path, profile, want):
    assert load_case(write_case(tmp_path, profile)).model.drives[0].profile == want


@pytest.mark.parametrize("profile, match", [
    ('{ type = "point-to-point", start = 0, end = 1, duration = -0.5 }',
     r"profile: key 'duration' must be a positive number, got -0.5"),
    ('{ type = "point-to-point", start = 0, end = 1, duration = 0.5, shape = "sine" }',
     r"profile: key 'shape' must be one of quintic, cycloidal, trapezoidal, step5; got "
     r"'sine'"),
    ('{ type = "point-to-point", start = 0, end = nan, duration = 0.5 }',
     r"profile: key 'end' must be a finite number, got nan"),
    ('{ type = "point-to-point", start = 0, end = 1 }', r"profile: missing key 'duration'"),
    ('{ type = "trapezoidal", start = 0, end = 1, duration = 1, a_max = 2 }',
     r"profile: key 'a_max' = 2.0 is too small"),
    ('{ type = "trapezoidal", start = 0, end = 1, duration = 1, v_max = 5 }',
     r"profile: key 'v_max' = 5.0 cannot be the cruise speed"),
    ('{ type = "quintic", shape = "cycloidal", start = 0, end = 1, duration = 1 }',
     r"key 'shape' = 'cycloidal' is given by the type already"),
    ('{ type = "quintic", start = 0, end = 1, duration = 1, v_max = 2 }',
     r"key 'v_max' = 2.0 applies to the trapezoidal shape only"),
    ('{ type = "quintic", start = 0, end = 1, duration = 1, speed = 2 }',
     r"unknown key\(s\) \['speed'\]"),
    ('{ type = "step5", x0 = 0.5, h0 = 0, x1 = 0.2, h1 = 1 }',
     r"key 'x1' = 0.2 must be after x0 = 0.5"),
    ('{ type = "sine" }', r"key 'type' must be constant, polynomial, spin-up, table, "
                          r"point-to-point \(or a shape: .*\) or sequence, got 'sine'"),
    ('{ type = "sequence", start = 0, moves = [] }', r"key 'moves' must be a non-empty"),
    ('{ type = "sequence", start = 0, moves = [{type = "dwell", duration = -1}] }',
     r"profile moves\[0\]: key 'duration' must be a positive number, got -1"),
    ('{ type = "sequence", start = 0, moves = [{type = "quintic", end = 1, '
     'duration = 1}, {type = "trapezoidal", end = 0, duration = 1, a_max = 1}] }',
     r"profile moves\[1\]: key 'a_max' = 1.0 is too small"),
    ('{ type = "sequence", start = 0, moves = [{type = "quintic", end = 1, by = 1, '
     'duration = 1}] }', r"profile moves\[0\]: key 'end' or 'by' must be given, not both"),
    ('{ type = "sequence", start = 0, moves = [{type = "jump", end = 1, duration = 1}] }',
     r"profile moves\[0\]: key 'type' must be dwell, point-to-point or a shape"),
])
def test_case_file_profile_errors_name_the_key_and_value(tmp_path, profile, match):
    with pytest.raises(CaseError, match=r"arm.toml: \[\[drives\]\] #\d+ 'motor' .*" + match):
        load_case(write_case(tmp_path, profile))


def test_the_documented_profiles_load(tmp_path):
    """Every ``profile = …`` of docs/case_files.md's "Motion profiles" example loads."""
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "case_files.md").read_text()
    block = re.search(r"## Motion profiles.*?```toml\n(.*?)```", text, flags=re.S).group(1)
    profiles = re.split(r"^profile = ", block, flags=re.M)[1:]
    assert len(profiles) == 8
    for profile in profiles:
        body = "\n".join(line for line in profile.splitlines()
                         if not line.startswith("#")).split("  #")[0]
        p = load_case(write_case(tmp_path, body)).model.drives[0].profile
        assert isinstance(p, (PointToPoint, Sequence))


# --------------------------------------------------------------------- driven runs
def driven_model(rot_profile, slide_profile):
    """A pendulum arm under gravity driven about its hinge, and a slider on an inclined
    rail driven along it (translation drive: z_iᵀ(r_j − r_i) = s)."""
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_rigid_body("arm", 2.0, [1e-3, 0.02, 0.02], com=(0.3, 0.0, 0.0))
    b.add_marker("ground", "O")
    b.add_marker("arm", "O")
    b.add_revolute("hinge", "ground.O", "arm.O")
    b.add_drive("motor", "rotation", rot_profile, marker_i="ground.O", marker_j="arm.O")
    b.add_rigid_body("slider", 0.7, [1e-3, 1e-3, 1e-3], position=(1.0, 0.0, 0.0))
    b.add_marker("ground", "rail", (1.0, 0.0, 0.0), (0.0, 1.0, 0.0))  # z_i along y
    b.add_marker("slider", "s", (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    b.add_joint("rail", "prismatic", "ground.rail", "slider.s")
    b.add_drive("lift", "translation", slide_profile, marker_i="ground.rail",
                marker_j="slider.s")
    return b.finalize()


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_driven_joints_follow_the_profiles_on_both_engines(engine):
    """The hinge angle θ = 2 atan2(e3, e0) and the slider's height equal s(t) at every
    output to the constraint tolerance (phi_tol 1e-10), and the rates θ̇ = 2(e0 ė3 − e3 ė0)
    and ẏ equal ṡ(t) (the stabilized index-2 formulation holds the velocity constraints
    as well)."""
    from flexmbs.assembly import System
    from flexmbs.integrators import simulate

    rot = Sequence(0.0, [Move(math.pi / 2, 0.4, "quintic"), Dwell(0.1),
                         Move(None, 0.3, "trapezoidal", by=-1.0, accel_fraction=0.3),
                         Move(0.0, 0.3, "cycloidal")], t0=0.05)
    slide = PointToPoint(0.0, 0.25, None, "trapezoidal", v_max=0.6, a_max=3.0, t0=0.1)
    system = System(driven_model(rot, slide))
    res = simulate(system, 1.3, 2e-3, engine=engine, formulation="stabilized-index-2")
    assert res.success, res.message
    assert res.statistics["engine"] == engine
    assert np.max(res.phi_violation) <= 1e-10
    names = list(res.coord_names)
    e0, e3, e0d, e3d = (x[:, names.index(f"arm.{c}")] for x in (res.q, res.qd)
                        for c in ("e0", "e3"))
    want = rot.eval_many(res.t)
    angle = 2 * np.arctan2(e3, e0)
    np.testing.assert_allclose(angle, want[:, 0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(2 * (e0 * e3d - e3 * e0d), want[:, 1], rtol=0, atol=1e-8)
    y, yd = (x[:, names.index("slider.y")] for x in (res.q, res.qd))
    want = slide.eval_many(res.t)
    np.testing.assert_allclose(y, want[:, 0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(yd, want[:, 1], rtol=0, atol=1e-8)
    assert np.max(np.abs(angle)) > 1.5 and np.ptp(y) > 0.24  # the moves happened


def test_case_profile_runs_on_both_engines(tmp_path):
    """The issue's example profile on a driven arm under gravity: both engines follow
    s(t) to the constraint tolerance and agree with each other."""
    path = write_case(tmp_path, SEQUENCE)
    angles = {}
    for engine in ("python", "compiled"):
        case = load_case(path)
        _, res = run_case(case, engine=engine)
        assert res.success, res.message
        angle = 2 * np.arctan2(res.coordinate("arm.e3"), res.coordinate("arm.e0"))
        want = case.model.drives[0].profile.eval_many(res.t)[:, 0]
        np.testing.assert_allclose(angle, want, rtol=0, atol=1e-9)
        angles[engine] = angle
    np.testing.assert_allclose(angles["python"], angles["compiled"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("omega, duration, match", [
    (2.0, 0.0, r"SpinUp.duration must be positive and finite, got 0.0"),
    (2.0, math.nan, r"SpinUp.duration must be positive and finite, got nan"),
    (math.inf, 1.0, r"SpinUp.omega must be a finite number, got inf"),
    (2.0, 1e-300, r"SpinUp.duration = 1e-300 is too short to represent"),
    (2.0, math.inf, r"SpinUp.duration must be positive and finite, got inf"),
])
def test_bad_spin_ups_name_the_value(omega, duration, match):
    with pytest.raises(ValidationError, match=match):
        SpinUp(omega, duration)
