"""Matrix Market reader of raw FE mass and stiffness matrices, returned as
:class:`FEModel` (SI).

One job: read a mass and a stiffness ``.mtx`` file (with :func:`scipy.io.mmread`, which
handles ``symmetric`` storage) and the node file that gives their node coordinates and
labels (:func:`~.fe_nodes.read_nodes`), in :func:`read_matrix_market`. User
documentation: ``docs/modal_data_formats.md``.

DOF order: node-major ``[u0x, u0y, u0z, (r0x, r0y, r0z,) u1x, ...]`` — 3 DOFs per node,
or 6 with rotations — in the row order of the node file. The layout is n_dof / N unless
``dofs_per_node`` is given; an unconstrained stiffness whose rigid translations show the
other layout is refused (:func:`_check_layout`).

Units: ``units`` names the unit system of all three files; coordinates and matrices are
converted to SI by :func:`~.fe_nodes.to_si` (rotations in radians).

All errors are :class:`~flexmbs.errors.ReadError` naming the file and, where there is
one, the line number and its content (caller mistakes such as an unknown unit system or
a bad ``dofs_per_node`` are :class:`~flexmbs.errors.ValidationError`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from ...errors import ReadError, ValidationError
from ..femodel import FEModel
from ..units import get_units
from .fe_nodes import _build, _exists, _lines, _resolve_sets, read_nodes


def _locate_mm_problem(path: Path) -> str | None:
    """Find the first line of a Matrix Market file that breaks the format, as text."""
    lines = _lines(path)
    if not lines or not lines[0].lower().startswith("%%matrixmarket"):
        head = lines[0] if lines else ""
        return f"line 1: {head!r} is not a '%%MatrixMarket matrix ...' header"
    header = lines[0].lower().split()
    layout = header[2] if len(header) > 2 else ""
    field = header[3] if len(header) > 3 else ""
    size = None
    count = 0
    for lineno, raw in enumerate(lines[1:], start=2):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        parts = line.split()
        if size is None:
            want = 3 if layout == "coordinate" else 2
            if len(parts) != want or not all(p.isdigit() for p in parts):
                return (f"line {lineno}: size line {line!r} should hold {want} non-negative "
                        "integers")
            size = [int(p) for p in parts]
            continue
        count += 1
        if layout == "coordinate":
            want = 2 if field == "pattern" else (4 if field == "complex" else 3)
            ok = len(parts) == want and all(p.isdigit() for p in parts[:2])
            if ok:
                i, j = int(parts[0]), int(parts[1])
                ok = 1 <= i <= size[0] and 1 <= j <= size[1]
                if not ok:
                    return (f"line {lineno}: entry {line!r} lies outside the declared "
                            f"{size[0]} x {size[1]} matrix")
        else:
            want = 2 if field == "complex" else 1
            ok = len(parts) == want
        if ok and field != "pattern":
            try:
                values = [float(p) for p in (parts[2:] if layout == "coordinate" else parts)]
            except ValueError:
                ok = False
            else:
                if not all(np.isfinite(values)):
                    return f"line {lineno}: entry {line!r} is not a finite number"
        if not ok:
            return f"line {lineno}: cannot read matrix entry {line!r}"
    if size is None:
        return "no size line after the header"
    if layout == "coordinate" and count != size[2]:
        return f"the size line declares {size[2]} entries, the file holds {count}"
    return None


def _mmread(path: Path, what: str) -> sp.csr_matrix:
    _exists(path, f"{what} matrix")
    try:
        mat = scipy.io.mmread(str(path))
    except Exception as exc:  # scipy raises ValueError, IndexError, ... on bad files
        where = _locate_mm_problem(path)
        raise ReadError(f"{path}: not a readable Matrix Market file"
                        + (f", {where}" if where else "") + f" ({type(exc).__name__}: {exc})"
                        ) from exc
    mat = sp.csr_matrix(mat)
    if not np.all(np.isfinite(mat.data)):
        raise ReadError(f"{path}: the {what} matrix holds a value that is not finite, "
                        f"{_locate_mm_problem(path) or 'after reading'}")
    if np.iscomplexobj(mat.data):
        raise ReadError(f"{path}: the {what} matrix is complex; expected a real matrix")
    if mat.shape[0] != mat.shape[1]:
        raise ReadError(f"{path}: the {what} matrix is {mat.shape[0]} x {mat.shape[1]}; it "
                        "must be square")
    return mat.astype(float)


#: A DOF layout is "rigid" when ‖K t‖ ≤ this · ‖K‖_F ‖t‖ for the unit translations t of
#: that layout along x, y and z (round-off of assembled FE stiffness is ~1e-15).
LAYOUT_NULL_RTOL = 1e-9
#: ... and "not rigid" when one of them exceeds this (a wrong layout gives 1e-5 or more).
LAYOUT_MOVES_RTOL = 1e-6


def _translation_residual(k_mat, dpn: int) -> float:
    """Largest ‖K t‖ / (‖K‖_F ‖t‖) over the rigid translations t along x, y, z of the
    layout with ``dpn`` DOFs per node (ones at that component of every node)."""
    n_dof = k_mat.shape[0]
    norm = float(np.sqrt(np.sum(np.abs(sp.csr_matrix(k_mat).data) ** 2)))
    if n_dof % dpn or norm == 0.0:
        return float("inf")
    worst = 0.0
    for comp in range(3):
        t = np.zeros(n_dof)
        t[comp::dpn] = 1.0
        worst = max(worst, float(np.linalg.norm(k_mat @ t)) / (norm * np.sqrt(t.sum())))
    return worst


def _check_layout(k_mat, dpn: int, n_nodes: int, stiff_path: Path, nodes_path: Path):
    """Refuse the layout the node count implies when the stiffness says otherwise.

    n_dof = 84 with 14 nodes reads as 6 DOFs per node, but 84 is also 28 nodes x 3. An
    unconstrained stiffness leaves its layout's rigid translations without force: when
    the other layout's translations are force-free and this one's are not, the node file
    and the matrices disagree, and the user must say which layout is meant (with a
    constrained stiffness neither reading is force-free and the node count decides)."""
    other = 9 - dpn  # 3 <-> 6
    n_dof = k_mat.shape[0]
    if n_dof % other:
        return
    if (_translation_residual(k_mat, other) <= LAYOUT_NULL_RTOL
            and _translation_residual(k_mat, dpn) >= LAYOUT_MOVES_RTOL):
        raise ReadError(
            f"{stiff_path}: cannot tell the DOF layout: {n_dof} x {n_dof} matrices with the "
            f"{n_nodes} nodes of {nodes_path} read as {dpn} DOFs per node, but the "
            f"stiffness moves the rigid translations of that reading and leaves those of "
            f"{other} DOFs per node ({n_dof // other} nodes) force-free. Give the layout "
            f"explicitly (--dofs-per-node / dofs_per_node={other} with a node file of "
            f"{n_dof // other} nodes, or {dpn} to keep this reading)")


def read_matrix_market(mass: str | os.PathLike, stiffness: str | os.PathLike,
                       nodes: str | os.PathLike, *, units: str | None = None,
                       dofs_per_node: int | None = None, node_sets=None,
                       material=None) -> FEModel:
    """Read FE mass and stiffness from Matrix Market files and nodes from a node file.

    Parameters
    ----------
    mass, stiffness : path-like
        ``.mtx`` files (coordinate or array, ``general`` or ``symmetric``), in node-major
        DOF order following the node file's row order.
    nodes : path-like
        CSV ``id,x,y,z`` (or ``x,y,z``, ids 1..N) or Abaqus ``.inp``; see :func:`read_nodes`.
    units : str, optional
        Unit system of the files (converted to SI); default SI.
    dofs_per_node : {3, 6}, optional
        Default: n_dof / N, which must be 3 or 6; when an unconstrained stiffness shows
        the other layout instead (its rigid translations force-free, these not), a
        ReadError asks for ``dofs_per_node`` (see :func:`_check_layout`).
    node_sets : dict[str, sequence of int], optional
        Named node sets as node *labels* (ids of the node file); added to ``*NSET`` sets.
    material : dict, optional
        Isotropic material ``{"E": ..., "nu": ...}`` of the solid elements (E in the
        files' stress unit), stored as ``metadata["material"]`` (SI): with the
        ``*ELEMENT`` blocks of an ``.inp`` node file it lets
        :func:`flexmbs.modal.stiffening.with_stiffening` compute geometric stiffening.
    """
    get_units(units)  # an unknown unit system is the caller's error, raised before reading
    mass_path, stiff_path = Path(mass), Path(stiffness)
    m_mat = _mmread(mass_path, "mass")
    k_mat = _mmread(stiff_path, "stiffness")
    table = read_nodes(nodes)
    if m_mat.shape != k_mat.shape:
        raise ReadError(f"{mass_path} is {m_mat.shape[0]} x {m_mat.shape[1]} but {stiff_path} "
                        f"is {k_mat.shape[0]} x {k_mat.shape[1]}; mass and stiffness must "
                        "have the same size")
    n_dof, n_nodes = m_mat.shape[0], table.ids.size
    if dofs_per_node is not None:
        if dofs_per_node not in (3, 6):
            raise ValidationError(f"read_matrix_market: dofs_per_node must be 3 or 6, got "
                                  f"{dofs_per_node!r}")
        if n_dof != dofs_per_node * n_nodes:
            raise ReadError(
                f"{mass_path}: the matrices are {n_dof} x {n_dof}, but {table.path} has "
                f"{n_nodes} nodes x {dofs_per_node} DOFs = {dofs_per_node * n_nodes}")
        dpn = dofs_per_node
    else:
        if n_dof % n_nodes or n_dof // n_nodes not in (3, 6):
            raise ReadError(
                f"{mass_path}: the matrices are {n_dof} x {n_dof}, but {table.path} has "
                f"{n_nodes} nodes: {n_dof} / {n_nodes} = {n_dof / n_nodes:.6g} DOFs per node, "
                "expected 3 or 6")
        dpn = n_dof // n_nodes
        _check_layout(k_mat, dpn, n_nodes, stiff_path, table.path)
    sets, _ = _resolve_sets(table, node_sets)
    files = (mass_path, stiff_path, table.path)
    meta = {"format": "matrix-market",
            "source_files": {"mass": str(mass_path), "stiffness": str(stiff_path),
                             "nodes": str(table.path)}}
    return _build(table, m_mat, k_mat, units=units, dpn=dpn, sets=sets, metadata=meta,
                  files=files, material=material)

