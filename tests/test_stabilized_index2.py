"""The stabilized index-2 formulation (docs/theory_integrators.md §7): undamped methods
stay stable on constrained models, both constraint levels hold at every step, and the
compiled and NumPy paths agree. Independent references: the exact elliptic period of
the pendulum, energy conservation, and the index-1 reference integrator."""

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ellipk

from flexmbs.assembly import System
from flexmbs.cases import load_case, run_case
from flexmbs.cases.loader import CaseError
from flexmbs.errors import AccuracyWarning, ValidationError
from flexmbs.integrators import AlphaIntegrator, newmark, simulate, simulate_reference
from flexmbs.integrators.reference import accelerations
from flexmbs.model import ModelBuilder

G, L = 9.81, 1.0
ROOT = Path(__file__).resolve().parents[1]


def horizontal_pendulum():
    """The IFToMM simple pendulum: a 1 kg point mass on a massless 1 m rod, pivot at the
    origin, released from rest horizontal (θ = 90° from the hanging position)."""
    b = ModelBuilder(gravity=(0, -G, 0))
    b.add_marker("ground", "O", orientation=[0, 0, 1])
    b.add_rigid_body("bob", 1.0, [1e-9, 1e-9, 1e-9], com=(L, 0, 0))
    b.add_marker("bob", "O", orientation=[0, 0, 1])
    b.add_revolute("pivot", "ground.O", "bob.O")
    return System(b.finalize())


def downward_crossings(t, x):
    idx = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))
    return t[idx] - x[idx] * (t[idx + 1] - t[idx]) / (x[idx + 1] - x[idx])


def test_undamped_pendulum_runs_100_s_with_bounded_energy_and_both_constraint_levels():
    system = horizontal_pendulum()
    res = simulate(system, 100.0, 1e-2, "newmark", output_every=1)
    assert res.status == "completed", res.message
    assert res.statistics["formulation"] == "stabilized-index-2"
    energy = res.kinetic + res.potential
    # the trapezoidal rule conserves energy up to an O(h²) bounded oscillation:
    # no drift over 100 s (~50 periods)
    scale = G * L  # m g L [J]
    assert np.max(np.abs(energy - energy[0])) < 5e-4 * scale
    first, last = slice(0, 1000), slice(-1000, None)
    assert abs(np.ptp(energy[last]) - np.ptp(energy[first])) < 1e-4 * scale
    assert res.phi_violation.max() < 1e-9
    assert res.velocity_violation.max() < 1e-7
    # the period is the exact one (trapezoidal period error (ωh)²/12 ≈ 1e-4 here)
    # swing angle from the rotation about z: e3 = sin(θ/2), θ measured from horizontal
    e3 = res.coordinate("bob.e3")
    period = np.mean(np.diff(downward_crossings(res.t, e3 - np.sin(-np.pi / 4))))
    exact = 4 * np.sqrt(L / G) * ellipk(0.5)
    assert period == pytest.approx(exact, rel=3e-4)


def test_index3_with_an_undamped_method_warns_and_drifts_where_index2_does_not():
    system = horizontal_pendulum()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bad = simulate(system, 15.0, 1e-2, "newmark", formulation="index-3",
                       engine="python")  # (the compiled kernels raise no warnings)
    # one warning before the run; the overflows of the blow-up are gathered into the
    # failure message instead of being forwarded one by one
    assert [w.category for w in caught] == [AccuracyWarning]
    assert "weakly unstable" in str(caught[0].message)
    assert not bad.success and "floating-point warning(s)" in bad.message
    good = simulate(system, 15.0, 1e-2, "newmark")
    assert good.success
    # the index-3 run's velocities leave the constraint and grow (it may also fail)
    assert bad.velocity_violation.max() > 1e4 * good.velocity_violation.max()
    # damped methods keep index 3 by default, with no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        damped = simulate(system, 0.5, 1e-2, "generalized-alpha", rho_inf=0.8)
    assert damped.statistics["formulation"] == "index-3"


def test_both_engines_follow_the_same_index2_trajectory():
    system = horizontal_pendulum()
    runs = [simulate(system, 2.0, 5e-3, "generalized-alpha", rho_inf=1.0, engine=engine)
            for engine in ("python", "compiled")]
    for key in ("q", "qd", "qdd", "lam"):
        np.testing.assert_allclose(getattr(runs[1], key), getattr(runs[0], key),
                                   rtol=0, atol=1e-10)
    assert runs[1].statistics["engine"] == "compiled"


def driven_double_pendulum():
    """A crank driven about z by θ(t) = t + ½t² (Φ_t ≠ 0), with a free link hinged at its
    tip: one degree of freedom left, and the drive's multiplier does work."""
    from flexmbs.model.drives import Polynomial

    b = ModelBuilder(gravity=(0, -G, 0))
    b.add_marker("ground", "O", orientation=[0, 0, 1])
    b.add_rigid_body("crank", 2.0, [1e-3, 0.015, 0.015], position=(0.15, 0, 0))
    b.add_marker("crank", "O", (-0.15, 0, 0), orientation=[0, 0, 1])
    b.add_marker("crank", "tip", (0.15, 0, 0), orientation=[0, 0, 1])
    b.add_rigid_body("link", 1.0, [1e-3, 0.02, 0.02], position=(0.55, 0, 0))
    b.add_marker("link", "A", (-0.25, 0, 0), orientation=[0, 0, 1])
    b.add_revolute("hinge", "ground.O", "crank.O")
    b.add_revolute("elbow", "crank.tip", "link.A")
    b.add_drive("motor", "rotation", Polynomial((0.0, 1.0, 0.5)), marker_i="ground.O",
                marker_j="crank.O")
    return System(b.finalize())


def test_index2_meets_the_velocity_constraint_of_a_drive_and_converges_to_the_reference():
    system = driven_double_pendulum()
    t_end = 0.4
    ref = simulate_reference(system, (0.0, t_end), t_eval=[t_end], rtol=1e-11, atol=1e-12,
                             baumgarte=(5.0, 5.0))
    lam_ref = accelerations(system, ref.q[-1], ref.qd[-1], t_end)[1]
    errors = []
    for h in (4e-3, 2e-3):
        res = simulate(system, t_end, h, "newmark")
        assert res.statistics["formulation"] == "stabilized-index-2"
        assert res.velocity_violation.max() < 1e-8
        assert res.phi_violation.max() < 1e-9
        errors.append((np.abs(res.q[-1] - ref.q[-1]).max(),
                       np.abs(res.lam[-1] - lam_ref).max() / np.abs(lam_ref).max()))
    # second order in the positions and in the multipliers
    assert 3.3 < errors[0][0] / errors[1][0] < 4.7
    assert errors[1][1] < 1e-3
    assert 3.0 < errors[0][1] / errors[1][1] < 5.0
    # the trapezoidal rule on index 3 leaves a λ error of a few per cent at any h here
    with pytest.warns(AccuracyWarning):
        index3 = simulate(system, t_end, 2e-3, "newmark", formulation="index-3")
    assert np.abs(index3.lam[-1] - lam_ref).max() / np.abs(lam_ref).max() > 100 * errors[1][1]


def test_formulation_is_validated_in_the_api_and_in_case_files(tmp_path):
    system = horizontal_pendulum()
    with pytest.raises(ValidationError, match=r"formulation must be one of.*'index-2'"):
        AlphaIntegrator(system, newmark(), 1e-3, formulation="index-2")
    case = tmp_path / "pendulum.toml"
    text = (ROOT / "cases" / "seed_pendulum.toml").read_text()
    case.write_text(text.replace('[solver]', '[solver]\nformulation = "ggl"'))
    with pytest.raises(CaseError, match=r"\[solver\].*formulation.*'ggl'"):
        load_case(case)
    case.write_text(text.replace('[solver]', '[solver]\nformulation = "index-3"')
                    .replace("t_end = 2.0", "t_end = 0.01"))
    with pytest.warns(AccuracyWarning):
        _, res = run_case(load_case(case))
    assert res.statistics["formulation"] == "index-3"
