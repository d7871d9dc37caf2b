"""The joints' and drives' table (docs/compiled.md): one row per bilinear equation
(joints, rotation and translation drives) and per coordinate drive.

Its markers are the constraint plan's (:attr:`flexmbs.assembly.system.System.constraint_plan`),
added first, so the plan's marker numbering is the table's."""

from __future__ import annotations

import numpy as np

from ...compiled.workspace import Scratch
from ..declaration import FLOAT, INT, Field, KindTables

#: Equation kinds of the bilinear constraint table.
EQ_JOINT, EQ_ROTATION, EQ_TRANSLATION = 0, 1, 2

#: Nonzero bilinear terms an equation may have (the kernels' loop bound).
MAX_PAIRS = 4


def drive_specs(system) -> list:
    """Drive specs in the order of the kernels' profile array (one row (s, ṡ, s̈) each)."""
    return list(system.model.drives)


def _build(system, ctx):
    plan = system.constraint_plan
    for k, _sl, base, shapes in plan.bodies:
        for s_ in range(base.shape[0]):
            ctx.add_marker(k, base[s_], shapes[s_])  # Ψ, Φ unused by constraints
    drives = drive_specs(system)
    index = {id(d): i for i, d in enumerate(drives)}
    ne = plan.pos.size
    e_kind = np.zeros(ne, np.int64)
    e_drive = np.full(ne, -1, np.int64)
    for spec, e in plan.rotation_drives:
        e_kind[e], e_drive[e] = EQ_ROTATION, index[id(spec)]
    for spec, e in plan.translation_drives:
        e_kind[e], e_drive[e] = EQ_TRANSLATION, index[id(spec)]
    coef = plan.coef.reshape(ne, 8, 8)
    e_npairs = np.zeros(ne, np.int64)
    e_pairs = np.zeros((ne, MAX_PAIRS, 2), np.int64)
    for e in range(ne):
        where = [(5, 1), (5, 2)] if e_kind[e] == EQ_ROTATION else [
            (int(a), int(b)) for a, b in zip(*np.nonzero(coef[e]), strict=True)]
        if len(where) > MAX_PAIRS:
            raise ValueError(f"constraint equation {e} has {len(where)} bilinear terms; "
                             f"the kernels take at most {MAX_PAIRS}")
        e_npairs[e] = len(where)
        for p_, pair in enumerate(where):
            e_pairs[e, p_] = pair
    return dict(
        e_coef=np.ascontiguousarray(coef), e_lin=np.ascontiguousarray(plan.lin),
        e_row=plan.pos.astype(np.int64), e_mark=plan.markers.astype(np.int64).reshape(ne, 2),
        e_kind=e_kind, e_drive=e_drive, e_npairs=e_npairs, e_pairs=e_pairs,
        c_row=np.array([r for _, r, _ in plan.coordinate_drives], np.int64),
        c_coord=np.array([c for _, _, c in plan.coordinate_drives], np.int64),
        c_drive=np.array([index[id(s)] for s, _, _ in plan.coordinate_drives], np.int64))


TABLE = KindTables("constraints", (
    Field("e_coef", FLOAT, "(ne, 8, 8) C_k (rotation drives: filled per call from θ_d)"),
    Field("e_lin", FLOAT, "(ne, 8, 3)"),
    Field("e_row", INT, "(ne,) constraint row"),
    Field("e_mark", INT, "(ne, 2) markers i, j"),
    Field("e_kind", INT, "(ne,) EQ_JOINT, EQ_ROTATION, EQ_TRANSLATION"),
    Field("e_drive", INT, "(ne,) drive index (−1 for joints)"),
    Field("e_npairs", INT, "(ne,) nonzero entries of C_k (at most MAX_PAIRS)"),
    Field("e_pairs", INT, "(ne, MAX_PAIRS, 2) their positions (a, b)"),
    Field("c_row", INT, "(ncd,) constraint row of a coordinate drive"),
    Field("c_coord", INT, "(ncd,) its coordinate"),
    Field("c_drive", INT, "(ncd,) its drive index"),
), _build, scratch=(
    Scratch("mk_w", "(nk, 4, 3) Σ_e λ_e ∂Φ_e/∂v_a of each marker's vectors",
            lambda s: np.zeros((s.nk, 4, 3))),
    Scratch("mk_vd", "(nk, 4, 3) the rates J q̇ of each marker's vectors",
            lambda s: np.zeros((s.nk, 4, 3)))))
