"""BLAS threads around work on small matrices (threadpoolctl)."""

from __future__ import annotations

import contextlib


def single_threaded_blas():
    """A context that keeps BLAS on one thread (threadpoolctl, when installed): on small
    matrices threads only contend for the cores."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a base dependency
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")
