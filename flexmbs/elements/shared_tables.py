"""The tables every element kind reads: the model's sizes and gravity, the bodies, the
markers, and the pattern of the iteration matrix (docs/compiled.md)."""

from __future__ import annotations

import numpy as np

from .declaration import FLOAT, INT, SCALAR, Field, KindTables

#: Coupling codes of the body table (``b_mode``), by the value of
#: :class:`flexmbs.frame.coupling.Coupling`.
COUPLING_CODES = {"two-way": 0, "one-way": 1, "rigid": 2, "no-Mrf": 3}


def _model(system, ctx):
    return dict(n_q=int(system.n_q), n_c=int(system.n_c),
                gravity=np.asarray(system.model.gravity, dtype=float).copy())


MODEL = KindTables("model", (
    Field("n_q", SCALAR, "coordinates"),
    Field("n_c", SCALAR, "constraint equations"),
    Field("gravity", FLOAT, "(3,) [m/s²]"),
), _model)


def _bodies(system, ctx):
    bodies = system.bodies
    nb = len(bodies)
    b_norm = np.zeros(nb, np.int64)
    for row in system.constraint_rows:
        if row.kind == "norm":
            b_norm[row.body_i] = row.rows.start
    b_kind, b_mode, b_flex = (np.zeros(nb, np.int64), np.zeros(nb, np.int64),
                              np.full(nb, -1, np.int64))
    for f, k in enumerate(ctx.flexible):
        b_kind[k], b_flex[k] = 1, f
        b_mode[k] = COUPLING_CODES[bodies[k].coupling.value]
    return dict(b_kind=b_kind,
                b_start=np.array([s.start for s in system.slices], np.int64).reshape(nb),
                b_nm=np.array(ctx.modes, np.int64).reshape(nb), b_mode=b_mode,
                b_flex=b_flex, b_norm=b_norm)


BODIES = KindTables("bodies", (
    Field("b_kind", INT, "(nb,) 0 rigid, 1 flexible"),
    Field("b_start", INT, "(nb,) first coordinate"),
    Field("b_nm", INT, "(nb,) modes (0 for rigid bodies)"),
    Field("b_mode", INT, "(nb,) coupling code"),
    Field("b_flex", INT, "(nb,) row in the flexible tables, −1 for rigid bodies"),
    Field("b_norm", INT, "(nb,) row of the normalization equation pᵀp − 1"),
), _bodies)


def _markers(system, ctx):
    nk, m = len(ctx.marker_body), ctx.big_m
    return dict(k_body=np.array(ctx.marker_body, np.int64).reshape(nk),
                k_base=np.array(ctx.marker_base, float).reshape(nk, 4, 3),
                k_shapes=np.array(ctx.marker_shapes, float).reshape(nk, 4, 3, m),
                k_psi=np.array(ctx.marker_psi, float).reshape(nk, 3, m),
                k_phi=np.array(ctx.marker_phi, float).reshape(nk, 3, m))


MARKERS = KindTables("markers", (
    Field("k_body", INT, "(nk,) body index, −1 for ground"),
    Field("k_base", FLOAT, "(nk, 4, 3) point and axes at ξ = 0, body frame"),
    Field("k_shapes", FLOAT, "(nk, 4, 3, M) their ξ-derivatives (zero where not seen)"),
    Field("k_psi", FLOAT, "(nk, 3, M) rotational shapes of the angular Jacobian"),
    Field("k_phi", FLOAT, "(nk, 3, M) translational shapes of the force Jacobian"),
), _markers)


def _pattern(system, ctx):
    a = ctx.arrays
    spans = [(int(start), 7 + int(nm)) for start, nm in zip(a["b_start"], a["b_nm"],
                                                             strict=True)]
    pairs = np.array(ctx.pairs, np.int64).reshape(-1, 2)
    top, jac = iteration_pattern(spans, a["k_body"], a["e_row"], a["e_mark"], a["b_norm"],
                                 a["c_row"], a["c_coord"], pairs, sorted(ctx.full_rows))
    return dict(p_row=top[0], p_col=top[1], j_row=jac[0], j_col=jac[1])


PATTERN = KindTables("pattern", (
    Field("p_row", INT, "(np,) rows of the n_q x n_q block M + C_t/… + K_t/… that can be "
                        "nonzero"),
    Field("p_col", INT, "(np,) its columns"),
    Field("j_row", INT, "(nj,) rows of Φ_q"),
    Field("j_col", INT, "(nj,) its columns"),
), _pattern)


def iteration_pattern(spans, k_body, e_row, e_mark, b_norm, c_row, c_coord, a_mark,
                      full_rows=()):
    """((rows, cols) of the n_q x n_q block, (rows, cols) of Φ_q): every entry the
    kernels can write, column-major order.

    ``spans[b]`` = (first coordinate, 7 + modes) of body b. The block holds each body's
    own coordinates against themselves (M, C_t, K_t of the body) and, for every joint,
    drive and every force kind's marker pair (``a_mark``), the coordinates of its two
    bodies against each other (the constraint Hessians and the force tangents). A row
    of Φ_q holds its two bodies' coordinates (joints and drives), the Euler parameters
    of one body (normalization) or one coordinate (coordinate drives). The bodies of
    ``full_rows`` (those a state-dependent callable loads) hold all of q in their rows:
    a callable may read any coordinate."""
    def coords(b):
        start, size = spans[b]
        return np.arange(start, start + size)

    pairs = {(b, b) for b in range(len(spans))}
    for ki, kj in [*e_mark, *a_mark]:
        bi, bj = int(k_body[ki]), int(k_body[kj])
        if bi >= 0 and bj >= 0:
            pairs.update(((bi, bj), (bj, bi)))
    pairs.update((int(b), c) for b in full_rows for c in range(len(spans)))
    top = [np.stack([np.repeat(coords(bi), spans[bj][1]), np.tile(coords(bj), spans[bi][1])])
           for bi, bj in sorted(pairs)]
    rows, cols = [], []  # (Python lists: a row of Φ_q per equation and marker)
    for row, (ki, kj) in zip(e_row.tolist(), np.asarray(e_mark).tolist(), strict=True):
        for k in (ki, kj):
            if k_body[k] >= 0:
                start, size = spans[int(k_body[k])]
                rows.extend([row] * size)
                cols.extend(range(start, start + size))
    for b, row in enumerate(b_norm.tolist()):
        start = spans[b][0]
        rows.extend([row] * 4)
        cols.extend(range(start + 3, start + 7))
    jac = [np.array([rows, cols], dtype=np.int64).reshape(2, -1)] if rows else []
    if c_row.size:
        jac.append(np.stack([c_row, c_coord]))
    return _column_major(top), _column_major(jac)


def _column_major(parts):
    """Unique (rows, cols) of the stacked (2, k) index arrays, sorted by column."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows, cols = np.concatenate(parts, axis=1).astype(np.int64)
    width = int(rows.max()) + 1
    keys = np.sort(cols * width + rows)
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]  # (np.unique, sorted)
    return np.ascontiguousarray(keys % width), np.ascontiguousarray(keys // width)
