"""Dotted-key overrides of a parsed case file (``--set table.entry.key=value``,
``load_case(path, overrides)``; docs/case_files.md, "Changing keys without editing the
case" in docs/studies.md)."""

from __future__ import annotations

from .case import CaseKeyError


def apply_overrides(raw: dict, overrides: dict, source: str = "case") -> None:
    """Set dotted keys in a parsed case (in place).

    ``"solver.h"`` sets key ``h`` of table ``[solver]``; ``"bodies.beam.modes"`` sets
    ``modes`` of the ``[[bodies]]`` entry named ``beam`` (arrays of tables are addressed
    by their entries' ``name``); ``"forces.tau1.value"`` likewise. A marker, whose name
    may repeat on other bodies, is ``markers.<name>`` when the name is the only one and
    ``markers.<body>.<name>`` always; an ``[[initial]]`` entry is named by its joint
    (``initial.elbow.angle_deg``). Missing tables and keys
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
            entries = [e for e in node if isinstance(e, dict)]
            matches, used = _entries(entries, rest)
            if not matches:
                raise CaseKeyError(f"{source}: override {key!r}: no [[{head}]] entry named "
                                   f"{rest[0]!r}; entries: {[_label(e) for e in entries]}")
            if len(matches) > 1:  # (a marker name repeats on several bodies)
                raise CaseKeyError(
                    f"{source}: override {key!r}: {len(matches)} [[{head}]] entries are "
                    f"named {rest[0]!r} ({', '.join(_label(e) for e in matches)}); name "
                    f"one with its body: '{head}.<body>.{rest[0]}.<key>'")
            node, rest = matches[0], rest[used:]
        elif not isinstance(node, dict):
            raise CaseKeyError(f"{source}: override {key!r}: {head!r} is not a table")
        for part in rest[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise CaseKeyError(f"{source}: override {key!r}: {part!r} is not a table")
        node[rest[-1]] = _as_toml(value)


def _label(entry: dict) -> str:
    """How an entry of an array of tables is named: its ``name`` (with its body, for an
    entry that has one), or the joint of an ``[[initial]]`` entry."""
    name = entry.get("name", entry.get("joint"))
    return f"{entry['body']}.{name}" if "body" in entry and "name" in entry else str(name)


def _entries(entries: list, rest: list) -> tuple[list, int]:
    """(the entries the key parts ``rest`` name, how many parts named them): ``<body>.
    <name>`` first (markers), then ``<name>`` (or an initial entry's joint)."""
    if len(rest) >= 3:
        both = [e for e in entries if e.get("body") == rest[0] and e.get("name") == rest[1]]
        if both:
            return both, 2
    return [e for e in entries if e.get("name", e.get("joint")) == rest[0]], 1


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
