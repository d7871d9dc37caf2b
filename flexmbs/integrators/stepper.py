"""The generalized-α step as an object (docs/theory_integrators.md): Newton on analytic
(or finite-difference) tangents, compiled or NumPy, index 3 or stabilized index 2, step
halving on Newton failure, error estimates, checkpoints, contact events (:func:`simulate`)."""

from __future__ import annotations

import time

import numpy as np

from ..assembly.system import System
from ..assembly.tangents import residual_tangents
from ..compiled.codes import P_BOUNDED, P_H, P_T1, step_parameters
from ..errors import FlexmbsError, ValidationError
from .alpha import AlphaParameters, NewtonMatrix
from .checkpoint import kept_matrix, restored_matrix
from .contact_steps import ContactSteps
from .diagnostics import failure_message, nonfinite_head, one_attempt
from .options import (
    NEWTON_PRESETS,
    REFRESH_ABOVE,
    REFRESH_ABOVE_LARGE,
    REFRESH_LARGE_FROM,
    Engine,
    Formulation,
    Tangents,
    pick_formulation,
)
from .real_time import StateBuffers, check_real_time
from .reference import accelerations
from .step_log import StepLog


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
        residual evaluations, ``REFRESH_ABOVE_LARGE`` (6) from the order at which the
        compiled engine factors sparse; None with finite-difference tangents (dozens).
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
                 q0=None, qd0=None, rtol: float = NEWTON_PRESETS["default"]["rtol"],
                 atol: float = NEWTON_PRESETS["default"]["atol"],
                 phi_tol: float = NEWTON_PRESETS["default"]["phi_tol"], max_iter: int = 12,
                 h_min: float | None = None, fd_step: float = 1e-7,
                 error_tol: float | None = None, h_max: float | None = None,
                 acc_rtol: float = NEWTON_PRESETS["default"]["acc_rtol"],
                 tangents: str = "analytic", refresh_above: int | str | None = "auto",
                 contact_tol: float = 1e-6, h_contact: float | None = None,
                 engine: str = "auto", on_compile=None, formulation: str = "auto",
                 real_time: bool = False, real_time_iterations: int = 2,
                 real_time_matrix: str = "per-step"):
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
        check_real_time(real_time, real_time_iterations, real_time_matrix, error_tol,
                        h_contact)
        #: real-time mode (docs/integrators.md): a fixed step, at most
        #: ``real_time_iterations`` Newton iterations then accepted, the iteration matrix
        #: frozen after the first step or rebuilt once per step, no step halving
        self.real_time = real_time
        self.real_time_iterations, self.real_time_matrix = (real_time_iterations,
                                                            real_time_matrix)
        #: real-time steps accepted after their fixed iterations without meeting the
        #: tolerances
        self.bounded_steps = 0
        try:
            self.tangents = Tangents(tangents)
        except ValueError:
            raise ValidationError(f"tangents must be one of {[m.value for m in Tangents]}, "
                                  f"got {tangents!r}") from None
        if refresh_above == "auto":  # by the cost of a build
            large = system.n_q + system.n_c >= REFRESH_LARGE_FROM
            refresh_above = (None if self.tangents is not Tangents.ANALYTIC
                             else REFRESH_ABOVE_LARGE if large else REFRESH_ABOVE)
        if refresh_above is not None and not (isinstance(refresh_above, int)
                                              and refresh_above >= 1):
            raise ValidationError(f"refresh_above must be an integer >= 1, None or 'auto', got "
                                  f"{refresh_above!r}")
        self.refresh_above = refresh_above
        self.contact_steps = ContactSteps(system, contact_tol, h_contact)
        self.contacts = self.contact_steps.contacts
        self.formulation = pick_formulation(formulation, params, system.n_c)
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
        self.halvings = 0  #: attempts Newton did not converge, taken again at half the step
        self.last_step = None  #: [s] of the last accepted step (h/2ⁱ after halvings)
        self.t = float(t0)
        # A run starts from its own initial state: the angle memory of rotational springs
        # and sensors (System.unwrap) left by an earlier run on this System does not carry
        # over (the first angle lies in (−π, π]); a restart continues the stored one
        # (restore), a co-simulation state sets its own (cosim.Simulation.set_state).
        system.angle_memory.clear()
        #: the joint servos, whose sampled integrals advance with each accepted step
        self.servos = [f for f in system.model.forces
                       if getattr(f, "element_kind", None) == "joint_servo"]
        for servo in self.servos:
            servo.restart(self.t)
        self.q = system.assemble(q0, t=self.t)
        self.qd = system.project_velocity(self.q, qd0, self.t)
        self.matrix = NewtonMatrix()
        self._groups = system.fd_column_groups()  # column groups of the "fd" tangents
        self.refreshes = 0  # iteration-matrix builds (tangents + factorisation)
        self._matrix_h = None
        self._refreshes_accepted = 0  # self.refreshes at the last accepted step
        #: accepted steps taken in batches of one kernel call (:mod:`.step_batch`), and
        #: a batch's converged step that waits for the contacts' handling (PendingAttempt)
        self.batched_steps, self.pending = 0, None
        self.status, self.message = "running", ""
        #: the accepted steps per output interval and the run's totals (:class:`StepLog`:
        #: its size grows with the outputs, not the steps)
        self.stats = StepLog()
        self._select_engine(engine, on_compile)
        self.qdd, self.lam = accelerations(system, self.q, self.qd, self.t, compiled=self.compiled)
        self.a = self.qdd.copy()
        if self.real_time and self.engine is not Engine.COMPILED:
            raise ValidationError(f"real_time needs the compiled engine, and this run takes "
                                  f"the NumPy path: {self.engine_note}")
        self._rt_buffers = StateBuffers()  # the real-time state's two sets, in turn
        self._rt_factors = None  # the real-time step's dense factor buffers

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
        from ..engine.compiled_system import CompiledSystem, jit_disabled

        imports = time.perf_counter() - start
        from ..engine.tables import unsupported_reason

        if jit_disabled():
            reason = "NUMBA_DISABLE_JIT is set"
        elif self.tangents is not Tangents.ANALYTIC:
            reason = "finite-difference tangents requested"
        else:
            reason = unsupported_reason(self.system)
        if reason is not None:
            if self.engine is Engine.COMPILED:
                raise ValidationError(f"engine='compiled' cannot run this model: {reason}")
            self.engine, self.engine_note = Engine.PYTHON, reason
            return
        from ..engine import prebuilt

        start = time.perf_counter()
        build, why = prebuilt.ensure_loaded()
        imports += time.perf_counter() - start  # linking the prebuilt kernel
        if build is None and self.engine is Engine.AUTO:
            from ..engine import warmup

            # compiled, being compiled in the background, or to be compiled now: as
            # FLEXMBS_BACKGROUND_COMPILE says (docs/compiled.md)
            note = warmup.automatic_run_note(why)
            if note is not None:
                self.engine, self.engine_note = Engine.PYTHON, note
                return
        from ..compiled import codes

        self.engine, self._codes = Engine.COMPILED, codes  # the step kernel's numbers
        if build is None:  # numba's kernels: a background compilation may be filling the
            from ..engine import warmup  # cache; do not compile them twice

            warmup.wait_while_compiling()
        self.compiled = CompiledSystem(self.system, on_compile=on_compile)
        self.compiled.callbacks.fd_step = self.fd_step  # the callables' derivative rows
        self.contact_steps.compiled = self.compiled
        if build is None:
            warmup.mark_ready()
        # importing the engine, linking the prebuilt kernel or else importing numba and
        # loading (or compiling) its kernels, and the warm-up call
        self.compile_time = imports + self.compiled.compile_time

    # ----------------------------------------------------------- pieces
    def _coefficients(self, h):
        p = self.params  # (β', γ')
        return (1 - p.alpha_m) / (p.beta * h * h * (1 - p.alpha_f)), p.gamma / (p.beta * h)

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
        self.matrix.factor(np.block([[top, jac.T], [jac, np.zeros((jac.shape[0],) * 2)]]))
        self._matrix_h = h  # the step this matrix was built for
        self.refreshes += 1

    def _fd_tangents(self, q, qd, qdd, lam, t):
        """K_t, C_t by grouped forward differences of the whole residual."""
        n, eps = self.system.n_q, self.fd_step
        base = self._residual(q, qd, qdd, lam, t)
        k_t, c_t = np.zeros((n, n)), np.zeros((n, n))
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
        return (self.refresh_above is not None
                and self.stats.last_iterations > self.refresh_above)

    def matrix_stale(self, h: float) -> bool:
        """Whether a step of size ``h`` [s] starts with a new iteration matrix: none
        yet, one built for another step size, or a last step that needed more than
        ``refresh_above`` iterations."""
        return self.matrix.lu is None or self._matrix_h != h or self._slow_last_step()

    def use_factors(self, factors, h: float) -> None:
        """Take ``factors`` (the compiled engine's, of a matrix built for steps of ``h``)
        as the iteration matrix in use."""
        self.matrix.lu, self.matrix.age = factors, 0
        self._matrix_h = h

    def mark_accepted(self, refreshes_after: int = 0) -> None:
        """The iteration matrix in use is the last accepted step's, unless
        ``refreshes_after`` factorizations have been made since (a failed attempt's)."""
        self._refreshes_accepted = self.refreshes - refreshes_after

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
        stale = self.matrix_stale(h)
        last = np.inf
        floor = 16 * np.finfo(float).eps
        index2 = self.formulation is Formulation.STABILIZED_INDEX2
        singular = nonfinite_head(self, t1)
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

    def step_parameters(self):
        """A new ``par`` of the step kernel (:func:`flexmbs.compiled.codes.step_parameters`)
        with the method's α_m, α_f, β, γ, the Newton tolerances and the formulation."""
        p = self.params
        return step_parameters(alpha_m=p.alpha_m, alpha_f=p.alpha_f, beta=p.beta,
                               gamma=p.gamma, rtol=self.rtol, atol=self.atol,
                               acc_rtol=self.acc_rtol, phi_tol=self.phi_tol,
                               index2=float(self.formulation is Formulation.STABILIZED_INDEX2))

    def _try_step_compiled(self, h):
        """:meth:`_try_step` in compiled code (:func:`flexmbs.engine.newton.newton_step`):
        one kernel call per step, plus one factorisation (LAPACK, or SuperLU for large
        models) per matrix refresh."""
        cs, nk = self.compiled, self._codes
        work = cs.work
        t1 = self.t + h
        if self._step_buffers is None:  # (par, profiles, actuator values), reused
            self._step_buffers = (self.step_parameters(), *cs.time_values(t1))
        par, prof, u = self._step_buffers
        par[P_H], par[P_T1] = h, t1
        cs.time_values_into(t1, prof, u)
        if self.real_time:  # bounded: fixed iterations, the matrix frozen or per step
            par[P_BOUNDED] = 1.0
            max_iter = self.real_time_iterations
            stale = (self.matrix.lu is None or self._matrix_h != h
                     or self.real_time_matrix == "per-step")
        else:
            max_iter = self.max_iter
            stale = self.matrix_stale(h)
        work.counters[nk.STALE] = int(stale)
        factors = self.matrix.lu if self.matrix.lu is not None else cs.placeholder_factors()
        in_kernel = stale and self.real_time and not cs.sparse  # the kernel factors
        if in_kernel:
            if self._rt_factors is None:  # the real-time step's own factor buffers
                n = work.matrix.shape[0]
                self._rt_factors = cs.placeholder_factors()._replace(
                    lu=np.zeros((n, n)), piv=np.zeros(n, dtype=np.int64), by_kernel=True)
            factors = self._rt_factors
        code = cs.newton(self.q, self.qd, self.qdd, self.a, self.lam, par, max_iter,
                         prof, u, factors, True)
        if in_kernel and code != nk.NEED_FACTOR:
            self.use_factors(factors, h)
            self.refreshes += 1
        while code == nk.NEED_FACTOR:
            factors = cs.factor(work.matrix)
            self.use_factors(factors, h)
            self.refreshes += 1
            code = cs.newton(self.q, self.qd, self.qdd, self.a, self.lam, par, max_iter,
                             prof, u, factors, False)
        it = int(work.counters[nk.IT])
        if self.real_time and code in (nk.CONVERGED, nk.BOUNDED):
            self.bounded_steps += code == nk.BOUNDED
            return True, "", it, (t1, *self._rt_buffers.take(self.q, work))
        state = (work.q1.copy(), work.qd1.copy(), work.qdd1.copy(), work.lam1.copy())
        if code == nk.CONVERGED:
            return True, "", it, (t1, *state, work.a1.copy())
        if code == nk.MAX_ITER:
            head = (f"Newton did not converge in {self.max_iter} iterations at t = {t1:.6g} s "
                    f"(last scaled correction {work.floats[1]:.3g})")
        else:
            head = nonfinite_head(self, t1)
            if code == nk.NONFINITE_ERROR:
                return False, head, it, None
        return False, self._failure(head, *state, t1), it, None

    def _failure(self, head, q1, qd1, qdd1, lam1, t1) -> str:
        """``head`` plus the diagnostics at the iterate (diagnostics.failure_message)."""
        return failure_message(self, head, q1, qd1, qdd1, lam1, t1)

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
        if self.contacts:  # a contact is closed: resolve it
            h = self.contact_steps.step_size(h)
        # the angle memory of the accepted state (System.unwrap): every attempt starts from
        # it, and a failed or interrupted step leaves it (not a diverging iterate's angles)
        accepted = dict(self.system.angle_memory)
        try:
            return self._attempts(h, accepted)
        except BaseException:  # Ctrl-C inside a step, a failing profile or callable
            self.system.angle_memory = accepted
            raise

    def _attempts(self, h, accepted) -> tuple[bool, str]:
        """The attempts of :meth:`step` from step size ``h`` (``accepted``: the angle memory)."""
        attempt = 0
        while True:
            if attempt:
                self.system.angle_memory = dict(accepted)
            attempt += 1
            pending, self.pending = self.pending, None
            if pending is not None and attempt == 1 and pending.h == h:  # a batch's
                ok, message, iters, state, end = pending.resume(self)
            else:  # (a failed NumPy attempt's floating-point warnings go with it)
                ok, message, iters, state = one_attempt(
                    self._try_step, h, self.compiled, h / 2 < self.h_min or self.real_time)
                end = (self.contact_steps.end_samples(state[1], state[2])
                       if ok and self.contacts else None)
            if ok and self.contacts:
                frac = self.contact_steps.onset(self.q, self.qd, end, h)
                # locating an onset may take steps below h_min (a Newton-failure floor: an
                # impact covers v·h per step); real time keeps h (the onset at its end)
                if frac is not None and h * frac >= 1e-6 * self.h_min and not self.real_time:
                    h *= frac  # retry up to the interpolated onset of the contact
                    self.contact_steps.onsets_located += 1
                    continue
            if ok and self.error_tol is not None:
                err = self.error_estimate(state[5], h)
                factor = min(2.0, max(0.25, 0.9 * max(err, 1e-12) ** (-1.0 / 3.0)))
                if err > 1.0:
                    if h * factor < self.h_min:
                        self.system.angle_memory = accepted
                        self.status = "failed"
                        self.message = (f"the local error {err:.3g} × error_tol cannot be met "
                                        f"at t = {self.t + h:.6g} s even with h_min = "
                                        f"{self.h_min:g} s")
                        return False, self.message
                    h *= factor
                    self.rejected += 1
                    self.stats.reject()
                    continue
                self.h = min(self.h_max, max(self.h_min, h * factor))  # (h_min: floor)
            if ok:
                self.t, self.q, self.qd, self.qdd, self.lam, self.a = state
                self.last_step = h
                if self.contacts:
                    try:
                        self._after_contact_step(h, end)
                    except FlexmbsError as exc:  # e.g. an impulse contact at rest
                        self.status, self.message = "failed", str(exc)
                        return False, self.message
                for servo in self.servos:
                    servo.commit(self.system, self.t, self.q, self.qd, h)
                self.stats.add(h, iters)
                self.mark_accepted()
                return True, ""
            if self.real_time:  # a fixed step: no halving
                self.system.angle_memory = accepted
                self.status, self.message = "failed", message + " (real-time mode: no step halving)"
                return False, self.message
            h, self.halvings, self.matrix.lu = h / 2, self.halvings + 1, None
            if h < self.h_min:
                self.system.angle_memory = accepted
                self.status = "failed"
                self.message = message + f"; step reduced below h_min = {self.h_min:g} s"
                return False, self.message

    # ----------------------------------------------------------- restart points
    def checkpoint(self) -> dict:
        """The state after the last accepted step that a continuation needs to take the
        same steps (:mod:`flexmbs.integrators.checkpoint`): q, q̇, q̈, λ, a, t, h, the
        iteration matrix in use with its step, unless a step cut short rebuilt it (the
        continuation then builds a fresh one), and the angle memory of the rotational
        springs (``System.unwrap``), and the steps since the last output with the last
        step's Newton iterations (:class:`StepLog`)."""
        matrix = None
        if self.matrix.lu is not None and self.refreshes == self._refreshes_accepted:
            matrix = kept_matrix(self.compiled, self.matrix.matrix)
        return {"t": self.t, "q": self.q, "qd": self.qd, "qdd": self.qdd, "lam": self.lam,
                "a": self.a, "h": self.h, "matrix": matrix,
                "matrix_h": self._matrix_h if matrix is not None else None,
                "matrix_factored": ("kernel" if getattr(self.matrix.lu, "by_kernel", False)
                                    else "library"),
                "refreshes": self.refreshes, "rejected": self.rejected,
                "halvings": self.halvings, "formulation": self.formulation.value,
                "angles": dict(self.system.angle_memory),
                "interval": self.stats.open_interval(),
                "last_iterations": self.stats.last_iterations}

    def restore(self, cp: dict, steps: StepLog | None = None) -> None:
        """Continue from the restart point ``cp`` (of :meth:`checkpoint`); ``steps``: the
        record of the steps before it (:meth:`StepLog.resumed`; None: its open interval
        and last step's iterations alone), which keeps the statistics and the rebuild
        policy where they were."""
        self.t = float(cp["t"])
        self.contact_steps.start = None
        self.q, self.qd, self.qdd, self.lam, self.a = (
            np.array(cp[k], dtype=float) for k in ("q", "qd", "qdd", "lam", "a"))
        self.h = float(cp["h"])
        self.refreshes = self._refreshes_accepted = int(cp["refreshes"])
        self.rejected, self.halvings = int(cp["rejected"]), int(cp.get("halvings", 0))
        angles = cp.get("angles") or {}  # springs continue their angles (wound past ±π)
        memory = self.system.angle_memory
        for servo in self.servos:  # their integrals, kept with the angles (none yet: 0)
            memory.pop(servo.integral_key, None)
            servo.restart(self.t, angles.get(servo.integral_key, 0.0))
        memory.update(angles)
        self.stats = steps if steps is not None else StepLog.resumed(
            None, cp.get("interval"), cp.get("last_iterations"))
        matrix = cp.get("matrix")
        self.matrix.lu, self._matrix_h = None, None
        if matrix is not None:
            matrix = restored_matrix(self.compiled, matrix,
                                     self.system.n_q + self.system.n_c)
            if self.compiled is not None:  # factored as the interrupted run had it
                from ..engine.factors import restored_factors

                self.matrix.lu = restored_factors(self.compiled, matrix,
                                                  cp.get("matrix_factored", ""))
                self.matrix.age = 0
            else:
                self.matrix.factor(matrix)
            self._matrix_h = float(cp["matrix_h"])

    @property
    def onsets_located(self) -> int:
        """Steps shortened to locate a contact's onset."""
        return self.contact_steps.onsets_located

    def contact_samples(self, q, qd, at_state: bool = False) -> list:
        """The contacts' samples at (q, q̇) (:meth:`ContactSteps.samples`)."""
        return self.contact_steps.samples(q, qd, at_state)

    def _after_contact_step(self, h, end) -> None:
        """The contacts' switches and impulses after an accepted step (then the
        accelerations and multipliers are those of the new velocities)."""
        qd = self.contact_steps.after_step(self.q, self.qd, self.t, h, end)
        if qd is not None:
            self.qd = qd
            self.qdd, self.lam = accelerations(self.system, self.q, self.qd, self.t,
                                               compiled=self.compiled)
            self.a = self.qdd.copy()
