"""The compiled engine of one run: tables, buffers and the calls into the kernels
(docs/compiled.md).

:class:`CompiledSystem` compiles a :class:`~flexmbs.assembly.system.System` once into
packed arrays (:mod:`flexmbs.engine.tables`, :mod:`flexmbs.compiled.packing`) and
offers what the integrator needs: the drive and actuator values of a time level, the
Newton iteration of a step (:func:`flexmbs.engine.newton.newton_step`) and, for tests,
the residual and the iteration matrix.
"""

from __future__ import annotations

import copy
import math
import os
import threading
import time
import warnings

import numpy as np

from .._blas import scipy_module
from ..compiled.codes import (
    NEED_INPUTS,
    P_T1,
    TASK_CONTACTS,
    TASK_JACOBIAN,
    TASK_MATRIX,
    TASK_OUTPUTS,
    TASK_PIECES,
    TASK_RESIDUAL,
    TASK_STEP,
    TASK_STEPS,
    step_parameters,
)
from ..compiled.layout import pack
from ..contact.sample import C_ANCHORED, C_LA, C_LB, C_MODE, C_OFF, C_V_ONSET, samples_of
from ..elements.declaration import input_is_callable, input_width
from ..elements.registry import make_workspace
from ..errors import ModelError, ValidationError
from ..model.drives import drive_values
from .callbacks import CallableInputs
from .factors import Factors, kernel_factors, matrix_pattern, pack_sparse_factors
from .many_states import many_state_inputs
from .placeholders import UNREAD, Placeholders
from .tables import (
    compile_tables,
    drive_specs,
    forces_by_kind,
    time_inputs,
    torsion_springs,
    unsupported_reason,
)

#: Seconds after which a first kernel call is reported as compiling.
COMPILE_NOTICE_AFTER = 2.0

#: Iteration matrices of this order and above are factored sparse (SuperLU), smaller ones
#: dense (LAPACK getrf): the crossover of the steps measured on chains of flexible beams
#: (between orders 136 and 170, one BLAS thread), below the orders (about 160) from which
#: a multithreaded BLAS's getrf slowed the steps tenfold on a loaded machine
#: (docs/compiled.md, "Factorisation: dense or sparse"; benchmarks/bench_chain.py).
SPARSE_FROM = 150

#: Largest order of the iteration matrix whose steps run in batches, the matrix factored
#: inside the kernel (:meth:`CompiledSystem.steps`; docs/compiled.md, "Batches of
#: steps"): up to it the kernel's factorization plus the steps' saved returns to Python
#: cost less than LAPACK's factorization from Python.
BATCH_UP_TO = 100


def _force_kind(force) -> str:
    return "joint actuator" if hasattr(force, "profile") else "spring-damper actuator"


def jit_disabled() -> bool:
    """Whether numba's JIT is switched off (``NUMBA_DISABLE_JIT=1``)."""
    return os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


class CompiledSystem:
    """Packed tables and buffers of ``system`` and the kernel calls (one run).

    Raises ModelError naming what the kernels cannot evaluate (see
    :func:`~flexmbs.engine.tables.unsupported_reason`). ``sparse``: factor the
    iteration matrix with SuperLU (default: from order :data:`SPARSE_FROM` on).
    ``prebuilt``: run the shipped prebuilt step kernel if it fits this process
    (:mod:`flexmbs.engine.prebuilt`, without numba), else numba's (from its cache, or
    compiled now); ``kernels`` says which ran. Waiting for a background compilation
    and marking the kernels ready are the caller's (:mod:`flexmbs.engine.warmup`)."""

    def __init__(self, system, on_compile=None, sparse: bool | None = None,
                 prebuilt: bool = True):
        reason = unsupported_reason(system)
        if reason is not None:
            raise ModelError(f"the compiled engine cannot evaluate this model: {reason}")
        self.system = system
        tables = compile_tables(system)
        self.F, self.IN, self.H, self.tables = pack(tables, lazy=True)
        self.WF, self.WI, self.WH, self.work = pack(make_workspace(tables), lazy=True)
        self._time_sources(system)
        #: names of the rotational spring–dampers, whose angle memory (System.unwrap) the
        #: kernels keep in the workspace while they run
        self.torsion_names = [f.name for f in torsion_springs(system)]
        #: the contacts, in the order of the kernels' table; their states (which change
        #: between steps) go to the workspace with :meth:`load_contact_states`
        self.contacts = forces_by_kind(system).get("contact", [])
        self.load_contact_states(self.contacts)
        self.n_q, self.n_c = system.n_q, system.n_c
        n = self.n_q + self.n_c
        self.sparse = n >= SPARSE_FROM if sparse is None else bool(sparse)
        self._pattern = matrix_pattern(tables) if self.sparse else None
        self._dummy = Placeholders(self.n_q, self.n_c, self.n_rows, self.n_u)
        self._matrix_buffers = None  # (prof, u, par) of _state_call
        self._pieces = None  # (3, n, n): step_pieces' output, off-pattern zeros kept
        self._step_factors = None  # (lu, piv) of :meth:`factor`'s own LU
        from . import prebuilt as shipped

        self._step_task = TASK_STEP
        start = time.perf_counter()
        native = shipped.step_kernel() if prebuilt else None
        if native is not None:
            #: where the step kernel came from: "prebuilt for <cpu>" (shipped machine
            #: code, :mod:`flexmbs.engine.prebuilt`) or "compiled for this machine"
            #: (numba's, from its cache or compiled now)
            self.kernels = f"prebuilt for {shipped.loaded()['cpu']}"
            self._kernel = native
            native.skip_placeholders(vars(self._dummy).values(), UNREAD)
        else:
            self.kernels = "compiled for this machine"
            if (prebuilt and shipped.switched_off() is None
                    and shipped.failure() is not None):  # a damaged install: say so
                self.kernels += f" (the prebuilt kernel failed: {shipped.failure()})"
            from .newton import kernel

            self._kernel = kernel
        self._warm_up(on_compile)
        self.compile_time = time.perf_counter() - start

    def _time_sources(self, system) -> None:
        """The drives, servos and inputs of ``system`` whose values the kernels read from
        the time levels, and its state-dependent callables."""
        self.drives = drive_specs(system)
        #: the joint servos, whose references (θ_ref, θ̇_ref, offset torque) follow the
        #: drives' profiles in the time-level rows
        self.servos = forces_by_kind(system).get("joint_servo", [])
        self.n_rows = len(self.drives) + len(self.servos)
        #: the forces whose values the kernels read from u, in the order of its columns
        #: (a load vector's three); a time profile's set per time level, a callable's at
        #: every Newton iterate (:attr:`callbacks`)
        self.actuators = time_inputs(system)
        self._input_profiles, col = [], 0
        for f in self.actuators:
            if not input_is_callable(f):  # a time profile
                profile = getattr(f, "profile", None) or f.actuator
                self._input_profiles.append((col, f, profile))
            col += input_width(f)
        self.n_u = col
        #: the state-dependent callables: their evaluation and cost (docs/compiled.md,
        #: "Callables")
        self.callbacks = CallableInputs(system, self.actuators)

    def retabled(self, system):
        """A CompiledSystem of ``system``, a model of this one's structure with other
        values (a model moved along a parameter), sharing this one's kernel, workspace
        and pattern: its own tables' values and time values; None when the structure
        (the integer tables) differs. For many-state evaluations, one caller at a time
        (the workspace is this one's)."""
        F, IN, H, tables = pack(compile_tables(system), lazy=True)
        if not (np.array_equal(IN, self.IN) and np.array_equal(H, self.H)):
            return None
        out = copy.copy(self)
        out.system, out.F, out.tables = system, F, tables
        out._time_sources(system)
        return out

    # ----------------------------------------------------------- time levels
    def time_values(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(profiles (n_drives, 3): (s, ṡ, s̈) of every drive, u (n_u,)) at t, the
        callables' columns zero; a failing or non-finite profile raises ModelError
        naming it (new arrays)."""
        prof, u = np.empty((self.n_rows, 3)), np.zeros(self.n_u)
        self.time_values_into(t, prof, u)
        return prof, u

    def time_values_into(self, t: float, prof: np.ndarray, u: np.ndarray) -> None:
        """:meth:`time_values` into the given arrays (once per step: no checks beyond
        finiteness unless a profile misbehaves, then the NumPy path's messages)."""
        for k, drive in enumerate(self.drives):
            try:
                s, s_d, s_dd = drive.profile.eval(t)
                prof[k, 0], prof[k, 1], prof[k, 2] = s, s_d, s_dd
            except Exception:
                prof[k] = drive_values(drive, t)  # raises the ModelError naming it
            if not (math.isfinite(prof[k, 0]) and math.isfinite(prof[k, 1])
                    and math.isfinite(prof[k, 2])):
                drive_values(drive, t)
        first = len(self.drives)
        for k, servo in enumerate(self.servos):  # raises ModelError naming the servo
            row = prof[first + k]
            row[0], row[1] = servo.reference_values(t)
            row[2] = servo.offset(t)
        for k, force, profile in self._input_profiles:
            try:
                u[k] = profile.eval(t)[0]
            except Exception as exc:
                raise ModelError(f"{_force_kind(force)} {force.name!r}: its profile failed "
                                 f"at t = {t:g}: {type(exc).__name__}: {exc}") from exc
            if not math.isfinite(u[k]):
                raise ModelError(f"{_force_kind(force)} {force.name!r}: its profile "
                                 f"returned {u[k]} at t = {t:g}")

    def time_values_many(self, times) -> tuple[np.ndarray, np.ndarray]:
        """(profiles (n_t, n_drives, 3), u (n_t, n_u)) at every time of ``times``
        (the outputs after a run): each profile evaluated over the array at once
        (``Profile.eval_many``); a failure or a non-finite value is looked at again
        time by time, which raises :meth:`time_values`'s ModelError naming it."""
        times = np.asarray(times, dtype=float)
        n_t = times.size
        prof = np.zeros((n_t, self.n_rows, 3))
        u = np.zeros((n_t, self.n_u))
        try:
            for k, drive in enumerate(self.drives):
                prof[:, k] = _many(drive.profile, times)
            for k, _, profile in self._input_profiles:
                u[:, k] = _many(profile, times)[:, 0]
            first = len(self.drives)
            for k, servo in enumerate(self.servos):
                prof[:, first + k, :2] = _many(servo.reference, times)[:, :2]
                prof[:, first + k, 2] = servo.offsets(times)
            good = bool(np.isfinite(prof).all() and np.isfinite(u).all())
        except Exception:
            good = False
        if not good:
            for k, tk in enumerate(times):  # into the rows: no arrays per output
                self.time_values_into(float(tk), prof[k], u[k])
        return prof, u

    # ----------------------------------------------------------- kernels
    def _call(self, task, q=None, qd=None, qdd=None, a=None, lam=None, par=None,
              max_iter=1, prof=None, u=None, lu=None, piv=None, start=False, qs=None,
              qds=None, lams=None, profs=None, us=None, refs=None, out=None,
              states=None):
        """:func:`~flexmbs.engine.newton.kernel` with placeholders for what ``task``
        does not use (every argument keeps one type, so the kernel compiles once)."""
        d = self._dummy
        return self._kernel(task, self.F, self.IN, self.H, self.WF, self.WI, self.WH,
                      d.q if q is None else q, d.q if qd is None else qd,
                      d.q if qdd is None else qdd, d.q if a is None else a,
                      d.lam if lam is None else lam, d.par if par is None else par,
                      max_iter, d.prof if prof is None else prof, d.u if u is None else u,
                      d.lu if lu is None else lu, d.piv if piv is None else piv, d.sp_i,
                      d.sp_x, start,
                      d.qs if qs is None else qs, d.qs if qds is None else qds,
                      d.lams if lams is None else lams, d.profs if profs is None else profs,
                      d.us if us is None else us, d.refs if refs is None else refs,
                      d.out if out is None else out,
                      d.states if states is None else states)

    def residual(self, q, qd, qdd, lam, t: float):
        """(r, Φ): r = M q̈ + Φ_qᵀλ − Q (n_q,), Φ (n_c,)."""
        prof, u = self.time_values(t)
        self.callbacks.fill(t, q, qd, u, self.work, False)
        self.load_angles(self.system.angle_memory)
        self.load_contact_states(self.contacts)
        self._call(TASK_RESIDUAL, *(np.ascontiguousarray(x, dtype=float)
                                    for x in (q, qd, qdd)), lam=np.asarray(lam, float),
                   prof=prof, u=u)
        self.store_angles(self.system.angle_memory)  # as the NumPy residual does
        return self.work.r.copy(), self.work.phi.copy()

    def iteration_matrix(self, q, qd, qdd, lam, t: float, bp: float, gp: float):
        """[M + (γ'/β') C_t + K_t/β', Φ_qᵀ; Φ_q, 0] at the state (square, n_q + n_c)."""
        prof, u = self.time_values(t)
        self.callbacks.fill(t, q, qd, u, self.work, True)
        self.load_angles(self.system.angle_memory)  # read, not moved (as the NumPy tangents)
        self.load_contact_states(self.contacts)
        self._call(TASK_MATRIX, *(np.ascontiguousarray(x, dtype=float)
                                  for x in (q, qd, qdd)), lam=np.asarray(lam, float),
                   par=step_parameters(beta_prime=bp, gamma_prime=gp), prof=prof, u=u)
        return self.work.matrix.copy()

    def _state_call(self, task, q, qd, qdd, lam, t: float, states=None) -> None:
        """``task`` at one state (TASK_PIECES, TASK_JACOBIAN): the time values,
        callables and memories set into buffers kept between calls."""
        if self._matrix_buffers is None:
            self._matrix_buffers = (np.zeros((self.n_rows, 3)), np.zeros(self.n_u),
                                    step_parameters())
        prof, u, par = self._matrix_buffers
        self.time_values_into(t, prof, u)
        self.callbacks.fill(t, q, qd, u, self.work, True)
        self.load_angles(self.system.angle_memory)  # read, not moved
        self.load_contact_states(self.contacts)
        q, qd, qdd, lam = (np.ascontiguousarray(x, dtype=float) for x in (q, qd, qdd, lam))
        self._call(task, q, qd, qdd, lam=lam, par=par, prof=prof, u=u, states=states)

    def step_pieces(self, q, qd, qdd, lam, t: float):
        """(M, K_t, C_t, Φ_q) dense at the state, in one kernel call
        (:func:`~flexmbs.engine.dispatch.step_pieces`: each body's matrices formed once):
        the pieces of the gradients' step Jacobians. The System's angle memory is read."""
        n = self.n_q
        if self._pieces is None:
            self._pieces = np.zeros((3, n + self.n_c, n + self.n_c))
        self._state_call(TASK_PIECES, q, qd, qdd, lam, t, self._pieces)
        mk, kk, ck = self._pieces
        return mk[:n, :n].copy(), kk[:n, :n].copy(), ck[:n, :n].copy(), mk[n:, :n].copy()

    def pieces_many(self, states, lams, times, refs, what: str = "pieces",
                    values=None, out=None) -> np.ndarray:
        """At many states in one kernel call (:func:`~flexmbs.engine.newton.pieces_many`):
        ``states`` (K, ≥3, n_q) rows q, q̇, q̈; ``lams`` (K, n_c); ``times`` (K,) [s];
        ``refs`` (K, len(torsion_names)) the rotational springs' angle memory at each
        state (NaN: none). ``what``: "pieces" (K, 3 s² + n_q + 2 n_c), s = n_q + n_c:
        M (Φ_q below it), K_t and C_t (:meth:`step_pieces`) as (3, s, s), then r, Φ and
        Φ_q q̇ + Φ_t at that state; "jacobians" (K, n_c, n_q): Φ_q;
        "equations" (K, n_q + 2 n_c): r, Φ and Φ_q q̇ + Φ_t; "forces" (the same shape):
        the force kinds' part of r alone, zeros after it. ``values``: the time values
        (profiles (K, rows, 3), u (K, n_u)) to take instead of those at ``times``. Not
        for Systems with state-dependent callables, whose values Python gives state by
        state, nor with contacts, whose states move between states (ModelError); shapes
        that do not fit raise ValidationError (the kernel does not check bounds).
        ``out``: a C-ordered buffer of at least K rows of the output's row shape to write
        into (zeroed first; its first K rows are returned) instead of a new array: the
        pages of a chunk's megabytes of pieces are then faulted in once, not per call."""
        task, shape, arrays = many_state_inputs(self, states, lams, times, refs, what,
                                                values)
        count = shape[0]
        if out is None:
            out = np.zeros(shape)
        else:
            if (out.shape[1:] != shape[1:] or len(out) < count or out.dtype != np.float64
                    or not out.flags.c_contiguous):
                raise ValidationError(f"pieces_many: out must be float64 (C order) of at "
                                      f"least {shape}, got {out.dtype} {out.shape}")
            out = out[:count]
            out[...] = 0.0
        if count:
            self._call(task, **arrays, out=out.reshape(-1, shape[-1]))
        return out

    def constraint_jacobian(self, q, qd, qdd, lam, t: float) -> np.ndarray:
        """Φ_q (n_c, n_q) dense at the state (r and Φ left in ``work.r``, ``work.phi``)."""
        self._state_call(TASK_JACOBIAN, q, qd, qdd, lam, t)
        return self.work.jac.copy()

    def newton(self, q, qd, qdd, a, lam, par, max_iter, prof, u, factors: Factors,
               start, sync: bool = True, answer: bool = True):
        """One step-kernel call (:func:`~flexmbs.engine.newton.newton_step`): its code.
        The rotational springs' angle memory comes from the System and goes back to it
        (unless ``sync`` is False), so both paths continue the same angles. The kernel's
        returns for the state-dependent callables' values (``NEED_INPUTS``) are answered
        here (:meth:`CallableInputs.answer`; ``answer`` False returns the code)."""
        d, f = self._dummy, factors
        if sync and self.torsion_names:
            self.load_angles(self.system.angle_memory)
        code = self._kernel(self._step_task, self.F, self.IN, self.H, self.WF, self.WI,
                            self.WH, q, qd, qdd, a, lam, par, max_iter, prof, u, f.lu, f.piv,
                            f.sp_i, f.sp_x, start, d.qs, d.qs, d.lams, d.profs, d.us,
                            d.refs, d.out, d.states)
        while code == NEED_INPUTS and answer:
            self.callbacks.answer(float(par[P_T1]), self.work, u)
            code = self._kernel(self._step_task, self.F, self.IN, self.H, self.WF, self.WI,
                                self.WH, q, qd, qdd, a, lam, par, max_iter, prof, u, f.lu,
                                f.piv, f.sp_i, f.sp_x, False, d.qs, d.qs, d.lams, d.profs,
                                d.us, d.refs, d.out, d.states)
        if sync and self.torsion_names:
            self.store_angles(self.system.angle_memory)
        return code

    def steps(self, par, max_iter, lu, piv, states, lams, profs, us, out) -> int:
        """A batch of steps in one kernel call (:func:`~flexmbs.engine.newton.run_steps`,
        dense factors ``lu``, ``piv`` of the iteration matrix's order, factored in the
        kernel): the number of steps accepted, or −(k + 1) when step k awaits the
        contacts' handling in Python (:mod:`flexmbs.integrators.step_batch`). For models
        without state-dependent callables or joint servos with integral action:
        :meth:`batch_reason`. ``out``
        (K, 2 + the rotational springs + the contacts × N_SAMPLE): each step's
        iterations, factorizations, angle memory after it and contacts' samples at its
        end."""
        d = self._dummy
        return self._kernel(TASK_STEPS, self.F, self.IN, self.H, self.WF, self.WI, self.WH,
                            d.q, d.q, d.q, d.q, d.lam, par, max_iter, d.prof, d.u, lu, piv,
                            d.sp_i, d.sp_x, False, d.qs, d.qs, lams, profs, us, d.refs, out,
                            states)

    def batch_reason(self) -> str | None:
        """Why this model's steps cannot run in batches (:meth:`steps`), or None."""
        if self.sparse:
            return "its iteration matrix is factored sparse"
        if self.n_q + self.n_c > BATCH_UP_TO:
            return f"its iteration matrix is of order {self.n_q + self.n_c} > {BATCH_UP_TO}"
        if self.callbacks:
            return "state-dependent callables are called back at every iterate"
        if any(servo.ki for servo in self.servos):
            return ("joint servos with integral action (ki > 0) keep their integrals "
                    "between steps in Python")
        return None

    def load_angles(self, angles: dict) -> None:
        """The workspace's angle memory of the rotational springs from ``angles``
        ({name: last angle [rad]}, as ``System.angle_memory``; absent: no memory)."""
        for s, name in enumerate(self.torsion_names):
            self.work.angles[s] = angles.get(name, np.nan)

    def store_angles(self, angles: dict) -> None:
        """Write the workspace's angle memory into ``angles`` (the ones it holds)."""
        for s, name in enumerate(self.torsion_names):
            if not math.isnan(self.work.angles[s]):
                angles[name] = float(self.work.angles[s])

    def load_contact_states(self, contacts) -> None:
        """The workspace's contact states (``ct_state``) from the contacts' states: mode,
        approach speed at the onset (NaN: none), anchored, the anchors (in the order of
        the kernels' table, that of ``contacts``: the model's)."""
        rows = self.work.ct_state
        for k, c in enumerate(contacts):
            st, row = c.state, rows[k]
            row[C_MODE] = st.mode
            row[C_V_ONSET] = np.nan if st.v_onset is None else st.v_onset
            if st.anchor is None:
                row[C_ANCHORED] = 0.0
            else:
                row[C_ANCHORED] = 1.0
                row[C_LA:C_LA + 3], row[C_LB:C_LB + 3], row[C_OFF:C_OFF + 3] = st.anchor

    def contact_samples(self, q, qd, contacts, load: bool = True) -> list:
        """Every contact's :class:`~flexmbs.contact.sample.Sample` at (q, q̇) under its
        current state (one kernel call; ``load`` False: the workspace holds the states
        already, :meth:`load_contact_states`)."""
        if load:
            self.load_contact_states(contacts)
        self._call(TASK_CONTACTS, np.ascontiguousarray(q, dtype=float),
                   np.ascontiguousarray(qd, dtype=float))
        return self.step_samples()

    def step_samples(self) -> list:
        """The contacts' samples the last kernel call left: those at the end of an
        accepted step (the step kernel takes them), or of :meth:`contact_samples`."""
        return samples_of(self.work.ct_out)

    def outputs(self, t, q, qd, lam, refs=None) -> np.ndarray:
        """(n_t, 5): kinetic and potential energy [J], non-conservative power [W],
        max |Φ| and max |Φ_q q̇ − ν| at every output (``System.energy``,
        ``nonconservative_power``, ``violations``). ``refs`` (n_t, n_springs): the
        rotational springs' angles at the outputs from the run, in ``torsion_names``
        order (:func:`flexmbs.integrators.output_angles.output_angles`; None or NaN:
        continued from the previous output, the first in (−π, π]). The System's memory
        is left alone. The contacts are left out: their stored energy and dissipation
        depend on their states at each output, and a run takes them from the contacts'
        samples (:class:`flexmbs.contact.log.ContactLog`)."""
        self.load_angles({})
        prof, u = self.time_values_many(t)
        self.callbacks.outputs_into(t, q, qd, u)
        return self.outputs_with(self._kernel, (self.WF, self.WI, self.WH), q, qd, lam,
                                 prof, u, refs)

    def outputs_with(self, kernel, buffers, q, qd, lam, prof, u, refs=None) -> np.ndarray:
        """:meth:`outputs` by the kernel caller ``kernel`` in the workspace ``buffers``
        (WF, WI, WH): this system's own, or another thread's
        (:mod:`flexmbs.engine.concurrent_outputs`), with the time values ``prof``, ``u``
        of the outputs' times (:meth:`time_values_many`, the callables' columns
        filled). Calls no Python of the model's."""
        n_t = len(q)
        out = np.zeros((n_t, 5))
        refs = (np.full((n_t, len(self.torsion_names)), np.nan) if refs is None
                else np.ascontiguousarray(refs, dtype=float).reshape(n_t, -1))
        d = self._dummy
        try:
            kernel(TASK_OUTPUTS, self.F, self.IN, self.H, *buffers, d.q, d.q, d.q, d.q,
                   d.lam, d.par, 1, d.prof, d.u, d.lu, d.piv, d.sp_i, d.sp_x, False,
                   np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(qd, dtype=float),
                   np.ascontiguousarray(lam, dtype=float).reshape(n_t, self.n_c), prof, u,
                   refs, out, d.states)
        finally:
            release = getattr(kernel, "release", None)
            if release is not None:  # the prebuilt kernel's caller: not the histories'
                release()  # owner
        return out

    @property
    def pattern(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows, cols) of the iteration matrix's possible nonzeros, in CSC order, when
        it is factored sparse (the other entries of the workspace's dense matrix are
        never written, nor read); None when it is factored dense."""
        return None if self._pattern is None else self._pattern[:2]

    def factor(self, matrix: np.ndarray) -> Factors:
        """LU factors of the iteration matrix ``matrix`` (the workspace's; another one is
        copied into it): SuperLU of its pattern entries when the engine is sparse; up to
        order :data:`BATCH_UP_TO` the step kernel's own LU, as a batch of steps factors
        it (:func:`~flexmbs.engine.factors.kernel_factors`: no SciPy, docs/compiled.md,
        "What a run imports"), into buffers that the next such call overwrites; above,
        LAPACK getrf (its factors transposed, the layout of
        :func:`~flexmbs.engine.linear_solves.lu_solve`). An exactly singular matrix gets
        factors with a zero pivot, which makes the step's solve non-finite (the step
        then fails and says so)."""
        d = self._dummy
        n = matrix.shape[0]
        if self.sparse:
            sp = scipy_module("scipy.sparse")
            splu = scipy_module("scipy.sparse.linalg").splu
            rows, cols, indptr, indices = self._pattern
            csc = sp.csc_matrix((matrix[rows, cols], indices, indptr), shape=(n, n))
            try:
                sp_i, sp_x = pack_sparse_factors(splu(csc))
                return Factors(d.lu, d.piv, sp_i, sp_x, 0)
            except RuntimeError:  # "Factor is exactly singular"
                pass
        if n <= BATCH_UP_TO:  # (into the same buffers each time: the per-step path
            if not np.shares_memory(matrix, self.work.matrix):  # keeps only its latest
                self.work.matrix[...] = matrix  # factors)
            self._step_factors = self._step_factors or (np.empty((n, n)),
                                                        np.empty(n, dtype=np.int64))
            return kernel_factors(self, *self._step_factors)
        lapack = scipy_module("scipy.linalg.lapack")  # (getrf's factors Fortran-ordered:
        lu, piv, info = lapack.dgetrf(matrix)  # their transpose is C-ordered)
        return Factors(np.ascontiguousarray(lu.T), piv.astype(np.int64), d.sp_i, d.sp_x,
                       int(info))

    def placeholder_factors(self) -> Factors:
        """Factors of no matrix (a step kernel call that refreshes before solving)."""
        d = self._dummy
        return Factors(d.lu, d.piv, d.sp_i, d.sp_x, 0)

    # ----------------------------------------------------------- warm-up
    def _warm_up(self, on_compile) -> None:
        """Call the step kernel once at a dummy state (compiles it, or loads it from
        numba's disk cache); ``on_compile()`` is called if that takes more than
        COMPILE_NOTICE_AFTER seconds. The time goes to ``compile_time``. (The residual
        and matrix entries used by tests and diagnostics load on first use.)"""
        global _PREBUILT_WARM
        if _PREBUILT_WARM and self.kernels.startswith("prebuilt"):
            return  # (its code is in memory: an earlier system's warm-up called it)
        timer = None
        if on_compile is not None:
            timer = threading.Timer(COMPILE_NOTICE_AFTER, on_compile)
            timer.daemon = True
            timer.start()
        start = time.perf_counter()
        try:
            if self.kernels.startswith("prebuilt"):
                self._call_once()
                _PREBUILT_WARM = True
            else:
                from numba.core.errors import NumbaPerformanceWarning

                with warnings.catch_warnings():  # numba's layout hints, at compile time
                    warnings.simplefilter("ignore", NumbaPerformanceWarning)
                    self._call_once()
        finally:
            if timer is not None:
                timer.cancel()
            self.compile_time = time.perf_counter() - start

    def _call_once(self) -> None:
        """One step-kernel call at a dummy state (p = (1, 0, 0, 0), at rest)."""
        q = np.zeros(self.n_q)
        for sl in self.system.slices:
            q[sl.start + 3] = 1.0
        zeros, lam = np.zeros(self.n_q), np.zeros(self.n_c)
        n = self.n_q + self.n_c
        if self.sparse:  # the identity's sparse factors: no dense n x n identity to fill
            sp, spla = scipy_module("scipy.sparse"), scipy_module("scipy.sparse.linalg")
            sp_i, sp_x = pack_sparse_factors(spla.splu(sp.identity(n, format="csc")))
            factors = Factors(self._dummy.lu, self._dummy.piv, sp_i, sp_x, 0)
        else:
            factors = Factors(np.eye(n), np.arange(n, dtype=np.int64), self._dummy.sp_i,
                              self._dummy.sp_x, 0)
        par = step_parameters(beta=0.25, gamma=0.5, h=1e-3, t1=1e-3, rtol=1e-8, atol=1e-10,
                              acc_rtol=1e-6, phi_tol=1e-10)
        try:
            prof, u = self.time_values(0.0)
        except ModelError:  # a profile undefined at t = 0: the run will say so
            prof, u = np.zeros((self.n_rows, 3)), np.zeros(self.n_u)
        self.work.counters[1] = 0
        self.newton(q, zeros, zeros, zeros, lam, par, 1, prof, u, factors, True, sync=False,
                    answer=False)  # the user's callables are not called at a dummy state


#: The prebuilt step kernel has been called in this process (by a warm-up): later
#: systems skip theirs, which loads nothing (0.1-0.2 ms a run).
_PREBUILT_WARM = False


def _many(profile, times: np.ndarray) -> np.ndarray:
    """(n_t, 3) values of a drive's or an actuator's profile at ``times``: its
    ``eval_many`` (a Profile's), else ``eval`` time by time (any object with ``eval``)."""
    if (many := getattr(profile, "eval_many", None)) is not None:
        return many(times)
    return np.array([profile.eval(float(tk)) for tk in times], dtype=float).reshape(
        times.size, -1)
