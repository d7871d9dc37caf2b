"""The joint actuators' table (docs/compiled.md): actuators whose value is a time
profile (:class:`flexmbs.model.forces.JointActuator` with ``profile``), whose values u(t)
come per time level as columns of ``u``, or a callable of the state, whose values Python
writes into ``u`` at every Newton iterate ("Callables"); and which columns of ``u`` are
such callables."""

from __future__ import annotations

import numpy as np

from ..declaration import INT, Field, KindTables

KIND = "joint_actuator"


def _build(system, ctx):
    acts = ctx.forces(KIND)
    a_mark = ctx.couple([[ctx.load_marker(f.marker_i), ctx.load_marker(f.marker_j)]
                         for f in acts])
    for f in acts:
        ctx.callable_rows(f, f.marker_i, f.marker_j)
    return dict(a_kind=np.array([0 if f.kind == "torque" else 1 for f in acts], np.int64),
                a_mark=a_mark, u_call=np.array(ctx.input_state, np.int64))


TABLE = KindTables(KIND, (
    Field("a_kind", INT, "(na,) 0 torque about z_i, 1 force along z_i"),
    Field("a_mark", INT, "(na, 2) markers i, j"),
    Field("u_call", INT, "(n_u,) 1 where the column of u is a state-dependent callable's "
                         "(its derivative rows in the workspace's cb_du), else 0"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND)
