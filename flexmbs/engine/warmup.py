"""Compiling the kernels once per install, in the background (docs/compiled.md).

Compiling the kernels takes minutes; loading them from numba's cache afterwards takes
a fraction of a second. So, where no shipped prebuilt kernel fits, the first
``engine="auto"`` run does not wait: it starts ``python -m flexmbs.engine.warmup``
as a child process, says so (a log message naming its process id and
:data:`SETTING`), and runs on the NumPy path; runs after that process has finished
load the cached kernels. ``engine="compiled"`` waits for a running compilation, or
compiles in-process.

The setting ``FLEXMBS_BACKGROUND_COMPILE`` (:class:`Background`) chooses what an
automatic run does: ``detached`` (the default: the compilation goes on when the
process that started it exits, and that process says so as it exits), ``attached``
(the compilation ends with the process that started it), ``wait`` (compile in the
foreground) or ``off`` (never compile for an automatic run: the NumPy path).

State files beside the kernel cache, named by the kernels' source hash: ``<tag>.ready``
once the kernels are in the cache, ``<tag>.lock`` (process id, start time) while a
process compiles them, ``<tag>.log`` its output. A lock whose process is gone, or older
than :data:`STALE_AFTER`, does not count.
"""

from __future__ import annotations

import atexit
import enum
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..compiled import kernel_state_dir, kernel_tag
from ..errors import ValidationError

_log = logging.getLogger(__name__)

#: The environment variable that chooses what an automatic run does without kernels.
SETTING = "FLEXMBS_BACKGROUND_COMPILE"


class Background(enum.Enum):
    """What an ``engine="auto"`` run does when no prebuilt kernel fits and numba's
    kernels are not compiled yet (the setting ``FLEXMBS_BACKGROUND_COMPILE``)."""

    #: compile in a child process that goes on if this process exits first (saying so
    #: at exit, with its process id): what a short ``flexmbs run`` needs; this run takes
    #: the NumPy path
    DETACHED = "detached"
    #: compile in a child process that ends with this process (terminated at exit; it
    #: also stops by itself when this process is gone): for Dask workers and interactive
    #: sessions that must leave nothing behind; this run takes the NumPy path
    ATTACHED = "attached"
    #: compile in this process before the run (as ``engine="compiled"`` does)
    WAIT = "wait"
    #: compile nothing: automatic runs take the NumPy path until the kernels are
    #: compiled otherwise (``engine="compiled"``, ``python -m flexmbs.engine.warmup``)
    OFF = "off"


def background_mode() -> Background:
    """The setting ``FLEXMBS_BACKGROUND_COMPILE`` (default ``detached``; ``0``, ``no``
    and ``false`` mean ``off``). Raises ValidationError naming the setting and its
    choices on any other value."""
    value = os.environ.get(SETTING, "").strip().lower() or Background.DETACHED.value
    value = {"0": "off", "no": "off", "false": "off"}.get(value, value)
    try:
        return Background(value)
    except ValueError:
        choices = ", ".join(mode.value for mode in Background)
        raise ValidationError(f"{SETTING}={os.environ.get(SETTING)!r}: expected one of "
                              f"{choices}") from None


#: A compilation lock older than this [s] is considered abandoned.
STALE_AFTER = 1800.0


def _state_dir() -> str | None:
    """Where the ready and lock files live (a compiling child inherits its parent's)."""
    return os.environ.get("FLEXMBS_KERNEL_STATE_DIR") or kernel_state_dir()


def _paths() -> tuple[Path, Path] | None:
    state = _state_dir()
    if state is None:
        return None
    folder, tag = Path(state), kernel_tag()
    return folder / f"{tag}.ready", folder / f"{tag}.lock"


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


def ready_paths() -> tuple[Path, Path] | None:
    """(ready mark, lock file) of these kernel sources in this process's state folder
    (``FLEXMBS_KERNEL_STATE_DIR`` or :func:`~flexmbs.compiled.kernel_state_dir`), or
    None where no folder is writable."""
    return _paths()


def mark_ready(paths: tuple[Path, Path] | None = None) -> None:
    """Record that the kernels are compiled (after a successful compilation), at
    ``paths`` (:func:`ready_paths` worked out earlier; default: now); nothing under
    ``NUMBA_DISABLE_JIT``, where the kernels ran as Python and nothing was compiled or
    cached."""
    from numba.core import config

    paths = _paths() if paths is None else paths
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


#: The compiling processes this process started, and whether each is attached (polled,
#: so they never linger as zombies).
_children: dict[int, tuple[subprocess.Popen, bool]] = {}

#: How long an attached compilation may take to stop at exit before it is killed [s].
STOP_TIMEOUT = 5.0


@atexit.register
def _at_exit() -> None:
    """Stop the attached compilations still running; say which detached ones go on."""
    for pid, (proc, attached) in list(_children.items()):
        if proc.poll() is not None:
            continue
        if attached:
            _stop(proc)
        else:
            _log.warning("flexmbs: the kernel compilation (pid %d) goes on after this "
                         "process exits and ends by itself when done (%s=attached ties it "
                         "to the process that starts it)", pid, SETTING)
            proc.returncode = 0  # on purpose: no "still running" warning


def _stop(proc: subprocess.Popen) -> None:
    """Terminate an attached compilation and remove its lock."""
    proc.terminate()
    try:
        proc.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    paths = _paths()
    if paths is not None:
        _release_lock(paths[1], proc.pid)


def _release_lock(lock: Path, pid: int) -> None:
    """Remove ``lock`` if process ``pid`` holds it."""
    try:
        if int(json.loads(lock.read_text()).get("pid", -1)) == pid:
            lock.unlink(missing_ok=True)
    except (OSError, ValueError, AttributeError, TypeError):
        pass


def _alive(pid: int) -> bool:
    if pid in _children:
        return _children[pid][0].poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def compiling() -> bool:
    """Whether another process is compiling the kernels now."""
    return _running_pid() is not None


def _compile_command() -> list[str]:
    """The compiling process's command (a hook: tests put a stand-in here)."""
    return [sys.executable, "-m", "flexmbs.engine.warmup"]


def start_background(attached: bool = False) -> int | None:
    """Start the compiling process unless one runs: the process id of the one that runs
    now (None if none could start). ``attached``: it ends with this process (terminated
    at exit, and it stops by itself when this process is gone); else it goes on, and
    this process says so at exit. Logs a notice naming the process, its log file and
    :data:`SETTING` when it starts one."""
    paths = _paths()
    if paths is None:
        return None
    running = _running_pid()
    if running is not None:
        return running
    lock = paths[1]
    try:
        lock.unlink(missing_ok=True)  # abandoned
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except OSError:
        return _running_pid()
    log_path = lock.with_suffix(".log")
    log = open(log_path, "w")  # noqa: SIM115 (handed to the child)
    env = {**os.environ, "FLEXMBS_KERNEL_STATE_DIR": _state_dir()}
    if attached:
        env[_PARENT] = str(os.getpid())
    try:
        # detached: a session of its own, so that the terminal's Ctrl-C, meant for this
        # process, does not end it; attached: this process's group, which it ends with
        proc = subprocess.Popen(_compile_command(), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=log, start_new_session=not attached, env=env)
    except OSError:
        os.close(fd)
        lock.unlink(missing_ok=True)
        return None
    finally:
        log.close()
    _children[proc.pid] = (proc, attached)
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps({"pid": proc.pid, "started": time.time()}))
    ends = ("ends with this process" if attached
            else "goes on if this process exits first")
    _log.warning("flexmbs: compiling the kernels with numba in the background, once per "
                 "install (pid %d, a minute or two; it %s; log %s); until it is done, "
                 "automatic runs take the NumPy path. %s=wait compiles in the "
                 "foreground instead, =off never, =attached|detached ties it to this "
                 "process or not", proc.pid, ends, log_path, SETTING)
    return proc.pid


def _running_pid() -> int | None:
    """The process id of the process compiling the kernels now, or None."""
    paths = _paths()
    if paths is None or not paths[1].exists():
        return None
    try:
        info = json.loads(paths[1].read_text())
        pid, started = int(info["pid"]), float(info["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if _alive(pid) and time.time() - started < STALE_AFTER else None


def automatic_run_note(why: str) -> str | None:
    """For an ``engine="auto"`` run that has no prebuilt kernel (``why`` says why): None
    if it takes numba's kernels now (they are compiled, or :data:`SETTING` says
    ``wait``, or no compilation could start), else why it takes the NumPy path (a
    background compilation runs, or the setting says ``off``)."""
    if is_ready():
        return None
    mode = background_mode()
    if mode is Background.WAIT:
        return None
    if mode is Background.OFF:
        return (f"numba's kernels are not compiled and {SETTING}=off ({why}); this run "
                "uses the NumPy path")
    pid = start_background(attached=mode is Background.ATTACHED)
    if pid is None:
        return None
    return (f"the compiled kernels are being built in the background, once per install "
            f"(pid {pid}, a few minutes; {why}; {SETTING}={mode.value}); this run uses "
            "the NumPy path")


def wait_while_compiling(timeout: float = STALE_AFTER, poll: float = 0.5) -> None:
    """Block while another process compiles the kernels (so as not to compile twice)."""
    end = time.time() + timeout
    while compiling() and time.time() < end:
        time.sleep(poll)


def ensure_compiled() -> None:
    """Block until the kernels are ready: the shipped prebuilt kernel if it fits this
    process (:mod:`flexmbs.engine.prebuilt`), else numba's in the cache (waiting for a
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
    from .compiled_system import CompiledSystem

    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_rigid_body("link", 1.0, [0.01, 0.01, 0.01])
    b.add_marker("ground", "O")
    b.add_marker("link", "O")
    b.add_revolute("pin", "ground.O", "link.O")
    b.add_drive("spin", "rotation", SpinUp(1.0, 1.0), marker_i="ground.O",
                marker_j="link.O")
    CompiledSystem(System(b.finalize()), prebuilt=False)
    mark_ready()


#: Set in an attached compiling process's environment: the process id it ends with.
_PARENT = "FLEXMBS_COMPILE_PARENT"


def _end_with_parent(parent: int, poll: float = 0.5) -> None:
    """In an attached compiling process: exit as soon as process ``parent`` is gone
    (this process is then adopted by another), even if it was killed without its exit
    handlers running."""
    def watch():
        while os.getppid() == parent:
            time.sleep(poll)
        paths = _paths()
        if paths is not None:
            _release_lock(paths[1], os.getpid())
        os._exit(3)

    if os.getppid() != parent:
        watch()
    threading.Thread(target=watch, name="flexmbs-parent-watch", daemon=True).start()


def main() -> int:
    paths = _paths()
    parent = os.environ.get(_PARENT)
    if parent:
        _end_with_parent(int(parent))
    try:
        compile_kernels()
    finally:
        if paths is not None:
            _release_lock(paths[1], os.getpid())
    return 0


if __name__ == "__main__":
    sys.exit(main())
