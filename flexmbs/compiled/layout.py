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


def pack(parts, lazy: bool = False):
    """(F, IN, H, views): the fields of the named tuple ``parts`` in two buffers, their
    header, and the same named tuple rebuilt from views into the buffers (``lazy``: a
    :class:`PackedFields` that makes each view when it is first read)."""
    rows = []  # the header rows: (kind, offset, ndim, shape…, zeros to 8)
    pieces, used = ([], []), [0, 0]  # each buffer's fields in order, and its length
    for k, v in enumerate(parts):
        if not isinstance(v, np.ndarray):
            rows.append((2, used[1], 0, 0, 0, 0, 0, 0))
            pieces[1].append(np.array([int(v)], dtype=np.int64))
            used[1] += 1
            continue
        ndim = v.ndim
        if ndim > 5:
            raise ValueError(f"field {parts._fields[k]} has {ndim} dimensions (at most 5)")
        kind = 0 if v.dtype.kind == "f" else 1
        rows.append((kind, used[kind], ndim, *v.shape, *_PADDING[ndim]))
        pieces[kind].append(v)
        used[kind] += v.size
    H = np.array(rows, dtype=np.int64).reshape(len(rows), 8)
    F = _buffer(pieces[0], used[0], np.float64)
    IN = _buffer(pieces[1], used[1], np.int64)
    if lazy:
        return F, IN, H, PackedFields(parts._fields, F, IN, H)
    views = []
    for v, (kind, off, *_) in zip(parts, rows, strict=True):
        if kind == 2:
            views.append(int(v))
        else:
            views.append((F if kind == 0 else IN)[off:off + v.size].reshape(v.shape))
    return F, IN, H, type(parts)(*views)


#: {field names of a packed tuple type: {name: header row}} (:class:`PackedFields`)
_FIELD_ROWS: dict = {}


class PackedFields:
    """The fields of a packed named tuple (:func:`pack`) as views into its buffers, by
    name (``fields.rot``) or place (``fields[k]``, iteration), each view made when it is
    first read: a run reads a few of the workspace's hundred fields and of the tables'
    eighty from Python (making every view took about 0.1 ms of each run's set-up)."""

    __slots__ = ("_H", "_buffers", "_fields", "_made")

    def __init__(self, fields: tuple, F: np.ndarray, IN: np.ndarray, H: np.ndarray):
        self._fields, self._buffers, self._H = fields, (F, IN), H
        self._made: dict = {}

    def __getattr__(self, name: str):
        rows = _FIELD_ROWS.get(self._fields)
        if rows is None:
            rows = _FIELD_ROWS[self._fields] = {n: k for k, n in enumerate(self._fields)}
        if name not in rows:
            raise AttributeError(f"no packed field is named {name!r}")
        return self[rows[name]]

    def __getitem__(self, k: int):
        made = self._made.get(k)
        if made is None:
            kind, offset, ndim, *shape = self._H[k].tolist()
            if kind == 2:  # a Python int
                made = int(self._buffers[1][offset])
            else:
                shape = tuple(shape[:ndim])
                size = int(np.prod(shape, dtype=np.int64))
                made = self._buffers[kind][offset:offset + size].reshape(shape)
            self._made[k] = made
        return made

    def __len__(self) -> int:
        return len(self._fields)

    def __iter__(self):
        return (self[k] for k in range(len(self._fields)))


#: Zeros that pad a header row of an ``ndim``-dimensional field to 8 entries.
_PADDING = tuple((0,) * (5 - ndim) for ndim in range(6))


def _buffer(pieces, length: int, dtype) -> np.ndarray:
    """A buffer of ``length`` (at least 1) entries of ``dtype`` holding ``pieces`` one
    after the other: in one concatenation, or piece by piece when a large one is all
    zeros (the buffer starts zeroed, so that one is left untouched)."""
    out = np.zeros(max(length, 1), dtype=dtype)
    if not length:
        return out
    if not any(p.size >= _ZERO_CHECK_FROM and not p.any() for p in pieces):
        np.concatenate([p.ravel() for p in pieces], out=out[:length], casting="unsafe")
        return out
    offset = 0
    for p in pieces:
        if p.size < _ZERO_CHECK_FROM or p.any():
            out[offset:offset + p.size] = p.ravel()
        offset += p.size
    return out


#: What the kernel modules take from here (through :mod:`flexmbs.compiled.packing`):
#: the core workspace's header-row constants and :func:`pack`.
__all__ = ["pack", *(name for name in tuple(globals()) if name[:2] == "W_")]
