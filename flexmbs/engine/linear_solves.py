"""Dense and sparse LU solves inside the kernels (docs/compiled.md, "The linear solves").

The iteration matrix's own factorization in a batch of steps or a real-time step
(:func:`lu_factor_into`), the solves with LAPACK getrf's factors stored transposed
(:func:`lu_solve`) and with SuperLU's (:func:`sparse_lu_solve`): the Newton iteration's
(:mod:`flexmbs.engine.newton`) and the backward sweep's
(:mod:`flexmbs.engine.adjoint_sweep`).
"""

from __future__ import annotations

from ..compiled._jit import njit


@njit(cache=True, error_model="numpy")  # a zero pivot gives inf, not an exception
def lu_factor_into(matrix, lu_t, piv):
    """lu_t, piv ← the LU factors of ``matrix`` with partial pivoting: LAPACK getrf's
    factors stored transposed (lu_t[j, i] = LU[i, j], so each column of L and U is a
    contiguous row: what :func:`lu_solve` takes) and its pivots. The step's own
    factorization in a batch or a real-time step, inside the kernel (O(n³), no return
    to Python). A zero pivot leaves a zero on the diagonal, whose solve is non-finite
    (the step then fails and says so)."""
    n = matrix.shape[0]
    for i in range(n):
        for j in range(n):
            lu_t[j, i] = matrix[i, j]
    for k in range(n):
        col = lu_t[k]  # column k of the matrix being reduced
        p, big = k, abs(col[k])
        for i in range(k + 1, n):
            if abs(col[i]) > big:
                p, big = i, abs(col[i])
        piv[k] = p
        if p != k:  # rows k and p: entries k and p of every column
            for j in range(n):
                lu_t[j, k], lu_t[j, p] = lu_t[j, p], lu_t[j, k]
        pivot = col[k]
        if pivot == 0.0:
            continue
        for i in range(k + 1, n):
            col[i] = col[i] / pivot
        for j in range(k + 1, n):  # A[i, j] −= L[i, k] A[k, j], column by column
            f = lu_t[j, k]
            if f != 0.0:
                other = lu_t[j]
                for i in range(k + 1, n):
                    other[i] -= col[i] * f


@njit(cache=True, error_model="numpy")  # a zero pivot gives inf, not an exception
def lu_solve(lu_t, piv, b):
    """b ← x with P L U x = b, from getrf's factors stored transposed (``lu_t``, as
    :func:`lu_factor_into` and :meth:`~flexmbs.engine.compiled_system.CompiledSystem.
    factor` give them; ``piv`` 0-based: row i was interchanged with row piv[i]); O(n²),
    in place. Both triangles are swept column by column, each column a contiguous row
    of ``lu_t``: independent multiply–adds that vectorize (twice as fast at order 42
    as dot products along the rows), two columns a pass (a quarter faster again at
    orders 11–42: the loops' set-up is paid half as often)."""
    n = b.size
    for i in range(n):
        p = piv[i]
        if p != i:
            b[i], b[p] = b[p], b[i]
    j = 0
    while j + 1 < n:  # L y = P b, L unit lower: columns j and j + 1
        c0, c1 = lu_t[j], lu_t[j + 1]
        y0 = b[j]
        y1 = b[j + 1] - c0[j + 1] * y0
        b[j + 1] = y1
        for i in range(j + 2, n):
            b[i] -= c0[i] * y0 + c1[i] * y1
        j += 2
    j = n - 1
    while j >= 1:  # U x = y: columns j and j − 1
        c1, c0 = lu_t[j], lu_t[j - 1]
        x1 = b[j] / c1[j]
        x0 = (b[j - 1] - c1[j - 1] * x1) / c0[j - 1]
        b[j], b[j - 1] = x1, x0
        for i in range(j - 1):
            b[i] -= c1[i] * x1 + c0[i] * x0
        j -= 2
    if j == 0:  # (an odd order: the first row alone)
        b[0] = b[0] / lu_t[0, 0]


@njit(cache=True, error_model="numpy")
def sparse_lu_solve(sp_i, sp_x, b, tmp):
    """b ← x with Pr A Pc = L U (SuperLU factors, L unit lower, U upper, both CSC;
    Pr b puts b[i] at row perm_r[i], x[i] = y[perm_c[i]]), packed by
    :func:`flexmbs.engine.compiled_system.pack_sparse_factors`: ``sp_i`` = (n, nnz L, nnz U,
    L indptr, L indices, U indptr, U indices, perm_r, perm_c), ``sp_x`` = (L data,
    U data). O(nnz), in place; ``tmp`` (≥ n) is scratch."""
    n, n_l, n_u = sp_i[0], sp_i[1], sp_i[2]
    o = 3
    l_ptr, o = sp_i[o:o + n + 1], o + n + 1
    l_ind, o = sp_i[o:o + n_l], o + n_l
    u_ptr, o = sp_i[o:o + n + 1], o + n + 1
    u_ind, o = sp_i[o:o + n_u], o + n_u
    perm_r, perm_c = sp_i[o:o + n], sp_i[o + n:o + 2 * n]
    l_val, u_val = sp_x[:n_l], sp_x[n_l:n_l + n_u]
    for i in range(n):
        tmp[perm_r[i]] = b[i]
    for j in range(n):  # L w = Pr b, column by column
        wj = tmp[j]
        if wj != 0.0:
            for k in range(l_ptr[j], l_ptr[j + 1]):
                if l_ind[k] > j:
                    tmp[l_ind[k]] -= l_val[k] * wj
    for j in range(n - 1, -1, -1):  # U y = w
        diag = 0.0
        for k in range(u_ptr[j], u_ptr[j + 1]):
            if u_ind[k] == j:
                diag = u_val[k]
        yj = tmp[j] / diag
        tmp[j] = yj
        if yj != 0.0:
            for k in range(u_ptr[j], u_ptr[j + 1]):
                if u_ind[k] < j:
                    tmp[u_ind[k]] -= u_val[k] * yj
    for i in range(n):
        b[i] = tmp[perm_c[i]]
