"""Tests of the FE matrix readers (flexmbs.modal.io.fe_matrices).

Reference matrices are built here: a 3-node spring chain (3 DOFs per node, the committed
fixtures) and small random symmetric positive definite matrices (6 DOFs per node), written
with scipy.io.mmwrite or in Abaqus ``*MATRIX OUTPUT`` text, read back and compared.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from flexmbs.errors import ReadError, ValidationError
from flexmbs.modal.io.fe_matrices import (
    read_abaqus,
    read_abaqus_matrix,
    read_matrix_market,
    read_nodes,
    write_abaqus_matrix,
)

DATA = Path(__file__).parent / "data"
CHAIN_IDS = np.array([10, 20, 30])
CHAIN_XYZ = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0]])


def chain_matrices():
    """3-node chain: springs 2000/1000/500 N/m per axis between neighbours; lumped masses."""
    k = np.zeros((9, 9))
    for e in range(2):
        for a, stiff in enumerate((2000.0, 1000.0, 500.0)):
            i, j = 3 * e + a, 3 * (e + 1) + a
            k[i, i] += stiff
            k[j, j] += stiff
            k[i, j] -= stiff
            k[j, i] -= stiff
    m = np.diag(np.repeat([1.0, 2.0, 1.5], 3))
    return m, k


def spd(n: int, seed: int, scale: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    b = rng.normal(size=(n, n))
    return scale * (b @ b.T / n + np.eye(n))


def six_dof_model(n_nodes: int = 3):
    """Random symmetric matrices with translation-rotation coupling, 6 DOFs per node."""
    n = 6 * n_nodes
    return spd(n, 1, 2.0), spd(n, 2, 1e4)


def _csv(path: Path, ids, xyz, header: bool = True) -> Path:
    lines = ["id,x,y,z"] if header else []
    if ids is None:
        lines += [f"{float(x)!r}, {float(y)!r}, {float(z)!r}" for x, y, z in xyz]
    else:
        lines += [f"{i},{float(x)!r},{float(y)!r},{float(z)!r}"
                  for i, (x, y, z) in zip(ids, xyz, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _mm_pair(tmp_path, m, k, symmetry="symmetric"):
    mp, kp = tmp_path / "mass.mtx", tmp_path / "stiff.mtx"
    scipy.io.mmwrite(str(mp), sp.csr_matrix(m), symmetry=symmetry)
    scipy.io.mmwrite(str(kp), sp.csr_matrix(k), symmetry=symmetry)
    return mp, kp


def _inp(path: Path, ids, xyz, extra: str = "") -> Path:
    body = "*HEADING\nchain\n** a comment\n*NODE, NSET=NALL\n"
    body += "".join(f"{i}, {float(x)!r}, {float(y)!r}, {float(z)!r}\n"
                    for i, (x, y, z) in zip(ids, xyz, strict=True))
    path.write_text(body + extra + "*ELEMENT, TYPE=T3D2\n1, 10, 20\n")
    return path


# ---------------------------------------------------------------------------- nodes
def test_read_nodes_csv_with_and_without_ids(tmp_path):
    t = read_nodes(_csv(tmp_path / "a.csv", CHAIN_IDS, CHAIN_XYZ))
    assert_array_equal(t.ids, CHAIN_IDS)
    assert_allclose(t.coords, CHAIN_XYZ, rtol=0, atol=0)
    t = read_nodes(_csv(tmp_path / "b.csv", None, CHAIN_XYZ, header=False))
    assert_array_equal(t.ids, [1, 2, 3])
    assert_allclose(t.coords, CHAIN_XYZ, rtol=0, atol=0)


def test_read_nodes_inp_with_sets(tmp_path):
    extra = ("*NSET, NSET=ENDS\n10, 30\n*NSET, NSET=GEN, GENERATE\n10, 30, 10\n"
             "*Nset, nset=BOTH\nENDS, 20\n")
    t = read_nodes(_inp(tmp_path / "m.inp", CHAIN_IDS, CHAIN_XYZ, extra))
    assert_array_equal(t.ids, CHAIN_IDS)
    assert_allclose(t.coords, CHAIN_XYZ, rtol=0, atol=0)
    assert_array_equal(t.sets["NALL"], CHAIN_IDS)
    assert_array_equal(t.sets["ENDS"], [10, 30])
    assert_array_equal(t.sets["GEN"], [10, 20, 30])
    assert_array_equal(t.sets["BOTH"], [10, 30, 20])


def test_node_file_errors(tmp_path):
    with pytest.raises(ReadError, match=r"node file '.*nope\.csv' does not exist"):
        read_nodes(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("id,x,y,z\n1,0,0,0\n2,0,zero,0\n")
    with pytest.raises(ReadError, match=re.escape(str(bad)) + r", line 3: cannot read "
                       r"'2,0,zero,0' as node data"):
        read_nodes(bad)
    bad.write_text("1,0,0,0\n2,0,0\n")
    with pytest.raises(ReadError, match=r"line 2: '2,0,0' has 3 fields, but the lines before "
                       r"have 4"):
        read_nodes(bad)
    bad.write_text("1,0,0,0\n1,1,0,0\n")
    with pytest.raises(ReadError, match=re.escape(str(bad)) + r", lines 1 and 2: node label 1 "
                       r"is defined twice"):
        read_nodes(bad)
    bad.write_text("1.5,0,0,0\n")
    with pytest.raises(ReadError, match=r"line 1: node id '1\.5' is not an integer"):
        read_nodes(bad)
    bad.write_text("# only a comment\n")
    with pytest.raises(ReadError, match=re.escape(str(bad)) + ": no node coordinates found"):
        read_nodes(bad)
    inp = tmp_path / "bad.inp"
    inp.write_text("*NODE\n1, 0, 0, 0\n2; 1; 0; 0\n")
    with pytest.raises(ReadError, match=re.escape(str(inp)) + r", line 3: cannot read \*NODE "
                       r"data line '2; 1; 0; 0'"):
        read_nodes(inp)
    inp.write_text("*NODE\n1, 0, 0, 0\n*NSET, NSET=S\n1, 7\n")
    with pytest.raises(ReadError, match=r"\*NSET 'S' names node label 7, which no \*NODE"):
        read_abaqus_nodes_only(inp)


def read_abaqus_nodes_only(inp: Path):
    """Sets are resolved when a model is built; use a 1-node matrix to trigger it."""
    m = inp.with_name("m1.mtx")
    m.write_text("1,1, 1,1, 1.0\n1,2, 1,2, 1.0\n1,3, 1,3, 1.0\n")
    return read_abaqus(m, m, inp)


# ---------------------------------------------------------------------------- Matrix Market
def test_matrix_market_round_trip_3dof(tmp_path):
    m, k = chain_matrices()
    mp, kp = _mm_pair(tmp_path, m, k)
    fe = read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ),
                            node_sets={"tip": [30]})
    assert fe.dofs_per_node == 3
    assert_array_equal(fe.node_ids, CHAIN_IDS)
    assert_allclose(fe.nodes, CHAIN_XYZ, rtol=0, atol=0)
    assert_allclose(fe.mass.toarray(), m, rtol=0, atol=0)
    assert_allclose(fe.stiffness.toarray(), k, rtol=0, atol=0)
    assert_array_equal(fe.node_sets["tip"], [2])
    assert fe.metadata["format"] == "matrix-market"
    assert fe.metadata["source_units"] == "SI"


@pytest.mark.parametrize("symmetry", ["symmetric", "general"])
def test_matrix_market_round_trip_6dof(tmp_path, symmetry):
    m, k = six_dof_model()
    mp, kp = _mm_pair(tmp_path, m, k, symmetry)
    fe = read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", None, CHAIN_XYZ, header=False))
    assert fe.dofs_per_node == 6
    assert_array_equal(fe.node_ids, [1, 2, 3])
    # mmwrite keeps 17 significant digits: exact
    assert_allclose(fe.mass.toarray(), m, rtol=0, atol=0)
    assert_allclose(fe.stiffness.toarray(), k, rtol=0, atol=0)


def test_matrix_market_dense_array_format(tmp_path):
    m, k = chain_matrices()
    mp, kp = tmp_path / "m.mtx", tmp_path / "k.mtx"
    scipy.io.mmwrite(str(mp), m)
    scipy.io.mmwrite(str(kp), k)
    fe = read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))
    assert_allclose(fe.stiffness.toarray(), k, rtol=0, atol=0)


def test_matrix_market_units_scale_translations_and_rotations(tmp_path):
    """mm-t-s: translational blocks by 1e3 (t->kg, N/mm->N/m), mixed by 1, rotational by 1e-3."""
    m, k = six_dof_model()
    mp, kp = _mm_pair(tmp_path, m, k)
    nodes = _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ * 1e3)
    fe = read_matrix_market(mp, kp, nodes, units="mm-t-s")
    rot = np.tile(np.repeat([False, True], 3), 3)
    factor = np.where(rot[:, None] & rot[None, :], 1e-3,
                      np.where(rot[:, None] | rot[None, :], 1.0, 1e3))
    assert_allclose(fe.nodes, CHAIN_XYZ, rtol=1e-15, atol=1e-18)
    # mass: t -> kg (1e3), mm -> m on each translational side (1e-3 each)
    m_factor = np.where(rot[:, None] & rot[None, :], 1e3 * 1e-6,
                        np.where(rot[:, None] | rot[None, :], 1e3 * 1e-3, 1e3))
    assert_allclose(fe.mass.toarray(), m * m_factor, rtol=1e-14, atol=0)
    assert_allclose(fe.stiffness.toarray(), k * factor, rtol=1e-14, atol=0)
    assert fe.metadata["source_units"] == "mm-t-s"


def test_matrix_market_explicit_dofs_per_node(tmp_path):
    m, k = six_dof_model(n_nodes=2)  # 12 x 12: 2 nodes x 6, or 4 nodes x 3
    mp, kp = _mm_pair(tmp_path, m, k)
    four = _csv(tmp_path / "four.csv", None, np.arange(12.0).reshape(4, 3))
    fe = read_matrix_market(mp, kp, four, dofs_per_node=3)
    assert fe.dofs_per_node == 3 and fe.n_nodes == 4
    with pytest.raises(ReadError, match=r"matrices are 12 x 12, but .*four\.csv has 4 nodes x "
                       r"6 DOFs = 24"):
        read_matrix_market(mp, kp, four, dofs_per_node=6)
    with pytest.raises(ValidationError, match="dofs_per_node must be 3 or 6, got 2"):
        read_matrix_market(mp, kp, four, dofs_per_node=2)


def test_matrix_market_size_mismatch_names_both_numbers(tmp_path):
    m, k = chain_matrices()
    mp, kp = _mm_pair(tmp_path, m, k)
    five = _csv(tmp_path / "five.csv", None, np.zeros((5, 3)))
    with pytest.raises(ReadError, match=re.escape(str(mp)) + r": the matrices are 9 x 9, but "
                       r".*five\.csv has 5 nodes: 9 / 5 = 1\.8 DOFs per node, expected 3 or 6"):
        read_matrix_market(mp, kp, five)


def test_matrix_market_mass_and_stiffness_sizes_differ(tmp_path):
    m, _ = chain_matrices()
    mp, kp = _mm_pair(tmp_path, m, six_dof_model()[1])
    with pytest.raises(ReadError, match=r"mass\.mtx is 9 x 9 but .*stiff\.mtx is 18 x 18"):
        read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))


def test_matrix_market_non_square(tmp_path):
    m, k = chain_matrices()
    mp, kp = _mm_pair(tmp_path, m, k)
    scipy.io.mmwrite(str(kp), sp.csr_matrix(k[:, :6]))
    with pytest.raises(ReadError, match=re.escape(str(kp)) + r": the stiffness matrix is 9 x 6;"
                       r" it must be square"):
        read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))


def test_matrix_market_malformed_line(tmp_path):
    m, k = chain_matrices()
    mp, kp = _mm_pair(tmp_path, m, k)
    lines = kp.read_text().splitlines()
    first_entry = next(i for i, ln in enumerate(lines) if not ln.startswith("%")) + 1
    lines[first_entry + 1] = "2 x 3.5"
    kp.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReadError, match=re.escape(str(kp)) + r": not a readable Matrix Market "
                       rf"file, line {first_entry + 2}: cannot read matrix entry '2 x 3\.5'"):
        read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))
    kp.write_text("not a matrix\n")
    with pytest.raises(ReadError, match=r"line 1: 'not a matrix' is not a '%%MatrixMarket"):
        read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))


def test_matrix_market_missing_files(tmp_path):
    m, k = chain_matrices()
    mp, kp = _mm_pair(tmp_path, m, k)
    with pytest.raises(ReadError, match=r"stiffness matrix file '.*gone\.mtx' does not exist"):
        read_matrix_market(mp, tmp_path / "gone.mtx", tmp_path / "n.csv")
    with pytest.raises(ReadError, match=r"node file '.*n\.csv' does not exist"):
        read_matrix_market(mp, kp, tmp_path / "n.csv")


def test_matrix_market_asymmetric_matrix_names_files(tmp_path):
    m, k = chain_matrices()
    k[0, 3] += 1.0
    mp, kp = _mm_pair(tmp_path, m, k, symmetry="general")
    with pytest.raises(ReadError, match=re.escape(str(mp)) + r" / .*FEModel\.stiffness is not "
                       r"symmetric"):
        read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))


def test_unknown_node_set_label(tmp_path):
    m, k = chain_matrices()
    mp, kp = _mm_pair(tmp_path, m, k)
    with pytest.raises(ValidationError, match=r"node_sets\['tip'\] names node label\(s\) \[31\]"):
        read_matrix_market(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ),
                           node_sets={"tip": [31]})


def test_committed_matrix_market_fixture():
    m, k = chain_matrices()
    fe = read_matrix_market(DATA / "mm_chain_mass.mtx", DATA / "mm_chain_stiffness.mtx",
                            DATA / "mm_chain_nodes.csv")
    assert_array_equal(fe.node_ids, CHAIN_IDS)
    assert_allclose(fe.nodes, CHAIN_XYZ, rtol=0, atol=0)
    assert_allclose(fe.mass.toarray(), m, rtol=0, atol=0)
    assert_allclose(fe.stiffness.toarray(), k, rtol=0, atol=0)


# ---------------------------------------------------------------------------- Abaqus
def _abaqus_pair(tmp_path, m, k, ids, dpn, triangle="lower"):
    mp, kp = tmp_path / "job_MASS2.mtx", tmp_path / "job_STIF2.mtx"
    write_abaqus_matrix(m, mp, ids, dpn, triangle=triangle)
    write_abaqus_matrix(k, kp, ids, dpn, triangle=triangle)
    return mp, kp


def test_read_abaqus_matrix_entries(tmp_path):
    path = tmp_path / "a.mtx"
    path.write_text("** comment\n10,1, 10,1, 1.5\n20, 3, 10, 2, -2.5D+01\n")
    e = read_abaqus_matrix(path)
    assert_array_equal(e.row_node, [10, 20])
    assert_array_equal(e.row_dof, [1, 3])
    assert_array_equal(e.col_node, [10, 10])
    assert_array_equal(e.col_dof, [1, 2])
    assert_allclose(e.value, [1.5, -25.0], rtol=0, atol=0)
    assert_array_equal(e.line, [2, 3])


@pytest.mark.parametrize("triangle", ["lower", "upper", "both"])
def test_abaqus_round_trip_6dof(tmp_path, triangle):
    m, k = six_dof_model()
    ids = np.array([7, 3, 11])  # labels in any order: the node file's order is kept
    mp, kp = _abaqus_pair(tmp_path, m, k, ids, 6, triangle)
    fe = read_abaqus(mp, kp, _csv(tmp_path / "n.csv", ids, CHAIN_XYZ))
    assert fe.dofs_per_node == 6
    assert_array_equal(fe.node_ids, ids)
    assert_allclose(fe.mass.toarray(), m, rtol=0, atol=0)
    assert_allclose(fe.stiffness.toarray(), k, rtol=0, atol=0)
    assert fe.metadata["stored_triangle"]["stiffness"] == triangle


def test_abaqus_inp_nodes_sets_orphans_and_units(tmp_path):
    m, k = chain_matrices()
    mp, kp = _abaqus_pair(tmp_path, m, k, CHAIN_IDS, 3)
    ids = np.append(CHAIN_IDS, 900)  # 900: a reference point used by no element
    xyz = np.vstack([CHAIN_XYZ, [[5.0, 5.0, 5.0]]]) * 1e3
    inp = _inp(tmp_path / "model.inp", ids, xyz, "*NSET, NSET=TIP\n30\n")
    fe = read_abaqus(mp, kp, inp, units="mm-t-s", node_sets={"root": [10]})
    assert fe.dofs_per_node == 3
    assert_array_equal(fe.node_ids, CHAIN_IDS)
    assert fe.metadata["dropped_nodes"] == [900]
    assert fe.metadata["node_sets_with_dropped_nodes"] == ["NALL"]
    assert_array_equal(fe.node_sets["NALL"], [0, 1, 2])
    assert_array_equal(fe.node_sets["TIP"], [2])
    assert_array_equal(fe.node_sets["root"], [0])
    assert_allclose(fe.nodes, CHAIN_XYZ, rtol=1e-15, atol=0)
    assert_allclose(fe.mass.toarray(), 1e3 * m, rtol=1e-15, atol=0)       # t -> kg
    assert_allclose(fe.stiffness.toarray(), 1e3 * k, rtol=1e-15, atol=0)  # N/mm -> N/m


def test_committed_abaqus_fixture():
    m, k = chain_matrices()
    fe = read_abaqus(DATA / "abaqus_chain_MASS1.mtx", DATA / "abaqus_chain_STIF1.mtx",
                     DATA / "abaqus_chain.inp")
    assert_array_equal(fe.node_ids, CHAIN_IDS)
    assert_allclose(fe.nodes, CHAIN_XYZ, rtol=0, atol=0)
    assert_allclose(fe.mass.toarray(), m, rtol=0, atol=0)
    assert_allclose(fe.stiffness.toarray(), k, rtol=0, atol=0)
    assert_array_equal(fe.node_sets["ROOT"], [0])
    assert fe.metadata["dropped_nodes"] == [999]


def test_abaqus_triangles_that_disagree(tmp_path):
    m, k = chain_matrices()
    mp, kp = _abaqus_pair(tmp_path, m, k, CHAIN_IDS, 3, "both")
    text = kp.read_text().replace("10,1, 20,1, -2.0000000000000000e+03",
                                  "10,1, 20,1, -2.1000000000000000e+03")
    kp.write_text(text)
    lines = text.splitlines()
    upper = lines.index("10,1, 20,1, -2.1000000000000000e+03") + 1
    lower = lines.index("20,1, 10,1, -2.0000000000000000e+03") + 1
    with pytest.raises(ReadError, match=re.escape(str(kp)) + r": both triangles are stored but "
                       rf"disagree: line {upper} has -2100 and line {lower} .* has -2000"):
        read_abaqus(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))


def test_abaqus_duplicate_entry(tmp_path):
    m, k = chain_matrices()
    mp, kp = _abaqus_pair(tmp_path, m, k, CHAIN_IDS, 3)
    kp.write_text(kp.read_text() + "10,1, 10,1, 5.0\n")
    with pytest.raises(ReadError, match=re.escape(str(kp)) + r": lines 1 and \d+ give the same "
                       r"entry \(node 10 DOF 1, node 10 DOF 1\) twice"):
        read_abaqus(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))


@pytest.mark.parametrize("label", [0, -3])
def test_abaqus_internal_nodes_are_rejected(tmp_path, label):
    m, k = chain_matrices()
    mp, kp = _abaqus_pair(tmp_path, m, k, CHAIN_IDS, 3)
    kp.write_text(kp.read_text() + f"{label},1, 10,1, 1.0\n")
    n_lines = len(kp.read_text().splitlines())
    with pytest.raises(ReadError, match=re.escape(str(kp)) + rf", line {n_lines}: node label "
                       rf"{label} is an Abaqus internal node \(a Lagrange multiplier"):
        read_abaqus(mp, kp, _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ))


def test_abaqus_unknown_node_label(tmp_path):
    m, k = chain_matrices()
    mp, kp = _abaqus_pair(tmp_path, m, k, [10, 20, 77], 3)
    n = _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ)
    with pytest.raises(ReadError, match=re.escape(str(mp)) + r", line \d+: the mass matrix uses "
                       r"node label 77, which .*n\.csv does not define"):
        read_abaqus(mp, kp, n)


def test_abaqus_malformed_lines(tmp_path):
    m, k = chain_matrices()
    mp, kp = _abaqus_pair(tmp_path, m, k, CHAIN_IDS, 3)
    n = _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ)
    good = kp.read_text()
    kp.write_text(good + "20,1, 10,1\n")
    count = len(good.splitlines()) + 1
    with pytest.raises(ReadError, match=re.escape(str(kp)) + rf", line {count}: cannot read "
                       r"'20,1, 10,1'; expected 5 fields"):
        read_abaqus(mp, kp, n)
    kp.write_text(good + "20,1, 10,1, abc\n")
    with pytest.raises(ReadError, match=rf"line {count}: matrix entry 'abc' is not a number"):
        read_abaqus(mp, kp, n)
    kp.write_text(good + "20,x, 10,1, 1.0\n")
    with pytest.raises(ReadError, match=rf"line {count}: node labels and DOFs must be integers"):
        read_abaqus(mp, kp, n)
    kp.write_text(good + "20,8, 10,1, 1.0\n")
    with pytest.raises(ReadError, match=rf"line {count}: DOF 8 is not a structural DOF"):
        read_abaqus(mp, kp, n)


def test_abaqus_coordinate_and_substructure_formats_are_explained(tmp_path):
    m, k = chain_matrices()
    mp, kp = _abaqus_pair(tmp_path, m, k, CHAIN_IDS, 3)
    n = _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ)
    kp.write_text("1 1 2000.0\n2 1 -2000.0\n")  # COORDINATE, but 2 equations for 3 nodes
    with pytest.raises(ReadError, match=re.escape(str(kp)) + r": the matrix has 2 "
                       r"equations, but the node file has 3 nodes"):
        read_abaqus(mp, kp, n)
    kp.write_text("*MATRIX,TYPE=STIFFNESS\n1.0, 2.0\n")
    with pytest.raises(ReadError, match=r"line 1: .*\*SUBSTRUCTURE MATRIX OUTPUT file"):
        read_abaqus(mp, kp, n)
    kp.write_text("** nothing\n")
    with pytest.raises(ReadError, match=re.escape(str(kp)) + ": no matrix entries found"):
        read_abaqus(mp, kp, n)


def test_abaqus_missing_rotations_of_some_nodes(tmp_path):
    """Mixed model: node 30 is a solid node (3 DOFs) in a 6-DOF model."""
    m, k = six_dof_model()
    keep = np.r_[0:15]  # drop DOFs 4-6 of the third node
    m, k = m[np.ix_(keep, keep)], k[np.ix_(keep, keep)]
    full_m, full_k = np.zeros((18, 18)), np.zeros((18, 18))
    full_m[np.ix_(keep, keep)], full_k[np.ix_(keep, keep)] = m, k
    mp, kp = _abaqus_pair(tmp_path, full_m, full_k, CHAIN_IDS, 6)
    n = _csv(tmp_path / "n.csv", CHAIN_IDS, CHAIN_XYZ)
    with pytest.raises(ReadError, match=r"3 DOF\(s\) appear in neither matrix \(node 30 DOF 4, "
                       r"node 30 DOF 5, node 30 DOF 6\).*allow_missing_dofs=True"):
        read_abaqus(mp, kp, n)
    fe = read_abaqus(mp, kp, n, allow_missing_dofs=True)
    assert fe.metadata["missing_dofs"] == [[30, 4], [30, 5], [30, 6]]
    assert_allclose(fe.stiffness.toarray(), full_k, rtol=0, atol=0)


def test_abaqus_missing_files(tmp_path):
    with pytest.raises(ReadError, match=r"Abaqus matrix file '.*none\.mtx' does not exist"):
        read_abaqus(tmp_path / "none.mtx", tmp_path / "none.mtx", tmp_path / "n.csv")


def test_abaqus_coordinate_format_equals_the_matrix_input_format(tmp_path):
    """The same matrices written as FORMAT=COORDINATE (global equations: nodes in
    ascending label, 3 DOFs each; one triangle) read back equal to the MATRIX INPUT
    files, with a node file in another order, and give the same clamped frequencies."""
    from flexmbs.modal import clamped_modes
    from flexmbs.modal.fe.solid import box_mesh

    fe = box_mesh(0.5, 0.05, 0.03, 6, 2, 1, E=2.1e11, nu=0.3, rho=7850.0)
    labels = np.arange(fe.n_nodes) * 3 + 7  # ascending labels, node order = index order
    order = np.random.default_rng(1).permutation(fe.n_nodes)  # the node file shuffled
    nodes = _csv(tmp_path / "n.csv", labels[order], fe.nodes[order])
    for name, mat in (("M", fe.mass), ("K", fe.stiffness)):
        coo = sp.triu(sp.coo_matrix(mat)).tocoo()
        (tmp_path / f"{name}.mtx").write_text(
            "*Heading\n" + "".join(f"{r + 1}, {c + 1}, {v:.17e}\n"
                                    for r, c, v in zip(coo.row, coo.col, coo.data,
                                                       strict=True)))
    read = read_abaqus(tmp_path / "M.mtx", tmp_path / "K.mtx", nodes)
    index = [int(np.flatnonzero(read.node_ids == lab)[0]) for lab in labels]
    dofs = (3 * np.asarray(index)[:, None] + np.arange(3)).ravel()
    np.testing.assert_allclose(read.stiffness.toarray()[np.ix_(dofs, dofs)],
                               fe.stiffness.toarray(), rtol=1e-15, atol=0)
    np.testing.assert_allclose(read.mass.toarray()[np.ix_(dofs, dofs)], fe.mass.toarray(),
                               rtol=1e-15, atol=0)
    root = labels[np.isclose(fe.nodes[:, 0], 0.0)]
    ref = clamped_modes(fe, np.isclose(fe.nodes[:, 0], 0.0).nonzero()[0] + 1, 4)
    got = clamped_modes(read, root, 4)
    np.testing.assert_allclose(got.frequencies, ref.frequencies, rtol=1e-10)


def test_fe_matrices_reexports_the_split_modules():
    """fe_matrices re-exports the readers from their format modules (the same objects),
    so imports from before the split keep working."""
    from flexmbs.modal.io import abaqus, ansys, fe_matrices, fe_nodes, matrix_market

    homes = {"read_nodes": fe_nodes, "to_si": fe_nodes, "NodeTable": fe_nodes,
             "ElementBlock": fe_nodes, "INP_SOLIDS": fe_nodes, "_material_si": fe_nodes,
             "read_matrix_market": matrix_market, "LAYOUT_NULL_RTOL": matrix_market,
             "LAYOUT_MOVES_RTOL": matrix_market, "read_abaqus": abaqus,
             "read_abaqus_matrix": abaqus, "read_abaqus_coordinate": abaqus,
             "write_abaqus_matrix": abaqus, "AbaqusEntries": abaqus,
             "TRIANGLE_RTOL": abaqus}
    assert set(fe_matrices.__all__) == set(homes) - {"_material_si"}
    for name, module in homes.items():
        assert getattr(fe_matrices, name) is getattr(module, name), name
    assert ansys.to_si is fe_nodes.to_si
    assert ansys._material_si is fe_nodes._material_si


def test_a_chain_of_axis_springs_clamps_at_one_node():
    """The committed chain's springs act along fixed axes (its K is not invariant under
    rotation): clamping one node leaves no motion without strain energy, though the
    geometry alone (three collinear nodes) would leave rotations free. It was refused
    ("fix more nodes"); its clamped frequencies are scipy's of the free DOFs."""
    import scipy.linalg as sla

    from flexmbs.modal import clamped_modes

    fe = read_matrix_market(DATA / "mm_chain_mass.mtx", DATA / "mm_chain_stiffness.mtx",
                            DATA / "mm_chain_nodes.csv")
    free = np.setdiff1d(np.arange(fe.n_dof), fe.node_dofs([0]))
    lam = sla.eigh(fe.stiffness.toarray()[np.ix_(free, free)],
                   fe.mass.toarray()[np.ix_(free, free)], eigvals_only=True)
    data = clamped_modes(fe, [int(fe.node_ids[0])], 3)
    assert_allclose(data.frequencies, np.sqrt(lam[:3]) / (2 * np.pi), rtol=1e-10)
