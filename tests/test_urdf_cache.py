"""Remembered URDF readings (flexmbs.cases.urdf_cache): a robot taken from an entry is
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

from flexmbs.cases import urdf_cache
from flexmbs.cases.urdf_robot import read_urdf
from flexmbs.errors import ModelError

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "cases" / "urdf" / "two_link_arm.urdf"


@pytest.fixture
def remembering(tmp_path, monkeypatch):
    """A folder of remembered readings of the test's own."""
    where = tmp_path / "urdf-cache"
    monkeypatch.setenv(urdf_cache.ENV, str(where))
    return where


def fresh(path):
    """The robot as yourdfpy reads it, nothing remembered."""
    previous = os.environ.get(urdf_cache.ENV)
    os.environ[urdf_cache.ENV] = "off"
    try:
        return read_urdf(path)
    finally:
        os.environ[urdf_cache.ENV] = previous


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
    env = {**os.environ, urdf_cache.ENV: str(remembering)}
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


@pytest.mark.parametrize("damage", ["not json", json.dumps({"revision": 1}),
                                    json.dumps({"revision": 0, "links": []}),
                                    "shape"])
def test_a_damaged_entry_is_read_afresh_and_rewritten(remembering, damage):
    read_urdf(ARM)
    (entry,) = remembering.glob("*.json")
    if damage == "shape":  # a valid entry with a joint axis of the wrong length
        data = json.loads(entry.read_text())
        data["joints"][0]["axis"] = [0.0, 1.0]
        damage = json.dumps(data)
    entry.write_text(damage)
    assert_same_robot(read_urdf(ARM), fresh(ARM))
    assert json.loads(entry.read_text())["revision"] == urdf_cache.REVISION


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
    monkeypatch.setenv(urdf_cache.ENV, str(blocker / "urdf"))  # (a folder in a file)
    assert_same_robot(read_urdf(ARM), fresh(ARM))


def test_without_yourdfpy_an_entry_is_not_used(remembering, monkeypatch):
    read_urdf(ARM)
    monkeypatch.setitem(sys.modules, "yourdfpy", None)
    with pytest.raises(ImportError, match=r"flexmbs\[urdf\]"):
        read_urdf(ARM)
