"""numba's ``njit`` for the kernel modules, caching in the kernels' own folder.

The kernels fold the packing layout (:mod:`flexmbs.compiled.layout`) in as constants,
but numba reuses a cached kernel whenever its own source file is unchanged. So the
kernels are cached in a folder named by a hash of all kernel sources
(:func:`flexmbs.compiled.kernel_cache_dir`): a changed layout never meets a stale
kernel. numba fixes a function's cache folder when it is decorated, so this sets
numba's folder for the decoration only and leaves other numba code alone. The folder
is worked out (and created) at the first decoration, that is when the kernel modules
are imported: only when a run takes its kernels from numba.
"""

from __future__ import annotations

import numba

from . import kernel_cache_dir


def njit(*args, **options):
    """``numba.njit(*args, **options)``, with ``cache=True`` caching in
    :func:`~flexmbs.compiled.kernel_cache_dir` (or where ``NUMBA_CACHE_DIR`` says)."""

    def decorate(func):
        previous, folder = numba.config.CACHE_DIR, kernel_cache_dir()
        if folder is not None:
            numba.config.CACHE_DIR = folder
        try:
            return numba.njit(**options)(func)
        finally:
            numba.config.CACHE_DIR = previous

    if len(args) == 1 and callable(args[0]) and not options:
        return decorate(args[0])
    if args:
        raise TypeError("flexmbs.compiled._jit.njit takes keyword options only")
    return decorate
