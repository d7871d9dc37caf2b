"""Results of a run and their file (docs/results_file.md): :class:`SimulationResult`,
:func:`load_result` and :func:`save_result`, readable without the integrators."""

from .io import save_result
from .result import SimulationResult, load_result

__all__ = ["SimulationResult", "load_result", "save_result"]
