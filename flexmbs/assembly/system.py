"""System: the compiled model that integrators and analyses call (docs/multibody.md).

Global coordinates q stack each body's [R (3), p (4)] in declaration order (ground has
none). Constraint rows: joints and drives in declaration order, then one Euler-parameter
normalization row pᵀp − 1 per body. Every coordinate and row has a name, e.g.
``link1.e2`` and ``crank_pin[r.x]``.

Sign conventions: Φ(q, t) = 0; Φ_q q̇ = ν = −Φ_t; Φ_q q̈ = γ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .._blas import scipy_module
from ..errors import ConvergenceError, ModelError, ShapeError
from ..model.builder import Model
from ..model.drives import drive_values
from ..model.joints import JOINT_EQUATIONS, drive_equations, joint_equations, marker_state
from . import model_check
from .branches import check_branches
from .constraints import ConstraintPlan
from .model_check import DofReport

#: Above this many coordinates Φ_q is returned as scipy.sparse CSR.
SPARSE_LIMIT = 300


@dataclass(frozen=True)
class _Row:
    name: str
    kind: str  # "joint" | "drive" | "coordinate" | "norm"
    spec: object
    rows: slice
    eq_names: tuple[str, ...]
    body_i: int  # index into System.bodies, -1 for ground
    body_j: int


class System:
    """Numeric evaluation of a :class:`~flexmbs.model.Model` (never mutates it)."""

    def __init__(self, model: Model, coupling=None, stiffening: bool | None = None):
        """Compile ``model``; ``coupling`` ("two-way", "one-way", "rigid", "no-Mrf")
        overrides every flexible body's own coupling mode for this run, ``stiffening``
        (True/False) every flexible body's geometric stiffening (True needs the
        stiffening matrices in each flexible body's modal data)."""
        from dataclasses import replace

        from ..frame.coupling import Coupling

        self.model = model
        #: The run-level options this System was built with (for Systems derived from it).
        self.overrides = {"coupling": coupling, "stiffening": stiffening}
        bodies = [b for b in model.bodies.values() if b.n_coords > 0]
        if coupling is not None:
            mode = Coupling(coupling)
            out = []
            for b in bodies:
                if hasattr(b, "coupling"):
                    changes = {"coupling": mode}
                    if mode is Coupling.RIGID:  # rigid keeps ξ = 0
                        changes["q0"] = np.concatenate([b.q0[:7], np.zeros(b.n_modes)])
                        changes["qd0"] = np.concatenate([b.qd0[:7], np.zeros(b.n_modes)])
                    b = replace(b, **changes)
                out.append(b)
            bodies = out
        if stiffening is not None:  # nonlinear bodies carry theirs in their derivatives
            bodies = [replace(b, stiffening=bool(stiffening))
                      if hasattr(b, "coupling") and not b.nonlinear else b for b in bodies]
        self.bodies = bodies
        self._body_index = {b.name: k for k, b in enumerate(self.bodies)}
        offsets = np.cumsum([0] + [b.n_coords for b in self.bodies])
        self.slices = [slice(int(offsets[k]), int(offsets[k + 1]))
                       for k in range(len(self.bodies))]
        self.n_q = int(offsets[-1])
        self.coord_names = tuple(n for b in self.bodies for n in b.coord_names)
        rows: list[_Row] = []
        start = 0

        def add(name, kind, spec, eq_names, bi, bj):
            nonlocal start
            rows.append(_Row(name, kind, spec, slice(start, start + len(eq_names)),
                             tuple(eq_names), bi, bj))
            start += len(eq_names)

        for joint in model.joints:
            add(joint.name, "joint", joint, JOINT_EQUATIONS[joint.kind],
                self.marker_body_index(joint.marker_i), self.marker_body_index(joint.marker_j))
        for drive in model.drives:
            if drive.kind == "coordinate":
                body = drive.coordinate.split(".", 1)[0]
                add(drive.name, "coordinate", drive, ("value",), self._body_index[body], -1)
            else:
                add(drive.name, "drive", drive, ("value",),
                    self.marker_body_index(drive.marker_i), self.marker_body_index(drive.marker_j))
        for k, b in enumerate(self.bodies):
            add(f"{b.name}.norm", "norm", None, ("pTp-1",), k, -1)
        self._rows = rows
        self.n_c = start
        self.constraint_names = tuple(f"{r.name}[{e}]" for r in rows for e in r.eq_names)
        self._angles: dict[str, float] = {}
        # fixed sparsity pattern of Φ_q: the blocks of every row group, in the order
        # _row_terms returns them
        r_idx, c_idx = [], []
        for row in rows:
            bodies_of_row = ([row.body_i] if row.kind in ("norm", "coordinate")
                             else [row.body_i, row.body_j])
            for k in bodies_of_row:
                if k < 0:
                    continue
                cols = self.slices[k]
                rr, cc = np.meshgrid(np.arange(row.rows.start, row.rows.stop),
                                     np.arange(cols.start, cols.stop), indexing="ij")
                r_idx.append(rr.ravel())
                c_idx.append(cc.ravel())
        self._jac_rows = np.concatenate(r_idx) if r_idx else np.zeros(0, dtype=np.int64)
        self._jac_cols = np.concatenate(c_idx) if c_idx else np.zeros(0, dtype=np.int64)
        self._plan = ConstraintPlan(self)

    def fd_column_groups(self):
        """Column groups for finite-difference tangents
        (:func:`flexmbs.assembly.tangents.fd_column_groups`)."""
        from .tangents import fd_column_groups

        return fd_column_groups(self)

    def unwrap(self, key: str, angle: float, store: bool = True) -> float:
        """Continue ``angle`` [rad] by continuity with its last value for ``key``.

        Joint angles from atan2 jump by 2π at ±π; forces ask for the representative
        nearest to the previous evaluation, so multi-turn motions keep counting (valid
        while consecutive evaluations differ by less than π). ``store=False`` leaves the
        remembered value alone (tangent evaluations must not move it).
        """
        last = self._angles.get(key)
        if last is not None and np.isfinite(last):  # a non-finite memory is none
            angle += 2 * np.pi * np.round((last - angle) / (2 * np.pi))
        if store:
            self._angles[key] = angle
        return angle

    def residual_tangents(self, q, qd, qdd, lam, t: float = 0.0, *, sparse=None,
                          fd_step: float = 1e-7):
        """(K_t, C_t) = ∂r/∂q, ∂r/∂q̇ of r = M q̈ + Φ_qᵀλ − Q, analytic (finite differences
        only for forces given by user callables); see :mod:`flexmbs.assembly.tangents`."""
        from .tangents import residual_tangents

        return residual_tangents(self, q, qd, qdd, lam, t, sparse=sparse, fd_step=fd_step)

    def _check_q(self, q, name: str = "q") -> np.ndarray:
        arr = np.asarray(q, dtype=float)
        if arr.shape != (self.n_q,):
            raise ShapeError(f"{name} has shape {arr.shape}; the system has {self.n_q} "
                             f"coordinates")
        return arr

    # ------------------------------------------------------------------ helpers
    @property
    def angle_memory(self) -> dict[str, float]:
        """The last unwrapped angle [rad] of every continued angle (rotational springs,
        joint actuators, sensors; :meth:`unwrap`), by key: the state a run, a restart
        point and the compiled engine hand over."""
        return self._angles

    @angle_memory.setter
    def angle_memory(self, angles: dict[str, float]) -> None:
        self._angles = dict(angles)

    @property
    def sparse_default(self) -> bool:
        """Whether Φ_q, M and the tangents are CSR by default (more than SPARSE_LIMIT
        coordinates) rather than dense."""
        return self.n_q > SPARSE_LIMIT

    def marker_body_index(self, full_name: str) -> int:
        """Index in ``bodies`` of the body carrying marker ``full_name`` (−1: ground)."""
        body = self.model.markers[full_name].body
        return self._body_index.get(body, -1)


    def body_index(self, name: str) -> int:
        """Index in ``bodies`` of the body ``name`` (−1: ground)."""
        return self._body_index.get(name, -1)

    @property
    def constraint_plan(self):
        """The joints' and drives' equations as bilinear forms in marker vectors
        (:class:`flexmbs.assembly.constraints.ConstraintPlan`)."""
        return self._plan

    @property
    def constraint_rows(self) -> list:
        """Every constraint group (joint, drive, normalization) with its rows."""
        return self._rows

    @property
    def coupling(self) -> dict[str, str]:
        """Coupling mode of every flexible body in this run (recorded in results)."""
        return {b.name: b.coupling.value for b in self.bodies if hasattr(b, "coupling")}

    def marker_info(self, full_name: str):
        """(body, marker, slice of its coordinates; empty for ground)."""
        marker = self.model.markers[full_name]
        k = self._body_index.get(marker.body, -1)
        if k < 0:
            return self.model.bodies[marker.body], marker, slice(0, 0)
        return self.bodies[k], marker, self.slices[k]

    def _state(self, full_name, q, qd=None, jac_needed=True):
        body, marker, sl = self.marker_info(full_name)
        return marker_state(body, marker, q[sl], None if qd is None else qd[sl],
                            jac_needed)

    @property
    def q0(self) -> np.ndarray:
        """Initial coordinates as declared (not yet assembled)."""
        return np.concatenate([b.q0 for b in self.bodies]) if self.bodies else np.zeros(0)

    @property
    def qd0(self) -> np.ndarray:
        return np.concatenate([b.qd0 for b in self.bodies]) if self.bodies else np.zeros(0)

    def _row_terms(self, row: _Row, q, qd, t, vel: bool, jac_needed: bool = True):
        """Φ, [(cols, block)], Φ_t, γ of one constraint group."""
        if row.kind == "norm":
            sl = self.slices[row.body_i]
            p = q[sl][3:7]
            jac = np.zeros((1, self.bodies[row.body_i].n_coords))
            jac[0, 3:7] = 2 * p
            gamma = None
            if vel:
                pd = qd[sl][3:7]
                gamma = np.array([-2 * pd @ pd])
            return np.array([p @ p - 1]), [(sl, jac)], np.zeros(1), gamma
        if row.kind == "coordinate":
            drive = row.spec
            k = self.coord_names.index(drive.coordinate)
            s, s_d, s_dd = drive_values(drive, t)
            sl = self.slices[row.body_i]
            jac = np.zeros((1, sl.stop - sl.start))
            jac[0, k - sl.start] = 1.0
            return (np.array([q[k] - s]), [(sl, jac)], np.array([-s_d]),
                    np.array([s_dd]) if vel else None)
        spec = row.spec
        mi = self._state(spec.marker_i, q, qd if vel else None, jac_needed)
        mj = self._state(spec.marker_j, q, qd if vel else None, jac_needed)
        if row.kind == "joint":
            phi, ji, jj, phi_t, gamma = joint_equations(spec.kind, mi, mj, vel)
        else:
            phi, ji, jj, phi_t, gamma = drive_equations(spec.kind, mi, mj, vel,
                                                        drive_values(spec, t))
        blocks = []
        if ji is None:
            return phi, blocks, phi_t, gamma
        if row.body_i >= 0:
            blocks.append((self.slices[row.body_i], ji))
        if row.body_j >= 0:
            blocks.append((self.slices[row.body_j], jj))
        return phi, blocks, phi_t, gamma

    # ------------------------------------------------------------------ constraints
    def _constraints(self, q, t: float, jac: bool):
        """Φ (n_c,) and, with ``jac``, the values of Φ_q in the order of the fixed sparsity
        pattern (``_jac_rows``, ``_jac_cols``); see :mod:`flexmbs.assembly.constraints`."""
        return self._plan.evaluate(q, t, jac, drive_values)

    def _assemble_jacobian(self, values, sparse: bool):
        if not sparse:
            out = np.zeros((self.n_c, self.n_q))
            out[self._jac_rows, self._jac_cols] = values  # blocks never overlap
            return out
        sp = scipy_module("scipy.sparse")  # (large models only: docs/compiled.md)
        return sp.csr_matrix((values, (self._jac_rows, self._jac_cols)),
                             shape=(self.n_c, self.n_q))

    def phi(self, q, t: float = 0.0) -> np.ndarray:
        """Φ(q, t), shape (n_c,)."""
        return self._constraints(self._check_q(q), t, jac=False)[0]

    def jacobian(self, q, t: float = 0.0, sparse: bool | None = None):
        """Φ_q (n_c x n_q): dense below SPARSE_LIMIT coordinates, CSR above."""
        sparse = self.n_q > SPARSE_LIMIT if sparse is None else sparse
        values = self._constraints(self._check_q(q), t, jac=True)[1]
        return self._assemble_jacobian(values, sparse)

    def dynamic_residual(self, q, qd, qdd, lam, t: float = 0.0, sparse: bool | None = None):
        """(r, Φ, Φ_q) at one evaluation of the kinematics, r = M q̈ + Φ_qᵀλ − Q.

        What an implicit integrator needs per Newton iteration: every body's part
        M_b q̈_b − Q_b in one pass (``body.residual``, no M formed), the constraints and
        their Jacobian from one batch of marker kinematics, then the applied forces.
        Φ_q is dense below SPARSE_LIMIT coordinates, CSR above (or as ``sparse`` says).
        """
        q, qd = self._check_q(q), self._check_q(qd, "qd")
        qdd = self._check_q(qdd, "qdd")
        sparse = self.n_q > SPARSE_LIMIT if sparse is None else sparse
        phi, values = self._constraints(q, t, jac=True)
        jac = self._assemble_jacobian(values, sparse)
        g = self.model.gravity
        r = np.asarray(jac.T @ np.asarray(lam, dtype=float)).ravel()
        for body, sl in zip(self.bodies, self.slices, strict=True):
            r[sl] += body.residual(q[sl], qd[sl], qdd[sl], g)
        applied = np.zeros(self.n_q)
        for force in self.model.forces:
            force.apply(self, q, qd, t, applied)
        for idx, block in self._force_masses(q):
            r[idx] += block @ qdd[idx]
        return r - applied, phi, jac

    def _force_masses(self, q):
        """(idx, block) mass terms of forces with an inertia of their own (a servo's
        rotor, :meth:`flexmbs.model.servos.JointServo.mass_block`)."""
        out = []
        for force in self.model.forces:
            part = force.mass_block(self, q) if hasattr(force, "mass_block") else None
            if part is not None:
                out.append(part)
        return out

    def phi_t(self, q, t: float = 0.0) -> np.ndarray:
        """∂Φ/∂t (n_c,)."""
        return self._plan.time_derivative(self._check_q(q), t, drive_values)

    def violations(self, q, qd, t: float = 0.0) -> tuple[float, float]:
        """(max |Φ|, max |Φ_q q̇ − ν|) from one evaluation of the constraints."""
        q, qd = self._check_q(q), self._check_q(qd, "qd")
        phi, values = self._constraints(q, t, jac=True)
        jac = self._assemble_jacobian(values, self.n_q > SPARSE_LIMIT)
        vel = np.asarray(jac @ qd).ravel() + self._plan.time_derivative(q, t, drive_values)
        return (float(np.max(np.abs(phi), initial=0.0)),
                float(np.max(np.abs(vel), initial=0.0)))

    def nu(self, q, t: float = 0.0) -> np.ndarray:
        """ν = −Φ_t: right-hand side of Φ_q q̇ = ν."""
        return -self.phi_t(q, t)

    def gamma(self, q, qd, t: float = 0.0) -> np.ndarray:
        """γ with Φ_q q̈ = γ; at rest (q̇ = 0) the drives' rows alone (the joints' and norms'
        γ are quadratic in q̇: docs/multibody.md, "Joints")."""
        q, qd = self._check_q(q), self._check_q(qd, "qd")
        at_rest = not qd.any()
        out = np.zeros(self.n_c)
        for row in self._rows:
            if not (at_rest and row.kind in ("joint", "norm")):
                out[row.rows] = self._row_terms(row, q, qd, t, True)[3]
        return out

    # ------------------------------------------------------------------ dynamics
    def mass_matrix(self, q, sparse: bool | None = None):
        """M(q) (n_q x n_q): the bodies' blocks plus the inertia terms of forces that have
        one (a servo's rotor); dense below SPARSE_LIMIT coordinates, CSR above."""
        sparse = self.n_q > SPARSE_LIMIT if sparse is None else sparse
        blocks = [body.mass_matrix(q[sl]) for body, sl in zip(self.bodies, self.slices,
                                                               strict=True)]
        extra = self._force_masses(q)
        if sparse:
            sp = scipy_module("scipy.sparse")  # (large models only)
            out = sp.block_diag(blocks, format="csr") if blocks else sp.csr_matrix((0, 0))
            for idx, block in extra:
                rows, cols = np.meshgrid(idx, idx, indexing="ij")
                out = out + sp.csr_matrix((block.ravel(), (rows.ravel(), cols.ravel())),
                                          shape=out.shape)
            return out
        out = np.zeros((self.n_q, self.n_q))
        for block, sl in zip(blocks, self.slices, strict=True):
            out[sl, sl] = block
        for idx, block in extra:
            out[np.ix_(idx, idx)] += block
        return out

    def forces(self, q, qd, t: float = 0.0) -> np.ndarray:
        """Q(q, q̇, t): each body's own forces (quadratic velocity vector, gravity, and for
        flexible bodies elastic and damping forces) plus the applied forces."""
        q, qd = self._check_q(q), self._check_q(qd, "qd")
        out = np.zeros(self.n_q)
        g = self.model.gravity
        for body, sl in zip(self.bodies, self.slices, strict=True):
            out[sl] += body.generalized_forces(q[sl], qd[sl], t, g)
        for force in self.model.forces:
            force.apply(self, q, qd, t, out)
        return out

    def nonconservative_power(self, q, qd, lam, t: float = 0.0) -> float:
        """Power [W] of everything that changes T + V: applied forces without a
        potential (dampers, actuators, point and distributed loads), modal damping, and
        the drives (prescribed motion works through its multipliers: −q̇ᵀΦ_qᵀλ over the
        drive rows)."""
        q, qd = self._check_q(q), self._check_q(qd, "qd")
        out = np.zeros(self.n_q)
        for force in self.model.forces:
            part = force.nonconservative() if hasattr(force, "nonconservative") else force
            if part is not None:
                part.apply(self, q, qd, t, out)
        power = float(qd @ out)
        for body, sl in zip(self.bodies, self.slices, strict=True):
            if hasattr(body, "data"):
                xid = qd[sl][7:]
                power -= float(xid @ body.data.D_ff @ xid)
        lam = np.asarray(lam, dtype=float)
        for row in self._rows:
            if row.kind in ("drive", "coordinate"):
                blocks = self._row_terms(row, q, None, t, False)[1]
                for cols, block in blocks:
                    power -= float(lam[row.rows] @ (block @ qd[cols]))
        return power

    def energy(self, q, qd, leave_out=()) -> tuple[float, float]:
        """(kinetic, potential) energy [J]: bodies' gravity and springs' potentials, the
        forces in ``leave_out`` left out (a run's contacts: their stored energy depends on
        their state at each output, which the run's samples hold)."""
        kin = sum(b.kinetic_energy(q[s], qd[s]) for b, s in zip(self.bodies, self.slices,
                                                               strict=True))
        pot = sum(b.potential_energy(q[s], self.model.gravity)
                  for b, s in zip(self.bodies, self.slices, strict=True))
        left = {id(f) for f in leave_out}
        pot += sum(f.potential(self, q) for f in self.model.forces
                   if hasattr(f, "potential") and id(f) not in left)
        kin += sum(f.kinetic_energy(self, q, qd) for f in self.model.forces
                   if hasattr(f, "kinetic_energy"))
        return float(kin), float(pot)

    # ------------------------------------------------------------------ analysis
    def check(self, q=None, t: float = 0.0) -> DofReport:
        """The model check at q (default: the assembled initial state): DOF, rank and
        redundant rows by name (:func:`flexmbs.assembly.model_check.check`)."""
        return model_check.check(self, q, t)

    def redundancy_advice(self, q, t: float, n_redundant: int) -> str:
        """What removes ``n_redundant`` redundant equations at q
        (:func:`flexmbs.assembly.model_check.redundancy_advice`)."""
        return model_check.redundancy_advice(self, q, t, n_redundant)

    def violated(self, q, t: float = 0.0, tol: float = 1e-9) -> list[tuple[str, float]]:
        """Constraint groups with max |Φ| above ``tol``: (name, value)."""
        out = []
        phi = self.phi(q, t)
        for row in self._rows:
            worst = float(np.max(np.abs(phi[row.rows])))
            if not worst <= tol:  # NaN counts as violated
                out.append((row.name, worst))
        return sorted(out, key=lambda x: -x[1])

    def assemble(self, q=None, t: float = 0.0, tol: float = 1e-12, max_iter: int = 50,
                 fixed_weight: float = 1e6) -> np.ndarray:
        """Newton projection onto Φ(q, t) = 0, moving q as little as possible.

        Each step is the weighted least-norm correction Δq = −W⁻¹Φ_qᵀ(Φ_q W⁻¹ Φ_qᵀ)⁺ Φ
        with weight ``fixed_weight`` on the coordinates the user fixed, 1 elsewhere.
        Flexible bodies' modal coordinates ξ are held first (bodies placed by their
        joints start undeformed, not prestressed); they move too only where the joints
        cannot be closed so. Raises ConvergenceError naming the joints still violated."""
        q = (self.q0 if q is None else self._check_q(q)).copy()
        held = self._weights(fixed_weight, hold_elastic=True)
        if held.any() and not np.array_equal(held, self._weights(fixed_weight)):
            found = self._project(q.copy(), t, tol, max_iter, held, first=True)
            if found is not None:  # (else the start as it was, everything free)
                return found
        return self._project(q, t, tol, max_iter, self._weights(fixed_weight))

    def _project(self, q, t, tol, max_iter, w_inv, first: bool = False):
        """:meth:`assemble`'s Newton iteration from ``q`` with the weights ``w_inv``;
        ``first``: the pass with ξ held, which gives up (None) once |Φ| stops falling
        (not halved over three steps) instead of reporting."""
        start, history = q.copy(), []
        for _ in range(max_iter):  # Φ and Φ_q from one evaluation of the markers
            phi, values = self._constraints(q, t, jac=True)
            err = float(np.max(np.abs(phi))) if phi.size else 0.0
            history.append(err)
            if err < tol:
                check_branches(self, self._rows, q, t)
                return q
            if first and len(history) > 3 and not err < 0.5 * history[-4]:
                return None
            q = q + self._least_change_step(q, t, phi, w_inv, values)
            if not np.all(np.isfinite(q)):
                break
        if first:
            return None
        self._check_axis_pairs(start)  # a stationary start names its joint instead
        bad = self.violated(q, t, tol=max(tol, 1e-9))
        listing = ", ".join(f"{n} (|Φ| = {v:.3g})" for n, v in bad[:8]) or "none above 1e-9"
        raise ConvergenceError(
            f"assembly did not converge in {max_iter} Newton iterations (|Φ| history "
            f"{history[0]:.3g} → {history[-1]:.3g}); still violated: {listing}. The "
            f"initial guess may be too far, or the joints cannot all be satisfied"
        )

    def _check_axis_pairs(self, q) -> None:
        """Raise ModelError naming the joint when one of its perpendicularity equations
        (a_iᵀ b_j = 0: the cross of a universal joint, the axis of a revolute...) starts
        with the two axes parallel: there the equation is stationary in every rotation
        (its gradient is (b × a)ᵀ = 0), so Newton cannot turn them apart, and the least-
        change steps blame other rows (the Euler-parameter norms) instead."""
        problems = []
        for row in self._rows:
            if row.kind != "joint":
                continue
            spec = row.spec
            states = {"i": self._state(spec.marker_i, q, jac_needed=False),
                      "j": self._state(spec.marker_j, q, jac_needed=False)}
            markers = {"i": spec.marker_i, "j": spec.marker_j}
            for eq in row.eq_names:
                match = _AXIS_PAIR.match(eq)
                if match is None:
                    continue
                a, side_a, b, side_b = match.groups()
                cos = float(states[side_a].axes["xyz".index(a)]
                            @ states[side_b].axes["xyz".index(b)])
                if abs(cos) > 1.0 - PARALLEL_TOL:
                    problems.append(
                        f"joint {row.name!r} ({spec.kind}): its equation {eq} needs axis "
                        f"{a} of marker {markers[side_a]!r} perpendicular to axis {b} of "
                        f"marker {markers[side_b]!r}, but they start "
                        f"{'parallel' if cos > 0 else 'antiparallel'} (cos = {cos:.6g}), "
                        f"where no rotation changes the equation to first order; orient "
                        f"one of the markers so that these axes are perpendicular"
                        + (" (a universal joint's two axes cross at right angles)"
                           if spec.kind == "universal" else ""))
        if problems:
            raise ModelError("assembly cannot start: " + "; ".join(problems))

    def _weights(self, fixed_weight: float = 1e6, hold_elastic: bool = False) -> np.ndarray:
        """W⁻¹ of the least-change steps: 1 / ``fixed_weight`` on the coordinates the user
        fixed, 1 elsewhere; with ``hold_elastic`` 0 on floating-frame bodies' modal
        coordinates ξ (they do not move)."""
        from ..model.flexible import FlexibleBody

        w_inv = np.ones(self.n_q)
        for body, sl in zip(self.bodies, self.slices, strict=True):
            for k in getattr(body, "fixed", ()):
                w_inv[sl.start + k] = 1.0 / fixed_weight
            if hold_elastic and isinstance(body, FlexibleBody):
                w_inv[sl.start + 7:sl.stop] = 0.0
        return w_inv

    def _least_change_step(self, q, t, phi, w_inv, values=None):
        """Δq = −W⁻¹Φ_qᵀ(Φ_q W⁻¹ Φ_qᵀ)⁺ Φ (weighted minimum-norm Newton step; Φ_q of ``values``)."""
        values = self._constraints(q, t, jac=True)[1] if values is None else values
        if self.n_q <= SPARSE_LIMIT:
            jac = self._assemble_jacobian(values, sparse=False)
            jw = jac * w_inv
            return -w_inv * (jac.T @ np.linalg.lstsq(jw @ jac.T, phi, rcond=1e-12)[0])
        sp, spla = scipy_module("scipy.sparse"), scipy_module("scipy.sparse.linalg")
        jac = self._assemble_jacobian(values, sparse=True)
        scale = np.sqrt(w_inv)
        # min ‖y‖ s.t. (J S) y = −Φ, then Δq = S y  (S = W^{-1/2}); LSQR from y = 0
        # converges to the minimum-norm solution
        y = spla.lsqr(jac @ sp.diags(scale), -phi, atol=1e-15, btol=1e-15,
                      iter_lim=20 * self.n_q)[0]
        return scale * y

    def project_velocity(self, q, qd=None, t: float = 0.0) -> np.ndarray:
        """Least-change q̇ with Φ_q q̇ = ν (velocity-level consistency); flexible bodies'
        modal rates ξ̇ held as given where the frames' rates alone satisfy it (as
        :meth:`assemble` holds ξ)."""
        q = self._check_q(q)
        qd = self.qd0 if qd is None else self._check_q(qd, "qd")
        jac = self.jacobian(q, t)
        nu = self.nu(q, t)
        residual = np.asarray(jac @ qd) - nu
        if not residual.any():  # consistent as given (a start at rest): no step to take
            return qd.copy()
        held = self._weights(hold_elastic=True)
        if held.any() and not np.array_equal(held, self._weights()):
            out = qd + self._least_change_step(q, t, residual, held)
            left = np.asarray(jac @ out) - nu
            scale = max(float(np.max(np.abs(residual))) if residual.size else 0.0, 1.0)
            if not left.size or np.max(np.abs(left)) <= 1e-10 * scale:
                return out
        return qd + self._least_change_step(q, t, residual, self._weights())

    def require_body(self, name: str):
        if name not in self._body_index:
            raise ModelError(f"unknown body {name!r}; bodies: {list(self._body_index)}")
        return self.slices[self._body_index[name]]


#: Joint equation names "a_s.b_t" that ask axis a of marker s ⟂ axis b of marker t.
_AXIS_PAIR = re.compile(r"^([xyz])_([ij])\.([xyz])_([ij])$")
#: Axes count as parallel when 1 − |cos| is below this (about 4e-5 rad apart).
PARALLEL_TOL = 1e-9

