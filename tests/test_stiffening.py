"""Geometric-stiffening data of reduced bodies (flexmbs.modal.stiffening,
docs/theory_stiffening.md).

Checked against independent results: the published natural frequencies of a rotating
uniform cantilever (flapwise, Hodges and Rutkowski 1981; Wright et al. 1982), Euler's and
Engesser's buckling loads of a clamped–free column (the element geometric stiffness),
the resultant of the consistent inertial load (a conservation law), and structural
identities of the unit load cases of a straight beam.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cli.main import main as cli_main
from flexmbs.errors import ShapeError, ValidationError
from flexmbs.modal.fe.beam import BeamSection, Material, beam_element_matrices, straight_beam
from flexmbs.modal.fe.beam_geometric import beam_geometric_stiffness
from flexmbs.modal.io.native import read_native, write_native
from flexmbs.modal.reduction import clamped_modes, free_free_modes
from flexmbs.modal.stiffening import (
    STIFFENING_CASES,
    UNIT_FIELDS,
    beam_nodal_field,
    effective_stiffness,
    with_stiffening,
)

# Kane et al.'s beam, flapwise bending (about local y) the softest by far
E, RHO, AREA, INERTIA, LENGTH = 7e10, 3000.0, 4e-4, 2e-7, 10.0
SECTION = BeamSection(A=AREA, Iy=INERTIA, Iz=100 * INERTIA, J=200 * INERTIA)
MATERIAL = Material(E=E, nu=0.3, rho=RHO)
#: Hodges–Rutkowski: first flapwise frequency / √(EI/ρAL⁴) at λ = Ω √(ρAL⁴/EI)
PUBLISHED = {0: 3.5160, 1: 3.6816, 2: 4.1373, 5: 6.4495, 10: 11.2023}


@pytest.fixture(scope="module")
def beam():
    fe = straight_beam(LENGTH, 40, SECTION, MATERIAL)
    return fe, with_stiffening(clamped_modes(fe, "root", 10), fe)


def flapwise(data, n):
    """Indices of the first n coordinates that bend in z (flapwise)."""
    phi = np.asarray(data.phi).reshape(-1, 3, data.n_modes)
    return [j for j in range(data.n_modes)
            if np.abs(phi[:, 2, j]).max() > 10 * np.abs(phi[:, 1, j]).max()][:n]


def first_flapwise_frequency(data, n, lam):
    """ω₁ / √(EI/ρAL⁴) of (K_ff + Ω² K_ωzωz, M_ff) on n flapwise modes, spin about z."""
    unit = np.sqrt(E * INERTIA / (RHO * AREA * LENGTH**4))
    keep = np.ix_(flapwise(data, n), flapwise(data, n))
    k = effective_stiffness(data.K_ff, data.stiffening, omega=(0.0, 0.0, lam * unit))
    return np.sqrt(sla.eigh(k[keep], data.M_ff[keep], eigvals_only=True)[0]) / unit


@pytest.mark.parametrize("lam", sorted(PUBLISHED))
def test_rotating_cantilever_frequencies_match_the_published_values(beam, lam):
    """Six flapwise modes: within 0.1 % of the published first frequency at λ ≤ 10."""
    _, data = beam
    value = first_flapwise_frequency(data, 6, lam)
    assert value == pytest.approx(PUBLISHED[lam], rel=1e-3)


def test_frequencies_converge_with_the_number_of_modes(beam):
    _, data = beam
    errors = [abs(first_flapwise_frequency(data, n, 10) - PUBLISHED[10]) for n in (2, 4, 6)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[0] > 1e-3 * PUBLISHED[10]  # two modes are visibly stiff: a real test


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
def test_element_geometric_stiffness_gives_the_column_buckling_load(theory):
    """Clamped–free column, 40 elements: the lowest P with (K − P K_G(1)) u = 0 is
    Euler's π²EI/(4L²), or with shear Engesser's P_E / (1 + P_E/(kGA))."""
    section = BeamSection(A=0.01, Iy=2e-5, Iz=3e-5, J=1e-5)  # stocky: shear matters
    material = Material(E=2e11, nu=0.3, rho=7800)
    n, length = 40, 1.0
    ke, _ = beam_element_matrices(length / n, section, material, theory)
    kg = beam_geometric_stiffness(-1.0, length / n, section, material, theory)
    size = 6 * (n + 1)
    k, g = np.zeros((size, size)), np.zeros((size, size))
    for e in range(n):
        idx = np.ix_(np.r_[6 * e:6 * e + 12], np.r_[6 * e:6 * e + 12])
        k[idx] += ke
        g[idx] += kg
    free = np.ix_(np.r_[6:size], np.r_[6:size])
    loads = sla.eig(k[free], -g[free], right=False)
    loads = np.sort(loads.real[np.isfinite(loads) & (loads.real > 0)])
    euler = np.pi**2 * material.E * section.Iy / (4 * length**2)
    expected = euler if theory == "euler-bernoulli" else euler / (
        1 + euler / (section.kz * material.G * section.A))
    assert loads[0] == pytest.approx(expected, rel=1e-5)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_consistent_inertial_load_has_the_right_resultant(seed):
    """For any linear field a(r) = A r + b and any beam orientation, the nodal load
    M d (d: the field's DOF vector) sums to the resultant ∫ ρA (A r + b) dx = m (A c + b)
    (c the centre of the beam's axis) — translations of the load only."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    up = np.cross(axis, rng.normal(size=3))
    fe = straight_beam(rng.uniform(0.5, 3), int(rng.integers(1, 12)), SECTION, MATERIAL,
                       start=rng.normal(size=3), axis=axis, up=up)
    a_mat, b_vec = rng.normal(size=(3, 3)), rng.normal(size=3)
    load = (fe.mass @ beam_nodal_field(fe, a_mat, b_vec)).reshape(-1, 6)
    mass = RHO * AREA * fe.metadata["length"]
    centre = fe.nodes.mean(axis=0)
    np.testing.assert_allclose(load[:, :3].sum(axis=0), mass * (a_mat @ centre + b_vec),
                               rtol=1e-10, atol=1e-10 * mass)


def test_load_cases_of_a_straight_beam_follow_its_axial_force(beam):
    """Along x, only the axial component of each load matters: spin about y or z pulls
    the beam alike (ρΩ²x), spin about its own axis and angular acceleration load it
    sideways only (no K_G), and the ω_iω_j products with i ≠ j, whose axial load is
    zero on the axis, vanish too."""
    _, data = beam
    s = data.stiffening
    scale = np.abs(s["ww_zz"]).max()
    np.testing.assert_allclose(s["ww_yy"], s["ww_zz"], atol=1e-9 * scale)
    for case in ("ww_xx", "ww_xy", "ww_xz", "ww_yz", "dw_x", "dw_y", "dw_z", "a_y", "a_z"):
        assert np.abs(s[case]).max() <= 1e-9 * scale, case
    # a_x pushes the beam onto its root: compression N = −ρA(L − x), a softening matrix
    assert np.all(np.linalg.eigvalsh(s["a_x"]) < 0)
    assert np.all(np.linalg.eigvalsh(s["ww_zz"]) > 0)


def test_unit_fields_are_the_frame_accelerations():
    """a(r) of the unit cases against the rigid-body formula ω̇ × r + ω × (ω × r) + a₀."""
    rng = np.random.default_rng(1)
    w, dw, a0, r = (rng.normal(size=3) for _ in range(4))
    expected = np.cross(dw, r) + np.cross(w, np.cross(w, r)) + a0
    total = np.zeros(3)
    axes = "xyz"
    for case, (a_mat, b_vec) in UNIT_FIELDS.items():
        kind, which = case.split("_")
        k = [axes.index(c) for c in which]
        value = {"ww": w[k[0]] * w[k[-1]], "a": a0[k[0]], "dw": dw[k[0]]}[kind]
        total += value * (a_mat @ r + b_vec)
    np.testing.assert_allclose(total, expected, rtol=1e-12, atol=1e-12)


def test_stiffening_follows_selection_and_the_native_file(beam, tmp_path):
    _, data = beam
    keep = data.select([3, 0, 5])
    for case in STIFFENING_CASES:
        np.testing.assert_array_equal(keep.stiffening[case],
                                      data.stiffening[case][np.ix_([3, 0, 5], [3, 0, 5])])
    assert data.truncate(4).stiffening["ww_zz"].shape == (4, 4)
    path = tmp_path / "beam.fmd.h5"
    write_native(data, path)
    back = read_native(path)
    for case in STIFFENING_CASES:
        np.testing.assert_array_equal(back.stiffening[case], data.stiffening[case])


def test_bad_stiffening_data_are_named(beam):
    from dataclasses import replace

    fe, data = beam
    with pytest.raises(ValidationError, match="unknown load case 'spin'"):
        replace(data, stiffening={"spin": np.eye(data.n_modes)})
    with pytest.raises(ShapeError, match=r"stiffening\['ww_xx'\]"):
        replace(data, stiffening={**data.stiffening, "ww_xx": np.eye(2)})
    with pytest.raises(ValidationError, match="lacks the load case"):
        replace(data, stiffening={"ww_zz": data.stiffening["ww_zz"]})
    from flexmbs.modal.femodel import FEModel

    bare = FEModel(nodes=fe.nodes, mass=fe.mass, stiffness=fe.stiffness, dofs_per_node=6,
                   node_sets=fe.node_sets, metadata={"source": "bare.mtx"})
    with pytest.raises(ValidationError, match=r"no element information in 'bare\.mtx'"):
        with_stiffening(data, bare)


def test_flexmbs_beam_writes_stiffening_and_modes_reports_it(tmp_path, capsys):
    out = tmp_path / "b.fmd.h5"
    assert cli_main(["beam", "--length", "1", "--width", "0.02", "--height", "0.01",
                     "--modes", "4", "-o", str(out), "--json"]) == 0
    capsys.readouterr()
    assert cli_main(["modes", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stiffening"] == sorted(STIFFENING_CASES)
    plain = tmp_path / "plain.fmd.h5"
    assert cli_main(["beam", "--length", "1", "--width", "0.02", "--height", "0.01",
                     "--modes", "4", "-o", str(plain), "--no-stiffening"]) == 0
    assert "geometric stiffening: none" in capsys.readouterr().out


def test_solid_hexahedra_stiffen_like_the_beam():
    """A solid bar of built-in hexahedra and the same bar of beam elements, spun about z
    at Ω = ω₀ (each its own first frequency): the stiffened ratio ω₁/ω₀ agrees to 1e-3
    (the hexahedra shear-lock, so ω₀ itself does not: it is 29 % high)."""
    from flexmbs.modal.fe.solid import box_mesh

    solid_fe = box_mesh(1.0, 0.04, 0.02, 40, 2, 2, E=210e9, nu=0.3, rho=7850.0)
    solid = with_stiffening(clamped_modes(solid_fe, "x0", 4), solid_fe)
    beam_fe = straight_beam(1.0, 40, BeamSection.rectangle(0.04, 0.02),
                            Material(E=210e9, nu=0.3, rho=7850.0))
    beam = with_stiffening(clamped_modes(beam_fe, "root", 4), beam_fe)
    ratios = []
    for data in (solid, beam):
        w0 = 2 * np.pi * data.frequencies[0]
        k = effective_stiffness(data.K_ff, data.stiffening, omega=(0.0, 0.0, w0))
        ratios.append(np.sqrt(sla.eigh(k, data.M_ff, eigvals_only=True)[0]) / w0)
    assert ratios[0] == pytest.approx(ratios[1], rel=1e-3)
    assert ratios[1] > 1.4  # a real stiffening: ω₁ = ω₀ √(1 + 1.18) at Ω = ω₀


def test_free_bodies_get_inertia_relief():
    """Free–free modes (mean axes) of a 2 m beam centred on the frame origin: the
    acceleration cases are rigid-body loads, wholly balanced by the inertia (no stress);
    the centrifugal load of a spin about z through the centre is self-equilibrated, so its
    stress is the one of the same load on the beam clamped at its centre node — a
    different static problem, the same matrix to round-off."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    from flexmbs.modal.stiffening import (
        UNIT_FIELDS,
        beam_geometric_matrix,
        beam_nodal_field,
        mode_vectors,
    )

    fe = straight_beam(2.0, 40, BeamSection.rectangle(0.02, 0.01), Material.steel(),
                       start=(-1.0, 0.0, 0.0))
    data = with_stiffening(free_free_modes(fe, 4), fe)
    scale = np.abs(data.stiffening["ww_zz"]).max()
    assert scale > 0
    for case in ("a_x", "a_y", "a_z", "dw_x", "dw_y", "dw_z"):
        assert np.abs(data.stiffening[case]).max() <= 1e-9 * scale, case
    a_mat, b_vec = UNIT_FIELDS["ww_zz"]
    load = -(fe.mass @ beam_nodal_field(fe, a_mat, b_vec))
    free = np.setdiff1d(np.arange(fe.n_dof), fe.node_dofs(np.array([20])))
    u = np.zeros(fe.n_dof)
    u[free] = spla.spsolve(sp.csc_matrix(fe.stiffness[free][:, free]), load[free])
    modes = mode_vectors(fe, data)
    clamped = modes.T @ (beam_geometric_matrix(fe, u) @ modes)
    np.testing.assert_allclose(data.stiffening["ww_zz"], clamped, rtol=0, atol=1e-10 * scale)
