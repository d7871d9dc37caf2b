"""The joint servos' table (docs/compiled.md): their markers, gains, gear and limit, and
the row of the time-level array (after the drives' rows) holding each servo's reference
θ_ref, θ̇_ref and offset torque (:class:`flexmbs.model.servos.JointServo`). Their angle
memories follow the rotational spring–dampers' in the workspace."""

from __future__ import annotations

import numpy as np

from ...compiled.workspace import Scratch
from ..constraints.table import drive_specs
from ..declaration import FLOAT, INT, Field, KindTables

KIND = "joint_servo"


def servo_rows(system, servos) -> list[int]:
    """The time-level rows of ``servos``' references: after the drives', in order."""
    first = len(drive_specs(system))
    return [first + s for s in range(len(servos))]


def _build(system, ctx):
    servos = ctx.forces(KIND)
    v_mark = ctx.couple([[ctx.load_marker(f.marker_i), ctx.load_marker(f.marker_j)]
                         for f in servos])
    v_par = np.array([[f.kp, f.kd, f.ratio, f.efficiency, f.reflected_inertia, f.limit]
                      for f in servos], float).reshape(-1, 6)
    return dict(v_kind=np.array([0 if f.kind == "torque" else 1 for f in servos], np.int64),
                v_mark=v_mark, v_par=v_par,
                v_row=np.array(servo_rows(system, servos), np.int64))


TABLE = KindTables(KIND, (
    Field("v_kind", INT, "(nv,) 0: the angle of a revolute joint (a torque about z_i), "
                         "1: the displacement of a prismatic joint (a force along z_i)"),
    Field("v_mark", INT, "(nv, 2) markers i, j"),
    Field("v_par", FLOAT, "(nv, 6) kp [N m/rad or N/m], kd [N m s/rad or N s/m], gear "
                          "ratio n [rad/rad or rad/m], efficiency η, reflected inertia "
                          "n² J_m [kg m² or kg], motor torque limit [N m]"),
    Field("v_row", INT, "(nv,) row of the time-level array with (θ_ref, θ̇_ref, offset "
                        "torque)"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND, scratch=(
    Scratch("sv_q", "(2, n_q) q moved along q̇, a unit rate (the rotors' exact tangents)",
            lambda s: np.zeros((2, s.n_q))),
    Scratch("sv_rows", "(5, 2(7+M)) g = ∂θ̇/∂q̇, ∂θ̇/∂q, ∂(g·q̈)/∂q, ∂(q̇ᵀ(∂g/∂q)q̇)/∂q, "
            "(∂g/∂q) q̇ over a servo's two bodies", lambda s: np.zeros((5, s.pair))),
    Scratch("sv_h", "(2(7+M), 2(7+M)) ∂g/∂q", lambda s: np.zeros((s.pair, s.pair)))))
