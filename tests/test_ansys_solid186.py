"""A solid model that MAPDL wrote, through flexmbs's 20-node brick: element matrices,
stresses, stiffening and substructured parts (flexmbs.modal.fe.solid_elements,
flexmbs.modal.solid_substructures, docs/flexible_bodies.md "Substructured solid parts").

The files come with ansys-mapdl-reader (see tests/test_ansys.py): ``file.full`` holds
the assembled K and M of a 1 x 1 x 5 beam of 40 SOLID186 bricks (321 nodes, the 21 nodes
of the end z = 0 constrained out), ``HexBeam.cdb`` its mesh and ``file.rst`` the job's
material (EX 1.69e7, NUXY 0.31, DENS 4.1408e-4: no SI material, so the units warning of
the reduction is expected). MAPDL's matrices are the reference: flexmbs's elements are
written from the element's textbook definition (serendipity shape functions, uniform
reduced 2 x 2 x 2 integration of K, Irons' 14 points for M), not from MAPDL."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from test_solid_substructures import assert_parts_deflect_as_rigid_sections

from flexmbs.modal.fe import solid_elements
from flexmbs.modal.solid_substructures import (
    element_matrices,
    reduce_solid_parts,
    split_solid_model,
    surfaces_along,
)

pytestmark = pytest.mark.filterwarnings("ignore::flexmbs.errors.UnitsWarning")


@pytest.fixture(scope="module")
def hexbeam(examples):
    """The MAPDL model as an FEModel with the job's material and a ``tip`` set (z = 5)."""
    from ansys.mapdl.reader import read_binary

    from flexmbs.modal.io.ansys import read_ansys

    job = read_binary(examples.rstfile).materials[1]
    material = {"E": float(job["EX"]), "nu": float(job["NUXY"]), "rho": float(job["DENS"])}
    fe = read_ansys(examples.fullfile, examples.fullfile, examples.hexarchivefile,
                    material=material)
    tip = np.flatnonzero(np.isclose(fe.nodes[:, 2], fe.nodes[:, 2].max()))
    return replace(fe, node_sets={**fe.node_sets, "tip": tip})


def test_the_20_node_brick_is_mapdls_solid186(hexbeam):
    """Σ of flexmbs's element matrices over the 40 bricks equals MAPDL's assembled K and
    M on every DOF MAPDL kept, to 1e-10 of the largest entry."""
    fe = hexbeam
    assert sorted(fe.cells) == ["hexahedron20"]
    ((_, conn, k_e, m_e),) = element_matrices(fe)
    dofs = (3 * conn[:, :, None] + np.arange(3)).reshape(len(conn), -1)
    rows = np.repeat(dofs, 60, axis=1).ravel()
    cols = np.tile(dofs, (1, 60)).ravel()
    constrained = (3 * fe.node_sets["constrained"][:, None] + np.arange(3)).ravel()
    kept = np.setdiff1d(np.arange(fe.n_dof), constrained)
    assert kept.size == 3 * (321 - 21)
    for ours, theirs in ((k_e, fe.stiffness), (m_e, fe.mass)):
        total = sp.csr_matrix((ours.ravel(), (rows, cols)), shape=theirs.shape)
        diff = (total - theirs)[kept][:, kept]
        assert abs(diff).max() <= 1e-10 * abs(theirs).max()


def test_shape_functions_partition_unity_and_reproduce_quadratics():
    """The serendipity functions sum to one, reproduce any quadratic field without its
    x²y-type terms (the complete quadratic and the serendipity cubics) and have gradients
    that match central differences (random points)."""
    rng = np.random.default_rng(4)
    points = rng.uniform(-1, 1, (30, 3))
    shapes, grads = solid_elements.hex20_shapes(points)
    nodes = solid_elements._HEX20_NODES
    np.testing.assert_allclose(shapes.sum(axis=1), 1.0, atol=1e-14)

    def field(p):
        x, y, z = p[..., 0], p[..., 1], p[..., 2]
        return 1 + 2 * x - y + 0.5 * z + x * y - 3 * y * z + z * z + x * y * z + x * x * y

    np.testing.assert_allclose(shapes @ field(nodes), field(points), atol=1e-13)
    step = 1e-6
    for d in range(3):
        shift = np.zeros(3)
        shift[d] = step
        plus, _ = solid_elements.hex20_shapes(points + shift)
        minus, _ = solid_elements.hex20_shapes(points - shift)
        np.testing.assert_allclose(grads[:, :, d], (plus - minus) / (2 * step), atol=1e-8)


def test_a_uniform_stress_gives_its_geometric_stiffness_on_the_mapdl_mesh(hexbeam):
    """u = G r (a uniform strain) in the 40 bricks: every Gauss point holds Hooke's σ of
    sym G, and for any linear field v = H r, vᵀ K_G v = V tr(H σ Hᵀ) (V = 5, the beam's
    volume)."""
    fe = hexbeam
    lame = solid_elements.isotropic_lame(fe.metadata["material"]["E"],
                                         fe.metadata["material"]["nu"])
    rng = np.random.default_rng(1)
    g, h = 1e-3 * rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    u, v = (fe.nodes @ g.T).ravel(), (fe.nodes @ h.T).ravel()
    conn = fe.cells["hexahedron20"]
    dndx, dvol = solid_elements.gradients(fe.nodes, conn, "hexahedron20")
    assert dvol.sum() == pytest.approx(5.0, rel=1e-12)
    sigma = solid_elements.gauss_stresses(dndx, conn, u, lame)
    eps = 0.5 * (g + g.T)
    expected = lame[0] * np.trace(eps) * np.eye(3) + 2 * lame[1] * eps
    np.testing.assert_allclose(sigma, np.broadcast_to(expected, sigma.shape),
                               atol=1e-9 * abs(expected).max())
    k_g = solid_elements.geometric_stiffness(fe.nodes, fe.cells, u, lame)
    assert v @ (k_g @ v) == pytest.approx(5.0 * np.trace(h @ expected @ h.T), rel=1e-9)


@pytest.mark.parametrize("k", [2, 3])
def test_mapdl_beam_split_into_parts_deflects_as_mapdls_matrices(hexbeam, k):
    """The MAPDL beam cut into k parts (rigid cut sections): under a small tip load the
    joined parts deflect as MAPDL's own stiffness with the same rigid sections, solved
    directly, to 1e-6 of the deflection plus its second-order shortening."""
    fe = hexbeam
    split = split_solid_model(fe, surfaces_along(fe, k, root="constrained", tip="tip"),
                              root="constrained", ends=("tip",))
    assert split.k == k
    assert_parts_deflect_as_rigid_sections(fe, split, reduce_solid_parts(split, 4),
                                           np.array([0.3, -1.0, 0.0]) * 1e-2,
                                           "constrained", 5.0)


def test_mapdl_parts_take_stress_modes_and_stiffening(hexbeam):
    """Stress modes and the parts' stiffening from the whole beam's stresses are
    computed for the 20-node bricks: a spin about x (across the beam, which lies along
    z) stretches it, so every part's ww_xx matrix is positive semi-definite and not
    zero, and the parts' stress modes are finite and not all zero."""
    from flexmbs.modal.part_stiffening import with_parts_stiffening
    from flexmbs.modal.stress import with_stress

    fe = hexbeam
    split = split_solid_model(fe, surfaces_along(fe, 2, root="constrained", tip="tip"),
                              root="constrained", ends=("tip",))
    datas = with_parts_stiffening(split, reduce_solid_parts(split, 4))
    for part, data in zip(split.parts, datas, strict=True):
        spin = data.stiffening["ww_xx"]  # spun about x, across the beam along z
        assert np.linalg.eigvalsh(spin).min() >= -1e-9 * np.abs(spin).max()
        assert np.abs(spin).max() > 0
        stress = with_stress(data, part.fe).modal_fields["stress"]
        assert np.isfinite(stress).all() and np.abs(stress).max() > 0


def test_mapdl_bricks_strain_energy_vanishes_in_a_rigid_rotation(hexbeam):
    """The St Venant–Kirchhoff energy of the 40 bricks (the bricks' K for its quadratic
    part, MAPDL's K to 1e-10 by the first test; the cubic and quartic parts of the modal
    derivatives) is zero for a
    rigid rotation of 0.54 rad, whose quadratic part alone is 3.4e6 J: the parts
    cancel to 1e-12 (the Green–Lagrange strain of a rigid motion is zero). The modal
    derivatives of the clamped beam follow."""
    from scipy.spatial.transform import Rotation

    from flexmbs.modal.derivatives import energy_tensors, with_modal_derivatives
    from flexmbs.modal.fe.nonlinear_energy import strain_points
    from flexmbs.modal.reduction import clamped_modes

    fe = hexbeam
    rotation = Rotation.from_rotvec([0.2, -0.3, 0.4]).as_matrix()
    u = (fe.nodes @ rotation.T - fe.nodes).ravel()
    cubic, quartic = energy_tensors(strain_points(fe), u[:, None])
    ((_, conn, k_e, _),) = element_matrices(fe)
    dofs = (3 * conn[:, :, None] + np.arange(3)).reshape(len(conn), -1)
    quadratic = 0.5 * np.einsum("ea,eab,eb->", u[dofs], k_e, u[dofs])
    assert quadratic > 1e6
    total = quadratic + cubic.item() / 6.0 + quartic.item() / 24.0
    assert abs(total) <= 1e-12 * quadratic
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = with_modal_derivatives(clamped_modes(fe, "constrained", 3), fe)
    assert data.derivatives is not None and np.isfinite(data.derivatives.cubic).all()
