"""Geometric stiffening of FE data read from files, from their solid elements
(flexmbs.modal.fe.solid_elements; docs/theory_stiffening.md).

Independent checks:
* the element geometric stiffness against the closed form for a uniform stress: for a
  linear test field v = G r, vᵀ K_G v = V tr(G σ Gᵀ), on randomly shaped hexahedra and
  tetrahedra (hypothesis), with the element volume from the affine map;
* the whole path (Matrix Market matrices + an Abaqus .inp with *NODE, *NSET and *ELEMENT,
  TYPE=C3D8 + --material, in mm-t-s units) against the built-in hexahedral FE's own
  stiffening computation (a second implementation: regular bricks, Voigt strain matrices);
* the readers' and the stiffening's refusals, by name.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cli.main import main
from flexmbs.errors import ReadError, ValidationError
from flexmbs.modal import clamped_modes, read_modal
from flexmbs.modal.fe import solid_elements as se
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.io.fe_matrices import read_matrix_market
from flexmbs.modal.stiffening import with_stiffening
from flexmbs.modal.stress import with_stress

HEX = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], float)
TET = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
REFERENCE_VOLUME = {"hexahedron": 1.0, "tetra": 1.0 / 6.0}  # of HEX, TET above


def _matrix(seed_values, scale=1.0):
    return scale * np.asarray(seed_values, float).reshape(3, 3)


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["hexahedron", "tetra"]),
       a=st.lists(st.floats(-0.4, 0.4), min_size=9, max_size=9),
       g0=st.lists(st.floats(-1.0, 1.0), min_size=9, max_size=9),
       g=st.lists(st.floats(-1.0, 1.0), min_size=9, max_size=9),
       shift=st.lists(st.floats(-5.0, 5.0), min_size=3, max_size=3),
       size=st.floats(0.01, 3.0))
def test_element_geometric_stiffness_of_a_uniform_stress_is_the_closed_form(
        kind, a, g0, g, shift, size):
    """u = G₀ r gives the uniform stress σ = λ tr ε I + 2 μ ε (ε = sym G₀) in any
    affinely shaped element, and then vᵀ K_G v = V tr(G σ Gᵀ) for v = G r."""
    corners = HEX if kind == "hexahedron" else TET
    affine = size * (np.eye(3) + _matrix(a))                     # det > 0: |a_ij| ≤ 0.4
    nodes = corners @ affine.T + np.asarray(shift)
    conn = np.arange(len(nodes))[None, :]
    lame = se.isotropic_lame(2.0e11, 0.3)
    grad_u, grad_v = 1e-3 * _matrix(g0), _matrix(g)
    u = (nodes @ grad_u.T).ravel()
    v = (nodes @ grad_v.T).ravel()
    strain = 0.5 * (grad_u + grad_u.T)
    sigma = lame[0] * np.trace(strain) * np.eye(3) + 2.0 * lame[1] * strain
    volume = REFERENCE_VOLUME[kind] * np.linalg.det(affine)

    dndx, dvol = se.gradients(nodes, conn, kind)
    np.testing.assert_allclose(dvol.sum(), volume, rtol=1e-12)
    np.testing.assert_allclose(se.gauss_stresses(dndx, conn, u, lame)[0],
                               np.broadcast_to(sigma, (dndx.shape[1], 3, 3)),
                               rtol=1e-9, atol=1e-9 * np.abs(sigma).max())
    k_g = se.geometric_stiffness(nodes, {kind: conn}, u, lame)
    expected = volume * np.trace(grad_v @ sigma @ grad_v.T)
    np.testing.assert_allclose(v @ (k_g @ v), expected, rtol=1e-9,
                               atol=1e-9 * volume * np.abs(sigma).max() * np.abs(grad_v).max()**2)
    np.testing.assert_allclose((k_g - k_g.T).toarray(), 0.0, atol=1e-9 * abs(k_g).max())


def test_an_inverted_element_is_named():
    nodes = HEX[[4, 5, 6, 7, 0, 1, 2, 3]]  # top and bottom faces swapped: det J < 0
    with pytest.raises(ValidationError, match=r"element 17 \(hexahedron\) is inverted"):
        se.gradients(nodes, np.arange(8)[None, :], "hexahedron", labels=[17])


# ---------------------------------------------------------------- files → stiffening
BOX = dict(lx=1.0, ly=0.04, lz=0.02, nx=10, ny=2, nz=1)
STEEL = dict(E=2.1e11, nu=0.3, rho=7850.0)


def _write_inp(path, fe, *, scale=1.0, element_type="C3D8", extra=""):
    """*NODE (labels 101, 102, ...), *NSET root (the x = 0 face), *ELEMENT with each
    hexahedron's node list split over two lines."""
    labels = np.arange(fe.n_nodes) + 101
    lines = ["*HEADING", "box written for the test", "*NODE"]
    lines += [f"{n}, {float(x) * scale!r}, {float(y) * scale!r}, {float(z) * scale!r}"
              for n, (x, y, z) in zip(labels, fe.nodes, strict=True)]
    root = labels[np.isclose(fe.nodes[:, 0], 0.0)]
    lines += ["*NSET, NSET=root", ", ".join(str(v) for v in root)]
    lines += [f"*ELEMENT, TYPE={element_type}, ELSET=body"]
    for k, row in enumerate(fe.cells["hexahedron"]):
        ids = [str(v) for v in labels[row]]
        lines += [f"{k + 1}, " + ", ".join(ids[:5]) + ",", ", ".join(ids[5:])]
    path.write_text("\n".join(lines) + "\n" + extra)


def _write_matrices(folder, fe, mass_scale=1.0, stiffness_scale=1.0):
    scipy.io.mmwrite(str(folder / "M.mtx"), sp.coo_matrix(fe.mass * mass_scale),
                     symmetry="symmetric", precision=17)
    scipy.io.mmwrite(str(folder / "K.mtx"), sp.coo_matrix(fe.stiffness * stiffness_scale),
                     symmetry="symmetric", precision=17)


@pytest.fixture(scope="module")
def box():
    return box_mesh(**BOX, **STEEL)


def _reduce_box_files(box, tmp_path, modes: int, *extra):
    """The box written in mm-t-s files (coordinates in mm, M in t, K in N/mm, E in MPa:
    length 1e-3 m, mass 1e3 kg, so the stiffness unit N/mm = 1e3 N/m) and reduced by
    flexmbs reduce with ``extra`` options; the modal data read back."""
    _write_inp(tmp_path / "box.inp", box, scale=1e3)
    _write_matrices(tmp_path, box, mass_scale=1e-3, stiffness_scale=1e-3)
    out = tmp_path / "box.fmd.h5"
    assert main(["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
                 str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "box.inp"),
                 "--units", "mm-t-s", "--clamp-nodes", "root", "--modes", str(modes),
                 "--material", f"E={STEEL['E'] / 1e6!r},nu=0.3", *extra,
                 "-o", str(out)]) == 0
    return read_modal(out)


def test_stiffening_from_files_equals_the_built_in_solid(box, tmp_path):
    """The box in mm-t-s files (coordinates in mm, M in t, K in N/mm, E in MPa), reduced
    and stiffened by flexmbs reduce, against the built-in hexahedral FE's own path."""
    from_files = _reduce_box_files(box, tmp_path, 6, "--stiffening")
    built_in = with_stiffening(clamped_modes(box, "x0", 6), box)
    np.testing.assert_allclose(from_files.frequencies, built_in.frequencies, rtol=1e-8)
    assert set(from_files.stiffening) == set(built_in.stiffening)
    # modes may differ in sign: compare Φᵀ K_G Φ through the sign of each mode
    sign = np.sign(np.sum(from_files.phi * built_in.phi, axis=0))
    for case, matrix in built_in.stiffening.items():
        scale = np.abs(matrix).max() + np.abs(built_in.stiffening["ww_zz"]).max()
        np.testing.assert_allclose(sign[:, None] * from_files.stiffening[case] * sign[None],
                                   matrix, rtol=0, atol=1e-8 * scale, err_msg=case)
    assert "hexahedron" in from_files.cells and len(from_files.cells["hexahedron"]) == 20


def test_a_spun_box_is_stiffer_in_bending(box, tmp_path):
    """Physics of the result: spin about z raises the in-plane (y) bending frequency of
    the clamped box above ω₀² − Ω² (what it would be without stress stiffening)."""
    _write_inp(tmp_path / "box.inp", box)
    _write_matrices(tmp_path, box)
    fe = read_matrix_market(tmp_path / "M.mtx", tmp_path / "K.mtx", tmp_path / "box.inp",
                            material={"E": STEEL["E"], "nu": 0.3})
    data = with_stiffening(clamped_modes(fe, "root", 4), fe)
    k_w = data.stiffening["ww_zz"]
    assert np.all(np.linalg.eigvalsh(k_w + k_w.T) >= -1e-9 * np.abs(k_w).max())
    assert np.trace(k_w) > 0


def test_elements_are_read_from_the_inp_with_continuation_lines(box, tmp_path):
    _write_inp(tmp_path / "box.inp", box, extra="*ELEMENT, TYPE=B31\n900, 101, 102\n")
    _write_matrices(tmp_path, box)
    fe = read_matrix_market(tmp_path / "M.mtx", tmp_path / "K.mtx", tmp_path / "box.inp")
    np.testing.assert_array_equal(fe.cells["hexahedron"], box.cells["hexahedron"])
    assert fe.metadata["skipped_elements"] == {"B31": 1}
    with pytest.raises(ValidationError, match=r"elements that were not read \(\{'B31': 1\}\)"):
        with_stiffening(clamped_modes(fe, "root", 2), fe)


def _first_element(new):
    """Replace the first element's leading 'label, first node' by ``new``."""
    return lambda text: text.replace("\n1, 101, ", f"\n{new}, ", 1)


@pytest.mark.parametrize("edit, error, message", [
    (_first_element("1, 9999"), ReadError,
     r"box.inp, line \d+: element 1 uses node 9999, which no \*NODE line defines"),
    (lambda text: text.replace("*ELEMENT, TYPE=C3D8, ELSET=body", "*ELEMENT, ELSET=body"),
     ReadError, r"\*ELEMENT without TYPE"),
    (_first_element("1, 101, 555"), ReadError,
     r"element 1 of type C3D8 lists 9 nodes; it has 8"),
    (_first_element("1, x"), ReadError, r"cannot read \*ELEMENT, TYPE=C3D8 data line"),
])
def test_bad_element_blocks_are_refused_with_the_line(box, tmp_path, edit, error, message):
    _write_inp(tmp_path / "box.inp", box)
    path = tmp_path / "box.inp"
    path.write_text(edit(path.read_text()))
    _write_matrices(tmp_path, box)
    with pytest.raises(error, match=message):
        read_matrix_market(tmp_path / "M.mtx", tmp_path / "K.mtx", path)


def test_stiffening_without_elements_or_material_says_what_is_missing(box, tmp_path):
    _write_inp(tmp_path / "box.inp", box)
    _write_matrices(tmp_path, box)
    csv = tmp_path / "nodes.csv"
    csv.write_text("".join(f"{k + 1},{float(x)!r},{float(y)!r},{float(z)!r}\n" for k, (x, y, z)
                           in enumerate(box.nodes)))
    bare = read_matrix_market(tmp_path / "M.mtx", tmp_path / "K.mtx", csv)
    x0 = np.flatnonzero(np.isclose(box.nodes[:, 0], 0.0)) + 1
    with pytest.raises(ValidationError, match="no element information"):
        with_stiffening(clamped_modes(bare, x0, 2), bare)
    no_material = read_matrix_market(tmp_path / "M.mtx", tmp_path / "K.mtx",
                                     tmp_path / "box.inp")
    with pytest.raises(ValidationError, match="has elements but no material"):
        with_stiffening(clamped_modes(no_material, "root", 2), no_material)
    with pytest.raises(ValidationError, match=r"material nu must lie in \(-1, 0.5\); got 0.5"):
        read_matrix_market(tmp_path / "M.mtx", tmp_path / "K.mtx", tmp_path / "box.inp",
                           material={"E": 1e9, "nu": 0.5})


@pytest.mark.parametrize("material, message", [
    ("E=2e11", "lacks nu"), ("E=2e11,nu=abc", "nu must be a number; got 'abc'"),
    ("E=2e11,poisson=0.3", "cannot read 'poisson=0.3'")])
def test_the_material_option_is_checked(box, tmp_path, capsys, material, message):
    _write_inp(tmp_path / "box.inp", box)
    _write_matrices(tmp_path, box)
    code = main(["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
                 str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "box.inp"),
                 "--clamp-nodes", "root", "--modes", "2", "--material", material,
                 "--stiffening", "-o", str(tmp_path / "out.fmd.h5")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "out.fmd.h5").exists()


def test_stress_modes_from_files_equal_the_built_in_solid(box, tmp_path):
    """flexmbs reduce --stress on the box's C3D8 elements from an .inp (mm-t-s): the same
    nodal stresses per mode as the built-in hexahedral FE's own path."""
    from_files = _reduce_box_files(box, tmp_path, 4, "--stress")
    built_in = with_stress(clamped_modes(box, "x0", 4), box)
    sign = np.sign(np.sum(from_files.phi * built_in.phi, axis=0))
    expected = built_in.modal_fields["stress"]
    np.testing.assert_allclose(from_files.modal_fields["stress"] * sign, expected,
                               atol=1e-7 * np.abs(expected).max())
