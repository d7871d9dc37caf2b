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

import warnings
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cached_property
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .._validation import (
    as_float_array,
    check_finite,
    check_positive_definite,
    check_shape,
    check_symmetric,
)
from ..errors import ShapeError, UnitsWarning, ValidationError
from .invariants import InertiaInvariants, compute_invariants
from .units import get_units

#: Relative symmetry tolerance for M_ff, K_ff and damping (imported files carry ~7 digits).
MATRIX_SYMMETRY_RTOL = 1e-6
#: Attached frame: mode-shape rows at the attachment nodes must vanish to this fraction
#: of the largest mode-shape entry.
ATTACHED_RTOL = 1e-6
#: Mean axes: each mode's rigid-body content (fraction of its modal mass, in the metric of
#: the stored mass) must stay below this. Modes reduced here show ~1e-31; files with 6–7
#: significant digits ~1e-12; a mode orthogonalised with a richer mass than the one
#: stored (6-DOF FE mass, point masses stored) O(h²) ~ 1e-5; a leftover rigid mode ~1.
MEAN_AXIS_RTOL = 1e-3
#: M_ff is compared with Φᵀ M Φ of the stored mass; above this relative mismatch a
#: warning explains it, above MASS_MISMATCH_ERROR it is an error (units/normalisation).
MASS_MISMATCH_WARN = 0.02
MASS_MISMATCH_ERROR = 0.5


class ReferenceFrame(str, Enum):
    """How the body frame is tied to the deforming body (docs/modal_front_end.md)."""

    ATTACHED = "attached"
    """Frame rides on a node set (tangent frame): all modes vanish there."""
    MEAN_AXIS = "mean-axis"
    """Free–free modes, M-orthogonal to rigid motion (linearised Buckens/Tisserand)."""


class ModeKind(str, Enum):
    """Origin of a modal coordinate (bookkeeping, reported by ``flexmbs modes``)."""

    NORMAL = "normal"
    """An eigenmode: free–free, clamped, or Craig–Bampton fixed-interface normal mode."""
    CONSTRAINT = "constraint"
    """A Craig–Bampton coordinate dominated by static constraint-mode content."""
    IMPORTED = "imported"
    """Read from a file that does not say."""
    STATIC = "static"
    """A static-correction mode: the static deflection under a unit load at chosen nodes,
    mass-orthogonal to the other modes (:func:`flexmbs.modal.stress.static_correction`)."""


def _as_index_array(values, name: str) -> np.ndarray:
    """Integer array of node indices/labels; non-integral floats, bools, strings are errors."""
    try:
        arr = np.asarray(values).ravel()
    except ValueError:
        raise ValidationError(f"{name} is ragged; expected a flat list of integers") from None
    if arr.size and (arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer)):
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            return arr.astype(np.int64)
        raise ValidationError(f"{name} must hold integers; got {arr[:5].tolist()} "
                              f"(dtype {arr.dtype})")
    return arr.astype(np.int64)


def _mode_kinds(values) -> tuple[ModeKind, ...]:
    kinds = []
    for j, value in enumerate(values):
        try:
            kinds.append(ModeKind(value))
        except ValueError:
            raise ValidationError(
                f"ModalData.mode_kinds[{j}] = {value!r} is not one of "
                f"{[k.value for k in ModeKind]}"
            ) from None
    return tuple(kinds)


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
    units: str = "SI"
    metadata: dict[str, Any] = field(default_factory=dict)
    _invariants: InertiaInvariants | None = field(default=None, repr=False, compare=False)
    """Private: invariants already known for exactly these nodes, shapes and mass
    (``select`` slices them instead of recomputing); consumed on construction."""

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self._invariants is not None:
            self.__dict__["invariants"] = self._invariants
            set_(self, "_invariants", None)  # never carried into replace() copies
        nodes = as_float_array(self.nodes, "ModalData.nodes")
        check_shape(nodes, (None, 3), "ModalData.nodes")
        check_finite(nodes, "ModalData.nodes")
        n_nodes = nodes.shape[0]
        if n_nodes == 0:
            raise ShapeError("ModalData.nodes is empty; a flexible body needs nodes")
        phi = as_float_array(self.phi, "ModalData.phi")
        if phi.ndim == 1:
            phi = phi[:, None]
        if phi.ndim != 2 or phi.shape[0] != 3 * n_nodes:
            raise ShapeError(
                f"ModalData.phi has shape {phi.shape}; expected ({3 * n_nodes}, n_modes) "
                f"for {n_nodes} nodes"
            )
        check_finite(phi, "ModalData.phi")
        n = phi.shape[1]
        mats = {}
        for name in ("M_ff", "K_ff"):
            mat = np.atleast_2d(as_float_array(getattr(self, name), f"ModalData.{name}"))
            if mat.shape != (n, n):
                raise ShapeError(
                    f"ModalData.{name} has shape {mat.shape}, but phi has {n} mode(s): "
                    f"expected ({n}, {n}) (mode count mismatch)"
                )
            check_finite(mat, f"ModalData.{name}")
            check_symmetric(mat, f"ModalData.{name}", rtol=MATRIX_SYMMETRY_RTOL)
            mats[name] = 0.5 * (mat + mat.T)
        check_positive_definite(mats["M_ff"], "ModalData.M_ff")
        check_positive_definite(mats["K_ff"], "ModalData.K_ff", semi=True, rtol=1e-9)
        psi = None
        if self.psi is not None:
            psi = as_float_array(self.psi, "ModalData.psi")
            if psi.ndim == 1:
                psi = psi[:, None]
            if psi.shape != phi.shape:
                raise ShapeError(f"ModalData.psi has shape {psi.shape}; expected {phi.shape} "
                                 "(same as phi)")
            check_finite(psi, "ModalData.psi")
        gen = None
        if self.generalized_shapes is not None:
            gen = np.atleast_2d(as_float_array(self.generalized_shapes,
                                               "ModalData.generalized_shapes"))
            if gen.ndim != 2 or gen.shape[1] != n:
                raise ShapeError(f"ModalData.generalized_shapes has shape {gen.shape}; "
                                 f"expected (n_coordinates, {n})")
            check_finite(gen, "ModalData.generalized_shapes")
            if psi is None:
                raise ValidationError("ModalData.generalized_shapes needs psi and the 6-DOF "
                                      "mass of the nodes before the coordinates")
        mass = self._validated_mass(self.mass, n_nodes, psi is not None,
                                    0 if gen is None else gen.shape[0])
        ratio = matrix = None
        if self.damping_ratio is not None and self.damping_matrix is not None:
            raise ValidationError("ModalData: give damping_ratio or damping_matrix, not both")
        if self.damping_ratio is not None:
            ratio = np.atleast_1d(as_float_array(self.damping_ratio, "ModalData.damping_ratio"))
            if ratio.size == 1 and n != 1:
                ratio = np.full(n, float(ratio[0]))
            check_shape(ratio, (n,), "ModalData.damping_ratio")
            check_finite(ratio, "ModalData.damping_ratio")
            if np.any(ratio < 0):
                k = int(np.argmin(ratio))
                raise ValidationError(
                    f"ModalData.damping_ratio[{k}] = {ratio[k]:g} is negative"
                )
        if self.damping_matrix is not None:
            matrix = np.atleast_2d(as_float_array(self.damping_matrix,
                                                  "ModalData.damping_matrix"))
            check_shape(matrix, (n, n), "ModalData.damping_matrix")
            check_finite(matrix, "ModalData.damping_matrix")
            check_symmetric(matrix, "ModalData.damping_matrix", rtol=MATRIX_SYMMETRY_RTOL)
            check_positive_definite(matrix, "ModalData.damping_matrix", semi=True, rtol=1e-9)
        ids = (np.arange(1, n_nodes + 1, dtype=np.int64) if self.node_ids is None
               else _as_index_array(self.node_ids, "ModalData.node_ids"))
        check_shape(ids, (n_nodes,), "ModalData.node_ids")
        if np.unique(ids).size != n_nodes:
            raise ValidationError("ModalData.node_ids has duplicate labels")
        sets = {}
        if not isinstance(self.cells, dict):
            raise ValidationError(f"ModalData.cells must be a dict cell type -> connectivity, "
                                  f"got {type(self.cells).__name__}")
        if not isinstance(self.node_sets, dict):
            raise ValidationError(f"ModalData.node_sets must be a dict name -> node indices, "
                                  f"got {type(self.node_sets).__name__}")
        for key, members in self.node_sets.items():
            idx = _as_index_array(members, f"ModalData.node_sets[{key!r}]")
            bad = idx[(idx < 0) | (idx >= n_nodes)]
            if bad.size:
                raise ValidationError(
                    f"ModalData.node_sets[{key!r}] names node index {int(bad[0])}, but the "
                    f"body has nodes 0..{n_nodes - 1}"
                )
            sets[str(key)] = idx
        cells = {}
        for ctype, conn in self.cells.items():
            try:
                conn = _as_index_array(conn, f"ModalData.cells[{ctype!r}]").reshape(
                    np.shape(conn))
            except ValueError as exc:  # ragged lists
                raise ValidationError(f"ModalData.cells[{ctype!r}] is not a rectangular "
                                      f"connectivity array: {exc}") from None
            if conn.size and (conn.min() < 0 or conn.max() >= n_nodes):
                raise ValidationError(
                    f"ModalData.cells[{ctype!r}] refers to node index "
                    f"{int(conn.max() if conn.max() >= n_nodes else conn.min())}; "
                    f"the body has nodes 0..{n_nodes - 1}"
                )
            cells[str(ctype)] = conn
        try:
            frame = ReferenceFrame(self.reference_frame)
        except ValueError:
            raise ValidationError(
                f"ModalData.reference_frame {self.reference_frame!r} is not one of "
                f"{[f.value for f in ReferenceFrame]}"
            ) from None
        kinds = (tuple(ModeKind.IMPORTED for _ in range(n)) if self.mode_kinds is None
                 else _mode_kinds(self.mode_kinds))
        if len(kinds) != n:
            raise ShapeError(f"ModalData.mode_kinds has {len(kinds)} entries; expected {n}")
        frac = (np.zeros(n) if self.constraint_fraction is None
                else as_float_array(self.constraint_fraction,
                                    "ModalData.constraint_fraction").ravel())
        check_shape(frac, (n,), "ModalData.constraint_fraction")
        check_finite(frac, "ModalData.constraint_fraction")
        if np.any((frac < 0) | (frac > 1)):
            k = int(np.flatnonzero((frac < 0) | (frac > 1))[0])
            raise ValidationError(f"ModalData.constraint_fraction[{k}] = {frac[k]:g} is "
                                  f"outside 0..1")
        if not isinstance(self.metadata, dict):
            raise ValidationError(f"ModalData.metadata must be a dict, got "
                                  f"{type(self.metadata).__name__}")
        set_(self, "units", get_units(self.units).name)  # names unknown systems; None = SI
        per_mode = self.metadata.get("per_mode", {})
        if not isinstance(per_mode, dict):
            raise ValidationError("ModalData.metadata['per_mode'] must be a dict of lists "
                                  "with one entry per mode")
        for key, values in per_mode.items():
            if not isinstance(values, (list, tuple)) or len(values) != n:
                raise ValidationError(
                    f"ModalData.metadata['per_mode'][{key!r}] must be a list of {n} entries "
                    f"(one per mode); got {values!r:.60}"
                )
        for name, value in (("nodes", nodes), ("phi", phi), ("M_ff", mats["M_ff"]),
                            ("K_ff", mats["K_ff"]), ("psi", psi), ("mass", mass),
                            ("damping_ratio", ratio), ("damping_matrix", matrix),
                            ("node_ids", ids), ("node_sets", sets), ("cells", cells),
                            ("reference_frame", frame), ("mode_kinds", kinds),
                            ("constraint_fraction", frac), ("metadata", dict(self.metadata)),
                            ("generalized_shapes", gen),
                            ("modal_fields", self._validated_fields(n_nodes, n)),
                            ("stiffening", self._validated_stiffening(n))):
            set_(self, name, value)
        self._check_reference_frame()
        self._check_mass_consistency()

    def _validated_fields(self, n_nodes: int, n: int) -> dict[str, np.ndarray]:
        if not isinstance(self.modal_fields, dict):
            raise ValidationError("ModalData.modal_fields must be a dict name -> (N, c, n) "
                                  "array")
        out = {}
        for key, value in self.modal_fields.items():
            arr = as_float_array(value, f"ModalData.modal_fields[{key!r}]")
            if arr.ndim != 3 or arr.shape[0] != n_nodes or arr.shape[2] != n:
                raise ShapeError(f"ModalData.modal_fields[{key!r}] has shape {arr.shape}; "
                                 f"expected ({n_nodes}, components, {n})")
            check_finite(arr, f"ModalData.modal_fields[{key!r}]")
            out[str(key)] = arr
        return out

    def _validated_stiffening(self, n: int) -> dict[str, np.ndarray]:
        from .stiffening import STIFFENING_CASES

        if not isinstance(self.stiffening, dict):
            raise ValidationError("ModalData.stiffening must be a dict case -> (n, n) array")
        out = {}
        for key, value in self.stiffening.items():
            if key not in STIFFENING_CASES:
                raise ValidationError(f"ModalData.stiffening: unknown load case {key!r}; the "
                                      f"cases are {list(STIFFENING_CASES)}")
            arr = as_float_array(value, f"ModalData.stiffening[{key!r}]")
            check_shape(arr, (n, n), f"ModalData.stiffening[{key!r}]")
            check_finite(arr, f"ModalData.stiffening[{key!r}]")
            check_symmetric(arr, f"ModalData.stiffening[{key!r}]")
            out[key] = arr
        if out and len(out) != len(STIFFENING_CASES):
            missing = [c for c in STIFFENING_CASES if c not in out]
            raise ValidationError(f"ModalData.stiffening lacks the load case(s) {missing}: "
                                  f"give all {len(STIFFENING_CASES)} or none")
        return out

    @property
    def has_stiffening(self) -> bool:
        """Whether the geometric-stiffening matrices are present."""
        return bool(self.stiffening)

    def with_stress(self, fe) -> ModalData:
        """A copy with the stress modes of ``fe`` (the FE model these modes were reduced
        from) as modal fields (:func:`flexmbs.modal.stress.with_stress`, docs/stress.md)."""
        from .stress import with_stress

        return with_stress(self, fe)

    def with_static_correction(self, fe, nodes, components: str = "123") -> ModalData:
        """A copy with static-correction modes for unit loads at ``nodes``
        (:func:`flexmbs.modal.stress.static_correction`)."""
        from .stress import static_correction

        return static_correction(self, fe, nodes, components)

    def with_stiffening(self, fe) -> ModalData:
        """A copy with the geometric-stiffening matrices of the unit load cases computed
        from ``fe``, the FE model these modes were reduced from
        (:func:`flexmbs.modal.stiffening.stiffening_matrices`)."""
        from .stiffening import stiffening_matrices

        history = [*self.metadata.get("history", []), "with_stiffening()"]
        return replace(self, stiffening=stiffening_matrices(fe, self),
                       metadata={**self.metadata, "history": history},
                       _invariants=self.invariants)

    @staticmethod
    def _validated_mass(mass, n_nodes: int, has_psi: bool, n_gen: int = 0):
        if mass is None:
            raise ValidationError("ModalData.mass is required: a consistent 3N x 3N "
                                  "translational mass matrix, the 6N x 6N mass of 6-DOF "
                                  "nodes, or lumped nodal masses (N,)")
        if sp.issparse(mass) or (np.ndim(mass) == 2):
            mat = sp.csr_matrix(mass, dtype=float)
            if n_gen and mat.shape != (6 * n_nodes + n_gen,) * 2:
                raise ShapeError(
                    f"ModalData.mass has shape {mat.shape}; with {n_gen} generalized "
                    f"coordinates it must be ({6 * n_nodes + n_gen}, {6 * n_nodes + n_gen}) "
                    f"(6 DOFs per node of {n_nodes} nodes, then the coordinates)")
            if not n_gen and mat.shape == (6 * n_nodes, 6 * n_nodes) and not has_psi:
                raise ValidationError(
                    f"ModalData.mass is {mat.shape[0]} x {mat.shape[1]} (6 DOFs per node) but "
                    f"psi (rotational mode shapes) is missing; give psi or the 3N x 3N "
                    f"translational mass"
                )
            if not n_gen and mat.shape not in ((3 * n_nodes, 3 * n_nodes),
                                               (6 * n_nodes, 6 * n_nodes)):
                raise ShapeError(
                    f"ModalData.mass has shape {mat.shape}; expected "
                    f"({3 * n_nodes}, {3 * n_nodes}) (translational DOFs of {n_nodes} nodes), "
                    f"({6 * n_nodes}, {6 * n_nodes}) (6 DOFs per node, with psi) "
                    f"or ({n_nodes},) lumped masses"
                )
            check_finite(mat, "ModalData.mass")
            check_symmetric(mat, "ModalData.mass", rtol=1e-8)
            diag = mat.diagonal()
            if np.any(diag < 0):
                k = int(np.argmin(diag))
                per = mat.shape[0] // n_nodes
                raise ValidationError(
                    f"ModalData.mass has a negative diagonal entry {diag[k]:.6g} at DOF {k} "
                    f"(node index {k // per})"
                )
            # necessary for positive semidefiniteness: every 2x2 principal minor ≥ 0
            coo = mat.tocoo()
            excess = coo.data**2 - diag[coo.row] * diag[coo.col] * (1 + 1e-9)
            if np.any(excess > 0):
                k = int(np.argmax(excess))
                raise ValidationError(
                    f"ModalData.mass is not positive semidefinite: entry ({coo.row[k]}, "
                    f"{coo.col[k]}) = {coo.data[k]:.6g} exceeds sqrt(M_ii M_jj) = "
                    f"{np.sqrt(diag[coo.row[k]] * diag[coo.col[k]]):.6g}"
                )
            return mat
        arr = np.atleast_1d(as_float_array(mass, "ModalData.mass"))
        if arr.shape != (n_nodes,):
            raise ShapeError(f"ModalData.mass has shape {arr.shape}; expected ({n_nodes},) "
                             f"lumped masses or a ({3 * n_nodes}, {3 * n_nodes}) matrix")
        check_finite(arr, "ModalData.mass")
        if np.any(arr < 0):
            k = int(np.argmin(arr))
            raise ValidationError(f"ModalData.mass (lumped) of node index {k} is negative: "
                                  f"{arr[k]:g} kg")
        return arr

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
                                    and self.mass.shape[0] >= 6 * self.n_nodes)

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
        return not sp.issparse(self.mass)

    # ------------------------------------------------------------------ derived
    @cached_property
    def invariants(self) -> InertiaInvariants:
        """Inertia invariants, computed once on first use (O(nnz·n + N·n²))."""
        return compute_invariants(self.nodes, self.phi, self.mass, self.psi,
                                  self.generalized_shapes)

    @cached_property
    def _eig(self) -> tuple[np.ndarray, np.ndarray]:
        lam, vec = sla.eigh(self.K_ff, self.M_ff)
        return np.clip(lam, 0.0, None), vec

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
        from scipy.optimize import linear_sum_assignment

        _, vec = self._eig
        weight = np.abs(vec) * np.sqrt(np.diag(self.M_ff))[:, None]
        coords, eig = linear_sum_assignment(-weight)
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
        return np.linalg.solve(m_rr, self.invariants.S0)

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
        return replace(self, damping_ratio=ratio, damping_matrix=matrix)

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
            "damping_ratio": (None if self.damping_ratio is None
                              else self.damping_ratio.tolist()),
            "total_mass_kg": self.total_mass,
            "center_of_mass_m": self.center_of_mass.tolist(),
            "inertia_cm_kgm2": self.inertia_tensor.tolist(),
            "node_sets": {k: int(v.size) for k, v in self.node_sets.items()},
            "metadata": self.metadata,
        }


def _units_that_fit(density: float, declared: str) -> str:
    """The registered unit systems in which the file's numbers would give a plausible mass
    per cube of the body's size, as a hint (e.g. an inch model read as SI)."""
    from .units import UNIT_SYSTEMS

    now = get_units(declared)
    raw = density / now.mass * now.length**3  # the file's own numbers
    fits = sorted({s.name for s in UNIT_SYSTEMS.values()
                   if s.name != now.name and 1e-3 <= raw * s.mass / s.length**3 <= 1e5})
    return (f"; the numbers fit {', '.join(fits)} (--units / units=)" if fits else "")


def plausibility_warnings(data: ModalData) -> list[str]:
    """Check magnitudes for unit mistakes; return (and issue) :class:`UnitsWarning` texts.

    Looks at the total mass, the body's size and the frequency range (SI expected).
    """
    found = []
    m = data.total_mass
    size = float(np.max(np.ptp(data.nodes, axis=0))) if data.n_nodes > 1 else 0.0
    freqs = data.frequencies
    hint = f" (declared source units: {data.units})"
    if not 1e-6 <= m <= 1e7:
        found.append(f"total mass {m:.4g} kg is outside 1e-6..1e7 kg; were the units "
                     f"declared correctly?{hint}")
    if data.n_nodes > 1 and not 1e-4 <= size <= 1e4:
        found.append(f"body size {size:.4g} m is outside 1e-4..1e4 m; were the length "
                     f"units declared correctly?{hint}")
    if data.n_nodes > 1 and size > 0:
        # mass per cube of the body's largest extent: steel parts are 1e-1..1e4 kg/m³
        # even when slender; lengths in mm read as m give ~1e-9 of that
        density = m / size**3
        if not 1e-3 <= density <= 1e5:
            found.append(f"mass per cube of the body's size is {density:.3g} kg/m³ (total "
                         f"mass {m:.4g} kg, size {size:.4g} m); lengths or masses look like "
                         f"they are in other units than declared{hint}"
                         + _units_that_fit(density, data.units))
    positive = freqs[freqs > 0]
    if positive.size and (positive.max() > 1e6 or positive.min() < 1e-4):
        found.append(f"frequency range {positive.min():.4g}..{positive.max():.4g} Hz looks "
                     f"implausible for a structure; check units and mode normalisation{hint}")
    ratio = data.modal_mass_ratio if data.n_modes else np.ones(0)
    off = np.flatnonzero(np.abs(ratio - 1) > MASS_MISMATCH_WARN)
    if off.size:
        shown = ", ".join(f"mode {j + 1}: {ratio[j]:.3g}" for j in off[:5])
        found.append(f"phiᵀ·mass·phi differs from M_ff by more than "
                     f"{100 * MASS_MISMATCH_WARN:g} % ({shown}{', ...' if off.size > 5 else ''}"
                     f"); the mass description lacks inertia the modes move (e.g. rotary "
                     f"inertia of 6-DOF nodes given point masses) or the data are "
                     f"inconsistent")
    for text in found:
        warnings.warn(text, UnitsWarning, stacklevel=2)
    return found
