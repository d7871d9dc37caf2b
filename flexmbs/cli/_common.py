"""Helpers shared by the subcommands: JSON output and node lists."""

from __future__ import annotations

import json
import sys

import numpy as np

from ..errors import ValidationError


def emit_json(payload: dict) -> None:
    """Print ``payload`` as JSON on stdout (numpy values converted)."""

    def default(obj):
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        if isinstance(obj, np.generic):
            return obj.item()
        return str(obj)

    json.dump(payload, sys.stdout, indent=2, default=default)
    sys.stdout.write("\n")


def parse_nodes(text: str | None, option: str):
    """``"1,2,10-12"`` → array of labels; a non-numeric word is returned as a set name."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        raise ValidationError(f"{option} is empty")
    if not any(ch.isdigit() for ch in text.split(",")[0][:1]):
        return text
    labels: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part[1:]:
                lo, hi = part.split("-", 1)
                labels.extend(range(int(lo), int(hi) + 1))
            else:
                labels.append(int(part))
        except ValueError:
            raise ValidationError(f"{option}: {part!r} is not a node label or range") from None
    return np.array(labels, dtype=np.int64)
