"""SciPy's sparse matrices recognised without importing SciPy (docs/compiled.md, "What a
run imports"): a value can only be a SciPy sparse matrix once ``scipy.sparse`` has been
imported, so a run that never needs SciPy never pays for its import (about 0.15 s with
NumPy 2, most of it NumPy's own submodules that SciPy's array-API layer loads)."""

from __future__ import annotations

import sys


def is_sparse(value) -> bool:
    """``scipy.sparse.issparse(value)``, without importing SciPy."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(value)
