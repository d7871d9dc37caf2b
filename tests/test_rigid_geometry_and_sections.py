"""Report-quality drawing of bodies: rigid bodies with their own geometry read from
STL/OBJ files (flexmbs.model.shapes), carried by the results file, drawn and exported
moving with the body; beams drawn as swept sections (flexmbs.post.sections).

The moving geometry is checked against the model's own marker kinematics (a vertex placed
on a marker follows that marker's sensor); the sweep against the section's definition
(corner offsets, planes normal to the centreline) and its invariance under rotations."""

from __future__ import annotations

from pathlib import Path

import meshio
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case, run_case
from flexmbs.errors import FlexmbsError, ValidationError
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.section_tables import section_outline
from flexmbs.model.shapes import read_shape
from flexmbs.post.export import export
from flexmbs.post.sections import corner_nodes, node_tangents, prism_faces, swept_points
from flexmbs.results import load_result

ROOT = Path(__file__).resolve().parents[1]

#: A diamond along body x from the origin to (400, 0, 0) mm: 6 points, 8 triangles.
DIAMOND_MM = np.array([[0, 0, 0], [400, 0, 0], [200, 10, 0], [200, -10, 0],
                       [200, 0, 10], [200, 0, -10]], dtype=float)
DIAMOND_TRIS = np.array([[0, 2, 4], [0, 4, 3], [0, 3, 5], [0, 5, 2],
                         [1, 4, 2], [1, 3, 4], [1, 5, 3], [1, 2, 5]])

SENSOR = """
[[sensors]]
name = "elbow_point"
type = "marker"
quantity = "position"
marker = "link1.E"
"""


def _write_diamond(path: Path) -> Path:
    meshio.write(path, meshio.Mesh(DIAMOND_MM, [("triangle", DIAMOND_TRIS)]))
    return path


def test_read_shape_scales_turns_and_shifts_the_file_points(tmp_path):
    stl = _write_diamond(tmp_path / "diamond.stl")
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    shape = read_shape(stl, scale=1e-3, offset=(0.1, 0.2, 0.3), rotation=rot)
    assert shape.triangles.shape == (8, 3)
    expected = 0.001 * DIAMOND_MM @ rot.T + [0.1, 0.2, 0.3]
    # the same points (a file reader may reorder them): match each to its nearest
    dist = np.linalg.norm(shape.points[:, None] - expected[None], axis=2)
    assert np.max(np.min(dist, axis=1)) < 1e-9 and np.max(np.min(dist, axis=0)) < 1e-9
    # every triangle keeps its area (a rigid motion and a uniform scale)
    def areas(p, t):
        return 0.5 * np.linalg.norm(np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]]),
                                    axis=1)
    np.testing.assert_allclose(np.sort(areas(shape.points, shape.triangles)),
                               np.sort(areas(1e-3 * DIAMOND_MM, DIAMOND_TRIS)), rtol=1e-6)


def test_quads_of_an_obj_file_are_split_into_triangles(tmp_path):
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [2, 1, 0.0]])
    path = tmp_path / "plate.obj"
    meshio.write(path, meshio.Mesh(square, [("quad", np.array([[0, 1, 2, 3], [1, 4, 5, 2]]))]))
    shape = read_shape(path)
    assert shape.triangles.shape == (4, 3)
    p, t = shape.points, shape.triangles
    area = 0.5 * np.linalg.norm(np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]]),
                                axis=1).sum()
    assert area == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    ({"scale": -1.0}, "scale must be a positive number, got -1.0"),
    ({"offset": (0, 0)}, "offset must be 3 finite numbers"),
    ({"rotation": np.diag([1.0, 1.0, -1.0])}, "rotation must be a proper 3x3 rotation"),
])
def test_bad_geometry_options_are_named(tmp_path, kwargs, message):
    stl = _write_diamond(tmp_path / "d.stl")
    with pytest.raises(ValidationError, match=message):
        read_shape(stl, what="link1.geometry", **kwargs)


def test_geometry_files_that_are_missing_unreadable_or_without_surfaces(tmp_path):
    with pytest.raises(ValidationError, match=r"link1.geometry: file .*nothing.stl' not found"):
        read_shape(tmp_path / "nothing.stl", what="link1.geometry")
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"\x00\x01 not a mesh")
    with pytest.raises(ValidationError, match=r"could not read .*bad.stl' as a mesh"):
        read_shape(bad)
    lines = tmp_path / "lines.vtu"
    meshio.write(lines, meshio.Mesh(np.eye(3), [("line", np.array([[0, 1], [1, 2]]))]))
    with pytest.raises(ValidationError, match=r"has no surface cells .* it has line"):
        read_shape(lines)


def _arm_with_geometry(tmp_path, geometry: str):
    _write_diamond(tmp_path / "link1.stl")
    text = (ROOT / "cases" / "arm_beam_seed.toml").read_text().replace(
        "../modal_data/", str(ROOT / "modal_data") + "/")
    text = text.replace('name = "link1"\ntype = "rigid"\n',
                        f'name = "link1"\ntype = "rigid"\ngeometry = {geometry}\n', 1)
    path = tmp_path / "arm.toml"
    path.write_text(text + SENSOR)
    return path


def test_a_case_reads_a_rigid_body_geometry_and_the_results_carry_it(tmp_path):
    path = _arm_with_geometry(tmp_path, '{ file = "link1.stl", scale = 0.001 }')
    res = run_case(load_case(path, {"solver.t_end": 0.2, "solver.output_every": 50}))[1]
    res.save(tmp_path / "arm.res.h5")
    back = load_result(tmp_path / "arm.res.h5")
    info = back.bodies["link1"]
    assert info["shape_points"].shape == (6, 3) and info["shape_triangles"].shape == (8, 3)
    np.testing.assert_array_equal(info["shape_points"], res.bodies["link1"]["shape_points"])
    assert "shape_points" not in back.bodies["link2"]

    out = export(back, tmp_path / "arm.pvd")
    files = sorted((tmp_path / "arm_vtu").glob("*.vtu"))
    assert out.exists() and len(files) == len(back.t)
    for k, file in enumerate(files):
        mesh = meshio.read(file)
        tris = np.vstack([b.data for b in mesh.cells if b.type == "triangle"])
        assert len(tris) == 8
        drawn = mesh.points[np.unique(tris)]
        # the diamond's tip vertex sits on marker link1.E: it moves with the sensor,
        # which the model computes from its own marker kinematics
        nearest = np.min(np.linalg.norm(drawn - back.sensor("elbow_point")[k], axis=1))
        assert nearest < 1e-12, (k, nearest)


def test_the_geometry_is_drawn_in_renders(tmp_path):
    pytest.importorskip("pyvista")
    from flexmbs.post.animate import ResultAnimation

    path = _arm_with_geometry(tmp_path, '{ file = "link1.stl", scale = 0.001 }')
    res = run_case(load_case(path, {"solver.t_end": 0.1, "solver.output_every": 50}))[1]
    anim = ResultAnimation(res, frames=2, window_size=(400, 300))
    try:
        mesh = anim.scene.meshes["rigid-shape:link1"]
        assert mesh.n_cells == 8 and "rigid-link:link1" not in anim.scene.meshes
        k = anim.info.indices[-1]
        anim.image(k)
        assert np.min(np.linalg.norm(mesh.points - res.sensor("elbow_point")[k], axis=1)) \
            < 1e-12
    finally:
        anim.close()


@pytest.mark.parametrize("entry, message", [
    ('"missing.stl"', r"missing.stl' not found"),
    ('{ file = "link1.stl", scale = -2 }', "scale"),
    ('{ file = "link1.stl", units = "mm" }', "units"),
    ("3", "must be a mesh file name or a table"),
])
def test_bad_geometry_entries_in_a_case_are_named(tmp_path, entry, message):
    path = _arm_with_geometry(tmp_path, entry)
    with pytest.raises(FlexmbsError, match=message) as info:
        load_case(path)
    assert "link1" in str(info.value)


def test_the_outline_of_a_rectangular_section_is_the_rectangle():
    fe = straight_beam(0.5, 4, BeamSection.rectangle(0.006, 0.02), Material.steel(),
                       axis=(0, 1, 0), up=(1, 0, 0))
    outline = section_outline({"source": fe.metadata})
    assert outline["width_y"] == pytest.approx(0.006, rel=1e-12)
    assert outline["height_z"] == pytest.approx(0.02, rel=1e-12)
    np.testing.assert_allclose(outline["z_axis"], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(np.cross(outline["y_axis"], outline["z_axis"]), [0, 1, 0],
                               atol=1e-15)  # y × z = the beam's axis
    assert section_outline({"source": {"generator": "someone else"}}) is None


def test_the_steel_arm_results_carry_the_beam_section(tmp_path):
    res = run_case(load_case(ROOT / "cases" / "arm_beam_steel.toml",
                             {"solver.t_end": 0.002}))[1]
    np.testing.assert_allclose(res.bodies["beam"]["section_size"], [0.006, 0.02])


rotations = st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3).map(
    lambda v: _rotation(np.asarray(v)))


def _rotation(v):
    angle = np.linalg.norm(v)
    if angle < 1e-12:
        return np.eye(3)
    k = v / angle
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


@settings(max_examples=60, deadline=None)
@given(rot=rotations, width=st.floats(1e-3, 0.1), height=st.floats(1e-3, 0.1),
       bend=st.floats(-0.3, 0.3))
def test_the_swept_section_is_the_outline_normal_to_the_centreline(rot, width, height, bend):
    s = np.linspace(0.0, 1.0, 9)
    centre = np.column_stack([s, np.zeros_like(s), bend * s**2])  # bent in the x–z plane
    lines = np.column_stack([np.arange(8), np.arange(1, 9)])
    corners = swept_points(centre @ rot.T, lines, (width, height), rot @ [0, 0, 1.0])
    assert corners.shape == (64, 3)
    nodes = corner_nodes(lines)
    tangent = node_tangents(centre @ rot.T, lines)
    for e in range(8):
        quad = corners[8 * e:8 * e + 8].reshape(2, 4, 3)
        for end in range(2):
            node = nodes[8 * e + 4 * end]
            c = quad[end]
            # a width x height rectangle centred on the node, in the plane normal to the
            # centreline's tangent there
            np.testing.assert_allclose(c.mean(axis=0), centre[node] @ rot.T, atol=1e-12)
            np.testing.assert_allclose(np.linalg.norm(c[1] - c[0]), width, rtol=1e-9)
            np.testing.assert_allclose(np.linalg.norm(c[3] - c[0]), height, rtol=1e-9)
            np.testing.assert_allclose((c - c.mean(axis=0)) @ tangent[node], 0, atol=1e-12)
    # drawn the same in any orientation: rotating the input rotates the corners
    plain = swept_points(centre, lines, (width, height), [0, 0, 1.0])
    np.testing.assert_allclose(corners, plain @ rot.T, atol=1e-12)


def test_prism_faces_close_every_element():
    faces = prism_faces(3).reshape(-1, 5)
    assert np.all(faces[:, 0] == 4) and len(faces) == 18
    # each prism's 12 edges are each shared by exactly two of its quads: a closed surface
    for e in range(3):
        edges = {}
        for quad in faces[6 * e:6 * e + 6, 1:]:
            for a, b in zip(quad, np.roll(quad, -1), strict=True):
                key = (min(a, b), max(a, b))
                edges[key] = edges.get(key, 0) + 1
        assert len(edges) == 12 and set(edges.values()) == {2}


def test_a_case_geometry_turned_by_axis_and_angle(tmp_path):
    """``geometry = {..., axis, angle_deg}``: the file's points turned by that rotation
    (it was refused for any angle: the Euler parameters reached the reader, which wants
    the 3 × 3 matrix). A quarter turn about z takes the file's x to the body's y."""
    runs = {}
    for name, geometry in (("plain", '{ file = "link1.stl", scale = 0.001 }'),
                           ("turned", '{ file = "link1.stl", scale = 0.001, '
                                      'axis = [0, 0, 1], angle_deg = 90 }')):
        path = _arm_with_geometry(tmp_path, geometry)
        runs[name] = run_case(load_case(path, {"solver.t_end": 0.001}))[1]
    points = runs["plain"].bodies["link1"]["shape_points"]
    quarter = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(runs["turned"].bodies["link1"]["shape_points"],
                               points @ quarter.T, atol=1e-15)
