"""Dotted-key overrides of a parsed case file (``--set table.entry.key=value``,
``load_case(path, overrides)``; docs/case_files.md, "Changing keys without editing the
case" in docs/studies.md)."""

from __future__ import annotations

from .case import CaseKeyError


def apply_overrides(raw: dict, overrides: dict, source: str = "case") -> None:
    """Set dotted keys in a parsed case (in place).

    ``"solver.h"`` sets key ``h`` of table ``[solver]``; ``"bodies.beam.modes"`` sets
    ``modes`` of the ``[[bodies]]`` entry named ``beam`` (arrays of tables are addressed
    by their entries' ``name``); ``"forces.tau1.value"`` likewise. Missing tables and keys
    are created (the loader then validates them as usual); a missing named entry is an
    error naming the key and the entries there are.
    """
    for key, value in overrides.items():
        parts = str(key).split(".")
        if len(parts) < 2 or not all(parts):
            raise CaseKeyError(f"{source}: override {key!r}: expected 'table.key' or "
                               f"'table.entry.key' (e.g. 'solver.h', 'bodies.beam.modes')")
        head, rest = parts[0], parts[1:]
        node = raw.setdefault(head, {})
        if isinstance(node, list):
            if len(rest) < 2:
                raise CaseKeyError(f"{source}: override {key!r}: [[{head}]] is an array of "
                                   f"tables; name the entry: '{head}.<name>.<key>'")
            names = [e.get("name") for e in node if isinstance(e, dict)]
            matches = [e for e in node if isinstance(e, dict) and e.get("name") == rest[0]]
            if not matches:
                raise CaseKeyError(f"{source}: override {key!r}: no [[{head}]] entry named "
                                   f"{rest[0]!r}; entries: {names}")
            node, rest = matches[0], rest[1:]
        elif not isinstance(node, dict):
            raise CaseKeyError(f"{source}: override {key!r}: {head!r} is not a table")
        for part in rest[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise CaseKeyError(f"{source}: override {key!r}: {part!r} is not a table")
        node[rest[-1]] = _as_toml(value)


def _as_toml(value):
    """An override's value as TOML would hold it: tuples and NumPy arrays as lists (a
    gravity given as (0, -9.81, 0) is the case file's [0, -9.81, 0]), NumPy scalars as
    Python numbers."""
    if isinstance(value, (tuple, list)):
        return [_as_toml(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_toml(v) for k, v in value.items()}
    tolist = getattr(value, "tolist", None)  # (a NumPy array or scalar)
    return tolist() if callable(tolist) else value
