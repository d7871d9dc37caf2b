"""Analyses other than time integration (docs/static_linear.md): static equilibrium and
quasi-static sequences, linearization and eigenanalysis."""

from .linear import LinearSystem, Mode, eigenmodes, linearize
from .static import StaticResult, quasi_static, static_equilibrium

__all__ = ["LinearSystem", "Mode", "StaticResult", "eigenmodes", "linearize",
           "quasi_static", "static_equilibrium"]
