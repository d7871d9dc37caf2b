"""The flat four-node shell (flexmbs.modal.fe.shell_elements) against independent
references: rigid-body motions, patch tests, the thin simply supported plate's closed-form
frequencies, and a plate whose modes NX Nastran computed (pyNastran's repository)."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flexmbs.errors import ValidationError
from flexmbs.modal.eigen import eigen
from flexmbs.modal.fe import shell_elements as se

DATA = Path(__file__).parent / "data" / "nastran_real"
STEEL = dict(young=2.1e11, nu=0.3, rho=7850.0)


def grid_plate(a, b, nx, ny, jitter=0.0, seed=0):
    """(nodes (N, 3), quads (E, 4)) of an a × b plate in the xy plane, counter-clockwise
    corners; interior nodes moved by up to ``jitter`` of a cell."""
    x, y = np.meshgrid(np.linspace(0, a, nx + 1), np.linspace(0, b, ny + 1), indexing="ij")
    nodes = np.column_stack([x.ravel(), y.ravel(), np.zeros(x.size)])
    if jitter:
        rng = np.random.default_rng(seed)
        inner = ((x > 0) & (x < a) & (y > 0) & (y < b)).ravel()
        nodes[inner, :2] += jitter * rng.uniform(-1, 1, (inner.sum(), 2)) * [a / nx, b / ny]
    idx = np.arange(x.size).reshape(nx + 1, ny + 1)
    quads = np.stack([idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]],
                     axis=-1).reshape(-1, 4)
    return nodes, quads


def rigid_motions(nodes):
    """(6N, 6): the three translations and three small rotations of the nodes."""
    out = np.zeros((len(nodes), 6, 6))
    for i in range(3):
        out[:, i, i] = 1.0
        axis = np.eye(3)[i]
        out[:, :3, 3 + i] = np.cross(axis, nodes)
        out[:, 3 + i, 3 + i] = 1.0
    return out.reshape(-1, 6)


def triangles(quads):
    """Each quadrilateral cut into two triangles along its first diagonal."""
    return np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([3, 4]), st.floats(0.0, 0.05))
def test_rigid_motions_cost_no_energy_and_the_rest_does(seed, corners, warp):
    """Any convex quadrilateral or triangle in any plane, a quadrilateral warped by up to
    5 % of its size: the six rigid motions lie in the stiffness kernel (to round-off),
    give no surface stress and no geometric stiffness, and the stiffness has no other
    zero energy mode; the mass of a rigid translation is ρ t A (flat elements)."""
    rng = np.random.default_rng(seed)
    angle = np.arange(corners) * 2 * np.pi / corners + rng.uniform(-0.5, 0.5, corners)
    radius = rng.uniform(0.5, 1.5, corners)
    flat = np.column_stack([radius * np.cos(angle), radius * np.sin(angle),
                            np.zeros(corners)])
    edges = np.roll(flat, -1, axis=0) - flat
    assume(np.all(np.cross(edges, np.roll(edges, -1, axis=0))[:, 2] > 0))  # convex
    area = 0.5 * abs(np.sum(flat[:, 0] * np.roll(flat[:, 1], -1)
                            - np.roll(flat[:, 0], -1) * flat[:, 1]))
    assume(area / np.max(np.ptp(flat, axis=0)) ** 2 > 0.2)  # no sliver
    if corners == 4:  # heights ±h, alternating: the warp of a quadrilateral
        flat[:, 2] = warp * np.max(np.ptp(flat, axis=0)) * np.array([1, -1, 1, -1])
    turn, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    nodes = flat @ turn.T + rng.standard_normal(3)
    conn = np.arange(corners)[None, :]
    k_e, m_e = se.element_matrices(nodes, conn, 0.02, **STEEL)
    rigid = rigid_motions(nodes)
    scale = np.abs(k_e[0]).max()
    assert np.abs(rigid.T @ k_e[0] @ rigid).max() < 1e-12 * scale
    for motion in rigid.T:  # 1e-3 of each rigid motion: no stress, no K_G
        stress = se.surface_stresses(nodes, conn, 0.02, STEEL["young"], STEEL["nu"],
                                     1e-3 * motion)
        assert np.abs(stress).max() < 1e-10 * STEEL["young"] * 1e-3
        k_g = se.geometric_stiffness(nodes, conn, 0.02, STEEL["young"], STEEL["nu"],
                                     1e-3 * motion)
        assert abs(k_g).max() < 1e-10 * scale * 1e-3
    eig = np.linalg.eigvalsh(k_e[0])
    assert eig[6] > 1e-8 * eig[-1]  # only six zero modes
    translation = rigid[:, 0]
    if not warp or corners == 3:
        assert translation @ m_e[0] @ translation == pytest.approx(7850 * 0.02 * area,
                                                                   rel=1e-12)


def _patch_solution(nodes, quads, field, t=0.01):
    """Displacements of a jittered patch whose boundary nodes follow ``field`` (nodes →
    (N, 6)), solved for the interior: (exact, computed)."""
    k, _ = se.assemble(nodes, quads, t, **STEEL)
    exact = field(nodes).ravel()
    x, y = nodes[:, 0], nodes[:, 1]
    boundary = np.isclose(x, x.min()) | np.isclose(x, x.max()) | np.isclose(
        y, y.min()) | np.isclose(y, y.max())
    fixed = (6 * np.nonzero(boundary)[0][:, None] + np.arange(6)).ravel()
    free = np.setdiff1d(np.arange(6 * len(nodes)), fixed)
    k = k.toarray()
    u = exact.copy()
    u[free] = np.linalg.solve(k[np.ix_(free, free)], -k[np.ix_(free, fixed)] @ exact[fixed])
    return exact, u


def _membrane_field(p):
    out = np.zeros((len(p), 6))
    out[:, 0] = 1e-3 * p[:, 0] + 4e-4 * p[:, 1]
    out[:, 1] = -2e-4 * p[:, 0] + 7e-4 * p[:, 1]
    out[:, 5] = 0.5 * (-2e-4 - 4e-4)  # the membrane's rotation ½(v,x − u,y)
    return out


def test_patch_tests_constant_membrane_strain_and_constant_curvature():
    """On a distorted 4 × 4 patch the interior reproduces the exact fields of a constant
    membrane strain (u linear), with quadrilaterals and with triangles, and of a constant
    curvature with no transverse shear (w quadratic, the normal's rotations its slopes)
    with quadrilaterals: the patch tests that convergence needs. (A linear triangle
    cannot hold a quadratic w; its bending converges, see the plate below.)"""
    nodes, quads = grid_plate(1.0, 0.8, 4, 4, jitter=0.3)

    def bending(p):  # w = ½ a x² + b x y + ½ c y², β = −∇w: θ_y = β_x, θ_x = −β_y
        a, b, c = 2e-3, -1e-3, 3e-3
        out = np.zeros((len(p), 6))
        x, y = p[:, 0], p[:, 1]
        out[:, 2] = 0.5 * a * x * x + b * x * y + 0.5 * c * y * y
        out[:, 4] = -(a * x + b * y)
        out[:, 3] = c * y + b * x
        return out

    for cells, field in ((quads, _membrane_field), (triangles(quads), _membrane_field),
                         (quads, bending)):
        exact, u = _patch_solution(nodes, cells, field)
        assert np.abs(u - exact).max() < 1e-10 * np.abs(exact).max(), field.__name__


def _simply_supported_frequencies(n, a=1.0, t=1e-3, cut=False):
    """The lowest four bending frequencies [Hz] of an n × n mesh (quadrilaterals, or
    triangles when ``cut``) of a simply supported square steel plate (w = 0 on the edges,
    the membrane held)."""
    nodes, quads = grid_plate(a, a, n, n)
    k, m = se.assemble(nodes, triangles(quads) if cut else quads, t, **STEEL)
    x, y = nodes[:, 0], nodes[:, 1]
    edge = np.isclose(x, 0) | np.isclose(x, a) | np.isclose(y, 0) | np.isclose(y, a)
    fixed = np.concatenate([6 * np.arange(len(nodes)), 6 * np.arange(len(nodes)) + 1,
                            6 * np.arange(len(nodes)) + 5, 6 * np.nonzero(edge)[0] + 2])
    free = np.setdiff1d(np.arange(6 * len(nodes)), fixed)
    lam, _ = eigen(k[free][:, free], m[free][:, free], 4, 0.0, "plate")
    return np.sqrt(lam) / (2 * np.pi)


@pytest.mark.parametrize("cut", [False, True], ids=["quadrilaterals", "triangles"])
def test_thin_simply_supported_plate_converges_to_kirchhoffs_frequencies(cut):
    """A square plate with a/t = 1000, no shear locking (MITC4; MITC3 with the
    stabilized shear): the frequencies of the (1,1), (1,2), (2,1), (2,2) modes approach
    the closed form f = π/2 (m² + n²)/a² √(D/ρt) at second order (the (2,2) mode's error
    falls about four times when the mesh is halved)."""
    a, t = 1.0, 1e-3
    young, nu, rho = STEEL["young"], STEEL["nu"], STEEL["rho"]
    stiffness = young * t ** 3 / (12 * (1 - nu ** 2))
    exact = np.array([np.pi / 2 * s / a ** 2 * np.sqrt(stiffness / (rho * t))
                      for s in (2, 5, 5, 8)])
    coarse = _simply_supported_frequencies(12, cut=cut) / exact - 1
    fine = _simply_supported_frequencies(24, cut=cut) / exact - 1
    assert np.abs(fine).max() < 1.5e-2
    assert 3.3 < abs(coarse[3]) / abs(fine[3]) < 4.7, (coarse, fine)


def test_a_quadrilateral_with_a_collapsed_first_side_is_a_triangle():
    """A quadrilateral whose first two nodes are one (as meshers write a degenerate
    triangle): its axes come from its next side, and its membrane stiffness is the
    constant-strain triangle's on the same corners (finite, none of it NaN)."""
    nodes = np.array([[0.0, 0.0, 0.0], [0.8, 0.1, 0.0], [0.2, 0.9, 0.0]])
    k_quad, _ = se.element_matrices(nodes, [[0, 0, 1, 2]], 0.01, **STEEL)
    assert np.all(np.isfinite(k_quad))
    stretch = np.zeros((3, 6))
    stretch[:, 0] = 1e-3 * nodes[:, 0]  # ε_xx = 1e-3: energy ½ E/(1 − ν²) ε² t A
    area = 0.5 * abs(np.cross(nodes[1] - nodes[0], nodes[2] - nodes[0])[2])
    u = np.concatenate([stretch[0], stretch.ravel()])
    energy = 0.5 * u @ k_quad[0] @ u
    expected = 0.5 * STEEL["young"] / (1 - STEEL["nu"] ** 2) * 1e-6 * 0.01 * area
    assert energy == pytest.approx(expected, rel=1e-9)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_a_turned_mesh_turns_its_stiffness_stresses_and_geometric_stiffness(seed):
    """A warped mesh of quadrilaterals and triangles turned by a random rotation Q, with
    every nodal translation and rotation turned alike: K and K_G become R K Rᵀ (R the
    block diagonal of Q) and the surface stresses Q σ Qᵀ, to round-off."""
    rng = np.random.default_rng(seed)
    nodes, quads = grid_plate(1.0, 0.6, 3, 2, jitter=0.2, seed=seed)
    nodes[:, 2] = 0.02 * rng.standard_normal(len(nodes))
    cells = [quads[:3], triangles(quads[3:])]
    u = 1e-3 * rng.standard_normal(6 * len(nodes))
    turn, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    big = np.kron(np.eye(2 * len(nodes)), turn)
    moved, u_moved = nodes @ turn.T + rng.standard_normal(3), big @ u
    young, nu = STEEL["young"], STEEL["nu"]
    for conn in cells:
        k0, _ = se.assemble(nodes, conn, 0.01, **STEEL)
        k1, _ = se.assemble(moved, conn, 0.01, **STEEL)
        scale = abs(k0).max()
        assert np.abs(k1.toarray() - big @ k0.toarray() @ big.T).max() < 1e-9 * scale
        g0 = se.geometric_stiffness(nodes, conn, 0.01, young, nu, u).toarray()
        g1 = se.geometric_stiffness(moved, conn, 0.01, young, nu, u_moved).toarray()
        assert np.abs(g1 - big @ g0 @ big.T).max() <= 1e-8 * np.abs(g0).max()
        s0 = se.surface_stresses(nodes, conn, 0.01, young, nu, u)
        s1 = se.surface_stresses(moved, conn, 0.01, young, nu, u_moved)
        turned = np.einsum("ij,egsjk,lk->egsil", turn, s0, turn)
        assert np.abs(s1 - turned).max() <= 1e-9 * np.abs(s0).max()


def test_bad_elements_are_named():
    nodes, quads = grid_plate(1.0, 1.0, 2, 1)
    crossed = quads.copy()
    crossed[1] = crossed[1][[0, 1, 3, 2]]  # a bow tie
    with pytest.raises(ValidationError, match=r"shell element 12 \(quad\) is degenerate"):
        se.element_matrices(nodes, crossed, 0.01, **STEEL, labels=[11, 12])
    arrow = np.array([[0, 0, 0], [1, 0, 0], [0.2, 0.2, 0], [0, 1, 0.0]])  # not convex
    with pytest.raises(ValidationError, match=r"shell element 7 .*crossed or not convex"):
        se.element_matrices(arrow, [[0, 1, 2, 3]], 0.01, **STEEL, labels=[7])
    with pytest.raises(ValidationError, match="shell element 2: thickness"):
        se.element_matrices(nodes, quads, [0.01, -1.0], **STEEL)


def test_nx_nastran_plate_modes():
    """The free 2 × 1 × 0.125 in steel plate of pyNastran's repository (200 CQUAD4, a
    Femap deck solved by NX Nastran, its OP2 beside it): the four elastic modes of the
    same mesh with these elements against NX's, frequencies within 1.5 % and every mode
    shape (all six DOFs at the 231 grids) with MAC > 0.9999."""
    bdf_mod = pytest.importorskip("pyNastran.bdf.bdf")
    op2_mod = pytest.importorskip("pyNastran.op2.op2")
    model = bdf_mod.read_bdf(str(DATA / "plate_py.dat"), debug=None)
    ids = np.array(sorted(model.nodes))
    index = {int(n): i for i, n in enumerate(ids)}
    nodes = np.array([model.nodes[n].get_position() for n in ids])
    quads = np.array([[index[n] for n in e.node_ids] for e in model.elements.values()])
    mat, prop = model.materials[1], model.properties[1]
    k, m = se.assemble(nodes, quads, prop.t, mat.e, mat.nu, mat.rho)
    lam, vec = eigen(k, m, 10, -1e4, "plate")
    ours = np.sqrt(np.abs(lam[6:])) / (2 * np.pi)
    results = op2_mod.read_op2(str(DATA / "plate_py.op2"), debug=None)
    modes = results.eigenvectors[1]
    nx = np.asarray(modes.mode_cycles)[6:10]
    assert np.abs(ours / nx - 1).max() < 0.015, (ours, nx)
    order = [{int(g): i for i, g in enumerate(modes.node_gridtype[:, 0])}[n] for n in ids]
    theirs = np.stack([np.asarray(v, float)[order].ravel() for v in modes.data[6:10]], 1)
    mac = (vec[:, 6:].T @ theirs) ** 2 / np.outer((vec[:, 6:] ** 2).sum(0),
                                                  (theirs ** 2).sum(0))
    assert np.all(np.diag(mac) > 0.9999), mac
