"""Nastran external superelements (flexmbs.modal.io.nastran_superelement): the real MSC
Nastran EXTSEOUT output of pyNastran's se_test_n11 model (tests/data/nastran_extse,
README there) read as a Craig–Bampton body and checked against scipy on the OP4's own
KAA/MAA (read with pyNastran, not with the reader under test), in a run welded at its
boundary grids (flexmbs linear), through a DMIG punch derived from the OP4, and on bad
input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla

pytest.importorskip("pyNastran")

from pyNastran.op2.result_objects.matrix import Matrix
from pyNastran.op4.op4 import read_op4, write_op4

from flexmbs.cli.main import main as cli
from flexmbs.errors import ReadError
from flexmbs.modal import read_modal
from flexmbs.modal.io.nastran_bulk import coordinate_systems, parse_real, read_cards

DATA = Path(__file__).parent / "data" / "nastran_extse"
PCH = DATA / "se_test_n11.pch"
OP4 = DATA / "se_test_n11.op4"
N_B, N_Q = 66, 39  # 11 boundary grids x 6, 39 q-set scalar points (the punch's EXTRN)


@pytest.fixture(scope="module")
def reference():
    """KAA, MAA as pyNastran reads them from the OP4 (dense, double precision: the file
    declares single precision but writes 16 digits, which pyNastran would round)."""
    mats = read_op4(str(OP4), precision="double")  # the text holds 16 digits
    return mats["KAA"].data.toarray(), mats["MAA"].data.toarray()


@pytest.fixture(scope="module")
def free_body():
    return read_modal(PCH)


@pytest.fixture(scope="module")
def welded_body():
    return read_modal(PCH, reference_frame="attached")


def _fixed_interface_hz(k_aa, m_aa):
    """Generalized eigenproblem of the q-set partition (the last 39 a-set DOFs)."""
    lam = sla.eigh(k_aa[N_B:, N_B:], m_aa[N_B:, N_B:], eigvals_only=True)
    return np.sqrt(lam) / (2 * np.pi)


def test_total_mass_from_the_boundary_block(free_body, welded_body, reference):
    """m = T_Rᵀ M_bb T_R for a rigid translation: all 11 grids move in one set of axes
    (their CD systems are parallel), so a unit translation along each axis is the ones
    vector on that component; the three must agree (isotropic) and equal the body's."""
    _, m_aa = reference
    masses = []
    for axis in range(3):
        t_r = np.zeros(N_B + N_Q)
        t_r[axis:N_B:6] = 1.0
        masses.append(t_r @ m_aa @ t_r)
    np.testing.assert_allclose(masses, masses[0], rtol=1e-8, atol=0)
    np.testing.assert_allclose(free_body.total_mass, masses[0], rtol=1e-8, atol=0)
    np.testing.assert_allclose(welded_body.total_mass, masses[0], rtol=1e-8, atol=0)
    assert 1.0 < masses[0] < 100.0  # SI: the README's 20.1 kg part, not mm-t-s


def test_fixed_interface_frequencies(welded_body, reference):
    """Frame attached to every boundary grid: the body's modes are the q-set's."""
    expected = _fixed_interface_hz(*reference)
    assert welded_body.n_modes == N_Q
    np.testing.assert_allclose(welded_body.frequencies, expected, rtol=1e-8, atol=0)
    np.testing.assert_allclose(welded_body.metadata["fixed_interface_frequencies_hz"],
                               expected, rtol=1e-8, atol=0)


def test_free_body_frequencies_and_rigid_modes(free_body, reference):
    """Mean axes: the elastic eigenfrequencies of the whole a-set (rows of zero stiffness
    and mass left out) with its six rigid modes removed; the modes carry no rigid-body
    content."""
    k_aa, m_aa = reference
    live = np.flatnonzero((np.abs(k_aa).max(axis=1) > 0) | (np.abs(m_aa).max(axis=1) > 0))
    lam = sla.eigh(k_aa[np.ix_(live, live)], m_aa[np.ix_(live, live)], eigvals_only=True)
    assert np.all(np.abs(lam[:6]) < 1e-6 * lam[6])
    expected = np.sqrt(lam[6:]) / (2 * np.pi)
    np.testing.assert_allclose(free_body.frequencies, expected, rtol=1e-8, atol=0)
    assert np.max(free_body.invariants.rigid_content()) < 1e-10
    np.testing.assert_allclose(free_body.M_ff, np.eye(free_body.n_modes), rtol=0, atol=1e-12)
    # M_ff equals Φᵀ M Φ of the stored (generalized) mass description
    np.testing.assert_allclose(free_body.invariants.M_ff, free_body.M_ff, rtol=0, atol=1e-10)


def test_inertia_is_a_rotation_of_the_boundary_block(free_body, reference):
    """The inertia about the centre of mass has the same eigenvalues as the one computed
    from MAA in the grids' own (parallel) axes with the grid positions in system
    20110001, read here from the punch's GRID cards independently of the reader."""
    _, m_aa = reference
    cards = read_cards(PCH)[111]
    local = {c.integer(0, "ID"): [c.real(2 + a, "X", 0.0) for a in range(3)]
             for c in cards if c.name == "GRID"}
    grids = sorted(local)
    rigid = np.zeros((N_B + N_Q, 6))
    for k, gid in enumerate(grids):
        x = np.array(local[gid])
        for a in range(3):
            e = np.eye(3)[a]
            rigid[6 * k + a, a] = 1.0
            rigid[6 * k + a, 3:] = np.cross(x, e)
            rigid[6 * k + 3 + a, 3 + a] = 1.0
    m_rr = rigid.T @ m_aa @ rigid
    m = m_rr[0, 0]
    c = np.array([m_rr[2, 4], m_rr[0, 5], m_rr[1, 3]]) / m  # −skew(S) block: S = m c
    j_origin = m_rr[3:, 3:]
    j_cm = j_origin - m * (c @ c * np.eye(3) - np.outer(c, c))
    np.testing.assert_allclose(np.linalg.eigvalsh(free_body.inertia_tensor),
                               np.linalg.eigvalsh(j_cm), rtol=1e-8, atol=0)


def test_welded_run_gives_the_fixed_interface_frequencies(tmp_path, reference, capsys):
    """A case whose body (frame attached to every boundary grid) is welded to the ground
    at grid 20110010: flexmbs linear lists the q-set frequencies."""
    for name in ("se_test_n11.pch", "se_test_n11.op4", "se_test_n11.asm"):
        shutil.copy(DATA / name, tmp_path / name)
    case = tmp_path / "welded.toml"
    case.write_text('''
title = "se_test_n11 welded at its boundary grids"
[[bodies]]
name = "se"
type = "flexible"
modal_data = "se_test_n11.pch"
modal_options = { reference_frame = "attached", matrices = "se_test_n11.op4" }
[[markers]]
body = "se"
name = "root"
node = 20110010
[[markers]]
body = "ground"
name = "O"
[[joints]]
name = "weld"
type = "fixed"
i = "ground.O"
j = "se.root"
[solver]
method = "newmark"
h = 1e-5
t_end = 1e-4
''')
    assert cli(["linear", str(case), "--modes", str(N_Q), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(out["frequencies_hz"], _fixed_interface_hz(*reference),
                               rtol=1e-8, atol=0)


def _dmig_cards(name, matrix, labels):
    """DMIG in the punch format EXTSEOUT(DMIGPCH) writes: a small-field header (IFO 6
    symmetric, TIN 2), then per column a large-field ``DMIG*`` line and one ``*`` line
    per entry of the upper triangle, values in 16 columns with D exponents."""
    def field(v):
        return f"{v:16d}" if isinstance(v, int) else f"{v: .9E}".replace("E", "D")

    lines = [f"DMIG    {name:<8s}       0       6       2       0{'':16s}{len(labels):8d}"]
    for j, (gj, cj) in enumerate(labels):
        rows = [i for i in range(j + 1) if matrix[i, j] != 0.0]
        if not rows:
            continue
        lines.append(f"DMIG*   {name:<16s}{field(gj)}{field(cj)}")
        for i in rows:
            gi, ci = labels[i]
            lines.append(f"*       {field(gi)}{field(ci)}{field(float(matrix[i, j]))}")
    return lines


def test_dmig_punch_gives_the_op4_body(tmp_path, welded_body, reference):
    """KAA/MAA written as DMIG KAAX/MAAX into the punch (no OP4 beside it) give the same
    body as the OP4 route with the same numbers (the DMIG fields hold 10 digits, so the
    OP4 of the comparison holds the same rounded values): frequencies, modes' inertia
    terms and mass to 1e-9, free and welded; the welded body's q-set frequencies also
    match the original 16-digit OP4's to 1e-9 (the free body's lowest modes, which cancel
    the stiffness's rigid-body forces, lose ~7 digits to the 10-digit rounding)."""
    k_aa, m_aa = (np.vectorize(lambda v: float(f"{v:.9E}"))(a) for a in reference)
    grids = sorted({c.integer(0, "ID") for c in read_cards(PCH)[111] if c.name == "GRID"})
    labels = [(g, c) for g in grids for c in range(1, 7)] + \
        [(20111101 + k, 0) for k in range(N_Q)]
    text = PCH.read_text().rstrip("\n").splitlines()
    text += _dmig_cards("KAAX", k_aa, labels) + _dmig_cards("MAAX", m_aa, labels)
    punch = tmp_path / "dmig" / "se_test_n11.pch"
    punch.parent.mkdir()
    punch.write_text("\n".join(text) + "\n")
    op4_dir = tmp_path / "op4"
    op4_dir.mkdir()
    shutil.copy(PCH, op4_dir / "se_test_n11.pch")
    write_op4(str(op4_dir / "se_test_n11.op4"), {"KAA": Matrix("KAA", 6, k_aa),
                                                 "MAA": Matrix("MAA", 6, m_aa)},
              is_binary=False)
    for frame in (None, "attached"):
        dmig = read_modal(punch, reference_frame=frame)
        body = read_modal(op4_dir / "se_test_n11.pch", reference_frame=frame)
        assert dmig.metadata["matrices"].startswith("DMIG KAAX/MAAX")
        np.testing.assert_allclose(dmig.frequencies, body.frequencies, rtol=1e-9, atol=0)
        np.testing.assert_allclose(dmig.total_mass, body.total_mass, rtol=1e-9, atol=0)
        scale = np.max(np.abs(body.invariants.M0))
        np.testing.assert_allclose(np.abs(dmig.invariants.M0), np.abs(body.invariants.M0),
                                   rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(dmig.frequencies, welded_body.frequencies, rtol=1e-9, atol=0)


def test_modes_cli(tmp_path, capsys, free_body):
    """flexmbs modes FILE.pch finds the OP4 beside it; --matrices names it elsewhere."""
    assert cli(["modes", str(PCH), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(out["total_mass_kg"], free_body.total_mass, rtol=1e-12)
    shutil.copy(PCH, tmp_path / "part.pch")
    assert cli(["modes", str(tmp_path / "part.pch"), "--matrices", str(OP4),
                "--frame", "attached", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_modes"] == N_Q and out["reference_frame"] == "attached"


# ------------------------------------------------------------------------ bulk data
def test_numbers_and_chained_cylindrical_systems(tmp_path):
    """Nastran number forms; a cylindrical system on a rotated rectangular one (RID),
    in small, free and large field; a GRID given in (r, θ, z) lands where the rotation
    and the polar formula put it."""
    assert parse_real("7.271236428543-4") == pytest.approx(7.271236428543e-4, rel=1e-15)
    assert parse_real("1.0+9") == 1e9 and parse_real("-.5D-2") == -0.005
    assert parse_real(".18") == 0.18 and parse_real("2.") == 2.0
    deck = tmp_path / "c.pch"
    deck.write_text(
        "BEGIN SUPER 5\n"
        "CORD2R,1,,1.,2.,3.,1.,2.,4.,+\n"            # free field, origin (1,2,3), z up,
        "+,1.,3.,3.\n"                               # x axis along basic y
        "CORD2C         2       1      0.      0.      0.      0.      0.      1.\n"
        "              1.      0.      0.\n"
        "GRID*                 7               2             2.0            90.0\n"
        "*                    0.5               2\n")
    cards = read_cards(deck)[5]
    systems = coordinate_systems(cards)
    grid = next(c for c in cards if c.name == "GRID")
    pos = systems[2].to_basic([grid.real(2 + a, "X") for a in range(3)])
    # system 1: x = basic y, z = basic z, so y = -basic x; r = 2 at 90° is local +y
    np.testing.assert_allclose(pos, [1.0 - 2.0, 2.0, 3.5], rtol=0, atol=1e-14)


# ------------------------------------------------------------------------ bad input
def test_punch_without_superelement(tmp_path):
    bad = tmp_path / "plain.pch"
    bad.write_text("GRID           1               0.      0.      0.\n")
    with pytest.raises(ReadError, match=r"plain\.pch.*no BEGIN SUPER section and no EXTRN"):
        read_modal(bad)


def test_extrn_names_undefined_grid(tmp_path):
    text = PCH.read_text().replace("EXTRN   20110010", "EXTRN   20110099", 1)
    bad = tmp_path / "se_test_n11.pch"
    bad.write_text(text)
    with pytest.raises(ReadError, match=r"se_test_n11\.pch, line \d+: EXTRN: grid 20110099 "
                                        r"\(components 123456\) is not defined"):
        read_modal(bad)


def test_missing_op4(tmp_path):
    shutil.copy(PCH, tmp_path / "alone.pch")
    with pytest.raises(ReadError, match=r"alone\.pch.*alone\.op4.*no such OP4"):
        read_modal(tmp_path / "alone.pch")


def test_op4_of_the_wrong_size(tmp_path, reference):
    k_aa, m_aa = reference
    shutil.copy(PCH, tmp_path / "small.pch")
    write_op4(str(tmp_path / "small.op4"), {"KAA": Matrix("KAA", 6, k_aa[:100, :100]),
                                            "MAA": Matrix("MAA", 6, m_aa[:100, :100])},
              is_binary=False)
    with pytest.raises(ReadError, match=r"small\.op4.*100 rows.*tried: EXTRN components of "
                                        r"11 boundary grids \(66\) \+ 39 q-set scalar "
                                        r"points = 105"):
        read_modal(tmp_path / "small.pch")


def test_spinning_free_body_run_and_native_round_trip(tmp_path, capsys, free_body):
    """The free superelement (6 modes, generalized mass) spinning at 20 rad/s with a
    deformed start keeps its energy in a run (trapezoidal Newmark, 100 steps), and the
    native file keeps the generalized mass description bit for bit."""
    from flexmbs.modal import write_modal

    for name in ("se_test_n11.pch", "se_test_n11.op4"):
        shutil.copy(DATA / name, tmp_path / name)
    case = tmp_path / "spin.toml"
    case.write_text('''
[[bodies]]
name = "se"
type = "flexible"
modal_data = "se_test_n11.pch"
modes = 6
angular_velocity = [0.0, 0.0, 20.0]
xi = [0.0001, 0, 0, 0, 0, 0]
[solver]
method = "newmark"
h = 1e-4
t_end = 0.01
[output]
file = "spin.res.h5"
''')
    assert cli(["run", str(case), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    e0, e1 = out["energy_initial_J"], out["energy_final_J"]
    assert abs(e1 - e0) < 1e-6 * abs(e0)
    data = free_body.truncate(6)
    path = write_modal(data, tmp_path / "se.fmd.h5")
    back = read_modal(path)
    np.testing.assert_array_equal(back.generalized_shapes, data.generalized_shapes)
    np.testing.assert_array_equal(back.invariants.M0, data.invariants.M0)


def test_a_frame_attached_to_a_grid_without_rotations_is_refused():
    """Grid 20110031 is listed with 123456 but no element stiffens its rotations (empty
    rows of KAA and MAA): a frame attached to it alone would leave three rigid rotations
    as near-zero 'elastic' modes, so it is refused."""
    with pytest.raises(ReadError, match=r"holds 3 of the six rigid motions"):
        read_modal(PCH, reference_frame="attached", attach_set=[20110031])
    body = read_modal(PCH, reference_frame="attached", attach_set=[20110010])
    assert body.frequencies[0] ** 2 > 1e-6 * body.frequencies[6] ** 2  # all elastic


def test_wtmass_in_the_punch_is_reported_not_applied(tmp_path, reference):
    text = PCH.read_text().replace("BEGIN SUPER     111", "BEGIN SUPER     111\n"
                                   "PARAM,WTMASS,0.5", 1)
    punch = tmp_path / "se_test_n11.pch"
    punch.write_text(text)
    shutil.copy(OP4, tmp_path / "se_test_n11.op4")
    with pytest.warns(UserWarning, match="WTMASS"):
        body = read_modal(punch)
    plain = read_modal(PCH)
    np.testing.assert_allclose(body.total_mass, plain.total_mass, rtol=1e-14)
    assert "not applied" in body.metadata["wtmass"]


def _with_matrices(tmp_path, **mats):
    """The real punch beside an OP4 holding ``mats`` (name → array)."""
    folder = tmp_path / "se"
    folder.mkdir(exist_ok=True)
    shutil.copy(PCH, folder / "se_test_n11.pch")
    write_op4(str(folder / "se_test_n11.op4"),
              {name: Matrix(name, 6, value) for name, value in mats.items()}, is_binary=False)
    return folder / "se_test_n11.pch"


def test_viscous_and_structural_damping_matrices(tmp_path, reference):
    """BAA = a MAA + b KAA (Rayleigh) gives D_ff = a I + b diag(ω²) on the mass-normalised
    modes; K4AA = g KAA with W4 gives (g/W4) diag(ω²); without W4 K4AA is left out with a
    warning (a time-domain run needs viscous damping)."""
    k_aa, m_aa = reference
    a, b, g, w4 = 3.0, 2e-6, 0.04, 2 * np.pi * 200.0
    body = read_modal(_with_matrices(tmp_path, KAA=k_aa, MAA=m_aa, BAA=a * m_aa + b * k_aa),
                      reference_frame="attached")
    lam = np.diag(body.K_ff)
    np.testing.assert_allclose(body.damping_matrix, np.diag(a + b * lam), rtol=0,
                               atol=1e-9 * (a + b * lam.max()))
    body = read_modal(_with_matrices(tmp_path, KAA=k_aa, MAA=m_aa, K4AA=g * k_aa),
                      reference_frame="attached", w4=w4)
    np.testing.assert_allclose(body.damping_matrix, np.diag(g / w4 * lam), rtol=0,
                               atol=1e-9 * g / w4 * lam.max())
    with pytest.warns(UserWarning, match="K4AA is not applied"):
        body = read_modal(_with_matrices(tmp_path, KAA=k_aa, MAA=m_aa, K4AA=g * k_aa),
                          reference_frame="attached")
    assert body.damping_matrix is None


def test_massless_boundary_rotations_are_condensed(tmp_path, reference):
    """MAA without the boundary grids' rotational mass (massless interface rotations, as
    lumped-mass models have): the free body's frequencies equal the finite generalized
    eigenvalues scipy finds with the singular mass (QZ), rigid ones left out."""
    k_aa, m_aa = reference
    rot = np.array([6 * g + c for g in range(N_B // 6) for c in (3, 4, 5)])
    m_cut = m_aa.copy()
    m_cut[rot, :] = 0.0
    m_cut[:, rot] = 0.0
    body = read_modal(_with_matrices(tmp_path, KAA=k_aa, MAA=m_cut))
    assert body.metadata["massless_dofs_condensed"]
    active = np.flatnonzero(np.any(k_aa != 0, axis=1) | np.any(m_cut != 0, axis=1))
    lam = sla.eig(k_aa[np.ix_(active, active)], m_cut[np.ix_(active, active)], right=False)
    lam = np.sort(lam[np.isfinite(lam)].real)[6:]
    np.testing.assert_allclose(body.frequencies, np.sqrt(lam[:body.n_modes]) / (2 * np.pi),
                               rtol=1e-7)


def test_mug1_recovery_is_exact_at_the_boundary_of_the_real_file():
    """The real OP4's MUG1 recovers the 11 boundary grids (DTI TUG1): at their a-set
    components it reproduces the a-set motion exactly (recorded difference 0), and those
    grids are the body's nodes (node set 'recovered')."""
    body = read_modal(PCH)
    note = body.metadata["recovery"]
    assert note.startswith("MUG1 rows of 11 grid(s)")
    assert float(note.rsplit("differ by ", 1)[1].split()[0]) < 1e-12
    assert sorted(body.node_ids[body.node_sets["recovered"]]) == sorted(
        body.node_ids[body.node_sets["boundary"]])


def test_an_interior_grid_recovered_through_mug1_becomes_a_node(tmp_path, monkeypatch,
                                                                reference):
    """A derived fixture: the real punch and OP4 with one more recovered grid halfway
    between the first two boundary grids, its MUG1 rows (in basic, CD 0) the mean of
    theirs turned to basic. It becomes a node at its position whose translations and
    rotations are the mean of theirs in every mode (1e-12), in node set 'recovered'."""
    from flexmbs.modal.io import nastran_superelement as module
    from flexmbs.modal.io.nastran_punch import read_punch

    k_aa, m_aa = reference
    mug1 = read_op4(str(OP4), precision="double")["MUG1"].data
    mug1 = mug1.toarray() if hasattr(mug1, "toarray") else np.asarray(mug1)
    punch = read_punch(PCH)
    a, b = 20110010, 20110020
    ia, ib = (int(np.searchsorted(punch.grid_ids, g)) for g in (a, b))
    rows = []
    for g, k in ((a, ia), (b, ib)):
        turn = np.kron(np.eye(2), punch.frames[k])  # CD -> basic, translations and rotations
        rows.append(turn @ mug1[punch.tug1[g]:punch.tug1[g] + 6])
    new_id = 20119999
    extended = np.vstack([mug1, 0.5 * (rows[0] + rows[1])])
    position = 0.5 * (punch.coords[ia] + punch.coords[ib])
    order = np.argsort(np.r_[punch.grid_ids, new_id])
    punch.grid_ids = np.r_[punch.grid_ids, new_id][order]
    punch.coords = np.vstack([punch.coords, position])[order]
    punch.frames = np.concatenate([punch.frames, np.eye(3)[None]])[order]
    for name in ("cp_frames",):
        value = getattr(punch, name)
        if value is not None:
            setattr(punch, name, np.concatenate([value, np.eye(3)[None]])[order])
    if punch.blank_cd is not None:
        punch.blank_cd = np.r_[punch.blank_cd, False][order]
    punch.tug1 = {**punch.tug1, new_id: mug1.shape[0]}
    punch.tug1_shape = extended.shape
    copy = _with_matrices(tmp_path, KAA=k_aa, MAA=m_aa, MUG1=extended)
    punch.path = copy  # its OP4 is the one beside the copy
    monkeypatch.setattr(module, "read_punch", lambda path, superelement=None: punch)
    body = read_modal(copy)
    ids = body.node_ids.tolist()
    k_new, k_a, k_b = ids.index(new_id), ids.index(a), ids.index(b)
    assert k_new in body.node_sets["recovered"]
    np.testing.assert_allclose(body.nodes[k_new], 0.5 * (body.nodes[k_a] + body.nodes[k_b]),
                               rtol=0, atol=1e-12)
    for shapes in (body.phi, body.psi):
        per_node = shapes.reshape(-1, 3, shapes.shape[1])
        mean = 0.5 * (per_node[k_a] + per_node[k_b])
        np.testing.assert_allclose(per_node[k_new], mean, rtol=0,
                                   atol=1e-12 * np.abs(per_node).max())


NX = Path(__file__).parent / "data" / "nastran_extse_nx"
#: The fixed-interface frequencies [Hz] Simcenter Nastran 2020.2 printed for the part
#: (outboard.out, "REAL EIGENVALUES", CYCLES; README there).
SIMCENTER_PRINTED = [1.647887, 1.648135, 1.673163, 1.673585, 6.880648, 6.880707, 10.78884,
                     10.79060, 13.94015, 13.94609, 25.01010, 25.01543, 42.35685, 42.37868,
                     46.71593, 46.89476]


def test_a_simcenter_punch_gives_its_q_set_as_aset_scalar_points():
    """Simcenter's punch has no QSET1: its q-set is ASET entries of the scalar points,
    its matrices KXX and MXX, and TUG1 recovers grids the punch does not place (refused
    before, as boundary scalar points). Attached to its four boundary grids the body has
    the 22 fixed-interface modes Nastran printed; the 22 grids without position are
    listed as left out."""
    attached = read_modal(NX / "outboard.pch", reference_frame="attached",
                          units="mm-t-s")
    assert attached.n_modes == 22
    np.testing.assert_allclose(attached.frequencies[:16], SIMCENTER_PRINTED, rtol=1e-6)
    assert attached.node_ids.tolist() == [3, 11, 19, 27]
    unplaced = attached.metadata["recovered_grids_without_position"]
    assert len(unplaced) == 22 and not set(unplaced) & {3, 11, 19, 27}
    free = read_modal(NX / "outboard.pch", units="mm-t-s")
    assert free.n_modes == 46 - 6  # the a-set less the rigid motions
    assert free.total_mass == pytest.approx(1590.3838693916, rel=1e-9)  # t → kg


def test_a_simcenter_punch_and_the_nas2cam_output_of_its_assembly_agree():
    """The same part read two ways: its own punch and OP4, and the USET table and
    matrices that pyyeti's NAS2CAM wrote in the assembly run (superelement 101,
    tests/data/nastran_op2_uset): the same free body, frequencies to 1e-8."""
    pytest.importorskip("pyyeti")
    uset = Path(__file__).parent / "data" / "nastran_op2_uset"
    from_punch = read_modal(NX / "outboard.pch", units="mm-t-s")
    from_op2 = read_modal(uset / "nas2cam_simcenter2020.op2",
                          matrices=uset / "nas2cam_simcenter2020.op4", superelement=101,
                          units="mm-t-s")
    np.testing.assert_allclose(from_punch.frequencies, from_op2.frequencies, rtol=1e-8)
    assert from_punch.total_mass == pytest.approx(from_op2.total_mass, rel=1e-12)


def test_an_nx_punch_and_a_part_runs_own_uset():
    """NX Nastran 9.1's punch of the inboard part (KXX, MXX, its q-set as ASET scalar
    points) attached to its boundary has the fixed-interface frequencies Nastran printed.
    The part's own OP2 (superelement 0 of its run) with the EXTSEOUT matrices is refused
    for what is wrong, the sizes, and not for the assembly punch's EXTID 102."""
    inboard = read_modal(NX / "inboard.pch", reference_frame="attached",
                         units="mm-t-s")
    assert inboard.n_modes == 8
    np.testing.assert_allclose(inboard.frequencies[:3], [6.129345, 6.130134, 23.63188],
                               rtol=1e-6)
    pytest.importorskip("pyyeti")
    with pytest.raises(ReadError, match=r"KXX has 32 rows, but no a-set layout of "
                                        r"inboard\.op2 \(superelement 0\)"):
        read_modal(NX / "inboard.op2", matrices=NX / "inboard.op4",
                   units="mm-t-s")


def test_an_msc_punch_recovering_a_grid_it_does_not_place_is_refused(tmp_path):
    """An MSC punch (it has QSET1) carries a GRID card for every grid its TUG1 recovers;
    one without (grid 20110038 renamed 20119999 in TUG1) is refused naming it. Only a
    Simcenter punch, without QSET1, leaves such grids out (above)."""
    text = PCH.read_text().replace("201100386       61", "201199996       61")
    assert text != PCH.read_text()
    damaged = tmp_path / PCH.name
    damaged.write_text(text)
    shutil.copy(OP4, tmp_path / OP4.name)
    with pytest.raises(ReadError, match=r"TUG1: grid 20119999 is recovered through MUG1 "
                                        r"but no GRID card"):
        read_modal(damaged)
