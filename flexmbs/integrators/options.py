"""The options of a run, named once: what :func:`~flexmbs.integrators.simulate` takes,
what a case file's ``[solver]`` table may hold, and the values of the enumerated ones
(docs/integrators.md, docs/case_files.md). The case reader, ``simulate()`` and the CLI
take their key lists and choices from here instead of each keeping its own."""

from __future__ import annotations

import warnings
from enum import Enum

from ..errors import AccuracyWarning, ValidationError
from ..frame.coupling import Coupling


class Tangents(str, Enum):
    """How the Newton iteration matrix gets K_t = ∂r/∂q and C_t = ∂r/∂q̇."""

    ANALYTIC = "analytic"
    """Exact derivatives (:mod:`flexmbs.assembly.tangents`); forces given by user
    callables alone by finite differences."""
    FD = "fd"
    """Grouped forward finite differences of the whole residual (for comparison)."""


class Formulation(str, Enum):
    """Which constraint level the multiplier rows of the step enforce
    (docs/theory_integrators.md, "Stabilized index 2")."""

    AUTO = "auto"
    """Stabilized index 2 when the method has no numerical damping (γ = ½: the
    trapezoidal rule, generalized-α with ρ∞ = 1) and the model has constraints, where the
    index-3 form is weakly unstable; index 3 otherwise."""
    INDEX3 = "index-3"
    """Φ(q) = 0 at t_{n+1} (positions exact, velocities drift with the error)."""
    STABILIZED_INDEX2 = "stabilized-index-2"
    """Φ_q q̇ + Φ_t = 0 through λ, and Φ(q) = 0 through a position correction (the
    Gear–Gupta–Leimkuhler form): both levels hold at every step."""


def undamped(params) -> bool:
    """Whether the method (:class:`~flexmbs.integrators.alpha.AlphaParameters`) has no
    numerical damping (γ = ½: ρ∞ = 1)."""
    return abs(params.gamma - 0.5) < 1e-12


def pick_formulation(value, params, n_constraints: int) -> Formulation:
    """The :class:`Formulation` a run takes for the option ``value`` with the method
    ``params`` on a model of ``n_constraints`` constraint rows: "auto" resolved; an
    index-3 choice that is weakly unstable there warns (AccuracyWarning)."""
    try:
        chosen = Formulation(value)
    except ValueError:
        raise ValidationError(f"formulation must be one of "
                              f"{[m.value for m in Formulation]}, got {value!r}") from None
    weak = undamped(params) and n_constraints > 0
    if chosen is Formulation.AUTO:
        return Formulation.STABILIZED_INDEX2 if weak else Formulation.INDEX3
    if chosen is Formulation.INDEX3 and weak:
        warnings.warn(
            f"{params.name} has no numerical damping, and on the index-3 constraints "
            f"of this model ({n_constraints} rows) it is weakly unstable: the velocities "
            f"drift off the constraints and grow until Newton fails (docs/"
            f"theory_integrators.md); use formulation='stabilized-index-2' (the "
            f"default for undamped methods) or some damping (rho_inf < 1)",
            AccuracyWarning, stacklevel=4)
    return chosen


class Engine(str, Enum):
    """Which implementation evaluates the model and runs the Newton iteration."""

    AUTO = "auto"
    """Compiled where the model allows it (no contacts, no state-dependent callables),
    else the NumPy path."""
    COMPILED = "compiled"
    """The numba kernels (docs/compiled.md); an error if the model needs the NumPy path."""
    PYTHON = "python"
    """The NumPy reference path."""


#: Newton's convergence tolerances by preset (docs/integrators.md, "Newton tolerances"): a
#: step has converged when the position correction is below ``atol + rtol |q|`` in every
#: coordinate [m or rad, dimensionless p and ξ], the acceleration correction β'|Δq| below
#: ``acc_rtol`` max(1, max |q̈|), and max |Φ| below ``phi_tol``. "default" is the run's
#: unless a case says otherwise; "converged" tightens all four towards round-off (what
#: comparisons at equal accuracy need).
NEWTON_PRESETS: dict[str, dict[str, float]] = {
    "default": {"rtol": 1e-8, "atol": 1e-10, "acc_rtol": 1e-6, "phi_tol": 1e-10},
    "converged": {"rtol": 1e-12, "atol": 1e-14, "acc_rtol": 1e-10, "phi_tol": 1e-12},
}
NEWTON_TOLERANCES = tuple(NEWTON_PRESETS["default"])

#: Iteration-matrix policies of real-time mode (docs/integrators.md, "Real-time mode"):
#: built at the first step and kept, or rebuilt once at the start of every step.
REAL_TIME_MATRIX = ("frozen", "per-step")

#: The parameters of each method (the rest of the alpha family's are derived).
METHOD_OPTIONS: dict[str, frozenset[str]] = {
    "newmark": frozenset({"beta", "gamma"}),
    "hht": frozenset({"alpha"}),
    "generalized-alpha": frozenset({"rho_inf"}),
}
#: Options of the step object (AlphaIntegrator) that simulate() passes on.
STEP_OPTIONS = frozenset({
    "t0", "q0", "qd0", "rtol", "atol", "phi_tol", "max_iter", "h_min", "fd_step",
    "error_tol", "h_max", "acc_rtol", "tangents", "refresh_above", "contact_tol",
    "h_contact", "engine", "on_compile", "formulation", "real_time", "real_time_iterations",
    "real_time_matrix"})
#: Keys of a case file's [solver] table: the method, the step and end time, the outputs,
#: the run's coupling and stiffening overrides, and the step options a user sets.
SOLVER_TABLE_KEYS = frozenset(
    {"method", "h", "t_end", "output_every", "output_times", "coupling", "stiffening",
     "newton"}
    | set().union(*METHOD_OPTIONS.values())
    | (STEP_OPTIONS - {"t0", "q0", "qd0", "fd_step", "refresh_above", "on_compile"}))
#: The allowed values of the enumerated options.
CHOICES: dict[str, tuple[str, ...]] = {
    "method": tuple(METHOD_OPTIONS),
    "coupling": tuple(m.value for m in Coupling),
    "tangents": tuple(t.value for t in Tangents),
    "engine": tuple(e.value for e in Engine),
    "formulation": tuple(f.value for f in Formulation),
    "newton": tuple(NEWTON_PRESETS),
    "real_time_matrix": REAL_TIME_MATRIX,
}
