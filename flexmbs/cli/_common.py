"""Helpers shared by the subcommands: JSON output and node lists."""

from __future__ import annotations

import json
import sys

import numpy as np

from ..errors import ValidationError


def _strict(obj):
    """``obj`` with numpy values as Python ones and NaN/±inf as None (strict JSON)."""
    if isinstance(obj, dict):
        return {str(k): _strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _strict(obj.tolist())
    if isinstance(obj, np.generic):
        return _strict(obj.item())
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def emit_json(payload: dict) -> None:
    """Print ``payload`` as strict JSON on stdout (numpy values converted, undefined
    numbers such as NaN as null)."""
    json.dump(_strict(payload), sys.stdout, indent=2, default=str, allow_nan=False)
    sys.stdout.write("\n")


class ProgressBar:
    """A progress bar on stderr with elapsed time and ETA (rich): ``bar(done, total[,
    text])``; silent when disabled (not a terminal, ``--json`` or ``--quiet``). ``last``
    is the last percentage shown; :meth:`close` ends the bar where a run stopped short
    (also at exit)."""

    def __init__(self, enabled: bool, unit: str = "t", console=None):
        self.enabled, self.last, self.unit = enabled, -1, unit
        self._console, self._progress, self._task = console, None, None

    def _start(self, total):
        import atexit

        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = self._console or Console(stderr=True)
        self._progress = Progress(BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                                  TextColumn("ETA"), TimeRemainingColumn(),
                                  TextColumn("{task.fields[note]}"), console=console)
        self._task = self._progress.add_task("", total=total, note="")
        self._progress.start()
        atexit.register(self.close)

    def __call__(self, done, total, text=None):
        if not self.enabled:
            return
        if self._progress is None:
            self._start(total)
        note = (f"{self.unit} = {done:.4g} s" if text is None else str(text))
        self._progress.update(self._task, completed=done, total=total, note=note)
        self.last = int(100 * done / total) if total else 100
        if self.last >= 100:
            self.close()

    def close(self) -> None:
        """Stop the bar (idempotent)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def parse_value(text: str):
    """A command-line value as a TOML literal (``4``, ``1e-3``, ``[0, -9.81, 0]``,
    ``true``, ``"x"``); anything that is not one is taken as a plain string."""
    from ..cases.loader import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets: ``"1,[0,1],3"`` → 3 items."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


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
                lo, hi = int(lo), int(hi)
            else:
                lo = hi = int(part)
        except ValueError:
            raise ValidationError(f"{option}: {part!r} is not a node label or range") from None
        if hi < lo:
            raise ValidationError(f"{option}: range {part!r} runs backwards (it would name "
                                  f"no node); write it low-high, e.g. '{hi}-{lo}'")
        labels.extend(range(lo, hi + 1))
    return np.array(labels, dtype=np.int64)
