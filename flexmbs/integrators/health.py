"""Range checks of a run: is the answer inside what the model can represent?

Linear floating-frame bodies (docs/theory_ffrf.md) are valid for small elastic
deflections, and without geometric stiffening for frame speeds well below the first
bending frequency; the integrator's answer is trustworthy while the energy balance
closes. These checks turn those limits into facts recorded with the result
(docs/integrators.md, "Run status and range checks"):

* **in the run** (every :attr:`RangeLimits.check_every` steps, a few µs): non-finite
  coordinates, or a flexible body's elastic deflection beyond
  :attr:`RangeLimits.deflection_stop` times its size, stop the run as *diverged*, with
  the reason and the history up to there;
* **after the run**: a peak elastic deflection above :attr:`RangeLimits.deflection_warn`
  of the body's size, a frame angular speed above :attr:`RangeLimits.spin_warn` of the
  first elastic frequency of a body without stiffening, and an energy-balance residual
  above :attr:`RangeLimits.energy_warn` of the energy involved each give a
  :class:`RunWarning`; a run that completed with any of them ends as *completed with
  warnings*.

Deflections cost O(modes) per check and per output, whatever the FE mesh: the bound
‖u_k(ξ)‖ ≤ Σ_m |ξ_m| a_m, with a_m the largest nodal translation of mode m (computed once
per run), decides; the exact largest nodal translation over every node is evaluated
only where the bound reaches the limit, for the outputs in decreasing order of their
bound until no remaining bound can exceed the largest exact value found. So the peak a
warning reports is the exact one, and a warning is never a false alarm.
"""

from __future__ import annotations

import sys
import warnings as _warnings
from dataclasses import asdict, dataclass

import numpy as np

from ..frame.coupling import Coupling

#: Outputs whose exact deflection is evaluated at once (a block of the einsum).
EXACT_BLOCK = 16

COMPLETED, WARNINGS, DIVERGED, FAILED, INTERRUPTED = (
    "completed", "completed with warnings", "diverged", "failed", "interrupted")
#: Run states, in order of severity (interrupted: stopped by the user, Ctrl-C).
STATUSES = (COMPLETED, WARNINGS, DIVERGED, FAILED, INTERRUPTED)


@dataclass(frozen=True)
class RangeLimits:
    """Thresholds of the range checks (fractions, dimensionless)."""

    deflection_warn: float = 0.10
    """Peak elastic deflection / body size above which linear FFRF is questionable."""
    deflection_stop: float = 1.0
    """Elastic deflection / body size at which the run is stopped as diverged."""
    spin_warn: float = 0.5
    """Peak frame angular speed / first elastic angular frequency (bodies without
    geometric stiffening: their bending stiffness is missing Ω²-order terms)."""
    energy_warn: float = 0.05
    """|energy-balance residual| / energy involved (max of |E(0)|, max T, max |W|)."""
    check_every: int = 25
    """Steps between the in-run divergence checks."""

    def __post_init__(self):
        from ..errors import ValidationError

        for name in ("deflection_warn", "deflection_stop", "spin_warn", "energy_warn"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ValidationError(f"range limit {name} must be a positive number; got "
                                      f"{value!r}")
        if int(self.check_every) != self.check_every or self.check_every < 1:
            raise ValidationError(f"range limit check_every must be a positive integer; "
                                  f"got {self.check_every!r}")


@dataclass(frozen=True)
class RunWarning:
    """One range check that failed: ``code`` (``"deflection"``, ``"spin"``,
    ``"energy"``, ``"numerical"``: floating-point warnings in the steps), the body (or
    ``"model"``), the measured ratio (the count for "numerical"), its limit and the time
    [s] where it peaked, and a sentence saying what it means."""

    code: str
    subject: str
    value: float
    limit: float
    time: float
    message: str

    def as_dict(self) -> dict:
        return asdict(self)


class BodyRange:
    """What the checks need of one flexible body: its coordinate range, its mode shapes'
    nodal translations, the largest nodal translation of each mode a_m [m per unit ξ_m]
    (for the bound Σ_m |ξ_m| a_m), its size (largest extent of the undeformed nodes) [m]
    and first elastic angular frequency [rad/s]."""

    def __init__(self, body, start: int):
        data = body.data
        self.name = body.name
        self.start, self.n_modes = start, body.n_modes
        self.rows = np.asarray(data.phi, float).reshape(len(data.nodes), 3, -1)  # (n, 3, n_m)
        self.size, self.amplitude = data.nodal_peaks  # (once per modal data)
        freqs = 2 * np.pi * np.asarray(data.frequencies, float)
        positive = freqs[freqs > 1e-9 * max(1.0, float(freqs.max(initial=0.0)))]
        self.omega1 = float(positive.min()) if positive.size else float("inf")
        #: a nonlinear body (modal derivatives) carries its stiffening in its coordinates
        self.nonlinear = bool(getattr(body, "nonlinear", False))
        self.stiffened = bool(getattr(body, "stiffening", False)) or self.nonlinear
        #: rigid coupling: the modes are not integrated, no elastic response to check
        self.rigid = getattr(body, "coupling", None) is Coupling.RIGID

    def bound(self, xi: np.ndarray) -> np.ndarray:
        """Σ_m |ξ_m| a_m ≥ the largest nodal elastic translation [m], for each row of
        ``xi`` (n_t, n_m): O(n_t · n_m)."""
        return np.abs(np.atleast_2d(xi)) @ self.amplitude

    def deflection(self, xi: np.ndarray) -> np.ndarray:
        """Largest nodal elastic translation [m] for each row of ``xi`` (n_t, n_m), over
        every node (O(n_t · nodes · n_m): for the few states the bound singles out)."""
        u = np.einsum("scm,tm->tsc", self.rows, np.atleast_2d(xi))
        return np.linalg.norm(u, axis=2).max(axis=1)

    def exceeds(self, xi: np.ndarray, limit: float) -> float | None:
        """The exact deflection [m] of the one state ``xi`` (n_m,) if it exceeds
        ``limit`` [m], else None; the bound spares the nodes when it cannot."""
        if float(self.bound(xi)[0]) <= limit:
            return None
        u = float(self.deflection(xi)[0])
        return u if u > limit else None

    def peak(self, xi: np.ndarray, limit: float) -> tuple[int, float] | None:
        """(output, exact deflection [m]) of the largest deflection over the rows of ``xi``
        (n_t, n_m) if it exceeds ``limit`` [m], else None. Exact values only for outputs
        whose bound exceeds the limit, in decreasing order of the bound, until no
        remaining bound can beat the best exact value found."""
        bounds = self.bound(xi)
        if not np.any(bounds > limit):  # (no sort where no output can exceed it)
            return None
        order = np.argsort(-bounds, kind="stable")
        order = order[bounds[order] > limit]
        best_k, best = -1, limit
        for first in range(0, order.size, EXACT_BLOCK):
            block = order[first:first + EXACT_BLOCK]
            if bounds[block[0]] <= best:
                break
            exact = self.deflection(xi[block])
            j = int(np.argmax(exact))
            if exact[j] > best:
                best_k, best = int(block[j]), float(exact[j])
        return (best_k, best) if best_k >= 0 else None


def body_ranges(system) -> list[BodyRange]:
    """:class:`BodyRange` of every flexible body of ``system`` that has elastic
    coordinates."""
    return [BodyRange(body, sl.start) for body, sl in zip(system.bodies, system.slices,
                                                           strict=True)
            if hasattr(body, "data") and body.n_modes > 0]


def divergence(ranges: list[BodyRange], q: np.ndarray, t: float,
               limits: RangeLimits) -> str | None:
    """Why the run at (t, q) has diverged, or None: non-finite coordinates, or a body
    deflected by more than ``deflection_stop`` times its size."""
    if not np.all(np.isfinite(q)):
        return f"the coordinates became non-finite at t = {t:.6g} s"
    for rng in ranges:
        if rng.size <= 0:
            continue
        u = rng.exceeds(q[rng.start + 7:rng.start + 7 + rng.n_modes],
                        limits.deflection_stop * rng.size)
        if u is not None:
            return (f"flexible body {rng.name!r}: elastic deflection {u:.3g} m at t = "
                    f"{t:.6g} s exceeds {limits.deflection_stop:g} times its size "
                    f"{rng.size:.3g} m (the motion has diverged; linear FFRF is far out of "
                    f"range)")
    return None


def first_divergence(ranges: list[BodyRange], qs: np.ndarray, times, limits: RangeLimits
                     ) -> tuple[int, str] | None:
    """(row, reason) of the first of the states ``qs`` (n, n_q) at ``times`` where
    :func:`divergence` finds the run diverged, or None: its checks over the rows at once
    (the modal bound for every row, the exact deflection only where the bound reaches
    the stop)."""
    qs = np.atleast_2d(qs)
    suspects = ~np.isfinite(qs).all(axis=1)
    for rng in ranges:
        if rng.size > 0:
            xi = qs[:, rng.start + 7:rng.start + 7 + rng.n_modes]
            suspects |= rng.bound(xi) > limits.deflection_stop * rng.size
    for j in np.flatnonzero(suspects):
        reason = divergence(ranges, qs[j], float(times[j]), limits)
        if reason is not None:
            return int(j), reason
    return None


def run_warnings(ranges: list[BodyRange], t, q, qd, energy, work, kinetic,
                 limits: RangeLimits) -> list[RunWarning]:
    """The after-run checks on the outputs: ``t`` (n_t,), ``q``, ``qd`` (n_t, n_q),
    total mechanical energy ``energy``, non-conservative work ``work`` and kinetic
    energy ``kinetic`` (n_t,) [J]."""
    out = []
    t = np.asarray(t, float)
    if t.size == 0:
        return out
    for rng in ranges:
        xi = q[:, rng.start + 7:rng.start + 7 + rng.n_modes]
        peak = rng.peak(xi, limits.deflection_warn * rng.size) if rng.size > 0 else None
        if peak is not None:
            k, u_k = peak
            ratio = u_k / rng.size
            out.append(RunWarning(
                "deflection", rng.name, float(ratio), limits.deflection_warn, float(t[k]),
                f"flexible body {rng.name!r}: peak elastic deflection {u_k:.3g} m at t = "
                f"{t[k]:.4g} s is {100 * ratio:.0f} % of its size {rng.size:.3g} m, beyond "
                f"the {100 * limits.deflection_warn:.0f} % where linear FFRF holds"
                + ("; its modal derivatives carry the terms of second order in the "
                   "deflection, not those beyond: compare with more modes or a "
                   "geometrically exact beam" if rng.nonlinear else "")))
        if not (rng.stiffened or rng.rigid) and np.isfinite(rng.omega1):
            p, pd = q[:, rng.start + 3:rng.start + 7], qd[:, rng.start + 3:rng.start + 7]
            speed = np.linalg.norm(_body_angular_velocity(p, pd), axis=1)
            k = int(np.argmax(speed))
            ratio = speed[k] / rng.omega1
            if ratio > limits.spin_warn:
                out.append(RunWarning(
                    "spin", rng.name, float(ratio), limits.spin_warn, float(t[k]),
                    f"flexible body {rng.name!r}: its frame turns at {speed[k]:.3g} rad/s "
                    f"at t = {t[k]:.4g} s, {ratio:.2f} times its first elastic frequency "
                    f"{rng.omega1:.3g} rad/s; without geometric stiffening its bending "
                    f"stiffness lacks the centrifugal terms and the deflection is "
                    f"overestimated"))
    energy, work = np.asarray(energy, float), np.asarray(work, float)
    if energy.size and np.all(np.isfinite(energy)) and np.all(np.isfinite(work)):
        residual = (energy - energy[0]) - work
        scale = max(abs(float(energy[0])), float(np.max(np.abs(kinetic))),
                    float(np.max(np.abs(work))))
        k = int(np.argmax(np.abs(residual)))
        if scale > 0 and abs(residual[k]) > limits.energy_warn * scale:
            ratio = abs(residual[k]) / scale
            gained = "gained" if residual[k] > 0 else "lost"
            out.append(RunWarning(
                "energy", "model", float(ratio), limits.energy_warn, float(t[k]),
                f"the energy balance does not close: by t = {t[k]:.4g} s the model "
                f"{gained} {abs(residual[k]):.3g} J beyond the work done on it, "
                f"{100 * ratio:.0f} % of the energy involved ({scale:.3g} J); the step "
                f"is too large for this motion, or the numerical damping is"))
    return out


def _body_angular_velocity(p, pd) -> np.ndarray:
    """ω̄ = Ḡ(p) ṗ (n_t, 3) [rad/s] for stacked Euler parameters and rates (n_t, 4), the
    rows of :func:`flexmbs.frame.rotations.g_bar` at once."""
    e0, e1, e2, e3 = p.T
    d0, d1, d2, d3 = pd.T
    return 2.0 * np.stack([-e1 * d0 + e0 * d1 + e3 * d2 - e2 * d3,
                           -e2 * d0 - e3 * d1 + e0 * d2 + e1 * d3,
                           -e3 * d0 + e2 * d1 - e1 * d2 + e0 * d3], axis=1)


def numerical_categories() -> tuple:
    """Warning classes of floating-point trouble inside a step (overflow, invalid values,
    a singular or ill-conditioned factorisation), gathered by
    :class:`NumericalWarnings`: RuntimeWarning (SciPy's LinAlgWarning is one) and, once
    SciPy's sparse solvers are imported (a run that never needs them does not import
    them: docs/compiled.md, "What a run imports"), their MatrixRankWarning."""
    sparse_solvers = sys.modules.get("scipy.sparse.linalg")
    if sparse_solvers is None:
        return (RuntimeWarning,)
    return RuntimeWarning, sparse_solvers.MatrixRankWarning


#: The kinds of floating-point warnings, and the other warnings, a run keeps.
KEPT = 50


class NumericalWarnings:
    """Gathers the floating-point warnings NumPy and SciPy raise during a run
    (:func:`numerical_categories`) into one record instead of forwarding each of them verbatim:
    how many, of which kinds, and the first one with the time [s] of the step it came
    from. Other warnings pass through unchanged, when a block ends.

    Use as ``with numerical:`` around the step loop, with ``numerical.collect(t)`` after
    each step, and again around the computation of the output quantities (the counts
    add up).

    What it keeps is bounded whatever the number of steps: at most :data:`KEPT` kinds
    (texts) of floating-point warnings (the rest counted as "other"), and at most
    :data:`KEPT` other warnings to pass through (the rest counted, and said in one
    warning)."""

    def __init__(self):
        self.count = 0
        self.kinds: dict[str, int] = {}
        self.first: str = ""
        self.first_time = float("nan")
        self._others: list = []
        self._others_dropped = 0

    def __enter__(self) -> NumericalWarnings:
        self._context = _warnings.catch_warnings(record=True)
        self._caught = self._context.__enter__()
        self._always = ()
        self._filter_always()
        return self

    def _filter_always(self) -> tuple:
        """Every floating-point warning shown (hence counted) each time, not once per
        place: the classes known now (SciPy's sparse solvers' may be imported during the
        run: their class is added at the next :meth:`collect`)."""
        categories = numerical_categories()
        for category in categories:
            if category not in self._always:
                _warnings.simplefilter("always", category)
        self._always = categories
        return categories

    def collect(self, t: float | None) -> None:
        """Sort the warnings raised since the last call (the step ending at ``t``; None:
        the output quantities after the run)."""
        if not self._caught:
            return
        numerical = self._filter_always()
        for w in self._caught:
            if issubclass(w.category, numerical):
                self.count += 1
                text = str(w.message).strip().rstrip(".")
                if text not in self.kinds and len(self.kinds) >= KEPT:
                    text = "other"
                self.kinds[text] = self.kinds.get(text, 0) + 1
                if self.count == 1:
                    self.first = text
                    self.first_time = float("nan") if t is None else float(t)
            elif len(self._others) < KEPT:
                self._others.append(w)
            else:
                self._others_dropped += 1
        self._caught.clear()

    def __exit__(self, *exc) -> None:
        self.collect(None)
        self._context.__exit__(*exc)
        for w in self._others:  # re-raised where the caller's filters decide
            _warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if self._others_dropped:
            _warnings.warn(f"{self._others_dropped} further warning(s) during the run "
                           f"were not repeated (the first {KEPT} were)", UserWarning,
                           stacklevel=2)
        self._others, self._others_dropped = [], 0

    def sentence(self) -> str:
        """What happened, in one sentence (empty when nothing did)."""
        if not self.count:
            return ""
        kinds = "; ".join(f"{n} × {text!r}" for text, n in
                          sorted(self.kinds.items(), key=lambda kv: -kv[1])[:3])
        more = f" and {len(self.kinds) - 3} other kind(s)" if len(self.kinds) > 3 else ""
        where = ("while computing the output quantities" if np.isnan(self.first_time)
                 else f"in the step to t = {self.first_time:.6g} s")
        return (f"{self.count} floating-point warning(s) from NumPy/SciPy during the "
                f"run, the first {where} ({kinds}{more}): overflow, invalid values or a "
                f"(nearly) singular matrix, so the results from there on are suspect")

    def run_warning(self) -> RunWarning | None:
        """The :class:`RunWarning` ("numerical") of a run that completed with them."""
        if not self.count:
            return None
        return RunWarning("numerical", "model", float(self.count), 0.0, self.first_time,
                          self.sentence())


def status_of(success: bool, diverged: bool, warnings: list) -> str:
    """The run state: failed, diverged, completed with warnings or completed."""
    if diverged:
        return DIVERGED
    if not success:
        return FAILED
    return WARNINGS if warnings else COMPLETED
