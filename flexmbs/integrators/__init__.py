"""Time integration (docs/theory_integrators.md): Newmark, HHT-α and generalized-α on the
index-3 DAE or its stabilized index-2 form (:func:`simulate`), and the index-1 reference
path for verification (:func:`simulate_reference`)."""

from .alpha import AlphaParameters, amplification_matrix, generalized_alpha, hht, newmark
from .reference import ReferenceResult, simulate_reference
from .simulate import METHODS, AlphaIntegrator, Formulation, SimulationResult, simulate

__all__ = [
    "METHODS",
    "AlphaIntegrator",
    "AlphaParameters",
    "Formulation",
    "ReferenceResult",
    "SimulationResult",
    "amplification_matrix",
    "generalized_alpha",
    "hht",
    "newmark",
    "simulate",
    "simulate_reference",
]
