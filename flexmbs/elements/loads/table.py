"""The loads' tables (docs/compiled.md): point forces and torques at a marker, and
distributed loads on flexible bodies through their integrals (Σw, Σw ū0, Σw Φ); their
value a constant or a callable of the state (three columns of ``u``, "Callables")."""

from __future__ import annotations

import numpy as np

from ..declaration import FLOAT, INT, Field, KindTables

POINT, DISTRIBUTED = "point_load", "distributed_load"



def _constant(force) -> np.ndarray:
    """A load's constant value (zeros for a callable's, whose value comes from u)."""
    return np.zeros(3) if callable(force.value) else np.asarray(force.value, dtype=float)


def _points(system, ctx):
    loads = ctx.forces(POINT)
    for f in loads:
        ctx.callable_rows(f, f.marker)
    return dict(
        l_col=np.array([ctx.input_column(f) for f in loads], np.int64),
        l_mark=np.array([ctx.load_marker(f.marker) for f in loads], np.int64),
        l_kind=np.array([0 if f.kind == "torque" else 1 for f in loads], np.int64),
        l_frame=np.array([1 if f.frame == "marker" else 0 for f in loads], np.int64),
        l_vec=np.array([_constant(f) for f in loads], float).reshape(-1, 3))


POINT_TABLE = KindTables(POINT, (
    Field("l_mark", INT, "(nl,) marker"),
    Field("l_kind", INT, "(nl,) 0 torque, 1 force"),
    Field("l_frame", INT, "(nl,) 0 global axes, 1 the marker's axes"),
    Field("l_col", INT, "(nl,) first of its three columns in u when its value is a "
                        "callable of the state, else −1"),
    Field("l_vec", FLOAT, "(nl, 3) value [N] or [N m] (a constant's)"),
), _points, claims=lambda force: getattr(force, "element_kind", None) == POINT)


def _distributed(system, ctx):
    fields = ctx.forces(DISTRIBUTED)
    for f in fields:
        if callable(f.value):
            ctx.full_rows.add(int(system.body_index(f.body)))
    d_shapes = np.zeros((len(fields), 3, ctx.big_m))
    for k, f in enumerate(fields):
        shapes = np.asarray(f.integrals[2], dtype=float)
        d_shapes[k, :, :shapes.shape[1]] = shapes
    return dict(
        d_body=np.array([system.body_index(f.body) for f in fields], np.int64),
        d_frame=np.array([1 if f.frame == "body" else 0 for f in fields], np.int64),
        d_col=np.array([ctx.input_column(f) for f in fields], np.int64),
        d_vec=np.array([_constant(f) for f in fields], float).reshape(-1, 3),
        d_total=np.array([float(f.integrals[0]) for f in fields], float),
        d_first=np.array([np.asarray(f.integrals[1], float) for f in fields],
                         float).reshape(-1, 3),
        d_shapes=d_shapes)


DISTRIBUTED_TABLE = KindTables(DISTRIBUTED, (
    Field("d_body", INT, "(ndl,) body index"),
    Field("d_frame", INT, "(ndl,) 0 global axes, 1 body axes"),
    Field("d_col", INT, "(ndl,) first of its three columns in u when its value is a "
                        "callable of the state, else −1"),
    Field("d_vec", FLOAT, "(ndl, 3) load per unit weight (a constant's)"),
    Field("d_total", FLOAT, "(ndl,) Σw"),
    Field("d_first", FLOAT, "(ndl, 3) Σw ū0 [m]"),
    Field("d_shapes", FLOAT, "(ndl, 3, M) Σw Φ"),
), _distributed, claims=lambda force: getattr(force, "element_kind", None) == DISTRIBUTED)
