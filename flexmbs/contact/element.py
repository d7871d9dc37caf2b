"""A contact force element: geometry + normal law + optional friction, with the contact
state (open / stick / slip) that changes between steps.

Used like any applied force (``apply``, ``potential``, ``nonconservative``), so contacts
act on rigid and flexible bodies and enter the energy balance: the elastic energy of the
normal law (and of the stick spring) is potential energy, the rest — contact damping and
friction — is non-conservative work, and the element also accumulates its own dissipated
energy. The integrator takes a :class:`Sample` of every contact after each accepted
step (from the NumPy path or the compiled kernels, :mod:`flexmbs.elements.contact`),
locates impact onsets with them, calls :meth:`Contact.commit`, and applies impulses for
the ``Impulse`` law (:mod:`flexmbs.contact.events`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .geometry import Kinematics
from .sample import Sample, sample_row

OPEN, STICK, SLIP = 0, 1, 2
STATE_NAMES = {OPEN: "open", STICK: "stick", SLIP: "slip"}


@dataclass
class ContactState:
    """Mutable per-run state: mode, approach speed at the impact onset [m/s], the stick
    anchors (contact points in their marker frames), accumulated dissipated energy [J]."""

    mode: int = OPEN
    v_onset: float | None = None
    anchor: tuple | None = None
    dissipated: float = 0.0
    impacts: int = 0


@dataclass(eq=False)
class Contact:
    """Contact between two markers' bodies.

    Parameters
    ----------
    name : str
    geometry : SpherePlane | SphereSphere | JournalBearing
    law : a normal law of :mod:`flexmbs.contact.laws`
    friction : Friction or None
    """

    name: str
    geometry: Any
    law: Any
    friction: Any = None
    state: ContactState = field(default_factory=ContactState)
    element_kind: ClassVar[str] = "contact"

    @property
    def markers(self) -> tuple[str, str]:
        """(marker of side A, marker of side B)."""
        return self.geometry.markers

    @property
    def marker_i(self) -> str:  # the names the model checks and the System's graph use
        return self.markers[0]

    @property
    def marker_j(self) -> str:
        return self.markers[1]

    def reset(self) -> None:
        """Forget the state (start of a run)."""
        self.state = ContactState()

    # ------------------------------------------------------------------ kinematics
    def kinematics(self, system, q, qd=None) -> Kinematics:
        return self.geometry.evaluate(system, q, qd)

    def gap(self, system, q) -> float:
        """g(q) [m]: > 0 open, < 0 penetrating."""
        return self.kinematics(system, q).gap

    # ------------------------------------------------------------------ forces
    def _anchored(self, system, q, kin):
        """Tangential stick-spring elongation u_t [m] (global): the relative displacement
        of the stick anchors plus the offset (in side A's marker axes) that makes the
        spring start at the friction force it takes over (no jump on re-sticking)."""
        la, lb, offset = self.state.anchor
        pts = []
        for name, local in ((self.markers[0], la), (self.markers[1], lb)):
            body, marker, sl = system.marker_info(name)
            r, axes, _, _ = body.marker_frame(q[sl], marker, jac=False)
            pts.append((r + axes @ local, axes))
        u = pts[1][0] - pts[0][0] + pts[0][1] @ offset
        return u - (kin.normal @ u) * kin.normal

    def forces(self, system, q, qd, kin=None):
        """(kin, F_n total, F_n elastic, F_t (3,), F_t conservative part (3,)) [N]."""
        kin = kin or self.kinematics(system, q, qd)
        zero = np.zeros(3)
        delta = kin.penetration
        if delta <= 0 or self.law.impulsive:
            return kin, 0.0, 0.0, zero, zero
        v_onset = self.state.v_onset if self.state.mode != OPEN else max(-kin.v_n, 0.0)
        f_n, f_el = self.law.force(delta, -kin.v_n, v_onset)
        if self.friction is None or f_n <= 0:
            return kin, f_n, f_el, zero, zero
        fr = self.friction
        if fr.model == "stick-slip" and self.state.mode == STICK and self.state.anchor:
            u_t = self._anchored(system, q, kin)
            spring = -fr.stick_stiffness * u_t
            return kin, f_n, f_el, spring - fr.stick_damping * kin.v_t, spring
        return kin, f_n, f_el, fr.regularized(kin.v_t, f_n), zero

    def apply(self, system, q, qd, t, Q) -> None:
        kin, f_n, _, f_t, _ = self.forces(system, q, qd)
        self._load(kin, f_n * kin.normal + f_t, Q)

    @staticmethod
    def _load(kin, force, Q):
        if not np.any(force):
            return
        Q[kin.b.sl] += kin.b.jac.T @ force
        Q[kin.a.sl] -= kin.a.jac.T @ force

    def potential(self, system, q) -> float:
        """Elastic energy of the normal law at the current penetration, plus the stick
        spring's ½ k_t |u_t|² while stuck [J]."""
        kin = self.kinematics(system, q)
        energy = self.law.energy(kin.penetration) if kin.penetration > 0 else 0.0
        fr = self.friction
        if (fr is not None and fr.model == "stick-slip" and self.state.mode == STICK
                and self.state.anchor and kin.penetration > 0):
            u_t = self._anchored(system, q, kin)
            energy += 0.5 * fr.stick_stiffness * float(u_t @ u_t)
        return float(energy)

    def nonconservative(self):
        return _Dissipative(self)

    def tangents(self, system, q, qd, t):
        return None  # differentiated by finite differences (flexmbs.assembly.tangents)

    def dissipation_power(self, system, q, qd) -> float:
        """Power dissipated by contact damping and friction [W] (≥ 0)."""
        return self.sample(system, q, qd).dissipation

    # ------------------------------------------------------------------ samples
    def sample(self, system, q, qd) -> Sample:
        """The contact at (q, q̇) under its current state (the NumPy path's
        :class:`Sample`; the compiled engine's comes from its kernels)."""
        kin, f_n, f_el, f_t, f_t_cons = self.forces(system, q, qd)
        pen = kin.penetration
        energy = self.law.energy(pen) if pen > 0 else 0.0
        fr, st = self.friction, self.state
        stretch2, local_a, local_b, offset = 0.0, _ZERO3, _ZERO3, _ZERO3
        if fr is not None and fr.model == "stick-slip":
            if st.anchor is not None:
                u_t = self._anchored(system, q, kin)
                stretch2 = float(u_t @ u_t)
                if st.mode == STICK and pen > 0:
                    energy += 0.5 * fr.stick_stiffness * stretch2
            local_a, local_b, offset = self._anchor_here(system, q, kin, f_t)
        return Sample(sample_row(kin.gap, kin.v_n, kin.v_t, kin.normal, f_n, f_el, f_t,
                                 f_t_cons, local_a, local_b, offset, stretch2,
                                 float(energy), self.law.impulsive))

    # ------------------------------------------------------------------ state
    def commit(self, sample: Sample) -> None:
        """Update open/stick/slip after an accepted step from the contact's ``sample`` at
        the step's end (taken under the state before this update; explicit switching)."""
        st = self.state
        if self.law.impulsive:
            return  # no lasting contact: impacts are impulses (flexmbs.contact.events)
        if sample.gap >= 0:
            self._release_spring(sample)
            st.mode, st.v_onset = OPEN, None
            return
        if st.mode == OPEN:
            st.v_onset = max(-sample.v_n, 1e-9)
            st.impacts += 1
            st.mode = SLIP
        fr = self.friction
        if fr is None:
            return
        speed = sample.speed
        if fr.model == "regularized":
            st.mode = STICK if speed < fr.v_reg else SLIP
            return
        if st.mode == STICK and sample.friction > fr.mu_static * sample.f_n:
            self._release_spring(sample)
            st.mode = SLIP
        elif st.mode == SLIP and speed < fr.v_reg:
            st.mode = STICK
            st.anchor = (sample.local_a, sample.local_b, sample.offset)

    def _release_spring(self, sample: Sample) -> None:
        """Leaving stick: the stick spring's stored energy ½ k_t |u_t|² leaves the
        potential energy and is booked as dissipated."""
        st = self.state
        if st.anchor is not None and self.friction is not None:
            st.dissipated += 0.5 * self.friction.stick_stiffness * sample.stretch2
        st.anchor = None

    def _anchor_here(self, system, q, kin, f_t):
        """Stick anchors at the current contact points (in their marker axes), with the
        spring's initial elongation −F_t/k_t (in marker A's axes) so that it takes over
        the current friction force."""
        out = []
        axes_a = None
        for name, point in ((self.markers[0], kin.a.c), (self.markers[1], kin.b.c)):
            body, marker, sl = system.marker_info(name)
            r, axes, _, _ = body.marker_frame(q[sl], marker, jac=False)
            axes_a = axes if axes_a is None else axes_a
            out.append(axes.T @ (point - r))
        out.append(axes_a.T @ (-np.asarray(f_t) / self.friction.stick_stiffness))
        return tuple(out)


_ZERO3 = np.zeros(3)


@dataclass(frozen=True, eq=False)
class _Dissipative:
    """The non-conservative part of a contact (damping and friction), for the energy
    balance: F = (F_n − F_el) n + (F_t − F_t,conservative)."""

    contact: Contact

    def apply(self, system, q, qd, t, Q) -> None:
        kin, f_n, f_el, f_t, f_t_cons = self.contact.forces(system, q, qd)
        self.contact._load(kin, (f_n - f_el) * kin.normal + (f_t - f_t_cons), Q)
