"""The spring–damper–actuators' table (docs/compiled.md): markers, stiffness, damping
and free length, and the column of its actuator's force (a time profile or a callable of
the state) in ``u``."""

from __future__ import annotations

import numpy as np

from ..declaration import FLOAT, INT, Field, KindTables

KIND = "spring_damper"


def _build(system, ctx):
    springs = ctx.forces(KIND)
    for f in springs:
        ctx.callable_rows(f, f.marker_i, f.marker_j)
    s_mark = ctx.couple([[ctx.load_marker(f.marker_i), ctx.load_marker(f.marker_j)]
                         for f in springs])
    return dict(
        s_mark=s_mark,
        s_par=np.array([[f.stiffness, f.damping, f.free_length] for f in springs],
                       float).reshape(-1, 3),
        s_act=np.array([ctx.input_column(f) for f in springs], np.int64))



TABLE = KindTables(KIND, (
    Field("s_mark", INT, "(ns, 2) markers i, j"),
    Field("s_par", FLOAT, "(ns, 3) stiffness k [N/m], damping c [N s/m], free length "
                          "L0 [m]"),
    Field("s_act", INT, "(ns,) column of its actuator force in u (a time profile's or a "
                        "callable's), −1 without one"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND)
