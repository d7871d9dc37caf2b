"""Readers of raw FE mass and stiffness matrices, returned as :class:`FEModel` (SI).

Two sources, each paired with a node file that gives the coordinates and labels:

* **Matrix Market** ``.mtx`` files (read with :func:`scipy.io.mmread`, which handles
  ``symmetric`` storage) in node-major DOF order ``[u0x, u0y, u0z, (r0x, r0y, r0z,)
  u1x, ...]`` — 3 DOFs per node, or 6 with rotations — in the row order of the node file.
* **Abaqus** matrix text files written by ``*MATRIX GENERATE`` + ``*MATRIX OUTPUT`` in
  the default ``FORMAT=MATRIX INPUT``: one entry per line,
  ``row node, row DOF, column node, column DOF, value``; DOFs 1-3 are translations,
  4-6 rotations; only one triangle of the symmetric matrix is written (both triangles
  are accepted if they agree). Abaqus writes internal nodes (Lagrange multipliers of
  hybrid elements, connectors, distributing couplings ...) with node label 0 or
  negative labels; those cannot be mapped to physical nodes and are rejected.
  ``FORMAT=COORDINATE`` (``row, column, value`` in Abaqus' global equation numbering:
  nodes in ascending label, each with its DOFs together) is read too, the equations
  mapped to the node file's labels (:func:`read_abaqus_coordinate`);
  ``*SUBSTRUCTURE MATRIX OUTPUT`` files are recognised and rejected with a message.

Node files (:func:`read_nodes`) are either CSV text — ``id,x,y,z`` or ``x,y,z`` per line
(commas and/or blanks), an optional header line first, ``#`` comments — or an Abaqus
input file (``.inp``) whose ``*NODE`` blocks give the nodes and whose ``*NSET`` blocks
(plain or ``GENERATE``) become node sets. Its ``*ELEMENT`` blocks of solid types (C3D4,
C3D6, C3D8*, C3D10*, C3D20*; node lists may continue on the next line) become the model's
cells (``tetra``, ``wedge``, ``hexahedron``, ``tetra10``, ``hexahedron20``), for
animations and, for the linear tetrahedra and hexahedra with a ``material``, for
geometric stiffening; elements of other types are counted in
``metadata["skipped_elements"]``.

Abaqus DOF map: ``dofs_per_node`` is 6 when any DOF above 3 appears in either matrix,
else 3. Nodes of the node file that appear in neither matrix (reference points, unused
nodes, nodes outside the generated element set) are dropped and listed in
``metadata["dropped_nodes"]``. A kept node whose DOF appears in neither matrix (e.g. the
rotations of solid nodes in a mixed solid/shell model, with 6 DOFs per node) would be a
zero row and column in both matrices, which makes the eigenproblems of the reduction
singular; that is an error unless ``allow_missing_dofs=True``, which keeps the zero rows
and lists them in ``metadata["missing_dofs"]`` (the caller must then eliminate them).

Units: ``units`` names the unit system of all three files; coordinates and matrices
are converted to SI by :func:`to_si` (translational/rotational DOF weighting, rotations
in radians). Node sets are given by the caller as node *labels*.

All errors are :class:`~flexmbs.errors.ReadError` naming the file and, where there is
one, the line number and its content (caller mistakes such as an unknown unit system or
a node set naming an unknown label are :class:`~flexmbs.errors.ValidationError`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.io
import scipy.sparse as sp

from ..._files import write_text
from ...errors import FlexmbsError, ReadError, ValidationError
from ..femodel import FEModel
from ..units import get_units

#: Both stored triangles of an Abaqus matrix must agree to this relative tolerance.
TRIANGLE_RTOL = 1e-6

_SPLIT = re.compile(r"[,\s]+")


# ---------------------------------------------------------------------------- nodes
class ElementBlock(NamedTuple):
    """Elements of one cell type read from an ``.inp`` file (node *labels*)."""

    labels: np.ndarray  # (E,) int64 element labels
    nodes: np.ndarray  # (E, n_a) int64 node labels, meshio/VTK node order
    lines: np.ndarray  # (E,) line numbers of the first data line of each element


class NodeTable(NamedTuple):
    """Nodes (and, from an ``.inp`` file, elements) read from a node file."""

    ids: np.ndarray  # (N,) int64 labels
    coords: np.ndarray  # (N, 3) float, in the file's length unit
    sets: dict[str, np.ndarray]  # set name -> node labels
    path: Path
    elements: dict | None = None  # meshio cell type -> ElementBlock
    skipped_elements: dict | None = None  # Abaqus type -> count of elements not read
    defined_ids: np.ndarray | None = None  # all labels of the file, when ids is a subset


#: Abaqus solid element types (first letters) → (meshio cell type, nodes). Abaqus and
#: VTK share the node order of these elements (corners, then the edges' mid-nodes).
INP_SOLIDS = (("C3D20", "hexahedron20", 20), ("C3D10", "tetra10", 10),
              ("C3D8", "hexahedron", 8), ("C3D4", "tetra", 4), ("C3D6", "wedge", 6))


def _inp_cell_type(abaqus_type: str):
    """(meshio cell type, node count) of an Abaqus element type, or None."""
    name = abaqus_type.upper()
    for prefix, cell, count in INP_SOLIDS:
        if name.startswith(prefix):
            return cell, count
    return None


def _exists(path: Path, what: str) -> None:
    if not path.exists():
        raise ReadError(f"{what} file {str(path)!r} does not exist")
    if path.is_dir():
        raise ReadError(f"{what} file {str(path)!r} is a directory")


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="strict").splitlines()
    except UnicodeDecodeError as exc:
        raise ReadError(f"{path}: not a text file ({exc})") from exc
    except OSError as exc:
        raise ReadError(f"{path}: cannot read ({exc})") from exc


def _label(tok: str) -> int | None:
    """An integer node label from ``'12'`` or ``'12.'``/``'12.0'``; None if not integral."""
    try:
        return int(tok)
    except ValueError:
        pass
    try:
        value = float(tok)
    except ValueError:
        return None
    return int(value) if np.isfinite(value) and value.is_integer() else None


def _finish_nodes(path: Path, ids: list[int], coords: list, lines: list[int],
                  sets: dict[str, np.ndarray]) -> NodeTable:
    if not ids:
        raise ReadError(f"{path}: no node coordinates found")
    ids_arr = np.asarray(ids, dtype=np.int64)
    values, counts = np.unique(ids_arr, return_counts=True)
    if np.any(counts > 1):
        label = int(values[counts > 1][0])
        where = [lines[i] for i in np.flatnonzero(ids_arr == label)[:2]]
        raise ReadError(f"{path}, lines {where[0]} and {where[1]}: node label {label} is "
                        "defined twice (part instances with local node numbers must be "
                        "flattened to unique labels)")
    return NodeTable(ids_arr, np.asarray(coords, dtype=float).reshape(-1, 3), sets, path)


def _read_csv_nodes(path: Path) -> NodeTable:
    ids: list[int] = []
    coords: list[list[float]] = []
    lines: list[int] = []
    n_fields = None
    seen_data = False
    for lineno, raw in enumerate(_lines(path), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f for f in _SPLIT.split(line) if f]
        try:
            values = [float(f) for f in fields]
        except ValueError:
            if not seen_data:
                seen_data = True  # the optional header line
                continue
            raise ReadError(f"{path}, line {lineno}: cannot read {line!r} as node data "
                            "(expected id,x,y,z or x,y,z numbers)") from None
        seen_data = True
        if n_fields is None:
            if len(fields) not in (3, 4):
                raise ReadError(f"{path}, line {lineno}: {line!r} has {len(fields)} fields; "
                                "expected 4 (id,x,y,z) or 3 (x,y,z)")
            n_fields = len(fields)
        elif len(fields) != n_fields:
            raise ReadError(f"{path}, line {lineno}: {line!r} has {len(fields)} fields, but "
                            f"the lines before have {n_fields}")
        if not all(np.isfinite(values)):
            raise ReadError(f"{path}, line {lineno}: non-finite coordinate in {line!r}")
        if n_fields == 4:
            label = _label(fields[0])
            if label is None:
                raise ReadError(f"{path}, line {lineno}: node id {fields[0]!r} is not an "
                                f"integer (line {line!r})")
            ids.append(label)
            coords.append(values[1:])
        else:
            ids.append(len(ids) + 1)
            coords.append(values)
        lines.append(lineno)
    return _finish_nodes(path, ids, coords, lines, {})


def _keyword(line: str) -> tuple[str, dict[str, str]]:
    parts = [p.strip() for p in line[1:].split(",")]
    params = {}
    for p in parts[1:]:
        if not p:
            continue
        key, _, value = p.partition("=")
        params[key.strip().upper()] = value.strip()
    return parts[0].upper(), params


def _read_inp_nodes(path: Path) -> NodeTable:
    ids: list[int] = []
    coords: list[list[float]] = []
    lines: list[int] = []
    sets: dict[str, list[int]] = {}
    block = None
    params: dict[str, str] = {}
    includes = []
    elements: dict[str, list] = {}  # cell type -> [(label, node labels, line)]
    skipped: dict[str, int] = {}
    pending: list = []  # an element whose node list continues on the next line
    for lineno, raw in enumerate(_lines(path), start=1):
        line = raw.strip()
        if not line or line.startswith("**"):
            continue
        if line.startswith("*"):
            if pending:
                raise ReadError(f"{path}, line {pending[2]}: element {pending[0]} has "
                                f"{len(pending[1])} node(s); its type needs "
                                f"{pending[3]}")
            block, params = _keyword(line)
            if block == "ELEMENT" and "TYPE" not in params:
                raise ReadError(f"{path}, line {lineno}: *ELEMENT without TYPE=<type>: "
                                f"{line!r}")
            if block == "INCLUDE":
                includes.append(lineno)
            if block == "NSET" and "NSET" not in params:
                raise ReadError(f"{path}, line {lineno}: *NSET without NSET=<name>: {line!r}")
            if block == "NSET":
                sets.setdefault(params["NSET"], [])
            continue
        fields = [f for f in (s.strip() for s in line.split(",")) if f]
        if block == "ELEMENT":
            cell = _inp_cell_type(params["TYPE"])
            if cell is None:
                if not pending:
                    skipped[params["TYPE"].upper()] = skipped.get(params["TYPE"].upper(),
                                                                  0) + 1
                continue
            numbers = [_label(f) for f in fields]
            if any(v is None for v in numbers):
                raise ReadError(f"{path}, line {lineno}: cannot read *ELEMENT, TYPE="
                                f"{params['TYPE']} data line {line!r} (expected integer "
                                "labels: element, then its nodes)")
            if pending:
                pending[1].extend(numbers)
            else:
                pending = [numbers[0], numbers[1:], lineno, cell[1]]
            if len(pending[1]) > cell[1]:
                raise ReadError(f"{path}, line {pending[2]}: element {pending[0]} of type "
                                f"{params['TYPE']} lists {len(pending[1])} nodes; it has "
                                f"{cell[1]}")
            if len(pending[1]) == cell[1]:
                elements.setdefault(cell[0], []).append(tuple(pending[:3]))
                pending = []
            continue
        if block == "NODE":
            label = _label(fields[0]) if fields else None
            try:
                xyz = [float(f) for f in fields[1:]]
            except ValueError:
                xyz = []
            if label is None or not 1 <= len(xyz) <= 3 or not all(np.isfinite(xyz)):
                raise ReadError(f"{path}, line {lineno}: cannot read *NODE data line {line!r} "
                                "(expected label, x, y[, z])")
            ids.append(label)
            coords.append(xyz + [0.0] * (3 - len(xyz)))
            lines.append(lineno)
            if "NSET" in params:
                sets.setdefault(params["NSET"], []).append(label)
        elif block == "NSET":
            members = sets[params["NSET"]]
            if "GENERATE" in params:
                nums = [_label(f) for f in fields]
                if len(nums) not in (2, 3) or any(v is None for v in nums):
                    raise ReadError(f"{path}, line {lineno}: *NSET, GENERATE expects "
                                    f"first, last[, increment]; got {line!r}")
                step = nums[2] if len(nums) == 3 else 1
                if step <= 0:
                    raise ReadError(f"{path}, line {lineno}: *NSET, GENERATE increment "
                                    f"{step} must be positive")
                members.extend(range(nums[0], nums[1] + 1, step))
                continue
            for f in fields:
                label = _label(f)
                if label is not None:
                    members.append(label)
                elif f in sets:
                    members.extend(sets[f])
                else:
                    raise ReadError(f"{path}, line {lineno}: *NSET {params['NSET']!r} names "
                                    f"{f!r}, which is neither a node label nor a set defined "
                                    "before")
    if not ids and includes:
        raise ReadError(f"{path}: no *NODE data found; *INCLUDE (line {includes[0]}) is not "
                        "followed: pass the file that holds the *NODE block")
    if not ids:
        raise ReadError(f"{path}: no *NODE block found in the Abaqus input file")
    if pending:
        raise ReadError(f"{path}, line {pending[2]}: element {pending[0]} has "
                        f"{len(pending[1])} node(s); its type needs {pending[3]}")
    table = _finish_nodes(path, ids, coords, lines,
                          {k: np.asarray(v, dtype=np.int64) for k, v in sets.items()})
    blocks = {}
    for cell, items in elements.items():
        labels = np.array([e[0] for e in items], dtype=np.int64)
        values, counts = np.unique(labels, return_counts=True)
        if np.any(counts > 1):
            label = int(values[counts > 1][0])
            raise ReadError(f"{path}: element label {label} is defined twice")
        blocks[cell] = ElementBlock(labels, np.array([e[1] for e in items], dtype=np.int64),
                                    np.array([e[2] for e in items], dtype=np.int64))
    return table._replace(elements=blocks, skipped_elements=skipped)


def _element_cells(table: NodeTable, ids: np.ndarray) -> tuple[dict, dict, int]:
    """The table's elements as (cells: type → connectivity in indices of ``ids``,
    labels: type → element labels, count of elements left out because they use a node
    outside ``ids``: a node the matrices do not contain). ReadError naming the element,
    its line and the file when it uses a node no ``*NODE`` line defines."""
    index = {int(v): i for i, v in enumerate(ids)}
    defined = set((table.ids if table.defined_ids is None else table.defined_ids).tolist())
    cells, labels, outside = {}, {}, 0
    for cell, block in (table.elements or {}).items():
        flat = block.nodes.ravel()
        undefined = np.flatnonzero([int(v) not in defined for v in flat])
        if undefined.size:
            k = int(undefined[0]) // block.nodes.shape[1]
            raise ReadError(f"{table.path}, line {int(block.lines[k])}: element "
                            f"{int(block.labels[k])} uses node {int(flat[undefined[0]])}, "
                            f"which no *NODE line defines")
        inside = np.array([all(int(v) in index for v in row) for row in block.nodes],
                          dtype=bool)
        outside += int(np.count_nonzero(~inside))
        if not inside.any():
            continue
        conn = block.nodes[inside]
        cells[cell] = np.array([index[int(v)] for v in conn.ravel()],
                               dtype=np.int64).reshape(conn.shape)
        labels[cell] = block.labels[inside]
    return cells, labels, outside


def _material_si(material, units) -> dict | None:
    """An isotropic material ``{"E": ..., "nu": ...}`` (E in the files' stress unit)
    converted to SI; ValidationError naming the bad key and value."""
    if material is None:
        return None
    if not isinstance(material, dict) or set(material) - {"E", "nu", "rho"} or \
            not {"E", "nu"} <= set(material):
        raise ValidationError(f"material must be a dict with keys 'E' and 'nu' (and "
                              f"optionally 'rho'); got {material!r}")
    from ..fe.solid_elements import isotropic_lame

    system = get_units(units)
    young, nu = float(material["E"]), float(material["nu"])
    isotropic_lame(young, nu)  # range checks with the key's name
    out = {"E": young * system.mass / (system.length * system.time**2), "nu": nu}
    if "rho" in material:
        out["rho"] = float(material["rho"]) * system.mass / system.length**3
    return out


def read_nodes(path: str | os.PathLike) -> NodeTable:
    """Read a node file: Abaqus ``.inp`` (``*NODE``/``*NSET``) or CSV ``id,x,y,z``/``x,y,z``.

    The format is the ``.inp`` one when the extension is ``.inp`` or a line starts with
    ``*NODE``. CSV files without ids number the nodes 1..N in file order.
    """
    path = Path(path)
    _exists(path, "node")
    is_inp = path.suffix.lower() == ".inp"
    if not is_inp:
        is_inp = any(s.lstrip().upper().startswith("*NODE") for s in _lines(path))
    return _read_inp_nodes(path) if is_inp else _read_csv_nodes(path)


def _resolve_sets(table: NodeTable, extra, keep: np.ndarray | None = None,
                  ) -> tuple[dict[str, np.ndarray], list[str]]:
    """Node sets (file sets, then caller's, both in labels) as indices into kept nodes."""
    index = {int(v): i for i, v in enumerate(table.ids if keep is None else table.ids[keep])}
    out: dict[str, np.ndarray] = {}
    partial: list[str] = []
    for name, labels in table.sets.items():
        labels = np.asarray(labels, dtype=np.int64).ravel()
        unknown = [int(v) for v in labels if int(v) not in index]
        known_all = {int(v) for v in table.ids}
        undefined = [v for v in unknown if v not in known_all]
        if undefined:
            raise ReadError(f"{table.path}: *NSET {name!r} names node label {undefined[0]}, "
                            "which no *NODE line defines")
        if unknown:
            partial.append(name)
        out[name] = np.array([index[int(v)] for v in labels if int(v) in index],
                             dtype=np.int64)
    for name, labels in dict(extra or {}).items():
        labels = np.asarray(labels, dtype=np.int64).ravel()
        unknown = [int(v) for v in labels if int(v) not in index]
        if unknown:
            raise ValidationError(
                f"node_sets[{name!r}] names node label(s) {unknown[:5]} that are not nodes of "
                f"the model (node file {str(table.path)!r}"
                + (", nodes absent from both matrices are dropped" if keep is not None else "")
                + ")")
        out[str(name)] = np.array([index[int(v)] for v in labels], dtype=np.int64)
    return out, partial


def to_si(coords, mass, stiffness, units, dofs_per_node: int):
    """Convert node coordinates and FE matrices from ``units`` to SI.

    With W = diag(1 per translational DOF, length per rotational DOF):
    ``M_SI = mass_unit * W M W`` and ``K_SI = mass_unit / time_unit**2 * W K W``. So a
    translational mass entry scales by the mass unit, a rotational one by mass*length²,
    a mixed one by mass*length; stiffness entries by force/length, force and
    force*length (rotations are in radians in every unit system).
    """
    system = get_units(units)
    coords = np.asarray(coords, dtype=float) * system.length
    n_nodes = coords.shape[0]
    w = sp.diags(system.dof_weights(dofs_per_node, n_nodes))
    mass = (system.mass * (w @ sp.csr_matrix(mass) @ w)).tocsr()
    stiffness = (system.mass / system.time**2 * (w @ sp.csr_matrix(stiffness) @ w)).tocsr()
    return coords, mass, stiffness, system.name


def _build(table: NodeTable, mass, stiffness, *, units, dpn, sets, metadata, files,
           material=None) -> FEModel:
    coords, mass, stiffness, name = to_si(table.coords, mass, stiffness, units, dpn)
    cells, labels, outside = _element_cells(table, table.ids)
    metadata = {**metadata, "source_units": name}
    if labels:
        metadata["cell_labels"] = labels
    if outside:
        metadata["elements_outside_matrices"] = outside
    if table.skipped_elements:
        metadata["skipped_elements"] = dict(table.skipped_elements)
    material = _material_si(material, units)
    if material is not None:
        metadata["material"] = material
    try:
        return FEModel(coords, mass, stiffness, dofs_per_node=dpn, node_ids=table.ids,
                       node_sets=sets, cells=cells, metadata=metadata)
    except FlexmbsError as exc:
        raise ReadError(f"{' / '.join(str(f) for f in files)}: {exc}") from exc


# ---------------------------------------------------------------------------- Matrix Market
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
                [float(p) for p in (parts[2:] if layout == "coordinate" else parts)]
            except ValueError:
                ok = False
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
        :meth:`ModalData.with_stiffening` compute geometric stiffening.
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


# ---------------------------------------------------------------------------- Abaqus
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


def _parse_abaqus_line(path: Path, lineno: int, line: str):
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
        raise ReadError(f"{path}, line {lineno}: node labels and DOFs must be integers in "
                        f"{line!r}")
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
        rows.append(_parse_abaqus_line(path, lineno, line))
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
