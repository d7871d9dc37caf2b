"""The compiled engine's buffer toolkit (docs/compiled.md): the packing of tables and
workspace into flat buffers (:mod:`~flexmbs.compiled.layout`,
:mod:`~flexmbs.compiled.packing`, :mod:`~flexmbs.compiled.workspace`), the rotation and
quadratic-velocity helpers, the numbers the kernels and Python exchange
(:mod:`~flexmbs.compiled.codes`), and where numba keeps the kernels.

The kernels themselves live with their element kinds (:mod:`flexmbs.elements`) and in
the engine stage (:mod:`flexmbs.engine`: the dispatch over kinds, the Newton
iteration, :class:`~flexmbs.engine.compiled_system.CompiledSystem` and the kernels'
loading). The NumPy path (:mod:`flexmbs.assembly`) stays the reference;
``simulate(..., engine="python")`` or ``NUMBA_DISABLE_JIT=1`` runs it.

The kernels are written for numba (:mod:`flexmbs.engine.newton` and the modules it
imports). A run takes them either as the shipped prebuilt machine code
(:mod:`flexmbs.engine.prebuilt`, loaded without numba) or from numba, which compiles
them once per install and caches them on disk. Importing this package does not import
numba, reads no kernel source and creates no folder: the kernels' source hash
(:func:`kernel_tag`) and their folders (:func:`kernel_state_dir`,
:func:`kernel_cache_dir`) are worked out when a run first needs kernels.

Kernel cache: numba reuses a cached kernel when its own source file is unchanged, but
the kernels fold the packing layout (:mod:`flexmbs.compiled.layout`) in as constants.
So, unless ``NUMBA_CACHE_DIR`` is set, the kernels are cached in a folder named by a
hash of the kernel sources (:func:`kernel_sources`, :mod:`flexmbs.compiled._jit`): a
changed layout can never meet a stale kernel.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from pathlib import Path

#: This package's folder and the one the element kinds' kernels live in.
_HERE = Path(__file__).resolve().parent
_ELEMENTS = _HERE.parent / "elements"

#: Modules of this package without kernel code: not part of the kernels' source hash.
#: (workspace.py is part of it: the order of its declarations gives the header rows the
#: kernels fold in as constants.)
NOT_KERNEL_SOURCES = ("__init__.py", "_jit.py")


def kernel_sources() -> list[Path]:
    """The files the kernels are compiled from, in the order they are hashed: the one
    list of them (:func:`kernel_tag`, the prebuilt kernel's manifest and numba's cache
    folder all follow it).

    - every ``*.py`` of ``flexmbs/compiled/`` except :data:`NOT_KERNEL_SOURCES`;
    - every ``*.py`` under ``flexmbs/elements/``, at any depth (the element kinds'
      kernels, docs/compiled.md);
    - the engine's dispatch over the kinds, its Newton iteration, its linear solves
      and the gradients' backward sweep (``flexmbs/engine/dispatch.py``, ``newton.py``,
      ``linear_solves.py``, ``adjoint_sweep.py``);
    - the contacts' sample and state layout (``flexmbs/contact/sample.py``), whose
      column numbers the contact kernels fold in.
    """
    compiled = [path for path in python_files(_HERE, recursive=False)
                if path.name not in NOT_KERNEL_SOURCES]
    engine = [_HERE.parent / "engine" / name
              for name in ("dispatch.py", "newton.py", "linear_solves.py", "adjoint_sweep.py")]
    layouts = [_HERE.parent / "contact" / "sample.py"]
    return compiled + python_files(_ELEMENTS, recursive=True) + engine + layouts


def python_files(folder: Path, recursive: bool) -> list[Path]:
    """The ``*.py`` files in ``folder`` (and, ``recursive``, its subfolders, symbolic
    links not followed), sorted as paths sort."""
    found, pending = [], [str(folder)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py") and entry.is_file():
                    found.append(Path(entry.path))
                elif recursive and entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return sorted(found)


#: The file that remembers the kernel sources' hash by their sizes and modification
#: times (in the first of :func:`_tag_stamp_paths` that takes it).
TAG_STAMP_FILE = "kernel-tag.json"

#: Sources modified less than this long ago [s] are hashed again at the next call
#: rather than remembered by their times (a file changed twice within the clock's
#: resolution keeps its time).
_SETTLED_AFTER = 2.0


@functools.cache
def kernel_tag() -> str:
    """``kernels-<hash of the kernel sources>`` (:func:`kernel_sources`: each file's path
    below ``flexmbs/`` and its bytes). Worked out once per process, when a run first
    needs kernels, and remembered across processes as Python remembers its bytecode:
    beside the package (or in ~/.cache/flexmbs), under the sources' paths, sizes and
    modification times; any change to those hashes the sources again
    (:func:`remembered_digest`)."""
    digest = remembered_digest(kernel_sources(), _HERE.parent, _tag_stamp_paths(),
                               "kernel tag stamp")
    return f"kernels-{digest[:16]}"


def remembered_digest(sources: list[Path], root: Path, stamp_paths: list[Path],
                      what: str) -> str:
    """The SHA-256 (hex) of the files ``sources`` (each one's path below ``root`` and its
    bytes), remembered in the first of ``stamp_paths`` that takes it under the files'
    paths, sizes and modification times, and taken from any of them whose stamp matches;
    sources modified within :data:`_SETTLED_AFTER` are hashed without remembering. OSError
    when a source cannot be read; a stamp that cannot be read or written is no error."""
    stats = [os.stat(path) for path in sources]
    stamp = hashlib.sha256(repr([(str(path), st.st_size, st.st_mtime_ns) for path, st
                                 in zip(sources, stats, strict=True)]).encode()).hexdigest()
    for path in stamp_paths:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("stamp") == stamp \
                and isinstance(data.get("digest"), str):
            return data["digest"]
    digest = hashlib.sha256()
    for path in sources:
        digest.update(Path(path).relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(Path(path).read_bytes())
    result = digest.hexdigest()
    if stats and time.time() - max(st.st_mtime for st in stats) > _SETTLED_AFTER:
        _remember_digest(stamp_paths, stamp, result, what)
    return result


def _tag_stamp_paths() -> list[Path]:
    return [_HERE / "__pycache__" / TAG_STAMP_FILE,
            Path.home() / ".cache" / "flexmbs" / TAG_STAMP_FILE]


def _remember_digest(stamp_paths: list[Path], stamp: str, digest: str, what: str) -> None:
    """Write the stamp file in the first of ``stamp_paths`` that takes it (atomically,
    :func:`flexmbs._files.write_text`); nowhere writable is no error."""
    from .._files import write_text
    from ..errors import WriteError

    for path in stamp_paths:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, json.dumps({"stamp": stamp, "digest": digest}), what)
            return
        except (OSError, WriteError):
            continue


def _writable_folder(tag: str) -> str | None:
    """A writable folder named ``tag`` beside the package, else in ~/.cache/flexmbs
    (created here)."""
    for base in (_HERE / "__pycache__", Path.home() / ".cache" / "flexmbs"):
        folder = base / tag
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / ".write-test"
            probe.write_text("")
            probe.unlink()
            return str(folder)
        except OSError:
            continue
    return None


@functools.cache
def _kernel_folders() -> tuple[str | None, str | None]:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return _writable_folder("state"), None
    folder = _writable_folder(kernel_tag())
    return folder, folder


def kernel_state_dir() -> str | None:
    """Where the background compilation keeps its ready, lock and log files
    (:mod:`flexmbs.engine.warmup`): the kernel cache folder, or, under
    ``NUMBA_CACHE_DIR``, a folder ``state`` beside the package or in ~/.cache/flexmbs;
    None if no such folder is writable. Created on the first call."""
    return _kernel_folders()[0]


def kernel_cache_dir() -> str | None:
    """Where numba caches the kernels: a folder named by :func:`kernel_tag` beside the
    package, else in ~/.cache/flexmbs (None: where ``NUMBA_CACHE_DIR`` says, or nowhere
    writable). Created on the first call, when the kernel modules are imported
    (:mod:`flexmbs.compiled._jit`)."""
    return _kernel_folders()[1]


#: The former constants, now worked out on first access (``from flexmbs.compiled import
#: KERNEL_TAG`` still works).
_LAZY = {"KERNEL_TAG": kernel_tag, "KERNEL_STATE_DIR": kernel_state_dir,
         "KERNEL_CACHE_DIR": kernel_cache_dir}


def __getattr__(name: str):
    if name in _LAZY:
        return _LAZY[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["kernel_cache_dir", "kernel_sources", "kernel_state_dir", "kernel_tag", "python_files",
           "remembered_digest"]
