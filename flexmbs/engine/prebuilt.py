"""Prebuilt step kernel: shipped as machine code for a baseline CPU, run without numba
(docs/compiled.md, "The prebuilt kernel").

numba takes over a minute to compile the kernels, and importing numba and rebuilding a
cached kernel takes a third of a second, longer than many runs. Python calls one
kernel, :func:`flexmbs.engine.newton.kernel`, whose compiled form holds every kernel
it calls. So the package ships that compiled form in ``prebuilt/``: relocatable object
code for a baseline CPU behind a C entry point (:mod:`flexmbs.engine.native`), with
a manifest of what it was built from and for. It references the C and maths libraries
only, so it is linked into a process in about a millisecond
(:mod:`flexmbs.engine.object_loader`), and the run imports neither numba nor llvmlite.
A process on another platform, or whose kernel sources differ from the build's, takes
the kernels from numba (compiled once per install, in the background for automatic
runs: :mod:`flexmbs.engine.warmup`).

``python -m flexmbs.engine.prebuilt_build`` rebuilds the shipped kernel for this
platform after a change to the kernel sources (:mod:`flexmbs.engine.prebuilt_build`; a
test checks that the shipped build is that of the sources). ``FLEXMBS_PREBUILT=0`` (or
``false``, ``no``, ``off``) switches it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
import zlib
from pathlib import Path

from ..compiled import kernel_tag
from .host import missing_features, process_triple

#: Where the shipped builds and their manifest live.
PREBUILT_DIR = Path(__file__).resolve().parent / "prebuilt"
MANIFEST = "manifest.json"
FORMAT = 2

#: The C entry point of a build (:mod:`flexmbs.engine.native`).
ENTRY = "flexmbs_kernel"

#: Baseline CPU per architecture (LLVM's name) and the instruction-set features (LLVM's
#: names) a host needs to run code built for it. x86-64 is the original 64-bit set that
#: every such CPU has: the kernels' steps measured as fast built for it as for the CPU
#: they ran on (docs/compiled.md), so nothing is gained by a narrower baseline.
BASELINES = {
    "x86_64": ("x86-64", ("cmov", "cx8", "fxsr", "mmx", "sse", "sse2")),
}


def switched_off() -> str | None:
    """Why the prebuilt kernel is switched off (``FLEXMBS_PREBUILT``, or numba's JIT off), or
    None."""
    switch = os.environ.get("FLEXMBS_PREBUILT", "1")
    if switch.strip().lower() in ("0", "false", "no", "off"):
        return f"FLEXMBS_PREBUILT={switch}"
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return "NUMBA_DISABLE_JIT is set"
    return None


def read_manifest(folder: Path = PREBUILT_DIR) -> dict:
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return {"format": FORMAT, "builds": []}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {"format": FORMAT, "builds": []}
    return data


def find(folder: Path | None = None) -> tuple[dict | None, str]:
    """(the shipped build this process can run, ``""``) or (None, why there is none),
    in ``folder`` (default :data:`PREBUILT_DIR`).

    Cheap (the manifest only): for deciding whether a run needs numba."""
    folder = PREBUILT_DIR if folder is None else folder
    off = switched_off()
    if off is not None:
        return None, off
    from .native import ABI

    tag = kernel_tag()
    builds = [b for b in read_manifest(folder)["builds"] if b.get("tag") == tag]
    if not builds:
        return None, f"no prebuilt kernel of these sources ({tag})"
    builds = [b for b in builds if b.get("abi") == ABI]
    if not builds:
        return None, f"no prebuilt kernel of this loader's entry-point version ({ABI})"
    triple = process_triple()
    matching = [b for b in builds if b.get("triple") == triple]
    if not matching:
        built = "; ".join(str(b.get("triple")) for b in builds)
        return None, f"no prebuilt kernel for {triple} (built for: {built})"
    for build in matching:
        if not missing_features(build.get("features", ())):
            return build, ""
    missing = missing_features(matching[0].get("features", ()))
    return None, (f"this CPU lacks {', '.join(missing)} of the prebuilt kernel's "
                  f"baseline ({matching[0].get('cpu')})")


#: The build this process runs and its kernel, once loaded; the reason when it failed.
_loaded: tuple[dict, object] | None = None
_failed: str | None = None
_loading = threading.Lock()


def loaded() -> dict | None:
    """The shipped build this process's runs use, or None."""
    return None if _loaded is None else _loaded[0]


def failure() -> str | None:
    """Why the shipped build that fits this process failed to load, if it did."""
    return _failed


def step_kernel():
    """A caller of the prebuilt step kernel with tables of its own (a
    :class:`~flexmbs.engine.native.NativeKernel`), the kernel loaded on first use, or
    None (then :func:`ensure_loaded` says why)."""
    build, _ = ensure_loaded()
    return None if build is None else _loaded[1].twin()


def ensure_loaded() -> tuple[dict | None, str]:
    """Load the shipped build unless this process has already (tried to): (the build,
    ``""``) or (None, why not). A build that fits but fails to load is not tried again,
    and says so once (a RuntimeWarning: the install is damaged); switching the prebuilt
    kernel off (``FLEXMBS_PREBUILT``) holds from the next call on."""
    off = switched_off()
    if off is not None:
        return None, off
    with _loading:  # one linking per process, whichever thread asks first
        return _ensure_loaded()


def _ensure_loaded() -> tuple[dict | None, str]:
    global _loaded, _failed
    if _loaded is not None:
        return _loaded[0], ""
    if _failed is not None:
        return None, _failed
    try:
        build, reason = find()
        if build is None:  # a setting may change: decided again next time
            return None, reason
        _loaded = (build, load(build))
    except Exception as exc:
        _failed = str(exc)
        warnings.warn(f"flexmbs: {_failed}; the kernels come from numba instead",
                      RuntimeWarning, stacklevel=3)
        return None, _failed
    return build, ""


def object_code(build: dict, folder: Path | None = None) -> bytes:
    """The object code of ``build`` (a manifest entry of ``folder``, default
    :data:`PREBUILT_DIR`) after its checksum: the file as shipped, or decompressed when
    its name ends in ``.z`` (zlib; the builds before 2026-12-06, kept loadable).
    Raises RuntimeError on a mismatch, OSError or zlib.error when unreadable."""
    folder = PREBUILT_DIR if folder is None else folder
    blob = (folder / build.get("file")).read_bytes()
    if hashlib.sha256(blob).hexdigest() != build.get("sha256"):
        raise RuntimeError("checksum mismatch")
    return zlib.decompress(blob) if str(build.get("file")).endswith(".z") else blob


def load(build: dict, folder: Path | None = None):
    """The :class:`~flexmbs.engine.native.NativeKernel` of ``build`` (a manifest entry
    of ``folder``, default :data:`PREBUILT_DIR`). Raises RuntimeError naming the file
    and what is wrong with it."""
    from .native import NativeKernel, link

    name = build.get("file")
    try:
        mapping, address = link(object_code(build, folder), build["entry"])
        return NativeKernel(mapping, address, build["parameters"])
    except Exception as exc:
        detail = str(exc) if isinstance(exc, RuntimeError) else f"{type(exc).__name__}: {exc}"
        raise RuntimeError(f"prebuilt kernel {name!r} could not be loaded: {detail}") from exc


# ------------------------------------------------------------------ building
