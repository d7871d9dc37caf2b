"""Analytic Newton tangents K_t = ∂r/∂q, C_t = ∂r/∂q̇ of r = M q̈ + Φ_qᵀλ − Q against
central finite differences of the residual at random states (random unit Euler
parameters, ξ, q̇, q̈, λ): rigid and flexible bodies in every coupling mode, every joint
and drive, every force type, the finite-difference fallback for user callables, the
whole system against the integrator's finite-difference path, and simulations with both
(flexmbs.assembly.tangents, docs/theory_ffrf.md §1–3, §5–9)."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_flexible_body import flexible_pair, random_modal
from test_joints_fd import KINDS, two_body_model

import flexmbs.assembly.tangents as tangents_module
from flexmbs.assembly import System
from flexmbs.assembly.tangents import residual_tangents
from flexmbs.elements.floating_frame_reference import _mode_qbar, _qs, frame_inertia, qbar_bilinear
from flexmbs.errors import ValidationError
from flexmbs.frame import rotations as rot
from flexmbs.frame.coupling import Coupling
from flexmbs.integrators import simulate
from flexmbs.integrators.alpha import generalized_alpha
from flexmbs.integrators.simulate import AlphaIntegrator
from flexmbs.modal import ModalData
from flexmbs.model import ModelBuilder, Polynomial, SpinUp
from flexmbs.model.joints import JOINT_EQUATIONS

#: Central differences (step H) of a residual whose third derivatives are O(1): the
#: truncation error is ~H² and the round-off ~1e-16·|r|/H ≈ 1e-10 relative, so 1e-7
#: relative to the largest entry leaves a margin of ~100 over both.
H = 1e-6
RTOL_CENTRAL = 1e-7
#: Forward differences (the integrator's and the callable fallback's step 1e-7·max(1, |q|))
#: are first order: error ~1e-7 × second derivative, so 1e-5 relative to the largest entry.
RTOL_FORWARD = 1e-5
MODES = [m.value for m in Coupling]


def residual(system, q, qd, qdd, lam, t):
    return (system.mass_matrix(q, sparse=False) @ qdd
            + system.jacobian(q, t, sparse=False).T @ lam - system.forces(q, qd, t))


def central_tangents(system, q, qd, qdd, lam, t):
    cols_k, cols_c = [], []
    for e in np.eye(system.n_q):
        cols_k.append((residual(system, q + H * e, qd, qdd, lam, t)
                       - residual(system, q - H * e, qd, qdd, lam, t)) / (2 * H))
        cols_c.append((residual(system, q, qd + H * e, qdd, lam, t)
                       - residual(system, q, qd - H * e, qdd, lam, t)) / (2 * H))
    return np.column_stack(cols_k), np.column_stack(cols_c)


def random_state(system, rng, scale=0.3, t=None):
    """q near q0 with every body's Euler parameters normalised, random q̇, q̈, λ, t."""
    q = system.q0 + scale * rng.normal(size=system.n_q)
    for sl in system.slices:
        q[sl.start + 3:sl.start + 7] /= np.linalg.norm(q[sl.start + 3:sl.start + 7])
    qd, qdd = rng.normal(size=system.n_q), rng.normal(size=system.n_q)
    lam = rng.normal(size=system.n_c)
    return q, qd, qdd, lam, float(rng.uniform(0, 1.5) if t is None else t)


def assert_tangents_match(system, state, rtol=RTOL_CENTRAL):
    k, c = residual_tangents(system, *state)
    k_fd, c_fd = central_tangents(system, *state)
    np.testing.assert_allclose(k, k_fd, rtol=0, atol=rtol * max(1.0, np.max(np.abs(k_fd))))
    np.testing.assert_allclose(c, c_fd, rtol=0, atol=rtol * max(1.0, np.max(np.abs(c_fd))))
    return k, c


# ------------------------------------------------------------------ rotation helpers
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_rotation_derivative_helpers_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    p, pd, x = rng.normal(size=4), rng.normal(size=4), rng.normal(size=3)
    vecs, weights = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    shapes = rng.normal(size=(4, 3, 3))

    def fd(fun):
        return np.column_stack([(fun(p + H * e) - fun(p - H * e)) / (2 * H)
                                for e in np.eye(4)])

    def close(actual, expected):  # the central-difference tolerance of this module
        np.testing.assert_allclose(actual, expected, rtol=0,
                                   atol=RTOL_CENTRAL * max(1.0, np.max(np.abs(expected))))

    close(rot.d_rotated_transpose(p, x), fd(lambda pp: rot.rotation_matrix(pp).T @ x))
    close(rot.g_bar_t_jac(x), fd(lambda pp: rot.g_bar(pp).T @ x))
    close(rot.g_global_t_jac(x), fd(lambda pp: rot.g_global(pp).T @ x))

    def grad(pp):  # ∂/∂p of Σ_k w_kᵀ A(p) s_k
        return sum(weights[k] @ rot.d_rotated(pp, vecs[k]) for k in range(4))

    close(rot.rotated_hessian(vecs, weights), fd(grad))
    xi = rng.normal(size=3)
    mixed = np.column_stack([
        (sum(weights[k] @ rot.d_rotated(p, shapes[k] @ (xi + H * e)) for k in range(4))
         - sum(weights[k] @ rot.d_rotated(p, shapes[k] @ (xi - H * e)) for k in range(4)))
        / (2 * H) for e in np.eye(3)])
    close(rot.rotated_mixed(p, shapes, weights), mixed)
    np.testing.assert_allclose(rot.rotation_rate(p, pd) @ x, rot.d_rotated(p, x) @ pd,
                               rtol=1e-13, atol=1e-13)


# ------------------------------------------------------------------ bodies
@pytest.mark.parametrize("com", [(0.0, 0.0, 0.0), (0.12, -0.3, 0.2)])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_rigid_body_tangents(seed, com):
    """Mass term (with and without a CoM offset), quadratic velocity vector, gravity."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(gravity=rng.normal(size=3) * 5)
    b.add_rigid_body("b", 2.0, [0.1, 0.2, 0.25], com=com,
                     orientation=rot.rotation_matrix(rot.axis_angle(rng.normal(size=3), 1)))
    system = System(b.finalize())
    assert_tangents_match(system, random_state(system, rng))


def _flexible_data(kind: str, seed: int) -> ModalData:
    from conftest import make_modal_kwargs

    if kind == "lumped, no psi":
        return ModalData(**make_modal_kwargs(n_modes=3, seed=seed))
    if kind == "lumped, psi":
        return random_modal(seed, six_dof=False)[0]
    return random_modal(seed, six_dof=True)[0]  # 6-DOF consistent mass (case II), psi


@pytest.mark.parametrize("data_kind", ["lumped, no psi", "lumped, psi", "6-dof mass, psi"])
@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_flexible_body_tangents(seed, mode, data_kind):
    """Mass term, Q_v (general case-II form), gravity, K_ff, D_ff in every coupling mode."""
    rng = np.random.default_rng(seed)
    data = _flexible_data(data_kind, seed % 50)
    data = replace(data, damping_ratio=np.full(data.n_modes, 0.05))  # D_ff ≠ 0
    b = ModelBuilder(gravity=rng.normal(size=3) * 5)
    b.add_flexible_body("f", data, coupling=mode,
                        orientation=rot.rotation_matrix(rot.axis_angle(rng.normal(size=3), 1)))
    system = System(b.finalize())
    q, qd, qdd, lam, t = random_state(system, rng)
    if mode == "rigid":
        q[7:] = qd[7:] = 0.0
    assert_tangents_match(system, (q, qd, qdd, lam, t))


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_bilinear_qbar_reproduces_the_quadratic_velocity_vector(seed, mode):
    """B(w, w) of the tangent kernel is the Q̄ the dynamics use (docs/theory_ffrf.md §3)."""
    rng = np.random.default_rng(seed)
    data = random_modal(seed % 50, six_dof=True)[0]
    inv, n = data.invariants, data.n_modes
    xi, w = rng.normal(size=n) * 0.3, rng.normal(size=6 + n)
    fi = frame_inertia(inv, data.M_ff, xi, Coupling(mode))
    full = qbar_bilinear(fi.mbar_full, fi.N, _qs(fi.Q, xi), w[:, None], w[:, None])[:, 0]
    expected = _mode_qbar(inv, data.M_ff, w, xi, w[6:], Coupling.TWO_WAY)
    np.testing.assert_allclose(full, expected, rtol=0, atol=1e-12 * np.max(np.abs(expected)))


# ------------------------------------------------------------------ constraints
@pytest.mark.parametrize("placement", ["bodies", "ground_i", "ground_j"])
@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_constraint_tangents_on_rigid_bodies(seed, kind, placement):
    """Σ λ_k ∂²Φ_k/∂q² of every joint, both drive kinds and a coordinate drive, plus the
    normalization rows (2λI)."""
    system, rng = two_body_model(seed, kind, placement)
    assert_tangents_match(system, random_state(system, rng))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", [*sorted(JOINT_EQUATIONS), "rotation-drive"])
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_constraint_tangents_on_flexible_markers(seed, kind, mode):
    """Node markers and interface markers (odd/even seeds), with rotational shapes; in
    one-way and rigid modes the markers sit at ξ = 0."""
    system, rng = flexible_pair(seed, kind)
    system = System(system.model, coupling=mode)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.2)
    if mode == "rigid":
        q[14:] = qd[14:] = 0.0
    assert_tangents_match(system, (q, qd, qdd, lam, t))


# ------------------------------------------------------------------ forces
FORCES = ["spring", "spring+profile", "rotational", "point force", "point force (marker)",
          "point torque", "point torque (marker)", "distributed (global)",
          "distributed (body)"]


def force_model(seed, force, mode, where):
    """Rigid body a (CoM offset) and flexible body f (6-DOF mass, psi) with one force;
    ``where`` puts the (first) marker on the rigid or the flexible body."""
    data, _ = random_modal(seed % 50)
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    b.add_rigid_body("a", 1.5, [0.3, 0.2, 0.4], position=rng.normal(size=3), com=(0.1, 0, -.2),
                     orientation=rot.rotation_matrix(rot.axis_angle(rng.normal(size=3), 1.0)))
    b.add_flexible_body("f", data, position=rng.normal(size=3), coupling=mode,
                        orientation=rot.rotation_matrix(rot.axis_angle(rng.normal(size=3), .7)))
    b.add_marker("a", "m", rng.normal(size=3),
                 rot.rotation_matrix(rot.axis_angle(rng.normal(size=3), 2.0)))
    b.add_marker("f", "n", node=3,
                 orientation=rot.rotation_matrix(rot.axis_angle(rng.normal(size=3), 1.3)))
    b.add_marker("f", "i", node_set="face",
                 orientation=rot.rotation_matrix(rot.axis_angle(rng.normal(size=3), 0.4)))
    b.add_marker("ground", "g", rng.normal(size=3),
                 rot.rotation_matrix(rot.axis_angle(rng.normal(size=3), 0.4)))
    first, second = ("a.m", "f.n") if where == "rigid" else ("f.i", "a.m")
    vec = rng.normal(size=3)
    if force.startswith("spring"):
        actuator = Polynomial((1.0, 2.0, 3.0)) if "profile" in force else None
        b.add_spring_damper("s", first, second, stiffness=30.0, damping=2.0,
                            free_length=0.5, actuator=actuator)
        b.add_spring_damper("s0", "ground.g", second, stiffness=10.0, damping=1.0)
    elif force == "rotational":
        b.add_rotational_spring_damper("r", first, second, stiffness=5.0, damping=0.5,
                                       angle0=0.2)
        b.add_rotational_spring_damper("r0", "ground.g", second, stiffness=3.0, damping=0.3)
    elif force.startswith("point"):
        frame = "marker" if "marker" in force else "global"
        add = b.add_point_force if "force" in force else b.add_point_torque
        add("p", first, vec, frame=frame)
        add("p2", second, -vec, frame=frame)
    else:
        frame = "global" if "global" in force else "body"
        b.add_distributed_load("d", "f", vec, frame=frame,
                               weights="uniform" if where == "rigid" else "mass")
    return System(b.finalize()), rng


@pytest.mark.parametrize("where", ["rigid", "flexible"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("force", FORCES)
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_force_tangents(seed, force, mode, where):
    system, rng = force_model(seed, force, mode, where)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.1)
    if mode == "rigid":
        q[14:] = qd[14:] = 0.0
    assert_tangents_match(system, (q, qd, qdd, lam, t))


def callable_model(kind):
    """A spring (analytic) plus one force from a user callable that reads q and q̇."""
    data, _ = random_modal(5)
    b = ModelBuilder()
    b.add_rigid_body("a", 1.5, [0.3, 0.2, 0.4], position=(0.3, -0.2, 0.5))
    b.add_flexible_body("f", data, position=(1.0, 0.5, -0.3))
    b.add_marker("a", "m", (0.1, 0.2, 0.0))
    b.add_marker("f", "n", node=3)
    b.add_spring_damper("s", "a.m", "f.n", stiffness=20.0, damping=1.0)

    def fun(t, state):  # depends on all of q and q̇
        return np.tanh(state.q @ np.linspace(-1, 1, state.q.size)) + 0.1 * state.qd[2]

    if kind == "joint actuator":
        b.add_joint_actuator("u", "a.m", "f.n", lambda t, s: fun(t, s) * (1 + s.value))
    elif kind == "spring actuator":
        b.add_spring_damper("u", "a.m", "f.n", stiffness=5.0, actuator=fun)
    elif kind == "point force":
        b.add_point_force("u", "f.n", lambda t, s: fun(t, s) * np.array([1.0, -2.0, 0.5]))
    else:
        b.add_distributed_load("u", "f", lambda t, s: fun(t, s) * np.array([0.2, 1.0, 0.0]))
    return System(b.finalize())


@pytest.mark.parametrize("kind", ["joint actuator", "spring actuator", "point force",
                                  "distributed load"])
def test_user_callables_fall_back_to_finite_differences_alone(kind, monkeypatch):
    system = callable_model(kind)
    rng = np.random.default_rng(3)
    state = random_state(system, rng, scale=0.1)
    differenced = []
    original = tangents_module.force_tangents_fd

    def spy(system_, force, *args, **kwargs):
        differenced.append(force.name)
        return original(system_, force, *args, **kwargs)

    monkeypatch.setattr(tangents_module, "force_tangents_fd", spy)
    assert_tangents_match(system, state, rtol=RTOL_FORWARD)
    assert differenced == ["u"]  # the callable force only; the spring stays analytic


# ------------------------------------------------------------------ whole system
def flexible_arm(coupling="two-way", n_modes=3):
    """Hub on a revolute joint (spin-up drive) carrying a clamped flexible arm under
    gravity, with a tip force and a torsion spring–damper on a second hinge."""
    from conftest import make_modal_kwargs

    kwargs = make_modal_kwargs(n_nodes=8, n_modes=n_modes, seed=2)
    data = ModalData(**kwargs)
    b = ModelBuilder(gravity=(0, 0, -9.81))
    b.add_rigid_body("hub", 2.0, [0.02, 0.02, 0.03])
    b.add_marker("ground", "O")
    b.add_marker("hub", "axis")
    b.add_revolute("hinge", "ground.O", "hub.axis")
    b.add_drive("spin", "rotation", SpinUp(2.0, 0.5), marker_i="ground.O",
                marker_j="hub.axis")
    b.add_flexible_body("arm", data, coupling=coupling,
                        xi=np.full(n_modes, 0.0 if coupling == "rigid" else 1e-3))
    b.add_marker("arm", "root", node=1)
    b.add_marker("arm", "tip", node=8)
    b.add_joint("clamp", "fixed", "hub.axis", "arm.root")
    b.add_rigid_body("mass", 0.5, [1e-3, 1e-3, 1e-3], position=(1.0, 0.0, 0.0))
    b.add_marker("mass", "c")
    b.add_marker("arm", "tip2", node=8)
    b.add_spherical("tip_joint", "arm.tip2", "mass.c")
    b.add_point_force("push", "arm.tip", [0.0, 0.5, -1.0])
    b.add_spring_damper("tether", "ground.O", "mass.c", stiffness=50.0, damping=0.5,
                        free_length=0.9)
    return System(b.finalize())


@pytest.mark.parametrize("coupling", MODES)
def test_whole_system_tangents_against_the_integrator_fd_path(coupling):
    system = flexible_arm(coupling)
    integ = AlphaIntegrator(system, generalized_alpha(0.8), 1e-3, tangents="fd")
    for _ in range(20):
        assert integ.step()[0]
    rng = np.random.default_rng(11)
    state = (integ.q, integ.qd, integ.qdd, integ.lam + 0.1 * rng.normal(size=system.n_c),
             integ.t)
    k, c = residual_tangents(system, *state)
    k_fd, c_fd = integ._fd_tangents(*state)
    np.testing.assert_allclose(k, k_fd, rtol=0, atol=RTOL_FORWARD * np.max(np.abs(k_fd)))
    np.testing.assert_allclose(c, c_fd, rtol=0, atol=RTOL_FORWARD * max(1.0, np.max(
        np.abs(c_fd))))
    # and the central-difference check at the same state
    assert_tangents_match(system, state)
    # sparse layout: the same contributions, summed in another order (round-off only)
    k_s, c_s = residual_tangents(system, *state, sparse=True)
    np.testing.assert_allclose(k_s.toarray(), k, rtol=0, atol=1e-13 * np.max(np.abs(k)))
    np.testing.assert_allclose(c_s.toarray(), c, rtol=0, atol=1e-13 * np.max(np.abs(c)))


def test_simulation_is_the_same_with_analytic_and_fd_tangents(capsys):
    system = flexible_arm("two-way")
    results = {tg: simulate(system, 0.3, 1e-3, "generalized-alpha", rho_inf=0.8,
                            tangents=tg) for tg in ("analytic", "fd")}
    ana, fd = results["analytic"], results["fd"]
    assert ana.success and fd.success
    assert ana.settings["tangents"] == "analytic"
    # both converge the same discrete equations to the Newton tolerance (1e-8 rel. on q)
    np.testing.assert_allclose(ana.q, fd.q, rtol=0, atol=1e-9 * max(1.0, np.max(np.abs(fd.q))))
    np.testing.assert_allclose(ana.lam, fd.lam, rtol=0,
                               atol=1e-6 * max(1.0, np.max(np.abs(fd.lam))))
    it_a, it_f = (ana.statistics["iterations_per_step"],
                  fd.statistics["iterations_per_step"])
    with capsys.disabled():
        print(f"\n  Newton iterations per step: analytic {it_a:.3f}, fd {it_f:.3f}")
    assert it_a <= it_f + 1e-12  # exact tangents never need more iterations here


def test_grouped_fd_tangents_still_equal_the_column_by_column_ones():
    """The "fd" path keeps its distance-2 colouring (tests/test_integrators.py checks the
    assembled matrix with the default, now analytic, tangents)."""
    from test_multibody import pendulum

    system = System(pendulum(6).finalize())
    grouped = AlphaIntegrator(system, generalized_alpha(0.8), 1e-3, tangents="fd")
    single = AlphaIntegrator(system, generalized_alpha(0.8), 1e-3, tangents="fd")
    single._groups = None
    assert grouped._groups is not None and len(grouped._groups) <= 21  # 3 colours x 7
    rng = np.random.default_rng(0)
    state = (grouped.q + 1e-3 * rng.normal(size=system.n_q), rng.normal(size=system.n_q),
             rng.normal(size=system.n_q), rng.normal(size=system.n_c), 0.1)
    k_g, c_g = grouped._fd_tangents(*state)
    k_s, c_s = single._fd_tangents(*state)
    np.testing.assert_allclose(k_g, k_s, rtol=0, atol=1e-9 * np.max(np.abs(k_s)))
    np.testing.assert_allclose(c_g, c_s, rtol=0, atol=1e-9 * max(1.0, np.max(np.abs(c_s))))


def test_tangents_option_is_validated():
    system = flexible_arm("two-way")
    with pytest.raises(ValidationError, match="tangents"):
        simulate(system, 0.01, 1e-3, tangents="exact")
    with pytest.raises(TypeError, match="tangent"):
        simulate(system, 0.01, 1e-3, tangent="fd")
