"""The integration driver: consistent initial conditions, the generalized-α step with
Newton, step halving on Newton failure, and the result record (an object with
``step()`` and a thin ``simulate()``; failures return a status with the partial history).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from ..assembly.system import System
from ..assembly.tangents import residual_tangents
from ..contact.element import OPEN
from ..contact.events import apply_impulses, contacts_of, onset_fraction
from ..contact.events import commit as commit_contacts
from ..errors import AccuracyWarning, FlexmbsError, ModelError, ValidationError
from ..results import SimulationResult
from .alpha import AlphaParameters, NewtonMatrix, generalized_alpha, hht, newmark
from .control import ModelView, next_step
from .health import (
    INTERRUPTED,
    WARNINGS,
    NumericalWarnings,
    RangeLimits,
    body_ranges,
    divergence,
    run_warnings,
    status_of,
)
from .interrupts import StepInterrupts
from .output_angles import output_angles
from .reference import accelerations

#: What the results hold per contact and output time.
CONTACT_FIELDS = ("gap", "penetration", "normal_force", "tangential_force",
                  "normal_velocity", "state", "dissipated")

METHODS = {"newmark": newmark, "hht": hht, "generalized-alpha": generalized_alpha}


class Tangents(str, Enum):
    """How the Newton iteration matrix gets K_t = ∂r/∂q and C_t = ∂r/∂q̇."""

    ANALYTIC = "analytic"
    """Exact derivatives (:mod:`flexmbs.assembly.tangents`); forces given by user
    callables alone by finite differences."""
    FD = "fd"
    """Grouped forward finite differences of the whole residual (for comparison)."""


class Formulation(str, Enum):
    """Which constraint level the multiplier rows of the step enforce
    (docs/theory_integrators.md, "Stabilized index 2")."""

    AUTO = "auto"
    """Stabilized index 2 when the method has no numerical damping (γ = ½: the
    trapezoidal rule, generalized-α with ρ∞ = 1) and the model has constraints, where the
    index-3 form is weakly unstable; index 3 otherwise."""
    INDEX3 = "index-3"
    """Φ(q) = 0 at t_{n+1} (positions exact, velocities drift with the error)."""
    STABILIZED_INDEX2 = "stabilized-index-2"
    """Φ_q q̇ + Φ_t = 0 through λ, and Φ(q) = 0 through a position correction (the
    Gear–Gupta–Leimkuhler form): both levels hold at every step."""


def undamped(params: AlphaParameters) -> bool:
    """Whether the method has no numerical damping (γ = ½: ρ∞ = 1)."""
    return abs(params.gamma - 0.5) < 1e-12


class Engine(str, Enum):
    """Which implementation evaluates the model and runs the Newton iteration."""

    AUTO = "auto"
    """Compiled where the model allows it (no contacts, no state-dependent callables),
    else the NumPy path."""
    COMPILED = "compiled"
    """The numba kernels (docs/compiled.md); an error if the model needs the NumPy path."""
    PYTHON = "python"
    """The NumPy reference path."""


#: Default ``refresh_above`` with analytic tangents. A fresh matrix converges in 2
#: iterations and an older one in 3–7; rebuilding before a step once the previous one
#: needed 5 or more was the cheapest of 1 (every step) … 5 and "only on slow
#: convergence" for the arm and pendulum benchmarks, where a build costs 5–7 residual
#: evaluations (benchmarks/README.md).
REFRESH_ABOVE = 4


@dataclass
class StepStats:
    t: list = field(default_factory=list)
    h: list = field(default_factory=list)
    iterations: list = field(default_factory=list)


class AlphaIntegrator:
    """Generalized-α family on the index-3 DAE (see :mod:`flexmbs.integrators.alpha`).

    Parameters
    ----------
    system : System
    params : AlphaParameters
    h : float
        Step size [s] (halved on Newton failure, down to ``h_min``, then restored).
    rtol, atol : float
        Newton convergence: ‖Δq / (atol + rtol |q|)‖∞ < 1, and max |Φ| < ``phi_tol``.
    tangents : {"analytic", "fd"}
        K_t and C_t of the iteration matrix: analytic (default; finite differences only
        for forces given by user callables) or finite differences of the whole residual.
    fd_step : float
        Relative forward-difference step of the finite-difference tangents.
    refresh_above : int, None or "auto"
        Modified Newton: the factorised iteration matrix is reused across iterations and
        steps, rebuilt when convergence slows within a step (correction not halved from
        the third iteration on), when h changes, and before a step when the previous step
        needed more than ``refresh_above`` iterations (None: never for that reason).
        "auto": ``REFRESH_ABOVE`` (4) with analytic tangents, whose build costs a few
        residual evaluations; None with finite-difference ones, whose build costs dozens.
    engine : {"auto", "compiled", "python"}
        Who evaluates the model and runs the Newton iteration (:class:`Engine`,
        docs/compiled.md); ``engine`` and ``engine_note`` say which ran and why.
    on_compile : callable, optional
        Called (no arguments) when loading the compiled kernels takes long, i.e. they
        are being compiled.
    formulation : {"auto", "index-3", "stabilized-index-2"}
        The constraint level of the multiplier rows (:class:`Formulation`); "auto" picks
        the stabilized index-2 form for undamped methods on constrained models. Choosing
        "index-3" with an undamped method on a constrained model warns (AccuracyWarning):
        the velocities drift off the constraints and grow until Newton fails.
    """

    def __init__(self, system: System, params: AlphaParameters, h: float, *, t0: float = 0.0,
                 q0=None, qd0=None, rtol: float = 1e-8, atol: float = 1e-10,
                 phi_tol: float = 1e-10, max_iter: int = 12, h_min: float | None = None,
                 fd_step: float = 1e-7, error_tol: float | None = None,
                 h_max: float | None = None, acc_rtol: float = 1e-6,
                 tangents: str = "analytic", refresh_above: int | str | None = "auto",
                 contact_tol: float = 1e-6, h_contact: float | None = None,
                 engine: str = "auto", on_compile=None, formulation: str = "auto"):
        if not h > 0:
            raise ValidationError(f"step size h must be positive, got {h}")
        if error_tol is not None and not error_tol > 0:
            raise ValidationError(f"error_tol must be positive, got {error_tol}")
        if h_max is not None and not h_max > 0:
            raise ValidationError(f"h_max must be positive, got {h_max}")
        for name, value in (("rtol", rtol), ("atol", atol), ("phi_tol", phi_tol),
                            ("acc_rtol", acc_rtol)):
            if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
                raise ValidationError(f"{name} must be a positive number, got {value!r}")
        if h_min is not None and not (np.isfinite(h_min) and 0 < h_min <= h):
            raise ValidationError(f"h_min must lie in (0, h = {h:g}] s, got {h_min!r}")
        if not (isinstance(max_iter, int) and max_iter >= 1):
            raise ValidationError(f"max_iter must be an integer >= 1, got {max_iter!r}")
        try:
            self.tangents = Tangents(tangents)
        except ValueError:
            raise ValidationError(f"tangents must be one of {[m.value for m in Tangents]}, "
                                  f"got {tangents!r}") from None
        if refresh_above == "auto":  # by the cost of a build
            refresh_above = REFRESH_ABOVE if self.tangents is Tangents.ANALYTIC else None
        if refresh_above is not None and not (isinstance(refresh_above, int)
                                              and refresh_above >= 1):
            raise ValidationError(f"refresh_above must be an integer >= 1, None or 'auto', got "
                                  f"{refresh_above!r}")
        self.refresh_above = refresh_above
        if not (np.isfinite(contact_tol) and contact_tol > 0):
            raise ValidationError(f"contact_tol must be a positive length, got {contact_tol!r}")
        if h_contact is not None and not (np.isfinite(h_contact) and h_contact > 0):
            raise ValidationError(f"h_contact must be a positive step, got {h_contact!r}")
        self.contact_tol, self.h_contact = float(contact_tol), h_contact
        self.contacts = contacts_of(system)
        for contact in self.contacts:
            contact.reset()
            for name in contact.markers:
                body = system.marker_info(name)[0]
                if getattr(body, "coupling", None) is not None and \
                        body.coupling.value == "one-way":
                    raise ModelError(
                        f"contact {contact.name!r} touches flexible body {body.name!r} in "
                        f"one-way coupling, where the joints and contacts see the "
                        f"undeformed body but forces excite the modes: the contact could "
                        f"not see the deflection it loads; use two-way, no-Mrf or rigid")
        self.onsets_located = 0  # steps shortened to locate a contact onset
        self.formulation = self._pick_formulation(formulation, params, system)
        if h_max is not None:
            h = min(h, h_max)
        self.system, self.params, self.h = system, params, float(h)
        self.h_min = h / 1024 if h_min is None else float(h_min)
        self.rtol, self.atol, self.phi_tol = rtol, atol, phi_tol
        self.acc_rtol = acc_rtol  # Newton tolerance on q̈ (and so λ), relative
        self.max_iter, self.fd_step = max_iter, fd_step
        self.error_tol = error_tol
        self.h_max = self.h if h_max is None else float(h_max)
        self.rejected = 0
        self.t = float(t0)
        # A run starts from its own initial state: the angle memory of rotational springs
        # and sensors (System.unwrap) left by an earlier run on this System does not carry
        # over (the first angle lies in (−π, π]); a restart continues the stored one
        # (restore), a co-simulation state sets its own (cosim.Simulation.set_state).
        system._angles.clear()
        self.q = system.assemble(q0, t=self.t)
        self.qd = system.project_velocity(self.q, qd0, self.t)
        self.qdd, self.lam = accelerations(system, self.q, self.qd, self.t)
        self.a = self.qdd.copy()
        self.matrix = NewtonMatrix()
        self._groups = system.fd_column_groups()  # column groups of the "fd" tangents
        self.refreshes = 0  # iteration-matrix builds (tangents + factorisation)
        self._matrix_h = None
        self._refreshes_accepted = 0  # self.refreshes at the last accepted step
        self.status = "running"
        self.message = ""
        self.stats = StepStats()
        self._select_engine(engine, on_compile)

    @staticmethod
    def _pick_formulation(value, params: AlphaParameters, system: System) -> Formulation:
        try:
            chosen = Formulation(value)
        except ValueError:
            raise ValidationError(f"formulation must be one of "
                                  f"{[m.value for m in Formulation]}, got {value!r}") from None
        weak = undamped(params) and system.n_c > 0
        if chosen is Formulation.AUTO:
            return Formulation.STABILIZED_INDEX2 if weak else Formulation.INDEX3
        if chosen is Formulation.INDEX3 and weak:
            warnings.warn(
                f"{params.name} has no numerical damping, and on the index-3 constraints "
                f"of this model ({system.n_c} rows) it is weakly unstable: the velocities "
                f"drift off the constraints and grow until Newton fails (docs/"
                f"theory_integrators.md); use formulation='stabilized-index-2' (the "
                f"default for undamped methods) or some damping (rho_inf < 1)",
                AccuracyWarning, stacklevel=4)
        return chosen

    def _select_engine(self, engine, on_compile) -> None:
        """Compiled kernels (docs/compiled.md) where the model allows them, else the NumPy
        reference path; ``engine_note`` says why the reference path ran."""
        try:
            self.engine = Engine(engine)
        except ValueError:
            raise ValidationError(f"engine must be one of {[m.value for m in Engine]}, got "
                                  f"{engine!r}") from None
        self.compiled, self.engine_note, self.compile_time = None, "", 0.0
        self._step_buffers = None
        if self.engine is Engine.PYTHON:
            self.engine_note = "engine='python' requested"
            return
        start = time.perf_counter()  # numba and the kernels: imported once per process
        from ..compiled.engine import CompiledSystem, jit_disabled

        imports = time.perf_counter() - start
        from ..compiled.tables import unsupported_reason

        if jit_disabled():
            reason = "NUMBA_DISABLE_JIT is set"
        elif self.contacts:
            reason = f"contact {self.contacts[0].name!r} (contacts run on the NumPy path)"
        elif self.tangents is not Tangents.ANALYTIC:
            reason = "finite-difference tangents requested"
        else:
            reason = unsupported_reason(self.system)
        if reason is not None:
            if self.engine is Engine.COMPILED:
                raise ValidationError(f"engine='compiled' cannot run this model: {reason}")
            self.engine, self.engine_note = Engine.PYTHON, reason
            return
        from ..compiled import prebuilt

        start = time.perf_counter()
        build, why = prebuilt.ensure_loaded()
        imports += time.perf_counter() - start  # linking the prebuilt kernel
        if build is None and self.engine is Engine.AUTO:
            from ..compiled import warmup

            if not warmup.is_ready() and warmup.start_background():
                self.engine, self.engine_note = Engine.PYTHON, (
                    "the compiled kernels are being built in the background, once per "
                    f"install (a few minutes; {why}); this run uses the NumPy path")
                return
        from ..compiled import codes

        self.engine, self._codes = Engine.COMPILED, codes  # the step kernel's numbers
        self.compiled = CompiledSystem(self.system, on_compile=on_compile)
        # importing the engine, linking the prebuilt kernel or else importing numba and
        # loading (or compiling) its kernels, and the warm-up call
        self.compile_time = imports + self.compiled.compile_time

    # ----------------------------------------------------------- pieces
    def _coefficients(self, h):
        p = self.params
        bp = (1 - p.alpha_m) / (p.beta * h * h * (1 - p.alpha_f))
        gp = p.gamma / (p.beta * h)
        return bp, gp

    def _residual(self, q, qd, qdd, lam, t):
        """r = M q̈ + Φ_qᵀλ − Q (n_q,)."""
        return self.system.dynamic_residual(q, qd, qdd, lam, t)[0]

    def _refresh(self, q, qd, qdd, lam, t, bp, gp, h, jac=None):
        """Build and factor [M + (γ'/β')C_t + K_t/β', Φ_qᵀ; Φ_q, 0] at this state
        (``jac``: Φ_q there, if already evaluated)."""
        s = self.system
        if self.tangents is Tangents.ANALYTIC:
            k_t, c_t = residual_tangents(s, q, qd, qdd, lam, t, sparse=False,
                                         fd_step=self.fd_step)
        else:
            k_t, c_t = self._fd_tangents(q, qd, qdd, lam, t)
        if jac is None:
            jac = s.jacobian(q, t, sparse=False)
        jac = jac.toarray() if hasattr(jac, "toarray") else np.asarray(jac)
        m = np.asarray(s.mass_matrix(q, sparse=False))
        top = m + (gp / bp) * c_t + k_t / bp
        n_c = jac.shape[0]
        self.matrix.factor(np.block([[top, jac.T], [jac, np.zeros((n_c, n_c))]]))
        self._matrix_h = h  # the step this matrix was built for
        self.refreshes += 1

    def _fd_tangents(self, q, qd, qdd, lam, t):
        """K_t, C_t by grouped forward differences of the whole residual."""
        n, eps = self.system.n_q, self.fd_step
        base = self._residual(q, qd, qdd, lam, t)
        k_t = np.zeros((n, n))
        c_t = np.zeros((n, n))
        groups = self._groups
        if groups is None:  # user callables: every column on its own
            groups = [[(i, np.arange(n))] for i in range(n)]
        for group in groups:
            dq = np.zeros(n)
            for col, _ in group:
                dq[col] = eps * max(1.0, abs(q[col]))
            dk = self._residual(q + dq, qd, qdd, lam, t) - base
            dc = self._residual(q, qd + dq, qdd, lam, t) - base
            for col, rows in group:
                k_t[rows, col] = dk[rows] / dq[col]
                c_t[rows, col] = dc[rows] / dq[col]
        return k_t, c_t

    def _slow_last_step(self) -> bool:
        """Whether the last accepted step needed more than ``refresh_above`` iterations."""
        its = self.stats.iterations
        return self.refresh_above is not None and bool(its) and its[-1] > self.refresh_above

    # ----------------------------------------------------------- one step
    def _try_step(self, h):
        if self.compiled is not None:
            return self._try_step_compiled(h)
        p, s = self.params, self.system
        n = s.n_q
        bp, gp = self._coefficients(h)
        t1 = self.t + h
        qdd1 = self.qdd.copy()
        a1 = ((1 - p.alpha_f) * qdd1 + p.alpha_f * self.qdd - p.alpha_m * self.a) / (1 - p.alpha_m)
        q1 = self.q + h * self.qd + h * h * ((0.5 - p.beta) * self.a + p.beta * a1)
        qd1 = self.qd + h * ((1 - p.gamma) * self.a + p.gamma * a1)
        lam1 = self.lam.copy()
        stale = self.matrix.lu is None or self._matrix_h != h or self._slow_last_step()
        last = np.inf
        floor = 16 * np.finfo(float).eps
        index2 = self.formulation is Formulation.STABILIZED_INDEX2
        singular = (f"Newton produced non-finite values at t = {t1:.6g} s (a singular "
                    f"iteration matrix? check System.check() for redundant constraints)")
        for it in range(1, self.max_iter + 1):
            r, phi, jac = s.dynamic_residual(q1, qd1, qdd1, lam1, t1)
            if stale:  # Φ_q at this iterate is at hand
                self._refresh(q1, qd1, qdd1, lam1, t1, bp, gp, h, jac)
                stale = False
            if index2:  # multiplier rows: Φ_q Δq̇ = −(Φ_q q̇ + Φ_t) with Δq̇ = γ'Δq
                phi = (np.asarray(jac @ qd1).ravel() + s.phi_t(q1, t1)) / gp
            x = self.matrix.solve(-np.concatenate([r / bp, phi]))
            if not np.all(np.isfinite(x)):
                return False, self._failure(singular, q1, qd1, qdd1, lam1, t1), it, None
            dq = x[:n]
            q1 += dq
            qd1 += gp * dq
            qdd1 += bp * dq
            lam1 += bp * x[n:]
            # converged when the position AND the acceleration (hence λ, q̇) corrections
            # are within tolerance: an error ε in q is β'ε in q̈ and λ, so a test on Δq
            # alone would lose accuracy as h → 0; below the round-off floor of q the
            # corrections cannot shrink further
            abs_dq, abs_q = np.abs(dq), np.abs(q1)
            max_dq = float(abs_dq.max())
            err_q = float(np.max(abs_dq / (self.atol + self.rtol * abs_q)))
            err_a = bp * max_dq / (self.acc_rtol * max(1.0, float(np.max(np.abs(qdd1)))))
            at_floor = max_dq <= floor * max(1.0, float(abs_q.max()))
            err = max(err_q, 0.0 if at_floor else err_a)
            if not np.isfinite(err):
                return False, singular, it, None
            # Φ at the new iterate only once the correction is small (Φ alone: no
            # Jacobians); otherwise the next iteration evaluates it with the residual.
            # Index 2 needs it at every iteration, for the position correction.
            if err < 1.0 or index2:
                phi1 = s.phi(q1, t1)
                if err < 1.0 and float(np.max(np.abs(phi1), initial=0.0)) < self.phi_tol:
                    a1 = ((1 - p.alpha_f) * qdd1 + p.alpha_f * self.qdd
                          - p.alpha_m * self.a) / (1 - p.alpha_m)
                    return True, "", it, (t1, q1, qd1, qdd1, lam1, a1)
                if index2:  # onto Φ = 0 through the same factors, q alone
                    dq = self.matrix.solve(np.concatenate([np.zeros(n), -phi1]))[:n]
                    if not np.all(np.isfinite(dq)):
                        return False, self._failure(singular, q1, qd1, qdd1, lam1, t1), \
                            it, None
                    q1 += dq
            if it >= 3 and err > 0.5 * last:  # slow: refresh the iteration matrix
                stale = True
            last = err
        return False, self._failure(
            f"Newton did not converge in {self.max_iter} iterations at t = {t1:.6g} s "
            f"(last scaled correction {err:.3g})", q1, qd1, qdd1, lam1, t1), \
            self.max_iter, None

    def _try_step_compiled(self, h):
        """:meth:`_try_step` in compiled code (:func:`flexmbs.compiled.newton.newton_step`):
        one kernel call per step, plus one factorisation (LAPACK, or SuperLU for large
        models) per matrix refresh."""
        p, cs, nk = self.params, self.compiled, self._codes
        work = cs.work
        t1 = self.t + h
        if self._step_buffers is None:  # (par, profiles, actuator values), reused
            index2 = float(self.formulation is Formulation.STABILIZED_INDEX2)
            self._step_buffers = (np.array([p.alpha_m, p.alpha_f, p.beta, p.gamma, h, t1,
                                            self.rtol, self.atol, self.acc_rtol,
                                            self.phi_tol, index2]), *cs.time_values(t1))
        par, prof, u = self._step_buffers
        par[4], par[5] = h, t1
        cs.time_values_into(t1, prof, u)
        stale = self.matrix.lu is None or self._matrix_h != h or self._slow_last_step()
        work.counters[nk.STALE] = int(stale)
        factors = self.matrix.lu if self.matrix.lu is not None else (
            cs.placeholder_factors())
        code = cs.newton(self.q, self.qd, self.qdd, self.a, self.lam, par, self.max_iter,
                         prof, u, factors, True)
        while code == nk.NEED_FACTOR:
            factors = cs.factor(work.matrix)
            self.matrix.lu, self.matrix.age = factors, 0
            self._matrix_h = h
            self.refreshes += 1
            code = cs.newton(self.q, self.qd, self.qdd, self.a, self.lam, par, self.max_iter,
                             prof, u, factors, False)
        it = int(work.counters[nk.IT])
        state = (work.q1.copy(), work.qd1.copy(), work.qdd1.copy(), work.lam1.copy())
        if code == nk.CONVERGED:
            return True, "", it, (t1, *state, work.a1.copy())
        if code == nk.MAX_ITER:
            head = (f"Newton did not converge in {self.max_iter} iterations at t = {t1:.6g} s "
                    f"(last scaled correction {work.floats[1]:.3g})")
        else:
            head = (f"Newton produced non-finite values at t = {t1:.6g} s (a singular "
                    f"iteration matrix? check System.check() for redundant constraints)")
            if code == nk.NONFINITE_ERROR:
                return False, head, it, None
        return False, self._failure(head, *state, t1), it, None

    def _failure(self, head, q1, qd1, qdd1, lam1, t1) -> str:
        """``head`` plus the diagnostics at the (last finite) Newton iterate."""
        s = self.system
        with np.errstate(all="ignore"):
            worst = s.violated(q1, t1, tol=self.phi_tol)
            names = ", ".join(f"{nm} (|Φ| = {v:.2g})" for nm, v in worst[:4]) or "none"
            residual = float(np.max(np.abs(self._residual(q1, qd1, qdd1, lam1, t1)),
                                    initial=0.0))
        return (f"{head}; equilibrium residual {residual:.3g}; constraints above "
                f"{self.phi_tol:g}: {names}; iteration-matrix condition "
                f"{self._condition():.2g}")

    def _condition(self) -> float:
        """1-norm condition estimate of the current factored iteration matrix."""
        try:
            if getattr(self.matrix.lu, "sparse", False):  # the matrix SuperLU factored
                return float(np.linalg.cond(self.compiled.work.matrix, 1))
            lu = self.matrix.lu[0]
            upper = np.triu(lu)
            lower = np.tril(lu, -1) + np.eye(lu.shape[0])
            mat = lower @ upper
            return float(np.linalg.cond(mat, 1))
        except (TypeError, ValueError, np.linalg.LinAlgError):
            return float("inf")

    def error_estimate(self, a_new, h) -> float:
        """Scaled local error h²|β − 1/6| ‖a_{n+1} − a_n‖ (Zienkiewicz–Xie) against
        ``error_tol`` · (1e-3 + |q|); ≤ 1 means acceptable."""
        est = h * h * abs(self.params.beta - 1.0 / 6.0) * (a_new - self.a)
        return float(np.max(np.abs(est) / (self.error_tol * (1e-3 + np.abs(self.q)))))

    def step(self) -> tuple[bool, str]:
        """Advance one step of size h, halving on Newton failure down to ``h_min``.

        With ``error_tol`` set, the local error estimate also rejects a step (retried
        smaller) and sets the next step size: h ← h · clip(0.9 err^(−1/3), ¼, 2), at most
        ``h_max``."""
        h = self.h
        if self.h_contact is not None and any(c.state.mode != OPEN for c in self.contacts):
            h = min(h, self.h_contact)  # a contact is closed: resolve it
        # the angle memory of the accepted state (System.unwrap): every attempt starts from
        # it, and a failed or interrupted step leaves it (not a diverging iterate's angles)
        accepted = dict(self.system._angles)
        try:
            return self._attempts(h, accepted)
        except BaseException:  # Ctrl-C inside a step, a failing profile or callable
            self.system._angles = accepted
            raise

    def _attempts(self, h, accepted) -> tuple[bool, str]:
        """The attempts of :meth:`step` from step size ``h`` (``accepted``: the angle
        memory of the accepted state)."""
        attempt = 0
        while True:
            if attempt:
                self.system._angles = dict(accepted)
            attempt += 1
            ok, message, iters, state = self._try_step(h)
            if ok and self.contacts:
                frac = onset_fraction(self.system, self.contacts, self.q, self.qd, state[1],
                                      state[2], h, self.contact_tol)
                # locating an onset may take steps below h_min (a Newton-failure floor):
                # an impact at v covers v·h per step, and contact_tol may be far smaller
                if frac is not None and h * frac >= 1e-6 * self.h_min:
                    h *= frac  # retry up to the interpolated onset of the contact
                    self.onsets_located += 1
                    continue
            if ok and self.error_tol is not None:
                err = self.error_estimate(state[5], h)
                factor = min(2.0, max(0.25, 0.9 * max(err, 1e-12) ** (-1.0 / 3.0)))
                if err > 1.0:
                    if h * factor < self.h_min:
                        self.system._angles = accepted
                        self.status = "failed"
                        self.message = (f"the local error {err:.3g} × error_tol cannot be met "
                                        f"at t = {self.t + h:.6g} s even with h_min = "
                                        f"{self.h_min:g} s")
                        return False, self.message
                    h *= factor
                    self.rejected += 1
                    continue
                self.h = min(self.h_max, h * factor)
            if ok:
                q0, qd0 = self.q, self.qd
                self.t, self.q, self.qd, self.qdd, self.lam, self.a = state
                if self.contacts:
                    try:
                        self._after_contact_step(q0, qd0, h)
                    except FlexmbsError as exc:  # e.g. an impulse contact at rest
                        self.status, self.message = "failed", str(exc)
                        return False, self.message
                self.stats.t.append(self.t)
                self.stats.h.append(h)
                self.stats.iterations.append(iters)
                self._refreshes_accepted = self.refreshes
                return True, ""
            h /= 2
            self.matrix.lu = None
            if h < self.h_min:
                self.system._angles = accepted
                self.status = "failed"
                self.message = message + f"; step reduced below h_min = {self.h_min:g} s"
                return False, self.message


    # ----------------------------------------------------------- restart points
    def checkpoint(self) -> dict:
        """The state after the last accepted step that a continuation needs to take the
        same steps (:mod:`flexmbs.integrators.checkpoint`): q, q̇, q̈, λ, a, t, h, the
        iteration matrix in use with its step, unless a step cut short rebuilt it (the
        continuation then builds a fresh one), and the angle memory of the rotational
        springs (``System.unwrap``)."""
        matrix = None
        if self.matrix.lu is not None and self.refreshes == self._refreshes_accepted:
            matrix = (self.compiled.work.matrix.copy() if self.compiled is not None
                      else self.matrix.matrix)
        return {"t": self.t, "q": self.q, "qd": self.qd, "qdd": self.qdd, "lam": self.lam,
                "a": self.a, "h": self.h, "matrix": matrix,
                "matrix_h": self._matrix_h if matrix is not None else None,
                "refreshes": self.refreshes, "rejected": self.rejected,
                "formulation": self.formulation.value,
                "angles": dict(self.system._angles)}

    def restore(self, cp: dict, step_sizes=(), iterations=()) -> None:
        """Continue from the restart point ``cp`` (of :meth:`checkpoint`); the step
        sizes and Newton iterations of the steps before it keep the statistics and the
        rebuild policy where they were."""
        self.t = float(cp["t"])
        self.q, self.qd, self.qdd, self.lam, self.a = (
            np.array(cp[k], dtype=float) for k in ("q", "qd", "qdd", "lam", "a"))
        self.h = float(cp["h"])
        self.refreshes = self._refreshes_accepted = int(cp["refreshes"])
        self.rejected = int(cp["rejected"])
        # the rotational springs continue their angles (a spring wound past ±π)
        self.system._angles.update(cp.get("angles") or {})
        self.stats.h, self.stats.iterations = list(step_sizes), list(iterations)
        self.stats.t = list(self.t - np.sum(step_sizes) + np.cumsum(step_sizes))
        matrix = cp.get("matrix")
        self.matrix.lu, self._matrix_h = None, None
        if matrix is not None:
            matrix = np.array(matrix, dtype=float)
            if self.compiled is not None:
                self.compiled.work.matrix[...] = matrix
                self.matrix.lu, self.matrix.age = self.compiled.factor(
                    self.compiled.work.matrix), 0
            else:
                self.matrix.factor(matrix)
            self._matrix_h = float(cp["matrix_h"])

    def _after_contact_step(self, q0, qd0, h) -> None:
        """Commit contact states and dissipation; apply restitution impulses (then the
        accelerations and multipliers are those of the new velocities)."""
        commit_contacts(self.system, self.contacts, q0, qd0, self.q, self.qd, h)
        qd, lost = apply_impulses(self.system, self.contacts, self.q, self.qd, self.t,
                                  self.contact_tol)
        if lost:
            self.qd = qd
            self.qdd, self.lam = accelerations(self.system, self.q, self.qd, self.t)
            self.a = self.qdd.copy()


def _describe_model(system: System) -> dict:
    """Markers (body-frame origin; modal rows of flexible-body markers) and joints."""
    markers = {}
    for full, marker in system.model.markers.items():
        entry = {"body": marker.body, "position": [float(v) for v in marker.position]}
        body = system.model.bodies.get(marker.body)
        modes = getattr(body, "marker_modes", {}).get(marker.name)
        if modes is not None:
            entry["position"] = [float(v) for v in modes.u0]
            entry["phi"] = np.asarray(modes.phi).tolist()
        markers[full] = entry
    joints = [{"name": j.name, "kind": j.kind, "i": j.marker_i, "j": j.marker_j}
              for j in system.model.joints]
    return {"markers": markers, "joints": joints}


def _describe_bodies(system: System) -> dict:
    """Per body: kind, coordinate range and what post-processing needs so results stand
    on their own: for flexible bodies nodes, shapes, cells, node labels and a beam's
    section outline; for rigid bodies mass, inertia and the drawing geometry."""
    from ..modal.fe.beam import section_outline

    out = {}
    for body, sl in zip(system.bodies, system.slices, strict=True):
        info = {"kind": type(body).__name__, "start": sl.start, "n_coords": body.n_coords}
        if hasattr(body, "data"):
            info.update(n_modes=body.n_modes, coupling=body.coupling.value,
                        nodes=body.data.nodes, phi=body.data.phi,
                        node_ids=body.data.node_ids, cells=dict(body.data.cells))
            if body.data.modal_fields:  # stress modes and other per-node fields
                info["fields"] = dict(body.data.modal_fields)
            outline = section_outline(body.data.metadata)
            if outline is not None and "line" in body.data.cells:
                info.update(section_size=[outline["width_y"], outline["height_z"]],
                            section_axes=[outline["y_axis"], outline["z_axis"]])
        elif hasattr(body, "inertia"):  # rigid: what its drawing needs
            info.update(mass=float(body.mass), com=np.asarray(body.com, float),
                        inertia=np.asarray(body.inertia, float))
            if getattr(body, "shape", None) is not None:
                info.update(shape_points=body.shape.points,
                            shape_triangles=body.shape.triangles)
        out[body.name] = info
    return out


def _hermite(t0, t1, y0, y1, d0, d1, t):
    """Cubic Hermite interpolation of y (with derivatives d) at t in [t0, t1]."""
    h = t1 - t0
    s = (t - t0) / h
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
    return h00 * y0 + h10 * h * d0 + h01 * y1 + h11 * h * d1


def simulate(system: System, t_end: float, h: float, method: str = "generalized-alpha",
             *, output_every: int = 1, t_out=None, progress=None, restart=None,
             **options) -> SimulationResult:
    """Integrate from the consistent initial state to ``t_end`` with step ``h``.

    ``method``: "newmark" (options beta, gamma), "hht" (alpha) or "generalized-alpha"
    (rho_inf); the remaining options go to :class:`AlphaIntegrator`. Unknown options raise
    TypeError naming them. Output: every ``output_every``-th step, or at the times
    ``t_out`` (cubic Hermite interpolation between steps; the step size is not forced).
    ``progress(t, t_end)`` is called after every step. A failure stops the run and returns
    what was computed, with ``success=False`` and the reason.

    ``restart``: a SimulationResult of this model (one that ended early, or a shorter
    run) to continue from its restart point (:mod:`flexmbs.integrators.checkpoint`) up
    to ``t_end``; the result holds the whole history, and with the same settings it is
    the uninterrupted run's to round-off.
    """
    if method not in METHODS:
        raise ValidationError(f"method {method!r} is not one of {sorted(METHODS)}")
    limits = _range_limits(options.pop("range_limits", None))
    # sampled controllers and the model inputs they drive (docs/cosimulation.md)
    controllers = list(options.pop("controllers", None) or ())
    signals = options.pop("signals", None) or {}
    if controllers and restart is not None:
        raise ValidationError("a run with controllers cannot be continued from a restart "
                              "point: the controllers' own states are not stored in it; "
                              "run it again from the start")
    method_keys = {"newmark": {"beta", "gamma"}, "hht": {"alpha"},
                   "generalized-alpha": {"rho_inf"}}[method]
    integ_keys = {"t0", "q0", "qd0", "rtol", "atol", "phi_tol", "max_iter", "h_min",
                  "fd_step", "error_tol", "h_max", "acc_rtol", "tangents", "refresh_above",
                  "contact_tol", "h_contact", "engine", "on_compile", "formulation"}
    unknown = set(options) - method_keys - integ_keys
    if unknown:
        raise TypeError(f"simulate(method={method!r}) got unknown option(s) "
                        f"{sorted(unknown)}; it takes {sorted(method_keys | integ_keys)}")
    params = METHODS[method](**{k: options.pop(k) for k in list(options)
                                if k in method_keys})
    cp = None
    if restart is not None:
        from .checkpoint import restart_point

        given = sorted({"t0", "q0", "qd0"} & set(options))
        if given:
            raise ValidationError(f"restart continues from the restart point of the "
                                  f"previous result: {given} do not apply")
        cp = restart_point(restart, system, t_end)
        options.update(t0=float(cp["t"]), q0=cp["q"], qd0=cp["qd"])
    t_start = float(options.get("t0", 0.0))
    if (cp is None and getattr(system.model, "initial", ())
            and "q0" not in options and "qd0" not in options):
        from ..assembly.initial import initial_state  # joint-coordinate conditions

        options["q0"], options["qd0"] = initial_state(system, t_start)
    if not (np.isfinite(t_end) and t_end > t_start):
        raise ValidationError(f"t_end = {t_end!r} s must be a finite time after the start "
                              f"t0 = {t_start:g} s")
    if not (isinstance(output_every, int) and output_every >= 1):
        raise ValidationError(f"output_every must be an integer >= 1, got {output_every!r}")
    if t_out is not None:
        t_out = np.asarray(t_out, dtype=float)
        t_start = float(restart.t[0]) if cp else float(options.get("t0", 0.0))
        if t_out.size == 0 or np.min(t_out) < t_start or np.max(t_out) > t_end + 1e-12:
            raise ValidationError(f"output_times must lie in [{t_start:g}, {t_end:g}] s")
    start = time.perf_counter()
    integ = AlphaIntegrator(system, params, h, **options)
    if cp:
        integ.restore(cp, restart.h, restart.iterations)
    setup_time = time.perf_counter() - start
    report = system.check(integ.q, integ.t)
    if report.redundant:
        raise ModelError(
            f"the model has {len(report.redundant)} redundant constraint equation(s): "
            f"{', '.join(report.redundant)}; the integrator needs independent equations: "
            f"{report.advice or 'remove them (a joint with fewer equations where a loop closes)'}")
    rec = {k: [] for k in ("t", "q", "qd", "qdd", "lam")}
    memory: list = []  # the angle memory at each output (None: not known)
    # state-dependent quantities (contacts: mode, impact speed, stick anchors) are taken
    # when each output is recorded
    derived = {k: [] for k in ("energy", "power", "contact_power", "dissipated")}
    contact_rec = {c.name: {k: [] for k in CONTACT_FIELDS} for c in integ.contacts}

    def derive():
        """Contact quantities of the newest output (they depend on the contacts' states
        at that time, and so does the power of a model with contacts); energies, and the
        power of a model without contacts, come after the run from the outputs. The angle
        memory (System.unwrap) is kept with every output: the turns of the forces' angles
        for the energies and sensors after the run (output_angles)."""
        memory.append(dict(system._angles))
        if not integ.contacts:
            return
        q_k, qd_k = rec["q"][-1], rec["qd"][-1]
        if integ.contacts:
            derived["power"].append(system.nonconservative_power(
                q_k, qd_k, rec["lam"][-1], float(rec["t"][-1])))
        derived["contact_power"].append(-sum(c.dissipation_power(system, q_k, qd_k)
                                             for c in integ.contacts))
        derived["dissipated"].append(sum(c.state.dissipated for c in integ.contacts))
        for c in integ.contacts:
            values = c.record(system, q_k, qd_k)
            values["dissipated"] = c.state.dissipated
            for key in CONTACT_FIELDS:
                contact_rec[c.name][key].append(values[key])

    def record():
        for key in rec:
            rec[key].append(np.array(getattr(integ, key)))  # a copy (np.copy, faster)
        derive()

    outputs = None if t_out is None else np.sort(np.asarray(t_out, dtype=float))
    next_out = 0
    if cp:  # the history so far, then on from the restart point
        for key in rec:
            rec[key] = list(np.asarray(getattr(restart, key)))
        memory.extend([None] * len(rec["t"]))
        next_out = cp["next_output"]
    elif outputs is None:
        record()
    else:
        while next_out < outputs.size and outputs[next_out] <= integ.t + 1e-14:
            record()
            rec["t"][-1] = np.array(outputs[next_out])
            if integ.contacts:
                derived["power"][-1] = system.nonconservative_power(
                    rec["q"][-1], rec["qd"][-1], rec["lam"][-1], float(outputs[next_out]))
            next_out += 1
    ranges = body_ranges(system)
    adaptive = options.get("error_tol") is not None
    numerical = NumericalWarnings()
    control = None
    if controllers:
        control = (controllers, ModelView(system, integ, signals))
        for ctrl in controllers:
            ctrl.start(control[1])
    with numerical:
        success, message, diverged, interrupted, steps, next_out, stepping = _step_loop(
            system, integ, t_end, h, adaptive, limits, ranges, outputs, next_out, rec,
            record, derive, progress, output_every, numerical, cp["steps"] if cp else 0,
            control)
    earlier = restart.statistics if cp else {}
    stepping += float(earlier.get("stepping_time", 0.0))
    checkpoint = {**integ.checkpoint(), "steps": steps, "next_output": next_out,
                  "stepping_time": stepping}
    if numerical.count and not success:
        message = f"{message}; before it: {numerical.sentence()}"
    post_start = time.perf_counter()
    with numerical:
        refs = output_angles(system, np.array(rec["t"]), np.array(rec["q"]),
                             np.array(rec["qd"]), memory)
        energies, viol, work = _output_quantities(system, integ, rec, derived, refs)
    t = np.array(rec["t"])
    q, qd = np.array(rec["q"]), np.array(rec["qd"])
    lam_hist = np.array(rec["lam"])
    phi_v, vel_v = viol.reshape(-1, 2).T
    elastic = np.zeros(t.size)
    for body, sl in zip(system.bodies, system.slices, strict=True):
        if hasattr(body, "data"):
            xi = q[:, sl][:, 7:]
            elastic += 0.5 * np.einsum("ti,ij,tj->t", xi, body.data.K_ff, xi)
    warns = run_warnings(ranges, t, q, qd, energies[:, 0] + energies[:, 1], work,
                         energies[:, 0], limits)
    if success and numerical.count:
        warns.append(numerical.run_warning())
    status = INTERRUPTED if interrupted else status_of(success, diverged, warns)
    if status == WARNINGS:
        message = "completed with warnings: " + "; ".join(w.message for w in warns)
    iterations = np.array(integ.stats.iterations)
    statistics = {
        "engine": integ.engine.value, "engine_note": integ.engine_note,
        "kernels": integ.compiled.kernels if integ.compiled is not None else "",
        "formulation": integ.formulation.value,
        "steps": int(iterations.size), "rejected_steps": int(integ.rejected),
        "newton_iterations": int(iterations.sum()),
        "iterations_per_step": float(iterations.mean()) if iterations.size else 0.0,
        "factorizations": int(integ.refreshes), "compile_time": float(integ.compile_time),
        "stepping_time": float(stepping),
        "output_time": float(time.perf_counter() - post_start),
        "setup_time": float(setup_time)}
    if interrupted:
        statistics["interrupted_by"] = interrupted
    if cp:
        statistics["restarts"] = [*earlier.get("restarts", []), float(cp["t"])]
    contacts = {c.name: {**{k: np.array(v) for k, v in contact_rec[c.name].items()},
                         "impacts": int(c.state.impacts)} for c in integ.contacts}
    qdd_hist = np.array(rec["qdd"]).reshape(q.shape)
    sensors = _sensor_records(system, t, q, qd, qdd_hist, lam_hist, contacts, statistics,
                              refs)
    return SimulationResult(
        t, q, qd, qdd_hist, lam_hist, energies[:, 0],
        energies[:, 1], elastic, work, phi_v, vel_v, np.array(integ.stats.h),
        np.array(integ.stats.iterations), system.coord_names, system.constraint_names,
        {"method": params.name, "h": h, **{k: v for k, v in options.items()
                                          if k not in ("q0", "qd0", "on_compile")}},
        system.coupling, success, message, time.perf_counter() - start,
        _describe_bodies(system), _describe_model(system), contacts, statistics,
        status, [w.as_dict() for w in warns], checkpoint, sensors=sensors)


def _sensor_records(system, t, q, qd, qdd, lam, contacts, statistics, refs) -> dict:
    """The sensors' histories as result records; a sensor that cannot be evaluated is
    recorded as NaN and named in ``statistics["sensor_errors"]`` (the run is kept).
    ``refs``: the forces' angles at the outputs (:func:`output_angles`)."""
    from ..assembly.sensors import sensor_history

    out = {}
    for sensor in getattr(system.model, "sensors", ()):
        try:
            hist = sensor_history(system, sensor, t, q, qd, qdd, lam, contacts,
                                  angle_refs=refs)
            values, units, comps = hist.values, hist.units, list(hist.components)
        except Exception as exc:  # keep the run: say which sensor failed and why
            statistics.setdefault("sensor_errors", {})[sensor.name] = (
                f"{type(exc).__name__}: {exc}")
            values, units, comps = np.full((len(t), 1), np.nan), "-", ["value"]
        out[sensor.name] = {"values": values, "units": units, "components": comps,
                            "kind": sensor.kind, "quantity": sensor.quantity,
                            "target": sensor.target, "frame": sensor.frame,
                            "node": sensor.node}
    return out


def _output_quantities(system, integ, rec, derived, refs):
    """Energies (n_t, 2) [J], violations (n_t, 2) and the non-conservative work (n_t,)
    [J] at the recorded outputs, after the run (one kernel call on the compiled path).
    ``refs`` ({force: (n_t,) angle}, :func:`output_angles`) give each rotational
    spring's turns at every output, so a spring wound several turns has its potential
    however far apart the outputs; the System's memory is left as the run left it."""
    t = np.array(rec["t"])
    q, qd = np.array(rec["q"]), np.array(rec["qd"])
    lam_hist = np.array(rec["lam"])
    if integ.compiled is not None:  # one kernel call for every output
        names = integ.compiled.torsion_names
        outs = integ.compiled.outputs(t, q, qd, lam_hist, np.column_stack(
            [refs[n] for n in names]) if names else np.zeros((t.size, 0)))
        energies, viol = outs[:, :2], outs[:, 3:]
        derived["power"] = list(outs[:, 2])
    else:
        after_run, system._angles = system._angles, {}
        try:
            energies = np.empty((t.size, 2))
            for k in range(t.size):
                system._angles.update({name: float(v[k]) for name, v in refs.items()})
                energies[k] = system.energy(q[k], qd[k])
            viol = np.array([system.violations(a, b, tt)
                             for a, b, tt in zip(q, qd, t, strict=True)])
            if not integ.contacts:
                derived["power"] = [system.nonconservative_power(a, b, c, float(tt))
                                    for a, b, c, tt in zip(q, qd, lam_hist, t, strict=True)]
        finally:
            system._angles = after_run
    # contacts' dissipation is integrated step by step (it lasts a few steps), the rest
    # trapezoidally over the outputs
    power = np.array(derived["power"])
    work = np.zeros(t.size)
    if integ.contacts:
        power = power - np.array(derived["contact_power"])
        work -= np.array(derived["dissipated"])
    work += np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(t))])
    return energies, viol, work


def _step_loop(system, integ, t_end, h, adaptive, limits, ranges, outputs, next_out, rec,
               record, derive, progress, output_every, numerical, k=0, control=None):
    """The steps from integ.t to t_end with outputs, divergence checks, progress and the
    gathering of floating-point warnings, counting steps from ``k``; with ``control``
    (controllers, their view of the model) the controllers sample at their times and
    the steps land on them. Returns (success, message, diverged, interrupted (what by:
    "Ctrl-C", "SIGTERM" or ""), steps, next output index, stepping time [s])."""
    stepping = 0.0  # [s] in integ.step()
    success, message, diverged, interrupted = True, "completed", False, ""
    with StepInterrupts() as interrupts:
        while integ.t < t_end - 1e-12 * max(1.0, abs(t_end)):
            if interrupts.reason is not None:  # a signal came during the last step
                success, message = False, _interrupted_message(integ.t, interrupts.reason)
                interrupted = interrupts.reason
                break
            integ.h = min(integ.h if adaptive else h, t_end - integ.t)
            land = None
            if control is not None:
                try:
                    integ.h, land = next_step(control[0], control[1], integ.h, t_end)
                except Exception as exc:  # a controller failed: keep the run so far
                    success, message = False, (f"stopped at t = {integ.t:.6g} s: controller: "
                                               f"{type(exc).__name__}: {exc}")
                    break
            # the state at t_n, for interpolating outputs inside the step (the integrator
            # replaces its arrays at each step: references suffice)
            prev = (integ.t, integ.q, integ.qd, integ.qdd, integ.lam)
            h_step = integ.h
            tic = time.perf_counter()
            try:
                ok, msg = integ.step()
                numerical.collect(integ.t if ok else integ.t + integ.h)  # the step's end
            except KeyboardInterrupt:
                success, message = False, _interrupted_message(integ.t, "Ctrl-C")
                interrupted = "Ctrl-C"
                break
            except Exception as exc:  # a profile, callable or controller failed: keep it
                success, message = False, (f"stopped at t = {integ.t:.6g} s: "
                                           f"{type(exc).__name__}: {exc}")
                break
            finally:
                stepping += time.perf_counter() - tic
            if not ok:
                success, message = False, msg
                break
            if land is not None and abs(integ.t - land) <= 1e-9 * h_step:
                integ.t = float(land)  # a controller's sample time (a step cut short,
                # by Newton or a contact, lands before it: the loop goes on)
            if abs(integ.t - t_end) < 1e-12 * max(1.0, abs(t_end)):
                integ.t = float(t_end)  # land exactly on t_end
            k += 1
            if k % limits.check_every == 0:
                reason = divergence(ranges, integ.q, integ.t, limits)
                if reason is not None:
                    success, message, diverged = False, reason, True
                    if outputs is None:
                        record()  # the diverged state, for the post-mortem
                    break
            if outputs is None:
                if k % output_every == 0 or integ.t >= t_end - 1e-12:
                    record()
            else:
                t0, q0, qd0, qdd0, lam0 = prev
                while next_out < outputs.size and outputs[next_out] <= integ.t + 1e-14:
                    tt = outputs[next_out]
                    w = (tt - t0) / (integ.t - t0)
                    rec["t"].append(np.array(tt))
                    rec["q"].append(_hermite(t0, integ.t, q0, integ.q, qd0, integ.qd, tt))
                    rec["qd"].append(_hermite(t0, integ.t, qd0, integ.qd, qdd0, integ.qdd, tt))
                    rec["qdd"].append((1 - w) * qdd0 + w * integ.qdd)
                    rec["lam"].append((1 - w) * lam0 + w * integ.lam)
                    derive()
                    next_out += 1
            if progress is not None:
                try:
                    progress(integ.t, t_end)
                except KeyboardInterrupt:
                    success, message = False, _interrupted_message(integ.t, "Ctrl-C")
                    interrupted = "Ctrl-C"
                    break
    return success, message, diverged, interrupted, k, next_out, stepping


def _interrupted_message(t: float, reason: str) -> str:
    return (f"interrupted at t = {t:.6g} s ({reason}); the results up to there are kept "
            f"(flexmbs run --restart continues them)")


def _range_limits(value) -> RangeLimits:
    """``range_limits`` of :func:`simulate`: None (the defaults), a RangeLimits, or a
    dict of its fields (unknown keys are refused by name)."""
    if value is None:
        return RangeLimits()
    if isinstance(value, RangeLimits):
        return value
    if isinstance(value, dict):
        known = set(RangeLimits.__dataclass_fields__)
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValidationError(f"range_limits: unknown key(s) {unknown}; it takes "
                                  f"{sorted(known)}")
        return RangeLimits(**value)
    raise ValidationError(f"range_limits must be a dict or RangeLimits; got "
                          f"{type(value).__name__}")


