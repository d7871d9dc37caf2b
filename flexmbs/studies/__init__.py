"""Studies over many runs of one case: coupling-mode comparison, modal truncation, and the
general parameter sweep both use (serial, local processes or Dask)."""

from .coupling import CouplingStudy, RunComparison, coupling_study
from .signals import RunSignals, extract
from .sweep import RunRecord, parameter_sweep, run_variant, sweep
from .truncation import TruncationStudy, truncation_study

__all__ = ["CouplingStudy", "RunComparison", "RunRecord", "RunSignals", "TruncationStudy",
           "coupling_study", "extract", "parameter_sweep", "run_variant", "sweep",
           "truncation_study"]
