"""Payloads on flexible bodies (flexmbs.modal.preparation; docs/modal_front_end.md,
"Payloads"): point masses with a full rotary inertia tensor and an offset centre of mass,
in the API, the beam helper, case files and ``--add-mass``, checked against independent
references:

* a clamped–free Euler–Bernoulli beam with a rigid tip body whose centre of mass lies a
  distance e beyond the tip: the exact 2x2 frequency determinant (derived below from the
  tip conditions), in both bending planes;
* the rigid-body mass, centre of mass and inertia tensor of the reduced body against
  hand sums over the bare beam and the payloads (parallel-axis theorem);
* a square-section beam, symmetric about its axis: a tip inertia tensor turned about the
  axis (products of inertia) gives the frequencies of the principal one;
* the tip-mass equation 1 + cos βL cosh βL + μ βL (cos βL sinh βL − sin βL cosh βL) = 0
  through a case file's beam table.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

import flexmbs as fm
from flexmbs.cases.loader import CaseError, load_case
from flexmbs.cli.main import main
from flexmbs.errors import ValidationError
from flexmbs.modal import clamped_modes, read_modal
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.preparation import PointMass, add_point_masses, inertia_tensor

SECTION = BeamSection.rectangle(0.02, 0.01)  # Iy (x–z bending) is the weaker axis
SQUARE = BeamSection.rectangle(0.015, 0.015)  # Iy = Iz: bending alike in every direction
STEEL = Material.steel()


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _tip_body_determinant(b, mu, eps, j_c):
    """Frequency determinant (divided by cosh² b) of a clamped–free Euler–Bernoulli beam
    carrying a rigid tip body: mass μ ρAL, centre of mass ε L beyond the tip on the beam
    axis, rotary inertia j_c ρAL³ about that centre; b = βL.

    The body moves with the tip deflection W and slope Θ; its kinetic energy is that of
    the tip mass matrix [[m, m e], [m e, J_c + m e²]] on (W, Θ), so the natural tip
    conditions are EI w''' = −ω² (m W + m e Θ) and EI w'' = ω² (m e W + (J_c + m e²) Θ).
    With w = A (ch − c) + B (sh − s) (clamped root, argument βx) and ω² = EI β⁴/ρA they
    give the 2x2 system below; ε = 0 is the classic tip-body determinant.
    """
    ch, c, sh, s = np.cosh(b), np.cos(b), np.sinh(b), np.sin(b)
    j_t = j_c + mu * eps**2
    a11 = (ch + c) - b**2 * mu * eps * (ch - c) - b**3 * j_t * (sh + s)
    a12 = (sh + s) - b**2 * mu * eps * (sh - s) - b**3 * j_t * (ch - c)
    a21 = (sh - s) + b * mu * (ch - c) + b**2 * mu * eps * (sh + s)
    a22 = (ch + c) + b * mu * (sh - s) + b**2 * mu * eps * (ch - c)
    return (a11 * a22 - a12 * a21) / ch**2


def _tip_mass_equation(b, mu):
    ch, c, sh, s = np.cosh(b), np.cos(b), np.sinh(b), np.sin(b)
    return 1 + c * ch + mu * b * (c * sh - s * ch)


def _first_root(fn, *args):
    """The lowest positive root: below the bare cantilever's 1.8751 (payloads lower
    every frequency)."""
    grid = np.linspace(1e-3, 1.9, 4000)
    vals = np.array([fn(b, *args) for b in grid])
    k = np.flatnonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))[0]
    return brentq(fn, grid[k], grid[k + 1], args=args, xtol=1e-15, rtol=1e-15)


def _frequency(beta_l, section, second_moment, length):
    rho_a = STEEL.rho * section.A
    return (beta_l / length) ** 2 * np.sqrt(STEEL.E * second_moment / rho_a) / (2 * np.pi)


def test_determinant_reduces_to_the_classic_tip_mass_equation():
    for b in (0.4, 1.2, 1.8):
        assert _tip_body_determinant(b, 0.7, 0.0, 0.0) == pytest.approx(
            2 * _tip_mass_equation(b, 0.7) / np.cosh(b) ** 2, rel=1e-12)


def test_offset_tip_body_matches_the_exact_frequency_equation():
    """0.5 kg, centre of mass 0.1 m beyond the tip, J_c = (0, 4e-3, 8e-3) kg m²: f₁ (x–z
    bending, EI_y, J_yy) and f₂ (x–y bending, EI_z, J_zz) against the determinant. The
    offset matters (the same body at the node is > 5 % stiffer), so a wrong sign of the
    translation–rotation coupling (a centre 0.1 m inside the tip) fails the check."""
    length, m_tip, e, j_c = 1.0, 0.5, 0.1, (0.0, 4e-3, 8e-3)
    rho_a = STEEL.rho * SECTION.A
    mu, eps = m_tip / (rho_a * length), e / length
    exact, inward, at_node = [], [], []
    for j, second_moment in ((j_c[1], SECTION.Iy), (j_c[2], SECTION.Iz)):
        j_n = j / (rho_a * length**3)
        for out, sign, ee in ((exact, 1, eps), (inward, -1, eps), (at_node, 1, 0.0)):
            root = _first_root(_tip_body_determinant, mu, sign * ee, j_n)
            out.append(_frequency(root, SECTION, second_moment, length))
    assert np.all(np.array(at_node) > 1.05 * np.array(exact))
    assert np.all(np.abs(np.array(inward) / np.array(exact) - 1) > 0.05)
    errors = []
    for n in (10, 20, 40):
        fe = straight_beam(length, n, SECTION, STEEL,
                           point_masses=[PointMass("tip", m_tip, j_c, (e, 0.0, 0.0))])
        f = _quiet(clamped_modes, fe, "root", 3).frequencies[:2]
        errors.append(np.abs(f / np.array(exact) - 1))
    print("offset tip body, relative errors (x–z, x–y) at 10, 20, 40 elements:",
          np.array(errors).tolist())
    assert np.all(np.array(errors[1:]) < np.array(errors[:-1]))
    assert np.max(errors[-1]) < 1e-6


def test_products_of_inertia_turn_with_a_symmetric_beam():
    """A square section bends alike in every direction, so a tip inertia tensor turned by
    any angle about the beam axis (products J_yz ≠ 0) leaves the frequencies of the
    principal tensor; those equal the exact tip-body values of each principal axis. The
    six-value and 3x3 forms of the same tensor give identical mass matrices."""
    length, n_el, m_tip = 1.0, 30, 0.3
    principal = np.diag([1e-3, 2e-3, 6e-3])
    rho_a = STEEL.rho * SQUARE.A
    mu = m_tip / (rho_a * length)
    exact = sorted(_frequency(_first_root(_tip_body_determinant, mu, 0.0,
                                          j / (rho_a * length**3)), SQUARE, SQUARE.Iy,
                              length) for j in (2e-3, 6e-3))
    base = straight_beam(length, n_el, SQUARE, STEEL)
    for angle in (0.0, 0.3, 1.1, 2.5):
        c, s = np.cos(angle), np.sin(angle)
        rot = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        tensor = rot @ principal @ rot.T
        six = [tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[0, 1], tensor[0, 2],
               tensor[1, 2]]
        fe = add_point_masses(base, [{"node": "tip", "mass": m_tip, "inertia": six}])
        full = add_point_masses(base, [PointMass("tip", m_tip, tensor.tolist())])
        assert abs(fe.mass - full.mass).max() < 1e-18
        f = np.sort(_quiet(clamped_modes, fe, "root", 3).frequencies[:2])
        np.testing.assert_allclose(f, exact, rtol=5e-6)
    assert abs(tensor[1, 2]) > 1e-3  # the last angle has large products


def test_reduced_body_mass_properties_include_the_payloads():
    """Total mass, centre of mass and inertia about the frame origin and about the centre
    of mass of the reduced body = the bare beam's + the payloads' (mass m at node x + s,
    inertia J + m (|r|² I − r rᵀ) about the origin), whatever the products' signs."""
    fe = straight_beam(0.8, 16, SECTION, STEEL, start=(0.1, 0.0, 0.0))
    payloads = [PointMass("tip", 0.7, (2e-3, 3e-3, 4e-3, -4e-4, 2e-4, 5e-4),
                          (0.05, -0.02, 0.03)),
                PointMass(5, 0.2, [[1e-3, 1e-4, 0.0], [1e-4, 1e-3, 0.0], [0.0, 0.0, 5e-4]]),
                {"node": 9, "mass": 0.15, "offset": [0.0, 0.04, 0.0]}]
    bare = _quiet(clamped_modes, fe, "root", 4)
    data = _quiet(clamped_modes, add_point_masses(fe, payloads), "root", 4)
    mass = bare.total_mass
    first = bare.total_mass * bare.center_of_mass
    origin = bare.inertia_origin.copy()
    for p in payloads:
        node, m, inertia, offset = ((p.node, p.mass, p.inertia, p.offset)
                                    if isinstance(p, PointMass) else
                                    (p["node"], p["mass"], None, p["offset"]))
        index = fe.node_sets["tip"][0] if node == "tip" else node - 1
        r = fe.nodes[index] + np.asarray(offset if offset is not None else np.zeros(3))
        mass += m
        first = first + m * r
        origin += m * (r @ r * np.eye(3) - np.outer(r, r)) + (
            inertia_tensor(inertia) if inertia is not None else 0.0)
    com = first / mass
    about_com = origin - mass * (com @ com * np.eye(3) - np.outer(com, com))
    assert data.total_mass == pytest.approx(mass, rel=1e-13)
    np.testing.assert_allclose(data.center_of_mass, com, rtol=0, atol=1e-13)
    np.testing.assert_allclose(data.inertia_origin, origin, rtol=0, atol=1e-13)
    np.testing.assert_allclose(data.inertia_tensor, about_com, rtol=0, atol=1e-13)
    # the flexible body's kinetic energy at ξ = 0, attitude identity (ṗ = (0, ω/2)):
    # ½ m v·v + v·(ω × S) + ½ ωᵀ I_O ω with the hand-summed m, S = m c and I_O
    b = fm.ModelBuilder()
    b.add_flexible_body("arm", data)
    body = b.finalize().bodies["arm"]
    v, w = np.array([0.3, -0.2, 0.5]), np.array([1.5, -0.7, 2.0])
    q = np.concatenate([np.zeros(3), [1.0, 0.0, 0.0, 0.0], np.zeros(data.n_modes)])
    qd = np.concatenate([v, [0.0], 0.5 * w, np.zeros(data.n_modes)])
    expected = 0.5 * mass * v @ v + v @ np.cross(w, first) + 0.5 * w @ origin @ w
    assert body.kinetic_energy(q, qd) == pytest.approx(expected, rel=1e-12)


def test_entry_forms_and_the_beam_helper_agree():
    fe = straight_beam(1.0, 8, SECTION, STEEL)
    a = add_point_masses(fe, [("tip", 0.5, (1e-3, 2e-3, 3e-3), (0.0, 0.0, 0.01))])
    b = fm.add_point_masses(fe, [{"node": 9, "mass": 0.5, "inertia": [1e-3, 2e-3, 3e-3],
                                  "offset": [0.0, 0.0, 0.01]}])
    c = straight_beam(1.0, 8, SECTION, STEEL,
                      point_masses=[fm.PointMass("tip", 0.5, np.diag([1e-3, 2e-3, 3e-3]),
                                                 (0.0, 0.0, 0.01))])
    assert abs(a.mass - b.mass).max() == 0.0 and abs(a.mass - c.mass).max() == 0.0
    record = c.metadata["preparation"][-1]
    assert record["offset_m"] == [0.0, 0.0, 0.01] and record["node"] == 9
    assert record["inertia_kgm2"] == np.diag([1e-3, 2e-3, 3e-3]).tolist()
    assert a.metadata["preparation"][-1]["inertia_kgm2"] == [1e-3, 2e-3, 3e-3]
    # no payloads: the same model back
    assert straight_beam(1.0, 8, SECTION, STEEL, point_masses=()).metadata.get(
        "preparation") is None


@pytest.mark.parametrize(("entry", "pattern"), [
    (("tip", 1.0, (1.0, 2.0)), r"rotary inertia must be three .* six .* got \(1\.0, 2\.0\)"),
    (("tip", 1.0, (1.0, 1.0, 1.0, 2.0, 0.0, 0.0)), r"not positive semi-definite"),
    (("tip", 1.0, [[1.0, 0.5, 0], [0.0, 1, 0], [0, 0, 1]]), r"is not symmetric"),
    (("tip", 1.0, ("a", 1, 1)), r"rotary inertia must be"),
    (("tip", 1.0, None, (0.1, 0.0)), r"offset must be three finite numbers"),
    (("tip", 1.0, None, (0.1, float("nan"), 0.0)), r"offset must be three finite"),
    ({"node": "tip", "mass": 1.0, "intertia": [1, 1, 1]}, r"unknown keys \['intertia'\]"),
    ({"mass": 1.0}, r"missing \['node'\]"),
    ("tip", r"a point mass is a PointMass"),
])
def test_bad_payloads_are_named(entry, pattern):
    fe = straight_beam(1.0, 4, SECTION, STEEL)
    with pytest.raises(ValidationError, match=pattern):
        add_point_masses(fe, [entry], what="payload")


def test_offset_on_a_node_without_rotations_is_refused():
    solid = box_mesh(0.12, 0.05, 0.04, 2, 2, 2, E=70e9, nu=0.3, rho=2700.0)
    with pytest.raises(ValidationError, match=r"offset \[0\.0, 0\.0, 0\.1\] m cannot be "
                                              r"added: the model has 3 DOFs per node"):
        add_point_masses(solid, [PointMass(1, 1.0, None, (0.0, 0.0, 0.1))])


# ---------------------------------------------------------------- case files, CLI
CASE = """
[[bodies]]
name = "arm"
type = "flexible"

[bodies.beam]
length = 1.0
elements = {elements}
modes = 3
stress = false
section = {{ kind = "rectangle", width = 0.02, height = 0.01 }}
point_masses = {payloads}

[solver]
h = 1e-3
t_end = 0.01
"""


def _case(tmp_path, payloads, elements=40):
    path = tmp_path / "payload.toml"
    path.write_text(CASE.format(payloads=payloads, elements=elements))
    return path


def test_case_file_payload_enters_the_modes(tmp_path):
    """A 0.5 kg tip payload in a case file's beam table: the body's first frequency is
    the exact tip-mass value (1e-6 at the default 40 elements), its mass beam + 0.5 kg."""
    case = _quiet(load_case, _case(tmp_path, '[{ node = "tip", mass = 0.5 }]'))
    data = case.model.bodies["arm"].data
    rho_a = STEEL.rho * SECTION.A
    exact = _frequency(_first_root(_tip_mass_equation, 0.5 / rho_a), SECTION, SECTION.Iy,
                       1.0)
    assert data.frequencies[0] == pytest.approx(exact, rel=1e-6)
    assert data.total_mass == pytest.approx(rho_a + 0.5, rel=1e-12)
    steps = data.metadata["source"]["preparation"]
    assert steps[-1]["node"] == 41 and steps[-1]["mass_kg"] == 0.5


def test_case_file_payload_inertia_forms(tmp_path):
    """Six values and the 3x3 list give the same body; a node label works as the set."""
    six = _quiet(load_case, _case(tmp_path, '[{ node = 11, mass = 0.2, inertia = '
                                            '[1e-3, 2e-3, 3e-3, 1e-4, 0.0, -2e-4], '
                                            'offset = [0.02, 0.0, 0.0] }]', elements=10))
    full = _quiet(load_case, _case(tmp_path, '[{ node = "tip", mass = 0.2, inertia = '
                                             '[[1e-3, 1e-4, 0.0], [1e-4, 2e-3, -2e-4], '
                                             '[0.0, -2e-4, 3e-3]], offset = [0.02, 0, 0] }]',
                                   elements=10))
    a, b = six.model.bodies["arm"].data, full.model.bodies["arm"].data
    np.testing.assert_allclose(a.frequencies, b.frequencies, rtol=1e-13)
    np.testing.assert_allclose(a.inertia_tensor, b.inertia_tensor, rtol=0, atol=1e-15)


@pytest.mark.parametrize(("payloads", "words"), [
    ('[{ node = "tip", mass = -1.0 }]', ["'arm'", "'beam'", "point_masses #1", "-1.0"]),
    ('[{ node = "middle", mass = 1.0 }]', ["'arm'", "point_masses #1", "'middle'"]),
    ('[{ node = 99, mass = 1.0 }]', ["'arm'", "node 99 is not a node", "1..41"]),
    ('[{ node = "tip", mass = 1.0, inertia = [1.0, 2.0] }]',
     ["'arm'", "point_masses #1", "rotary inertia", "[1.0, 2.0]"]),
    ('[{ node = "tip", mass = 1.0 }, { node = "tip", mass = 1, offset = 3 }]',
     ["'arm'", "point_masses #2", "offset must be three", "got 3"]),
    ('[{ node = "tip", weight = 1.0 }]', ["'arm'", "point_masses #1", "'weight'"]),
    ('{ node = "tip", mass = 1.0 }', ["'arm'", "beam.point_masses must be a list"]),
])
def test_case_file_payload_errors_name_body_key_and_value(tmp_path, payloads, words):
    with pytest.raises(CaseError) as info:
        load_case(_case(tmp_path, payloads))
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_body_level_point_masses_point_to_the_beam_table(tmp_path):
    path = tmp_path / "wrong.toml"
    path.write_text(CASE.format(payloads="[]", elements=4).replace(
        'type = "flexible"', 'type = "flexible"\npoint_masses = [{ node = "tip", '
                             'mass = 1.0 }]'))
    with pytest.raises(CaseError, match=r"'arm': key 'point_masses' belongs in the body's "
                                        r"beam table"):
        load_case(path)


def test_add_mass_with_products_and_offset_matches_the_api(capsys, tmp_path):
    out = tmp_path / "b.fmd.h5"
    code = _quiet(main, ["beam", "--length", "1", "--width", "0.02", "--height", "0.01",
                         "--elements", "10", "--modes", "4", "--no-stiffening",
                         "--add-mass", "tip=0.5,1e-3,2e-3,3e-3,1e-4,0,-2e-4@0.05,0,0.01",
                         "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    fe = add_point_masses(straight_beam(1.0, 10, SECTION, STEEL), [PointMass(
        "tip", 0.5, (1e-3, 2e-3, 3e-3, 1e-4, 0.0, -2e-4), (0.05, 0.0, 0.01))])
    api = _quiet(clamped_modes, fe, "root", 4)
    written = read_modal(out)
    np.testing.assert_allclose(written.frequencies, api.frequencies, rtol=1e-12)
    np.testing.assert_allclose(written.inertia_tensor, api.inertia_tensor, rtol=0,
                               atol=1e-15)
    step = written.metadata["source"]["preparation"][-1]
    assert step["offset_m"] == [0.05, 0.0, 0.01]


@pytest.mark.parametrize(("value", "words"), [
    ("3=1,2,3,4,5", ["--add-mass", "'3=1,2,3,4,5'", "IXY,IXZ,IYZ"]),
    ("3=1@0,0", ["--add-mass", "'3=1@0,0'", "@DX,DY,DZ"]),
    ("3=1@0,x,0", ["--add-mass", "'x' is not a number"]),
    ("3=1,1,1,1,5,0,0", ["--add-mass 3", "not positive semi-definite"]),
])
def test_bad_add_mass_values_are_named(capsys, tmp_path, value, words):
    argv = ["beam", "--length", "1", "--width", "0.02", "--height", "0.01", "--elements",
            "4", "--modes", "2", "--add-mass", value, "-o", str(tmp_path / "x.fmd.h5")]
    assert _quiet(main, argv) == 2
    err = capsys.readouterr().err
    for word in words:
        assert word in err, (word, err)


# ------------------------------------------------------- the attached-body alternative
def _clamped_frequencies(data, payload=None):
    """Elastic frequencies [Hz] of the linearized model: the beam (clamped at node 1 by a
    fixed joint to the ground) and, with ``payload`` = (m, J), a rigid body of mass m and
    inertia J I₃ welded to the tip node by a fixed joint."""
    from flexmbs.analysis import eigenmodes, linearize
    from flexmbs.assembly import System

    b = fm.ModelBuilder()
    b.add_flexible_body("beam", data)
    b.add_marker("beam", "root", node=1)
    b.add_marker("beam", "tip", node=int(data.node_ids[data.node_sets["tip"][0]]))
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", "beam.root")
    if payload is not None:
        m, j = payload
        b.add_rigid_body("load", m, [j, j, j], position=data.nodes[data.node_sets["tip"][0]])
        b.add_marker("load", "c")
        b.add_joint("weld", "fixed", "beam.tip", "load.c")
    system = System(b.finalize())
    modes = eigenmodes(linearize(system, system.assemble()))
    return np.sort([mode.frequency_hz for mode in modes if not mode.rigid])


def test_payload_in_the_modes_against_an_attached_rigid_body():
    """The trade-off of docs/modal_front_end.md ("Payloads"), measured: a 0.5 kg payload
    (J = 8e-5 kg m², a 2 cm steel ball) at the tip of the 1 m beam (40 elements). In the
    modes, the first two frequencies (one per bending plane) are the FE eigenvalues with
    two modes. As a rigid body welded to the tip of the bare beam's modes, the error falls
    only with the number of modes (≈5e-3 with 2, 8e-4 with 4, 2e-4 with 8), and three
    static-correction modes at the tip (unit forces) bring it to ~1e-7 with two modes."""
    from flexmbs.modal.stress import static_correction

    m, j = 0.5, 0.4 * 0.5 * 0.02**2
    bare_fe = straight_beam(1.0, 40, SECTION, STEEL)
    laden_fe = add_point_masses(bare_fe, [PointMass("tip", m, (j, j, j))])
    reference = _quiet(clamped_modes, laden_fe, "root", 6).frequencies[:2]
    rows = {}
    for n in (2, 4, 8):
        bare = _quiet(clamped_modes, bare_fe, "root", n)
        rows[n] = (
            _clamped_frequencies(_quiet(clamped_modes, laden_fe, "root", n))[:2],
            _clamped_frequencies(bare, (m, j))[:2],
            _clamped_frequencies(_quiet(static_correction, bare, bare_fe, "tip", "123"),
                                 (m, j))[:2])
    errors = {n: [np.max(np.abs(f / reference - 1)) for f in fs] for n, fs in rows.items()}
    print("payload: max relative error of f1, f2 (in the modes, attached body, attached "
          "body + tip static correction):", errors)
    for n in (2, 4, 8):
        in_modes, attached, corrected = errors[n]
        assert in_modes < 1e-9
        assert attached > 1e-5 and corrected < 1e-6
    assert errors[2][1] > 1e-3 and errors[2][1] > errors[4][1] > errors[8][1]


def test_the_payload_example_of_the_docs_runs(capsys):
    """docs/modal_front_end.md's payload example: the laden forearm weighs the beam plus
    0.6 kg (hand sum: ρ A L of the box section + 0.5 + 0.1)."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "modal_front_end.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, flags=re.S)
                if "fm.PointMass" in b]
    scope: dict = {}
    _quiet(exec, compile(block, "modal_front_end.md", "exec"), scope)
    section = fm.BeamSection.box(0.03, 0.015, 0.002)
    beam = fm.Material.aluminium().rho * section.A * 0.5
    assert scope["forearm"].total_mass == pytest.approx(beam + 0.6, rel=1e-12)
    capsys.readouterr()


def _shapes(phi):
    """Mode shapes with each column divided by its entry of largest magnitude."""
    top = phi[np.argmax(np.abs(phi), axis=0), np.arange(phi.shape[1])]
    return phi / top


def test_case_file_beam_scales_its_stiffness_and_mass_before_the_reduction(tmp_path):
    """`scale_stiffness = 0.01` in a case file's beam table divides every frequency by 10
    (to the eigenvalues' round-off), `scale_mass = 4` halves them, the mode shapes
    unchanged; `material` may be written 'E,nu,rho' as `flexmbs beam --material` takes
    it; bad factors are named."""
    plain = _quiet(load_case, _case(tmp_path, "[]", elements=10)).model.bodies["arm"].data
    for extra, factor in (("scale_stiffness = 0.01", 0.1), ("scale_mass = 4.0", 0.5),
                          ('material = "7.0e10,0.33,2700"', None)):
        path = tmp_path / "scaled.toml"
        path.write_text(CASE.format(payloads="[]", elements=10).replace(
            "stress = false", f"stress = false\n{extra}"))
        data = _quiet(load_case, path).model.bodies["arm"].data
        if factor is None:  # not the default steel: the text was read
            given = data.metadata["source"]["material"]
            assert (given["E"], given["nu"], given["rho"]) == (7.0e10, 0.33, 2700.0)
            continue
        # round-off of the lowest eigenvalues of the beam's FE model: eps times the ratio
        # of its axial to its first bending stiffness, about 1e-11 (the same with the API),
        # and as the CPU's LAPACK kernels round it: up to 5.8e-11 with OpenBLAS's Zen,
        # Haswell and Sandybridge kernels (OPENBLAS_CORETYPE); a wrong factor is off by
        # percents
        np.testing.assert_allclose(data.frequencies, factor * plain.frequencies, rtol=2e-10)
        np.testing.assert_allclose(_shapes(data.phi), _shapes(plain.phi), atol=1e-9)
    path.write_text(CASE.format(payloads="[]", elements=10).replace(
        "stress = false", "stress = false\nscale_mass = -1.0"))
    with pytest.raises(CaseError, match=r"beam.scale_mass must be a positive number, got -1.0"):
        load_case(path)
