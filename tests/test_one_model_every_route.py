"""One solid model through every import route gives the same modal data.

The clamped steel bar of flexmbs's hexahedral solid FE (root face clamped) is written as
Abaqus *MATRIX OUTPUT text with its .inp, as Matrix Market with a node CSV, as Nastran OP4
(the 6-DOF g-set and the 3-DOF a-set after AUTOSPC) with bulk data, as a Nastran external
superelement with DMIG matrices in its punch (the root face as boundary, every
fixed-interface mode as q-set), and as Ansys HBMAT text with its mapping file and a .cdb
archive. Each route is read and reduced (clamped at the root) and compared with the direct
reduction of the same FE model: frequencies, mass properties and the modes' inertia
coupling (S̄ and Ī_θf⁽⁰⁾, mass-normalised, up to each mode's sign) to 1e-9 (the DMIG
punch's mass terms to what its ten-digit fields hold), and the geometric-stiffening
matrices where the route carries the elements.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.io
import scipy.linalg as sla
import scipy.sparse as sp

from flexmbs.modal import clamped_modes, read_modal
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.io import fe_matrices
from flexmbs.modal.stiffening import with_stiffening

STEEL = dict(E=210e9, nu=0.3, rho=7850.0)
N_MODES = 6
IDS = 101 + 2 * np.arange(7 * 3 * 2)  # node labels as a user's model might have them


@pytest.fixture(scope="module")
def fe():
    return box_mesh(0.3, 0.04, 0.02, 6, 2, 1, **STEEL)


@pytest.fixture(scope="module")
def reference(fe):
    return clamped_modes(fe, "x0", N_MODES, normalization="mass")


def _without_root_mass(fe):
    """``fe`` with the clamped DOFs' mass rows and columns removed: what an a-set (or
    HBMAT, which leaves constrained equations out) holds."""
    from dataclasses import replace

    keep = np.ones(fe.n_dof)
    keep[fe.node_dofs(fe.node_sets["x0"])] = 0.0
    mask = sp.diags(keep)
    return replace(fe, mass=(mask @ fe.mass @ mask).tocsr())


@pytest.fixture(scope="module")
def reference_without_root_mass(fe):
    """The direct reduction of :func:`_without_root_mass`."""
    return clamped_modes(_without_root_mass(fe), "x0", N_MODES, normalization="mass")


def _coupling(data):
    """Per mode |S̄| and |Ī_θf⁽⁰⁾| columns (mass-normalised modes: sign-free)."""
    inv = data.invariants
    return np.abs(inv.M0[:3, 6:]), np.abs(inv.I_tf0)


def _compare(data, reference, *, complete_mass=True):
    np.testing.assert_allclose(data.frequencies, reference.frequencies, rtol=1e-9)
    if complete_mass:
        np.testing.assert_allclose(data.total_mass, reference.total_mass, rtol=1e-9)
        np.testing.assert_allclose(data.inertia_origin, reference.inertia_origin, rtol=0,
                                   atol=1e-9 * np.abs(reference.inertia_origin).max())
        for ours, theirs in zip(_coupling(data), _coupling(reference), strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * theirs.max())


def test_abaqus_text(tmp_path, fe, reference):
    mass, stiff = tmp_path / "part_MASS1.mtx", tmp_path / "part_STIF1.mtx"
    fe_matrices.write_abaqus_matrix(fe.mass, mass, IDS, 3)
    fe_matrices.write_abaqus_matrix(fe.stiffness, stiff, IDS, 3)
    root = ", ".join(str(IDS[k]) for k in fe.node_sets["x0"])
    lines = ["*HEADING", "bar", "*NODE"]
    lines += [f"{i}, {x!r}, {y!r}, {z!r}" for i, (x, y, z) in zip(IDS, fe.nodes.tolist(),
                                                                   strict=True)]
    lines += ["*ELEMENT, TYPE=C3D8, ELSET=BAR"]
    lines += [f"{e + 1}, " + ", ".join(str(IDS[k]) for k in conn)
              for e, conn in enumerate(fe.cells["hexahedron"])]
    lines += ["*NSET, NSET=ROOT", root]
    inp = tmp_path / "part.inp"
    inp.write_text("\n".join(lines) + "\n")
    via = fe_matrices.read_abaqus(mass, stiff, inp, material={"E": STEEL["E"],
                                                              "nu": STEEL["nu"]})
    data = clamped_modes(via, "ROOT", N_MODES, normalization="mass")
    _compare(data, reference)
    # the stiffening matrices of the twelve unit load cases, from the .inp's elements
    ours = with_stiffening(data, via)
    theirs = with_stiffening(reference, fe)
    assert sorted(ours.stiffening) == sorted(theirs.stiffening)
    signs = np.sign(np.sum(data.phi * reference.phi, axis=0))
    flip = np.outer(signs, signs)
    for case, matrix in theirs.stiffening.items():
        np.testing.assert_allclose(ours.stiffening[case] * flip, matrix, rtol=0,
                                   atol=1e-9 * np.abs(matrix).max())


def test_matrix_market(tmp_path, fe, reference):
    scipy.io.mmwrite(str(tmp_path / "m.mtx"), fe.mass, symmetry="symmetric")
    scipy.io.mmwrite(str(tmp_path / "k.mtx"), fe.stiffness, symmetry="symmetric")
    rows = [f"{i},{x!r},{y!r},{z!r}" for i, (x, y, z) in zip(IDS, fe.nodes.tolist(),
                                                              strict=True)]
    (tmp_path / "nodes.csv").write_text("id,x,y,z\n" + "\n".join(rows) + "\n")
    via = fe_matrices.read_matrix_market(tmp_path / "m.mtx", tmp_path / "k.mtx",
                                         tmp_path / "nodes.csv")
    data = clamped_modes(via, IDS[fe.node_sets["x0"]], N_MODES, normalization="mass")
    _compare(data, reference)


def _bulk(path, fe):
    from pyNastran.bdf.bdf import BDF

    model = BDF(debug=None)
    for nid, xyz in zip(IDS, fe.nodes.tolist(), strict=True):
        model.add_grid(int(nid), xyz)
    for e, conn in enumerate(fe.cells["hexahedron"]):
        model.add_chexa(1 + e, 1, [int(IDS[k]) for k in conn])
    model.add_psolid(1, 1)
    model.add_mat1(1, STEEL["E"], None, STEEL["nu"], rho=STEEL["rho"])
    model.add_spc1(1, "123", [int(IDS[k]) for k in fe.node_sets["x0"]])
    model.write_bdf(str(path))


@pytest.mark.parametrize("layout", ["g-set, 6 DOFs per grid", "a-set, 3 DOFs per grid"])
def test_nastran_op4(tmp_path, fe, reference, reference_without_root_mass, layout):
    pytest.importorskip("pyNastran")
    from pyNastran.op2.result_objects.matrix import Matrix
    from pyNastran.op4.op4 import write_op4

    from flexmbs.modal.io.nastran import read_nastran

    _bulk(tmp_path / "bar.bdf", fe)
    if layout.startswith("g-set"):
        rows = (6 * np.arange(fe.n_nodes)[:, None] + np.arange(3)).ravel()
        e = sp.csr_matrix((np.ones(rows.size), (rows, np.arange(rows.size))),
                          shape=(6 * fe.n_nodes, rows.size))
        m, k = e @ fe.mass @ e.T, e @ fe.stiffness @ e.T
    else:
        keep = np.setdiff1d(np.arange(fe.n_dof), fe.node_dofs(fe.node_sets["x0"]))
        m, k = fe.mass[keep][:, keep], fe.stiffness[keep][:, keep]
    write_op4(str(tmp_path / "bar.op4"), {"M": Matrix("M", 6, m.toarray()),
                                          "K": Matrix("K", 6, k.toarray())}, is_binary=False)
    via = read_nastran(f"{tmp_path}/bar.op4:M", f"{tmp_path}/bar.op4:K", tmp_path / "bar.bdf")
    data = clamped_modes(via, "spc", N_MODES, normalization="mass")
    _compare(data, reference, complete_mass=layout.startswith("g-set"))
    if not layout.startswith("g-set"):  # an a-set holds no mass at the clamped grids
        _compare(data, reference_without_root_mass)


def _dmig(name, matrix, labels):
    """DMIG cards as EXTSEOUT(DMIGPCH) punches them: a small-field header (symmetric,
    real double), then per column a large-field line and one line per upper entry."""
    def field(v):
        return f"{v:16d}" if isinstance(v, int) else f"{v: .9E}".replace("E", "D")

    out = [f"DMIG    {name:<8s}       0       6       2       0{'':16s}{len(labels):8d}"]
    for j, (gj, cj) in enumerate(labels):
        rows = [i for i in range(j + 1) if matrix[i, j] != 0.0]
        if rows:
            out.append(f"DMIG*   {name:<16s}{field(gj)}{field(cj)}")
            out += [f"*       {field(labels[i][0])}{field(labels[i][1])}"
                    f"{field(float(matrix[i, j]))}" for i in rows]
    return out


def test_nastran_superelement_dmig_punch(tmp_path, fe, reference):
    """The bar as an external superelement: its root face the boundary (T1–T3), every
    fixed-interface mode a q-set scalar point (Craig–Bampton with nothing truncated, in
    a-set coordinates). Welded at the boundary, it is the clamped bar."""
    pytest.importorskip("pyNastran")
    root = fe.node_sets["x0"]
    b = fe.node_dofs(root)
    i = np.setdiff1d(np.arange(fe.n_dof), b)
    k, m = fe.stiffness.toarray(), fe.mass.toarray()
    _, phi_n = sla.eigh(k[np.ix_(i, i)], m[np.ix_(i, i)])
    psi = -np.linalg.solve(k[np.ix_(i, i)], k[np.ix_(i, b)])
    basis = np.zeros((fe.n_dof, b.size + i.size))
    basis[b, :b.size] = np.eye(b.size)
    basis[i, :b.size] = psi
    basis[i, b.size:] = phi_n
    k_aa, m_aa = basis.T @ k @ basis, basis.T @ m @ basis
    q_ids = [90001 + j for j in range(i.size)]
    labels = [(int(IDS[n]), c) for n in root for c in (1, 2, 3)] + [(q, 0) for q in q_ids]
    cards = ["BEGIN SUPER     7"]
    cards += [f"GRID    {int(IDS[n]):>8d}        {x:8.5f}{y:8.5f}{z:8.5f}"
              for n, (x, y, z) in zip(root, fe.nodes[root].tolist(), strict=True)]
    extrn = [f"{int(IDS[n]):>8d}{123:>8d}" for n in root]
    extrn += [f"{q:>8d}{0:>8d}" for q in q_ids]
    for start in range(0, len(extrn), 4):
        head = "EXTRN   " if start == 0 else "        "
        cards.append(head + "".join(extrn[start:start + 4]))
    cards.append(f"QSET1   {0:>8d}{q_ids[0]:>8d}    THRU{q_ids[-1]:>8d}")
    cards.append(f"SPOINT  {q_ids[0]:>8d}    THRU{q_ids[-1]:>8d}")
    cards += _dmig("KAAX", k_aa, labels) + _dmig("MAAX", m_aa, labels)
    punch = tmp_path / "bar.pch"
    punch.write_text("\n".join(cards) + "\n")
    data = read_modal(punch, reference_frame="attached")
    np.testing.assert_allclose(data.frequencies[:N_MODES], reference.frequencies, rtol=1e-9)
    # A DMIG field holds ten significant digits: each entry is rounded by up to 5e-10 of
    # itself. The mass of a rigid translation t moves by at most Σ |t_i| |M_ij| |t_j| 5e-10.
    t = np.zeros(len(labels))
    t[: 3 * root.size: 3] = 1.0
    bound = 5e-10 * t @ np.abs(m_aa) @ t
    assert abs(data.total_mass - reference.total_mass) <= bound
    np.testing.assert_allclose(data.inertia_origin, reference.inertia_origin, rtol=0,
                               atol=1e-8 * np.abs(reference.inertia_origin).max())
    first = data.select(np.arange(N_MODES))
    for ours, theirs in zip(_coupling(first), _coupling(reference), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-8 * theirs.max())


def _hb(lower) -> str:
    """A symmetric matrix's lower triangle as HBMAT text (Harwell–Boeing, type RSA)."""
    buf = io.StringIO()
    scipy.io.hb_write(buf, sp.csc_matrix(lower))
    lines = buf.getvalue().splitlines()
    lines[2] = "RSA" + lines[2][3:]
    return "\n".join(lines) + "\n"


def test_ansys_hbmat(tmp_path, fe, reference, reference_without_root_mass):
    """HBMAT files leave the constrained equations out; the mapping file names each
    equation's node and DOF; the archive (written by ansys-mapdl-reader) the nodes."""
    pytest.importorskip("ansys.mapdl.reader")
    import pyvista as pv
    from ansys.mapdl.reader import save_as_archive

    from flexmbs.modal.io.ansys import read_ansys

    grid = pv.UnstructuredGrid({pv.CellType.HEXAHEDRON: fe.cells["hexahedron"]}, fe.nodes)
    grid.point_data["ansys_node_num"] = IDS.astype(np.int32)
    save_as_archive(str(tmp_path / "bar.cdb"), grid)
    free = np.setdiff1d(np.arange(fe.n_dof), fe.node_dofs(fe.node_sets["x0"]))
    order = np.random.default_rng(5).permutation(free)
    labels = ("UX", "UY", "UZ")
    heading = " Matrix Eqn    Node     DOF\n"
    mapping = heading + "".join(f"{e:11d}{int(IDS[d // 3]):8d}    {labels[d % 3]}\n"
                                for e, d in enumerate(order, start=1))
    for name, mat in (("mass", fe.mass), ("stiff", fe.stiffness)):
        sub = mat[order][:, order]
        (tmp_path / f"{name}.matrix").write_text(_hb(sp.tril(sub)))
        (tmp_path / f"{name}.mapping").write_text(mapping)
    via = read_ansys(tmp_path / "mass.matrix", tmp_path / "stiff.matrix",
                     tmp_path / "bar.cdb")
    data = clamped_modes(via, "constrained", N_MODES, normalization="mass")
    # HBMAT holds no mass at the constrained equations (like an a-set)
    _compare(data, reference, complete_mass=False)
    _compare(data, reference_without_root_mass)
    # the stiffening matrices from the archive's hexahedra and the given material
    with_material = read_ansys(tmp_path / "mass.matrix", tmp_path / "stiff.matrix",
                               tmp_path / "bar.cdb",
                               material={"E": STEEL["E"], "nu": STEEL["nu"]})
    ours = with_stiffening(clamped_modes(with_material, "constrained", N_MODES,
                         normalization="mass"), with_material)
    theirs = with_stiffening(reference_without_root_mass, _without_root_mass(fe))
    signs = np.sign(np.sum(ours.phi * theirs.phi, axis=0))
    flip = np.outer(signs, signs)
    for case, matrix in theirs.stiffening.items():
        np.testing.assert_allclose(ours.stiffening[case] * flip, matrix, rtol=0,
                                   atol=1e-9 * np.abs(matrix).max())
