"""Nastran bulk data: grids in the basic system, displacement systems, SPC sets and the
elements as mesh cells (docs/modal_data_formats.md, Nastran)."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ....errors import ReadError
from ._pynastran import _import, _quiet_logger
from .deck import bulk_error, bulk_text

#: Element cards drawn as mesh cells: card → {grid count: meshio cell type}.
ELEMENT_CELLS = {
    "CQUAD4": {4: "quad"}, "CQUADR": {4: "quad"}, "CSHEAR": {4: "quad"},
    "CQUAD8": {8: "quad8", 4: "quad"}, "CTRIA6": {6: "triangle6", 3: "triangle"},
    "CTRIA3": {3: "triangle"}, "CTRIAR": {3: "triangle"},
    "CHEXA": {8: "hexahedron", 20: "hexahedron20"}, "CTETRA": {4: "tetra", 10: "tetra10"},
    "CPENTA": {6: "wedge"}, "CBAR": {2: "line"}, "CBEAM": {2: "line"}, "CROD": {2: "line"},
    "CONROD": {2: "line"}, "CTUBE": {2: "line"},
}

#: Element cards that give their grids rotational stiffness (AUTOSPC keeps the rotations
#: of their grids; grids that only solids, rods or translational springs touch have none).
ROTATIONAL = {"CBAR", "CBEAM", "CBEND", "CQUAD4", "CQUADR", "CQUAD8", "CQUAD", "CTRIA3",
              "CTRIAR", "CTRIA6", "CBUSH", "CFAST", "CWELD"}


@dataclass
class BdfGeometry:
    """What a bulk data file tells about a part: grids ``ids`` (N,) ascending, positions
    ``coords`` (N, 3) in the basic system [file length unit], displacement systems
    ``frames`` (N, 3, 3) (columns: the grid's CD axes in basic), the fully clamped grids
    of each SPC set (all their DOFs: six, or three at a solid's grid), mesh ``cells``
    (node indices), skipped element cards, and the path.
    Scalar points (SPOINT) and extra points (EPOINT) have no position: they are listed in
    ``scalar_points`` and ``extra_points``, never among the grids."""

    ids: np.ndarray
    coords: np.ndarray
    frames: np.ndarray
    spc_sets: dict[int, np.ndarray]
    cells: dict[str, np.ndarray]
    skipped: dict[str, int]
    path: Path
    model: object = field(default=None, repr=False)
    xref_error: str | None = None
    scalar_points: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    extra_points: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    cell_labels: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def clamped(self) -> np.ndarray:
        """Indices of the grids fully clamped by any SPC set."""
        if not self.spc_sets:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(list(self.spc_sets.values())))

    def connected(self) -> np.ndarray:
        """Boolean (N,): the grids that an element, spring, damper or mass card names."""
        index = {int(n): k for k, n in enumerate(self.ids)}
        used = np.zeros(len(self.ids), dtype=bool)
        model = self.model
        cards = list(getattr(model, "elements", {}).values()) + list(
            getattr(model, "masses", {}).values()) + list(
            getattr(model, "rigid_elements", {}).values())
        for card in cards:
            for nid in getattr(card, "node_ids", []) or []:
                if nid is not None and int(nid) in index:
                    used[index[int(nid)]] = True
        return used

    def subset(self, keep: np.ndarray) -> BdfGeometry:
        """The geometry of the grids ``keep`` (indices, ascending), with cells and SPC sets
        renumbered; cells that touch a dropped grid must not exist (ValueError)."""
        keep = np.asarray(keep, dtype=np.int64)
        new = np.full(len(self.ids), -1, dtype=np.int64)
        new[keep] = np.arange(keep.size)
        cells = {}
        for kind, conn in self.cells.items():
            if np.any(new[conn] < 0):
                raise ValueError(f"a {kind} cell uses a dropped grid")
            cells[kind] = new[conn]
        spc = {sid: new[idx][new[idx] >= 0] for sid, idx in self.spc_sets.items()}
        return replace(self, ids=self.ids[keep], coords=self.coords[keep],
                       frames=self.frames[keep], spc_sets=spc, cells=cells)

    def partial_supports(self) -> str:
        """What holds the part to the ground short of clamping a grid fully, as text for
        a message ("" when nothing does): grids some SPC or SPC1 card constrains in some
        components but not all, and grounded springs and bushes (CELAS1/2, CBUSH with
        one grid)."""
        model = self.model
        found = []
        partial = sorted({int(nid) for cards in getattr(model, "spcs", {}).values()
                          for card in cards for nid, comp in spc_pairs(card)
                          if not set("123456") <= set(str(comp or ""))})
        clamped = {int(self.ids[k]) for k in self.clamped}
        partial = [g for g in partial if g not in clamped]
        if partial:
            found.append(f"partial SPCs on grid(s) {partial[:8]}")
        grounded = sorted(int(eid) for eid, elem in getattr(model, "elements", {}).items()
                          if elem.type in ("CELAS1", "CELAS2", "CBUSH")
                          and len([n for n in elem.node_ids if n]) == 1)
        if grounded:
            found.append(f"grounded springs or bushes (elements {grounded[:8]})")
        return " and ".join(found)

    def node_sets(self) -> dict[str, np.ndarray]:
        """``spc`` (every fully clamped grid) and ``spc<id>`` per SPC set, as indices."""
        sets = {f"spc{sid}": idx for sid, idx in self.spc_sets.items() if idx.size}
        if self.clamped.size:
            sets["spc"] = self.clamped
        sets["all"] = np.arange(len(self.ids), dtype=np.int64)
        return sets


def rotating_grids(model, ids: np.ndarray) -> np.ndarray:
    """Boolean (N,): the grids ``ids`` some element with rotational stiffness touches
    (ROTATIONAL, or a CELAS1/CELAS2 on components 4–6)."""
    index = {int(n): k for k, n in enumerate(ids)}
    out = np.zeros(len(ids), dtype=bool)
    for elem in getattr(model, "elements", {}).values():
        if elem.type in ("CELAS1", "CELAS2"):
            grids = [n for n, c in zip(elem.node_ids, (elem.c1, elem.c2), strict=False)
                     if n is not None and int(c or 0) >= 4]
        elif elem.type in ROTATIONAL:
            grids = [n for n in elem.node_ids if n is not None]
        else:
            continue
        for nid in grids:
            if int(nid) in index:
                out[index[int(nid)]] = True
    return out


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
    scalar = sorted(int(n) for n in getattr(model, "spoints", {}) or {})
    extra = sorted(int(n) for n in getattr(model, "epoints", {}) or {})
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
    rotating = rotating_grids(model, ids)
    cells, skipped, labels = _cells(model, index, path)
    return BdfGeometry(ids, coords, frames, _spc_sets(model, index, path, rotating),
                       cells, skipped, path=path, model=model, xref_error=xref_error,
                       scalar_points=np.array(scalar, dtype=np.int64),
                       extra_points=np.array(extra, dtype=np.int64), cell_labels=labels)


def _read_bulk(path: Path):
    """pyNastran's BDF of ``path``'s bulk data (deck.bulk_text: with or without executive
    control and BEGIN BULK, INCLUDEs relative to the including file), not
    cross-referenced; ReadError naming the card, its ID, file and line."""
    lines, where = bulk_text(path)
    model = _import("pyNastran.bdf.bdf").BDF(log=_quiet_logger())
    try:
        with redirect_stdout(io.StringIO()):
            model.read_bdf(io.StringIO("\n".join(lines) + "\n"), xref=False, punch=True)
    except Exception as exc:  # pyNastran raises many kinds on a bad card
        raise bulk_error(exc, lines, where, path) from None
    return model


def spc_pairs(card) -> list[tuple]:
    """(grid ID, components text) of each grid an SPC or SPC1 card constrains; none for
    other constraint cards (SPCADD, SPCD …)."""
    if card.type == "SPC1":
        return [(nid, card.components) for nid in card.node_ids]
    if card.type == "SPC":
        return list(zip(card.node_ids, card.components, strict=False))
    return []


def _spc_sets(model, index: dict, path: Path, rotating: np.ndarray
              ) -> dict[int, np.ndarray]:
    """Per SPC set id, the grids it clamps fully (by any mix of SPC and SPC1 cards, with
    the grids' PS fields): all six components, or the three translations of a grid whose
    rotations no element stiffens (a solid's grid)."""
    permanent = {k: set(str(getattr(model.nodes[n], "ps", "") or "")) for n, k in index.items()}
    out = {}
    for sid, cards in sorted(model.spcs.items()):
        comps: dict[int, set] = {}
        for card in cards:
            for nid, comp in spc_pairs(card):
                if nid not in index:
                    raise ReadError(f"{path}: {card.type} {sid} names grid {nid}, which no "
                                    "GRID card defines")
                comps.setdefault(int(nid), set()).update(str(comp or ""))
        full = []
        for n, c in comps.items():
            k = index[n]
            have = c | permanent[k]
            if set("123456") <= have or (set("123") <= have and not rotating[k]):
                full.append(k)
        out[int(sid)] = np.array(sorted(full), dtype=np.int64)
    return out


def _cells(model, index: dict, path: Path) -> tuple[dict, dict, dict]:
    """Mesh cells by meshio type (node indices), the element cards not drawn, and the
    element IDs of each type's cells."""
    cells: dict[str, list] = {}
    labels: dict[str, list] = {}
    skipped: dict[str, int] = {}
    for eid, elem in sorted(model.elements.items()):
        grids = [n for n in elem.node_ids if n is not None]
        kind = ELEMENT_CELLS.get(elem.type, {}).get(len(grids))
        if elem.type in ("CBAR", "CBEAM", "CROD"):
            grids, kind = grids[:2], "line"
        elif elem.type in ("CQUAD8", "CTRIA6") and kind is None:  # some midside grids
            corners = 4 if elem.type == "CQUAD8" else 3
            grids = [n for n in elem.node_ids[:corners] if n is not None]
            kind = "quad" if corners == 4 else "triangle"
        if kind is None:
            skipped[elem.type] = skipped.get(elem.type, 0) + 1
            continue
        missing = [n for n in grids if n not in index]
        if missing:
            raise ReadError(f"{path}: {elem.type} {eid} references grid {missing[0]}, which "
                            "no GRID card defines")
        cells.setdefault(kind, []).append([index[n] for n in grids])
        labels.setdefault(kind, []).append(int(eid))
    return ({k: np.asarray(v, dtype=np.int64) for k, v in cells.items()}, skipped,
            {k: np.asarray(v, dtype=np.int64) for k, v in labels.items()})
