"""Nastran OP4 mass and stiffness matrices mapped onto the grids of the bulk data, as an
FEModel to reduce here (docs/modal_data_formats.md, Nastran)."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ....errors import FlexmbsError, ReadError
from ...femodel import FEModel
from ...units import get_units
from ._pynastran import _import, _quiet_logger
from .bulk import BdfGeometry, read_bdf


def split_spec(spec: str | os.PathLike) -> tuple[Path, str | None]:
    """``"file.op4:NAME"`` → (file, NAME); a bare file gives NAME None."""
    text = str(spec)
    head, sep, tail = text.rpartition(":")
    if sep and head.lower().endswith(".op4") and tail and "/" not in tail and "\\" not in tail:
        return Path(head), tail
    return Path(text), None


def read_op4_matrix(spec: str | os.PathLike, what: str = "matrix") -> tuple[sp.csr_matrix, str]:
    """The matrix ``NAME`` of ``FILE.op4:NAME`` (the only one when NAME is omitted) as a
    CSR matrix, with its name; ReadError listing the names the file holds."""
    path, name = split_spec(spec)
    if not path.is_file():
        raise ReadError(f"{what}: OP4 file {str(path)!r} not found")
    op4 = _import("pyNastran.op4.op4")
    try:
        with redirect_stdout(io.StringIO()):
            matrices = op4.read_op4(str(path), log=_quiet_logger())
    except Exception as exc:
        raise ReadError(f"{what}: {path} could not be read as an OP4 file: {exc}") from None
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


def _to_grids(mat: sp.csr_matrix, geometry: BdfGeometry, label: str) -> tuple[sp.csr_matrix,
                                                                            str]:
    """The matrix on all grids' six DOFs (g-set order), in the basic system: a g-set
    matrix as it is; an a-set one (the fully clamped grids removed) with zero rows and
    columns put back at those grids; then T M Tᵀ with T the grids' CD axes."""
    n_grid = len(geometry.ids)
    n = mat.shape[0]
    clamped = geometry.clamped
    if n == 6 * n_grid:
        layout = "g-set (all grids)"
    elif clamped.size and n == 6 * (n_grid - clamped.size):
        keep = np.setdiff1d(np.arange(n_grid), clamped)
        rows = (6 * keep[:, None] + np.arange(6)).ravel()
        expand = sp.csr_matrix((np.ones(n), (rows, np.arange(n))), shape=(6 * n_grid, n))
        mat = (expand @ mat @ expand.T).tocsr()
        layout = f"a-set (all grids but the {clamped.size} fully clamped)"
    else:
        free = n_grid - clamped.size
        raise ReadError(
            f"{label} has {n} rows: neither 6 x {n_grid} grids of {geometry.path.name} "
            f"(g-set) nor 6 x {free} grids left after the {clamped.size} fully clamped by SPC "
            "(a-set); flexmbs maps Nastran matrices by these two layouts only")
    blocks = np.zeros((n_grid, 6, 6))  # per grid [R 0; 0 R], R its CD axes (columns)
    blocks[:, :3, :3] = blocks[:, 3:, 3:] = geometry.frames
    t = sp.bsr_matrix((blocks, np.arange(n_grid), np.arange(n_grid + 1)),
                      shape=(6 * n_grid, 6 * n_grid)).tocsr()
    return (t @ mat @ t.T).tocsr(), layout


def read_nastran(mass: str | os.PathLike, stiffness: str | os.PathLike,
                 geometry: str | os.PathLike | BdfGeometry, *, units: str | None = None,
                 ) -> FEModel:
    """An FEModel from Nastran OP4 matrices (``FILE.op4:NAME``) on the grids of a bulk
    data file: six DOFs per grid in the basic system, node sets ``spc`` (fully clamped
    grids) and ``spc<id>``, the elements as cells; converted from ``units`` to SI."""
    geo = geometry if isinstance(geometry, BdfGeometry) else read_bdf(geometry)
    m_raw, m_name = read_op4_matrix(mass, "--mass")
    k_raw, k_name = read_op4_matrix(stiffness, "--stiffness")
    m_full, layout = _to_grids(m_raw, geo, f"--mass {m_name}")
    k_full, _ = _to_grids(k_raw, geo, f"--stiffness {k_name}")
    system = get_units(units)
    w = sp.diags(system.dof_weights(6, len(geo.ids)))
    metadata = {"source_files": {"mass": str(mass), "stiffness": str(stiffness),
                                 "geometry": str(geo.path)},
                "nastran": {"matrices": [m_name, k_name], "layout": layout},
                "source_units": system.name}
    if geo.skipped:
        metadata["skipped_elements"] = dict(geo.skipped)
    try:
        return FEModel(geo.coords * system.length, (system.mass * (w @ m_full @ w)).tocsr(),
                       (system.mass / system.time**2 * (w @ k_full @ w)).tocsr(),
                       dofs_per_node=6, node_ids=geo.ids, node_sets=geo.node_sets(),
                       cells=geo.cells, metadata=metadata)
    except FlexmbsError as exc:
        raise ReadError(f"{mass} / {stiffness} / {geo.path}: {exc}") from exc
