"""A consistent mass matrix read from a file and made SciPy's CSR matrix when first used
(docs/compiled.md, "What a run imports").

A run from a checked native file needs the inertia invariants the file stores, not the
FE mass matrix itself, so the reader hands :class:`~flexmbs.modal.data.ModalData` the
matrix's CSR arrays (:class:`DeferredCSR`), and ``ModalData.mass`` becomes the
``scipy.sparse.csr_matrix`` of them when it is first read (:class:`DeferredMassField`):
a run that never reads it never imports SciPy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._blas import scipy_module


class DeferredCSR(NamedTuple):
    """The arrays of a CSR matrix whose structure has been checked (indices in range,
    indptr rising from 0 to nnz: SciPy trusts them), its shape, and whether its values
    passed ModalData's checks of this revision when the file was written (a sealed
    file's: they need none again, even in a copy such as ``select``'s, since the arrays
    stay private: the matrix that ``mass`` becomes holds copies of them)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]
    checked: bool = False

    def matrix(self):
        """The ``scipy.sparse.csr_matrix`` (float values) of copies of these arrays
        (so that no change to the matrix reaches them)."""
        return scipy_module("scipy.sparse").csr_matrix(
            (self.data.copy(), self.indices.copy(), self.indptr.copy()), shape=self.shape,
            dtype=float)


class DeferredMassField:
    """The ``mass`` attribute of a ModalData: stored as given, and a
    :class:`DeferredCSR` replaced by its SciPy matrix at the first read (a data
    descriptor, so the frozen dataclass's own assignments go through it; set on the
    class after the dataclass is made, which keeps ``mass`` a required field)."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name]
        if isinstance(value, DeferredCSR):
            value = obj.__dict__[self.name] = value.matrix()
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.name] = value


def stored_mass(data):
    """``data.mass`` (a ModalData's) as stored: a :class:`DeferredCSR` stays one (the
    construction's checks look at it without making SciPy's matrix)."""
    return data.__dict__["mass"]
