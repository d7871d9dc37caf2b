"""Contact geometry: the gap g(q) (> 0 open, < 0 penetrating), the normal n, the contact
points on both sides and the point Jacobians that turn a contact force into generalized
forces on rigid and flexible bodies alike.

Every pair has a side A (marker a) and a side B (marker b). ``n`` is the unit normal of
A's surface at the contact, pointing towards B; the force on B is F = F_n n + F_t and
−F acts on A. A contact point c rigidly attached to a marker frame (origin r, lever
ρ = c − r) moves with the point Jacobian

    J_c = force_jac − skew(ρ) angular_jac,     v_c = J_c q̇,    Q = J_cᵀ F,

which for a marker on a node of a flexible body includes the node's modal motion
(Φ_k, Ψ_k; docs/theory_ffrf.md §8): a contact point on a flexible body follows its deformation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..frame.rotations import skew


@dataclass
class ContactPoint:
    """One side of a contact at (q, q̇): its body's coordinate slice, the contact point
    c (3,), and J_c (3, n_b)."""

    sl: slice
    c: np.ndarray
    jac: np.ndarray


@dataclass
class Kinematics:
    """A contact's state at (q, q̇): gap g [m], normal n (A → B), the two sides, relative
    velocity of B's point w.r.t. A's, split into v_n = n·v (> 0 separating) and v_t."""

    gap: float
    normal: np.ndarray
    a: ContactPoint
    b: ContactPoint
    v_n: float = 0.0
    v_t: np.ndarray | None = None

    @property
    def penetration(self) -> float:
        return max(0.0, -self.gap)


def _side(system, marker_name, q):
    """One side's body, marker, coordinate slice, body coordinates and marker frame."""
    body, marker, sl = system.marker_info(marker_name)
    qb = q[sl]
    r, axes, _, _ = body.marker_frame(qb, marker, jac=False)
    return body, marker, sl, qb, r, axes


def _point(body, marker, sl, qb, r, c) -> ContactPoint:
    jac = body.force_jac(qb, marker) - skew(c - r) @ body.angular_jac(qb, marker)
    return ContactPoint(sl, np.asarray(c, dtype=float), jac)


def _finish(kin: Kinematics, qd) -> Kinematics:
    if qd is not None:
        v = kin.b.jac @ qd[kin.b.sl] - kin.a.jac @ qd[kin.a.sl]
        kin.v_n = float(kin.normal @ v)
        kin.v_t = v - kin.v_n * kin.normal
    return kin


@dataclass(frozen=True)
class SpherePlane:
    """A sphere of ``radius`` [m] centred on marker ``sphere`` (side B) against the plane
    through marker ``plane``'s origin normal to its z axis (side A); the plane is
    unbounded and its z axis points to the free side. ``radius = 0``: a point."""

    sphere: str
    radius: float
    plane: str

    @property
    def markers(self) -> tuple[str, str]:
        return self.plane, self.sphere

    def evaluate(self, system, q, qd=None) -> Kinematics:
        ba, ma, sla, qa, ra, axa = _side(system, self.plane, q)
        bb, mb, slb, qb, rb, _ = _side(system, self.sphere, q)
        n = axa[:, 2]
        gap = float(n @ (rb - ra)) - self.radius
        cb = rb - self.radius * n
        ca = cb - (n @ (cb - ra)) * n  # foot of the sphere's lowest point on the plane
        return _finish(Kinematics(gap, n, _point(ba, ma, sla, qa, ra, ca),
                                  _point(bb, mb, slb, qb, rb, cb)), qd)


@dataclass(frozen=True)
class SphereSphere:
    """Spheres of radii ``radius_a`` on marker ``a`` and ``radius_b`` on marker ``b``."""

    a: str
    radius_a: float
    b: str
    radius_b: float

    @property
    def markers(self) -> tuple[str, str]:
        return self.a, self.b

    def evaluate(self, system, q, qd=None) -> Kinematics:
        ba, ma, sla, qa, ra, _ = _side(system, self.a, q)
        bb, mb, slb, qb, rb, _ = _side(system, self.b, q)
        d = rb - ra
        dist = float(np.linalg.norm(d))
        if dist < 1e-12:
            raise ModelError(f"sphere–sphere contact {self.a!r}/{self.b!r}: the centres "
                             "coincide, the contact normal is undefined")
        n = d / dist
        gap = dist - self.radius_a - self.radius_b
        return _finish(Kinematics(gap, n, _point(ba, ma, sla, qa, ra, ra + self.radius_a * n),
                                  _point(bb, mb, slb, qb, rb, rb - self.radius_b * n)), qd)


@dataclass(frozen=True)
class JournalBearing:
    """A journal of ``journal_radius`` on marker ``journal`` (side B) inside a bearing
    hole of ``bearing_radius`` on marker ``bearing`` (side A), axes along the bearing's
    z: the radial clearance is c = R_bearing − R_journal; with the eccentricity e (the
    journal centre's offset from the bearing axis, normal to it) the gap is c − |e| and
    the normal of the hole's surface at the contact, towards the journal, is −e/|e|."""

    bearing: str
    bearing_radius: float
    journal: str
    journal_radius: float

    @property
    def markers(self) -> tuple[str, str]:
        return self.bearing, self.journal

    @property
    def clearance(self) -> float:
        return self.bearing_radius - self.journal_radius

    def evaluate(self, system, q, qd=None) -> Kinematics:
        ba, ma, sla, qa, ra, axa = _side(system, self.bearing, q)
        bb, mb, slb, qb, rb, _ = _side(system, self.journal, q)
        z = axa[:, 2]
        d = rb - ra
        e = d - (z @ d) * z
        ecc = float(np.linalg.norm(e))
        u = e / ecc if ecc > 1e-15 else axa[:, 0]  # centred: any radial direction
        gap = self.clearance - ecc
        ca = ra + (z @ d) * z + self.bearing_radius * u
        cb = rb + self.journal_radius * u
        return _finish(Kinematics(gap, -u, _point(ba, ma, sla, qa, ra, ca),
                                  _point(bb, mb, slb, qb, rb, cb)), qd)


#: The largest contact radius accepted [m]: beyond it a "radius" is a units mistake, and
#: penetrations of that size overflow the contact laws.
MAX_RADIUS = 1e6


def contact_geometry(who: str, kind: str, marker_a: str, marker_b: str, radius_a: float,
                     radius_b: float):
    """The geometry of a contact of ``kind`` between two markers (the builder's
    ``add_contact``, docs/contact.md): sphere-plane, point-plane, sphere-sphere or
    journal-bearing, radii [m] ≥ 0. ModelError starting with ``who``."""
    for key, value in (("radius_a", radius_a), ("radius_b", radius_b)):
        if not (np.isfinite(value) and 0 <= value <= MAX_RADIUS):
            raise ModelError(f"{who}: {key} must be a length in [0, {MAX_RADIUS:g}] m, got "
                             f"{value!r}")
    if kind in ("sphere-plane", "point-plane"):
        return SpherePlane(marker_b, radius_b if kind == "sphere-plane" else 0.0, marker_a)
    if kind == "sphere-sphere":
        return SphereSphere(marker_a, radius_a, marker_b, radius_b)
    if kind == "journal-bearing":
        if not radius_a > radius_b:
            raise ModelError(f"{who}: the bearing radius (radius_a = {radius_a}) must "
                             f"exceed the journal's (radius_b = {radius_b})")
        return JournalBearing(marker_a, radius_a, marker_b, radius_b)
    raise ModelError(f"{who}: contact type must be sphere-plane, point-plane, "
                     f"sphere-sphere or journal-bearing, got {kind!r}")
