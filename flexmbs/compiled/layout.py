"""The layout of the packed model and workspace: which buffer and offset each field of
the model's tables (:class:`flexmbs.elements.registry.Tables`) and of the workspace
(:class:`flexmbs.elements.registry.Workspace`) lives at (docs/compiled.md, "Where the
arrays come from").

:func:`pack` lays the fields of a named tuple into one float and one integer buffer with
a header. The header row of a field is its index in the tuple: the core workspace's
buffers (:data:`flexmbs.compiled.workspace.CORE`) come first and have the ``W_*``
constants below; the element kinds' own scratch follows
(:func:`flexmbs.elements.registry.work_rows`), and the tables' rows come from the kinds'
declarations (:func:`flexmbs.elements.registry.header_rows`, ``T_*`` in the kernel
modules). Plain
NumPy: the run side packs with it without importing numba.

Header row k of a tuple: (kind, offset, ndim, shape[0..4]); kind 0 float64 in ``F``,
1 int64 in ``IN``, 2 a Python int stored at ``IN[offset]``.
"""

from __future__ import annotations

import numpy as np

from .workspace import CORE_FIELDS

# Header rows of the core workspace's fields, for the kernels' views: W_ROT, W_GBAR, …,
# one constant per field of flexmbs.compiled.workspace.CORE, named W_<NAME>.
# (The element kinds' scratch follows the core's: flexmbs.elements.registry.work_rows.)
globals().update({"W_" + name.upper(): row for row, name in enumerate(CORE_FIELDS)})


#: From this many entries a field that is all zeros is not copied into its buffer, which
#: is zero already: the dense iteration-matrix scratch of a large sparse model (151 MB
#: for 256 flexible bodies) then costs no copy, and its pages are touched only where
#: the kernels write (the pattern's entries).
_ZERO_CHECK_FROM = 1 << 16


def pack(parts):
    """(F, IN, H, views): the fields of the named tuple ``parts`` in two buffers, their
    header, and the same named tuple rebuilt from views into the buffers."""
    rows, o_f, o_i = [], 0, 0  # the header rows: (kind, offset, ndim, shape…)
    for k, v in enumerate(parts):
        if not isinstance(v, np.ndarray):
            rows.append((2, o_i, 0))
            o_i += 1
            continue
        if v.ndim > 5:
            raise ValueError(f"field {parts._fields[k]} has {v.ndim} dimensions (at most 5)")
        if v.dtype.kind == "f":
            rows.append((0, o_f, v.ndim, *v.shape))
            o_f += v.size
        else:
            rows.append((1, o_i, v.ndim, *v.shape))
            o_i += v.size
    F = np.zeros(max(o_f, 1))
    IN = np.zeros(max(o_i, 1), dtype=np.int64)
    H = np.zeros((len(parts), 8), dtype=np.int64)
    for k, row in enumerate(rows):
        H[k, :len(row)] = row
    views = []
    for v, (kind, off, *_) in zip(parts, rows, strict=True):
        if kind == 2:
            IN[off] = int(v)
            views.append(int(v))
            continue
        view = (F if kind == 0 else IN)[off:off + v.size].reshape(v.shape)
        if v.size < _ZERO_CHECK_FROM or v.any():  # (the buffers start zeroed: a large
            view[...] = v                         # zero field is left untouched)
        views.append(view)
    return F, IN, H, type(parts)(*views)


#: What the kernel modules take from here (through :mod:`flexmbs.compiled.packing`):
#: the core workspace's header-row constants and :func:`pack`.
__all__ = ["pack", *(name for name in tuple(globals()) if name[:2] == "W_")]
