"""The ParaView export carries the whole scene (flexmbs.post.export): flexible bodies,
rigid bodies moving with their poses, joints, and the sensors as field data. Checked
on the seed arm against the run's own marker sensors (an independent path: the model's
marker kinematics) and sensor values."""

from __future__ import annotations

from pathlib import Path

import meshio
import numpy as np

from flexmbs.cases import load_case, run_case
from flexmbs.post.export import export

ROOT = Path(__file__).resolve().parents[1]

SENSORS = """
[[sensors]]
name = "hand"
type = "marker"
quantity = "position"
marker = "link2.T"

[[sensors]]
name = "elbow_point"
type = "marker"
quantity = "position"
marker = "link1.E"

[[sensors]]
name = "shoulder"
type = "joint"
quantity = "angle"
joint = "shoulder"
"""


def _arm(tmp_path):
    text = (ROOT / "cases" / "arm_beam_seed.toml").read_text().replace(
        "../modal_data/", str(ROOT / "modal_data") + "/") + SENSORS
    path = tmp_path / "arm.toml"
    path.write_text(text)
    return run_case(load_case(path, {"solver.t_end": 0.2, "solver.output_every": 50}))[1]


def test_pvd_export_holds_rigid_bodies_joints_and_sensors(tmp_path):
    res = _arm(tmp_path)
    out = export(res, tmp_path / "arm.pvd")
    files = sorted((tmp_path / "arm_vtu").glob("*.vtu"))
    assert out.exists() and len(files) == len(res.t)
    for k, file in enumerate(files):
        mesh = meshio.read(file)
        part = mesh.point_data["part"]
        assert np.count_nonzero(part == 0) == 21  # the tip beam's nodes
        assert np.count_nonzero(part == 2) == 3  # shoulder, elbow, weld
        rigid = mesh.points[part == 1]
        for sensor in ("hand", "elbow_point"):  # the links' marker points, moving
            nearest = np.min(np.linalg.norm(rigid - res.sensor(sensor)[k], axis=1))
            assert nearest < 1e-12
        np.testing.assert_array_equal(mesh.field_data["sensor.shoulder"],
                                      res.sensor("shoulder")[k])
        assert mesh.field_data["time"][0] == res.t[k]
        assert {"line", "vertex"} <= {block.type for block in mesh.cells}


def test_xdmf_export_moves_the_rigid_points_too(tmp_path):
    res = _arm(tmp_path)
    export(res, tmp_path / "arm.xdmf")
    with meshio.xdmf.TimeSeriesReader(str(tmp_path / "arm.xdmf")) as reader:
        points, _ = reader.read_points_cells()
        for k in range(reader.num_steps):
            t, data, _ = reader.read_data(k)
            assert t == res.t[k]
            moved = points + data["motion"]
            rigid = moved[data["part"] == 1]
            nearest = np.min(np.linalg.norm(rigid - res.sensor("hand")[k], axis=1))
            assert nearest < 1e-12
            np.testing.assert_allclose(data["sensor.shoulder"][0], res.sensor("shoulder")[k])
