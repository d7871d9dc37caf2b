"""The geometrically exact ANCF reference for Kane et al.'s spin-up beam
(validation/kane_exact_reference.py) against facts that do not come from it: its own
consistency (gradients, mass), Euler–Bernoulli statics and frequencies, the elastica,
the centrifugally stiffened frequencies of a spinning cantilever, a linear modal
solution of a slow spin-up, and the same spin-up integrated in the inertial frame."""

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_bvp, solve_ivp, trapezoid
from script_files import load_script  # tests/script_files.py

ROOT = Path(__file__).resolve().parents[1]


def _load():
    return load_script(ROOT / "validation" / "kane_exact_reference.py", register=True)


ker = _load()
L, A, I, E, RHO, T = ker.KANE_BEAM
EI, EA, RHO_A = E * I, E * A, RHO * A
#: √(EI/ρAL⁴) [rad/s], the frequency unit of the rotating-beam tables
UNIT = np.sqrt(EI / (RHO_A * L**4))
#: roots of 1 + cos β cosh β = 0 (clamped–free Euler–Bernoulli beam)
BETA = np.array([1.8751040687, 4.6940911330, 7.8547574382, 10.9955407349, 14.1371683910,
                 17.2787595321])


def test_internal_force_is_the_energy_gradient_and_the_stiffness_its_jacobian():
    model = ker.AncfCantilever(elements=3)
    rng = np.random.default_rng(1)
    u = 0.05 * rng.standard_normal(model.n)
    f, k = model.internal(u)
    h = 1e-6
    eye = np.eye(model.n)
    grad = np.array([(model.energy(u + h * e) - model.energy(u - h * e)) / (2 * h)
                     for e in eye])
    jac = np.array([(model.internal(u + h * e, False)[0]
                     - model.internal(u - h * e, False)[0]) / (2 * h) for e in eye]).T
    np.testing.assert_allclose(grad, f, rtol=0, atol=1e-7 * np.max(np.abs(f)))
    np.testing.assert_allclose(jac, k, rtol=0, atol=1e-7 * np.max(np.abs(k)))
    # rigid motions are free of strain: a rotation of the straight beam by 1 rad
    c, s = np.cos(1.0), np.sin(1.0)
    q = model.reference().reshape(-1, 2) @ np.array([[c, s], [-s, c]])
    f_rigid, _ = model.internal(q.reshape(-1) - model.reference(), stiffness=False)
    np.testing.assert_allclose(f_rigid, 0.0, rtol=0, atol=1e-6)


def test_mass_matrix_gives_the_mass_and_the_rigid_spin_kinetic_energy():
    model = ker.AncfCantilever(elements=5)
    ones = np.tile([1.0, 0.0, 0.0, 0.0], model.elements + 1)  # unit translation along x
    np.testing.assert_allclose(ones @ model.mass @ ones, RHO_A * L, rtol=1e-13, atol=0)
    # spin about the root at 1 rad/s: q̇ = Ĵ q, T = ½ q̇ᵀ M q̇ = ½ ρA L³ / 3
    qd = model.jhat @ model.reference()
    np.testing.assert_allclose(0.5 * qd @ model.mass @ qd, RHO_A * L**3 / 6, rtol=1e-13,
                               atol=0)


def test_small_tip_load_gives_the_euler_bernoulli_deflection():
    load = 0.42  # N: tip deflection 1 cm (δ/L = 1e-3), nonlinear terms ~ 1e-6
    tip = ker.static_tip_load([0.0, load], elements=4, increments=1)
    np.testing.assert_allclose(tip[1], load * L**3 / (3 * EI), rtol=1e-5, atol=0)


def test_large_tip_load_follows_the_elastica():
    # dead tip load P = EI/L²: the inextensible elastica θ'' = −(P/EI) cos θ
    load = EI / L**2
    s = np.linspace(0.0, L, 401)
    sol = solve_bvp(lambda x, y: np.vstack([y[1], -load / EI * np.cos(y[0]),
                                            np.cos(y[0]), np.sin(y[0])]),
                    lambda ya, yb: np.array([ya[0], yb[1], ya[2], ya[3]]),
                    s, np.zeros((4, s.size)), tol=1e-10, max_nodes=100000)
    assert sol.status == 0
    elastica = np.array([sol.y[2, -1] - L, sol.y[3, -1]])
    # Bisshopp and Drucker (1945), PL²/EI = 1: tip deflections 0.05643 L and 0.30172 L
    np.testing.assert_allclose(elastica / L, [-0.05643, 0.30172], rtol=0, atol=1e-5)
    tip = ker.static_tip_load([0.0, load], elements=32)
    # extensibility (P/EA ≈ 5e-6) accounts for the ~1e-5 that remains
    np.testing.assert_allclose(tip, elastica, rtol=1e-4, atol=0)


def test_first_bending_frequencies_converge_to_the_clamped_values():
    errors = []
    for elements in (2, 4, 8):
        mass, stiff = ker.AncfCantilever(elements=elements).linear_matrices()
        omega = np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(mass, stiff)).real)[:2])
        exact = BETA[:2] ** 2 * UNIT
        errors.append(abs(omega[0] - exact[0]) / exact[0])
        if elements == 8:
            np.testing.assert_allclose(omega[0], exact[0], rtol=1e-5, atol=0)
            np.testing.assert_allclose(omega[1], exact[1], rtol=1e-4, atol=0)
            np.testing.assert_allclose(omega[0], 3.80, rtol=0, atol=5e-3)
    assert errors[2] < errors[1] < errors[0]


@pytest.mark.parametrize(("lam", "flapwise"), [(1.0, 3.6816), (2.0, 4.1373), (5.0, 6.4495)])
def test_spinning_in_plane_frequency_matches_the_stiffened_beam_tables(lam, flapwise):
    # Hodges–Rutkowski / Wright et al. flapwise values (inextensible, hub radius 0);
    # in plane ω² = ω_flap² − Ω² (centrifugal softening of the chordwise motion)
    chordwise = np.sqrt(flapwise**2 - lam**2)
    # near-inextensible beam (EA ×100, same EI and ρA): the tables to their 5 digits
    stiff = (L, 100 * A, I, E, RHO / 100, T)
    omega = ker.spinning_frequencies(lam * UNIT, beam=stiff, elements=32, count=1)[0]
    np.testing.assert_allclose(omega / UNIT, chordwise, rtol=5e-5, atol=0)
    # Kane's beam: the axial stretch and Coriolis coupling lower it by < 2e-4
    omega = ker.spinning_frequencies(lam * UNIT, elements=32, count=1)[0]
    np.testing.assert_allclose(omega / UNIT, chordwise, rtol=3e-4, atol=0)


def _linear_modal_tip(omega, t):
    """Slow spin-up, small deflection: analytic clamped–free modes, rotating frame,
    ρA ẅ + EI w'''' = −θ̈ ρA x (no centrifugal terms: Ω² ≪ ω₁²)."""
    x = np.linspace(0.0, L, 20001)
    shapes = []
    for b in BETA:
        s = b * x / L
        sigma = (np.cosh(b) + np.cos(b)) / (np.sinh(b) + np.sin(b))
        shapes.append(np.cosh(s) - np.cos(s) - sigma * (np.sinh(s) - np.sin(s)))
    phi = np.array(shapes)
    modal_mass = RHO_A * trapezoid(phi * phi, x, axis=1)
    load = RHO_A * trapezoid(phi * x, x, axis=1) / modal_mass
    w2 = (BETA**2 * UNIT) ** 2
    n = BETA.size

    def rhs(time, y):
        alpha = ker.spin_up_profile(omega, T, time)[2]
        return np.concatenate([y[n:], -w2 * y[:n] - alpha * load])

    sol = solve_ivp(rhs, (0.0, t[-1]), np.zeros(2 * n), t_eval=t, rtol=1e-10, atol=1e-14,
                    method="DOP853")
    return phi[:, -1] @ sol.y[:n]


def test_slow_spin_up_matches_linear_modal_theory():
    omega = 0.04  # rad/s: Ω²/ω₁² ≈ 1e-4, tip deflection ≈ 3 mm
    t = np.linspace(0.0, 20.0, 401)
    exact = ker.kane_exact_tip(omega, t, elements=8)
    linear = _linear_modal_tip(omega, t)
    scale = np.max(np.abs(linear))
    assert 1e-3 < scale < 1e-2
    np.testing.assert_allclose(exact, linear, rtol=0, atol=1e-3 * scale)


def test_spin_up_is_the_same_in_the_rotating_and_the_inertial_frame():
    t = np.linspace(0.0, 4.0, 401)
    kwargs = dict(elements=8, rtol=1e-6, atol=1e-8)
    rotating = ker.kane_exact_tip(10.0, t, frame="rotating", **kwargs)
    inertial = ker.kane_exact_tip(10.0, t, frame="inertial", **kwargs)
    scale = np.max(np.abs(rotating))
    assert 0.3 < scale < 1.0  # lags behind the hub by a few tenths of a metre at 4 s
    np.testing.assert_allclose(inertial, rotating, rtol=0, atol=1e-6 * scale)


def test_peak_abs_refines_a_sampled_maximum():
    t = np.linspace(0.0, 1.0, 11)
    x = -(1.0 - (t - 0.53) ** 2)
    np.testing.assert_allclose(ker.peak_abs(t, x), 1.0, rtol=1e-12, atol=0)
