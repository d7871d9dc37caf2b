"""Case-file tables that a later stage reads (docs/case_files.md): that stage registers
a reader here (:func:`register_table`), so that this stage does not import it.

``[[controllers]]`` is read by :mod:`flexmbs.cosim.case_tables`. The top-level package
names, in ``flexmbs._CASE_TABLES``, the module that registers each table's reader; it is
imported the first time a case file has that table (as the top-level API loads its names
on first use), so a case with controllers loads whatever was imported before.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from ..errors import ValidationError
from .case import Case, CaseError

#: Table name → reader(path, entries, case): reads the array of tables ``entries`` of the
#: case file ``path`` into the loaded ``case`` (raising ValidationError on bad input).
_READERS: dict[str, Callable[[Path, list, Case], None]] = {}


def register_table(name: str, reader: Callable[[Path, list, Case], None]) -> None:
    """Let ``reader(path, entries, case)`` read the ``[[name]]`` tables of case files."""
    _READERS[name] = reader


def table_reader(name: str) -> Callable[[Path, list, Case], None] | None:
    """The reader of ``[[name]]`` (its registering module imported if need be), or None."""
    if name not in _READERS:
        from .. import _CASE_TABLES

        if name in _CASE_TABLES:
            importlib.import_module(_CASE_TABLES[name])
    return _READERS.get(name)


def read_table(path: Path, name: str, entries, case: Case) -> None:
    """Read the ``[[name]]`` entries of the case file ``path`` into ``case`` with the
    registered reader; a CaseError names the file."""
    if not isinstance(entries, list):
        raise CaseError(f"{path.name}: {name} must be an array of tables ([[{name}]])")
    reader = table_reader(name)
    if reader is None:
        raise CaseError(f"{path.name}: [[{name}]]: no reader is registered for this table")
    try:
        reader(path, entries, case)
    except ValidationError as exc:
        raise CaseError(str(exc) if path.name in str(exc) else f"{path.name}: {exc}"
                        ) from None
