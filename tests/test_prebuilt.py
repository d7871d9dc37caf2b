"""The shipped prebuilt step kernel (docs/compiled.md, "Prebuilt kernels").

The package carries the step kernel compiled for a baseline CPU. These tests check that
the shipped build is that of the kernel sources (a change to a kernel needs
``python -m flexmbs.compiled.prebuilt``), that a fresh process with an empty numba cache
runs it without compiling anything and gets the NumPy path's trajectories on every
shipped case, and that a build that does not fit the process is refused with the
reason, leaving the kernel to be compiled.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from flexmbs.compiled import KERNEL_TAG, prebuilt

TESTS = Path(__file__).resolve().parent


def test_the_shipped_prebuilt_kernel_is_that_of_the_sources():
    """A build of the current kernel sources is shipped, intact (its checksum), with the
    baseline CPU's features as the manifest lists them."""
    builds = [b for b in prebuilt._manifest()["builds"] if b["tag"] == KERNEL_TAG]
    assert builds, ("no prebuilt kernel of the current kernel sources: run "
                    "`python -m flexmbs.compiled.prebuilt` after changing a kernel")
    for build in builds:
        blob = (prebuilt.PREBUILT_DIR / build["file"]).read_bytes()
        assert hashlib.sha256(blob).hexdigest() == build["sha256"]
        assert len(blob) == build["bytes"]
        arch = build["triple"].split("-")[0]
        assert (build["cpu"], tuple(build["features"])) == prebuilt.BASELINES[arch]
    files = {p.name for p in prebuilt.PREBUILT_DIR.glob("kernel-*.bin")}
    assert files == {b["file"] for b in prebuilt._manifest()["builds"]}  # no strays


_SHIPPED_CASES_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from test_compiled import CASES, _run, assert_same_run, supported_cases
from flexmbs.cases import load_case
for name in supported_cases():
    t_end = 150 * float(load_case(CASES / name).solver["h"])
    ref = _run(name, "python", t_end)
    new = _run(name, "auto", t_end)
    assert new.statistics["engine"] == "compiled", (name, new.statistics)
    assert new.statistics["kernels"].startswith("prebuilt for "), (name, new.statistics)
    assert_same_run(new, ref, lambda **kw: _run(name, "python", t_end, **kw))
    print(name, new.statistics["kernels"], round(new.statistics["compile_time"], 3))
"""


def test_a_fresh_process_runs_the_prebuilt_kernel_without_compiling(tmp_path):
    """With an empty numba cache and no kernels marked ready, automatic runs of every
    shipped case the kernels evaluate load the prebuilt kernel: nothing is compiled (no
    numba cache entry appears), no background compilation starts, and each run takes
    the NumPy path's Newton iterations and trajectory (q to 1e-12, as for kernels
    compiled here: test_compiled.assert_same_run)."""
    build, reason = prebuilt.find()
    if build is None:
        pytest.skip(f"the shipped prebuilt kernel does not fit this process: {reason}")
    cache, state = tmp_path / "numba-cache", tmp_path / "state"
    cache.mkdir()
    state.mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
           "FLEXMBS_KERNEL_STATE_DIR": str(state)}
    env.pop("FLEXMBS_PREBUILT", None)
    done = subprocess.run([sys.executable, "-c",
                           _SHIPPED_CASES_SCRIPT.format(tests=str(TESTS))],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    ran = done.stdout.split("\n")
    assert len([line for line in ran if "prebuilt for " in line]) >= 5, done.stdout
    assert not list(cache.rglob("*.nbi")), "something was compiled"
    assert not list(state.iterdir()), "a compilation was started or recorded"


# ------------------------------------------------------------------ refusals
class _Dispatcher:
    """Stands in for the kernel: loading into it must never be attempted (a rebuild
    would leave "could not be loaded: AssertionError" as the reason instead of the
    refusal's)."""

    class _cache:  # numba's attribute names
        class _impl:
            @staticmethod
            def rebuild(context, payload):
                raise AssertionError("a refused build was rebuilt")

    def add_overload(self, compiled):
        raise AssertionError("a refused build was loaded")


def _ship(folder: Path, payload: bytes = b"", **changes) -> dict:
    """A manifest in ``folder`` with one build fitting this process but for ``changes``."""
    blob = zlib.compress(payload or pickle.dumps(("not", "a", "compile result")))
    entry = {"file": "kernel-test.bin", "tag": KERNEL_TAG, **prebuilt.environment(),
             "cpu": "x86-64", "features": ["sse2"], "bytes": len(blob),
             "sha256": hashlib.sha256(blob).hexdigest()}
    entry.update(changes)
    (folder / "kernel-test.bin").write_bytes(blob)
    (folder / prebuilt.MANIFEST).write_text(
        json.dumps({"format": prebuilt.FORMAT, "builds": [entry]}))
    return entry


@pytest.mark.parametrize(("changes", "named"), [
    ({"tag": "kernels-0000000000000000"}, KERNEL_TAG),
    ({"numba": "0.1.0"}, "numba 0.1.0"),
    ({"python": "2.7"}, "Python 2.7"),
    ({"triple": "riscv64-unknown-linux-gnu"}, "riscv64-unknown-linux-gnu"),
    ({"features": ["sse2", "no-such-feature"]}, "no-such-feature"),
    ({"sha256": "0" * 64}, "checksum"),
])
def test_a_prebuilt_kernel_that_does_not_fit_is_refused_with_the_reason(
        tmp_path, monkeypatch, changes, named):
    monkeypatch.delenv("FLEXMBS_PREBUILT", raising=False)
    _ship(tmp_path, **changes)
    build, reason = prebuilt.load_into(_Dispatcher(), tmp_path)
    assert build is None
    assert named in reason


def test_a_damaged_prebuilt_kernel_is_refused_and_names_its_file(tmp_path, monkeypatch):
    """A build whose checksum holds but whose contents numba cannot rebuild."""
    monkeypatch.delenv("FLEXMBS_PREBUILT", raising=False)

    class Cache:
        class _impl:
            @staticmethod
            def rebuild(context, payload):
                raise TypeError(f"cannot rebuild {payload!r}")

    dispatcher = _Dispatcher()
    dispatcher._cache = Cache()
    _ship(tmp_path)
    build, reason = prebuilt.load_into(dispatcher, tmp_path)
    assert build is None
    assert "'kernel-test.bin' could not be loaded: TypeError" in reason


def test_loading_is_switched_off_by_the_environment(tmp_path, monkeypatch):
    _ship(tmp_path)
    for off in ("0", "false", "No", "OFF"):
        monkeypatch.setenv("FLEXMBS_PREBUILT", off)
        assert prebuilt.find(tmp_path) == (None, f"FLEXMBS_PREBUILT={off}")
    monkeypatch.delenv("FLEXMBS_PREBUILT")
    assert prebuilt.find(tmp_path)[0] is not None
    assert prebuilt.find(tmp_path / "nowhere")[0] is None  # no manifest: nothing shipped


def test_loading_the_prebuilt_kernel_counts_as_kernel_time(tmp_path, monkeypatch):
    """An automatic run loads the prebuilt kernel before deciding whether to compile; that
    loading is part of ``compile_time`` (the run's one-time kernel cost, which the
    "loaded" real-time factor leaves out). A loading made 0.2 s slower shows there."""
    import time

    from flexmbs.cases import load_case, run_case
    from flexmbs.compiled import warmup

    if prebuilt.find()[0] is None:
        pytest.skip(f"the shipped prebuilt kernel does not fit: {prebuilt.find()[1]}")
    monkeypatch.setattr(warmup, "KERNEL_STATE_DIR", str(tmp_path))  # nothing ready here
    monkeypatch.setattr(warmup, "start_background", lambda: False)
    real, calls = prebuilt.ensure_loaded, []

    def slow_loading():  # the first call only: the run's decision, before the engine
        if not calls:
            time.sleep(0.2)
        calls.append(1)
        return real()

    monkeypatch.setattr(prebuilt, "ensure_loaded", slow_loading)
    case = load_case(TESTS.parent / "cases" / "seed_pendulum.toml")
    case.solver["t_end"] = 0.01
    result = run_case(case, engine="auto")[1]
    assert calls, "the run did not try the prebuilt kernel"
    assert result.statistics["engine"] == "compiled"
    assert result.statistics["compile_time"] >= 0.2


def test_ensure_compiled_compiles_unless_the_prebuilt_kernel_loads(tmp_path, monkeypatch):
    """Scripts that time the compiled engine call warmup.ensure_compiled(): it returns at
    once only when the prebuilt kernel actually loads; a listed build that fails to load
    (damaged) leaves it to compile, as no build at all does."""
    from flexmbs.compiled import warmup

    monkeypatch.setattr(warmup, "KERNEL_STATE_DIR", str(tmp_path))  # nothing ready here
    compiled = []
    monkeypatch.setattr(warmup, "compile_kernels", lambda: compiled.append(1))
    monkeypatch.setattr(prebuilt, "ensure_loaded",
                        lambda: (None, "prebuilt kernel 'k.bin': checksum mismatch"))
    warmup.ensure_compiled()
    assert compiled == [1]
    monkeypatch.setattr(prebuilt, "ensure_loaded", lambda: ({"cpu": "x86-64"}, ""))
    warmup.ensure_compiled()
    assert compiled == [1]


def test_a_process_running_the_prebuilt_kernel_never_marks_the_cache_ready(tmp_path,
                                                                         monkeypatch):
    """Nothing was compiled there: a ready mark would send later processes past the
    prebuilt kernel to an empty cache (a foreground compilation); and compiling for this
    machine in that process is refused with the way to do it."""
    from flexmbs.compiled import warmup

    monkeypatch.setattr(warmup, "KERNEL_STATE_DIR", str(tmp_path))
    monkeypatch.setattr(prebuilt, "_loaded", {"cpu": "x86-64"})
    warmup.mark_ready()
    assert not warmup.is_ready()
    assert not list(tmp_path.iterdir())
    with pytest.raises(RuntimeError, match="fresh process"):
        warmup.compile_kernels()
