"""Tests of the MBDyn modal FEM file reader/writer (flexmbs.modal.io.mbdyn).

Bodies are built here from closed-form expressions (no RNG, so the committed fixtures
in tests/data/ can be regenerated bit for bit): 8 nodes with lumped masses, 2 modes.
M_ff = Φᵀ M Φ so that ModalData's mass-consistency check holds.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from flexmbs.errors import ReadError, ValidationError
from flexmbs.modal.data import ModalData, ModeKind, ReferenceFrame
from flexmbs.modal.io.mbdyn import read_mbdyn_fem, write_mbdyn_fem
from flexmbs.modal.io.registry import modal_formats

DATA = Path(__file__).parent / "data"
N_NODES = 8
NODE_IDS = np.arange(101, 101 + N_NODES)


def _geometry():
    k = np.arange(N_NODES, dtype=float)
    nodes = 0.1 * np.column_stack([k, np.sin(k), np.cos(1.3 * k)])
    mass = 1.0 + 0.25 * k
    return k, nodes, mass


def _modal_mass(phi, mass):
    return phi.T @ (np.repeat(mass, 3)[:, None] * phi)


def _stiffness(m_ff):
    scale = np.mean(np.diag(m_ff))
    return np.diag([(2 * np.pi * 5.0) ** 2, (2 * np.pi * 12.0) ** 2]) * scale


def clamped_body() -> ModalData:
    """Attached-frame body: both modes vanish at node 101 (translations and rotations)."""
    k, nodes, mass = _geometry()
    a = np.arange(3)
    j = np.arange(2)
    phi = 1e-2 * k[:, None, None] * np.cos(0.9 * k[:, None, None] + 1.7 * a[None, :, None]
                                           + 2.3 * j[None, None, :])
    psi = 1e-2 * k[:, None, None] * np.sin(0.5 * k[:, None, None] + a[None, :, None]
                                           + j[None, None, :])
    phi, psi = phi.reshape(3 * N_NODES, 2), psi.reshape(3 * N_NODES, 2)
    rotary = np.repeat(0.01 * (k + 1)[:, None], 3, axis=1)
    # the 6N diagonal mass [m, m, m, Jx, Jy, Jz] per node, as the reader returns it
    diag6 = np.column_stack([np.repeat(mass[:, None], 3, axis=1), rotary]).ravel()
    m_ff = _modal_mass(phi, mass) + psi.T @ (rotary.ravel()[:, None] * psi)
    return ModalData(nodes=nodes, phi=phi, psi=psi, M_ff=m_ff, K_ff=_stiffness(m_ff),
                     mass=sp.diags(diag6).tocsr(), reference_frame="attached",
                     attach_set="base", node_sets={"base": [0]}, node_ids=NODE_IDS)


def _mass_diag(data: ModalData) -> np.ndarray:
    """The mass description as a dense array (lumped vector or matrix diagonal)."""
    return data.mass if data.is_lumped else data.mass.toarray()


def _raw_free_shapes(shift: float = 0.0) -> np.ndarray:
    k, _, _ = _geometry()
    a = np.arange(3)
    j = np.arange(2)
    phi = 1e-2 * np.cos(0.8 * k[:, None, None] * (j[None, None, :] + 1) + a[None, :, None])
    phi[:, 0, :] += shift
    return phi.reshape(3 * N_NODES, 2)


def _rigid_basis(nodes):
    n = nodes.shape[0]
    basis = np.zeros((3 * n, 6))
    basis[:, :3] = np.tile(np.eye(3), (n, 1))
    for i, (x, y, z) in enumerate(nodes):
        basis[3 * i:3 * i + 3, 3:] = -np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    return basis


def mean_axis_body() -> ModalData:
    """Free-free body whose modes are M-orthogonal to the six rigid motions."""
    _, nodes, mass = _geometry()
    m3 = np.repeat(mass, 3)
    basis = _rigid_basis(nodes)
    raw = _raw_free_shapes()
    coef = np.linalg.solve(basis.T @ (m3[:, None] * basis), basis.T @ (m3[:, None] * raw))
    phi = raw - basis @ coef
    m_ff = _modal_mass(phi, mass)
    return ModalData(nodes=nodes, phi=phi, M_ff=m_ff, K_ff=_stiffness(m_ff), mass=mass,
                     reference_frame="mean-axis", node_ids=NODE_IDS)


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _fem_text(tmp_path, body=None, **kw) -> str:
    path = tmp_path / "body.fem"
    write_mbdyn_fem(clamped_body() if body is None else body, path, **kw)
    return path.read_text()


def _line_of(text: str, needle: str) -> int:
    for k, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return k
    raise AssertionError(needle)


def _assert_same_body(got: ModalData, ref: ModalData, rtol: float) -> None:
    assert_allclose(got.nodes, ref.nodes, rtol=rtol, atol=0)
    assert_allclose(got.phi, ref.phi, rtol=rtol, atol=0)
    assert_allclose(got.M_ff, ref.M_ff, rtol=rtol, atol=0)
    assert_allclose(got.K_ff, ref.K_ff, rtol=rtol, atol=0)
    assert_allclose(_mass_diag(got), _mass_diag(ref), rtol=rtol, atol=0)
    if ref.psi is None:
        assert got.psi is None
    else:
        assert_allclose(got.psi, ref.psi, rtol=rtol, atol=0)
    assert_array_equal(got.node_ids, ref.node_ids)


# ---------------------------------------------------------------------------- round trips
def test_round_trip_si_is_exact(tmp_path):
    body = clamped_body()
    path = tmp_path / "body.fem"
    write_mbdyn_fem(body, path)
    got = read_mbdyn_fem(path)
    # 17 significant digits reproduce every float64 exactly
    _assert_same_body(got, body, rtol=0)
    assert got.units == "SI"
    assert not got.is_lumped and got.mass.shape == (6 * N_NODES, 6 * N_NODES)
    rotary = body.mass.diagonal().reshape(N_NODES, 6)[:, 3:]
    assert_allclose(got.metadata["lumped_rotary_inertia"], rotary, rtol=0, atol=0)
    assert got.metadata["per_mode"]["initial_modal_displacements"] == [0.0, 0.0]
    assert got.mode_kinds == (ModeKind.NORMAL, ModeKind.NORMAL)
    assert_array_equal(got.node_sets["all"], np.arange(N_NODES))
    # group 12 holds the rigid-body inertia of the lumped masses plus rotary inertia
    rbi = got.metadata["rigid_body_inertia"]
    assert_allclose(rbi["mass"], body.total_mass, rtol=1e-15, atol=0)
    assert_allclose(rbi["center_of_mass"], body.center_of_mass, rtol=1e-14, atol=1e-16)
    rot_sum = np.sum(rotary, axis=0)
    # the 6N mass puts the rotary inertia into the body's inertia tensor already
    assert rot_sum.sum() > 0
    assert_allclose(rbi["inertia_cm"], body.inertia_tensor, rtol=1e-14,
                    atol=1e-16)


@pytest.mark.parametrize("units", ["mm-t-s", "mm-kg-ms", "in-lbf-s"])
def test_round_trip_in_other_units(tmp_path, units):
    body = clamped_body()
    path = tmp_path / "body.fem"
    write_mbdyn_fem(body, path, units=units)
    got = read_mbdyn_fem(path, units=units)
    _assert_same_body(got, body, rtol=1e-13)
    assert got.units == units
    assert_allclose(got.metadata["lumped_rotary_inertia"],
                    body.mass.diagonal().reshape(N_NODES, 6)[:, 3:], rtol=1e-13, atol=0)


def test_mm_t_s_numbers_are_scaled_as_documented(tmp_path):
    """Read the mm-t-s file as if it were SI: every quantity is off by its unit factor."""
    body = clamped_body()
    path = tmp_path / "body.fem"
    write_mbdyn_fem(body, path, units="mm-t-s")
    raw = read_mbdyn_fem(path, reference_frame="attached")  # numbers taken as SI
    assert_allclose(raw.nodes, body.nodes * 1e3, rtol=1e-14)           # m -> mm
    assert_allclose(raw.phi, body.phi * 1e3, rtol=1e-14)               # m -> mm
    assert_allclose(raw.psi, body.psi, rtol=1e-14)                     # rad stays
    scale = np.tile([1e-3] * 3 + [1e-3 * 1e6] * 3, N_NODES)  # kg -> t, kg m² -> t mm²
    assert_allclose(raw.mass.diagonal(), body.mass.diagonal() * scale, rtol=1e-14)
    assert_allclose(raw.M_ff, body.M_ff * 1e-3 * 1e6, rtol=1e-14)      # kg m² -> t mm²
    assert_allclose(raw.K_ff, body.K_ff * 1e-3 * 1e6, rtol=1e-14)      # N m -> N mm


def test_round_trip_mean_axis_body_without_rotations(tmp_path):
    body = mean_axis_body()
    path = tmp_path / "free.fem"
    write_mbdyn_fem(body, path)
    got = read_mbdyn_fem(path)
    _assert_same_body(got, body, rtol=0)
    assert got.psi is None  # all rotational entries zero -> no rotational shapes
    assert got.reference_frame is ReferenceFrame.MEAN_AXIS
    assert got.attach_set is None
    assert got.metadata["reference_frame_source"].startswith("detected: no node at rest")


def test_damping_round_trip_through_group_13(tmp_path):
    body = clamped_body().with_damping(ratio=[0.02, 0.05])
    path = tmp_path / "damped.fem"
    write_mbdyn_fem(body, path)
    assert "RECORD GROUP 13" in path.read_text()
    got = read_mbdyn_fem(path)
    assert got.damping_matrix is not None
    assert_allclose(got.D_ff, body.D_ff, rtol=1e-15, atol=1e-15 * np.max(body.D_ff))
    # stated ratios replace the file's matrix, and the metadata says so
    stated = read_mbdyn_fem(path, damping_ratio=0.1)
    assert_allclose(stated.damping_ratio, [0.1, 0.1], rtol=0, atol=0)
    assert "ignored" in stated.metadata["damping_source"]


def test_undamped_file_has_no_group_13(tmp_path):
    text = _fem_text(tmp_path)
    assert "RECORD GROUP 13" not in text
    got = read_mbdyn_fem(tmp_path / "body.fem")
    assert_allclose(got.D_ff, np.zeros((2, 2)), rtol=0, atol=0)


def test_committed_fixtures_give_the_same_si_numbers():
    """The SI file and the mm-t-s file (Fortran D exponents) read to the same SI body."""
    si = read_mbdyn_fem(DATA / "mbdyn_clamped_si.fem")
    mm = read_mbdyn_fem(DATA / "mbdyn_clamped_mm-t-s.fem", units="mm-t-s")
    _assert_same_body(mm, si, rtol=1e-13)
    assert "D" in (DATA / "mbdyn_clamped_mm-t-s.fem").read_text().split("RECORD GROUP 5")[1]
    # and both are the body of clamped_body() (how the fixtures were made; made again
    # here, its eigenvectors round as this CPU's LAPACK kernels do: 1 ulp of M_ff apart
    # with OpenBLAS's generic ones)
    _assert_same_body(si, clamped_body(), rtol=1e-14)
    assert si.reference_frame is ReferenceFrame.ATTACHED
    assert_array_equal(si.node_sets["attached"], [0])


def test_registered_as_reader_and_writer():
    fmt = modal_formats()["mbdyn-fem"]
    assert fmt.extensions == (".fem",)
    assert fmt.reader is read_mbdyn_fem
    assert fmt.writer is write_mbdyn_fem


def test_read_modal_picks_the_format_by_extension(tmp_path):
    pytest.importorskip("flexmbs.modal.io.vtu", reason="registry loads all built-in formats")
    from flexmbs.modal.io.registry import read_modal, write_modal

    path = write_modal(clamped_body(), tmp_path / "x.fem")
    got = read_modal(path, units="SI")
    _assert_same_body(got, clamped_body(), rtol=0)


# ---------------------------------------------------------------------------- format details
def test_fortran_exponents_comments_and_free_line_breaks(tmp_path):
    text = _fem_text(tmp_path)
    # Fortran D exponents, extra comments and all values of group 5 on one line
    text = re.sub(r"(\d)e([+-]\d\d)", r"\1D\2", text)
    g5, g6 = text.index("RECORD GROUP 5"), text.index("** RECORD GROUP 6")
    block = text[g5:g6].split("\n", 1)
    values = [ln for ln in block[1].splitlines() if not ln.startswith("**")]
    joined = block[0] + "\n** a comment inside the group\n" + " ".join(values) + "\n**\n"
    text = "some title MBDyn ignores\n" + text[:g5] + joined + text[g6:]
    path = _write_text(tmp_path / "fortran.fem", text)
    _assert_same_body(read_mbdyn_fem(path), clamped_body(), rtol=0)


def test_rejected_modes_come_first_and_are_skipped(tmp_path):
    text = _fem_text(tmp_path)
    text = text.replace(f"REV0 {N_NODES} 2 0 0 0", f"REV0 {N_NODES} 3 0 0 1")
    rejected = "**    REJECTED MODE\n" + "9.0 9.0 9.0 9.0 9.0 9.0\n" * N_NODES
    text = text.replace("** RECORD GROUP 8, MODE SHAPES\n",
                        "** RECORD GROUP 8, MODE SHAPES\n" + rejected)
    got = read_mbdyn_fem(_write_text(tmp_path / "rej.fem", text))
    _assert_same_body(got, clamped_body(), rtol=0)
    assert got.metadata["header"]["NREJECTED"] == 1


def test_groups_beyond_13_are_skipped_and_listed(tmp_path):
    text = _fem_text(tmp_path).replace(
        "** END OF FILE", "** RECORD GROUP 14, INVARIANT 3\n1 2 3\n4 5 6\n** END OF FILE")
    got = read_mbdyn_fem(_write_text(tmp_path / "inv.fem", text))
    assert got.metadata["ignored_record_groups"] == [14]


def test_optional_groups_3_4_12_may_be_absent(tmp_path):
    text = _fem_text(tmp_path)
    for group in (3, 4, 12):
        start = text.index(f"** RECORD GROUP {group},")
        end = re.compile(r"\*\* (RECORD GROUP|END OF FILE)").search(text, start + 5).start()
        text = text[:start] + text[end:]
    got = read_mbdyn_fem(_write_text(tmp_path / "lean.fem", text))
    _assert_same_body(got, clamped_body(), rtol=0)
    assert "per_mode" not in got.metadata
    assert "rigid_body_inertia" not in got.metadata


def test_initial_modal_state_converts_velocity_by_time(tmp_path):
    text = _fem_text(tmp_path)
    text = re.sub(r"(INITIAL MODAL DISPLACEMENTS\n)[^\n]*\n", r"\g<1>0.5 -0.25\n", text)
    text = re.sub(r"(INITIAL MODAL VELOCITIES\n)[^\n]*\n", r"\g<1>2.0 4.0\n", text)
    path = _write_text(tmp_path / "init.fem", text)
    got = read_mbdyn_fem(path, units="mm-kg-ms", reference_frame="attached")
    per_mode = got.metadata["per_mode"]
    assert_allclose(per_mode["initial_modal_displacements"], [0.5, -0.25], rtol=0)
    assert_allclose(per_mode["initial_modal_velocities"], [2000.0, 4000.0], rtol=1e-15)


def test_non_integer_node_labels_are_kept_in_metadata(tmp_path):
    text = _fem_text(tmp_path)
    labels = " ".join(str(v) for v in NODE_IDS)
    text = text.replace(labels, " ".join(f"N{v}" for v in NODE_IDS))
    got = read_mbdyn_fem(_write_text(tmp_path / "labels.fem", text))
    assert_array_equal(got.node_ids, np.arange(1, N_NODES + 1))
    assert got.metadata["node_labels"] == [f"N{v}" for v in NODE_IDS]


# ---------------------------------------------------------------------------- frames
def test_frame_detected_attached(tmp_path):
    _fem_text(tmp_path)
    got = read_mbdyn_fem(tmp_path / "body.fem")
    assert got.reference_frame is ReferenceFrame.ATTACHED
    assert got.attach_set == "attached"
    assert_array_equal(got.node_sets["attached"], [0])
    assert got.metadata["reference_frame_source"].startswith("detected: node(s) 101 ")


def test_frame_undecidable_raises(tmp_path):
    _, _, mass = _geometry()
    phi = _raw_free_shapes(shift=0.05)  # no node at rest, clear rigid translation
    m_ff = _modal_mass(phi, mass)
    # no valid ModalData has such modes, so replace groups 8-10 of a written file by hand
    text = _fem_text(tmp_path, mean_axis_body())
    start = text.index("** RECORD GROUP 8")
    shapes = phi.reshape(N_NODES, 3, 2)
    block = "** RECORD GROUP 8, MODE SHAPES\n"
    for j in range(2):
        block += f"** MODE {j + 1}\n" + "".join(
            " ".join(f"{v:.16e}" for v in shapes[i, :, j]) + " 0 0 0\n" for i in range(N_NODES))
    m_text = "".join(" ".join(f"{v:.16e}" for v in row) + "\n" for row in m_ff)
    k_text = "".join(" ".join(f"{v:.16e}" for v in row) + "\n" for row in _stiffness(m_ff))
    text = (text[:start] + block + "** RECORD GROUP 9, MODAL MASS\n" + m_text
            + "** RECORD GROUP 10, MODAL STIFFNESS\n" + k_text
            + text[text.index("** RECORD GROUP 11"):])
    path = _write_text(tmp_path / "rigid.fem", text)
    with pytest.raises(ReadError, match=re.escape(str(path)) + r".*cannot tell the reference "
                       r"frame.*mode \d carries rigid-body content.*reference_frame="):
        read_mbdyn_fem(path)
    # stating mean axes does not make rigid-body content go away: ModalData says why
    with pytest.raises(ReadError, match=re.escape(str(path)) + r".*rigid-body content"):
        read_mbdyn_fem(path, reference_frame="mean-axis")


def test_frame_stated_with_node_labels(tmp_path):
    _fem_text(tmp_path)
    got = read_mbdyn_fem(tmp_path / "body.fem", reference_frame="attached", attach_set=[101])
    assert got.attach_set == "attach"
    assert_array_equal(got.node_sets["attach"], [0])
    assert got.metadata["reference_frame_source"].startswith("stated by caller")
    named = read_mbdyn_fem(tmp_path / "body.fem", reference_frame="attached",
                           attach_set="attached")
    assert named.metadata["reference_frame_source"] == "stated by caller"


def test_frame_stated_attached_on_a_moving_node_is_rejected(tmp_path):
    _fem_text(tmp_path)
    path = tmp_path / "body.fem"
    with pytest.raises(ReadError, match=re.escape(str(path)) + r".*attached.*moves node 102"):
        read_mbdyn_fem(path, reference_frame="attached", attach_set=[102])


def test_frame_arguments_are_checked(tmp_path):
    _fem_text(tmp_path)
    path = tmp_path / "body.fem"
    with pytest.raises(ValidationError, match="reference_frame 'floating' is not one of"):
        read_mbdyn_fem(path, reference_frame="floating")
    with pytest.raises(ValidationError, match="attach_set was given without reference_frame"):
        read_mbdyn_fem(path, attach_set="attached")
    with pytest.raises(ReadError, match=r"attach_set names node label\(s\) \[999\]"):
        read_mbdyn_fem(path, reference_frame="attached", attach_set=[999])
    with pytest.raises(ReadError, match=r"attach_set 'tip' is not a node set.*'all'"):
        read_mbdyn_fem(path, reference_frame="attached", attach_set="tip")


# ---------------------------------------------------------------------------- bad input
def test_missing_file():
    with pytest.raises(ReadError, match=r"nowhere\.fem.*does not exist"):
        read_mbdyn_fem("nowhere.fem")


def test_not_an_mbdyn_file(tmp_path):
    path = _write_text(tmp_path / "x.fem", "hello\n1 2 3\n")
    with pytest.raises(ReadError, match=re.escape(str(path)) + r".*RECORD GROUP 1"):
        read_mbdyn_fem(path)


def test_missing_required_group(tmp_path):
    text = _fem_text(tmp_path)
    start = text.index("** RECORD GROUP 9,")
    text = text[:start] + text[text.index("** RECORD GROUP 10,"):]
    path = _write_text(tmp_path / "no9.fem", text)
    with pytest.raises(ReadError, match=re.escape(str(path)) +
                       r".*RECORD GROUP\(s\) 9 \(MODAL MASS MATRIX\) missing"):
        read_mbdyn_fem(path)


def test_missing_lumped_mass_group(tmp_path):
    text = _fem_text(tmp_path)
    start = text.index("** RECORD GROUP 11,")
    text = text[:start] + text[text.index("** RECORD GROUP 12,"):]
    path = _write_text(tmp_path / "no11.fem", text)
    with pytest.raises(ReadError, match=re.escape(str(path)) + r".*RECORD GROUP 11 .*missing"):
        read_mbdyn_fem(path)


def test_bad_number_names_line_and_value(tmp_path):
    text = _fem_text(tmp_path)
    lines = text.splitlines()
    target = _line_of(text, "RECORD GROUP 6") + 3  # third Y coordinate
    lines[target - 1] = "1.2.3"
    path = _write_text(tmp_path / "bad.fem", "\n".join(lines) + "\n")
    with pytest.raises(ReadError, match=re.escape(str(path)) + f", line {target}: RECORD "
                       r"GROUP 6 .*'1\.2\.3' is not a number"):
        read_mbdyn_fem(path)


def test_non_finite_value_is_rejected(tmp_path):
    text = _fem_text(tmp_path)
    lines = text.splitlines()
    target = _line_of(text, "RECORD GROUP 5") + 2
    lines[target - 1] = "nan"
    path = _write_text(tmp_path / "nan.fem", "\n".join(lines) + "\n")
    with pytest.raises(ReadError, match=f"line {target}: RECORD GROUP 5 .*'nan' is not finite"):
        read_mbdyn_fem(path)


def test_value_count_mismatch(tmp_path):
    text = _fem_text(tmp_path)
    lines = text.splitlines()
    del lines[_line_of(text, "RECORD GROUP 5")]  # first X coordinate
    path = _write_text(tmp_path / "short.fem", "\n".join(lines) + "\n")
    with pytest.raises(ReadError, match=re.escape(str(path)) + r": RECORD GROUP 5 \(NODAL X "
                       r"COORDINATES, line \d+\) holds 7 value\(s\), expected 8"):
        read_mbdyn_fem(path)


def test_extra_values_name_the_first_extra_line(tmp_path):
    text = _fem_text(tmp_path)
    line = _line_of(text, "RECORD GROUP 10") + 3
    lines = text.splitlines()
    lines.insert(line - 1, "7.0")
    path = _write_text(tmp_path / "long.fem", "\n".join(lines) + "\n")
    with pytest.raises(ReadError, match=r"RECORD GROUP 10 .*holds 5 value\(s\), expected 4.*"
                       rf"first extra value is '[^']+' at line {line}"):
        read_mbdyn_fem(path)


def test_bad_header(tmp_path):
    text = _fem_text(tmp_path).replace(f"REV0 {N_NODES} 2", "REV0 eight 2")
    path = _write_text(tmp_path / "hdr.fem", text)
    line = _line_of(text, "REV0")
    with pytest.raises(ReadError, match=re.escape(str(path)) + f", line {line}: header field "
                       "NNODES is 'eight'"):
        read_mbdyn_fem(path)
    text = _fem_text(tmp_path).replace(f"REV0 {N_NODES} 2 0 0 0", f"REV0 {N_NODES} 2 0 0")
    path = _write_text(tmp_path / "hdr5.fem", text)
    with pytest.raises(ReadError, match=r"RECORD GROUP 1 .*holds 5 value\(s\).*expected 6"):
        read_mbdyn_fem(path)
    text = _fem_text(tmp_path).replace(f"REV0 {N_NODES} 2 0 0 0", f"REV0 {N_NODES} 2 0 0 2")
    path = _write_text(tmp_path / "hdr0.fem", text)
    with pytest.raises(ReadError, match=r"NMODES = .* = 0; need at least one mode"):
        read_mbdyn_fem(path)


def test_node_list_length_must_match_header(tmp_path):
    text = _fem_text(tmp_path).replace(" 108\n", "\n", 1)
    path = _write_text(tmp_path / "nodes.fem", text)
    with pytest.raises(ReadError, match=re.escape(str(path)) + r": RECORD GROUP 2 .*lists 7 "
                       r"node label\(s\), but the header says NNODES = 8"):
        read_mbdyn_fem(path)


def test_duplicate_node_label(tmp_path):
    text = _fem_text(tmp_path).replace(" 108\n", " 107\n", 1)
    path = _write_text(tmp_path / "dup.fem", text)
    with pytest.raises(ReadError, match=r"RECORD GROUP 2 .*node label 107 appears more than"):
        read_mbdyn_fem(path)


def test_duplicate_and_misplaced_groups(tmp_path):
    text = _fem_text(tmp_path)
    g5 = text[text.index("** RECORD GROUP 5,"):text.index("** RECORD GROUP 6,")]
    path = _write_text(tmp_path / "twice.fem", text.replace("** END OF FILE", g5))
    with pytest.raises(ReadError, match=r"line \d+: RECORD GROUP 5 appears twice \(first at "
                       r"line \d+\)"):
        read_mbdyn_fem(path)
    path = _write_text(tmp_path / "order.fem", "** RECORD GROUP 2, NODES\n1 2\n" + text)
    with pytest.raises(ReadError, match=r"line 1: RECORD GROUP 2 comes before RECORD GROUP 1"):
        read_mbdyn_fem(path)
    path = _write_text(tmp_path / "num.fem", text.replace("RECORD GROUP 7,", "RECORD GROUP x,"))
    with pytest.raises(ReadError, match=r"line \d+: cannot read the RECORD GROUP number 'x'"):
        read_mbdyn_fem(path)


def test_anisotropic_lumped_mass_is_rejected(tmp_path):
    text = _fem_text(tmp_path)
    line = _line_of(text, "RECORD GROUP 11") + 3  # third node, label 103
    lines = text.splitlines()
    values = lines[line - 1].split()
    values[1] = "7.0"
    lines[line - 1] = " ".join(values)
    path = _write_text(tmp_path / "aniso.fem", "\n".join(lines) + "\n")
    with pytest.raises(ReadError, match=re.escape(str(path)) + f", line {line}: RECORD GROUP "
                       r"11: node 103 has translational lumped masses 1\.5, 7, 1\.5.*"
                       r"anisotropic lumped mass is not supported"):
        read_mbdyn_fem(path)


def test_inconsistent_modal_mass_names_the_file(tmp_path):
    text = _fem_text(tmp_path)
    start = text.index("RECORD GROUP 9")
    end = text.index("** RECORD GROUP 10")
    block = text[start:end].split("\n", 1)
    scaled = "\n".join(" ".join(f"{10 * float(v):.16e}" for v in row.split())
                       for row in block[1].splitlines() if not row.startswith("**"))
    text = text[:start] + block[0] + "\n" + scaled + "\n**\n" + text[end:]
    path = _write_text(tmp_path / "mff.fem", text)
    with pytest.raises(ReadError, match=re.escape(str(path)) + r": ModalData\.M_ff\[0,0\] = .* but "
                       r"phiᵀ·mass·phi gives"):
        read_mbdyn_fem(path)


def test_all_zero_shapes(tmp_path):
    text = _fem_text(tmp_path)
    start = text.index("** RECORD GROUP 8")
    end = text.index("** RECORD GROUP 9")
    zeros = "".join(f"** mode {j}\n" + "0 0 0 0 0 0\n" * N_NODES for j in (1, 2))
    text = text[:start] + "** RECORD GROUP 8, MODES\n" + zeros + text[end:]
    path = _write_text(tmp_path / "zero.fem", text)
    with pytest.raises(ReadError, match=re.escape(str(path)) + r": every mode shape is zero"):
        read_mbdyn_fem(path)


def test_unknown_units_name_the_options(tmp_path):
    _fem_text(tmp_path)
    with pytest.raises(ValidationError, match="units 'furlong' is not a known unit system"):
        read_mbdyn_fem(tmp_path / "body.fem", units="furlong")


def test_writer_needs_lumped_mass(tmp_path):
    body = clamped_body()
    import scipy.sparse as sp

    _, _, mass = _geometry()
    coupled = sp.lil_matrix(sp.diags(np.repeat(mass, 3)))
    coupled[3, 6] = coupled[6, 3] = 0.01  # a consistent-mass coupling between two nodes
    phi = body.phi
    consistent = ModalData(nodes=body.nodes, phi=phi, M_ff=phi.T @ (coupled @ phi),
                           K_ff=body.K_ff, mass=coupled.tocsr(), reference_frame="attached",
                           attach_set="base", node_sets={"base": [0]})
    with pytest.raises(ValidationError, match=r"out\.fem.*consistent.*mass matrix.*lumped"):
        write_mbdyn_fem(consistent, tmp_path / "out.fem")


def test_point_masses_with_rotational_shapes_round_trip(tmp_path):
    """Rotational shapes but no rotary inertia (all J = 0, as femgen often writes): the
    mass stays N point masses, so modes with rotary inertia in M_ff are not rejected."""
    from flexmbs.modal.shipped import seed_tip_beam

    body = seed_tip_beam()
    write_mbdyn_fem(body, tmp_path / "seed.fem")
    back = read_mbdyn_fem(tmp_path / "seed.fem", reference_frame="attached",
                          attach_set=[1])
    assert back.is_lumped
    assert_allclose(back.M_ff, body.M_ff, rtol=1e-15)
    assert_allclose(back.psi, body.psi, rtol=1e-15)
