"""Applied forces: spring–damper–actuators, rotational spring–dampers, joint actuators
driven by user callables (controllers, co-simulation), point forces and torques.

Every force adds its generalized force Q = Jᵀ F into the global vector through the
bodies' marker Jacobians (``force_jac`` for points, ``angular_jac`` for torques), so
forces act on rigid and flexible bodies alike; gravity and elastic forces come from the
bodies themselves. Callables receive ``(t, state)`` with a :class:`ForceState`; their
errors are re-raised naming the force.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..elements.loads.reference import force_jacobian as distributed_force_jacobian
from ..elements.loads.reference import generalized_force as distributed_force
from ..elements.loads.reference import point_force_jacobian, point_generalized_force
from ..elements.marker_pairs import (
    MarkerPair,
    add_load,
    apply_pair,
    apply_torque_pair,
    marker_state,
    pair_load_tangent,
    relative_rotation,
    relative_translation,
    rotation_partials,
    rotation_state,
    translation_partials,
)
from ..elements.rotational_spring.reference import torque as spring_torque
from ..elements.spring_damper.reference import line as spring_line
from ..elements.spring_damper.reference import load_derivatives as spring_load_derivatives
from ..elements.spring_damper.reference import spring_force
from ..errors import ModelError
from .drives import Profile


@dataclass
class ForceState:
    """What a force callable sees: time [s], the full q and q̇, and (for joint forces)
    the joint coordinate ``value`` [rad, unwrapped, or m] and its ``rate``."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    value: float | None = None
    rate: float | None = None


def _call(force, function, t, state, what):
    try:
        value = function(t, state)
    except Exception as exc:
        raise ModelError(f"{type(force).__name__} {force.name!r}: its {what} raised "
                         f"{type(exc).__name__}: {exc}") from exc
    return value


def _scalar(force, value, what) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{type(force).__name__} {force.name!r}: its {what} must return a "
                         f"number, got {value!r}") from None
    if not np.isfinite(out):
        raise ModelError(f"{type(force).__name__} {force.name!r}: its {what} returned {out}")
    return out


def _input_differences(function, q, qd, value, rate, idx, partials, fd_step):
    """(u, du/dq (n_q,), du/dq̇ (n_q,)) of a callable's scalar u = function(q, q̇, s, ṡ)
    of the state and of a coordinate s with rate ṡ: forward differences over every q and
    q̇ (a callable may read any coordinate) and over s and ṡ, chained with their exact
    partials ``partials`` = (∂s/∂q, ∂ṡ/∂q, ∂ṡ/∂q̇) on the coordinates ``idx`` (None: s
    and ṡ held)."""
    n = q.size
    u = function(q, qd, value, rate)

    def slope(x, qq, qqd, vv, rr):
        return (function(qq, qqd, vv, rr) - u) / x

    du_dq, du_dqd = np.zeros(n), np.zeros(n)
    for col in range(n):
        step = fd_step * max(1.0, abs(q[col]))
        dq = q.copy()
        dq[col] += step
        du_dq[col] = slope(step, dq, qd, value, rate)
        step = fd_step * max(1.0, abs(qd[col]))
        dqd = qd.copy()
        dqd[col] += step
        du_dqd[col] = slope(step, q, dqd, value, rate)
    if partials is not None:
        value_dq, rate_dq, rate_dqd = partials
        step_v = fd_step * max(1.0, abs(value))
        step_r = fd_step * max(1.0, abs(rate))
        du_dv = slope(step_v, q, qd, value + step_v, rate)
        du_dr = slope(step_r, q, qd, value, rate + step_r)
        np.add.at(du_dq, idx, du_dv * value_dq + du_dr * rate_dq)
        np.add.at(du_dqd, idx, du_dr * rate_dqd)
    return u, du_dq, du_dqd


def _vector_differences(function, q, qd, fd_step):
    """(v, ∂v/∂q, ∂v/∂q̇) of a vector callable v = function(q, q̇), forward differences
    with the steps of :func:`_input_differences`."""
    n = q.size
    v = function(q, qd)
    dv_dq, dv_dqd = np.zeros((v.size, n)), np.zeros((v.size, n))
    for col in range(n):
        step = fd_step * max(1.0, abs(q[col]))
        dq = q.copy()
        dq[col] += step
        dv_dq[:, col] = (function(dq, qd) - v) / step
        step = fd_step * max(1.0, abs(qd[col]))
        dqd = qd.copy()
        dqd[col] += step
        dv_dqd[:, col] = (function(q, dqd) - v) / step
    return v, dv_dq, dv_dqd


# --------------------------------------------------------------------------- tangents
# ``tangents(system, q, qd, t)`` of a force returns its part of the Newton tangents,
# (idx, K, C) with K = −∂Q/∂q and C = −∂Q/∂q̇ on the global coordinates ``idx`` (rows and
# columns), or None when its value comes from a user callable: then
# flexmbs.assembly.tangents differentiates that force alone by finite differences.

def warn_negative_coefficients(owner: str, stiffness: float, damping: float,
                               stiffness_unit: str, damping_unit: str) -> None:
    """A :class:`~flexmbs.errors.ModelWarning` naming ``owner`` for a negative spring
    stiffness or damping coefficient: accepted (a negative stiffness or damping is a way
    to model a destabilizing load or a self-excitation), but more often a sign slip."""
    import warnings

    from ..errors import ModelWarning

    for what, value, unit, effect in (
            ("stiffness", stiffness, stiffness_unit, "pushes away from its rest position"),
            ("damping", damping, damping_unit, "feeds energy into the motion")):
        if value < 0:
            warnings.warn(f"{owner}: {what} {value:g} {unit} is negative: it {effect}",
                          ModelWarning, stacklevel=3)


@dataclass(frozen=True, eq=False)
class SpringDamperActuator:
    """Translational spring–damper–actuator between markers i and j.

    Tension f = k (L − L0) + c L̇ + f_a [N] pulls the markers together (f > 0);
    L = ‖r_j − r_i‖ [m]. ``actuator`` is a Profile (its value is the force), a callable
    f(t, state) with ``state.value = L``, ``state.rate = L̇``, or None.
    """

    name: str
    marker_i: str
    marker_j: str
    stiffness: float = 0.0
    damping: float = 0.0
    free_length: float = 0.0
    actuator: Any = None

    #: The element kind that evaluates it in compiled code (flexmbs.elements).
    element_kind: ClassVar[str] = "spring_damper"

    @property
    def actuator_depends_on_state(self) -> bool:
        """True when the actuator is a callable of the state, not a time profile."""
        return self.actuator is not None and not isinstance(self.actuator, Profile)

    def tension(self, system, q, qd, t):
        """(f [N], unit vector i→j, L [m], L̇ [m/s])."""
        _bi, _mi, _, ri, _, ji, qdi = marker_state(system, self.marker_i, q, qd)
        _bj, _mj, _, rj, _, jj, qdj = marker_state(system, self.marker_j, q, qd)
        length, u, rate = spring_line(rj - ri, jj[0] @ qdj - ji[0] @ qdi)
        f = spring_force(length, rate, self.stiffness, self.damping, self.free_length)
        if isinstance(self.actuator, Profile):
            f += self.actuator.eval(t)[0]
        elif callable(self.actuator):
            f += self._actuator_value(t, q, qd, length, rate)
        if length == 0.0 and f != 0.0:
            raise ModelError(f"force {self.name!r}: markers {self.marker_i} and "
                             f"{self.marker_j} coincide while the force is {f:g} N; its "
                             f"line of action is undefined")
        return f, u, length, rate

    def _actuator_value(self, t, q, qd, length, rate) -> float:
        return _scalar(self, _call(self, self.actuator, t,
                                   ForceState(t, q, qd, length, rate), "actuator"),
                       "actuator")

    def input_values(self, system, q, qd, t) -> np.ndarray:
        """(1,): the actuator callable's force [N] at the state (what the compiled
        engine's call-back evaluates, docs/compiled.md)."""
        _bi, _mi, _, ri, _, ji, qdi = marker_state(system, self.marker_i, q, qd)
        _bj, _mj, _, rj, _, jj, qdj = marker_state(system, self.marker_j, q, qd)
        length, _, rate = spring_line(rj - ri, jj[0] @ qdj - ji[0] @ qdi)
        return np.array([self._actuator_value(t, q, qd, length, rate)])

    def input_derivatives(self, system, q, qd, t, fd_step: float = 1e-7):
        """(u (1,), du/dq (1, n_q), du/dq̇ (1, n_q)) of the actuator callable's force,
        forward differences over q, q̇ and ``state.value`` = L, ``state.rate`` = L̇,
        chained with L and L̇'s exact partials (as :meth:`JointActuator.callable_tangents`
        does): 2 n_q + 3 calls, no kinematics in the loop."""
        pair = MarkerPair(system, self.marker_i, self.marker_j, q, qd)
        d_dot = pair.jj[0] @ pair.qdj - pair.ji[0] @ pair.qdi
        length, unit, rate = spring_line(pair.rj - pair.ri, d_dot)
        partials = None
        if length > 0.0:
            d_dq = pair.both(-pair.ji[0], pair.jj[0])
            rates = pair.both(-pair.bi.marker_jac_rate(pair.qi, pair.qdi, pair.mi)[0],
                              pair.bj.marker_jac_rate(pair.qj, pair.qdj, pair.mj)[0])
            du = (np.eye(3) - np.outer(unit, unit)) / length @ d_dq
            partials = (unit @ d_dq, d_dot @ du + unit @ rates, unit @ d_dq)
        value, du_dq, du_dqd = _input_differences(
            lambda qq, qqd, vv, rr: self._actuator_value(t, qq, qqd, vv, rr), q, qd,
            length, rate, pair.idx, partials, fd_step)
        return np.array([value]), du_dq[None, :], du_dqd[None, :]

    def apply(self, system, q, qd, t, Q):
        f, u, _, _ = self.tension(system, q, qd, t)
        if f == 0.0:
            return
        bi, mi, sli = system.marker_info(self.marker_i)
        bj, mj, slj = system.marker_info(self.marker_j)
        add_load(Q, sli, bi.force_jac(q[sli], mi).T @ (f * u))
        add_load(Q, slj, bj.force_jac(q[slj], mj).T @ (-f * u))

    def tangents(self, system, q, qd, t):
        """Exact −∂Q/∂(q, q̇) for constant or Profile actuators (None for a callable).

        ∂(f u) from :func:`flexmbs.elements.spring_damper.reference.load_derivatives`;
        the generalized force [J_iᵀ; −J_jᵀ](f u) with the multiplier-consistent force
        Jacobians (docs/theory_ffrf.md §7) adds ∂(Jᵀ g)/∂q at g = f u.
        """
        if self.actuator is not None and not isinstance(self.actuator, Profile):
            return None
        f, u, length, _ = self.tension(system, q, qd, t)
        pair = MarkerPair(system, self.marker_i, self.marker_j, q, qd)
        if length == 0.0:
            return None  # the line of action is undefined: finite differences decide
        d_dq = pair.both(-pair.ji[0], pair.jj[0])
        rates_i = pair.bi.marker_jac_rate(pair.qi, pair.qdi, pair.mi)[0]
        rates_j = pair.bj.marker_jac_rate(pair.qj, pair.qdj, pair.mj)[0]
        d_dot = pair.jj[0] @ pair.qdj - pair.ji[0] @ pair.qdi
        g_dq, g_dqd = spring_load_derivatives(u, length, f, d_dq, d_dot,
                                              pair.both(-rates_i, rates_j), self.stiffness,
                                              self.damping)
        # Q = [J_iᵀ g; −J_jᵀ g] is _pair_load_tangent's form with v = −g
        k, c = pair_load_tangent(pair, -f * u, -g_dq, -g_dqd, "force")
        return pair.idx, k, c

    def measured_value(self, system, q, qd, t) -> tuple[float, str]:
        """(tension [N], "N"): what a force sensor records."""
        return self.tension(system, q, qd, t)[0], "N"

    def potential(self, system, q):
        zero = np.zeros_like(q)
        _, _, length, _ = SpringDamperActuator(self.name, self.marker_i, self.marker_j,
                                               self.stiffness, 0.0,
                                               self.free_length).tension(system, q, zero, 0)
        return 0.5 * self.stiffness * (length - self.free_length) ** 2

    def nonconservative(self):
        """The part of this force that has no potential (damper and actuator), or None."""
        if not self.damping and self.actuator is None:
            return None
        return SpringDamperActuator(self.name, self.marker_i, self.marker_j, 0.0,
                                    self.damping, self.free_length, self.actuator)


@dataclass(frozen=True, eq=False)
class RotationalSpringDamper:
    """Torque T = −k (θ − θ0) − c θ̇ about z_i acting on j (reaction on i) [N m]; θ is the
    (unwrapped) angle of x_j about z_i, as in a revolute joint with these markers."""

    name: str
    marker_i: str
    marker_j: str
    stiffness: float = 0.0
    damping: float = 0.0
    angle0: float = 0.0

    element_kind: ClassVar[str] = "rotational_spring"

    def measured_value(self, system, q, qd, t) -> tuple[float, str]:
        """(torque about z_i on j [N m], "N m"), the angle unwrapped by continuity over
        the successive calls (a key of its own)."""
        angle, rate, _ = relative_rotation(system, self.marker_i, self.marker_j, q, qd,
                                           key=f"@sensor:{self.name}")
        return spring_torque(angle, rate, self.stiffness, self.damping, self.angle0), "N m"

    def apply(self, system, q, qd, t, Q):
        angle, rate, zi, om_i, om_j = rotation_state(system, self.marker_i, self.marker_j,
                                                      q, qd, key=self.name)
        torque = spring_torque(angle, rate, self.stiffness, self.damping, self.angle0)
        apply_torque_pair(system, self.marker_i, self.marker_j, torque * zi, om_i, om_j, Q)

    def tangents(self, system, q, qd, t):
        """Exact −∂Q/∂(q, q̇) of the torque τ z_i on j (reaction on i), with θ, θ̇ and
        their derivatives from :func:`_rotation_partials`."""
        pair = MarkerPair(system, self.marker_i, self.marker_j, q, qd)
        angle, rate, zi, angle_dq, rate_dq, rate_dqd, dz = rotation_partials(
            system, pair, self.name)
        torque = spring_torque(angle, rate, self.stiffness, self.damping, self.angle0)
        t_dq = -self.stiffness * angle_dq - self.damping * rate_dq
        t_dqd = -self.damping * rate_dqd
        k, c = pair_load_tangent(pair, torque * zi, np.outer(zi, t_dq) + torque * dz,
                                  np.outer(zi, t_dqd), "torque")
        return pair.idx, k, c

    def potential(self, system, q):
        angle, _, _ = relative_rotation(system, self.marker_i, self.marker_j, q,
                                        np.zeros_like(q), key=self.name)
        return 0.5 * self.stiffness * (angle - self.angle0) ** 2

    def nonconservative(self):
        """The damper part, or None."""
        if not self.damping:
            return None
        return RotationalSpringDamper(self.name, self.marker_i, self.marker_j, 0.0,
                                      self.damping, self.angle0)


@dataclass(frozen=True, eq=False)
class JointActuator:
    """Joint torque (about z_i, ``kind="torque"``) or force (along z_i, ``"force"``) on j
    with reaction on i, from ``function(t, state)`` — the hook for controllers and
    co-simulation; ``state.value``/``state.rate`` hold the (unwrapped) joint angle or the
    displacement and their rate.

    ``profile``: set when the value is a function of time only (a
    :class:`~flexmbs.model.drives.Profile`; ``function`` then returns its value), which
    lets the compiled kernels evaluate the actuator (docs/compiled.md)."""

    name: str
    marker_i: str
    marker_j: str
    function: Callable[[float, ForceState], float]
    kind: str = "torque"
    profile: Profile | None = None

    element_kind: ClassVar[str] = "joint_actuator"

    def apply(self, system, q, qd, t, Q):
        if self.kind == "torque":
            value, rate, zi, om_i, om_j = rotation_state(system, self.marker_i,
                                                          self.marker_j, q, qd, key=self.name)
        else:
            value, rate, zi = relative_translation(system, self.marker_i, self.marker_j, q,
                                                   qd)
        u = self._value(t, q, qd, value, rate)
        if self.kind == "torque":
            apply_torque_pair(system, self.marker_i, self.marker_j, u * zi, om_i, om_j, Q)
        else:
            apply_pair(system, self.marker_i, self.marker_j, u * zi, q, Q, self.kind)

    def measured_value(self, system, q, qd, t) -> tuple[float, str]:
        """(torque [N m] or force [N], its units): what a force sensor records."""
        if self.kind == "torque":
            value, rate, _ = relative_rotation(system, self.marker_i, self.marker_j, q, qd,
                                               key=f"@sensor:{self.name}")
        else:
            value, rate, _ = relative_translation(system, self.marker_i, self.marker_j, q,
                                                  qd)
        return self._value(t, q, qd, value, rate), ("N m" if self.kind == "torque" else "N")

    def _value(self, t, q, qd, value, rate) -> float:
        return _scalar(self, _call(self, self.function, t, ForceState(t, q, qd, value, rate),
                                   "function"), "function")

    def tangents(self, system, q, qd, t):
        """Always a user callable: None (finite differences of this force alone, see
        :meth:`callable_tangents`)."""
        return None

    def _pair_parts(self, system, q, qd):
        pair = MarkerPair(system, self.marker_i, self.marker_j, q, qd)
        if self.kind == "torque":
            return pair, rotation_partials(system, pair, self.name)
        return pair, translation_partials(pair)

    def input_values(self, system, q, qd, t) -> np.ndarray:
        """(1,): the callable's value at the state, with the joint coordinate and its
        rate as :meth:`apply` computes them (what the compiled engine's call-back
        evaluates, docs/compiled.md)."""
        if self.kind == "torque":
            value, rate, _ = relative_rotation(system, self.marker_i, self.marker_j, q, qd,
                                               key=self.name)
        else:
            value, rate, _ = relative_translation(system, self.marker_i, self.marker_j, q,
                                                  qd)
        return np.array([self._value(t, q, qd, value, rate)])

    def input_derivatives(self, system, q, qd, t, fd_step: float = 1e-7):
        """(u (1,), du/dq (1, n_q), du/dq̇ (1, n_q)): the callable's value and its total
        derivatives as :meth:`callable_tangents` takes them."""
        pair, parts = self._pair_parts(system, q, qd)
        value, rate, _, value_dq, rate_dq, rate_dqd, _ = parts
        u, du_dq, du_dqd = _input_differences(
            lambda qq, qqd, vv, rr: self._value(t, qq, qqd, vv, rr), q, qd, value, rate,
            pair.idx, (value_dq, rate_dq, rate_dqd), fd_step)
        return np.array([u]), du_dq[None, :], du_dqd[None, :]

    def callable_tangents(self, system, q, qd, t, fd_step: float = 1e-7):
        """(rows, K, C), K = −∂Q/∂q and C = −∂Q/∂q̇ on this force's rows × all of q, with
        only the callable's scalar u differenced (forward, over all of q and q̇ — it may
        read any coordinate — and over ``state.value`` and ``state.rate``):

            du/dq = ∂u/∂q + ∂u/∂s ∂s/∂q + ∂u/∂ṡ ∂ṡ/∂q,    du/dq̇ = ∂u/∂q̇ + ∂u/∂ṡ ∂ṡ/∂q̇,

        with the joint coordinate s (angle or displacement), its rate and the generalized
        force Q = [−J_iᵀ; J_jᵀ](u z_i) differentiated exactly (J = angular_jac for a
        torque, force_jac for a force). 2 n_q + 3 calls of the callable, no kinematics."""
        pair, parts = self._pair_parts(system, q, qd)
        value, rate, zi, value_dq, rate_dq, rate_dqd, dz = parts
        u, du_dq, du_dqd = _input_differences(
            lambda qq, qqd, vv, rr: self._value(t, qq, qqd, vv, rr), q, qd, value, rate,
            pair.idx, (value_dq, rate_dq, rate_dqd), fd_step)
        name = "angular_jac" if self.kind == "torque" else "force_jac"
        jac_i = getattr(pair.bi, name)(pair.qi, pair.mi)
        jac_j = getattr(pair.bj, name)(pair.qj, pair.mj)
        lever = np.vstack([-jac_i.T, jac_j.T])  # Q = lever (u z_i), local rows
        vec = u * zi
        tan = np.vstack([-pair.only_i(getattr(pair.bi, name + "_tangent")(pair.qi, pair.mi,
                                                                          vec)),
                         pair.only_j(getattr(pair.bj, name + "_tangent")(pair.qj, pair.mj,
                                                                         vec))])
        k = lever @ np.outer(zi, du_dq)
        rows = np.arange(pair.idx.size)
        np.add.at(k, (rows[:, None], pair.idx[None, :]), lever @ (u * dz) + tan)
        c = lever @ np.outer(zi, du_dqd)
        return pair.idx, -k, -c


@dataclass(frozen=True, eq=False)
class DistributedLoad:
    """A load field over a flexible body's nodes: node k carries f_k = w_k · F, with F a
    constant 3-vector or f(t, state) [N per unit weight], in global or body axes.

    With ``weights="mass"`` F is an acceleration-like field [N/kg = m/s²] (wind drag per
    mass, base excitation); with ``"uniform"`` it is spread equally. The generalized force
    Σ_k J_kᵀ f_k = [A W F̄; Ḡᵀ((Σwū0 + ΣwΦ ξ) × F̄); (ΣwΦ)ᵀ F̄] uses integrals computed once
    (``integrals`` = (Σw, Σw ū0, Σw Φ)), so its cost does not depend on the mesh."""

    name: str
    body: str
    value: Any
    integrals: tuple
    frame: str = "global"

    element_kind: ClassVar[str] = "distributed_load"

    def _coupling(self, system) -> tuple[bool, bool]:
        """(the lever arms deform, rigid coupling) of the loaded body."""
        from ..frame.coupling import Coupling

        mode = system.bodies[system.body_index(self.body)].coupling
        return mode in (Coupling.TWO_WAY, Coupling.NO_MRF), mode is Coupling.RIGID

    def apply(self, system, q, qd, t, Q):
        sl = system.require_body(self.body)
        qb = q[sl]
        vec = self.input_values(system, q, qd, t)
        sees, rigid = self._coupling(system)
        Q[sl] += distributed_force(qb[3:7], qb[7:], vec, self.frame == "body",
                                   self.integrals, sees, rigid)

    def input_values(self, system, q, qd, t) -> np.ndarray:
        """The load (3,) at the state (its callable's value, checked)."""
        raw = (_call(self, self.value, t, ForceState(t, q, qd), "function")
               if callable(self.value) else self.value)
        vec = np.asarray(raw, dtype=float)
        if vec.shape != (3,) or not np.all(np.isfinite(vec)):
            raise ModelError(f"DistributedLoad {self.name!r}: the load must be 3 finite "
                             f"numbers, got {raw!r}")
        return vec

    def input_derivatives(self, system, q, qd, t, fd_step: float = 1e-7):
        """(value (3,), ∂/∂q (3, n_q), ∂/∂q̇ (3, n_q)) by forward differences."""
        return _vector_differences(lambda qq, qqd: self.input_values(system, qq, qqd, t),
                                   q, qd, fd_step)

    def tangents(self, system, q, qd, t):
        """Exact −∂Q/∂q of a constant load (None for a callable;
        :func:`flexmbs.elements.loads.reference.force_jacobian`). No q̇ dependence."""
        if callable(self.value):
            return None
        sl = system.require_body(self.body)
        qb = q[sl]
        sees, rigid = self._coupling(system)
        dq = distributed_force_jacobian(qb[3:7], qb[7:], np.asarray(self.value, dtype=float),
                                        self.frame == "body", self.integrals, sees, rigid)
        n = sl.stop - sl.start
        return np.arange(sl.start, sl.stop), -dq, np.zeros((n, n))


@dataclass(frozen=True, eq=False)
class PointLoad:
    """Force [N] or torque [N m] on a marker: a constant 3-vector or f(t, state);
    ``frame="global"`` or ``"marker"`` (components along the marker axes)."""

    name: str
    marker: str
    value: Any
    kind: str = "force"
    frame: str = "global"

    element_kind: ClassVar[str] = "point_load"

    def apply(self, system, q, qd, t, Q):
        body, marker, sl = system.marker_info(self.marker)
        vec = self.input_values(system, q, qd, t)
        add_load(Q, sl, point_generalized_force(body, q[sl], marker, vec, self.kind,
                                                self.frame == "marker"))

    def input_values(self, system, q, qd, t) -> np.ndarray:
        """The force or torque (3,) at the state (its callable's value, checked)."""
        raw = (_call(self, self.value, t, ForceState(t, q, qd), "function")
               if callable(self.value) else self.value)
        vec = np.asarray(raw, dtype=float)
        if vec.shape != (3,) or not np.all(np.isfinite(vec)):
            raise ModelError(f"PointLoad {self.name!r}: the {self.kind} must be 3 finite "
                             f"numbers, got {raw!r}")
        return vec

    def input_derivatives(self, system, q, qd, t, fd_step: float = 1e-7):
        """(value (3,), ∂/∂q (3, n_q), ∂/∂q̇ (3, n_q)) by forward differences."""
        return _vector_differences(lambda qq, qqd: self.input_values(system, qq, qqd, t),
                                   q, qd, fd_step)

    def tangents(self, system, q, qd, t):
        """Exact −∂Q/∂q of a constant load (None for a callable;
        :func:`flexmbs.elements.loads.reference.point_force_jacobian`)."""
        if callable(self.value):
            return None
        body, marker, sl = system.marker_info(self.marker)
        n = sl.stop - sl.start
        dq = point_force_jacobian(body, q[sl], marker, np.asarray(self.value, dtype=float),
                                  self.kind, self.frame == "marker")
        return np.arange(sl.start, sl.stop), -dq, np.zeros((n, n))
