"""Small input validators whose messages name the field and the offending value.

Each takes ``name=`` so that an error reads, for example,
``ModalData.phi has shape (3012, 12); expected (3015, 12)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import ShapeError, ValidationError


def as_float_array(value, name: str) -> np.ndarray:
    """Convert ``value`` to a float64 array or raise naming ``name``."""
    if np.iscomplexobj(value):
        raise ValidationError(f"{name} is complex; real values are expected (a complex mode "
                              "shape from a damped eigen solution cannot be used as is)")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{name} cannot be converted to a float array: {exc}") from exc
    return arr


def check_shape(arr: np.ndarray, shape: Sequence[int | None], name: str) -> None:
    """Raise :class:`ShapeError` unless ``arr.shape`` matches ``shape`` (None = any)."""
    expected = tuple(shape)
    if arr.ndim != len(expected) or any(
        e is not None and e != a for e, a in zip(expected, arr.shape, strict=False)
    ):
        shown = tuple("any" if e is None else e for e in expected)
        raise ShapeError(f"{name} has shape {arr.shape}; expected {shown}")


def check_finite(arr, name: str) -> None:
    """Raise :class:`ValidationError` if ``arr`` holds NaN or Inf, naming the first one."""
    data = arr.data if hasattr(arr, "tocoo") else np.asarray(arr)
    bad = ~np.isfinite(data)
    if np.any(bad):
        if hasattr(arr, "tocoo"):
            coo = arr.tocoo()
            k = int(np.flatnonzero(~np.isfinite(coo.data))[0])
            where = (int(coo.row[k]), int(coo.col[k]))
            value = coo.data[k]
        else:
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            value = data[where]
        raise ValidationError(
            f"{name} must be finite; entry {where} is {value} ({int(bad.sum())} non-finite in all)"
        )


def check_symmetric(mat, name: str, rtol: float = 1e-8) -> None:
    """Raise unless ``mat`` is symmetric to ``rtol`` relative to its largest entry."""
    if hasattr(mat, "tocoo"):
        mirrored = _mirrored_values(mat)
        if mirrored is not None:  # the same pattern as its transpose: compare the values
            values, mirror = mirrored
            worst = float(np.max(np.abs(values - mirror))) if values.size else 0.0
            scale = float(np.max(np.abs(values))) if values.size else 0.0
            if worst <= rtol * max(scale, np.finfo(float).tiny):
                return
        diff = abs(mat - mat.T)
        worst = diff.max() if diff.nnz else 0.0
        scale = abs(mat).max() if mat.nnz else 0.0
        if worst > rtol * max(scale, np.finfo(float).tiny):
            coo = diff.tocoo()
            k = int(np.argmax(coo.data))
            raise ValidationError(
                f"{name} is not symmetric: |A - A^T| = {worst:.3e} at "
                f"({int(coo.row[k])}, {int(coo.col[k])}), largest entry {scale:.3e}, "
                f"relative tolerance {rtol:g}"
            )
        return
    mat = np.asarray(mat)
    diff = np.abs(mat - mat.T)
    scale = np.max(np.abs(mat)) if mat.size else 0.0
    worst = np.max(diff) if mat.size else 0.0
    if worst > rtol * max(scale, np.finfo(float).tiny):
        i, j = np.unravel_index(np.argmax(diff), diff.shape)
        raise ValidationError(
            f"{name} is not symmetric: {name}[{i},{j}] = {mat[i, j]:.6g} but "
            f"{name}[{j},{i}] = {mat[j, i]:.6g} (relative tolerance {rtol:g})"
        )


def _mirrored_values(mat):
    """(A's stored values, Aᵀ's at the same places) of the sparse matrix ``mat`` when
    its canonical CSR pattern equals its transpose's, else None. Cheaper than forming
    A − Aᵀ: one transposition of the pattern and an elementwise difference."""
    a = mat.tocsr()
    if a.shape[0] != a.shape[1] or not a.has_canonical_format:
        return None
    t = a.T.tocsr()  # (the pattern transposed: sorted, without duplicates)
    if not (np.array_equal(a.indptr, t.indptr) and np.array_equal(a.indices, t.indices)):
        return None
    return a.data, t.data


def check_positive_definite(mat: np.ndarray, name: str, semi: bool = False,
                            rtol: float = 1e-10) -> None:
    """Raise unless the symmetric ``mat`` is positive (semi)definite.

    The smallest eigenvalue is compared with ``-rtol * max|eig|`` (semidefinite) or must
    exceed ``rtol * max|eig|`` (definite).
    """
    mat = np.asarray(mat)
    if mat.size == 0:
        return
    eig = np.linalg.eigvalsh(0.5 * (mat + mat.T))
    scale = max(np.max(np.abs(eig)), np.finfo(float).tiny)
    lowest = eig[0]
    if semi and lowest < -rtol * scale:
        raise ValidationError(
            f"{name} is not positive semidefinite: smallest eigenvalue {lowest:.6g} "
            f"(largest {eig[-1]:.6g})"
        )
    if not semi and lowest <= rtol * scale:
        raise ValidationError(
            f"{name} is not positive definite: smallest eigenvalue {lowest:.6g} "
            f"(largest {eig[-1]:.6g})"
        )


def check_semidefinite_looking(mat, name: str, dof=None) -> None:
    """Necessary conditions of a positive semidefinite matrix ``mat`` (sparse or dense),
    cheap at any size: no negative diagonal entry, and every 2×2 principal minor
    non-negative (|A_ij| ≤ √(A_ii A_jj), to 1e-9 relative, without squares so that entries
    up to the float range stay finite). ValidationError naming ``name``, the entry and
    its rows as ``dof(k)`` gives them (default "DOF k")."""
    import scipy.sparse as sp

    dof = dof or (lambda k: f"DOF {k}")
    coo = mat.tocoo(copy=False) if sp.issparse(mat) else sp.coo_matrix(mat)
    diag = np.asarray(mat.diagonal(), dtype=float)
    if np.any(diag < 0):
        k = int(np.argmin(diag))
        raise ValidationError(f"{name} has a negative diagonal entry {diag[k]:.6g} at "
                              f"{dof(k)} (row {k})")
    root = np.sqrt(diag)
    bound = root[coo.row] * root[coo.col]
    scale = float(np.max(diag)) if diag.size else 0.0
    excess = np.abs(coo.data) - bound * (1 + 5e-10) - 1e-12 * scale
    if np.any(excess > 0):
        k = int(np.argmax(excess))
        i, j = int(coo.row[k]), int(coo.col[k])
        raise ValidationError(
            f"{name} is not positive semidefinite: the entry at ({dof(i)}, {dof(j)}) = "
            f"{coo.data[k]:.6g} exceeds the square root of its diagonal entries' product, "
            f"{bound[k]:.6g} (a diagonal entry missing or wrong?)")

