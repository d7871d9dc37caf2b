"""Co-simulation (docs/cosimulation.md): a stepping API with named inputs and outputs
(:class:`Simulation`), sampled controllers in Python or as FMUs run with FMPy
(:mod:`flexmbs.cosim.controllers`), and FMU export with pythonfmu
(:mod:`flexmbs.cosim.fmu_export`)."""

from . import case_tables  # noqa: F401  (registers the [[controllers]] reader)
from .controllers import Controller, FmuController
from .inputs import InputSignal
from .simulation import ModelView, Simulation

__all__ = ["Controller", "FmuController", "InputSignal", "ModelView", "Simulation"]
