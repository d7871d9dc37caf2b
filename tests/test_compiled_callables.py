"""State-dependent callables inside the compiled Newton loop (docs/compiled.md,
"Callables"): joint actuators, spring–damper actuators, point and distributed loads whose
value is f(t, state) run on the compiled engine, the step kernel returning to Python for
their values at every Newton iterate (``NEED_INPUTS``) and for their derivative rows
when it rebuilds the iteration matrix. Same residuals, iteration matrices, Newton
iterations and trajectories as the NumPy path."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from flexmbs.assembly import System
from flexmbs.assembly.tangents import residual_tangents
from flexmbs.cases import load_case
from flexmbs.engine.compiled_system import CompiledSystem, jit_disabled
from flexmbs.engine.tables import unsupported_reason
from flexmbs.errors import ModelError
from flexmbs.integrators import simulate
from flexmbs.model.declarations import distributed_loads
from flexmbs.model.forces import JointActuator, PointLoad, SpringDamperActuator

CASES = Path(__file__).resolve().parents[1] / "cases"

pytestmark = pytest.mark.skipif(jit_disabled(), reason="the compiled engine is off")


def pd(t, state):
    """A PD law on the shoulder: 20 (1 − θ) − 2 θ̇ [N m]."""
    return 20.0 * (1.0 - state.value) - 2.0 * state.rate


def arm(*kinds: str):
    """The PD arm of cases/arm_beam_pd.toml with its shoulder torque from :func:`pd`,
    plus, for each of ``kinds``: "spring" (a spring–damper whose actuator force reads
    its length, its rate and a coordinate), "point" (a force at the elbow reading q and
    q̇, in global axes, and a torque in marker axes), "distributed" (a load field on the
    beam reading q̇)."""
    case = load_case(CASES / "arm_beam_pd.toml")
    model = case.model
    forces = [f for f in model.forces if f.name != "tau1"]
    forces.append(JointActuator("pd", "ground.O", "link1.O", pd))
    if "spring" in kinds:
        forces.append(SpringDamperActuator(
            "muscle", "ground.O", "link2.T", stiffness=40.0, damping=0.5, free_length=0.5,
            actuator=lambda t, s: 3.0 * np.sin(5 * t) - 4.0 * (s.value - 0.6)
            - 0.3 * s.rate + 0.5 * s.q[0] ** 2))
    if "point" in kinds:
        forces.append(PointLoad("push", "link1.E",
                                lambda t, s: np.array([np.cos(s.q[3]), -0.5 * s.qd[1],
                                                       0.1 * t]), "force", "global"))
        forces.append(PointLoad("twist", "link2.O",
                                lambda t, s: np.array([0.0, 0.0, -0.2 * s.qd[8]]),
                                "torque", "marker"))
    if "distributed" in kinds:
        problems: list = []
        forces.extend(distributed_loads(
            [("drag", "beam", lambda t, s: np.array([-0.5 * s.qd[14], -0.5 * s.qd[15],
                                                     0.0]), "mass", "global")],
            model.bodies, problems))
        assert not problems
    return System(replace(model, forces=tuple(forces)))


ALL = ("spring", "point", "distributed")


def test_callables_are_no_longer_a_reason_for_the_numpy_path():
    system = arm(*ALL)
    assert unsupported_reason(system) is None
    cs = CompiledSystem(system)
    assert cs.callbacks.names == ["pd", "muscle", "push", "twist", "drag"]
    assert cs.n_u == 1 + 1 + 3 + 3 + 3
    assert list(cs.tables.u_call) == [1] * cs.n_u


def _random_state(system, rng):
    q = system.assemble(None, t=0.0) + 0.05 * rng.standard_normal(system.n_q)
    return (q, rng.standard_normal(system.n_q), rng.standard_normal(system.n_q),
            rng.standard_normal(system.n_c))


@pytest.mark.parametrize("kinds", [(), ("spring",), ("point",), ("distributed",), ALL])
def test_residual_and_iteration_matrix_match_the_numpy_path(kinds):
    system = arm(*kinds)
    cs = CompiledSystem(system)
    rng = np.random.default_rng(len(kinds))
    bp, gp = 3.0e5, 6.0e2
    for _ in range(3):
        q, qd, qdd, lam = _random_state(system, rng)
        t = float(rng.uniform(0, 1))
        r_np, phi_np, _ = system.dynamic_residual(q, qd, qdd, lam, t)
        r, phi = cs.residual(q, qd, qdd, lam, t)
        assert np.allclose(r, r_np, rtol=1e-12, atol=1e-10 * np.abs(r_np).max())
        assert np.allclose(phi, phi_np, atol=1e-14)
        k_t, c_t = residual_tangents(system, q, qd, qdd, lam, t, sparse=False)
        jac = np.asarray(system.jacobian(q, t, sparse=False))
        top = np.asarray(system.mass_matrix(q, sparse=False)) + (gp / bp) * c_t + k_t / bp
        n_c = jac.shape[0]
        ref = np.block([[top, jac.T], [jac, np.zeros((n_c, n_c))]])
        mat = cs.iteration_matrix(q, qd, qdd, lam, t, bp, gp)
        # the joint actuator's tangents are the same differences on both paths; the
        # springs' and loads' differ by the NumPy path's differences of the whole force
        tol = 1e-12 if not kinds else 2e-8
        assert np.abs(mat - ref).max() <= tol * np.abs(ref).max()


def _run(system, engine, **kw):
    return simulate(system, kw.pop("t_end", 0.3), 1e-3, method="newmark", engine=engine,
                    **kw)


@pytest.mark.parametrize("kinds", [(), ("spring",), ("point", "distributed")])
def test_trajectories_match_the_numpy_path(kinds):
    ref = _run(arm(*kinds), "python")
    res = _run(arm(*kinds), "compiled")
    assert res.statistics["engine"] == "compiled" and ref.statistics["engine"] == "python"
    assert res.success and ref.success
    # (outputs at every step: the step record's rows are the steps)
    assert np.array_equal(res.steps.h_mean, ref.steps.h_mean, equal_nan=True)
    assert np.array_equal(res.steps.iterations, ref.steps.iterations)
    scale = np.abs(ref.q).max()
    assert np.abs(res.q - ref.q).max() <= 1e-10 * scale
    assert np.allclose(res.nonconservative_work, ref.nonconservative_work, rtol=1e-8,
                       atol=1e-10)
    cb = res.statistics["callbacks"]
    assert cb["callables"] == CompiledSystem(arm(*kinds)).callbacks.names
    # one return per Newton iteration (the matrix's rows come with an iterate's values)
    assert cb["count"] == res.statistics["newton_iterations"]
    assert cb["time_s"] > 0 and cb["calls"] >= cb["count"]
    assert "callbacks" not in ref.statistics


def test_a_raising_callable_stops_the_run_with_the_numpy_paths_message():
    def flaky(t, state):
        if t > 0.05:
            raise RuntimeError("sensor lost")
        return pd(t, state)

    def model():
        system = arm()
        forces = [f if f.name != "pd" else replace(f, function=flaky)
                  for f in system.model.forces]
        return System(replace(system.model, forces=tuple(forces)))

    ref = _run(model(), "python", t_end=0.1)
    res = _run(model(), "compiled", t_end=0.1)
    assert not res.success and not ref.success
    assert res.message == ref.message
    assert "JointActuator 'pd': its function raised RuntimeError: sensor lost" in res.message
    assert res.t.size == ref.t.size and np.allclose(res.q, ref.q, rtol=1e-10, atol=1e-12)


def test_a_load_callable_of_the_wrong_shape_says_so():
    def model():
        system = arm("point")
        forces = [f if f.name != "push" else replace(
            f, value=lambda t, s: [1.0, 2.0] if t > 0.005 else [1.0, 2.0, 0.0])
            for f in system.model.forces]
        return System(replace(system.model, forces=tuple(forces)))

    res = _run(model(), "compiled", t_end=0.01)
    ref = _run(model(), "python", t_end=0.01)
    assert res.message == ref.message and "PointLoad 'push'" in res.message
    assert "the force must be 3 finite numbers, got [1.0, 2.0]" in res.message
    with pytest.raises(ModelError, match="3 finite numbers"):
        CompiledSystem(model()).residual(*_random_state(model(), np.random.default_rng(0)),
                                         0.01)


def test_the_pattern_holds_the_callables_rows_across_all_of_q():
    """A body a callable loads has its rows full in the iteration matrix's pattern (the
    sparse factorisation's nonzeros); the NumPy path's matrix has nothing off it."""
    from flexmbs.engine.factors import matrix_pattern

    system = arm(*ALL)
    cs = CompiledSystem(system, sparse=True)
    rows, cols, _, _ = matrix_pattern(cs.tables)
    on = np.zeros((system.n_q + system.n_c,) * 2, bool)
    on[rows, cols] = True
    q, qd, qdd, lam = _random_state(system, np.random.default_rng(3))
    mat = cs.iteration_matrix(q, qd, qdd, lam, 0.2, 3.0e5, 6.0e2)
    assert not np.any(mat[~on])
    k_t, c_t = residual_tangents(system, q, qd, qdd, lam, 0.2, sparse=False)
    assert not np.any((k_t + c_t)[~on[:system.n_q, :system.n_q]])
    res = _run(arm(*ALL), "compiled", t_end=0.05)
    ref = _run(arm(*ALL), "python", t_end=0.05)
    assert np.array_equal(res.steps.iterations, ref.steps.iterations)


def test_statistics_and_outputs_power_on_a_spring_with_a_controller():
    system = arm("spring")
    res = _run(system, "compiled", t_end=0.1)
    cb = res.statistics["callbacks"]
    assert cb["callables"] == ["pd", "muscle"]
    # each return evaluates both callables; a matrix rebuild 2 n_q + 3 more calls each
    n = system.n_q
    assert cb["calls"] >= 2 * cb["count"] + 2 * (2 * n + 3) * res.statistics["factorizations"]
