"""Analyses other than time integration (docs/static_linear.md): static equilibrium and
quasi-static sequences, linearization, eigenanalysis and Campbell diagrams."""

from .campbell import CampbellResult, campbell
from .linear import LinearSystem, Mode, eigenmodes, linearize
from .static import StaticResult, quasi_static, static_equilibrium

__all__ = ["CampbellResult", "LinearSystem", "Mode", "StaticResult", "campbell",
           "eigenmodes", "linearize", "quasi_static", "static_equilibrium"]
