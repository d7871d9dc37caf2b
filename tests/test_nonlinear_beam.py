"""The geometrically exact beam (docs/nonlinear_beam.md): its element force against
the complex-step derivative of its energy and its tangents against finite differences
on random states, its strains exact for constant-strain shapes, and the declarations
(node bodies, markers on nodes, case files, the fall-back to the NumPy path)."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad_vec
from scipy.linalg import expm

from flexmbs.analysis import static_equilibrium
from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.elements.nonlinear_beam import reference as ref
from flexmbs.errors import FlexmbsError, ModelError
from flexmbs.frame.rotations import quaternion_from_matrix, skew
from flexmbs.modal.fe.beam import BeamSection, Material
from flexmbs.model import ModelBuilder

CASES = Path(__file__).resolve().parents[1] / "cases"
STIFFNESS = np.array([3.0, 1.5, 2.0, 0.7, 1.1, 0.9])


def _element_pair(seed, rotation_scale):
    """Random node coordinates (5 elements): p off the unit sphere, finite relative
    rotations of size ~ ``rotation_scale`` [rad]."""
    rng = np.random.default_rng(seed)
    qa = np.zeros((5, 7))
    qa[:, :3] = rng.normal(size=(5, 3))
    p = rng.normal(size=(5, 4))
    qa[:, 3:] = p / np.linalg.norm(p, axis=1)[:, None] * rng.uniform(0.8, 1.2, (5, 1))
    qb = qa.copy()
    qb[:, :3] += rng.normal(size=(5, 3))
    qb[:, 3:] += rotation_scale * rng.normal(size=(5, 4))
    return qa, qb, rng.uniform(0.5, 2.0, 5)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), scale=st.sampled_from([1e-5, 1e-2, 0.3, 0.8]))
def test_element_force_is_the_exact_gradient_of_its_energy(seed, scale):
    """The closed-form ∂U/∂q against the complex step of U (independent: the energy
    function only), on both branches of the series/closed forms."""
    qa, qb, lengths = _element_pair(seed, scale)
    grad = ref.gradient(qa, qb, lengths, STIFFNESS)
    q = np.concatenate([qa, qb], axis=1)
    check = np.zeros_like(grad)
    for j in range(14):
        qj = q.astype(complex)
        qj[:, j] += 1e-30j
        check[:, j] = np.imag(ref.energy(qj[:, :7], qj[:, 7:], lengths, STIFFNESS)) / 1e-30
    np.testing.assert_allclose(grad, check, rtol=0, atol=1e-12 * np.max(np.abs(check)))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), scale=st.sampled_from([1e-4, 0.3, 0.8]))
def test_element_tangent_matches_central_differences_of_the_force(seed, scale):
    qa, qb, lengths = _element_pair(seed, scale)
    hess = ref.hessian(qa, qb, lengths, STIFFNESS)
    q = np.concatenate([qa, qb], axis=1)
    fd = np.zeros_like(hess)
    h = 1e-6
    for j in range(14):
        qp, qm = q.copy(), q.copy()
        qp[:, j] += h
        qm[:, j] -= h
        fd[:, :, j] = (ref.gradient(qp[:, :7], qp[:, 7:], lengths, STIFFNESS)
                       - ref.gradient(qm[:, :7], qm[:, 7:], lengths, STIFFNESS)) / (2 * h)
    np.testing.assert_allclose(hess, fd, rtol=0, atol=1e-7 * np.max(np.abs(hess)))


@settings(max_examples=10, deadline=None)
@given(kappa=st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3),
       gamma=st.lists(st.floats(-0.1, 0.1), min_size=3, max_size=3),
       length=st.floats(0.2, 1.0))
def test_strains_are_exact_for_a_helix(kappa, gamma, length):
    """A piece of constant strain (Γ, K), r' = R(s)(e₁ + Γ), R(s) = R₀ exp(s K̃),
    integrated numerically: the element returns Γ and K (the helicoidal interpolation),
    for any relative rotation ‖K‖L below π (here up to 2.6 rad)."""
    kappa, gamma = np.array(kappa), np.array(gamma)
    r0 = expm(skew([0.2, 0.4, 0.1]))
    chord = quad_vec(lambda s: r0 @ expm(s * skew(kappa)) @ (np.eye(3)[0] + gamma), 0,
                     length, epsabs=1e-14, epsrel=1e-13)[0]
    qa = np.concatenate([[0.1, 0.2, 0.3], quaternion_from_matrix(r0)])[None]
    qb = np.concatenate([np.array([0.1, 0.2, 0.3]) + chord,
                         quaternion_from_matrix(r0 @ expm(length * skew(kappa)))])[None]
    g, k = ref.strains(qa, qb, np.array([length]))
    np.testing.assert_allclose(g[0], gamma, rtol=0, atol=1e-12)
    np.testing.assert_allclose(k[0], kappa, rtol=0, atol=1e-12)


SECTION = BeamSection(A=1e-2, Iy=1e-5, Iz=2e-5, J=2e-5)
MATERIAL = Material(E=1e5, nu=0.3, rho=100.0)  # EI_y = 1 N m², ρA = 1 kg/m
#: The node frames of a beam along global y with up = z: x = +y, y = −x, z = z.
FRAME = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def _cantilever(n=4, load=None):
    b = ModelBuilder()
    b.add_nonlinear_beam("arm", 1.0, n, SECTION, MATERIAL, position=(0.5, 0, 0),
                         axis=(0, 1, 0))
    b.add_marker("ground", "clamp", (0.5, 0, 0), FRAME)
    b.add_marker("arm", "root", node="root")
    b.add_marker("arm", "tip", node="tip")
    b.add_marker("arm", "mid", (0, 0, 0.01), node=n // 2 + 1)
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    if load is not None:
        b.add_point_force("load", "arm.tip", load)
    return b.finalize()


def test_nodes_are_bodies_and_markers_on_the_beam_ride_on_them():
    model = _cantilever(4)
    assert [n for n in model.bodies if n.startswith("arm/")] == [f"arm/{k}"
                                                                 for k in range(1, 6)]
    assert model.markers["arm.tip"].body == "arm/5"
    assert model.markers["arm.mid"].body == "arm/3"
    masses = [model.bodies[f"arm/{k}"].mass for k in range(1, 6)]
    np.testing.assert_allclose(masses, [0.125, 0.25, 0.25, 0.25, 0.125], rtol=1e-12)
    # node frames: x along the beam (global y), section z = up
    a = model.bodies["arm/2"]
    np.testing.assert_allclose(a.q0[:3], [0.5, 0.25, 0.0], atol=1e-15)
    system = System(model)
    r, axes, _, _ = system.bodies[2].marker_frame(system.q0[system.slices[2]],
                                                  model.markers["arm.mid"], jac=False)
    np.testing.assert_allclose(r, [0.5, 0.5, 0.01], atol=1e-15)
    np.testing.assert_allclose(axes[:, 0], [0, 1, 0], atol=1e-15)


@pytest.mark.parametrize(("node", "match"), [(0, r"label 1\.\.5"), ("middle", "'root'"),
                                             (None, "give node")])
def test_a_marker_on_the_beam_needs_a_node_of_it(node, match):
    b = ModelBuilder()
    b.add_nonlinear_beam("arm", 1.0, 4, SECTION, MATERIAL)
    b.add_marker("arm", "m", node=node)
    with pytest.raises(ModelError, match=rf"marker arm\.'m' on nonlinear beam 'arm'.*{match}"):
        b.finalize()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"material": "wood"}, "material must be 'steel'"),
    ({"elements": 0}, "elements must be an integer"),
    ({"length": -1.0}, "length must be a positive"),
    ({"section": {"kind": "rectangle", "width": 0.01}}, "missing"),
])
def test_bad_beam_input_names_the_beam_and_the_field(kwargs, match):
    args = dict(length=1.0, elements=4, section=SECTION, material=MATERIAL) | kwargs
    b = ModelBuilder()
    b.add_nonlinear_beam("arm", **args)
    with pytest.raises(ModelError, match=rf"nonlinear beam 'arm'.*{match}"):
        b.finalize()


def test_system_tangents_match_finite_differences_and_the_engine_takes_the_beam():
    """The assembled residual's tangent (beam elements + node bodies + clamp) against
    central differences at a random state (the elements' strain energy and their
    consistent inertia, with its mass term's q-derivative); the compiled engine takes
    the beam."""
    from flexmbs.engine import unsupported_reason

    system = System(_cantilever(3, [0.0, 0.3, -1.0]))
    rng = np.random.default_rng(3)
    q = system.assemble() + 0.05 * rng.normal(size=system.n_q)
    qd, qdd = rng.normal(size=(2, system.n_q))
    lam = rng.normal(size=system.n_c)
    k_t, _ = system.residual_tangents(q, qd, qdd, lam, sparse=False)
    fd = np.zeros_like(k_t)
    for j in range(system.n_q):
        dq = np.zeros(system.n_q)
        dq[j] = 1e-7
        fd[:, j] = (system.dynamic_residual(q + dq, qd, qdd, lam)[0]
                    - system.dynamic_residual(q - dq, qd, qdd, lam)[0]) / 2e-7
    np.testing.assert_allclose(k_t, fd, rtol=0, atol=1e-6 * np.max(np.abs(k_t)))
    assert unsupported_reason(system) is None


def test_energy_of_the_system_is_the_strain_energy_of_its_elements():
    """A uniformly bent beam (nodes on an arc of curvature κ about the section y axis):
    the potential energy is ½ EI_y κ² L (independent: the beam formula)."""
    system = System(_cantilever(8))
    q = system.q0.copy()
    kappa = 1.3
    for k in range(9):
        s = k / 8
        sl = system.slices[system.body_index(f"arm/{k + 1}")]
        bend = expm(skew([0, kappa * s, 0]))
        q[sl][:3] = [0.5, np.sin(kappa * s) / kappa, -(1 - np.cos(kappa * s)) / kappa]
        q[sl][3:7] = quaternion_from_matrix(FRAME @ bend)
    kinetic, potential = system.energy(q, np.zeros_like(q))
    assert kinetic == 0.0
    np.testing.assert_allclose(potential, 0.5 * 1.0 * kappa**2 * 1.0, rtol=1e-12)


def test_the_elastica_case_file_loads_and_bends_as_the_elastica():
    """cases/elastica.toml (PL²/EI = 5, 16 elements) against Mattiasson's tip
    displacements, within the 16 elements' discretization error (6e-4 L)."""
    case = load_case(CASES / "elastica.toml")
    system = System(case.model)
    rest = static_equilibrium(system)
    u = 1.0 - rest.coordinate("strip/17.x")
    w = -rest.coordinate("strip/17.z")
    np.testing.assert_allclose([u, w], [0.38763, 0.71379], rtol=0, atol=6e-4)


def test_a_case_file_material_may_be_written_as_flexmbs_beam_takes_it(tmp_path):
    """`material = "E,nu,rho"` (as `flexmbs beam --material`) is the same material as
    the table {E, nu, rho}; a bad one is refused naming the key."""
    text = (CASES / "elastica.toml").read_text()
    assert 'material = "steel"' in text
    bodies = {}
    for label, material in (("text", '"7.0e10,0.33,2700"'),
                            ("table", "{ E = 7.0e10, nu = 0.33, rho = 2700.0 }"),
                            ("steel", '"steel"')):
        path = tmp_path / f"{label}.toml"
        path.write_text(text.replace('material = "steel"', f"material = {material}"))
        bodies[label] = [b for b in load_case(path).model.bodies.values()
                         if b.name.startswith("strip/")]
    assert len(bodies["text"]) == 17
    for one, other in zip(bodies["text"], bodies["table"], strict=True):
        assert one.mass == other.mass and np.array_equal(one.inertia, other.inertia)
    assert bodies["text"][0].mass != bodies["steel"][0].mass  # not the default steel
    path = tmp_path / "bad.toml"
    path.write_text(text.replace('material = "steel"', 'material = "2.1e11,0.3"'))
    with pytest.raises(FlexmbsError, match=r"material.*'2.1e11,0.3'"):
        load_case(path)


def test_the_docs_example_builds_the_beam_it_describes():
    import re

    text = (CASES.parent / "docs" / "nonlinear_beam.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    namespace = {}
    exec(compile(block, "nonlinear_beam.md", "exec"), namespace)
    model = namespace["model"]
    assert model.markers["arm.tip"].body == "arm/17"
    assert model.markers["arm.root"].body == "arm/1"
    total = sum(model.bodies[f"arm/{k}"].mass for k in range(1, 18))
    np.testing.assert_allclose(total, 7850.0 * 0.02 * 0.002 * 1.0, rtol=1e-12)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 6), st.lists(st.floats(-3, 3), min_size=9, max_size=9))
def test_a_rigid_motion_has_the_kinetic_energy_of_the_rod(n, numbers):
    """A straight beam moving rigidly (root velocity v, angular velocity ω, any axis and
    any number of elements): the kinetic energy of the node bodies and the elements'
    consistent inertia is the rod's, ½ ρA ∫|v + ω × s a|² ds + ½ ρL ω̄ᵀ diag(I_p, I_y,
    I_z) ω̄ (ω̄ in the section frame), to round-off. The lumped masses alone miss the
    rotation's ρA L³/3 by O(1/n²)."""
    v, omega, axis = (np.array(numbers[k:k + 3]) for k in (0, 3, 6))
    if np.linalg.norm(axis) < 0.1:
        axis = np.array([1.0, 0.0, 0.0])
    section = BeamSection(A=0.01, Iy=1e-6, Iz=2e-6, J=3e-6)
    material = Material(E=1e6, nu=0.3, rho=7.0)
    length = 2.0
    b = ModelBuilder()
    up = [0.0, 1.0, 0.0] if abs(axis[2]) > 0.9 * np.linalg.norm(axis) else [0.0, 0.0, 1.0]
    b.add_nonlinear_beam("arm", length, n, section, material, axis=axis, up=up,
                         velocity=v, angular_velocity=omega)
    system = System(b.finalize())
    kinetic, _ = system.energy(system.q0, system.qd0)
    a = axis / np.linalg.norm(axis)
    rho_a = material.rho * section.A
    translation = 0.5 * rho_a * quad_vec(
        lambda s: np.sum((v + np.cross(omega, s * a)) ** 2), 0.0, length)[0]
    p = system.q0[system.slices[system.body_index("arm/1")]][3:7]
    frame = ref.rotation(p[None])[0]
    w_bar = frame.T @ omega
    spin = 0.5 * material.rho * length * w_bar @ np.diag([section.Ip, section.Iy,
                                                          section.Iz]) @ w_bar
    np.testing.assert_allclose(kinetic, translation + spin, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_own_weight_deflects_the_cantilever_as_beam_theory_says_with_any_elements(n):
    """A cantilever under a small own weight q = ρAg (deflection 1e-4 L): the tip
    deflection is qL⁴/8EI + qL²/2kGA (Timoshenko) for any number of elements, to 2e-8
    (the consistent gravity loads of the Hermite centre line and the nodally exact
    stiffness; measured −1.2e-8, the geometric nonlinearity at this deflection)."""
    b = ModelBuilder(gravity=(0.0, 0.0, -1e-3))
    b.add_nonlinear_beam("arm", 1.0, n, BeamSection(A=1.0, Iy=1e-6, Iz=2e-6, J=2e-6,
                                                    ky=1.0, kz=1.0),
                         Material(E=1e6, nu=0.0, rho=1.0))
    b.add_marker("ground", "clamp")
    b.add_marker("arm", "root", node="root")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    rest = static_equilibrium(System(b.finalize()))
    load, ei, ga = 1e-3, 1.0, 5e5
    np.testing.assert_allclose(-rest.coordinate(f"arm/{n + 1}.z"),
                               load / (8 * ei) + load / (2 * ga), rtol=2e-8)


def test_section_forces_and_fibre_stresses_of_a_tip_loaded_cantilever():
    """A small transverse tip load P (deflection 1e-4 L) on a rectangular steel strip:
    each element's bending moment is P (L − x) at its middle to 1e-5, the shear force
    P, and its largest fibre stress M c/I_y (c half the height) — beam theory."""
    from flexmbs.elements.nonlinear_beam import BeamElements

    section, load, n = BeamSection.rectangle(0.02, 0.01), 0.1, 8
    b = ModelBuilder()
    b.add_nonlinear_beam("arm", 1.0, n, section, "steel")
    b.add_marker("ground", "clamp")
    b.add_marker("arm", "root", node="root")
    b.add_marker("arm", "tip", node="tip")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    b.add_point_force("load", "arm.tip", [0.0, 0.0, -load])
    system = System(b.finalize())
    q = static_equilibrium(system).q
    beam = next(f for f in system.model.forces if isinstance(f, BeamElements))
    forces, moments = beam.section_forces(system, q)
    middle = (np.arange(n) + 0.5) / n
    np.testing.assert_allclose(moments[:, 1], load * (1.0 - middle), rtol=1e-5)
    np.testing.assert_allclose(np.abs(forces[:, 2]), load, rtol=1e-5)
    sigma = np.max(np.abs(beam.fibre_stresses(system, q)), axis=1)
    np.testing.assert_allclose(sigma, load * (1.0 - middle) * 0.005 / section.Iy, rtol=1e-5)


def test_a_run_carries_the_beam_forces_to_its_outputs_and_the_paraview_export(tmp_path):
    """The section forces recomputed from a results file (flexmbs.post.beam_forces)
    equal the element kind's at the recorded states, and the ParaView export carries
    their node means on the beam's node points."""
    import pyvista as pv

    from flexmbs.elements.nonlinear_beam import BeamElements
    from flexmbs.integrators.simulate import simulate
    from flexmbs.post import beam_forces
    from flexmbs.post.export import export

    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_nonlinear_beam("arm", 1.0, 4, BeamSection.rectangle(0.02, 0.01), "steel")
    b.add_marker("ground", "clamp")
    b.add_marker("arm", "root", node="root")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    system = System(b.finalize())
    res = simulate(system, 0.02, 0.001, "generalized-alpha", output_every=10)
    res.save(tmp_path / "run.res.h5")
    res = type(res).load(tmp_path / "run.res.h5")
    beam = next(f for f in system.model.forces if isinstance(f, BeamElements))
    n, m = beam_forces.section_forces(res, "arm")
    ref_n, ref_m = beam.section_forces(system, np.asarray(res.q)[-1])
    np.testing.assert_allclose(n[-1], ref_n, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(m[-1], ref_m, rtol=1e-12, atol=1e-9)
    export(res, tmp_path / "run.pvd")
    grid = pv.read(sorted((tmp_path / "run_vtu").glob("*.vtu"))[-1])
    moments = grid.point_data["beam_moment"]
    nodal = beam_forces.nodal(m)[-1]
    for row in nodal:  # every node's mean moment is on one of the scene's points
        assert np.min(np.linalg.norm(moments - row, axis=1)) < 1e-9 * np.abs(nodal).max()
    assert grid.point_data["beam_stress"].max() > 0.0


def test_renders_colour_a_nonlinear_beam_by_its_fibre_stress(tmp_path):
    """``field="stress"`` on a run with a nonlinear beam and no stress modes: the colour
    range tops at the largest node stress of the outputs [MPa], and the drawn tube's
    colours are its nodes' stresses, largest at the clamped root."""
    from flexmbs.integrators.simulate import simulate
    from flexmbs.post.animate import ResultAnimation, frame_info
    from flexmbs.post.beam_forces import node_stress

    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_nonlinear_beam("arm", 1.0, 6, BeamSection.rectangle(0.02, 0.01), "steel")
    b.add_marker("ground", "clamp")
    b.add_marker("arm", "root", node="root")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    res = simulate(System(b.finalize()), 0.03, 0.001, "generalized-alpha", output_every=10)
    info = frame_info(res, field="stress")
    peaks = [node_stress(res, "arm", k).max() for k in range(len(res.t))]
    np.testing.assert_allclose(info.clim[1], 1e-6 * max(peaks), rtol=1e-12)
    animation = ResultAnimation(res, field="stress", window_size=(320, 240))
    try:
        colours = animation.scene.meshes["beam:arm"].point_data["colour"]
        last = 1e-6 * node_stress(res, "arm", 0)
        np.testing.assert_allclose([colours.min(), colours.max()], [last.min(), last.max()])
        animation.image(len(res.t) - 1)
        colours = animation.scene.meshes["beam:arm"].point_data["colour"]
        last = 1e-6 * node_stress(res, "arm", len(res.t) - 1)
        np.testing.assert_allclose([colours.min(), colours.max()], [last.min(), last.max()])
        assert last[0] == last.max()
    finally:
        animation.close()
