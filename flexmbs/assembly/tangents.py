"""Analytic Newton tangents of the dynamic residual (docs/theory_integrators.md,
docs/theory_ffrf.md §1–3, §5–9).

The implicit integrators solve r(q, q̇, q̈, λ, t) = M(q) q̈ + Φ_q(q, t)ᵀ λ − Q(q, q̇, t) = 0
with the iteration matrix M + (γ'/β') C_t + K_t/β', where

    K_t = ∂r/∂q = ∂(M a)/∂q|_{a = q̈} + Σ_k λ_k ∂²Φ_k/∂q² − ∂Q/∂q,    C_t = ∂r/∂q̇ = −∂Q/∂q̇.

Every piece is assembled from the code that it differentiates, all exact derivatives
(A(p) is quadratic and Ḡ(p), G(p) linear in p; the invariant blocks of M̄ are polynomials
of degree ≤ 2 in ξ), in global components and the global coordinate order of ``System``:

* bodies: ``body.residual_tangents`` (mass term, quadratic velocity vector, gravity,
  K_ff ξ + D_ff ξ̇ — one C-form kernel for rigid and flexible bodies in every coupling
  mode, :func:`flexmbs.elements.floating_frame_reference.frame_tangents`);
* constraints: Σ λ_k Φ_k of a joint or drive is a bilinear plus linear form in the eight
  marker vectors (:func:`flexmbs.model.joints.constraint_coefficients`); its Hessian is
  Σ_a H_a(w_a) + Σ_ab (C + Cᵀ)_ab J_aᵀ J_b with the marker Hessians
  ``body.marker_hessian``; normalization rows pᵀp − 1 give 2λ I; coordinate drives are
  linear (nothing);
* applied forces: ``force.tangents``; a force whose value comes from a user callable
  (``tangents`` returns None) is differentiated alone by forward finite differences over
  all of q and q̇ (a callable sees the whole state), its rows only — for a joint
  actuator only the callable's scalar value, through the exact joint angle or
  displacement, its rate and the torque or force Jacobians (``callable_tangents``).

Dense (n_q x n_q) arrays below ``assembly.system.SPARSE_LIMIT`` coordinates, CSR above.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._blas import scipy_module
from ..model.drives import drive_values
from ..model.joints import constraint_coefficients

if TYPE_CHECKING:
    from .system import System


class _Blocks:
    """Collects (rows, cols, block) contributions; duplicates add up."""

    def __init__(self, n: int):
        self.n = n
        self.items: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, rows, cols, block):
        if block.size:
            self.items.append((np.asarray(rows), np.asarray(cols), block))

    def dense(self) -> np.ndarray:
        out = np.zeros((self.n, self.n))
        for rows, cols, block in self.items:
            np.add.at(out, (rows[:, None], cols[None, :]), block)
        return out

    def sparse(self):
        sp = scipy_module("scipy.sparse")  # (large models only: docs/compiled.md)
        if not self.items:
            return sp.csr_matrix((self.n, self.n))
        r = np.concatenate([np.repeat(rows, cols.size) for rows, cols, _ in self.items])
        c = np.concatenate([np.tile(cols, rows.size) for rows, cols, _ in self.items])
        v = np.concatenate([block.ravel() for _, _, block in self.items])
        return sp.csr_matrix((v, (r, c)), shape=(self.n, self.n))  # duplicates summed


def _range(sl: slice) -> np.ndarray:
    return np.arange(sl.start, sl.stop)


def constraint_hessian(system: System, row, q, lam, t) -> tuple[np.ndarray, np.ndarray]:
    """(idx, H) with H = ∂²(Σ_k λ_k Φ_k)/∂q² of one joint or drive group on the
    coordinates ``idx`` (body i's, then body j's)."""
    spec = row.spec
    theta = drive_values(spec, t) if row.kind == "drive" else None
    coef, lin = constraint_coefficients(spec.kind, lam[row.rows], theta)
    sym = coef + coef.T
    bi, mi, sli = system.marker_info(spec.marker_i)
    bj, mj, slj = system.marker_info(spec.marker_j)
    ri, axi, ji, _ = bi.marker_frame(q[sli], mi)
    rj, axj, jj, _ = bj.marker_frame(q[slj], mj)
    vecs = np.vstack([ri, axi.T, rj, axj.T])  # (8, 3)
    weights = sym @ vecs + lin
    ni, nj = ji.shape[2], jj.shape[2]
    jac = np.zeros((8, 3, ni + nj))
    jac[:4, :, :ni] = ji
    jac[4:, :, ni:] = jj
    flat = jac.reshape(8, 3 * (ni + nj))
    mixed = (sym @ flat).reshape(8 * 3, ni + nj)
    hess = jac.reshape(24, ni + nj).T @ mixed
    hess[:ni, :ni] += bi.marker_hessian(q[sli], mi, weights[:4])
    hess[ni:, ni:] += bj.marker_hessian(q[slj], mj, weights[4:])
    return np.concatenate([_range(sli), _range(slj)]), hess


def _force_rows(system: System, force) -> np.ndarray:
    """Coordinates whose generalized forces ``force`` can change."""
    if hasattr(force, "body"):
        return _range(system.require_body(force.body))
    names = [getattr(force, k, None) for k in ("marker_i", "marker_j", "marker")]
    idx = [_range(system.marker_info(m)[2]) for m in names if m is not None]
    return np.unique(np.concatenate(idx)) if idx else np.zeros(0, dtype=np.int64)


def fd_column_groups(system):
    """Column groups for finite-difference tangents: a distance-2 colouring of the
    body graph (bodies linked by a joint, drive or force). Perturbing one local
    coordinate of every body of a colour at once, each residual row sees at most one
    perturbed body, so ~(colours × coordinates per body) residuals replace n_q.

    Returns a list of groups; a group is a list of (column, row indices) pairs, the
    rows being that body's and its neighbours' coordinates. None when a user callable
    could read any coordinate (then all columns are perturbed one by one).
    """
    from ..model.forces import JointActuator, PointLoad, SpringDamperActuator

    n_b = len(system.bodies)
    links = [set() for _ in range(n_b)]

    def link(a, b):
        if a >= 0 and b >= 0 and a != b:
            links[a].add(b)
            links[b].add(a)

    for row in system._rows:
        link(row.body_i, row.body_j)
    for force in system.model.forces:
        if isinstance(force, JointActuator) or (
                isinstance(force, PointLoad) and callable(force.value)) or (
                isinstance(force, SpringDamperActuator) and callable(force.actuator)
                and not hasattr(force.actuator, "eval")):
            return None  # a user callable sees all of q
        for a, b in getattr(force, "body_links", ()):  # bodies a force couples directly
            link(system.body_index(a), system.body_index(b))
        refs = [getattr(force, k, None) for k in ("marker_i", "marker_j")]
        ids = [system.marker_body_index(r) for r in refs if r is not None]
        for a in ids:
            for b in ids:
                link(a, b)
    colour = [-1] * n_b
    for b in range(n_b):
        near = set(links[b])
        for nb in links[b]:
            near |= links[nb]
        used = {colour[x] for x in near if x != b}
        colour[b] = next(c for c in range(n_b + 1) if c not in used)
    rows_of = []
    for b in range(n_b):
        idx = [np.arange(system.slices[x].start, system.slices[x].stop)
               for x in sorted({b, *links[b]})]
        rows_of.append(np.concatenate(idx))
    groups = []
    for c in range(max(colour, default=-1) + 1):
        members = [b for b in range(n_b) if colour[b] == c]
        width = max(system.bodies[b].n_coords for b in members)
        for i in range(width):
            groups.append([(system.slices[b].start + i, rows_of[b]) for b in members
                           if i < system.bodies[b].n_coords])
    return groups


def force_tangents_fd(system: System, force, q, qd, t, fd_step: float = 1e-7):
    """(rows, K, C) of one force by forward differences of its generalized force over all
    of q and q̇ (a user callable may read any coordinate), restricted to its own rows.

    A force with ``callable_tangents`` (a joint actuator) differences its callable's
    value alone and the rest exactly (2 n_q calls of the callable, no kinematics)."""
    if hasattr(force, "callable_tangents"):
        return force.callable_tangents(system, q, qd, t, fd_step)
    rows = _force_rows(system, force)
    n = system.n_q

    def value(qq, qqd):
        out = np.zeros(n)
        force.apply(system, qq, qqd, t, out)
        return out[rows]

    base = value(q, qd)
    k = np.zeros((rows.size, n))
    c = np.zeros((rows.size, n))
    for col in range(n):
        step = fd_step * max(1.0, abs(q[col]))
        dq = np.zeros(n)
        dq[col] = step
        k[:, col] = -(value(q + dq, qd) - base) / step
        step_d = fd_step * max(1.0, abs(qd[col]))
        dq[col] = step_d
        c[:, col] = -(value(q, qd + dq) - base) / step_d
    return rows, k, c


def residual_tangents(system: System, q, qd, qdd, lam, t: float = 0.0, *, sparse=None,
                      fd_step: float = 1e-7):
    """(K_t, C_t) of the residual r = M q̈ + Φ_qᵀλ − Q (see the module docstring).

    Parameters
    ----------
    q, qd, qdd : ndarray, shape (n_q,)
    lam : ndarray, shape (n_c,)
    t : float
        Time [s].
    sparse : bool, optional
        CSR output; default above ``assembly.system.SPARSE_LIMIT`` coordinates.
    fd_step : float
        Relative forward-difference step for forces given by user callables.

    Returns
    -------
    K_t, C_t : ndarray or CSR, shape (n_q, n_q)
    """
    q = system._check_q(q)
    qd = system._check_q(qd, "qd")
    qdd = system._check_q(qdd, "qdd")
    lam = np.asarray(lam, dtype=float)
    sparse = system.sparse_default if sparse is None else sparse
    k_acc, c_acc = _Blocks(system.n_q), _Blocks(system.n_q)
    g = system.model.gravity
    for body, sl in zip(system.bodies, system.slices, strict=True):
        k_b, c_b = body.residual_tangents(q[sl], qd[sl], qdd[sl], g)
        idx = _range(sl)
        k_acc.add(idx, idx, k_b)
        c_acc.add(idx, idx, c_b)
    for row in system._rows:
        if row.kind == "coordinate":
            continue  # linear in q
        if row.kind == "norm":
            idx = _range(system.slices[row.body_i])[3:7]
            k_acc.add(idx, idx, 2.0 * lam[row.rows][0] * np.eye(4))
            continue
        idx, hess = constraint_hessian(system, row, q, lam, t)
        k_acc.add(idx, idx, hess)
    for force in system.model.forces:
        part = force.tangents(system, q, qd, t)
        if part is None:
            rows, k_f, c_f = force_tangents_fd(system, force, q, qd, t, fd_step)
            cols = np.arange(system.n_q)
            k_acc.add(rows, cols, k_f)
            c_acc.add(rows, cols, c_f)
        else:
            idx, k_f, c_f = part
            k_acc.add(idx, idx, k_f)
            c_acc.add(idx, idx, c_f)
        # a force with a mass term of its own (a beam's consistent inertia): its
        # q-derivative at the q̈ of the state
        mass_part = (force.mass_tangent(system, q, qdd) if hasattr(force, "mass_tangent")
                     else None)
        if mass_part is not None:
            k_acc.add(mass_part[0], mass_part[0], mass_part[1])
    if sparse:
        return k_acc.sparse(), c_acc.sparse()
    return k_acc.dense(), c_acc.dense()
