"""Registry of modal-data file formats: one module per format registers itself.

``read_modal(path)`` picks the reader by extension, or by an explicit ``format`` name;
when it cannot tell, the error lists the known formats.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import ReadError, WriteError
from ..data import ModalData, plausibility_warnings
from .native import NATIVE_EXTENSIONS


@dataclass(frozen=True)
class ModalFormat:
    """A registered modal-data format."""

    name: str
    extensions: tuple[str, ...]
    description: str
    reader: Callable[..., ModalData] | None = None
    writer: Callable[..., None] | None = None


FORMATS: dict[str, ModalFormat] = {}



def modal_formats() -> dict[str, ModalFormat]:
    """Every modal-data format, the built-in ones first loaded (:data:`FORMATS` holds
    only those loaded so far: a format's module is imported when a file may be its)."""
    _load_native()
    _load_builtin()
    return dict(FORMATS)


def register_format(name: str, extensions, description: str, reader=None, writer=None) -> None:
    """Register (or replace) a format; extensions include the dot, e.g. ``".h5"``."""
    FORMATS[name] = ModalFormat(name, tuple(e.lower() for e in extensions), description,
                                reader, writer)


def _pick(path: Path, fmt: str | None, need: str) -> ModalFormat:
    _load_native()
    name = path.name.lower()
    if not (fmt == "native" or (fmt is None and name.endswith(NATIVE_EXTENSIONS))):
        # the other built-in formats (none of them reads or writes a NATIVE_EXTENSIONS
        # name: tests/test_startup.py) and what they import (scipy.io, the Nastran
        # readers) load only when a file may be theirs
        _load_builtin()
    if fmt is not None:
        if fmt not in FORMATS:
            raise ReadError(f"unknown modal format {fmt!r}; known: {', '.join(sorted(FORMATS))}")
        chosen = FORMATS[fmt]
    else:
        matches = [f for f in FORMATS.values() if any(name.endswith(e) for e in f.extensions)]
        if not matches:
            known = "; ".join(f"{f.name} ({', '.join(f.extensions)})" for f in FORMATS.values())
            raise ReadError(f"cannot tell the modal format of {str(path)!r} from its extension;"
                            f" pass format=... Known formats: {known}")
        chosen = max(matches, key=lambda f: max(len(e) for e in f.extensions
                                                if name.endswith(e)))
    if getattr(chosen, need) is None:
        raise ReadError(f"format {chosen.name!r} has no {need}")
    return chosen


def read_modal(path: str | os.PathLike, format: str | None = None, **options) -> ModalData:
    """Read a flexible component's modal data; options go to the format's reader.

    Common options: ``units`` (source unit system, converted to SI), and for formats that
    do not store it, ``reference_frame``/``attach_set``. Implausible magnitudes raise a
    :class:`~flexmbs.errors.UnitsWarning` naming what looks wrong.
    """
    path = Path(path)
    if not path.exists():
        raise ReadError(f"modal data file {str(path)!r} does not exist")
    if path.is_dir():
        raise ReadError(f"modal data file {str(path)!r} is a folder; give the file "
                        f"itself (e.g. {str(path / 'beam.fmd.h5')!r})")
    fmt = _pick(path, format, "reader")
    data = fmt.reader(path, **options)
    plausibility_warnings(data)
    return data


def check_writable(path: str | os.PathLike, format: str | None = None) -> Path:
    """Raise :class:`WriteError` unless ``path`` has a known writer and an existing folder.

    Call it before long work (a reduction) whose result goes to ``path``.
    """
    path = Path(path)
    if path.is_dir():
        raise WriteError(f"cannot write modal data {str(path)!r}: it is a folder; give a "
                         f"file name (e.g. {str(path / 'beam.fmd.h5')!r})")
    try:
        _pick(path, format, "writer")
    except ReadError as exc:
        raise WriteError(str(exc).replace("modal format of", "output format of")) from None
    if not path.parent.is_dir():
        raise WriteError(f"cannot write {str(path)!r}: folder {str(path.parent)!r} does not "
                         "exist")
    return path


def write_modal(data: ModalData, path: str | os.PathLike, format: str | None = None,
                **options) -> Path:
    """Write ``data`` in the format chosen by extension or name; returns the path."""
    path = check_writable(path, format)
    fmt = _pick(path, format, "writer")
    try:
        fmt.writer(data, path, **options)
    except OSError as exc:
        if isinstance(exc, WriteError):
            raise
        raise WriteError(f"cannot write {str(path)!r}: {exc}") from exc
    return path


_LOADED = False


def _register(module) -> None:
    """Register the format a built-in module declares (``MODAL_FORMAT``)."""
    name, extensions, description, *functions = module.MODAL_FORMAT
    register_format(name, extensions, description, *functions)


def _load_native() -> None:
    """Register the native format (its module is imported with the registry)."""
    if "native" not in FORMATS:
        from . import native

        _register(native)


def _load_builtin() -> None:
    """Import the built-in format modules and register the format each declares
    (``MODAL_FORMAT``); the modules do not import the registry."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from . import mbdyn, nastran_superelement, native, vtu
    from .nastran import op2_modes

    for module in (mbdyn, op2_modes, nastran_superelement, native, vtu):
        _register(module)
