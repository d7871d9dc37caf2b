"""Dense linear algebra on small matrices: BLAS threads (threadpoolctl) and solves."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np


def single_threaded_blas():
    """A context that keeps BLAS on one thread (threadpoolctl, when installed): on small
    matrices threads only contend for the cores."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a base dependency
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def solve_small(a, b) -> np.ndarray:
    """``np.linalg.solve(a, b)`` for one small dense system (order up to some tens), by
    SciPy's LU; ``np.linalg.LinAlgError`` when ``a`` is exactly singular.

    Not ``np.linalg.solve`` itself: the OpenBLAS bundled with NumPy 1.26's wheels (the
    NumPy that the ``nastran`` extra's pyNastran requires) wakes its threads for every
    solve, and a lone 3 x 3 solve then takes 2-5 ms instead of some microseconds."""
    import scipy.linalg as sla

    a = np.asarray(a, dtype=float)
    with warnings.catch_warnings():  # an exactly singular pivot: raised below
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        lu, piv = sla.lu_factor(a, check_finite=False)
    if not np.all(np.diag(lu) != 0):
        raise np.linalg.LinAlgError("Singular matrix")
    return sla.lu_solve((lu, piv), np.asarray(b, dtype=float), check_finite=False)
