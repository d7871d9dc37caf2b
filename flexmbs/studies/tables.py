"""Study tables: a list of rows (dicts with the same keys, units in the key names) to CSV
and to a Markdown table."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from .._files import atomic_path


def _format(value) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else ("yes" if value else "no")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if value == 0:
            return "0"
        return f"{value:.4g}"
    return str(value)


def to_markdown(rows: list[dict], columns: list[str] | None = None) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` (4 significant digits)."""
    if not rows:
        return "(no rows)\n"
    columns = columns or list(rows[0])
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_format(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


#: Columns a terminal table shows first (the run's name and how it ended).
FIRST_COLUMNS = ("coupling", "modes", "run", "label", "status")
#: Row entries never shown in the terminal table (long texts; they are in the files).
LONG_COLUMNS = ("message", "warnings", "result_file")


def compact_table(rows: list[dict], width: int = 100) -> tuple[str, list[str]]:
    """(text, left-out columns): the rows as an aligned text table no wider than
    ``width`` characters, the name and status columns first, then as many of the other
    columns, in order, as fit; the full table is in the study's CSV and Markdown files."""
    if not rows:
        return "(no rows)\n", []
    keys = [k for k in rows[0] if k not in LONG_COLUMNS]
    order = [k for k in FIRST_COLUMNS if k in keys] + [k for k in keys
                                                        if k not in FIRST_COLUMNS]
    cells = {k: [_format(r.get(k)) for r in rows] for k in order}
    widths = {k: max(len(k), *(len(c) for c in cells[k])) for k in order}
    shown, used = [], 0
    for k in order:
        need = widths[k] + (2 if shown else 0)
        if shown and used + need > width:
            continue
        shown.append(k)
        used += need
    lines = ["  ".join(k.ljust(widths[k]) for k in shown).rstrip()]
    lines.append("  ".join("-" * widths[k] for k in shown))
    for i in range(len(rows)):
        lines.append("  ".join(cells[k][i].ljust(widths[k]) for k in shown).rstrip())
    return "\n".join(lines) + "\n", [k for k in order if k not in shown]


def write_csv(rows: list[dict], path, columns: list[str] | None = None) -> Path:
    """Write ``rows`` as CSV (full precision); returns the path."""
    path = Path(path)
    columns = columns or (list(rows[0]) if rows else [])
    with atomic_path(path, "table") as tmp, tmp.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: ("" if row.get(c) is None else row.get(c)) for c in columns})
    return path
