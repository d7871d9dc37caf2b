"""The options of a run, named once: what :func:`~flexmbs.integrators.simulate` takes,
what a case file's ``[solver]`` table may hold, and the values of the enumerated ones
(docs/integrators.md, docs/case_files.md). The case reader, ``simulate()`` and the CLI
take their key lists and choices from here instead of each keeping its own."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import Enum
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..errors import AccuracyWarning, ValidationError
from ..frame.coupling import Coupling

#: Default ``refresh_above`` with analytic tangents. A fresh matrix converges in 2
#: iterations and an older one in 3–7; rebuilding before a step once the previous one
#: needed 5 or more was the cheapest of 1 (every step) … 5 and "only on slow
#: convergence" for the arm and pendulum benchmarks, where a build costs 5–7 residual
#: evaluations (benchmarks/README.md).
REFRESH_ABOVE = 4
#: The default from the order n_q + n_c = :data:`REFRESH_LARGE_FROM` on: a build costs
#: more residuals there (the compiled engine factors sparse from that order, with
#: SuperLU), and rebuilding after steps of 7 or more iterations was the cheapest of
#: 4 … 8 on chains of 16, 64 and 256 flexible bodies (13–25 % less stepping than 4;
#: docs/integrators.md).
REFRESH_ABOVE_LARGE = 6
#: The order of a "large" model for the rebuild policy: the compiled engine's
#: :data:`~flexmbs.engine.compiled_system.SPARSE_FROM`, kept apart so that the policy is
#: the model's, whichever factorization runs (both engines take the same steps).
REFRESH_LARGE_FROM = 150


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


def apply_newton_preset(options: dict) -> str:
    """Take the ``newton`` preset out of ``options`` (a run's or a stepped simulation's
    settings) and fill in its tolerances where none is given (explicit ones win); the
    preset's name. ValidationError naming an unknown preset."""
    newton = options.pop("newton", "default")
    if newton not in NEWTON_PRESETS:
        raise ValidationError(f"newton must be one of {list(NEWTON_PRESETS)}, got "
                              f"{newton!r}")
    for key, value in NEWTON_PRESETS[newton].items():
        options.setdefault(key, value)
    return newton


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


#: Numbers of [solver] / simulate(): finite floats (the method's parameters, whose
#: ranges the method checks), and positive ones (steps, times and tolerances).
_FLOATS = ("alpha", "rho_inf", "beta", "gamma")
_POSITIVE = ("h", "t_end", "h_contact", "contact_tol", "rtol", "atol", "phi_tol",
             "acc_rtol", "h_min", "h_max", "error_tol")
_COUNTS = ("max_iter", "output_every", "real_time_iterations")
_FLAGS = ("real_time", "stiffening")
_ENUMS = {"coupling": Coupling, "tangents": Tangents, "engine": Engine,
          "formulation": Formulation}


@dataclass(frozen=True, eq=False)
class SolverOptions(Mapping):
    """The options of a run, validated once: a case file's ``[solver]`` table
    (``Case.solver``), the keywords of :func:`~flexmbs.integrators.simulate` and the
    command line's overrides (docs/case_files.md, docs/integrators.md). Every field is
    None when not given (the run's default then applies); the enumerated ones hold their
    Enums. It is also a read-only mapping of the options given, with the enumerated
    ones as their text, so that ``simulate(system, **{...})`` and the results' settings
    take it as they took the table: ``{**case.solver, "engine": "python"}``; it equals
    a mapping of the same options. Every value is checked when it is made (ValidationError
    naming the key and the value); :meth:`replace` gives a changed copy."""

    method: str = "generalized-alpha"
    h: float | None = None
    t_end: float | None = None
    output_every: int | None = None
    output_times: Any = None
    coupling: Coupling | None = None
    stiffening: bool | None = None
    newton: str | None = None
    engine: Engine | None = None
    tangents: Tangents | None = None
    formulation: Formulation | None = None
    real_time: bool | None = None
    real_time_iterations: int | None = None
    real_time_matrix: str | None = None
    rtol: float | None = None
    atol: float | None = None
    phi_tol: float | None = None
    acc_rtol: float | None = None
    max_iter: int | None = None
    h_min: float | None = None
    h_max: float | None = None
    error_tol: float | None = None
    h_contact: float | None = None
    contact_tol: float | None = None
    alpha: float | None = None
    beta: float | None = None
    gamma: float | None = None
    rho_inf: float | None = None

    def __post_init__(self):
        given = {item.name: getattr(self, item.name) for item in fields(self)
                 if getattr(self, item.name) is not None}
        for key, value in SolverOptions._validated(given).items():
            object.__setattr__(self, key, value)
        # the mapping of the options given, made once (the enumerated ones as text)
        object.__setattr__(self, "_table", {
            item.name: (value.value if isinstance(value, Enum) else value)
            for item in fields(self) if (value := getattr(self, item.name)) is not None})

    @staticmethod
    def _validated(table: Mapping, error=None) -> dict:
        """The options of ``table`` checked, the enumerated ones as their Enums."""
        error = error or (lambda key, message: ValidationError(f"{key} {message}"))
        values = dict(table)
        method = values.setdefault("method", "generalized-alpha")
        if not isinstance(method, str) or method not in METHOD_OPTIONS:
            _raise(error("method", f"must be one of {sorted(METHOD_OPTIONS)}, got "
                                   f"{method!r}"))
        wrong = sorted(set().union(*METHOD_OPTIONS.values()) & set(values)
                       - METHOD_OPTIONS[method])
        if wrong:
            _raise(error(wrong[0], f"does not apply to method {method!r} (it takes "
                                   f"{sorted(METHOD_OPTIONS[method])})"))
        return {key: _checked(key, value, error) for key, value in values.items()}

    @classmethod
    def from_table(cls, table: Mapping, error=None) -> SolverOptions:
        """Validated options from ``table`` (a [solver] table or keywords).
        ``error(key, message)`` makes the exception to raise (default: a
        ValidationError naming the key); it names the key and the value."""
        error = error or (lambda key, message: ValidationError(f"{key} {message}"))
        unknown = sorted(set(table) - set(SOLVER_TABLE_KEYS))
        if unknown:
            return _raise(error(unknown[0], f"is not a solver option (they are: "
                                            f"{sorted(SOLVER_TABLE_KEYS)})"))
        return cls(**cls._validated(table, error))

    def replace(self, **changes) -> SolverOptions:
        """A copy with ``changes`` (None removes an option), validated again."""
        table = {**self, **changes}
        return SolverOptions.from_table({k: v for k, v in table.items() if v is not None})

    def __getitem__(self, key):
        return self._table[key]

    def __iter__(self):
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


def _raise(exc):
    raise exc


def _checked(key: str, value, error):
    """``value`` of option ``key`` checked (and an enumerated one as its Enum)."""
    bad = None
    real = not isinstance(value, bool) and isinstance(value, Real)
    if key in _POSITIVE:
        if not (real and math.isfinite(value) and value > 0):
            bad = "must be a positive number"
        else:
            value = float(value)
    elif key in _FLOATS:
        if not (real and math.isfinite(value)):
            bad = "must be a finite number"
        else:
            value = float(value)
    elif key in _COUNTS:
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
            bad = "must be an integer >= 1"
        else:
            value = int(value)
    elif key == "output_times":
        times = np.asarray(value, dtype=object).ravel() if isinstance(
            value, (list, tuple, np.ndarray)) else None
        if times is None or times.size == 0 or not all(
                not isinstance(t, bool) and isinstance(t, Real) and math.isfinite(t)
                for t in times):
            bad = "must be a non-empty list of finite times [s]"
        else:
            value = tuple(float(t) for t in times)
    elif key in _FLAGS:
        if not isinstance(value, bool):
            bad = "must be true or false"
    elif key in CHOICES and key != "method":
        if not isinstance(value, str) or value not in CHOICES[key]:
            *first, last = CHOICES[key]
            bad = f"must be {', '.join(first)} or {last}"
        elif key in _ENUMS:
            value = _ENUMS[key](value)
    if bad is not None:
        _raise(error(key, f"{bad}, got {value!r}"))
    return value
