"""The spring–damper–actuators' table (docs/compiled.md): markers, stiffness, damping
and free length, and the column of an actuator's time profile in ``u``."""

from __future__ import annotations

import numpy as np

from ..declaration import FLOAT, INT, Field, KindTables

KIND = "spring_damper"


def _build(system, ctx):
    springs = ctx.forces(KIND)
    s_mark = ctx.couple([[ctx.load_marker(f.marker_i), ctx.load_marker(f.marker_j)]
                         for f in springs])
    return dict(
        s_mark=s_mark,
        s_par=np.array([[f.stiffness, f.damping, f.free_length] for f in springs],
                       float).reshape(-1, 3),
        s_act=np.array([ctx.input_column(f) for f in springs], np.int64))


def _refusal(force) -> str | None:
    if force.actuator_depends_on_state:
        return f"spring-damper {force.name!r} has a state-dependent actuator callable"
    return None


TABLE = KindTables(KIND, (
    Field("s_mark", INT, "(ns, 2) markers i, j"),
    Field("s_par", FLOAT, "(ns, 3) stiffness k [N/m], damping c [N s/m], free length "
                          "L0 [m]"),
    Field("s_act", INT, "(ns,) column of its actuator force in u, −1 without one"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND,
    refusal=_refusal)
