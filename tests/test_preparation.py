"""Preparing an FE model before reduction: K/M scaling, point masses with rotary inertia,
geometric node sets (API, CLI, case-file markers), checked against independent references:
the frequency scaling law, the Euler–Bernoulli cantilever with a tip body, brute-force
predicates and nearest-node searches."""

import itertools
import json
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from flexmbs.cases.loader import CaseError, load_case, run_case
from flexmbs.cli.main import main
from flexmbs.errors import ModelError, ValidationError
from flexmbs.modal import (
    PointMass,
    add_point_masses,
    clamped_modes,
    free_free_modes,
    prepare,
    read_modal,
    scale,
    select_nodes,
    with_node_sets,
    write_modal,
)
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.node_selection import (
    nearest_nodes,
    nodes_in_box,
    nodes_in_cylinder,
    nodes_in_plane,
    parse_spec,
)

SECTION = BeamSection.rectangle(0.02, 0.01)  # Iy (x–z bending) is the weaker axis
STEEL = Material.steel()


def _box(nx=3, ny=2, nz=2):
    """A stubby aluminium block: its eigenproblem is well conditioned, so the dense
    solver resolves every frequency to ~1e-14 (a slender beam's axial/bending stiffness
    ratio leaves ~1e-10 on its lowest modes)."""
    return box_mesh(0.12, 0.05, 0.04, nx, ny, nz, E=70e9, nu=0.3, rho=2700.0)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ---------------------------------------------------------------------- scaling
def test_stiffness_scale_of_one_hundredth_divides_every_frequency_by_ten():
    fe = _box()
    ref = free_free_modes(fe, 12).frequencies
    soft = free_free_modes(scale(fe, stiffness=0.01), 12).frequencies
    np.testing.assert_allclose(soft, ref / 10.0, rtol=1e-12, atol=0)
    clamped = with_node_sets(fe, {"root": "plane:x=0"})
    ref = clamped_modes(clamped, "root", 12).frequencies
    soft = clamped_modes(scale(clamped, stiffness=0.01), "root", 12).frequencies
    np.testing.assert_allclose(soft, ref / 10.0, rtol=1e-12, atol=0)


@settings(max_examples=8, deadline=None)
@given(st.floats(1e-3, 1e3), st.floats(1e-3, 1e3))
def test_frequencies_scale_with_the_square_root_of_the_factor_ratio(s_k, s_m):
    fe = _box(2, 2, 2)
    ref = free_free_modes(fe, 8).frequencies
    out = scale(fe, stiffness=s_k, mass=s_m)  # implausible densities warn: silenced
    np.testing.assert_allclose(_quiet(free_free_modes, out, 8).frequencies,
                               ref * np.sqrt(s_k / s_m), rtol=1e-12, atol=0)
    assert out.metadata["preparation"][-1] == {"step": "scale", "stiffness": s_k,
                                               "mass": s_m}


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "2", True])
def test_bad_scale_factors_are_refused(bad):
    with pytest.raises(ValidationError, match="stiffness factor"):
        scale(_box(), stiffness=bad)
    with pytest.raises(ValidationError, match="mass factor"):
        scale(_box(), mass=bad)


# ---------------------------------------------------------------------- point masses
def _tip_body_determinant(beta_l, mu, j_n):
    """Frequency determinant of a clamped–free Euler–Bernoulli beam with a rigid tip body
    of mass μ ρAL and rotary inertia j_n ρAL³ (w = A(ch − c) + B(sh − s); tip conditions
    EI w'' = ω² J w', EI w''' = −ω² M w), divided by cosh² βL. For j_n = 0 it is
    2 (1 + cos cosh + μ βL (cos sinh − sin cosh)) / cosh²."""
    ch, c, sh, s = np.cosh(beta_l), np.cos(beta_l), np.sinh(beta_l), np.sin(beta_l)
    j = j_n * beta_l**3
    a11, a12 = (ch + c) - j * (sh + s), (sh + s) - j * (ch - c)
    a21, a22 = (sh - s) + mu * beta_l * (ch - c), (ch + c) + mu * beta_l * (sh - s)
    return (a11 * a22 - a12 * a21) / np.cosh(beta_l) ** 2


def _tip_mass_equation(beta_l, mu):
    """The classic tip-mass frequency equation (no rotary inertia)."""
    ch, c, sh, s = np.cosh(beta_l), np.cos(beta_l), np.sinh(beta_l), np.sin(beta_l)
    return 1 + c * ch + mu * beta_l * (c * sh - s * ch)


def _first_root(fn, *args):
    grid = np.linspace(1e-3, 1.9, 4000)  # the bare cantilever's first root is 1.8751
    vals = np.array([fn(b, *args) for b in grid])
    k = np.flatnonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))[0]
    return brentq(fn, grid[k], grid[k + 1], args=args, xtol=1e-15, rtol=1e-15)


def _exact_f1(beta_l, length=1.0):
    rho_a, ei = STEEL.rho * SECTION.A, STEEL.E * SECTION.Iy
    return (beta_l / length) ** 2 * np.sqrt(ei / rho_a) / (2 * np.pi)


@pytest.mark.parametrize("m_tip", [0.05, 0.5, 3.0])
def test_tip_mass_cantilever_converges_to_the_euler_bernoulli_solution(m_tip):
    """Light tip masses: the O(h⁴) convergence of the Hermite element. A heavy one (3 kg,
    19x the beam) makes the first mode nearly the cubic static deflection, which the
    element holds exactly: every mesh is then within 1e-6, down to the eigen solver's
    round-off (~1e-9) at 20 and 40 elements, where a falling error cannot be asked."""
    length = 1.0
    mu = m_tip / (STEEL.rho * SECTION.A * length)
    exact = _exact_f1(_first_root(_tip_mass_equation, mu), length)
    bare = _exact_f1(_first_root(_tip_mass_equation, 0.0), length)
    assert exact < bare * (1 - 0.01)  # the tip mass matters at the tested level
    errors = []
    meshes = (5, 10, 20, 40)
    for n in meshes:
        fe = add_point_masses(straight_beam(length, n, SECTION, STEEL), [("tip", m_tip)])
        f1 = _quiet(clamped_modes, fe, "root", 2).frequencies[0]
        errors.append(abs(f1 / exact - 1))
    print(f"m_tip {m_tip} kg: f1 exact {exact:.10g} Hz, relative error per mesh "
          + ", ".join(f"{n}: {e:.2e}" for n, e in zip(meshes, errors, strict=True)))
    assert errors[-1] < 1e-5
    if m_tip > 1.0:
        assert max(errors) < 1e-6
        return
    assert all(b < a for a, b in itertools.pairwise(errors))
    orders = np.log2(np.array(errors[:-2]) / np.array(errors[1:-1]))
    np.testing.assert_allclose(orders, 4.0, atol=0.3)  # cubic Hermite: eigenvalues O(h⁴)


def test_tip_rotary_inertia_matches_the_exact_frequency_equation():
    """A rigid tip body with mass and rotary inertias J_yy, J_zz about the node against
    the clamped–free beam with both tip conditions, in each bending plane: x–z (EI_y,
    rotation r_y, J_yy; the first mode) and x–y (EI_z, r_z, J_zz; the second)."""
    length, m_tip, j_y, j_z = 1.0, 0.5, 0.02, 0.05
    rho_a = STEEL.rho * SECTION.A
    mu = m_tip / (rho_a * length)
    # the determinant reproduces the classic equation when J = 0
    for beta_l in (0.3, 1.1, 1.7):
        assert _tip_body_determinant(beta_l, mu, 0.0) == pytest.approx(
            2 * _tip_mass_equation(beta_l, mu) / np.cosh(beta_l) ** 2, rel=1e-12)
    exact, no_j = [], []
    for j_tip, second_moment in ((j_y, SECTION.Iy), (j_z, SECTION.Iz)):
        scale_f = np.sqrt(STEEL.E * second_moment / rho_a) / (2 * np.pi * length**2)
        j_n = j_tip / (rho_a * length**3)
        exact.append(_first_root(_tip_body_determinant, mu, j_n) ** 2 * scale_f)
        no_j.append(_first_root(_tip_body_determinant, mu, 0.0) ** 2 * scale_f)
    assert exact[0] < no_j[0] * (1 - 0.01) and exact[1] < no_j[1] * (1 - 0.01)
    errors = []
    for n in (5, 10, 20, 40):
        fe = add_point_masses(straight_beam(length, n, SECTION, STEEL),
                              [PointMass("tip", m_tip, (0.0, j_y, j_z))])
        f = _quiet(clamped_modes, fe, "root", 3).frequencies[:2]
        errors.append(np.abs(f / np.array(exact) - 1))
    errors = np.array(errors)
    print("tip body J relative errors (x–z, x–y):", errors.tolist())
    for plane in range(2):
        assert all(b < a for a, b in itertools.pairwise(errors[:, plane]))
    assert np.max(errors[-1]) < 1e-5


def test_point_masses_add_to_the_diagonal_and_the_rigid_body_inertia():
    fe = straight_beam(1.0, 8, SECTION, STEEL)
    out = add_point_masses(fe, [PointMass(5, 0.3, (1e-3, 2e-3, 3e-3)), ("tip", 0.2),
                                (5, 0.1)])
    diff = (out.mass - fe.mass).toarray()
    expected = np.zeros(fe.n_dof)
    expected[4 * 6:4 * 6 + 6] = [0.4, 0.4, 0.4, 1e-3, 2e-3, 3e-3]
    expected[8 * 6:8 * 6 + 3] = 0.2
    np.testing.assert_allclose(diff, np.diag(expected), rtol=0, atol=1e-15)
    beam_mass = STEEL.rho * SECTION.A * 1.0
    data = _quiet(clamped_modes, out, "root", 3)
    assert data.total_mass == pytest.approx(beam_mass + 0.6, rel=1e-12)
    steps = out.metadata["preparation"]
    assert [s["node"] for s in steps] == [5, 9, 5]
    assert steps[0]["inertia_kgm2"] == [1e-3, 2e-3, 3e-3]
    assert data.metadata["source"]["preparation"] == steps


def test_point_mass_errors_name_the_entry():
    fe = straight_beam(1.0, 4, SECTION, STEEL)
    with pytest.raises(ValidationError, match=r"node 99999 is not a node.*1\.\.5"):
        add_point_masses(fe, [(99999, 1.0)])
    with pytest.raises(ValidationError, match="'nowhere' is neither a node label nor a "
                                              "node set"):
        add_point_masses(fe, [("nowhere", 1.0)])
    with pytest.raises(ValidationError, match="set 'all' has 5 nodes"):
        add_point_masses(fe, [("all", 1.0)])
    with pytest.raises(ValidationError, match=r"mass must be a non-negative.*-1"):
        add_point_masses(fe, [(2, -1.0)])
    with pytest.raises(ValidationError, match="rotary inertia must be three"):
        add_point_masses(fe, [(2, 1.0, (1.0, -1.0, 0.0))])
    solid = _box(2, 2, 2)
    with pytest.raises(ValidationError, match=r"3 DOFs per node.*no rotation DOFs"):
        add_point_masses(solid, [(1, 1.0, (0.0, 1e-3, 0.0))])
    # a pure point mass on a solid is fine: m on the three translations
    out = add_point_masses(solid, [(1, 2.0, (0.0, 0.0, 0.0))])
    np.testing.assert_allclose((out.mass - solid.mass).diagonal()[:3], 2.0, rtol=0,
                               atol=1e-15)


# ---------------------------------------------------------------------- node selection
coords = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
point3 = st.tuples(coords, coords, coords)
direction = point3.filter(lambda v: np.linalg.norm(v) > 0.1)
clouds = st.integers(1, 40).flatmap(
    lambda n: st.lists(point3, min_size=n, max_size=n)).map(np.array)


def _partition_holds(nodes, selected, predicate):
    chosen = set(selected.tolist())
    for k, x in enumerate(nodes):
        assert predicate(x) == (k in chosen), (k, x)


@settings(max_examples=40, deadline=None)
@given(clouds, point3, direction, st.floats(0.0, 1.0))
def test_plane_selection_is_exactly_the_nodes_within_the_tolerance(nodes, point, normal,
                                                                   tol):
    n = np.array(normal) / np.linalg.norm(normal)
    sel = nodes_in_plane(nodes, point, normal, tol)
    _partition_holds(nodes, sel, lambda x: abs(sum((x[i] - point[i]) * n[i]
                                                   for i in range(3))) <= tol)


@settings(max_examples=40, deadline=None)
@given(clouds, point3, point3, st.floats(0.0, 0.5))
def test_box_selection_is_exactly_the_nodes_inside(nodes, a, b, tol):
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    sel = nodes_in_box(nodes, lo, hi, tol)
    _partition_holds(nodes, sel, lambda x: all(lo[i] - tol <= x[i] <= hi[i] + tol
                                               for i in range(3)))


@settings(max_examples=40, deadline=None)
@given(clouds, point3, direction, st.floats(0.0, 2.0), st.floats(0.0, 1.0),
       st.floats(0.0, 0.2))
def test_cylinder_selection_is_exactly_the_nodes_in_the_annulus(nodes, point, axis, radius,
                                                                 inner_frac, tol):
    inner = inner_frac * radius
    a = np.array(axis) / np.linalg.norm(axis)

    def inside(x):
        rel = np.array(x) - np.array(point)
        d = np.linalg.norm(np.cross(rel, a))  # |rel × â| is the distance from the axis
        return inner - tol <= d <= radius + tol

    sel = nodes_in_cylinder(nodes, point, axis, radius, tol, inner)
    chosen = set(sel.tolist())
    for k, x in enumerate(nodes):
        # the two distance formulas agree to round-off; skip points on the boundary
        rel = np.array(x) - np.array(point)
        d = np.linalg.norm(np.cross(rel, a))
        if min(abs(d - (radius + tol)), abs(d - (inner - tol))) < 1e-12:
            continue
        assert inside(x) == (k in chosen), (k, x, d)


@settings(max_examples=40, deadline=None)
@given(clouds, point3, st.integers(1, 5))
def test_nearest_nodes_are_the_brute_force_argmin(nodes, point, count):
    count = min(count, len(nodes))
    dist = [sum((x[i] - point[i]) ** 2 for i in range(3)) for x in nodes]
    brute = []
    remaining = list(range(len(nodes)))
    for _ in range(count):
        best = min(remaining, key=lambda k: (dist[k], k))
        brute.append(best)
        remaining.remove(best)
    got = nearest_nodes(nodes, point, count)
    if count == 1:
        assert got.tolist() == [int(np.argmin(dist))]
    # ties at the cut are resolved by index in both; distances must match exactly
    assert sorted(dist[k] for k in got) == sorted(dist[k] for k in brute)
    assert got.tolist() == sorted(got.tolist())


def test_spec_strings_and_tables_select_the_same_nodes():
    fe = _box(4, 2, 2)
    pairs = [
        ("plane:x=0", {"type": "plane", "x": 0}),
        ("plane:point=0.12,0,0;normal=2,0,0", {"type": "plane", "point": [0.12, 0, 0],
                                               "normal": [2, 0, 0]}),
        ("box:min=0.02,0,0;max=0.07,0.05,0.02", {"type": "box", "min": [0.02, 0, 0],
                                                 "max": [0.07, 0.05, 0.02]}),
        ("cylinder:point=0,0.025,0.02;axis=1,0,0;radius=0.001",
         {"type": "cylinder", "point": [0, 0.025, 0.02], "axis": [1, 0, 0],
          "radius": 0.001}),
        ("nearest:0.1,0.05,0.04", {"type": "nearest", "point": [0.1, 0.05, 0.04]}),
        ("nearest:point=0,0,0;count=3", {"type": "nearest", "point": [0, 0, 0], "count": 3}),
    ]
    x = fe.nodes
    expected = [np.flatnonzero(np.isclose(x[:, 0], 0.0)),
                np.flatnonzero(np.isclose(x[:, 0], 0.12)),
                np.flatnonzero((x[:, 0] > 0.02 - 1e-9) & (x[:, 0] < 0.07 + 1e-9)
                               & (x[:, 2] < 0.02 + 1e-9)),
                np.flatnonzero(np.isclose(x[:, 1], 0.025) & np.isclose(x[:, 2], 0.02)),
                [int(np.argmin(np.linalg.norm(x - [0.1, 0.05, 0.04], axis=1)))],
                None]
    for (text, table), ref in zip(pairs, expected, strict=True):
        a, b = select_nodes(x, text), select_nodes(x, table)
        np.testing.assert_array_equal(a, b)
        if ref is not None:
            np.testing.assert_array_equal(a, ref)
    assert select_nodes(x, "nearest:point=0,0,0;count=3").size == 3


@pytest.mark.parametrize("spec, pattern", [
    ("sphere:r=1", r"unknown kind 'sphere'"),
    ("plane:x=0;colour=red", r"unknown key\(s\) \['colour'\]"),
    ("plane:x=abc", r"x must be a number, got 'abc'"),
    ("plane:point=0,0,0;normal=0,0,0", r"normal must not be the zero vector"),
    ("plane:x=0;y=1", r"one coordinate plane"),
    ("box:min=1,0,0;max=0,1,1", r"min \[1.0, 0.0, 0.0\] exceeds max"),
    ("box:min=0,0;max=1,1,1", r"min must be 3 numbers"),
    ("cylinder:point=0,0,0;axis=0,0,1", r"cylinder needs radius"),
    ("cylinder:point=0,0,0;axis=0,0,1;radius=-1", r"radius must not be negative"),
    ("nearest:point=0,0,0;count=0", r"count must be an integer >= 1"),
    ("plane", r"expected KIND:key=value"),
])
def test_bad_specs_name_the_spec_and_the_problem(spec, pattern):
    with pytest.raises(ValidationError, match=pattern) as exc:
        parse_spec(spec, "--node-set s")
    assert "--node-set s" in str(exc.value)


def test_empty_selection_names_the_spec_and_the_bounding_box():
    fe = _box(2, 2, 2)
    with pytest.raises(ValidationError) as exc:
        select_nodes(fe.nodes, "plane:x=0.5", "--node-set far")
    msg = str(exc.value)
    assert "--node-set far" in msg and "plane:point=0.5,0,0;normal=1,0,0" in msg
    assert "selects no node" in msg and "x 0..0.12, y 0..0.05, z 0..0.04 m" in msg


def test_named_sets_are_added_recorded_and_carried_to_the_modal_data():
    fe = _box(4, 2, 2)
    out = with_node_sets(fe, {"root": "plane:x=0", "tip": {"type": "plane", "x": 0.12},
                              "corner": [0]})
    assert out.node_sets["root"].size == 9 and out.node_sets["tip"].size == 9
    assert [s["name"] for s in out.metadata["preparation"]] == ["root", "tip"]
    data = _quiet(clamped_modes, out, "root", 3)
    np.testing.assert_array_equal(data.node_sets["tip"], out.node_sets["tip"])
    with pytest.raises(ValidationError, match="already has a set 'root'"):
        with_node_sets(out, {"root": "plane:x=0"})
    with pytest.raises(ValidationError, match="must be a word"):
        with_node_sets(fe, {"3a": "plane:x=0"})


def test_prepare_runs_sets_then_scaling_then_masses():
    fe = _box(2, 2, 2)
    out = prepare(fe, node_sets={"p": "nearest:0,0,0"}, stiffness_scale=0.5, mass_scale=2.0,
                  point_masses=[("p", 1.5)])
    assert [s["step"] for s in out.metadata["preparation"]] == ["node_set", "scale",
                                                                "point_mass"]
    # the point mass is not scaled: M' = 2 M + 1.5 at node 0's translations
    diff = (out.mass - 2.0 * fe.mass).tocsr()
    diff.eliminate_zeros()
    np.testing.assert_allclose(diff.diagonal()[:3], 1.5, rtol=1e-14)
    assert abs(diff).sum() == pytest.approx(4.5, rel=1e-12)
    np.testing.assert_array_equal((out.stiffness - 0.5 * fe.stiffness).toarray(), 0.0)


# ---------------------------------------------------------------------- case files
def _write_bar_case(tmp_path, marker_node_set: str) -> object:
    fe = with_node_sets(_box(6, 2, 2), {"root": "plane:x=0"})
    data = _quiet(clamped_modes, fe, "root", 4)
    write_modal(data, tmp_path / "bar.fmd.h5")
    text = f"""
[[bodies]]
name = "bar"
type = "flexible"
modal_data = "bar.fmd.h5"

[[markers]]
body = "bar"
name = "root"
node_set = "root"

[[markers]]
body = "bar"
name = "tip"
node_set = {marker_node_set}

[[markers]]
body = "ground"
name = "O"

[[joints]]
name = "clamp"
type = "fixed"
i = "ground.O"
j = "bar.root"

[[forces]]
name = "load"
type = "point-force"
marker = "bar.tip"
value = [0, 0, -50]

[solver]
h = 2e-4
t_end = 2e-3
"""
    path = tmp_path / "bar.toml"
    path.write_text(text)
    return path, fe


def test_case_marker_node_set_as_a_list_of_labels_runs(tmp_path):
    fe = with_node_sets(_box(6, 2, 2), {"root": "plane:x=0"})
    tip = select_nodes(fe.nodes, "plane:x=0.12")
    labels = fe.node_ids[tip].tolist()
    path, _ = _write_bar_case(tmp_path, str(labels))
    case = load_case(path)
    marker = case.model.markers["bar.tip"]
    np.testing.assert_allclose(marker.position, fe.nodes[tip].mean(axis=0), rtol=0,
                               atol=1e-15)
    assert marker.node_set == str(labels)
    case.output = tmp_path / "bar.res.h5"
    _, res = run_case(case)
    assert res.success
    # the same nodes by geometry give the same marker and the same response
    geo_path, _ = _write_bar_case(tmp_path, '{ type = "plane", x = 0.12 }')
    geo = load_case(geo_path)
    np.testing.assert_array_equal(geo.model.markers["bar.tip"].position, marker.position)
    geo.output = tmp_path / "geo.res.h5"
    _, res_geo = run_case(geo)
    np.testing.assert_allclose(res_geo.modal_coordinates("bar"),
                               res.modal_coordinates("bar"), rtol=0, atol=1e-15)
    assert np.max(np.abs(res.modal_coordinates("bar"))) > 0  # the load did deform it


@pytest.mark.parametrize("value, pattern", [
    ("[37, \"a\"]", r"'a' is not an integer label"),
    ("[]", r"one or more integers"),
    ("[1.5, 2]", r"1\.5 is not an integer label"),
    ("[true]", r"True is not an integer label"),
    ("[3, 3]", r"repeats node label\(s\) \[3\]"),
    ("{ type = \"sphere\" }", r"unknown kind 'sphere'"),
    ("{ type = \"plane\", x = 5.0 }", r"selects no node.*bounding box is x 0\.\.0\.12"),
    ("[99999]", r"node label\(s\) \[99999\] are not nodes"),
    ("3", r"must be a set name, a list of node labels or a geometry table"),
])
def test_bad_case_node_sets_name_marker_key_and_value(tmp_path, value, pattern, capsys):
    path, _ = _write_bar_case(tmp_path, value)
    with pytest.raises(CaseError, match=pattern) as exc:
        load_case(path)
    msg = str(exc.value)
    assert "bar.toml" in msg and "tip" in msg and "node_set" in msg
    assert main(["run", str(path), "-o", str(tmp_path / "x.res.h5")]) == 2
    assert "node_set" in capsys.readouterr().err


# ---------------------------------------------------------------------- command line
def _run_json(capsys, argv):
    code = _quiet(main, argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _write_matrices(tmp_path, fe):
    scipy.io.mmwrite(str(tmp_path / "M.mtx"), sp.coo_matrix(fe.mass), symmetry="symmetric")
    scipy.io.mmwrite(str(tmp_path / "K.mtx"), sp.coo_matrix(fe.stiffness),
                     symmetry="symmetric")
    np.savetxt(tmp_path / "nodes.csv", np.column_stack([fe.node_ids, fe.nodes]),
               delimiter=",", header="id,x,y,z", comments="")
    return ["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
            str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "nodes.csv")]


def test_reduce_scales_stiffness_and_clamps_a_geometric_set(capsys, tmp_path):
    fe = _box()
    base = _write_matrices(tmp_path, fe)
    ref = _run_json(capsys, [*base, "--node-set", "root=plane:x=0", "--clamp-nodes", "root",
                             "--modes", "6", "-o", str(tmp_path / "a.fmd.h5"), "--json"])
    soft = _run_json(capsys, [*base, "--node-set", "root=plane:x=0", "--clamp-nodes", "root",
                              "--scale-stiffness", "0.01", "--modes", "6", "-o",
                              str(tmp_path / "b.fmd.h5"), "--json"])
    np.testing.assert_allclose(soft["frequencies_hz"], np.array(ref["frequencies_hz"]) / 10,
                               rtol=1e-12, atol=0)
    assert soft["preparation"][0] == {"step": "node_set", "name": "root",
                                      "spec": "plane:point=0,0,0;normal=1,0,0",
                                      "n_nodes": 9}
    assert soft["preparation"][1] == {"step": "scale", "stiffness": 0.01, "mass": 1.0}
    assert ref["attach_set"] == "root"
    # the inline spelling defines the set 'clamp' and gives the same modes
    inline = _run_json(capsys, [*base, "--clamp-nodes", "plane:x=0", "--modes", "6", "-o",
                                str(tmp_path / "c.fmd.h5"), "--json"])
    assert inline["attach_set"] == "clamp"
    np.testing.assert_allclose(inline["frequencies_hz"], ref["frequencies_hz"], rtol=1e-13,
                               atol=0)
    assert "root" in read_modal(tmp_path / "b.fmd.h5").node_sets


def test_beam_add_mass_and_scale_mass_match_the_api(capsys, tmp_path):
    out = tmp_path / "b.fmd.h5"
    summary = _run_json(capsys, [
        "beam", "--length", "1", "--width", "0.02", "--height", "0.01", "--elements", "10",
        "--modes", "4", "--no-stiffening", "--scale-mass", "2", "--add-mass", "tip=0.5",
        "--add-mass", "6=0.1,1e-4,2e-4,3e-4", "-o", str(out), "--json"])
    fe = add_point_masses(scale(straight_beam(1.0, 10, SECTION, STEEL), mass=2.0),
                          [("tip", 0.5), (6, 0.1, (1e-4, 2e-4, 3e-4))])
    api = _quiet(clamped_modes, fe, "root", 4)
    np.testing.assert_allclose(summary["frequencies_hz"], api.frequencies, rtol=1e-12,
                               atol=0)
    beam_mass = STEEL.rho * SECTION.A
    assert summary["total_mass_kg"] == pytest.approx(2 * beam_mass + 0.6, rel=1e-12)
    steps = summary["preparation"]
    assert [s["step"] for s in steps] == ["scale", "point_mass", "point_mass"]
    assert steps[1]["node"] == 11 and steps[1]["mass_kg"] == 0.5
    assert steps[2]["inertia_kgm2"] == [1e-4, 2e-4, 3e-4]
    stored = read_modal(out).metadata["source"]["preparation"]
    assert stored == steps


BEAM = ["beam", "--length", "1", "--width", "0.02", "--height", "0.01", "--elements", "4",
        "--modes", "2"]


@pytest.mark.parametrize("extra, words", [
    (["--add-mass", "99999=1"], ["--add-mass", "99999", "not a node"]),
    (["--add-mass", "3=-1"], ["--add-mass", "'3=-1'", "negative"]),
    (["--add-mass", "3=abc"], ["--add-mass", "'abc' is not a number"]),
    (["--add-mass", "3=1,2"], ["--add-mass", "'3=1,2'", "NODE=KG[,IXX,IYY,IZZ"]),
    (["--add-mass", "3=1,1,-1,1"], ["--add-mass", "inertias must not be negative"]),
    (["--add-mass", "3"], ["--add-mass", "'3'", "expected NODE=KG"]),
    (["--add-mass", "nowhere=1"], ["--add-mass", "'nowhere'", "neither a node label"]),
    (["--scale-stiffness", "0"], ["--scale-stiffness", "'0'", "positive"]),
    (["--scale-stiffness", "-2"], ["--scale-stiffness", "'-2'", "positive"]),
    (["--scale-mass", "abc"], ["--scale-mass", "'abc' is not a number"]),
    (["--scale-mass", "nan"], ["--scale-mass", "'nan'", "positive finite"]),
    (["--node-set", "a=sphere:r=1"], ["--node-set a", "unknown kind 'sphere'"]),
    (["--node-set", "a=plane:x=0;q=1"], ["--node-set a", "unknown key(s) ['q']"]),
    (["--node-set", "a=plane:x=7"], ["--node-set a", "selects no node", "bounding box"]),
    (["--node-set", "root=plane:x=0"], ["--node-set root", "already has a set 'root'"]),
    (["--node-set", "plane:x=0"], ["--node-set", "the name 'plane:x' must be a word"]),
    (["--clamp-nodes", "box:min=5,5,5;max=6,6,6"], ["--clamp-nodes", "selects no node"]),
])
def test_bad_preparation_options_name_option_and_value(capsys, tmp_path, extra, words):
    assert _quiet(main, [*BEAM, *extra, "-o", str(tmp_path / "x.fmd.h5")]) == 2
    err = capsys.readouterr().err
    for word in words:
        assert word in err, (word, err)
    assert not (tmp_path / "x.fmd.h5").exists()


def test_rotary_inertia_on_a_three_dof_model_is_refused(capsys, tmp_path):
    base = _write_matrices(tmp_path, _box(2, 2, 2))
    argv = [*base, "--free", "--modes", "3", "-o", str(tmp_path / "x.fmd.h5"),
            "--add-mass", "1=1,0,1e-3,0"]
    assert _quiet(main, argv) == 2
    err = capsys.readouterr().err
    assert "--add-mass 1" in err and "3 DOFs per node" in err


def test_builder_takes_label_lists_and_spec_strings_for_interface_markers():
    from flexmbs.model import ModelBuilder

    fe = with_node_sets(_box(6, 2, 2), {"root": "plane:x=0", "tip": "plane:x=0.12"})
    data = _quiet(clamped_modes, fe, "root", 3)
    tip = fe.node_sets["tip"]
    labels = fe.node_ids[tip].tolist()
    b = ModelBuilder()
    b.add_flexible_body("bar", data)
    b.add_marker("bar", "by_name", node_set="tip")
    b.add_marker("bar", "by_labels", node_set=labels[::-1])
    b.add_marker("bar", "by_spec", node_set="plane:x=0.12")
    model = b.finalize()
    ref = model.markers["bar.by_name"].position
    np.testing.assert_allclose(ref, fe.nodes[tip].mean(axis=0), rtol=0, atol=1e-15)
    for name in ("by_labels", "by_spec"):
        np.testing.assert_allclose(model.markers[f"bar.{name}"].position, ref, rtol=0,
                                   atol=1e-15)
    assert model.markers["bar.by_spec"].node_set == "plane:point=0.12,0,0;normal=1,0,0"
    bad = ModelBuilder()
    bad.add_flexible_body("bar", data)
    bad.add_marker("bar", "m", node_set=[labels[0], 10**6])
    with pytest.raises(ModelError, match=r"marker 'bar.m'.*node label\(s\) \[1000000\]"):
        bad.finalize()
