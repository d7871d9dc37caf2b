"""Analyses other than time integration (docs/static_linear.md): static equilibrium and
quasi-static sequences."""

from .static import StaticResult, quasi_static, static_equilibrium

__all__ = ["StaticResult", "quasi_static", "static_equilibrium"]
