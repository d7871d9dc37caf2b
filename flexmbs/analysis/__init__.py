"""Analyses other than time integration (docs/static_linear.md): static equilibrium and
quasi-static sequences, linearization, eigenanalysis and Campbell diagrams; forward and
inverse dynamics in joint coordinates (docs/urdf.md)."""

from .campbell import CampbellResult, campbell
from .joint_space import inverse_dynamics, joint_accelerations, joint_coordinates
from .linear import LinearSystem, Mode, eigenmodes, linearize
from .static import StaticResult, quasi_static, static_equilibrium

__all__ = ["CampbellResult", "LinearSystem", "Mode", "StaticResult", "campbell",
           "eigenmodes", "inverse_dynamics", "joint_accelerations", "joint_coordinates",
           "linearize", "quasi_static", "static_equilibrium"]
