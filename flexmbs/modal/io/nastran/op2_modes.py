"""Nastran SOL 103 eigenvectors from an OP2 file as modal data (docs/modal_data_formats.md,
Nastran)."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ....errors import FlexmbsError, ReadError
from ...data import ModalData, ReferenceFrame
from ...units import get_units
from ..registry import register_format
from ._pynastran import _import, _quiet_logger
from .bulk import BdfGeometry, read_bdf
from .matrices import _to_grids, read_op4_matrix

#: A grid of a clamped set must be at rest in every mode to this fraction of the
#: largest entry (OP2 shapes are single precision).
REST_RTOL = 1e-5
#: Modes with |λ| below this fraction of the largest are rigid-body modes (dropped).
RIGID_RTOL = 1e-8


def _eigenvector_table(op2, path: Path, subcase):
    """The real eigenvector table of ``subcase`` (default: the first): SOL 103's OUGV1
    (pyNastran files it under eigenvectors, or displacements with modal approach code)."""
    tables = dict(op2.eigenvectors)
    for key, table in op2.displacements.items():
        if getattr(table, "analysis_code", None) == 2 and key not in tables:
            tables[key] = table
    if not tables:
        raise ReadError(f"{path}: no real eigenvector table (SOL 103 OUGV1 / OPHIG) in the "
                        "OP2 file")
    if subcase is None:
        return tables[sorted(tables, key=str)[0]]
    if subcase not in tables:
        raise ReadError(f"{path}: no eigenvectors for subcase {subcase!r}; subcases with "
                        f"eigenvectors: {sorted(tables, key=str)}")
    return tables[subcase]


def _lumped_mass(geo: BdfGeometry) -> np.ndarray:
    """Nodal masses [file units] from the elements (each element's mass split equally
    among its grids) and CONM2 point masses; ReadError naming an element whose mass
    pyNastran cannot compute."""
    model = geo.model
    if geo.xref_error is not None:
        raise ReadError(f"{geo.path}: the elements' properties and materials could not be "
                        f"resolved for their mass ({geo.xref_error}); give the mass matrix "
                        "(mass='file.op4:MGG')")
    index = {int(n): k for k, n in enumerate(geo.ids)}
    out = np.zeros(len(geo.ids))
    for eid, elem in sorted(model.elements.items()):
        try:
            value = float(elem.Mass())
        except Exception as exc:
            raise ReadError(f"{geo.path}: {elem.type} {eid}: its mass could not be computed "
                            f"({exc}); give the mass matrix (mass='file.op4:MGG')") from None
        grids = [index[n] for n in elem.node_ids if n is not None]
        out[grids] += value / len(grids)
    for eid, point in sorted(model.masses.items()):
        nid = int(point.Nid()) if hasattr(point, "Nid") else None
        if nid is None or nid not in index:
            raise ReadError(f"{geo.path}: {point.type} {eid} is on grid {nid}, which no GRID "
                            "card defines")
        out[index[nid]] += float(point.Mass())
    if not np.sum(out) > 0:
        raise ReadError(f"{geo.path}: the elements and point masses weigh nothing; give the "
                        "mass matrix (mass='file.op4:MGG')")
    return out


def read_nastran_modes(path: str | os.PathLike, *, geometry=None, mass=None,
                       units: str | None = None, subcase=None,
                       reference_frame: str | None = None) -> ModalData:
    """Modal data from a SOL 103 OP2 file and its bulk data ``geometry`` (``.bdf``).

    The eigenvectors (turned from each grid's displacement system into basic; rotations
    as ``psi``) keep the OP2's eigenvalues λ; modes with |λ| below 1e-8 of the largest are
    rigid-body modes and are dropped. The generalized masses m_j come from the OP2's
    LAMA table when it has one, else from Φᵀ M Φ; M_ff = diag(m_j), K_ff = diag(λ_j m_j),
    so the frequencies are exactly the OP2's. The mass for the inertia invariants is
    ``mass`` (``"file.op4:MGG"``, the g- or a-set mass) or, without it, lumped from the
    elements and CONM2 cards. Frame: attached to the fully clamped grids (node set
    ``spc``, checked at rest in every mode) when there are any, else mean axes; or
    ``reference_frame`` as stated.
    """
    path = Path(path)
    if geometry is None:
        raise ReadError(f"{path}: an OP2 file needs its geometry: "
                        f"read_modal({str(path)!r}, geometry='model.bdf')")
    geo = geometry if isinstance(geometry, BdfGeometry) else read_bdf(geometry)
    op2_module = _import("pyNastran.op2.op2")
    op2 = op2_module.OP2(log=_quiet_logger())
    try:
        with redirect_stdout(io.StringIO()):
            op2.read_op2(str(path), build_dataframe=False)
    except Exception as exc:
        raise ReadError(f"{path}: pyNastran could not read it as an OP2 file: {exc}") from None
    return modes_from_op2(op2, path, geo, mass=mass, units=units, subcase=subcase,
                          reference_frame=reference_frame)


def modes_from_op2(op2, path: Path, geo: BdfGeometry, *, mass=None, units=None,
                   subcase=None, reference_frame=None) -> ModalData:
    """:func:`read_nastran_modes` of an OP2 already read by pyNastran (``op2``, its
    ``path`` for messages) on the grids of ``geo``."""
    table = _eigenvector_table(op2, path, subcase)
    grid_ids = np.asarray(table.node_gridtype)[:, 0].astype(np.int64)
    lookup = {int(n): k for k, n in enumerate(geo.ids)}
    extra = [int(n) for n in grid_ids if int(n) not in lookup]
    if extra:
        raise ReadError(f"{path}: eigenvectors at grid {extra[0]}, which {geo.path.name} "
                        "does not define")
    if len(set(grid_ids.tolist())) != len(geo.ids):
        absent = sorted(set(lookup) - set(grid_ids.tolist()))
        raise ReadError(f"{path}: no eigenvector values at grid {absent[0]} of "
                        f"{geo.path.name} ({len(absent)} grid(s) missing; write the "
                        "eigenvectors of every grid: DISP = ALL)")
    order = np.array([lookup[int(n)] for n in grid_ids])
    shapes = np.zeros((len(geo.ids), 6, table.data.shape[0]))
    shapes[order] = np.transpose(np.asarray(table.data, dtype=float), (1, 2, 0))
    frames = geo.frames
    shapes[:, :3] = np.einsum("nij,njm->nim", frames, shapes[:, :3])
    shapes[:, 3:] = np.einsum("nij,njm->nim", frames, shapes[:, 3:])
    eigen = np.asarray(getattr(table, "eigns", None) if getattr(table, "eigns", None)
                       is not None else [], dtype=float)
    modes = np.asarray(getattr(table, "modes", np.arange(1, shapes.shape[2] + 1)))
    eigen, gen_mass = _lama_values(op2, modes, eigen)
    if eigen.size != shapes.shape[2]:
        raise ReadError(f"{path}: the eigenvector table has {shapes.shape[2]} modes but "
                        f"{eigen.size} eigenvalues")
    rigid = np.abs(eigen) <= RIGID_RTOL * np.max(np.abs(eigen))
    keep = np.flatnonzero(~rigid)
    if keep.size == 0:
        raise ReadError(f"{path}: every mode is a rigid-body mode (λ ≈ 0)")
    shapes, eigen = shapes[:, :, keep], eigen[keep]

    system = get_units(units)
    n_nodes = len(geo.ids)
    phi = shapes[:, :3].reshape(3 * n_nodes, -1) * system.length
    psi = shapes[:, 3:].reshape(3 * n_nodes, -1)
    w = sp.diags(system.dof_weights(6, n_nodes))
    if mass is not None:
        m_raw, m_name = read_op4_matrix(mass, "mass")
        m_grid, _ = _to_grids(m_raw, geo, f"mass {m_name}")
        mass_si = (system.mass * (w @ m_grid @ w)).tocsr()
        mass_source = f"{mass} (6 DOFs per grid)"
    else:
        mass_si = _lumped_mass(geo) * system.mass
        mass_source = f"lumped from the elements and CONM2 cards of {geo.path.name}"
    if gen_mass is None:
        full = np.zeros((6 * n_nodes, keep.size))
        full.reshape(n_nodes, 6, -1)[:, :3] = phi.reshape(n_nodes, 3, -1)
        full.reshape(n_nodes, 6, -1)[:, 3:] = psi.reshape(n_nodes, 3, -1)
        if sp.issparse(mass_si):
            gen = np.einsum("im,im->m", full, mass_si @ full)
        else:
            gen = np.einsum("im,i,im->m", phi, np.repeat(mass_si, 3), phi)
        gen_mass_si, gm_source = gen, "Φᵀ M Φ (the OP2 has no LAMA table)"
    else:
        gen_mass_si = gen_mass[keep] * system.mass * system.length**2
        gm_source = "the OP2's LAMA table"
    lam = eigen / system.time**2
    node_sets = geo.node_sets()
    frame, attach = _modes_frame(path, geo, shapes, reference_frame)
    metadata = {"source": str(path), "format": "nastran-op2", "geometry": str(geo.path),
                "generalized_mass_source": gm_source, "mass_source": mass_source,
                "rigid_modes_dropped": int(rigid.sum()), "source_units": system.name,
                "eigenvalues_rad2_s2": lam.tolist()}
    if geo.skipped:
        metadata["skipped_elements"] = dict(geo.skipped)
    try:
        return ModalData(nodes=geo.coords * system.length, phi=phi,
                         M_ff=np.diag(gen_mass_si), K_ff=np.diag(gen_mass_si * lam),
                         mass=mass_si, reference_frame=frame, attach_set=attach,
                         psi=psi if np.any(psi) else None, cells=geo.cells,
                         node_sets=node_sets, node_ids=geo.ids, units=system.name,
                         metadata=metadata)
    except FlexmbsError as exc:
        raise ReadError(f"{path}: {exc}") from exc


def _lama_values(op2, modes: np.ndarray, eigns: np.ndarray):
    """(eigenvalues, generalized masses or None) of the eigenvector table's ``modes``: from
    the LAMA table that lists those mode numbers with the same eigenvalues (the table of
    the same subcase), else the eigenvector table's own eigenvalues without masses."""
    for lama in op2.eigenvalues.values():
        numbers = {int(m): k for k, m in enumerate(np.asarray(lama.mode))}
        if not all(int(m) in numbers for m in modes):
            continue
        idx = np.array([numbers[int(m)] for m in modes])
        values = np.asarray(lama.eigenvalues, dtype=float)[idx]
        scale = max(float(np.max(np.abs(values))), 1e-300)
        if eigns.size == values.size and np.max(np.abs(values - eigns)) > 1e-5 * scale:
            continue  # another subcase's table
        return values, np.asarray(lama.generalized_mass, dtype=float)[idx]
    return eigns, None


def _modes_frame(path: Path, geo: BdfGeometry, shapes: np.ndarray, stated):
    """(frame, attach set): attached to the fully clamped grids, which must be at rest in
    every mode; mean axes without clamped grids; or as stated."""
    if stated is not None:
        frame = ReferenceFrame(stated)
        if frame is ReferenceFrame.ATTACHED and not geo.clamped.size:
            raise ReadError(f"{path}: reference_frame='attached' needs fully clamped grids "
                            f"(SPC/SPC1 with 123456) in {geo.path.name}")
        return frame, ("spc" if frame is ReferenceFrame.ATTACHED else None)
    if not geo.clamped.size:
        return ReferenceFrame.MEAN_AXIS, None
    largest = float(np.max(np.abs(shapes)))
    moving = np.max(np.abs(shapes[geo.clamped]), axis=(1, 2)) > REST_RTOL * largest
    if np.any(moving):
        k = int(geo.clamped[np.argmax(moving)])
        raise ReadError(f"{path}: grid {int(geo.ids[k])} is clamped by SPC in "
                        f"{geo.path.name} but moves in the modes; these are not the modes "
                        "of that model")
    return ReferenceFrame.ATTACHED, "spc"


register_format("nastran-op2", [".op2"],
                "Nastran SOL 103 eigenvectors (OP2 + bulk data geometry, through pyNastran)",
                reader=read_nastran_modes)
