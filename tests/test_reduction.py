"""Modal reduction versus Euler–Bernoulli theory and the full FE model."""

import itertools
import warnings

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

from flexmbs.errors import ValidationError
from flexmbs.modal import clamped_modes, craig_bampton, free_free_modes
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.shipped import cantilever_roots

SECTION = BeamSection.rectangle(0.02, 0.01)  # 20 mm along y, 10 mm along z
STEEL = Material.steel()
L = 1.0
CLAMPED_BL = (1.87510, 4.69409, 7.85476)
FREE_BL = (4.73004, 7.85320, 10.99561)


def eb_frequency(beta_l: float, second_moment: float) -> float:
    """Euler–Bernoulli bending frequency [Hz] of the steel beam for root β_n L."""
    return beta_l**2 * np.sqrt(STEEL.E * second_moment / (STEEL.rho * SECTION.A * L**4)) / (
        2 * np.pi)


def bending_frequencies(data, component: int) -> np.ndarray:
    """Frequencies of the modes whose translation is mostly along ``component`` (1=y, 2=z)."""
    trans = data.phi.reshape(data.n_nodes, 3, -1)
    energy = np.sum(trans**2, axis=0)  # (3, n)
    share = energy[component] / np.maximum(energy.sum(axis=0), 1e-300)
    return data.coordinate_frequencies[share > 0.99]


@pytest.fixture(scope="module", params=[40, 150], ids=["dense-40el", "lanczos-150el"])
def beam(request):
    return straight_beam(L, request.param, SECTION, STEEL)


def test_cantilever_frequencies_both_planes(beam):
    data = clamped_modes(beam, "root", 12)
    for component, inertia in ((1, SECTION.Iz), (2, SECTION.Iy)):
        f = bending_frequencies(data, component)[:3]
        ref = [eb_frequency(b, inertia) for b in CLAMPED_BL]
        np.testing.assert_allclose(f, ref, rtol=5e-3)
    assert data.reference_frame.value == "attached"
    assert data.is_diagonal


def test_free_free_frequencies_and_rigid_modes_removed(beam):
    data = free_free_modes(beam, 12)
    for component, inertia in ((1, SECTION.Iz), (2, SECTION.Iy)):
        f = bending_frequencies(data, component)[:3]
        ref = [eb_frequency(b, inertia) for b in FREE_BL]
        np.testing.assert_allclose(f, ref, rtol=5e-3)
    assert data.reference_frame.value == "mean-axis"
    assert data.metadata["rigid_span_residual"] < 1e-6
    assert len(data.metadata["rigid_eigenvalues"]) == 6
    # no rigid-body content left (in the metric of the full 6-DOF mass)
    assert np.max(data.invariants.rigid_content()) < 1e-12


def test_clamped_mesh_convergence_trend():
    """Error of the first bending frequency falls with refinement at order ~4."""
    ref = eb_frequency(cantilever_roots(1)[0], SECTION.Iy)
    errors = []
    for n_el in (2, 4, 8, 16):
        data = clamped_modes(straight_beam(L, n_el, SECTION, STEEL), "root", 1)
        errors.append(abs(data.frequencies[0] - ref) / ref)
    assert all(a > b for a, b in itertools.pairwise(errors))
    order = -np.polyfit(np.log([2, 4, 8, 16]), np.log(errors), 1)[0]
    assert order > 3.5, order


def full_clamped_frequencies(fe, n):
    free = np.setdiff1d(np.arange(fe.n_dof), fe.node_dofs([0]))
    lam = sla.eigh(fe.stiffness[free][:, free].toarray(), fe.mass[free][:, free].toarray(),
                   eigvals_only=True, subset_by_index=[0, n - 1])
    return np.sqrt(lam) / (2 * np.pi)


def test_craig_bampton_converges_to_full_model():
    """Root attached + tip interface: errors fall as normal modes are added; CB is an
    upper bound (Rayleigh–Ritz) of the full model's frequencies."""
    fe = straight_beam(L, 30, SECTION, STEEL)
    exact = full_clamped_frequencies(fe, 8)
    previous = np.inf
    for n_normal in (2, 4, 8, 16, 32):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = craig_bampton(fe, "tip", n_normal, attach="root")
        f = data.frequencies[:8]
        assert np.all(f >= exact * (1 - 1e-10))
        err = np.max(np.abs(f - exact) / exact)
        assert err < previous
        previous = err
        np.testing.assert_allclose(data.M_ff, np.diag(np.diag(data.M_ff)), atol=0)
        assert data.n_modes == n_normal + 6
        assert data.metadata["n_constraint"] == 6
    assert previous < 1e-4
    kinds = [k.value for k in data.mode_kinds]
    assert "constraint" in kinds and "normal" in kinds


def test_craig_bampton_free_interface_is_mean_axis():
    fe = straight_beam(L, 30, SECTION, STEEL)
    ff = free_free_modes(fe, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = craig_bampton(fe, "root", 12)
    assert data.reference_frame.value == "mean-axis"
    np.testing.assert_allclose(data.frequencies[:6], ff.frequencies, rtol=2e-3)
    assert data.metadata["rigid_span_residual"] < 1e-6


def test_solid_free_free_and_isotropic_invariants():
    """A hex8 bar: six rigid modes removed, isotropic consistent mass recognised."""
    fe = box_mesh(0.4, 0.05, 0.05, 16, 2, 2, E=210e9, nu=0.3, rho=7850)
    data = free_free_modes(fe, 4)
    assert data.invariants.isotropic
    assert np.max(data.invariants.rigid_content()) < 1e-10
    np.testing.assert_allclose(data.total_mass, 7850 * 0.4 * 0.05 * 0.05, rtol=1e-12)
    np.testing.assert_allclose(data.center_of_mass, [0.2, 0.025, 0.025], rtol=1e-12)


@pytest.mark.parametrize("rotary", [False, True], ids=["no-rotary", "rotary-inertia"])
def test_beam_mass_properties_from_invariants(rotary):
    """Mass, centre of mass and the full inertia tensor from the invariants equal the
    prismatic beam's: m = ρAL, c = L/2, I = diag(ρI_pL, mL²/12 + ρI_yL, mL²/12 + ρI_zL)
    (the I_y, I_z terms only when the element includes bending rotary inertia)."""
    fe = straight_beam(L, 60, SECTION, STEEL, rotary_inertia=rotary)
    data = clamped_modes(fe, "root", 4)
    rho = STEEL.rho
    m = rho * SECTION.A * L
    np.testing.assert_allclose(data.total_mass, m, rtol=1e-12)
    np.testing.assert_allclose(data.center_of_mass, [L / 2, 0, 0], rtol=1e-12, atol=1e-14)
    extra = rho * L * np.array([0.0, SECTION.Iy, SECTION.Iz]) if rotary else np.zeros(3)
    expected = np.diag([rho * SECTION.Ip * L, m * L**2 / 12 + extra[1],
                        m * L**2 / 12 + extra[2]])
    np.testing.assert_allclose(data.inertia_tensor, expected, rtol=1e-11, atol=1e-14)
    # with the full 6-DOF mass the invariants' modal mass is the FE modal mass
    assert data.mass_mismatch < 1e-12
    # and the metadata measures what point masses alone would lose
    neglect = data.metadata["translational_mass_neglect"]
    kept = np.array(data.metadata["per_mode"]["point_mass_kinetic_energy_fraction"])
    assert np.all(np.abs(kept - 1) < 2e-3)  # bending modes: < 0.2 % of kinetic energy
    point = np.array(neglect["inertia_origin_translational"])
    assert point[0, 0] == pytest.approx(0.0, abs=1e-15)  # point masses on the axis


def test_torsion_modes_keep_their_inertia():
    """A tube whose lowest mode is torsion: selecting it keeps a consistent modal mass."""
    fe = straight_beam(0.1, 20, BeamSection.tube(0.1, 0.002), STEEL)
    data = clamped_modes(fe, "root", 3)
    torsion = int(np.argmin(np.linalg.norm(data.phi, axis=0)))
    one = data.select([torsion])
    np.testing.assert_allclose(one.invariants.M_ff, one.M_ff, rtol=1e-10)
    ip = BeamSection.tube(0.1, 0.002).Ip
    np.testing.assert_allclose(one.inertia_tensor[0, 0], STEEL.rho * ip * 0.1, rtol=1e-12)


@pytest.mark.parametrize(("call", "pattern"), [
    (lambda fe: clamped_modes(fe, "hub", 3), "clamp 'hub' is not a node set"),
    (lambda fe: clamped_modes(fe, [999], 3), "node label"),
    (lambda fe: clamped_modes(fe, "root", 0), "n_modes must be an integer >= 1"),
    (lambda fe: free_free_modes(fe, 2.5), "n_modes must be an integer"),
    (lambda fe: craig_bampton(fe, "tip", 3, attach="root", n_modes=99), "n_modes = 99"),
])
def test_reduction_errors_are_clear(call, pattern):
    fe = straight_beam(L, 6, SECTION, STEEL)
    with pytest.raises(ValidationError, match=pattern):
        call(fe)


def test_free_free_rejects_grounded_or_mechanism():
    fe = straight_beam(L, 6, SECTION, STEEL)
    # a stiffness with an extra zero mode: two disconnected beams
    import scipy.sparse as sp

    from flexmbs.modal import FEModel

    two = FEModel(np.vstack([fe.nodes, fe.nodes + np.array([0.0, 1.0, 0.0])]),
                  sp.block_diag([fe.mass, fe.mass]), sp.block_diag([fe.stiffness, fe.stiffness]),
                  dofs_per_node=6)
    with pytest.raises(ValidationError, match="mechanism or unconnected parts"):
        free_free_modes(two, 3)


def test_ill_conditioned_mesh_is_flagged():
    """A 1 m beam cut into 4000 elements has an eigenvalue spread beyond double precision:
    the reduction still returns, but warns and records the spread."""
    from flexmbs.errors import AccuracyWarning

    fe = straight_beam(L, 4000, SECTION, STEEL)
    with pytest.warns(AccuracyWarning, match="eigenvalue spread"):
        data = clamped_modes(fe, "root", 2)
    assert data.metadata["eigenvalue_spread"] > 1e15
    ok = clamped_modes(straight_beam(L, 40, SECTION, STEEL), "root", 2)
    assert ok.metadata["eigenvalue_spread"] < 1e10


def test_craig_bampton_attach_that_does_not_restrain_is_an_error():
    """One corner node of a solid (3 DOFs) cannot stop rigid rotation about it."""
    fe = box_mesh(0.4, 0.05, 0.05, 4, 1, 1, E=210e9, nu=0.3, rho=7850)
    with pytest.raises(ValidationError, match="does not remove all rigid motion"):
        craig_bampton(fe, [1], 4, attach=[1])
    with pytest.raises(ValidationError, match="does not remove all rigid motion"):
        clamped_modes(fe, [1], 4)


def test_free_free_of_collinear_point_masses_is_a_clear_error():
    import scipy.sparse as sp

    from flexmbs.modal import FEModel

    n = 5
    nodes = np.column_stack([np.linspace(0, 1, n), np.zeros(n), np.zeros(n)])
    k = sp.lil_matrix((3 * n, 3 * n))
    for i in range(n - 1):  # axial springs between neighbours
        a, b = 3 * i, 3 * (i + 1)
        k[a, a] += 1e3
        k[b, b] += 1e3
        k[a, b] -= 1e3
        k[b, a] -= 1e3
    fe = FEModel(nodes, sp.identity(3 * n), k.tocsr())
    with pytest.raises(ValidationError, match="rigid-body mass matrix of the nodes is singular"):
        free_free_modes(fe, 2)


@pytest.mark.parametrize("n_modes", [1, 3])
def test_hinge_clamp_is_caught_for_any_mode_count(n_modes):
    """Two nodes of a solid leave the rotation about their line free (a hinge)."""
    fe = box_mesh(0.4, 0.05, 0.05, 4, 1, 1, E=210e9, nu=0.3, rho=7850)
    with pytest.raises(ValidationError, match=r"does not remove all rigid motion.*rotation"):
        clamped_modes(fe, [1, 2], n_modes)


def test_free_craig_bampton_interface_must_carry_all_rigid_motions():
    fe = box_mesh(0.4, 0.05, 0.05, 4, 1, 1, E=210e9, nu=0.3, rho=7850)
    with pytest.raises(ValidationError, match="does not remove all rigid motion"):
        craig_bampton(fe, [1, 2], 2)
    # three non-collinear nodes do carry them: the result matches the free-free modes
    data = craig_bampton(fe, "x0", 20)
    ref = free_free_modes(fe, 2)
    np.testing.assert_allclose(data.frequencies[:2], ref.frequencies, rtol=2e-2)


@pytest.mark.parametrize(("units", "length", "e_mod", "rho"), [
    ("mm-t-s", 1e3, 210e3, 7.85e-9),       # mm, MPa (N/mm²), t/mm³
    ("mm-kg-ms", 1e3, 210.0, 7.85e-6),     # mm, GPa (kN/mm²), kg/mm³
    ("mm-kg-s", 1e3, 210e6, 7.85e-6),      # mm, kPa (mN/mm²), kg/mm³
    ("cm-g-s", 1e2, 210e10, 7.85),         # cm, Ba (dyn/cm²), g/cm³
])
def test_fe_model_built_in_other_units_gives_the_same_physics(units, length, e_mod, rho):
    """The beam FE is unit-agnostic: built with lengths, E and ρ in another consistent
    system, then declared with ``units``, it must give the SI model's frequencies (Hz),
    mass and inertia. An independent check of the DOF-weighted conversion."""
    from flexmbs.modal import FEModel

    si = straight_beam(L, 12, SECTION, STEEL)
    section = BeamSection.rectangle(0.02 * length, 0.01 * length)
    other = straight_beam(L * length, 12, section, Material(e_mod, 0.3, rho))
    fe = FEModel.from_units(other.nodes, other.mass, other.stiffness, units=units,
                            dofs_per_node=6, node_sets=other.node_sets)
    a = clamped_modes(si, "root", 5)
    b = clamped_modes(fe, "root", 5)
    np.testing.assert_allclose(b.frequencies, a.frequencies, rtol=1e-9)
    np.testing.assert_allclose(b.total_mass, a.total_mass, rtol=1e-12)
    np.testing.assert_allclose(b.inertia_tensor, a.inertia_tensor, rtol=1e-9,
                               atol=1e-12 * np.max(a.inertia_tensor))
    np.testing.assert_allclose(np.abs(b.phi), np.abs(a.phi), rtol=1e-6, atol=1e-9)


def test_an_fe_model_leaves_the_callers_matrices_as_they_were():
    """A CSR matrix with explicit zeros given to FEModel: the model cleans its own copy;
    the caller's matrix keeps its entries and values (removing the zeros in place once
    garbled a shared mass matrix)."""
    import scipy.sparse as sp

    from flexmbs.modal.femodel import FEModel

    rows = np.array([0, 0, 0, 1, 1, 2, 2])
    cols = np.array([0, 1, 2, 1, 2, 2, 0])
    mass = sp.csr_matrix((np.array([3.0, 0.0, 0.0, 3.0, 0.0, 5.0, 0.0]), (rows, cols)),
                         shape=(3, 3))  # (explicit zeros, as element blocks leave them)
    before = (mass.data.copy(), mass.indices.copy(), mass.indptr.copy(), mass.sum())
    fe = FEModel(np.zeros((1, 3)), mass, sp.identity(3, format="csr"), dofs_per_node=3)
    assert fe.mass.sum() == pytest.approx(11.0)
    for now, then in zip((mass.data, mass.indices, mass.indptr), before[:3], strict=True):
        np.testing.assert_array_equal(now, then)
    assert mass.sum() == before[3] == pytest.approx(11.0)


def test_a_stiffness_with_a_negative_eigenvalue_is_refused(beam):
    """K − αM with α = 2λ₁ has the clamped eigenvalues λᵢ − α: the first, −λ₁, is an
    unstable mode. Before, the modes kept were those nearest the shift and λ clipped at
    0: the unstable mode was dropped (or, found, called "a zero-frequency mode")."""
    import dataclasses

    lam1 = (2 * np.pi * full_clamped_frequencies(beam, 1)[0]) ** 2
    shifted = dataclasses.replace(beam, stiffness=(beam.stiffness - 2 * lam1 * beam.mass
                                                   ).tocsr())
    with pytest.raises(ValidationError, match="not positive semidefinite") as info:
        clamped_modes(shifted, "root", 4)
    assert float(str(info.value).split("λ = ")[1].split(" ")[0]) == pytest.approx(
        -lam1, rel=1e-3)


def test_a_negative_eigenvalue_far_from_the_shift_is_found(beam):
    """One DOF's stiffness made strongly negative: its unstable eigenvalue lies far below
    the lowest modes, so no mode near the shift shows it; the factorization's inertia
    (Lanczos models) or the full spectrum (dense ones) does."""
    import dataclasses

    # K − β (Mφ)(Mφ)ᵀ, φ the first clamped mode (M-normalized): its eigenvalue becomes
    # λ₁ − β = −999 λ₁, the others stay (Φᵀ M φ = 0), and every 2 × 2 minor stays positive
    free = np.setdiff1d(np.arange(beam.n_dof), beam.node_dofs([0]))
    k_ff = beam.stiffness[free][:, free].toarray()
    m_ff = beam.mass[free][:, free].toarray()
    lam, phi = sla.eigh(k_ff, m_ff, subset_by_index=[0, 0])
    m_phi = np.zeros(beam.n_dof)
    m_phi[free] = m_ff @ phi[:, 0]
    k = beam.stiffness.toarray() - 1000.0 * lam[0] * np.outer(m_phi, m_phi)
    broken = dataclasses.replace(beam, stiffness=sp.csr_matrix(k))
    full = sla.eigh(broken.stiffness.toarray(), broken.mass.toarray(), eigvals_only=True,
                    subset_by_index=[0, 0])
    assert full[0] < 0  # (independently: the model is indefinite)
    with pytest.raises(ValidationError, match="not positive semidefinite"):
        clamped_modes(broken, "root", 4)


def test_the_eigen_residual_leaves_out_the_clamped_rows(beam):
    """The recorded eigen-residual ‖KΦ − MΦΛ‖/‖MΦΛ‖ is over the equations the modes
    satisfy: not the rows of the clamped DOFs, which carry the support reactions (it read
    6.2, a 600 % residual of modes that equal scipy's to 1e-9). scipy's own modes on the
    free rows give the scale of round-off."""
    data = clamped_modes(beam, "root", 6)
    free = np.setdiff1d(np.arange(beam.n_dof), beam.node_dofs([0]))
    k_ff, m_ff = beam.stiffness[free][:, free], beam.mass[free][:, free]
    lam, vec = sla.eigh(k_ff.toarray(), m_ff.toarray(), subset_by_index=[0, 5])
    m_phi = (m_ff @ vec) * lam
    scipy_residual = np.max(np.linalg.norm(k_ff @ vec - m_phi, axis=0)
                            / np.linalg.norm(m_phi, axis=0))
    assert data.metadata["eigen_residual_max"] < max(1e3 * scipy_residual, 1e-8)
