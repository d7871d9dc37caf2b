"""TOML case files: a model, its solver settings and outputs (``flexmbs run CASE``)."""

from .loader import Case, load_case, run_case

__all__ = ["Case", "load_case", "run_case"]
