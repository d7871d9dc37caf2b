"""Tests of the Ansys MAPDL readers (flexmbs.modal.io.ansys, flexmbs.modal.io.ansys_cdb).

Real MAPDL files come with ansys-mapdl-reader (``examples``):

* ``file.full``: the assembled stiffness and mass of a modal analysis of a 5 x 1 x 1
  beam of 40 SOLID186 bricks (321 nodes, 3 DOFs each), one end (21 nodes) constrained.
* ``HexBeam.cdb``: the archive of the same mesh (same node numbers, its elements list
  their nodes in the .full's nodal equivalence order), but its MP table (EX 7e10, DENS
  2700) is not the material the .full was built with.
* ``file.rst``: the result file of the same MAPDL job (jobname ``file``, version 15.0,
  same 321 nodes and 40 elements); its material table (EX 1.69e7, DENS 4.1408e-4) is the
  one of the .full. The mass check therefore takes the density from ``file.rst`` and the
  volume from ``HexBeam.cdb``'s elements.

The references are computed here from the reader's own public output
(``FullFile.load_km``: one triangle, the constrained rows and columns removed) with
dense scipy.linalg.eigh, independently of flexmbs' reading path.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.linalg as sl
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from flexmbs.errors import ReadError
from flexmbs.modal import clamped_modes, read_modal
from flexmbs.modal.io import ansys
from flexmbs.modal.io.ansys import read_ansys, read_hbmat, read_mapping

LABELS = ("UX", "UY", "UZ")
# the job's material (DENS 4.1408e-4 per unit volume, EX 1.69e7) is no SI material: the
# plausibility check of the reduction warns about it, as it should
pytestmark = pytest.mark.filterwarnings("ignore::flexmbs.errors.UnitsWarning")


@pytest.fixture(scope="module")
def raw(examples):
    """The reader's raw output: DOF table (node, DOF 0-2) in file order, symmetric K and
    M (dense) with the constrained rows removed, and the constrained flags."""
    from ansys.mapdl.reader import read_binary

    full = read_binary(examples.fullfile)
    dof_ref, k, m = full.load_km(as_sparse=True, sort=False)
    k, m = k.toarray(), m.toarray()
    k = k + np.triu(k, 1).T
    m = m + np.triu(m, 1).T
    const = {(int(a), int(b)) for a, b in full.const}
    constrained = np.array([(int(a), int(b)) in const for a, b in dof_ref])
    return {"dof_ref": np.asarray(dof_ref), "k": k, "m": m, "constrained": constrained}


@pytest.fixture(scope="module")
def reference(raw):
    """Eigenvalues and vectors of the free DOFs' K and M (dense, scipy)."""
    free = ~raw["constrained"]
    lam, vec = sl.eigh(raw["k"][np.ix_(free, free)], raw["m"][np.ix_(free, free)])
    return lam, vec, free


@pytest.fixture(scope="module")
def fe_full(examples):
    return read_ansys(examples.fullfile, examples.fullfile, examples.hexarchivefile)


def test_full_frequencies_are_the_free_dof_eigenvalues(fe_full, reference):
    lam_ref, _, _ = reference
    data = clamped_modes(fe_full, "constrained", 10, normalization="mass")
    lam = np.diag(data.K_ff)
    assert_allclose(np.diag(data.M_ff), 1.0, rtol=1e-10, atol=0)
    assert_allclose(lam, lam_ref[:10], rtol=1e-8, atol=0)


def test_full_dof_mapping_gives_the_reference_mode(fe_full, raw, reference):
    """Mode 3 (a single, not repeated eigenvalue) placed by the reader's (node, DOF)
    table equals flexmbs' mode at those nodes (up to sign and scale)."""
    lam_ref, vec, free = reference
    assert abs(lam_ref[2] - lam_ref[1]) > 1e-3 * lam_ref[2]
    assert abs(lam_ref[3] - lam_ref[2]) > 1e-3 * lam_ref[2]
    data = clamped_modes(fe_full, "constrained", 4, normalization="mass")
    ours = data.phi[:, 2]
    index = {int(v): i for i, v in enumerate(fe_full.node_ids)}
    rows = np.array([3 * index[int(n)] + int(d) for n, d in raw["dof_ref"][free]])
    theirs = vec[:, 2]
    scale = (theirs @ ours[rows]) / (theirs @ theirs)
    assert_allclose(ours[rows], scale * theirs, rtol=0, atol=1e-9 * np.max(np.abs(ours)))
    fixed = np.array([3 * index[int(n)] + int(d) for n, d in raw["dof_ref"][~free]])
    assert_array_equal(ours[fixed], 0.0)


def test_full_constrained_set_and_mesh(fe_full, raw, examples):
    const_nodes = np.unique(raw["dof_ref"][raw["constrained"], 0])
    assert_array_equal(fe_full.node_ids[fe_full.node_sets["constrained"]], const_nodes)
    assert fe_full.dofs_per_node == 3 and fe_full.n_nodes == 321
    assert fe_full.cells["hexahedron20"].shape == (40, 20)
    assert {"NCOMP2", "NODE_SELECTION"} <= set(fe_full.node_sets)
    # SOLID186 bricks take the archive's material, but its DENS (2700) is not the job's
    assert "not the one the matrices were built with" in fe_full.metadata[
        "archive_material_not_used"]
    # the constrained DOFs carry no stiffness (MAPDL's unit placeholder is dropped)
    dofs = fe_full.node_dofs(fe_full.node_sets["constrained"])
    assert fe_full.stiffness[dofs].nnz == 0


def test_full_mass_is_rho_v_of_the_job(fe_full, examples):
    """Total mass and centre of mass of the .full's mass matrix equal ρ V and the volume
    centroid of the archive's elements, ρ from the job's result file (module
    docstring: the archive's own DENS belongs to another material)."""
    from ansys.mapdl.reader import Archive, read_binary

    errors = np.geterr()  # the result-file reader sets np.seterr(invalid="ignore", ...)
    try:  # for the whole process at import; keep that from reaching other tests
        rho = read_binary(examples.rstfile).materials[1]["DENS"]
    finally:
        np.seterr(**errors)
    grid = Archive(examples.hexarchivefile).grid
    vol = grid.compute_cell_sizes(length=False, area=False, volume=True).cell_data["Volume"]
    centres = np.asarray(grid.cell_centers().points)
    t = np.zeros(fe_full.n_dof)
    t[0::3] = 1.0
    mass = t @ (fe_full.mass @ t)
    assert_allclose(mass, rho * vol.sum(), rtol=1e-6, atol=0)
    x = np.zeros(fe_full.n_dof)
    centre = []
    for axis in range(3):
        x[:] = 0.0
        x[axis::3] = fe_full.nodes[:, axis]
        e = np.zeros(fe_full.n_dof)
        e[axis::3] = 1.0
        centre.append(e @ (fe_full.mass @ x) / mass)
    assert_allclose(centre, vol @ centres / vol.sum(), rtol=0, atol=1e-9)


# ----------------------------------------------------------------------------- HBMAT
def _hb_text(lower: sp.spmatrix, *, fortran_d: bool = False, rhs: bool = False) -> str:
    """MAPDL-style HBMAT text of a symmetric matrix given by its lower triangle: written
    with scipy.io.hb_write (RUA), the type then set to RSA; optionally Fortran D
    exponents and a right-hand-side section (HBMAT's Rhs=YES)."""
    buf = io.StringIO()
    scipy.io.hb_write(buf, sp.csc_matrix(lower))
    lines = buf.getvalue().splitlines()
    lines[2] = "RSA" + lines[2][3:]
    counts = [int(v) for v in lines[1].split()]
    ptr, ind, val = counts[1:4]
    if fortran_d:
        lines[3] = lines[3][:32] + lines[3][32:52].replace("E", "D") + lines[3][52:]
        for k in range(4 + ptr + ind, 4 + ptr + ind + val):
            lines[k] = lines[k].replace("E", "D")
    if rhs:
        n = lower.shape[0]
        rhs_lines = [f"{0.0:25.16E}" for _ in range(n)]
        lines[1] = (f"{counts[0] + n:14d}{ptr:14d}{ind:14d}{val:14d}{n:14d}")
        lines[3] = lines[3][:52].ljust(52) + "(1E25.16)"
        lines.insert(4, "F             1             0")
        lines += rhs_lines
    return "\n".join(lines) + "\n"


def _write_hbmat(folder: Path, raw, *, drop_eq: int | None = None, seed: int = 3):
    """stiff.matrix, mass.matrix and their mapping files from the real .full: the free
    equations (HBMAT leaves the constrained ones out) in a shuffled order, so that only
    the mapping tells which node and DOF each equation is."""
    free = np.flatnonzero(~raw["constrained"])
    order = np.random.default_rng(seed).permutation(free)
    if drop_eq is not None:
        order = order[order != drop_eq]
    k = raw["k"][np.ix_(order, order)]
    m = raw["m"][np.ix_(order, order)]
    (folder / "stiff.matrix").write_text(_hb_text(sp.tril(sp.csc_matrix(k))))
    (folder / "mass.matrix").write_text(_hb_text(sp.tril(sp.csc_matrix(m)),
                                                 fortran_d=True, rhs=True))
    heading = " Matrix Eqn    Node     DOF\n"
    body = "".join(f"{e:11d}{int(raw['dof_ref'][q, 0]):8d}    {LABELS[raw['dof_ref'][q, 1]]}\n"
                   for e, q in enumerate(order, start=1))
    (folder / "stiff.mapping").write_text(heading + body)
    (folder / "mass.mapping").write_text(heading + body)
    return folder / "mass.matrix", folder / "stiff.matrix"


def test_hbmat_reads_the_written_matrix(tmp_path, raw):
    free = ~raw["constrained"]
    k = raw["k"][np.ix_(free, free)]
    path = tmp_path / "k.matrix"
    path.write_text(_hb_text(sp.tril(sp.csc_matrix(k)), fortran_d=True, rhs=True))
    mat, kind = read_hbmat(path)
    assert kind == "RSA"
    assert_allclose(mat.toarray(), k, rtol=1e-15, atol=0)


def test_hbmat_route_gives_the_full_route_modes(tmp_path, examples, raw, fe_full):
    mass, stiff = _write_hbmat(tmp_path, raw)
    fe_h = read_ansys(mass, stiff, examples.hexarchivefile)
    assert_array_equal(fe_h.node_ids, fe_full.node_ids)
    assert_array_equal(fe_h.node_sets["constrained"], fe_full.node_sets["constrained"])
    assert_allclose(fe_h.nodes, fe_full.nodes, rtol=0, atol=0)
    assert_allclose(fe_h.stiffness.toarray(), fe_full.stiffness.toarray(), rtol=1e-15,
                    atol=0)
    a = clamped_modes(fe_full, "constrained", 8, normalization="mass")
    b = clamped_modes(fe_h, "constrained", 8, normalization="mass")
    lam_a, lam_b = np.diag(a.K_ff), np.diag(b.K_ff)
    assert_allclose(lam_b, lam_a, rtol=1e-9, atol=0)
    # eigenspaces (repeated eigenvalues come in pairs): the same to 1e-9
    groups = np.split(np.arange(8), np.flatnonzero(np.diff(lam_a) > 1e-6 * lam_a[1:]) + 1)
    for g in groups:
        angles = sl.subspace_angles(a.phi[:, g], b.phi[:, g])
        assert np.max(angles) < 1e-9
    # HBMAT leaves out the constrained equations: the mass there is missing, and the
    # model's mass is that of the free DOFs (the reader's M without constrained rows)
    t = np.zeros(fe_h.n_dof)
    t[0::3] = 1.0
    ux = raw["dof_ref"][:, 1] == 0
    assert_allclose(t @ (fe_h.mass @ t), raw["m"][np.ix_(ux, ux)].sum(), rtol=1e-12, atol=0)
    assert "mass_incomplete" in fe_h.metadata


def test_hbmat_partly_constrained_node_is_refused(tmp_path, examples, raw):
    free = np.flatnonzero(~raw["constrained"])
    q = int(free[10])
    node, dof = (int(v) for v in raw["dof_ref"][q])
    mass, stiff = _write_hbmat(tmp_path, raw, drop_eq=q)
    with pytest.raises(ReadError, match=rf"node {node} is partly constrained \({LABELS[dof]} "
                                        r"constrained"):
        read_ansys(mass, stiff, examples.hexarchivefile)


# ------------------------------------------------------------------------- bad input
def test_missing_full_file(tmp_path, examples):
    missing = tmp_path / "nope.full"
    with pytest.raises(ReadError, match=r"Ansys \.full file .*nope\.full.* does not exist"):
        read_ansys(missing, missing, examples.hexarchivefile)


def test_a_result_file_is_not_a_full_file(tmp_path, examples):
    fake = tmp_path / "result.full"
    shutil.copy(examples.rstfile, fake)
    with pytest.raises(ReadError, match=r"result\.full: file format code 12 .*result file"
                                        r".*not a \.full file \(code 4"):
        read_ansys(fake, fake, examples.hexarchivefile)
    text = tmp_path / "text.full"
    text.write_text("not binary\n")
    with pytest.raises(ReadError, match=r"text\.full: not an MAPDL binary file"):
        read_ansys(text, text, examples.hexarchivefile)


def _archive_without_node(source: Path, node: int, drop_elements: bool) -> str:
    """The archive text without ``node`` in NBLOCK and the node components; with
    ``drop_elements`` also without the SOLID186 records (two lines each) that use it."""
    lines = source.read_text().splitlines(keepends=True)
    out, k, removed = [], 0, 0
    while k < len(lines):
        line = lines[k]
        fields = line.split()
        if fields[:1] == [str(node)] and "E+" in line:
            k += 1
            continue
        if drop_elements and len(fields) == 19 and fields[0] == "1" and \
                str(node) in lines[k].split()[11:] + lines[k + 1].split():
            k += 2
            removed += 1
            continue
        out.append(line.replace(f"      -{node}", f"      -{node - 1}"))
        k += 1
    text = "".join(out).replace("NBLOCK,6,SOLID,       321,       321",
                                "NBLOCK,6,SOLID,       320,       320")
    if drop_elements:
        assert removed > 0
        text = text.replace("EBLOCK,19,SOLID,        40,        40",
                            f"EBLOCK,19,SOLID,{40 - removed:10d},{40 - removed:10d}")
    return text


def test_archive_lacking_a_node_of_the_full(tmp_path, examples):
    cdb = tmp_path / "lacking.cdb"
    cdb.write_text(_archive_without_node(Path(examples.hexarchivefile), 321, True))
    with pytest.raises(ReadError, match=r"file\.full: the matrices have rows of node 321, "
                                        r"which the archive .*lacking\.cdb does not define"):
        read_ansys(examples.fullfile, examples.fullfile, cdb)
    # with the elements still on it, the archive itself is refused, naming the element
    broken = tmp_path / "broken.cdb"
    broken.write_text(_archive_without_node(Path(examples.hexarchivefile), 321, False))
    with pytest.raises(ReadError, match=r"broken\.cdb: element \d+ \(EBLOCK\) uses node 321, "
                                        r"which NBLOCK does not define"):
        read_ansys(examples.fullfile, examples.fullfile, broken)


@pytest.mark.parametrize(("line", "expected"), [
    ("  5  12  UQ", r"line 3: node 12: DOF label 'UQ' is not a structural DOF; expected UX"),
    ("  5  12", r"line 3: '5  12' has 2 field\(s\); expected 3: equation number, node number"),
    ("  5  x2  UX", r"line 3: '5  x2  UX': equation '5' and node 'x2' must be integers"),
    ("  1  12  UY", r"line 3: equation 1 is listed twice \(first on line 2\)"),
])
def test_mapping_bad_lines(tmp_path, line, expected):
    path = tmp_path / "k.mapping"
    path.write_text(f" Matrix Eqn  Node  DOF\n  1  12  UX\n{line}\n")
    with pytest.raises(ReadError, match=rf"k\.mapping, {expected}"):
        read_mapping(path)


def test_mapping_reads_heading_and_labels(tmp_path):
    path = tmp_path / "k.mapping"
    path.write_text(" Matrix Eqn  Node  DOF\n  2  7  rotz\n  1  7  UX\n")
    nodes, dofs = read_mapping(path)
    assert_array_equal(nodes, [7, 7])
    assert_array_equal(dofs, [1, 6])


@pytest.mark.parametrize("choice", [["--clamp-nodes", "constrained"], []])
def test_reduce_command(tmp_path, examples, reference, choice, capsys):
    """`flexmbs reduce --mass F.full --stiffness F.full --nodes F.cdb --modes 6`, with
    the clamp given or, with no other choice, MAPDL's own constraints: the eigenvalues of
    the file's own K and M with the constrained DOFs removed (1e-8)."""
    from flexmbs.cli.main import main

    out = tmp_path / "out.fmd.h5"
    code = main(["reduce", "--mass", examples.fullfile, "--stiffness", examples.fullfile,
                 "--nodes", examples.hexarchivefile, "--modes", "6", *choice,
                 "-o", str(out)])
    assert code == 0
    data = read_modal(out)
    lam = np.diag(data.K_ff) / np.diag(data.M_ff)
    assert_allclose(lam, reference[0][:6], rtol=1e-8, atol=0)
    assert data.attach_set == "constrained"
    if not choice:
        assert "clamping the DOFs MAPDL constrained" in capsys.readouterr().out


def test_input_format_picks_ansys_for_full_files():
    from flexmbs.cli.reduce_cmd import input_format

    assert input_format("a.full", "a.FULL") == "ansys"
    assert input_format("a.full", "k.mtx") == "matrix-market"
    assert ansys.mapping_path("out/stiff.matrix") == Path("out/stiff.mapping")


def test_missing_package_names_the_extra(tmp_path, monkeypatch):
    import sys

    from flexmbs.errors import FlexmbsError

    cdb, full = tmp_path / "part.cdb", tmp_path / "part.full"
    cdb.write_text("/PREP7\n")
    full.write_bytes(b"\0" * 64)
    monkeypatch.setitem(sys.modules, "ansys.mapdl.reader", None)
    for call in (lambda: read_ansys(full, full, cdb), lambda: ansys.read_cdb(cdb)):
        with pytest.raises(FlexmbsError, match=r"pip install 'flexmbs\[ansys\]'"):
            call()


@pytest.mark.parametrize("triangle", ["upper", "lower"])
def test_one_stored_triangle_either_way_gives_the_symmetric_matrix(tmp_path, triangle):
    from flexmbs.modal.io.ansys_hbmat import _symmetric

    rng = np.random.default_rng(11)
    a = rng.standard_normal((7, 7))
    full = a + a.T
    tri = sp.triu(full) if triangle == "upper" else sp.tril(full)
    coo = sp.coo_matrix(tri)
    out = _symmetric(coo.row, coo.col, coo.data, 7, tmp_path / "x", "test")
    assert_allclose(out.toarray(), full, rtol=0, atol=0)


def test_the_archive_of_another_model_is_refused(examples):
    """The hex beam's .full with the example tetrahedral beam's archive (nodes 1–1041,
    its first 321 IDs the .full's): 3870 of its 3913 elements lie outside the matrices.
    It failed later, in the clamping, with a misleading 'fix more nodes'."""
    with pytest.raises(ReadError, match=r"3870 of its 3913 elements use nodes that .*"
                                        r"not the archive of the model"):
        read_ansys(examples.fullfile, examples.fullfile, examples.tetarchivefile)
