"""One table entry of a case file ([[bodies]], [[forces]], …): typed access to its keys,
the attitude and profile sub-tables, each error naming the file, the entry and the key
(docs/case_files.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ValidationError
from ..frame.rotations import axis_angle
from ..model import Constant, Polynomial, SpinUp, Table
from .case import CaseError, CaseKeyError


class _Table:
    """Key access for one TOML table entry, with errors naming where it came from."""

    def __init__(self, path: Path, where: str, data: dict, allowed: set[str]):
        self.path, self.where, self.data = path, where, data
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise CaseKeyError(f"{path.name}: {where}: unknown key(s) {unknown}; allowed: "
                               f"{sorted(allowed)}")

    def error(self, key, message):
        return CaseError(f"{self.path.name}: {self.where}: key {key!r} {message}")

    def get(self, key, default=None, *, required=False):
        if key not in self.data:
            if required:
                raise CaseError(f"{self.path.name}: {self.where}: missing key {key!r}")
            return default
        return self.data[key]

    def text(self, key, default=None, *, required=False):
        """A non-empty string (names and references: a name must not be empty or a
        number, or the entries referring to it go astray)."""
        value = self.get(key, default, required=required)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, f"must be a non-empty string, got {value!r}")
        return value

    def number(self, key, default=None, *, required=False, positive=False):
        value = self.get(key, default, required=required)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(
                value):
            raise self.error(key, f"must be a finite number, got {value!r}")
        if positive and not value > 0:
            raise self.error(key, f"must be a positive number, got {value!r}")
        return float(value)

    def vector(self, key, default=None, *, required=False, size=3):
        value = self.get(key, default, required=required)
        if value is None:
            return None
        arr = np.asarray(value, dtype=float) if isinstance(value, list) else None
        if arr is None or arr.shape != (size,) or not np.all(np.isfinite(arr)):
            raise self.error(key, f"must be a list of {size} numbers, got {value!r}")
        return arr


#: The ways of giving an attitude; an entry may use one of them (axis and angle_deg
#: together), never two.
ATTITUDE_KEYS = (("orientation",), ("axis", "angle_deg"), ("z_axis",))


def _orientation(t: _Table):
    """orientation: a 3x3 list, or axis + angle [deg], or z_axis."""
    given = [keys for keys in ATTITUDE_KEYS if any(k in t.data for k in keys)]
    if len(given) > 1:
        first, second = (next(k for k in keys if k in t.data) for keys in given[:2])
        raise CaseError(f"{t.path.name}: {t.where}: keys {first!r} and {second!r} both give "
                        f"the attitude; keep one (orientation, axis + angle_deg, or z_axis)")
    for key, partner in (("axis", "angle_deg"), ("angle_deg", "axis")):
        if key in t.data and partner not in t.data:
            raise t.error(key, f"= {t.data[key]!r} needs {partner!r} too (an attitude by "
                               f"axis and angle gives both)")
    if "orientation" in t.data:
        value = t.data["orientation"]
        arr = np.asarray(value, dtype=float) if isinstance(value, list) else None
        if arr is None or arr.shape not in ((3, 3), (4,)):
            raise t.error("orientation", "must be a 3x3 rotation matrix (rows) or 4 Euler "
                                         f"parameters, got {value!r}")
        return arr
    if "axis" in t.data:
        axis = t.vector("axis", required=True)
        if not np.linalg.norm(axis) > 0:
            raise t.error("axis", f"must not be the zero vector, got {t.data['axis']!r}")
        return axis_angle(axis, np.radians(t.number("angle_deg", required=True)))
    if "z_axis" in t.data:
        return t.vector("z_axis")
    return None


def _profile(t: _Table, key: str):
    value = t.get(key, required=True)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Constant(float(value))
    if not isinstance(value, dict):
        raise t.error(key, f"must be a number or a table with 'type', got {value!r}")
    sub = _Table(t.path, f"{t.where} {key}", value,
                 {"type", "coefficients", "omega", "duration", "times", "values", "value"})
    kind = sub.get("type", required=True)
    if kind == "constant":
        return Constant(sub.number("value", required=True))
    if kind == "polynomial":
        coeffs = sub.get("coefficients", required=True)
        try:
            return Polynomial(coeffs if isinstance(coeffs, (list, tuple)) else (coeffs,))
        except ValidationError as exc:
            raise sub.error("coefficients", f"must be a list of one or more finite numbers "
                            f"(constant term first), got {coeffs!r}") from exc
    if kind == "spin-up":
        return SpinUp(sub.number("omega", required=True),
                      sub.number("duration", required=True, positive=True))
    if kind == "table":
        return Table(tuple(sub.get("times", required=True)),
                     tuple(sub.get("values", required=True)))
    raise sub.error("type", f"must be constant, polynomial, spin-up or table, got {kind!r}")
