"""The kernels' source hash (flexmbs.compiled.kernel_tag) and the stamp that remembers it
across processes by the sources' sizes and modification times: whatever is remembered,
the tag is always that of the sources' bytes, computed here independently."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

import flexmbs.compiled as compiled

PACKAGE = Path(compiled.__file__).resolve().parents[1]

#: The engine's kernel sources, in the order docs/compiled.md gives them.
ENGINE_SOURCES = ("dispatch.py", "newton.py", "linear_solves.py", "adjoint_sweep.py")


def _direct_tag(root: Path) -> str:
    """The tag as docs/compiled.md defines it, from the files themselves: sha256 over
    each kernel source's path below ``flexmbs/`` and bytes, the first 16 hex digits."""
    here = root / "compiled"
    files = [p for p in sorted(here.glob("*.py")) if p.name not in compiled.NOT_KERNEL_SOURCES]
    files += sorted((root / "elements").rglob("*.py"))
    files += [root / "engine" / name for name in ENGINE_SOURCES]
    files += [root / "contact" / "sample.py"]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return f"kernels-{digest.hexdigest()[:16]}"


@pytest.fixture
def sources(tmp_path, monkeypatch):
    """A copy of the kernel sources under tmp/flexmbs (settled: modified a minute ago),
    with kernel_tag reading it and its stamp in tmp/stamp.json."""
    root = tmp_path / "flexmbs"
    for part in ("compiled", "elements"):
        shutil.copytree(PACKAGE / part, root / part,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for part in (*(f"engine/{name}" for name in ENGINE_SOURCES), "contact/sample.py"):
        (root / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PACKAGE / part, root / part)
    settle(root)
    stamp = tmp_path / "stamp.json"
    monkeypatch.setattr(compiled, "_HERE", root / "compiled")
    monkeypatch.setattr(compiled, "_ELEMENTS", root / "elements")
    monkeypatch.setattr(compiled, "_tag_stamp_paths", lambda: [stamp])
    compiled.kernel_tag.cache_clear()
    yield root, stamp
    compiled.kernel_tag.cache_clear()


def settle(root: Path, ago: float = 60.0) -> None:
    then = time.time() - ago
    for path in root.rglob("*.py"):
        os.utime(path, (then, then))


def fresh_tag() -> str:
    compiled.kernel_tag.cache_clear()
    return compiled.kernel_tag()


def test_the_shipped_sources_tag_is_their_hash():
    assert fresh_tag() == _direct_tag(PACKAGE)


def test_a_remembered_tag_is_the_hash_and_follows_every_change(sources):
    root, stamp = sources
    first = fresh_tag()
    assert first == _direct_tag(root) and stamp.is_file()
    assert fresh_tag() == first  # remembered: same answer

    # same size, new bytes, settled time: hashed again
    newton = root / "engine" / "newton.py"
    text = newton.read_bytes()
    assert text.endswith(b"\n")
    newton.write_bytes(text[:-1] + b"#")
    settle(root)
    changed = fresh_tag()
    assert changed == _direct_tag(root) and changed != first

    # a new kernel file in a subfolder changes the list, hence the tag
    (root / "elements" / "new_kind").mkdir()
    (root / "elements" / "new_kind" / "kernels.py").write_text("X = 1\n")
    settle(root)
    assert fresh_tag() == _direct_tag(root) != changed


def test_sources_changed_just_now_are_hashed_but_not_remembered(sources):
    root, stamp = sources
    fresh_tag()
    remembered = stamp.read_text()
    (root / "compiled" / "codes.py").write_text("# edited a moment ago\n")
    assert fresh_tag() == _direct_tag(root)
    assert stamp.read_text() == remembered


@pytest.mark.parametrize("content", ["", "not json", "[1, 2]",
                                     '{"stamp": "x", "tag": "kernels-0"}'])
def test_a_damaged_or_foreign_stamp_is_ignored(sources, content):
    root, stamp = sources
    stamp.write_text(content)
    assert fresh_tag() == _direct_tag(root)


def test_a_stamp_whose_tag_lies_is_not_believed_for_other_times(sources):
    """The stamp is keyed by the sources' times and sizes: a stamp written for other
    files (here: the same paths with other times) is not taken."""
    root, stamp = sources
    fresh_tag()
    settle(root, ago=120.0)
    text = stamp.read_text().replace(fresh_tag()[8:], "0" * 16)
    stamp.write_text(text)
    settle(root, ago=180.0)
    assert fresh_tag() == _direct_tag(root)


def test_an_unwritable_stamp_folder_is_no_error(sources, monkeypatch, tmp_path):
    root, _ = sources
    blocked = tmp_path / "a_file"
    blocked.write_text("")
    monkeypatch.setattr(compiled, "_tag_stamp_paths", lambda: [blocked / "stamp.json"])
    assert fresh_tag() == _direct_tag(root)
    assert not list(tmp_path.glob(".stamp.json.*"))


_DEFAULT_CACHE_PROBE = """
import json, sys
import numba
from flexmbs.compiled import kernel_cache_dir, kernel_state_dir, kernel_tag
before = numba.config.CACHE_DIR
sys.path.insert(0, sys.argv[1])
import probe_kernel
assert probe_kernel.plus_one(1) == 2
print(json.dumps({"cache": kernel_cache_dir(), "state": kernel_state_dir(),
                  "tag": kernel_tag(), "unchanged": numba.config.CACHE_DIR == before}))
"""


def test_kernels_are_cached_in_the_folder_named_by_the_tag_by_default(tmp_path):
    """Where users' kernels go, which the suite itself does not use (it sets numba's
    cache folder: conftest): without ``NUMBA_CACHE_DIR``, a kernel decorated with
    flexmbs.compiled._jit.njit(cache=True) is cached in the folder named by the kernel
    tag beside the package (or in ~/.cache/flexmbs), the background compilation's state
    lives in that same folder, and numba's own cache setting is left as it was."""
    import json
    import subprocess
    import sys

    (tmp_path / "probe_kernel.py").write_text(
        "from flexmbs.compiled._jit import njit\n\n\n@njit(cache=True)\n"
        "def plus_one(x):\n    return x + 1\n")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("NUMBA_") and key != "FLEXMBS_KERNEL_STATE_DIR"}
    env["HOME"] = str(tmp_path / "home")  # the fallback folder, if the package's is not
    done = subprocess.run([sys.executable, "-c", _DEFAULT_CACHE_PROBE, str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    folder = Path(found["cache"])
    probes = list(folder.rglob("probe_kernel.plus_one-*"))
    try:
        assert folder.name == found["tag"] == compiled.kernel_tag()
        assert folder.parent in (PACKAGE / "compiled" / "__pycache__",
                                 tmp_path / "home" / ".cache" / "flexmbs")
        assert found["state"] == found["cache"]
        assert found["unchanged"]
        assert [p.suffix for p in probes].count(".nbi") == 1
    finally:  # the probe's cache entries: numba files them in a folder of their own,
        for parent in {p.parent for p in probes}:  # named by the probe module's folder
            if parent != folder and tmp_path.name in parent.name:
                shutil.rmtree(parent, ignore_errors=True)
