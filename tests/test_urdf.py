"""URDF import (flexmbs.cases.urdf_*, docs/urdf.md): links to bodies with their inertials,
joints with the URDF's names, zero pose and axis convention, fixed links merged, visuals,
a flexible link against the Euler–Bernoulli cantilever, the case-file route, and the
errors on bad input. The comparison with Pinocchio on real robots is in
tests/test_urdf_pinocchio.py."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.spatial.transform import Rotation

pytest.importorskip("yourdfpy", reason="URDF import needs the optional extra 'urdf'")

from flexmbs.analysis import joint_coordinates, static_equilibrium
from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.cases.case import CaseError
from flexmbs.cases.urdf_model import load_urdf
from flexmbs.errors import ModelError, ReadError, ValidationError

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "cases" / "urdf" / "two_link_arm.urdf"

INERTIA = '<inertia ixx="{0}" ixy="{3}" ixz="{4}" iyy="{1}" iyz="{5}" izz="{2}"/>'


def inertial(mass, xyz=(0, 0, 0), rpy=(0, 0, 0), moments=(0.01, 0.02, 0.025),
             products=(0, 0, 0)):
    return (f'<inertial><origin xyz="{" ".join(map(str, xyz))}" '
            f'rpy="{" ".join(map(str, rpy))}"/><mass value="{mass}"/>'
            + INERTIA.format(*moments, *products) + "</inertial>")


def joint(name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=(0, 0, 1),
          extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{" ".join(map(str, xyz))}" '
            f'rpy="{" ".join(map(str, rpy))}"/><axis xyz="{" ".join(map(str, axis))}"/>'
            f'{extra}</joint>')


def write(tmp_path, body, name="robot.urdf"):
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<robot name="test">{body}</robot>\n')
    return path


def test_inertial_is_rotated_into_the_link_frame_with_its_centre_of_mass(tmp_path):
    """The inertia tensor given in the axes of the inertial's rpy is R I Rᵀ in the link
    frame (R from scipy's extrinsic x-y-z angles, the URDF convention), about the centre
    of mass at the inertial's xyz; the mass is the URDF's."""
    rpy, xyz = (0.3, -0.7, 1.1), (0.05, -0.02, 0.3)
    moments, products = (0.02, 0.03, 0.04), (0.001, -0.002, 0.0005)
    path = write(tmp_path, '<link name="base"/>'
                 + f'<link name="arm">{inertial(1.7, xyz, rpy, moments, products)}</link>'
                 + joint("j1", "revolute", "base", "arm", xyz=(0, 0, 0.2),
                         extra='<limit lower="-1" upper="2" effort="5" velocity="3"/>'))
    model = load_urdf(path, visuals=False).finalize()
    body = model.bodies["arm"]
    given_tensor = np.array([[moments[0], products[0], products[1]],
                             [products[0], moments[1], products[2]],
                             [products[1], products[2], moments[2]]])
    rot = Rotation.from_euler("xyz", rpy).as_matrix()
    assert body.mass == 1.7
    assert_allclose(body.com, xyz, rtol=0, atol=1e-15)
    assert_allclose(body.inertia, rot @ given_tensor @ rot.T, rtol=1e-12, atol=1e-15)
    assert_allclose(body.q0[:3], (0, 0, 0.2), rtol=0, atol=1e-15)  # the link frame


def test_joints_keep_names_kinds_limits_and_mimic(tmp_path):
    limit = '<limit lower="-0.5" upper="1.5" effort="12" velocity="2.5"/>'
    path = write(tmp_path, '<link name="base"/>'
                 + "".join(f'<link name="l{k}">{inertial(1.0)}</link>' for k in range(3))
                 + joint("hinge", "revolute", "base", "l0", extra=limit)
                 + joint("spin", "continuous", "l0", "l1", xyz=(0.1, 0, 0))
                 + joint("slide", "prismatic", "l1", "l2", axis=(0, 1, 0), extra=limit
                         + '<mimic joint="hinge" multiplier="2" offset="0.1"/>'))
    with pytest.warns(UserWarning, match="mimic joints are not coupled"):
        builder = load_urdf(path, visuals=False)
    model = builder.finalize()
    assert [(j.name, j.kind) for j in model.joints] == [
        ("hinge", "revolute"), ("spin", "revolute"), ("slide", "prismatic")]
    assert builder.urdf.joints == ("hinge", "spin", "slide")
    limits = builder.urdf.limits
    assert (limits["hinge"].lower, limits["hinge"].upper, limits["hinge"].effort,
            limits["hinge"].velocity) == (-0.5, 1.5, 12.0, 2.5)
    assert limits["spin"] is None
    assert builder.urdf.robot.moving_joints[2].mimic == ("hinge", 2.0, 0.1)
    assert model.joints[0].marker_i == "ground.hinge"
    assert model.joints[0].marker_j == "l0.hinge"
    assert {"ground.base", "l0.l0", "l1.l1", "l2.l2"} <= set(model.markers)


AXES = st.tuples(*[st.floats(-1, 1)] * 3).filter(lambda a: np.linalg.norm(a) > 0.2)
ANGLES = st.tuples(*[st.floats(-3, 3)] * 3)


@settings(max_examples=12, deadline=None)
@given(axis=AXES, rpy=ANGLES, xyz=st.tuples(*[st.floats(-0.5, 0.5)] * 3),
       value=st.floats(-3.0, 3.0), prismatic=st.booleans())
def test_joint_coordinate_follows_the_urdf_axis_and_zero_pose(tmp_path_factory, axis, rpy,
                                                              xyz, value, prismatic):
    """For any axis direction and joint frame: assembling the model with the joint at q
    (a joint initial condition, flexmbs's own assembly) puts the child link frame where
    the URDF places it, T = origin · Rot(axis, q) or origin · Trans(axis q), computed
    here with scipy; the joint sensor reads q back."""
    kind = "prismatic" if prismatic else "revolute"
    path = write(tmp_path_factory.mktemp("axis"), '<link name="base"/>'
                 + f'<link name="arm">{inertial(2.0, (0.1, 0.05, 0))}</link>'
                 + joint("j", kind, "base", "arm", xyz, rpy, axis))
    builder = load_urdf(path, visuals=False)
    if prismatic:
        builder.set_initial("j", displacement=value)
    else:
        builder.set_initial("j", angle=value)
    system = System(builder.finalize())
    from flexmbs.assembly.initial import initial_state

    q, qd = initial_state(system)
    unit = np.asarray(axis) / np.linalg.norm(axis)
    frame = Rotation.from_euler("xyz", rpy).as_matrix()
    if prismatic:
        rot, pos = frame, np.asarray(xyz) + frame @ unit * value
    else:
        rot = frame @ Rotation.from_rotvec(unit * value).as_matrix()
        pos = np.asarray(xyz)
    from flexmbs.frame.rotations import rotation_matrix

    assert_allclose(q[:3], pos, rtol=0, atol=1e-9)
    assert_allclose(rotation_matrix(q[3:7]), rot, rtol=0, atol=1e-9)
    s = joint_coordinates(system, ["j"], q, qd)[0][0]
    assert s == pytest.approx(value, abs=1e-9)


def _two_bodies(tmp_path, merge):
    """A link carrying a massive link on a fixed joint (offset and turned)."""
    path = write(tmp_path, '<link name="base"/>'
                 + f'<link name="arm">{inertial(2.0, (0.2, 0, 0), moments=(0.01, 0.03, 0.03))}'
                 + '</link>'
                 + f'<link name="tool">{inertial(0.5, (0, 0.05, 0), (0.2, 0, 0.4))}</link>'
                 + joint("hinge", "revolute", "base", "arm", axis=(0, 1, 0))
                 + joint("mount", "fixed", "arm", "tool", (0.4, 0.0, 0.1), (0.0, 0.5, 0.0)))
    return load_urdf(path, visuals=False, merge_fixed=merge)


def test_a_link_on_a_fixed_joint_merges_into_its_parent(tmp_path):
    """Merged: one body with the summed mass, the combined centre of mass and the
    parallel-axis inertia (computed here by hand); kept apart (merge_fixed=False): two
    bodies and a fixed joint named after the URDF's. Both give the same hinge
    acceleration under gravity."""
    merged = _two_bodies(tmp_path, True)
    model = merged.finalize()
    assert list(model.bodies) == ["ground", "arm"]
    arm = model.bodies["arm"]
    rot = Rotation.from_euler("xyz", (0.0, 0.5, 0.0)).as_matrix()
    c1, c2 = np.array([0.2, 0, 0]), np.array([0.4, 0, 0.1]) + rot @ np.array([0, 0.05, 0])
    com = (2.0 * c1 + 0.5 * c2) / 2.5
    i1 = np.diag([0.01, 0.03, 0.03])
    i2 = rot @ Rotation.from_euler("xyz", (0.2, 0, 0.4)).as_matrix() @ np.diag(
        [0.01, 0.02, 0.025]) @ Rotation.from_euler("xyz", (0.2, 0, 0.4)).as_matrix().T @ rot.T

    def shift(m, d):
        return m * (d @ d * np.eye(3) - np.outer(d, d))

    assert arm.mass == pytest.approx(2.5, rel=1e-15)
    assert_allclose(arm.com, com, rtol=1e-14, atol=1e-15)
    assert_allclose(arm.inertia, i1 + shift(2.0, c1 - com) + i2 + shift(0.5, c2 - com),
                    rtol=1e-12, atol=1e-15)
    assert "arm.tool" in model.markers
    kept = _two_bodies(tmp_path, False).finalize()
    assert list(kept.bodies) == ["ground", "arm", "tool"]
    assert [(j.name, j.kind) for j in kept.joints] == [("hinge", "revolute"),
                                                        ("mount", "fixed")]
    from flexmbs.analysis import joint_accelerations

    values = []
    for builder in (merged, _two_bodies(tmp_path, False)):
        system = System(builder.finalize())
        q, qd = builder.urdf.state(system, {"hinge": 0.7}, {"hinge": -1.3})
        values.append(joint_accelerations(system, ["hinge"], q, qd)[0])
    assert values[1] == pytest.approx(values[0], rel=1e-10)


def test_floating_base_frees_the_root_link(tmp_path):
    path = write(tmp_path, f'<link name="torso">{inertial(5.0)}</link>'
                 + f'<link name="arm">{inertial(1.0)}</link>'
                 + joint("hinge", "revolute", "torso", "arm", (0.2, 0, 0)))
    model = load_urdf(path, base="floating", visuals=False).finalize()
    system = System(model)
    assert list(model.bodies) == ["ground", "torso", "arm"]
    assert system.check().dof == 7


@pytest.mark.parametrize(("body", "match"), [
    ('<link name="base"/><link name="arm"/>' + joint("j", "revolute", "base", "arm"),
     r"link 'arm' on joint 'j' has no mass"),
    ('<link name="base"/><link name="arm"/>' + joint("j", "floating", "base", "arm"),
     r"joint 'j': type 'floating' is not supported"),
    ('<link name="a"/><link name="b"/>', r"exactly one root link"),
    ('<link name="base"/>' + joint("j", "revolute", "base", "ghost"),
     r"child link 'ghost' is not a link"),
    ('<link name="base"/><link name="arm">' + inertial(-1.0) + "</link>"
     + joint("j", "revolute", "base", "arm"), r"inertial mass must be positive"),
    ('<link name="base"/><link name="arm">' + inertial(1.0) + "</link>"
     + joint("j", "revolute", "base", "arm", axis=(0, 0, 0)), r"axis must be a non-zero"),
])
def test_bad_robots_name_the_link_or_joint(tmp_path, body, match):
    with pytest.raises(ModelError, match=match):
        load_urdf(write(tmp_path, body), visuals=False)


def test_bad_files_and_arguments_are_named(tmp_path):
    with pytest.raises(ReadError, match="not found"):
        load_urdf(tmp_path / "none.urdf")
    (tmp_path / "broken.urdf").write_text("<robot><link name='a'></robot>")
    with pytest.raises(ReadError, match=r"broken\.urdf is not valid XML"):
        load_urdf(tmp_path / "broken.urdf")
    (tmp_path / "arm.xacro").write_text("<robot/>")
    with pytest.raises(ReadError, match="xacro file"):
        load_urdf(tmp_path / "arm.xacro")
    (tmp_path / "sdf.urdf").write_text("<sdf version='1.6'/>")
    with pytest.raises(ReadError, match="root element is <sdf>, expected <robot>"):
        load_urdf(tmp_path / "sdf.urdf")
    with pytest.raises(ValidationError, match="base must be 'fixed' or 'floating'"):
        load_urdf(ARM, base="mobile", visuals=False)
    with pytest.raises(ValidationError, match=r"\['wrist'\] are not links"):
        load_urdf(ARM, flexible={"wrist": {}}, visuals=False)
    with pytest.raises(ValidationError, match=r"flexible link 'forearm'.*missing"):
        load_urdf(ARM, flexible={"forearm": {"modes": 2}}, visuals=False)


def test_missing_yourdfpy_names_the_extra(monkeypatch, capsys):
    """The API raises ImportError, a case file a CaseError (exit code 2 from flexmbs run,
    no traceback), both naming the extra."""
    import sys

    from flexmbs.cli.main import main

    monkeypatch.setitem(sys.modules, "yourdfpy", None)
    with pytest.raises(ImportError, match=r"flexmbs\[urdf\]"):
        load_urdf(ARM)
    with pytest.raises(CaseError, match=r"urdf_arm.toml: \[model\] urdf: .*flexmbs\[urdf\]"):
        load_case(ROOT / "cases" / "urdf_arm.toml")
    assert main(["run", str(ROOT / "cases" / "urdf_arm.toml"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'flexmbs[urdf]'" in err and "Traceback" not in err


def test_visuals_draw_the_links_in_the_body_frame(tmp_path):
    """Primitives and an STL mesh (scaled, placed by the visual origin) become the
    body's surface; a missing mesh is left out with a warning, the import goes on."""
    import meshio

    points = np.array([[0, 0, 0], [1000, 0, 0], [0, 1000, 0], [0, 0, 1000.0]])
    meshio.write_points_cells(tmp_path / "tet.stl", points,
                              [("triangle", np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3],
                                                      [1, 2, 3]]))])
    visuals = ('<visual><origin xyz="0.5 0 0"/><geometry><mesh filename="tet.stl" '
               'scale="0.001 0.001 0.001"/></geometry></visual>'
               '<visual><origin xyz="0 0 -1"/><geometry><box size="0.2 0.4 0.6"/>'
               '</geometry></visual>'
               '<visual><geometry><mesh filename="package://nowhere/meshes/gone.dae"/>'
               '</geometry></visual>')
    path = write(tmp_path, '<link name="base"/>'
                 + f'<link name="arm">{inertial(1.0)}{visuals}</link>'
                 + joint("j", "revolute", "base", "arm", (0, 0, 2)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        builder = load_urdf(path)
    assert any("gone.dae" in str(w.message) for w in caught)
    assert builder.urdf.skipped_visuals == (
        "arm: mesh 'package://nowhere/meshes/gone.dae' not found",)
    shape = builder.finalize().bodies["arm"].shape
    assert_allclose(shape.bounds, [[-0.1, -0.2, -1.3], [1.5, 1.0, 1.0]], rtol=0,
                    atol=1e-12)


SECTION = {"kind": "box", "width": 0.03, "height": 0.015, "wall": 0.002}


def _flexible_arm(gravity, modes):
    builder = load_urdf(ARM, gravity=gravity, visuals=False,
                        flexible={"forearm": {"section": SECTION, "modes": modes,
                                              "material": "aluminium"}})
    for name, parent in (("shoulder", "ground"), ("elbow", "upper_arm")):
        child = "upper_arm" if name == "shoulder" else "forearm"
        builder.add_drive(f"hold_{name}", "rotation", 0.0, marker_i=f"{parent}.{name}",
                          marker_j=f"{child}.{name}")
    return System(builder.finalize())


def _box_section():
    b, h, t = SECTION["width"], SECTION["height"], SECTION["wall"]
    area = b * h - (b - 2 * t) * (h - 2 * t)
    i_vertical = (b * h**3 - (b - 2 * t) * (h - 2 * t) ** 3) / 12  # bending under gravity
    i_lateral = (h * b**3 - (h - 2 * t) * (b - 2 * t) ** 3) / 12
    return area, i_vertical, i_lateral


def test_flexible_forearm_sags_and_vibrates_as_the_cantilever_formulas():
    """The forearm of cases/urdf/two_link_arm.urdf as an aluminium box beam built along
    the link (elbow to tool frame, 0.5 m), joints held: its mass is ρ A L, the static sag
    of the tool frame below the elbow is w L⁴ / (8 E I) (10 modes: 4e-5 from modal
    truncation), and its first two frequencies are the clamped Euler–Bernoulli
    1.8751² √(E I / (ρ A L⁴)) / 2π in the vertical and lateral planes (40 elements)."""
    from flexmbs.analysis import eigenmodes, linearize
    from flexmbs.elements.marker_pairs import marker_state
    from flexmbs.modal.fe.beam import Material

    mat, length = Material.aluminium(), 0.5
    area, i_v, i_l = _box_section()
    system = _flexible_arm((0.0, 0.0, -9.81), 10)
    forearm = system.model.bodies["forearm"]
    assert forearm.data.total_mass == pytest.approx(mat.rho * area * length, rel=1e-12)
    eq = static_equilibrium(system)
    zero = np.zeros(system.n_q)
    tip = marker_state(system, "forearm.tool", eq.q, zero)[3]
    root = marker_state(system, "forearm.elbow", eq.q, zero)[3]
    sag = mat.rho * area * 9.81 * length**4 / (8 * mat.E * i_v)
    assert root[2] - tip[2] == pytest.approx(sag, rel=1e-4)
    system = _flexible_arm((0.0, 0.0, 0.0), 4)
    modes = [m for m in eigenmodes(linearize(system, system.assemble())) if not m.rigid]
    factor = 1.8751040687119611**2 / (2 * np.pi) / length**2
    expected = [factor * np.sqrt(mat.E * i / (mat.rho * area)) for i in (i_v, i_l)]
    assert [m.frequency_hz for m in modes[:2]] == pytest.approx(expected, rel=1e-7)


def test_case_file_with_a_urdf_robot(tmp_path):
    """cases/urdf_arm.toml: the URDF's joints, markers and sensors by their names, the
    forearm flexible, the elbow initial condition assembled: the tool frame sits at the
    two-link forward kinematics (0.3 + 0.5 cos 30°, 0.5 sin 30°, 0.1); a short run."""
    from flexmbs.assembly.initial import initial_state
    from flexmbs.cases import run_case
    from flexmbs.elements.marker_pairs import marker_state

    case = load_case(ROOT / "cases" / "urdf_arm.toml")
    assert ARM.resolve() in case.inputs
    system = System(case.model)
    assert system.check().dof == 6  # 2 joints + 4 modes
    q, qd = initial_state(system)
    tool = marker_state(system, "forearm.tool", q, qd)[3]
    assert_allclose(tool, [0.3 + 0.5 * np.cos(np.pi / 6), 0.5 * np.sin(np.pi / 6), 0.1],
                    rtol=0, atol=1e-12)
    case.solver = case.solver.replace(t_end=0.02)
    case.output = tmp_path / "arm.res.h5"
    _, result = run_case(case)
    assert result.success
    assert result.sensor("elbow_angle")[0, 0] == pytest.approx(np.pi / 6, abs=1e-12)


@pytest.mark.parametrize(("model", "match"), [
    ({"urdf": "urdf/two_link_arm.urdf", "base": "wheeled"}, r"'base' must be 'fixed'"),
    ({"urdf": "urdf/two_link_arm.urdf", "flexible": {"wrist": {"beam": {}}}},
     r"'wrist' is not a link of two_link_arm.urdf"),
    ({"urdf": "urdf/two_link_arm.urdf", "flexible": {"forearm": {}}},
     r"\[model.flexible.forearm\] must give one of 'beam' or 'modal_data'"),
    ({"urdf": "urdf/two_link_arm.urdf", "flexible": {"forearm": {"beam": {"modes": 2}}}},
     r"\[model.flexible.forearm\]: key 'beam' flexible link 'forearm'.*missing"),
    ({"urdf": "urdf/missing.urdf"}, r"missing.urdf' not found"),
    ({"urdf": "urdf/two_link_arm.urdf", "visuals": "yes"}, r"'visuals' must be true"),
    ({"urdf": "urdf/two_link_arm.urdf", "base_link": "x"}, r"unknown key\(s\) \['base_link'\]"),
])
def test_case_file_urdf_errors_name_the_key(tmp_path, model, match):
    import shutil

    (tmp_path / "urdf").mkdir()
    shutil.copy(ARM, tmp_path / "urdf" / ARM.name)
    lines = ["[model]"]
    lines += [f"{k} = {v!r}".replace("'", '"') for k, v in model.items()
              if not isinstance(v, dict)]
    for link, entry in model.get("flexible", {}).items():
        lines.append(f"[model.flexible.{link}]")
        lines += [f"{k} = {_toml(v)}" for k, v in entry.items()]
    lines += ["[solver]", "h = 0.001", "t_end = 0.01"]
    (tmp_path / "case.toml").write_text("\n".join(lines) + "\n")
    with pytest.raises((CaseError, ReadError), match=match):
        load_case(tmp_path / "case.toml")


def _toml(value):
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return repr(value).replace("'", '"')


def test_docs_page_examples_run(capsys, monkeypatch):
    """docs/urdf.md: the flexible forearm's mass and sag as the page's hand calculation
    (ρ A L = 0.2214 kg, w L⁴ / (8 E I) = 0.0873 mm); the UR5 holding torques equal
    Pinocchio's gravity torques (when pin and example-robot-data are installed)."""
    import re

    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "urdf.md").read_text(),
                        flags=re.S)
    assert len(blocks) == 2
    exec(compile(blocks[0], "urdf.md", "exec"), {})
    assert "forearm 0.2214 kg, tool frame 0.0873 mm below the elbow" in \
        capsys.readouterr().out
    pin = pytest.importorskip("pinocchio")
    from importlib import metadata

    try:
        metadata.files("example-robot-data")
    except metadata.PackageNotFoundError:
        pytest.skip("the UR5 example needs the pip package example-robot-data")
    namespace: dict = {}
    exec(compile(blocks[1], "urdf.md", "exec"), namespace)
    assert " -38.833 -15.337 0.035 " in capsys.readouterr().out
    pm = pin.buildModelFromUrdf(str(namespace["ur5"]))
    gravity = pin.computeGeneralizedGravity(pm, pm.createData(),
                                            np.array([0.0, -1.0, 1.2, 0.0, 0.5, 0.0]))
    assert_allclose(namespace["holding"], gravity, rtol=1e-12, atol=1e-12)


def test_a_flexible_links_modal_file_goes_through_the_cases_reader(tmp_path):
    """A flexible link given by ``modal_data`` is read by the reader the case loads with
    (``load_case(..., reader=)``: gradients keep one read per file over the models at
    p ± δ), once per load, and gives the link the file's data."""
    import shutil

    import flexmbs as fm

    shipped = load_case(ROOT / "cases" / "urdf_arm.toml")
    forearm = shipped.model.bodies["forearm"]
    fm.write_modal(forearm.data, tmp_path / "forearm.fmd.h5")
    shutil.copytree(ROOT / "cases" / "urdf", tmp_path / "urdf")
    text = (ROOT / "cases" / "urdf_arm.toml").read_text()
    start = text.index("beam = {")
    text = text[:start] + 'modal_data = "forearm.fmd.h5"' + text[text.index("\n", start):]
    (tmp_path / "arm.toml").write_text(text)
    reads = []

    def reader(file, **options):
        reads.append(Path(file).name)
        return fm.read_modal(file, **options)

    case = load_case(tmp_path / "arm.toml", reader=reader)
    assert reads == ["forearm.fmd.h5"]
    data = case.model.bodies["forearm"].data
    assert_allclose(data.K_ff, forearm.data.K_ff, rtol=1e-14)


def test_mimic_joints_are_said_to_be_uncoupled_and_their_targets_checked(tmp_path):
    """A <mimic> was dropped silently (the model one DOF more than the robot, no word);
    now it is a ModelWarning naming the relation, and a mimic of a joint the robot does
    not have is refused."""
    from flexmbs.errors import ModelWarning

    def robot(target):
        link = inertial(1.0, (0.15, 0, 0), (0, 0, 0), (0.001, 0.01, 0.01), (0, 0, 0))
        return ('<link name="base"/>' + f'<link name="l1">{link}</link>'
                + f'<link name="l2">{link}</link>'
                + joint("j1", "revolute", "base", "l1", (0, 0, 0), (0, 0, 0), (0, 1, 0),
                        extra='<limit lower="-3" upper="3" effort="5" velocity="2"/>')
                + joint("j2", "revolute", "l1", "l2", (0.3, 0, 0), (0, 0, 0), (0, 1, 0),
                        extra='<limit lower="-3" upper="3" effort="5" velocity="2"/>'
                              f'<mimic joint="{target}" multiplier="2" offset="0.1"/>'))

    with pytest.warns(ModelWarning, match=r"1 degree\(s\) of freedom more than the robot "
                                          r"\('j2' = 2 × 'j1' \+0\.1\)"):
        load_urdf(write(tmp_path, robot("j1")))
    with pytest.raises(ModelError, match=r"joint 'j2': mimics joint 'nosuch'"):
        load_urdf(write(tmp_path, robot("nosuch"), name="missing.urdf"))
