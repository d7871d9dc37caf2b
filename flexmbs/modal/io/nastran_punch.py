"""The punch of a Nastran external superelement (EXTSEOUT ``.pch`` and ``.asm``).

:func:`read_punch` reads one ``BEGIN SUPER`` section with the bulk data reader of
:mod:`.nastran_bulk`: the boundary grids (positions in basic, displacement systems),
EXTRN (or ASET/ASET1) components, the QSET1 scalar points, PLOTEL lines, PARAMs, DMIG
matrices and the DTI TUG1 table of the grids MUG1 recovers; :func:`check_assembly`
compares the assembly punch beside it. Errors name the file, line, card, ID and value.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import ReadError
from .nastran import _axes_at
from .nastran_bulk import Card, components, coordinate_systems, id_list, read_cards


@dataclass
class Punch:
    """What the punch of one external superelement says (file units, basic system).

    ``grid_ids`` (G,) ascending with ``coords`` (G, 3) [length] and ``frames`` (G, 3, 3)
    (columns: the CD axes in basic); ``boundary`` the EXTRN grids with their components;
    ``qset`` the q-set scalar points; ``aset`` the a-set DOF labels (ID, component; 0 for a
    scalar point) in the order chosen later; ``lines`` PLOTEL grid pairs; ``dmig`` the DMIG
    matrices by name (as label → label entries); ``tug1`` the MUG1 row of each recovered
    grid; ``params`` PARAM values."""

    path: Path
    seid: int
    grid_ids: np.ndarray
    coords: np.ndarray
    frames: np.ndarray
    boundary: dict[int, tuple[int, ...]]
    qset: list[int]
    lines: list[tuple[int, int]]
    params: dict[str, str]
    cp_frames: np.ndarray | None = None
    """(G, 3, 3) the axes of each grid's CP system at the grid: the alternative reading of
    a blank CD (see :func:`_choose_layout`)."""
    blank_cd: np.ndarray | None = None
    dmig: dict[str, dict] = field(default_factory=dict)
    tug1: dict[int, int] = field(default_factory=dict)
    tug1_shape: tuple[int, int] | None = None
    #: grids that DTI TUG1 recovers but no GRID card of the punch places (Simcenter
    #: punches carry the boundary grids' GRID cards alone): left out of the nodes
    tug1_unplaced: list[int] = field(default_factory=list)

    def layouts(self) -> list[tuple[str, list[tuple[int, int]]]]:
        """Candidate a-set orders: (description, DOF labels)."""
        grid_dofs = [(g, c) for g in sorted(self.boundary) for c in self.boundary[g]]
        q_dofs = [(s, 0) for s in sorted(self.qset)]
        by_id = sorted(grid_dofs + q_dofs)
        first = grid_dofs + q_dofs
        out = [("internal sort: grids and scalar points together by ID", by_id)]
        if first != by_id:
            out.append(("boundary grids first, then the q-set scalar points", first))
        return out

    def sizes_text(self) -> str:
        n_comp = sum(len(c) for c in self.boundary.values())
        return (f"EXTRN components of {len(self.boundary)} boundary grids ({n_comp}) + "
                f"{len(self.qset)} q-set scalar points = {n_comp + len(self.qset)}; "
                f"six components per boundary grid ({6 * len(self.boundary)}) + q-set = "
                f"{6 * len(self.boundary) + len(self.qset)}; boundary components alone = "
                f"{n_comp}")


# --------------------------------------------------------------------------- punch
def _select_section(path: Path, sections: dict[int, list[Card]], seid) -> tuple[int, list]:
    supers = {k: v for k, v in sections.items() if k != 0}
    if not supers:
        if any(c.name == "EXTRN" for c in sections.get(0, [])):
            return 0, sections[0]
        raise ReadError(f"{path}: no BEGIN SUPER section and no EXTRN card: this is not the "
                        "punch of a Nastran external superelement (EXTSEOUT)")
    if seid is None:
        if len(supers) > 1:
            raise ReadError(f"{path}: holds superelements {sorted(supers)}; choose one with "
                            "superelement=ID")
        seid = next(iter(supers))
    if int(seid) not in supers:
        raise ReadError(f"{path}: no BEGIN SUPER section {seid}; it holds {sorted(supers)}")
    return int(seid), supers[int(seid)]


def read_punch(path: str | os.PathLike, superelement: int | None = None) -> Punch:
    """Parse an EXTSEOUT punch (see the module docstring); ReadError naming the file,
    line, card, ID and value on anything it cannot place."""
    path = Path(path)
    if not path.is_file():
        raise ReadError(f"Nastran superelement punch {str(path)!r} not found")
    sections = read_cards(path)
    seid, cards = _select_section(path, sections, superelement)
    systems = coordinate_systems(cards)
    grids: dict[int, Card] = {}
    spoints: set[int] = set()
    for card in cards:
        if card.name == "GRID":
            gid = card.integer(0, "ID")
            if gid in grids:
                raise ReadError(f"{card.where()} {gid}: grid defined twice (line "
                                f"{grids[gid].line})")
            grids[gid] = card
        elif card.name == "SPOINT":
            spoints.update(id_list(card, 0, "SPOINT ID"))
    if not grids:
        raise ReadError(f"{path}: superelement {seid} has no GRID card")
    ids = np.array(sorted(grids), dtype=np.int64)
    coords = np.zeros((ids.size, 3))
    frames = np.zeros((ids.size, 3, 3))
    cp_frames = np.zeros((ids.size, 3, 3))
    blank_cd = np.zeros(ids.size, dtype=bool)
    for k, gid in enumerate(ids):
        card = grids[int(gid)]
        cp = card.integer(1, "CP", default=0)
        cd = card.integer(5, "CD", default=0)
        for name, cid in (("CP", cp), ("CD", cd)):
            if cid not in systems:
                raise ReadError(f"{card.where()} {gid}: {name} = {cid} is not a coordinate "
                                "system of the punch (CORD2R/C/S)")
        local = [card.real(2 + a, f"X{a + 1}", default=0.0) for a in range(3)]
        coords[k] = systems[cp].to_basic(local)
        frames[k] = np.eye(3) if cd == 0 else _axes_at(systems[cd], coords[k])
        cp_frames[k] = np.eye(3) if cp == 0 else _axes_at(systems[cp], coords[k])
        blank_cd[k] = not card.text(5)
    simcenter = not any(card.name == "QSET1" for card in cards)  # (its q-set as ASET)
    boundary, qset = _aset_cards(path, cards, grids, spoints, simcenter)
    params = {}
    for card in cards + sections.get(0, []):
        if card.name == "PARAM":
            params[card.text(0).upper()] = card.text(1)
    lines = []
    for card in cards:
        if card.name == "PLOTEL":
            pair = (card.integer(1, "G1"), card.integer(2, "G2"))
            for g in pair:
                if g not in grids:
                    raise ReadError(f"{card.where()} {card.text(0)}: grid {g} is not defined "
                                    "by a GRID card of the superelement")
            lines.append(pair)
    punch = Punch(path, seid, ids, coords, frames, boundary, qset, lines, params,
                  cp_frames=cp_frames, blank_cd=blank_cd)
    punch.dmig = _dmig(cards)
    punch.tug1, punch.tug1_shape, punch.tug1_unplaced = _tug1(cards, grids, simcenter)
    return punch


def _id_components(card) -> list[tuple[Card, int, tuple[int, ...]]]:
    """(card, ID, components) of the ID–component pairs of an EXTRN or ASET card."""
    values = card.fields
    if len(values) % 2:
        values = [*values, ""]
    return [(card, card.integer(k, "GID"),
             components(card, values[k + 1], f"C of {values[k]}"))
            for k in range(0, len(values), 2) if values[k]]


def _aset_cards(path, cards, grids, spoints, simcenter: bool):
    """Boundary grids with components and q-set points from EXTRN (or ASET/ASET1) and
    QSET1 (``simcenter``, a punch without QSET1: the ASET scalar points), every ID checked
    against the GRID and SPOINT cards."""
    extrn = [c for c in cards if c.name == "EXTRN"]
    asets = [c for c in cards if c.name in ("ASET", "ASET1")]
    if not extrn and not asets:
        raise ReadError(f"{path}: no EXTRN (or ASET) card: the superelement's boundary is "
                        "not stated")
    pairs = [pair for card in extrn or [c for c in asets if c.name == "ASET"]
             for pair in _id_components(card)]
    if not extrn:
        for card in (c for c in asets if c.name == "ASET1"):
            comp = components(card, card.text(0), "C")
            pairs += [(card, g, comp) for g in id_list(card, 1, "grid ID")]
    boundary: dict[int, tuple[int, ...]] = {}
    scalar = set()
    for card, gid, comp in pairs:
        if comp == (0,):
            if gid not in spoints:
                raise ReadError(f"{card.where()}: ID {gid} with component 0 is not a scalar "
                                "point (SPOINT) of the superelement")
            scalar.add(gid)
            continue
        if gid not in grids:
            raise ReadError(f"{card.where()}: grid {gid} (components "
                            f"{''.join(map(str, comp))}) is not defined by a GRID card of "
                            "the superelement")
        boundary[gid] = tuple(sorted(set(boundary.get(gid, ())) | set(comp)))
    qset: set[int] = set()
    if simcenter:
        # Simcenter (NX) Nastran punches the q-set as ASET entries of the scalar points
        # ("ASET DEFINITIONS FOR QSET DATA"), with no QSET1
        qset = scalar & {gid for card in asets if card.name == "ASET"
                         for _, gid, comp in _id_components(card) if comp == (0,)}
    for card in cards:
        if card.name == "QSET1":
            comp = components(card, card.text(0), "C")
            for pid in id_list(card, 1, "ID"):
                if comp == (0,) and pid not in spoints:
                    raise ReadError(f"{card.where()}: ID {pid} is not a scalar point "
                                    "(SPOINT) of the superelement")
                if comp != (0,):
                    raise ReadError(f"{card.where()}: q-set on grid {pid} (C = "
                                    f"{card.text(0)}); flexmbs reads q-sets of scalar points")
                qset.add(pid)
    extra = sorted(scalar - qset)
    if extra:
        raise ReadError(f"{path}: scalar point {extra[0]} is a boundary point (EXTRN) but "
                        "not in the q-set (QSET1, or ASET with component 0 in a punch "
                        "without QSET1); boundary scalar points have no position and are "
                        "not supported")
    if not boundary:
        raise ReadError(f"{path}: EXTRN/ASET names no boundary grid")
    return boundary, sorted(qset)


def _dmig(cards) -> dict[str, dict]:
    """DMIG matrices: name → {"card", "ifo", "entries": {(col label, row label): value}}."""
    out: dict[str, dict] = {}
    for card in (c for c in cards if c.name == "DMIG"):
        name = card.text(0).upper()
        if card.integer(1, "GJ") == 0:  # header
            tin = card.integer(3, "TIN")
            if tin not in (1, 2):
                raise ReadError(f"{card.where()} {name}: TIN = {tin}; flexmbs reads real "
                                "matrices (TIN 1 or 2)")
            out[name] = {"card": card, "ifo": card.integer(2, "IFO"), "entries": {}}
            continue
        if name not in out:
            raise ReadError(f"{card.where()} {name}: a column before the DMIG header of "
                            f"{name}")
        col = (card.integer(1, "GJ"), card.integer(2, "CJ", default=0))
        entries = out[name]["entries"]
        for k in range(4, len(card.fields), 4):
            if not card.text(k):
                continue
            row = (card.integer(k, "Gi"), card.integer(k + 1, "Ci", default=0))
            entries[(col, row)] = card.real(k + 2, f"A of row {row[0]}-{row[1]}")
    return out


def _tug1(cards, grids, unplaced_ok: bool
          ) -> tuple[dict[int, int], tuple[int, int] | None, list[int]]:
    """The MUG1 row (0-based) of the first component of each recovered grid that a GRID
    card of the punch places, from the DTI TUG1 table (record 0: rows, columns; record 2:
    TYPE ID COMP ROW quadruples), the table's shape, and the recovered grids without a
    GRID card: left out (no position) where ``unplaced_ok`` (a Simcenter punch carries
    the boundary grids' GRID cards alone), else a ReadError naming the grid."""
    rows: dict[int, int] = {}
    unplaced: list[int] = []
    shape = None
    for card in (c for c in cards if c.name == "DTI" and c.text(0).upper() == "TUG1"):
        record = card.integer(1, "record")
        if record == 0:
            shape = (card.integer(2, "rows"), card.integer(3, "columns"))
        if record != 2:
            continue
        words = [f for f in card.fields[2:] if f]
        words = [w for w in words if w.upper() not in ("TYPE", "ID", "COMP", "ROW",
                                                       "ENDREC")]
        if len(words) % 4:
            raise ReadError(f"{card.where()} TUG1: record 2 holds {len(words)} values; "
                            "expected TYPE ID COMP ROW quadruples")
        for k in range(0, len(words), 4):
            try:
                kind, gid, ncomp, row = (int(w) for w in words[k:k + 4])
            except ValueError:
                raise ReadError(f"{card.where()} TUG1: record 2 entry {words[k:k + 4]} is "
                                "not four integers TYPE ID COMP ROW") from None
            if kind != 1 or ncomp != 6:
                raise ReadError(f"{card.where()} TUG1: point {gid} has TYPE {kind} with "
                                f"{ncomp} components; flexmbs recovers grids (TYPE 1, 6)")
            if gid not in grids:
                if not unplaced_ok:
                    raise ReadError(f"{card.where()} TUG1: grid {gid} is recovered through "
                                    "MUG1 but no GRID card of the superelement defines it")
                unplaced.append(gid)
                continue
            rows[gid] = row - 1
    return rows, shape, sorted(unplaced)


def dmig_matrix(punch: Punch, name: str, index: dict) -> np.ndarray:
    """DMIG ``name`` on the a-set (``index``: label → position); symmetric storage
    (IFO 6) mirrored."""
    entry = punch.dmig[name]
    card = entry["card"]
    n = len(index)
    out = np.zeros((n, n))
    seen = np.zeros((n, n), dtype=bool)
    for (col, row), value in entry["entries"].items():
        for label in (col, row):
            if label not in index:
                raise ReadError(f"{card.where()} {name}: point {label[0]} component "
                                f"{label[1]} is not in the superelement's a-set")
        i, j = index[row], index[col]
        out[i, j] = value
        seen[i, j] = True
    if entry["ifo"] == 6:
        both = seen & seen.T & ~np.eye(n, dtype=bool)
        scale = max(float(np.max(np.abs(out))), 1e-300)
        if np.any(both) and np.max(np.abs(out - out.T)[both]) > 1e-9 * scale:
            i, j = np.argwhere(both & (np.abs(out - out.T) > 1e-9 * scale))[0]
            raise ReadError(f"{card.where()} {name}: symmetric (IFO 6) but both triangles "
                            f"are given and differ at a-set rows {i}, {j}")
        out = np.where(seen, out, out.T)
    elif entry["ifo"] not in (1, 6):
        raise ReadError(f"{card.where()} {name}: IFO = {entry['ifo']}; flexmbs reads square "
                        "(1) and symmetric (6) matrices")
    return out


def check_assembly(punch: Punch) -> None:
    """When the assembly punch (same stem, ``.asm``) is beside the punch: its SEBULK must
    name this superelement and its boundary grids must sit where the punch puts them."""
    asm = next((c for c in punch.path.parent.iterdir()
                if c.stem.lower() == punch.path.stem.lower()
                and c.suffix.lower() == ".asm"), None)
    if asm is None:
        return
    cards = [c for group in read_cards(asm).values() for c in group]
    sebulk = [c for c in cards if c.name == "SEBULK"]
    # (an OP2's USET of superelement 0 is the part's own run, whose assembly punch names
    # the EXTID it was given)
    own_run = punch.seid == 0 and punch.path.suffix.lower() == ".op2"
    if sebulk and not own_run and punch.seid not in [c.integer(0, "SEID") for c in sebulk]:
        raise ReadError(f"{asm}: SEBULK names superelement(s) "
                        f"{[c.integer(0, 'SEID') for c in sebulk]}, not {punch.seid} of "
                        f"{punch.path.name}")
    systems = coordinate_systems(cards)
    size = max(float(np.max(np.ptp(punch.coords, axis=0))), 1.0)
    for card in (c for c in cards if c.name == "GRID"):
        gid = card.integer(0, "ID")
        if gid not in punch.boundary:
            continue
        cp = card.integer(1, "CP", default=0)
        if cp not in systems:
            raise ReadError(f"{card.where()} {gid}: CP = {cp} is not a coordinate system of "
                            f"{asm.name}")
        pos = systems[cp].to_basic([card.real(2 + a, f"X{a + 1}", default=0.0)
                                    for a in range(3)])
        mine = punch.coords[np.searchsorted(punch.grid_ids, gid)]
        if np.max(np.abs(pos - mine)) > 1e-9 * size:
            raise ReadError(f"{card.where()} {gid}: at {pos.tolist()} (basic) but "
                            f"{punch.path.name} puts it at {mine.tolist()}")
    punch.params.setdefault("_ASSEMBLY", asm.name)
