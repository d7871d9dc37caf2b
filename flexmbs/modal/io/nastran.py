"""Nastran models through pyNastran (optional extra: ``pip install 'flexmbs[nastran]'``).

Three inputs, all read with pyNastran (docs/modal_data_formats.md, Nastran):

* **Geometry** (:func:`read_bdf`): a bulk data file's GRID cards with their position
  (CP) and displacement (CD) coordinate systems (CORD1R/C/S, CORD2R/C/S), the grids
  fully clamped by SPC/SPC1 cards (all six components), and the elements as mesh cells
  for animations (CQUAD4, CTRIA3, CHEXA, CTETRA, CPENTA; CBAR, CBEAM and CROD as lines).
* **Matrices** (:func:`read_nastran`): mass and stiffness from OP4 files
  (``FILE.op4:NAME``, e.g. MGG/KGG or MAA/KAA), mapped onto the grids of the geometry and
  turned from each grid's displacement system into the basic system, as an FEModel to
  reduce here.
* **Modes** (:func:`read_nastran_modes`): SOL 103 eigenvectors from an OP2 file with
  their eigenvalues (and generalized masses and stiffnesses when the OP2 has its LAMA
  table), read as modal data directly: ``read_modal("part.op2", geometry="part.bdf")``.

DOF order: the g-set is every grid in ascending ID order, six components each (T1 T2 T3
R1 R2 R3 in the grid's displacement system). A matrix of 6 × (all grids) rows is taken as
g-set; one of 6 × (grids not fully clamped) rows as the a-set of a model whose only
boundary conditions are the fully clamped grids, and the clamped grids get zero rows
(reduce it with ``--clamp-nodes spc``). Any other size is refused with both counts.
Scalar and extra points (SPOINT, EPOINT) are not supported.

Nastran has no unit system of its own: pass ``units`` (e.g. ``"mm-t-s"``) as for the
other FE readers. Errors name the file, the card and the grid or element ID.
"""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ...errors import FlexmbsError, ReadError
from ..data import ModalData, ReferenceFrame
from ..femodel import FEModel
from ..units import get_units
from .registry import register_format

#: Element cards drawn as mesh cells: card → {grid count: meshio cell type}.
ELEMENT_CELLS = {
    "CQUAD4": {4: "quad"}, "CTRIA3": {3: "triangle"},
    "CHEXA": {8: "hexahedron", 20: "hexahedron20"}, "CTETRA": {4: "tetra", 10: "tetra10"},
    "CPENTA": {6: "wedge"}, "CBAR": {2: "line"}, "CBEAM": {2: "line"}, "CROD": {2: "line"},
}
#: A grid of a clamped set must be at rest in every mode to this fraction of the
#: largest entry (OP2 shapes are single precision).
REST_RTOL = 1e-5
#: Modes with |λ| below this fraction of the largest are rigid-body modes (dropped).
RIGID_RTOL = 1e-8
MISSING = ("reading Nastran files needs the optional extra pyNastran: "
           "pip install 'flexmbs[nastran]'")


def _import(module: str):
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError:
        raise FlexmbsError(MISSING) from None


def _quiet_logger():
    """pyNastran's logger at error level (it prints every step otherwise)."""
    return _import("cpylog").get_logger(level="error")


@dataclass
class BdfGeometry:
    """What a bulk data file tells about a part: grids ``ids`` (N,) ascending, positions
    ``coords`` (N, 3) in the basic system [file length unit], displacement systems
    ``frames`` (N, 3, 3) (columns: the grid's CD axes in basic), the fully clamped grids
    of each SPC set, mesh ``cells`` (node indices), skipped element cards, and the path."""

    ids: np.ndarray
    coords: np.ndarray
    frames: np.ndarray
    spc_sets: dict[int, np.ndarray]
    cells: dict[str, np.ndarray]
    skipped: dict[str, int]
    path: Path
    model: object = field(default=None, repr=False)
    xref_error: str | None = None

    @property
    def clamped(self) -> np.ndarray:
        """Indices of the grids fully clamped by any SPC set."""
        if not self.spc_sets:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(list(self.spc_sets.values())))

    def node_sets(self) -> dict[str, np.ndarray]:
        """``spc`` (every fully clamped grid) and ``spc<id>`` per SPC set, as indices."""
        sets = {f"spc{sid}": idx for sid, idx in self.spc_sets.items() if idx.size}
        if self.clamped.size:
            sets["spc"] = self.clamped
        sets["all"] = np.arange(len(self.ids), dtype=np.int64)
        return sets


def _axes_at(coord, point: np.ndarray) -> np.ndarray:
    """(3, 3) columns: the unit axes of coordinate system ``coord`` at ``point`` (basic):
    rectangular as they are; cylindrical (r, θ, z) and spherical (r, θ, φ) turn with the
    point's position."""
    base = np.column_stack([coord.i, coord.j, coord.k]).astype(float)
    kind = coord.Type
    if kind == "R":
        return base
    local = base.T @ (np.asarray(point, dtype=float) - np.asarray(coord.origin, dtype=float))
    x, y, z = local
    theta = np.arctan2(y, x)
    c, s = np.cos(theta), np.sin(theta)
    if kind == "C":
        axes = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    else:  # spherical: θ from the local z axis, φ about it (Nastran's CORD2S)
        phi = np.arctan2(np.hypot(x, y), z)
        cp, sp_ = np.cos(phi), np.sin(phi)
        axes = np.array([[sp_ * c, cp * c, -s], [sp_ * s, cp * s, c], [cp, -sp_, 0.0]])
    return base @ axes


def read_bdf(path: str | os.PathLike) -> BdfGeometry:
    """Read a Nastran bulk data file's geometry (see the module docstring); ReadError
    naming the file, the card and the grid or element ID on undefined references."""
    path = Path(path)
    if not path.is_file():
        raise ReadError(f"Nastran geometry {str(path)!r} not found")
    model = _read_bulk(path)
    for card in ("spoints", "epoints"):
        if getattr(model, card, None):
            raise ReadError(f"{path}: {card[:-1].upper()} cards (scalar points) are not "
                            f"supported; flexmbs maps grids with six DOFs only")
    if not model.nodes:
        raise ReadError(f"{path}: no GRID cards")
    ids = np.array(sorted(model.nodes), dtype=np.int64)
    for nid in ids:
        grid = model.nodes[int(nid)]
        for name, cid in (("CP", grid.cp), ("CD", grid.cd)):
            if cid not in (0, None) and cid not in model.coords:
                raise ReadError(f"{path}: GRID {nid}: {name} = {cid} is not a defined "
                                f"coordinate system (CORD1R/C/S or CORD2R/C/S)")
    xref_error = None
    try:  # everything (element masses need properties and materials)
        with redirect_stdout(io.StringIO()):
            model.cross_reference()
    except Exception as exc:  # then the grids and coordinate systems alone
        xref_error = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        model = _read_bulk(path)
        try:
            with redirect_stdout(io.StringIO()):
                model.cross_reference(xref_elements=False, xref_properties=False,
                                      xref_masses=False, xref_materials=False,
                                      xref_loads=False, xref_constraints=False,
                                      xref_aero=False, xref_sets=False,
                                      xref_optimization=False)
        except Exception as exc2:
            raise ReadError(f"{path}: the coordinate systems could not be resolved: "
                            f"{exc2}") from None
    coords = np.array([model.nodes[int(n)].get_position() for n in ids], dtype=float)
    frames = np.empty((len(ids), 3, 3))
    for k, nid in enumerate(ids):
        cd = model.nodes[int(nid)].cd or 0
        frames[k] = np.eye(3) if cd == 0 else _axes_at(model.coords[cd], coords[k])
    index = {int(n): k for k, n in enumerate(ids)}
    return BdfGeometry(ids, coords, frames, _spc_sets(model, index, path),
                       *_cells(model, index, path), path=path, model=model,
                       xref_error=xref_error)


def _read_bulk(path: Path):
    """pyNastran's BDF of ``path``, not cross-referenced; ReadError with its message."""
    model = _import("pyNastran.bdf.bdf").BDF(log=_quiet_logger())
    try:
        with redirect_stdout(io.StringIO()):
            model.read_bdf(str(path), xref=False, punch=_is_punch(path))
    except Exception as exc:  # pyNastran raises many kinds on a bad card
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ReadError(f"{path}: pyNastran could not read the bulk data: {first}") from None
    return model


def _is_punch(path: Path) -> bool:
    """A file without ``BEGIN BULK`` is bulk data only (pyNastran's punch mode)."""
    try:
        head = path.read_text(errors="replace").upper()
    except OSError as exc:
        raise ReadError(f"cannot read {str(path)!r}: {exc}") from None
    return "BEGIN BULK" not in head and "BEGIN,BULK" not in head


def _spc_sets(model, index: dict, path: Path) -> dict[int, np.ndarray]:
    """Per SPC set id, the grids whose six components it all constrains (by any mix of
    SPC and SPC1 cards)."""
    out = {}
    for sid, cards in sorted(model.spcs.items()):
        comps: dict[int, set] = {}
        for card in cards:
            if card.type == "SPC1":
                pairs = [(nid, card.components) for nid in card.node_ids]
            elif card.type == "SPC":
                pairs = list(zip(card.node_ids, card.components, strict=False))
            else:
                continue
            for nid, comp in pairs:
                if nid not in index:
                    raise ReadError(f"{path}: {card.type} {sid} names grid {nid}, which no "
                                    "GRID card defines")
                comps.setdefault(int(nid), set()).update(str(comp or ""))
        full = [index[n] for n, c in comps.items() if set("123456") <= c]
        out[int(sid)] = np.array(sorted(full), dtype=np.int64)
    return out


def _cells(model, index: dict, path: Path) -> tuple[dict, dict]:
    """Mesh cells by meshio type (node indices) and the element cards not drawn."""
    cells: dict[str, list] = {}
    skipped: dict[str, int] = {}
    for eid, elem in sorted(model.elements.items()):
        grids = [n for n in elem.node_ids if n is not None]
        kind = ELEMENT_CELLS.get(elem.type, {}).get(len(grids))
        if elem.type in ("CBAR", "CBEAM", "CROD"):
            grids, kind = grids[:2], "line"
        if kind is None:
            skipped[elem.type] = skipped.get(elem.type, 0) + 1
            continue
        missing = [n for n in grids if n not in index]
        if missing:
            raise ReadError(f"{path}: {elem.type} {eid} references grid {missing[0]}, which "
                            "no GRID card defines")
        cells.setdefault(kind, []).append([index[n] for n in grids])
    return ({k: np.asarray(v, dtype=np.int64) for k, v in cells.items()}, skipped)


# ----------------------------------------------------------------------------- matrices
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


# -------------------------------------------------------------------------------- modes
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
