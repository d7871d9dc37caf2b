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
