"""The a-set of a superelement from the USET table of a real MSC Nastran OP2 (issue 31,
item 2: "a USET taken from the OP2's USET table"): the residual structure of pyyeti's
NAS2CAM test run (tests/data/nastran_op2_uset/README.md), whose a-set mixes grids with
six components, a grid with T2 alone and ten q-set scalar points. Its KAA and MAA are
read from the run's OP4 (pyNastran, or pyyeti for the binary layout pyNastran refuses),
mapped through the USET table (pyyeti), and the body's frequencies are checked against
the eigenvalues Nastran itself wrote (LAMBDA)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyNastran", reason="Nastran OP4 matrices need pyNastran "
                                        "(the nastran extra)")
pytest.importorskip("pyyeti", reason="a Nastran OP2's USET table is read with pyyeti "
                                     "(the nastran extra)")

from flexmbs.cli.main import main
from flexmbs.errors import FlexmbsError
from flexmbs.modal import read_modal
from flexmbs.modal.io.nastran.matrices import read_op4_file
from flexmbs.modal.io.nastran.op2_uset import punch_from_op2

DATA = Path(__file__).resolve().parent / "data" / "nastran_op2_uset"
OP2 = DATA / "nas2cam_notall6_msc2017.op2"
OP4 = DATA / "nas2cam_notall6_msc2017.op4"


def _nastran_eigenvalues() -> np.ndarray:
    return np.sort(np.ravel(read_op4_file(OP4, "LAMBDA")["lambda"].data))


def test_the_uset_table_gives_the_mixed_a_set():
    punch = punch_from_op2(OP2)
    assert punch.grid_ids.tolist() == [373, 411, 441, 475]
    assert punch.boundary == {373: (1, 2, 3, 4, 5, 6), 411: (1, 2, 3, 4, 5, 6),
                              441: (1, 2, 3, 4, 5, 6), 475: (2,)}
    assert punch.qset == list(range(7590001, 7590011))
    np.testing.assert_allclose(punch.coords[0], [20.25, -61.25, 19.5])
    assert len(punch.layouts()[0][1]) == 29  # KAA's size


def test_the_body_has_the_frequencies_nastran_found():
    """The 23 elastic modes of (KAA, MAA) mapped through the USET table: the lowest
    equal sqrt(LAMBDA)/2π of Nastran's own eigenanalysis (LAMBDA holds the 6 rigid and
    the first 4 elastic eigenvalues) to 1e-8; the rigid motions of the grids, in the USET
    order and CD axes, leave KAA force-free to 1e-9."""
    data = read_modal(OP2, matrices=OP4, units="in-lbf-s")
    lam = _nastran_eigenvalues()
    elastic = lam[lam > 1e-3 * lam[-1]]  # the rigid ones are below 1e-8 rad²/s²
    assert elastic.size == 4
    np.testing.assert_allclose(data.frequencies[:4], np.sqrt(elastic) / (2 * np.pi),
                               rtol=1e-8)
    assert data.n_modes == 29 - 6 and data.node_ids.tolist() == [373, 411, 441, 475]
    residual = next(iter(data.metadata["aset_rigid_force_residual"].values()))
    assert residual < 1e-10  # measured 1.0e-11
    assert "USET table" in data.metadata["aset_order"]


def test_modes_command_reads_the_op2_with_its_matrices(capsys):
    assert main(["modes", str(OP2), "--matrices", str(OP4), "--units", "in-lbf-s",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    lam = _nastran_eigenvalues()
    np.testing.assert_allclose(report["frequencies_hz"][:4],
                               np.sqrt(lam[lam > 1e-3 * lam[-1]]) / (2 * np.pi), rtol=1e-8)


def test_refusals_name_the_file_and_what_is_missing(tmp_path):
    with pytest.raises(FlexmbsError, match="no USET of superelement 7; the file holds"):
        punch_from_op2(OP2, superelement=7)
    with pytest.raises(FlexmbsError, match=r"matrices='model\.op4'"):
        read_modal(OP2)
    other = tmp_path / "other.op4"
    other.write_bytes(b"not an op4")
    with pytest.raises(FlexmbsError, match=r"other\.op4"):
        read_modal(OP2, matrices=other)


def test_op4_files_are_read_by_pyyeti_without_pynastran(monkeypatch):
    """Without pyNastran (the numpy-2 environment) an OP4 file is read by pyyeti alone:
    the same KAA as pyyeti's own reader gives."""
    from pyyeti.nastran import op4

    from flexmbs.errors import FlexmbsError as Missing
    from flexmbs.modal.io.nastran import matrices

    def no_pynastran(module):
        raise Missing("reading Nastran files needs the optional extra pyNastran")

    monkeypatch.setattr(matrices, "_import", no_pynastran)
    found = matrices.read_op4_file(OP4, "test")
    np.testing.assert_array_equal(found["kaa"].data, op4.read(str(OP4))["kaa"])


def test_a_grid_in_a_rotated_displacement_system(tmp_path, monkeypatch):
    """A derived fixture pins the CD convention of the USET table (rows 4–6: the system's
    transformation to basic, x_basic = T x_cd): grid 373 put in a rotated rectangular CD
    system, KAA and MAA turned to match (Bᵀ K B). The rigid motions still leave KAA
    force-free (1e-10; read the other way round, T for Tᵀ, they would not) and the body is
    the same in basic: frequencies (1e-8) and grid 373's mode shapes (1e-8 of the
    largest entry)."""
    from pyNastran.op2.result_objects.matrix import Matrix
    from pyNastran.op4.op4 import write_op4

    from flexmbs.modal.io.nastran import op2_uset

    punch = punch_from_op2(OP2)
    plain = read_modal(OP2, matrices=OP4)
    usets = op2_uset._usets(OP2)
    uset = usets[0].copy()
    angle, axis = 0.7, np.array([1.0, 2.0, 2.0]) / 3.0
    skew = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    turn = np.eye(3) + np.sin(angle) * skew + (1 - np.cos(angle)) * skew @ skew
    rows = np.flatnonzero(np.asarray(uset.index.get_level_values(0)) == 373)
    values = uset[["x", "y", "z"]].to_numpy(copy=True)
    values[rows[1]] = [5.0, 1.0, 0.0]  # CD 5, rectangular
    values[rows[2]] = [0.0, 0.0, 0.0]
    values[rows[3:6]] = turn
    uset[["x", "y", "z"]] = values
    monkeypatch.setattr(op2_uset, "_usets", lambda path: {0: uset})
    mats = read_op4_file(OP4, "test")
    k_aa, m_aa = (np.asarray(mats[name].data, dtype=float) for name in ("kaa", "maa"))
    b = np.eye(k_aa.shape[0])
    b[:3, :3] = b[3:6, 3:6] = turn  # grid 373: the a-set's first six DOFs
    folder = tmp_path / "turned"
    folder.mkdir()
    op2 = folder / OP2.name
    op2.write_bytes(OP2.read_bytes())
    write_op4(str(folder / OP4.name), {"KAA": Matrix("KAA", 6, b.T @ k_aa @ b),
                                       "MAA": Matrix("MAA", 6, b.T @ m_aa @ b)},
              is_binary=False)
    assert punch.boundary[373] == (1, 2, 3, 4, 5, 6)
    turned = read_modal(op2, matrices=folder / OP4.name)
    residual = next(iter(turned.metadata["aset_rigid_force_residual"].values()))
    assert residual < 1e-10
    # the turned matrices go through a text OP4 (measured 3.4e-10 in the highest mode)
    np.testing.assert_allclose(turned.frequencies, plain.frequencies, rtol=1e-8)
    k = plain.node_ids.tolist().index(373)
    for shapes in ("phi", "psi"):
        one = getattr(plain, shapes)[3 * k:3 * k + 3]
        two = getattr(turned, shapes)[3 * k:3 * k + 3]
        signs = np.sign(np.sum(one * two, axis=0))
        scale = np.abs(getattr(plain, shapes)).max()
        np.testing.assert_allclose(two * signs, one, rtol=0, atol=1e-8 * scale)


TWO = DATA / "nas2cam_simcenter2020.op2"
TWO_OP4 = DATA / "nas2cam_simcenter2020.op4"


def _two_lambdas() -> dict[int, np.ndarray]:
    """{superelement: LAMBDA} of the two-superelement OP4 (its repeated matrices in the
    order of its SE_START IDs), read by pyNastran alone."""
    from pyNastran.op4.op4 import read_op4

    matrices = read_op4(str(TWO_OP4))
    ids = [int(np.ravel(m)[0]) for m in matrices["SE_START"].data]
    return {se: np.ravel(lam) for se, lam in zip(ids, matrices["LAMBDA"].data,
                                                  strict=True)}


def test_each_superelement_of_a_nas2cam_op4_takes_its_own_matrices():
    """The OP4 of a run with two superelements repeats KAA, MAA and LAMBDA once per
    superelement (SE_START before each; a bare ValueError before). The residual's body,
    free, has the elastic frequencies of Nastran's LAMBDA for superelement 0 (the run's
    printed 1.696487, 1.766083, … Hz); superelement 101's, attached to its boundary,
    has its 22 fixed-interface frequencies."""
    lambdas = _two_lambdas()
    residual = read_modal(TWO, matrices=TWO_OP4, superelement=0, units="mm-t-s")
    elastic = np.sort(lambdas[0])[6:]
    np.testing.assert_allclose(residual.frequencies[:10],
                               np.sqrt(elastic[:10]) / (2 * np.pi), rtol=1e-8)
    np.testing.assert_allclose(residual.frequencies[:4], [1.696487, 1.766083, 1.855077,
                                                          3.388602], rtol=1e-6)
    outboard = read_modal(TWO, matrices=TWO_OP4, superelement=101, units="mm-t-s",
                          reference_frame="attached")
    assert outboard.n_modes == 22
    np.testing.assert_allclose(outboard.frequencies,
                               np.sqrt(np.sort(lambdas[101])) / (2 * np.pi), rtol=1e-8)


def test_repeated_op4_matrices_that_cannot_be_told_apart_are_refused(tmp_path):
    """Repeated names without SE_START (two text OP4 files of KAA and MAA joined), or an
    SE_START without the superelement asked for, are a ReadError naming the file."""
    from pyNastran.op4.op4 import OP4, read_op4

    matrices = read_op4(str(TWO_OP4))
    parts = []
    for k in (0, 1):
        part = tmp_path / f"part{k}.op4"
        OP4().write_op4(str(part), {name: (6, matrices[name].data[k])
                                    for name in ("KAA", "MAA")}, is_binary=False)
        parts.append(part.read_text())
    joined = tmp_path / "joined.op4"
    joined.write_text("".join(parts))
    with pytest.raises(FlexmbsError, match=r"joined\.op4.*KAA, MAA.*SE_START"):
        read_modal(TWO, matrices=joined, superelement=0, units="mm-t-s")
    with pytest.raises(FlexmbsError, match=r"superelements \[101, 0\].*not of superelement 75"):
        read_modal(OP2, matrices=TWO_OP4, superelement=75, units="in-lbf-s")
