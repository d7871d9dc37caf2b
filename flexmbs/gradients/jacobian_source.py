"""Where the step Jacobian's matrices come from (docs/gradients.md, "Checkpoints and cost"):
the mass matrix M, the exact tangents K_t = ∂r/∂q and C_t = ∂r/∂q̇ and Φ_q at a
converged state.

The backward sweep needs them once per step, and on the NumPy path their assembly is
most of its cost. The compiled engine's Newton tangents are exact for every element kind but
two: a joint servo's rotor inertia (whose q-derivative they leave out) and forces whose
value a state-dependent callable gives (differenced in its Newton iteration). So
:class:`TangentSource` compiles the System without the callables' forces (and without
force servos with a rotor, which the NumPy tangents difference), takes M with Φ_q, K_t
and C_t apart in one kernel call
(:meth:`~flexmbs.engine.compiled_system.CompiledSystem.step_pieces`: each body's
matrices formed once, the forces' tangents one scale at a time) and adds the left-out
forces' tangents and mass blocks from :mod:`.tangents` (callables by central
differences). A torque servo's rotor stays in the kernel: its mass term and controller
tangents are exact in the Newton iteration's matrix, and the step pieces complete the
rotor's K and C into the exact ones there
(:func:`~flexmbs.elements.joint_servo.kernels.servo_rotor_tangents_into`; the NumPy
path's closed form is :mod:`.rotor`). Z = ∂(Φ_q q̇ + Φ_t)/∂q of the
stabilized index-2 form is the derivative of Φ_q along the motion, two more kernel
calls that form r, Φ and Φ_q only (:meth:`TangentSource.velocity_jacobian`). Without
compiled kernels at hand (none prebuilt for these sources and numba's not compiled,
numba's JIT switched off, a model the kernels cannot evaluate) or with
``engine="python"``, everything comes from the NumPy tangents and the constraints'
bilinear forms.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..errors import ValidationError
from ..integrators.options import Engine
from .residual_terms import stacked_states
from .tangents import (
    exact_tangents,
    force_tangents,
    needs_numpy_tangents,
    velocity_constraint_jacobian,
)


def _torque_servo_rotor(force) -> bool:
    """Whether ``force`` is a torque servo with a rotor inertia (the kernel's step pieces
    give its exact tangents)."""
    return (getattr(force, "element_kind", None) == "joint_servo"
            and bool(force.reflected_inertia) and force.kind == "torque")


def _kernels_at_hand() -> str | None:
    """Why the compiled kernels cannot be used without compiling them now (None: they
    can: the prebuilt kernel fits, or numba's are in its cache)."""
    from ..engine.compiled_system import jit_disabled

    if jit_disabled():
        return "NUMBA_DISABLE_JIT is set"
    from ..engine import prebuilt, warmup

    build, why = prebuilt.ensure_loaded()
    if build is not None or warmup.is_ready():
        return None
    return f"the compiled kernels are not built ({why})"


class TangentSource:
    """M, K_t, C_t and Φ_q of ``system`` at converged states, from the compiled engine
    where exact (module docstring) or from the NumPy tangents.

    ``engine``: "auto" (compiled when the kernels are at hand and can evaluate the
    model), "compiled" (ValidationError when they cannot) or "python". ``engine`` and
    ``note`` say which is used and why.
    """

    def __init__(self, system, engine: str = "auto"):
        try:
            chosen = Engine(engine)
        except ValueError:
            raise ValidationError(f"engine must be one of {[e.value for e in Engine]}, got "
                                  f"{engine!r}") from None
        self.system = system
        self._rows = None  # pieces_many's buffer (reuse=True), and who holds it now
        self._rows_holder = None
        self.numpy_forces = [f for f in system.model.forces
                             if needs_numpy_tangents(f) and not _torque_servo_rotor(f)]
        self.compiled, self.engine = None, Engine.PYTHON.value
        self.load_seconds = 0.0
        self.note = "engine='python' requested"
        if chosen is Engine.PYTHON:
            return
        tic = time.perf_counter()
        reason = _kernels_at_hand()
        #: seconds spent loading the kernels (the prebuilt kernel's link, or numba's
        #: cache: once per process) and in the CompiledSystem's first kernel call,
        #: counted apart from the sweep
        self.load_seconds = time.perf_counter() - tic
        if reason is None:
            reason = self._compile()
            if self.compiled is not None:
                self.load_seconds += self.compiled.compile_time
        if reason is not None:
            if chosen is Engine.COMPILED:
                raise ValidationError(f"engine='compiled': {reason}")
            self.note = reason
            return
        self.engine = Engine.COMPILED.value
        self.note = ("compiled iteration matrices" + (
            f", NumPy tangents of {[f.name for f in self.numpy_forces]}"
            if self.numpy_forces else ""))

    def _compile(self) -> str | None:
        from ..assembly import System
        from ..engine.compiled_system import CompiledSystem
        from ..engine.tables import unsupported_reason
        from ..errors import FlexmbsError

        system = self.system
        if self.numpy_forces:
            left = {id(f) for f in self.numpy_forces}
            model = dataclasses.replace(system.model, forces=tuple(
                f for f in system.model.forces if id(f) not in left))
            reduced = System(model, **system.overrides)
        else:
            reduced = system
        reason = unsupported_reason(reduced)
        if reason is not None:
            return f"the compiled engine cannot evaluate this model: {reason}"
        try:
            self.compiled = CompiledSystem(reduced)
        except FlexmbsError as exc:  # pragma: no cover - refused above
            return str(exc)
        self._reduced = reduced
        return None

    @property
    def batched(self) -> bool:
        """Whether :meth:`pieces_many` takes a segment's states in one kernel call (the
        compiled engine, no state-dependent callables left in its System)."""
        return self.compiled is not None and not self.compiled.callbacks.items

    def pieces_many(self, states, angles, steps, index2: bool,
                    reuse: bool = False) -> ChunkPieces:
        """The kernel's (M, K_t, C_t, Φ_q, Z) at many converged states in one kernel call
        (two in index 2, for Z;
        :meth:`~flexmbs.engine.compiled_system.CompiledSystem.pieces_many`), with the
        step equations there: ``angles`` the System's angle memory at each state
        ({name: rad}), ``steps`` the step h [s] that ended at each; Z (index 2 only, else
        None) as :meth:`velocity_jacobian` takes it. Give each state's tuple to
        :meth:`pieces` as ``raw``, which adds what the kernel leaves out at that state
        (in place). ``reuse``: the kernel's rows go into this source's buffer, which the
        next such call overwrites (the sweep's chunks, one after the other)."""
        compiled = self.compiled
        count = len(states)
        stacked = stacked_states(states, angles, compiled.torsion_names)
        stack, lams, times, refs = stacked
        values = compiled.time_values_many(times)
        buffer = None
        if reuse:
            n, m = compiled.n_q, compiled.n_c
            width = 3 * (n + m) ** 2 + n + 2 * m
            if self._rows is None or len(self._rows) < count:
                self._rows = np.empty((count, width))
            buffer = self._rows
        rows = compiled.pieces_many(stack, lams, times, refs, values=values, out=buffer)
        owner = self if reuse else None
        zs = None
        if index2:
            eps = _difference_steps(stack[:, 0], stack[:, 1], steps)
            shifted = np.concatenate([stack, stack])
            shifted[:count, 0] += eps[:, None] * stack[:, 1]
            shifted[count:, 0] -= eps[:, None] * stack[:, 1]
            ends = compiled.pieces_many(shifted, np.concatenate([lams, lams]),
                                        np.concatenate([times + eps, times - eps]),
                                        np.concatenate([refs, refs]), "jacobians")
            zs = (ends[:count] - ends[count:]) / (2.0 * eps[:, None, None])
        chunk = ChunkPieces(rows, self.system.n_q, self.system.n_c, zs, stacked, values,
                            owner)
        if owner is not None:
            self._rows_holder = chunk
        return chunk

    def pieces(self, state, bp: float, gp: float, raw=None):
        """(M, K_t, C_t, Φ_q) dense at ``state`` (a converged
        :class:`~flexmbs.gradients.residual_terms.State`) for a step whose scaled
        iteration matrix has β' = ``bp`` [1/s²] and γ' = ``gp`` [1/s] (the NumPy
        tangents and the compiled pieces do not depend on them). The System's angle
        memory is read. ``raw``: the kernel's pieces at this state from
        :meth:`pieces_many` (used, and completed, in place of a kernel call)."""
        system, st = self.system, state
        if self.compiled is None:
            k_t, c_t = exact_tangents(system, st.q, st.qd, st.qdd, st.lam, st.t)
            mass = np.asarray(system.mass_matrix(st.q, sparse=False))
            jac = np.asarray(system.jacobian(st.q, st.t, sparse=False))
            return mass, k_t, c_t, jac
        if raw is None:
            self._reduced.angle_memory = system.angle_memory
            mass, k_t, c_t, jac = self.compiled.step_pieces(st.q, st.qd, st.qdd, st.lam,
                                                            st.t)
        else:
            mass, k_t, c_t, jac = raw[:4]
        if self.numpy_forces:
            k_f, c_f = force_tangents(system, self.numpy_forces, st.q, st.qd, st.qdd,
                                      st.t)
            k_t += k_f
            c_t += c_f
            for force in self.numpy_forces:  # a servo rotor's inertia n² J_m g gᵀ
                part = force.mass_block(system, st.q) if hasattr(force, "mass_block") \
                    else None
                if part is not None:
                    idx, block = part
                    mass[np.ix_(idx, idx)] += block
        return mass, k_t, c_t, jac

    def velocity_jacobian(self, state, h: float) -> np.ndarray:
        """Z (n_c, n_q) = ∂(Φ_q q̇ + Φ_t)/∂q at ``state``, for a step of h [s].

        NumPy: the constraints' bilinear forms (exact,
        :func:`~flexmbs.gradients.tangents.velocity_constraint_jacobian`). Compiled:
        Z is the derivative of Φ_q along the motion, d/dε Φ_q(q + ε q̇, t + ε) at ε = 0
        (the mixed partials of Φ commute), taken by a central difference over
        ε = min(10⁻³ h, 10⁻⁵ max(1, |q|∞)/|q̇|∞): O((ε ω)²) ≈ 10⁻¹⁰ relative for
        motions of frequency ω, and Z enters the step Jacobian divided by γ'."""
        system, st = self.system, state
        if self.compiled is None:
            return velocity_constraint_jacobian(system, st.q, st.qd, st.t)
        eps = float(_difference_steps(st.q[None, :], st.qd[None, :], [h])[0])
        self._reduced.angle_memory = system.angle_memory
        ends = [self.compiled.constraint_jacobian(st.q + s * st.qd, st.qd, st.qdd, st.lam,
                                                  st.t + s) for s in (eps, -eps)]
        return (ends[0] - ends[1]) / (2.0 * eps)


class ChunkPieces:
    """What :meth:`TangentSource.pieces_many` gives for a chunk of states: the kernel's
    ``rows`` (K, 3 s² + n_q + 2 n_c), s = n_q + n_c, each state's M (Φ_q below it),
    K_t, C_t as (3, s, s) and then its r, Φ and Φ_q q̇ + Φ_t; views of them (``mass``,
    ``stiffness``, ``damping`` (K, n_q, n_q), ``jacobian`` (K, n_c, n_q)); Z (K, n_c,
    n_q) in index 2 (``zs``, else None); the ``stacked`` states and the time ``values``
    the kernel took. Item k is state k's (M, K_t, C_t, Φ_q, Z) (views). ``owner``: the
    TangentSource whose reused buffer holds the rows (:attr:`current` says whether they
    are still these states'), or None (rows of their own)."""

    def __init__(self, rows, n: int, m: int, zs, stacked, values, owner=None):
        s, count = n + m, rows.shape[0]
        blocks = rows[:, :3 * s * s].reshape(count, 3, s, s)  # a view: rows split
        self.rows, self.zs, self.stacked, self.values = rows, zs, stacked, values
        self.mass, self.stiffness = blocks[:, 0, :n, :n], blocks[:, 1, :n, :n]
        self.damping, self.jacobian = blocks[:, 2, :n, :n], blocks[:, 0, n:, :n]
        #: the step equations r, Φ, Φ_q q̇ + Φ_t at each state (the kernel's order)
        self.equations = rows[:, 3 * s * s:]
        self._owner = owner

    @property
    def current(self) -> bool:
        """Whether the rows are still these states' (not overwritten by a later call
        into the same buffer)."""
        return self._owner is None or self._owner._rows_holder is self

    def __len__(self) -> int:
        return self.rows.shape[0]

    def __getitem__(self, k: int):
        return (self.mass[k], self.stiffness[k], self.damping[k], self.jacobian[k],
                None if self.zs is None else self.zs[k])


def _difference_steps(q, qd, h) -> np.ndarray:
    """ε [s] (K,) of :meth:`TangentSource.velocity_jacobian`'s central difference at the
    states of rows q, q̇ (K, n_q) ending steps h (K,) [s]:
    min(10⁻³ h, 10⁻⁵ max(1, |q|∞)/|q̇|∞)."""
    eps = 1e-3 * np.asarray(h, dtype=float)
    if q.shape[1] == 0:
        return eps
    rate = np.abs(qd).max(axis=1)
    size = np.maximum(1.0, np.abs(q).max(axis=1))
    moving = rate > 0.0
    eps[moving] = np.minimum(eps[moving], 1e-5 * size[moving] / rate[moving])
    return eps
