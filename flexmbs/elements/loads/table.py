"""The constant loads' tables (docs/compiled.md): point forces and torques at a marker,
and distributed loads on flexible bodies through their integrals (Σw, Σw ū0, Σw Φ)."""

from __future__ import annotations

import numpy as np

from ..declaration import FLOAT, INT, Field, KindTables

POINT, DISTRIBUTED = "point_load", "distributed_load"


def _refusal(force) -> str | None:
    if callable(force.value):
        return f"load {force.name!r} has a callable value"
    return None


def _points(system, ctx):
    loads = ctx.forces(POINT)
    return dict(
        l_mark=np.array([ctx.load_marker(f.marker) for f in loads], np.int64),
        l_kind=np.array([0 if f.kind == "torque" else 1 for f in loads], np.int64),
        l_frame=np.array([1 if f.frame == "marker" else 0 for f in loads], np.int64),
        l_vec=np.array([np.asarray(f.value, dtype=float) for f in loads],
                       float).reshape(-1, 3))


POINT_TABLE = KindTables(POINT, (
    Field("l_mark", INT, "(nl,) marker"),
    Field("l_kind", INT, "(nl,) 0 torque, 1 force"),
    Field("l_frame", INT, "(nl,) 0 global axes, 1 the marker's axes"),
    Field("l_vec", FLOAT, "(nl, 3) value [N] or [N m]"),
), _points, claims=lambda force: getattr(force, "element_kind", None) == POINT,
    refusal=_refusal)


def _distributed(system, ctx):
    fields = ctx.forces(DISTRIBUTED)
    d_shapes = np.zeros((len(fields), 3, ctx.big_m))
    for k, f in enumerate(fields):
        shapes = np.asarray(f.integrals[2], dtype=float)
        d_shapes[k, :, :shapes.shape[1]] = shapes
    return dict(
        d_body=np.array([system.body_index(f.body) for f in fields], np.int64),
        d_frame=np.array([1 if f.frame == "body" else 0 for f in fields], np.int64),
        d_vec=np.array([np.asarray(f.value, float) for f in fields], float).reshape(-1, 3),
        d_total=np.array([float(f.integrals[0]) for f in fields], float),
        d_first=np.array([np.asarray(f.integrals[1], float) for f in fields],
                         float).reshape(-1, 3),
        d_shapes=d_shapes)


DISTRIBUTED_TABLE = KindTables(DISTRIBUTED, (
    Field("d_body", INT, "(ndl,) body index"),
    Field("d_frame", INT, "(ndl,) 0 global axes, 1 body axes"),
    Field("d_vec", FLOAT, "(ndl, 3) load per unit weight"),
    Field("d_total", FLOAT, "(ndl,) Σw"),
    Field("d_first", FLOAT, "(ndl, 3) Σw ū0 [m]"),
    Field("d_shapes", FLOAT, "(ndl, 3, M) Σw Φ"),
), _distributed, claims=lambda force: getattr(force, "element_kind", None) == DISTRIBUTED,
    refusal=_refusal)
