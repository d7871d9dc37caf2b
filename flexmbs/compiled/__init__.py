"""Compiled evaluation layer (numba): the model as flat arrays, fused residual and
tangent kernels, and the Newton iteration of a step (docs/compiled.md).

The NumPy path (:mod:`flexmbs.assembly`) stays the reference; ``simulate(...,
engine="python")`` or ``NUMBA_DISABLE_JIT=1`` runs it.

Kernel cache: numba reuses a cached kernel when its own source file is unchanged, but
the kernels fold the packing layout (:mod:`flexmbs.compiled.packing`) in as constants.
So, unless ``NUMBA_CACHE_DIR`` is set, the kernels are cached in a folder named by a
hash of this package's sources: a changed layout can never meet a stale kernel.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def _kernel_tag() -> str:
    """``kernels-<hash of the kernel modules' sources>``."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(here.glob("*.py")):
        # no kernels there (the layouts of tables.py and workspace.py reach the kernels
        # through packing.py, whose constants are checked against them at import)
        if path.name in ("__init__.py", "engine.py", "warmup.py", "prebuilt.py",
                         "tables.py", "workspace.py"):
            continue
        digest.update(path.name.encode())
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
_previous = numba.config.CACHE_DIR
if os.environ.get("NUMBA_CACHE_DIR"):
    #: Where the background compilation keeps its ready/lock files.
    KERNEL_STATE_DIR = _writable_folder("state")
else:
    KERNEL_STATE_DIR = _writable_folder(KERNEL_TAG)
    if KERNEL_STATE_DIR is not None:
        numba.config.CACHE_DIR = KERNEL_STATE_DIR
try:
    from .engine import CompiledSystem, jit_disabled
    from .newton import newton_step  # noqa: F401  (decorated under the cache folder)
    from .outputs import outputs_entry  # noqa: F401
    from .tables import unsupported_reason
finally:
    numba.config.CACHE_DIR = _previous

__all__ = ["CompiledSystem", "jit_disabled", "unsupported_reason"]
