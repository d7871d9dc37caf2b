"""Gradients of a run by the discrete adjoint of its generalized-α steps, forward
sensitivities and least-squares fits (docs/gradients.md)."""

from .api import GradientResult, Sensitivities, gradient, sensitivities
from .fit import FitResult, fit
from .objectives import MEASURES, Objective

__all__ = ["MEASURES", "FitResult", "GradientResult", "Objective", "Sensitivities", "fit",
           "gradient", "sensitivities"]
