"""Every joint and drive: Φ_q, Φ_t and γ against finite differences at random states."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.assembly import System
from flexmbs.frame.rotations import axis_angle, rotation_matrix
from flexmbs.model import ModelBuilder, SpinUp
from flexmbs.model.joints import JOINT_EQUATIONS


def random_rotation(rng):
    return rotation_matrix(axis_angle(rng.normal(size=3), rng.uniform(0, np.pi)))


def two_body_model(seed: int, kind: str, placement: str):
    """Bodies a and b with random markers joined by ``kind``; ``placement`` puts the
    ground as marker i's or marker j's body instead of a ("ground_i", "ground_j")."""
    ground_i = placement in ("ground_i", "ground_j")
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    b.add_rigid_body("b", 2.0, [0.1, 0.2, 0.25], position=rng.normal(size=3),
                     orientation=random_rotation(rng))
    first = "ground"
    if not ground_i:
        b.add_rigid_body("a", 1.5, [0.3, 0.2, 0.4], position=rng.normal(size=3),
                         orientation=random_rotation(rng))
        first = "a"
    b.add_marker(first, "m", rng.normal(size=3), random_rotation(rng))
    b.add_marker("b", "m", rng.normal(size=3), random_rotation(rng))
    mi, mj = f"{first}.m", "b.m"
    if placement == "ground_j":
        mi, mj = mj, mi
    if kind in JOINT_EQUATIONS:
        b.add_joint("j", kind, mi, mj)
    elif kind == "rotation-drive":
        b.add_drive("d", "rotation", SpinUp(3.0, 0.8), marker_i=mi, marker_j=mj)
    elif kind == "translation-drive":
        b.add_drive("d", "translation", (np.sin, np.cos, lambda t: -np.sin(t)),
                    marker_i=mi, marker_j=mj)
    else:
        b.add_drive("d", "coordinate", (np.cos, lambda t: -np.sin(t), lambda t: -np.cos(t)),
                    coordinate="b.e2")
    return System(b.finalize()), rng


KINDS = [*sorted(JOINT_EQUATIONS), "rotation-drive", "translation-drive", "coordinate-drive"]


@pytest.mark.parametrize("placement", ["bodies", "ground_i", "ground_j"])
@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_jacobian_phi_t_and_gamma_match_finite_differences(seed, kind, placement):
    system, rng = two_body_model(seed, kind, placement)
    # arbitrary (not necessarily consistent) state: the formulas are exact derivatives
    q = system.q0 + 0.3 * rng.normal(size=system.n_q)
    qd = rng.normal(size=system.n_q)
    qdd = rng.normal(size=system.n_q)
    t = float(rng.uniform(0, 1.5))
    h = 1e-6
    jac = system.jacobian(q, t)
    fd = np.column_stack([(system.phi(q + h * e, t) - system.phi(q - h * e, t)) / (2 * h)
                          for e in np.eye(system.n_q)])
    np.testing.assert_allclose(jac, fd, rtol=0, atol=1e-7 * max(1.0, np.max(np.abs(fd))))
    fd_t = (system.phi(q, t + h) - system.phi(q, t - h)) / (2 * h)
    np.testing.assert_allclose(system.phi_t(q, t), fd_t, rtol=0, atol=1e-7)
    # γ: along q(τ) = q + τ q̇ + τ²/2 q̈, t(τ) = t + τ, Φ̈ = Φ_q q̈ − γ
    hh = 1e-4

    def path(tau):
        return system.phi(q + tau * qd + 0.5 * tau**2 * qdd, t + tau)

    phi_dd = (path(hh) - 2 * path(0.0) + path(-hh)) / hh**2
    expected = jac @ qdd - system.gamma(q, qd, t)
    np.testing.assert_allclose(expected, phi_dd, rtol=0,
                               atol=2e-5 * max(1.0, np.max(np.abs(phi_dd))))


@pytest.mark.parametrize("kind", sorted(JOINT_EQUATIONS))
def test_each_joint_reports_its_equation_count(kind):
    expected = {"spherical": 3, "revolute": 5, "cylindrical": 4, "prismatic": 5,
                "universal": 4, "fixed": 6, "planar": 3, "point-on-line": 2}[kind]
    system, _ = two_body_model(1, kind, "bodies")
    assert system.model.joints[0].n_equations == expected
    assert system.n_c == expected + 2  # + two Euler-parameter normalizations
    names = [n for n in system.constraint_names if n.startswith("j[")]
    assert len(names) == expected


def _gamma_by_differences(system, q, qdd, t, hh=1e-4):
    """γ = Φ_q q̈ − Φ̈ along q(τ) = q + τ²/2 q̈, t(τ) = t + τ: a start at rest."""
    def path(tau):
        return system.phi(q + 0.5 * tau**2 * qdd, t + tau)

    phi_dd = (path(hh) - 2 * path(0.0) + path(-hh)) / hh**2
    return system.jacobian(q, t, sparse=False) @ qdd - phi_dd, phi_dd


@pytest.mark.parametrize("placement", ["bodies", "ground_i", "ground_j"])
@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_gamma_at_rest_matches_finite_differences(seed, kind, placement):
    """At q̇ = 0 System.gamma evaluates the drives' rows alone (the joints' and norms' γ
    are quadratic in q̇): the same γ as the second difference of Φ along a path that
    starts at rest, and as the full evaluation at a q̇ of round-off size."""
    system, rng = two_body_model(seed, kind, placement)
    q = system.q0 + 0.3 * rng.normal(size=system.n_q)
    qdd = rng.normal(size=system.n_q)
    t = float(rng.uniform(0, 1.5))
    gamma = system.gamma(q, np.zeros(system.n_q), t)
    expected, phi_dd = _gamma_by_differences(system, q, qdd, t)
    np.testing.assert_allclose(gamma, expected, rtol=0,
                               atol=2e-5 * max(1.0, np.max(np.abs(phi_dd))))
    tiny = np.full(system.n_q, 1e-150)  # the full evaluation: every row, γ ≈ 0 + drives
    np.testing.assert_allclose(gamma, system.gamma(q, tiny, t), rtol=1e-12, atol=1e-280)


def test_gamma_at_rest_on_flexible_bodies_and_beams():
    """The shipped arm with a flexible beam (floating frame, Craig-Bampton modes) and the
    nonlinear beam's elastica: γ at rest against the second difference of Φ."""
    from pathlib import Path

    from flexmbs.cases import load_case
    from flexmbs.cases.run import case_system

    cases = Path(__file__).resolve().parents[1] / "cases"
    rng = np.random.default_rng(7)
    for name in ("arm_vertical_pd", "elastica", "robot_arm"):
        system = case_system(load_case(cases / f"{name}.toml"))
        q = system.assemble(None, t=0.1)
        qdd = rng.normal(size=system.n_q)
        gamma = system.gamma(q, np.zeros(system.n_q), 0.1)
        expected, phi_dd = _gamma_by_differences(system, q, qdd, 0.1, hh=1e-5)
        np.testing.assert_allclose(gamma, expected, rtol=0,
                                   atol=1e-5 * max(1.0, np.max(np.abs(phi_dd))),
                                   err_msg=name)
