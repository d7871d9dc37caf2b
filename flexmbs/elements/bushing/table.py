"""The bushings' table (docs/compiled.md, docs/multibody.md "Bushings"): the two markers
and the six stiffnesses, dampings and preloads along marker i's axes."""

from __future__ import annotations

import numpy as np

from ...compiled.workspace import Scratch
from ..declaration import FLOAT, INT, CaseForm, Field, KindTables
from . import FIELDS, Bushing

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
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND, scratch=(
    Scratch("bu_vec", "(3, 8, 3) the markers' vectors V, their rates J q̇, the weights",
            lambda s: np.zeros((3, 8, 3))),
    Scratch("bu_e", "(3, 6) the deformation e, its rate ė, the load s",
            lambda s: np.zeros((3, 6))),
    Scratch("bu_grad", "(2, 6, 2(7+M)) ∇e and ∂ė/∂q over both markers' bodies",
            lambda s: np.zeros((2, 6, s.pair))),
    Scratch("bu_rate", "(8, 3, 2(7+M)) ∂(J_a q̇)/∂q of the eight vectors",
            lambda s: np.zeros((8, 3, s.pair))),
    Scratch("bu_blk", "(2, 2(7+M), 2(7+M)) the K and C blocks of a bushing",
            lambda s: np.zeros((2, s.pair, s.pair)))),
    case_form=CaseForm("bushing", Bushing, {"i": "marker_i", "j": "marker_j",
                                            **{key: key for key in FIELDS}},
                       required=("i", "j")))
