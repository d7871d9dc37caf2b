"""The rigid bodies' table (docs/compiled.md): mass, inertia about the body-frame origin
and first moment, one row per body (zeros on flexible bodies' rows)."""

from __future__ import annotations

import numpy as np

from ..declaration import FLOAT, INT, Field, KindTables


def _build(system, ctx):
    nb = len(system.bodies)
    out = dict(r_mass=np.zeros(nb), r_io=np.zeros((nb, 3, 3)), r_s=np.zeros((nb, 3)),
               r_offset=np.zeros(nb, np.int64))
    for k, body in enumerate(system.bodies):
        if k in ctx.flexible:
            continue
        out["r_mass"][k] = body.mass
        out["r_io"][k] = body.inertia_origin
        out["r_s"][k] = body.mass * np.asarray(body.com, dtype=float)
        out["r_offset"][k] = int(body.com_offset)
    return out


TABLE = KindTables("rigid_body", (
    Field("r_mass", FLOAT, "(nb,) [kg]"),
    Field("r_io", FLOAT, "(nb, 3, 3) inertia about the body-frame origin [kg m²]"),
    Field("r_s", FLOAT, "(nb, 3) first moment m c [kg m]"),
    Field("r_offset", INT, "(nb,) 1 when the centre of mass is off the origin"),
), _build)
