"""The bushings' table (docs/compiled.md, docs/multibody.md "Bushings"): the two markers
and the six stiffnesses, dampings and preloads along marker i's axes."""

from __future__ import annotations

import numpy as np

from ..declaration import FLOAT, INT, Field, KindTables

KIND = "bushing"


def _build(system, ctx):
    bushings = ctx.forces(KIND)
    bu_mark = ctx.couple([[ctx.load_marker(f.marker_i), ctx.load_marker(f.marker_j)]
                          for f in bushings])
    return dict(
        bu_mark=bu_mark,
        bu_k=np.array([f.stiffness6 for f in bushings], float).reshape(-1, 6),
        bu_c=np.array([f.damping6 for f in bushings], float).reshape(-1, 6),
        bu_f0=np.array([f.preload6 for f in bushings], float).reshape(-1, 6))


TABLE = KindTables(KIND, (
    Field("bu_mark", INT, "(nu, 2) markers i, j"),
    Field("bu_k", FLOAT, "(nu, 6) stiffness along and about x_i, y_i, z_i [N/m ×3, "
                         "N m/rad ×3]"),
    Field("bu_c", FLOAT, "(nu, 6) damping [N s/m ×3, N m s/rad ×3]"),
    Field("bu_f0", FLOAT, "(nu, 6) preload on marker j along i's axes [N ×3, N m ×3]"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND)
