"""flexmbs._validation.check_symmetric on sparse matrices: its shortcut for a pattern
equal to its transpose's gives the same verdict as the definition, max |A − Aᵀ| against
rtol times max |A|, whatever the pattern (asymmetric, explicit zeros, duplicates)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs._validation import check_semidefinite_looking, check_symmetric
from flexmbs.errors import ValidationError

RTOL = 1e-8


def _is_symmetric(dense: np.ndarray) -> bool:
    worst = np.max(np.abs(dense - dense.T)) if dense.size else 0.0
    scale = np.max(np.abs(dense)) if dense.size else 0.0
    return worst <= RTOL * max(scale, np.finfo(float).tiny)


@st.composite
def sparse_matrices(draw):
    n = draw(st.integers(1, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.4)
    dense = dense + dense.T
    how = draw(st.sampled_from(["exact", "tiny", "small", "one-sided", "zero-stored"]))
    i, j = rng.integers(n, size=2)
    if how == "tiny":  # an asymmetry below the tolerance
        dense[i, j] += 1e-3 * RTOL * max(np.max(np.abs(dense)), 1.0)
    elif how == "small":  # one above it
        dense[i, j] += 1e3 * RTOL * max(np.max(np.abs(dense)), 1.0)
    elif how == "one-sided":  # an entry whose mirror is not stored
        dense[i, j] = 0.0 if i == j else 1.5
    rows, cols = np.nonzero(dense)
    values = dense[rows, cols]
    if how == "zero-stored" and dense[i, j] == 0.0:  # a stored zero, its mirror absent
        rows, cols, values = np.append(rows, i), np.append(cols, j), np.append(values, 0.0)
    mat = sp.csr_matrix((values, (rows, cols)), shape=(n, n))
    if draw(st.booleans()) and mat.nnz:  # duplicates: a stored entry split in two
        coo = mat.tocoo()
        half = coo.data / 2
        mat = sp.csr_matrix((np.concatenate([half, half]),
                             (np.tile(coo.row, 2), np.tile(coo.col, 2))), shape=(n, n))
        mat.has_canonical_format = False
    return mat


@settings(max_examples=300, deadline=None)
@given(sparse_matrices())
def test_the_sparse_symmetry_check_agrees_with_its_definition(mat):
    expected = _is_symmetric(mat.toarray())
    if expected:
        check_symmetric(mat, "A", rtol=RTOL)
    else:
        with pytest.raises(ValidationError, match="A is not symmetric"):
            check_symmetric(mat, "A", rtol=RTOL)


def test_the_semidefinite_check_reads_a_csr_matrix_as_its_coordinates():
    good = sp.csr_matrix(np.array([[2.0, 1.0], [1.0, 2.0]]))
    check_semidefinite_looking(good, "M")
    bad = sp.csr_matrix(np.array([[1.0, 3.0], [3.0, 1.0]]))
    with pytest.raises(ValidationError, match=r"M is not positive semidefinite.*DOF 0"):
        check_semidefinite_looking(bad, "M")
