"""The prebuilt step kernel as plain machine code, called without numba
(docs/compiled.md, "The prebuilt kernel").

A shipped build (:mod:`flexmbs.engine.prebuilt`) is the relocatable object code of
the step kernel :func:`flexmbs.engine.newton.kernel` behind a C entry point

    int64 flexmbs_kernel(void **pointers, int64 *numbers, void **error)

``pointers``: the data of every array parameter in order; ``numbers``: the scalar
parameters (task, max_iter, start), then the shape of every array parameter in order.
It returns the kernel's result, or :data:`FAILED` with ``*error`` pointing to numba's
record of the exception the kernel raised. The code references only the C and maths
libraries (the build refuses anything else), so linking it is a copy and its
relocations (:mod:`flexmbs.engine.object_loader`): a millisecond, against a third of
a second to import numba and rebuild its compiled kernel from a cache.

:class:`NativeKernel` is called like the numba kernel. It takes each array's address
once and keeps a reference to the array while it is bound, so a call that passes the
same arrays as the previous one costs an identity check per array; the state vectors,
new at every step, are copied into buffers of its own instead (:data:`STAGED`). Calls of
different tasks pass different arrays in the same places (a batch of steps its factors
and histories, an output or contact evaluation placeholders): each place remembers the
last few arrays it held with their addresses (:data:`KNOWN_PER_PARAMETER`), so going
back to one costs a dictionary lookup, not the address and checks again.
"""

from __future__ import annotations

import copy
import ctypes
import pickle
import weakref
from operator import is_, itemgetter

import numpy as np

from .elf import ObjectError, parse_object
from .object_loader import LinkError, link_object

#: Version of the entry point's convention (:data:`SCALARS`, :data:`FAILED`, the tables,
#: and the entry point :mod:`flexmbs.engine.prebuilt` builds); a build records the
#: version it follows, and one of another version is refused. Raise it with any change.
ABI = 2

#: Result of the entry point when the kernel raised (never a kernel result: those are
#: the step's codes, :mod:`flexmbs.compiled.codes`).
FAILED = -(2**62)

#: Scalar parameters of the kernel, in the order the entry point reads them.
SCALARS = ("task", "max_iter", "start")

#: Parameters the kernel only reads and a run passes anew at every step (the state at
#: t_n): copied into buffers of the kernel's own, whose addresses it keeps.
STAGED = ("q", "qd", "qdd", "a", "lam")

#: What a build may import: functions of the C and maths libraries (numba's code calls
#: some of them). The build refuses code importing anything else, and so does the loader.
C_LIBRARY = frozenset({
    "memcpy", "memmove", "memset", "memcmp",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "sincos", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "pow", "sqrt", "cbrt", "hypot", "floor", "ceil", "trunc", "round", "rint",
    "nearbyint", "fmod", "fabs", "copysign", "fmin", "fmax", "ldexp", "frexp", "modf",
    "erf", "erfc", "lgamma", "tgamma"})

#: What an array parameter is bound to before its first call (never an argument).
_UNBOUND = object()

#: Arrays each parameter remembers (by identity, held weakly) with their address and
#: shape: a run alternates between two or three per parameter (the clearance
#: slider-crank's 364 kernel calls a run took 2305 bindings, 8 ms, without them).
KNOWN_PER_PARAMETER = 4

_DTYPES = {"f8": np.dtype(np.float64), "i8": np.dtype(np.int64)}


class LoadError(RuntimeError):
    """The object code could not be linked into this process (the reason says why)."""


def _c_library_address(name: str) -> int | None:
    """Address of ``name`` in the C or maths library of this process, or None."""
    for library in (None, "m", "c"):  # None: what the process has loaded (libm, libc)
        try:
            if library is not None:  # (ctypes.util imports subprocess: 4 ms)
                from ctypes.util import find_library

                library = find_library(library)
            handle = ctypes.CDLL(library)
            return ctypes.cast(getattr(handle, name), ctypes.c_void_p).value
        except (OSError, AttributeError, TypeError):
            continue
    return None


def link(code: bytes, symbol: str):
    """Link the object ``code`` into this process (:mod:`flexmbs.engine.object_loader`):
    (the mapping that holds it, which must be kept while the code runs, and the address
    of ``symbol``). Its imports (:func:`parse_object`) are resolved from the C and maths
    libraries. Raises LoadError saying what failed."""
    try:
        checked = parse_object(code)
    except ObjectError as exc:
        raise LoadError(str(exc)) from exc
    if symbol not in checked.defined:
        raise LoadError(f"it defines no entry point {symbol!r}")
    foreign = sorted(set(checked.imports) - C_LIBRARY)
    if foreign:
        raise LoadError(f"it imports {', '.join(foreign)}, beyond the C and maths "
                        "libraries")

    def resolve(name: str) -> int:
        address = _c_library_address(name)
        if address is None:
            raise LoadError(f"the C library of this process has no {name!r}")
        return address

    try:
        return link_object(code, checked, symbol, resolve)
    except LinkError as exc:
        raise LoadError(str(exc)) from exc


class NativeKernel:
    """The step kernel from linked machine code, called as
    :func:`flexmbs.engine.newton.kernel` (same parameters, same result).

    ``parameters``: the kernel's parameters in order, as the build recorded them:
    (name, kind, ndim) with kind "f8" or "i8" (a C-contiguous array of ndim dimensions)
    or "scalar" (one of :data:`SCALARS`). An instance's tables serve one caller at a
    time: each CompiledSystem takes its own (:meth:`twin`). The arrays of a call are
    trusted unchanged at the next call that passes the same ones (no array is reshaped
    in place or made read-only meanwhile); one passed before that and again later is
    checked for its shape, dtype, layout and writeability."""

    def __init__(self, code, address: int, parameters):
        # code: the mapping of the linked code (kept while this caller may run it)
        self._code, self._address, self._parameters = code, address, parameters
        # called holding the GIL, as numba's kernels are (a kernel's tables are its
        # caller's alone: one NativeKernel per CompiledSystem); the tasks in
        # released_tasks are called with the GIL released instead, so another thread's
        # Python runs meanwhile (the code touches no Python object: it links against
        # the C and maths libraries alone)
        signature = (ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        self._function = ctypes.PYFUNCTYPE(*signature)(address)
        self._released = ctypes.CFUNCTYPE(*signature)(address)
        names = [name for name, _, _ in parameters]
        self._n_args = len(names)
        self._arrays = []  # (name, dtype, ndim, first shape slot)
        scalars, slot = [], len(SCALARS)
        for name, kind, ndim in parameters:
            if kind == "scalar":
                scalars.append(name)
                continue
            self._arrays.append((name, _DTYPES[kind], int(ndim), slot))
            slot += int(ndim)
        if tuple(scalars) != SCALARS:
            raise LoadError(f"its scalar parameters are {scalars}, expected {list(SCALARS)}")
        positions = [(k, names.index(name)) for k, (name, *_) in enumerate(self._arrays)]
        #: the arrays bound by address (k, position in the call), and a getter of them
        self._fixed = [(k, at) for k, at in positions if self._arrays[k][0] not in STAGED]
        fixed_at = [at for _, at in self._fixed]
        self._fixed_args = (itemgetter(*fixed_at) if len(fixed_at) > 1  # a tuple then
                            else lambda args: tuple(args[at] for at in fixed_at))
        #: the state vectors, copied in (k, position in the call)
        self._staged = [(k, at) for k, at in positions if self._arrays[k][0] in STAGED]
        self._scalar_at = [names.index(name) for name in SCALARS]
        self._n_numbers = slot
        self._new_tables()

    def _new_tables(self) -> None:
        """This caller's own tables (the arrays' addresses and shapes, the arrays bound
        and remembered), empty; the code, the parameters' layout and the C functions are
        shared with its twins (:meth:`twin`)."""
        #: the tasks (kernel task codes) called with the GIL released: long calls only
        #: (releasing and taking the GIL back costs about a microsecond)
        self.released_tasks: frozenset = frozenset()
        #: the caller's placeholders (ids of arrays it keeps alive) and, per task, the
        #: places that task never reads (:meth:`skip_placeholders`)
        self._placeholders: frozenset = frozenset()
        self._unread: dict = {}
        self._pointers = np.zeros(len(self._arrays), dtype=np.uintp)
        self._numbers = np.zeros(self._n_numbers, dtype=np.int64)
        # (item writes through memoryviews: a third of NumPy's)
        self._pointer_items, self._number_items = (memoryview(self._pointers),
                                                   memoryview(self._numbers))
        #: per array parameter: {id: (weak reference, address, shape)} of arrays bound
        self._known: list[dict] = [{} for _ in self._arrays]
        self._error = np.zeros(1, dtype=np.uintp)
        self._bound: list = [_UNBOUND] * len(self._arrays)
        self._fixed_bound: list = [_UNBOUND] * len(self._fixed)  # _bound's fixed entries
        self._call_addresses = (self._pointers.ctypes.data, self._numbers.ctypes.data,
                                self._error.ctypes.data)

    def _bind(self, k: int, array, staged: bool) -> None:
        """Point array parameter ``k`` at ``array``, or, when ``staged``, at a new copy of it
        that later calls of the same shape refill (taking an array's address costs more
        than copying a state vector; a copy can take an array of any layout, of the right
        dtype)."""
        name, dtype, ndim, _ = self._arrays[k]
        if (staged and isinstance(array, np.ndarray) and array.ndim == ndim
                and array.dtype == dtype):
            array = np.array(array, order="C")  # later calls refill it (__call__)
        if (not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != ndim
                or not array.flags.c_contiguous or not array.flags.writeable):
            got = type(array).__name__
            if isinstance(array, np.ndarray):
                layout = ("" if array.flags.c_contiguous else ", not C-contiguous") + (
                    "" if array.flags.writeable else ", read-only")
                got = f"{array.dtype} array of shape {array.shape}{layout}"
            raise TypeError(f"step kernel argument {name!r}: expected a writeable "
                            f"C-contiguous {dtype} array of {ndim} dimension(s), got {got}")
        known = self._known[k]
        if len(known) >= KNOWN_PER_PARAMETER:  # the one bound longest ago goes
            del known[next(iter(known))]
        entry = known[id(array)] = (weakref.ref(array), _address(array), array.shape)
        self._point(k, array, entry)

    def _point(self, k: int, array, entry) -> None:
        """Bind array parameter ``k`` to ``array``, whose (weak reference, address, shape)
        is ``entry``."""
        self._pointer_items[k] = entry[1]
        numbers, slot = self._number_items, self._arrays[k][3]
        for i, extent in enumerate(entry[2]):
            numbers[slot + i] = extent
        self._bound[k] = array

    def skip_placeholders(self, placeholders, unread: dict) -> None:
        """Leave bound what is bound where a task reads nothing: ``placeholders`` the
        arrays the caller passes there (it keeps them alive), ``unread`` {task code:
        names of the array parameters that task never reads}. A placeholder passed to
        a task where it reads one (a zero-size sparse factor meaning "dense", say) is
        bound as any array is."""
        self._placeholders = frozenset(map(id, placeholders))
        where = {name: k for k, (name, *_) in enumerate(self._arrays)}
        self._unread = {task: frozenset(where[name] for name in names)
                        for task, names in unread.items()}

    def _bind_fixed(self, args) -> None:
        """Bind the fixed array parameters to those of the call ``args``: a known array
        by its remembered address, another through :meth:`_bind` (which checks it), a
        placeholder where the task reads nothing not at all. One refused leaves the
        rest to be checked again at the next call."""
        self._fixed_bound = [_UNBOUND] * len(self._fixed)
        bound, placeholders = self._bound, self._placeholders
        unread = self._unread.get(args[self._scalar_at[0]], ())  # (of the call's task)
        skipped = set()
        for k, at in self._fixed:
            array = args[at]
            if array is bound[k]:
                continue
            if k in unread and id(array) in placeholders and bound[k] is not _UNBOUND:
                skipped.add(k)  # (the array bound there stays: the task ignores it)
                continue
            known = self._known[k]
            entry = known.get(id(array))
            if (entry is not None and entry[0]() is array and array.shape == entry[2]
                    and array.dtype == self._arrays[k][1] and array.flags.writeable
                    and array.flags.c_contiguous):  # (unchanged since it was bound?)
                known[id(array)] = known.pop(id(array))  # (now the newest)
                self._point(k, array, entry)
            else:
                self._bind(k, array, False)
        self._fixed_bound = [args[at] if k in skipped else bound[k]
                             for k, at in self._fixed]

    def __call__(self, *args):
        if len(args) != self._n_args:
            raise TypeError(f"the step kernel takes {self._n_args} arguments, got "
                            f"{len(args)}")
        if not all(map(is_, self._fixed_args(args), self._fixed_bound)):
            self._bind_fixed(args)
        bound = self._bound
        for k, at in self._staged:
            array, held = args[at], bound[k]
            if (type(array) is np.ndarray and held is not _UNBOUND
                    and array.shape == held.shape and array.dtype == held.dtype):
                held[...] = array
            else:
                self._bind(k, array, True)
        numbers = self._numbers
        for i, at in enumerate(self._scalar_at):
            numbers[i] = args[at]
        if args[self._scalar_at[0]] in self.released_tasks:  # (the task)
            result = self._released(*self._call_addresses)
        else:
            result = self._function(*self._call_addresses)
        if result == FAILED:
            raise _raised(int(self._error[0]))
        return result

    def twin(self) -> NativeKernel:
        """Another caller of the same code, with tables of its own (the layout worked
        out from the parameters is shared: a twin costs a fifth of a new caller)."""
        other = copy.copy(self)
        other._new_tables()
        return other

    def release(self) -> None:
        """Drop the references to the arrays of the last call (the next call binds its
        arrays again: by their remembered address those that still live)."""
        self._bound = [_UNBOUND] * len(self._arrays)
        self._fixed_bound = [_UNBOUND] * len(self._fixed)
        # (the arrays remembered by _known are held weakly: they stay, and are taken
        # again by their address while they live)


def _address(array: np.ndarray) -> int:
    """The address of the data of the writeable C-contiguous ``array`` (through ctypes'
    buffer view: a third of ``array.ctypes.data``'s cost; an empty array has no buffer
    to view)."""
    if array.size == 0:
        return array.ctypes.data
    return ctypes.addressof(ctypes.c_char.from_buffer(array))


def _raised(record: int) -> Exception:
    """The exception the kernel raised, from numba's record of it (a pickled
    (class, args, location) of a builtin exception); a RuntimeError if unreadable."""
    generic = RuntimeError("the prebuilt step kernel raised an exception; run with "
                           "FLEXMBS_PREBUILT=0 for numba's message")
    if not record:
        return generic
    try:
        data = ctypes.c_void_p.from_address(record).value
        size = ctypes.c_int32.from_address(record + ctypes.sizeof(ctypes.c_void_p)).value
        cls, exc_args, *_ = pickle.loads(ctypes.string_at(data, size))
    except Exception:  # an unreadable record: the generic message
        return generic
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls(*exc_args)
    return generic
