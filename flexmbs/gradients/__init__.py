"""Gradients of a run by the discrete adjoint of its generalized-α steps, forward
sensitivities, least-squares fits and the updating of built-in beams against a modal
test (docs/gradients.md)."""

from .api import GradientResult, Sensitivities, gradient, sensitivities
from .fit import FitResult, fit
from .modal_update import TestMode, read_modal_test
from .objectives import MEASURES, Objective
from .update import UpdateResult, update

__all__ = ["MEASURES", "FitResult", "GradientResult", "Objective", "Sensitivities",
           "TestMode", "UpdateResult", "fit", "gradient", "read_modal_test",
           "sensitivities", "update"]
