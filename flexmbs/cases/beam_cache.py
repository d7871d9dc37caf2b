"""Remembered built-in beams (docs/case_files.md, "Remembered inputs").

A case's ``beam = {...}`` body is meshed and reduced when the case is read
(:func:`flexmbs.cases.beam_body.beam_modal_data`): importing SciPy's linear algebra
takes about 0.2 s of a fresh process and the reduction tens of milliseconds, where the
rest of reading the case takes milliseconds. So the modal data are remembered as a
native modal file (:mod:`flexmbs.modal.io.native`: sealed with a checksum), with the
warnings the reduction gave (a JSON file beside it, said again at each reading), under a
hash of

- the beam table as given and what is asked of it (stiffening matrices, modal
  derivatives),
- :data:`REVISION`,
- every flexmbs source file (:func:`flexmbs.cases.remembered.package_digest`: a change
  to any file's size or modification time reduces afresh), and
- the installed NumPy and SciPy,

and a later reading of the same beam reads that file (about 2 ms) instead. A beam
table that JSON cannot hold, or an entry that cannot be read back (damaged, another
format, its warnings missing), is reduced afresh; one that cannot be written (a full
disk) is not remembered, and nothing is left of it
(:func:`flexmbs.modal.io.native.write_native`).
"""

from __future__ import annotations

import builtins
import hashlib
import importlib
import json
from pathlib import Path

from .remembered import folder, installed_file, package_digest, prune

#: The revision of the entries: raised when what is remembered of a beam changes.
REVISION = 2


def key(spec, stiffening: bool, derivatives: bool) -> str | None:
    """The entry's name for the beam table ``spec`` and what is asked of it, or None
    when nothing is remembered (switched off, a table JSON cannot hold, or sources that
    cannot be read)."""
    if folder("beams") is None:
        return None
    try:
        given = json.dumps({"beam": spec, "stiffening": bool(stiffening),
                            "derivatives": bool(derivatives)}, sort_keys=True,
                           allow_nan=False)
    except (TypeError, ValueError):
        return None
    sources = package_digest()
    if sources is None:
        return None
    import numpy as np

    libraries = f"numpy {np.__version__} {installed_file('scipy', 'version.py')}"
    digest = hashlib.sha256(given.encode())
    digest.update(f"\0{REVISION}\0{sources}\0{libraries}".encode())
    return digest.hexdigest()


def _paths(name: str) -> tuple[Path, Path] | None:
    where = folder("beams")
    return None if where is None else (where / f"{name}.fmd.h5",
                                       where / f"{name}.warnings.json")


def recall(name: str):
    """(ModalData, warnings as (category, message) pairs) remembered under ``name``, or
    None."""
    paths = _paths(name)
    if paths is None or not paths[0].is_file():
        return None
    from ..errors import FlexmbsError
    from ..modal.io.native import read_native

    try:
        said = [(_category(module, name_), str(text)) for module, name_, text
                in json.loads(paths[1].read_text(encoding="utf-8"))["warnings"]]
        return read_native(paths[0]), said
    except (FlexmbsError, OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None  # (made afresh, and written again)


def remember(name: str, data, said) -> None:
    """Keep the ModalData ``data`` and the warnings ``said`` ((category, message) pairs)
    under ``name``; nothing when the folder cannot be written (a full disk included)."""
    paths = _paths(name)
    if paths is None:
        return
    from .._files import write_text
    from ..errors import FlexmbsError
    from ..modal.io.native import write_native

    try:
        paths[0].parent.mkdir(parents=True, exist_ok=True)
        write_text(paths[1], json.dumps({"warnings": [
            [category.__module__, category.__qualname__, message]
            for category, message in said]}), "remembered beam's warnings")
        write_native(data, paths[0])  # (a full disk: a WriteError, nothing left)
        prune(paths[0].parent, "*.fmd.h5")
    except (FlexmbsError, OSError, ValueError, RuntimeError):
        pass


def _category(module: str, name: str) -> type[Warning]:
    """The warning class ``module``.``name`` of flexmbs or Python (UserWarning for any
    other, or one that is no warning class)."""
    found = None
    if module == "builtins":
        found = getattr(builtins, name, None)
    elif module == "flexmbs" or module.startswith("flexmbs."):
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            found = None
    return found if isinstance(found, type) and issubclass(found, Warning) else UserWarning
