"""Abaqus readers and writer of raw FE mass and stiffness matrices, returned as
:class:`FEModel` (SI).

One job: Abaqus matrix text files written by ``*MATRIX GENERATE`` + ``*MATRIX OUTPUT``,
read with the node file that gives their node coordinates and labels
(:func:`~.fe_nodes.read_nodes`) by :func:`read_abaqus`, and written by
:func:`write_abaqus_matrix`. User documentation: ``docs/modal_data_formats.md``.

* ``FORMAT=MATRIX INPUT`` (the default, :func:`read_abaqus_matrix`): one entry per line,
  ``row node, row DOF, column node, column DOF, value``; DOFs 1-3 are translations,
  4-6 rotations; only one triangle of the symmetric matrix is written (both triangles
  are accepted if they agree to :data:`TRIANGLE_RTOL`). Abaqus writes internal nodes
  (Lagrange multipliers of hybrid elements, connectors, distributing couplings ...)
  with node label 0 or negative labels; those cannot be mapped to physical nodes and
  are rejected.
* ``FORMAT=COORDINATE`` (:func:`read_abaqus_coordinate`): ``row, column, value`` in
  Abaqus' global equation numbering (nodes in ascending label, each with its DOFs
  together), the equations mapped to the node file's labels.
* ``*SUBSTRUCTURE MATRIX OUTPUT`` files are recognised and rejected with a message.

Abaqus DOF map: ``dofs_per_node`` is 6 when any DOF above 3 appears in either matrix,
else 3. Nodes of the node file that appear in neither matrix (reference points, unused
nodes, nodes outside the generated element set) are dropped and listed in
``metadata["dropped_nodes"]``. A kept node whose DOF appears in neither matrix (e.g. the
rotations of solid nodes in a mixed solid/shell model, with 6 DOFs per node) would be a
zero row and column in both matrices, which makes the eigenproblems of the reduction
singular; that is an error unless ``allow_missing_dofs=True``, which keeps the zero rows
and lists them in ``metadata["missing_dofs"]`` (the caller must then eliminate them).

Units: ``units`` names the unit system of all three files; coordinates and matrices are
converted to SI by :func:`~.fe_nodes.to_si` (rotations in radians). The writer writes
the matrix as given (no unit conversion).

All errors are :class:`~flexmbs.errors.ReadError` naming the file and, where there is
one, the line number and its content (an unknown unit system is a
:class:`~flexmbs.errors.ValidationError`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..._files import write_text
from ...errors import ReadError
from ..femodel import FEModel
from ..units import get_units
from .fe_nodes import (
    _SPLIT,
    LARGEST_LABEL,
    _build,
    _exists,
    _label,
    _lines,
    _resolve_sets,
    read_nodes,
)

#: Both stored triangles of an Abaqus matrix must agree to this relative tolerance.
TRIANGLE_RTOL = 1e-6


class AbaqusEntries(NamedTuple):
    """Entries of an Abaqus ``FORMAT=MATRIX INPUT`` matrix file, one per data line."""

    row_node: np.ndarray  # int64 node labels
    row_dof: np.ndarray  # int64, 1..6
    col_node: np.ndarray
    col_dof: np.ndarray
    value: np.ndarray  # float64
    line: np.ndarray  # int64 line numbers (for messages)
    path: Path


_INTERNAL = ("is an Abaqus internal node (a Lagrange multiplier of hybrid elements, "
             "connectors, MPCs or couplings); flexmbs needs matrices on physical nodes "
             "only: remove those constraints/elements or condense them out before export")


def _is_coordinate_format(path: Path) -> bool:
    """Whether an Abaqus matrix file is FORMAT=COORDINATE (3 fields per data line);
    False for a file that cannot be read (the reader then says why)."""
    if not path.is_file():
        return False
    try:
        lines = _lines(path)
    except ReadError:
        return False
    for raw in lines:
        line = raw.strip()
        if line and not line.startswith("*"):
            return len([f for f in _SPLIT.split(line) if f]) == 3
    return False


def read_abaqus_coordinate(path, node_ids, dofs_per_node: int | None = None
                           ) -> AbaqusEntries:
    """Read an Abaqus ``*MATRIX OUTPUT, FORMAT=COORDINATE`` file (``row, column, value``,
    1-based global equation numbers) as entries with node labels and DOFs.

    Abaqus numbers the equations node by node in ascending node label with the node's
    DOFs together, so equation e is DOF (e − 1) mod d + 1 of the ((e − 1) div d)-th
    label of ``node_ids`` sorted; d (``dofs_per_node``, 3 or 6) is the number of
    equations over the number of nodes when not given."""
    path = Path(path)
    _exists(path, "Abaqus matrix")
    triplets, numbers = [], []
    for lineno, raw in enumerate(_lines(path), start=1):
        line = raw.strip()
        if not line or line.startswith("*"):
            continue
        fields = [f for f in _SPLIT.split(line) if f]
        if len(fields) != 3:
            raise ReadError(f"{path}, line {lineno}: {line!r}: a FORMAT=COORDINATE file has "
                            f"3 fields per line (row, column, value)")
        row, col = _label(fields[0]), _label(fields[1])
        try:
            value = float(fields[2].replace("D", "E").replace("d", "e"))
        except ValueError:
            value = float("nan")
        if row is None or col is None or row < 1 or col < 1 or not np.isfinite(value):
            raise ReadError(f"{path}, line {lineno}: cannot read {line!r} (expected "
                            f"equation numbers ≥ 1 and a finite value)")
        triplets.append((row, col, value))
        numbers.append(lineno)
    if not triplets:
        raise ReadError(f"{path}: no matrix entries found")
    arr = np.array(triplets, dtype=float)
    rows, cols = arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64)
    labels = np.sort(np.asarray(node_ids, dtype=np.int64))
    n_eq = int(max(rows.max(), cols.max()))
    if dofs_per_node is None:
        fits = [d for d in (3, 6) if n_eq == d * labels.size]
        if not fits:
            raise ReadError(f"{path}: the matrix has {n_eq} equations, but the node file "
                            f"has {labels.size} nodes: neither 3 nor 6 DOFs per node "
                            f"({n_eq / labels.size:.4g}); a FORMAT=COORDINATE matrix must "
                            f"cover every node of the node file")
        dofs_per_node = fits[0]
    if n_eq > dofs_per_node * labels.size:
        raise ReadError(f"{path}: equation {n_eq} is beyond {labels.size} nodes x "
                        f"{dofs_per_node} DOFs")
    node = labels[(np.concatenate([rows, cols]) - 1) // dofs_per_node]
    dof = (np.concatenate([rows, cols]) - 1) % dofs_per_node + 1
    n = rows.size
    return AbaqusEntries(node[:n], dof[:n], node[n:], dof[n:], arr[:, 2],
                         np.asarray(numbers, dtype=np.int64), path)


def parse_abaqus_line(path: Path, lineno: int, line: str):
    fields = [f for f in _SPLIT.split(line) if f]
    if len(fields) == 3:
        raise ReadError(
            f"{path}, line {lineno}: {line!r} has 3 fields (row, column, value): this is "
            "Abaqus FORMAT=COORDINATE; read it with read_abaqus (which maps the equation "
            "numbers to the node file's labels)")
    if len(fields) != 5:
        raise ReadError(f"{path}, line {lineno}: cannot read {line!r}; expected 5 fields: "
                        "row node, row DOF, column node, column DOF, value")
    ints = [_label(f) for f in fields[:4]]
    if any(v is None for v in ints):
        raise ReadError(f"{path}, line {lineno}: node labels and DOFs must be integers "
                        f"(at most {LARGEST_LABEL}) in {line!r}")
    try:
        value = float(fields[4].replace("D", "E").replace("d", "e"))
    except ValueError:
        raise ReadError(f"{path}, line {lineno}: matrix entry {fields[4]!r} is not a number "
                        f"(line {line!r})") from None
    return (*ints, value)


def read_abaqus_matrix(path: str | os.PathLike) -> AbaqusEntries:
    """Read the entries of an Abaqus matrix file (``*MATRIX OUTPUT``, FORMAT=MATRIX INPUT).

    Lines starting with ``*`` (headings, ``**`` comments) are skipped. Node labels must
    be positive and DOFs 1..6; the entries are returned as stored (one triangle,
    usually), with their line numbers.
    """
    path = Path(path)
    _exists(path, "Abaqus matrix")
    rows: list[tuple] = []
    numbers: list[int] = []
    for lineno, raw in enumerate(_lines(path), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("*"):
            upper = line.upper().replace(" ", "")
            if upper.startswith("*MATRIX,") and "TYPE=" in upper:
                raise ReadError(f"{path}, line {lineno}: {line!r}: this is a *SUBSTRUCTURE "
                                "MATRIX OUTPUT file (retained-DOF substructure matrices), "
                                "not a *MATRIX OUTPUT file of the full model; not supported")
            continue
        rows.append(parse_abaqus_line(path, lineno, line))
        numbers.append(lineno)
    if not rows:
        raise ReadError(f"{path}: no matrix entries found (expected lines 'row node, row DOF, "
                        "column node, column DOF, value')")
    arr = np.array([r[:4] for r in rows], dtype=np.int64)
    value = np.array([r[4] for r in rows], dtype=float)
    line = np.asarray(numbers, dtype=np.int64)
    bad = np.flatnonzero((arr[:, 0] <= 0) | (arr[:, 2] <= 0))
    if bad.size:
        k = int(bad[0])
        label = int(arr[k, 0] if arr[k, 0] <= 0 else arr[k, 2])
        raise ReadError(f"{path}, line {line[k]}: node label {label} {_INTERNAL} "
                        f"({bad.size} entries use such nodes)")
    bad = np.flatnonzero((arr[:, 1] < 1) | (arr[:, 1] > 6) | (arr[:, 3] < 1) | (arr[:, 3] > 6))
    if bad.size:
        k = int(bad[0])
        dof = int(arr[k, 1] if not 1 <= arr[k, 1] <= 6 else arr[k, 3])
        raise ReadError(f"{path}, line {line[k]}: DOF {dof} is not a structural DOF (1-3 "
                        "translations, 4-6 rotations); other fields (temperature, pressure, "
                        "warping) are not supported")
    bad = np.flatnonzero(~np.isfinite(value))
    if bad.size:
        k = int(bad[0])
        raise ReadError(f"{path}, line {line[k]}: matrix entry {value[k]} is not finite")
    return AbaqusEntries(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], value, line, path)


def _symmetric_from_entries(e: AbaqusEntries, index: dict[int, int], dpn: int,
                            n_dof: int) -> tuple[sp.csr_matrix, str]:
    """Assemble a symmetric matrix from one (or both agreeing) stored triangles."""
    row = np.array([index[int(v)] for v in e.row_node], dtype=np.int64) * dpn + e.row_dof - 1
    col = np.array([index[int(v)] for v in e.col_node], dtype=np.int64) * dpn + e.col_dof - 1
    lo, hi = np.maximum(row, col), np.minimum(row, col)
    key = lo * n_dof + hi
    order = np.argsort(key, kind="stable")
    ks = key[order]
    same = ks[1:] == ks[:-1]
    value = e.value.copy()
    drop = np.zeros(key.size, dtype=bool)
    scale = float(np.max(np.abs(value))) if value.size else 0.0
    if np.any(same):
        triple = same[1:] & same[:-1]
        if np.any(triple):
            k = int(np.flatnonzero(triple)[0])
            lines = sorted(int(e.line[order[k + i]]) for i in range(3))
            raise ReadError(f"{e.path}: lines {lines}: the same matrix position is given "
                            "three times or more")
        for i in np.flatnonzero(same):
            a, b = int(order[i]), int(order[i + 1])
            mirrored = row[a] != col[a] and row[a] == col[b] and col[a] == row[b]
            if not mirrored:
                raise ReadError(
                    f"{e.path}: lines {e.line[a]} and {e.line[b]} give the same entry (node "
                    f"{e.row_node[a]} DOF {e.row_dof[a]}, node {e.col_node[a]} DOF "
                    f"{e.col_dof[a]}) twice")
            va, vb = value[a], value[b]
            if abs(va - vb) > TRIANGLE_RTOL * max(abs(va), abs(vb)) + 1e-12 * scale:
                raise ReadError(
                    f"{e.path}: both triangles are stored but disagree: line {e.line[a]} has "
                    f"{va:.9g} and line {e.line[b]} (the mirrored entry) has {vb:.9g}")
            value[a] = 0.5 * (va + vb)
            drop[b] = True
    keep = ~drop
    lo, hi, value = lo[keep], hi[keep], value[keep]
    below = int(np.sum(row[keep] > col[keep]))
    above = int(np.sum(row[keep] < col[keep]))
    triangle = ("diagonal" if below == above == 0 else "both" if np.any(same)
                else "lower" if above == 0 else "upper" if below == 0 else "mixed")
    off = lo != hi
    coo = sp.coo_matrix((np.concatenate([value, value[off]]),
                         (np.concatenate([lo, hi[off]]), np.concatenate([hi, lo[off]]))),
                        shape=(n_dof, n_dof))
    return coo.tocsr(), triangle


def read_abaqus(mass: str | os.PathLike, stiffness: str | os.PathLike,
                nodes: str | os.PathLike, *, units: str | None = None, node_sets=None,
                allow_missing_dofs: bool = False, material=None) -> FEModel:
    """Read Abaqus ``*MATRIX OUTPUT`` mass and stiffness files and a node file.

    Parameters
    ----------
    mass, stiffness : path-like
        ``jobname_MASS<n>.mtx`` and ``jobname_STIF<n>.mtx`` (FORMAT=MATRIX INPUT).
    nodes : path-like
        Abaqus ``.inp`` (``*NODE``, ``*NSET``) or CSV ``id,x,y,z``; see :func:`read_nodes`.
    units : str, optional
        Unit system of the model (converted to SI); default SI.
    node_sets : dict[str, sequence of int], optional
        Extra node sets as node labels (the ``*NSET`` sets of an ``.inp`` are read too).
    allow_missing_dofs : bool
        Keep DOFs that appear in neither matrix as zero rows/columns (listed in
        ``metadata["missing_dofs"]``) instead of raising (see the module docstring).
    material : dict, optional
        Isotropic material of the solid elements, as in :func:`read_matrix_market`.

    Returns
    -------
    FEModel
        ``dofs_per_node`` 6 if any DOF 4-6 appears, else 3; nodes appearing in neither
        matrix are dropped (``metadata["dropped_nodes"]``).
    """
    get_units(units)
    coordinate = [_is_coordinate_format(Path(f)) for f in (mass, stiffness)]
    if not any(coordinate):  # the matrices first, as their errors are the likelier
        m_e, k_e = read_abaqus_matrix(mass), read_abaqus_matrix(stiffness)
    table = read_nodes(nodes)
    if any(coordinate):
        m_e, k_e = (read_abaqus_coordinate(f, table.ids) if c else read_abaqus_matrix(f)
                    for f, c in zip((mass, stiffness), coordinate, strict=True))
    for e, what in ((m_e, "mass"), (k_e, "stiffness")):
        for labels in (e.row_node, e.col_node):
            missing = np.flatnonzero(~np.isin(labels, table.ids))
            if missing.size:
                k = int(missing[0])
                raise ReadError(f"{e.path}, line {e.line[k]}: the {what} matrix uses node label "
                                f"{int(labels[k])}, which {table.path} does not define")
    dpn = 6 if max(m_e.row_dof.max(), m_e.col_dof.max(), k_e.row_dof.max(),
                   k_e.col_dof.max()) > 3 else 3
    used = np.unique(np.concatenate([m_e.row_node, m_e.col_node, k_e.row_node, k_e.col_node]))
    keep = np.flatnonzero(np.isin(table.ids, used))
    dropped = [int(v) for v in table.ids[~np.isin(table.ids, used)]]
    kept = table._replace(ids=table.ids[keep], coords=table.coords[keep],
                          defined_ids=table.ids)
    index = {int(v): i for i, v in enumerate(kept.ids)}
    n_dof = dpn * kept.ids.size
    present = np.zeros(n_dof, dtype=bool)
    for e in (m_e, k_e):
        for labels, dofs in ((e.row_node, e.row_dof), (e.col_node, e.col_dof)):
            present[np.array([index[int(v)] for v in labels]) * dpn + dofs - 1] = True
    missing_dofs = [[int(kept.ids[i // dpn]), int(i % dpn + 1)]
                    for i in np.flatnonzero(~present)]
    if missing_dofs and not allow_missing_dofs:
        shown = ", ".join(f"node {n} DOF {d}" for n, d in missing_dofs[:6])
        raise ReadError(
            f"{m_e.path} / {k_e.path}: {len(missing_dofs)} DOF(s) appear in neither matrix "
            f"({shown}{', ...' if len(missing_dofs) > 6 else ''}); with {dpn} DOFs per node "
            "they would be zero rows in both matrices (e.g. rotations of solid nodes in a "
            "mixed solid/shell/beam model). Pass allow_missing_dofs=True to keep them as zero "
            "rows and eliminate them before reduction")
    m_mat, m_tri = _symmetric_from_entries(m_e, index, dpn, n_dof)
    k_mat, k_tri = _symmetric_from_entries(k_e, index, dpn, n_dof)
    sets, partial = _resolve_sets(table, node_sets, keep=keep)
    meta = {"format": "abaqus-matrix",
            "source_files": {"mass": str(m_e.path), "stiffness": str(k_e.path),
                             "nodes": str(table.path)},
            "stored_triangle": {"mass": m_tri, "stiffness": k_tri}}
    if dropped:
        meta["dropped_nodes"] = dropped
    if partial:
        meta["node_sets_with_dropped_nodes"] = partial
    if missing_dofs:
        meta["missing_dofs"] = missing_dofs
    return _build(kept, m_mat, k_mat, units=units, dpn=dpn, sets=sets, metadata=meta,
                  files=(m_e.path, k_e.path, table.path), material=material)


def write_abaqus_matrix(matrix, path: str | os.PathLike, node_ids, dofs_per_node: int, *,
                        triangle: str = "lower") -> None:
    """Write a symmetric matrix in Abaqus FORMAT=MATRIX INPUT text (for tests and exchange).

    ``triangle`` is ``"lower"``, ``"upper"`` or ``"both"``; zero entries are omitted.
    """
    coo = sp.coo_matrix(matrix)
    ids = np.asarray(node_ids, dtype=np.int64)
    sel = {"lower": coo.row >= coo.col, "upper": coo.row <= coo.col,
           "both": np.ones(coo.nnz, dtype=bool)}[triangle] & (coo.data != 0)
    order = np.lexsort((coo.col[sel], coo.row[sel]))
    r, c, v = coo.row[sel][order], coo.col[sel][order], coo.data[sel][order]
    write_text(path, "".join(f"{ids[i // dofs_per_node]},{i % dofs_per_node + 1}, "
                             f"{ids[j // dofs_per_node]},{j % dofs_per_node + 1}, {x:.16e}\n"
                             for i, j, x in zip(r, c, v, strict=True)), "matrix file")
