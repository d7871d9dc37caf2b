"""Remembered case inputs (flexmbs.cases.remembered): URDF readings (urdf_cache) and
built-in beams (beam_cache). A robot taken from an entry is
the robot yourdfpy reads, field for field and number for number (the shipped arm and
example-robot-data's Franka Panda and UR5: meshes, limits, mimic joints); a reading
from an entry imports no yourdfpy; changed bytes, damaged entries, faulty robots, an
unwritable folder and a missing yourdfpy are each handled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("yourdfpy")

from robot_files import robot_file

from flexmbs.cases import remembered, urdf_cache
from flexmbs.cases.urdf_robot import read_urdf
from flexmbs.errors import ModelError

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "cases" / "urdf" / "two_link_arm.urdf"


@pytest.fixture
def full_disk(monkeypatch):
    """Files written to a temporary name (as every atomic write does) fail as on a full
    disk (ENOSPC); ``full_disk()`` ends it."""
    import errno

    write_bytes = Path.write_bytes

    def full(self, content):
        if ".part" in self.name:
            raise OSError(errno.ENOSPC, "No space left on device")
        return write_bytes(self, content)

    monkeypatch.setattr(Path, "write_bytes", full)
    return lambda: monkeypatch.setattr(Path, "write_bytes", write_bytes)


@pytest.fixture
def remembering(tmp_path, monkeypatch):
    """The folder of remembered readings, in a folder of the test's own."""
    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    return tmp_path / "cache" / "urdf"


def fresh(path):
    """The robot as yourdfpy reads it, nothing remembered."""
    previous = os.environ.get(remembered.ENV)
    os.environ[remembered.ENV] = "off"
    try:
        return read_urdf(path)
    finally:
        os.environ[remembered.ENV] = previous


def assert_same_robot(got, want):
    assert (got.name, got.root, got.path) == (want.name, want.root, want.path)
    assert list(got.links) == list(want.links)
    for name, link in want.links.items():
        other = got.links[name]
        assert other.name == link.name
        if link.inertial is None:
            assert other.inertial is None
        else:
            assert other.inertial.mass == link.inertial.mass
            assert np.array_equal(other.inertial.com, link.inertial.com)
            assert np.array_equal(other.inertial.inertia, link.inertial.inertia)
        assert len(other.visuals) == len(link.visuals)
        for a, b in zip(other.visuals, link.visuals, strict=True):
            assert (a.kind, a.filename, a.size) == (b.kind, b.filename, b.size)
            assert np.array_equal(a.origin, b.origin) and np.array_equal(a.scale, b.scale)
    assert [j.name for j in got.joints] == [j.name for j in want.joints]
    for a, b in zip(got.joints, want.joints, strict=True):
        assert (a.kind, a.parent, a.child, a.limit, a.mimic) == (b.kind, b.parent, b.child,
                                                                  b.limit, b.mimic)
        assert np.array_equal(a.origin, b.origin) and np.array_equal(a.axis, b.axis)


@pytest.mark.parametrize("which", ["arm", "panda_description/urdf/panda.urdf",
                                   "ur_description/urdf/ur5_robot.urdf"])
def test_a_remembered_robot_is_the_robot_read(remembering, which):
    path = ARM if which == "arm" else robot_file(which)
    want = fresh(path)
    first = read_urdf(path)  # read through yourdfpy, and remembered
    entries = list(remembering.glob("*.json"))
    assert len(entries) == 1
    assert_same_robot(first, want)
    again = read_urdf(path)  # from the entry
    assert again is not first
    assert_same_robot(again, want)


def test_a_second_reading_imports_no_yourdfpy(remembering):
    code = ("import sys; from flexmbs.cases.urdf_robot import read_urdf; "
            f"robot = read_urdf({str(ARM)!r}); "
            "print('yourdfpy' in sys.modules, len(robot.joints))")
    env = {**os.environ, remembered.ENV: str(remembering.parent)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=env).stdout.split() for _ in range(2)]
    assert runs == [["True", "3"], ["False", "3"]]


def test_changed_bytes_are_read_again(remembering, tmp_path):
    path = tmp_path / "arm.urdf"
    text = ARM.read_text()
    path.write_text(text)
    assert read_urdf(path).links["upper_arm"].inertial.mass == 2.0
    path.write_text(text.replace('<mass value="2.0"/>', '<mass value="2.5"/>'))
    robot = read_urdf(path)
    assert robot.links["upper_arm"].inertial.mass == 2.5
    assert len(list(remembering.glob("*.json"))) == 2
    assert_same_robot(robot, fresh(path))


@pytest.mark.parametrize("damage", ["not json", "no robot", "old revision", "a mass",
                                    "a shape"])
def test_a_damaged_entry_is_read_afresh_and_rewritten(remembering, damage):
    read_urdf(ARM)
    (entry,) = remembering.glob("*.json")
    data = json.loads(entry.read_text())
    robot = data["robot"]
    if damage == "a mass":  # a changed number: the seal no longer holds
        robot["links"][1]["inertial"]["mass"] = 3.0
    elif damage == "a shape":  # a joint axis of the wrong length, sealed as it is
        robot["joints"][0]["axis"] = [0.0, 1.0]
        data["seal"] = urdf_cache._seal(robot)
    elif damage == "old revision":
        data["revision"] = urdf_cache.REVISION - 1
    elif damage == "no robot":
        del data["robot"]
    entry.write_text("{" if damage == "not json" else json.dumps(data))
    assert_same_robot(read_urdf(ARM), fresh(ARM))
    rewritten = json.loads(entry.read_text())
    assert rewritten["revision"] == urdf_cache.REVISION
    assert rewritten["seal"] == urdf_cache._seal(rewritten["robot"])


def test_a_faulty_robot_is_not_remembered(remembering, tmp_path):
    path = tmp_path / "loop.urdf"
    path.write_text("""<robot name="loop"><link name="a"/><link name="b"/>
      <joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>
      <joint name="j2" type="fixed"><parent link="b"/><child link="a"/></joint></robot>""")
    for _ in range(2):
        with pytest.raises(ModelError, match="root link"):
            read_urdf(path)
    assert not list(remembering.glob("*.json"))


def test_an_unwritable_folder_remembers_nothing(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(remembered.ENV, str(blocker / "cache"))  # (a folder in a file)
    assert_same_robot(read_urdf(ARM), fresh(ARM))


def test_without_yourdfpy_an_entry_is_not_used(remembering, monkeypatch):
    read_urdf(ARM)
    monkeypatch.setitem(sys.modules, "yourdfpy", None)
    with pytest.raises(ImportError, match=r"flexmbs\[urdf\]"):
        read_urdf(ARM)


# --------------------------------------------------------------------- built-in beams
def same_value(a, b, where: str) -> None:
    """Exact equality of ModalData field values: arrays bit for bit (sparse ones by their
    entries), dicts key by key, dataclasses field by field, anything else by ==."""
    import dataclasses

    import scipy.sparse as sp

    if sp.issparse(a) or sp.issparse(b):
        assert sp.issparse(a) and sp.issparse(b), where
        assert a.shape == b.shape and (a != b).nnz == 0, where
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, dict):  # (by name: an HDF5 group lists its members sorted)
        assert isinstance(b, dict) and sorted(a) == sorted(b), where
        for k in a:
            same_value(a[k], b[k], f"{where}[{k!r}]")
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            same_value(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, (list, tuple)) and any(isinstance(v, np.ndarray) for v in a):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            same_value(x, y, f"{where}[{k}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _listed(value):
    return value.tolist() if hasattr(value, "tolist") else str(value)


def assert_same_modal_data(got, want, timed: bool = True) -> None:
    """Every public field and the invariants the same; ``timed=False``: two reductions
    of their own, whose metadata say how long each took (``time_s``)."""
    import dataclasses

    for f in dataclasses.fields(want):
        if f.name.startswith("_"):
            continue
        a, b = getattr(got, f.name), getattr(want, f.name)
        if f.name == "metadata":  # (as JSON holds them: a native file's tuples are lists)
            a, b = (json.loads(json.dumps({k: v for k, v in m.items()
                                           if timed or k != "time_s"}, default=_listed))
                    for m in (a, b))
        same_value(a, b, f.name)
    same_value(got.invariants, want.invariants, "invariants")


BEAMS = {
    "robot arm's": ("robot_arm", True, False),
    "URDF arm's": ({"section": {"kind": "box", "width": 0.03, "height": 0.015,
                                "wall": 0.002},
                    "modes": 4, "material": "aluminium", "length": 0.5}, False, False),
    "corrected, loaded and scaled": (
        {"length": 0.8, "modes": 3, "elements": 12, "section": {"kind": "rectangle",
                                                               "width": 0.02,
                                                               "height": 0.01},
         "static_correction": "tip", "scale_stiffness": 1.2, "scale_mass": 0.9,
         "point_masses": [{"node": "tip", "mass": 0.3, "inertia": [1e-4, 2e-4, 2e-4]}]},
        True, False),
    "with modal derivatives": ({"length": 0.6, "modes": 2, "elements": 10,
                                "section": {"kind": "circle", "diameter": 0.01}},
                               False, True),
}


def beam_table(which):
    import tomllib

    spec, stiffening, derivatives = BEAMS[which]
    if isinstance(spec, str):  # a shipped case's beam table
        case = tomllib.loads((ROOT / "cases" / f"{spec}.toml").read_text())
        body = next(b for b in case["bodies"] if "beam" in b)
        spec = body["beam"]
    return spec, stiffening, derivatives


@pytest.mark.parametrize("which", list(BEAMS))
def test_a_remembered_beam_is_the_beam_reduced(which, tmp_path, monkeypatch):
    from flexmbs.cases.beam_body import beam_modal_data

    spec, stiffening, derivatives = beam_table(which)
    monkeypatch.setenv(remembered.ENV, "off")
    want = beam_modal_data(spec, stiffening=stiffening, derivatives=derivatives)
    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    first = beam_modal_data(spec, stiffening=stiffening, derivatives=derivatives)
    assert len(list((tmp_path / "cache" / "beams").glob("*.fmd.h5"))) == 1
    again = beam_modal_data(spec, stiffening=stiffening, derivatives=derivatives)
    assert_same_modal_data(first, want, timed=False)  # (two reductions of their own)
    assert_same_modal_data(again, first)  # (read back: the remembered reduction)


def test_a_remembered_beam_case_imports_no_scipy(tmp_path):
    """The robot arm's case read and run twice in fresh processes: the second imports
    no SciPy and gives the same motion to the bit."""
    code = ("import sys, numpy as np; from flexmbs.cases import load_case, run_case; "
            f"s, r = run_case(load_case({str(ROOT / 'cases' / 'robot_arm.toml')!r}, "
            "overrides={'solver.t_end': 0.05})); "
            "print('scipy' in sys.modules, r.q[-1].tobytes().hex())")
    env = {**os.environ, remembered.ENV: str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=env).stdout.split() for _ in range(2)]
    assert runs[0][0] == "True" and runs[1][0] == "False"
    assert runs[0][1] == runs[1][1]


def test_another_beam_or_request_is_reduced_afresh(tmp_path, monkeypatch):
    from flexmbs.cases.beam_body import beam_modal_data

    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    spec, _, _ = beam_table("URDF arm's")
    four = beam_modal_data(spec)
    five = beam_modal_data({**spec, "modes": 5})
    stiff = beam_modal_data(spec, stiffening=True)
    assert (four.n_modes, five.n_modes) == (4, 5)
    assert not four.has_stiffening and stiff.has_stiffening
    assert len(list((tmp_path / "cache" / "beams").glob("*.fmd.h5"))) == 3


def test_a_damaged_beam_entry_is_reduced_afresh(tmp_path, monkeypatch):
    from flexmbs.cases import beam_cache
    from flexmbs.cases.beam_body import beam_modal_data

    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    spec, _, _ = beam_table("URDF arm's")
    want = beam_modal_data(spec)
    name = beam_cache.key(spec, False, False)
    (entry,) = (tmp_path / "cache" / "beams").glob("*.fmd.h5")
    raw = bytearray(entry.read_bytes())
    at = bytes(raw).find(want.phi[-1].tobytes())  # inside the mode shapes' values
    assert at > 0
    raw[at + 3] ^= 0xFF
    entry.write_bytes(bytes(raw))
    assert beam_cache.recall(name) is None  # the checksum no longer holds
    assert_same_modal_data(beam_modal_data(spec), want, timed=False)
    data, said = beam_cache.recall(name)  # written again, readable
    assert_same_modal_data(data, want, timed=False) and said == []


def test_a_reductions_warnings_are_said_again(tmp_path, monkeypatch):
    """A beam in millimetres and tonnes draws the units warning when it is reduced, and
    again when its remembered reduction is read."""
    from flexmbs.cases.beam_body import beam_modal_data
    from flexmbs.errors import UnitsWarning

    spec = {"length": 500.0, "modes": 3, "elements": 10, "material": "210e3,0.3,7.85e-9",
            "section": {"kind": "rectangle", "width": 20.0, "height": 10.0}}
    said = []
    for setting in ("off", str(tmp_path / "cache"), str(tmp_path / "cache")):
        monkeypatch.setenv(remembered.ENV, setting)
        with pytest.warns(UnitsWarning) as caught:
            beam_modal_data(spec)
        said.append(sorted((w.category.__name__, str(w.message)) for w in caught))
    assert said[0] == said[1] == said[2] and said[0]
    assert len(list((tmp_path / "cache" / "beams").glob("*.fmd.h5"))) == 1


def test_a_full_disk_remembers_nothing_and_leaves_nothing(tmp_path, monkeypatch,
                                                          full_disk):
    """Writing the entry fails as on a full disk (ENOSPC): the beam is still made, no
    entry and no partial file is left, and the next reading reduces it again."""
    from flexmbs.cases.beam_body import beam_modal_data

    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    spec, _, _ = beam_table("URDF arm's")
    data = beam_modal_data(spec)
    assert data.n_modes == 4
    left = sorted(p.name for p in (tmp_path / "cache" / "beams").iterdir())
    assert not [n for n in left if n.endswith(".fmd.h5") or ".part" in n]


def test_a_changed_source_reduces_afresh(tmp_path, monkeypatch):
    """The beams' fingerprint holds every flexmbs source: another digest, another entry;
    none without a digest, a table JSON cannot hold or remembering switched off."""
    from flexmbs.cases import beam_cache

    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    spec, _, _ = beam_table("URDF arm's")
    before = beam_cache.key(spec, False, False)
    monkeypatch.setattr(beam_cache, "package_digest", lambda: "another")
    assert beam_cache.key(spec, False, False) != before
    assert beam_cache.key({**spec, "weird": object()}, False, False) is None
    monkeypatch.setattr(beam_cache, "package_digest", lambda: None)
    assert beam_cache.key(spec, False, False) is None
    for off in ("off", "0", "false", "None"):
        monkeypatch.setenv(remembered.ENV, off)
        assert beam_cache.key(spec, False, False) is None


def test_the_source_digest_follows_the_files(tmp_path, monkeypatch):
    """package_digest over a package of three files, in a new process each time (its
    memo cleared): another byte another digest; the digest remembered under the files'
    sizes and times (so an edit keeping both is not seen, as with Python's bytecode); a
    vanished file gives none, and the next call tries again."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = [package / "a.py", package / "b.py", package / "sub" / "c.py"]
    for k, path in enumerate(files):
        path.write_text(f"x = {k}\n")
        os.utime(path, (1e9, 1e9))  # settled long ago: the digest is remembered
    monkeypatch.setattr(remembered, "_PACKAGE", package)
    monkeypatch.setattr(remembered, "_DIGESTS", {})
    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))

    def new_process():
        remembered._DIGESTS.clear()
        return remembered.package_digest()

    first = new_process()
    stamp = tmp_path / "cache" / "stamps" / "package-digest.json"
    assert json.loads(stamp.read_text())["digest"] == first
    assert new_process() == first
    files[2].write_text("x = 22\n")  # another size
    os.utime(files[2], (1e9, 1e9))
    second = new_process()
    assert second != first
    files[2].write_text("x = 33\n")  # the same size and time: the remembered digest
    os.utime(files[2], (1e9, 1e9))
    assert new_process() == second
    monkeypatch.setenv(remembered.ENV, "off")  # nothing remembered: hashed each process
    assert new_process() not in (first, second)
    files[1].unlink()
    real_stat = remembered.os.stat
    monkeypatch.setattr(remembered.os, "stat", lambda path: (_ for _ in ()).throw(
        FileNotFoundError(path)))
    assert new_process() is None
    monkeypatch.setattr(remembered.os, "stat", real_stat)  # readable again: tried again
    assert remembered.package_digest() not in (None, first, second)


def test_the_source_digest_is_worked_out_once_per_process(tmp_path, monkeypatch):
    """The code a process runs is the code it imported: after the first call the digest
    is the same without listing or reading a file, whatever changes on disk (a case
    with built-in beams asked for it once per beam at every load, 3 ms each)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("x = 0\n")
    monkeypatch.setattr(remembered, "_PACKAGE", package)
    monkeypatch.setattr(remembered, "_DIGESTS", {})
    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    first = remembered.package_digest()
    (package / "a.py").write_text("x = 10\n")
    monkeypatch.setattr(remembered.os, "scandir", lambda path: (_ for _ in ()).throw(
        AssertionError(f"listed {path} again")))
    assert remembered.package_digest() == first


def test_the_entries_used_longest_ago_go_past_the_limits(tmp_path, monkeypatch):
    where = tmp_path / "beams"
    where.mkdir()
    for k in range(6):
        entry = where / f"{k}.fmd.h5"
        entry.write_bytes(b"x" * 100)
        os.utime(entry, (1000.0 + k, 1000.0 + k))  # entry 0 used longest ago
    monkeypatch.setattr(remembered, "MOST_ENTRIES", 4)
    remembered.prune(where, "*.fmd.h5")
    assert sorted(p.name for p in where.iterdir()) == [f"{k}.fmd.h5" for k in (2, 3, 4, 5)]
    monkeypatch.setattr(remembered, "MOST_BYTES", 250)
    remembered.prune(where, "*.fmd.h5")
    assert sorted(p.name for p in where.iterdir()) == ["4.fmd.h5", "5.fmd.h5"]


def test_without_a_home_folder_nothing_is_remembered(tmp_path):
    """No HOME (and no user database entry to fall back on): the case still loads."""
    code = ("import pathlib; from flexmbs.cases import remembered; "
            "pathlib.Path.home = classmethod(lambda cls: (_ for _ in ()).throw("
            "RuntimeError('Could not determine home directory'))); "
            "from flexmbs.cases import load_case; "
            f"load_case({str(ROOT / 'cases' / 'robot_arm.toml')!r}); "
            "print(remembered.folder('beams'))")
    env = {k: v for k, v in os.environ.items() if k != remembered.ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=tmp_path)
    assert out.stdout.strip() == "None"


def test_a_modal_file_on_a_full_disk_is_a_write_error(tmp_path, monkeypatch, full_disk):
    """write_native meeting a full disk (ENOSPC) raises WriteError naming the file and
    leaves nothing; a file too large for its folder's free space is refused before."""
    from flexmbs.cases.beam_body import beam_modal_data
    from flexmbs.errors import WriteError
    from flexmbs.modal.io import native

    data = beam_modal_data(beam_table("URDF arm's")[0])
    target = tmp_path / "beam.fmd.h5"
    with pytest.raises(WriteError, match=r"beam\.fmd\.h5.*No space left on device"):
        native.write_native(data, target)
    assert list(tmp_path.iterdir()) == []
    full_disk()  # (ended: the next refusal comes before any writing)
    monkeypatch.setattr(native, "IN_MEMORY_UP_TO", 0)  # (written by HDF5 itself)
    monkeypatch.setattr("shutil.disk_usage", lambda path: type("Usage", (), {"free": 10})())
    with pytest.raises(WriteError, match=r"needs about 16 MB, its folder has 0 MB free"):
        native.write_native(data, target)
    assert list(tmp_path.iterdir()) == []
