"""Which DOFs a Nastran matrix is written over: the layouts an OP4 matrix may have.

Nastran orders the DOFs of a set by point ID (grids and scalar points interleaved, as
they sort), a grid's components T1 T2 T3 R1 R2 R3 in its displacement system, a scalar
point's one component after them in ID order. Which DOFs a matrix covers depends on the
set it was written for (docs/modal_data_formats.md, Nastran):

* ``g-set``: every grid's six components, and every scalar point;
* the g-set less the components constrained by SPC/SPC1 (any set) or a grid's PS field;
* three translations per grid: a solid model whose rotations AUTOSPC removed;
* the same less the SPC'd translations;
* the a-set the bulk data describes: ASET/ASET1 components plus the QSET1 points when
  there are ASET cards; else the g-set less SPC, PS, OMIT/OMIT1 and, with PARAM,AUTOSPC
  not NO, the rotations of grids that no element with rotational stiffness touches
  (beams, shells, bushes, springs on components 4–6).

:func:`layouts` lists these candidates; a matrix takes the first whose size fits, and a
size that fits none is refused listing each candidate with its size.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .bulk import BdfGeometry, rotating_grids, spc_pairs
from .grid_mass import param_value


class Layout(NamedTuple):
    """A candidate DOF list: ``grid`` (n,) grid index or −1, ``component`` (n,) 0–5 for a
    grid (T1 … R3) or −1 for a scalar point, ``point`` (n,) the scalar point's ID or −1."""

    name: str
    grid: np.ndarray
    component: np.ndarray
    point: np.ndarray

    @property
    def size(self) -> int:
        return int(self.grid.size)

    @property
    def scalar(self) -> np.ndarray:
        """Positions of the scalar-point DOFs."""
        return np.flatnonzero(self.grid < 0)

    @property
    def has_rotations(self) -> bool:
        return bool(np.any(self.component >= 3))


def _components(text) -> set[int]:
    return {int(c) - 1 for c in str(text or "") if c in "123456"}


def constrained_components(geo: BdfGeometry) -> dict[int, set[int]]:
    """Per grid index, the components (0–5) any SPC/SPC1 set or the GRID's PS field
    constrains."""
    model = geo.model
    index = {int(n): k for k, n in enumerate(geo.ids)}
    out: dict[int, set[int]] = {}
    for cards in getattr(model, "spcs", {}).values():
        for card in cards:
            for nid, comp in spc_pairs(card):
                if nid is not None and int(nid) in index:
                    out.setdefault(index[int(nid)], set()).update(_components(comp))
    for nid, k in index.items():
        ps = getattr(model.nodes[nid], "ps", None)
        if ps:
            out.setdefault(k, set()).update(_components(ps))
    return out


def _set_cards(cards, index: dict) -> tuple[dict[int, set[int]], set[int]]:
    """Grid components and scalar points named by ASET/OMIT/QSET-type cards."""
    grids: dict[int, set[int]] = {}
    points: set[int] = set()
    for card in cards or []:
        node_ids = list(getattr(card, "node_ids", []) or [])
        comps = getattr(card, "components", "")
        per = comps if isinstance(comps, list) else [comps] * len(node_ids)
        for nid, comp in zip(node_ids, per, strict=False):
            if nid is None:
                continue
            if int(nid) in index:
                grids.setdefault(index[int(nid)], set()).update(_components(comp))
            else:
                points.add(int(nid))
    return grids, points


def _build(name: str, geo: BdfGeometry, keep: dict[int, set[int]],
           points) -> Layout:
    """The layout of grid components ``keep`` (per grid index) and scalar ``points``,
    in Nastran's order (point ID, then component)."""
    entries = []
    for k, nid in enumerate(geo.ids):
        for c in sorted(keep.get(k, ())):
            entries.append((int(nid), c, k, -1))
    for p in sorted(int(p) for p in points):
        entries.append((p, 6, -1, p))
    entries.sort(key=lambda e: (e[0], e[1]))
    grid = np.array([e[2] for e in entries], dtype=np.int64)
    comp = np.array([e[1] if e[2] >= 0 else -1 for e in entries], dtype=np.int64)
    point = np.array([e[3] for e in entries], dtype=np.int64)
    return Layout(name, grid, comp, point)


def layouts(geo: BdfGeometry) -> list[Layout]:
    """The candidate layouts of a matrix over ``geo`` (module docstring), in the order
    they are tried; duplicates removed."""
    n = len(geo.ids)
    index = {int(nid): k for k, nid in enumerate(geo.ids)}
    spoints = [int(p) for p in geo.scalar_points]
    spc = constrained_components(geo)
    six = {k: set(range(6)) for k in range(n)}
    three = {k: {0, 1, 2} for k in range(n)}
    n_spc = sum(1 for c in spc.values() if c)
    out = [
        _build(f"g-set: 6 DOF at each of the {n} grids" + _points(spoints), geo, six, spoints),
        _build(f"6 DOF at each grid less the components SPC/PS constrain at {n_spc} grid(s)"
               + _points(spoints), geo, {k: six[k] - spc.get(k, set()) for k in six},
               spoints),
        _build(f"3 DOF (translations) at each of the {n} grids" + _points(spoints), geo,
               three, spoints),
        _build("3 DOF at each grid less the SPC'd translations" + _points(spoints), geo,
               {k: three[k] - spc.get(k, set()) for k in three}, spoints),
    ]
    model = geo.model
    a_grids, a_points = _set_cards(getattr(model, "asets", []), index)
    q_grids, q_points = _set_cards(getattr(model, "qsets", []), index)
    if a_grids or a_points:
        keep = {k: a_grids.get(k, set()) | q_grids.get(k, set()) for k in range(n)}
        out.append(_build("a-set of the ASET/ASET1 and QSET1 cards", geo, keep,
                          a_points | q_points))
    else:
        o_grids, o_points = _set_cards(getattr(model, "omits", []), index)
        autospc = str(param_value(model, "AUTOSPC", "YES")).upper() != "NO"
        rotating = rotating_grids(geo.model, geo.ids) if autospc else np.ones(n, dtype=bool)
        keep = {}
        for k in range(n):
            comps = set(range(6)) if rotating[k] else {0, 1, 2}
            keep[k] = comps - spc.get(k, set()) - o_grids.get(k, set())
        what = ("AUTOSPC: rotations only at grids of beams, shells, bushes or rotational "
                "springs" if autospc else "PARAM,AUTOSPC,NO")
        out.append(_build(f"a-set from the bulk data (SPC, PS, OMIT; {what})", geo, keep,
                          [p for p in spoints if p not in o_points]))
    unique: list[Layout] = []
    for lay in out:
        if not any(lay.size == u.size and np.array_equal(lay.grid, u.grid)
                   and np.array_equal(lay.component, u.component) for u in unique):
            unique.append(lay)
    return unique


def _points(spoints) -> str:
    return f" and {len(spoints)} scalar point(s)" if spoints else ""


def rigid_rows(coords: np.ndarray, frames: np.ndarray, grid: np.ndarray,
               component: np.ndarray) -> np.ndarray:
    """(n, 6) the values the six rigid motions (translations along basic x, y, z, then
    small rotations about the basic axes through the origin [rad]) give the DOFs
    (``grid`` index, ``component`` 0–5 in that grid's displacement axes ``frames``);
    rows of scalar points (grid −1) stay zero. ``coords`` [length] in basic:
    u = v + ω × x, so axisᵀu = axisᵀv + (x × axis)ᵀω."""
    out = np.zeros((grid.size, 6))
    for row in np.flatnonzero(grid >= 0):
        g, c = grid[row], component[row]
        axis = frames[g][:, c % 3]
        if c < 3:
            out[row, :3] = axis
            out[row, 3:] = np.cross(coords[g], axis)
        else:
            out[row, 3:] = axis
    return out


def force_residual(k_mat, rigid: np.ndarray) -> float:
    """Largest ‖K r‖ / ‖|K| |r|‖ over the rigid motions r (columns of ``rigid``): about
    1e-16 when the DOF layout fits a free stiffness, O(1e-3..1) when it does not."""
    num = np.linalg.norm(k_mat @ rigid, axis=0)
    den = np.maximum(np.linalg.norm(abs(k_mat) @ np.abs(rigid), axis=0), 1e-300)
    return float(np.max(num / den))
