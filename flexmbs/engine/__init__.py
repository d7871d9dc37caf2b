"""The compiled engine (docs/compiled.md): the dispatch over the element kinds (residual,
tangents, outputs) and the Newton iteration of a step in numba kernels
(:mod:`~flexmbs.engine.dispatch`, :mod:`~flexmbs.engine.newton`); the model's tables
(:mod:`~flexmbs.engine.tables`); :class:`~flexmbs.engine.compiled_system.CompiledSystem`,
what a run calls; and the kernels' loading — the shipped prebuilt machine code
(:mod:`~flexmbs.engine.prebuilt`, :mod:`~flexmbs.engine.native`,
:mod:`~flexmbs.engine.elf`) or numba's, compiled in the background for automatic runs
(:mod:`~flexmbs.engine.warmup`).

The element kinds' own kernels live in :mod:`flexmbs.elements`; the buffer toolkit they
share (layout, packing, workspace, rotations) in :mod:`flexmbs.compiled`. Importing
this package imports neither numba nor the kernels.
"""

from .compiled_system import CompiledSystem, jit_disabled
from .tables import unsupported_reason

__all__ = ["CompiledSystem", "jit_disabled", "unsupported_reason"]
