"""flexmbs: flexible multibody dynamics with the floating frame of reference.

The modal front end lives in :mod:`flexmbs.modal`; the most used names are re-exported
here.
"""

from .errors import (
    ConvergenceError,
    FlexmbsError,
    ModelError,
    ReadError,
    ShapeError,
    UnitsWarning,
    ValidationError,
)
from .modal import (
    FEModel,
    ModalData,
    ReferenceFrame,
    clamped_modes,
    craig_bampton,
    free_free_modes,
    read_modal,
    write_modal,
)
from .results import SimulationResult, load_result

__version__ = "0.1.0"

__all__ = [
    "ConvergenceError",
    "FEModel",
    "FlexmbsError",
    "ModalData",
    "ModelError",
    "ReadError",
    "ReferenceFrame",
    "ShapeError",
    "SimulationResult",
    "UnitsWarning",
    "ValidationError",
    "__version__",
    "clamped_modes",
    "craig_bampton",
    "free_free_modes",
    "load_result",
    "read_modal",
    "write_modal",
]
