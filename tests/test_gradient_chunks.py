"""The adjoint sweep's chunks of steps (docs/gradients.md, "Chunks of steps"): what the
many-state kernel calls refuse, gravity through a nonlinear beam's elements on both
engines, and a spring–damper of length 0, whose direction is undefined (the kernel's
row is not finite: the analytic term stands in)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gradients import CASES, small_model
from test_tangents import random_state

from flexmbs.assembly import System
from flexmbs.cases import load_case
from flexmbs.engine.compiled_system import CompiledSystem
from flexmbs.errors import ValidationError
from flexmbs.gradients import Objective, gradient
from flexmbs.gradients.chunk_terms import ChunkDerivatives
from flexmbs.gradients.jacobian_source import TangentSource
from flexmbs.gradients.parameters import ModelModels, resolve
from flexmbs.gradients.prepared import PreparedParameter
from flexmbs.gradients.residual_terms import State


class _NoSensor:
    def depends_on(self, tangent) -> bool:
        return False


def test_many_state_calls_refuse_shapes_that_do_not_fit():
    """The kernel checks no bounds: shapes are checked before it runs, by name."""
    model, _, _ = small_model("spring", 1)
    compiled = CompiledSystem(System(model))
    n, m, k = compiled.n_q, compiled.n_c, len(compiled.torsion_names)
    good = np.zeros((2, 3, n))
    out = compiled.pieces_many(good, np.zeros((2, m)), [0.0, 0.1], np.zeros((2, k)),
                               "equations")
    assert out.shape == (2, n + 2 * m)
    for states, lams, times, what, word in (
            (np.zeros((2, 3, n - 1)), np.zeros((2, m)), [0.0, 0.1], "equations", "states"),
            (np.zeros((2, 2, n)), np.zeros((2, m)), [0.0, 0.1], "pieces", "states"),
            (good, np.zeros((3, m)), [0.0, 0.1], "pieces", "lams"),
            (good, np.zeros((2, m)), [0.0], "jacobians", "times"),
            (good, np.zeros((2, m)), [0.0, 0.1], "matrix", "what")):
        with pytest.raises(ValidationError, match=word):
            compiled.pieces_many(states, lams, times, np.zeros((2, k)), what)


def test_gravity_through_a_nonlinear_beams_elements():
    """∂F/∂g of the elastica's nonlinear beam (its elements' consistent inertia carries
    gravity) at random states: the analytic term against central differences of the
    step equations between the Systems at g ± 10 m/s² (affine in g: exact but for the
    round-off of the beam's stiff residual, about 1e-9 of the derivative), and the
    chunk's compiled one against the analytic."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        system = System(load_case(CASES + "elastica.toml").model)
    rng = np.random.default_rng(0)
    source = TangentSource(system, "compiled")
    states = [State(t, q, qd, qdd, lam) for q, qd, qdd, lam, t in
              (random_state(system, rng, scale=0.05) for _ in range(2))]
    for key in ("gravity[2]", "gravity[0]"):
        (par,), _ = resolve([key], ModelModels(system.model))
        prep = PreparedParameter(par, system, {}, _NoSensor())
        chunk = ChunkDerivatives(system, source, [prep])
        assert chunk.plans[0] is not None and chunk.plans[0][0] == "forward"
        got = chunk.at(states, [{}, {}], False)[0]
        ends = [System(par.model_at(par.value + d)) for d in (10.0, -10.0)]
        for st_, row in zip(states, got, strict=True):
            system.angle_memory = {}
            analytic = prep.step_derivative(st_, False)

            def equations(s, st_=st_):
                s.angle_memory = {}
                r, phi, _ = s.dynamic_residual(st_.q, st_.qd, st_.qdd, st_.lam, st_.t,
                                               sparse=False)
                return np.concatenate([r, phi])

            fd = (equations(ends[0]) - equations(ends[1])) / 20.0
            scale = np.abs(fd).max()  # the elements' terms are 1e-2 of it (1e-4 left out)
            np.testing.assert_allclose(analytic, fd, rtol=0, atol=1e-7 * scale, err_msg=key)
            np.testing.assert_allclose(row, analytic, rtol=0, atol=1e-7 * scale,
                                       err_msg=key)  # its Δ = |g|/4: the same round-off


def test_a_spring_damper_of_length_zero_takes_the_analytic_term():
    """A spring–damper between two coincident markers (a second hinge): its direction is
    undefined and the kernel's force row not finite, so the chunk's row of its free
    length is replaced by the analytic term (0 there), on the compiled engine as on the
    NumPy one."""

    def extra(b):
        b.add_rigid_body("other", 1.0, [0.01, 0.02, 0.02], position=(0, 0, 0.0))
        b.add_marker("other", "O")
        b.add_revolute("h2", "ground.O", "other.O")
        b.add_spring_damper("z", "ground.O", "other.O", stiffness=10.0, damping=0.0,
                            free_length=0.0)

    model, _, objective = small_model("spring", 1, extra)
    keys = ["forces.z.free_length", "forces.s.stiffness"]
    run = {"t_end": 0.02, "h": 2e-3, "rho_inf": 0.8}
    results = {engine: gradient(model, objective, keys, jacobian_engine=engine, **run)
               for engine in ("python", "compiled")}
    for key in keys:
        value = results["compiled"].gradient[key]
        assert np.isfinite(value), key
        assert value == pytest.approx(results["python"].gradient[key], rel=1e-9, abs=1e-14)


def test_the_chunks_plans_skip_what_moves_nothing_and_objective_is_unchanged():
    """A parameter that moves nothing in the step equations (an initial coordinate) gets
    no compiled plan (its zeros come state by state)."""
    model, _, _ = small_model("spring", 1)
    system = System(model)
    (par,), _ = resolve(["bodies.link.q0[4]"], ModelModels(model))
    prep = PreparedParameter(par, system, {}, _NoSensor())
    assert not prep.terms.terms
    chunk = ChunkDerivatives(system, TangentSource(system, "compiled"), [prep])
    assert chunk.plans == [None]
    objective = Objective("tip", "final", component="y")
    result = gradient(model, objective, ["bodies.link.q0[4]"], t_end=0.01, h=2e-3)
    assert np.isfinite(result.gradient["bodies.link.q0[4]"])


def test_gravity_gradient_of_a_nonlinear_beam_on_both_engines(tmp_path):
    """The elastica with its section constants given: the tip's final height along
    gravity against central differences of the run, the step Jacobians from NumPy and
    from the compiled kernels (their ∂F/∂g through the elements' consistent inertia;
    measured 7e-8 and 2e-10, 1.4e-3 and 5e-5 before the elements' term)."""
    from test_gradients import RTOL, as_override, case_objective, elastica_with_constants

    path = elastica_with_constants(tmp_path)
    objective = Objective("tip", "final", component="z")
    key, d = "model.gravity[2]", 1e-3
    value = load_case(str(path)).model.gravity[2]
    fd = (case_objective(str(path), objective,
                         {"solver.t_end": 0.02, **as_override(str(path), key, value + d)})
          - case_objective(str(path), objective,
                           {"solver.t_end": 0.02, **as_override(str(path), key, value - d)})
          ) / (2 * d)
    for engine in ("python", "compiled"):
        result = gradient(str(path), objective, [key], newton="converged", t_end=0.02,
                          jacobian_engine=engine)
        assert result.gradient[key] == pytest.approx(fd, rel=RTOL), engine


@pytest.mark.parametrize("key", ["model.gravity[1]", "bodies.link.mass",
                                 "forces.s.stiffness"])
def test_a_retabled_system_evaluates_as_one_of_its_own(key):
    """CompiledSystem.retabled (a moved model's tables on the nominal's kernel and
    workspace, as the chunks' differences take it) gives the step equations and pieces
    of a CompiledSystem of the moved model's own, at random states, after the nominal
    ran in the same workspace; and they differ from the nominal's (the tables are the
    moved model's)."""
    from flexmbs.gradients.model_diff import moved
    from flexmbs.gradients.residual_terms import stacked_states

    model, _, _ = small_model("spring", 1)
    system = System(model)
    (par,), _ = resolve([key], ModelModels(model))
    prep = PreparedParameter(par, system, {}, _NoSensor())
    nominal = CompiledSystem(system)
    moved_system = System(moved(model, prep.tangent, 0.5), **prep.overrides)
    twin = nominal.retabled(moved_system)
    assert twin is not None and twin.WF is nominal.WF and twin.F is not nominal.F
    own = CompiledSystem(moved_system)
    rng = np.random.default_rng(5)
    states = [State(t, q, qd, qdd, lam) for q, qd, qdd, lam, t in
              (random_state(system, rng, scale=0.2) for _ in range(3))]
    chunk = stacked_states(states, [{}] * 3, [])
    for what in ("equations", "pieces"):
        base = nominal.pieces_many(*chunk, what)
        got, ref = twin.pieces_many(*chunk, what), own.pieces_many(*chunk, what)
        np.testing.assert_allclose(got, ref, rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(ref).max()), err_msg=what)
        if what == "equations":
            assert np.abs(base - ref).max() > 1e-6 * max(1.0, np.abs(ref).max()), key


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=64), min_size=1, max_size=120),
       st.randoms(use_true_random=False))
def test_gradient_terms_sum_exactly_however_grouped(values, rnd):
    """GradientTerms (the adjoint's dJ/dp) gives the correctly rounded sum of its terms
    (exact rational arithmetic as the reference) however they arrive: as rows of steps in
    blocks of any size, joined or not, or one parameter's own terms, in any order."""
    from fractions import Fraction

    from flexmbs.gradients.adjoint import GradientTerms

    n_p = 2
    terms = np.array(values)
    want = [float(sum((Fraction(v) for v in terms), Fraction(0))),
            float(sum((Fraction(-v) for v in terms), Fraction(0)))]
    order = list(range(terms.size))
    rnd.shuffle(order)
    got = GradientTerms(n_p)
    got.JOIN_EVERY = rnd.randint(1, 5)  # (blocks joined early and often)
    k = 0
    while k < len(order):
        size = rnd.randint(1, 7)
        part = terms[order[k:k + size]]
        if rnd.random() < 0.3:  # each parameter's own terms
            for v in part:
                got.add_one(0, v)
                got.add_one(1, -v)
        else:
            got.add(np.column_stack([part, -part]))
        k += size
    assert list(got.total()) == want
