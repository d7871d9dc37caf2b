"""Validation of a ModalData's fields on construction (docs/modal_front_end.md).

Every check names the field and the value it got; :func:`validated` returns the fields
normalised (float or index arrays, CSR mass, enums). The checks that need the inertia
invariants (the reference-frame condition, the mass consistency) are ModalData's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._blas import scipy_module
from .._sparse import is_sparse
from .._validation import (
    as_float_array,
    check_finite,
    check_positive_definite,
    check_semidefinite_looking,
    check_shape,
    check_symmetric,
)
from ..errors import ShapeError, ValidationError
from .deferred_mass import DeferredCSR, stored_mass
from .kinds import STIFFENING_CASES, ModeKind, ReferenceFrame
from .units import get_units

#: Relative symmetry tolerance for M_ff, K_ff and damping (imported files carry ~7 digits).
MATRIX_SYMMETRY_RTOL = 1e-6

#: The revision of the checks of values a ModalData runs on construction (finite,
#: symmetric, definite, indices in range, the mass against the modes). A native file
#: stamps the revision that checked its data when written, and a sealed file of this
#: revision is not checked again when read (docs/modal_data_formats.md, "Checked once").
#: Raise it whenever a check of values is added or tightened: files of older revisions
#: are then checked again.
CHECKS_REVISION = 1


def _unchecked(*args, **kwargs) -> None:
    """In place of a check of values, for data a check of this revision has passed."""


class _ValueChecks(NamedTuple):
    finite: Callable
    symmetric: Callable
    definite: Callable
    semidefinite: Callable


#: The checks of values, and their stand-ins for data already checked.
_RUN = _ValueChecks(check_finite, check_symmetric, check_positive_definite,
                    check_semidefinite_looking)
_SKIP = _ValueChecks(_unchecked, _unchecked, _unchecked, _unchecked)


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


def validated(data, scan: bool = True) -> dict[str, Any]:
    """The fields of ``data`` (a :class:`~flexmbs.modal.data.ModalData` under
    construction) checked and normalised: arrays as float/int ndarrays, mass as CSR
    or lumped, enums, sets and cells as index arrays; raises ShapeError or
    ValidationError naming the field and the value. The checks that need the
    invariants (reference frame, mass consistency) stay with ModalData. ``scan=False``:
    the types and shapes only, for values that checks of :data:`CHECKS_REVISION` have
    passed (a sealed native file's)."""
    checks = _RUN if scan else _SKIP
    nodes = as_float_array(data.nodes, "ModalData.nodes")
    check_shape(nodes, (None, 3), "ModalData.nodes")
    checks.finite(nodes, "ModalData.nodes")
    n_nodes = nodes.shape[0]
    if n_nodes == 0:
        raise ShapeError("ModalData.nodes is empty; a flexible body needs nodes")
    phi = as_float_array(data.phi, "ModalData.phi")
    if phi.ndim == 1:
        phi = phi[:, None]
    if phi.ndim != 2 or phi.shape[0] != 3 * n_nodes:
        raise ShapeError(
            f"ModalData.phi has shape {phi.shape}; expected ({3 * n_nodes}, n_modes) "
            f"for {n_nodes} nodes"
        )
    checks.finite(phi, "ModalData.phi")
    n = phi.shape[1]
    mats = {}
    for name in ("M_ff", "K_ff"):
        mat = np.atleast_2d(as_float_array(getattr(data, name), f"ModalData.{name}"))
        if mat.shape != (n, n):
            raise ShapeError(
                f"ModalData.{name} has shape {mat.shape}, but phi has {n} mode(s): "
                f"expected ({n}, {n}) (mode count mismatch)"
            )
        checks.finite(mat, f"ModalData.{name}")
        checks.symmetric(mat, f"ModalData.{name}", rtol=MATRIX_SYMMETRY_RTOL)
        mats[name] = 0.5 * (mat + mat.T)
    checks.definite(mats["M_ff"], "ModalData.M_ff")
    checks.definite(mats["K_ff"], "ModalData.K_ff", semi=True, rtol=1e-9)
    psi = None
    if data.psi is not None:
        psi = as_float_array(data.psi, "ModalData.psi")
        if psi.ndim == 1:
            psi = psi[:, None]
        if psi.shape != phi.shape:
            raise ShapeError(f"ModalData.psi has shape {psi.shape}; expected {phi.shape} "
                             "(same as phi)")
        checks.finite(psi, "ModalData.psi")
    gen = None
    if data.generalized_shapes is not None:
        gen = np.atleast_2d(as_float_array(data.generalized_shapes,
                                           "ModalData.generalized_shapes"))
        if gen.ndim != 2 or gen.shape[1] != n:
            raise ShapeError(f"ModalData.generalized_shapes has shape {gen.shape}; "
                             f"expected (n_coordinates, {n})")
        checks.finite(gen, "ModalData.generalized_shapes")
        if psi is None:
            raise ValidationError("ModalData.generalized_shapes needs psi and the 6-DOF "
                                  "mass of the nodes before the coordinates")
    mass = validated_mass(stored_mass(data), n_nodes, psi is not None,
                          0 if gen is None else gen.shape[0], scan)
    ratio = matrix = None
    if data.damping_ratio is not None and data.damping_matrix is not None:
        raise ValidationError("ModalData: give damping_ratio or damping_matrix, not both")
    if data.damping_ratio is not None:
        ratio = np.atleast_1d(as_float_array(data.damping_ratio, "ModalData.damping_ratio"))
        if ratio.size == 1 and n != 1:
            ratio = np.full(n, float(ratio[0]))
        check_shape(ratio, (n,), "ModalData.damping_ratio")
        checks.finite(ratio, "ModalData.damping_ratio")
        if scan and np.any(ratio < 0):
            k = int(np.argmin(ratio))
            raise ValidationError(
                f"ModalData.damping_ratio[{k}] = {ratio[k]:g} is negative"
            )
    if data.damping_matrix is not None:
        matrix = np.atleast_2d(as_float_array(data.damping_matrix,
                                              "ModalData.damping_matrix"))
        check_shape(matrix, (n, n), "ModalData.damping_matrix")
        checks.finite(matrix, "ModalData.damping_matrix")
        checks.symmetric(matrix, "ModalData.damping_matrix", rtol=MATRIX_SYMMETRY_RTOL)
        checks.definite(matrix, "ModalData.damping_matrix", semi=True, rtol=1e-9)
    ids = (np.arange(1, n_nodes + 1, dtype=np.int64) if data.node_ids is None
           else _as_index_array(data.node_ids, "ModalData.node_ids"))
    check_shape(ids, (n_nodes,), "ModalData.node_ids")
    if scan and np.unique(ids).size != n_nodes:
        raise ValidationError("ModalData.node_ids has duplicate labels")
    sets = {}
    if not isinstance(data.cells, dict):
        raise ValidationError(f"ModalData.cells must be a dict cell type -> connectivity, "
                              f"got {type(data.cells).__name__}")
    if not isinstance(data.node_sets, dict):
        raise ValidationError(f"ModalData.node_sets must be a dict name -> node indices, "
                              f"got {type(data.node_sets).__name__}")
    for key, members in data.node_sets.items():
        idx = _as_index_array(members, f"ModalData.node_sets[{key!r}]")
        outside = idx[(idx < 0) | (idx >= n_nodes)] if scan else ()
        if len(outside):
            raise ValidationError(
                f"ModalData.node_sets[{key!r}] names node index {int(outside[0])}, but "
                f"the body has nodes 0..{n_nodes - 1}"
            )
        sets[str(key)] = idx
    cells = {}
    for ctype, conn in data.cells.items():
        try:
            conn = _as_index_array(conn, f"ModalData.cells[{ctype!r}]").reshape(
                np.shape(conn))
        except ValueError as exc:  # ragged lists
            raise ValidationError(f"ModalData.cells[{ctype!r}] is not a rectangular "
                                  f"connectivity array: {exc}") from None
        if scan and conn.size and (conn.min() < 0 or conn.max() >= n_nodes):
            raise ValidationError(
                f"ModalData.cells[{ctype!r}] refers to node index "
                f"{int(conn.max() if conn.max() >= n_nodes else conn.min())}; "
                f"the body has nodes 0..{n_nodes - 1}"
            )
        cells[str(ctype)] = conn
    try:
        frame = ReferenceFrame(data.reference_frame)
    except ValueError:
        raise ValidationError(
            f"ModalData.reference_frame {data.reference_frame!r} is not one of "
            f"{[f.value for f in ReferenceFrame]}"
        ) from None
    kinds = (tuple(ModeKind.IMPORTED for _ in range(n)) if data.mode_kinds is None
             else _mode_kinds(data.mode_kinds))
    if len(kinds) != n:
        raise ShapeError(f"ModalData.mode_kinds has {len(kinds)} entries; expected {n}")
    frac = (np.zeros(n) if data.constraint_fraction is None
            else as_float_array(data.constraint_fraction,
                                "ModalData.constraint_fraction").ravel())
    check_shape(frac, (n,), "ModalData.constraint_fraction")
    checks.finite(frac, "ModalData.constraint_fraction")
    if scan and np.any((frac < 0) | (frac > 1)):
        k = int(np.flatnonzero((frac < 0) | (frac > 1))[0])
        raise ValidationError(f"ModalData.constraint_fraction[{k}] = {frac[k]:g} is "
                              f"outside 0..1")
    if not isinstance(data.metadata, dict):
        raise ValidationError(f"ModalData.metadata must be a dict, got "
                              f"{type(data.metadata).__name__}")
    units = get_units(data.units).name  # names unknown systems; None = SI
    per_mode = data.metadata.get("per_mode", {})
    if not isinstance(per_mode, dict):
        raise ValidationError("ModalData.metadata['per_mode'] must be a dict of lists "
                              "with one entry per mode")
    for key, values in per_mode.items():
        if not isinstance(values, (list, tuple)) or len(values) != n:
            raise ValidationError(
                f"ModalData.metadata['per_mode'][{key!r}] must be a list of {n} entries "
                f"(one per mode); got {values!r:.60}"
            )
    return dict((("nodes", nodes), ("phi", phi), ("M_ff", mats["M_ff"]),
                        ("K_ff", mats["K_ff"]), ("psi", psi), ("mass", mass),
                        ("damping_ratio", ratio), ("damping_matrix", matrix),
                        ("node_ids", ids), ("node_sets", sets), ("cells", cells),
                        ("reference_frame", frame), ("mode_kinds", kinds),
                        ("constraint_fraction", frac), ("metadata", dict(data.metadata)),
                        ("generalized_shapes", gen),
                        ("modal_fields",
                         validated_modal_fields(data.modal_fields, n_nodes, n, scan)),
                        ("stiffening", validated_stiffening(data.stiffening, n, scan)),
                        ("units", units)))


def validated_modal_fields(fields, n_nodes: int, n: int,
                           scan: bool = True) -> dict[str, np.ndarray]:
    """ModalData.modal_fields checked: name → (N, components, n) float arrays
    (``scan``: as :func:`validated`'s)."""
    checks = _RUN if scan else _SKIP
    if not isinstance(fields, dict):
        raise ValidationError("ModalData.modal_fields must be a dict name -> (N, c, n) "
                              "array")
    out = {}
    for key, value in fields.items():
        arr = as_float_array(value, f"ModalData.modal_fields[{key!r}]")
        if arr.ndim != 3 or arr.shape[0] != n_nodes or arr.shape[2] != n:
            raise ShapeError(f"ModalData.modal_fields[{key!r}] has shape {arr.shape}; "
                             f"expected ({n_nodes}, components, {n})")
        checks.finite(arr, f"ModalData.modal_fields[{key!r}]")
        out[str(key)] = arr
    return out


def validated_stiffening(stiffening, n: int, scan: bool = True) -> dict[str, np.ndarray]:
    """ModalData.stiffening checked: all twelve unit load cases or none, (n, n) symmetric
    (``scan``: as :func:`validated`'s)."""
    checks = _RUN if scan else _SKIP

    if not isinstance(stiffening, dict):
        raise ValidationError("ModalData.stiffening must be a dict case -> (n, n) array")
    out = {}
    for key, value in stiffening.items():
        if key not in STIFFENING_CASES:
            raise ValidationError(f"ModalData.stiffening: unknown load case {key!r}; the "
                                  f"cases are {list(STIFFENING_CASES)}")
        arr = as_float_array(value, f"ModalData.stiffening[{key!r}]")
        check_shape(arr, (n, n), f"ModalData.stiffening[{key!r}]")
        checks.finite(arr, f"ModalData.stiffening[{key!r}]")
        checks.symmetric(arr, f"ModalData.stiffening[{key!r}]")
        out[key] = arr
    if out and len(out) != len(STIFFENING_CASES):
        missing = [c for c in STIFFENING_CASES if c not in out]
        raise ValidationError(f"ModalData.stiffening lacks the load case(s) {missing}: "
                              f"give all {len(STIFFENING_CASES)} or none")
    return out


def validated_mass(mass, n_nodes: int, has_psi: bool, n_gen: int = 0, scan: bool = True):
    """ModalData.mass checked: a symmetric, positive-semidefinite-looking sparse matrix of
    3N, 6N or 6N + n_gen rows, or N lumped masses [kg] (``scan``: as :func:`validated`'s).
    A reader's :class:`~flexmbs.modal.deferred_mass.DeferredCSR` whose values were
    checked when written stays one (its shape checked; SciPy's matrix made when first
    read), any other becomes the matrix and is checked as any matrix."""
    checks = _RUN if scan else _SKIP
    if mass is None:
        raise ValidationError("ModalData.mass is required: a consistent 3N x 3N "
                              "translational mass matrix, the 6N x 6N mass of 6-DOF "
                              "nodes, or lumped nodal masses (N,)")
    if isinstance(mass, DeferredCSR):
        if mass.checked:
            _check_matrix_shape(mass.shape, n_nodes, has_psi, n_gen)
            return mass
        mass = mass.matrix()
    if is_sparse(mass) or (np.ndim(mass) == 2):
        mat = scipy_module("scipy.sparse").csr_matrix(mass, dtype=float)
        _check_matrix_shape(mat.shape, n_nodes, has_psi, n_gen)
        checks.finite(mat, "ModalData.mass")
        checks.symmetric(mat, "ModalData.mass", rtol=1e-8)
        per = mat.shape[0] // n_nodes
        checks.semidefinite(mat, "ModalData.mass",
                                   lambda k: f"DOF {k} (node index {k // per})")
        return mat
    arr = np.atleast_1d(as_float_array(mass, "ModalData.mass"))
    if arr.shape != (n_nodes,):
        raise ShapeError(f"ModalData.mass has shape {arr.shape}; expected ({n_nodes},) "
                         f"lumped masses or a ({3 * n_nodes}, {3 * n_nodes}) matrix")
    checks.finite(arr, "ModalData.mass")
    if scan and np.any(arr < 0):
        k = int(np.argmin(arr))
        raise ValidationError(f"ModalData.mass (lumped) of node index {k} is negative: "
                              f"{arr[k]:g} kg")
    return arr


def _check_matrix_shape(shape: tuple, n_nodes: int, has_psi: bool, n_gen: int) -> None:
    """ShapeError or ValidationError unless a mass matrix of ``shape`` fits ``n_nodes``
    nodes (3N or, with psi, 6N rows; 6N + n_gen with generalized coordinates)."""
    if n_gen and shape != (6 * n_nodes + n_gen,) * 2:
        raise ShapeError(
            f"ModalData.mass has shape {shape}; with {n_gen} generalized "
            f"coordinates it must be ({6 * n_nodes + n_gen}, {6 * n_nodes + n_gen}) "
            f"(6 DOFs per node of {n_nodes} nodes, then the coordinates)")
    if not n_gen and shape == (6 * n_nodes, 6 * n_nodes) and not has_psi:
        raise ValidationError(
            f"ModalData.mass is {shape[0]} x {shape[1]} (6 DOFs per node) but "
            f"psi (rotational mode shapes) is missing; give psi or the 3N x 3N "
            f"translational mass"
        )
    if not n_gen and shape not in ((3 * n_nodes, 3 * n_nodes), (6 * n_nodes, 6 * n_nodes)):
        raise ShapeError(
            f"ModalData.mass has shape {shape}; expected "
            f"({3 * n_nodes}, {3 * n_nodes}) (translational DOFs of {n_nodes} nodes), "
            f"({6 * n_nodes}, {6 * n_nodes}) (6 DOFs per node, with psi) "
            f"or ({n_nodes},) lumped masses"
        )
