"""Dense linear algebra on small matrices: BLAS threads (threadpoolctl) and solves."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import threading

import numpy as np

#: threadpoolctl's view of the process's BLAS libraries, made at the first
#: :func:`single_threaded_blas` (finding them walks every loaded library: 1-4 ms the
#: first time; a limit set through it afterwards costs some µs), and made again once
#: SciPy's own BLAS has been loaded since (:func:`scipy_module`)
_CONTROLLER = None
_CONTROLLER_HAS_SCIPY = False

#: The process-wide limit: set by the first of overlapping :func:`single_threaded_blas`
#: contexts (of any thread), undone by the last to leave (``_ACTIVE`` of them).
_LOCK = threading.Lock()
_ACTIVE = 0
_LIMITER = None
#: the limits set on BLAS libraries loaded while a context was active (SciPy's,
#: :func:`scipy_module`), undone with the context's own
_LATE_LIMITERS: list = []


def _new_lock_in_child() -> None:
    """A forked process starts with the lock free (fork copies only the calling thread:
    another thread holding it would never release it there)."""
    global _LOCK
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_in_child)


@contextlib.contextmanager
def single_threaded_blas():
    """A context that keeps BLAS on one thread (threadpoolctl, when installed): on small
    matrices threads only contend for the cores. The BLAS libraries are those loaded at
    the outermost context's start (NumPy's, and SciPy's once it is imported; SciPy's
    loaded inside a context is put on one thread too, at :func:`scipy_module` or at the
    next nested context). OpenBLAS's thread count is the process's, so contexts
    overlapping in several threads share one limit, and the last to leave gives the
    caller's setting back."""
    global _ACTIVE, _LIMITER
    with _LOCK:
        counted = _ACTIVE > 0
        if counted:
            _limit_late_loaded()
        else:
            controller = _controller()
            if controller is not None:  # (None: no threadpoolctl, a base dependency)
                _release_openblas()  # (the thread that set the caller's limit may be
                _LIMITER = controller.limit(limits=1, user_api="blas")  # another)
                counted = True
        if counted:
            _ACTIVE += 1
    if not counted:  # pragma: no cover - threadpoolctl is a base dependency
        yield
        return
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE -= 1
            if _ACTIVE == 0:
                _release_openblas()  # (this thread may not be the one that set it)
                while _LATE_LIMITERS:
                    _LATE_LIMITERS.pop().restore_original_limits()
                    _release_openblas()
                _LIMITER.restore_original_limits()
                _release_openblas()
                _LIMITER = None


def _controller():
    """threadpoolctl's controller of the process's BLAS libraries (made once, and again
    when SciPy's BLAS was loaded after it), or None without threadpoolctl."""
    global _CONTROLLER, _CONTROLLER_HAS_SCIPY
    has_scipy = "scipy.linalg" in sys.modules
    if _CONTROLLER is None or (has_scipy and not _CONTROLLER_HAS_SCIPY):
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - a base dependency
            return None
        _CONTROLLER, _CONTROLLER_HAS_SCIPY = ThreadpoolController(), has_scipy
    return _CONTROLLER


def scipy_module(name: str = "scipy.linalg"):
    """The SciPy module ``name`` (``"scipy.sparse"``, ``"scipy.sparse.linalg"``, ...),
    imported when a computation first needs it (a run that never does never imports
    SciPy: docs/compiled.md, "What a run imports"). SciPy's linear algebra loads a BLAS
    of its own; loaded inside a :func:`single_threaded_blas` context, that one is put
    on one thread too until the context ends."""
    module = sys.modules.get(name) or importlib.import_module(name)
    if _ACTIVE and not _CONTROLLER_HAS_SCIPY:
        with _LOCK:
            if _ACTIVE:
                _limit_late_loaded()
    return module


def scipy_linalg():
    """:func:`scipy_module` of ``scipy.linalg``."""
    return scipy_module("scipy.linalg")


def _limit_late_loaded() -> None:
    """With ``_LOCK`` held inside an active context: SciPy's BLAS, loaded since the
    outermost context began, put on one thread too until it ends."""
    if "scipy.linalg" in sys.modules and not _CONTROLLER_HAS_SCIPY:
        controller = _controller()  # (made again: SciPy's BLAS among its libraries)
        if controller is not None:
            _release_openblas()
            _LATE_LIMITERS.append(controller.limit(limits=1, user_api="blas"))


def _release_openblas() -> None:
    """Let any thread set OpenBLAS's thread count: threadpoolctl lets only the thread
    that set it last do so (others are silently ignored), and a limit here may be set
    and undone from different threads."""
    import threadpoolctl

    clear = getattr(getattr(threadpoolctl, "OpenBLASController", None),
                    "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


def one_blas_thread(function):
    """``function`` run inside :func:`single_threaded_blas`: for flexmbs's own entry
    points (reading a case, a run), whose matrices are small. OpenBLAS threads even
    tiny calls (SciPy's ``lu_solve`` of a 3 × 3 system with four right-hand sides), and
    a woken thread then spins on the other core for about 0.1 s: through the whole of a
    short run, beside its output worker (docs/compiled.md, "BLAS threads")."""

    @functools.wraps(function)
    def on_one_blas_thread(*args, **kwargs):
        with single_threaded_blas():
            return function(*args, **kwargs)

    return on_one_blas_thread


def solve_small(a, b) -> np.ndarray:
    """``np.linalg.solve(a, b)`` for one small dense system (order up to some tens),
    BLAS on one thread; ``np.linalg.LinAlgError`` when ``a`` is exactly singular.

    On one thread: the OpenBLAS bundled with NumPy's wheels otherwise wakes its threads
    for a lone solve, which then takes milliseconds instead of microseconds. (NumPy's
    own LAPACK: a run that needs no SciPy does not import it, docs/compiled.md, "What a
    run imports".)"""
    with single_threaded_blas():
        return np.linalg.solve(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
