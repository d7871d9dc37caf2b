"""The shells' thickness and the elements' material of a Nastran bulk data file: what
stiffening, modal derivatives and stress modes need beside the matrices
(docs/theory_shells.md, docs/modal_data_formats.md).

* **Thickness** of each ``quad`` and ``triangle`` cell: the PSHELL's T of a CQUAD4,
  CQUADR, CTRIA3 or CTRIAR, or the mean of the element's own corner thicknesses (T1–T4,
  T1–T3, fractions of T when TFLAG = 1) when it gives them all. Other cells of those
  types (CSHEAR panels, CQUAD8 and CTRIA6 drawn by their corners, shells of PCOMP
  laminates, shells with a ZOFFS offset) have none (NaN): the stress recovery refuses
  them by their element ID.
* **Material**: the one MAT1 (E, NU, RHO) that every drawn element's property names
  (PSHELL MID1/MID2, PSOLID MID). With several materials, or another card, there is
  none, and the reason says which.

All values are in the file's units.
"""

from __future__ import annotations

import math

import numpy as np

#: Shell cards whose PSHELL thickness is read, by cell type, with their corner count.
SHELL_CARDS = {"quad": (("CQUAD4", "CQUADR"), 4), "triangle": (("CTRIA3", "CTRIAR"), 3)}


def _number(value) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def shell_thickness(geo, kind: str = "quad") -> np.ndarray:
    """(E,) the thickness of each ``kind`` (``quad``, ``triangle``) cell of the geometry
    ``geo`` (:class:`~flexmbs.modal.io.nastran.bulk.BdfGeometry`) [file length unit], NaN
    where the cell is not a shell card with a PSHELL (module docstring)."""
    model = geo.model
    cards, count = SHELL_CARDS[kind]
    labels = geo.cell_labels.get(kind, np.zeros(0, dtype=np.int64))
    out = np.full(len(labels), np.nan)
    for k, eid in enumerate(labels):
        elem = model.elements.get(int(eid))
        if elem is None or elem.type not in cards:
            continue
        prop = model.properties.get(elem.pid)
        if prop is None or prop.type != "PSHELL":
            continue
        if _number(getattr(elem, "zoffset", None)):  # an offset mid-surface: not here
            continue
        t = _number(prop.t)
        relative = getattr(elem, "tflag", 0) == 1  # the corners are fractions of T
        blank = 1.0 if relative else t             # a blank corner: T itself
        corners = [_number(getattr(elem, f"T{i}", None)) for i in range(1, count + 1)]
        corners = [blank if c is None or c <= 0 else c for c in corners]
        if t is None or any(c is None for c in corners):
            continue
        out[k] = (t if relative else 1.0) * float(np.mean(corners))
    return out


def _material_ids(model, elem) -> list[int]:
    prop = model.properties.get(getattr(elem, "pid", None))
    if prop is None:
        return []
    if prop.type == "PSHELL":
        return [int(m) for m in (prop.mid1, prop.mid2) if m not in (None, 0)]
    mid = getattr(prop, "mid", None)
    return [int(mid)] if mid not in (None, 0) else []


def element_material(geo) -> tuple[dict | None, str]:
    """(``{"E", "nu"[, "rho"]}`` in file units, "") when every drawn element's property
    names one and the same MAT1 with E and NU (or G); else (None, the reason)."""
    model = geo.model
    mids: set[int] = set()
    for labels in geo.cell_labels.values():
        for eid in labels:
            elem = model.elements.get(int(eid))
            if elem is not None:
                mids.update(_material_ids(model, elem))
    if not mids:
        return None, "its elements' properties name no material"
    if len(mids) > 1:
        return None, f"its elements use {len(mids)} materials ({sorted(mids)})"
    mid = mids.pop()
    mat = model.materials.get(mid)
    if mat is None or mat.type != "MAT1":
        kind = "no card" if mat is None else mat.type
        return None, f"material {mid} is {kind}, not an isotropic MAT1"
    young, nu, shear = _number(mat.e), _number(mat.nu), _number(mat.g)
    if nu is None and young and shear:
        nu = young / (2.0 * shear) - 1.0
    if young is None or nu is None:
        return None, f"MAT1 {mid} gives no E and NU"
    out = {"E": young, "nu": nu}
    rho = _number(mat.rho)
    if rho:
        out["rho"] = rho
    return out, ""
