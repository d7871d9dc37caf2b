"""Static modal derivatives and the nonlinear elastic tensors of the enriched basis
(flexmbs.modal.derivatives, flexmbs.modal.fe.nonlinear_energy;
docs/theory_modal_derivatives.md).

Independent checks:
* a beam's derivative of two bending modes is the foreshortening they drag along: its
  tip moves by −∫ v_i′ v_j′ dx, the integral of the modes' Hermite slopes written here;
* the beam's cubic energy at an axial displacement is the element geometric stiffness of
  its axial force (flexmbs.modal.fe.beam_geometric, the stiffening's code);
* for the hexahedral solid, the tensors are the St Venant–Kirchhoff energy written here
  from F = I + ∇u, E = ½(FᵀF − I), W = ½λ(tr E)² + μ E:E (hypothesis, random
  coordinates; the polynomial identity leaves only round-off), and the derivative loads
  are the mixed second difference of that energy's nodal force (exact for a cubic);
* the polynomial force is the gradient of its energy and its tangent the gradient of the
  force (central differences, hypothesis);
* the derivatives of a truncated set are those computed for it; the native file keeps
  them, and files without them read as before; the CLI's reduce of FE files with
  elements gives the built-in path's tensors.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cli.main import main
from flexmbs.modal import clamped_modes, read_modal
from flexmbs.modal.derivative_data import ElasticPolynomial
from flexmbs.modal.derivatives import (
    derivative_loads,
    energy_tensors,
    enriched_data,
    with_modal_derivatives,
)
from flexmbs.modal.fe import solid_elements
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.nonlinear_energy import strain_points
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.io.native import read_native, write_native
from flexmbs.modal.stiffening import beam_geometric_matrix, mode_vectors

SECTION = BeamSection(A=4e-4, Iy=2e-5, Iz=2e-7, J=4e-7)
MATERIAL = Material(E=7e10, nu=0.3, rho=3000.0)
BOX = dict(lx=0.4, ly=0.05, lz=0.03, nx=4, ny=1, nz=1, E=2.1e11, nu=0.3, rho=7850.0)


@pytest.fixture(scope="module")
def beam():
    fe = straight_beam(2.0, 8, SECTION, MATERIAL)
    return fe, clamped_modes(fe, "root", 4)


@pytest.fixture(scope="module")
def box():
    fe = box_mesh(**BOX)
    return fe, clamped_modes(fe, "x0", 3)


@pytest.fixture(scope="module")
def box_derivatives(box):
    fe, data = box
    return with_modal_derivatives(data, fe).derivatives


def _hermite_slopes(fe, mode, s):
    """dv/dx (elements, stations) of local-y deflection v of a mode (6N,) of the straight
    beam along x: the cubic Hermite slope from the nodal v and rz = dv/dx."""
    le = fe.metadata["element_length"]
    nodal = mode.reshape(-1, 6)
    v, t = nodal[:, 1], nodal[:, 5]
    h = np.array([(6 * s**2 - 6 * s) / le, 3 * s**2 - 4 * s + 1,
                  (6 - 6 * s) * s / le, 3 * s**2 - 2 * s])  # (4, stations)
    dofs = np.stack([v[:-1], t[:-1], v[1:], t[1:]], axis=1)  # (E, 4)
    return dofs @ h


def test_bending_derivatives_are_the_foreshortening(beam):
    """θ_ij of two in-plane bending modes is axial, its tip moving by −∫ v_i′v_j′ dx."""
    fe, data = beam
    derivs = with_modal_derivatives(data, fe).derivatives
    modes = mode_vectors(fe, data)
    trans = modes.reshape(fe.n_nodes, 6, -1)[:, :3]
    in_plane = [j for j in range(data.n_modes)  # peak translation 1 m, along y
                if np.abs(trans[:, 1, j]).max() > 0.5]
    assert len(in_plane) >= 2
    x, w = np.polynomial.legendre.leggauss(4)
    s, w = 0.5 * (x + 1), 0.5 * w * fe.metadata["element_length"]
    for k, (i, j) in enumerate(derivs.pairs):
        if i in in_plane and j in in_plane:
            theta = derivs.theta[:, k].reshape(-1, 3)
            integral = np.sum((_hermite_slopes(fe, modes[:, i], s)
                               * _hermite_slopes(fe, modes[:, j], s)) @ w)
            assert theta[-1, 0] == pytest.approx(-integral, rel=1e-10, abs=1e-14)
            np.testing.assert_allclose(theta[:, 1:], 0.0, atol=1e-7 * abs(integral))


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
def test_the_beam_cubic_energy_is_the_geometric_stiffness(theory):
    """u_cᵀ ∂³U(φ_i, φ_j, ·) = φ_iᵀ K_G(u_c) φ_j for an axial displacement u_c and the
    bending and torsion modes: the element geometric stiffness of the axial force, with
    the element's own transverse interpolation (flexmbs.modal.fe.beam_geometric)."""
    fe = straight_beam(0.5, 8, SECTION, MATERIAL, theory=theory)
    data = clamped_modes(fe, "root", 4)
    modes = mode_vectors(fe, data)
    rng = np.random.default_rng(3)
    u_c = np.zeros(fe.n_dof)
    u_c[6::6] = np.cumsum(rng.normal(size=fe.n_nodes - 1)) * 1e-3  # root held
    pairs = [(i, j) for i in range(data.n_modes) for j in range(i, data.n_modes)]
    loads = derivative_loads(strain_points(fe), modes, pairs)
    k_g = beam_geometric_matrix(fe, u_c)
    for col, (i, j) in enumerate(pairs):
        expected = modes[:, i] @ (k_g @ modes[:, j])
        assert u_c @ loads[:, col] == pytest.approx(expected, rel=1e-10,
                                                    abs=1e-12 * np.abs(k_g).max())


def _hermite(fe, nodal_v, nodal_t, s):
    """(slope, curvature) (elements, stations) of a cubic Hermite deflection with nodal
    values ``nodal_v`` and slopes ``nodal_t`` (N,)."""
    le = fe.metadata["element_length"]
    slope = np.array([(6 * s**2 - 6 * s) / le, 3 * s**2 - 4 * s + 1,
                      (6 - 6 * s) * s / le, 3 * s**2 - 2 * s])
    curv = np.array([(12 * s - 6) / le**2, (6 * s - 4) / le, (6 - 12 * s) / le**2,
                     (6 * s - 2) / le])
    dofs = np.stack([nodal_v[:-1], nodal_t[:-1], nodal_v[1:], nodal_t[1:]], axis=1)
    return dofs @ slope, dofs @ curv


def _fields(fe, rng):
    """Three FE vectors: a random deflection along y, one along z (Hermite, slopes
    rz = dv/dx, ry = −dw/dx) and a uniform twist of 1 rad."""
    n = fe.n_nodes
    v, w = (np.zeros((n, 6)) for _ in range(2))
    v[:, 1], v[:, 5] = rng.normal(size=n) * 0.02, rng.normal(size=n) * 0.05
    w[:, 2], w[:, 4] = rng.normal(size=n) * 0.02, rng.normal(size=n) * 0.05
    twist = np.zeros((n, 6))
    twist[:, 3] = 1.0
    return v, w, twist


@pytest.mark.parametrize("iy", [SECTION.Iz, SECTION.Iy])
def test_beam_bending_energy_is_the_curvature_of_the_centre_line(iy):
    """Equal bending stiffnesses: the quartic energy of deflections v, w is
    Σ_e ½EA L_e (mean ½(v′² + w′²))² + ∫ ½EI (v′v″ + w′w″)² dx (the membrane's, and
    ½EI|r″|² of an inextensible centre line); a uniform twist θ turns the section under
    the curvature: ½θ²(EI_y − EI_z)∫(v″² − w″²) dx and the cubic (EI_z − EI_y)θ∫v″w″ dx
    (a rotated section's ½EI_z κ₃² + ½EI_y κ₂², expanded)."""
    section = BeamSection(A=SECTION.A, Iy=iy, Iz=SECTION.Iz, J=SECTION.J)
    fe = straight_beam(2.0, 8, section, MATERIAL)
    v, w, twist = _fields(fe, np.random.default_rng(7))
    basis = np.column_stack([v.ravel(), w.ravel(), twist.ravel()])
    poly = ElasticPolynomial(*energy_tensors(strain_points(fe), basis))
    x, g = np.polynomial.legendre.leggauss(5)
    s, g = 0.5 * (x + 1), 0.5 * g * fe.metadata["element_length"]
    vp, vpp = _hermite(fe, v[:, 1], v[:, 5], s)
    wp, wpp = _hermite(fe, w[:, 2], -w[:, 4], s)
    ea, ei_z, ei_y = MATERIAL.E * section.A, MATERIAL.E * section.Iz, MATERIAL.E * iy
    le = fe.metadata["element_length"]
    membrane = np.sum(0.5 * ea * le * ((0.5 * (vp**2 + wp**2)) @ g / le) ** 2)
    if iy == SECTION.Iz:
        bending = np.sum((0.5 * ei_z * (vp * vpp + wp * wpp) ** 2) @ g)
        assert poly.energy([1.0, 1.0, 0.0]) == pytest.approx(membrane + bending, rel=1e-10)
    theta = 0.1
    only_v = (poly.energy([1.0, 0.0, theta]) - poly.energy([1.0, 0.0, 0.0])
              - poly.energy([0.0, 0.0, theta]))
    assert only_v == pytest.approx(0.5 * theta**2 * (ei_y - ei_z) * np.sum(vpp**2 @ g),
                                   rel=1e-10, abs=1e-12 * ei_z * np.sum(vpp**2 @ g))
    coupling = poly.cubic[0, 1, 2]
    assert coupling == pytest.approx((ei_z - ei_y) * np.sum((vpp * wpp) @ g), rel=1e-10,
                                     abs=1e-12 * ei_z * np.sum(np.abs(vpp * wpp) @ g))


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
def test_beam_curvatures_are_the_element_s(theory):
    """The slopes and curvatures the energy reads are the element's: with the section
    rotation θ = θ₁ + ∫κ dx, the shear strain v′ − θ is constant along the element and
    ½ EI ∫κ² dx + ½ kGA L (v′ − θ)² is the element's bending energy ½ dᵀK_b d
    (flexmbs.modal.fe.beam, Przemieniecki / Friedman–Kosmatka), for random DOFs."""
    from flexmbs.modal.fe.beam import _bending_stiffness
    from flexmbs.modal.fe.nonlinear_energy import _beam_rows

    le, ei = 0.3, MATERIAL.E * SECTION.Iz
    kga = SECTION.ky * MATERIAL.G * SECTION.A
    phi = 12 * ei / (kga * le**2) if theory == "timoshenko" else 0.0
    x, g = np.polynomial.legendre.leggauss(5)
    s = 0.5 * (x + 1)
    rows = _beam_rows(le, phi, phi, s)                     # (stations, 7, 12)
    d = np.random.default_rng(5).normal(size=12)
    vp, kv = rows[:, 1] @ d, rows[:, 4] @ d
    poly = np.polynomial.polynomial
    rot = d[5] + le * poly.polyval(s, poly.polyint(poly.polyfit(s, kv, 1)))  # κ is linear
    shear = vp - rot
    np.testing.assert_allclose(shear, shear.mean(), rtol=0, atol=1e-12 * np.abs(vp).max())
    energy = 0.5 * ei * np.sum(0.5 * g * le * kv**2) + 0.5 * kga * le * shear.mean() ** 2
    dofs = d[[1, 5, 7, 11]]
    assert energy == pytest.approx(0.5 * dofs @ _bending_stiffness(ei, le, phi) @ dofs,
                                   rel=1e-12)


# ----------------------------------------------------------------------------- solids
def _stvk(fe, u):
    """(energy [J], nodal force (3N,) [N]) of the St Venant–Kirchhoff solid, written
    from the definitions at the hexahedra's Gauss points."""
    lam, mu = solid_elements.isotropic_lame(BOX["E"], BOX["nu"])
    conn = np.asarray(fe.cells["hexahedron"])
    dndx, dvol = solid_elements.gradients(fe.nodes, conn, "hexahedron")
    u_e = u.reshape(-1, 3)[conn]                              # (E, a, 3)
    grad = np.einsum("eai,egaj->egij", u_e, dndx)             # ∂u_i/∂x_j
    f = np.eye(3) + grad
    strain = 0.5 * (np.einsum("egki,egkj->egij", f, f) - np.eye(3))
    tr = np.trace(strain, axis1=2, axis2=3)
    stress = lam * tr[..., None, None] * np.eye(3) + 2 * mu * strain   # 2nd Piola–Kirchhoff
    energy = np.sum(dvol * (0.5 * lam * tr**2 + mu * np.einsum("egij,egij->eg", strain,
                                                                   strain)))
    first_pk = np.einsum("egik,egkj->egij", f, stress)
    nodal = np.einsum("eg,egij,egaj->eai", dvol, first_pk, dndx)
    force = np.zeros((fe.n_nodes, 3))
    np.add.at(force, conn, nodal)
    return energy, force.ravel()


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_solid_tensors_are_the_st_venant_kirchhoff_energy_and_force(box, box_derivatives, seed):
    fe, data = box
    derivs = box_derivatives
    basis = np.hstack([mode_vectors(fe, data), derivs.theta])
    eta = np.random.default_rng(seed).normal(size=basis.shape[1]) * 2e-3
    u = basis @ eta
    energy, force = _stvk(fe, u)
    elastic = ElasticPolynomial(derivs.cubic, derivs.quartic)
    poly = elastic.energy(eta)
    assert 0.5 * eta @ derivs.stiffness @ eta + poly == pytest.approx(energy, rel=1e-9)
    assert abs(poly) > 1e-6 * energy  # the check sees the nonlinear part
    reduced = basis.T @ force - derivs.stiffness @ eta  # the force beyond K η
    np.testing.assert_allclose(elastic.force(eta), reduced, rtol=0,
                               atol=1e-7 * np.abs(reduced).max())


def test_solid_derivative_loads_are_the_tangent_change(box):
    """∂³U(φ_i, φ_j, ·) = (∂K/∂q_j) φ_i: the mixed second difference of the nodal force,
    exact for a cubic force (the linear and cubic parts cancel)."""
    fe, data = box
    modes = mode_vectors(fe, data)
    pairs = [(0, 0), (0, 1), (1, 2)]
    loads = derivative_loads(strain_points(fe), modes, pairs)
    eps = 1e-4 / np.abs(modes).max()
    for col, (i, j) in enumerate(pairs):
        a, b = eps * modes[:, i], eps * modes[:, j]
        mixed = (_stvk(fe, a + b)[1] - _stvk(fe, a - b)[1] - _stvk(fe, b - a)[1]
                 + _stvk(fe, -a - b)[1]) / (4 * eps**2)
        np.testing.assert_allclose(loads[:, col], mixed, rtol=0,
                                   atol=1e-6 * np.abs(mixed).max())


# ----------------------------------------------------------------------------- polynomial
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_polynomial_force_and_tangent_are_derivatives(beam, seed):
    fe, data = beam
    body_data, poly = enriched_data(with_modal_derivatives(data, fe))
    rng = np.random.default_rng(seed)
    eta = rng.normal(size=poly.size) * 0.05
    h = 1e-6
    eye = np.eye(poly.size)
    grad = np.array([(poly.energy(eta + h * e) - poly.energy(eta - h * e)) / (2 * h)
                     for e in eye])
    force = poly.force(eta)
    np.testing.assert_allclose(force, grad, rtol=0, atol=1e-6 * np.abs(force).max())
    jac = np.column_stack([(poly.force(eta + h * e) - poly.force(eta - h * e)) / (2 * h)
                           for e in eye])
    tangent = poly.tangent(eta)
    np.testing.assert_allclose(tangent, jac, rtol=0, atol=1e-6 * np.abs(tangent).max())
    np.testing.assert_allclose(tangent, tangent.T, rtol=0, atol=1e-10 * np.abs(tangent).max())
    assert body_data.n_modes == poly.size


def test_the_enriched_basis_is_mass_orthogonal_and_drops_dependent_ones(beam):
    """The derivative coordinates are mass-orthogonal to the modes and to each other;
    derivatives that the others span add no coordinate."""
    fe, data = beam
    body_data, _ = enriched_data(with_modal_derivatives(data, fe))
    n = data.n_modes
    m_ff = body_data.M_ff
    scale = np.sqrt(np.outer(np.diag(m_ff), np.diag(m_ff)))
    off = (m_ff - np.diag(np.diag(m_ff))) / scale
    assert np.abs(off[:n, n:]).max() < 1e-9 and np.abs(off[n:, n:]).max() < 1e-9
    pairs = n * (n + 1) // 2
    assert n < body_data.n_modes < n + pairs
    assert [k.value for k in body_data.mode_kinds[n:]] == ["derivative"] * (
        body_data.n_modes - n)


# ----------------------------------------------------------------------------- data
def test_truncated_derivatives_are_those_of_the_truncated_modes(beam):
    fe, data = beam
    full = with_modal_derivatives(data, fe)
    kept = full.select([0, 2])
    fresh = with_modal_derivatives(data.select([0, 2]), fe)
    assert kept.derivatives.pairs.tolist() == fresh.derivatives.pairs.tolist()
    for key in ("theta", "stiffness", "mass", "cubic", "quartic"):
        a, b = getattr(kept.derivatives, key), getattr(fresh.derivatives, key)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * np.abs(b).max(), err_msg=key)


def test_native_files_keep_the_derivatives(beam, tmp_path):
    fe, data = beam
    full = with_modal_derivatives(data, fe)
    write_native(full, tmp_path / "d.fmd.h5")
    back = read_native(tmp_path / "d.fmd.h5")
    for key in ("pairs", "theta", "theta_psi", "stiffness", "mass", "cubic", "quartic"):
        np.testing.assert_array_equal(getattr(back.derivatives, key),
                                      getattr(full.derivatives, key), err_msg=key)
    assert back.derivatives.energy == full.derivatives.energy
    write_native(data, tmp_path / "plain.fmd.h5")  # a file without the group
    assert read_native(tmp_path / "plain.fmd.h5").derivatives is None


def test_shipped_files_read_without_derivatives():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "modal_data" / "kane_beam.fmd.h5"
    assert read_modal(path).derivatives is None


def test_cli_reduce_of_fe_files_gives_the_built_in_tensors(box, tmp_path, capsys):
    """The box written as Matrix Market matrices and an .inp with C3D8 elements, reduced
    with --modal-derivatives and --material, against the built-in box's own path (modes
    compared through their signs: θ_ij carries sign(φ_i) sign(φ_j))."""
    import scipy.io
    import scipy.sparse as sp
    from test_stiffening_elements import _write_inp

    fe, _ = box
    _write_inp(tmp_path / "box.inp", fe)
    for name, mat in (("M", fe.mass), ("K", fe.stiffness)):
        scipy.io.mmwrite(str(tmp_path / f"{name}.mtx"), sp.coo_matrix(mat),
                         symmetry="symmetric", precision=17)
    out = tmp_path / "box.fmd.h5"
    assert main(["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
                 str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "box.inp"),
                 "--clamp-nodes", "root", "--modes", "3", "--modal-derivatives",
                 "--material", f"E={BOX['E']!r},nu=0.3", "-o", str(out)]) == 0
    assert "modal derivatives: 6" in capsys.readouterr().out
    files = read_modal(out).derivatives
    built_in = with_modal_derivatives(clamped_modes(fe, "x0", 3), fe).derivatives
    sign = np.sign(np.sum(read_modal(out).phi * clamped_modes(fe, "x0", 3).phi, axis=0))
    s = np.concatenate([sign, [sign[i] * sign[j] for i, j in built_in.pairs]])
    for key, tensor in (("cubic", built_in.cubic), ("quartic", built_in.quartic)):
        signs = s
        for _ in range(tensor.ndim - 1):
            signs = np.multiply.outer(signs, s)
        np.testing.assert_allclose(getattr(files, key) * signs, tensor, rtol=0,
                                   atol=1e-7 * np.abs(tensor).max(), err_msg=key)


def test_cli_beam_writes_derivatives(tmp_path, capsys):
    out = tmp_path / "b.fmd.h5"
    assert main(["beam", "--length", "1", "--elements", "6", "--section", "rectangle",
                 "--width", "0.02", "--height", "0.01", "--modes", "3",
                 "--modal-derivatives", "--no-stiffening", "-o", str(out)]) == 0
    data = read_modal(out)
    assert data.derivatives.pairs.shape == (6, 2)
    assert main(["modes", str(out)]) == 0
    assert "modal derivatives: 6" in capsys.readouterr().out


def test_missing_elements_are_named(tmp_path):
    """FE matrices without elements cannot give derivatives: the error says so."""
    from flexmbs.errors import ValidationError
    from flexmbs.modal.femodel import FEModel

    fe, data = box_mesh(**BOX), None
    bare = FEModel(nodes=fe.nodes, mass=fe.mass, stiffness=fe.stiffness, dofs_per_node=3,
                   node_sets=fe.node_sets, metadata={"source": "bare.mtx"})
    data = clamped_modes(bare, "x0", 2)
    with pytest.raises(ValidationError, match="modal derivatives: no element information"):
        with_modal_derivatives(data, bare)
