"""Packing of the model's tables (:class:`flexmbs.elements.registry.Tables`) and
workspace (:class:`flexmbs.elements.registry.Workspace`) into one float and one integer
buffer.

Calling a numba function costs a type check and an unboxing per argument; a named tuple
of some fifty arrays costs about 1 µs per array, more than the whole residual. So Python
hands the kernels two flat buffers and a header per tuple (:func:`pack`), and each
kernel takes views of the fields it uses (``floats3(F, H, T_R_IO)``: a pointer and a
shape, no copy and no reference to the buffer, so no reference counting; ``reshape``
would cost some 30 ns a view, ``as_strided`` an atomic reference count per view and
per sub-view). Such a view must never leave the kernel call: no kernel returns one to
Python or keeps one beyond the call (its buffer could be freed under it). Passing the
named tuples themselves between kernels costs a reference count per array per call and
makes compilation very slow.

The layout itself (the header rows, :func:`pack`) is :mod:`flexmbs.compiled.layout`,
which the run side uses without numba.
"""

from __future__ import annotations

import numpy as np
from numba.core import cgutils, config, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from ._jit import njit
from .layout import *  # noqa: F403  (the header-row constants, for the kernels)
from .layout import pack  # noqa: F401  (re-exported)


def _view_python(buf, offset, shape):
    """:func:`packed_view` when the kernels run as plain Python (``NUMBA_DISABLE_JIT=1``)."""
    return buf.reshape(-1)[offset:offset + int(np.prod(shape))].reshape(shape)


@intrinsic
def packed_view(typingctx, buf, offset, shape):
    """A C-contiguous view of ``buf[offset:]`` with ``shape`` (a tuple of ints) that
    does not hold a reference to ``buf`` (no meminfo): creating and passing it costs no
    reference counting, whose atomic operations were a third of a step's time. The
    kernels' buffers are owned by the calling Python object for the whole call."""
    ndim = shape.count
    ret = types.Array(buf.dtype, ndim, "C")

    def codegen(context, builder, signature, args):
        src, off, dims = args
        source = make_array(buf)(context, builder, src)
        itemsize = context.get_abi_sizeof(context.get_data_type(buf.dtype))
        dims = cgutils.unpack_tuple(builder, dims, ndim)
        strides, step = [], context.get_constant(types.intp, itemsize)
        for dim in reversed(dims):
            strides.insert(0, step)
            step = builder.mul(step, dim)
        out = make_array(ret)(context, builder)
        populate_array(out, data=builder.gep(source.data, [off]), shape=dims,
                       strides=strides, itemsize=context.get_constant(types.intp, itemsize),
                       meminfo=None)
        return out._getvalue()

    return ret(buf, offset, shape), codegen


@intrinsic
def borrowed(typingctx, arr):
    """``arr`` without its reference (no meminfo, no parent): the same data, shape and
    strides. The kernels' entry point takes its array arguments so; otherwise every
    call that passes one on, and every view of one, counts a reference atomically. The
    arrays are owned by the calling Python code for the whole call, and such an array
    must never leave the kernel call (as :func:`packed_view`)."""

    def codegen(context, builder, signature, args):
        source = make_array(arr)(context, builder, args[0])
        out = make_array(arr)(context, builder)
        populate_array(out, data=source.data, shape=source.shape, strides=source.strides,
                       itemsize=source.itemsize, meminfo=None)
        return out._getvalue()

    return arr(arr), codegen


if config.DISABLE_JIT:
    packed_view = _view_python  # an intrinsic cannot run as Python

    def borrowed(arr):
        return arr


# floatsN(F, H, k): field k of the packed float tables (row k of the header H gives its
# offset and shape) as an N-dimensional view of F, without a copy; intsN(IN, H, k) the
# same of the integer tables. The kernels of every element kind read their fields so.
@njit(cache=True, inline="always")
def floats1(F, H, k):
    return packed_view(F, H[k, 1], (H[k, 3],))


@njit(cache=True, inline="always")
def floats2(F, H, k):
    return packed_view(F, H[k, 1], (H[k, 3], H[k, 4]))


@njit(cache=True, inline="always")
def floats3(F, H, k):
    return packed_view(F, H[k, 1], (H[k, 3], H[k, 4], H[k, 5]))


@njit(cache=True, inline="always")
def floats4(F, H, k):
    return packed_view(F, H[k, 1], (H[k, 3], H[k, 4], H[k, 5], H[k, 6]))


@njit(cache=True, inline="always")
def floats5(F, H, k):
    return packed_view(F, H[k, 1], (H[k, 3], H[k, 4], H[k, 5], H[k, 6], H[k, 7]))


@njit(cache=True, inline="always")
def ints1(IN, H, k):
    return packed_view(IN, H[k, 1], (H[k, 3],))


@njit(cache=True, inline="always")
def ints2(IN, H, k):
    return packed_view(IN, H[k, 1], (H[k, 3], H[k, 4]))


@njit(cache=True, inline="always")
def ints3(IN, H, k):
    return packed_view(IN, H[k, 1], (H[k, 3], H[k, 4], H[k, 5]))


#: Kernel arguments that select a branch are passed as NumPy scalars: numba types a
#: literal 0, 1, True or False as Literal[...] and compiles one copy of the callee per
#: value (minutes of compilation over the kernels); a NumPy scalar is typed int64 or
#: bool, one copy for all values.
TORQUE, FORCE = np.int64(0), np.int64(1)  # load kinds (torque or angular Jacobian, force)
YES, NO = np.bool_(True), np.bool_(False)
ROWS_I, ROWS_J = np.int64(0), np.int64(4)  # an equation's weight rows of marker i, j
