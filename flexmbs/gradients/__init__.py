"""Gradients of a run by the discrete adjoint of its generalized-α steps, forward
sensitivities and least-squares fits (docs/gradients.md)."""

from .api import GradientResult, Sensitivities, gradient, sensitivities
from .objectives import MEASURES, Objective

__all__ = ["MEASURES", "GradientResult", "Objective", "Sensitivities", "gradient",
           "sensitivities"]
