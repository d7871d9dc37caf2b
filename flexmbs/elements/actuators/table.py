"""The joint actuators' table (docs/compiled.md): actuators whose value is a time
profile (:class:`flexmbs.model.forces.JointActuator` with ``profile``); their values u(t)
come per time level as columns of ``u``."""

from __future__ import annotations

import numpy as np

from ..declaration import INT, Field, KindTables

KIND = "joint_actuator"


def _build(system, ctx):
    acts = ctx.forces(KIND)
    a_mark = ctx.couple([[ctx.load_marker(f.marker_i), ctx.load_marker(f.marker_j)]
                         for f in acts])
    return dict(a_kind=np.array([0 if f.kind == "torque" else 1 for f in acts], np.int64),
                a_mark=a_mark)


def _refusal(force) -> str | None:
    if getattr(force, "profile", None) is None:
        return f"joint actuator {force.name!r} has a state-dependent callable"
    return None


TABLE = KindTables(KIND, (
    Field("a_kind", INT, "(na,) 0 torque about z_i, 1 force along z_i"),
    Field("a_mark", INT, "(na, 2) markers i, j"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND,
    refusal=_refusal)
