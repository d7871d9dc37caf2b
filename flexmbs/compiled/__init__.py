"""Compiled evaluation layer: the model as flat arrays, fused residual and tangent
kernels, and the Newton iteration of a step (docs/compiled.md).

The NumPy path (:mod:`flexmbs.assembly`) stays the reference; ``simulate(...,
engine="python")`` or ``NUMBA_DISABLE_JIT=1`` runs it.

The kernels are written for numba (:mod:`flexmbs.engine.newton` and the modules it
imports). A run takes them either as the shipped prebuilt machine code
(:mod:`flexmbs.compiled.prebuilt`, loaded without numba) or from numba, which compiles
them once per install and caches them on disk. Importing this package does not import
numba.

Kernel cache: numba reuses a cached kernel when its own source file is unchanged, but
the kernels fold the packing layout (:mod:`flexmbs.compiled.layout`) in as constants.
So, unless ``NUMBA_CACHE_DIR`` is set, the kernels are cached in a folder named by a
hash of this package's kernel sources (:mod:`flexmbs.compiled._jit`): a changed layout
can never meet a stale kernel.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: Modules without kernel code: not part of the kernels' source hash (the layouts of
#: tables.py and workspace.py reach the kernels through layout.py, whose constants are
#: checked against them at import).
NOT_KERNEL_SOURCES = ("__init__.py", "_jit.py", "elf.py", "engine.py", "native.py",
                      "prebuilt.py", "tables.py", "warmup.py", "workspace.py")


#: The kernel modules outside this package: every element kind's and the engine's
#: dispatch and Newton iteration (paths relative to the flexmbs package).
KERNEL_SOURCES_ELSEWHERE = ("elements/**/*.py", "engine/dispatch.py", "engine/newton.py")


def kernel_sources() -> list[Path]:
    """The files whose contents the kernels are compiled from, in a fixed order."""
    here = Path(__file__).resolve().parent
    paths = [p for p in sorted(here.glob("*.py")) if p.name not in NOT_KERNEL_SOURCES]
    for pattern in KERNEL_SOURCES_ELSEWHERE:
        paths.extend(sorted(here.parent.glob(pattern)))
    return paths


def _kernel_tag() -> str:
    """``kernels-<hash of the kernel modules' sources>``."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in kernel_sources():
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return f"kernels-{digest.hexdigest()[:16]}"


def _writable_folder(tag: str) -> str | None:
    """A writable folder named ``tag`` beside the package, else in ~/.cache/flexmbs."""
    here = Path(__file__).resolve().parent
    for base in (here / "__pycache__", Path.home() / ".cache" / "flexmbs"):
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


KERNEL_TAG = _kernel_tag()
if os.environ.get("NUMBA_CACHE_DIR"):
    #: Where the background compilation keeps its ready/lock files.
    KERNEL_STATE_DIR = _writable_folder("state")
    #: Where numba caches the kernels (None: where NUMBA_CACHE_DIR says).
    KERNEL_CACHE_DIR = None
else:
    KERNEL_STATE_DIR = _writable_folder(KERNEL_TAG)
    KERNEL_CACHE_DIR = KERNEL_STATE_DIR

from ..engine.tables import unsupported_reason  # noqa: E402
from .engine import CompiledSystem, jit_disabled  # noqa: E402

__all__ = ["CompiledSystem", "jit_disabled", "unsupported_reason"]
