"""A small, strict reader of Nastran bulk data as EXTSEOUT punches it (``.pch``, ``.asm``).

Only what an external superelement needs (docs/modal_data_formats.md, "Nastran external
superelements"): the cards are split into fields (small field 8 columns, large field
``NAME*`` 16 columns with ``*`` continuation lines, free field with commas; continuation
lines start with ``+``, ``*``, ``,`` or a blank first column), grouped by the
``BEGIN SUPER`` section they stand in (0 before any), and numbers are read with Nastran's
conventions (``1.0+9`` and ``7.2-4`` are 1e9 and 7.2e-4; ``D`` exponents). Coordinate
systems CORD2R/C/S may reference each other (RID); they are resolved to the basic
system. Every error names the file, the line, the card and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import ReadError

#: A Nastran real: mantissa, then an exponent with E/D or a bare sign (``1.5-3``).
_REAL = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eEdD]([+-]?\d+)|([+-]\d+))?$")
_INT = re.compile(r"^[+-]?\d+$")
_BEGIN_SUPER = re.compile(r"^BEGIN\s*,?\s*SUPER\s*=?\s*,?\s*(\d+)", re.IGNORECASE)


@dataclass
class Card:
    """One bulk data entry: its name (upper case, without ``*``), its data fields (as
    text, stripped; field 2 onwards, continuations appended) and where it starts."""

    name: str
    fields: list[str]
    path: Path
    line: int

    def where(self) -> str:
        return f"{self.path.name}, line {self.line}: {self.name}"

    def text(self, k: int) -> str:
        """Field ``k`` (0 = the first data field); blank beyond the end."""
        return self.fields[k] if k < len(self.fields) else ""

    def integer(self, k: int, what: str, default: int | None = None) -> int:
        value = self.text(k)
        if not value:
            if default is None:
                raise ReadError(f"{self.where()}: {what} (field {k + 2}) is blank; an "
                                "integer is required")
            return default
        if not _INT.match(value):
            raise ReadError(f"{self.where()}: {what} (field {k + 2}) = {value!r} is not "
                            "an integer")
        return int(value)

    def real(self, k: int, what: str, default: float | None = None) -> float:
        value = self.text(k)
        if not value:
            if default is None:
                raise ReadError(f"{self.where()}: {what} (field {k + 2}) is blank; a "
                                "number is required")
            return default
        try:
            return parse_real(value)
        except ValueError:
            raise ReadError(f"{self.where()}: {what} (field {k + 2}) = {value!r} is not "
                            "a number") from None


def parse_real(text: str) -> float:
    """A Nastran number: ``1.``, ``.5``, ``-5.5E-10``, ``1.0D+3``, ``7.27-4``, ``1.0+9``."""
    match = _REAL.match(text.strip())
    if not match:
        raise ValueError(text)
    mantissa, exp_e, exp_bare = match.groups()
    exponent = exp_e if exp_e is not None else exp_bare
    return float(f"{mantissa}e{exponent}") if exponent else float(mantissa)


def _is_continuation(line: str) -> bool:
    return line[:1] in ("+", "*", ",", " ", "\t") or line == ""


def _split(line: str, path: Path, number: int) -> tuple[str, list[str], bool]:
    """(name or continuation marker, data fields, large field) of one physical line."""
    if "," in line:
        parts = [p.strip() for p in line.split(",")]
        head, data = parts[0], parts[1:]
        large = head.endswith("*")
        per = 4 if large else 8
        if len(data) > per + 1:
            raise ReadError(f"{path.name}, line {number}: a free-field line holds at most "
                            f"{per} data fields and a continuation marker; got "
                            f"{len(data)}: {line.strip()!r}")
        data = (data + [""] * per)[:per]
        return head, data, large
    line = line.expandtabs(8)
    head = line[:8].strip()
    large = head.endswith("*") or line.startswith("*")
    width, count = (16, 4) if large else (8, 8)
    data = [line[8 + width * k: 8 + width * (k + 1)].strip() for k in range(count)]
    return head, data, large


def read_cards(path: Path, text: str | None = None) -> dict[int, list[Card]]:
    """The bulk data cards of ``path``, grouped by BEGIN SUPER section (0: before any)."""
    if text is None:
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise ReadError(f"cannot read {str(path)!r}: {exc}") from None
    sections: dict[int, list[Card]] = {}
    section = 0
    current: Card | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r\n")
        comment = line.find("$")
        if comment == 0:
            continue
        if comment > 0:
            line = line[:comment]
        if not line.strip():
            continue
        upper = line.strip().upper()
        begin = _BEGIN_SUPER.match(upper)
        if begin:
            section = int(begin.group(1))
            current = None
            continue
        if upper.startswith(("BEGIN BULK", "BEGIN,BULK", "ENDDATA", "INCLUDE")):
            if upper.startswith("INCLUDE"):
                raise ReadError(f"{path.name}, line {number}: INCLUDE is not followed "
                                "here; give the punch file that holds the cards")
            current = None
            continue
        if _is_continuation(line) and not line.strip().upper().startswith("BEGIN"):
            if current is None:
                raise ReadError(f"{path.name}, line {number}: a continuation line without "
                                f"a card before it: {line.strip()!r}")
            _, data, _ = _split(line, path, number)
            current.fields.extend(data)
            continue
        head, data, _ = _split(line, path, number)
        name = head.rstrip("*").strip().upper()
        if not re.match(r"^[A-Z][A-Z0-9]*$", name):
            raise ReadError(f"{path.name}, line {number}: {head!r} is not a card name")
        current = Card(name, list(data), path, number)
        sections.setdefault(section, []).append(current)
    for cards in sections.values():
        for card in cards:
            while card.fields and not card.fields[-1]:
                card.fields.pop()
    return sections


def id_list(card: Card, start: int, what: str) -> list[int]:
    """Integers from field ``start`` on, with ``A THRU B`` ranges expanded."""
    values = [f for f in card.fields[start:] if f]
    out: list[int] = []
    k = 0
    while k < len(values):
        if values[k].upper() == "THRU":
            if not out or k + 1 >= len(values) or not _INT.match(values[k + 1]):
                raise ReadError(f"{card.where()}: THRU needs an ID before and after it")
            last = int(values[k + 1])
            if last < out[-1]:
                raise ReadError(f"{card.where()}: {out[-1]} THRU {last} runs backwards")
            out.extend(range(out[-1] + 1, last + 1))
            k += 2
            continue
        if not _INT.match(values[k]):
            raise ReadError(f"{card.where()}: {what} {values[k]!r} is not an integer")
        out.append(int(values[k]))
        k += 1
    return out


def components(card: Card, value: str, what: str) -> tuple[int, ...]:
    """A component string ``123456`` (or ``0``/blank for a scalar point) as ascending
    digits; 0 for a scalar point."""
    text = value.strip() or "0"
    if not text.isdigit() or (text != "0" and ("0" in text or len(set(text)) != len(text)
                                               or max(text) > "6")):
        raise ReadError(f"{card.where()}: {what} = {value!r} is not a component list "
                        "(digits 1-6, each once, or 0 for a scalar point)")
    return (0,) if text == "0" else tuple(sorted(int(c) for c in text))


# ------------------------------------------------------------------ coordinate systems
@dataclass
class CoordSystem:
    """A resolved coordinate system: ``origin`` and unit axes ``i, j, k`` in basic, and its
    ``Type`` "R", "C" or "S" (the attribute names of the Nastran geometry reader)."""

    cid: int
    Type: str
    origin: np.ndarray
    i: np.ndarray
    j: np.ndarray
    k: np.ndarray
    rid: int = 0
    card: Card | None = field(default=None, repr=False)

    def to_basic(self, x: np.ndarray) -> np.ndarray:
        """A point given by its coordinates in this system ((x, y, z); (r, θ°, z); or
        (r, θ°, φ°)) in basic."""
        x = np.asarray(x, dtype=float)
        if self.Type == "C":
            t = np.radians(x[1])
            local = np.array([x[0] * np.cos(t), x[0] * np.sin(t), x[2]])
        elif self.Type == "S":
            t, p = np.radians(x[1]), np.radians(x[2])
            local = x[0] * np.array([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p),
                                     np.cos(t)])
        else:
            local = x
        return self.origin + np.column_stack([self.i, self.j, self.k]) @ local


BASIC = CoordSystem(0, "R", np.zeros(3), np.eye(3)[0], np.eye(3)[1], np.eye(3)[2])


def coordinate_systems(cards: list[Card]) -> dict[int, CoordSystem]:
    """CORD2R/C/S of ``cards`` resolved to basic (chains through RID in any order);
    ReadError on a missing or circular reference, a duplicate ID or degenerate points."""
    raw: dict[int, Card] = {}
    for card in cards:
        if card.name in ("CORD1R", "CORD1C", "CORD1S"):
            raise ReadError(f"{card.where()}: grid-defined coordinate systems (CORD1R/C/S) "
                            "are not read in superelement punches; only CORD2R/C/S")
        if card.name not in ("CORD2R", "CORD2C", "CORD2S"):
            continue
        cid = card.integer(0, "CID")
        if cid in raw or cid == 0:
            raise ReadError(f"{card.where()}: coordinate system {cid} is defined twice")
        raw[cid] = card
    out: dict[int, CoordSystem] = {0: BASIC}

    def resolve(cid: int, chain: tuple[int, ...]) -> CoordSystem:
        if cid in out:
            return out[cid]
        card = raw[cid]
        rid = card.integer(1, "RID", default=0)
        if rid in chain:
            raise ReadError(f"{card.where()} {cid}: RID = {rid} closes a circle of "
                            f"coordinate systems {[*chain, rid]}")
        if rid not in raw and rid != 0:
            raise ReadError(f"{card.where()} {cid}: RID = {rid} is not a defined coordinate "
                            "system (CORD2R/C/S)")
        ref = resolve(rid, (*chain, cid))
        pts = [ref.to_basic([card.real(2 + 3 * p + a, f"{'ABC'[p]}{a + 1}")
                             for a in range(3)]) for p in range(3)]
        a, b, c = pts
        k = b - a
        if np.linalg.norm(k) == 0:
            raise ReadError(f"{card.where()} {cid}: points A and B coincide")
        k = k / np.linalg.norm(k)
        j = np.cross(k, c - a)
        if np.linalg.norm(j) < 1e-12 * max(np.linalg.norm(c - a), 1e-300):
            raise ReadError(f"{card.where()} {cid}: point C lies on the z axis (A-B line)")
        j = j / np.linalg.norm(j)
        system = CoordSystem(cid, card.name[-1], a, np.cross(j, k), j, k, rid, card)
        out[cid] = system
        return system

    for cid in raw:
        resolve(cid, (cid,))
    return out


def nastran_parameters(cards: list[Card]) -> dict[str, str]:
    """PARAM name → value text (upper-case names)."""
    out = {}
    for card in cards:
        if card.name == "PARAM":
            out[card.text(0).upper()] = card.text(1)
    return out
