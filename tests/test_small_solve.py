"""flexmbs._blas.solve_small: np.linalg.solve's answer and its error on singular
systems, by SciPy's LU (the NumPy 1.26 wheels' OpenBLAS wakes its threads for every
lone solve)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs._blas import solve_small


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 12), columns=st.integers(0, 5), seed=st.integers(0, 2**31))
def test_the_solution_is_numpys(n, columns, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)) + n * np.eye(n)  # away from singular
    b = rng.standard_normal(n) if columns == 0 else rng.standard_normal((n, columns))
    x = solve_small(a, b)
    assert x.shape == b.shape
    reference = np.linalg.solve(a, b)
    np.testing.assert_allclose(x, reference, rtol=0,
                               atol=1e-12 * max(1.0, np.abs(reference).max()))
    np.testing.assert_allclose(a @ x, b, rtol=0, atol=1e-12 * n * max(1.0, np.abs(b).max()))


def test_an_exactly_singular_system_raises_as_numpy_does():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.solve(a, np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        solve_small(a, np.ones(3))
    with pytest.raises(np.linalg.LinAlgError):
        solve_small(np.zeros((2, 2)), np.ones((2, 1)))
