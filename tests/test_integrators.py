"""Newmark, HHT-α and generalized-α on the index-3 DAE: accuracy and spectral properties
against theory, a cantilever's first frequency, conservation on a free flexible body,
and failure handling (docs/theory_integrators.md, issue 4's integrator checks)."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ellipk
from test_flexible_body import random_modal
from test_seed_pendulum import THETA0, G, L, seed_pendulum

from flexmbs.assembly import System
from flexmbs.errors import ValidationError
from flexmbs.integrators import amplification_matrix, generalized_alpha, hht, newmark, simulate
from flexmbs.modal import read_modal
from flexmbs.model import ModelBuilder

ROOT = Path(__file__).resolve().parents[1]


def crossing_times(t, x):
    """Times of downward zero crossings of x(t) (linear interpolation)."""
    idx = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))
    return t[idx] - x[idx] * (t[idx + 1] - t[idx]) / (x[idx + 1] - x[idx])


@pytest.mark.parametrize(("method", "options"), [
    ("newmark", {}), ("hht", {"alpha": -0.05}), ("generalized-alpha", {"rho_inf": 0.9}),
])
def test_pendulum_period_within_the_methods_accuracy(method, options):
    """Seed pendulum at 30°: the exact elliptic period 1.4432 s to O(h²)."""
    res = simulate(seed_pendulum(), 1.9, 2e-3, method, **options)
    assert res.success, res.message
    theta = 2 * np.arcsin(res.coordinate("bob.e3"))
    period = np.diff(crossing_times(res.t, theta))[0]
    exact = 4 * np.sqrt(L / G) * ellipk(np.sin(THETA0 / 2) ** 2)
    omega_h = 2 * np.pi / exact * 2e-3
    # second-order methods: period error ~ (ωh)²/12, allow a factor 10 for the damping
    assert abs(period - exact) / exact < 10 * omega_h**2 / 12 + 1e-7
    assert np.max(res.phi_violation) < 1e-9


def steel_cantilever_system(n_modes=4, xi=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = read_modal(ROOT / "modal_data" / "steel_cantilever.fmd.h5").truncate(n_modes)
    b = ModelBuilder()
    b.add_flexible_body("beam", data, xi=xi)
    b.add_marker("beam", "root", node=1)
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", "beam.root")
    return System(b.finalize()), data


def test_cantilever_released_from_static_deflection_oscillates_at_its_first_frequency():
    """Frame clamped at the root; initial ξ = K⁻¹Φ_tipᵀF (static tip deflection). Mode 1
    oscillates at f₁ of the ModalData (trapezoidal rule: period error (ωh)²/12)."""
    _, data = steel_cantilever_system()
    tip = 80  # node index of the tip
    force = np.array([0.0, 0.0, 1.0])
    xi0 = np.linalg.solve(data.K_ff, data.phi[3 * tip:3 * tip + 3].T @ force)
    system, _ = steel_cantilever_system(xi=xi0)
    f1 = data.frequencies[0]
    h = 1 / f1 / 200
    res = simulate(system, 2.2 / f1, h, "newmark")
    assert res.success, res.message
    xi1 = res.coordinate("beam.xi1")
    period = np.mean(np.diff(crossing_times(res.t, xi1)))
    error = abs(period * f1 - 1)
    theory = (2 * np.pi / 200) ** 2 / 12
    assert error < 2 * theory, (error, theory)
    assert np.max(np.abs(xi1)) == pytest.approx(abs(xi0[0]), rel=1e-3)  # no damping


@pytest.mark.parametrize(("method", "options", "params"), [
    ("generalized-alpha", {"rho_inf": 0.6}, generalized_alpha(0.6)),
    ("hht", {"alpha": -0.2}, hht(-0.2)),
    ("newmark", {"beta": 0.31, "gamma": 0.6}, newmark(0.31, 0.6)),
])
def test_simulation_follows_the_amplification_matrix(method, options, params):
    """One clamped mode (a linear oscillator, ωh = 0.8): the simulated ξ₁ equals the
    iteration of the method's one-step amplification matrix from the same start, so the
    numerical damping and period error are exactly those of the theory."""
    _, data = steel_cantilever_system(n_modes=1)
    system, _ = steel_cantilever_system(n_modes=1, xi=[1e-3])
    omega = 2 * np.pi * data.frequencies[0]
    h = 0.8 / omega
    res = simulate(system, 40 * h, h, method, **options)
    assert res.success
    amp = amplification_matrix(params, 0.8)
    state = np.array([1e-3, 0.0, -0.64e-3, -0.64e-3])  # x, hẋ, h²ẍ, h²a at t = 0
    expected = [state[0]]
    for _ in range(40):
        state = amp @ state
        expected.append(state[0])
    np.testing.assert_allclose(res.coordinate("beam.xi1"), expected, rtol=0, atol=1e-12)
    rho = np.max(np.abs(np.linalg.eigvals(amp)))
    assert rho < 1.0  # these parameter sets damp at ωh = 0.8


def test_spectral_radius_at_infinite_frequency():
    for rho in (0.0, 0.5, 1.0):
        lam = np.linalg.eigvals(amplification_matrix(generalized_alpha(rho), 1e6))
        assert np.max(np.abs(lam)) == pytest.approx(rho, abs=1e-3)


def free_body_drifts(h):
    data, _ = random_modal(11, six_dof=False)
    b = ModelBuilder()
    b.add_flexible_body("f", data, angular_velocity=(0.5, 1.5, -1.0), velocity=(0.1, 0, 0),
                        xi=[0.05, -0.03, 0.02], xi_dot=[0.3, 0.1, -0.2])
    system = System(b.finalize())
    res = simulate(system, 0.5, h, "newmark", rtol=1e-12, atol=1e-14)
    assert res.success, res.message
    body = system.bodies[0]
    momenta = [body.momenta(q, qd) for q, qd in zip(res.q, res.qd, strict=True)]
    lin = np.array([m[0] for m in momenta])
    ang = np.array([m[1] for m in momenta])
    energy = res.kinetic + res.potential
    return np.array([
        np.max(np.linalg.norm(lin - lin[0], axis=1)) / np.linalg.norm(lin[0]),
        np.max(np.linalg.norm(ang - ang[0], axis=1)) / np.linalg.norm(ang[0]),
        np.max(np.abs(energy - energy[0])) / energy[0]])


def test_free_flexible_body_keeps_momentum_and_energy_with_the_trapezoidal_rule():
    """Free, undamped, spinning flexible body: linear and angular momentum and energy
    drift at most O(h²) (the trapezoidal rule on the index-3 DAE is not exactly
    conservative for rotations): small at h = 2 ms and 4× smaller at 1 ms, with Newton
    converged tightly (rtol 1e-12; at the default 1e-8 the tolerance, ~1e-6, dominates)."""
    coarse, fine = free_body_drifts(2e-3), free_body_drifts(1e-3)
    assert np.all(coarse < 2e-5), coarse
    assert np.all(fine < coarse / 3), (coarse, fine)


def test_failure_returns_partial_results_with_the_reason():
    """A slider driven past the crank's reach: the run stops when assembly becomes
    impossible, keeps the history up to there and says why."""
    from test_multibody import L_ROD, R_CRANK, TH0, slider_crank

    from flexmbs.model import Polynomial

    b = slider_crank(drive=False)
    xs = R_CRANK * np.cos(TH0) + np.sqrt(L_ROD**2 - (R_CRANK * np.sin(TH0)) ** 2)
    # the slider can reach x ≤ r + l = 0.4 only; pushing at 0.05 m/s fails near t = 0.19
    b.add_drive("push", "translation", Polynomial((xs, 0.05)), marker_i="ground.S",
                marker_j="slider.S")
    res = simulate(System(b.finalize()), 1.0, 0.01, "newmark", h_min=1e-4)
    assert not res.success
    assert "Newton" in res.message and "t = 0.1" in res.message
    assert "equilibrium residual" in res.message and "condition" in res.message
    reach = (R_CRANK + L_ROD - xs) / 0.05
    assert 0.5 * reach < res.t[-1] <= reach  # the history up to the failure is kept
    assert res.q.shape[0] == res.t.size == res.kinetic.size


def test_lambda_and_velocity_accuracy_improve_as_h_shrinks():
    """Newton converges in q, q̇ and λ (not only in q): against the index-1 reference the
    velocity error falls with h (it used to grow as h → 0 with a test on Δq alone)."""
    from flexmbs.integrators import simulate_reference

    ref = simulate_reference(seed_pendulum(), (0.0, 0.3), t_eval=[0.3], rtol=1e-12,
                             atol=1e-13)
    errors = []
    for h in (1e-3, 2.5e-4, 6.25e-5):
        res = simulate(seed_pendulum(), 0.3, h, "newmark", t_out=[0.3])
        errors.append(np.max(np.abs(res.qd[-1] - ref.qd[-1])))
    assert errors[1] < errors[0] / 8 and errors[2] < errors[1], errors


def test_variable_step_refuses_an_unreachable_tolerance():
    res = simulate(seed_pendulum(), 0.5, 0.01, "generalized-alpha", error_tol=1e-14,
                   h_min=1e-4)
    assert not res.success
    assert "cannot be met" in res.message


def test_variable_steps_never_go_below_h_min():
    """A tolerance met only below h_min stops the run: accepted steps whose error is
    close to the tolerance shrank the next step by up to 4 without the floor, and the
    run took 22 602 steps down to 1.5e-5 s and said "completed"."""
    res = simulate(seed_pendulum(), 2.0, 0.01, "generalized-alpha", error_tol=1e-11,
                   h_min=1e-4)
    assert not res.success and "cannot be met" in res.message, res.message
    assert res.t.size > 100  # (an output every step)
    assert np.diff(res.t).min() >= 1e-4 * (1 - 1e-9)


def test_option_errors():
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['alhpa'\]"):
        simulate(seed_pendulum(), 0.1, 1e-2, "hht", alhpa=-0.1)
    with pytest.raises(ValidationError, match="method 'rk4'"):
        simulate(seed_pendulum(), 0.1, 1e-2, "rk4")
    with pytest.raises(ValidationError, match=r"alpha = 0.2 must lie in \[-1/3, 0\]"):
        hht(0.2)
    with pytest.raises(ValidationError, match="not unconditionally stable"):
        newmark(0.25, 0.3)
    for bad, pattern in (({"error_tol": 0.0}, "error_tol must be a positive number, got 0.0"),
                         ({"max_iter": 0}, "max_iter must be an integer"),
                         ({"output_every": 0}, "output_every must be an integer"),
                         ({"t_out": [5.0]}, "output_times\\) must be finite times in"),
                         ({"t_out": [0.05, np.nan]}, r"must be finite times in \[0, 0.1\] "
                                                     r"s, got \[0.05, nan\]"),
                         ({"q0": np.full(7, np.nan)}, r"q0\[0\] \(bob.x\) must be finite, "
                                                      "got nan"),
                         ({"qd0": [0.0] * 6 + [np.inf]}, r"qd0\[6\] \(bob.e3\) must be finite"),
                         ({"q0": [0.0, 1.0]}, "q0 must have 7 entries"),
                         ({"t_out": [0.05, 0.02, 0.05]}, "output_times\\) have 0.05 s more than "
                                                         "once")):
        with pytest.raises(ValidationError, match=pattern):
            simulate(seed_pendulum(), 0.1, 1e-2, "newmark", **bad)


def test_output_times_progress_and_result_file_round_trip(tmp_path):
    """Output at chosen times (Hermite interpolation, steps not forced), a progress
    callback, per-body modal coordinates, and a lossless HDF5 round trip."""
    from flexmbs.integrators import SimulationResult

    system, data = steel_cantilever_system(n_modes=2, xi=[1e-3, 0.0])
    f1 = data.frequencies[0]
    seen = []
    t_out = np.linspace(0.0, 0.2, 7)  # not multiples of h
    res = simulate(system, 0.2, 1 / f1 / 150, "newmark", t_out=t_out,
                   progress=lambda t, t_end: seen.append(t))
    assert res.success
    np.testing.assert_allclose(res.t, t_out, rtol=0, atol=1e-15)
    omega = 2 * np.pi * f1
    # mode 1 alone: ξ₁(t) = ξ₀ cos(ωt) up to the trapezoidal period error
    np.testing.assert_allclose(res.modal_coordinates("beam")[:, 0],
                               1e-3 * np.cos(omega * t_out), rtol=0, atol=3e-6)
    assert len(seen) == res.statistics["steps"] and seen[-1] == pytest.approx(0.2)
    assert res.steps.total == res.statistics["steps"]  # each step counted at one output
    path = tmp_path / "run.res.h5"
    res.save(path)
    back = SimulationResult.load(path)
    np.testing.assert_array_equal(back.q, res.q)
    np.testing.assert_array_equal(back.lam, res.lam)
    assert back.coord_names == res.coord_names
    assert back.coupling == {"beam": "two-way"}
    np.testing.assert_array_equal(back.bodies["beam"]["phi"], data.phi)
    np.testing.assert_array_equal(back.modal_coordinates("beam"), res.modal_coordinates("beam"))


def test_error_controlled_step_meets_its_tolerance_and_adapts():
    """Variable step: the step varies with the motion, and the pendulum's period error
    falls as tol^(2/3) — the local error h³ is held at tol, so h ∝ tol^(1/3) and the
    second-order global error ∝ h² (measured slope 0.6–0.7)."""
    exact = 4 * np.sqrt(L / G) * ellipk(np.sin(THETA0 / 2) ** 2)
    tols = np.array([1e-3, 1e-4, 1e-5])
    errors = []
    for tol in tols:
        res = simulate(seed_pendulum(), 1.9, 0.05, "generalized-alpha", rho_inf=0.9,
                       error_tol=tol, h_max=0.05)
        assert res.success, res.message
        theta = 2 * np.arcsin(res.coordinate("bob.e3"))
        errors.append(abs(np.diff(crossing_times(res.t, theta))[0] - exact) / exact)
        assert np.nanmax(res.steps.h_max) > np.nanmin(res.steps.h_min)  # h really varied
    slope = np.polyfit(np.log(tols), np.log(errors), 1)[0]
    assert 0.5 < slope < 0.8, (slope, errors)


def test_energy_balance_closes_with_the_work_of_dampers_and_drives():
    """A driven, damped hinge with a torsion spring: T + V − W_nc stays constant
    (work of the damper and of the prescribed-motion drive, integrated separately)."""
    b = ModelBuilder(gravity=(0, -9.81, 0))
    b.add_marker("ground", "O", orientation=[0, 0, 1])
    b.add_rigid_body("arm", 1.0, [1e-3, 1e-2, 1e-2], com=(0.3, 0, 0))
    b.add_marker("arm", "O", orientation=[0, 0, 1])
    b.add_revolute("hinge", "ground.O", "arm.O")
    b.add_rotational_spring_damper("torsion", "ground.O", "arm.O", stiffness=5.0,
                                   damping=0.2)
    b.add_rigid_body("slider", 0.5, [1e-3, 1e-3, 1e-3], position=(0, -0.5, 0))
    b.add_marker("slider", "S", orientation=[1, 0, 0])
    b.add_marker("ground", "S", (0, -0.5, 0), orientation=[1, 0, 0])
    b.add_prismatic("rail", "ground.S", "slider.S")
    from flexmbs.model import SpinUp

    b.add_drive("push", "translation", SpinUp(0.5, 0.5), marker_i="ground.S",
                marker_j="slider.S")
    res = simulate(System(b.finalize()), 1.0, 1e-3, "newmark")
    assert res.success
    balance = res.kinetic + res.potential - res.nonconservative_work
    scale = np.max(np.abs(res.nonconservative_work))
    assert scale > 0.1  # damper and drive did real work
    assert np.max(np.abs(balance - balance[0])) < 1e-3 * scale


@pytest.mark.parametrize(("alpha", "expected"), [(-0.3, 0.7 / 1.3), (-0.1, 0.9 / 1.1),
                                                 (0.0, 1.0)])
def test_hht_high_frequency_damping_is_the_published_rho_inf(alpha, expected):
    """HHT: ρ∞ = (1 + α)/(1 − α) (Hilber, Hughes and Taylor 1977) is the spectral radius
    of the amplification matrix as ωh → ∞, and a stiff clamped mode simulated at
    ωh = 300 follows that matrix step by step."""
    theory = np.max(np.abs(np.linalg.eigvals(amplification_matrix(hht(alpha), 1e7))))
    assert theory == pytest.approx(expected, rel=1e-5)
    _, data = steel_cantilever_system(n_modes=20)
    omega = 2 * np.pi * data.frequencies[19]
    h = 300.0 / omega
    xi0 = np.zeros(20)
    xi0[19] = 1e-6
    system, _ = steel_cantilever_system(n_modes=20, xi=xi0)
    res = simulate(system, 12 * h, h, "hht", alpha=alpha)
    amp = amplification_matrix(hht(alpha), 300.0)
    state = np.array([1e-6, 0.0, -9e4 * 1e-6, -9e4 * 1e-6])
    expected_x = [state[0]]
    for _ in range(12):
        state = amp @ state
        expected_x.append(state[0])
    np.testing.assert_allclose(res.coordinate("beam.xi20"), expected_x, rtol=0,
                               atol=1e-9 * 1e-6)


@pytest.mark.parametrize(("method", "options"), [
    ("newmark", {}), ("hht", {"alpha": -0.3}), ("generalized-alpha", {"rho_inf": 0.5}),
])
def test_linear_oscillator_converges_at_second_order(method, options):
    """Phase error of a clamped mode after 1.25 periods, h = T/20, T/40, T/80: fitted
    order 2 (and the trapezoidal rule keeps the amplitude exactly)."""
    _, data = steel_cantilever_system(n_modes=1)
    f1 = data.frequencies[0]
    errors = []
    for steps in (20, 40, 80):
        system, _ = steel_cantilever_system(n_modes=1, xi=[1e-3])
        res = simulate(system, 1.25 / f1, 1 / f1 / steps, method, **options)
        exact = 1e-3 * np.cos(2 * np.pi * f1 * res.t)
        errors.append(np.max(np.abs(res.coordinate("beam.xi1") - exact)))
    order = np.polyfit(np.log([20, 40, 80]), np.log(errors), 1)[0]
    assert -2.3 < order < -1.7, (order, errors)


def test_elastic_energy_is_reported():
    system, data = steel_cantilever_system(n_modes=2, xi=[1e-3, 0.0])
    res = simulate(system, 0.01, 1e-3, "newmark")
    np.testing.assert_allclose(res.elastic[0], 0.5 * data.K_ff[0, 0] * 1e-6, rtol=1e-12)
    np.testing.assert_allclose(res.potential, res.elastic, rtol=1e-12)  # no gravity


def test_grouped_finite_difference_tangent_equals_the_column_by_column_one():
    """Distance-2 colouring of the body graph: the double pendulum's and a 6-link chain's
    tangent matrices from grouped perturbations equal the one-column-at-a-time ones."""
    from test_multibody import pendulum

    from flexmbs.cases import load_case
    from flexmbs.integrators import newmark
    from flexmbs.integrators.simulate import AlphaIntegrator

    for system in (System(load_case(ROOT / "cases" / "seed_double_pendulum.toml").model),
                   System(pendulum(6).finalize())):
        grouped = AlphaIntegrator(system, newmark(), 1e-3, tangents="fd")
        assert grouped._groups is not None
        assert len(grouped._groups) <= min(system.n_q, 21)  # chain: 3 colours x 7
        single = AlphaIntegrator(system, newmark(), 1e-3, tangents="fd")
        single._groups = None
        rng = np.random.default_rng(0)
        state = (system.q0 + 1e-3 * rng.normal(size=system.n_q),
                 rng.normal(size=system.n_q), rng.normal(size=system.n_q),
                 rng.normal(size=system.n_c), 0.0, 1e6, 2e3, 1e-3)
        grouped._refresh(*state)
        single._refresh(*state)
        a = sla_lu_matrix(grouped)
        b = sla_lu_matrix(single)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * np.max(np.abs(b)))


def sla_lu_matrix(integ):
    """Rebuild the factored matrix from its LU factors (P L U)."""
    import scipy.linalg as sla

    lu, piv = integ.matrix.lu
    n = lu.shape[0]
    lower = np.tril(lu, -1) + np.eye(n)
    upper = np.triu(lu)
    mat = lower @ upper
    perm = np.arange(n)
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    out = np.empty_like(mat)
    out[perm] = mat
    del sla
    return out


# ------------------------------------------------------------------ Newton residual, policy
def drives_model():
    """Rigid and flexible bodies with every drive kind: rotation (spin-up), translation
    (polynomial) and coordinate drives, a prismatic joint and a fixed joint."""
    from flexmbs.model import Polynomial, SpinUp

    data, _ = random_modal(4)
    b = ModelBuilder(gravity=(0, 0, -9.81))
    b.add_rigid_body("hub", 2.0, [0.02, 0.02, 0.03], com=(0.01, 0.02, 0.0))
    b.add_marker("ground", "O")
    b.add_marker("hub", "axis")
    b.add_revolute("hinge", "ground.O", "hub.axis")
    b.add_drive("spin", "rotation", SpinUp(2.0, 0.5), marker_i="ground.O",
                marker_j="hub.axis")
    b.add_flexible_body("arm", data, position=(0.2, 0.0, 0.0))
    b.add_marker("arm", "root", node=1)
    b.add_joint("clamp", "fixed", "hub.axis", "arm.root")
    b.add_rigid_body("slider", 0.5, [1e-3, 1e-3, 1e-3], position=(0.0, 0.0, 1.0))
    b.add_marker("ground", "rail")
    b.add_marker("slider", "s")
    b.add_joint("rail", "prismatic", "ground.rail", "slider.s")
    b.add_drive("push", "translation", Polynomial((1.0, 0.2, 0.5)), marker_i="ground.rail",
                marker_j="slider.s")
    b.add_rigid_body("free", 1.0, [0.1, 0.2, 0.3], position=(2.0, 0.0, 0.0))
    b.add_drive("lift", "coordinate", Polynomial((0.0, 0.1)), coordinate="free.z")
    return System(b.finalize())


@pytest.mark.parametrize("coupling", ["two-way", "one-way", "rigid", "no-Mrf"])
def test_one_pass_residual_equals_the_matrix_form(coupling):
    """System.dynamic_residual (body.residual without M, batched bilinear constraints)
    equals M q̈ + Φ_qᵀλ − Q from mass_matrix, forces and the per-joint primitives, and
    Φ_t from the batched form equals the primitives' — in every coupling mode."""
    base = drives_model()
    system = System(base.model, coupling=coupling)
    rng = np.random.default_rng(5)
    for t in (0.1, 0.7):
        q = system.q0 + 0.05 * rng.normal(size=system.n_q)
        qd, qdd = rng.normal(size=system.n_q), rng.normal(size=system.n_q)
        lam = rng.normal(size=system.n_c)
        terms = [system._row_terms(row, q, None, t, False) for row in system._rows]
        phi_ref = np.concatenate([term[0] for term in terms])
        jac_ref = system._assemble_jacobian(
            np.concatenate([blk.ravel() for term in terms for _, blk in term[1]]), False)
        r_ref = system.mass_matrix(q) @ qdd + jac_ref.T @ lam - system.forces(q, qd, t)
        r, phi, jac = system.dynamic_residual(q, qd, qdd, lam, t)
        scale = np.max(np.abs(r_ref))
        np.testing.assert_allclose(r, r_ref, rtol=0, atol=1e-13 * scale)
        np.testing.assert_allclose(phi, phi_ref, rtol=0, atol=1e-14)
        np.testing.assert_allclose(jac, jac_ref, rtol=0, atol=1e-14)
        np.testing.assert_allclose(system.phi(q, t), phi_ref, rtol=0, atol=1e-14)
        np.testing.assert_allclose(system.phi_t(q, t), np.concatenate(
            [term[2] for term in terms]), rtol=0, atol=1e-14)
        viol = system.violations(q, qd, t)
        np.testing.assert_allclose(viol, [np.max(np.abs(phi_ref)), np.max(np.abs(
            jac_ref @ qd - system.nu(q, t)))], rtol=1e-14, atol=0)


@pytest.mark.parametrize("refresh_above", [1, 2, None])
def test_rebuild_policy_changes_iterations_not_the_solution(refresh_above):
    """Every policy converges the same discrete equations to the Newton tolerance: the
    solution matches the default's (rebuild after a step of more than 4 iterations) to
    that tolerance; rebuilding every step (1) needs 2 iterations per step, fewer than
    the others, and None (only on slow convergence) rebuilds least."""
    system = drives_model()
    ref = simulate(system, 0.2, 1e-3, "hht", alpha=-0.1)
    res = simulate(system, 0.2, 1e-3, "hht", alpha=-0.1, refresh_above=refresh_above)
    assert ref.success and res.success
    assert res.settings["refresh_above"] == refresh_above
    np.testing.assert_allclose(res.q, ref.q, rtol=0, atol=1e-8 * max(1.0, np.max(np.abs(
        ref.q))))
    np.testing.assert_allclose(res.lam, ref.lam, rtol=0, atol=1e-5 * np.max(np.abs(
        ref.lam)))
    if refresh_above == 1:
        assert res.statistics["newton_iterations"] == 2 * res.statistics["steps"]
        assert np.all(res.steps.iterations_max[1:] == 2)
    else:
        assert res.statistics["iterations_per_step"] > 2.0


def test_rebuild_counts_follow_the_policy():
    """The seed arm (a stale matrix needs up to 7 iterations there): one build per step
    with 1, fewest builds and most iterations with None, the default in between."""
    from flexmbs.cases import load_case
    from flexmbs.integrators.simulate import REFRESH_ABOVE, AlphaIntegrator

    system = System(load_case(ROOT / "cases" / "arm_beam_seed.toml").model)
    counts = {}
    for above in (1, REFRESH_ABOVE, None):
        integ = AlphaIntegrator(system, newmark(), 1e-3, refresh_above=above)
        for _ in range(100):
            assert integ.step()[0]
        counts[above] = (integ.refreshes, integ.stats.iterations / integ.stats.steps)
    assert counts[1][0] == 100  # one build per step
    assert counts[None][0] < counts[REFRESH_ABOVE][0] < counts[1][0]
    assert counts[1][1] < counts[REFRESH_ABOVE][1] <= counts[None][1]
    assert AlphaIntegrator(system, newmark(), 1e-3, tangents="fd").refresh_above is None
    assert AlphaIntegrator(system, newmark(), 1e-3).refresh_above == REFRESH_ABOVE
    for bad in (0, 2.5, "never"):
        with pytest.raises(ValidationError, match="refresh_above"):
            AlphaIntegrator(system, newmark(), 1e-3, refresh_above=bad)


def test_a_large_model_rebuilds_after_slower_steps_by_default():
    """From the order at which the compiled engine factors sparse, "auto" waits for
    steps of 7 iterations (a SuperLU build costs more residuals): a hanging chain of 22
    links (order 286) takes fewer builds and more iterations than with 4, on both
    engines alike, and the same motion to the Newton tolerance."""
    from flexmbs.engine.compiled_system import SPARSE_FROM
    from flexmbs.integrators.options import (
        REFRESH_ABOVE,
        REFRESH_ABOVE_LARGE,
        REFRESH_LARGE_FROM,
    )
    from flexmbs.integrators.simulate import AlphaIntegrator, simulate

    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_marker("ground", "O")
    previous = "ground.O"
    for k in range(22):
        b.add_rigid_body(f"link{k}", 0.2, [1e-5, 2e-4, 2e-4], position=(0.1 * k, 0.0, 0.0),
                         com=(0.05, 0.0, 0.0))
        b.add_marker(f"link{k}", "a")
        b.add_marker(f"link{k}", "b", position=(0.1, 0.0, 0.0))
        b.add_revolute(f"pin{k}", previous, f"link{k}.a")
        previous = f"link{k}.b"
    system = System(b.finalize())
    assert system.n_q + system.n_c >= SPARSE_FROM == REFRESH_LARGE_FROM
    assert REFRESH_ABOVE_LARGE > REFRESH_ABOVE
    assert AlphaIntegrator(system, newmark(), 1e-3).refresh_above == REFRESH_ABOVE_LARGE
    runs = {key: simulate(system, 0.2, 1e-3, "generalized-alpha", rho_inf=0.8, **key_opts)
            for key, key_opts in (("auto", {}), ("4", {"refresh_above": REFRESH_ABOVE}),
                                  ("numpy", {"engine": "python"}))}
    auto, four = runs["auto"].statistics, runs["4"].statistics
    assert auto["factorizations"] < four["factorizations"]
    assert auto["iterations_per_step"] > four["iterations_per_step"]
    assert runs["numpy"].statistics["factorizations"] == auto["factorizations"]
    scale = np.abs(runs["4"].q).max()
    np.testing.assert_allclose(runs["auto"].q, runs["4"].q, rtol=0, atol=1e-6 * scale)


@pytest.mark.parametrize("kind", ["torque", "force"])
def test_joint_actuator_tangents_difference_the_callable_alone(kind):
    """A joint actuator's tangents (callable differenced alone, joint angle or displacement,
    rate and Jacobians exact) equal forward differences of its whole generalized force."""
    from test_tangents import RTOL_FORWARD, random_state

    from flexmbs.assembly.tangents import force_tangents_fd

    data, _ = random_modal(5)
    b = ModelBuilder()
    b.add_rigid_body("a", 1.5, [0.3, 0.2, 0.4], position=(0.3, -0.2, 0.5))
    b.add_flexible_body("f", data, position=(1.0, 0.5, -0.3))
    b.add_marker("a", "m", (0.1, 0.2, 0.0))
    b.add_marker("f", "n", node=3)

    def fun(t, state):  # reads q, q̇, the joint coordinate and its rate
        return (np.tanh(state.q @ np.linspace(-1, 1, state.q.size)) + 0.1 * state.qd[2]
                + 0.3 * state.value + 0.2 * state.rate ** 2)

    b.add_joint_actuator("u", "a.m", "f.n", fun, kind=kind)
    system = System(b.finalize())
    force = system.model.forces[0]
    q, qd, _, _, t = random_state(system, np.random.default_rng(4), scale=0.1)
    rows, k, c = force_tangents_fd(system, force, q, qd, t)
    assert k.shape == c.shape == (rows.size, system.n_q)
    k_full, c_full = np.zeros((system.n_q, system.n_q)), np.zeros((system.n_q, system.n_q))
    np.add.at(k_full, rows, k)
    np.add.at(c_full, rows, c)

    def generalized(qq, qqd):
        out = np.zeros(system.n_q)
        force.apply(system, qq, qqd, t, out)
        return out

    base = generalized(q, qd)
    k_ref, c_ref = np.zeros_like(k_full), np.zeros_like(c_full)
    for col in range(system.n_q):
        step = 1e-7 * max(1.0, abs(q[col]))
        dq = np.zeros(system.n_q)
        dq[col] = step
        k_ref[:, col] = -(generalized(q + dq, qd) - base) / step
        step = 1e-7 * max(1.0, abs(qd[col]))
        dq[col] = step
        c_ref[:, col] = -(generalized(q, qd + dq) - base) / step
    np.testing.assert_allclose(k_full, k_ref, rtol=0, atol=RTOL_FORWARD * np.max(np.abs(
        k_ref)))
    np.testing.assert_allclose(c_full, c_ref, rtol=0, atol=RTOL_FORWARD * np.max(np.abs(
        c_ref)))


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_steps_taken_again_after_a_newton_failure_are_counted(engine):
    """max_iter = 1: Newton fails at h and every step is taken again at h/2, h/4, …
    until one iteration converges (each step starts again at h). statistics
    ["halved_steps"] counts those retries: log2(h / h_i) summed over the accepted steps
    (an output at every step: each row's step size); none in the run with the default."""
    from flexmbs.cases import load_case, run_case

    case = load_case(Path(__file__).resolve().parents[1] / "cases" / "seed_pendulum.toml")
    _, result = run_case(case, t_end=0.004, max_iter=1, output_every=1, engine=engine)
    assert result.success
    sizes = np.asarray(result.steps.h_min[1:])
    starts = np.minimum(1e-3, 0.004 - np.asarray(result.t[:-1]))  # (the last: what is left)
    halvings = np.log2(starts / sizes)
    np.testing.assert_allclose(halvings, np.round(halvings), atol=1e-6)
    assert result.statistics["halved_steps"] == int(np.round(halvings).sum()) > 0
    _, plain = run_case(case, t_end=0.004, engine=engine)
    assert plain.statistics["halved_steps"] == 0


def test_a_continued_run_carries_its_halved_steps_on(tmp_path):
    """The restart point keeps the count (in memory and in the results file): a run
    continued from its first half reports the halved steps of the whole history, each
    step's log2(start / size) summed as in the test above (the first half's last step
    starts from what was left of it)."""
    from flexmbs.cases import load_case, run_case
    from flexmbs.results import SimulationResult

    case = load_case(Path(__file__).resolve().parents[1] / "cases" / "seed_pendulum.toml")
    _, first = run_case(case, t_end=0.002, max_iter=1, output_every=1, engine="python")
    first.save(tmp_path / "first.res.h5")
    for earlier in (first, SimulationResult.load(tmp_path / "first.res.h5")):
        _, rest = run_case(case, t_end=0.004, max_iter=1, output_every=1, engine="python",
                           restart=earlier)
        t = np.asarray(rest.t)
        ends = np.where(t[1:] <= 0.002 + 1e-15, 0.002, 0.004)
        halvings = np.log2(np.minimum(1e-3, ends - t[:-1]) / np.asarray(rest.steps.h_min[1:]))
        np.testing.assert_allclose(halvings, np.round(halvings), atol=1e-6)
        assert rest.statistics["halved_steps"] == int(np.round(halvings).sum())
        assert rest.statistics["halved_steps"] > first.statistics["halved_steps"] > 0
