"""Nastran files that Nastran wrote (tests/data/nastran_real, from pyNastran's repository)
and bulk data laid out the ways Nastran accepts: the SOL 103 OP2 of a CBAR/CBEAM beam with
its rotary inertia, a mixed-element model with scalar points, include-only files, nested
INCLUDEs, free/small/large fields, and cards Nastran would refuse."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("pyNastran")

from pyNastran.op2.op2 import OP2

from flexmbs.errors import ReadError
from flexmbs.modal import read_modal
from flexmbs.modal.io.nastran import read_bdf
from flexmbs.modal.io.nastran.grid_mass import grid_mass
from flexmbs.modal.io.nastran.op2_modes import rigid_mass_about
from flexmbs.modal.units import get_units

DATA = Path(__file__).parent / "data" / "nastran_real"
BEAM_OP2 = DATA / "beam_modes_m1.op2"
BEAM_DAT = DATA / "beam_modes.dat"
IN_LBF_S = get_units("in-lbf-s")


def _op2(path):
    op2 = OP2(debug=None, log=None)
    op2.read_op2(str(path), build_dataframe=False)
    return op2


@pytest.fixture(scope="module")
def beam():
    return read_modal(BEAM_OP2, geometry=BEAM_DAT, units="in-lbf-s")


@pytest.fixture(scope="module")
def beam_op2():
    return _op2(BEAM_OP2)


def test_beam_op2_mass_description_carries_the_rotary_inertia(beam):
    """φᵀ M φ of the lumped 6-DOF grid mass equals the LAMA generalized masses, the
    torsion mode included (its translations are zero: point masses alone give it none)."""
    full = np.zeros((beam.n_nodes, 6, beam.n_modes))
    full[:, :3] = beam.phi.reshape(beam.n_nodes, 3, -1)
    full[:, 3:] = beam.psi.reshape(beam.n_nodes, 3, -1)
    full = full.reshape(6 * beam.n_nodes, -1)
    described = np.einsum("im,im->m", full, beam.mass @ full)
    np.testing.assert_allclose(described, np.diag(beam.M_ff), rtol=1e-6, atol=0.0)
    translational = np.einsum("im,im->m", beam.phi,
                              beam.mass[np.tile([1, 1, 1, 0, 0, 0], beam.n_nodes) == 1]
                              [:, np.tile([1, 1, 1, 0, 0, 0], beam.n_nodes) == 1] @ beam.phi)
    torsion = int(np.argmin(translational / np.diag(beam.M_ff)))
    assert translational[torsion] < 1e-12 * beam.M_ff[torsion, torsion]
    assert beam.mass_description.startswith("6-DOF nodal mass")


def test_beam_op2_torsion_mode_couples_to_the_frame_rotation(beam):
    """Ī_θf⁽⁰⁾ of the torsion mode about the beam axis equals Dₓᵀ M φ (D the rigid
    rotation about x of every grid, rotations included), and it is not zero."""
    full = np.zeros((beam.n_nodes, 6, beam.n_modes))
    full[:, :3] = beam.phi.reshape(beam.n_nodes, 3, -1)
    full[:, 3:] = beam.psi.reshape(beam.n_nodes, 3, -1)
    full = full.reshape(6 * beam.n_nodes, -1)
    rot_x = np.zeros((beam.n_nodes, 6))
    rot_x[:, :3] = np.cross([1.0, 0.0, 0.0], beam.nodes)
    rot_x[:, 3] = 1.0
    coupling = rot_x.ravel() @ (beam.mass @ full)
    torsion = int(np.argmax(np.abs(coupling)))
    assert np.abs(beam.psi[0::3, torsion]).max() > 0.5  # the mode twists about x
    np.testing.assert_allclose(beam.invariants.I_tf0[0], coupling, rtol=1e-9,
                               atol=1e-12 * np.abs(coupling).max())
    assert abs(coupling[torsion]) > 1e-3 * np.sqrt(beam.M_ff[torsion, torsion]
                                                   * beam.inertia_origin[0, 0])


def test_beam_op2_mass_equals_nastrans_grid_point_weight(beam, beam_op2):
    """The rigid-body mass of the description about grid 0 equals Nastran's own grid point
    weight generator output (MO), converted from in-lbf-s."""
    gpwg = next(iter(beam_op2.grid_point_weight.values()))
    scale = np.array([1, 1, 1, IN_LBF_S.length, IN_LBF_S.length, IN_LBF_S.length])
    theirs = np.asarray(gpwg.MO, dtype=float) * IN_LBF_S.mass * np.outer(scale, scale)
    ours = rigid_mass_about(beam.mass, beam.nodes, np.zeros(3))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6 * np.abs(theirs).max())
    np.testing.assert_allclose(beam.total_mass, gpwg.mass[0] * IN_LBF_S.mass, rtol=1e-6)
    check = beam.metadata["provenance"]["grid_point_weight"]
    assert check["rigid_mass_relative_difference"] < 1e-6


def test_beam_op2_frequencies_and_units(beam, beam_op2):
    lama = next(iter(beam_op2.eigenvalues.values()))
    reference = np.sqrt(np.asarray(lama.eigenvalues, dtype=float)) / (2 * np.pi)
    np.testing.assert_allclose(beam.frequencies, reference, rtol=1e-12)
    assert beam.units == "in-lbf-s"
    np.testing.assert_allclose(np.ptp(beam.nodes[:, 0]), 10 * 0.0254, rtol=1e-12)


def test_wtmass_scales_every_mass(tmp_path):
    """PARAM,WTMASS multiplies the element and point masses, as in Nastran."""
    shutil.copy(DATA / "cbar_cbeam.blk", tmp_path / "cbar_cbeam.blk")
    text = BEAM_DAT.read_text().replace("PARAM   GRDPNT         0",
                                        "PARAM   GRDPNT         0\nPARAM,WTMASS,0.25")
    (tmp_path / "beam.dat").write_text(text)
    plain, _ = grid_mass(read_bdf(BEAM_DAT))
    weighted, notes = grid_mass(read_bdf(tmp_path / "beam.dat"))
    assert notes["wtmass"] == 0.25
    assert abs(weighted - 0.25 * plain).max() <= 1e-15 * abs(plain).max()


def test_mixed_elements_with_scalar_points():
    """SPOINT/EPOINT stay out of the geometry; springs and dampers are listed as not drawn;
    the OP2's scalar-point rows are dropped, and its zero eigenvalues are said plainly."""
    geo = read_bdf(DATA / "modes_elements.bdf")
    assert geo.scalar_points.tolist() == [100, 101, 102]
    assert geo.extra_points.tolist() == [103, 104, 105, 106, 107]
    assert not set(geo.ids.tolist()) & set(range(100, 108))
    assert geo.skipped["CELAS3"] == 1 and geo.skipped["CDAMP4"] == 1
    assert "CQUAD8" not in geo.skipped and geo.cells["triangle"].shape[0] == 10
    assert geo.cells["hexahedron"].shape == (1, 8)
    with pytest.raises(ReadError, match="every mode is a rigid-body mode"):
        read_modal(DATA / "modes_elements.op2", geometry=DATA / "modes_elements.bdf")


def test_scalar_point_rows_of_an_op2_are_dropped_with_a_note(beam_op2, tmp_path):
    """Eigenvector rows of scalar points (point type 2) are dropped and listed."""
    from flexmbs.modal.io.nastran import modes_from_op2

    table = next(iter(beam_op2.eigenvectors.values()))
    gridtype = np.asarray(table.node_gridtype)
    extra = np.array([[900, 2], [901, 2]], dtype=gridtype.dtype)
    table.node_gridtype = np.vstack([gridtype, extra])
    data = np.asarray(table.data)
    pad = np.zeros((data.shape[0], 2, data.shape[2]), dtype=data.dtype)
    pad[:, :, 0] = 1.0
    table.data = np.concatenate([data, pad], axis=1)
    try:
        out = modes_from_op2(beam_op2, BEAM_OP2, read_bdf(BEAM_DAT), units="in-lbf-s")
    finally:
        table.node_gridtype, table.data = gridtype, data
    assert out.metadata["points_dropped"] == {"scalar_points": [900, 901]}
    assert out.n_nodes == 12


# ------------------------------------------------------------------- bulk data layouts
GRIDS = {1: (0.0, 0.0, 0.0), 2: (1.5, 0.0, 0.0), 3: (2.0, -0.25, 1e-3), 4: (3.0, 0.0, 7.0)}


def _small(nid, xyz):
    return "GRID    " + f"{nid:>8d}" + " " * 8 + "".join(f"{v:>8.4f}" for v in xyz)


def _large(nid, xyz):
    return ("GRID*   " + f"{nid:>16d}" + " " * 16 + f"{xyz[0]:>16.8E}{xyz[1]:>16.8E}"
            + "\n*       " + f"{xyz[2]:>16.8E}")


def _free(nid, xyz):
    return f"GRID,{nid},," + ",".join(repr(float(v)) for v in xyz)


def _continued(nid, xyz):
    """Small field, the position given in system 5: a CORD2R (translated by −1 along x)
    whose third point is on a continuation line (markers in field 10 and field 1)."""
    x, y, z = xyz
    cord = ("CORD2R         5       0    -1.0     0.0     0.0    -1.0     0.0     1.0+C5\n"
            "+C5          0.0     0.0     0.0")
    grid = "GRID    " + f"{nid:>8d}" + f"{5:>8d}" + "".join(f"{v:>8.4f}" for v in (x + 1, y, z))
    return (cord + "\n" if nid == 1 else "") + grid


@pytest.mark.parametrize("layout", [_small, _large, _free, _continued])
@pytest.mark.parametrize("control", ["none", "begin-bulk", "full-deck"])
def test_bulk_data_with_or_without_control_and_every_field_format(tmp_path, layout,
                                                                  control):
    cards = "\n".join(layout(n, xyz) for n, xyz in GRIDS.items())
    head = {"none": "", "begin-bulk": "BEGIN BULK\n",
            "full-deck": "SOL 103\nCEND\nTITLE = x\nMETHOD = 1\nBEGIN BULK\n"}[control]
    path = tmp_path / "part.bdf"
    path.write_text(f"$ a comment\n{head}{cards}\nENDDATA\nGRID,99,,9.,9.,9.\n")
    geo = read_bdf(path)
    assert geo.ids.tolist() == sorted(GRIDS)
    np.testing.assert_allclose(geo.coords, [GRIDS[n] for n in sorted(GRIDS)], rtol=1e-7,
                               atol=1e-12)


def test_include_paths_are_relative_to_the_including_file(tmp_path):
    """An include-only file (BEGIN BULK, no executive control) includes sub/a.bdf, which
    includes b.bdf beside itself (not beside the top file); quoted names may span lines."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "top.bdf").write_text("BEGIN BULK\nGRID,1,,0.,0.,0.\n"
                                      "INCLUDE 'sub/\n a.bdf'\nENDDATA\n")
    (tmp_path / "sub" / "a.bdf").write_text("GRID,2,,1.,0.,0.\ninclude 'b.bdf'\n")
    (tmp_path / "sub" / "b.bdf").write_text("GRID    3               2.      0.      0.\n")
    geo = read_bdf(tmp_path / "top.bdf")
    assert geo.ids.tolist() == [1, 2, 3]
    np.testing.assert_allclose(geo.coords[:, 0], [0.0, 1.0, 2.0], rtol=0, atol=0)


def test_include_problems_are_named(tmp_path):
    (tmp_path / "top.bdf").write_text("GRID,1,,0.,0.,0.\nINCLUDE 'gone.bdf'\n")
    with pytest.raises(ReadError, match=r"gone\.bdf.*not found.*top\.bdf:2"):
        read_bdf(tmp_path / "top.bdf")
    (tmp_path / "loop.bdf").write_text("GRID,1,,0.,0.,0.\nINCLUDE 'loop.bdf'\n")
    with pytest.raises(ReadError, match=r"loop\.bdf:2: INCLUDE 'loop\.bdf' includes itself"):
        read_bdf(tmp_path / "loop.bdf")


def test_an_integer_in_a_real_field_is_named_with_card_field_and_line(tmp_path):
    (tmp_path / "sub.bdf").write_text("GRID,1,,0.,0.,0.\n"
                                      "GRID    7               1.      0       0.\n")
    (tmp_path / "top.bdf").write_text("BEGIN BULK\nINCLUDE 'sub.bdf'\nENDDATA\n")
    with pytest.raises(ReadError) as err:
        read_bdf(tmp_path / "top.bdf")
    message = str(err.value)
    assert "sub.bdf:2" in message and "GRID 7" in message and "field 4" in message
    assert "'0'" in message and "real number" in message


def test_lumped_grid_mass_of_a_conm2_with_offset_equals_a_particle():
    """A CONM2's 6 x 6 block equals the rigid-body mass of a particle with inertia at its
    offset: Dᵀ M D about any point equals the particle's own (parallel-axis) value."""
    from flexmbs.modal.io.nastran.grid_mass import _conm2

    class Card:
        mass, cid = 2.5, 0
        X = (0.3, -0.2, 0.5)
        I = (1.0, 0.1, 2.0, -0.2, 0.05, 3.0)

    block = _conm2(Card, None, np.zeros(3), "test")
    r = np.array(Card.X)
    rng = np.random.default_rng(3)
    for _ in range(5):
        w = rng.standard_normal(3)
        v = rng.standard_normal(3)
        i11, i21, i22, i31, i32, i33 = Card.I
        j_c = np.array([[i11, -i21, -i31], [-i21, i22, -i32], [-i31, -i32, i33]])
        v_cg = v + np.cross(w, r)
        energy = 0.5 * Card.mass * v_cg @ v_cg + 0.5 * w @ j_c @ w
        x = np.concatenate([v, w])
        np.testing.assert_allclose(0.5 * x @ block @ x, energy, rtol=1e-13)
    assert sp.issparse(sp.csr_matrix(block))


def test_an_inch_model_read_as_si_is_pointed_to_its_units():
    """Read without --units, the in-lbf-s beam gets a warning whose hint lists in-lbf-s
    among the unit systems its numbers fit."""
    from flexmbs.errors import UnitsWarning

    with pytest.warns(UnitsWarning, match=r"the numbers fit .*in-lbf-s"):
        read_modal(BEAM_OP2, geometry=BEAM_DAT)


def test_flexmbs_modes_states_the_provenance_of_the_op2(capsys, beam_op2):
    """flexmbs modes --json: files, mapping, units declared by the user, the total mass
    next to Nastran's grid point weight generator, φᵀMφ against M_ff; the text says the
    same."""
    import json

    from flexmbs.cli.main import main as cli

    args = ["modes", str(BEAM_OP2), "--geometry", str(BEAM_DAT), "--units", "in-lbf-s"]
    assert cli([*args, "--json"]) == 0
    prov = json.loads(capsys.readouterr().out)["provenance"]
    assert prov["files"] == {"file": str(BEAM_OP2), "geometry": str(BEAM_DAT)}
    assert prov["units"]["source"] == "in-lbf-s"
    assert "the one given with --units" in prov["units"]["stated_by"]
    gpwg = next(iter(beam_op2.grid_point_weight.values()))
    assert prov["mass"]["source_total_kg"] == pytest.approx(
        gpwg.mass[0] * IN_LBF_S.mass, rel=1e-6)
    assert prov["mass"]["total_kg"] == pytest.approx(prov["mass"]["source_total_kg"],
                                                     rel=1e-6)
    assert prov["mass"]["modal_mass_vs_phi_M_phi_max"] < 1e-6
    assert prov["mass"]["cards"] == {"CBAR": 9, "CBEAM": 1, "CONM2": 1}
    assert cli(args) == 0
    text = capsys.readouterr().out
    assert "provenance:" in text and "grid point weight generator" in text


def test_elements_lumped_only_approximately_are_named():
    """CQUAD8/CTRIA6 with midside grids: Nastran does not split their mass equally, so
    the grid mass says its inertia is approximate (and names the cards)."""
    _, notes = grid_mass(read_bdf(DATA / "modes_elements.bdf"))
    assert "CQUAD8" in notes["approximate"] and "CTRIA6" in notes["approximate"]
    _, notes = grid_mass(read_bdf(BEAM_DAT))
    assert "approximate" not in notes


def test_begin_bulk_in_a_file_the_control_section_includes(tmp_path):
    """A deck whose executive and case control include the file that holds BEGIN BULK
    (and whose control section includes a DMAP alter): only the bulk data is read."""
    (tmp_path / "alter.dat").write_text("COMPILE SEMODES\nALTER 'X'\n")
    (tmp_path / "model.bdf").write_text("BEGIN BULK\nGRID,1,,0.,0.,0.\n"
                                        "INCLUDE 'more.bdf'\nENDDATA\n")
    (tmp_path / "more.bdf").write_text("GRID,2,,1.,0.,0.\n")
    (tmp_path / "job.dat").write_text("SOL 103\nINCLUDE 'alter.dat'\nCEND\nTITLE = t\n"
                                      "INCLUDE 'model.bdf'\n")
    geo = read_bdf(tmp_path / "job.dat")
    assert geo.ids.tolist() == [1, 2]


def test_a_part_held_by_partial_spcs_and_grounded_springs_is_refused_naming_them():
    """pyNastran's two-mode flutter model (MSC SOL 145): a plate on an RBE2 to grid 117,
    which SPC1 1246 and two grounded CELAS2 springs hold, so its real modes are rigid
    plunge and pitch on the springs. Refused (the frame is mean axes without a clamped
    grid, and the modes are rigid motions) naming those supports; the OP2's complex
    flutter eigenvalues are not taken for the real modes' (NumPy's ComplexWarning
    reached the user)."""
    import warnings

    folder = DATA / "flutter"
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        with pytest.raises(ReadError, match=r"partial SPCs on grid\(s\) \[117\] and "
                                            r"grounded springs or bushes \(elements "
                                            r"\[100, 101\]\)"):
            read_modal(folder / "0012_flutter.op2", geometry=folder / "0012_flutter.bdf")
