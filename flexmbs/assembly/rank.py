"""rank(Φ_q) and the redundant constraint rows, dense or for large sparse Φ_q
(docs/multibody.md, "System", `check`).

The reference is the column-pivoted QR of Φ_qᵀ (:func:`dense_rank`): the rows picked
while the pivot |R_kk| exceeds ``tol`` are independent, the others redundant. A dense QR
costs O(n_c² n_q): 1.3 s single-threaded for the 1536 × 2816 Φ_q of a chain of 256
flexible beams, and several times that when OpenBLAS threads it on a loaded machine.
:func:`sparse_rank` gives the same answer for large sparse Φ_q by first proving full
row rank, the common case, without a dense factorization:

1. **Connected blocks.** Rows that share no coordinate, directly or through other rows,
   form independent blocks; Φ_q has full row rank when each block has.
2. **Small blocks** (a closed loop of a few bodies, a body with its own constraints)
   take the dense pivoted QR of their rows and columns: full rank when every pivot
   exceeds ``tol`` (taken from the whole Φ_q, as before) by a margin of 1e3.
3. **Large blocks** (a chain of bodies is one block) are checked from a sparse LU
   (SuperLU) of G = Φ_q Φ_qᵀ restricted to the block: a few steps of inverse iteration
   give σ_min(Φ_q)² = λ_min(G). Every |R_kk| of a triangular factor is at least σ_min,
   so σ_min > tol means the QR keeps every row. The check accepts only a σ_min far
   from both ``tol`` and round-off (:data:`SIGMA_MIN_RELATIVE`).
4. **Otherwise** (a block is, or may be, rank-deficient) the dense pivoted QR of the
   whole Φ_q decides, as before: which of several dependent rows count as redundant
   can hang on round-off (the rotation rows of a planar loop modelled in 3D tie), and
   only the QR of the same matrix names the same rows. Over-constrained models pay
   the dense QR as before; the integrators refuse them anyway.
"""

from __future__ import annotations

import numpy as np

from .._blas import scipy_linalg, scipy_module

#: From this many rows a block of Φ_q is first checked for full rank from its sparse LU
#: (below, the dense pivoted QR decides at once).
SPARSE_BLOCK_FROM = 200
#: The sparse check accepts full row rank only when its estimate of σ_min exceeds this
#: fraction of ‖Φ_q‖: λ_min(G) then exceeds 1e-12 ‖G‖, far above the estimate's
#: round-off (ε ‖G‖); and σ_min must exceed 1e3 times the QR's tolerance. Otherwise the
#: dense QR decides.
SIGMA_MIN_RELATIVE = 1e-6
#: Inverse-iteration steps of the sparse check.
INVERSE_STEPS = 4
#: Up to this many rows :func:`dense_rank` first proves full row rank from NumPy's
#: singular values (microseconds there; a rank-deficient Φ_q of 1536 rows would pay
#: the SVD, 1.15 s, on top of the QR it needs anyway).
SVD_PROOF_UP_TO = 100


def rank_tolerance(shape, largest_pivot: float) -> float:
    """The pivot below which a row of Φ_q counts as dependent (``largest_pivot``: the
    largest row norm of Φ_q, the QR's first |R_00|)."""
    return max(shape) * np.finfo(float).eps * max(largest_pivot, 1.0) * 1e3


def dense_rank(jac: np.ndarray, tol: float | None = None) -> tuple[int, list[int]]:
    """rank and the redundant rows (sorted indices) of dense ``jac`` by column-pivoted
    QR of its transpose; ``tol`` defaults to :func:`rank_tolerance` of ``jac``.

    Full row rank, the common case, is first proved from NumPy's singular values: every
    |R_kk| of the triangular factor is at least σ_min (an eigenvalue of a triangular
    matrix is one of its diagonal entries), so σ_min above twice ``tol`` means the QR
    keeps every row; the QR itself (SciPy's: NumPy's has no pivoting) runs only
    otherwise (docs/compiled.md, "What a run imports")."""
    if jac.shape[1] == 0:  # rows without coordinates: nothing independent
        return 0, list(range(jac.shape[0]))
    n_c, n_q = jac.shape
    if 0 < n_c <= min(n_q, SVD_PROOF_UP_TO) and np.isfinite(jac).all():  # (else the QR
        # decides: it names what is wrong, and a large Φ_q pays its QR once, not twice)
        tol_full = (rank_tolerance(jac.shape, float(np.max(np.linalg.norm(jac, axis=1))))
                    if tol is None else tol)
        if np.linalg.svd(jac, compute_uv=False)[-1] > 2.0 * tol_full:
            return n_c, []
    _, r_mat, piv = scipy_linalg().qr(jac.T, pivoting=True, mode="economic")
    diag = np.abs(np.diag(r_mat))
    if tol is None:
        tol = rank_tolerance(jac.shape, diag[0])
    rank = int(np.sum(diag > tol))
    return rank, sorted(int(i) for i in piv[rank:])


def sparse_rank(jac) -> tuple[int, list[int]]:
    """rank and the redundant rows (sorted indices) of sparse ``jac``: the same as
    :func:`dense_rank` of ``jac.toarray()`` (module doc)."""
    sp = scipy_module("scipy.sparse")
    connected_components = scipy_module("scipy.sparse.csgraph").connected_components

    jac = sp.csr_matrix(jac, dtype=float, copy=True)
    jac.eliminate_zeros()
    n_c = jac.shape[0]
    if n_c == 0:
        return 0, []
    norms = np.sqrt(np.asarray(jac.multiply(jac).sum(axis=1)).ravel())
    tol = rank_tolerance(jac.shape, float(norms.max()))
    pattern = jac.copy()
    pattern.data[:] = 1.0
    n_blocks, labels = connected_components(pattern @ pattern.T, directed=False)
    order = np.argsort(labels, kind="stable")  # each block's rows in their order
    bounds = np.searchsorted(labels[order], np.arange(n_blocks + 1))
    for k in range(n_blocks):
        rows = order[bounds[k]:bounds[k + 1]]
        block = jac[rows]
        block = block[:, np.unique(block.indices)]
        if not (_full_row_rank(block, tol) if len(rows) >= SPARSE_BLOCK_FROM
                else _small_full_row_rank(block, tol)):
            return dense_rank(jac.toarray())
    return n_c, []


def _small_full_row_rank(block, tol: float) -> bool:
    """Whether the small ``block`` has full row rank, every pivot of its QR 1e3 times
    above ``tol``."""
    n_rows, n_cols = block.shape
    if n_rows > n_cols:
        return False
    r_mat = scipy_linalg().qr(block.toarray().T, pivoting=True, mode="r")[0]
    return bool(np.min(np.abs(np.diag(r_mat))) > 1e3 * tol)


def _full_row_rank(block, tol: float) -> bool:
    """Whether ``block`` (sparse, rows ≤ columns) certainly has full row rank with
    σ_min > ``tol``, from inverse iteration on G = block blockᵀ (module doc); False when
    in doubt."""
    spla = scipy_module("scipy.sparse.linalg")
    n_rows, n_cols = block.shape
    if n_rows > n_cols:
        return False
    gram = (block @ block.T).tocsc()
    bound = float(abs(gram).sum(axis=0).max())  # ‖G‖₁ ≥ λ_max(G) = ‖Φ_q‖²
    try:
        lu = spla.splu(gram, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True})
    except RuntimeError:  # exactly singular
        return False
    x = np.random.default_rng(0).standard_normal(n_rows)
    with np.errstate(all="ignore"):
        for _ in range(INVERSE_STEPS):
            x = lu.solve(x / np.linalg.norm(x))
        if not np.all(np.isfinite(x)):
            return False
        # the Rayleigh quotient is ≥ λ_min; a λ_min near tol² (1e-18 of ‖G‖) would
        # dominate it from the first step on, and below (1e-6 ‖Φ_q‖)² the QR decides
        lam = float(x @ (gram @ x)) / float(x @ x)
    return bool(np.isfinite(lam) and lam > (SIGMA_MIN_RELATIVE**2) * bound
                and lam > (1e3 * tol) ** 2)
