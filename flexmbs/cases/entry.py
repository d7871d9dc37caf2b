"""One table entry of a case file ([[bodies]], [[forces]], …): typed access to its keys,
the attitude and profile sub-tables, each error naming the file, the entry and the key
(docs/case_files.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ValidationError
from ..frame.rotations import axis_angle
from ..model import Constant, Dwell, Move, PointToPoint, Polynomial, Sequence, SpinUp, Step5, Table
from ..model.motion_profiles import SHAPES, ProfileKeyError
from .case import CaseError, CaseKeyError


class _Table:
    """Key access for one TOML table entry, with errors naming where it came from."""

    def __init__(self, path: Path, where: str, data: dict, allowed: set[str]):
        self.path, self.where, self.data = path, where, data
        if not isinstance(data, dict):
            raise CaseError(f"{path.name}: {where} must be a table, got {data!r}")
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

    def numbers(self, key):
        """A list of finite numbers of any length under ``key`` (None when absent)."""
        value = self.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)
                for v in value):
            raise self.error(key, f"must be a list of finite numbers, got {value!r}")
        return value


def modal_options(t: _Table, data):
    """``data`` (ModalData) truncated to the entry's ``modes`` and with its
    ``damping_ratio`` (flexible bodies of case files and URDF links alike)."""
    modes = t.get("modes")
    if modes is not None:
        if isinstance(modes, bool) or not isinstance(modes, int) or modes < 1:
            raise t.error("modes", f"must be an integer >= 1, got {modes!r}")
        data = data.truncate(modes)
    if t.get("damping_ratio") is not None:
        data = data.with_damping(ratio=t.get("damping_ratio"))
    return data


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


#: The keys of a point-to-point move (``type = "point-to-point"`` or a shape's name).
MOVE_KEYS = {"type", "shape", "start", "end", "duration", "t0", "accel_fraction", "v_max",
             "a_max"}
#: Adams' STEP5(t, x0, h0, x1, h1): the other way of giving a ``step5`` move.
STEP5_KEYS = ("x0", "h0", "x1", "h1")
#: The keys of one entry of a sequence's ``moves``.
SEQUENCE_MOVE_KEYS = {"type", "shape", "end", "by", "duration", "accel_fraction", "v_max",
                      "a_max"}
PROFILE_TYPES = ("constant, polynomial, spin-up, table, point-to-point (or a shape: "
                 f"{', '.join(SHAPES)}) or sequence")


def _profile(t: _Table, key: str):
    value = t.get(key, required=True)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not np.isfinite(value):
            raise t.error(key, f"must be a finite number or a table with 'type', got "
                               f"{value!r}")
        return Constant(float(value))
    if not isinstance(value, dict):
        raise t.error(key, f"must be a number or a table with 'type', got {value!r}")
    kind = value.get("type")
    where = f"{t.where} {key}"
    if kind == "point-to-point" or kind in SHAPES:
        return _point_to_point(t.path, where, value)
    if kind == "sequence":
        return _sequence(t.path, where, value)
    sub = _Table(t.path, where, value,
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
        columns = {}
        for key in ("times", "values"):
            column = sub.get(key, required=True)
            if not isinstance(column, list) or len(column) < 2 or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool)
                    and np.isfinite(v) for v in column):
                raise sub.error(key, f"must be a list of two or more finite numbers, got "
                                     f"{column!r}")
            columns[key] = tuple(float(v) for v in column)
        if np.any(np.diff(columns["times"]) <= 0):
            raise sub.error("times", f"must increase strictly, got {list(columns['times'])!r}")
        if len(columns["times"]) != len(columns["values"]):
            raise sub.error("values", f"must have one value per time ({len(columns['times'])}"
                                      f"), got {len(columns['values'])}")
        return Table(columns["times"], columns["values"])
    raise sub.error("type", f"must be {PROFILE_TYPES}, got {kind!r}")


def _shape(sub: _Table) -> str:
    """A move's shape: its type when that names one, else its 'shape' (default quintic)."""
    kind = sub.get("type")
    if kind in SHAPES:
        if "shape" in sub.data:
            raise sub.error("shape", f"= {sub.data['shape']!r} is given by the type already "
                                     f"({kind!r}); use type = \"point-to-point\" with a "
                                     f"shape, or the shape as the type")
        return kind
    shape = sub.get("shape", SHAPES[0])
    if shape not in SHAPES:
        raise sub.error("shape", f"must be one of {', '.join(SHAPES)}; got {shape!r}")
    return shape


def _move_limits(sub: _Table) -> dict:
    return {k: sub.number(k, positive=True) for k in ("accel_fraction", "v_max", "a_max")}


def _point_to_point(path: Path, where: str, value: dict):
    """type = "point-to-point" (shape = quintic | cycloidal | trapezoidal | step5, quintic
    by default) or the shape as the type; a step5 may give Adams' x0, h0, x1, h1."""
    adams = value.get("type") == "step5" and any(k in value for k in STEP5_KEYS)
    sub = _Table(path, where, value, {"type", *STEP5_KEYS} if adams else MOVE_KEYS)
    try:
        if adams:
            return Step5(*(sub.number(k, required=True) for k in STEP5_KEYS))
        shape = _shape(sub)
        return PointToPoint(sub.number("start", required=True),
                            sub.number("end", required=True),
                            sub.number("duration", required=shape != "trapezoidal",
                                       positive=True),
                            shape, t0=sub.number("t0", 0.0), **_move_limits(sub))
    except ProfileKeyError as exc:
        raise sub.error(exc.key, exc.detail) from None


def _sequence(path: Path, where: str, value: dict):
    """type = "sequence": start, t0 (default 0) and moves, a list of move tables (a shape
    or point-to-point type with end or by, duration…) and dwells ({type = "dwell",
    duration = …})."""
    sub = _Table(path, where, value, {"type", "start", "t0", "moves"})
    entries = sub.get("moves", required=True)
    if not isinstance(entries, list) or not entries:
        raise sub.error("moves", f"must be a non-empty list of move and dwell tables, got "
                                 f"{entries!r}")
    moves = []
    for k, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise sub.error("moves", f"entry {k} must be a table with 'type', got {entry!r}")
        kind = entry.get("type")
        if kind == "dwell":
            m = _Table(path, f"{where} moves[{k}]", entry, {"type", "duration"})
            moves.append(Dwell(m.number("duration", required=True, positive=True)))
            continue
        m = _Table(path, f"{where} moves[{k}]", entry, SEQUENCE_MOVE_KEYS)
        if kind != "point-to-point" and kind not in SHAPES:
            raise m.error("type", f"must be dwell, point-to-point or a shape "
                                  f"({', '.join(SHAPES)}), got {kind!r}")
        if ("end" in entry) == ("by" in entry):
            raise m.error("end", "or 'by' must be given, not both (where the move ends, "
                                 "or how far it goes from where the last one ended)")
        shape = _shape(m)
        moves.append(Move(m.number("end"), m.number("duration", required=shape !=
                                                     "trapezoidal", positive=True),
                          shape, by=m.number("by"), **_move_limits(m)))
    try:
        return Sequence(sub.number("start", required=True), tuple(moves),
                        t0=sub.number("t0", 0.0))
    except ProfileKeyError as exc:
        # the owner "Sequence moves[k]" names the move
        raise CaseError(f"{path.name}: {where}{exc.owner.removeprefix('Sequence')}: key "
                        f"{exc.key!r} {exc.detail}") from None
