"""The compiled engine: the dispatch over the element kinds (residual, tangents, outputs)
and the Newton iteration of a step, in numba kernels (docs/compiled.md).

The element kinds' own kernels live in :mod:`flexmbs.elements`; the buffer toolkit they
share (layout, packing, workspace, rotations) in :mod:`flexmbs.compiled`.
"""
