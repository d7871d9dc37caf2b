"""The mass of a Nastran model on its grids, six DOFs each, as Nastran lumps it.

Used as the mass description of SOL 103 modes read from an OP2 when no mass matrix is
given (docs/modal_data_formats.md, Nastran). Nastran's default (lumped) element masses are
rebuilt from the bulk data:

* every element's mass (pyNastran's ``Mass()``: structural plus non-structural) is split
  equally among its grids as translational mass;
* a CBEAM adds the torsional inertia of its section, ρ (I1 + I2) L / 2 about the beam axis
  at each end grid (CBAR, shells and solids lump no rotary inertia);
* CONM2 point masses enter with their offset and inertia tensor (CID 0, −1 or a system),
  CONM1 with its 6 x 6 matrix, CMASS1/CMASS2 on grid components in the grids' displacement
  systems;
* PARAM,WTMASS scales every mass, as in Nastran.

The result is in the basic system, DOF order T1 T2 T3 R1 R2 R3 per grid in ascending ID
order, in the file's (WTMASS-scaled) mass units. Masses on scalar points are not grids'
and are listed in the notes. With PARAM,COUPMASS > 0 Nastran used coupled element masses,
which this lumped description only approximates: the notes say so, and MGG from an OP4
(``mass=``) is exact.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ....errors import ReadError
from .bulk import BdfGeometry, _axes_at

#: Element cards without mass (springs, dampers, rigid and plot elements).
MASSLESS = {"CELAS1", "CELAS2", "CELAS3", "CELAS4", "CDAMP1", "CDAMP2", "CDAMP3", "CDAMP4",
            "CDAMP5", "CVISC", "CBUSH", "CBUSH1D", "CBUSH2D", "CGAP", "PLOTEL", "CFAST",
            "CWELD", "CSPR"}


def param_value(model, name: str, default=None):
    """The first value of ``PARAM,name`` of the bulk data, else ``default``."""
    card = getattr(model, "params", {}).get(name)
    if card is None:
        return default
    values = getattr(card, "values", None) or [default]
    return values[0]


#: Corner grids of the elements that may have midside grids: with more grids than these,
#: Nastran's lumped mass is not an equal split among them.
CORNERS = {"CTETRA": 4, "CHEXA": 8, "CPENTA": 6, "CPYRAM": 5, "CQUAD8": 4, "CTRIA6": 3}


def _has_offsets(elem) -> bool:
    """A CBAR/CBEAM with end offsets (WA, WB) or pin flags moves its mass off the line
    between its grids."""
    offsets = [getattr(elem, name, None) for name in ("wa", "wb")]
    return any(v is not None and np.any(np.asarray(v, dtype=float) != 0) for v in offsets)


def _skew(r: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def _coord_axes(model, cid: int, point: np.ndarray, where: str) -> np.ndarray:
    if cid in (0, None):
        return np.eye(3)
    if cid not in model.coords:
        raise ReadError(f"{where}: CID = {cid} is not a defined coordinate system")
    return _axes_at(model.coords[cid], point)


def _conm2(card, model, position: np.ndarray, where: str) -> np.ndarray:
    """6 x 6 mass of a CONM2 at its grid, basic axes (docs: offset r, inertia about the
    centre of gravity J_c: [[m I, −m r̃], [m r̃, J_c + m r̃ᵀ r̃]])."""
    mass = float(card.mass)
    offset = np.asarray(card.X, dtype=float)
    i11, i21, i22, i31, i32, i33 = (float(v) for v in card.I)
    inertia = np.array([[i11, -i21, -i31], [-i21, i22, -i32], [-i31, -i32, i33]])
    cid = int(card.cid)
    if cid == -1:  # X is the centre of gravity in basic; the inertia in basic
        r, axes = offset - position, np.eye(3)
    else:
        axes = _coord_axes(model, cid, position, where)
        r = axes @ offset
    j_c = axes @ inertia @ axes.T
    s = _skew(r)
    out = np.zeros((6, 6))
    out[:3, :3] = mass * np.eye(3)
    out[:3, 3:] = -mass * s
    out[3:, :3] = mass * s
    out[3:, 3:] = j_c + mass * s.T @ s
    return out


def _beam_torsion(elem, geo: BdfGeometry, index: dict) -> tuple[float, np.ndarray]:
    """ρ (I1 + I2) L / 2 of a CBEAM [file units] and its axis (basic)."""
    a, b = (index[int(n)] for n in elem.node_ids[:2])
    axis = geo.coords[b] - geo.coords[a]
    length = float(np.linalg.norm(axis))
    prop = elem.pid_ref
    if hasattr(prop, "I11"):  # PBEAML
        polar = float(prop.I11()) + float(prop.I22())
    else:  # PBEAM: end A's section
        polar = float(np.ravel(prop.i1)[0]) + float(np.ravel(prop.i2)[0])
    rho = float(prop.mid_ref.rho or 0.0)
    return rho * polar * length / 2.0, axis / max(length, 1e-300)


def grid_mass(geo: BdfGeometry) -> tuple[sp.csr_matrix, dict]:
    """The lumped 6-DOF mass of ``geo``'s grids (see the module docstring) and notes:
    ``wtmass``, the cards used, masses left out (on scalar points) and warnings."""
    model = geo.model
    if geo.xref_error is not None:
        raise ReadError(f"{geo.path}: the elements' properties and materials could not be "
                        f"resolved for their mass ({geo.xref_error}); give the mass matrix "
                        "(mass='file.op4:MGG')")
    n = len(geo.ids)
    index = {int(nid): k for k, nid in enumerate(geo.ids)}
    rows: list[np.ndarray] = []
    vals: list[np.ndarray] = []

    def add(grid: int, block: np.ndarray) -> None:
        dofs = 6 * grid + np.arange(6)
        rows.append(np.stack(np.meshgrid(dofs, dofs, indexing="ij"), axis=-1).reshape(-1, 2))
        vals.append(block.ravel())

    used: dict[str, int] = {}
    left_out: list[str] = []
    approximate: set[str] = set()
    for eid, elem in sorted(model.elements.items()):
        if elem.type in MASSLESS:
            continue
        try:
            value = float(elem.Mass())
        except Exception as exc:
            raise ReadError(f"{geo.path}: {elem.type} {eid}: its mass could not be computed "
                            f"({exc}); give the mass matrix (mass='file.op4:MGG')") from None
        grids = [int(g) for g in elem.node_ids if g is not None and int(g) in index]
        on_scalar = [int(g) for g in elem.node_ids if g is not None and int(g) not in index]
        if on_scalar and value:
            left_out.append(f"{elem.type} {eid} on scalar point(s) {on_scalar}")
        if not grids or not value:
            continue
        used[elem.type] = used.get(elem.type, 0) + 1
        if len(grids) > CORNERS.get(elem.type, len(grids)):
            approximate.add(elem.type)
        if elem.type in ("CBAR", "CBEAM") and _has_offsets(elem):
            approximate.add(f"{elem.type} with offsets")
        for g in grids:
            block = np.zeros((6, 6))
            block[:3, :3] = value / len(grids) * np.eye(3)
            add(index[g], block)
        if elem.type == "CBEAM":
            torsion, axis = _beam_torsion(elem, geo, index)
            for g in grids[:2]:
                block = np.zeros((6, 6))
                block[3:, 3:] = torsion * np.outer(axis, axis)
                add(index[g], block)
    for eid, card in sorted(model.masses.items()):
        where = f"{geo.path}: {card.type} {eid}"
        used[card.type] = used.get(card.type, 0) + 1
        if card.type in ("CONM2", "CONM1"):
            nid = int(card.nid)
            if nid not in index:
                raise ReadError(f"{where} is on grid {nid}, which no GRID card defines")
            k = index[nid]
            if card.type == "CONM2":
                add(k, _conm2(card, model, geo.coords[k], where))
            else:
                axes = _coord_axes(model, int(card.cid), geo.coords[k], where)
                t = np.kron(np.eye(2), axes)
                add(k, t @ np.asarray(card.mass_matrix, dtype=float) @ t.T)
        elif card.type in ("CMASS1", "CMASS2"):
            _scalar_mass(card, geo, index, add, left_out, where)
        else:
            raise ReadError(f"{where}: this mass card is not read; give the mass matrix "
                            "(mass='file.op4:MGG')")
    wtmass = float(param_value(model, "WTMASS", 1.0))
    if rows:
        ij = np.concatenate(rows)
        mat = sp.coo_matrix((np.concatenate(vals) * wtmass, (ij[:, 0], ij[:, 1])),
                            shape=(6 * n, 6 * n)).tocsr()
    else:
        mat = sp.csr_matrix((6 * n, 6 * n))
    mat.sum_duplicates()
    if not mat.diagonal()[0::6].sum() > 0:
        raise ReadError(f"{geo.path}: the elements and point masses weigh nothing; give the "
                        "mass matrix (mass='file.op4:MGG')")
    notes = {"wtmass": wtmass, "cards": used, "left_out": left_out}
    if approximate:
        notes["approximate"] = (
            f"{', '.join(sorted(approximate))}: Nastran lumps these differently from an "
            "equal split at the grids (midside grids, offsets), so the inertia of the "
            "description is approximate; give MGG (mass='file.op4:MGG') for the exact mass")
    coupmass = param_value(model, "COUPMASS", -1)
    if coupmass not in (None, -1) and int(coupmass) > 0:
        notes["warning"] = (f"PARAM,COUPMASS,{coupmass}: Nastran used coupled element "
                            "masses, which the lumped description only approximates; give "
                            "MGG (mass='file.op4:MGG') for the exact mass")
    return mat, notes


def _scalar_mass(card, geo, index, add, left_out, where) -> None:
    """A CMASS1/CMASS2 between grid components (or to ground): m [[1, −1], [−1, 1]] on
    the components' directions, turned from the grids' displacement systems to basic."""
    value = float(card.Mass())
    ends = []
    for nid, comp in ((card.nodes[0], card.c1), (card.nodes[1], card.c2)):
        if nid in (None, 0):
            continue
        nid, comp = int(nid), int(comp or 0)
        if nid not in index or comp == 0:
            left_out.append(f"{where.rsplit(': ', 1)[-1]} on scalar point {nid}")
            return
        k = index[nid]
        direction = np.zeros(6)
        axes = geo.frames[k]
        direction[3 * ((comp - 1) // 3):3 * ((comp - 1) // 3) + 3] = axes[:, (comp - 1) % 3]
        ends.append((k, direction))
    signs = [1.0, -1.0]
    for a, (ka, da) in enumerate(ends):
        for b, (kb, db) in enumerate(ends):
            if ka == kb:
                add(ka, signs[a] * signs[b] * value * np.outer(da, db))
            else:
                raise ReadError(f"{where}: a scalar mass between two grids is not read; give "
                                "the mass matrix (mass='file.op4:MGG')")
