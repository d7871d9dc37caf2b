"""The pieces of the discrete adjoint (flexmbs.gradients, docs/gradients.md) at random
states of random models (every element kind, tests/test_compiled.random_model), each
against central differences: ∂F/∂p of every parameter kind (the residual, Φ and
Φ_q q̇ + Φ_t of the Systems at p ± h), the exact tangents K_t, C_t (servo rotors
included) and the velocity-constraint Jacobian Z, and the step Jacobian."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_compiled import random_model
from test_tangents import random_state

from flexmbs.assembly import System
from flexmbs.gradients.jacobian_source import TangentSource
from flexmbs.gradients.parameters import ModelModels, resolve
from flexmbs.gradients.residual_terms import Derivative, ParameterTerms, State
from flexmbs.gradients.step import AdjointSteps, Coefficients, StepJacobian
from flexmbs.gradients.tangents import exact_tangents, velocity_constraint_jacobian
from flexmbs.integrators.alpha import generalized_alpha

#: Central differences with step H of functions with O(1) third derivatives: ~H² + 1e-16/H.
H = 1e-6
RTOL = 1e-7


def parameter_keys(model) -> dict[str, list[str]]:
    """{element kind: keys} of the parameters of every element of ``model``."""
    out = {"gravity": ["gravity[0]", "gravity[1]"]}
    for name, body in model.bodies.items():
        if type(body).__name__ == "RigidBody":
            out.setdefault("rigid", []).extend(
                [f"bodies.{name}.mass", f"bodies.{name}.inertia[1,1]",
                 f"bodies.{name}.inertia[0,2]", f"bodies.{name}.com[1]"])
        elif hasattr(body, "data"):
            out.setdefault("flexible", []).extend(
                [f"bodies.{name}.stiffness_scale", f"bodies.{name}.damping_ratio[0]"])
    for f in model.forces:
        kind, key = type(f).__name__, f"forces.{f.name}"
        keys = {
            "SpringDamperActuator": ["stiffness", "damping", "free_length"]
            + (["actuator.coefficients[1]"] if f.__dict__.get("actuator") else []),
            "RotationalSpringDamper": ["stiffness", "damping", "angle0"],
            "Bushing": ["stiffness[1]", "rotational_damping[2]", "preload_torque[0]"],
            "JointServo": ["kp", "kd", "reference.coefficients[2]", "torque_limit"]
            + (["motor.efficiency"] if f.__dict__.get("motor") else []),
            "JointActuator": ["profile.coefficients[0]"
                              if hasattr(f.__dict__.get("profile"), "coefficients")
                              else "profile.value"],
            "PointLoad": ["value[1]"], "DistributedLoad": ["value[2]"],
        }.get(kind, [])
        out.setdefault(kind, []).extend(f"{key}.{k}" for k in keys)
    for d in model.drives:
        field = "coefficients[1]" if hasattr(d.profile, "coefficients") else "omega"
        out.setdefault(f"drive ({d.kind})", []).append(f"drives.{d.name}.profile.{field}")
    return out


def equations(system, state):
    """(r, Φ, Φ_q q̇ + Φ_t) at ``state``, from a fresh angle memory."""
    system.angle_memory = {}
    r, phi, jac = system.dynamic_residual(state.q, state.qd, state.qdd, state.lam, state.t,
                                          sparse=False)
    return np.concatenate([r, phi, np.asarray(jac @ state.qd).ravel()
                           + system.phi_t(state.q, state.t)])


@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
def test_parameter_derivatives_of_every_kind_against_differences(seed):
    system = random_model(seed)
    rng = np.random.default_rng(seed)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
    state = State(t, q, qd, qdd, lam)
    source = ModelModels(system.model)
    for kind, keys in parameter_keys(system.model).items():
        for key in keys:
            (par,), _ = resolve([key], source)
            plus, minus, span = par.variants()
            terms = ParameterTerms(system, par.tangent(), plus, minus, span, key)
            assert terms.how.startswith("analytic"), key
            system.angle_memory = {}
            out = terms.evaluate(state, Derivative(system.n_q, system.n_c))
            analytic = np.concatenate([out.r, out.phi, out.vel])
            h = 1e-4 * (abs(par.value) if par.value else 1.0)
            try:
                lo_model, width = par.model_at(par.value - h), 2 * h
            except Exception:  # at a bound (a damping ratio of 0): one-sided
                lo_model, width = par.model_at(par.value), h
            fd = (equations(System(par.model_at(par.value + h)), state)
                  - equations(System(lo_model), state)) / width
            scale = max(np.abs(fd).max(), 1e-9)
            np.testing.assert_allclose(analytic, fd, rtol=0, atol=1e-6 * scale,
                                       err_msg=f"{kind}: {key}")


def _central(fun, x, h=H):
    return np.column_stack([(fun(x + h * e) - fun(x - h * e)) / (2 * h)
                            for e in np.eye(x.size)])


@settings(max_examples=8, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
def test_exact_tangents_and_velocity_jacobian_against_differences(seed):
    """K_t, C_t (with servo rotors and profile actuators) and Z against central
    differences of the residual and of Φ_q q̇ + Φ_t."""
    system = random_model(seed)
    rng = np.random.default_rng(seed)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)

    def residual(qq, qqd):
        system.angle_memory = {}
        return system.dynamic_residual(qq, qqd, qdd, lam, t, sparse=False)[0]

    system.angle_memory = {}
    k_t, c_t = exact_tangents(system, q, qd, qdd, lam, t)
    k_fd = _central(lambda x: residual(x, qd), q)
    c_fd = _central(lambda x: residual(q, x), qd)
    np.testing.assert_allclose(k_t, k_fd, rtol=0, atol=RTOL * max(1.0, np.abs(k_fd).max()))
    np.testing.assert_allclose(c_t, c_fd, rtol=0, atol=10 * RTOL * max(1.0,
                                                                        np.abs(c_fd).max()))
    z = velocity_constraint_jacobian(system, q, qd, t)
    z_fd = _central(lambda x: np.asarray(system.jacobian(x, t, sparse=False) @ qd).ravel()
                    + system.phi_t(x, t), q)
    np.testing.assert_allclose(z, z_fd, rtol=0, atol=RTOL * max(1.0, np.abs(z_fd).max()))


@settings(max_examples=8, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
@example(seed=3)  # a torque servo with a rotor: the kernel's tangents and its correction
def test_compiled_step_matrices_are_the_exact_ones(seed):
    """M, K_t, C_t and Φ_q from the compiled engine's iteration matrices (servo rotors and
    callables completed in NumPy) equal the NumPy ones to round-off of the step's scaled
    matrix, and Z from the difference of Φ_q along the motion equals the bilinear forms'
    to 1e-7, at random states of random models of every kind."""
    system = random_model(seed)
    rng = np.random.default_rng(seed)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
    state = State(t, q, qd, qdd, lam)
    coef = Coefficients.of(generalized_alpha(0.8), 1e-3)
    bp, gp = coef.bp, coef.gp
    compiled, numpy_ = TangentSource(system, "compiled"), TangentSource(system, "python")
    assert compiled.engine == "compiled"
    system.angle_memory = {}
    ref = numpy_.pieces(state, bp, gp)
    system.angle_memory = {}
    got = compiled.pieces(state, bp, gp)
    mass, k_t, c_t, jac = ref
    scale = np.abs(mass).max() + np.abs(k_t).max() / bp + gp / bp * np.abs(c_t).max()
    for name, a, b, unit in (("M", got[0], mass, 1.0), ("K_t", got[1], k_t, bp),
                             ("C_t", got[2], c_t, bp / gp), ("Φ_q", got[3], jac, 0.0)):
        atol = 1e-12 * (unit * scale if unit else np.abs(jac).max())
        np.testing.assert_allclose(a, b, rtol=0, atol=atol, err_msg=name)
    z_ref = numpy_.velocity_jacobian(state, coef.h)
    z = compiled.velocity_jacobian(state, coef.h)
    np.testing.assert_allclose(z, z_ref, rtol=0, atol=1e-7 * max(1.0, np.abs(z_ref).max()))


@pytest.mark.parametrize("shift", [0.0, 1e4])
@pytest.mark.parametrize("seed", [3, 27])  # torque servos with a rotor (27: on a flexible body)
def test_compiled_rotor_tangents_wherever_the_bodies_are(seed, shift):
    """The kernel's exact rotor tangents (servo_rotor_tangents_into: a central difference
    along the rotations' and modes' rates) equal the NumPy closed form (gradients.rotor)
    to 1e-9 of the rotor's own terms (and round-off of the whole matrix), with the bodies
    at the origin and 10 km away (the positions enter neither g nor its step)."""
    from flexmbs.gradients.rotor import rotor_correction

    system = random_model(seed)
    rng = np.random.default_rng(seed)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
    for sl in system.slices:
        q[sl.start:sl.start + 3] += shift
    state = State(t, q, qd, qdd, lam)
    coef = Coefficients.of(generalized_alpha(0.8), 1e-3)
    servos = [f for f in system.model.forces
              if getattr(f, "element_kind", None) == "joint_servo" and f.reflected_inertia
              and f.kind == "torque"]
    assert servos
    size = [0.0, 0.0]
    for servo in servos:
        system.angle_memory = {}
        _, k_r, c_r = rotor_correction(system, servo, q, qd, qdd)
        size = [max(size[0], np.abs(k_r).max()), max(size[1], np.abs(c_r).max())]
    system.angle_memory = {}
    ref = TangentSource(system, "python").pieces(state, coef.bp, coef.gp)
    system.angle_memory = {}
    got = TangentSource(system, "compiled").pieces(state, coef.bp, coef.gp)
    for k, name in ((1, "K_t"), (2, "C_t")):  # (+ the round-off of the whole matrix,
        atol = 1e-9 * size[k - 1] + 1e-14 * np.abs(ref[k]).max()  # its lever arms 1e4)
        np.testing.assert_allclose(got[k], ref[k], rtol=0, atol=atol, err_msg=name)


def states_with_memories(system, rng, count: int):
    """``count`` random states 0.01 s apart, each with an angle memory of its own: the
    springs' angles there, shifted by 2π (k − 1) (another turn each)."""
    states, memories = [], []
    for k in range(count):
        q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
        states.append(State(t + 0.01 * k, q, qd, qdd, lam))
        system.angle_memory = {}
        system.dynamic_residual(q, qd, qdd, lam, t + 0.01 * k)
        memories.append({name: value + 2 * np.pi * (k - 1)
                         for name, value in system.angle_memory.items()})
    return states, memories


@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
@example(seed=0)  # rotational springs: their angle memory taken per state
@example(seed=3)  # a torque servo with a rotor
def test_pieces_of_many_states_in_one_call_equal_those_taken_one_by_one(seed):
    """TangentSource.pieces_many (one kernel call for M, K_t, C_t and Φ_q of all the
    states, one for Φ_q at q ± ε q̇ of all) completed by ``pieces`` equals ``pieces`` and
    ``velocity_jacobian`` taken state by state, each state with its own angle memory
    (the rotational springs' turns: a wrong memory moves K_t by k (θ − θ0) ∂g/∂q); the
    step equations it gives beside them equal the kernel's task for those alone."""
    system = random_model(seed)
    rng = np.random.default_rng(seed)
    source = TangentSource(system, "compiled")
    assert source.batched
    coef = Coefficients.of(generalized_alpha(0.8), 1e-3)
    states, memories = states_with_memories(system, rng, 4)
    raws = source.pieces_many(states, memories, [coef.h] * 4, True)
    # the step equations the same call gives, against the kernel's task for them alone
    alone = source.compiled.pieces_many(*raws.stacked, "equations")
    np.testing.assert_allclose(raws.equations, alone, rtol=0,
                               atol=1e-13 * max(1.0, np.abs(alone).max()))
    # into the source's buffer: a call of more states first, its rows scribbled on (as
    # NumPy's completions write into them), then fewer: zeroed, the rows of their own
    first = source.pieces_many(states + states, memories + memories, [coef.h] * 8, True,
                               True)
    first.rows[:] = 7.0
    reused = source.pieces_many(states[::-1], memories[::-1], [coef.h] * 4, True, True)
    np.testing.assert_array_equal(reused.rows, raws.rows[::-1])
    assert reused.current and not first.current
    for st_, memory, raw in zip(states, memories, raws, strict=True):
        system.angle_memory = dict(memory)
        one = source.pieces(st_, coef.bp, coef.gp)
        z_one = source.velocity_jacobian(st_, coef.h)
        system.angle_memory = dict(memory)
        many = source.pieces(st_, coef.bp, coef.gp, raw)
        for name, a, b in zip(("M", "K_t", "C_t", "Φ_q"), many, one, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-13 * max(1.0, np.abs(b).max()),
                                       err_msg=name)
        np.testing.assert_allclose(raw[4], z_one, rtol=0,
                                   atol=1e-9 * max(1.0, np.abs(z_one).max()))


class _NoSensor:
    """A probe whose sensor reads no model field (PreparedParameter asks)."""

    def depends_on(self, tangent) -> bool:
        return False


@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
@example(seed=0)  # rotational springs (their turns), distributed loads
@example(seed=4)  # a flexible body: its stiffness scale with damping ratios held
def test_chunk_derivatives_equal_the_analytic_terms(seed):
    """∂F/∂p of a chunk of states from the compiled equations of the model moved along
    the parameter's tangent line (chunk_terms.ChunkDerivatives) equals the per-kind
    analytic terms state by state, for every parameter of every kind the chunk takes
    (each state with its own angle memory); the others are left to the analytic terms."""
    import dataclasses

    from flexmbs.gradients.chunk_terms import ChunkDerivatives, polynomial
    from flexmbs.gradients.prepared import PreparedParameter

    model = random_model(seed).model
    rng = np.random.default_rng(seed)
    bodies = {name: dataclasses.replace(body, data=body.data.with_damping(
        ratio=rng.uniform(0.01, 0.05, body.data.n_modes))) if hasattr(body, "data") else body
        for name, body in model.bodies.items()}  # D_ff through ω: held as K_ff moves
    system = System(dataclasses.replace(model, bodies=bodies))
    source = TangentSource(system, "compiled")
    states, memories = states_with_memories(system, rng, 3)
    models, taken = ModelModels(system.model), 0
    for kind, keys in parameter_keys(system.model).items():
        for key in keys:
            (par,), _ = resolve([key], models)
            prep = PreparedParameter(par, system, {}, _NoSensor())
            chunk = ChunkDerivatives(system, source, [prep])
            if chunk.plans[0] is None:
                # not polynomial, nothing moved, a rigid body's I_c refused at p ± Δ, or
                # callables
                assert (not polynomial(prep.terms) or not prep.terms.terms
                        or kind == "rigid" or source.numpy_forces), key
                continue
            taken += 1
            for index2 in (False, True):
                got = chunk.at(states, memories, index2)[0]
                for st_, memory, row in zip(states, memories, got, strict=True):
                    if np.isnan(row[0]):  # not linear over ±Δ: the analytic terms
                        assert chunk.plans[0][0] == "checked", key
                        continue
                    system.angle_memory = dict(memory)
                    ref = prep.step_derivative(st_, index2)
                    np.testing.assert_allclose(row, ref, rtol=0,
                                               atol=1e-9 * max(1.0, np.abs(ref).max()),
                                               err_msg=f"{kind}: {key}")
    assert taken >= 4


@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
@example(seed=0)  # rotational springs (their turns), distributed loads
@example(seed=3)  # a torque servo with a rotor (its inertia term is the servo's)
def test_force_kinds_part_is_the_step_equations_less_those_without_forces(seed):
    """The many-state task "forces" (the force kinds' part of r alone, what a force's
    parameter moves: chunk_terms.forces_alone) equals r of the model less r of the same
    model without its forces, both from the whole step equations, at states with their
    own angle memories; its other rows are zero."""
    import dataclasses

    from flexmbs.gradients.chunk_terms import _compiled
    from flexmbs.gradients.residual_terms import stacked_states

    system = random_model(seed)
    if not system.model.forces:
        return
    rng = np.random.default_rng(seed)
    bare = System(dataclasses.replace(system.model, forces=()), **system.overrides)
    whole, alone = _compiled(system), _compiled(bare)
    if whole is None:  # callables: evaluated state by state
        return
    states, memories = states_with_memories(system, rng, 3)
    chunk = stacked_states(states, memories, whole.torsion_names)
    got = whole.pieces_many(*chunk, "forces")
    ref = (whole.pieces_many(*chunk, "equations")
           - alone.pieces_many(*stacked_states(states, memories, []), "equations"))
    n = system.n_q
    scale = max(1.0, np.abs(ref[:, :n]).max())
    np.testing.assert_allclose(got[:, :n], ref[:, :n], rtol=0, atol=1e-12 * scale)
    assert np.abs(got[:, :n]).max() > 0
    assert not got[:, n:].any()


@settings(max_examples=4, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
@example(seed=4)  # a flexible body
def test_modal_parameters_rows_are_the_compiled_equations_difference(seed):
    """A flexible body's stiffness scale and damping ratio (with the other bodies' ratios
    held) move K_ff and D_ff alone, so the chunk takes their ∂F/∂p as dK_ff ξ + dD_ff ξ̇
    on the ξ rows (plan "modal", no model moved): equal, at every state of a chunk in both
    forms, to the difference of the compiled step equations between the model moved
    along the parameter's tangent line and the model (exact: F is affine in K_ff, D_ff)."""
    import dataclasses

    from flexmbs.gradients.chunk_terms import ChunkDerivatives, _compiled, _equations
    from flexmbs.gradients.model_diff import moved
    from flexmbs.gradients.prepared import PreparedParameter
    from flexmbs.gradients.residual_terms import stacked_states

    model = random_model(seed).model
    rng = np.random.default_rng(seed)
    bodies = {name: dataclasses.replace(body, data=body.data.with_damping(
        ratio=rng.uniform(0.01, 0.05, body.data.n_modes))) if hasattr(body, "data") else body
        for name, body in model.bodies.items()}
    system = System(dataclasses.replace(model, bodies=bodies))
    keys = parameter_keys(system.model).get("flexible", [])
    if not keys:
        return
    source = TangentSource(system, "compiled")
    states, memories = states_with_memories(system, rng, 3)
    models = ModelModels(system.model)
    for key in keys:
        (par,), _ = resolve([key], models)
        prep = PreparedParameter(par, system, {}, _NoSensor())
        chunk = ChunkDerivatives(system, source, [prep])
        assert chunk.plans[0][0] == "modal", key
        delta = 0.5 * max(abs(par.value), 1.0)
        end = _compiled(System(moved(system.model, prep.tangent, delta), **prep.overrides))
        stacked = stacked_states(states, memories, chunk.torsion_names)
        for index2 in (False, True):
            got = chunk.at(states, memories, index2)[0]
            ref = (_equations(end, stacked, index2)
                   - _equations(source.compiled, stacked, index2)) / delta
            scale = max(1.0, np.abs(ref).max())
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8 * scale, err_msg=key)
            assert np.abs(got).max() > 0, key


@settings(max_examples=30, deadline=None, derandomize=True)
@given(slope=st.floats(-5, 5), kink=st.floats(-3, 3), bend=st.floats(0.5, 4),
       scale=st.floats(1e-3, 1e3))
def test_checked_differences_keep_only_what_is_linear_over_the_span(slope, kink, bend,
                                                                      scale):
    """chunk_terms._checked on F(p) = scale (slope p + max(0, bend (p − kink))) (a
    saturation's kink) and G(p) = scale p² at p = 1, Δ = 0.25: the exact slope where no
    kink lies within ±Δ, NaN where one does, and NaN for the curve."""
    from flexmbs.gradients.chunk_terms import _checked

    def f(p):
        return scale * np.array([slope * p + max(0.0, bend * (p - kink)), p * p])

    p, delta = 1.0, 0.25
    rows = [f(p + delta), f(p - delta)]
    both = _checked(f(p)[None, :], [r[None, :] for r in rows], delta)[0]
    assert np.isnan(both).all()  # a row is linear or not as a whole: the curve in it
    only = _checked(f(p)[None, :1], [r[None, :1] for r in rows], delta)[0]
    if abs(kink - p) > delta:
        assert only[0] == pytest.approx(scale * (slope + (bend if p > kink else 0.0)),
                                        rel=1e-12, abs=1e-12 * scale * (6 + bend))
    elif abs(kink - p) < delta - 1e-6:
        assert np.isnan(only[0])


def _chunk(kind: str, index2: bool, seed: int, steps_h):
    """(System, rng, TangentSource, states, Coefficients, AdjointSteps) of a chunk of
    random states of tests/test_gradients.py's small model ``kind`` (or, for
    "rotor", test_compiled's random model 37: a force servo with a rotor, whose
    tangents NumPy completes), one per step size in ``steps_h`` [s], on the compiled
    pieces taken together."""
    from test_gradients import small_model

    system = random_model(37) if kind == "rotor" else System(small_model(kind, 5)[0])
    rng = np.random.default_rng(seed)
    source = TangentSource(system, "compiled")
    states, coefs = [], []
    for h in steps_h:
        q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
        states.append(State(t, q, qd, qdd, lam))
        coefs.append(Coefficients.of(generalized_alpha(0.8), h))
    memories = [{}] * len(states)
    raws = source.pieces_many(states, memories, [c.h for c in coefs], index2)
    steps = AdjointSteps(system, states, coefs, memories, index2, source, raws)
    return system, rng, source, states, coefs, steps


@pytest.mark.parametrize("kind", ["flexible", "servo", "drive"])
@pytest.mark.parametrize("index2", [False, True])
def test_adjoint_steps_built_together_equal_step_jacobians(index2, kind):
    """AdjointSteps (a chunk's matrices assembled as stacked arrays, P from one stacked
    solve) gives StepJacobian's Jᵀ solve, L_xᵀ and F_yᵀ products at each step of the
    chunk, to round-off, on the compiled pieces taken together and one by one."""
    system, rng, source, states, coefs, steps = _chunk(kind, index2, 7, [1e-2, 2e-2, 3e-2])
    n, m = system.n_q, system.n_c
    for i, (st_, coef) in enumerate(zip(states, coefs, strict=True)):
        system.angle_memory = {}
        one = StepJacobian(system, st_, coef, index2, source)
        assert steps.size == one.size
        bars = [rng.normal(size=n) for _ in range(4)] + [rng.normal(size=m)]
        rhs = one.unknown_cotangent(coef, *bars)
        np.testing.assert_allclose(steps.unknown_cotangent(i, coef, *bars), rhs,
                                   rtol=1e-13, atol=1e-13)
        mu = one.solve_transposed(rhs)
        got = steps.solve_transposed(i, rhs)
        np.testing.assert_allclose(got, mu, rtol=0, atol=1e-10 * np.abs(mu).max())
        for a, b in zip(steps.state_cotangents(i, mu), one.state_cotangents(mu),
                        strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * max(1.0, np.abs(b).max()))
        # the sweep's fused step: μ, then L_yᵀ(ỹ − F_yᵀμ), as the products above in turn
        mu_back, after = steps.back(i, coef, bars[:4], bars[4])
        np.testing.assert_allclose(mu_back, mu, rtol=0, atol=1e-10 * np.abs(mu).max())
        f_q, f_qd = one.state_cotangents(mu)
        ref = coef.pull_back(bars[0] - f_q, bars[1] - f_qd, bars[3])
        for a, b in zip(after, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-10 * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("kind", ["flexible", "servo", "rotor"])
@pytest.mark.parametrize("index2", [False, True])
def test_kernel_sweep_of_a_chunk_equals_its_steps_one_by_one(index2, kind):
    """AdjointSteps.sweep (the chunk's backward steps in one kernel call, each J factored
    by the kernel's own LU) against AdjointSteps.back step after step (LAPACK's factors,
    NumPy products), with random objective terms added at each step's end: every μ
    and the cotangents after the chunk, to round-off."""
    system, rng, source, _, coefs, steps = _chunk(kind, index2, 11,
                                                  [1e-3, 2e-3, 1e-3, 2e-3])
    assert bool(source.numpy_forces) == (kind == "rotor")  # NumPy completes the rows
    n, m = system.n_q, system.n_c
    sensor = rng.normal(size=(len(coefs), 3 * n + m))
    bars = tuple(rng.normal(size=n) for _ in range(4))
    mus, after = steps.sweep(bars, sensor)
    ref = bars
    for i, coef in enumerate(coefs):
        s = sensor[i]
        ref = (ref[0] + s[:n], ref[1] + s[n:2 * n], ref[2] + s[2 * n:3 * n], ref[3])
        mu, ref = steps.back(i, coef, ref, s[3 * n:])
        np.testing.assert_allclose(mus[i], mu, rtol=0, atol=1e-10 * np.abs(mu).max())
    for a, b in zip(after, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10 * np.abs(b).max())
        assert np.abs(b).max() > 0


@pytest.mark.parametrize("index2", [False, True])
def test_a_singular_step_jacobian_stops_both_sweeps_naming_the_time(index2):
    """test_compiled's random model 18 has redundant constraints (random joints between
    any markers): its step Jacobian is singular. The kernel's sweep of a chunk stops at
    the first step with the ConvergenceError naming its time, as the step-by-step sweep
    does (LAPACK finds an exact zero pivot there; the kernel's LU a pivot of round-off
    size, which it takes as zero). In index 2, P's stacked solve stops both first."""
    from flexmbs.errors import ConvergenceError

    system = random_model(18)
    rng = np.random.default_rng(2)
    source = TangentSource(system, "compiled")
    states, coefs = [], []
    for h in (1e-3, 2e-3):
        q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
        states.append(State(t, q, qd, qdd, lam))
        coefs.append(Coefficients.of(generalized_alpha(0.8), h))
    memories = [{}] * 2
    n, m = system.n_q, system.n_c
    bars = tuple(rng.normal(size=n) for _ in range(4))
    raws = source.pieces_many(states, memories, [c.h for c in coefs], index2)

    def steps():  # (in index 2, P's stacked solve meets the singular matrix first)
        return AdjointSteps(system, states, coefs, memories, index2, source, raws)

    with pytest.raises(ConvergenceError, match=f"t = {states[0].t:.6g} s is singular"):
        steps().sweep(bars, np.zeros((2, 3 * n + m)))
    with pytest.raises(ConvergenceError, match=f"t = {states[0].t:.6g} s is singular"):
        steps().back(0, coefs[0], bars, np.zeros(m))


@pytest.mark.parametrize("engine", ["python", "compiled"])
@pytest.mark.parametrize("kind", ["flexible", "servo", "drive"])
@pytest.mark.parametrize("index2", [False, True])
def test_step_jacobian_is_the_derivative_of_the_step_equations(index2, kind, engine):
    """J x and Jᵀ μ of StepJacobian (from the NumPy tangents or the compiled matrices)
    against central differences of F(y_{n+1}(x)) over the unknowns x = (q̈, λ[, μ])
    (y_{n+1} = L_x x + L_y y_n), on the small models of tests/test_gradients.py at
    random states."""
    from test_gradients import small_model

    system = System(small_model(kind, 5)[0])
    rng = np.random.default_rng(4)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
    coef = Coefficients.of(generalized_alpha(0.8), 1e-2)
    state = State(t, q, qd, qdd, lam)
    jac = StepJacobian(system, state, coef, index2, TangentSource(system, engine))
    n, m = system.n_q, system.n_c

    def equations_of(x):
        dq, dqd, dqdd, _, dlam = jac.expand(coef, x)
        out = equations(system, State(t, q + dq, qd + dqd, qdd + dqdd, lam + dlam))
        r, phi, vel = out[:n], out[n:n + m], out[n + m:]
        return np.concatenate([r, vel, phi] if index2 else [r, phi])

    dense = _central(equations_of, np.zeros(jac.size), 1e-5)
    explicit = np.linalg.inv(jac.solve(np.eye(jac.size)))  # J from its solves
    np.testing.assert_allclose(explicit, dense, rtol=0, atol=1e-7 * np.abs(dense).max())
    probe = rng.normal(size=jac.size)
    np.testing.assert_allclose(jac.solve_transposed(explicit.T @ probe), probe, rtol=0,
                               atol=1e-6)


@pytest.mark.parametrize("spec", [
    ("marker", "position", "link.T", None, "y"), ("marker", "velocity", "link.T", None, "x"),
    ("marker", "angular_velocity", "link.T", None, "z"),
    ("joint", "angle", "hinge", None, None), ("joint", "angle_rate", "hinge", None, None),
    ("modal", "coordinates", "beam", None, "xi2"), ("node", "displacement", "beam", 3, "z"),
    ("node", "velocity", "beam", 3, "y"), ("reaction", "force", "weld", None, "x"),
    ("energy", "kinetic", "beam", None, None)])
def test_sensor_gradients_exact_against_differences(spec):
    """The sensor probe's exact gradients (kinematic kinds) equal its central differences
    over the coordinates and multipliers the sensor reads (the path of the other kinds,
    which have no exact one), at a random state of the flexible pendulum."""
    from test_gradients import small_model

    from flexmbs.gradients.sensor_probe import SensorProbe

    kind, quantity, target, node, component = spec
    key = {"marker": "marker", "joint": "joint", "reaction": "joint"}.get(kind, "body")

    def add(b):
        b.add_sensor("s", kind, quantity, node=node, **{key: target},
                     **({"frame": "body"} if kind == "node" else {}))

    system = System(small_model("flexible", 2, add)[0])
    rng = np.random.default_rng(1)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
    probe = SensorProbe(system, "s", component)
    state = State(t, q, qd, qdd, lam)
    exact = probe._exact_gradient(state)
    if kind in ("reaction", "energy"):
        assert exact is None
        return
    diff = probe._difference_gradient(state)
    for a, b in zip(exact, diff, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-7 * max(1.0, np.abs(b).max()))
