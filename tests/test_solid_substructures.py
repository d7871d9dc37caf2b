"""Substructured solid parts (flexmbs.modal.solid_substructures, docs/flexible_bodies.md
"Substructured solid parts"): element matrices of hexahedra and tetrahedra from the
mesh and material, cut surfaces, Craig–Bampton with rigid surfaces, and the parts
joined in a multibody model, against the FE model itself and the elastica."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from test_substructures import elastica_tip  # the solve_bvp elastica

import flexmbs as fm
from flexmbs.analysis.static import static_equilibrium
from flexmbs.assembly import System
from flexmbs.errors import ValidationError
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.femodel import FEModel
from flexmbs.modal.solid_substructures import (
    element_matrices,
    reduce_solid_parts,
    split_solid_model,
    surfaces_along,
)
from flexmbs.model.joints import marker_state
from flexmbs.model.substructured import add_substructured_part

E, NU, RHO = 2.1e11, 0.3, 7850.0


def _beam(nx=16, ny=2, lumped=False):
    return box_mesh(1.0, 0.02, 0.02, nx, ny, ny, E=E, nu=NU, rho=RHO, lumped=lumped)


def _assembled(fe, elements):
    k = sp.csr_matrix((fe.n_dof, fe.n_dof))
    m = sp.csr_matrix((fe.n_dof, fe.n_dof))
    for _, conn, k_e, m_e in elements:
        for c, ke, me in zip(conn, k_e, m_e, strict=True):
            dofs = (3 * c[:, None] + np.arange(3)).ravel()
            idx = np.ix_(dofs, dofs)
            block = sp.csr_matrix((fe.n_dof, fe.n_dof)).tolil()
            block[idx] = ke
            k = k + block.tocsr()
            block[idx] = me
            m = m + block.tocsr()
    return k, m


def test_hexahedra_add_up_to_the_built_in_solid_fe():
    """The element matrices from the mesh and material sum to box_mesh's own matrices
    (its rectangular-brick element, scattered by a stencil: independent code)."""
    fe = _beam(nx=3, ny=2)
    k, m = _assembled(fe, element_matrices(fe))
    assert abs(k - fe.stiffness).max() <= 1e-12 * abs(fe.stiffness).max()
    assert abs(m - fe.mass).max() <= 1e-12 * abs(fe.mass).max()


def _tet_mesh():
    """A distorted 2 x 2 x 2 brick cut into six tetrahedra per cell (the Kuhn split)."""
    rng = np.random.default_rng(3)
    g = np.stack(np.meshgrid(*[np.arange(3.0)] * 3, indexing="ij"), -1).reshape(-1, 3)
    nodes = 0.1 * g + 0.01 * rng.uniform(-1, 1, g.shape)
    index = np.arange(27).reshape(3, 3, 3)
    tets = []
    paths = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    for i, j, k in np.ndindex(2, 2, 2):
        for path in paths:
            corner = np.array([i, j, k])
            chain = [index[tuple(corner)]]
            for axis in path:
                corner = corner.copy()
                corner[axis] += 1
                chain.append(index[tuple(corner)])
            a, b, c, d = chain
            if np.linalg.det(np.array([nodes[b] - nodes[a], nodes[c] - nodes[a],
                                       nodes[d] - nodes[a]])) < 0:
                b, c = c, b
            tets.append([a, b, c, d])
    eye = sp.identity(81, format="csr")
    return FEModel(nodes, eye, eye, dofs_per_node=3, cells={"tetra": np.array(tets)},
                   metadata={"material": {"E": E, "nu": NU, "rho": RHO}})


def test_tetrahedra_pass_the_patch_test_and_carry_their_mass():
    """A linear displacement field's strain energy is ½ ε:σ V (Hooke's law, whatever the
    element shapes), rigid motions cost none, and the consistent mass moves with a
    translation as the mesh's total mass ρV."""
    fe = _tet_mesh()
    k, m = _assembled(fe, element_matrices(fe))
    volume = sum(abs(np.linalg.det(fe.nodes[t[1:]] - fe.nodes[t[0]])) / 6.0
                 for t in fe.cells["tetra"])
    grad = np.array([[1e-3, 2e-4, -3e-4], [5e-4, -2e-3, 1e-4], [0.0, 7e-4, 1.5e-3]])
    u = (fe.nodes @ grad.T).ravel()
    eps = 0.5 * (grad + grad.T)
    lam, mu = E * NU / ((1 + NU) * (1 - 2 * NU)), E / (2 * (1 + NU))
    sigma = lam * np.trace(eps) * np.eye(3) + 2 * mu * eps
    assert 0.5 * u @ (k @ u) == pytest.approx(0.5 * np.sum(eps * sigma) * volume, rel=1e-10)
    rotation = np.array([[0.0, -1.0, 0.3], [1.0, 0.0, -0.2], [-0.3, 0.2, 0.0]])
    rigid = (fe.nodes @ rotation.T).ravel() + np.tile([1.0, 2.0, 3.0], 27)
    assert abs(rigid @ (k @ rigid)) <= 1e-10 * abs(u @ (k @ u)) / 1e-6
    ones = np.tile([1.0, 0.0, 0.0], 27)
    assert ones @ (m @ ones) == pytest.approx(RHO * volume, rel=1e-12)


def _split(fe, k, modes=4, cuts="rigid"):
    split = split_solid_model(fe, surfaces_along(fe, k, root="x0", tip="x1"),
                              root="x0", ends=("x1",), cuts=cuts)
    return split, reduce_solid_parts(split, modes)


def test_split_parts_add_up_to_the_parent():
    fe = _beam(nx=8)
    split, _ = _split(fe, 4)
    assert split.k == 4 and [c.name for c in split.cuts] == ["cut1", "cut2", "cut3"]
    for name in ("stiffness", "mass"):
        total = sp.csr_matrix((fe.n_dof, fe.n_dof))
        for part in split.parts:
            idx = np.searchsorted(fe.node_ids, part.fe.node_ids)
            dofs = (3 * idx[:, None] + np.arange(3)).ravel()
            sub = getattr(part.fe, name).tocoo()
            total = total + sp.csr_matrix((sub.data, (dofs[sub.row], dofs[sub.col])),
                                          shape=total.shape)
        assert abs(total - getattr(fe, name)).max() <= 1e-12 * abs(getattr(fe, name)).max()
    # a cut node belongs to the part attached there
    first_cut = split.cuts[0]
    assert split.part_of(first_cut.nodes[0]) == first_cut.outer == 1


def _joined(fe, k, load, modes=4, cuts="rigid", tip_node=None):
    split, data = _split(fe, k, modes, cuts)
    tip = {"node_set": "x1"} if tip_node is None else {"node": tip_node}
    return joined_tip(split, data, load, "x0", tip), split


def joined_tip(split, datas, load, root, tip):
    """The static tip [m] of the parts of ``split`` (modal data ``datas``) joined as one
    body ``beam``, clamped at the node set ``root``, ``load`` [N] at the marker ``tip``
    (``add_marker``'s node_set= or node=)."""
    b = fm.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        part = add_substructured_part(b, "beam", split, datas)
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", part.add_marker(b, "root", node_set=root))
    marker = part.add_marker(b, "tip", **tip)
    assert marker == f"beam_{split.k}.tip"
    b.add_point_force("P", marker, load)
    system = System(b.finalize())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = static_equilibrium(system, max_iter=200)
    body, mk, sl = system.marker_info(marker)
    return marker_state(body, mk, res.q[sl], jac_needed=False).r


def rigid_section_fe_tip(fe, surfaces, load, clamped="x0"):
    """The FE model's static tip displacement with the face ``clamped`` (a node set)
    held and every surface in ``surfaces`` (node indices; the tip face last) moving
    rigidly about its centroid (with 6 DOFs per node, a node's rotation the surface's),
    the load at the tip face's centroid: K condensed by u = T ū, solved directly."""
    n, dpn = fe.n_dof, fe.dofs_per_node
    fixed = (dpn * fe.node_sets[clamped][:, None] + np.arange(dpn)).ravel()
    tied = np.concatenate([(dpn * s[:, None] + np.arange(dpn)).ravel() for s in surfaces])
    free = np.setdiff1d(np.arange(n), np.concatenate([fixed, tied]))
    rows, cols, vals = list(free), list(range(free.size)), [1.0] * free.size
    for j, s in enumerate(surfaces):
        base = free.size + 6 * j
        for node in s:
            x, y, z = fe.nodes[node] - fe.nodes[s].mean(axis=0)
            # u = u_c + θ × r:  rows of [I | −[r]×]
            pattern = [[1, 0, 0, 0, z, -y], [0, 1, 0, -z, 0, x], [0, 0, 1, y, -x, 0]]
            for d in range(3):
                for c in range(6):
                    if pattern[d][c]:
                        rows.append(dpn * node + d)
                        cols.append(base + c)
                        vals.append(pattern[d][c])
                if dpn == 6:  # θ_node = θ
                    rows.append(6 * node + 3 + d)
                    cols.append(base + 3 + d)
                    vals.append(1.0)
    t = sp.csr_matrix((vals, (rows, cols)), shape=(n, free.size + 6 * len(surfaces)))
    rhs = np.zeros(t.shape[1])
    rhs[-6:-3] = load
    u = spla.spsolve((t.T @ fe.stiffness @ t).tocsc(), rhs)
    return u[-6:-3]


@pytest.mark.parametrize("k", [1, 2, 4])
def test_joined_parts_deflect_as_the_fe_model_with_rigid_sections(k):
    """Under a small tip load the joined parts deflect as the whole FE model whose cut
    sections and tip face move rigidly, solved directly (constraint modes make each part
    statically exact; the rest is second order in the deflection: δ²/L, the shortening)."""
    fe = _beam()
    load = np.array([0.0, 0.3, -1.0])
    found, split = _joined(fe, k, load)
    surfaces = [np.searchsorted(fe.node_ids, np.asarray(c.nodes)) for c in split.cuts]
    expected = rigid_section_fe_tip(fe, [*surfaces, fe.node_sets["x1"]], load)
    # the clamp puts the root face's centroid at the ground origin
    origin = fe.nodes[fe.node_sets["x1"]].mean(axis=0) - fe.nodes[fe.node_sets["x0"]].mean(
        axis=0)
    scale = np.abs(expected).max()  # [m]; the beam is 1 m long
    np.testing.assert_allclose(found - origin, expected, rtol=0,
                               atol=1e-6 * scale + scale**2 / 1.0)


def test_a_bent_solid_converges_in_the_number_of_parts():
    """A slender solid cantilever (16 x 2 x 2 hexahedra) under a dead tip load P = EI/L²,
    EI its own (the linear tip deflection of one body, P L³/3EI: the coarse bricks are
    twice as stiff in bending as beam theory): the tip against the elastica. One linear
    body does not shorten; 2, 4 and 8 parts come closer each time (measured ‖Δ‖/L 6.5e-2,
    2.3e-2, 9.9e-3, 5.8e-3). Rigid cut sections stiffen a little, so short parts gain
    less (with 32 elements: 7.1e-3 for 8 parts, 1.0e-2 for 16 parts of 2 elements)."""
    fe = _beam(nx=16)
    bend, _ = _joined(fe, 1, [0.0, 0.0, -1.0])
    ei = -1.0 / (3.0 * bend[2])  # (the clamp puts the root face's centroid at the origin)
    ur, vr = elastica_tip(1.0)
    errors = []
    for k in (1, 2, 4, 8):
        r, _ = _joined(fe, k, [0.0, 0.0, -ei])
        errors.append(np.hypot(1.0 - r[0] - ur, -r[2] - vr))
    assert errors[0] > ur
    assert np.all(np.diff(errors) < 0), errors
    assert errors[-1] < 1e-2, errors


@pytest.mark.parametrize("k", [1, 2, 4])
def test_tied_cuts_deflect_as_the_fe_model_itself(k):
    """Flexible cut surfaces (cuts="tied": constraint modes at every cut node, the
    nodes tied by spherical joints): under a small load on one tip node the joined parts
    deflect as the plain FE model's K⁻¹F (root face clamped), to 1e-6 of the deflection
    plus its second-order shortening: no section is held rigid."""
    fe = _beam()
    node = int(fe.node_ids[fe.node_sets["x1"]][4])  # the tip face's centre
    load = np.array([0.0, 0.3, -1.0])
    found, split = _joined(fe, k, load, cuts="tied", tip_node=node)
    assert all(c.joint == "nodes" for c in split.cuts)
    i = int(np.flatnonzero(fe.node_ids == node)[0])
    fixed = (3 * fe.node_sets["x0"][:, None] + np.arange(3)).ravel()
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    rhs = np.zeros(fe.n_dof)
    rhs[3 * i:3 * i + 3] = load
    u = np.zeros(fe.n_dof)
    u[free] = spla.spsolve(fe.stiffness[free][:, free].tocsc(), rhs[free])
    expected = u[3 * i:3 * i + 3]
    origin = fe.nodes[i] - fe.nodes[fe.node_sets["x0"]].mean(axis=0)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(found - origin, expected, rtol=0,
                               atol=1e-6 * scale + scale**2 / 1.0)


def test_tied_cuts_converge_past_the_rigid_sections():
    """The bent cantilever of the test above with tied cuts: 4, 8 and 16 parts (16 of
    one element each) come to 2.5e-2, 3.7e-3 and 4.0e-4 L of the elastica, past the
    rigid sections' floor (5.8e-3 L at 8 parts, 1.6e-2 L at 16). Two parts are worse
    than one (8.7e-2 L against 6.5e-2 L): each half still turns far within its frame."""
    fe = _beam(nx=16)
    bend, _ = _joined(fe, 1, [0.0, 0.0, -1.0])
    ei = -1.0 / (3.0 * bend[2])
    ur, vr = elastica_tip(1.0)
    errors = []
    for k in (4, 8, 16):
        r, _ = _joined(fe, k, [0.0, 0.0, -ei], cuts="tied")
        errors.append(np.hypot(1.0 - r[0] - ur, -r[2] - vr))
    assert np.all(np.diff(errors) < 0), errors
    assert errors[-1] < 1e-3, errors


def assert_parts_deflect_as_rigid_sections(fe, split, datas, load, root, length):
    """The parts of ``split`` (modal data ``datas``), joined, clamped at the node set
    ``root`` and loaded by ``load`` at the tip set's centroid, deflect as the FE model
    with the same rigid sections solved directly (:func:`rigid_section_fe_tip`), to
    1e-6 of the deflection plus its second-order shortening (δ²/``length``)."""
    found = joined_tip(split, datas, load, root, {"node_set": "tip"})
    index = {int(label): i for i, label in enumerate(fe.node_ids)}
    cuts = [np.array([index[int(v)] for v in c.nodes]) for c in split.cuts]
    expected = rigid_section_fe_tip(fe, [*cuts, fe.node_sets["tip"]], load, clamped=root)
    origin = (fe.nodes[fe.node_sets["tip"]].mean(axis=0)
              - fe.nodes[fe.node_sets[root]].mean(axis=0))
    scale = np.abs(expected).max()
    np.testing.assert_allclose(found - origin, expected, rtol=0,
                               atol=1e-6 * scale + scale**2 / length)


def _solid_bend(slabs=16):
    """A solid 45° bend (Bathe and Bolourchi's: radius 100, section 1 x 1, E = 1e7,
    ν = 0) swept slab by slab from its root face: slabs x 2 x 2 hexahedra."""
    from flexmbs.modal.solid_substructures import _assemble

    phi = np.linspace(0.0, np.pi / 4, slabs + 1)
    radii = 100.0 - np.linspace(-0.5, 0.5, 3)  # (the second index along +y at the root)
    heights = np.linspace(-0.5, 0.5, 3)
    idx = np.arange((slabs + 1) * 9).reshape(slabs + 1, 3, 3)
    nodes = np.array([[r * np.sin(p), 100.0 - r * np.cos(p), z] for p in phi
                      for r in radii for z in heights])
    cells = np.array([[idx[i, j, k], idx[i + 1, j, k], idx[i + 1, j + 1, k],
                       idx[i, j + 1, k], idx[i, j, k + 1], idx[i + 1, j, k + 1],
                       idx[i + 1, j + 1, k + 1], idx[i, j + 1, k + 1]]
                      for i in range(slabs) for j in range(2) for k in range(2)])
    meta = {"material": {"E": 1e7, "nu": 0.0, "rho": 1.0}}
    eye = sp.identity(nodes.size, format="csr")
    shape = FEModel(nodes, eye, eye, dofs_per_node=3, cells={"hexahedron": cells},
                    metadata=meta)
    k_mat, m_mat = _assemble(nodes.size, [(c, k_e, m_e) for _, c, k_e, m_e in
                                           element_matrices(shape)])
    return FEModel(nodes, m_mat, k_mat, dofs_per_node=3, cells={"hexahedron": cells},
                   metadata=meta, node_sets={"root": idx[0].ravel(), "tip": idx[-1].ravel()})


@pytest.mark.filterwarnings("ignore::flexmbs.errors.UnitsWarning")  # (ρ = 1 on a 100 m bend)
@pytest.mark.parametrize("k", [2, 4])
def test_a_bent_solid_is_cut_across_its_own_path(k):
    """The solid 45° bend: no layer of nodes lies across a straight line from the root
    face to the tip face (surfaces_along refuses), but the cell layers swept from the
    root give k − 1 cross-sections of 3 x 3 nodes (surfaces_along_mesh); joined, the
    parts deflect under a small load out of plane at the tip as the FE model with the
    same rigid sections, solved directly, to 1e-6 of the deflection plus its
    second-order shortening."""
    from flexmbs.modal.solid_substructures import surfaces_along_mesh

    fe = _solid_bend()
    with pytest.raises(ValidationError, match="no layer of nodes"):
        surfaces_along(fe, 4, root="root", tip="tip")
    surfaces = surfaces_along_mesh(fe, k, root="root")
    assert [len(x) for x in surfaces] == [9] * (k - 1)
    split = split_solid_model(fe, surfaces, root="root", ends=("tip",))
    assert_parts_deflect_as_rigid_sections(fe, split, reduce_solid_parts(split, 4),
                                           np.array([0.0, 0.0, 1e-2]), "root", 78.0)
    with pytest.raises(ValidationError, match="exceeds the 16 cell layers"):
        surfaces_along_mesh(fe, 17, root="root")
    box = _beam(nx=8)  # layered from one corner node, the sections would be ragged
    with pytest.raises(ValidationError, match="not swept slab by slab"):
        surfaces_along_mesh(box, 2, root=[int(box.node_ids[0])])


@pytest.mark.filterwarnings("ignore::flexmbs.errors.UnitsWarning")  # (ρ = 1 on a 100 m bend)
def test_cli_cuts_a_bent_solid_along_its_mesh(tmp_path, capsys):
    """``flexmbs reduce --substructures 3`` on the bend written as Matrix Market
    matrices and an .inp with C3D8 elements: no straight layer, so the cuts follow the
    cell layers (it says so), 3 x 3 nodes each, and the parts are written."""
    import json

    from test_stiffening_elements import _write_inp, _write_matrices

    from flexmbs.cli.main import main

    fe = _solid_bend()
    tip = fe.node_sets["tip"] + 101
    _write_inp(tmp_path / "bend.inp", fe,
               extra="*NSET, NSET=tip\n" + ", ".join(str(v) for v in tip) + "\n")
    _write_matrices(tmp_path, fe)
    out = tmp_path / "bend.fmd.h5"
    assert main(["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
                 str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "bend.inp"),
                 "--modes", "2", "--material", "E=1e7,nu=0,rho=1",
                 "--substructures", "3", "-o", str(out)]) == 0
    assert "follow the mesh's cell layers" in capsys.readouterr().out
    info = json.loads((tmp_path / "bend.substructures.json").read_text())
    assert [len(cut["nodes"]) for cut in info["cuts"]] == [9, 9]
    _write_inp(tmp_path / "bend.inp", fe)  # no tip set: said, not followed
    assert main(["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
                 str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "bend.inp"),
                 "--modes", "2", "--material", "E=1e7,nu=0,rho=1",
                 "--substructures", "3", "-o", str(out)]) == 2
    assert "'tip'" in capsys.readouterr().err


def test_bad_splits_are_refused_naming_what():
    fe = _beam(nx=4)
    layer = surfaces_along(fe, 2, root="x0", tip="x1")[0]
    with pytest.raises(ValidationError, match="cut surface 1 does not separate two parts"):
        split_solid_model(fe, [layer[:4]], root="x0")  # part of a layer: cuts nothing
    with pytest.raises(ValidationError, match=r"not the sum of its cells. element matrices"):
        split_solid_model(_beam(nx=4, lumped=True), [layer], root="x0")
    bare = FEModel(fe.nodes, fe.mass, fe.stiffness, dofs_per_node=3, cells=fe.cells,
                   node_sets=fe.node_sets)
    with pytest.raises(ValidationError, match=r"no E, nu, rho in metadata\['material'\]"):
        split_solid_model(bare, [layer], root="x0")
    tip_labels = fe.node_ids[fe.node_sets["x1"]].tolist()  # an end given by its labels
    split = split_solid_model(fe, [layer], root="x0", ends=[tip_labels])
    assert sorted(split.parts[1].surfaces) == ["end1"]
    with pytest.raises(ValidationError, match="no layer of nodes"):
        surfaces_along(fe, 6, root="x0", tip="x1")
    # a constrained export (rows and columns of a face removed, as MAPDL's .full does):
    # at the root, which the root part clamps, its parts are the unconstrained model's;
    # elsewhere the rest is not node-local, and the message says why
    def constrained_at(face):
        keep = np.ones(fe.n_dof)
        keep[(3 * fe.node_sets[face][:, None] + np.arange(3)).ravel()] = 0.0
        cut_out = sp.diags(keep)
        return FEModel(fe.nodes, (cut_out @ fe.mass @ cut_out).tocsr(),
                       (cut_out @ fe.stiffness @ cut_out).tocsr(), dofs_per_node=3,
                       cells=fe.cells, node_sets=fe.node_sets, metadata=fe.metadata)

    assert constrained_at("x0").inactive_dofs.size == 3 * fe.node_sets["x0"].size
    plain = split_solid_model(fe, [layer], root="x0")
    held = split_solid_model(constrained_at("x0"), [layer], root="x0")
    for a, b in zip(plain.parts, held.parts, strict=True):
        for name in ("stiffness", "mass"):
            full = getattr(a.fe, name)
            assert abs(getattr(b.fe, name) - full).max() <= 1e-12 * abs(full).max()
    with pytest.raises(ValidationError, match="constrained out"):
        split_solid_model(constrained_at("x1"), [layer], root="x0")
    # the modes asked for, and a part left with none
    split = split_solid_model(fe, [layer], root="x0", ends=())
    for bad in (-1, 2.5, True):
        with pytest.raises(ValidationError, match="n_normal"):
            reduce_solid_parts(split, bad)
    with pytest.raises(ValidationError, match="substructure 2: the part has no modes"):
        reduce_solid_parts(split, 0)
    with pytest.raises(ValidationError, match="end set 'y0' spans several parts"):
        split_solid_model(fe, [layer], root="x0", ends=("y0",))  # (a long face)


def test_a_ring_of_cuts_is_refused():
    """A square ring of eight hexahedra cut twice next to the root cell: the two cuts
    join the same two parts (a loop), which would join them twice."""
    idx = np.arange(32).reshape(4, 4, 2)
    nodes = 0.1 * np.array([[i, j, k] for i in range(4) for j in range(4) for k in range(2)],
                           float)
    cells = [[idx[i, j, 0], idx[i + 1, j, 0], idx[i + 1, j + 1, 0], idx[i, j + 1, 0],
              idx[i, j, 1], idx[i + 1, j, 1], idx[i + 1, j + 1, 1], idx[i, j + 1, 1]]
             for i in range(3) for j in range(3) if (i, j) != (1, 1)]
    eye = sp.identity(96, format="csr")
    ring = FEModel(nodes, eye, eye, dofs_per_node=3, cells={"hexahedron": np.array(cells)},
                   metadata={"material": {"E": E, "nu": NU, "rho": RHO}})
    labels = ring.node_ids
    cut_a = labels[idx[1, 0:2, :].ravel()]  # between cells (0, 0) and (1, 0)
    cut_b = labels[idx[0:2, 2, :].ravel()]  # between cells (0, 1) and (0, 2)
    root = labels[idx[0, 0:2, :].ravel()]   # the face x = 0 of cell (0, 0)
    with pytest.raises(ValidationError, match="a loop of cuts"):
        split_solid_model(ring, [cut_a, cut_b], root=root, ends=())


@pytest.mark.parametrize("cuts", ["rigid", "tied"])
def test_cli_reduce_splits_a_solid_read_with_its_elements(tmp_path, capsys, cuts):
    """``flexmbs reduce --substructures 2 --cuts …`` on the box written as Matrix Market
    matrices and an .inp with C3D8 elements in mm-t-s: the two parts, joined as the
    sidecar says, deflect under a tip load as the parts split through the Python API in
    SI, and so do they through a case file."""
    import json

    import scipy.io
    from test_stiffening_elements import _write_inp

    from flexmbs.cli.main import main

    fe = box_mesh(1.0, 0.04, 0.02, 8, 2, 1, E=E, nu=NU, rho=RHO)
    tip_labels = np.flatnonzero(np.isclose(fe.nodes[:, 0], 1.0)) + 101
    _write_inp(tmp_path / "box.inp", fe, scale=1e3,
               extra="*NSET, NSET=tip\n" + ", ".join(str(v) for v in tip_labels) + "\n")
    for name, mat in (("M", fe.mass * 1e-3), ("K", fe.stiffness * 1e-3)):
        scipy.io.mmwrite(str(tmp_path / f"{name}.mtx"), sp.coo_matrix(mat),
                         symmetry="symmetric", precision=17)
    out = tmp_path / "box.fmd.h5"
    args = ["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness", str(tmp_path / "K.mtx"),
            "--nodes", str(tmp_path / "box.inp"), "--units", "mm-t-s", "--modes", "3",
            "--material", f"E={E / 1e6!r},nu={NU!r},rho={RHO * 1e-12!r}",
            "--substructures", "2", "--cuts", cuts, "-o", str(out)]
    assert main(args) == 0, capsys.readouterr()
    assert "cut1 (6 nodes)" in capsys.readouterr().out  # (a layer of 3 x 2 nodes)
    info = json.loads((tmp_path / "box.substructures.json").read_text())
    assert info["files"] == ["box.1.fmd.h5", "box.2.fmd.h5"]
    (cut,) = info["cuts"]
    assert (cut["inner"], cut["outer"], cut["surface"], len(cut["nodes"])) == (1, 2, "cut1", 6)
    assert cut["joint"] == {"rigid": "fixed", "tied": "nodes"}[cuts]
    load = np.array([0.0, 0.0, -50.0])

    def tip_of(datas, offset=0):  # (offset: the files' node labels less the API's)
        b = fm.ModelBuilder()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for j, data in enumerate(datas, 1):
                b.add_flexible_body(f"box_{j}", data)
        if cuts == "rigid":
            b.add_marker("box_1", "c", node_set="cut1")
            b.add_marker("box_2", "c", node_set="cut1")
            b.add_joint("cut1", "fixed", "box_1.c", "box_2.c")
        else:  # each cut node of one part tied to its twin
            for label in np.asarray(cut["nodes"]) - offset:
                b.add_marker("box_1", f"n{label}", node=int(label))
                b.add_marker("box_2", f"n{label}", node=int(label))
                b.add_joint(f"tie{label}", "spherical", f"box_1.n{label}", f"box_2.n{label}")
        b.add_marker("ground", "O")
        b.add_marker("box_1", "root", node_set="root" if "root" in datas[0].node_sets
                     else "x0")
        b.add_joint("clamp", "fixed", "ground.O", "box_1.root")
        b.add_marker("box_2", "tip", node_set="tip" if "tip" in datas[1].node_sets
                     else "x1")
        b.add_point_force("P", "box_2.tip", load)
        system = System(b.finalize())
        res = static_equilibrium(system)
        body, mk, sl = system.marker_info("box_2.tip")
        return marker_state(body, mk, res.q[sl], jac_needed=False).r

    found = tip_of([fm.read_modal(tmp_path / f) for f in info["files"]])
    assert min(min(c["nodes"]) for c in info["cuts"]) > 100  # (the .inp's labels: 101 …)
    split = split_solid_model(fe, surfaces_along(fe, 2, root="x0", tip="x1"), root="x0",
                              ends=("x1",), cuts=cuts)
    expected = tip_of(reduce_solid_parts(split, 3), offset=100)
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-7 * abs(expected[2]))
    # a case file joins the same parts: modal_data = the sidecar
    (tmp_path / "box.toml").write_text(f"""
[[bodies]]
name = "box"
type = "flexible"
modal_data = "box.substructures.json"
[[markers]]
body = "ground"
name = "O"
[[markers]]
body = "box"
name = "root"
node_set = "root"
[[markers]]
body = "box"
name = "tip"
node_set = "tip"
[[joints]]
name = "clamp"
type = "fixed"
i = "ground.O"
j = "box.root"
[[forces]]
name = "P"
type = "point-force"
marker = "box.tip"
value = {load.tolist()}
[solver]
h = 1e-3
t_end = 0.01
""")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reads = []

        def reader(file, **options):  # (the case's reader reads the part files)
            reads.append(file.name)
            return fm.read_modal(file, **options)

        case = fm.load_case(tmp_path / "box.toml", reader=reader)
        assert reads == info["files"]
        assert case.model.forces[0].marker == "box_2.tip"
        system = System(case.model)
        res = static_equilibrium(system)
    body, mk, sl = system.marker_info("box_2.tip")
    from_case = marker_state(body, mk, res.q[sl], jac_needed=False).r
    np.testing.assert_allclose(from_case, found, rtol=0, atol=1e-12)
    # stiffened by the whole part's stresses and with stress modes: as through the API
    assert main([*args[:-2], "--stiffening", "--stress", "-o", str(out)]) == 0
    capsys.readouterr()
    from flexmbs.modal.part_stiffening import with_parts_stiffening

    api = with_parts_stiffening(split, reduce_solid_parts(split, 3))
    for name, data in zip(info["files"], api, strict=True):
        written = fm.read_modal(tmp_path / name)
        assert "stress" in written.modal_fields
        for case, matrix in data.stiffening.items():
            scale = np.abs(matrix).max()
            if scale == 0:
                continue
            # (the same basis up to each mode's sign: compare |K_c| entry by entry)
            np.testing.assert_allclose(np.abs(written.stiffening[case]), np.abs(matrix),
                                       rtol=0, atol=1e-6 * scale)
    assert main([*args[:-2], "--modal-derivatives", "-o", str(out)]) == 2
    assert "--modal-derivatives do not apply" in capsys.readouterr().err
