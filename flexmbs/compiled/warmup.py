"""Compiling the kernels once per install, in the background (docs/compiled.md).

Compiling the kernels takes minutes; loading them from numba's cache afterwards takes
a fraction of a second. So the first ``engine="auto"`` run does not wait: it starts
``python -m flexmbs.compiled.warmup`` as a detached process and runs on the NumPy path
(and says so); runs after that process has finished load the cached kernels.
``engine="compiled"`` waits for a running compilation, or compiles in-process.

State files beside the kernel cache, named by the kernels' source hash: ``<tag>.ready``
once the kernels are in the cache, ``<tag>.lock`` (process id, start time) while a
process compiles them. A lock whose process is gone, or older than
:data:`STALE_AFTER`, does not count.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import KERNEL_STATE_DIR, KERNEL_TAG

#: A compilation lock older than this [s] is considered abandoned.
STALE_AFTER = 1800.0


def _state_dir() -> str | None:
    """Where the ready and lock files live (a compiling child inherits its parent's)."""
    return os.environ.get("FLEXMBS_KERNEL_STATE_DIR") or KERNEL_STATE_DIR


def _paths() -> tuple[Path, Path] | None:
    state = _state_dir()
    if state is None:
        return None
    folder = Path(state)
    return folder / f"{KERNEL_TAG}.ready", folder / f"{KERNEL_TAG}.lock"


def _host() -> dict:
    """What numba's cache keys a compiled kernel by besides its sources: numba, Python,
    LLVM's process triple (as a prebuilt kernel's manifest records them) and the CPU
    name and features the code is generated for."""
    import llvmlite.binding as ll
    import numba
    from numba.core import config
    from numba.core.codegen import get_host_cpu_features

    return {"numba": numba.__version__,
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "triple": ll.get_process_triple(),
            "cpu": config.CPU_NAME or ll.get_host_cpu_name(),
            "features": (config.CPU_FEATURES if config.CPU_FEATURES is not None
                         else get_host_cpu_features())}


def is_ready() -> bool:
    """Whether the kernels of these sources are in the cache, compiled for this numba,
    Python and CPU (a ready mark of another, say after a numba upgrade or from a cache
    folder shared between machines, does not count)."""
    paths = _paths()
    if paths is None:
        return False
    try:
        mark = json.loads(paths[0].read_text())
    except (OSError, ValueError):
        return False
    return isinstance(mark, dict) and mark.get("host") == _host()


def mark_ready() -> None:
    """Record that the kernels are compiled (after a successful compilation); nothing
    under ``NUMBA_DISABLE_JIT``, where the kernels ran as Python and nothing was compiled
    or cached."""
    from numba.core import config

    paths = _paths()
    if paths is None or config.DISABLE_JIT:
        return
    tmp = paths[0].with_suffix(f".ready.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"compiled": time.time(), "host": _host()}))
        os.replace(tmp, paths[0])
    except OSError:
        return
    _remove_other_versions(paths[0].parent)


def _remove_other_versions(folder: Path) -> None:
    """Delete the kernel caches of other sources (older versions) beside this one."""
    import shutil

    if not folder.name.startswith("kernels-"):
        return
    for other in folder.parent.glob("kernels-*"):
        if other != folder and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)


#: The compiling processes this process started (polled, so they never linger as zombies).
_children: dict[int, subprocess.Popen] = {}


@atexit.register
def _leave_children_running() -> None:
    """The compiling process outlives this one on purpose: no "still running" warning."""
    for proc in _children.values():
        if proc.poll() is None:
            proc.returncode = 0


def _alive(pid: int) -> bool:
    if pid in _children:
        return _children[pid].poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def compiling() -> bool:
    """Whether another process is compiling the kernels now."""
    paths = _paths()
    if paths is None or not paths[1].exists():
        return False
    try:
        info = json.loads(paths[1].read_text())
        pid, started = int(info["pid"]), float(info["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return _alive(pid) and time.time() - started < STALE_AFTER


def start_background() -> bool:
    """Start the detached compiling process unless one runs; True if one runs now."""
    paths = _paths()
    if paths is None:
        return False
    if compiling():
        return True
    lock = paths[1]
    try:
        lock.unlink(missing_ok=True)  # abandoned
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except OSError:
        return compiling()
    log = open(lock.with_suffix(".log"), "w")  # noqa: SIM115 (handed to the child)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "flexmbs.compiled.warmup"],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True,
                                env={**os.environ, "FLEXMBS_KERNEL_STATE_DIR": _state_dir()})
    except OSError:
        os.close(fd)
        lock.unlink(missing_ok=True)
        return False
    finally:
        log.close()
    _children[proc.pid] = proc
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps({"pid": proc.pid, "started": time.time()}))
    return True


def wait_while_compiling(timeout: float = STALE_AFTER, poll: float = 0.5) -> None:
    """Block while another process compiles the kernels (so as not to compile twice)."""
    end = time.time() + timeout
    while compiling() and time.time() < end:
        time.sleep(poll)


def ensure_compiled() -> None:
    """Block until the kernels are ready: the shipped prebuilt kernel if it fits this
    process (:mod:`flexmbs.compiled.prebuilt`), else numba's in the cache (waiting for a
    running compilation, or compiling here); for benchmarks and scripts that must time
    the compiled engine."""
    from . import prebuilt

    if prebuilt.ensure_loaded()[0] is not None:
        return
    wait_while_compiling()
    if not is_ready():
        compile_kernels()


def compile_kernels() -> None:
    """Compile the kernels for this machine's CPU with numba (or load them from its
    cache) on a small model, and record them as ready."""
    from ..assembly import System
    from ..model import ModelBuilder, SpinUp
    from .engine import CompiledSystem

    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_rigid_body("link", 1.0, [0.01, 0.01, 0.01])
    b.add_marker("ground", "O")
    b.add_marker("link", "O")
    b.add_revolute("pin", "ground.O", "link.O")
    b.add_drive("spin", "rotation", SpinUp(1.0, 1.0), marker_i="ground.O",
                marker_j="link.O")
    CompiledSystem(System(b.finalize()), wait=False, prebuilt=False)
    mark_ready()


def main() -> int:
    paths = _paths()
    try:
        compile_kernels()
    finally:
        if paths is not None:
            try:
                info = json.loads(paths[1].read_text())
                if int(info.get("pid", -1)) == os.getpid():
                    paths[1].unlink(missing_ok=True)
            except (OSError, ValueError):
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
