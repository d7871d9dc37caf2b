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
from ._pynastran import _import, _quiet_logger
from .bulk import BdfGeometry, read_bdf
from .dof_sets import rigid_rows
from .grid_mass import grid_mass
from .matrices import _to_grids, read_op4_matrix

#: A grid of a clamped set must be at rest in every mode to this fraction of the
#: largest entry (OP2 shapes are single precision).
REST_RTOL = 1e-5
#: Modes with |λ| below this fraction of the largest are rigid-body modes (dropped).
RIGID_RTOL = 1e-8
#: ... and so are modes below 1 mHz, whatever the others ([rad²/s²]; Nastran's rigid-body
#: eigenvalues come out at round-off, ±1e-19 to 1e-6).
RIGID_ABS = (2 * np.pi * 1e-3) ** 2


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


def read_nastran_modes(path: str | os.PathLike, *, geometry=None, mass=None,
                       units: str | None = None, subcase=None,
                       reference_frame: str | None = None, matrices=None,
                       **superelement) -> ModalData:
    """Modal data from a SOL 103 OP2 file and its bulk data ``geometry`` (``.bdf``).

    The eigenvectors (turned from each grid's displacement system into basic; rotations
    as ``psi``) keep the OP2's eigenvalues λ; modes with |λ| below 1e-8 of the largest are
    rigid-body modes and are dropped. The generalized masses m_j come from the OP2's
    LAMA table when it has one, else from Φᵀ M Φ; M_ff = diag(m_j), K_ff = diag(λ_j m_j),
    so the frequencies are exactly the OP2's. The mass for the inertia invariants is
    ``mass`` (``"file.op4:MGG"``, the g- or a-set mass) or, without it, lumped from the
    elements and CONM2 cards. Frame: attached to the fully clamped grids (node set
    ``spc``, checked at rest in every mode) when there are any, else mean axes; or
    ``reference_frame`` as stated. Eigenvector rows of scalar and extra points are
    dropped (listed in ``metadata["points_dropped"]``). Without ``mass`` the mass
    description is the lumped 6-DOF grid mass (:mod:`.grid_mass`: rotary inertia of CBEAMs
    and CONM2s included, PARAM,WTMASS applied), compared with the OP2's grid point weight
    generator output when it has one (``metadata["provenance"]``).

    With ``matrices`` (``"file.op4"``: KAA and MAA) the OP2 is read for its USET table
    instead, and the superelement reader builds the body (its other options —
    ``attach_set``, ``superelement``, ``w4`` — pass through):
    :func:`~flexmbs.modal.io.nastran_superelement.read_nastran_superelement`.
    """
    path = Path(path)
    if matrices is not None or superelement:  # a superelement: USET table + OP4 KAA, MAA
        if geometry is not None or mass is not None or subcase is not None:
            raise ReadError(f"{path}: give matrices= (a superelement's KAA and MAA over the "
                            f"OP2's USET a-set) or geometry= (SOL 103 modes), not both")
        from ..nastran_superelement import read_nastran_superelement

        return read_nastran_superelement(path, matrices=matrices, units=units,
                                         reference_frame=reference_frame, **superelement)
    if geometry is None:
        raise ReadError(f"{path}: an OP2 file needs its geometry: "
                        f"read_modal({str(path)!r}, geometry='model.bdf') for SOL 103 "
                        f"modes, or matrices='model.op4' for a superelement's KAA and MAA "
                        f"over the OP2's USET table")
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
    shapes, dropped_points, geo = _grid_shapes(table, path, geo)
    eigen = np.asarray(getattr(table, "eigns", None) if getattr(table, "eigns", None)
                       is not None else [], dtype=float)
    modes = np.asarray(getattr(table, "modes", np.arange(1, shapes.shape[2] + 1)))
    eigen, gen_mass = _lama_values(op2, modes, eigen)
    if eigen.size != shapes.shape[2]:
        raise ReadError(f"{path}: the eigenvector table has {shapes.shape[2]} modes but "
                        f"{eigen.size} eigenvalues")
    largest = float(np.max(np.abs(eigen))) if eigen.size else 0.0
    rigid = np.abs(eigen) <= max(RIGID_RTOL * largest, RIGID_ABS)
    keep = np.flatnonzero(~rigid)
    if keep.size == 0:
        raise ReadError(f"{path}: every mode is a rigid-body mode (|λ| <= {largest:.3g} "
                        "rad²/s², below 1 mHz): the OP2 holds no elastic modes")
    shapes, eigen = shapes[:, :, keep], eigen[keep]

    system = get_units(units)
    n_nodes = len(geo.ids)
    phi = shapes[:, :3].reshape(3 * n_nodes, -1) * system.length
    psi = shapes[:, 3:].reshape(3 * n_nodes, -1)
    rotations = bool(np.any(psi))
    w6 = sp.diags(system.dof_weights(6, n_nodes))
    provenance: dict = {}
    if mass is not None:
        m_raw, m_name = read_op4_matrix(mass, "mass")
        (m_grid,), lay, notes = _to_grids([m_raw], geo, [f"mass {m_name}"])
        provenance["mass"] = {"source": f"{mass}", "layout": lay.name, **notes}
    else:
        m_grid, notes = grid_mass(geo)
        provenance["mass"] = {"source": f"lumped from the elements and mass cards of "
                                        f"{geo.path.name} (six DOFs per grid)", **notes}
    m_grid_si = (system.mass * (w6 @ m_grid @ w6)).tocsr()
    if rotations:
        mass_si = m_grid_si
        mass_source = provenance["mass"]["source"] + ": translations and rotary inertia"
    else:
        t = np.flatnonzero(np.tile([1, 1, 1, 0, 0, 0], n_nodes))
        mass_si = m_grid_si[t][:, t].tocsr()
        mass_source = provenance["mass"]["source"] + ": translations (the modes have none)"
    weight = _weight_check(op2, m_grid_si, geo, system)
    if weight:
        provenance["grid_point_weight"] = weight
    full = np.zeros((n_nodes, 6, keep.size))
    full[:, :3] = phi.reshape(n_nodes, 3, -1)
    full[:, 3:] = psi.reshape(n_nodes, 3, -1)
    full = full.reshape(6 * n_nodes, -1)
    described = np.einsum("im,im->m", full, m_grid_si @ full)
    if gen_mass is None:
        gen_mass_si, gm_source = described, "Φᵀ M Φ (the OP2 has no LAMA table)"
    else:
        gen_mass_si = gen_mass[keep] * system.mass * system.length**2
        gm_source = "the OP2's LAMA table"
    lam = eigen / system.time**2
    node_sets = geo.node_sets()
    frame, attach = _modes_frame(path, geo, shapes, reference_frame)
    metadata = {"source": str(path), "format": "nastran-op2", "geometry": str(geo.path),
                "generalized_mass_source": gm_source, "mass_source": mass_source,
                "rigid_modes_dropped": int(rigid.sum()), "source_units": system.name,
                "eigenvalues_rad2_s2": lam.tolist(),
                "mass_description_modal_mass_ratio": (described / gen_mass_si).tolist(),
                "provenance": provenance}
    if dropped_points:
        metadata["points_dropped"] = dropped_points
    if geo.skipped:
        metadata["skipped_elements"] = dict(geo.skipped)
    try:
        return ModalData(nodes=geo.coords * system.length, phi=phi,
                         M_ff=np.diag(gen_mass_si), K_ff=np.diag(gen_mass_si * lam),
                         mass=mass_si, reference_frame=frame, attach_set=attach,
                         psi=psi if rotations else None, cells=geo.cells,
                         node_sets=node_sets, node_ids=geo.ids, units=system.name,
                         metadata=metadata)
    except FlexmbsError as exc:
        message = str(exc)
        supports = geo.partial_supports() if frame is ReferenceFrame.MEAN_AXIS else ""
        if supports and "rigid-body content" in message:  # (the mean-axis check's)
            message += (f". No grid of {geo.path.name} is clamped fully, so the frame is "
                        f"taken as mean axes, but {supports} hold the part: its modes move "
                        f"it rigidly on them. Clamp a grid in all six components (SPC "
                        f"123456) to attach the frame there, or leave those supports out "
                        f"of the modal run")
        raise ReadError(f"{path}: {message}") from exc


def _grid_shapes(table, path: Path, geo: BdfGeometry
                 ) -> tuple[np.ndarray, dict, BdfGeometry]:
    """The eigenvectors at ``geo``'s grids, (N, 6, n) in basic, the points left out (IDs
    by kind) and the geometry of the grids kept. Scalar and extra points have no position,
    so they stay out of the geometry; grids that no element or mass card names and that
    the OP2 has no values for are left out too."""
    node_gridtype = np.asarray(table.node_gridtype)
    ids = node_gridtype[:, 0].astype(np.int64)
    kinds = node_gridtype[:, 1].astype(np.int64)
    is_grid = kinds == 1
    dropped = {}
    for code, name in ((2, "scalar_points"), (3, "extra_points")):
        if np.any(kinds == code):
            dropped[name] = ids[kinds == code].tolist()
    other = ~is_grid & ~np.isin(kinds, (2, 3))
    if np.any(other):
        raise ReadError(f"{path}: eigenvector rows of point {int(ids[other][0])} have point "
                        f"type {int(kinds[other][0])} (neither grid 1, scalar 2 nor extra 3)")
    grid_ids = ids[is_grid]
    lookup = {int(n): k for k, n in enumerate(geo.ids)}
    extra = [int(n) for n in grid_ids if int(n) not in lookup]
    if extra:
        raise ReadError(f"{path}: eigenvectors at grid {extra[0]}, which {geo.path.name} "
                        "does not define")
    if len(set(grid_ids.tolist())) != len(geo.ids):
        absent = sorted(set(lookup) - set(grid_ids.tolist()))
        connected = geo.connected()
        needed = [n for n in absent if connected[lookup[n]]]
        if needed:
            raise ReadError(f"{path}: no eigenvector values at grid {needed[0]} of "
                            f"{geo.path.name} ({len(needed)} connected grid(s) missing; "
                            "write the eigenvectors of every grid: DISP = ALL)")
        # grids no element or mass names, absent from the solution: left out, listed
        geo = geo.subset(np.flatnonzero(~np.isin(geo.ids, absent)))
        dropped["unconnected_grids"] = absent
        lookup = {int(n): k for k, n in enumerate(geo.ids)}
    order = np.array([lookup[int(n)] for n in grid_ids])
    data = np.asarray(table.data, dtype=float)[:, is_grid, :]
    shapes = np.zeros((len(geo.ids), 6, data.shape[0]))
    shapes[order] = np.transpose(data, (1, 2, 0))
    frames = geo.frames
    shapes[:, :3] = np.einsum("nij,njm->nim", frames, shapes[:, :3])
    shapes[:, 3:] = np.einsum("nij,njm->nim", frames, shapes[:, 3:])
    return shapes, dropped, geo


def rigid_mass_about(mass6: sp.spmatrix, coords: np.ndarray, point) -> np.ndarray:
    """The 6 x 6 rigid-body mass about ``point`` of a 6-DOF grid mass (basic axes): Dᵀ M D
    with D the rigid motions of the grids about ``point`` (what Nastran's grid point weight
    generator prints as MO)."""
    n = coords.shape[0]
    d = rigid_rows(coords - np.asarray(point, dtype=float), np.tile(np.eye(3), (n, 1, 1)),
                   np.repeat(np.arange(n), 6), np.tile(np.arange(6), n))
    return d.T @ (mass6 @ d)


def _weight_check(op2, mass6_si: sp.spmatrix, geo: BdfGeometry, system) -> dict | None:
    """The mass description's rigid-body mass next to the OP2's grid point weight generator
    output (PARAM,GRDPNT), both in SI, or None when the OP2 has none."""
    tables = getattr(op2, "grid_point_weight", None) or {}
    if not tables:
        return None
    gpwg = next(iter(tables.values()))
    ref = int(getattr(gpwg, "reference_point", 0) or 0)
    lookup = {int(n): k for k, n in enumerate(geo.ids)}
    point = geo.coords[lookup[ref]] if ref in lookup else np.zeros(3)
    ours = rigid_mass_about(mass6_si, geo.coords * system.length, point * system.length)
    scale = np.ones(6)
    scale[3:] = system.length
    theirs = np.asarray(gpwg.MO, dtype=float) * system.mass * np.outer(scale, scale)
    return {"reference_grid": ref, "mass_nastran": float(theirs[0, 0]),
            "mass_description": float(ours[0, 0]),
            "rigid_mass_relative_difference": float(np.max(np.abs(ours - theirs))
                                                    / max(np.max(np.abs(theirs)), 1e-300))}


def _lama_values(op2, modes: np.ndarray, eigns: np.ndarray):
    """(eigenvalues, generalized masses or None) of the eigenvector table's ``modes``: from
    the LAMA table that lists those mode numbers with the same eigenvalues (the table of
    the same subcase), else the eigenvector table's own eigenvalues without masses."""
    for lama in op2.eigenvalues.values():
        if np.iscomplexobj(np.asarray(lama.eigenvalues)):
            continue  # (a complex eigenvalue table: flutter or complex modes, not these)
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


#: This format's entry in flexmbs.modal.io.registry (registered when a format is needed):
#: name, extensions, description, reader, writer.
MODAL_FORMAT = ("nastran-op2", [".op2"],
                "Nastran SOL 103 eigenvectors (OP2 + bulk data geometry, through pyNastran)",
                read_nastran_modes)
