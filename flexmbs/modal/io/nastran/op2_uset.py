"""The a-set of a superelement from the USET table of a Nastran OP2 file
(docs/modal_data_formats.md, "Nastran external superelements").

Nastran's USET table gives every DOF of the g-set its set membership, in internal sort
(grids and scalar points together by ID, a grid's components T1 … R3), and the OP2 that
carries it (the NAS2CAM DMAP, or PARAM,POST,-1) carries the grids' positions in the basic
system and their displacement (CD) systems too. Read with pyyeti (optional extra
``nastran``), it gives what a superelement's punch would: the boundary grids with their
a-set components (any of the six), the scalar points of the a-set (the q-set modal
coordinates), positions and CD axes, so that KAA and MAA of an OP4 file map onto the
a-set exactly as Nastran ordered them. Rectangular CD systems are read; a grid whose CD
system is cylindrical or spherical is refused naming it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ....errors import FlexmbsError, ReadError
from ..nastran_punch import Punch

MISSING = ("reading the USET table of a Nastran OP2 needs pyyeti (optional extra "
           "nastran): pip install 'flexmbs[nastran]'")


class UsetPunch(Punch):
    """A :class:`Punch` whose a-set order is known: the USET table's (internal sort)."""

    def layouts(self) -> list[tuple[str, list[tuple[int, int]]]]:
        grid_dofs = [(g, c) for g in sorted(self.boundary) for c in self.boundary[g]]
        labels = sorted(grid_dofs + [(s, 0) for s in self.qset])
        return [(f"the a-set of the USET table of {self.path.name} (internal sort)",
                 labels)]


def _pyyeti():
    try:
        from pyyeti.nastran import n2p, op2
    except ImportError:
        raise FlexmbsError(MISSING) from None
    return op2, n2p


def _usets(path: Path) -> dict:
    """{superelement ID: USET DataFrame} of the OP2 ``path`` (NAS2CAM or PARAM,POST)."""
    op2, _ = _pyyeti()
    errors = []
    try:
        with op2.OP2(str(path)) as file:
            found = file.rdn2cop2().get("uset") or {}
        if found:
            return dict(found)
    except Exception as exc:
        errors.append(f"NAS2CAM: {type(exc).__name__}: {exc}")
    try:
        post = op2.rdpostop2(str(path))
        if post.get("uset") is not None:
            return {0: post["uset"]}
    except Exception as exc:
        errors.append(f"PARAM,POST: {type(exc).__name__}: {exc}")
    raise ReadError(f"{path}: no USET table found (read as written by the NAS2CAM DMAP and "
                    f"by PARAM,POST,-1: {'; '.join(errors) or 'none in the file'})")


def punch_from_op2(path: str | Path, superelement: int | None = None) -> Punch:
    """The superelement's a-set as a :class:`~flexmbs.modal.io.nastran_punch.Punch` (no
    PLOTEL lines, no parameters) from the USET table of the OP2 ``path``;
    ``superelement`` picks one when the file holds several (default: the only one, else
    the residual, 0). ReadError naming the file, the grid and the value."""
    path = Path(path)
    if not path.is_file():
        raise ReadError(f"OP2 file {str(path)!r} not found")
    _, n2p = _pyyeti()
    usets = _usets(path)
    if superelement is None:
        superelement = next(iter(usets)) if len(usets) == 1 else 0
    if superelement not in usets:
        raise ReadError(f"{path}: no USET of superelement {superelement}; the file holds "
                        f"{sorted(usets)}")
    uset = usets[superelement]
    ids = np.asarray(uset.index.get_level_values(0), dtype=np.int64)
    dofs = np.asarray(uset.index.get_level_values(1), dtype=np.int64)
    sets = np.asarray(uset["nasset"].values, dtype=np.int64)
    xyz = np.asarray(uset[["x", "y", "z"]].values, dtype=float)
    in_a = (sets & int(n2p.mkusetmask("a"))) != 0
    in_body = set(ids[in_a].tolist())  # grids with a DOF in the a-set
    grid_rows = np.flatnonzero((dofs == 1) & np.isin(ids, list(in_body)))  # position row
    grid_ids = ids[grid_rows]
    order = np.argsort(grid_ids)
    grid_ids, grid_rows = grid_ids[order], grid_rows[order]
    frames = np.zeros((grid_ids.size, 3, 3))
    for k, row in enumerate(grid_rows):
        cid, kind = round(xyz[row + 1, 0]), round(xyz[row + 1, 1])
        if cid != 0 and kind != 1:
            raise ReadError(f"{path}: grid {int(grid_ids[k])} has displacement system {cid} "
                            f"of type {kind} (cylindrical or spherical); flexmbs reads "
                            f"rectangular CD systems from a USET table")
        frames[k] = xyz[row + 3:row + 6] if cid != 0 else np.eye(3)
    boundary: dict[int, tuple[int, ...]] = {}
    for pid, comp in zip(ids[in_a & (dofs > 0)], dofs[in_a & (dofs > 0)], strict=True):
        boundary.setdefault(int(pid), ())
        boundary[int(pid)] += (int(comp),)
    qset = sorted(int(p) for p in ids[in_a & (dofs == 0)])
    if not boundary and not qset:
        raise ReadError(f"{path}: superelement {superelement}'s USET has no DOF in the a-set")
    return UsetPunch(path=path, seid=int(superelement), grid_ids=grid_ids,
                     coords=xyz[grid_rows].copy(), frames=frames, boundary=boundary,
                     qset=qset, lines=[], params={}, cp_frames=frames.copy(),
                     blank_cd=np.zeros(grid_ids.size, dtype=bool))
