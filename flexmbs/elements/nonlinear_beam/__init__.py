"""The geometrically exact beam's elements: the internal force element that joins the
node bodies of a nonlinear beam (docs/nonlinear_beam.md).

A nonlinear beam is a chain of n + 1 node bodies (rigid-body coordinates [r, p] each,
carrying the lumped mass and rotary inertia of the beam around them) joined by n
two-node Simo–Reissner elements; :class:`BeamElements` is the force that stands for
all n elements of one beam. It has the methods the NumPy assembly calls on a force
(``apply``, ``tangents``, ``potential``, ``nonconservative``), its numbers coming from
the array functions of :mod:`flexmbs.elements.nonlinear_beam.reference` (the NumPy
reference path). The compiled engine runs the same elements from the kind's table
(:mod:`~flexmbs.elements.nonlinear_beam.table`) and kernels
(:mod:`~flexmbs.elements.nonlinear_beam.kernels`: the element force, its complex-step
tangent and its energy, allocating nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from . import reference

__all__ = ["STIFFNESS_NAMES", "BeamElements", "fibre_points", "reference"]

#: The section stiffnesses in the order of ``BeamElements.stiffness`` and their units.
STIFFNESS_NAMES = (("EA", "N"), ("GA_y", "N"), ("GA_z", "N"), ("GJ", "N m^2"),
                   ("EI_y", "N m^2"), ("EI_z", "N m^2"))


def fibre_points(section) -> np.ndarray:
    """(k, 2) fibre points (y, z) [m] of ``section``: its own, else the corners of the
    equivalent rectangle √(12 I_z/A) × √(12 I_y/A) (as the flexible beams' stresses)."""
    points = section.fibre_points()
    if points is not None:
        return points
    half_y, half_z = 0.5 * np.sqrt(12 * section.Iz / section.A), 0.5 * np.sqrt(
        12 * section.Iy / section.A)
    return np.array([[half_y, half_z], [-half_y, half_z], [-half_y, -half_z],
                     [half_y, -half_z]])


@dataclass(frozen=True, eq=False)
class BeamElements:
    """The n elements of the nonlinear beam ``name`` between its node bodies.

    Attributes
    ----------
    name : str
        The beam's name (the force's name in the model).
    nodes : tuple of str
        The node bodies, root to tip (n + 1 names).
    lengths : ndarray, shape (n,)
        Unstressed element lengths [m].
    stiffness : ndarray, shape (6,)
        [EA, k_y GA, k_z GA, GJ, EI_y, EI_z] [N, N, N, N m², N m², N m²] along the
        node frames' axes x (the beam axis), y and z (the section's principal axes);
        the elements put the residual bending flexibility in series with the shear
        stiffnesses (:func:`reference.element_stiffness`).
    mass_per_length : float
        ρA [kg/m]. The node bodies carry the lumped ρA L/2 of each element at each
        end; the elements add the difference to the consistent mass of their cubic
        Hermite centre lines, with its velocity and gravity terms
        (:func:`reference.hermite_mass_difference`). 0: the lumped mass alone.
    section : BeamSection or None
        The section's geometry (area, second moments, fibre points) for the fibre
        stresses of post-processing (:meth:`fibre_stresses`); None: not known.
    """

    name: str
    nodes: tuple
    lengths: np.ndarray
    stiffness: np.ndarray
    mass_per_length: float = 0.0
    section: object = None

    #: The element kind (no compiled kernels yet: the NumPy path evaluates it).
    element_kind: ClassVar[str] = "nonlinear_beam"

    @property
    def body_links(self) -> tuple:
        """The pairs of bodies each element couples (for finite-difference colouring)."""
        return tuple(zip(self.nodes[:-1], self.nodes[1:], strict=True))

    def _index(self, system) -> np.ndarray:
        """(n, 14) global coordinate indices of each element's two nodes."""
        starts = [system.require_body(b).start for b in self.nodes]
        base = np.asarray(starts)[:, None] + np.arange(7)
        return np.concatenate([base[:-1], base[1:]], axis=1)

    def _split(self, system, q):
        idx = self._index(system)
        qe = q[idx]
        return idx, qe[:, :7], qe[:, 7:]

    def _mass_difference(self):
        return reference.hermite_mass_difference(self.lengths, self.mass_per_length)

    def apply(self, system, q, qd, t, Q):
        """Q −= ∂U/∂q + Jᵀ m_D (a_v − ĝ): the elements' elastic forces on their nodes
        [N, N m], and the velocity and gravity terms of their consistent inertia."""
        idx, qa, qb = self._split(system, q)
        np.add.at(Q, idx, -reference.gradient(qa, qb, self.lengths, self.stiffness))
        if self.mass_per_length:
            qd_e = qd[idx]
            np.add.at(Q, idx, -reference.inertia_force(qa, qb, qd_e[:, :7], qd_e[:, 7:],
                                                       self._mass_difference(),
                                                       system.model.gravity))

    def gravity_derivative(self, system, q, qd, d_gravity):
        """(idx, ∂r/∂g · dg): the change of the residual r = … − Q on the elements' nodes
        for a change ``d_gravity`` [m/s², global] of gravity, through the gravity term of
        their consistent inertia (affine in g); None with the lumped mass alone."""
        if not self.mass_per_length:
            return None
        idx, qa, qb = self._split(system, q)
        qd_e = qd[idx]
        args = (qa, qb, qd_e[:, :7], qd_e[:, 7:], self._mass_difference())
        return idx, (reference.inertia_force(*args, np.asarray(d_gravity, dtype=float))
                     - reference.inertia_force(*args, np.zeros(3)))

    def _assemble(self, idx, blocks):
        nodes = np.unique(idx)
        local = np.searchsorted(nodes, idx)
        out = np.zeros((nodes.size, nodes.size))
        np.add.at(out, (local[:, :, None], local[:, None, :]), blocks)
        return nodes, out

    def mass_block(self, system, q):
        """(idx, Jᵀ m_D J): the mass term of the elements' consistent inertia (None with
        the lumped mass alone)."""
        if not self.mass_per_length:
            return None
        idx, qa, qb = self._split(system, q)
        return self._assemble(idx, reference.inertia_mass(qa, qb, self._mass_difference()))

    def mass_tangent(self, system, q, qdd):
        """(idx, ∂(Jᵀ m_D J q̈)/∂q) with q̈ held: the q-derivative of the mass term
        (None with the lumped mass alone)."""
        if not self.mass_per_length:
            return None
        idx, qa, qb = self._split(system, q)
        qdd_e = qdd[idx]
        return self._assemble(idx, reference.inertia_mass_tangent(
            qa, qb, qdd_e[:, :7], qdd_e[:, 7:], self._mass_difference()))

    def tangents(self, system, q, qd, t):
        """(idx, K, C) on the beam's node coordinates: K = ∂²U/∂q² by the complex step
        (:func:`reference.hessian`), exact to round-off, plus the q- and q̇-derivatives
        of the consistent inertia's velocity and gravity terms
        (:func:`reference.inertia_tangents`)."""
        idx, qa, qb = self._split(system, q)
        hess = reference.hessian(qa, qb, self.lengths, self.stiffness)
        damp = np.zeros_like(hess)
        if self.mass_per_length:
            qd_e = qd[idx]
            k_in, c_in = reference.inertia_tangents(qa, qb, qd_e[:, :7], qd_e[:, 7:],
                                                    self._mass_difference(),
                                                    system.model.gravity)
            hess, damp = hess + k_in, c_in
        nodes, k = self._assemble(idx, hess)
        return nodes, k, self._assemble(idx, damp)[1]

    def potential(self, system, q) -> float:
        """The strain energy Σ U and the consistent inertia's share of the gravity
        potential [J]."""
        _, qa, qb = self._split(system, q)
        out = float(np.sum(reference.energy(qa, qb, self.lengths, self.stiffness)))
        if self.mass_per_length:
            zero = np.zeros_like(qa)
            out += float(np.sum(reference.inertia_energies(
                qa, qb, zero, zero, self._mass_difference(), system.model.gravity)[1]))
        return out

    def kinetic_energy(self, system, q, qd) -> float:
        """The consistent inertia's share of the kinetic energy, ½ żᵀ m_D ż [J]."""
        if not self.mass_per_length:
            return 0.0
        idx, qa, qb = self._split(system, q)
        qd_e = qd[idx]
        return float(np.sum(reference.inertia_energies(
            qa, qb, qd_e[:, :7], qd_e[:, 7:], self._mass_difference(),
            system.model.gravity)[0]))

    def nonconservative(self):
        """None: the elements are elastic (no material damping in this stage)."""
        return None

    def section_forces(self, system, q):
        """(n (n_el, 3) [N], m (n_el, 3) [N m]): each element's normal and shear forces
        and torsion and bending moments along its local axes (x the beam axis)."""
        _, qa, qb = self._split(system, q)
        return reference.section_forces(qa, qb, self.lengths, self.stiffness)

    def fibre_stresses(self, system, q):
        """(n_el, k) normal stress [Pa] at the section's fibre points of every element,
        σ = N/A + M_y z/I_y − M_z y/I_z (:func:`reference.fibre_stresses`; the fibre
        points as the section gives them, else the corners of the equivalent
        rectangle √(12 I_z/A) × √(12 I_y/A)); None without a section."""
        if self.section is None:
            return None
        n, m = self.section_forces(system, q)
        return reference.fibre_stresses(n, m, self.section.A, self.section.Iy,
                                        self.section.Iz, fibre_points(self.section))

    def strains(self, system, q):
        """(Γ (n_el, 3) [-], K (n_el, 3) [1/m]) of every element."""
        _, qa, qb = self._split(system, q)
        return reference.strains(qa, qb, self.lengths)
