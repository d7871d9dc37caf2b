"""The background compilation of numba's kernels and its setting (docs/compiled.md,
"Without a fitting prebuilt kernel").

``FLEXMBS_BACKGROUND_COMPILE`` chooses what an automatic run without a fitting prebuilt
kernel does: detached (default), attached, wait or off. These tests stand a sleeping
process in for the compilation (warmup._compile_command), so nothing is compiled: the
notice naming the compiling process and the setting when it starts; a detached one that
goes on after its parent exits, saying so; an attached one that ends with its parent,
at exit or when the parent is killed.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flexmbs.cases import load_case, run_case
from flexmbs.engine import prebuilt, warmup
from flexmbs.errors import ValidationError

ROOT = Path(__file__).resolve().parents[1]

#: A stand-in for the compiling process: sleeps, as long as a compilation takes at most.
SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


@pytest.fixture
def no_kernels(tmp_path, monkeypatch):
    """No prebuilt kernel, nothing compiled (state files in tmp_path), and a stand-in
    for the compiling process; stand-ins still running afterwards are ended."""
    monkeypatch.setenv("FLEXMBS_PREBUILT", "0")
    monkeypatch.setattr(prebuilt, "_loaded", None)
    monkeypatch.setenv("FLEXMBS_KERNEL_STATE_DIR", str(tmp_path))
    monkeypatch.delenv(warmup.SETTING, raising=False)
    monkeypatch.setattr(warmup, "_compile_command", lambda: SLEEPER)
    started = set(warmup._children)
    yield tmp_path
    for pid in set(warmup._children) - started:
        proc, _ = warmup._children.pop(pid)
        proc.kill()
        proc.wait()


def _auto_run():
    case = load_case(ROOT / "cases" / "seed_pendulum.toml")
    case.solver = case.solver.replace(t_end=0.01)
    return run_case(case, engine="auto")[1]


def test_the_setting_is_read_and_checked(monkeypatch):
    monkeypatch.delenv(warmup.SETTING, raising=False)
    assert warmup.background_mode() is warmup.Background.DETACHED
    for value, mode in (("attached", "ATTACHED"), (" Wait ", "WAIT"), ("off", "OFF"),
                        ("0", "OFF"), ("no", "OFF"), ("detached", "DETACHED"), ("", "DETACHED")):
        monkeypatch.setenv(warmup.SETTING, value)
        assert warmup.background_mode() is warmup.Background[mode], value
    monkeypatch.setenv(warmup.SETTING, "later")
    with pytest.raises(ValidationError, match=r"FLEXMBS_BACKGROUND_COMPILE='later': "
                                              r"expected one of detached, attached, wait, off"):
        warmup.background_mode()


def test_an_automatic_run_starts_the_compilation_and_says_so(no_kernels, caplog):
    """The default: the run takes the NumPy path; its note and a logged notice name the
    compiling process and the setting; a second run finds it running and starts none."""
    with caplog.at_level(logging.WARNING, logger="flexmbs.engine.warmup"):
        first = _auto_run()
    assert first.statistics["engine"] == "python"
    (pid,) = (p for p in warmup._children if warmup._children[p][0].poll() is None)
    assert f"pid {pid}" in first.statistics["engine_note"]
    assert "FLEXMBS_BACKGROUND_COMPILE=detached" in first.statistics["engine_note"]
    (notice,) = [r.getMessage() for r in caplog.records]
    assert f"pid {pid}" in notice and "FLEXMBS_BACKGROUND_COMPILE" in notice
    assert "goes on if this process exits first" in notice
    assert str(no_kernels) in notice  # its log file
    caplog.clear()
    second = _auto_run()
    assert f"pid {pid}" in second.statistics["engine_note"]
    assert not caplog.records  # no second compilation, no second notice


def test_off_compiles_nothing_and_wait_compiles_in_the_foreground(no_kernels, monkeypatch):
    """off: the NumPy path, saying why, and no process started; wait: the run takes
    numba's kernels itself (here a stand-in engine: nothing is compiled)."""
    monkeypatch.setenv(warmup.SETTING, "off")
    run = _auto_run()
    assert run.statistics["engine"] == "python"
    assert "FLEXMBS_BACKGROUND_COMPILE=off" in run.statistics["engine_note"]
    assert not list(no_kernels.glob("*.lock"))
    monkeypatch.setenv(warmup.SETTING, "wait")
    started = []
    monkeypatch.setattr(warmup, "start_background", lambda **kw: started.append(kw))
    assert warmup.automatic_run_note("no prebuilt kernel") is None  # compiled engine now
    monkeypatch.setenv(warmup.SETTING, "attached")
    warmup.automatic_run_note("no prebuilt kernel")
    assert started == [{"attached": True}]


_PARENT = """
import sys, time
from flexmbs.engine import warmup
warmup._compile_command = lambda: {command!r}
pid = warmup.start_background(attached={attached})
print(pid, flush=True)
if {hold}:
    time.sleep(120)
"""

#: The compiling process's own code, its compilation replaced by a sleep.
COMPILER = [sys.executable, "-c", "import time; from flexmbs.engine import warmup; "
            "warmup.compile_kernels = lambda: time.sleep(120); warmup.main()"]


def _parent(tmp_path, attached: bool, hold: bool = False, command=SLEEPER):
    env = {**os.environ, "FLEXMBS_KERNEL_STATE_DIR": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", _PARENT.format(
        command=command, attached=attached, hold=hold)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env)


def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` ends (or is a zombie) within ``within`` seconds."""
    end = time.time() + within
    while time.time() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="reads process states from /proc")


@needs_proc
def test_a_detached_compilation_outlives_its_parent_and_the_parent_says_so(tmp_path):
    parent = _parent(tmp_path, attached=False)
    out, err = parent.communicate(timeout=60)
    assert parent.returncode == 0, err
    pid = int(out)
    try:
        assert f"pid {pid}" in err and "goes on if this process exits first" in err
        assert (f"the kernel compilation (pid {pid}) goes on after this process exits"
                in err)
        assert "FLEXMBS_BACKGROUND_COMPILE=attached" in err
        assert not _gone(pid, within=1.0)
    finally:
        os.kill(pid, signal.SIGKILL)  # the stand-in this test started
    assert _gone(pid)


@needs_proc
def test_an_attached_compilation_ends_with_its_parent(tmp_path):
    """At the parent's exit it is terminated and its lock removed; killed with its parent
    (no exit handlers run) it stops by itself."""
    parent = _parent(tmp_path, attached=True)
    out, err = parent.communicate(timeout=60)
    assert parent.returncode == 0, err
    assert "ends with this process" in err
    assert _gone(int(out))
    assert not list(tmp_path.glob("*.lock"))
    parent = _parent(tmp_path, attached=True, hold=True, command=COMPILER)
    pid = int(parent.stdout.readline())
    try:
        assert not _gone(pid, within=1.0)
        parent.kill()
        parent.wait(30)
        assert _gone(pid)
    finally:
        if not _gone(pid, within=0.0):
            os.kill(pid, signal.SIGKILL)
    assert not list(tmp_path.glob("*.lock"))
