"""Remembered built-in beams (docs/case_files.md, "Remembered inputs").

A case's ``beam = {...}`` body is meshed and reduced when the case is read
(:func:`flexmbs.cases.beam_body.beam_modal_data`): importing SciPy's linear algebra
takes about 0.2 s of a fresh process and the reduction tens of milliseconds, where the
rest of reading the case takes milliseconds. So the modal data are remembered as a
native modal file (:mod:`flexmbs.modal.io.native`: sealed with a checksum) under a hash
of

- the beam table as given and what is asked of it (stiffening matrices, modal
  derivatives),
- :data:`REVISION`,
- every flexmbs source file (:func:`flexmbs.cases.remembered.package_digest`: any change
  to the code reduces afresh), and
- the installed NumPy and SciPy,

and a later reading of the same beam reads that file (about 2 ms) instead. A beam
table that JSON cannot hold, or a file that cannot be read back (damaged, another
format), is reduced afresh; a folder that cannot be written remembers nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .remembered import folder, installed_file, package_digest, prune

#: The revision of the entries: raised when what is remembered of a beam changes.
REVISION = 1


def key(spec, stiffening: bool, derivatives: bool) -> str | None:
    """The entry's name for the beam table ``spec`` and what is asked of it, or None
    when nothing is remembered (switched off, or a table JSON cannot hold)."""
    if folder("beams") is None:
        return None
    try:
        given = json.dumps({"beam": spec, "stiffening": bool(stiffening),
                            "derivatives": bool(derivatives)}, sort_keys=True,
                           allow_nan=False)
    except (TypeError, ValueError):
        return None
    import numpy as np

    libraries = f"numpy {np.__version__} {installed_file('scipy', 'version.py')}"
    digest = hashlib.sha256(given.encode())
    digest.update(f"\0{REVISION}\0{package_digest()}\0{libraries}".encode())
    return digest.hexdigest()


def _path(name: str) -> Path | None:
    where = folder("beams")
    return None if where is None else where / f"{name}.fmd.h5"


def recall(name: str):
    """The ModalData remembered under ``name``, or None."""
    path = _path(name)
    if path is None or not path.is_file():
        return None
    from ..errors import FlexmbsError
    from ..modal.io.native import read_native

    try:
        return read_native(path)
    except (FlexmbsError, OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None  # (made afresh, and written again)


def remember(name: str, data) -> None:
    """Keep the ModalData ``data`` under ``name`` (nothing when the folder cannot be
    written)."""
    path = _path(name)
    if path is None:
        return
    from ..errors import FlexmbsError
    from ..modal.io.native import write_native

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_native(data, path)
        prune(path.parent, "*.fmd.h5")
    except (FlexmbsError, OSError):
        pass
