"""Nastran OP4 matrices over any a-set layout (flexmbs.modal.io.nastran.dof_sets): a solid
model's g-set (six DOFs per grid, rotations empty) and its 3-DOF a-set after AUTOSPC, a
mixed model of 6-DOF beam grids and 3-DOF grids, scalar points condensed statically, and
massless DOFs (a lumped beam mass without rotary inertia) condensed in the eigen solver.
References: the same FE model reduced directly, and scipy's generalized eigenvalues."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

pytest.importorskip("pyNastran")

from pyNastran.bdf.bdf import BDF
from pyNastran.op2.result_objects.matrix import Matrix
from pyNastran.op4.op4 import write_op4

from flexmbs.errors import ReadError
from flexmbs.modal import FEModel, clamped_modes, free_free_modes
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.io.nastran import read_nastran

STEEL = dict(E=210e9, nu=0.3, rho=7850.0)


def _solid():
    """A 0.4 m x 0.04 m x 0.02 m steel bar of 8 x 2 x 1 hexahedra (3 DOFs per node)."""
    return box_mesh(0.4, 0.04, 0.02, 8, 2, 1, **STEEL)


def _write_solid_bdf(path, fe, ids, *, spc=True, autospc=True):
    model = BDF(debug=None)
    for nid, xyz in zip(ids, fe.nodes, strict=True):
        model.add_grid(int(nid), [float(v) for v in xyz])
    for e, conn in enumerate(fe.cells["hexahedron"]):
        model.add_chexa(100 + e, 1, [int(ids[k]) for k in conn])
    model.add_psolid(1, 1)
    model.add_mat1(1, STEEL["E"], None, STEEL["nu"], rho=STEEL["rho"])
    if spc:
        model.add_spc1(1, "123", [int(ids[k]) for k in fe.node_sets["x0"]])
    if not autospc:
        model.add_param("AUTOSPC", ["NO"])
    model.write_bdf(str(path))


def _op4(path, **mats):
    write_op4(str(path), {name: Matrix(name, 6, np.asarray(m.toarray() if sp.issparse(m)
                                                             else m))
                          for name, m in mats.items()}, is_binary=False)


def _expand_to_six(mat3: sp.spmatrix) -> sp.csr_matrix:
    """A 3-DOF-per-grid matrix on six DOFs per grid, the rotations empty (a g-set)."""
    n = mat3.shape[0] // 3
    rows = (6 * np.arange(n)[:, None] + np.arange(3)).ravel()
    e = sp.csr_matrix((np.ones(3 * n), (rows, np.arange(3 * n))), shape=(6 * n, 3 * n))
    return (e @ mat3 @ e.T).tocsr()


@pytest.fixture(scope="module")
def solid_reference():
    fe = _solid()
    return fe, clamped_modes(fe, "x0", 8)


@pytest.mark.parametrize("layout", ["g-set 6 per grid", "3 per grid", "a-set after AUTOSPC"])
def test_solid_model_in_every_layout_gives_the_direct_modes(tmp_path, solid_reference,
                                                            layout):
    fe, reference = solid_reference
    ids = 10 + 3 * np.arange(fe.n_nodes)  # labels as a user's model might have them
    bdf = tmp_path / "bar.bdf"
    _write_solid_bdf(bdf, fe, ids)
    m, k = fe.mass, fe.stiffness
    if layout == "g-set 6 per grid":
        m, k = _expand_to_six(m), _expand_to_six(k)
    elif layout == "a-set after AUTOSPC":
        keep = np.setdiff1d(np.arange(fe.n_dof), fe.node_dofs(fe.node_sets["x0"]))
        m, k = m[keep][:, keep], k[keep][:, keep]
    _op4(tmp_path / "bar.op4", MAA=m, KAA=k)
    via = read_nastran(f"{tmp_path}/bar.op4:MAA", f"{tmp_path}/bar.op4:KAA", bdf)
    assert via.dofs_per_node == (6 if layout.startswith("g-set") else 3)
    data = clamped_modes(via, "spc", 8)
    np.testing.assert_allclose(data.frequencies, reference.frequencies, rtol=1e-9)
    # an a-set holds no mass at the clamped grids: the total mass is that of the rest
    shift = np.zeros(m.shape[0])
    shift[0::via.dofs_per_node if layout.startswith("g-set") else 3] = 1.0
    if layout.startswith("g-set"):
        shift[:] = 0.0
        shift[0::6] = 1.0
    np.testing.assert_allclose(data.total_mass, shift @ (m @ shift), rtol=1e-12)
    if layout != "a-set after AUTOSPC":
        np.testing.assert_allclose(data.total_mass, reference.total_mass, rtol=1e-12)
    expected = {"g-set 6 per grid": "g-set", "3 per grid": "3 DOF (translations) at each",
                "a-set after AUTOSPC": "3 DOF at each grid less the SPC'd translations"}
    assert via.metadata["nastran"]["layout"].startswith(expected[layout])


def test_free_solid_g_set_with_empty_rotations_has_six_rigid_modes(tmp_path):
    """Free–free modes of a solid g-set: the empty rotation DOFs are left out of the
    eigenproblem (they would make M singular), the frequencies equal the 3-DOF model's."""
    fe = _solid()
    bdf = tmp_path / "bar.bdf"
    _write_solid_bdf(bdf, fe, np.arange(1, fe.n_nodes + 1), spc=False)
    _op4(tmp_path / "bar.op4", MGG=_expand_to_six(fe.mass), KGG=_expand_to_six(fe.stiffness))
    via = read_nastran(f"{tmp_path}/bar.op4:MGG", f"{tmp_path}/bar.op4:KGG", bdf)
    assert via.inactive_dofs.size == 3 * fe.n_nodes
    np.testing.assert_allclose(free_free_modes(via, 6).frequencies,
                               free_free_modes(fe, 6).frequencies, rtol=1e-9)


def _beam_with_rod_grids():
    """A clamped 6-DOF cantilever (CBAR grids) with two 3-DOF grids hung below its tip on
    translational springs (CELAS1 on components 1–3: no rotational stiffness), each
    carrying 0.2 kg. Returns the model on six DOFs per grid (the spring grids' rotations
    empty), the node positions and the number of beam grids."""
    beam = straight_beam(0.5, 10, BeamSection.rectangle(0.02, 0.01), Material.steel())
    tip = beam.n_nodes - 1
    extra = np.array([[0.5, 0.0, -0.1], [0.5, 0.05, -0.1]])
    nodes = np.vstack([beam.nodes, extra])
    n = nodes.shape[0]
    k = sp.lil_matrix((6 * n, 6 * n))
    m = sp.lil_matrix((6 * n, 6 * n))
    k[:6 * beam.n_nodes, :6 * beam.n_nodes] = beam.stiffness
    m[:6 * beam.n_nodes, :6 * beam.n_nodes] = beam.mass
    for j in range(2):
        node = beam.n_nodes + j
        ka = 2e5 * np.eye(3)
        a, b = 6 * tip + np.arange(3), 6 * node + np.arange(3)
        for (r, s), sign in (((a, a), 1), ((b, b), 1), ((a, b), -1), ((b, a), -1)):
            k[np.ix_(r, s)] = k[np.ix_(r, s)].toarray() + sign * ka
        m[np.ix_(b, b)] = 0.2 * np.eye(3)
    return sp.csr_matrix(m), sp.csr_matrix(k), nodes, beam.n_nodes


def test_mixed_six_and_three_dof_grids(tmp_path):
    """The a-set of a model of beam grids (6 DOFs) and spring-only grids (3 DOFs after
    AUTOSPC), root clamped: its frequencies equal scipy's eigenvalues of the active DOFs."""
    m6, k6, nodes, n_beam = _beam_with_rod_grids()
    n = nodes.shape[0]
    model = BDF(debug=None)
    for g in range(n):
        model.add_grid(g + 1, [float(v) for v in nodes[g]])
    for e in range(n_beam - 1):
        model.add_cbar(100 + e, 1, [e + 1, e + 2], [0.0, 0.0, 1.0], None)
    model.add_pbarl(1, 1, "BAR", [0.02, 0.01])
    model.add_mat1(1, 2.1e11, None, 0.3, rho=7850.0)
    for j in range(2):
        for c in (1, 2, 3):
            model.add_celas1(200 + 3 * j + c, 2, [n_beam, n_beam + 1 + j], c1=str(c),
                             c2=str(c))
    model.add_pelas(2, 2e5)
    model.add_spc1(1, "123456", [1])
    model.write_bdf(str(tmp_path / "mixed.bdf"))
    active = np.array([d for d in range(6 * n) if d >= 6 and (d // 6 < n_beam or d % 6 < 3)])
    _op4(tmp_path / "mixed.op4", MAA=m6[active][:, active], KAA=k6[active][:, active])
    fe = read_nastran(f"{tmp_path}/mixed.op4:MAA", f"{tmp_path}/mixed.op4:KAA",
                      tmp_path / "mixed.bdf")
    assert "AUTOSPC" in fe.metadata["nastran"]["layout"]
    data = clamped_modes(fe, "spc", 6)
    lam = sla.eigh(k6[active][:, active].toarray(), m6[active][:, active].toarray(),
                   eigvals_only=True)[:6]
    np.testing.assert_allclose(data.frequencies, np.sqrt(lam) / (2 * np.pi), rtol=1e-9)
    psi = data.psi.reshape(n, 3, -1)
    assert not np.any(psi[n_beam:])  # the spring grids have no rotations


def test_scalar_points_are_condensed_statically(tmp_path):
    """Two grids on a spring, the second grounded through a scalar point between springs
    k1 (grid–point) and k2 (point–ground): the point is condensed, giving the series
    stiffness k1 k2/(k1 + k2) on the grid (exact for statics and, the point being
    massless, for the eigenproblem)."""
    model = BDF(debug=None)
    model.add_grid(1, [0.0, 0.0, 0.0])
    model.add_grid(3, [1.0, 0.0, 0.0])
    model.add_spoint([2])
    model.add_conm2(10, 1, 2.0)
    model.add_conm2(11, 3, 3.0)
    model.write_bdf(str(tmp_path / "sp.bdf"))
    # g-set order by ID: grid 1 (6), scalar point 2 (1), grid 3 (6)
    k1, k2, k0 = 400.0, 600.0, 1000.0
    n = 13
    k = np.zeros((n, n))
    m = np.zeros((n, n))
    x1, sp2, x3 = 0, 6, 7
    k[np.ix_([x1, x3], [x1, x3])] += k0 * np.array([[1, -1], [-1, 1]])  # grid-grid spring
    k[np.ix_([x3, sp2], [x3, sp2])] += k1 * np.array([[1, -1], [-1, 1]])
    k[sp2, sp2] += k2
    for d in range(13):
        if d not in (x1, sp2, x3):
            k[d, d] += 1e3  # the other components held by springs to ground
    m[np.ix_(range(6), range(6))] = 2.0 * np.eye(6)
    m[np.ix_(range(7, 13), range(7, 13))] = 3.0 * np.eye(6)
    _op4(tmp_path / "sp.op4", MGG=m, KGG=k)
    fe = read_nastran(f"{tmp_path}/sp.op4:MGG", f"{tmp_path}/sp.op4:KGG", tmp_path / "sp.bdf")
    assert fe.metadata["nastran"]["scalar_points_condensed"] == [2]
    k_series = k1 * k2 / (k1 + k2)
    assert fe.stiffness[6, 6] == pytest.approx(k0 + k_series, rel=1e-12)
    assert fe.stiffness[0, 6] == pytest.approx(-k0, rel=1e-12)


def test_a_scalar_point_without_stiffness_is_dropped_and_named(tmp_path):
    model = BDF(debug=None)
    model.add_grid(1, [0.0, 0.0, 0.0])
    model.add_grid(2, [1.0, 0.0, 0.0])
    model.add_spoint([5])
    model.write_bdf(str(tmp_path / "sp.bdf"))
    k = np.eye(13)
    k[12, 12] = 0.0
    _op4(tmp_path / "sp.op4", MGG=np.eye(13), KGG=k)
    fe = read_nastran(f"{tmp_path}/sp.op4:MGG", f"{tmp_path}/sp.op4:KGG", tmp_path / "sp.bdf")
    assert fe.metadata["nastran"]["scalar_points_dropped"] == [5]
    assert fe.n_dof == 12


def test_a_size_that_fits_no_layout_lists_them(tmp_path):
    fe = _solid()
    bdf = tmp_path / "bar.bdf"
    _write_solid_bdf(bdf, fe, np.arange(1, fe.n_nodes + 1))
    _op4(tmp_path / "odd.op4", KAA=np.eye(7), MAA=np.eye(7))
    with pytest.raises(ReadError) as err:
        read_nastran(f"{tmp_path}/odd.op4:MAA", f"{tmp_path}/odd.op4:KAA", bdf)
    text = str(err.value)
    n = fe.n_nodes
    for size in (6 * n, 3 * n, 3 * (n - fe.node_sets["x0"].size)):
        assert f": {size}" in text


def test_massless_rotations_are_condensed_exactly():
    """A beam with translational lumped mass only (no rotary inertia: M has empty rotation
    rows, K does not): the dense solver condenses the massless DOFs; the frequencies equal
    the finite generalized eigenvalues scipy finds with the singular M."""
    beam = straight_beam(1.0, 12, BeamSection.rectangle(0.02, 0.01), Material.steel())
    lumped = np.asarray(beam.mass.sum(axis=1)).ravel()
    diag = np.zeros(beam.n_dof)
    trans = beam.translational_dofs
    diag[trans] = lumped[trans]
    fe = FEModel(beam.nodes, sp.diags(diag).tocsr(), beam.stiffness, dofs_per_node=6)
    data = clamped_modes(fe, [1], 6)
    free = np.arange(6, beam.n_dof)
    k = beam.stiffness[free][:, free].toarray()
    m = np.diag(diag[free])
    lam = sla.eig(k, m, right=False)
    lam = np.sort(lam[np.isfinite(lam)].real)
    lam = lam[lam > 0][:6]
    np.testing.assert_allclose(data.frequencies, np.sqrt(lam) / (2 * np.pi), rtol=1e-8)


def test_provenance_names_the_layout_and_the_condensed_points(tmp_path):
    """The provenance of a reduction from Nastran matrices: the layout, the scalar points
    condensed, the units as declared."""
    from flexmbs.modal.provenance import provenance

    fe = _solid()
    bdf = tmp_path / "bar.bdf"
    _write_solid_bdf(bdf, fe, np.arange(1, fe.n_nodes + 1))
    keep = np.setdiff1d(np.arange(fe.n_dof), fe.node_dofs(fe.node_sets["x0"]))
    _op4(tmp_path / "bar.op4", MAA=fe.mass[keep][:, keep], KAA=fe.stiffness[keep][:, keep])
    via = read_nastran(f"{tmp_path}/bar.op4:MAA", f"{tmp_path}/bar.op4:KAA", bdf)
    prov = provenance(clamped_modes(via, "spc", 4))
    assert prov["mapping"]["layout"].startswith("3 DOF at each grid less the SPC'd")
    assert prov["mapping"]["dofs_per_node"] == 3
    assert prov["files"]["geometry"] == str(bdf)
    assert prov["units"] == {"source": "SI", "stated_by": "the format has no unit system: "
                             "the one given with --units / units=, SI when none was given"}


def _two_grids(tmp_path, *, cd=0):
    model = BDF(debug=None)
    if cd:
        model.add_cord2r(cd, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0],
                         [np.cos(0.5), np.sin(0.5), 0.0])
    model.add_grid(1, [0.0, 0.0, 0.0], cd=cd)
    model.add_grid(2, [1.0, 0.0, 0.0], cd=cd)
    model.add_spc1(1, "123456", [1])
    path = tmp_path / "two.bdf"
    model.write_bdf(str(path))
    return path


def test_equal_sized_layouts_are_told_apart_by_the_rigid_motions(tmp_path):
    """Two grids, one clamped in 123456: six rows fit both 'grid 2 with six DOFs' and
    'three translations at each grid'. An axial spring along x over the translations is
    force-free under every rigid motion only in the second; it is taken."""
    bdf = _two_grids(tmp_path)
    k = np.zeros((6, 6))
    k[np.ix_([0, 3], [0, 3])] = 1e4 * np.array([[1.0, -1.0], [-1.0, 1.0]])
    _op4(tmp_path / "s.op4", M=np.eye(6), K=k)
    fe = read_nastran(f"{tmp_path}/s.op4:M", f"{tmp_path}/s.op4:K", bdf)
    assert fe.dofs_per_node == 3
    assert fe.stiffness[0, 3] == pytest.approx(-1e4, rel=1e-14)


def test_equal_sized_layouts_the_stiffness_cannot_tell_apart_are_refused(tmp_path):
    bdf = _two_grids(tmp_path)
    _op4(tmp_path / "s.op4", M=np.eye(6), K=np.eye(6))
    with pytest.raises(ReadError, match=r"fits 2 different DOF layouts .*MGG/KGG"):
        read_nastran(f"{tmp_path}/s.op4:M", f"{tmp_path}/s.op4:K", bdf)


def test_a_partial_constraint_in_a_rotated_system_is_refused(tmp_path):
    """A grid held in T1 of a CD system turned 0.5 rad about z: the held direction is
    oblique in basic, which empty rows cannot express; refused naming grid and system."""
    fe = _solid()
    model = BDF(debug=None)
    model.add_cord2r(5, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [np.cos(0.5), np.sin(0.5), 0.0])
    for g, xyz in enumerate(fe.nodes):
        model.add_grid(g + 1, [float(v) for v in xyz], cd=5)
    for e, conn in enumerate(fe.cells["hexahedron"]):
        model.add_chexa(100 + e, 1, [int(k) + 1 for k in conn])
    model.add_psolid(1, 1)
    model.add_mat1(1, STEEL["E"], None, STEEL["nu"], rho=STEEL["rho"])
    model.add_spc1(1, "123", [int(k) + 1 for k in fe.node_sets["x0"]])
    tip = [int(k) + 1 for k in fe.node_sets["x1"]]
    model.add_spc1(1, "1", tip)
    model.write_bdf(str(tmp_path / "roller.bdf"))
    held = fe.node_dofs(fe.node_sets["x0"]).tolist() + [3 * (t - 1) for t in tip]
    keep = np.setdiff1d(np.arange(fe.n_dof), held)
    _op4(tmp_path / "r.op4", M=fe.mass[keep][:, keep], K=fe.stiffness[keep][:, keep])
    with pytest.raises(ReadError, match=rf"grid {tip[0]} is held in components 1 of its "
                                        r"displacement \(CD\) system, which is not aligned"):
        read_nastran(f"{tmp_path}/r.op4:M", f"{tmp_path}/r.op4:K", tmp_path / "roller.bdf")


def test_rotary_inertia_at_a_node_without_rotations_is_refused(tmp_path):
    """A solid g-set read with six DOFs per grid (rotations empty): a point mass with
    rotary inertia at one of its nodes is refused naming the node, a plain mass is not."""
    from flexmbs.errors import ValidationError
    from flexmbs.modal.preparation import PointMass, add_point_masses

    fe = _solid()
    bdf = tmp_path / "bar.bdf"
    _write_solid_bdf(bdf, fe, np.arange(1, fe.n_nodes + 1), spc=False)
    _op4(tmp_path / "bar.op4", MGG=_expand_to_six(fe.mass), KGG=_expand_to_six(fe.stiffness))
    via = read_nastran(f"{tmp_path}/bar.op4:MGG", f"{tmp_path}/bar.op4:KGG", bdf)
    with pytest.raises(ValidationError, match=r"node 5 has no rotation DOFs"):
        add_point_masses(via, [PointMass(5, 0.1, (1e-4, 1e-4, 1e-4))])
    heavier = add_point_masses(via, [PointMass(5, 0.1)])
    assert heavier.mass.sum() == pytest.approx(via.mass.sum() + 0.3, rel=1e-12)
