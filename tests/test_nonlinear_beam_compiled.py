"""The nonlinear beam's compiled kernels against its NumPy reference
(docs/nonlinear_beam.md, docs/compiled.md): residual, iteration matrix and outputs at
random states of random beams (hypothesis), and whole runs on both engines to the same
trajectories."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled import assert_same_evaluations

from flexmbs.assembly import System
from flexmbs.integrators.simulate import simulate
from flexmbs.modal.fe.beam import BeamSection, Material
from flexmbs.model import ModelBuilder


def beam_model(seed: int):
    """A random nonlinear beam (2–5 elements, random section, material, direction and
    initial velocities) clamped at its root, with a point load at its tip, gravity, and
    a second beam hung from the first one's tip by a spherical joint."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(gravity=tuple(rng.uniform(-10, 10, 3)))
    section = BeamSection(A=rng.uniform(1e-3, 1e-2), Iy=rng.uniform(1e-6, 1e-5),
                          Iz=rng.uniform(1e-6, 1e-5), J=rng.uniform(1e-6, 2e-5),
                          ky=rng.uniform(0.5, 1.0), kz=rng.uniform(0.5, 1.0))
    material = Material(E=rng.uniform(1e5, 1e7), nu=rng.uniform(0.0, 0.45),
                        rho=rng.uniform(100, 3000))
    axis, length = rng.standard_normal(3), rng.uniform(0.5, 2.0)
    b.add_nonlinear_beam("arm", length, int(rng.integers(2, 6)), section, material,
                         axis=axis, angular_velocity=rng.standard_normal(3),
                         velocity=rng.standard_normal(3))
    b.add_nonlinear_beam("link", 0.5, 2, section, material,
                         position=length * axis / np.linalg.norm(axis),
                         axis=rng.standard_normal(3))
    b.add_marker("ground", "clamp")
    b.add_marker("arm", "root", node="root")
    b.add_marker("arm", "tip", node="tip")
    b.add_marker("link", "top", node="root")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    b.add_joint("hang", "spherical", "arm.tip", "link.top")
    b.add_point_force("load", "arm.tip", list(rng.uniform(-1, 1, 3)))
    return System(b.finalize())


@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.integers(0, 2**31 - 1))
def test_compiled_beam_evaluations_equal_the_reference(seed):
    """Residual (the elements' forces), the iteration matrix (their complex-step
    Hessians) and the outputs (their strain energy) at random states, to round-off."""
    assert_same_evaluations(beam_model(seed), np.random.default_rng(seed))


def test_a_large_swing_runs_the_same_on_both_engines():
    """The cantilever set swinging through large deflections (the validation's energy
    case, 0.5 s): the compiled run follows the NumPy run's trajectory to 1e-9 m."""
    def run(engine):
        b = ModelBuilder()
        b.add_nonlinear_beam("arm", 1.0, 8, BeamSection(A=1e-2, Iy=1e-5, Iz=2e-5, J=2e-5),
                             Material(E=1e5, nu=0.3, rho=100.0),
                             angular_velocity=[0.0, 3.0, 0.5])
        b.add_marker("ground", "clamp")
        b.add_marker("arm", "root", node="root")
        b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
        res = simulate(System(b.finalize()), 0.5, 0.01, "generalized-alpha", rho_inf=0.9,
                       engine=engine, newton="converged")
        assert res.success
        assert res.statistics["engine"] == engine
        return res

    fast, slow = run("compiled"), run("python")
    np.testing.assert_allclose(fast.q, slow.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.potential, slow.potential, rtol=1e-9)
