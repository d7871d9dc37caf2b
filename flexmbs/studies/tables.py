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
