"""Nastran OP4 mass and stiffness matrices mapped onto the grids of the bulk data, as an
FEModel to reduce here (docs/modal_data_formats.md, Nastran)."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ....errors import FlexmbsError, ReadError
from ...femodel import FEModel
from ...units import get_units
from ._pynastran import _import, _quiet_logger
from .bulk import BdfGeometry, read_bdf
from .dof_sets import Layout, force_residual, layouts, rigid_rows

#: A layout fits a free stiffness when its rigid motions leave forces below this fraction
#: of the force scale (round-off is ~1e-15; a wrong DOF order gives 1e-3 and more).
RIGID_FIT = 1e-8


def split_spec(spec: str | os.PathLike) -> tuple[Path, str | None]:
    """``"file.op4:NAME"`` → (file, NAME); a bare file gives NAME None."""
    text = str(spec)
    head, sep, tail = text.rpartition(":")
    if sep and head.lower().endswith(".op4") and tail and "/" not in tail and "\\" not in tail:
        return Path(head), tail
    return Path(text), None


class _Matrix(NamedTuple):
    """A matrix read by pyyeti, with the ``data`` attribute of pyNastran's."""

    data: np.ndarray


def _pyyeti_op4(path: Path) -> dict | None:
    """The OP4 file's matrices read by pyyeti (extra ``nastran``), or None without it.
    pyyeti reads binary OP4 record layouts that pyNastran 1.4 refuses (MSC Nastran's
    NAS2CAM output among them)."""
    try:
        from pyyeti.nastran import op4
    except ImportError:
        return None
    with redirect_stdout(io.StringIO()):
        found = op4.read(str(path))
    return {name: _Matrix(np.asarray(value, dtype=float)) for name, value in found.items()}


def read_op4_file(path: Path, what: str) -> dict:
    """Every matrix of the OP4 file ``path`` (pyNastran's Matrix objects by name), read in
    double precision whatever the header declares (pyNastran's default rounds type-1
    text matrices to float32); a file pyNastran cannot read is read by pyyeti when it is
    installed. ReadError naming ``what`` and the file."""
    try:
        op4 = _import("pyNastran.op4.op4")
    except FlexmbsError as missing:  # without pyNastran, pyyeti alone when it is there
        try:
            found = _pyyeti_op4(path)
        except Exception as exc:
            raise ReadError(f"{what}: {path} could not be read as an OP4 file by pyyeti: "
                            f"{exc}") from None
        if found is None:
            raise missing from None
        return found
    try:
        with redirect_stdout(io.StringIO()):
            return op4.read_op4(str(path), precision="double", log=_quiet_logger())
    except Exception as exc:
        try:
            found = _pyyeti_op4(path)
        except Exception as again:  # pyyeti refuses it too: both reasons
            raise ReadError(f"{what}: {path} could not be read as an OP4 file: {exc} "
                            f"(pyNastran); {again} (pyyeti)") from None
        if found is not None:
            return found
        raise ReadError(f"{what}: {path} could not be read as an OP4 file: {exc}") from None


def read_op4_matrix(spec: str | os.PathLike, what: str = "matrix") -> tuple[sp.csr_matrix, str]:
    """The matrix ``NAME`` of ``FILE.op4:NAME`` (the only one when NAME is omitted) as a
    CSR matrix, with its name; ReadError listing the names the file holds."""
    path, name = split_spec(spec)
    if not path.is_file():
        raise ReadError(f"{what}: OP4 file {str(path)!r} not found")
    matrices = read_op4_file(path, what)
    names = sorted(matrices)
    if not names:
        raise ReadError(f"{what}: {path} holds no matrix")
    if name is None:
        if len(names) > 1:
            raise ReadError(f"{what}: {path} holds {len(names)} matrices ({', '.join(names)}); "
                            f"name one: {path}:{names[0]}")
        name = names[0]
    match = {n.upper(): n for n in names}.get(name.upper())
    if match is None:
        raise ReadError(f"{what}: {path} has no matrix {name!r}; it holds "
                        f"{', '.join(names)}")
    data = matrices[match].data
    mat = sp.csr_matrix(data, dtype=float)
    if mat.shape[0] != mat.shape[1]:
        raise ReadError(f"{what}: {path}:{match} is {mat.shape[0]} x {mat.shape[1]}; a mass "
                        "or stiffness matrix is square")
    return mat, match


def _layout_of(n: int, geometry: BdfGeometry, label: str, k_mat=None) -> Layout:
    """The candidate layout (dof_sets.layouts) with ``n`` DOFs; ReadError listing every
    layout tried with its size. When several different layouts have that size, the one
    whose stiffness ``k_mat`` leaves the rigid motions force-free is taken; without a
    clear one the ambiguity is an error naming them."""
    candidates = layouts(geometry)
    fits = [lay for lay in candidates if lay.size == n]
    if len(fits) == 1:
        return fits[0]
    if not fits:
        tried = "; ".join(f"{lay.name}: {lay.size}" for lay in candidates)
        raise ReadError(f"{label} has {n} rows, which fits no DOF layout of the "
                        f"{len(geometry.ids)} grids of {geometry.path.name} (layouts tried, "
                        f"with their sizes: {tried})")
    names = "; ".join(lay.name for lay in fits)
    if k_mat is not None:
        ranked = sorted((force_residual(k_mat, rigid_rows(geometry.coords, geometry.frames,
                                                            lay.grid, lay.component)), k)
                        for k, lay in
                        enumerate(fits))
        if ranked[0][0] < RIGID_FIT and ranked[1][0] > 1e3 * max(ranked[0][0], 1e-300):
            return fits[ranked[0][1]]
    raise ReadError(f"{label} has {n} rows, which fits {len(fits)} different DOF layouts of "
                    f"{geometry.path.name} ({names}) and the stiffness does not tell them "
                    "apart; write the matrices over the g-set (MGG/KGG), whose layout is "
                    "unique")


def _condense_scalar(mats: list[sp.csr_matrix], lay: Layout, stiffness: int | None,
                     label: str) -> tuple[list[sp.csr_matrix], dict]:
    """The matrices on the layout's grid DOFs: scalar-point DOFs condensed statically
    through the stiffness ``mats[stiffness]`` (Guyan: x_s = −K_ss⁻¹ K_sg x_g, exact for
    statics), those without stiffness (or all, without a stiffness) dropped; the notes
    name the points."""
    scalar = lay.scalar
    grid = np.flatnonzero(lay.grid >= 0)
    if scalar.size == 0:
        return mats, {}
    points = lay.point[scalar]
    notes: dict = {}
    if stiffness is None:
        notes["scalar_points_dropped"] = points.tolist()
        notes["why"] = "no stiffness matrix to condense them with"
        return [m[grid][:, grid].tocsr() for m in mats], notes
    k = mats[stiffness]
    k_ss = k[scalar][:, scalar].tocsc()
    stiff = np.diff(k_ss.tocsr().indptr) > 0
    dropped = points[~stiff]
    keep_s = scalar[stiff]
    transfer = sp.csr_matrix((keep_s.size, grid.size))
    if keep_s.size:
        try:
            lu = spla.splu(k[keep_s][:, keep_s].tocsc())
            transfer = sp.csr_matrix(-lu.solve(k[keep_s][:, grid].toarray()))
        except RuntimeError:
            raise ReadError(f"{label}: the stiffness among the scalar points "
                            f"{lay.point[keep_s][:8].tolist()} is singular (they can move "
                            "together without strain energy), so they cannot be condensed; "
                            "ground them with springs or write the matrices without them"
                            ) from None
    t = sp.vstack([sp.identity(grid.size, format="csr"), transfer]).tocsr()
    order = np.concatenate([grid, keep_s])
    out = [(t.T @ m[order][:, order] @ t).tocsr() for m in mats]
    if keep_s.size:
        notes["scalar_points_condensed"] = lay.point[keep_s].tolist()
    if dropped.size:
        notes["scalar_points_dropped"] = dropped.tolist()
        notes["why"] = f"no stiffness of their own in {label}"
    return out, notes


def _check_partial_constraints(lay: Layout, geometry: BdfGeometry, label: str) -> None:
    """Refuse a grid that the layout holds in some but not all of its translations (or
    rotations) when its displacement system is not aligned with basic: the held direction
    would be oblique in basic, which the FE model (DOFs held at zero by empty rows) cannot
    express."""
    grid = lay.grid[lay.grid >= 0]
    comp = lay.component[lay.grid >= 0]
    for k in np.unique(grid):
        axes = geometry.frames[k]
        aligned = np.allclose(np.abs(axes), np.round(np.abs(axes)), atol=1e-12)
        if aligned:
            continue
        mine = set(comp[grid == k].tolist())
        for group, what in (({0, 1, 2}, "translations"), ({3, 4, 5}, "rotations")):
            have = mine & group
            if have and have != group:
                held = "".join(str(c + 1) for c in sorted(group - have))
                raise ReadError(
                    f"{label}: grid {int(geometry.ids[k])} is held in components {held} of "
                    f"its displacement (CD) system, which is not aligned with basic; flexmbs "
                    f"holds DOFs along the basic axes only: write the matrices over the "
                    f"g-set (MGG/KGG) and clamp whole grids, or use a CD system aligned "
                    f"with basic for such grids ({what})")


def _to_grids(mats: list[sp.csr_matrix], geometry: BdfGeometry, labels: list[str],
              stiffness: int | None = None) -> tuple[list[sp.csr_matrix], Layout, dict]:
    """The matrices on every grid's six DOFs in the basic system (T M Tᵀ, T the grids' CD
    axes), the layout they were written in, and notes on the scalar points.

    DOFs the layout leaves out (clamped, omitted, or absent rotations) get empty rows and
    columns: the FE model holds them at zero (FEModel.inactive_dofs)."""
    n = mats[0].shape[0]
    for mat, label in zip(mats[1:], labels[1:], strict=True):
        if mat.shape[0] != n:
            raise ReadError(f"{label} has {mat.shape[0]} rows but {labels[0]} has {n}; "
                            "mass and stiffness must be written over the same set")
    lay = _layout_of(n, geometry, labels[0],
                     None if stiffness is None else mats[stiffness])
    _check_partial_constraints(lay, geometry, labels[0])
    mats, notes = _condense_scalar(mats, lay, stiffness, labels[0])
    grid = np.flatnonzero(lay.grid >= 0)
    n_grid = len(geometry.ids)
    rows = 6 * lay.grid[grid] + lay.component[grid]
    expand = sp.csr_matrix((np.ones(grid.size), (rows, np.arange(grid.size))),
                           shape=(6 * n_grid, grid.size))
    blocks = np.zeros((n_grid, 6, 6))  # per grid [R 0; 0 R], R its CD axes (columns)
    blocks[:, :3, :3] = blocks[:, 3:, 3:] = geometry.frames
    t = sp.bsr_matrix((blocks, np.arange(n_grid), np.arange(n_grid + 1)),
                      shape=(6 * n_grid, 6 * n_grid)).tocsr() @ expand
    return [(t @ m @ t.T).tocsr() for m in mats], lay, notes


def read_nastran(mass: str | os.PathLike, stiffness: str | os.PathLike,
                 geometry: str | os.PathLike | BdfGeometry, *, units: str | None = None,
                 material: dict | None = None) -> FEModel:
    """An FEModel from Nastran OP4 matrices (``FILE.op4:NAME``) on the grids of a bulk
    data file, in the basic system: six DOFs per grid, or three when the matrices hold
    translations only (a solid model whose rotations AUTOSPC removed). The matrices may be
    written over any layout of :mod:`.dof_sets` (g-set, a-set, 3-DOF grids, mixed);
    scalar points are condensed statically (or dropped when they have no stiffness), and
    ``metadata["nastran"]`` names them and the layout. Node sets ``spc`` (fully clamped
    grids) and ``spc<id>``, the elements as cells (their IDs as ``cell_labels``);
    converted from ``units`` to SI.

    For stiffening, modal derivatives and stress modes the model also carries the shells'
    thickness (``metadata["shell_thickness"]``, PSHELL) and the isotropic material:
    ``material`` (``{"E", "nu"[, "rho"]}`` in the file's units) or else the file's single
    MAT1 (:mod:`.element_properties`)."""
    geo = geometry if isinstance(geometry, BdfGeometry) else read_bdf(geometry)
    m_raw, m_name = read_op4_matrix(mass, "--mass")
    k_raw, k_name = read_op4_matrix(stiffness, "--stiffness")
    (m_full, k_full), lay, notes = _to_grids(
        [m_raw, k_raw], geo, [f"--mass {m_name}", f"--stiffness {k_name}"], stiffness=1)
    system = get_units(units)
    dpn = 6 if lay.has_rotations else 3
    if dpn == 3:  # translations only: keep T1-T3 of each grid
        t = np.flatnonzero(np.tile([1, 1, 1, 0, 0, 0], len(geo.ids)))
        m_full, k_full = m_full[t][:, t].tocsr(), k_full[t][:, t].tocsr()
    w = sp.diags(system.dof_weights(dpn, len(geo.ids)))
    absent = int(len(geo.ids) * dpn - np.count_nonzero(
        np.diff(m_full.indptr) + np.diff(k_full.indptr)))
    metadata = {"source_files": {"mass": str(mass), "stiffness": str(stiffness),
                                 "geometry": str(geo.path)},
                "nastran": {"matrices": [m_name, k_name], "layout": lay.name,
                            "dofs_per_grid": dpn, "dofs_held_at_zero": absent, **notes},
                "source_units": system.name}
    if geo.skipped:
        metadata["skipped_elements"] = dict(geo.skipped)
    metadata.update(_element_metadata(geo, system, units, material))
    try:
        return FEModel(geo.coords * system.length, (system.mass * (w @ m_full @ w)).tocsr(),
                       (system.mass / system.time**2 * (w @ k_full @ w)).tocsr(),
                       dofs_per_node=dpn, node_ids=geo.ids, node_sets=geo.node_sets(),
                       cells=geo.cells, metadata=metadata)
    except FlexmbsError as exc:
        raise ReadError(f"{mass} / {stiffness} / {geo.path}: {exc}") from exc


def _element_metadata(geo, system, units, material) -> dict:
    """``cell_labels``, ``shell_thickness`` [m] and ``material`` (SI) of the geometry's
    elements (module docstring of :mod:`.element_properties`)."""
    from ..fe_nodes import _material_si
    from .element_properties import element_material, shell_thickness

    out: dict = {"cell_labels": dict(geo.cell_labels)}
    shells = [kind for kind in ("quad", "triangle") if kind in geo.cells]
    if shells and geo.model is not None:
        given = {kind: shell_thickness(geo, kind) * system.length for kind in shells}
        if any(np.isfinite(t).any() for t in given.values()):
            out["shell_thickness"] = given
    if material is None and geo.model is not None:
        material, why = element_material(geo)
        if material is None:
            out["file_material_not_used"] = why
    if material is not None:
        out["material"] = _material_si(material, units)
    return out

