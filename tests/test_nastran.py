"""Nastran import through pyNastran (flexmbs.modal.io.nastran): models written with
pyNastran itself — bulk data with GRID/CBAR/CQUAD4/SPC1/CORD2C cards, OP4 matrices and
a SOL-103-style OP2 of eigenvectors — read back and checked against Euler–Bernoulli,
against the direct path of the same beam FE, and against each other."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

pytest.importorskip("pyNastran")

from pyNastran.bdf.bdf import BDF
from pyNastran.op2.op2 import OP2
from pyNastran.op2.result_objects.matrix import Matrix
from pyNastran.op2.tables.oug.oug_eigenvectors import RealEigenvectorArray
from pyNastran.op4.op4 import write_op4

from flexmbs.cli.main import main as cli
from flexmbs.errors import FlexmbsError, ReadError
from flexmbs.modal import clamped_modes, read_modal
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.io.nastran import read_bdf, read_nastran, split_spec

L, N_EL = 1.0, 24
SECTION = BeamSection.rectangle(0.02, 0.01)
STEEL = Material.steel()
#: Grid IDs as a user's model might number them: not 1..N, not in file order.
GRID_IDS = np.array([1000 + 10 * k for k in range(N_EL + 1)])
#: Euler–Bernoulli clamped–free: (β_k L)² for the first three bending modes.
BETA_L2 = np.array([1.875104068711961, 4.694091132974175, 7.854757438237613]) ** 2


def _beam_fe():
    return straight_beam(L, N_EL, SECTION, STEEL)


#: The cylindrical system 7: its axis along basic z through (−0.5, 0.3, 0) [m], so the
#: grids along the beam (basic x) lie at angles from −31° to −11°: each its own CD axes.
CYL_ORIGIN = np.array([-0.5, 0.3, 0.0])


def _cd_frame(point):
    """Axes (columns: radial, tangential, axial) of system 7 at the basic ``point``."""
    local = point - CYL_ORIGIN
    theta = np.arctan2(local[1], local[0])
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _write_model(tmp_path, *, cd_grids=(), unit_scale=1.0, a_set=False, quads=False,
                 ascii_sparse=False):
    """A clamped cantilever as bulk data (GRIDs, CBARs with PBARL/MAT1, SPC1 at the root,
    some grids with CD = a cylindrical system) and its g-set (or a-set) MGG/KGG as OP4,
    in the grids' displacement systems; lengths × ``unit_scale`` (1000: mm-t-s)."""
    fe = _beam_fe()
    model = BDF(debug=None)
    o = CYL_ORIGIN * unit_scale
    model.add_cord2c(7, list(o), list(o + np.array([0.0, 0.0, unit_scale])),
                     list(o + np.array([unit_scale, 0.0, 0.0])))
    frames = []
    for k in reversed(range(N_EL + 1)):  # written tip first
        pos = fe.nodes[k] * unit_scale
        cd = 7 if k in cd_grids else 0
        model.add_grid(int(GRID_IDS[k]), [float(v) for v in pos], cp=0, cd=cd)
    for k in range(N_EL + 1):
        frames.append(_cd_frame(fe.nodes[k]) if k in cd_grids else np.eye(3))
    for e in range(N_EL):
        model.add_cbar(5000 + e, 1, [int(GRID_IDS[e]), int(GRID_IDS[e + 1])],
                       [0.0, 0.0, 1.0], None)
    if quads:  # a flange of shells beside the bar, drawn as cells only
        model.add_grid(90001, [0.0, 0.05 * unit_scale, 0.0])
        model.add_grid(90002, [0.1 * unit_scale, 0.05 * unit_scale, 0.0])
        model.add_cquad4(7001, 2, [int(GRID_IDS[0]), int(GRID_IDS[1]), 90002, 90001])
        model.add_pshell(2, mid1=1, t=0.002 * unit_scale)
    model.add_pbarl(1, 1, "BAR", [0.02 * unit_scale, 0.01 * unit_scale])
    rho = STEEL.rho / (1e12 if unit_scale == 1000.0 else 1.0)
    young = STEEL.E / (1e6 if unit_scale == 1000.0 else 1.0)
    model.add_mat1(1, young, None, STEEL.nu, rho=rho)
    model.add_spc1(1, "123456", [int(GRID_IDS[0])])
    bdf = tmp_path / "beam.bdf"
    model.write_bdf(str(bdf), size=16)

    t = sp.block_diag([sp.block_diag([f, f]) for f in frames], format="csr")
    weights = np.tile([1.0, 1.0, 1.0, unit_scale, unit_scale, unit_scale], N_EL + 1)
    m_cd = (t.T @ fe.mass @ t).tocsr()
    k_cd = (t.T @ fe.stiffness @ t).tocsr()
    # back to file units: M_file = M_SI / mass_u / W², K likewise (docs/modal_data_formats.md)
    mass_u = 1e-3 if unit_scale == 1000.0 else 1.0
    winv = sp.diags(1.0 / weights)
    m_file = (winv @ m_cd @ winv) / mass_u
    k_file = (winv @ k_cd @ winv) / mass_u
    if quads:
        pad = sp.csr_matrix((12, 12))
        m_file = sp.block_diag([m_file, sp.diags(np.full(12, 1e-9))]).tocsr()
        k_file = sp.block_diag([k_file, pad + sp.eye(12)]).tocsr()
    if a_set:
        keep = np.arange(6, m_file.shape[0])
        m_file, k_file = m_file[keep][:, keep], k_file[keep][:, keep]
    op4 = tmp_path / "beam.op4"
    # ASCII OP4, dense or sparse (pyNastran 1.4's binary writer drops values)
    pack = (lambda a: sp.coo_matrix(a)) if ascii_sparse else (lambda a: a.toarray())
    write_op4(str(op4), {"MGG": Matrix("MGG", 6, pack(m_file)),
                         "KGG": Matrix("KGG", 6, pack(k_file))}, is_binary=False)
    return bdf, op4, fe


def _frequencies_eb(n):
    ei = STEEL.E * SECTION.Iy
    rho_a = STEEL.rho * SECTION.A
    return BETA_L2[:n] * np.sqrt(ei / (rho_a * L**4)) / (2 * np.pi)


def test_bdf_geometry_grids_systems_spcs_and_cells(tmp_path):
    bdf, _, fe = _write_model(tmp_path, cd_grids=(3, 7), quads=True)
    geo = read_bdf(bdf)
    assert list(geo.ids[:N_EL + 1]) == sorted(GRID_IDS.tolist())
    np.testing.assert_allclose(geo.coords[:N_EL + 1], fe.nodes, atol=1e-9)
    # the CD axes of grids in the cylindrical system: radial (from the axis to the grid),
    # tangential, axial (basic z) — turning from grid to grid
    for k in (3, 7):
        frame = geo.frames[k]
        np.testing.assert_allclose(frame.T @ frame, np.eye(3), atol=1e-12)
        np.testing.assert_allclose(frame[:, 2], [0, 0, 1], atol=1e-12)
        radial = (fe.nodes[k] - CYL_ORIGIN) * [1, 1, 0]
        np.testing.assert_allclose(frame[:, 0], radial / np.linalg.norm(radial), atol=1e-12)
    assert np.degrees(np.arccos(geo.frames[3][:, 0] @ geo.frames[7][:, 0])) > 3.0
    np.testing.assert_allclose(geo.frames[4], np.eye(3))
    assert geo.node_sets()["spc"].tolist() == [0]
    assert len(geo.cells["line"]) == N_EL and len(geo.cells["quad"]) == 1


def test_grid_positions_given_in_cylindrical_and_spherical_systems(tmp_path):
    """CP: a grid's (r, θ°, z) in a CORD2C and (r, θ°, φ°) in a CORD2S, both rotated and
    shifted, against the closed-form basic position."""
    model = BDF(debug=None)
    origin = np.array([0.2, -0.1, 0.3])
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # i = y, j = −x
    i_axis, k_axis = rot[:, 0], rot[:, 2]
    for cid, add in ((3, model.add_cord2c), (4, model.add_cord2s)):
        add(cid, list(origin), list(origin + k_axis), list(origin + i_axis))
    model.add_grid(1, [0.5, 30.0, 0.2], cp=3)
    model.add_grid(2, [0.5, 60.0, 40.0], cp=4)
    path = tmp_path / "cp.bdf"
    model.write_bdf(str(path), size=16)
    geo = read_bdf(path)
    t = np.radians(30.0)
    cyl = origin + rot @ [0.5 * np.cos(t), 0.5 * np.sin(t), 0.2]
    th, ph = np.radians(60.0), np.radians(40.0)  # θ from the local z axis, φ about it
    sph = origin + rot @ (0.5 * np.array([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph),
                                          np.cos(th)]))
    np.testing.assert_allclose(geo.coords, [cyl, sph], atol=1e-9)


def test_op4_cantilever_frequencies_against_euler_bernoulli(tmp_path):
    bdf, op4, _ = _write_model(tmp_path, cd_grids=(2, 5, 11, 17))
    fe = read_nastran(f"{op4}:MGG", f"{op4}:KGG", bdf)
    data = clamped_modes(fe, "spc", 8)
    np.testing.assert_allclose(_bending(data, "z"), _frequencies_eb(3), rtol=2e-4)


def _bending(data, axis):
    """Frequencies of the modes bending along basic ``axis`` (their largest motion)."""
    k = "xyz".index(axis)
    shapes = data.phi.reshape(-1, 3, data.n_modes)
    share = np.linalg.norm(shapes[:, k], axis=0) / np.linalg.norm(shapes, axis=(0, 1))
    return np.sort(data.frequencies[share > 0.99])[:3]


@pytest.mark.parametrize("variant", ["g-set", "a-set", "mm-t-s", "cylindrical CD",
                                     "ASCII sparse"])
def test_op4_round_trip_equals_the_direct_path(tmp_path, variant):
    kwargs = {"a-set": {"a_set": True}, "mm-t-s": {"unit_scale": 1000.0},
              "cylindrical CD": {"cd_grids": tuple(range(1, N_EL + 1, 2))},
              "ASCII sparse": {"ascii_sparse": True}}.get(variant, {})
    bdf, op4, direct = _write_model(tmp_path, **kwargs)
    units = "mm-t-s" if variant == "mm-t-s" else None
    fe = read_nastran(f"{op4}:MGG", f"{op4}:KGG", bdf, units=units)
    via_op4 = clamped_modes(fe, "spc", 8)
    reference = clamped_modes(direct, "root", 8)
    np.testing.assert_allclose(via_op4.frequencies, reference.frequencies, rtol=1e-9)
    np.testing.assert_allclose(fe.nodes, direct.nodes, atol=1e-9)


def test_cli_reduce_reads_nastran_and_a_missing_name_is_listed(tmp_path, capsys):
    bdf, op4, _ = _write_model(tmp_path)
    out = tmp_path / "beam.fmd.h5"
    code = cli(["reduce", "--mass", f"{op4}:MGG", "--stiffness", f"{op4}:KGG",
                "--nodes", str(bdf), "--clamp-nodes", "spc", "--modes", "4", "-o", str(out),
                "--json"])
    assert code == 0 and out.exists()
    data = read_modal(out)
    np.testing.assert_allclose(_bending(data, "z")[:1], _frequencies_eb(1), rtol=2e-4)
    code = cli(["reduce", "--mass", f"{op4}:MAA", "--stiffness", f"{op4}:KGG",
                "--nodes", str(bdf), "--clamp-nodes", "spc", "--modes", "4", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "has no matrix 'MAA'; it holds KGG, MGG" in err
    assert "Traceback" not in err


def _write_op2(tmp_path, bdf, op4, n_modes=6, free=False):
    """A SOL-103-style OP2 (eigenvector table with eigenvalues) of the OP4 matrices'
    clamped modes, in the grids' displacement systems, written by pyNastran."""
    from flexmbs.modal.io.nastran import read_op4_matrix

    m, _ = read_op4_matrix(f"{op4}:MGG")
    k, _ = read_op4_matrix(f"{op4}:KGG")
    n = m.shape[0]
    keep = np.arange(n) if free else np.arange(6, n)
    lam, vec = sla.eigh(k[keep][:, keep].toarray(), m[keep][:, keep].toarray())
    lam, vec = lam[:n_modes], vec[:, :n_modes]  # mass-normalized, as Nastran's default
    full = np.zeros((n, n_modes))
    full[keep] = vec
    data = full.reshape(-1, 6, n_modes).transpose(2, 0, 1).astype(np.float32)
    ids = np.array(sorted(GRID_IDS.tolist()))
    gridtype = np.column_stack([ids, np.ones(len(ids), dtype=int)])
    table = RealEigenvectorArray.add_modal_case("OUGV1", gridtype, data, 1,
                                                np.arange(1, n_modes + 1), lam,
                                                np.sqrt(np.abs(lam)) / (2 * np.pi))
    op2 = OP2(debug=None)
    op2.set_as_msc()
    op2.eigenvectors[1] = table
    path = tmp_path / "beam.op2"
    op2.write_op2(str(path))
    return path, lam


def test_op2_modes_equal_the_op4_path(tmp_path):
    bdf, op4, _ = _write_model(tmp_path, cd_grids=(4, 9))
    op2, _ = _write_op2(tmp_path, bdf, op4)
    from_op2 = read_modal(op2, geometry=bdf, mass=f"{op4}:MGG")
    fe = read_nastran(f"{op4}:MGG", f"{op4}:KGG", bdf)
    from_op4 = clamped_modes(fe, "spc", 6, normalization="mass")
    # the eigenvalues are the OP2's, stored in single precision (an OP2 table header)
    np.testing.assert_allclose(from_op2.frequencies, from_op4.frequencies, rtol=1e-7)
    assert from_op2.reference_frame.value == "attached" and from_op2.attach_set == "spc"
    # the shapes (single precision in an OP2) up to sign, and the modal mass
    for j in range(6):
        a, b = from_op2.phi[:, j], from_op4.phi[:, j]
        sign = np.sign(a @ b)
        np.testing.assert_allclose(sign * a, b, atol=2e-6 * np.max(np.abs(b)))
    np.testing.assert_allclose(np.diag(from_op2.M_ff), 1.0, rtol=1e-5)
    # the inertia invariants the body uses agree too
    inv_a, inv_b = from_op2.invariants, from_op4.invariants
    assert inv_a.mass == pytest.approx(inv_b.mass, rel=1e-12)
    np.testing.assert_allclose(inv_a.S0, inv_b.S0, atol=1e-12)
    np.testing.assert_allclose(np.abs(inv_a.S), np.abs(inv_b.S),
                               atol=1e-5 * np.max(np.abs(inv_b.S)))


def test_op2_with_lumped_mass_from_the_bulk_data(tmp_path):
    bdf, op4, _ = _write_model(tmp_path)
    op2, lam = _write_op2(tmp_path, bdf, op4)
    data = read_modal(op2, geometry=bdf)
    np.testing.assert_allclose((2 * np.pi * data.frequencies) ** 2, lam, rtol=1e-7)
    # the CBARs' own mass, lumped: the beam's ρ A L
    assert data.invariants.mass == pytest.approx(STEEL.rho * SECTION.A * L, rel=1e-9)
    assert "lumped" in data.metadata["mass_source"]


def test_free_free_op2_drops_its_rigid_modes(tmp_path):
    bdf, op4, _ = _write_model(tmp_path)
    text = bdf.read_text().replace("SPC1", "$SPC1")
    bdf.write_text(text)
    op2, lam = _write_op2(tmp_path, bdf, op4, n_modes=10, free=True)
    data = read_modal(op2, geometry=bdf, mass=f"{op4}:MGG")
    assert data.metadata["rigid_modes_dropped"] == 6 and data.n_modes == 4
    assert data.reference_frame.value == "mean-axis"
    np.testing.assert_allclose((2 * np.pi * data.frequencies) ** 2, lam[6:], rtol=1e-7)


def test_bad_nastran_inputs_are_named(tmp_path):
    bdf, op4, _ = _write_model(tmp_path)
    bad = tmp_path / "bad.bdf"
    model = BDF(debug=None)
    model.add_grid(1000, [0.0, 0.0, 0.0])
    model.add_grid(1010, [0.1, 0.0, 0.0], cd=9)  # no coordinate system 9
    model.write_bdf(str(bad))
    with pytest.raises(ReadError, match=r"GRID 1010: CD = 9 is not a defined coordinate"):
        read_bdf(bad)
    model = BDF(debug=None)
    model.add_grid(1000, [0.0, 0.0, 0.0])
    model.add_grid(1010, [0.1, 0.0, 0.0])
    model.add_cbar(5000, 1, [1000, 4242], [0.0, 0.0, 1.0], None)
    model.write_bdf(str(bad))
    with pytest.raises(ReadError, match=r"CBAR 5000 references grid 4242"):
        read_bdf(bad)
    small = tmp_path / "small.op4"
    write_op4(str(small), {"KAA": Matrix("KAA", 6, np.eye(12))}, is_binary=False)
    with pytest.raises(ReadError, match=r"KAA has 12 rows, which fits no DOF layout .*"
                                        r"6 DOF at each of the 25 grids: 150; .*: 144; .*"
                                        r"3 DOF \(translations\) at each of the 25 grids: 75"):
        read_nastran(f"{small}:KAA", f"{small}:KAA", bdf)
    op2, _ = _write_op2(tmp_path, bdf, op4)
    with pytest.raises(ReadError, match=r"needs its geometry"):
        read_modal(op2)
    not_op2 = tmp_path / "fake.op2"
    not_op2.write_bytes(b"not an op2 file at all" * 10)
    with pytest.raises(ReadError, match=r"fake.op2: pyNastran could not read it"):
        read_modal(not_op2, geometry=bdf)


def test_split_spec():
    assert split_spec("a/b.op4:KAA") == (split_spec("a/b.op4")[0], "KAA")
    assert split_spec("C:/models/b.op4")[1] is None
    assert split_spec("b.OP4:mgg")[1] == "mgg"


def test_missing_pynastran_names_the_extra(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "pyNastran.bdf.bdf", None)  # as if not installed
    bdf = tmp_path / "x.bdf"
    bdf.write_text("GRID,1,,0.,0.,0.\n")
    with pytest.raises(FlexmbsError, match=r"pip install 'flexmbs\[nastran\]'"):
        read_bdf(bdf)


def test_a_case_file_runs_a_body_from_an_op2(tmp_path):
    from flexmbs.cases import load_case, run_case

    bdf, op4, _ = _write_model(tmp_path)
    _write_op2(tmp_path, bdf, op4)
    case = tmp_path / "op2_beam.toml"
    case.write_text('''
title = "cantilever from a Nastran OP2, released under gravity"
[model]
gravity = [0.0, 0.0, -9.81]
[[bodies]]
name = "beam"
type = "flexible"
modal_data = "beam.op2"
modal_options = { geometry = "beam.bdf", mass = "beam.op4:MGG" }
[[markers]]
body = "ground"
name = "O"
[[markers]]
body = "beam"
name = "root"
node = 1000
[[joints]]
name = "clamp"
type = "fixed"
i = "ground.O"
j = "beam.root"
[solver]
t_end = 0.02
h = 1e-3
''')
    _, res = run_case(load_case(case))
    assert res.success
    assert res.bodies["beam"]["n_modes"] == 6  # the OP2's six modes
    # released at rest, the beam starts to sag: the tip moves down, not up
    tip = res.bodies["beam"]["phi"].reshape(-1, 3, 6)[-1, 2] @ res.q[-1, 7:13]
    assert tip < 0
    bad = case.read_text().replace('mass = "beam.op4:MGG"', 'mass = "beam.op4:MXX"')
    case.write_text(bad)
    with pytest.raises(FlexmbsError, match=r"modal_data.*has no matrix 'MXX'"):
        load_case(case)


def test_op2_generalized_masses_from_its_lama_table(tmp_path):
    """An OP2 with a LAMA table (as Nastran writes; pyNastran's writer skips it, so the
    table object is added to the read OP2 as pyNastran's reader would make it): M_ff and
    K_ff come from its generalized masses and stiffnesses."""
    from pyNastran.op2.tables.lama_eigenvalues.lama_objects import RealEigenvalues

    from flexmbs.modal.io.nastran import modes_from_op2

    bdf, op4, _ = _write_model(tmp_path)
    path, lam = _write_op2(tmp_path, bdf, op4)
    op2 = OP2(debug=None)
    op2.read_op2(str(path), build_dataframe=False)
    table = RealEigenvalues("SOL 103", "LAMA", len(lam))
    table.mode = np.arange(1, len(lam) + 1)
    table.extraction_order = table.mode.copy()
    table.eigenvalues = np.asarray(lam, dtype=float)
    table.radians = np.sqrt(lam)
    table.cycles = table.radians / (2 * np.pi)
    table.generalized_mass = np.full(len(lam), 2.0)  # a model normalised to m = 2 kg m²
    table.generalized_stiffness = 2.0 * np.asarray(lam)
    op2.eigenvalues["SOL 103"] = table
    data = modes_from_op2(op2, path, read_bdf(bdf))
    np.testing.assert_allclose(np.diag(data.M_ff), 2.0)
    np.testing.assert_allclose(np.diag(data.K_ff), 2.0 * np.asarray(lam), rtol=1e-12)
    assert data.metadata["generalized_mass_source"] == "the OP2's LAMA table"
    np.testing.assert_allclose((2 * np.pi * data.frequencies) ** 2, lam, rtol=1e-12)


def test_flexmbs_modes_shows_an_op2_with_its_bulk_data(tmp_path, capsys):
    bdf, op4, _ = _write_model(tmp_path)
    op2, lam = _write_op2(tmp_path, bdf, op4)
    capsys.readouterr()
    assert cli(["modes", str(op2), "--geometry", str(bdf), "--mass", f"{op4}:MGG",
                "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(np.asarray(summary["frequencies_hz"]),
                               np.sqrt(lam) / (2 * np.pi), rtol=1e-7)
    assert cli(["modes", str(op2)]) == 2
    assert "needs its geometry" in capsys.readouterr().err
    native = tmp_path / "x.fmd.h5"
    from flexmbs.modal import write_modal

    write_modal(read_modal(op2, geometry=bdf), native)
    assert cli(["modes", str(native), "--geometry", str(bdf)]) == 2
    assert "takes no reader options, got ['geometry']" in capsys.readouterr().err
