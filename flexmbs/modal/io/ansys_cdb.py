"""Ansys MAPDL archive files (``.cdb``, written by ``CDWRITE``): nodes, elements, node
components and material properties, read through ansys-mapdl-reader (optional extra:
``pip install 'flexmbs[ansys]'``).

What is taken from the archive (:func:`read_cdb`):

* the nodes (``NBLOCK``): labels and coordinates in the global Cartesian system, in the
  model's length unit. Nodes with a rotated nodal coordinate system (non-zero THXY,
  THYZ, THZX) are refused: MAPDL writes the matrices of such nodes in their own axes.
* the elements (``EBLOCK``, element types from ``ET``) as mesh cells by meshio cell type
  (the archive reader's VTK cells: ``tetra``, ``hexahedron``, ``wedge``, ``pyramid``,
  their quadratic forms, and surface or line cells of shells and beams), with the MAPDL
  element labels and the count of elements of each MAPDL element type. Point elements
  (MASS21 ...) are not drawn; they are counted in ``skipped``.
* node components (``CMBLOCK ..., NODE``) as node sets, named as in the file (MAPDL
  keeps component names in upper case, so ``NCOMP2`` stays ``NCOMP2``).
* material properties from ``MPDATA``/``MP`` commands: EX, PRXY (or NUXY) and DENS per
  material number, when each is a single value (not temperature dependent).

Errors are :class:`~flexmbs.errors.ReadError` naming the file and, where there is one,
the node or element label and the value.
"""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import FlexmbsError, ReadError

MISSING = ("reading Ansys MAPDL files needs the optional extra ansys-mapdl-reader: "
           "pip install 'flexmbs[ansys]'")

#: VTK cell type number → meshio cell type of the cells drawn from an archive.
VTK_CELLS = {3: "line", 21: "line3", 5: "triangle", 22: "triangle6", 9: "quad",
             23: "quad8", 10: "tetra", 24: "tetra10", 12: "hexahedron",
             25: "hexahedron20", 13: "wedge", 26: "wedge15", 14: "pyramid",
             27: "pyramid13"}
#: MAPDL element routines whose cells have flexmbs' solid elements: the linear (first-
#: order) solids, whose tetrahedra and hexahedra have the trilinear displacement field,
#: and SOLID186, whose 20-node bricks are flexmbs' serendipity brick with MAPDL's
#: default uniform reduced integration (tests/test_ansys_solid186.py: the same K and M
#: to 1e-10); so the stress modes and geometric stiffening of those cells are those of
#: the MAPDL model.
STRESS_SOLIDS = {45: "SOLID45", 185: "SOLID185", 186: "SOLID186"}
#: MAPDL names of element routines met in archives, for messages and metadata.
ELEMENT_NAMES = {21: "MASS21", 45: "SOLID45", 95: "SOLID95", 154: "SURF154",
                 180: "LINK180", 181: "SHELL181", 182: "PLANE182", 183: "PLANE183",
                 185: "SOLID185", 186: "SOLID186", 187: "SOLID187", 188: "BEAM188",
                 189: "BEAM189", 281: "SHELL281", 285: "SOLID285"}
#: Material labels read from MP/MPDATA commands (NUXY is PRXY for isotropic materials).
MP_LABELS = {"EX": "E", "PRXY": "nu", "NUXY": "nu", "DENS": "rho"}


def import_reader():
    """The ``ansys.mapdl.reader`` module; FlexmbsError naming the extra when missing."""
    from importlib import import_module

    try:
        return import_module("ansys.mapdl.reader")
    except ImportError:
        raise FlexmbsError(MISSING) from None


def element_name(routine: int) -> str:
    """``SOLID186`` for routine 186; ``element type 999`` for one not in the table."""
    return ELEMENT_NAMES.get(int(routine), f"element type {int(routine)}")


@dataclass
class CdbModel:
    """What an archive tells about a part (file units): node labels ``ids`` (N,)
    ascending and ``coords`` (N, 3), node components ``sets`` (name → node labels),
    ``cells`` (meshio type → connectivity in node *labels*), ``cell_labels`` (meshio
    type → element labels), ``cell_routines`` (meshio type → MAPDL element routine of
    each cell), ``element_types`` (MAPDL name → element count), elements not drawn
    ``skipped`` (MAPDL name → count), ``materials`` (material number → {"E", "nu",
    "rho"} as found), ``cell_materials`` (meshio type → material number of each cell)
    and the path."""

    ids: np.ndarray
    coords: np.ndarray
    sets: dict[str, np.ndarray]
    cells: dict[str, np.ndarray]
    cell_labels: dict[str, np.ndarray]
    cell_routines: dict[str, np.ndarray]
    element_types: dict[str, int]
    skipped: dict[str, int]
    materials: dict[int, dict[str, float]]
    cell_materials: dict[str, np.ndarray]
    path: Path
    volumes: dict[str, np.ndarray] = field(default_factory=dict)

    def solid_material(self):
        """(material dict in file units, reason None) when every cell is a linear solid of
        one material with E and nu; else (None, the reason why not)."""
        if not self.cells:
            return None, "the archive has no elements"
        routines = np.concatenate([np.asarray(v) for v in self.cell_routines.values()])
        other = sorted({element_name(r) for r in routines if int(r) not in STRESS_SOLIDS})
        if other:
            return None, (f"its elements are not all solids with stress recovery "
                          f"(SOLID185/SOLID45/SOLID186): "
                          f"{', '.join(other)}")
        mats = np.unique(np.concatenate([np.asarray(v)
                                         for v in self.cell_materials.values()]))
        if mats.size != 1:
            return None, f"its elements use {mats.size} materials ({mats.tolist()})"
        props = self.materials.get(int(mats[0]), {})
        lacking = [lab for lab, key in (("EX", "E"), ("PRXY", "nu")) if key not in props]
        if lacking:
            return None, (f"material {int(mats[0])} has no single-valued "
                          f"{' and '.join(lacking)} (MP/MPDATA)")
        return {k: props[k] for k in ("E", "nu", "rho") if k in props}, None


def _mp_value(text: str, path: Path, lineno: int, line: str) -> float:
    try:
        value = float(text.strip().replace("D", "E").replace("d", "e"))
    except ValueError:
        raise ReadError(f"{path}, line {lineno}: material value {text.strip()!r} is not a "
                        f"number (line {line.strip()!r})") from None
    if not np.isfinite(value):
        raise ReadError(f"{path}, line {lineno}: material value {value} is not finite")
    return value


def read_materials(path: Path) -> dict[int, dict[str, float]]:
    """EX, PRXY/NUXY and DENS of each material number from the ``MPDATA`` and ``MP``
    commands of an archive; temperature-dependent ones (more than one value) are left
    out. ReadError naming the line for a value that is not a number."""
    out: dict[int, dict[str, float]] = {}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise ReadError(f"{path}: cannot read ({exc})") from None
    for lineno, line in enumerate(lines, start=1):
        head = line[:7].upper()
        if not (head.startswith("MPDATA,") or head.startswith("MP,")):
            continue
        fields = [f.strip() for f in line.split("!")[0].split(",")]
        if fields[0].upper() == "MPDATA":  # MPDATA,R5.0,LENGTH,LAB,MAT,STLOC,VAL1,...
            if len(fields) < 7:
                continue
            label, mat_text, values = fields[3].upper(), fields[4], [v for v in fields[6:]
                                                                     if v]
            temperature_dependent = fields[2].strip() not in ("", "1")
        else:  # MP,LAB,MAT,C0 (higher coefficients make it temperature dependent)
            if len(fields) < 4:
                continue
            label, mat_text, values = fields[1].upper(), fields[2], [v for v in fields[3:]
                                                                     if v]
            temperature_dependent = len(values) > 1
        if label not in MP_LABELS or not values:
            continue
        try:
            mat = int(float(mat_text))
        except ValueError:
            raise ReadError(f"{path}, line {lineno}: material number {mat_text!r} is not an "
                            f"integer (line {line.strip()!r})") from None
        value = _mp_value(values[0], path, lineno, line)
        props = out.setdefault(mat, {})
        if temperature_dependent:
            props.pop(MP_LABELS[label], None)
            props.setdefault("temperature_dependent", []).append(label)
            continue
        props[MP_LABELS[label]] = value
    return out


def read_cdb(path: str | os.PathLike) -> CdbModel:
    """Read an MAPDL archive (see the module docstring); ReadError naming the file and
    the node or element on a rotated node, an element on an undefined node, or a file
    the archive reader cannot read."""
    path = Path(path)
    if not path.exists():
        raise ReadError(f"Ansys archive file {str(path)!r} does not exist")
    if path.is_dir():
        raise ReadError(f"Ansys archive file {str(path)!r} is a directory")
    reader = import_reader()
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            archive = reader.Archive(str(path))
            grid = archive.grid
    except Exception as exc:  # the reader raises many kinds on a bad file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ReadError(f"{path}: ansys-mapdl-reader could not read it as an archive "
                        f"(.cdb): {first}") from None
    ids = np.asarray(archive.nnum, dtype=np.int64)
    if ids.size == 0:
        raise ReadError(f"{path}: no nodes (NBLOCK) in the archive")
    coords = np.asarray(archive.nodes, dtype=float)[:, :3]
    values, counts = np.unique(ids, return_counts=True)
    if np.any(counts > 1):
        raise ReadError(f"{path}: node {int(values[counts > 1][0])} is defined twice")
    bad = np.flatnonzero(~np.all(np.isfinite(coords), axis=1))
    if bad.size:
        raise ReadError(f"{path}: node {int(ids[bad[0]])} has a non-finite coordinate "
                        f"{coords[bad[0]].tolist()}")
    angles = np.asarray(archive.node_angles if archive.node_angles is not None else [],
                        dtype=float)
    if angles.size:
        angles = angles.reshape(len(ids), -1)
        rotated = np.flatnonzero(np.any(np.abs(angles) > 0.0, axis=1))
        if rotated.size:
            k = int(rotated[0])
            raise ReadError(
                f"{path}: node {int(ids[k])} has a rotated nodal coordinate system "
                f"(THXY, THYZ, THZX = {angles[k, :3].tolist()} deg; {rotated.size} node(s) "
                "rotated); MAPDL writes its matrix rows in those axes, which flexmbs does "
                "not turn back: rotate the nodes to the global system (NROTAT,ALL with "
                "the global CSYS) before writing the matrices")
    order = np.argsort(ids)
    ids, coords = ids[order], coords[order]
    sets = {str(name): np.asarray(members, dtype=np.int64)
            for name, members in dict(archive.node_components).items()}
    known = set(ids.tolist())
    for name, members in sets.items():
        undefined = [int(v) for v in members if int(v) not in known]
        if undefined:
            raise ReadError(f"{path}: node component {name!r} (CMBLOCK) names node "
                            f"{undefined[0]}, which NBLOCK does not define")
    _check_element_nodes(archive, known, path)
    cells, labels, routines, mats, vols, skipped, types = _cells(archive, grid, path)
    return CdbModel(ids, coords, sets, cells, labels, routines, types, skipped,
                    read_materials(path), mats, path, vols)


def _check_element_nodes(archive, known: set, path: Path) -> None:
    """ReadError naming the first element (EBLOCK) on a node NBLOCK does not define.
    An element row holds 10 attribute fields (the element label the 9th), then its node
    labels (0 for an absent mid-side node)."""
    for row in archive.elem:
        row = np.asarray(row, dtype=np.int64)
        undefined = [int(v) for v in row[10:] if v > 0 and int(v) not in known]
        if undefined:
            raise ReadError(f"{path}: element {int(row[8])} (EBLOCK) uses node "
                            f"{undefined[0]}, which NBLOCK does not define")


def _cells(archive, grid, path: Path):
    """The archive's VTK cells by meshio type with node labels, element labels, element
    routines, material numbers and volumes; point elements counted as skipped."""
    point_labels = np.asarray(grid.point_data["ansys_node_num"], dtype=np.int64)
    elem_labels = np.asarray(grid.cell_data["ansys_elem_num"], dtype=np.int64)
    routines = np.asarray(grid.cell_data["ansys_elem_type_num"], dtype=np.int64)
    materials = np.asarray(grid.cell_data["ansys_material_type"], dtype=np.int64)
    celltypes = np.asarray(grid.celltypes, dtype=np.int64)
    volume = np.asarray(grid.compute_cell_sizes(length=False, area=False, volume=True)
                        .cell_data["Volume"], dtype=float)
    offsets = np.asarray(grid.cell_offsets if hasattr(grid, "cell_offsets")
                         else grid.offset, dtype=np.int64)
    conn = np.asarray(grid.cell_connectivity, dtype=np.int64)
    by_type: dict[str, list[int]] = {}
    skipped: dict[str, int] = {}
    types: dict[str, int] = {}
    for c, vtk in enumerate(celltypes):
        name = element_name(routines[c])
        types[name] = types.get(name, 0) + 1
        kind = VTK_CELLS.get(int(vtk))
        if kind is None:
            skipped[name] = skipped.get(name, 0) + 1
            continue
        by_type.setdefault(kind, []).append(c)
    n_elem = len(np.asarray(archive.enum))
    if n_elem > celltypes.size:  # elements the VTK conversion left out
        missing = set(np.asarray(archive.enum, dtype=np.int64).tolist()) - set(
            elem_labels.tolist())
        routine_of = dict(zip(np.asarray(archive.enum, dtype=np.int64).tolist(),
                              np.asarray(archive.etype, dtype=np.int64).tolist(),
                              strict=False))
        for label in missing:
            name = element_name(routine_of.get(label, 0))
            skipped[name] = skipped.get(name, 0) + 1
            types[name] = types.get(name, 0) + 1
    cells, labels, routs, mats, vols = {}, {}, {}, {}, {}
    for kind, members in by_type.items():
        rows = [point_labels[conn[offsets[c]:offsets[c + 1]]] for c in members]
        cells[kind] = np.asarray(rows, dtype=np.int64)
        idx = np.asarray(members, dtype=np.int64)
        labels[kind], routs[kind] = elem_labels[idx], routines[idx]
        mats[kind], vols[kind] = materials[idx], volume[idx]
    return cells, labels, routs, mats, vols, skipped, types
