"""A Nastran input file as Nastran reads it, turned into bulk data for pyNastran.

What a user hands over is often not a whole input deck: an include file that starts with
``BEGIN BULK``, a deck with executive and case control, or bulk data alone, with INCLUDE
statements whose paths are relative to the file that holds them (docs/modal_data_formats.md,
Nastran). :func:`bulk_text` reads all of these the same way:

* executive and case control (everything up to ``BEGIN BULK``) is skipped, whether or not
  the file has ``CEND``, and also when the ``BEGIN BULK`` sits in a file the control
  section includes; a file with neither ``BEGIN BULK`` nor ``CEND`` is bulk data from its
  first line;
* ``INCLUDE 'path'`` (quoted, possibly split over several lines, as Nastran allows) is
  replaced by that file's lines, the path taken relative to the including file's folder,
  then to the top file's folder; a missing file or an include cycle is an error naming the
  including file and line;
* reading stops at ``ENDDATA``.

Every line of the result remembers its file and line number, so a card pyNastran refuses
is reported where the user wrote it (:func:`bulk_error`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from ....errors import ReadError

_INCLUDE = re.compile(r"^\s*include\b", re.IGNORECASE)
_BEGIN_BULK = re.compile(r"^\s*begin[\s,]+bulk\b", re.IGNORECASE)
_ENDDATA = re.compile(r"^\s*enddata\b", re.IGNORECASE)
_CEND = re.compile(r"^\s*cend\b", re.IGNORECASE)
#: Nested INCLUDE depth beyond which a file is taken to include itself.
MAX_INCLUDE_DEPTH = 40


class Origin(NamedTuple):
    """Where a line of the flattened bulk data came from (1-based line number)."""

    path: Path
    line: int


def _read_lines(path: Path, origin: Origin | None) -> list[str]:
    where = f" (INCLUDE at {origin.path}:{origin.line})" if origin else ""
    if not path.is_file():
        raise ReadError(f"Nastran input {str(path)!r} not found{where}")
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError as exc:
        raise ReadError(f"cannot read Nastran input {str(path)!r}{where}: {exc}") from None


def _include_target(lines: list[str], start: int, path: Path) -> tuple[str, int]:
    """The quoted file name of the INCLUDE at ``lines[start]`` and the index of its last
    line (a quoted name may continue over following lines)."""
    text = _INCLUDE.sub("", lines[start], count=1).strip()
    end = start
    if text[:1] in "'\"":
        quote = text[0]
        body = text[1:]
        while quote not in body and end + 1 < len(lines):
            end += 1
            body += lines[end].strip()
        if quote not in body:
            raise ReadError(f"{path}:{start + 1}: INCLUDE {text!r} has no closing {quote}")
        name = body[:body.index(quote)]
    else:
        name = text.split()[0] if text.split() else ""
    if not name:
        raise ReadError(f"{path}:{start + 1}: INCLUDE names no file: {lines[start]!r}")
    return name, end


def _resolve(name: str, including: Path, top: Path) -> Path:
    target = Path(name).expanduser()
    if target.is_absolute():
        return target
    for folder in (including.parent, top.parent):
        if (folder / target).is_file():
            return folder / target
    return including.parent / target


def bulk_text(path: str | Path) -> tuple[list[str], list[Origin]]:
    """The bulk data of ``path`` with its INCLUDEs expanded, and each line's origin."""
    top = Path(path)
    lines = _read_lines(top, None)
    control = any(_BEGIN_BULK.match(line) or _CEND.match(line) for line in lines)
    out: list[str] = []
    where: list[Origin] = []
    _append(top, lines, top, out, where, in_bulk=not control, chain=(top.resolve(),))
    return out, where


def _append(path: Path, lines: list[str], top: Path, out: list[str], where: list[Origin],
            *, in_bulk: bool, chain: tuple[Path, ...]) -> tuple[bool, bool]:
    """Append the bulk lines of ``path``, starting in bulk data or (``in_bulk`` False) in
    executive or case control, whose lines are skipped up to BEGIN BULK; INCLUDEs are
    followed in both (an included file may hold the BEGIN BULK). Returns (ENDDATA
    reached, in bulk data at the end)."""
    k = 0
    while k < len(lines):
        line = lines[k]
        if _ENDDATA.match(line) and in_bulk:
            return True, in_bulk
        if not in_bulk and _BEGIN_BULK.match(line):
            in_bulk = True
            k += 1
            continue
        if _INCLUDE.match(line):
            name, end = _include_target(lines, k, path)
            target = _resolve(name, path, top)
            origin = Origin(path, k + 1)
            if len(chain) >= MAX_INCLUDE_DEPTH or target.resolve() in chain:
                raise ReadError(f"{path}:{k + 1}: INCLUDE {name!r} includes itself (through "
                                f"{' -> '.join(p.name for p in chain)})")
            sub = _read_lines(target, origin)
            # an included file with its own BEGIN BULK starts in control lines
            starts_in_bulk = in_bulk and not any(_BEGIN_BULK.match(x) for x in sub)
            ended, in_bulk = _append(target, sub, top, out, where, in_bulk=starts_in_bulk,
                                     chain=(*chain, target.resolve()))
            if ended:
                return True, in_bulk
            k = end + 1
            continue
        if in_bulk:
            out.append(line)
            where.append(Origin(path, k + 1))
        k += 1
    return False, in_bulk


def bulk_error(exc: BaseException, lines: list[str], where: list[Origin],
               top: Path) -> ReadError:
    """A ReadError for pyNastran's ``exc`` naming the card, its ID, the file and line.

    pyNastran's messages name the field but not the card (``x2 = '0' (field #4) on card
    must be a float``); the card being added is found in the traceback's frames.
    """
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    card_lines = None
    tb = exc.__traceback__
    while tb is not None:
        local = tb.tb_frame.f_locals
        if isinstance(local.get("card_lines"), list) and local["card_lines"]:
            card_lines = local["card_lines"]
        tb = tb.tb_next
    if not card_lines:
        return ReadError(f"{top}: pyNastran could not read the bulk data: {first}")
    head = str(card_lines[0])
    fields = re.split(r"[,\s]+", head.strip().replace("*", " ", 1), maxsplit=2)
    card = fields[0].upper().rstrip("*") if fields else "?"
    ident = fields[1] if len(fields) > 1 else "?"
    at = str(top)
    for k, line in enumerate(lines):
        if line.rstrip() == head.rstrip():
            at = f"{where[k].path}:{where[k].line}"
            break
    match = re.match(r"(\w+) = '([^']*)' \(field #(\d+)\).*must be an? (\w+)", first)
    if match and "integer" in first and match.group(4) in ("float", "double"):
        name, value, number, _ = match.groups()
        return ReadError(f"{at}: {card} {ident}: field {number} ({name}) = {value!r} is an "
                         f"integer where Nastran needs a real number (write {value}.)")
    return ReadError(f"{at}: {card} {ident}: {first}")
