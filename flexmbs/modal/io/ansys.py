"""Ansys MAPDL FE matrices, returned as :class:`FEModel` (SI): the binary ``.full`` file,
or the Harwell–Boeing text export of ``HBMAT`` with its ``.mapping`` file; nodes,
elements and node components come from the archive (``.cdb``, :mod:`.ansys_cdb`).

* **.full** (:func:`read_full`, through ansys-mapdl-reader: ``pip install
  'flexmbs[ansys]'``): the assembled stiffness and mass of a modal analysis (written by
  the solution, or by ``WRFULL``). Each node has the same DOFs, from the file's DOF
  list: UX, UY, UZ (3 per node) or UX … ROTZ (6 per node); other DOF sets are refused.
  MAPDL stores one triangle of each symmetric matrix; flexmbs mirrors it. The DOFs of
  ``D`` constraints are flagged in the file: their stiffness rows hold a unit
  placeholder (not the structure's stiffness), their mass rows the real mass. The
  placeholder is dropped (zero stiffness rows and columns), the mass kept, so the
  model's mass is the whole part's. Nodes all of whose DOFs are constrained form the
  node set ``constrained``: clamped there (``--clamp-nodes constrained``) the modes are
  the ones MAPDL computes; the stiffness being unknown at those DOFs, free–free modes or
  other clamps of such a model are meaningless. A node with some DOFs constrained and
  others free is refused (flexmbs clamps whole nodes), naming the node and components.
* **HBMAT** (:func:`read_hbmat`, :func:`read_mapping`): ``HBMAT,Fname,Ext,,ASCII,STIFF``
  (and ``MASS``) with ``Mapping=YES`` writes each matrix in Harwell–Boeing form (type
  ``RSA``: one triangle of the symmetric matrix, or ``RUA``; an optional right-hand
  side is skipped) and ``Fname.mapping``, which names the node and DOF label of each
  matrix equation. MAPDL leaves the constrained equations out of an HBMAT export:
  their stiffness and their mass are not in the files, so (unlike the ``.full`` route)
  the part's mass lacks the share at constrained DOFs (``metadata["mass_incomplete"]``).
  Nodes of the archive's elements that no equation names are wholly constrained (set
  ``constrained``); nodes with some equations missing are refused as above.

The mapping file is read line by line: lines before the first data line that do not
start with an integer are headings; each data line is ``equation node DOF-label``
(whitespace separated, labels UX UY UZ ROTX ROTY ROTZ in any case), equations 1…n each
once.

Nodes: every node of the matrices must be in the archive (ReadError naming it); archive
nodes without matrix rows are dropped (``metadata["dropped_nodes"]``), with the cells on
them, unless more than half the archive's elements would go: then the archive is another
model's (ReadError naming it). Node coordinates are global Cartesian (rotated nodal
systems are refused by the archive reader). Materials: ``material={"E": ..., "nu":
...}`` in the files' units, or the archive's MP EX/PRXY when all elements are solids
with stress recovery (SOLID185/SOLID45, and SOLID186 bricks) of one material whose
density times the elements' volume is the ``.full`` mass (to 1e-6): then
the linear tetrahedra and hexahedra give stress modes and geometric stiffening, as for
Abaqus ``.inp`` meshes.

Units: MAPDL has no unit system; ``units`` names the model's (``"mm-t-s"`` …), converted
to SI as for the other FE readers. Errors are :class:`~flexmbs.errors.ReadError` naming
the file, the record or line, the node or equation and the value.
"""

from __future__ import annotations

__all__ = ["DOF_LABELS", "LABEL_DOFS", "AnsysMatrices", "mapping_path", "read_ansys",
           "read_full", "read_hbmat", "read_hbmat_pair", "read_mapping"]

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ...errors import FlexmbsError, ReadError, ValidationError
from ..femodel import FEModel
from ..units import get_units
from .ansys_cdb import CdbModel, import_reader, read_cdb
from .ansys_hbmat import (
    DOF_LABELS,
    LABEL_DOFS,
    AnsysMatrices,
    _exists,
    _symmetric,
    mapping_path,
    read_hbmat,
    read_hbmat_pair,
    read_mapping,
)
from .fe_nodes import _material_si, to_si

#: MAPDL's binary file format code of a .full file, and names of the others.
FULL_FORMAT = 4
BINARY_KINDS = {2: "element matrix file (.emat)", 3: "substructure file (.sub)",
                8: "mode shape file (.mode)", 12: "result file (.rst/.rth)",
                16: "database file (.db)", 45: "element saved data (.esav)"}
#: The archive material is taken for the .full only when ρ V matches its mass to this.
MASS_RTOL = 1e-6


# ----------------------------------------------------------------------------- .full
def read_full(path: str | os.PathLike) -> AnsysMatrices:
    """Read stiffness and mass of an MAPDL ``.full`` file (see the module docstring).

    Returns the matrices in the file's equation order with every equation's node and
    DOF; ReadError naming the file and what is wrong (not a .full file, lumped or
    unsymmetric matrices, no mass, DOFs other than UX … ROTZ, nodes with differing DOF
    counts)."""
    path = Path(path)
    _exists(path, "Ansys .full")
    import_reader()
    from ansys.mapdl.reader import common
    from ansys.mapdl.reader.full import FullFile

    try:
        header = common.read_standard_header(str(path))
    except Exception as exc:
        raise ReadError(f"{path}: not an MAPDL binary file (its standard header cannot be "
                        f"read: {type(exc).__name__}: {exc})") from None
    code = header.get("file format")
    if code != FULL_FORMAT:
        kind = BINARY_KINDS.get(code, "binary file")
        raise ReadError(f"{path}: file format code {code} in the standard header: an MAPDL "
                        f"{kind}, not a .full file (code {FULL_FORMAT}, the assembled "
                        "matrices)")
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            full = FullFile(str(path))
    except NotImplementedError as exc:
        raise ReadError(f"{path}: {exc}; flexmbs needs the symmetric consistent mass and "
                        "stiffness of a modal analysis (LUMPM,OFF)") from None
    except Exception as exc:
        raise ReadError(f"{path}: ansys-mapdl-reader could not read the .full header "
                        f"({type(exc).__name__}: {exc})") from None
    head = full._header
    n = int(head["neqn"])
    labels, neqv, ndof, const = _full_tables(path, head, common)
    if neqv.size != ndof.size:
        raise ReadError(f"{path}: the nodal equivalence table lists {neqv.size} nodes but "
                        f"the DOF table {ndof.size}")
    odd = np.flatnonzero(ndof != labels.size)
    if odd.size:
        k = int(odd[0])
        raise ReadError(f"{path}: node {int(neqv[k])} has {int(ndof[k])} DOFs but the file's "
                        f"DOF set has {labels.size} ({_names(labels)}); flexmbs reads models "
                        "whose nodes all carry the same DOFs")
    if int(ndof.sum()) != n or const.size != n:
        raise ReadError(f"{path}: {n} equations in the header, but the node tables give "
                        f"{int(ndof.sum())} DOFs and {const.size} constraint flags")
    nodes = np.repeat(neqv.astype(np.int64), labels.size)
    dofs = np.tile(labels.astype(np.int64), neqv.size)
    stiffness = _full_matrix(path, full, head, "STF", "K", n)
    mass = _full_matrix(path, full, head, "MAS", "M", n)
    info = {"format": "ansys-full", "version": str(header.get("verstring", "")),
            "jobname": str(header.get("jobname", "")).strip(),
            "units": str(header.get("units", ""))}
    return AnsysMatrices(nodes, dofs, stiffness, mass, const < 0, (path,), info)


def _names(labels) -> str:
    return " ".join(DOF_LABELS.get(int(v), f"#{int(v)}") for v in labels)


def _full_tables(path: Path, head: dict, common):
    """(DOF reference numbers, nodal equivalence table, DOFs per node, constraint flags)
    of a .full file; ReadError when they cannot be read or a DOF is not structural."""
    try:
        with open(path, "rb") as fh:
            common.read_table(fh, skip=True)  # standard header
            common.read_table(fh, skip=True)  # .full header
            labels = np.asarray(common.read_table(fh, cython=True), dtype=np.int64)
            neqv = np.asarray(common.read_table(fh, cython=True), dtype=np.int64)
            fh.seek(int(head["ptrDOF"]) * 4)
            ndof = np.asarray(common.read_table(fh, cython=True), dtype=np.int64)
            const = np.asarray(common.read_table(fh, cython=True), dtype=np.int64)
    except Exception as exc:
        raise ReadError(f"{path}: the DOF tables of the .full file cannot be read "
                        f"({type(exc).__name__}: {exc})") from None
    labels = labels[: int(head["numdof"])]
    if labels.tolist() not in ([1, 2, 3], [1, 2, 3, 4, 5, 6]):
        raise ReadError(f"{path}: DOF record {labels.tolist()} (MAPDL DOF reference numbers"
                        f"); flexmbs reads UX UY UZ (1 2 3) or UX … ROTZ (1 … 6), structural "
                        "DOFs only")
    return labels, neqv, ndof, const


def _full_matrix(path: Path, full, head: dict, key: str, what: str, n: int):
    """The symmetric matrix stored at pointer ``ptr<key>`` (as the file holds it)."""
    from ansys.mapdl.reader import _binary_reader
    from ansys.mapdl.reader.common import two_ints_to_long

    suffix = "Kl" if key == "STF" else "Ml"
    nterm = two_ints_to_long(head[f"nterm{suffix}"], head[f"nterm{suffix[0]}h"])
    name = "stiffness" if key == "STF" else "mass"
    if not nterm:
        raise ReadError(f"{path}: the .full file holds no {name} matrix (nterm{what} = 0); "
                        "write it from a modal analysis (ANTYPE,MODAL), which assembles "
                        "both matrices")
    try:
        rows, cols, values = _binary_reader.read_array(
            str(path), int(head[f"ptr{key}"]), int(nterm), n, np.zeros(n, dtype=np.int32))
    except Exception as exc:
        raise ReadError(f"{path}: the {name} matrix record cannot be read "
                        f"({type(exc).__name__}: {exc})") from None
    values = np.asarray(values, dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        k = int(bad[0])
        raise ReadError(f"{path}: the {name} matrix has a non-finite entry {values[k]} at "
                        f"equations ({int(rows[k]) + 1}, {int(cols[k]) + 1})")
    return _symmetric(np.asarray(rows), np.asarray(cols), values, n, path, name)


# ----------------------------------------------------------------------------- model
def read_ansys(mass: str | os.PathLike, stiffness: str | os.PathLike,
               nodes: str | os.PathLike | CdbModel, *, units: str | None = None,
               material=None, mass_mapping=None, stiffness_mapping=None) -> FEModel:
    """Read MAPDL matrices and the archive of the same model as an FEModel (SI).

    Parameters
    ----------
    mass, stiffness : path-like
        Both the same ``.full`` file (it holds both matrices), or two ``.full`` files of
        the same model, or HBMAT Harwell–Boeing files (any other suffix).
    nodes : path-like or CdbModel
        The archive (``.cdb``, ``CDWRITE,DB``): nodes, elements, node components, MP.
    units : str, optional
        Unit system of the model (MAPDL has none of its own); default SI.
    material : dict, optional
        ``{"E": ..., "nu": ...}`` of the solid elements in the model's units; overrides
        the archive's MP EX/PRXY (see the module docstring).
    mass_mapping, stiffness_mapping : path-like, optional
        HBMAT ``.mapping`` files; default ``Fname.mapping`` beside each matrix file.

    Returns
    -------
    FEModel
        3 or 6 DOFs per node (translations then rotations, global axes [m, rad]),
        nodes in ascending label order; node sets ``constrained`` (nodes whose every DOF
        is constrained) and the archive's node components.
    """
    get_units(units)
    m_path, k_path = Path(mass), Path(stiffness)
    is_full = [p.suffix.lower() == ".full" for p in (m_path, k_path)]
    if any(is_full) and not all(is_full):
        raise ReadError(f"{m_path} / {k_path}: one is a .full file and the other not; give "
                        "the same .full for both, or two HBMAT files")
    if all(is_full):
        mats = read_full(k_path)
        if m_path.resolve() != k_path.resolve():
            other = read_full(m_path)
            if not (np.array_equal(other.nodes, mats.nodes)
                    and np.array_equal(other.dofs, mats.dofs)):
                raise ReadError(f"{m_path} and {k_path} number their equations differently: "
                                "they are not .full files of the same model")
            mats.mass = other.mass
            mats.paths = (m_path, k_path)
    else:
        mats = read_hbmat_pair(m_path, k_path, mass_mapping, stiffness_mapping)
    cdb = nodes if isinstance(nodes, CdbModel) else read_cdb(nodes)
    return _model(mats, cdb, units=units, material=material)


def _model(mats: AnsysMatrices, cdb: CdbModel, *, units, material) -> FEModel:
    files = " / ".join(str(p) for p in dict.fromkeys(mats.paths))
    dpn = 6 if np.any(mats.dofs > 3) else 3
    known = set(cdb.ids.tolist())
    absent = [int(v) for v in np.unique(mats.nodes) if int(v) not in known]
    if absent:
        raise ReadError(f"{files}: the matrices have rows of node {absent[0]}, which the "
                        f"archive {cdb.path} does not define ({len(absent)} such node(s)); "
                        "the archive must be that of the same model")
    used = set(mats.nodes.tolist())
    hbmat = mats.info.get("format") == "ansys-hbmat"
    if hbmat:  # nodes of the elements without equations: wholly constrained
        element_nodes = set()
        for conn in cdb.cells.values():
            element_nodes.update(np.unique(conn).tolist())
        wholly = sorted(element_nodes - used)
    else:
        wholly = []
    ids = np.array(sorted(used | set(wholly)), dtype=np.int64)
    index = {int(v): i for i, v in enumerate(ids)}
    n_dof = dpn * ids.size
    target = np.array([index[int(a)] * dpn + int(b) - 1
                       for a, b in zip(mats.nodes, mats.dofs, strict=True)], dtype=np.int64)
    present = np.zeros(n_dof, dtype=bool)
    present[target] = True
    constrained = np.zeros(n_dof, dtype=bool)
    constrained[target[mats.constrained]] = True
    constrained |= ~present  # HBMAT: DOFs without an equation
    per_node = constrained.reshape(-1, dpn)
    partial = np.flatnonzero(per_node.any(axis=1) & ~per_node.all(axis=1))
    if partial.size:
        k = int(partial[0])
        fixed = [DOF_LABELS[d + 1] for d in range(dpn) if per_node[k, d]]
        free = [DOF_LABELS[d + 1] for d in range(dpn) if not per_node[k, d]]
        raise ReadError(
            f"{files}: node {int(ids[k])} is partly constrained ({' '.join(fixed)} "
            f"constrained, {' '.join(free)} free; {partial.size} such node(s)); flexmbs "
            "clamps whole nodes, so these matrices would give other modes than MAPDL's: "
            "export the matrices with those constraints removed (or all DOFs of the node "
            "constrained)")
    scatter = sp.csr_matrix((np.ones(target.size), (target, np.arange(target.size))),
                            shape=(n_dof, target.size))
    keep = sp.diags((~mats.constrained).astype(float))
    stiffness = (scatter @ (keep @ mats.stiffness @ keep) @ scatter.T).tocsr()
    mass = (scatter @ mats.mass @ scatter.T).tocsr()
    stiffness.eliminate_zeros()
    clamped_nodes = np.flatnonzero(per_node.all(axis=1))
    dropped = [int(v) for v in cdb.ids if int(v) not in index]
    rows = np.searchsorted(cdb.ids, ids)
    coords = cdb.coords[rows]
    cells, labels, outside = {}, {}, 0
    for kind, conn in cdb.cells.items():
        inside = np.array([all(int(v) in index for v in row) for row in conn], dtype=bool)
        outside += int(np.count_nonzero(~inside))
        if inside.any():
            cells[kind] = np.vectorize(index.__getitem__, otypes=[np.int64])(conn[inside])
            labels[kind] = cdb.cell_labels[kind][inside]
    total = sum(len(conn) for conn in cdb.cells.values())
    if total and outside > total // 2:
        raise ReadError(f"{cdb.path}: {outside} of its {total} elements use nodes that "
                        f"{mats.paths[-1]} has no rows for ({len(dropped)} of its "
                        f"{len(cdb.ids)} nodes are not in the matrices): it is not the "
                        f"archive of the model the matrices were written from")
    sets: dict[str, np.ndarray] = {}
    partial_sets = []
    for name, members in cdb.sets.items():
        kept = [index[int(v)] for v in members if int(v) in index]
        if len(kept) != len(members):
            partial_sets.append(name)
        sets[name] = np.asarray(kept, dtype=np.int64)
    if clamped_nodes.size:
        sets["constrained"] = clamped_nodes
    meta = {**mats.info,
            "source_files": {"mass": str(mats.paths[0]), "stiffness": str(mats.paths[-1]),
                             "nodes": str(cdb.path)},
            "dof_labels": [DOF_LABELS[d] for d in range(1, dpn + 1)],
            "element_types": dict(cdb.element_types)}
    if clamped_nodes.size:
        meta["constrained_nodes"] = [int(v) for v in ids[clamped_nodes]]
        meta["constrained_stiffness"] = (
            "MAPDL stores no stiffness at constrained DOFs: the model is valid clamped at "
            "node set 'constrained' (or more)")
    if hbmat and clamped_nodes.size:
        meta["mass_incomplete"] = (
            f"HBMAT leaves out the equations of the {int(constrained.sum())} constrained "
            "DOFs: the mass at those DOFs is missing from the model")
    if dropped:
        meta["dropped_nodes"] = dropped
    if outside:
        meta["elements_outside_matrices"] = outside
    if partial_sets:
        meta["node_sets_with_dropped_nodes"] = partial_sets
    if labels:
        meta["cell_labels"] = labels
    if cdb.skipped:
        meta["skipped_elements"] = dict(cdb.skipped)
    chosen = _choose_material(material, cdb, mass, dpn, hbmat and clamped_nodes.size > 0,
                              meta)
    material_si = _material_si(chosen, units) if chosen is not None else None
    if material_si is not None:
        meta["material"] = material_si
    coords, mass, stiffness, name = to_si(coords, mass, stiffness, units, dpn)
    meta["source_units"] = name
    try:
        return FEModel(coords, mass, stiffness, dofs_per_node=dpn, node_ids=ids,
                       node_sets=sets, cells=cells, metadata=meta)
    except FlexmbsError as exc:
        raise ReadError(f"{files} / {cdb.path}: {exc}") from exc


def _choose_material(material, cdb: CdbModel, mass: sp.csr_matrix, dpn: int,
                     mass_incomplete: bool, meta: dict):
    """The caller's material, or the archive's when it is that of the matrices (module
    docstring); the reason for leaving the archive's out goes to metadata."""
    if material is not None:
        if not isinstance(material, dict):
            raise ValidationError(f"material must be a dict with keys 'E' and 'nu'; got "
                                  f"{material!r}")
        meta["material_source"] = "given"
        return material
    found, reason = cdb.solid_material()
    if found is None:
        meta["archive_material_not_used"] = reason
        return None
    if "rho" in found and not mass_incomplete:
        ones = np.zeros(mass.shape[0])
        ones[0::dpn] = 1.0
        total = float(ones @ (mass @ ones))
        volume = sum(float(np.sum(v)) for v in cdb.volumes.values())
        expected = found["rho"] * volume
        if abs(total - expected) > MASS_RTOL * max(abs(expected), abs(total)):
            meta["archive_material_not_used"] = (
                f"DENS {found['rho']:.6g} x element volume {volume:.6g} = {expected:.6g}, "
                f"but the matrices' mass is {total:.6g}: the archive's material is not the "
                "one the matrices were built with")
            return None
    meta["material_source"] = f"archive {cdb.path.name} (MP EX, PRXY)"
    return {k: v for k, v in found.items() if k in ("E", "nu", "rho")}
