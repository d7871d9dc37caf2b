"""ModalData: validation messages, derived quantities, truncation and selection."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_modal_kwargs

from flexmbs.errors import ShapeError, UnitsWarning, ValidationError
from flexmbs.modal import ModalData, ModeKind, plausibility_warnings


def build(**changes):
    kwargs = make_modal_kwargs()
    kwargs.update(changes)
    return ModalData(**kwargs)


# --------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("changes", "error", "pattern"),
    [
        ({"nodes": np.zeros((8, 2))}, ShapeError, r"ModalData\.nodes has shape \(8, 2\)"),
        ({"phi": np.zeros((23, 3))}, ShapeError, r"ModalData\.phi has shape \(23, 3\)"),
        ({"M_ff": np.eye(2)}, ShapeError, r"M_ff has shape \(2, 2\).*3 mode"),
        ({"K_ff": np.eye(4)}, ShapeError, r"K_ff has shape \(4, 4\).*mode count mismatch"),
        ({"M_ff": np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1.0]])}, ValidationError,
         r"ModalData\.M_ff is not symmetric"),
        ({"M_ff": np.diag([1.0, -1.0, 1.0])}, ValidationError,
         r"ModalData\.M_ff is not positive definite.*-1"),
        ({"K_ff": np.diag([1.0, -5.0, 1.0])}, ValidationError,
         r"ModalData\.K_ff is not positive semidefinite"),
        ({"mass": -np.ones(8)}, ValidationError, r"ModalData\.mass .*negative"),
        ({"mass": np.ones(7)}, ShapeError, r"ModalData\.mass has shape \(7,\)"),
        ({"node_sets": {"root": [0], "tip": [99]}}, ValidationError,
         r"node_sets\['tip'\] names node index 99"),
        ({"attach_set": "hub"}, ValidationError, r"attach_set 'hub' is not a node set"),
        ({"attach_set": None}, ValidationError, r"attach_set is required"),
        ({"attach_set": "tip"}, ValidationError, r"attached.*node set 'tip'.*mode \d moves"),
        ({"reference_frame": "body"}, ValidationError, r"reference_frame 'body'"),
        ({"damping_ratio": [0.01, -0.02, 0.0]}, ValidationError,
         r"damping_ratio\[1\] = -0.02 is negative"),
        ({"damping_matrix": np.ones((2, 2))}, ShapeError, r"damping_matrix has shape"),
        ({"cells": {"line": [[0, 9]]}}, ValidationError, r"cells\['line'\] refers to node"),
    ],
)
def test_bad_input_names_the_field(changes, error, pattern):
    with pytest.raises(error, match=pattern):
        build(**changes)


@pytest.mark.parametrize("field", ["nodes", "phi", "M_ff", "K_ff", "mass"])
def test_non_finite_values_are_named(field):
    kwargs = make_modal_kwargs()
    value = np.array(kwargs[field], dtype=float)
    value.flat[min(4, value.size - 1)] = np.nan
    kwargs[field] = value
    with pytest.raises(ValidationError, match=rf"ModalData\.{field} must be finite"):
        ModalData(**kwargs)


def test_inconsistent_modal_mass_is_an_error():
    kwargs = make_modal_kwargs()
    kwargs["M_ff"] = kwargs["M_ff"] * 1e3  # e.g. shapes in mm, matrices in m
    with pytest.raises(ValidationError, match=r"M_ff\[0,0\] = .* but phiᵀ·mass·phi gives"):
        ModalData(**kwargs)


def test_mean_axis_rejects_rigid_content():
    kwargs = make_modal_kwargs()
    kwargs["reference_frame"] = "mean-axis"
    kwargs["attach_set"] = None
    with pytest.raises(ValidationError, match="rigid-body content"):
        ModalData(**kwargs)


# --------------------------------------------------------------------- derived
def test_mass_properties_of_point_masses():
    """Total mass, centre of mass and inertia equal the point-mass formulas."""
    kwargs = make_modal_kwargs(n_nodes=10, seed=4)
    data = ModalData(**kwargs)
    m = kwargs["mass"]
    x = kwargs["nodes"]
    c = (m[:, None] * x).sum(axis=0) / m.sum()
    r = x - c
    inertia = sum(mk * (rk @ rk * np.eye(3) - np.outer(rk, rk))
                  for mk, rk in zip(m, r, strict=True))
    np.testing.assert_allclose(data.total_mass, m.sum(), rtol=1e-14)
    np.testing.assert_allclose(data.center_of_mass, c, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(data.inertia_tensor, inertia, rtol=1e-12, atol=1e-14)


def test_frequencies_solve_the_generalised_problem(modal_data):
    f = modal_data.frequencies
    for fj in f:
        lam = (2 * np.pi * fj) ** 2
        det = np.linalg.det(modal_data.K_ff - lam * modal_data.M_ff)
        scale = np.linalg.det(modal_data.K_ff)
        assert abs(det) < 1e-9 * abs(scale)
    assert np.all(np.diff(f) >= 0)


def test_damping_defaults_to_zero_and_is_shown(modal_data):
    np.testing.assert_array_equal(modal_data.D_ff, np.zeros((3, 3)))
    assert "zero damping" in modal_data.damping_description


def test_damping_ratio_gives_2_zeta_omega_m_on_diagonal_data():
    kwargs = make_modal_kwargs(n_nodes=6, n_modes=2)
    # make M_ff diagonal by using orthogonalised shapes
    m = np.repeat(kwargs["mass"], 3)
    q, _ = np.linalg.qr(np.sqrt(m)[:, None] * kwargs["phi"])
    phi = q / np.sqrt(m)[:, None]
    phi[:3] = 0.0  # still zero at the root rows: they were zero before the QR scaling
    kwargs.update(phi=phi, M_ff=phi.T @ (m[:, None] * phi), damping_ratio=[0.02, 0.05])
    data = ModalData(**kwargs)
    assert data.is_diagonal
    omega = np.sqrt(np.diag(data.K_ff) / np.diag(data.M_ff))
    np.testing.assert_allclose(np.diag(data.D_ff), 2 * np.array([0.02, 0.05]) * omega
                               * np.diag(data.M_ff), rtol=1e-12)


def test_damping_ratio_on_coupled_matrices_damps_each_eigenmode(modal_data):
    """ζ_i damps the eigenmode coordinate i dominates; D is diagonal in the eigenbasis."""
    import scipy.linalg as sla

    data = modal_data.with_damping(ratio=[0.01, 0.02, 0.03])
    w2, vec = sla.eigh(data.K_ff, data.M_ff)
    d = vec.T @ data.D_ff @ vec
    owner = data.eigenmode_coordinates
    assert sorted(owner) == [0, 1, 2]
    zeta = np.array([0.01, 0.02, 0.03])[owner]
    np.testing.assert_allclose(np.diag(d), 2 * zeta * np.sqrt(w2), rtol=1e-10)
    np.testing.assert_allclose(d - np.diag(np.diag(d)), 0, atol=1e-10 * np.max(np.abs(d)))


def test_damping_ratio_meaning_is_continuous_under_tiny_coupling():
    """Reordered diagonal data and the same with 1e-9 coupling get the same damping."""
    from flexmbs.modal.shipped import seed_tip_beam

    swapped = seed_tip_beam().select([1, 0]).with_damping(ratio=[0.05, 0.01])
    omega = np.sqrt(np.diag(swapped.K_ff) / np.diag(swapped.M_ff))
    expected = 2 * np.array([0.05, 0.01]) * omega * np.diag(swapped.M_ff)
    np.testing.assert_allclose(np.diag(swapped.D_ff), expected, rtol=1e-12)
    kwargs = {k: getattr(swapped, k) for k in ("nodes", "phi", "K_ff", "mass", "psi",
                                               "node_sets", "reference_frame", "attach_set")}
    m_ff = swapped.M_ff.copy()
    m_ff[0, 1] = m_ff[1, 0] = 1e-9 * m_ff[0, 0]
    coupled = ModalData(M_ff=m_ff, damping_ratio=[0.05, 0.01], **kwargs)
    np.testing.assert_allclose(np.diag(coupled.D_ff), expected, rtol=1e-6)


# --------------------------------------------------------------------- selection
def test_select_truncate_cutoff_are_consistent(modal_data):
    sub = modal_data.select([2, 0])
    np.testing.assert_array_equal(sub.phi, modal_data.phi[:, [2, 0]])
    np.testing.assert_array_equal(sub.M_ff, modal_data.M_ff[np.ix_([2, 0], [2, 0])])
    np.testing.assert_array_equal(sub.K_ff, modal_data.K_ff[np.ix_([2, 0], [2, 0])])
    np.testing.assert_allclose(sub.invariants.M_ff, sub.M_ff, rtol=1e-12)
    assert sub.metadata["history"][-1] == "select([2, 0])"
    tr = modal_data.truncate(2)
    assert tr.n_modes == 2
    f = modal_data.coordinate_frequencies
    cut = modal_data.cutoff(f[1] * 1.0001)
    np.testing.assert_array_equal(cut.coordinate_frequencies, f[f <= f[1] * 1.0001])


@pytest.mark.parametrize(("method", "arg", "pattern"), [
    ("truncate", 0, "truncate: n = 0"), ("truncate", 9, "truncate: n = 9"),
    ("select", [0, 5], "mode index 5"), ("select", [], "indices is empty"),
    ("select", [1, 1], "repeat"), ("cutoff", 1e-6, "no mode at or below"),
])
def test_selection_errors(modal_data, method, arg, pattern):
    with pytest.raises(ValidationError, match=pattern):
        getattr(modal_data, method)(arg)


def test_select_keeps_bookkeeping_and_sparse_mass():
    kwargs = make_modal_kwargs(lumped=True)
    kwargs["mass"] = sp.diags(np.repeat(kwargs["mass"], 3)).tocsr()
    kwargs["mode_kinds"] = ["normal", "constraint", "normal"]
    kwargs["constraint_fraction"] = [0.1, 0.9, 0.2]
    data = ModalData(**kwargs)
    assert not data.is_lumped and data.invariants.isotropic
    sub = data.select([1])
    assert sub.mode_kinds == (ModeKind.CONSTRAINT,)
    np.testing.assert_array_equal(sub.constraint_fraction, [0.9])


# --------------------------------------------------------------------- plausibility
def test_plausibility_warns_about_unit_mistakes():
    kwargs = make_modal_kwargs()
    kwargs["mass"] = kwargs["mass"] * 1e-9  # tonnes read as kg twice over
    kwargs["M_ff"] = kwargs["M_ff"] * 1e-9
    data = ModalData(**kwargs)
    with pytest.warns(UnitsWarning, match="total mass"):
        plausibility_warnings(data)
    kwargs = make_modal_kwargs()
    kwargs["K_ff"] = kwargs["K_ff"] * 1e14  # e.g. stiffness units mixed up
    with pytest.warns(UnitsWarning, match="frequency range"):
        plausibility_warnings(ModalData(**kwargs))
    kwargs = make_modal_kwargs()
    kwargs["nodes"] = kwargs["nodes"] * 1e5
    kwargs["phi"] = kwargs["phi"] * 1e5
    kwargs["M_ff"] = kwargs["M_ff"] * 1e10
    with pytest.warns(UnitsWarning, match="body size"):
        plausibility_warnings(ModalData(**kwargs))


def test_a_zero_frequency_mode_of_an_attached_body_is_named():
    """K_ff with a zero row: a mode at exactly 0 Hz in an attached frame is a mechanism
    (a tiny positive frequency warned already; 0 was left out of the range check)."""
    kwargs = make_modal_kwargs()
    k_ff = np.array(kwargs["K_ff"], dtype=float)
    k_ff[0, :] = k_ff[:, 0] = 0.0
    kwargs["K_ff"] = k_ff
    data = ModalData(**kwargs)
    assert data.reference_frame.value == "attached" and data.frequencies[0] == 0.0
    with pytest.warns(UnitsWarning, match=r"1 mode\(s\) at 0 Hz with the body attached"):
        plausibility_warnings(data)


def test_plausible_data_gives_no_warning(modal_data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plausibility_warnings(modal_data) == []


def test_femodel_from_units_converts_each_dof_block():
    """1 t, 1 t·mm, 1 t·mm² and 1 N/mm, 1 N, 1 N·mm entries in mm-t-s → SI."""
    import scipy.sparse as sp

    from flexmbs.modal import FEModel

    eye = np.eye(6) + 0.1 * (np.ones((6, 6)) - np.eye(6))
    fe = FEModel.from_units(np.zeros((1, 3)), sp.csr_matrix(eye), sp.csr_matrix(eye),
                            units="mm-t-s", dofs_per_node=6)
    m, k = fe.mass.toarray(), fe.stiffness.toarray()
    np.testing.assert_allclose(m[0, 0], 1e3, rtol=1e-14)      # t → kg
    np.testing.assert_allclose(m[0, 3], 0.1, rtol=1e-14)      # 0.1 t·mm → kg·m
    np.testing.assert_allclose(m[3, 3], 1e-3, rtol=1e-14)     # t·mm² → kg·m²
    np.testing.assert_allclose(k[0, 0], 1e3, rtol=1e-14)      # N/mm → N/m
    np.testing.assert_allclose(k[0, 3], 0.1, rtol=1e-14)      # 0.1 N → N
    np.testing.assert_allclose(k[3, 3], 1e-3, rtol=1e-14)     # N·mm/rad → N·m/rad


# --------------------------------------------------------------------- more bad input
@pytest.mark.parametrize(
    ("changes", "pattern"),
    [
        ({"mode_kinds": ["normal", "foo", "normal"]}, r"mode_kinds\[1\] = 'foo'"),
        ({"node_ids": ["a"] * 8}, r"node_ids must hold integers"),
        ({"node_sets": {"root": [0.7]}}, r"node_sets\['root'\] must hold integers"),
        ({"constraint_fraction": [0.1, 5.0, 0.0]}, r"constraint_fraction\[1\] = 5"),
        ({"constraint_fraction": [0.1, np.nan, 0.0]}, r"constraint_fraction must be finite"),
        ({"units": "furlongs"}, r"units 'furlongs' is not a known unit system"),
        ({"metadata": [1, 2]}, r"metadata must be a dict"),
    ],
)
def test_more_bad_input_names_the_field(changes, pattern):
    with pytest.raises(ValidationError, match=pattern):
        build(**changes)


def test_consistent_mass_with_negative_direction_is_rejected():
    kwargs = make_modal_kwargs()
    m = sp.diags(np.repeat(kwargs["mass"], 3)).tolil()
    m[3, 6] = m[6, 3] = 5.0  # positive diagonal, but indefinite (|5| > sqrt(m3 m6))
    kwargs["mass"] = m.tocsr()
    kwargs["M_ff"] = kwargs["phi"].T @ (kwargs["mass"] @ kwargs["phi"])
    with pytest.raises(ValidationError, match=r"ModalData\.mass is not positive semidefinite"):
        ModalData(**kwargs)


def test_selection_argument_errors(modal_data):
    with pytest.raises(ValidationError, match="indices must hold integers"):
        modal_data.select([True, False, True])
    with pytest.raises(ValidationError, match=r"truncate: n = 2\.7"):
        modal_data.truncate(2.7)
    with pytest.raises(ValidationError, match="f_max = 'abc'"):
        modal_data.cutoff("abc")
    with pytest.raises(ValidationError, match="rayleigh must be"):
        modal_data.with_damping(rayleigh=(1.0,))
    with pytest.raises(ShapeError, match="xi have 2 entries; the body has 3 modes"):
        modal_data.invariants.blocks([0.0, 0.0])


def test_truncate_keeps_lowest_frequencies_in_stored_order():
    kwargs = make_modal_kwargs(n_modes=4)
    kwargs["K_ff"] = np.diag([4e3, 1e3, 3e3, 2e3])  # not sorted
    data = ModalData(**kwargs)
    kept = data.truncate(2)
    f = data.coordinate_frequencies
    np.testing.assert_allclose(np.sort(kept.coordinate_frequencies), np.sort(f)[:2], rtol=0)
    np.testing.assert_array_equal(kept.phi, data.phi[:, [1, 3]])


def test_select_slices_per_mode_metadata(modal_data):
    data = ModalData(**{**make_modal_kwargs(),
                        "metadata": {"per_mode": {"initial_xi": [1.0, 2.0, 3.0]},
                                     "origin": [0.3, -0.2, 0.1], "note": "keep"}})
    sub = data.select([2, 0])
    assert sub.metadata["per_mode"]["initial_xi"] == [3.0, 1.0]
    assert sub.metadata["origin"] == [0.3, -0.2, 0.1]  # not per-mode: untouched
    assert sub.metadata["note"] == "keep"
    with pytest.raises(ValidationError, match=r"per_mode'\]\['x'\] must be a list of 3"):
        ModalData(**{**make_modal_kwargs(), "metadata": {"per_mode": {"x": [1, 2]}}})


def test_mm_read_as_si_is_flagged():
    """A 0.84 m steel-like body whose lengths in mm were read as metres."""
    kwargs = make_modal_kwargs()
    kwargs["nodes"] = kwargs["nodes"] * 1e3
    kwargs["phi"] = kwargs["phi"] * 1e3
    kwargs["M_ff"] = kwargs["M_ff"] * 1e6
    kwargs["K_ff"] = kwargs["K_ff"] * 1e6
    with pytest.warns(UnitsWarning, match="mass per cube of the body's size"):
        plausibility_warnings(ModalData(**kwargs))


def test_modal_mass_checks_with_rotational_shapes_and_point_masses():
    """Point masses + psi: a shortfall on some modes is missing rotary inertia (allowed,
    warned); on every mode it is a units slip (error). Zero mass is an error."""
    from flexmbs.modal.shipped import seed_tip_beam

    seed = seed_tip_beam()
    kwargs = {k: getattr(seed, k) for k in ("nodes", "phi", "psi", "K_ff", "node_sets",
                                            "reference_frame", "attach_set")}
    with pytest.raises(ValidationError, match=r"M_ff\[0,0\] = 50 .*\(ratio 0\.001\)"):
        ModalData(M_ff=seed.M_ff * 1e3, mass=seed.mass, **kwargs)
    m_ff = seed.M_ff.copy()
    m_ff[1, 1] *= 4  # mode 2 only: could be rotary inertia the point masses lack
    data = ModalData(M_ff=m_ff, mass=seed.mass, **kwargs)
    with pytest.warns(UnitsWarning, match="mode 2: 0.25"):
        plausibility_warnings(data)
    with pytest.raises(ValidationError, match="total mass is 0 kg"):
        ModalData(M_ff=seed.M_ff, mass=np.zeros(seed.n_nodes), **kwargs)


def test_off_diagonal_modal_mass_must_match_the_shapes():
    kwargs = make_modal_kwargs(n_modes=2)
    m = kwargs["M_ff"].copy()
    root = np.sqrt(m[0, 0] * m[1, 1])
    m[0, 1] = m[1, 0] = -np.sign(m[0, 1]) * 0.9 * root  # still positive definite
    kwargs["M_ff"] = m
    with pytest.raises(ValidationError, match=r"M_ff\[0,1\] = .* of sqrt\(M_ii M_jj\)"):
        ModalData(**kwargs)


@pytest.mark.parametrize(("changes", "pattern"), [
    ({"phi": np.ones((24, 3)) * (1 + 1j)}, r"ModalData\.phi is complex"),
    ({"node_sets": {"root": [[0], [1, 2]]}}, r"node_sets\['root'\] is ragged"),
    ({"cells": {"line": [[0, 1], [1, 2, 3]]}}, r"cells\['line'\]"),
    ({"cells": [[0, 1]]}, r"cells must be a dict"),
    ({"cells": {"line": [[0, 0.5]]}}, r"cells\['line'\] must hold integers"),
])
def test_structure_errors_are_named(changes, pattern):
    with pytest.raises(ValidationError, match=pattern):
        build(**changes)


def test_penalty_boundary_conditions_in_fe_stiffness_are_refused():
    from flexmbs.modal import FEModel

    k = sp.diags([1e36, 1e3, 1e3]).tocsr()
    with pytest.raises(ValidationError, match="boundary-condition penalty"):
        FEModel(np.zeros((1, 3)), sp.identity(3, format="csr"), k)
