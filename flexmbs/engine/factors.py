"""The iteration matrix's LU factors as the step kernel takes them (docs/compiled.md,
"Factorisation: dense or sparse"): LAPACK getrf's, stored transposed, or SuperLU's
packed into two arrays."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


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

    @property
    def sparse(self) -> bool:
        return self.sp_i.size > 0


def pack_sparse_factors(lu) -> tuple[np.ndarray, np.ndarray]:
    """(sp_i, sp_x) of a ``scipy.sparse.linalg.splu`` factorisation for
    :func:`flexmbs.engine.linear_solves.sparse_lu_solve`."""
    low, up = lu.L.tocsc(), lu.U.tocsc()
    n = low.shape[0]
    sp_i = np.concatenate([[n, low.nnz, up.nnz], low.indptr, low.indices, up.indptr,
                           up.indices, lu.perm_r, lu.perm_c]).astype(np.int64)
    return sp_i, np.concatenate([low.data, up.data])
