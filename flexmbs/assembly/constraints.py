"""Batched evaluation of the constraint equations Φ(q, t) and of Φ_q
(docs/multibody.md, coordinates and conventions).

Every joint and drive equation k is a bilinear plus a linear form in the eight marker
vectors V = (r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j) of its two markers
(``flexmbs.model.joints.constraint_coefficients`` with λ = e_k):

    Φ_k = Σ_ab C_kab V_aᵀ V_b + Σ_a l_kaᵀ V_a − s_k(t),
    ∂Φ_k/∂q = Σ_a W_kaᵀ J_a,   W_k = (C_k + C_kᵀ) V + l_k,

with J_a = ∂V_a/∂q the marker Jacobians (``marker_frames_kernel``). So all equations
are evaluated together: the markers body by body (one A(p), one ∂(A s)/∂p per body),
then one gather of V per equation, one batched Gram product for Φ, one batched product
for W, and per body one batched W·J product for the Jacobian values. Nothing loops over
equations in Python; only rotation drives (C from θ_d(t)), translation drives (s(t)) and
coordinate drives are visited one by one. Normalization rows pᵀp − 1 (Jacobian 2pᵀ) are
vectorized over bodies.

Φ_q values come out in the order of the System's fixed sparsity pattern (per row group:
the block of body i, then of body j, each row-major).
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..elements.marker_kinematics import marker_frames_kernel
from ..model.joints import constraint_coefficients

#: A rotation drive's two entries of C flattened: C[5, 1] (x_j·x_i) and C[5, 2] (x_j·y_i).
_X_J_X_I, _X_J_Y_I = 5 * 8 + 1, 5 * 8 + 2


def bilinear_coefficients(kind: str, m: int, theta=None) -> tuple[np.ndarray, np.ndarray]:
    """(C (m, 8, 8), l (m, 8, 3)) of the m equations of a joint or drive ``kind``."""
    parts = [constraint_coefficients(kind, np.eye(m)[k], theta) for k in range(m)]
    return np.stack([c for c, _ in parts]), np.stack([lin for _, lin in parts])


class ConstraintPlan:
    """The constraint rows of a :class:`~flexmbs.assembly.system.System`, compiled once.

    Parameters
    ----------
    system : System
        Its ``_rows`` (row groups), ``slices``, ``marker_info`` and the pattern order of
        Φ_q are used; nothing is kept but arrays and the drive specs.
    """

    def __init__(self, system):
        self.n_c = system.n_c
        self._last = None  # the memo of shared(): None outside it
        stacks: dict[int, list] = {}  # body index (-1: ground) -> [(base, shapes)]
        slot_of: dict[str, tuple[int, int]] = {}

        def slot(full_name):
            if full_name not in slot_of:
                body, marker, _ = system.marker_info(full_name)
                k = system.marker_body_index(full_name)
                stacks.setdefault(k, []).append(body.marker_shapes(marker))
                slot_of[full_name] = (k, len(stacks[k]) - 1)
            return slot_of[full_name]

        width = {k: sl.stop - sl.start for k, sl in enumerate(system.slices)}
        coefs, lins, pos, mark_i, mark_j, sides = [], [], [], [], [], []
        self.rotation_drives: list[tuple[object, int]] = []  # (spec, equation index)
        self.translation_drives: list[tuple[object, int]] = []
        self.coordinate_drives: list[tuple[object, int, int]] = []  # (spec, row, coord)
        norm_rows, norm_p, norm_dest = [], [], []
        coordinate_dest = []
        start = 0  # position in the Φ_q values
        for row in system._rows:
            if row.kind == "norm":
                sl = system.slices[row.body_i]
                norm_rows.append(row.rows.start)
                norm_p.append(np.arange(sl.start + 3, sl.start + 7))
                norm_dest.append(start + np.arange(3, 7))
                start += width[row.body_i]
                continue
            if row.kind == "coordinate":
                k = system.coord_names.index(row.spec.coordinate)
                self.coordinate_drives.append((row.spec, row.rows.start, k))
                coordinate_dest.append(start + k - system.slices[row.body_i].start)
                start += width[row.body_i]
                continue
            m = len(row.eq_names)
            coef, lin = bilinear_coefficients(row.spec.kind, m, (0.0, 0.0, 0.0))
            first = len(pos)
            if row.kind == "drive":
                target = (self.rotation_drives if row.spec.kind == "rotation"
                          else self.translation_drives)
                target.append((row.spec, first))
            si, sj = slot(row.spec.marker_i), slot(row.spec.marker_j)
            for k in range(m):
                coefs.append(coef[k])
                lins.append(lin[k])
                pos.append(row.rows.start + k)
                mark_i.append(si)
                mark_j.append(sj)
            n_i = width.get(row.body_i, 0) if row.body_i >= 0 else 0
            n_j = width.get(row.body_j, 0) if row.body_j >= 0 else 0
            for k in range(m):  # (equation, side, body, destination of the block row)
                if row.body_i >= 0:
                    sides.append((first + k, 0, row.body_i, start + k * n_i))
                if row.body_j >= 0:
                    sides.append((first + k, 1, row.body_j, start + m * n_i + k * n_j))
            start += m * (n_i + n_j)
        self.n_values = start
        # markers: per body (index, slice, base (k, 4, 3), shapes (k, 4, 3, m)); the
        # global marker index is the body's offset plus the slot
        self.bodies, offset, first_of = [], 0, {}
        for k in sorted(stacks):
            base = np.stack([b for b, _ in stacks[k]])
            modes = max(u.shape[2] for _, u in stacks[k])
            shapes = np.zeros((len(stacks[k]), 4, 3, modes))
            for s_, (_, u) in enumerate(stacks[k]):
                shapes[s_, :, :, :u.shape[2]] = u
            self.bodies.append((k, None if k < 0 else system.slices[k], base, shapes))
            first_of[k] = offset
            offset += base.shape[0]
        n_eq = len(pos)
        coef = np.array(coefs).reshape(n_eq, 8, 8)
        self.coef = coef.reshape(n_eq, 64)  # C_k flattened
        self.sym = coef + coef.transpose(0, 2, 1)
        self.lin = np.array(lins).reshape(n_eq, 8, 3)
        self.pos = np.array(pos, dtype=np.int64)
        self.markers = np.array([[first_of[b] + s_ for b, s_ in pair]
                                 for pair in zip(mark_i, mark_j, strict=True)],
                                dtype=np.int64).reshape(n_eq, 2)
        # Jacobian blocks grouped by body: (body index, slot of the marker in that body's
        # stack, equation, side, destination indices (count, n_body))
        self.blocks = []
        for b, sl, _, _ in self.bodies:
            if b < 0:
                continue
            sel = [s_ for s_ in sides if s_[2] == b]
            eq = np.array([s_[0] for s_ in sel], dtype=np.int64)
            side = np.array([s_[1] for s_ in sel], dtype=np.int64)
            slots = self.markers[eq, side] - first_of[b]
            dest = np.array([s_[3] for s_ in sel], dtype=np.int64)[:, None] + np.arange(
                sl.stop - sl.start)
            self.blocks.append((b, slots, eq, side, dest))
        self.norm_rows = np.array(norm_rows, dtype=np.int64)
        self.norm_p = np.array(norm_p, dtype=np.int64).reshape(-1, 4)
        self.norm_dest = np.array(norm_dest, dtype=np.int64).reshape(-1, 4)
        self.coordinate_dest = np.array(coordinate_dest, dtype=np.int64)

    def markers_at(self, q, jac: bool):
        """V (K, 4, 3) of every constraint marker and {body index: J (k, 4, 3, n)}."""
        vecs, jacs = [], {}
        for k, sl, base, shapes in self.bodies:
            if k < 0:
                vecs.append(base)
                continue
            v, j = marker_frames_kernel(q[sl], base, shapes, sl.stop - sl.start, jac)
            vecs.append(v)
            if jac:
                jacs[k] = j
        return (np.concatenate(vecs) if vecs else np.zeros((0, 4, 3))), jacs

    def time_derivative(self, q, t: float, profile_values) -> np.ndarray:
        """Φ_t (n_c,): −ṡ on coordinate and translation drives; on rotation drives the
        bilinear form with Ċ = θ̇_d ∂C/∂θ_d; zero on joints and normalization rows."""
        out = np.zeros(self.n_c)
        for spec, row, _ in self.coordinate_drives:
            out[row] = -profile_values(spec, t)[1]
        for spec, k in self.translation_drives:
            out[self.pos[k]] = -profile_values(spec, t)[1]
        if self.rotation_drives:
            vecs = self.markers_at(q, jac=False)[0]
            for spec, k in self.rotation_drives:
                th, th_d, _ = profile_values(spec, t)
                v = vecs[self.markers[k]].reshape(8, 3)
                # C[5, 1] = −sin θ, C[5, 2] = cos θ  →  Ċ = θ̇ (−cos θ, −sin θ)
                out[self.pos[k]] = -th_d * v[5] @ (np.cos(th) * v[1] + np.sin(th) * v[2])
        return out

    @contextlib.contextmanager
    def shared(self):
        """Within it, an evaluation at the (q, t) of the last one that took Φ_q returns
        copies of that one's Φ and Φ_q (a run's set-up takes Φ_q at the assembled state
        for the velocity projection, the initial accelerations and the model check,
        where the assembly's last iteration took it already). The model must not change
        inside."""
        self._last = ()
        try:
            yield
        finally:
            self._last = None

    def evaluate(self, q, t: float, jac: bool, profile_values):
        """Φ (n_c,) and, with ``jac``, the Φ_q values in pattern order (else None).

        ``profile_values(spec, t)`` gives a drive's (s, ṡ, s̈)."""
        last = self._last
        if last is None:  # (outside :meth:`shared`)
            return self._evaluate(q, t, jac, profile_values)
        if last and last[0] == t and np.array_equal(last[1], q):
            return last[2].copy(), (last[3].copy() if jac else None)
        phi, values = self._evaluate(q, t, jac, profile_values)
        if jac:
            self._last = (t, np.array(q, dtype=float), phi.copy(), values.copy())
        return phi, values

    def _evaluate(self, q, t: float, jac: bool, profile_values):
        phi = np.empty(self.n_c)
        values = np.zeros(self.n_values) if jac else None
        p = q[self.norm_p]
        phi[self.norm_rows] = np.einsum("bi,bi->b", p, p) - 1
        if jac:
            values[self.norm_dest] = 2 * p
            values[self.coordinate_dest] = 1.0
        for spec, row, k in self.coordinate_drives:
            phi[row] = q[k] - profile_values(spec, t)[0]
        if not self.pos.size:
            return phi, values
        coef, sym = self.coef, self.sym
        offset = np.zeros(self.pos.size)
        if self.rotation_drives:  # Φ = x_jᵀ(−sin θ_d x_i + cos θ_d y_i)
            coef, sym = coef.copy(), sym.copy()
            for spec, k in self.rotation_drives:  # (bilinear_coefficients' two entries)
                theta = profile_values(spec, t)[0]
                minus_sin, cos = -np.sin(theta), np.cos(theta)
                coef[k, _X_J_X_I], coef[k, _X_J_Y_I] = minus_sin, cos
                sym[k, 5, 1] = sym[k, 1, 5] = minus_sin
                sym[k, 5, 2] = sym[k, 2, 5] = cos
        for spec, k in self.translation_drives:
            offset[k] = profile_values(spec, t)[0]
        vecs, jacs = self.markers_at(q, jac)
        v = vecs[self.markers].reshape(-1, 8, 3)  # (n_eq, 8, 3)
        gram = v @ v.transpose(0, 2, 1)
        phi[self.pos] = (np.einsum("ek,ek->e", coef, gram.reshape(-1, 64))
                         + np.einsum("ek,ek->e", self.lin.reshape(-1, 24), v.reshape(-1, 24))
                         - offset)
        if jac:
            w = (sym @ v + self.lin).reshape(-1, 2, 12)  # W per equation and side
            for b, slots, eq, side, dest in self.blocks:
                j = jacs[b].reshape(jacs[b].shape[0], 12, -1)[slots]  # (count, 12, n)
                values[dest] = (w[eq, side][:, None, :] @ j)[:, 0, :]
        return phi, values
