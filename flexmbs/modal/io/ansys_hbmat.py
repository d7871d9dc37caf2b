"""Ansys MAPDL matrices as text: HBMAT Harwell–Boeing files and their mapping files, and
the matrices in MAPDL's equation order that every MAPDL route yields.

``HBMAT`` writes an assembled matrix of the ``.full`` file as Harwell–Boeing text (type
RSA: the lower triangle; RUA: both, which must agree) and, with ``Mapping=YES``, a
``.mapping`` file that names each matrix equation's node and DOF label. The constrained
equations are left out. scipy's Harwell–Boeing reader takes neither RSA, a right-hand-side
section nor Fortran ``D`` exponents, so the text is parsed here (docs/modal_data_formats.md,
Ansys MAPDL).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ...errors import ReadError

#: MAPDL DOF reference numbers of the structural DOFs and their labels.
DOF_LABELS = {1: "UX", 2: "UY", 3: "UZ", 4: "ROTX", 5: "ROTY", 6: "ROTZ"}
LABEL_DOFS = {v: k for k, v in DOF_LABELS.items()}
#: Both stored triangles of an RUA Harwell–Boeing matrix must agree to this.
TRIANGLE_RTOL = 1e-9


def _exists(path: Path, what: str) -> None:
    if not path.exists():
        raise ReadError(f"{what} file {str(path)!r} does not exist")
    if path.is_dir():
        raise ReadError(f"{what} file {str(path)!r} is a directory")


def _symmetric(rows, cols, values, n: int, path: Path, what: str) -> sp.csr_matrix:
    """The symmetric matrix of one stored triangle (either triangle: each entry is put
    above the diagonal first)."""
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    rows, cols = np.minimum(rows, cols), np.maximum(rows, cols)
    key = rows * n + cols
    uniq, counts = np.unique(key, return_counts=True)
    if np.any(counts > 1):
        k = int(uniq[counts > 1][0])
        raise ReadError(f"{path}: the {what} matrix stores entry (equation {k // n + 1}, "
                        f"equation {k % n + 1}) twice; expected one triangle of a "
                        "symmetric matrix")
    upper = sp.coo_matrix((values, (rows, cols)), shape=(n, n)).tocsr()
    return (upper + sp.triu(upper, 1).T).tocsr()


@dataclass
class AnsysMatrices:
    """Matrices in MAPDL's equation order: equation e is DOF ``dofs[e]`` (1-6) of node
    ``nodes[e]``; ``constrained[e]`` flags constrained equations (``.full`` only);
    ``stiffness``/``mass`` symmetric CSR; provenance in ``info``."""

    nodes: np.ndarray
    dofs: np.ndarray
    stiffness: sp.csr_matrix
    mass: sp.csr_matrix
    constrained: np.ndarray
    paths: tuple[Path, ...]
    info: dict = field(default_factory=dict)


_FORMAT = re.compile(r"^\(\s*(\d*)\s*(?:\d*P\s*,?\s*)?([IEDFG])\s*(\d+)(?:\.\d+)?"
                     r"(?:E\d+)?\s*\)$", re.IGNORECASE)


def _field_width(text: str, path: Path, what: str) -> tuple[int, int]:
    """(items per line, field width) of a Fortran format such as ``(4E20.12)``."""
    match = _FORMAT.match(text.strip().replace(" ", ""))
    if match is None:
        raise ReadError(f"{path}, line 4: cannot read the {what} format {text.strip()!r} "
                        "(expected e.g. (8I10) or (4E20.12))")
    return int(match.group(1) or 1), int(match.group(3))


_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([EeDd][+-]?\d+)?$")


def _fields(lines, first: int, width: int) -> list[tuple[str, int]]:
    """The items of ``lines`` (numbered from ``first``) with their line numbers: the
    blank-separated tokens, or, on a line whose tokens are not all numbers (Fortran
    fields that run together), the fixed-width fields of the format."""
    out = []
    for k, line in enumerate(lines):
        text = line.rstrip("\r\n")
        tokens = text.split()
        if not all(_NUMBER.match(t) for t in tokens):
            tokens = [text[i:i + width].strip() for i in range(0, len(text), width)]
        out.extend((item, first + k) for item in tokens if item)
    return out


def read_hbmat(path: str | os.PathLike, what: str = "matrix") -> tuple[sp.csr_matrix, str]:
    """Read a Harwell–Boeing text file as MAPDL's ``HBMAT`` writes it: real assembled
    matrices, symmetric (``RSA``, one triangle) or unsymmetric (``RUA``, both triangles,
    which must agree); a right-hand side section is skipped; Fortran ``D`` exponents are
    read. Returns the symmetric CSR matrix and its type code. ReadError naming the file,
    the line and the value on a bad header or entry."""
    path = Path(path)
    _exists(path, f"Harwell-Boeing {what}")
    try:
        lines = path.read_text(encoding="ascii", errors="strict").splitlines()
    except (UnicodeDecodeError, OSError) as exc:
        raise ReadError(f"{path}: not a Harwell-Boeing text file ({exc}); write it with "
                        "HBMAT,...,ASCII") from None
    if len(lines) < 4:
        raise ReadError(f"{path}: {len(lines)} line(s); a Harwell-Boeing file has a header "
                        "of 4 or 5 lines")
    counts = lines[1].split()
    try:
        counts = [int(v) for v in counts]
    except ValueError:
        counts = []
    if len(counts) not in (4, 5):
        raise ReadError(f"{path}, line 2: {lines[1].strip()!r}: expected the line counts "
                        "TOTCRD PTRCRD INDCRD VALCRD [RHSCRD]")
    ptrcrd, indcrd, valcrd = counts[1:4]
    rhscrd = counts[4] if len(counts) == 5 else 0
    mxtype = lines[2][:3].upper()
    sizes = lines[2][3:].split()
    try:
        nrow, ncol, nnz = (int(v) for v in sizes[:3])
    except ValueError:
        nrow = ncol = nnz = -1
    if len(sizes) < 3 or nrow < 0:
        raise ReadError(f"{path}, line 3: {lines[2].strip()!r}: expected MXTYPE NROW NCOL "
                        "NNZERO [NELTVL]")
    if len(mxtype) != 3 or mxtype[0] != "R" or mxtype[2] != "A" or mxtype[1] not in "SU":
        raise ReadError(f"{path}, line 3: matrix type {mxtype!r}; flexmbs reads real "
                        "assembled matrices, symmetric (RSA) or unsymmetric (RUA)")
    if nrow != ncol:
        raise ReadError(f"{path}, line 3: the matrix is {nrow} x {ncol}; a mass or "
                        "stiffness matrix is square")
    fmt = lines[3]
    ptr_fmt, ind_fmt, val_fmt = fmt[0:16], fmt[16:32], fmt[32:52]
    start = 5 if rhscrd > 0 else 4
    need = start + ptrcrd + indcrd + valcrd + rhscrd
    if len(lines) < need - rhscrd:
        raise ReadError(f"{path}: {len(lines)} lines, but the header (line 2) announces "
                        f"{need} ({start} header, {ptrcrd} pointer, {indcrd} index, {valcrd} "
                        f"value, {rhscrd} right-hand side lines)")
    sections = []
    pos = start
    for count, text, name in ((ptrcrd, ptr_fmt, "pointer"), (indcrd, ind_fmt, "index"),
                              (valcrd, val_fmt, "value")):
        _, width = _field_width(text, path, name)
        sections.append(_fields(lines[pos:pos + count], pos + 1, width))
        pos += count
    pointers = _numbers(sections[0], int, path, "column pointer")
    indices = _numbers(sections[1], int, path, "row index")
    values = _numbers(sections[2], float, path, "value")
    if pointers.size != ncol + 1 or indices.size != nnz or values.size != nnz:
        raise ReadError(f"{path}: {pointers.size} column pointers, {indices.size} row "
                        f"indices and {values.size} values; the header (line 3) announces "
                        f"{ncol + 1}, {nnz} and {nnz}")
    if pointers[0] != 1 or pointers[-1] != nnz + 1 or np.any(np.diff(pointers) < 0):
        raise ReadError(f"{path}: the column pointers must rise from 1 to NNZERO + 1 = "
                        f"{nnz + 1}; got {pointers[0]} … {pointers[-1]}")
    bad = np.flatnonzero((indices < 1) | (indices > nrow))
    if bad.size:
        item, line = sections[1][int(bad[0])]
        raise ReadError(f"{path}, line {line}: row index {item} is outside 1..{nrow}")
    cols = np.repeat(np.arange(ncol), np.diff(pointers))
    rows = indices - 1
    if mxtype[1] == "S":
        both = np.any(rows < cols) and np.any(rows > cols)
        if both:
            raise ReadError(f"{path}: a symmetric (RSA) matrix stores one triangle, but this "
                            "file has entries above and below the diagonal")
        lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
        return _symmetric(lo, hi, values, nrow, path, what), mxtype
    mat = sp.coo_matrix((values, (rows, cols)), shape=(nrow, ncol)).tocsr()
    diff = abs(mat - mat.T)
    scale = float(abs(mat).max()) if mat.nnz else 0.0
    if diff.nnz and diff.max() > TRIANGLE_RTOL * scale:
        r, c = (int(v) for v in np.unravel_index(np.argmax(diff.toarray()), mat.shape))
        raise ReadError(f"{path}: the unsymmetric (RUA) {what} matrix is not symmetric: "
                        f"entry ({r + 1}, {c + 1}) = {mat[r, c]:.9g} but ({c + 1}, {r + 1}) = "
                        f"{mat[c, r]:.9g}")
    return (0.5 * (mat + mat.T)).tocsr(), mxtype


def _numbers(items, kind, path: Path, what: str) -> np.ndarray:
    out = []
    for item, line in items:
        try:
            value = kind(item.replace("D", "E").replace("d", "e")) if kind is float \
                else int(item)
        except ValueError:
            raise ReadError(f"{path}, line {line}: {what} {item!r} is not "
                            f"{'a number' if kind is float else 'an integer'}") from None
        if kind is float and not np.isfinite(value):
            raise ReadError(f"{path}, line {line}: {what} {item!r} is not finite")
        out.append(value)
    return np.asarray(out, dtype=float if kind is float else np.int64)


def read_mapping(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read an HBMAT ``.mapping`` file: (node labels, DOF numbers 1-6) of equations 1…n.

    Heading lines (not starting with an integer) are allowed before the first data line;
    each data line is ``equation node label``. ReadError naming the file, the line, its
    content and what was expected."""
    path = Path(path)
    _exists(path, "HBMAT mapping")
    try:
        lines = path.read_text(encoding="utf-8", errors="strict").splitlines()
    except (UnicodeDecodeError, OSError) as exc:
        raise ReadError(f"{path}: not a text file ({exc})") from None
    entries: dict[int, tuple[int, int, int]] = {}
    started = False
    for lineno, raw in enumerate(lines, start=1):
        parts = raw.split()
        if not parts:
            continue
        if not started and not re.fullmatch(r"[+-]?\d+", parts[0]):
            continue  # heading
        started = True
        if len(parts) != 3:
            raise ReadError(f"{path}, line {lineno}: {raw.strip()!r} has {len(parts)} "
                            "field(s); expected 3: equation number, node number, DOF "
                            "label (UX UY UZ ROTX ROTY ROTZ)")
        try:
            eq, node = int(parts[0]), int(parts[1])
        except ValueError:
            raise ReadError(f"{path}, line {lineno}: {raw.strip()!r}: equation "
                            f"{parts[0]!r} and node {parts[1]!r} must be integers") from None
        label = parts[2].upper()
        if label not in LABEL_DOFS:
            raise ReadError(f"{path}, line {lineno}: node {node}: DOF label {parts[2]!r} is "
                            "not a structural DOF; expected UX UY UZ ROTX ROTY ROTZ")
        if eq < 1 or node < 1:
            raise ReadError(f"{path}, line {lineno}: {raw.strip()!r}: equation {eq} and "
                            f"node {node} must be positive")
        if eq in entries:
            raise ReadError(f"{path}, line {lineno}: equation {eq} is listed twice (first "
                            f"on line {entries[eq][2]})")
        entries[eq] = (node, LABEL_DOFS[label], lineno)
    if not entries:
        raise ReadError(f"{path}: no mapping lines 'equation node DOF' found")
    n = max(entries)
    if len(entries) != n:
        missing = sorted(set(range(1, n + 1)) - set(entries))
        raise ReadError(f"{path}: equation {missing[0]} is not listed ({len(missing)} of "
                        f"1..{n} missing)")
    seen: dict[tuple[int, int], int] = {}
    for eq in range(1, n + 1):
        node, dof, lineno = entries[eq]
        if (node, dof) in seen:
            raise ReadError(f"{path}, line {lineno}: node {node} {DOF_LABELS[dof]} is "
                            f"mapped twice (equations {seen[(node, dof)]} and {eq})")
        seen[(node, dof)] = eq
    table = np.array([entries[e][:2] for e in range(1, n + 1)], dtype=np.int64)
    return table[:, 0], table[:, 1]


def mapping_path(matrix: str | os.PathLike) -> Path:
    """``Fname.mapping`` beside an HBMAT file ``Fname.Ext`` (HBMAT's naming)."""
    matrix = Path(matrix)
    return matrix.with_suffix(".mapping")


def read_hbmat_pair(mass, stiffness, mass_mapping=None, stiffness_mapping=None
                    ) -> AnsysMatrices:
    """Mass and stiffness HBMAT files with their mapping files (default: ``Fname.mapping``
    beside each), put on one equation order (the stiffness file's)."""
    k_path, m_path = Path(stiffness), Path(mass)
    k_map = Path(stiffness_mapping) if stiffness_mapping else mapping_path(k_path)
    m_map = Path(mass_mapping) if mass_mapping else mapping_path(m_path)
    k_mat, k_type = read_hbmat(k_path, "stiffness")
    m_mat, m_type = read_hbmat(m_path, "mass")
    nodes, dofs = read_mapping(k_map)
    if (m_map.resolve() == k_map.resolve()):
        m_nodes, m_dofs = nodes, dofs
    else:
        m_nodes, m_dofs = read_mapping(m_map)
    for mat, mp, fpath in ((k_mat, k_map, k_path), (m_mat, m_map, m_path)):
        size = nodes.size if mp == k_map else m_nodes.size
        if mat.shape[0] != size:
            raise ReadError(f"{fpath}: {mat.shape[0]} equations, but its mapping file {mp} "
                            f"lists {size}")
    k_index = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(nodes, dofs, strict=True))}
    if set(k_index) != set(zip(m_nodes.tolist(), m_dofs.tolist(), strict=True)):
        extra = sorted(set(zip(m_nodes.tolist(), m_dofs.tolist(), strict=True))
                       ^ set(k_index))[0]
        raise ReadError(f"{m_map} and {k_map} do not map the same DOFs: node {extra[0]} "
                        f"{DOF_LABELS[extra[1]]} is in one only")
    perm = np.array([k_index[(int(a), int(b))] for a, b in zip(m_nodes, m_dofs, strict=True)])
    p = sp.csr_matrix((np.ones(perm.size), (perm, np.arange(perm.size))),
                      shape=(perm.size, perm.size))
    m_mat = (p @ m_mat @ p.T).tocsr()
    info = {"format": "ansys-hbmat", "matrix_types": {"mass": m_type, "stiffness": k_type},
            "mapping_files": {"mass": str(m_map), "stiffness": str(k_map)}}
    return AnsysMatrices(nodes, dofs, k_mat, m_mat, np.zeros(nodes.size, dtype=bool),
                         (m_path, k_path), info)
