"""A System as the kernels' flat tables (docs/compiled.md, "Where the arrays come from").

Each element kind declares and fills its own tables (:mod:`flexmbs.elements.registry`);
this module sorts the model's forces into the kinds that claim them, says why the
kernels cannot evaluate a model, and builds the tables in the registry's order.
"""

from __future__ import annotations

from ..elements.constraints.table import drive_specs
from ..elements.declaration import TableContext
from ..elements.registry import BUILD_ORDER, FORCE_KINDS, Tables
from ..elements.shared_tables import iteration_pattern

__all__ = ["Tables", "compile_tables", "drive_specs", "forces_by_kind", "iteration_pattern",
           "time_inputs", "torsion_springs", "unsupported_reason"]


def _claimant(force):
    for kind in FORCE_KINDS:
        if kind.claims(force):
            return kind
    return None


def _force_reason(system) -> str | None:
    for force in system.model.forces:
        kind = _claimant(force)
        if kind is None:
            return f"force {force.name!r} ({type(force).__name__})"
        reason = kind.refusal(force)
        if reason is not None:
            return reason
    return None


def unsupported_reason(system) -> str | None:
    """Why the kernels cannot evaluate ``system`` (None: they can): a force no element
    kind claims, or flexible data without the general invariant set. (Forces whose
    value is a state-dependent callable run compiled, their values asked of Python at
    every Newton iterate: docs/compiled.md, "Callables".)"""
    reason = _force_reason(system)
    if reason is not None:
        return reason
    for body in system.bodies:
        if hasattr(body, "data") and body.data.invariants.N is None:
            return f"flexible body {body.name!r} has no general invariant set"
    return None


def forces_by_kind(system) -> dict[str, list]:
    """The model's forces sorted by the element kind that claims them (model order
    within a kind), or {} when a force the kernels cannot evaluate is present."""
    if _force_reason(system) is not None:
        return {}
    out: dict[str, list] = {}
    for force in system.model.forces:
        out.setdefault(_claimant(force).kind, []).append(force)
    return out


def torsion_springs(system) -> list:
    """The forces whose angle memories (``System.unwrap``) the kernels keep in the
    workspace, in its order: the rotational spring–dampers, then the joint servos."""
    kinds = forces_by_kind(system)
    return [*kinds.get("rotational_spring", []), *kinds.get("joint_servo", [])]


def time_inputs(system, kinds: dict | None = None) -> list:
    """The forces whose value the kernels take as numbers from ``u``, in the order of
    its columns: the joint actuators, the spring–damper–actuators with an actuator (a
    time profile or a callable), then the point loads and the distributed loads whose
    value is a callable (three columns each), in model order within each (``kinds``:
    :func:`forces_by_kind`, if at hand). A time profile's column is set once per time
    level; a state-dependent callable's at every Newton iterate (docs/compiled.md,
    "Callables")."""
    kinds = forces_by_kind(system) if kinds is None else kinds
    springs = kinds.get("spring_damper", [])
    loads = [f for kind in ("point_load", "distributed_load") for f in kinds.get(kind, [])
             if callable(f.value)]
    return [*kinds.get("joint_actuator", []), *[s for s in springs if s.actuator is not None],
            *loads]


def compile_tables(system) -> Tables:
    """Flat arrays of ``system`` (call :func:`unsupported_reason` first)."""
    kinds = forces_by_kind(system)
    ctx = TableContext(system, kinds, time_inputs(system, kinds))
    for kind in BUILD_ORDER:
        arrays = kind.build(system, ctx)
        if set(arrays) != set(kind.names):
            raise AssertionError(f"element kind {kind.kind!r} built {sorted(arrays)}, "
                                 f"declared {sorted(kind.names)}")
        ctx.arrays.update(arrays)
    return Tables(**ctx.arrays)

