"""The iteration matrix's LU factors as the step kernel takes them (docs/compiled.md,
"Factorisation: dense or sparse"): LAPACK getrf's, stored transposed, or SuperLU's
packed into two arrays."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..compiled.codes import TASK_FACTOR


class Factors(NamedTuple):
    """LU factors of one iteration matrix, as the step kernel takes them: dense
    (``lu``, ``piv`` from getrf, ``lu`` stored transposed; ``sp_i`` empty) or sparse
    (``sp_i``, ``sp_x`` of :func:`pack_sparse_factors`; ``lu``, ``piv``
    placeholders)."""

    lu: np.ndarray
    piv: np.ndarray
    sp_i: np.ndarray
    sp_x: np.ndarray
    info: int  # getrf's info (> 0: exactly singular), 0 for sparse factors
    #: made by the step kernel's own LU (a batch's, :func:`kernel_factors`) rather than
    #: by LAPACK or SuperLU: a restart factors the stored matrix the same way
    by_kernel: bool = False

    @property
    def sparse(self) -> bool:
        return self.sp_i.size > 0


def kernel_factors(compiled, lu=None, piv=None) -> Factors:
    """The iteration matrix in the workspace of ``compiled`` (a CompiledSystem with a
    dense matrix) factored by the step kernel's own LU
    (:func:`~flexmbs.engine.linear_solves.lu_factor_into`), as a batch of steps
    factors it: the same factors to the last bit; into ``lu``, ``piv`` when given
    (buffers of the matrix's order), else into new arrays."""
    n = compiled.work.matrix.shape[0]
    if lu is None:
        lu, piv = np.empty((n, n)), np.empty(n, dtype=np.int64)
    compiled._call(TASK_FACTOR, lu=lu, piv=piv)
    return compiled.placeholder_factors()._replace(lu=lu, piv=piv, by_kernel=True)


def pack_sparse_factors(lu) -> tuple[np.ndarray, np.ndarray]:
    """(sp_i, sp_x) of a ``scipy.sparse.linalg.splu`` factorisation for
    :func:`flexmbs.engine.linear_solves.sparse_lu_solve`."""
    low, up = lu.L.tocsc(), lu.U.tocsc()
    n = low.shape[0]
    sp_i = np.concatenate([[n, low.nnz, up.nnz], low.indptr, low.indices, up.indptr,
                           up.indices, lu.perm_r, lu.perm_c]).astype(np.int64)
    return sp_i, np.concatenate([low.data, up.data])


def restored_factors(compiled, matrix, factored: str) -> Factors:
    """Factors of a restart point's iteration ``matrix``, made as the interrupted run
    made them: by the step kernel's LU where ``factored`` is "kernel" (a batch's, dense),
    else by :meth:`~flexmbs.engine.compiled_system.CompiledSystem.factor` (LAPACK or
    SuperLU). The workspace's matrix becomes ``matrix``."""
    if matrix is not compiled.work.matrix:
        compiled.work.matrix[...] = matrix
    if factored == "kernel" and not compiled.sparse:
        return kernel_factors(compiled)
    return compiled.factor(compiled.work.matrix)


def matrix_pattern(tables):
    """(rows, cols, indptr, indices) of the iteration matrix's possible nonzeros in CSC
    order: the n_q x n_q block's pattern and Φ_q's below it and, transposed, beside it
    (:func:`flexmbs.engine.tables.iteration_pattern`)."""
    n = tables.n_q
    rows = np.concatenate([tables.p_row, n + tables.j_row, tables.j_col])
    cols = np.concatenate([tables.p_col, tables.j_col, n + tables.j_row])
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    size = n + tables.n_c
    indptr = np.zeros(size + 1, np.int64)
    np.add.at(indptr, cols + 1, 1)
    indices = rows.copy()
    rows.flags.writeable = cols.flags.writeable = False  # (restart points share them)
    return rows, cols, np.cumsum(indptr), indices
