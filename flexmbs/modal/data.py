"""ModalData: the flexible component as the floating frame of reference consumes it.

A ModalData holds, in SI units and the body frame (docs/modal_front_end.md):

* undeformed node coordinates ū₀ (N x 3) [m] and optional mesh cells;
* translational mode shapes Φ (3N x n, node-major) [m per unit ξ] and optional
  rotational mode shapes Ψ (3N x n) [rad per unit ξ];
* modal mass M_ff and stiffness K_ff (n x n) and modal damping (ratios or a matrix);
* the translational mass description used for the inertia invariants: a consistent
  3N x 3N sparse matrix or lumped nodal masses (N,) [kg] (or the 6N mass of 6-DOF nodes,
  optionally followed by coordinates without a position: a Nastran superelement's a-set);
* named node sets (0-based node indices), external node labels;
* the reference-frame condition (attached to a node set, or mean axes) and the modal
  bookkeeping (which coordinates are normal modes and which constraint modes);
* units of the source and provenance metadata.

Construction validates everything and raises an error naming the field and value.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from .._blas import scipy_module, solve_small
from .._sparse import is_sparse
from .._validation import (
    check_positive_definite,
)
from ..errors import ValidationError
from .data_checks import MATRIX_SYMMETRY_RTOL, _as_index_array, validated
from .deferred_mass import DeferredCSR, DeferredMassField, stored_mass
from .derivative_data import ModalDerivatives, validated_derivatives
from .invariants import InertiaInvariants, compute_invariants
from .kinds import ModeKind, ReferenceFrame
from .plausibility import MASS_MISMATCH_WARN, plausibility_warnings

__all__ = ["ATTACHED_RTOL", "MASS_MISMATCH_ERROR", "MASS_MISMATCH_WARN",
           "MATRIX_SYMMETRY_RTOL", "MEAN_AXIS_RTOL", "ModalData", "ModeKind",
           "ReferenceFrame", "plausibility_warnings"]

#: Attached frame: mode-shape rows at the attachment nodes must vanish to this fraction
#: of the largest mode-shape entry.
ATTACHED_RTOL = 1e-6
#: Mean axes: each mode's rigid-body content (fraction of its modal mass, in the metric of
#: the stored mass) must stay below this. Modes reduced here show ~1e-31; files with 6–7
#: significant digits ~1e-12; a mode orthogonalised with a richer mass than the one
#: stored (6-DOF FE mass, point masses stored) O(h²) ~ 1e-5; a leftover rigid mode ~1.
MEAN_AXIS_RTOL = 1e-3
#: M_ff is compared with Φᵀ M Φ of the stored mass; above MASS_MISMATCH_WARN
#: (plausibility.py) a warning explains it, above this it is an error.
MASS_MISMATCH_ERROR = 0.5


def _select_metadata(meta: dict, idx: np.ndarray, history: list) -> dict:
    """Metadata for a mode subset: the lists in ``metadata["per_mode"]`` (one entry per
    coordinate, by convention) are sliced to stay aligned; everything else is kept."""
    out = dict(meta)
    if "per_mode" in meta:
        out["per_mode"] = {k: [v[i] for i in idx] for k, v in meta["per_mode"].items()}
    out["history"] = history
    return out


def _offdiag_ratio(mat: np.ndarray) -> float:
    if mat.shape[0] < 2:
        return 0.0
    off = mat - np.diag(np.diag(mat))
    return float(np.max(np.abs(off)) / max(np.max(np.abs(np.diag(mat))), 1e-300))


@dataclass(frozen=True, eq=False)
class ModalData:
    """A flexible component's modal description (see module docstring for units).

    Parameters
    ----------
    nodes : array_like, shape (N, 3)
        Undeformed node coordinates ū₀ in the body frame [m].
    phi : array_like, shape (3N, n)
        Translational mode shapes, node-major rows [m per unit ξ].
    M_ff, K_ff : array_like, shape (n, n)
        Modal mass [kg m² per unit ξ²] and stiffness [N m per unit ξ²]; symmetric,
        M_ff positive definite, K_ff positive semidefinite.
    mass : sparse (3N, 3N), (6N, 6N) or (6N + n_g, 6N + n_g), or array_like (N,)
        Consistent translational FE mass or lumped nodal masses [kg], for the invariants;
        the 6-DOF mass of the nodes (with ``psi``); or that followed by ``n_g``
        generalized coordinates (with ``generalized_shapes``).
    reference_frame : ReferenceFrame or str
        ``"attached"`` (give ``attach_set``) or ``"mean-axis"``; checked on construction.
    attach_set : str, optional
        Node set the frame is attached to (required for an attached frame).
    psi : array_like, shape (3N, n), optional
        Rotational mode shapes [rad per unit ξ] when the source has rotational DOFs.
    damping_ratio : array_like, shape (n,), optional
        Modal damping ratios ζ (of the eigenmodes of K_ff, M_ff). Default: zero.
    damping_matrix : array_like, shape (n, n), optional
        Modal damping matrix D_ff [N m s per unit ξ²]; exclusive with ``damping_ratio``.
    cells : dict[str, ndarray], optional
        Mesh cells by meshio cell type, in node indices (for animation/export).
    node_sets : dict[str, array_like of int], optional
        Named node sets as 0-based node indices.
    node_ids : array_like of int, shape (N,), optional
        External node labels; default 1..N.
    mode_kinds : sequence of ModeKind, optional
        Bookkeeping per coordinate; default all ``imported``.
    constraint_fraction : array_like, shape (n,), optional
        Share of constraint-mode content of each coordinate (Craig–Bampton), 0..1.
    generalized_shapes : array_like, shape (n_g, n), optional
        The mass description's coordinates without a position (rows 6N.. of ``mass``),
        per unit ξ: the q-set of a Nastran external superelement, whose mass is given in
        boundary-grid DOFs and modal coordinates. Their rigid-body rows are zero and they
        take no part in the rotation of the deformation (:func:`compute_invariants`).
    derivatives : ModalDerivatives, optional
        Static modal derivatives of the modes with the tensors of the enriched basis
        (:func:`flexmbs.modal.derivatives.with_modal_derivatives`).
    units : str
        Unit system of the source (data here are always SI).
    metadata : dict
        Provenance: source, method, parameters, history of truncations.
    """

    nodes: np.ndarray
    phi: np.ndarray
    M_ff: np.ndarray
    K_ff: np.ndarray
    mass: Any
    reference_frame: ReferenceFrame | str = ReferenceFrame.ATTACHED
    attach_set: str | None = None
    psi: np.ndarray | None = None
    damping_ratio: np.ndarray | None = None
    damping_matrix: np.ndarray | None = None
    cells: dict[str, np.ndarray] = field(default_factory=dict)
    node_sets: dict[str, np.ndarray] = field(default_factory=dict)
    node_ids: np.ndarray | None = None
    mode_kinds: tuple[ModeKind, ...] | None = None
    constraint_fraction: np.ndarray | None = None
    modal_fields: dict[str, np.ndarray] = field(default_factory=dict)
    """Per-node modal result fields, name → (N, c, n): e.g. ``"stress"`` with the six
    stress components per unit ξ_j [Pa]; recovered as field @ ξ."""
    stiffening: dict[str, np.ndarray] = field(default_factory=dict)
    """Geometric-stiffening matrices Φᵀ K_G Φ of the unit load cases, case name → (n, n)
    symmetric: ``ww_xx`` … ``ww_yz`` [kg m² per unit ξ², per (rad/s)²], ``a_x`` …
    ``a_z`` [kg m per unit ξ², per m/s²], ``dw_x`` … ``dw_z`` [kg m² per unit ξ², per
    rad/s²] (:mod:`flexmbs.modal.stiffening`); empty when not computed."""
    generalized_shapes: np.ndarray | None = None
    derivatives: ModalDerivatives | None = None
    """Static modal derivatives of the modes and the tensors of the enriched basis
    (:mod:`flexmbs.modal.derivatives`, docs/theory_modal_derivatives.md); None when not
    computed."""
    units: str = "SI"
    metadata: dict[str, Any] = field(default_factory=dict)
    _invariants: InertiaInvariants | None = field(default=None, repr=False, compare=False)
    """Private: invariants already known for exactly these nodes, shapes and mass
    (``select`` slices them instead of recomputing); consumed on construction."""
    _checked: bool = field(default=False, repr=False, compare=False)
    """Private: the values have passed the checks of this revision
    (:data:`~flexmbs.modal.data_checks.CHECKS_REVISION`: a sealed native file's), so
    only types and shapes are checked; consumed on construction."""

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self._invariants is not None:
            self.__dict__["invariants"] = self._invariants
            set_(self, "_invariants", None)  # never carried into replace() copies
        scan = not self._checked
        set_(self, "_checked", False)  # (a replace() copy is checked again)
        for name, value in validated(self, scan).items():
            set_(self, name, value)
        set_(self, "derivatives", validated_derivatives(
            self.derivatives, self.n_nodes, self.n_modes, self.psi is not None))
        if scan:
            self._check_reference_frame()
            self._check_mass_consistency()

    def check_values(self) -> None:
        """Every check of values again, on the arrays as they are now (a ModalData's
        arrays and sets can be changed in place after it was made): ValidationError or
        ShapeError naming the field and the value. The native writer runs it before it
        stamps a file as checked (docs/modal_data_formats.md, "Checked once")."""
        validated(self)
        self._check_reference_frame()
        self._check_mass_consistency()

    @property
    def has_derivatives(self) -> bool:
        """Whether static modal derivatives are present (``nonlinear = true`` bodies)."""
        return self.derivatives is not None

    @property
    def has_stiffening(self) -> bool:
        """Whether the geometric-stiffening matrices are present."""
        return bool(self.stiffening)

    def _check_reference_frame(self) -> None:
        if self.reference_frame is ReferenceFrame.ATTACHED:
            if self.attach_set is None:
                raise ValidationError(
                    "ModalData.attach_set is required for reference_frame='attached' "
                    "(name the node set the body frame rides on)"
                )
            if self.attach_set not in self.node_sets:
                raise ValidationError(
                    f"ModalData.attach_set {self.attach_set!r} is not a node set; known: "
                    f"{sorted(self.node_sets) or 'none'}"
                )
            dofs = (3 * self.node_sets[self.attach_set][:, None] + np.arange(3)).ravel()
            for name, shapes in (("phi", self.phi), ("psi", self.psi)):
                if shapes is None or shapes.size == 0:
                    continue
                scale = np.max(np.abs(shapes))
                worst = np.max(np.abs(shapes[dofs])) if dofs.size else 0.0
                if worst > ATTACHED_RTOL * scale:
                    row, col = np.unravel_index(np.argmax(np.abs(shapes[dofs])),
                                                (dofs.size, shapes.shape[1]))
                    node = int(self.node_sets[self.attach_set][row // 3])
                    raise ValidationError(
                        f"ModalData: reference_frame='attached' to node set "
                        f"{self.attach_set!r}, but {name} of mode {col + 1} moves node "
                        f"{int(self.node_ids[node])} by {worst:.3e} ({worst / scale:.2e} of "
                        f"the largest entry); attached-frame modes must vanish there"
                    )
        else:
            content = self.invariants.rigid_content()
            if content.size and np.max(content) > MEAN_AXIS_RTOL:
                k = int(np.argmax(content))
                raise ValidationError(
                    f"ModalData: reference_frame='mean-axis' but mode {k + 1} "
                    f"({self._coord_freq()[k]:.4g} Hz) carries rigid-body content "
                    f"{content[k]:.3e} of its modal mass (limit {MEAN_AXIS_RTOL:g}); remove "
                    f"rigid-body modes or orthogonalise the modes to rigid motion"
                )

    def _check_mass_consistency(self) -> None:
        inv = self.invariants
        scale = max(float(np.max(np.abs(inv.M0))), 1e-300)
        try:
            check_positive_definite(inv.M0, "ModalData.mass", semi=True, rtol=1e-9)
        except ValidationError:
            lowest = float(np.linalg.eigvalsh(inv.M0)[0])
            raise ValidationError(
                f"ModalData.mass is not positive semidefinite: the body-frame mass B0ᵀ M B0 "
                f"of rigid motions and modes has eigenvalue {lowest:.4g} (largest entry "
                f"{scale:.4g}); a mass matrix has no negative directions"
            ) from None
        if self.n_modes == 0:
            return
        if not inv.mass > 0:
            raise ValidationError(f"ModalData.mass: the total mass is {inv.mass:g} kg; a "
                                  "flexible body needs a positive mass")
        ratio = self.modal_mass_ratio
        if self._mass_covers_rotations():
            bad = np.flatnonzero(np.abs(ratio - 1) > MASS_MISMATCH_ERROR)
            scale = np.sqrt(np.outer(np.diag(self.M_ff), np.diag(self.M_ff)))
            coupling = np.abs(inv.M_ff - self.M_ff) / scale
            if not bad.size and np.max(coupling) > MASS_MISMATCH_ERROR:
                i, j = np.unravel_index(np.argmax(coupling), coupling.shape)
                raise ValidationError(
                    f"ModalData.M_ff[{i},{j}] = {self.M_ff[i, j]:.6g} but phiᵀ·mass·phi "
                    f"gives {inv.M_ff[i, j]:.6g} ({coupling[i, j]:.3g} of sqrt(M_ii M_jj)); "
                    f"the modal mass does not belong to these shapes and this mass"
                )
        else:
            # a translational-only mass may lack the rotary inertia of some modes (ratio
            # < 1, 0 for torsion), but never exceed M_ff, and a shortfall on every mode
            # is a units or normalisation slip, not missing rotary inertia
            bad = np.flatnonzero(ratio > 1 + MASS_MISMATCH_ERROR)
            if not bad.size and np.all(ratio < 1 - MASS_MISMATCH_ERROR):
                bad = np.array([int(np.argmax(ratio))])
        if bad.size:
            j = int(bad[0])
            raise ValidationError(
                f"ModalData.M_ff[{j},{j}] = {self.M_ff[j, j]:.6g} but phiᵀ·mass·phi gives "
                f"{inv.M_ff[j, j]:.6g} for mode {j + 1} (ratio {ratio[j]:.4g}); check the "
                f"units of mass, phi and M_ff and the mode normalisation"
            )

    def _mass_covers_rotations(self) -> bool:
        """True when the mass description holds every inertia the shapes can move."""
        return self.psi is None or (not self.is_lumped
                                    and stored_mass(self).shape[0] >= 6 * self.n_nodes)

    @property
    def modal_mass_ratio(self) -> np.ndarray:
        """Per mode, (Φᵀ M Φ)_jj of the mass description ÷ M_ff[j, j] (1 when consistent).

        Below 1 when the description lacks inertia the modes move (rotary inertia of 6-DOF
        nodes given a translational-only mass; 0 for a pure torsion mode of a beam).
        """
        return np.diag(self.invariants.M_ff) / np.diag(self.M_ff)

    @property
    def mass_mismatch(self) -> float:
        """Largest per-mode |(Φᵀ M Φ)_jj / M_ff[j, j] − 1| (0 when fully consistent)."""
        if self.n_modes == 0:
            return 0.0
        return float(np.max(np.abs(self.modal_mass_ratio - 1)))

    # ------------------------------------------------------------------ sizes
    @property
    def n_nodes(self) -> int:
        """Number of nodes N."""
        return self.nodes.shape[0]

    @property
    def n_modes(self) -> int:
        """Number of modal coordinates n_m."""
        return self.phi.shape[1]

    @property
    def is_lumped(self) -> bool:
        """True when the mass description is lumped nodal masses."""
        stored = stored_mass(self)  # (a reader's deferred matrix stays deferred)
        return not (isinstance(stored, DeferredCSR) or is_sparse(stored))

    # ------------------------------------------------------------------ derived
    @cached_property
    def invariants(self) -> InertiaInvariants:
        """Inertia invariants, computed once on first use (O(nnz·n + N·n²))."""
        return compute_invariants(self.nodes, self.phi, self.mass, self.psi,
                                  self.generalized_shapes)

    @cached_property
    def nodal_peaks(self) -> tuple[float, np.ndarray]:
        """(largest extent of the undeformed nodes [m], the largest nodal translation of
        each mode [m per unit ξ_m]), computed once on first use (O(N·n)): the run checks'
        size and deflection bound (:class:`flexmbs.integrators.health.BodyRange`)."""
        if not len(self.nodes):
            return 0.0, np.zeros(self.n_modes)
        peaks = np.linalg.norm(self.phi.reshape(len(self.nodes), 3, -1), axis=1).max(axis=0)
        peaks.flags.writeable = False  # computed once, shared
        return float(np.max(np.ptp(self.nodes, axis=0))), peaks

    @cached_property
    def _eig(self) -> tuple[np.ndarray, np.ndarray]:
        """(λ ascending, M_ff-normalised eigenvectors) of K_ff x = λ M_ff x, through the
        Cholesky factor L of M_ff (positive definite: checked on construction): the
        eigenpairs (λ, y) of L⁻¹ K_ff L⁻ᵀ, and x = L⁻ᵀ y (NumPy's LAPACK alone, without
        SciPy: docs/compiled.md, "What a run imports"). λ clipped at 0."""
        low_inv = np.linalg.inv(np.linalg.cholesky(self.M_ff))
        reduced = low_inv @ self.K_ff @ low_inv.T
        lam, vec = np.linalg.eigh(0.5 * (reduced + reduced.T))
        return np.clip(lam, 0.0, None), low_inv.T @ vec

    @property
    def frequencies(self) -> np.ndarray:
        """Natural frequencies of (K_ff, M_ff) in ascending order [Hz]."""
        return np.sqrt(self._eig[0]) / (2 * np.pi)

    def _coord_freq(self) -> np.ndarray:
        """Per-coordinate frequency sqrt(K_ii/M_ii)/2π [Hz] (exact for diagonal matrices)."""
        return np.sqrt(np.clip(np.diag(self.K_ff), 0, None) / np.diag(self.M_ff)) / (2 * np.pi)

    @property
    def coordinate_frequencies(self) -> np.ndarray:
        """Frequency of each coordinate, sqrt(K_ii/M_ii)/2π [Hz], in stored order."""
        return self._coord_freq()

    @property
    def is_diagonal(self) -> bool:
        """True when M_ff and K_ff are diagonal (to 1e-9 relative)."""
        return _offdiag_ratio(self.M_ff) < 1e-9 and _offdiag_ratio(self.K_ff) < 1e-9

    @cached_property
    def D_ff(self) -> np.ndarray:
        """Modal damping matrix [N m s per unit ξ²] (zero unless damping was given).

        Ratio ζ_i belongs to coordinate i and damps the eigenmode of (K_ff, M_ff) that
        coordinate dominates (:attr:`eigenmode_coordinates`): with X the mass-normalised
        eigenvectors, D_ff = M_ff X diag(2 ζ ω) Xᵀ M_ff. For diagonal data this is
        diag(2 ζ_i ω_i m_i).
        """
        if self.damping_matrix is not None:
            d_ff = self.damping_matrix.copy()
        elif self.damping_ratio is None:
            d_ff = np.zeros((self.n_modes, self.n_modes))
        else:
            lam, vec = self._eig
            zeta = self.damping_ratio[self.eigenmode_coordinates]
            mx = self.M_ff @ vec
            d_ff = mx @ np.diag(2.0 * zeta * np.sqrt(lam)) @ mx.T
            d_ff = 0.5 * (d_ff + d_ff.T)
        d_ff.flags.writeable = False  # computed once, shared
        return d_ff

    @property
    def eigenmode_coordinates(self) -> np.ndarray:
        """For each eigenmode of (K_ff, M_ff) (ascending), the coordinate it belongs to.

        The one-to-one assignment maximising Σ |x_ij| √M_ii (kinetic share of coordinate i
        in eigenvector j): the identity mapping for diagonal matrices, and continuous under
        weak coupling, so damping ratio ζ_i always damps "mode i" whatever its rank.
        """
        _, vec = self._eig
        weight = np.abs(vec) * np.sqrt(np.diag(self.M_ff))[:, None]
        if self.is_diagonal:  # each eigenvector one coordinate's (to 1e-9): the largest
            largest = np.argmax(weight, axis=0)  # weights, if they are all different
            if np.unique(largest).size == self.n_modes:  # rows, are the assignment
                return largest.astype(np.int64)
        coords, eig = scipy_module("scipy.optimize").linear_sum_assignment(-weight)
        out = np.empty(self.n_modes, dtype=np.int64)
        out[eig] = coords
        return out

    @property
    def total_mass(self) -> float:
        """Total mass m of the body from the mass description [kg]."""
        return self.invariants.mass

    @property
    def center_of_mass(self) -> np.ndarray:
        """Centre of mass of the undeformed body in the body frame [m]."""
        m_rr = self.invariants.M0[:3, :3]
        return solve_small(m_rr, self.invariants.S0)

    @property
    def inertia_origin(self) -> np.ndarray:
        """Inertia tensor about the body-frame origin, body axes [kg m²]."""
        return self.invariants.I_tt0.copy()

    @property
    def inertia_tensor(self) -> np.ndarray:
        """Inertia tensor about the centre of mass, body axes [kg m²] (translational mass)."""
        c = self.center_of_mass
        m = self.total_mass
        return self.inertia_origin - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))

    @property
    def mass_description(self) -> str:
        """What the mass description is: point masses, a 3N matrix or a 6-DOF matrix."""
        if self.is_lumped:
            return "lumped point masses"
        if self.generalized_shapes is not None:
            return (f"generalized: 6-DOF nodal mass and {self.generalized_shapes.shape[0]} "
                    "coordinates without position (Nastran superelement a-set)")
        if self.mass.shape[0] == 6 * self.n_nodes:
            diagonal = self.mass.nnz <= self.mass.shape[0]
            return ("6-DOF nodal mass, " + ("diagonal" if diagonal else "consistent")
                    + " (with rotary inertia)")
        return "translational mass matrix"

    @property
    def damping_description(self) -> str:
        """Human-readable statement of the modal damping (always shown by the CLI)."""
        if self.damping_matrix is not None:
            return "modal damping matrix D_ff given"
        if self.damping_ratio is None or not np.any(self.damping_ratio):
            return "none (zero damping; the default)"
        vals = np.unique(self.damping_ratio)
        if vals.size == 1:
            return f"modal damping ratio {vals[0]:g} on every mode"
        return "modal damping ratios " + ", ".join(f"{v:g}" for v in self.damping_ratio)

    # ------------------------------------------------------------------ mode selection
    def select(self, indices) -> ModalData:
        """A new ModalData with the coordinates ``indices`` (0-based, in the given order).

        The invariants are recomputed for the kept modes; the damping follows the
        coordinates (ratios by coordinate; a matrix by sub-block).
        """
        idx = _as_index_array(indices, "ModalData.select: indices")
        if idx.size == 0:
            raise ValidationError("ModalData.select: indices is empty; keep at least one mode")
        bad = idx[(idx < 0) | (idx >= self.n_modes)]
        if bad.size:
            raise ValidationError(f"ModalData.select: mode index {int(bad[0])} out of range "
                                  f"0..{self.n_modes - 1}")
        if np.unique(idx).size != idx.size:
            raise ValidationError("ModalData.select: indices repeat a mode")
        history = [*self.metadata.get("history", []), f"select({idx.tolist()})"]
        ratio = None if self.damping_ratio is None else self.damping_ratio[idx]
        matrix = (None if self.damping_matrix is None
                  else self.damping_matrix[np.ix_(idx, idx)])
        return replace(
            self,
            mass=stored_mass(self),  # (the same: a reader's deferred matrix stays so)
            phi=self.phi[:, idx],
            psi=None if self.psi is None else self.psi[:, idx],
            generalized_shapes=(None if self.generalized_shapes is None
                                else self.generalized_shapes[:, idx]),
            M_ff=self.M_ff[np.ix_(idx, idx)],
            K_ff=self.K_ff[np.ix_(idx, idx)],
            damping_ratio=ratio,
            damping_matrix=matrix,
            mode_kinds=tuple(self.mode_kinds[i] for i in idx),
            constraint_fraction=self.constraint_fraction[idx],
            modal_fields={k: v[:, :, idx] for k, v in self.modal_fields.items()},
            stiffening={k: v[np.ix_(idx, idx)] for k, v in self.stiffening.items()},
            derivatives=(None if self.derivatives is None
                         else self.derivatives.select(idx, self.n_modes)),
            metadata=_select_metadata(self.metadata, idx, history),
            _invariants=self.invariants.select(idx),
        )

    def truncate(self, n: int) -> ModalData:
        """Keep the ``n`` lowest-frequency coordinates (by √(K_ii/M_ii)), in stored order."""
        if (isinstance(n, bool) or not isinstance(n, (int, np.integer))
                or not 1 <= n <= self.n_modes):
            raise ValidationError(f"ModalData.truncate: n = {n!r} must be an integer in "
                                  f"1..{self.n_modes}")
        order = np.argsort(self._coord_freq(), kind="stable")
        return self.select(np.sort(order[: int(n)]))

    def cutoff(self, f_max: float) -> ModalData:
        """Keep the coordinates whose frequency sqrt(K_ii/M_ii)/2π ≤ ``f_max`` [Hz]."""
        try:
            f_max = float(f_max)
        except (TypeError, ValueError):
            raise ValidationError(f"ModalData.cutoff: f_max = {f_max!r} is not a frequency "
                                  "in Hz") from None
        keep = np.flatnonzero(self._coord_freq() <= f_max)
        if keep.size == 0:
            raise ValidationError(
                f"ModalData.cutoff: no mode at or below f_max = {f_max:g} Hz (lowest is "
                f"{np.min(self._coord_freq()):.4g} Hz)"
            )
        return self.select(keep)

    def with_damping(self, ratio=None, matrix=None, rayleigh: tuple[float, float] | None = None,
                     ) -> ModalData:
        """A copy with new damping: ratios ζ, a matrix D_ff, or Rayleigh (α, β): αM + βK."""
        given = sum(x is not None for x in (ratio, matrix, rayleigh))
        if given != 1:
            raise ValidationError("with_damping: give exactly one of ratio, matrix, rayleigh")
        if rayleigh is not None:
            if np.size(rayleigh) != 2:
                raise ValidationError(f"with_damping: rayleigh must be (alpha, beta), got "
                                      f"{rayleigh!r}")
            alpha, beta = (float(v) for v in rayleigh)
            matrix = alpha * self.M_ff + beta * self.K_ff
        return replace(self, damping_ratio=ratio, damping_matrix=matrix,
                       mass=stored_mass(self),  # (a reader's deferred matrix stays so)
                       _invariants=self.invariants)  # (the same nodes, shapes and mass)

    # ------------------------------------------------------------------ reports
    def summary(self) -> dict[str, Any]:
        """Key figures as a JSON-ready dict (used by ``flexmbs modes --json``)."""
        inv = self.invariants
        return {
            "n_nodes": self.n_nodes,
            "n_modes": self.n_modes,
            "units_source": self.units,
            "reference_frame": self.reference_frame.value,
            "attach_set": self.attach_set,
            "rotational_shapes": self.psi is not None,
            "mass_description": self.mass_description,
            "isotropic_mass": bool(inv.isotropic),
            "frequencies_hz": self.frequencies.tolist(),
            "coordinate_frequencies_hz": self._coord_freq().tolist(),
            "modal_mass": np.diag(self.M_ff).tolist(),
            "modal_stiffness": np.diag(self.K_ff).tolist(),
            "diagonal": self.is_diagonal,
            "mode_kinds": [k.value for k in self.mode_kinds],
            "constraint_fraction": self.constraint_fraction.tolist(),
            "rigid_content": inv.rigid_content().tolist(),
            "mass_mismatch": self.mass_mismatch,
            "damping": self.damping_description,
            "stiffening": sorted(self.stiffening),
            "modal_derivatives": (0 if self.derivatives is None
                                  else self.derivatives.n_derivatives),
            "damping_ratio": (None if self.damping_ratio is None
                              else self.damping_ratio.tolist()),
            "total_mass_kg": self.total_mass,
            "center_of_mass_m": self.center_of_mass.tolist(),
            "inertia_cm_kgm2": self.inertia_tensor.tolist(),
            "node_sets": {k: int(v.size) for k, v in self.node_sets.items()},
            "metadata": self.metadata,
        }


#: A reader's CSR mass arrays become SciPy's matrix at the first read of ``mass``
#: (flexmbs.modal.deferred_mass); set after the dataclass is made, so ``mass`` stays a
#: required field.
ModalData.mass = DeferredMassField("mass")
