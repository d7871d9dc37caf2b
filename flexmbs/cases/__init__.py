"""TOML case files: a model, its solver settings and outputs (``flexmbs run CASE``)."""

from .case import Case
from .loader import load_case
from .run import run_case

__all__ = ["Case", "load_case", "run_case"]
