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


def _direct_tag(root: Path) -> str:
    """The tag as docs/compiled.md defines it, from the files themselves: sha256 over
    each kernel source's path below ``flexmbs/`` and bytes, the first 16 hex digits."""
    here = root / "compiled"
    files = [p for p in sorted(here.glob("*.py")) if p.name not in compiled.NOT_KERNEL_SOURCES]
    files += sorted((root / "elements").rglob("*.py"))
    files += [root / "engine" / "dispatch.py", root / "engine" / "newton.py",
              root / "contact" / "sample.py"]
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
    for part in ("engine/dispatch.py", "engine/newton.py", "contact/sample.py"):
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
