"""Node files of the FE-matrix readers, and the steps all of them share to turn matrices
and nodes into an :class:`FEModel` (SI): node sets, units, material.

One job: read node coordinates, labels, sets and solid and shell elements (:func:`read_nodes` →
:class:`NodeTable`) and build the :class:`FEModel` from them and the matrices
(:func:`to_si`, :func:`_material_si`, :func:`_resolve_sets`, :func:`_build`). The
matrix formats live in their own modules: :mod:`.matrix_market` (Matrix Market ``.mtx``)
and :mod:`.abaqus` (Abaqus ``*MATRIX OUTPUT``); :mod:`.ansys` uses :func:`to_si` and
:func:`_material_si` too. User documentation: ``docs/modal_data_formats.md``.

Node files (:func:`read_nodes`) are either CSV text — ``id,x,y,z`` or ``x,y,z`` per line
(commas and/or blanks), an optional header line first, ``#`` comments — or an Abaqus
input file (``.inp``) whose ``*NODE`` blocks give the nodes and whose ``*NSET`` blocks
(plain or ``GENERATE``) become node sets. Its ``*ELEMENT`` blocks of solid types (C3D4,
C3D6, C3D8*, C3D10*, C3D20*; node lists may continue on the next line) become the model's
cells (``tetra``, ``wedge``, ``hexahedron``, ``tetra10``, ``hexahedron20``), for
animations and, for the linear tetrahedra and hexahedra and the 20-node bricks with a
``material``, for stresses and geometric stiffening. Its shells (S4, S4R → ``quad``; S3,
S3R → ``triangle``) become cells too, with the thickness of the ``*SHELL SECTION`` that
covers each (:mod:`.inp_shell_sections`; ``metadata["shell_thickness"]``, NaN where none
does). Elements of other types are counted in ``metadata["skipped_elements"]``.

Units: ``units`` names the unit system of all the files of a model; coordinates and
matrices are converted to SI by :func:`to_si` (translational/rotational DOF weighting,
rotations in radians), a material's Young's modulus [stress unit] and density by
:func:`_material_si`. Node sets are given by the caller as node *labels*.

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
import scipy.sparse as sp

from ...errors import FlexmbsError, ReadError, ValidationError
from ..femodel import FEModel
from ..units import get_units

#: Fields of a CSV node line or an Abaqus matrix line: commas and/or blanks.
_SPLIT = re.compile(r"[,\s]+")


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


#: Abaqus shell element types (6 DOFs per node) → (meshio cell type, nodes); their
#: thickness comes from *SHELL SECTION (:mod:`.inp_shell_sections`).
INP_SHELLS = {"S4": ("quad", 4), "S4R": ("quad", 4), "S3": ("triangle", 3),
              "S3R": ("triangle", 3)}


def _inp_cell_type(abaqus_type: str):
    """(meshio cell type, node count) of an Abaqus element type, or None."""
    name = abaqus_type.upper()
    if name in INP_SHELLS:
        return INP_SHELLS[name]
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


#: The largest label any FE code writes (a signed 32-bit integer).
LARGEST_LABEL = 2**31 - 1


def _label(tok: str) -> int | None:
    """An integer label from ``'12'`` or ``'12.'``/``'12.0'``; None if not integral or
    beyond ±:data:`LARGEST_LABEL`."""
    try:
        value = int(tok)
    except ValueError:
        try:
            number = float(tok)
        except ValueError:
            return None
        if not (np.isfinite(number) and number.is_integer()):
            return None
        value = int(number)
    return value if abs(value) <= LARGEST_LABEL else None


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
    shells = [kind for kind in ("quad", "triangle") if kind in cells]
    if shells and table.path.suffix.lower() == ".inp":
        from .inp_shell_sections import shell_thickness

        given = shell_thickness(table.path, _lines(table.path))
        length = get_units(units).length
        if given:  # (none: the thickness is the user's to give)
            metadata["shell_thickness"] = {
                kind: length * np.array([given.get(int(v), np.nan) for v in labels[kind]])
                for kind in shells}
    try:
        return FEModel(coords, mass, stiffness, dofs_per_node=dpn, node_ids=table.ids,
                       node_sets=sets, cells=cells, metadata=metadata)
    except FlexmbsError as exc:
        raise ReadError(f"{' / '.join(str(f) for f in files)}: {exc}") from exc

