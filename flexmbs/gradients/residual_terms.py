"""∂F/∂p: how one parameter changes the step equations at a state (docs/gradients.md,
"Parameter derivatives").

The step equations are the residual r = M q̈ + Φ_qᵀλ − Q (n_q rows), the position
constraints Φ (n_c) and, in the stabilized index-2 form, the velocity constraints
Φ_q q̇ + Φ_t (n_c). A parameter's model tangent (:mod:`.model_diff`) says which element
fields it moves and how fast; each element kind then gives the change of its part
exactly, through the plain functions of ``flexmbs/elements/<kind>/parameters.py``:

=====================  ==========================================================
leaves                 derivative
=====================  ==========================================================
gravity                rigid bodies: −Q_g(dg); other bodies: r_b(dg) − r_b(0)
                       (the residual is affine in g); a nonlinear beam's elements:
                       the gravity term of their consistent inertia
rigid mass, inertia,   residual linear in (m, I_O, S = m c)
centre of mass
flexible K_ff, D_ff    dK_ff ξ + dD_ff ξ̇
spring–damper          df [J_iᵀu; −J_jᵀu]
rotational spring      dτ [−Ω_iᵀz_i; Ω_jᵀz_i]
bushing                −(∇e)ᵀ(dK e + dC ė − df0)
joint servo            gains, reference, torque limit, efficiency
joint actuator         its profile's value
point, distributed     linear in the load vector
drive profiles         dΦ, λ dΦ_q, dΦ_t of the drive's row
=====================  ==========================================================

Profiles (drive, servo reference, actuator values) are differentiated along the
parameter by central differences of their closed forms between the models at p ± δ:
exact for parameters that enter them linearly (amplitudes, end values, polynomial
coefficients), O(δ²) ≈ 1e-10 relative for timing parameters. Any other change the
model allows (a force's marker, a servo's gear ratio) is taken by central differences
of the whole step equations between the Systems at p ± δ (``how = "differences"``);
changes of a flexible body's modes (FE design parameters) are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..elements.actuators import parameters as actuator_parameters
from ..elements.bushing import parameters as bushing_parameters
from ..elements.constraints import parameters as drive_parameters
from ..elements.flexible_body import parameters as flexible_parameters
from ..elements.joint_servo import parameters as servo_parameters
from ..elements.joint_servo.reference import motor_torque
from ..elements.loads import parameters as load_parameters
from ..elements.marker_pairs import relative_translation
from ..elements.rigid_body import parameters as rigid_parameters
from ..elements.rotational_spring import parameters as rotational_parameters
from ..elements.spring_damper import parameters as spring_parameters
from ..errors import ModelError
from .model_diff import path_name


@dataclass
class State:
    """A converged state of the run: time [s], q, q̇, q̈ (n_q,), λ (n_c,)."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray


def stacked_states(states, memories, names):
    """(q, q̇, q̈ rows (K, 3, n_q); λ (K, n_c); t (K,) [s]; angle memory (K, len(names)),
    NaN where none) of the converged ``states`` with the System's angle memories
    ``memories`` ({name: rad}) for the kernels' many-state calls
    (:meth:`~flexmbs.engine.compiled_system.CompiledSystem.pieces_many`)."""
    count = len(states)
    stack = np.empty((count, 3, states[0].q.size if count else 0))
    for k, st in enumerate(states):
        stack[k, 0], stack[k, 1], stack[k, 2] = st.q, st.qd, st.qdd
    lams = np.array([st.lam for st in states], dtype=float).reshape(count, -1)
    times = np.array([st.t for st in states], dtype=float)
    refs = np.array([[memory.get(name, np.nan) for name in names] for memory in memories],
                    dtype=float).reshape(count, len(names))
    return stack, lams, times, refs


def step_equations_many(compiled, chunk, index2: bool, values=None,
                        what: str = "equations") -> np.ndarray:
    """F (K, size) of ``compiled`` (a CompiledSystem) at the states of ``chunk``
    (:func:`stacked_states`) in one kernel call, in the row order of the step Jacobian:
    (r, Φ) in index 3, (r, Φ_q q̇ + Φ_t, Φ) in index 2; ``values``: the time values to
    take instead of those at the states' times; ``what`` "forces": the force kinds' part
    of r alone, zeros in the other rows."""
    return in_step_order(compiled.pieces_many(*chunk, what, values), compiled.n_q,
                         compiled.n_c, index2)


def in_step_order(rows, n: int, m: int, index2: bool) -> np.ndarray:
    """The kernel's (K, n_q + 2 n_c) rows (r, Φ, Φ_q q̇ + Φ_t) in the row order of the
    step Jacobian: (r, Φ) in index 3, (r, Φ_q q̇ + Φ_t, Φ) in index 2 (new arrays)."""
    if index2:
        return np.concatenate([rows[:, :n], rows[:, n + m:], rows[:, n:n + m]], axis=1)
    return rows[:, :n + m].copy()


class Derivative:
    """The parts dr (n_q,), dΦ (n_c,) and d(Φ_q q̇ + Φ_t) (n_c,) of ∂F/∂p at a state."""

    def __init__(self, n_q: int, n_c: int):
        self.r = np.zeros(n_q)
        self.phi = np.zeros(n_c)
        self.vel = np.zeros(n_c)

    def add_force(self, idx, dq_force) -> None:
        """An applied force changed by dQ: r = … − Q, so dr −= dQ."""
        np.add.at(self.r, idx, -np.asarray(dq_force, dtype=float))


def _vec(leaf, default_shape=()):
    return np.zeros(default_shape) if leaf is None else np.asarray(leaf, dtype=float)


def flexible_gravity_derivative(body, q, d_gravity) -> np.ndarray:
    """∂r_b (7+n,) of a flexible body (without geometric stiffening) along a change dg
    [m/s², global] of gravity: −Q_g(dg) = −Cᵀ G(ξ) Aᵀ dg, with G the gravity columns of
    its inertia in its coupling mode (``FrameInertia.gcol``, docs/theory_ffrf.md §7) and
    C = blockdiag(Aᵀ, Ḡ, I)."""
    from ..elements.floating_frame_reference import gravity_columns
    from ..frame.rotations import g_bar, rotation_matrix

    p, xi = q[3:7], q[7:]
    a = rotation_matrix(p)
    gcol = gravity_columns(body.data.invariants, xi, body.coupling)
    z = gcol @ (a.T @ np.asarray(d_gravity, dtype=float))
    return -np.concatenate([a @ z[:3], g_bar(p).T @ z[3:6], z[6:]])


class ProfileSlope:
    """d(s, ṡ, s̈)/dp of a profile along a parameter: central differences between the
    profiles of the models at p ± δ."""

    def __init__(self, plus, minus, span: float):
        self.plus, self.minus, self.span = plus, minus, span

    def __call__(self, t: float) -> np.ndarray:
        return (np.asarray(self.plus.eval(t), dtype=float)
                - np.asarray(self.minus.eval(t), dtype=float)) / self.span


def _find(model, group, name):
    if group == "bodies":
        return model.bodies[name]
    return next(e for e in getattr(model, group) if e.name == name)


#: The fields of a flexible body with analytic parameter derivatives: its modal
#: stiffness and damping matrices and a nonlinear body's cubic and quartic tensors.
FLEXIBLE_FIELDS = {("data", "K_ff"), ("data", "D_ff"), ("elastic", "cubic"),
                   ("elastic", "quartic")}


class ParameterTerms:
    """The analytic terms of one parameter on ``system`` from its model ``tangent``
    ({leaf path: derivative}); ``plus``/``minus``: the models at p ± δ."""

    ANALYTIC_FORCE_FIELDS: ClassVar[dict] = {
        "SpringDamperActuator": {"stiffness", "damping", "free_length", "actuator"},
        "RotationalSpringDamper": {"stiffness", "damping", "angle0"},
        "Bushing": {"stiffness", "damping", "rotational_stiffness", "rotational_damping",
                    "preload_force", "preload_torque"},
        "JointServo": {"kp", "kd", "ki", "reference", "torque_limit", "motor"},
        "JointActuator": {"profile"},
        "PointLoad": {"value"},
        "DistributedLoad": {"value"},
    }

    def __init__(self, system, tangent: dict, plus, minus, span: float, key: str,
                 modal: bool = False):
        self.system, self.key, self.modal = system, key, modal
        self.terms: list = []
        self.moves_initial = False
        self.unsupported: list[tuple] = []
        grouped: dict[tuple, dict] = {}
        for path, value in tangent.items():
            head = path[0]
            if head == "gravity":
                self.terms.append(("gravity", np.asarray(value, dtype=float)))
                continue
            if head in ("initial", "markers") or (head == "bodies" and path[2] in
                                                  ("q0", "qd0")):
                self.moves_initial = True
                if head == "markers":
                    self.unsupported.append(path)
                continue
            if head in ("bodies", "forces", "drives"):
                grouped.setdefault((head, path[1]), {})[path[2:]] = value
                if head == "drives":
                    self.moves_initial = True
                continue
            self.unsupported.append(path)
        for (group, name), fields_ in grouped.items():
            self._classify(group, name, fields_, plus, minus, span)
        refused = [p for p in self.unsupported if p[0] == "bodies"]
        if refused and not modal:
            raise ModelError(f"parameter {key!r} changes {path_name(refused[0])}: the "
                             f"modes of a flexible body have a derivative only for the "
                             f"built-in beams of case files, by their keys "
                             f"bodies.<name>.beam.… (docs/gradients.md)")

    @property
    def how(self) -> str:
        """"analytic"; "differences" when some change is taken by differences of the
        step equations (:class:`DifferenceTerm`); "analytic, initial state by
        differences" when the steps' terms are analytic but the parameter moves the
        initial state."""
        if self.unsupported and self.modal:
            return "modal data by Nelson's method, step equations by differences"
        if self.unsupported:
            return "differences"
        return "analytic, initial state by differences" if self.moves_initial else \
            "analytic"

    def _classify(self, group, name, fields_, plus, minus, span):
        system = self.system
        element = _find(system.model, group, name)
        kind = type(element).__name__
        heads = {path[0] for path in fields_}
        if group == "bodies":
            if kind == "RigidBody" and heads <= {"mass", "inertia", "com"}:
                self.terms.append(("rigid", system.body_index(name), fields_))
                return
            if hasattr(element, "data") and all(p[:2] in FLEXIBLE_FIELDS for p in fields_):
                self.terms.append(("flexible", system.body_index(name), fields_))
                return
            self.unsupported.extend(("bodies", name, *p) for p in fields_)
            return
        if group == "drives":
            if heads == {"profile"}:
                slope = ProfileSlope(_find(plus, group, name).profile,
                                     _find(minus, group, name).profile, span)
                self.terms.append(("drive", element, slope))
            else:
                self.unsupported.extend(("drives", name, *p) for p in fields_)
            return
        allowed = self.ANALYTIC_FORCE_FIELDS.get(kind, set())
        if kind == "JointServo":
            motor = {p[1] for p in fields_ if p[0] == "motor"}
            if motor - {"efficiency"}:
                allowed = set()
            if "ki" in heads and not element.ki:
                raise ModelError(f"parameter {self.key!r}: joint servo {name!r} has ki = 0, "
                                 f"so its integral is not run; give ki a positive value")
        if not heads <= allowed:
            self.unsupported.extend(("forces", name, *p) for p in fields_)
            return
        slope = None
        profile_field = {"SpringDamperActuator": "actuator", "JointServo": "reference",
                         "JointActuator": "profile"}.get(kind)
        if profile_field in heads:
            slope = ProfileSlope(getattr(_find(plus, group, name), profile_field),
                                 getattr(_find(minus, group, name), profile_field), span)
        self.terms.append((kind, element, fields_, slope))

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, state: State, out: Derivative) -> Derivative:
        """Add this parameter's analytic terms at ``state`` to ``out``."""
        for term in self.terms:
            getattr(self, "_" + term[0].lower())(state, out, *term[1:])
        return out

    def _gravity(self, st, out, dg):
        system = self.system
        zero = np.zeros(3)
        for body, sl in zip(system.bodies, system.slices, strict=True):
            q, qd, qdd = st.q[sl], st.qd[sl], st.qdd[sl]
            if type(body).__name__ == "RigidBody":
                out.r[sl] += rigid_parameters.gravity_derivative(q, body.mass,
                                                                 body.first_moment, dg)
            elif type(body).__name__ == "FlexibleBody" and not body.stiffening:
                out.r[sl] += flexible_gravity_derivative(body, q, dg)
            else:  # affine in g
                out.r[sl] += body.residual(q, qd, qdd, dg) - body.residual(q, qd, qdd, zero)
        for force in system.model.forces:  # a nonlinear beam's consistent inertia
            part = (force.gravity_derivative(system, st.q, st.qd, dg)
                    if hasattr(force, "gravity_derivative") else None)
            if part is not None:
                np.add.at(out.r, part[0], part[1])

    def _rigid(self, st, out, k, fields_):
        body, sl = self.system.bodies[k], self.system.slices[k]
        dm, dio, ds = rigid_parameters.mass_derivatives(
            body.mass, body.com, float(fields_.get(("mass",), 0.0)),
            _vec(fields_.get(("inertia",)), (3, 3)), _vec(fields_.get(("com",)), 3))
        out.r[sl] += rigid_parameters.residual_derivative(
            st.q[sl], st.qd[sl], st.qdd[sl], self.system.model.gravity, dm, dio, ds)

    def _flexible(self, st, out, k, fields_):
        sl = self.system.slices[k]
        out.r[sl][7:] += flexible_parameters.modal_force_derivative(
            st.q[sl][7:], st.qd[sl][7:], fields_.get(("data", "K_ff")),
            fields_.get(("data", "D_ff")), fields_.get(("elastic", "cubic")),
            fields_.get(("elastic", "quartic")))

    def _drive(self, st, out, spec, slope):
        system = self.system
        row = next(r for r in system.constraint_rows
                   if r.name == spec.name and r.kind in ("drive", "coordinate"))
        d_s, d_sd, _ = slope(st.t)
        k = row.rows.start
        if spec.kind != "rotation":
            out.phi[k] -= d_s
            out.vel[k] -= d_sd
            return
        vecs, jac, qd_loc, idx = bushing_parameters.pair_state(
            system, spec.marker_i, spec.marker_j, st.q, st.qd)
        theta, theta_dot, _ = spec.profile.eval(st.t)
        d_phi, d_grad, d_phi_t = drive_parameters.drive_derivatives(
            "rotation", vecs, jac, theta, theta_dot, d_s, d_sd)
        out.phi[k] += d_phi
        out.vel[k] += d_grad @ qd_loc + d_phi_t
        np.add.at(out.r, idx, st.lam[k] * d_grad)

    def _springdamperactuator(self, st, out, force, fields_, slope):
        idx, g, length, rate = spring_parameters.load_direction(
            self.system, force.marker_i, force.marker_j, st.q, st.qd)
        d_act = slope(st.t)[0] if slope is not None else 0.0
        df = spring_parameters.tension_derivative(
            length, rate, force.stiffness, float(fields_.get(("stiffness",), 0.0)),
            float(fields_.get(("damping",), 0.0)), float(fields_.get(("free_length",), 0.0)),
            d_act, force.free_length)
        out.add_force(idx, df * g)

    def _rotationalspringdamper(self, st, out, force, fields_, slope):
        idx, g, angle, rate = rotational_parameters.torque_direction(
            self.system, force.marker_i, force.marker_j, force.name, st.q, st.qd)
        dtau = rotational_parameters.torque_derivative(
            angle, rate, force.stiffness, float(fields_.get(("stiffness",), 0.0)),
            float(fields_.get(("damping",), 0.0)), float(fields_.get(("angle0",), 0.0)),
            force.angle0)
        out.add_force(idx, dtau * g)

    def _bushing(self, st, out, force, fields_, slope):
        vecs, jac, qd_loc, idx = bushing_parameters.pair_state(
            self.system, force.marker_i, force.marker_j, st.q, st.qd)

        def six(a, b):
            return np.concatenate([_vec(fields_.get((a,)), 3), _vec(fields_.get((b,)), 3)])

        out.add_force(idx, bushing_parameters.force_derivative(
            vecs, jac, qd_loc, six("stiffness", "rotational_stiffness"),
            six("damping", "rotational_damping"), six("preload_force", "preload_torque")))

    def _jointservo(self, st, out, servo, fields_, slope):
        d_ref = slope(st.t) if slope is not None else np.zeros(3)
        integral = servo.offset(st.t) / servo.ki if servo.ki else 0.0  # I acting at t
        idx, d_load = servo_load_change(
            self.system, servo, st, d_kp=float(fields_.get(("kp",), 0.0)),
            d_kd=float(fields_.get(("kd",), 0.0)), d_ref=d_ref[0], d_ref_rate=d_ref[1],
            d_limit=float(fields_.get(("torque_limit",), 0.0)),
            d_efficiency=float(fields_.get(("motor", "efficiency"), 0.0)),
            d_offset=float(fields_.get(("ki",), 0.0)) * integral)
        out.add_force(idx, d_load)

    def _jointactuator(self, st, out, force, fields_, slope):
        idx, g = actuator_parameters.load_direction(self.system, force.marker_i,
                                                    force.marker_j, force.kind, st.q)
        out.add_force(idx, slope(st.t)[0] * g)

    def _pointload(self, st, out, force, fields_, slope):
        body, marker, sl = self.system.marker_info(force.marker)
        if sl.stop > sl.start:
            out.r[sl] -= load_parameters.point_force_derivative(
                body, st.q[sl], marker, _vec(fields_[("value",)], 3), force.kind,
                force.frame == "marker")

    def _distributedload(self, st, out, force, fields_, slope):
        from ..frame.coupling import Coupling

        k = self.system.body_index(force.body)
        body, sl = self.system.bodies[k], self.system.slices[k]
        qb = st.q[sl]
        mode = body.coupling
        out.r[sl] -= load_parameters.distributed_force_derivative(
            qb[3:7], qb[7:], _vec(fields_[("value",)], 3), force.frame == "body",
            force.integrals, mode in (Coupling.TWO_WAY, Coupling.NO_MRF),
            mode is Coupling.RIGID)


def servo_load_change(system, servo, st, *, d_kp=0.0, d_kd=0.0, d_ref=0.0,
                      d_ref_rate=0.0, d_limit=0.0, d_efficiency=0.0, d_offset=0.0):
    """(idx, dQ): the change of a joint servo's load on the coordinates ``idx`` at the
    state ``st`` for changes of its gains, reference (value and rate), torque limit,
    efficiency and integral term b = ki I [N m] (``d_offset``), the integral acting at
    st.t held (its history: :meth:`~flexmbs.model.servos.JointServo.offset`)."""
    if servo.kind == "torque":
        idx, g, angle, rate = rotational_parameters.torque_direction(
            system, servo.marker_i, servo.marker_j, servo.name, st.q, st.qd)
    else:
        angle, rate, _ = relative_translation(system, servo.marker_i, servo.marker_j,
                                              st.q, st.qd)
        idx, g = actuator_parameters.load_direction(system, servo.marker_i,
                                                    servo.marker_j, "force", st.q)
    ref, ref_rate = servo.reference_values(st.t)
    tau_m, saturated = motor_torque(angle, rate, ref, ref_rate, servo.kp, servo.kd,
                                    servo.offset(st.t), servo.limit, servo.ratio)
    d_tau_m = servo_parameters.motor_torque_derivative(
        angle, rate, ref, ref_rate, servo.kp, servo.kd, servo.ratio, saturated,
        np.sign(tau_m), d_kp, d_kd, d_ref, d_ref_rate, d_limit)
    if not saturated:
        d_tau_m += d_offset
    d_tau = servo_parameters.joint_torque_derivative(tau_m, d_tau_m, servo.ratio,
                                                     servo.efficiency, d_efficiency)
    return idx, d_tau * g


class DifferenceTerm:
    """∂F/∂p by differences of the step equations between the Systems at p ± δ
    (changes without an analytic term: a force's marker, a servo's gear ratio, a
    built-in beam's modal data): the residual, Φ and Φ_q q̇ + Φ_t at the same state, the
    angle memory handed over. After :meth:`compile`, the residual, Φ and Φ_q come from
    the compiled engine's evaluation of each System (one kernel call, a fraction of the
    NumPy residual's cost; both agree to round-off)."""

    def __init__(self, system, plus_system, minus_system, span: float):
        self.system, self.plus, self.minus, self.span = (system, plus_system,
                                                         minus_system, span)
        self.compiled = None

    def compile(self) -> bool:
        """Use the compiled engine for the two Systems when it can evaluate them;
        whether it does."""
        from ..engine.compiled_system import CompiledSystem
        from ..engine.tables import unsupported_reason

        if self.compiled is None and all(unsupported_reason(s) is None
                                          for s in (self.plus, self.minus)):
            self.compiled = tuple(CompiledSystem(s) for s in (self.plus, self.minus))
        return self.compiled is not None

    def _equations(self, k, s, st: State):
        """(r, Φ, Φ_q q̇ + Φ_t) of System ``s`` (the k-th end) at ``st``."""
        if self.compiled is not None:
            cs = self.compiled[k]
            jac = cs.constraint_jacobian(st.q, st.qd, st.qdd, st.lam, st.t)
            return cs.work.r.copy(), cs.work.phi.copy(), jac @ st.qd + s.phi_t(st.q, st.t)
        r, phi, jac = s.dynamic_residual(st.q, st.qd, st.qdd, st.lam, st.t, sparse=False)
        return r, phi, np.asarray(jac @ st.qd).ravel() + s.phi_t(st.q, st.t)

    @property
    def batched(self) -> bool:
        """Whether :meth:`many` can run: compiled, no state-dependent callables."""
        return self.compiled is not None and not any(cs.callbacks.items
                                                     for cs in self.compiled)

    def many(self, states, memories, index2: bool) -> np.ndarray:
        """∂F/∂p (K, size) at the converged ``states`` (the System's angle memory at each:
        ``memories``) in one kernel call per System, in the row order of the step
        Jacobian: (r, Φ) in index 3, (r, Φ_q q̇ + Φ_t, Φ) in index 2."""
        chunk = stacked_states(states, memories, self.compiled[0].torsion_names)
        ends = [step_equations_many(cs, chunk, index2) for cs in self.compiled]
        return (ends[0] - ends[1]) / self.span

    def evaluate(self, st: State, out: Derivative) -> Derivative:
        parts = []
        for k, s in enumerate((self.plus, self.minus)):
            s.angle_memory = dict(self.system.angle_memory)
            parts.append(self._equations(k, s, st))
        scale = 1.0 / self.span
        out.r += (parts[0][0] - parts[1][0]) * scale
        out.phi += (parts[0][1] - parts[1][1]) * scale
        out.vel += (parts[0][2] - parts[1][2]) * scale
        return out
