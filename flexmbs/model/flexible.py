"""Flexible bodies in the floating frame of reference, coordinates q = [R, p, ξ]
(docs/theory_ffrf.md).

The mass matrix and quadratic velocity vector come from the ModalData's inertia
invariants (``flexmbs.frame.coupling``): per-evaluation cost O(n_m²)–O(n_m³), never O(N).
Markers sit on a node (its translational rows Φ_k and, where present, rotational rows
Ψ_k) or on an interface node set (RBE3-like average). Every joint and force of the
multibody core works on them through the same body interface as rigid bodies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..elements.floating_frame_reference import (
    body_residual,
    frame_inertia,
    frame_tangents,
    generalized_mass,
    quadratic_velocity,
)
from ..elements.marker_kinematics import (
    angular_jac_tangent_kernel,
    angular_rate_jac_kernel,
    force_jac_tangent_kernel,
    marker_hessian_kernel,
    marker_jac_rate_kernel,
)
from ..errors import ModelError
from ..frame.coupling import Coupling
from ..frame.rotations import (
    cross3,
    d_rotated_batch,
    g_bar,
    g_global,
    rotation_matrix,
    skew,
)
from ..modal.data import ModalData
from ..modal.derivative_data import ElasticPolynomial
from .marker_modes import MarkerModes
from .markers import Marker


def nonlinear_coordinates(what: str, data: ModalData, nonlinear, stiffening,
                          problems: list):
    """(data, elastic) of a flexible body: ``data`` and None for a linear body; for
    ``nonlinear`` the modes enriched with the data's modal derivatives and their
    polynomial elastic force (:func:`flexmbs.modal.derivatives.enriched_data`).
    Problems (not a boolean, no derivatives, stiffening asked for too) are appended to
    ``problems``, naming the body ``what``."""
    if not isinstance(nonlinear, (bool, np.bool_)):
        problems.append(f"{what}: nonlinear must be true or false, got {nonlinear!r}")
        return data, None
    if not nonlinear:
        return data, None
    if not data.has_derivatives:
        problems.append(f"{what}: nonlinear is on but its modal data carry no modal "
                        f"derivatives (flexmbs beam/reduce --modal-derivatives, or "
                        f"flexmbs.modal.derivatives.with_modal_derivatives(data, fe))")
        return data, None
    if stiffening:
        problems.append(f"{what}: nonlinear and stiffening are exclusive (the modal "
                        f"derivatives carry the stiffening); leave stiffening off")
        return data, None
    from ..modal.derivatives import enriched_data

    return enriched_data(data)


def padded(values, n: int, elastic) -> np.ndarray:
    """Initial modal coordinates or rates (zero by default) for ``n`` coordinates: for a
    nonlinear body (``elastic``) the modes' values may be given alone, the derivative
    coordinates then start at zero."""
    if values is None:
        return np.zeros(n)
    arr = np.asarray(values, dtype=float).ravel()
    if elastic is not None and arr.size < n:
        return np.concatenate([arr, np.zeros(n - arr.size)])
    return arr


@dataclass(frozen=True, eq=False)
class FlexibleBody:
    """A flexible body: floating frame [R, p] plus modal coordinates ξ of ``data``.

    Attributes
    ----------
    name : str
    data : ModalData
        Modal description (SI); its invariants are computed once.
    coupling : Coupling
        Which coupling terms are kept (see :class:`~flexmbs.frame.coupling.Coupling`).
    q0, qd0 : ndarray, shape (7 + n,)
        Initial [R, p, ξ] and rates.
    marker_modes : dict[str, MarkerModes]
        Modal kinematics of each marker, keyed by marker name (filled by the builder).
    """

    name: str
    data: ModalData
    q0: np.ndarray
    qd0: np.ndarray
    coupling: Coupling = Coupling.TWO_WAY
    fixed: tuple[int, ...] = ()
    marker_modes: dict = field(default_factory=dict)
    stiffening: bool = False
    """Geometric stiffening from ``data.stiffening`` (docs/theory_stiffening.md)."""
    elastic: ElasticPolynomial | None = None
    """The nonlinear elastic force of a body with modal derivatives (``nonlinear =
    true``: ``data`` holds the modes and the derivative coordinates,
    docs/theory_modal_derivatives.md); None for a linear body."""

    def __post_init__(self):
        if self.elastic is not None:
            if self.stiffening:
                raise ModelError(f"flexible body {self.name!r}: nonlinear (modal "
                                 f"derivatives) and stiffening are exclusive: the "
                                 f"derivative coordinates carry the stiffening")
            if self.elastic.size != self.data.n_modes:
                raise ModelError(f"flexible body {self.name!r}: its nonlinear elastic "
                                 f"tensors have {self.elastic.size} coordinates, its modal "
                                 f"data {self.data.n_modes}")
        if self.stiffening and not self.data.has_stiffening:
            raise ModelError(f"flexible body {self.name!r}: stiffening is on but its modal "
                             f"data carry no stiffening matrices (compute them with "
                             f"flexmbs.modal.stiffening.with_stiffening(data, fe), or "
                             f"flexmbs beam)")

    @property
    def n_modes(self) -> int:
        return self.data.n_modes

    @property
    def nonlinear(self) -> bool:
        """Whether the body has modal derivatives and polynomial elastic forces."""
        return self.elastic is not None

    def strain_energy(self, xi):
        """½ ξᵀK_ff ξ plus, for a nonlinear body, the cubic and quartic energy [J];
        ``xi`` (n,) or a history (n_t, n)."""
        xi = np.asarray(xi, dtype=float)
        out = 0.5 * np.einsum("...i,ij,...j->...", xi, self.data.K_ff, xi)
        if self.elastic is not None:
            out = out + self.elastic.energy(xi)
        return out

    @cached_property
    def _stiff(self):
        """The body's stiffening terms
        (:class:`~flexmbs.elements.flexible_body.stiffening_reference.StiffeningTerms`),
        or None."""
        if not self.stiffening:
            return None
        from ..elements.flexible_body.stiffening_reference import StiffeningTerms

        return StiffeningTerms(self.data.stiffening)

    @property
    def n_coords(self) -> int:
        return 7 + self.data.n_modes

    @property
    def coord_names(self) -> tuple[str, ...]:
        base = ("x", "y", "z", "e0", "e1", "e2", "e3")
        return tuple(f"{self.name}.{c}" for c in base) + tuple(
            f"{self.name}.xi{j + 1}" for j in range(self.n_modes))

    def _modes(self, marker: Marker) -> MarkerModes:
        try:
            return self.marker_modes[marker.name]
        except KeyError:
            raise ModelError(f"marker {marker.full_name!r} on flexible body {self.name!r} "
                             f"has no node: add it with a node or node set") from None

    # ------------------------------------------------- kinematics (docs/theory_ffrf.md §8)
    @property
    def _sees_deformation(self) -> bool:
        """Whether joints see the deformation at markers (not in one-way and rigid modes,
        where the rigid motion must be exactly the rigid body's, docs/theory_ffrf.md §9)."""
        return self.coupling in (Coupling.TWO_WAY, Coupling.NO_MRF)

    def marker_frame(self, q, marker, qd=None, jac=True):
        """Marker origin r = R + A(u0 + Φ_m ξ) and axes A(o_k − õ_k Ψ_m ξ) (first order in
        Ψ_m ξ), their exact Jacobians and velocity-quadratic parts.

        In one-way and rigid modes markers are evaluated at ξ = 0 and do not depend on ξ
        (joints then act on the rigid motion only, as docs/theory_ffrf.md §9 recommends)."""
        mm = self._modes(marker)
        if not self._sees_deformation:
            mm = MarkerModes(mm.u0, np.zeros_like(mm.phi), np.zeros_like(mm.psi))
            q = np.concatenate([q[:7], np.zeros(self.n_modes)])
            qd = None if qd is None else np.concatenate([qd[:7], np.zeros(self.n_modes)])
        n = self.n_modes
        p, xi = q[3:7], q[7:]
        a = rotation_matrix(p)
        o = marker.orientation
        u = mm.u0 + mm.phi @ xi
        bmat = [-skew(o[:, k]) @ mm.psi for k in range(3)]  # ∂v_k/∂ξ (3, n)
        vecs = np.vstack([u, *(o[:, k] + bmat[k] @ xi for k in range(3))])
        if not jac:
            return q[:3] + a @ u, a @ np.column_stack(list(vecs[1:])), None, None
        jac = np.zeros((4, 3, 7 + n))
        jac[0, :, :3] = np.eye(3)
        jac[:, :, 3:7] = d_rotated_batch(p, vecs)
        jac[0, :, 7:] = a @ mm.phi
        for k in range(3):
            jac[k + 1, :, 7:] = a @ bmat[k]
        quad = None
        if qd is not None:
            pd, xid = qd[3:7], qd[7:]
            rates = np.vstack([mm.phi @ xid, *(bmat[k] @ xid for k in range(3))])
            quad = d_rotated_batch(pd, vecs) @ pd + 2 * d_rotated_batch(p, rates) @ pd
        return q[:3] + a @ u, a @ np.column_stack(list(vecs[1:])), jac, quad

    def force_jac(self, q, marker):
        """[I, −A ũ Ḡ, A Φ_m] (docs/theory_ffrf.md §7), p-rows orthogonal to p.

        One-way: the rigid rows use the undeformed lever arm ū0 (the rigid motion stays
        the rigid body's) while the ξ rows still receive Φ_mᵀ F̄ (forces excite the
        modes). Rigid: no ξ columns."""
        mm = self._modes(marker)
        p, xi = q[3:7], q[7:]
        a = rotation_matrix(p)
        u = mm.u0 + mm.phi @ xi if self._sees_deformation else mm.u0
        out = np.zeros((3, self.n_coords))
        out[:, :3] = np.eye(3)
        out[:, 3:7] = -a @ skew(u) @ g_bar(p)
        if self.coupling is not Coupling.RIGID:
            out[:, 7:] = a @ mm.phi
        return out

    def angular_jac(self, q, marker):
        """[0, G, A Ψ_m]: marker angular velocity (global) and torque Jacobian (no ξ
        columns in rigid mode)."""
        mm = self._modes(marker)
        p = q[3:7]
        out = np.zeros((3, self.n_coords))
        out[:, 3:7] = g_global(p)
        if self.coupling is not Coupling.RIGID:
            out[:, 7:] = rotation_matrix(p) @ mm.psi
        return out

    # ----------------------------------------------------------- Newton tangents
    def _marker_vectors(self, marker, xi):
        """(s (4, 3), U (4, 3, n)): the marker's body-frame point and axes at ξ, as
        ``marker_frame`` defines them (u0 + Φ ξ; o_k − õ_k Ψ ξ), and their ξ-derivatives
        (zero width in one-way and rigid modes, where markers sit at ξ = 0)."""
        mm = self._modes(marker)
        o = np.asarray(marker.orientation, dtype=float)
        if not self._sees_deformation:
            return np.vstack([mm.u0, o.T]), np.zeros((4, 3, 0))
        shapes = np.stack([mm.phi, *(-skew(o[:, k]) @ mm.psi for k in range(3))])
        return np.vstack([mm.u0, o.T]) + shapes @ xi, shapes

    def residual_tangents(self, q, qd, qdd, gravity):
        """(K, C) = ∂/∂(q, q̇) of M(q) q̈ − Q_v − Q_g + [0; 0; K_ff ξ + D_ff ξ̇] in this body's
        coupling mode (docs/theory_ffrf.md §3, §5–7, §9), from
        :func:`~flexmbs.elements.floating_frame_reference.frame_tangents`
        (exact: A quadratic, Ḡ linear in p, M̄ quadratic in ξ), O(n_m³) per call."""
        xi = q[7:]
        fi = frame_inertia(self.data.invariants, self.data.M_ff, xi, self.coupling)
        k, c = frame_tangents(fi, q[3:7], xi, qd[:3], qd[3:7], qd[7:], qdd, gravity)
        k[7:, 7:] += self.data.K_ff
        if self.elastic is not None:
            k[7:, 7:] += self.elastic.tangent(xi)
        c[7:, 7:] += self.data.D_ff
        if self._stiff is not None:
            k_s, c_s = self._stiffening_tangents(q, qd, qdd, gravity)
            k += k_s
            c += c_s
        return k, c

    def _stiffening_residual(self, q, qd, qdd, gravity):
        return self._stiff.residual(q[3:7], q[7:], qd[:3], qd[3:7], qd[7:], qdd, gravity,
                                    self.coupling)

    def _stiffening_tangents(self, q, qd, qdd, gravity):
        """∂/∂(q, q̇) of the stiffening part of the residual
        (:meth:`~flexmbs.elements.flexible_body.stiffening_reference.StiffeningTerms.
        tangents`, closed form)."""
        return self._stiff.tangents(q[3:7], q[7:], qd[:3], qd[3:7], qd[7:], qdd, gravity,
                                    self.coupling)

    def marker_shapes(self, marker):
        """(s (4, 3), U (4, 3, m)): the marker's body-frame point and axes at ξ = 0 and
        their ξ-derivatives (m = n_modes; m = 0 in one-way and rigid modes, where joints
        see the markers at ξ = 0), as ``marker_frame`` defines them."""
        return self._marker_vectors(marker, np.zeros(self.n_modes))

    def jacobian_shapes(self, marker):
        """(Ψ (3, n), Φ (3, n)) of the marker's torque and force Jacobians; (None, None)
        in rigid coupling, where the marker does not move with ξ."""
        if self.coupling is Coupling.RIGID:
            return None, None
        modes = self._modes(marker)
        return modes.psi, modes.phi

    def marker_hessian(self, q, marker, weights):
        """∂²/∂q² Σ_k w_kᵀ v_k over the marker's point and axes (``marker_frame``)."""
        vecs, shapes = self._marker_vectors(marker, q[7:])
        if not shapes.shape[2]:
            shapes = np.zeros((4, 3, self.n_modes))
        return marker_hessian_kernel(self.n_coords, q[3:7], vecs, shapes, weights)

    def marker_jac_rate(self, q, qd, marker):
        """∂(J q̇)/∂q (4, 3, 7+n) of the ``marker_frame`` Jacobians J."""
        vecs, shapes = self._marker_vectors(marker, q[7:])
        if not shapes.shape[2]:
            shapes = np.zeros((4, 3, self.n_modes))
        return marker_jac_rate_kernel(self.n_coords, q[3:7], qd[3:7], qd[7:], vecs, shapes)

    def force_jac_tangent(self, q, marker, force):
        """∂(force_jac(q)ᵀ F)/∂q for a fixed global F: arm ū0 + Φ_m ξ (ū0 in one-way and
        rigid modes), ξ rows Φ_mᵀ AᵀF except in rigid mode."""
        mm = self._modes(marker)
        sees = self._sees_deformation
        arm = mm.u0 + mm.phi @ q[7:] if sees else mm.u0
        return force_jac_tangent_kernel(
            self.n_coords, q[3:7], arm, np.asarray(force, float),
            None if self.coupling is Coupling.RIGID else mm.phi, mm.phi if sees else None)

    def angular_jac_tangent(self, q, marker, torque):
        """∂(angular_jac(q)ᵀ T)/∂q for a fixed global T."""
        psi = None if self.coupling is Coupling.RIGID else self._modes(marker).psi
        return angular_jac_tangent_kernel(self.n_coords, q[3:7], np.asarray(torque, float),
                                          psi)

    def angular_rate_jac(self, q, qd, marker):
        """∂(angular_jac(q) q̇)/∂q (3, 7+n)."""
        psi = None if self.coupling is Coupling.RIGID else self._modes(marker).psi
        return angular_rate_jac_kernel(self.n_coords, q[3:7], qd[3:7], qd[7:], psi)

    # ----------------------------------------------------------- inspection
    def body_blocks(self, q):
        """Body-frame blocks M_RR, M_Rθ, M_Rf, M_θθ, M_θf, M_ff at this ξ (two-way,
        docs/theory_ffrf.md §3), a :class:`~flexmbs.modal.invariants.BodyMassBlocks`."""
        return self.data.invariants.blocks(q[7:])

    def mass_blocks(self, q) -> dict[str, np.ndarray]:
        """Generalized (q-form) blocks of M(q) by name, for the body's coupling mode:
        ``M_RR`` (3x3), ``M_Rp`` (3x4), ``M_Rf`` (3xn), ``M_pp`` (4x4), ``M_pf`` (4xn),
        ``M_fR``, ``M_fp`` and ``M_ff`` (docs/theory_ffrf.md §5; M_fR ≠ M_Rfᵀ in one-way mode)."""
        m = self.mass_matrix(q)
        r, p, f = slice(0, 3), slice(3, 7), slice(7, None)
        return {"M_RR": m[r, r], "M_Rp": m[r, p], "M_Rf": m[r, f], "M_pp": m[p, p],
                "M_pf": m[p, f], "M_fR": m[f, r], "M_fp": m[f, p], "M_ff": m[f, f]}

    def load_integrals(self, weights) -> tuple[float, np.ndarray, np.ndarray]:
        """(Σw, Σw ū0_k, Σw Φ_k) of nodal weights (N,), computed once for distributed
        loads so that their generalized force costs O(n_m) per evaluation."""
        w = np.asarray(weights, dtype=float)
        y = self.data.phi.reshape(self.data.n_nodes, 3, self.n_modes)
        return float(w.sum()), w @ self.data.nodes, np.einsum("k,kan->an", w, y)

    # ----------------------------------------------------------- dynamics
    def mass_matrix(self, q):
        """M(q) = Cᵀ M̄ C of the coupling mode (docs/theory_ffrf.md §5, §9)."""
        m = generalized_mass(self.data.invariants, self.data.M_ff, q[3:7], q[7:],
                             self.coupling)
        if self._stiff is not None:
            from ..elements.floating_frame_reference import c_matrix

            c = c_matrix(q[3:7], self.n_modes)
            m += c.T @ self._stiff.mode_mass(self._stiff.delta_mass(q[7:]), self.coupling) @ c
        return m

    def generalized_forces(self, q, qd, t, gravity):
        """Q_v + gravity − (K_ff ξ + D_ff ξ̇) in the ξ rows.

        Gravity is Cᵀ M̄_{:,R} ḡ of the two-way mass (docs/theory_ffrf.md §7); in one-way and rigid
        modes its rigid rows use ξ = 0, and in rigid mode the ξ rows carry nothing.
        """
        inv, n = self.data.invariants, self.n_modes
        p, xi, xid = q[3:7], q[7:], qd[7:]
        out = quadratic_velocity(inv, self.data.M_ff, p, xi, qd[:3], qd[3:7], xid,
                                 self.coupling)
        g = np.asarray(gravity, dtype=float)
        if np.any(g):
            a = rotation_matrix(p)
            g_bar_vec = a.T @ g
            rigid_rows_xi = xi if self.coupling in (Coupling.TWO_WAY, Coupling.NO_MRF) \
                else np.zeros(n)
            blocks = inv.blocks(rigid_rows_xi)
            out[:3] += a @ (blocks.M_RR @ g_bar_vec)
            out[3:7] += g_bar(p).T @ (blocks.M_Rθ.T @ g_bar_vec)
            if self.coupling is not Coupling.RIGID:
                out[7:] += inv.S.T @ g_bar_vec
        out[7:] -= self.data.K_ff @ xi + self.data.D_ff @ xid  # rigid: ξ stays at 0
        if self.elastic is not None:
            out[7:] -= self.elastic.force(xi)
        if self._stiff is not None:  # M_s q̈ − Q_s = the stiffening residual
            zero = np.zeros(self.n_coords)
            out -= self._stiffening_residual(q, qd, zero, gravity)
        return out

    def residual(self, q, qd, qdd, gravity):
        """r_b = M q̈ − (Q_v + gravity − K_ff ξ − D_ff ξ̇) in one pass
        (:func:`~flexmbs.elements.floating_frame_reference.body_residual`: one M̄(ξ), no
        (7+n)² products)."""
        xi, xid = q[7:], qd[7:]
        out = body_residual(self.data.invariants, self.data.M_ff, q[3:7], xi, qd[:3],
                            qd[3:7], xid, qdd, gravity, self.coupling)
        out[7:] += self.data.K_ff @ xi + self.data.D_ff @ xid
        if self.elastic is not None:
            out[7:] += self.elastic.force(xi)
        if self._stiff is not None:
            out += self._stiffening_residual(q, qd, qdd, gravity)
        return out

    def kinetic_energy(self, q, qd):
        """½ q̇ᵀ M q̇ with the two-way M, or with the reduced M′ in no-Mrf mode (the
        kinetic energy that mode's mass matrix defines, docs/theory_ffrf.md §10)."""
        mode = Coupling.NO_MRF if self.coupling is Coupling.NO_MRF else Coupling.TWO_WAY
        m = generalized_mass(self.data.invariants, self.data.M_ff, q[3:7], q[7:], mode)
        out = 0.5 * qd @ m @ qd
        if self._stiff is not None:
            out += self._stiff.kinetic_energy(q[3:7], q[7:], qd[:3], qd[3:7], qd[7:])
        return out

    def potential_energy(self, q, gravity):
        """−gᵀ(m R + A S_t(ξ)) + the strain energy (:meth:`strain_energy`) [J].

        Assumes M̄_RR = m I (every FE mass that moves rigidly with its nodes); for other
        (case II) masses gravity need not derive from a potential."""
        inv = self.data.invariants
        xi = q[7:]
        s_t = _vee(-inv.blocks(xi).M_Rθ)
        g = np.asarray(gravity, dtype=float)
        out = float(-g @ (inv.mass * q[:3] + rotation_matrix(q[3:7]) @ s_t)
                    + self.strain_energy(xi))
        if self._stiff is not None:
            out += self._stiff.potential_energy(q[3:7], xi, g)
        return out

    def momenta(self, q, qd) -> tuple[np.ndarray, np.ndarray]:
        """Linear momentum P = A h_R and angular momentum about the global origin
        H_O = R × P + A h_θ, with h = M̄ w of the two-way mass (docs/theory_ffrf.md §6)."""
        from ..elements.floating_frame_reference import body_mass

        p = q[3:7]
        a = rotation_matrix(p)
        w = np.concatenate([a.T @ qd[:3], g_bar(p) @ qd[3:7], qd[7:]])
        mbar = body_mass(self.data.invariants, self.data.M_ff, q[7:], Coupling.TWO_WAY)
        if self._stiff is not None:
            mbar = mbar + self._stiff.delta_mass(q[7:])
        h = mbar @ w
        big_p = a @ h[:3]
        return big_p, cross3(q[:3], big_p) + a @ h[3:6]

    # ----------------------------------------------------------- recovery
    def nodal_displacements(self, q, frame: str = "body") -> np.ndarray:
        """Elastic displacement Φ_k ξ of every node (N, 3) [m], body or global axes."""
        disp = (self.data.phi @ q[7:]).reshape(self.data.n_nodes, 3)
        if frame == "global":
            return disp @ rotation_matrix(q[3:7]).T
        return disp

    def recover_field(self, name: str, q) -> np.ndarray:
        """A modal result field at this state, Σ_j field[:, :, j] ξ_j, shape (N, c)
        (e.g. nodal stresses when the ModalData carries ``modal_fields["stress"]``)."""
        if name not in self.data.modal_fields:
            raise ModelError(f"flexible body {self.name!r}: its ModalData has no modal "
                             f"field {name!r} (has: {sorted(self.data.modal_fields)})")
        return self.data.modal_fields[name] @ q[7:]

    def von_mises(self, q) -> np.ndarray:
        """Von Mises stress [Pa] at every node (N,) from the body's stress modes
        (docs/stress.md; for a beam the largest normal stress at its fibre points)."""
        from ..modal.stress import stress_field_name, von_mises

        name = stress_field_name(self.data.modal_fields)
        if name is None:
            raise ModelError(f"flexible body {self.name!r}: its ModalData has no stress "
                             "modes (reduce with --stress, docs/stress.md)")
        return von_mises(name, self.recover_field(name, q))

    def node_positions(self, q) -> np.ndarray:
        """Deformed global node positions R + A(ū0 + Φ ξ) (N, 3) [m]."""
        u = self.data.nodes + (self.data.phi @ q[7:]).reshape(self.data.n_nodes, 3)
        return q[:3] + u @ rotation_matrix(q[3:7]).T


def _vee(x):
    a = 0.5 * (x - x.T)
    return np.array([a[2, 1], a[0, 2], a[1, 0]])
