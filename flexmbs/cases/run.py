"""Running a loaded case (:func:`run_case`): its System with the [solver] coupling and
stiffening, and :func:`~flexmbs.integrators.simulate` with its [solver] settings. The
parsing is :mod:`flexmbs.cases.loader`'s."""

from __future__ import annotations

from .._blas import one_blas_thread
from ..errors import FlexmbsError, ModelError, ValidationError
from .case import Case, CaseError


def case_system(case: Case, coupling=None, stiffening=None):
    """The System of a loaded case with its [solver] coupling and stiffening overrides
    (or the given ones); a stiffening switch the modal data cannot honour is a CaseError
    naming it."""
    from ..assembly import System

    coupling = case.solver.get("coupling") if coupling is None else coupling
    stiffening = case.solver.get("stiffening") if stiffening is None else stiffening
    try:
        return System(case.model, coupling=coupling, stiffening=stiffening)
    except ModelError as exc:
        raise CaseError(f"{case.path.name}: [solver] stiffening: {exc}") from None


@one_blas_thread
def run_case(case: Case, progress=None, *, from_equilibrium: bool = False, **options):
    """Simulate a loaded case; returns (System, SimulationResult). ``options`` go to
    :func:`~flexmbs.integrators.simulate` over the case's [solver] table (e.g.
    ``engine="python"``, ``on_compile``).

    ``from_equilibrium``: start at rest (q̇ = 0) in the static equilibrium at the case's
    start time of the very system that is run — with its own coupling mode and
    stiffening (:func:`equilibrium_start`) — instead of the case's initial state."""
    from ..integrators import simulate

    solver = {**case.solver, **options}
    system = case_system(case, solver.pop("coupling", None), solver.pop("stiffening", None))
    if from_equilibrium:
        if "restart" in solver or "q0" in solver:
            raise CaseError(f"{case.path.name}: a start from the static equilibrium cannot "
                            f"be combined with a restart or a given initial state")
        solver.update(equilibrium_start(case, system, float(solver.get("t0", 0.0))))
    t_end, h = float(solver.pop("t_end")), float(solver.pop("h"))
    method = solver.pop("method")
    times = solver.pop("output_times", None)
    if case.controllers:  # [[controllers]]: sampled, driving the bound inputs
        solver.update(controllers=case.controllers, signals=case.signals)
        # every step recorded: the energy balance integrates the power of the held
        # inputs, which jumps at the sample times, over the outputs
        solver["output_every"] = 1
    try:
        result = simulate(system, t_end, h, method, t_out=times, progress=progress,
                          **solver)
    except ValidationError as exc:
        raise CaseError(f"{case.path.name}: [solver]: {exc}") from None
    except ModelError as exc:
        raise CaseError(f"{case.path.name}: {exc}{_advice(system, str(exc))}") from None
    result.case = dict(case.source)
    _continued(case, result, solver.get("restart"))
    earlier = getattr(solver.get("restart"), "settings", None) or {}
    if from_equilibrium or earlier.get("start"):  # said in the results file too
        # (settings, JSON); a continued run carries on the start of the one it continues
        result.settings["start"] = "static equilibrium" if from_equilibrium else \
            earlier["start"]
    return system, result


def _continued(case: Case, result, restart) -> None:
    """A run continued from ``restart`` under another model: another case text than its
    [solver] and [output] tables and notes, or other overrides than the solver.* ones
    (the solver may change at a restart: a later t_end, a smaller step, another method):
    its history before the restart came from the earlier case, which the results then
    record as ``continued_from`` (case text and overrides), with a ModelWarning."""
    import warnings

    from ..errors import ModelWarning

    earlier = getattr(restart, "case", None) or {}
    if not earlier:
        return

    def model_keys(overrides):
        return {k: v for k, v in (overrides or {}).items() if not k.startswith("solver.")}

    def model_tables(text):  # the case less its [solver] and [output] tables and notes
        import tomllib

        try:
            return {k: v for k, v in tomllib.loads(text or "").items()
                    if k not in ("solver", "output", "title", "notes")}
        except tomllib.TOMLDecodeError:
            return text

    changed = [what for what, same in (
        ("the model in the case text",
         model_tables(earlier.get("text")) == model_tables(case.source["text"])),
        ("the overrides", model_keys(earlier.get("overrides")) ==
         model_keys(case.source["overrides"]))) if not same]
    if changed:
        result.case["continued_from"] = {k: earlier.get(k) for k in ("path", "text",
                                                                      "overrides")}
        warnings.warn(f"{case.path.name}: continued from a run of another model "
                      f"({' and '.join(changed)}: not the same): the history up to the "
                      "restart is the earlier model's; the results file records it as "
                      "continued_from", ModelWarning, stacklevel=3)


def equilibrium_start(case: Case, system, t: float = 0.0) -> dict:
    """{"q0", "qd0"}: the static equilibrium of ``system`` (the case's System in the
    coupling mode and stiffening it is run with) at time ``t`` [s] (drives at their
    values there), at rest.

    A coupling mode changes the equilibrium: one-way and rigid frames see their bodies
    undeformed, and a rigid body has no modal sag, so each mode starts from its own rest
    state, not from another mode's (docs/studies.md, "Starting from equilibrium"). A
    model that has no equilibrium raises ConvergenceError naming the case and the
    unbalanced coordinates."""
    import numpy as np

    from ..analysis import static_equilibrium
    from ..errors import ConvergenceError

    try:
        rest = static_equilibrium(system, t)
    except ConvergenceError as exc:
        raise ConvergenceError(f"{case.path.name}: no start from the static equilibrium: "
                               f"{exc}") from None
    return {"q0": rest.q, "qd0": np.zeros_like(rest.q)}


def _advice(system, message: str) -> str:
    """The model check's advice on redundant equations, when a run was refused and the
    refusal does not carry it already ("" otherwise)."""
    try:
        report = system.check()
    except FlexmbsError:
        return ""
    if not report.redundant or report.advice in message:
        return ""
    return f"; {report.advice}"
