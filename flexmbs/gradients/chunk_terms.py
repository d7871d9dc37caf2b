"""∂F/∂p of the backward sweep for a chunk of steps at once (docs/gradients.md,
"Checkpoints and cost").

The per-kind terms of :mod:`.residual_terms` take one state at a time in NumPy. For a
parameter that the step equations F = (r, Φ[, Φ_q q̇ + Φ_t]) hold polynomially — every
field its model tangent moves is one of :data:`POLYNOMIAL_FIELDS`, a rigid body's mass,
inertia or centre of mass, a flexible body's K_ff or D_ff (a nonlinear body's cubic and
quartic tensors with them), or gravity — a difference of
F between the model and the model moved along its tangent line by Δ (built in memory:
:func:`~flexmbs.gradients.model_diff.moved`) is exact at any Δ:

* F is affine in all of these fields except a rigid body's centre of mass c (its I_O is
  quadratic in c), so ∂F/∂p = (F(p + Δ) − F(p)) / Δ, with F(p) shared by the chunk's
  parameters (one compiled evaluation of the chunk's states each, and one more), and
  Δ < 0 where the model refuses p + Δ (a bound);
* with a centre of mass among them, or when the sweep's System lacks forces the
  Newton tangents take in NumPy (then F(p) is not at hand compiled),
  (F(p + Δ) − F(p − Δ)) / 2Δ.

Exact but for round-off, about ε |F| / (Δ |∂F/∂p|) with |F| the size of a row's terms
(a stiff beam's elastic forces at a state: 1e-6 of ∂F/∂g with Δ = 1/4): Δ is the largest
of 64, 8 and 1/4 times max(|p|, 1) that the model accepts.
Each compiled evaluation takes the chunk's states in one kernel call
(:meth:`~flexmbs.engine.compiled_system.CompiledSystem.pieces_many`, "equations"); for a
parameter of force kinds alone (:func:`forces_alone`) it is the force kinds' part of r
("forces": no bodies' inertia, gravity or constraints, which it does not move).
A parameter that moves flexible bodies' modal stiffness and damping alone (a damping
ratio, a stiffness scale; a nonlinear body's tensors with them) needs no model moved
and no evaluation: its ∂F/∂p is dK_ff ξ + dD_ff ξ̇ (+ the tensors' terms) on the bodies'
ξ rows, for the chunk's states at once (:func:`_modal_rows`).
A joint actuator's profile or a spring–damper's actuator enters the residual through its
value u alone, linearly: ∂F/∂p = (F(u + Δ u_p) − F(u)) / Δ on the nominal System, u_p
the profile's slope along the parameter (:class:`~flexmbs.gradients.residual_terms.
ProfileSlope`, as the analytic term takes it). Parameters without analytic terms keep
their differences between the Systems at p ± δ
(:class:`~flexmbs.gradients.residual_terms.DifferenceTerm`), a chunk at a time too.

A joint servo's gains, torque limit and motor efficiency are linear in the
parameter between the saturation's kinks (the efficiency while the motor drives): F at
p − Δ, p and p + Δ, and where the two one-sided differences agree (to 1e-8,
:func:`_checked`) their mean; the chunk's other states take the analytic terms. Drives
keep their terms state by state.
"""

from __future__ import annotations

import numpy as np

from ..elements.flexible_body.parameters import modal_force_derivative
from ..engine.tables import torsion_springs
from ..errors import FlexmbsError
from .model_diff import moved
from .residual_terms import in_step_order, stacked_states, step_equations_many

#: The force fields the step equations hold linearly, by element kind.
POLYNOMIAL_FIELDS = {
    "SpringDamperActuator": {"stiffness", "damping", "free_length"},
    "RotationalSpringDamper": {"stiffness", "damping", "angle0"},
    "Bushing": {"stiffness", "damping", "rotational_stiffness", "rotational_damping",
                "preload_force", "preload_torque"},
    "PointLoad": {"value"},
    "DistributedLoad": {"value"},
}


def polynomial(terms) -> bool:
    """Whether every analytic term of ``terms`` (a :class:`~flexmbs.gradients.
    residual_terms.ParameterTerms`) is polynomial in the parameter (module docstring)."""
    if terms.unsupported:
        return False
    for term in terms.terms:
        kind = term[0]
        if kind in ("gravity", "rigid", "flexible"):
            continue
        fields_ = POLYNOMIAL_FIELDS.get(kind)
        if fields_ is None or not {path[0] for path in term[2]} <= fields_:
            return False
    return True


def _servo_gains(terms) -> bool:
    """Whether every term of ``terms`` is a joint servo's gain, torque limit or motor
    efficiency: linear in the parameter between the saturation's kinks (and, for the
    efficiency, while the motor drives). Its reference keeps the analytic term, whose
    profile slope the other parameters of profiles share."""
    return bool(terms.terms) and not terms.unsupported and all(
        t[0] == "JointServo" and {p[0] for p in t[2]} <= {"kp", "kd", "torque_limit",
                                                           "motor"}
        for t in terms.terms)


def _checked(base, ends, delta: float) -> np.ndarray:
    """∂F/∂p (K, size) from F at p (``base``), p + Δ and p − Δ (``ends``) where F is
    linear over [p − Δ, p + Δ]: the two one-sided differences agree to 1e-8 (and the
    round-off of F); NaN rows where they do not (a saturation's kink or a curve within
    ±Δ: those states take the analytic terms)."""
    ahead, behind = ends[0] - base, base - ends[1]
    scale = np.maximum(np.abs(ahead).max(axis=1), np.abs(behind).max(axis=1))
    floor = 1e-13 * np.abs(base).max(axis=1)
    linear = np.abs(ahead - behind).max(axis=1) <= 1e-8 * scale + floor
    out = (ahead + behind) / (2.0 * delta)
    out[~linear] = np.nan
    return out


def _compiled(system):
    """The CompiledSystem of ``system`` for many-state evaluations, or None."""
    from ..engine.compiled_system import CompiledSystem
    from ..engine.tables import unsupported_reason

    if unsupported_reason(system) is not None:
        return None
    compiled = CompiledSystem(system)
    return None if compiled.callbacks.items else compiled


def _input_column(compiled, prep):
    """(u column, profile slope) when ``prep``'s only term is a joint actuator's profile or
    a spring–damper's actuator, whose value u the residual holds linearly; else None."""
    terms = prep.terms
    if terms.unsupported or len(terms.terms) != 1:
        return None
    wanted = {"JointActuator": "profile", "SpringDamperActuator": "actuator"}.get(
        terms.terms[0][0])
    if wanted is None:
        return None
    _, element, fields_, slope = terms.terms[0]
    if slope is None or {path[0] for path in fields_} != {wanted}:
        return None
    column = next((k for k, force, _ in compiled._input_profiles
                   if force.name == element.name), None)
    return None if column is None else (column, slope)


def forces_alone(terms) -> bool:
    """Whether every analytic term of ``terms`` is a force kind's (none of a body, of
    gravity or of a drive): the parameter then moves the force kinds' part of r alone,
    and its differences take that part only (:func:`_equations` with ``forces``)."""
    return bool(terms.terms) and not terms.unsupported and all(
        term[0] not in ("gravity", "rigid", "flexible", "drive") for term in terms.terms)


def _equations(compiled, chunk, index2: bool, shift=None, forces: bool = False,
               values=None) -> np.ndarray:
    """F (K, size) at the states of ``chunk`` (:func:`~flexmbs.gradients.residual_terms.
    step_equations_many`); ``shift`` (column, slope, Δ): that input u moved by Δ × the
    slope of its profile at each state's time; ``forces``: the force kinds' part of r
    alone, the other rows zero (a fifth of the evaluation or less); ``values``: the
    time values at the chunk's times when known (:func:`same_time_values`; not
    changed here)."""
    if shift is not None:
        column, slope, delta = shift
        times = chunk[2]
        profs, us = (compiled.time_values_many(times) if values is None
                     else (values[0], values[1].copy()))
        us[:, column] += delta * np.array([slope(float(t))[0] for t in times])
        values = (profs, us)
    return step_equations_many(compiled, chunk, index2, values,
                               "forces" if forces else "equations")


def same_time_values(compiled, nominal) -> bool:
    """Whether the CompiledSystem ``compiled`` takes the same time values as ``nominal``
    at every time: the same drive profiles, the same servo objects (references and
    offsets) and the same input profiles, object for object (a model moved along a
    parameter that is none of these keeps them: :func:`~flexmbs.gradients.model_diff.
    moved` copies only what it moves)."""
    if compiled is nominal:
        return True
    if (len(compiled.drives) != len(nominal.drives)
            or len(compiled.servos) != len(nominal.servos)
            or len(compiled._input_profiles) != len(nominal._input_profiles)):
        return False
    return (all(a.profile is b.profile
                for a, b in zip(compiled.drives, nominal.drives, strict=True))
            and all(a is b for a, b in zip(compiled.servos, nominal.servos, strict=True))
            and all(a[0] == b[0] and a[2] is b[2] for a, b in
                    zip(compiled._input_profiles, nominal._input_profiles, strict=True)))


def _modal_rows(stack, terms, n_c: int, index2: bool) -> np.ndarray:
    """∂F/∂p (K, size) at the chunk's states (q, q̇ rows of ``stack`` (K, 3, n_q)) of a
    parameter that moves flexible bodies' modal stiffness and damping (and a nonlinear
    body's tensors) alone: :func:`~flexmbs.elements.flexible_body.parameters.
    modal_force_derivative` on each body's ξ rows for all the states at once, zero
    elsewhere; ``terms``: (the body's coordinate slice, {field path: derivative})."""
    out = np.zeros((stack.shape[0], stack.shape[2] + (2 if index2 else 1) * n_c))
    for sl, fields_ in terms:
        rows = slice(sl.start + 7, sl.stop)
        out[:, rows] += modal_force_derivative(
            stack[:, 0, rows], stack[:, 1, rows],
            *(fields_.get(path) for path in (("data", "K_ff"), ("data", "D_ff"),
                                             ("elastic", "cubic"), ("elastic", "quartic"))))
    return out


class ChunkDerivatives:
    """How each of ``prepared`` (:class:`~flexmbs.gradients.prepared.PreparedParameter`)
    gets ∂F/∂p for a chunk of ``system``'s steps: ("difference", its DifferenceTerm),
    ("modal", [(body slice, {field path: derivative})]), ("forward", compiled model at
    p + Δ, Δ), ("central", (at p + Δ, at p − Δ), 2Δ),
    ("input", (u column, profile slope, Δ)), ("checked", (at p + Δ, at p − Δ), Δ) or
    None (state by state). ``source``: the sweep's
    :class:`~flexmbs.gradients.jacobian_source.TangentSource`, whose System gives F(p)
    when it holds every force (no NumPy-only ones)."""

    def __init__(self, system, source, prepared):
        self.system, self.plans = system, []
        self.nominal = (source.compiled if source.compiled is not None
                        and not source.numpy_forces else None)
        for prep in prepared:
            self.plans.append(self._plan(prep))
        #: per parameter: whether its differences take the force kinds' part of r alone
        self.forces = [forces_alone(prep.terms) for prep in prepared]
        #: the rotational springs in the kernels' order (the models moved keep the forces)
        self.torsion_names = [f.name for f in torsion_springs(system)]

    def _plan(self, prep):
        from ..assembly import System

        if prep.difference is not None:
            return ("difference", prep.difference) if prep.difference.compile() \
                and prep.difference.batched else None
        terms = prep.terms
        if terms.terms and not terms.unsupported and all(
                term[0] == "flexible" for term in terms.terms):  # the modal rows alone
            return ("modal", [(self.system.slices[k], fields_)
                              for _, k, fields_ in terms.terms])
        if self.nominal is not None:
            column = _input_column(self.nominal, prep)
            if column is not None:
                value = prep.parameter.value
                return ("input", (*column, 0.25 * abs(value) if value else 0.25))
        value = prep.parameter.value
        wide = 0.25 * abs(value) if value else 0.25  # the servos' kinks: within |p|/4

        def at(d):  # the model moved by d along the tangent, on the nominal's kernel
            system = System(moved(self.system.model, prep.tangent, d), **prep.overrides)
            twin = None if self.nominal is None else self.nominal.retabled(system)
            return _compiled(system) if twin is None else twin

        if not prep.terms.terms and not prep.terms.unsupported:
            return None  # nothing in the step equations moves: zeros, state by state
        if not polynomial(prep.terms):
            if self.nominal is None or not _servo_gains(prep.terms):
                return None
            for d in (wide, wide / 16, wide / 256):  # within the fields' bounds
                try:
                    ends = [at(d), at(-d)]
                except FlexmbsError:
                    continue
                return None if None in ends else ("checked", ends, d)
            return None
        central = self.nominal is None or any(
            path[0] == "bodies" and path[2:3] == ("com",) for path in prep.tangent)
        size = max(abs(value), 1.0)
        for wide in (64.0 * size, 8.0 * size, 0.25 * size):  # exact at any Δ: the larger,
            if central:  # the less round-off, within what the model accepts
                try:
                    ends = [at(wide), at(-wide)]
                except FlexmbsError:
                    continue
                return None if None in ends else ("central", ends, 2.0 * wide)
            for d in (wide, -wide):  # at a bound (a damping of 0): the side allowed
                try:
                    end = at(d)
                except FlexmbsError:
                    continue
                return None if end is None else ("forward", end, d)
        return None

    def at(self, states, memories, index2: bool, pieces=None) -> list:
        """∂F/∂p (K, size) per parameter at the chunk's converged ``states`` (the System's
        angle memory at each: ``memories``), None for those taken state by state. A
        parameter of force kinds alone (:func:`forces_alone`) takes the differences of
        the force kinds' part of r, the others those of the whole step equations.
        ``pieces``: the sweep's :class:`~flexmbs.gradients.jacobian_source.ChunkPieces`
        at these states, whose stacked states, time values and step equations (the
        nominal's F(p)) are taken when they are the nominal's."""
        bases: dict = {}  # F(p) of the nominal System, whole or the forces' part
        chunk = shared = None
        if pieces is not None and self.nominal is not None:  # the same CompiledSystem
            chunk, shared = pieces.stacked, pieces.values
            bases[False] = in_step_order(pieces.equations, self.system.n_q,
                                         self.system.n_c, index2)
        out = []

        def equations(compiled, shift=None):
            nonlocal shared
            values = None
            if self.nominal is not None and same_time_values(compiled, self.nominal):
                if shared is None:  # the nominal's time values, once per chunk
                    shared = self.nominal.time_values_many(chunk[2])
                values = shared
            return _equations(compiled, chunk, index2, shift, forces, values)

        for plan, forces in zip(self.plans, self.forces, strict=True):
            if plan is None or plan[0] == "difference":
                out.append(None if plan is None else plan[1].many(states, memories, index2))
                continue
            if chunk is None:
                chunk = stacked_states(states, memories, self.torsion_names)
            if plan[0] == "modal":
                out.append(_modal_rows(chunk[0], plan[1], self.system.n_c, index2))
                continue
            if plan[0] == "central":
                ends = [equations(c) for c in plan[1]]
                out.append((ends[0] - ends[1]) / plan[2])
                continue
            if forces not in bases:
                bases[forces] = equations(self.nominal)
            base = bases[forces]
            if plan[0] == "checked":
                out.append(_checked(base, [equations(c) for c in plan[1]], plan[2]))
                continue
            if plan[0] == "input":
                out.append((equations(self.nominal, plan[1]) - base) / plan[1][2])
            else:
                out.append((equations(plan[1]) - base) / plan[2])
        return out
