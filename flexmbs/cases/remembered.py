"""Where readings and reductions of case inputs are remembered between processes, and the
fingerprints that decide whether a remembered result still holds (docs/case_files.md,
"Remembered inputs").

Two inputs of a case cost far more to make than to read back: a URDF robot (importing
yourdfpy, :mod:`flexmbs.cases.urdf_cache`) and a built-in beam's modal data (importing
SciPy and reducing the FE model, :mod:`flexmbs.cases.beam_cache`). Both are remembered
in :func:`folder` under a hash of everything they are made from, as Python remembers a
module's bytecode: the same inputs give the same result, and anything changed is made
afresh. ``FLEXMBS_CACHE`` names another folder, or ``off`` makes everything afresh.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from pathlib import Path

#: The environment variable naming the folder of remembered results (``off``: none).
ENV = "FLEXMBS_CACHE"

#: The flexmbs package's folder (its sources are part of a beam reduction's fingerprint).
_PACKAGE = Path(__file__).resolve().parents[1]


#: Values of :data:`ENV` that switch the remembering off.
OFF = ("off", "0", "no", "false", "none")


def folder(kind: str) -> Path | None:
    """The folder of the remembered results of ``kind`` ("urdf", "beams"), not created
    here: ``~/.cache/flexmbs/KIND`` or ``$FLEXMBS_CACHE/KIND`` (``~`` expanded); None
    when ``FLEXMBS_CACHE`` is one of :data:`OFF` or there is no home folder (no absolute
    one) for the default."""
    setting = os.environ.get(ENV, "").strip()
    if setting.lower() in OFF:
        return None
    if setting:
        return Path(os.path.expanduser(setting)) / kind
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no home folder to be found: nothing remembered
        return None
    return home / ".cache" / "flexmbs" / kind if home.is_absolute() else None


def installed_file(package: str, relative: str) -> str | None:
    """``relative``'s path in the installed ``package`` with its size and modification
    time [ns] (a fingerprint of the installed version, found without importing the
    package), or None when the package is not installed."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    try:
        stat = path.stat()
    except OSError:
        return None
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}"


#: {package folder: its source digest}, worked out once per process (see
#: :func:`package_digest`).
_DIGESTS: dict[Path, str] = {}


def package_digest() -> str | None:
    """A hash of every flexmbs source file (path and bytes), worked out once per process
    (the code a process runs is the code it imported) and remembered between processes
    in the folder of remembered results under the files' paths, sizes and modification
    times (:func:`flexmbs.compiled.remembered_digest`, as the kernels' tag is: an edit
    that keeps a file's size and modification time is not seen, as with Python's
    bytecode): the hashing (about 9 ms) happens once per change of the sources, the
    stamp (listing and stating the files: about 3 ms) once per process; each later call
    is a lookup (a case with built-in beams called it once per beam at every load).
    None when a source cannot be read (an upgrade under way), and then tried again at
    the next call."""
    known = _DIGESTS.get(_PACKAGE)
    if known is not None:
        return known
    from ..compiled import python_files, remembered_digest

    where = folder("stamps")
    stamps = [] if where is None else [where / "package-digest.json"]
    try:
        digest = remembered_digest(python_files(_PACKAGE, recursive=True), _PACKAGE,
                                   stamps, "source digest stamp")
    except OSError:
        return None
    _DIGESTS[_PACKAGE] = digest
    return digest


#: The most entries, and bytes, a folder of remembered results keeps: past either, the
#: entries used longest ago go when a new one is written (a sweep over a beam's
#: parameters writes an entry per variant).
MOST_ENTRIES = 256
MOST_BYTES = 512 * 2**20


def prune(where: Path, pattern: str) -> None:
    """Remove the entries ``pattern`` of ``where`` used (read or written) longest ago
    while there are more than :data:`MOST_ENTRIES` or they take more than
    :data:`MOST_BYTES`; entries another process removes first are no error."""
    entries = []
    for path in where.glob(pattern):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((max(stat.st_atime, stat.st_mtime), stat.st_size, path))
    entries.sort()
    count, size = len(entries), sum(e[1] for e in entries)
    for _, bytes_, path in entries:
        if count <= MOST_ENTRIES and size <= MOST_BYTES:
            break
        with contextlib.suppress(OSError):
            path.unlink()
        count, size = count - 1, size - bytes_

