"""The rotational spring–dampers' table (docs/compiled.md): torque about z_i on marker
j with its reaction on i. Their angle memories (``System.unwrap``) follow this order in
the workspace."""

from __future__ import annotations

import numpy as np

from ..declaration import FLOAT, INT, Field, KindTables

KIND = "rotational_spring"


def _build(system, ctx):
    springs = ctx.forces(KIND)
    t_mark = ctx.couple([[ctx.load_marker(f.marker_i), ctx.load_marker(f.marker_j)]
                         for f in springs])
    return dict(t_mark=t_mark,
                t_par=np.array([[f.stiffness, f.damping, f.angle0] for f in springs],
                               float).reshape(-1, 3))


TABLE = KindTables(KIND, (
    Field("t_mark", INT, "(nt, 2) markers i, j"),
    Field("t_par", FLOAT, "(nt, 3) stiffness k [N m/rad], damping c [N m s/rad], angle "
                          "θ0 [rad]"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND)
