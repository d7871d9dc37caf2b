"""Tests of the built-in 3-D beam element (flexmbs.modal.fe.beam).

References are independent of the element code: rigid-body kinematics, the inertia
tensor of a prism, closed-form static deflections, the Euler–Bernoulli characteristic
equations (roots found here with brentq), bar/shaft wave solutions and the closed-form
simply-supported Timoshenko frequencies.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.optimize import brentq

from flexmbs.errors import ValidationError
from flexmbs.modal.fe.beam import (
    BeamSection,
    Material,
    beam_element_matrices,
    beam_local_frame,
    straight_beam,
)

STEEL = Material.steel()
# 20 mm along local y, 10 mm along local z: Iz = 4 Iy, so the two bending planes differ.
RECT = BeamSection.rectangle(0.02, 0.01)
LENGTH = 1.0
THEORIES = ["euler-bernoulli", "timoshenko"]

# DOF groups in the local frame (position within the node's 6 DOFs).
GROUPS = {"axial": (0,), "torsion": (3,), "xy": (1, 5), "xz": (2, 4)}


# ---------------------------------------------------------------------- references
def _roots(func, n: int, first: float) -> np.ndarray:
    """First n roots of func, one in each bracket [first + k pi - 1, first + k pi + 1]."""
    return np.array([brentq(func, first + k * math.pi - 1.0, first + k * math.pi + 1.0,
                            xtol=1e-14) for k in range(n)])


CANTILEVER_BL = _roots(lambda x: math.cos(x) * math.cosh(x) + 1.0, 3, 0.5 * math.pi)
FREE_FREE_BL = _roots(lambda x: math.cos(x) * math.cosh(x) - 1.0, 3, 1.5 * math.pi)


def _eb_omega(beta_l: np.ndarray, inertia: float, length: float = LENGTH,
              section: BeamSection = RECT) -> np.ndarray:
    """Euler–Bernoulli omega = (beta L)^2 sqrt(E I / (rho A L^4)) [rad/s]."""
    return beta_l**2 * np.sqrt(STEEL.E * inertia / (STEEL.rho * section.A * length**4))


def _timoshenko_ss_omega(n: int, length: float, inertia: float, k: float,
                         section: BeamSection, rotary: bool) -> float:
    """Lowest omega of mode n of a simply supported Timoshenko beam (closed form).

    With w = W sin(a x), psi = P cos(a x), a = n pi / L, the equations
    rho A w'' = k G A (w'' - psi') and rho I psi'' = E I psi'' + k G A (w' - psi) give
    (kGA a^2 - rho A w^2)(E I a^2 + kGA - rho I w^2) = (kGA a)^2; solve for w^2.
    """
    a = n * math.pi / length
    kga = k * STEEL.G * section.A
    ei = STEEL.E * inertia
    rho_a = STEEL.rho * section.A
    rho_i = STEEL.rho * inertia if rotary else 0.0
    # rho_a rho_i x^2 - (rho_a (EI a^2 + kGA) + rho_i kGA a^2) x + kGA EI a^4 = 0
    c2 = rho_a * rho_i
    c1 = -(rho_a * (ei * a**2 + kga) + rho_i * kga * a**2)
    c0 = kga * ei * a**4
    x = -c0 / c1 if c2 == 0.0 else min(np.roots([c2, c1, c0]).real)
    return math.sqrt(x)


def _rigid_modes(nodes: np.ndarray, about: np.ndarray) -> np.ndarray:
    """6 rigid-body DOF vectors (columns): 3 translations, 3 rotations about ``about``."""
    n = nodes.shape[0]
    out = np.zeros((6 * n, 6))
    for k in range(3):
        out[k::6, k] = 1.0
        theta = np.zeros(3)
        theta[k] = 1.0
        vel = np.cross(theta, nodes - about)
        for j in range(3):
            out[j::6, 3 + k] = vel[:, j]
        out[3 + k::6, 3 + k] = 1.0
    return out


# ---------------------------------------------------------------------- modal helpers
def _modes(model, fixed_dofs=(), count: int = 30):
    """Dense generalized eigen-solution with ``fixed_dofs`` deleted.

    Returns the lowest ``count`` omega [rad/s] (ascending) and the full-length
    mass-normalised mode shapes. (High modes of different DOF groups can be nearly
    degenerate, so only low modes are classified.)
    """
    k = model.stiffness.toarray()
    m = model.mass.toarray()
    keep = np.setdiff1d(np.arange(model.n_dof), np.asarray(fixed_dofs, dtype=int))
    count = min(count, keep.size)
    lam, vec = sl.eigh(k[np.ix_(keep, keep)], m[np.ix_(keep, keep)],
                       subset_by_index=[0, count - 1])
    phi = np.zeros((model.n_dof, len(lam)))
    phi[keep] = vec
    return np.sqrt(np.clip(lam, 0.0, None)), phi


def _group_fractions(model, phi: np.ndarray) -> dict[str, np.ndarray]:
    """Kinetic-energy fraction of each mode in each local DOF group."""
    rot = np.asarray(model.metadata["local_frame"])
    q = np.kron(np.eye(2 * model.n_nodes), rot)  # global -> local, per 3-vector
    m_loc = q @ model.mass.toarray() @ q.T
    phi_loc = q @ phi
    total = np.einsum("im,ij,jm->m", phi_loc, m_loc, phi_loc)
    out = {}
    for name, positions in GROUPS.items():
        mask = np.isin(np.arange(model.n_dof) % 6, positions)
        sub = phi_loc[mask]
        out[name] = np.einsum("im,ij,jm->m", sub, m_loc[np.ix_(mask, mask)], sub) / total
    return out


def _classify(model, phi: np.ndarray) -> np.ndarray:
    """Label each mode by its dominant DOF group; asserts the groups are uncoupled."""
    frac = _group_fractions(model, phi)
    names = list(frac)
    table = np.vstack([frac[n] for n in names])
    best = np.argmax(table, axis=0)
    assert np.all(table.max(axis=0) > 0.999), "modes mix DOF groups"
    return np.array(names)[best]


def _first(labels: np.ndarray, omega: np.ndarray, group: str, count: int) -> np.ndarray:
    picked = omega[labels == group][:count]
    assert picked.size == count, f"only {picked.size} {group} modes found"
    return picked


def _clamped(model, node: int = 0) -> np.ndarray:
    return model.node_dofs([node])


# ---------------------------------------------------------------------- element level
@pytest.mark.parametrize("theory", THEORIES)
@pytest.mark.parametrize("rotary", [False, True])
def test_element_rigid_body_motions_give_zero_force(theory, rotary):
    length = 0.3
    ke, me = beam_element_matrices(length, RECT, STEEL, theory, rotary_inertia=rotary)
    nodes = np.array([[0.0, 0.0, 0.0], [length, 0.0, 0.0]])
    rigid = _rigid_modes(nodes, about=nodes[0])
    scale = np.abs(ke).max() * np.abs(rigid).max()
    assert_allclose(ke @ rigid, 0.0, rtol=0, atol=1e-13 * scale)
    # and exactly six zero-energy modes
    eig = np.linalg.eigvalsh(ke)
    assert np.sum(np.abs(eig) < 1e-10 * eig.max()) == 6
    assert eig[6] > 1e-8 * eig.max()
    assert eig[0] > -1e-10 * eig.max()
    assert np.linalg.eigvalsh(me)[0] > 0.0


@pytest.mark.parametrize("theory", THEORIES)
@pytest.mark.parametrize("rotary", [False, True])
def test_element_symmetric_and_rigid_body_kinetic_energy(theory, rotary):
    length = 0.3
    ke, me = beam_element_matrices(length, RECT, STEEL, theory, rotary_inertia=rotary)
    assert_allclose(ke, ke.T, rtol=0, atol=1e-14 * np.abs(ke).max())
    assert_allclose(me, me.T, rtol=0, atol=1e-14 * np.abs(me).max())
    nodes = np.array([[0.0, 0.0, 0.0], [length, 0.0, 0.0]])
    rigid = _rigid_modes(nodes, about=np.array([0.5 * length, 0.0, 0.0]))
    energy = rigid.T @ me @ rigid  # = rigid-body mass matrix about the centroid
    rho, a, r = STEEL.rho, RECT.A, float(rotary)
    expected = np.diag([
        rho * a * length, rho * a * length, rho * a * length,
        rho * RECT.Ip * length,
        rho * (a * length**3 / 12.0 + r * RECT.Iy * length),
        rho * (a * length**3 / 12.0 + r * RECT.Iz * length),
    ])
    assert_allclose(energy, expected, rtol=0, atol=1e-12 * expected.max())


@pytest.mark.parametrize("theory", THEORIES)
def test_single_element_cantilever_static_deflection_is_exact(theory):
    """Tip loads on a one-element cantilever: the element is exact for these cases."""
    length = 0.4
    model = straight_beam(length, 1, RECT, STEEL, theory=theory)
    k = model.stiffness.toarray()[6:, 6:]
    load = np.array([3.0, 5.0, 7.0, 11.0, 0.0, 0.0])  # Fx, Fy, Fz [N], Mx [N m]
    u = np.linalg.solve(k, load)
    E, G = STEEL.E, STEEL.G
    shear = theory == "timoshenko"
    dy = load[1] * length**3 / (3 * E * RECT.Iz) + shear * load[1] * length / (
        RECT.ky * G * RECT.A)
    dz = load[2] * length**3 / (3 * E * RECT.Iy) + shear * load[2] * length / (
        RECT.kz * G * RECT.A)
    expected = np.array([
        load[0] * length / (E * RECT.A),
        dy,
        dz,
        load[3] * length / (G * RECT.J),
        -load[2] * length**2 / (2 * E * RECT.Iy),  # ry = -dw/dx
        load[1] * length**2 / (2 * E * RECT.Iz),  # rz = +dv/dx
    ])
    assert_allclose(u, expected, rtol=1e-10, atol=0)


def test_euler_bernoulli_mass_matches_textbook_hermite_matrix():
    length = 0.25
    _, me = beam_element_matrices(length, RECT, STEEL)
    L = length
    textbook = STEEL.rho * RECT.A * L / 420.0 * np.array([
        [156, 22 * L, 54, -13 * L],
        [22 * L, 4 * L**2, 13 * L, -3 * L**2],
        [54, 13 * L, 156, -22 * L],
        [-13 * L, -3 * L**2, -22 * L, 4 * L**2],
    ])
    xy = [1, 5, 7, 11]
    assert_allclose(me[np.ix_(xy, xy)], textbook, rtol=1e-14, atol=0)
    flip = np.diag([1.0, -1.0, 1.0, -1.0])
    xz = [2, 4, 8, 10]
    assert_allclose(me[np.ix_(xz, xz)], flip @ textbook @ flip, rtol=1e-14, atol=0)


def test_timoshenko_tends_to_euler_bernoulli_for_rigid_shear():
    stiff_shear = BeamSection(A=RECT.A, Iy=RECT.Iy, Iz=RECT.Iz, J=RECT.J, ky=1e12, kz=1e12)
    eb = beam_element_matrices(0.3, stiff_shear, STEEL, "euler-bernoulli", True)
    ti = beam_element_matrices(0.3, stiff_shear, STEEL, "timoshenko", True)
    for a, b in zip(eb, ti, strict=True):
        assert_allclose(b, a, rtol=0, atol=1e-9 * np.abs(a).max())


# ---------------------------------------------------------------------- geometry, assembly
def test_local_frame_convention():
    assert_allclose(beam_local_frame(), np.eye(3), rtol=0, atol=0)
    rot = beam_local_frame(axis=(0, 2, 0), up=(0, 0, 1))
    # local x = +Y, local z = +Z, local y = z × x = -X
    assert_allclose(rot, [[0, 1, 0], [-1, 0, 0], [0, 0, 1]], rtol=0, atol=1e-15)
    # up needs only a perpendicular component
    rot2 = beam_local_frame(axis=(1, 1, 0), up=(1, 1, 1))
    assert_allclose(rot2 @ rot2.T, np.eye(3), rtol=0, atol=1e-15)
    assert_allclose(np.linalg.det(rot2), 1.0, rtol=1e-15, atol=0)
    assert_allclose(rot2[2], [0, 0, 1], rtol=0, atol=1e-15)


def test_beam_along_global_y_bends_in_the_documented_directions():
    """Axis +Y, up +Z: Iz (stiff, 20 mm side) acts along global -X, Iy along global Z."""
    length = 0.5
    model = straight_beam(length, 4, RECT, STEEL, axis=(0, 1, 0), up=(0, 0, 1))
    tip = model.node_dofs(model.node_sets["tip"])
    free = np.setdiff1d(np.arange(model.n_dof), _clamped(model))
    k = model.stiffness.toarray()[np.ix_(free, free)]
    force = np.zeros(model.n_dof)
    force[tip[0]] = -1.0  # -X = local +y
    force[tip[2]] = 1.0  # +Z = local +z
    u = np.zeros(model.n_dof)
    u[free] = np.linalg.solve(k, force[free])
    expected_x = -length**3 / (3 * STEEL.E * RECT.Iz)
    expected_z = length**3 / (3 * STEEL.E * RECT.Iy)
    assert_allclose(u[tip[:3]], [expected_x, 0.0, expected_z], rtol=1e-10,
                    atol=1e-12 * abs(expected_z))
    # first cantilever mode is the weak plane, moving along global Z
    _, phi = _modes(model, _clamped(model))
    tip_motion = np.abs(phi[tip[:3], 0])
    assert np.argmax(tip_motion) == 2


def test_structure_node_sets_cells_and_metadata():
    model = straight_beam(2.0, 5, RECT, STEEL, start=(1, 2, 3), axis=(0, 0, -3),
                          up=(1, 0, 0), theory="Timoshenko", rotary_inertia=True)
    assert model.dofs_per_node == 6
    assert model.n_nodes == 6
    assert model.stiffness.shape == (36, 36)
    expected_nodes = np.array([[1.0, 2.0, 3.0 - 0.4 * i] for i in range(6)])
    assert_allclose(model.nodes, expected_nodes, rtol=0, atol=1e-15)
    assert model.node_sets["root"].tolist() == [0]
    assert model.node_sets["tip"].tolist() == [5]
    assert model.node_sets["all"].tolist() == list(range(6))
    assert model.cells["line"].tolist() == [[i, i + 1] for i in range(5)]
    meta = model.metadata
    assert meta["generator"] == "flexmbs.modal.fe.beam"
    assert meta["length"] == 2.0
    assert meta["n_elements"] == 5
    assert meta["theory"] == "timoshenko"
    assert meta["rotary_inertia"] is True
    assert meta["section"]["Iy"] == RECT.Iy
    assert meta["material"]["E"] == STEEL.E
    assert meta["material"]["name"] == "steel"
    assert_allclose(meta["axis"], [0, 0, -1], rtol=0, atol=0)
    assert_allclose(meta["start"], [1, 2, 3], rtol=0, atol=0)


unit_vectors = st.tuples(*[st.floats(-1.0, 1.0, allow_nan=False)] * 3).filter(
    lambda v: np.linalg.norm(v) > 0.1)


@settings(max_examples=30, deadline=None)
@given(axis=unit_vectors, up=unit_vectors, n_elements=st.integers(1, 6),
       length=st.floats(0.05, 5.0), rotary=st.booleans(),
       theory=st.sampled_from(THEORIES))
def test_assembled_rigid_body_inertia_along_random_axis(axis, up, n_elements, length,
                                                        rotary, theory):
    axis_u = np.asarray(axis) / np.linalg.norm(axis)
    up_u = np.asarray(up) / np.linalg.norm(up)
    if np.linalg.norm(np.cross(axis_u, up_u)) < 0.05:
        return  # (nearly) parallel: rejected by design, tested separately
    model = straight_beam(length, n_elements, RECT, STEEL, start=(0.3, -0.2, 0.1),
                          axis=axis, up=up, theory=theory, rotary_inertia=rotary)
    centroid = model.nodes.mean(axis=0)
    rigid = _rigid_modes(model.nodes, about=centroid)
    mrb = rigid.T @ model.mass.toarray() @ rigid
    rho, a = STEEL.rho, RECT.A
    mass = rho * a * length
    assert_allclose(np.diag(mrb)[:3], mass, rtol=1e-12, atol=0)
    # prism inertia tensor about the centroid, in local axes, rotated to global
    rot = beam_local_frame(axis, up)
    i_loc = np.diag([rho * RECT.Ip * length,
                     rho * (a * length**3 / 12 + rotary * RECT.Iy * length),
                     rho * (a * length**3 / 12 + rotary * RECT.Iz * length)])
    expected = np.zeros((6, 6))
    expected[:3, :3] = mass * np.eye(3)
    expected[3:, 3:] = rot.T @ i_loc @ rot
    assert_allclose(mrb, expected, rtol=0, atol=1e-11 * expected.max())
    force = model.stiffness @ rigid
    scale = abs(model.stiffness).max() * np.abs(rigid).max()
    assert_allclose(force, 0.0, rtol=0, atol=1e-12 * scale)


def test_frequencies_do_not_depend_on_beam_orientation():
    rng = np.random.default_rng(7)
    axis = rng.normal(size=3)
    up = rng.normal(size=3)
    ref, _ = _modes(straight_beam(LENGTH, 8, RECT, STEEL), count=54)
    turned, _ = _modes(straight_beam(LENGTH, 8, RECT, STEEL, axis=axis, up=up), count=54)
    assert_allclose(turned[6:], ref[6:], rtol=1e-9, atol=0)
    assert_allclose(turned[:6], 0.0, rtol=0, atol=1e-3 * ref[6])


def test_hundred_thousand_elements_assemble_with_exact_mass():
    """Large assembly stays exact (timing lives in benchmarks/, not in tests)."""
    model = straight_beam(10.0, 100_000, RECT, STEEL, axis=(1, 2, 3),
                          theory="timoshenko", rotary_inertia=True)
    assert model.n_dof == 6 * 100_001
    ones = np.zeros(model.n_dof)
    ones[0::6] = 1.0
    assert_allclose(ones @ (model.mass @ ones), STEEL.rho * RECT.A * 10.0, rtol=1e-10, atol=0)


# ---------------------------------------------------------------------- frequencies
def test_reference_roots_match_tabulated_values():
    assert_allclose(CANTILEVER_BL, [1.87510, 4.69409, 7.85476], rtol=0, atol=1e-5)
    assert_allclose(FREE_FREE_BL, [4.73004, 7.85320, 10.99561], rtol=0, atol=1e-5)


def test_cantilever_bending_axial_and_torsion_frequencies():
    model = straight_beam(LENGTH, 40, RECT, STEEL)
    omega, phi = _modes(model, _clamped(model))
    labels = _classify(model, phi)
    assert_allclose(_first(labels, omega, "xz", 3), _eb_omega(CANTILEVER_BL, RECT.Iy),
                    rtol=5e-3, atol=0)
    assert_allclose(_first(labels, omega, "xy", 3), _eb_omega(CANTILEVER_BL, RECT.Iz),
                    rtol=5e-3, atol=0)
    odd = np.array([1.0, 3.0])
    axial = odd * math.pi / (2 * LENGTH) * math.sqrt(STEEL.E / STEEL.rho)
    assert_allclose(_first(labels, omega, "axial", 2), axial, rtol=5e-3, atol=0)
    torsion = odd * math.pi / (2 * LENGTH) * math.sqrt(STEEL.G * RECT.J / (STEEL.rho * RECT.Ip))
    assert_allclose(_first(labels, omega, "torsion", 2), torsion, rtol=5e-3, atol=0)


def test_free_free_frequencies():
    model = straight_beam(LENGTH, 40, RECT, STEEL)
    omega, phi = _modes(model)
    first_bending = _eb_omega(FREE_FREE_BL[:1], RECT.Iy)[0]
    # rigid modes: zero up to eigensolver round-off, ~eps * omega_max^2 / omega
    assert np.all(omega[:6] < 1e-3 * first_bending)
    assert omega[6] > 0.5 * first_bending
    labels = _classify(model, phi[:, 6:])
    elastic = omega[6:]
    assert_allclose(_first(labels, elastic, "xz", 3), _eb_omega(FREE_FREE_BL, RECT.Iy),
                    rtol=5e-3, atol=0)
    assert_allclose(_first(labels, elastic, "xy", 3), _eb_omega(FREE_FREE_BL, RECT.Iz),
                    rtol=5e-3, atol=0)
    axial = math.pi / LENGTH * math.sqrt(STEEL.E / STEEL.rho)
    assert_allclose(_first(labels, elastic, "axial", 1), axial, rtol=5e-3, atol=0)


def test_cantilever_mesh_convergence_is_fourth_order():
    exact = _eb_omega(CANTILEVER_BL[:1], RECT.Iy)[0]
    counts = np.array([2, 4, 8, 16])
    errors = []
    for n in counts:
        model = straight_beam(LENGTH, int(n), RECT, STEEL)
        omega, phi = _modes(model, _clamped(model))
        errors.append(_first(_classify(model, phi), omega, "xz", 1)[0] / exact - 1.0)
    errors = np.array(errors)
    assert np.all(errors > 0)  # consistent mass + conforming element: upper bound
    assert np.all(np.diff(errors) < 0)
    slope = np.polyfit(np.log(1.0 / counts), np.log(errors), 1)[0]
    assert slope > 3.0, f"observed order {slope:.2f}"


@pytest.mark.parametrize("plane, inertia", [("xz", RECT.Iy), ("xy", RECT.Iz)])
def test_timoshenko_matches_euler_bernoulli_for_slender_beam(plane, inertia):
    result = {}
    for theory in THEORIES:
        model = straight_beam(LENGTH, 40, RECT, STEEL, theory=theory)
        omega, phi = _modes(model, _clamped(model))
        result[theory] = _first(_classify(model, phi), omega, plane, 1)[0]
    assert result["timoshenko"] < result["euler-bernoulli"]
    assert_allclose(result["timoshenko"], result["euler-bernoulli"], rtol=1e-3, atol=0)


def _simply_supported(model) -> np.ndarray:
    """Pin both ends in translation; stop axial drift and spin at the root."""
    root, tip = model.node_dofs([0]), model.node_dofs([model.n_nodes - 1])
    return np.concatenate([root[:4], tip[1:3]])


@pytest.mark.parametrize("rotary", [False, True])
@pytest.mark.parametrize("plane, inertia, k", [("xz", RECT.Iy, RECT.kz),
                                               ("xy", RECT.Iz, RECT.ky)])
def test_stubby_simply_supported_timoshenko_matches_closed_form(rotary, plane, inertia, k):
    length = 0.05  # L/h = 5 in the x-z plane (h = 10 mm), 2.5 in the x-y plane
    model_t = straight_beam(length, 40, RECT, STEEL, theory="timoshenko",
                            rotary_inertia=rotary)
    omega, phi = _modes(model_t, _simply_supported(model_t))
    fe = _first(_classify(model_t, phi), omega, plane, 2)
    ref = [_timoshenko_ss_omega(n, length, inertia, k, RECT, rotary) for n in (1, 2)]
    assert_allclose(fe, ref, rtol=1e-3, atol=0)
    eb = (np.array([1.0, 2.0]) * math.pi) ** 2 * math.sqrt(
        STEEL.E * inertia / (STEEL.rho * RECT.A * length**4))
    # shear (and rotary inertia) lower the frequency: by >= 4 % here for mode 1
    assert np.all(fe < 0.96 * eb)
    model_eb = straight_beam(length, 40, RECT, STEEL)
    omega_eb, phi_eb = _modes(model_eb, _simply_supported(model_eb))
    fe_eb = _first(_classify(model_eb, phi_eb), omega_eb, plane, 2)
    assert_allclose(fe_eb, eb, rtol=1e-4, atol=0)


# ---------------------------------------------------------------------- bad input
BAD_INPUTS = [
    (lambda: BeamSection(A=-1.0, Iy=1.0, Iz=1.0, J=1.0), "BeamSection.A"),
    (lambda: BeamSection(A=1.0, Iy=float("nan"), Iz=1.0, J=1.0), "BeamSection.Iy"),
    (lambda: BeamSection(A=1.0, Iy=1.0, Iz=0.0, J=1.0), "BeamSection.Iz"),
    (lambda: BeamSection(A=1.0, Iy=1.0, Iz=1.0, J=float("inf")), "BeamSection.J"),
    (lambda: BeamSection(A=1.0, Iy=1.0, Iz=1.0, J=1.0, Ip=-2.0), "BeamSection.Ip"),
    (lambda: BeamSection(A=1.0, Iy=1.0, Iz=1.0, J=1.0, ky=0.0), "BeamSection.ky"),
    (lambda: BeamSection(A="big", Iy=1.0, Iz=1.0, J=1.0), "BeamSection.A"),
    (lambda: BeamSection.rectangle(0.0, 0.01), "width_y"),
    (lambda: BeamSection.rectangle(0.01, -1.0), "height_z"),
    (lambda: BeamSection.circle(-0.01), "d"),
    (lambda: BeamSection.tube(0.02, 0.011), "wall_thickness"),
    (lambda: BeamSection.tube(-0.02, 0.001), "outer_diameter"),
    (lambda: Material(E=0.0, nu=0.3, rho=7850.0), "Material.E"),
    (lambda: Material(E=1e9, nu=0.6, rho=7850.0), "Material.nu"),
    (lambda: Material(E=1e9, nu=-1.0, rho=7850.0), "Material.nu"),
    (lambda: Material(E=1e9, nu=0.3, rho=float("nan")), "Material.rho"),
    (lambda: straight_beam(0.0, 4, RECT, STEEL), "length"),
    (lambda: straight_beam(1.0, 0, RECT, STEEL), "n_elements"),
    (lambda: straight_beam(1.0, 2.5, RECT, STEEL), "n_elements"),
    (lambda: straight_beam(1.0, 4, RECT, STEEL, axis=(0, 0, 0)), "axis"),
    (lambda: straight_beam(1.0, 4, RECT, STEEL, axis=(1, 0)), "axis"),
    (lambda: straight_beam(1.0, 4, RECT, STEEL, axis=(0, 0, 2), up=(0, 0, -1)), "up"),
    (lambda: straight_beam(1.0, 4, RECT, STEEL, up=(0, 0, 0)), "up"),
    (lambda: straight_beam(1.0, 4, RECT, STEEL, start=(0, float("nan"), 0)), "start"),
    (lambda: straight_beam(1.0, 4, RECT, STEEL, theory="bernoulli"), "theory"),
    (lambda: straight_beam(1.0, 4, RECT, STEEL, rotary_inertia="yes"), "rotary_inertia"),
    (lambda: straight_beam(1.0, 4, "rect", STEEL), "section"),
    (lambda: straight_beam(1.0, 4, RECT, None), "material"),
    (lambda: beam_element_matrices(-0.1, RECT, STEEL), "length"),
]


@pytest.mark.parametrize("make, name", BAD_INPUTS)
def test_bad_input_raises_validation_error_naming_the_argument(make, name):
    with pytest.raises(ValidationError, match=name):
        make()


def test_section_constructors():
    rect = BeamSection.rectangle(0.02, 0.01)
    assert_allclose([rect.A, rect.Iy, rect.Iz, rect.Ip],
                    [2e-4, 0.02 * 0.01**3 / 12, 0.01 * 0.02**3 / 12,
                     0.02 * 0.01**3 / 12 + 0.01 * 0.02**3 / 12], rtol=1e-14, atol=0)
    # exact Saint-Venant series for a 2:1 rectangle: J = beta a b^3, beta = 0.2287
    assert_allclose(rect.J, 0.2287 * 0.02 * 0.01**3, rtol=5e-3, atol=0)
    # square: J = 0.1406 a^4 (exact series value 0.14058)
    assert_allclose(BeamSection.rectangle(0.01, 0.01).J, 0.14058 * 0.01**4, rtol=5e-3, atol=0)
    assert rect.ky == rect.kz == pytest.approx(5 / 6, rel=1e-15)
    circ = BeamSection.circle(0.02)
    solid_tube = BeamSection.tube(0.02, 0.01)
    for name in ("A", "Iy", "Iz", "J", "Ip", "ky", "kz"):
        assert_allclose(getattr(solid_tube, name), getattr(circ, name), rtol=1e-14, atol=0)
    assert circ.ky == pytest.approx(6 / 7, rel=1e-15)
    thin = BeamSection.tube(1.0, 1e-4)
    assert_allclose(thin.ky, 0.5, rtol=1e-3, atol=0)
    assert_allclose(thin.J, 2 * math.pi * 0.5**3 * 1e-4, rtol=1e-3, atol=0)  # 2 pi r^3 t
    assert_allclose(Material.steel().G, 210e9 / 2.6, rtol=1e-15, atol=0)
    assert Material.aluminium().rho == 2700.0
