"""The thickness of the shell elements of an Abaqus ``.inp`` file (docs/theory_shells.md).

Abaqus gives a shell's thickness in the ``*SHELL SECTION, ELSET=name`` that covers its
element set: the first number of the line after the keyword. An element belongs to the
sets of its ``*ELEMENT, ELSET=name`` block and of the ``*ELSET`` blocks that list it
(labels, ``GENERATE`` ranges, or sets defined before). Composite sections
(``COMPOSITE``), sections whose reference surface is offset from the mid-surface
(``OFFSET`` other than 0) and general sections (``*SHELL GENERAL SECTION``) give no
single thickness of a flat mid-surface facet: their elements have none here.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import ReadError
from .fe_nodes import _keyword


def _integers(path: Path, lineno: int, fields: list[str], what: str) -> list[int]:
    try:
        return [int(f) for f in fields]
    except ValueError:
        raise ReadError(f"{path}, line {lineno}: cannot read {what} data line "
                        f"{', '.join(fields)!r} (expected integer labels)") from None


def shell_thickness(path: str | Path, lines: list[str]) -> dict[int, float]:
    """Element label → the thickness of its ``*SHELL SECTION`` [file length unit], for
    the elements of ``lines`` (the file's text lines) that one covers; ReadError naming
    the line of an unreadable thickness or set."""
    path = Path(path)
    elsets: dict[str, list[int]] = {}
    sections: dict[str, float] = {}
    block, params, section_pending = "", {}, None
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("**"):
            continue
        if line.startswith("*"):
            block, params = _keyword(line)
            section_pending = None
            if block == "ELSET" and "ELSET" in params:
                elsets.setdefault(params["ELSET"].upper(), [])
            offset = params.get("OFFSET", "0").upper()
            if block == "SHELL SECTION" and "COMPOSITE" not in params and offset in (
                    "0", "0.", "0.0", "MIDDLE SURFACE", "SMID"):
                if "ELSET" not in params:
                    raise ReadError(f"{path}, line {lineno}: *SHELL SECTION without "
                                    f"ELSET=<name>: {line!r}")
                section_pending = params["ELSET"].upper()
            continue
        fields = [f.strip() for f in line.split(",") if f.strip()]
        if block == "ELEMENT" and "ELSET" in params and fields:
            label = _integers(path, lineno, fields[:1], "*ELEMENT")[0]
            elsets.setdefault(params["ELSET"].upper(), []).append(label)
        elif block == "ELSET" and "ELSET" in params:
            members = elsets[params["ELSET"].upper()]
            if "GENERATE" in params:
                first, last, *step = _integers(path, lineno, fields, "*ELSET, GENERATE")
                members.extend(range(first, last + 1, step[0] if step else 1))
            else:
                for f in fields:
                    if f.upper() in elsets:
                        members.extend(elsets[f.upper()])
                    else:
                        members.extend(_integers(path, lineno, [f], "*ELSET"))
        elif block == "SHELL SECTION" and section_pending is not None:
            try:
                thickness = float(fields[0])
            except (ValueError, IndexError):
                raise ReadError(f"{path}, line {lineno}: cannot read the thickness of "
                                f"*SHELL SECTION, ELSET={section_pending}: {line!r}") from None
            sections[section_pending] = thickness
            section_pending = None
    out: dict[int, float] = {}
    for name, thickness in sections.items():
        if name not in elsets:
            raise ReadError(f"{path}: *SHELL SECTION names element set {name!r}, which no "
                            f"*ELEMENT or *ELSET defines")
        for label in elsets[name]:
            out[label] = thickness
    return out
