"""Compiled evaluation layer (numba): the model as flat arrays, fused residual and
tangent kernels, and the Newton iteration of a step (docs/compiled.md).

The NumPy path (:mod:`flexmbs.assembly`) stays the reference; ``simulate(...,
engine="python")`` or ``NUMBA_DISABLE_JIT=1`` runs it.
"""

from .engine import CompiledSystem, jit_disabled
from .tables import unsupported_reason

__all__ = ["CompiledSystem", "jit_disabled", "unsupported_reason"]
