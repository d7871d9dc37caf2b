"""Geometric stiffening in the equations of motion (flexmbs.frame.stiffening,
docs/theory_stiffening.md).

Independent checks: the elastic rows reduce to the stated effective stiffness
K_eff = K_ff + Σ ω_aω_b K_ab + Σ (ā − ḡ)_k K_{a_k} + Σ ω̄̇_k K_{ω̇_k}; the whole stiffening
residual (every row) is the Euler–Lagrange expression of the second-order energy
T_s − V_s, written here directly from its definition and differentiated by finite
differences; the tangents match finite differences of the residual; and a free, spinning,
vibrating body keeps its energy and angular momentum.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_flexible_body import random_modal

from flexmbs.assembly import System
from flexmbs.errors import ModelError
from flexmbs.frame.rotations import g_bar, rotation_matrix
from flexmbs.integrators import simulate
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.reduction import clamped_modes
from flexmbs.modal.stiffening import STIFFENING_CASES, effective_stiffness, with_stiffening
from flexmbs.model import ModelBuilder

AXES = "xyz"


def random_stiffening(rng, n):
    """Random symmetric matrices for every unit load case (the equations hold for any)."""
    mats = {}
    for case in STIFFENING_CASES:
        a = rng.normal(size=(n, n))
        mats[case] = a + a.T
    return mats


def stiffened_body(seed, coupling="two-way"):
    """A random modal body with random symmetric stiffening matrices, stiffening on."""
    rng = np.random.default_rng(seed)
    data, _ = random_modal(seed)
    data = replace(data, stiffening=random_stiffening(rng, data.n_modes))
    b = ModelBuilder(gravity=tuple(rng.normal(size=3)))
    b.add_flexible_body("f", data, coupling=coupling, orientation=rng.normal(size=4))
    system = System(b.finalize())
    return system.bodies[0], data, rng


def random_state(body, rng):
    """A state on the constraint manifold: |p| = 1, p·ṗ = 0, p·p̈ = −|ṗ|²."""
    q = body.q0.copy()
    q[:3] = rng.normal(size=3)
    q[7:] = rng.normal(size=body.n_modes)
    qd, qdd = rng.normal(size=body.n_coords), rng.normal(size=body.n_coords)
    p = q[3:7]
    qd[3:7] -= (p @ qd[3:7]) * p
    qdd[3:7] -= (p @ qdd[3:7] + qd[3:7] @ qd[3:7]) * p
    return q, qd, qdd


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_elastic_rows_are_the_effective_stiffness(seed):
    """(residual_s)_ξ = (K_eff − K_ff) ξ with ω̄ = Ḡṗ, ā = AᵀR̈ (the frame origin's
    acceleration in body axes), ω̄̇ = Ḡ p̈ and ḡ = Aᵀg: no velocity terms remain."""
    body, data, rng = stiffened_body(seed)
    q, qd, qdd = random_state(body, rng)
    gravity = rng.normal(size=3)
    a = rotation_matrix(q[3:7])
    omega, alpha = g_bar(q[3:7]) @ qd[3:7], g_bar(q[3:7]) @ qdd[3:7]
    accel = a.T @ qdd[:3] - a.T @ gravity
    k_eff = effective_stiffness(data.K_ff, data.stiffening, omega, accel, alpha)
    expected = (k_eff - data.K_ff) @ q[7:]  # ξ̈ has no stiffening coefficient
    got = body._stiffening_residual(q, qd, qdd, gravity)[7:]
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())


def lagrangian(data, q, qd, gravity):
    """T_s − V_s from the definition: T_s = v̄·(ω̄ × S_s) + v̄·Ṡ_s + ω̄·ḣ − ½ ξᵀ K_ω ξ,
    V_s = −g·A S_s, S_s,k = ½ ξᵀK_{a_k}ξ, h_k = ½ ξᵀK_{ω̇_k}ξ."""
    s = data.stiffening
    p, xi, xid = q[3:7], q[7:], qd[7:]
    a = rotation_matrix(p)
    v, w = a.T @ qd[:3], g_bar(p) @ qd[3:7]
    first = np.array([0.5 * xi @ s[f"a_{c}"] @ xi for c in AXES])
    first_rate = np.array([xi @ s[f"a_{c}"] @ xid for c in AXES])
    moment_rate = np.array([xi @ s[f"dw_{c}"] @ xid for c in AXES])
    k_w = sum(w[i] * w[j] * s[f"ww_{AXES[i]}{AXES[j]}"] for i in range(3)
              for j in range(i, 3))
    kinetic = v @ np.cross(w, first) + v @ first_rate + w @ moment_rate - 0.5 * xi @ k_w @ xi
    return kinetic + gravity @ (a @ first)


def euler_lagrange(data, q, qd, qdd, gravity, step=1e-4):
    """d/dt ∂L/∂q̇ − ∂L/∂q by central differences (L: :func:`lagrangian`)."""
    n = q.size
    eye = np.eye(n)

    def grad(fun, x):
        return np.array([(fun(x + step * e) - fun(x - step * e)) / (2 * step) for e in eye])

    def d_dqd(qq, qqd):
        return grad(lambda x: lagrangian(data, qq, x, gravity), qqd)

    rate = (d_dqd(q + step * qd, qd + step * qdd) - d_dqd(q - step * qd, qd - step * qdd)) \
        / (2 * step)
    return rate - grad(lambda x: lagrangian(data, x, qd, gravity), q)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stiffening_residual_is_the_euler_lagrange_expression(seed):
    """Every row: R rows exactly, p rows up to a multiple of p (the normalization
    multiplier's direction), ξ rows exactly — to the finite differences' accuracy."""
    body, data, rng = stiffened_body(seed)
    q, qd, qdd = random_state(body, rng)
    gravity = rng.normal(size=3)
    got = body._stiffening_residual(q, qd, qdd, gravity)
    ref = euler_lagrange(data, q, qd, qdd, gravity)
    p = q[3:7] / np.linalg.norm(q[3:7])
    proj = np.eye(4) - np.outer(p, p)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(got[:3], ref[:3], atol=1e-6 * scale)
    np.testing.assert_allclose(proj @ got[3:7], proj @ ref[3:7], atol=1e-6 * scale)
    np.testing.assert_allclose(got[7:], ref[7:], atol=1e-6 * scale)


@pytest.mark.parametrize("coupling", ["two-way", "one-way", "no-Mrf", "rigid"])
def test_mass_matrix_and_forces_agree_with_the_residual(coupling):
    """M(q) q̈ − Q(q, q̇) = residual(q, q̇, q̈) with stiffening, in every coupling mode;
    the rigid mode carries no stiffening."""
    body, _, rng = stiffened_body(7, coupling)
    q, qd, qdd = random_state(body, rng)
    gravity = rng.normal(size=3)
    lhs = body.mass_matrix(q) @ qdd - body.generalized_forces(q, qd, 0.0, gravity)
    np.testing.assert_allclose(lhs, body.residual(q, qd, qdd, gravity), rtol=1e-10,
                               atol=1e-10 * np.abs(lhs).max())
    part = body._stiffening_residual(q, qd, qdd, gravity)
    if coupling == "rigid":
        assert not np.any(part)
    elif coupling == "one-way":
        assert not np.any(part[:7]) and np.any(part[7:])
    else:
        assert np.all(part[:7] != 0.0)


@pytest.mark.parametrize("coupling", ["two-way", "one-way", "no-Mrf", "rigid"])
def test_tangents_include_the_stiffening_terms(coupling):
    """∂r/∂q and ∂r/∂q̇ of the whole body residual (closed-form stiffening tangents
    included) against central differences, in every coupling mode."""
    body, _, rng = stiffened_body(11, coupling)
    q, qd, qdd = random_state(body, rng)
    gravity = rng.normal(size=3)
    k, c = body.residual_tangents(q, qd, qdd, gravity)
    step = 1e-6
    for j in range(body.n_coords):
        e = np.zeros(body.n_coords)
        e[j] = step
        dk = (body.residual(q + e, qd, qdd, gravity) - body.residual(q - e, qd, qdd, gravity))
        dc = (body.residual(q, qd + e, qdd, gravity) - body.residual(q, qd - e, qdd, gravity))
        np.testing.assert_allclose(k[:, j], dk / (2 * step), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c[:, j], dc / (2 * step), rtol=1e-5, atol=1e-5)


def spinning_beam(stiffening):
    """A free steel beam (1 m, 20 × 10 mm, 4 clamped modes of its root frame) spinning
    at 30 rad/s about z and 5 rad/s about x, its first mode excited; no gravity."""
    fe = straight_beam(1.0, 20, BeamSection.rectangle(0.02, 0.01), Material.steel())
    data = with_stiffening(clamped_modes(fe, "root", 4), fe)
    b = ModelBuilder()
    b.add_flexible_body("beam", data, angular_velocity=(5.0, 0.0, 30.0),
                        xi=[0.02, 0, 0, 0], stiffening=stiffening)
    return System(b.finalize())


def conservation_errors(stiffening, h, t_end=0.1):
    """(max |E − E(0)|, max ‖H − H(0)‖ / ‖H(0)‖, max |T_s|, E(0)) of a trapezoidal-rule
    run."""
    system = spinning_beam(stiffening)
    result = simulate(system, t_end, h, "generalized-alpha", rho_inf=1.0)
    assert result.success, result.message
    body = system.bodies[0]
    energy = result.kinetic + result.potential
    moments = np.array([body.momenta(q, qd)[1] for q, qd in zip(result.q, result.qd,
                                                               strict=True)])
    t_s = max(abs(body._stiff.kinetic_energy(q[3:7], q[7:], qd[:3], qd[3:7], qd[7:]))
              for q, qd in zip(result.q, result.qd, strict=True)) if stiffening else 0.0
    return (float(np.max(np.abs(energy - energy[0]))),
            float(np.max(np.linalg.norm(moments - moments[0], axis=1))
                  / np.linalg.norm(moments[0])), t_s, float(energy[0]))


def test_free_rotation_keeps_energy_and_angular_momentum():
    """The trapezoidal rule conserves neither exactly on this nonlinear motion, but both
    errors must fall as h² and be no larger with stiffening than without: the energy is
    T + T_s + V (T_s = ½ wᵀΔM̄w matters here: over 0.3 % of E) and the angular momentum
    comes from M̄ + ΔM̄."""
    coarse = conservation_errors(True, 1e-4)
    fine = conservation_errors(True, 5e-5)
    plain = conservation_errors(False, 1e-4)
    assert coarse[2] > 3e-3 * abs(coarse[3])
    for k in (0, 1):
        assert 3.0 < coarse[k] / fine[k] < 5.0, (k, coarse, fine)  # second order
        assert coarse[k] < 1.5 * plain[k], (k, coarse, plain)


def test_stiffening_switch_is_validated():
    fe = straight_beam(1.0, 10, BeamSection.rectangle(0.02, 0.01), Material.steel())
    plain = clamped_modes(fe, "root", 3)
    b = ModelBuilder()
    b.add_flexible_body("beam", plain, stiffening=True)
    with pytest.raises(ModelError, match="carry no stiffening matrices"):
        b.finalize()
    with pytest.raises(ModelError, match="no stiffening matrices"):
        replace(System(spinning_beam(False).model).bodies[0], data=plain, stiffening=True)
    on = System(spinning_beam(False).model, stiffening=True)
    assert on.bodies[0].stiffening
    assert not System(spinning_beam(True).model, stiffening=False).bodies[0].stiffening


def test_shipped_spin_up_case_is_bounded_with_stiffening_and_diverges_without():
    """cases/spin_up_beam.toml (Ω = 6 rad/s > ω₁ = 3.80 rad/s), 10 s at h = 20 ms:
    completed with stiffening; without it the run stops as diverged, naming the beam."""
    from pathlib import Path

    from flexmbs.cases import load_case, run_case

    path = Path(__file__).resolve().parents[1] / "cases" / "spin_up_beam.toml"
    short = {"solver.t_end": 10.0, "solver.h": 0.02}
    _, on = run_case(load_case(path, short))
    assert on.status == "completed", on.message
    _, off = run_case(load_case(path, {**short, "solver.stiffening": False}))
    assert off.status == "diverged" and "'beam'" in off.message
    assert off.t[-1] < 10.0


def test_coupling_study_shows_what_stiffening_changes():
    from pathlib import Path

    from flexmbs.studies.coupling import NO_STIFFENING, coupling_study

    path = Path(__file__).resolve().parents[1] / "cases" / "spin_up_beam.toml"
    study = coupling_study(path, modes=("two-way",), workers=1,
                           overrides={"solver.t_end": 2.0, "solver.h": 0.02})
    rows = {r["coupling"]: r for r in study.rows()}
    assert set(rows) == {"two-way", NO_STIFFENING}
    assert rows[NO_STIFFENING]["success"] and rows["two-way"]["success"]
    # the centrifugal tension stiffens the beam against the spin-up's tangential load:
    # without it the tip deflects further (slightly, at 2 s of a 15 s ramp)
    assert rows[NO_STIFFENING]["beam tip peak [mm]"] > rows["two-way"]["beam tip peak [mm]"]
    assert rows[NO_STIFFENING]["beam tip max diff vs two-way [mm]"] > 0.0
