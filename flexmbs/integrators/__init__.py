"""Time integration. So far: the index-1 reference path for verification
(:func:`simulate_reference`); the implicit Newmark/HHT/generalized-α integrators on the
index-3 DAE are the next step (ARCHITECTURE.md §5)."""

from .reference import ReferenceResult, simulate_reference

__all__ = ["ReferenceResult", "simulate_reference"]
