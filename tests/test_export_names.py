"""The ParaView export (flexmbs.post.export) numbers every point's body the way the
results file does (``/bodies/<k>``), carries the names that number refers to, and
never writes over the results file it reads. Checked against the results file read
with h5py directly: its body groups, coordinates, node positions, mode shapes and
model markers, with the positions recomputed here from the Euler parameters."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import meshio
import numpy as np
import pytest

from flexmbs.cases import load_case, run_case
from flexmbs.cli.main import main
from flexmbs.errors import ValidationError, WriteError
from flexmbs.post.export import export
from flexmbs.results import SimulationResult
from flexmbs.results.stress import field_history

ROOT = Path(__file__).resolve().parents[1]


def _saved_run(folder: Path, case: str, t_end: float) -> Path:
    """Run ``cases/<case>.toml`` to ``t_end`` [s] and save it as ``folder/run.res.h5``."""
    result = run_case(load_case(ROOT / "cases" / f"{case}.toml",
                                {"solver.t_end": t_end}))[1]
    path = folder / "run.res.h5"
    result.save(path)
    return path


def _names(values) -> list[str]:
    """The names of a ``body_names`` / ``joint_names`` field data array (uint8: UTF-8
    names, each ended by a NUL byte; docs/post_processing.md)."""
    assert np.asarray(values).dtype == np.uint8
    return bytes(np.asarray(values)).decode().split("\0")[:-1]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rotation(p) -> np.ndarray:
    """A(p) of the Euler parameters p = (e0, e) (docs/theory_ffrf.md)."""
    e0, e = p[0], np.asarray(p[1:])
    skew = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
    return (2 * e0**2 - 1) * np.eye(3) + 2 * (np.outer(e, e) + e0 * skew)


class _File:
    """What the results file itself says (h5py, no flexmbs code)."""

    def __init__(self, path: Path):
        with h5py.File(path, "r") as f:
            self.t, self.q = f["t"][()], f["q"][()]
            self.names = [str(f["bodies"][str(k)].attrs["name"])
                          for k in range(len(f["bodies"]))]
            self.groups = {}
            for k, name in enumerate(self.names):
                g = f["bodies"][str(k)]
                self.groups[name] = {"start": int(g.attrs["start"]),
                                     **{key: g[key][()] for key in ("nodes", "phi")
                                        if key in g},
                                     "n_modes": int(g.attrs.get("n_modes", 0))}
            model = json.loads(f.attrs["model"])
        self.markers = model["markers"]
        self.joints = [j["name"] for j in model["joints"]]

    def pose(self, name: str, k: int):
        s = self.groups[name]["start"]
        return self.q[k, s:s + 3], _rotation(self.q[k, s + 3:s + 7])

    def flexible_points(self, name: str, k: int) -> np.ndarray:
        g, s = self.groups[name], self.groups[name]["start"]
        xi = self.q[k, s + 7:s + 7 + g["n_modes"]]
        r, a = self.pose(name, k)
        return r + (g["nodes"] + (g["phi"] @ xi).reshape(-1, 3)) @ a.T

    def marker_local(self, name: str) -> np.ndarray:
        """The body-frame points a rigid body is drawn through: origin and markers."""
        pts = [np.zeros(3)] + [np.asarray(m["position"], float)
                               for m in self.markers.values() if m["body"] == name]
        return np.array(pts)


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    """The seed arm (rigid link1, link2, flexible beam) run briefly, saved and loaded."""
    folder = tmp_path_factory.mktemp("arm")
    path = _saved_run(folder, "arm_beam_seed", 0.01)
    return folder, path, SimulationResult.load(path), _File(path)


def _check_body_index(mesh_points, data, names, joint_names, file: _File, k: int):
    """Every point's ``body`` index names the results file's body that the point is on
    (by position) and each joint point's index names the joint at that point."""
    assert names == file.names
    assert joint_names == file.joints
    part, body = data["part"].astype(int), data["body"]
    assert np.all(body == np.round(body))
    body = body.astype(int)
    flexible = [n for n in file.names if "phi" in file.groups[n]]
    for name in flexible:  # the flexible nodes lie where the named file body's nodes are
        rows = (part == 0) & (body == file.names.index(name))
        np.testing.assert_allclose(mesh_points[rows], file.flexible_points(name, k),
                                   atol=1e-9, rtol=0)  # [m]; nodes are mm apart
    assert np.count_nonzero(part == 0) == sum(len(file.groups[n]["nodes"]) for n in flexible)
    for idx in np.unique(body[part == 1]):  # rigid points: the named body's markers
        name = names[idx]
        assert "phi" not in file.groups[name]
        r, a = file.pose(name, k)
        local = (mesh_points[(part == 1) & (body == idx)] - r) @ a
        expected = file.marker_local(name)
        dist = np.linalg.norm(local[:, None, :] - expected[None, :, :], axis=2)
        assert dist.min(axis=1).max() < 1e-9  # every point is one of its markers [m]
        assert dist.min(axis=0).max() < 1e-9  # and every marker is drawn
    assert {names[i] for i in body[part == 1]} == {
        n for n in file.names if "phi" not in file.groups[n]}
    joint_rows = np.flatnonzero(part == 2)
    assert sorted(body[joint_rows]) == list(range(len(file.joints)))


def test_pvd_body_index_is_the_results_file_index_and_names_map_back(arm):
    folder, _, result, file = arm
    assert file.names == ["link1", "link2", "beam"]  # rigid and flexible bodies
    export(result, folder / "scene.pvd")
    files = sorted((folder / "scene_vtu").glob("*.vtu"))
    assert len(files) == len(file.t)
    for k, vtu in enumerate(files):
        mesh = meshio.read(vtu)
        names = _names(mesh.field_data["body_names"])
        joints = _names(mesh.field_data["joint_names"])
        _check_body_index(mesh.points, mesh.point_data, names, joints, file, k)
    from flexmbs.post.export import names_from_field_data

    assert names_from_field_data(mesh.field_data["body_names"]) == file.names


def test_xdmf_body_index_and_names(arm):
    folder, _, result, file = arm
    out = folder / "scene.xdmf"
    export(result, out)
    info = {e.get("Name"): json.loads(e.get("Value"))
            for e in ET.parse(out).getroot().find("Domain").findall("Information")}
    with meshio.xdmf.TimeSeriesReader(str(out)) as reader:
        points0, _ = reader.read_points_cells()
        assert reader.num_steps == len(file.t)
        for k in range(reader.num_steps):
            t, data, _ = reader.read_data(k)
            assert t == file.t[k]
            _check_body_index(points0 + data["motion"], data, info["body_names"],
                              info["joint_names"], file, k)


def test_body_index_follows_the_file_beyond_ten_bodies(tmp_path):
    """A nonlinear beam's 17 node bodies: HDF5 lists the groups /bodies/0, 1, 10, 11, ...
    so a loaded result may list its bodies in another order than the file's index."""
    path = _saved_run(tmp_path, "elastica", 0.001)
    file = _File(path)
    assert len(file.names) > 10
    export(SimulationResult.load(path), tmp_path / "ela.pvd", every=10**6)
    mesh = meshio.read(next((tmp_path / "ela_vtu").glob("*.vtu")))
    names = _names(mesh.field_data["body_names"])
    assert names == file.names
    part, body = mesh.point_data["part"].astype(int), mesh.point_data["body"].astype(int)
    for idx in np.unique(body[part == 1]):  # each node body's origin is its position
        r, _ = file.pose(names[idx], 0)
        rows = (part == 1) & (body == idx)
        assert np.min(np.linalg.norm(mesh.points[rows] - r, axis=1)) < 1e-9  # [m]


def test_xdmf_export_beside_the_results_leaves_them_intact(tmp_path, capsys):
    """``flexmbs export X.res.h5 -o X.res.xdmf`` wrote its heavy data to X.res.h5 (the
    input): the heavy data is now X.res.xdmf.h5 and the results stay byte-identical."""
    path = _saved_run(tmp_path, "cantilever_release", 0.05)
    before, file = _digest(path), _File(path)
    out = tmp_path / "run.res.xdmf"
    assert main(["export", str(path), "-o", str(out), "--quiet"]) == 0
    assert _digest(path) == before
    again = SimulationResult.load(path)
    np.testing.assert_array_equal(again.q, file.q)
    assert (tmp_path / "run.res.xdmf.h5").is_file()
    with meshio.xdmf.TimeSeriesReader(str(out)) as reader:
        points0, _ = reader.read_points_cells()
        assert reader.num_steps == len(file.t)
        times = [reader.read_data(k)[0] for k in range(reader.num_steps)]
        _, data, _ = reader.read_data(reader.num_steps - 1)
    np.testing.assert_array_equal(times, file.t)
    moved = (points0 + data["motion"])[data["part"] == 0]
    np.testing.assert_allclose(moved, file.flexible_points("beam", len(file.t) - 1),
                               atol=1e-9, rtol=0)  # [m]


@pytest.mark.parametrize("results, output", [
    ("run.xdmf.h5", "run.xdmf"),    # the heavy data would be the results file
    ("run.pvd", "run.pvd"),         # the collection would be the results file
    ("run_vtu/r.res.h5", "run.pvd"),  # the VTU folder replaced would hold it
    ("run.xdmf", "run.xdmf"),
])
def test_an_output_on_the_results_file_is_refused(tmp_path, capsys, results, output):
    source = _saved_run(tmp_path, "cantilever_release", 0.002)
    target = tmp_path / results
    target.parent.mkdir(exist_ok=True)
    source.rename(target)
    before = _digest(target)
    with pytest.raises(WriteError, match="results file being read") as err:
        export(SimulationResult.load(target), tmp_path / output)
    assert str(target.name) in str(err.value) and output in str(err.value)
    capsys.readouterr()
    assert main(["export", str(target), "-o", str(tmp_path / output), "--quiet"]) == 2
    assert "results file being read" in capsys.readouterr().err
    assert _digest(target) == before
    SimulationResult.load(target)


def test_field_history_names_a_missing_body(arm):
    _, _, result, file = arm
    with pytest.raises(ValidationError) as err:
        field_history(result, "nobody", "fibre_stress")
    text = str(err.value)
    assert "'nobody' is not in these results" in text
    assert all(repr(name) in text for name in file.names)
    with pytest.raises(ValidationError, match="has no field 'fibre_stress'"):
        field_history(result, "link1", "fibre_stress")  # a body without that field


def test_an_xdmf_name_with_a_colon_is_refused(arm, tmp_path):
    """The XDMF points at its heavy data as "<file>:<dataset>": a ':' in the name would
    make the time series unreadable (meshio's reader splits there)."""
    _, _, result, _ = arm
    with pytest.raises(WriteError, match="cannot contain ':'"):
        export(result, tmp_path / "a:b.xdmf")
    assert list(tmp_path.iterdir()) == []
