"""Flexible bodies in the multibody core: marker kinematics and joints on them against
finite differences, kinetic energy against the nodal sum, and the energy behaviour of
each coupling mode on a free body (docs/theory_ffrf.md §8–10)."""

import numpy as np
import pytest
import scipy.integrate as si
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.assembly import System
from flexmbs.frame.rotations import axis_angle, rotation_matrix
from flexmbs.modal import ModalData
from flexmbs.model import ModelBuilder
from flexmbs.model.joints import JOINT_EQUATIONS
from flexmbs.model.marker_modes import node_modes
from flexmbs.model.markers import Marker


def random_modal(seed, n_nodes=8, n_modes=3, six_dof=True):
    """A free (mean-axis) body: random shapes made M-orthogonal to rigid motion, with a
    consistent 6-DOF or lumped mass, and rotational shapes."""
    rng = np.random.default_rng(seed)
    nodes = rng.normal(size=(n_nodes, 3))
    dpn = 6 if six_dof else 3
    if six_dof:
        a = rng.normal(size=(6 * n_nodes, 6 * n_nodes))
        m_fe = a @ a.T / (6 * n_nodes) + np.eye(6 * n_nodes)
        mass = sp.csr_matrix(m_fe)
    else:
        masses = rng.uniform(0.5, 1.5, n_nodes)
        m_fe = np.diag(np.repeat(masses, 3))
        mass = masses
    shapes = rng.normal(size=(dpn * n_nodes, n_modes)) * 0.1
    rigid = np.zeros((n_nodes, dpn, 6))
    rigid[:, :3, :3] = np.eye(3)
    for k, (x, y, z) in enumerate(nodes):
        rigid[k, :3, 3:] = -np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    if six_dof:
        rigid[:, 3:, 3:] = np.eye(3)
    rigid = rigid.reshape(dpn * n_nodes, 6)
    coef = np.linalg.solve(rigid.T @ m_fe @ rigid, rigid.T @ m_fe @ shapes)
    shapes = shapes - rigid @ coef
    per = shapes.reshape(n_nodes, dpn, n_modes)
    phi = per[:, :3].reshape(3 * n_nodes, n_modes)
    psi = per[:, 3:].reshape(3 * n_nodes, n_modes) if six_dof else \
        rng.normal(size=(3 * n_nodes, n_modes)) * 0.1
    m_ff = shapes.T @ m_fe @ shapes if six_dof else phi.T @ m_fe @ phi
    k_ff = np.diag(np.linspace(40.0, 160.0, n_modes)) * np.mean(np.diag(m_ff))
    return ModalData(nodes=nodes, phi=phi, psi=psi, M_ff=m_ff, K_ff=k_ff, mass=mass,
                     reference_frame="mean-axis",
                     node_sets={"face": [0, 1, 2, 3]}), m_fe


def flexible_pair(seed, kind):
    data, _ = random_modal(seed)
    rng = np.random.default_rng(seed + 7)
    b = ModelBuilder()
    b.add_rigid_body("a", 1.5, [0.3, 0.2, 0.4], position=rng.normal(size=3),
                     orientation=rotation_matrix(axis_angle(rng.normal(size=3), 1.0)))
    b.add_flexible_body("f", data, position=rng.normal(size=3),
                        orientation=rotation_matrix(axis_angle(rng.normal(size=3), 0.7)))
    b.add_marker("a", "m", rng.normal(size=3), rotation_matrix(axis_angle(rng.normal(size=3),
                                                                          2.0)))
    b.add_marker("f", "n", orientation=rotation_matrix(axis_angle(rng.normal(size=3), 1.3)),
                 node=3)
    b.add_marker("f", "i", orientation=rotation_matrix(axis_angle(rng.normal(size=3), 0.4)),
                 node_set="face")
    marker = "f.n" if seed % 2 else "f.i"
    if kind == "rotation-drive":
        b.add_drive("d", "rotation", 0.3, marker_i="a.m", marker_j=marker)
    else:
        b.add_joint("j", kind, "a.m", marker)
    return System(b.finalize()), rng


@pytest.mark.parametrize("kind", [*sorted(JOINT_EQUATIONS), "rotation-drive"])
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_joints_on_flexible_markers_match_finite_differences(seed, kind):
    system, rng = flexible_pair(seed, kind)
    q = system.q0 + 0.2 * rng.normal(size=system.n_q)
    qd, qdd = rng.normal(size=system.n_q), rng.normal(size=system.n_q)
    h = 1e-6
    jac = system.jacobian(q)
    fd = np.column_stack([(system.phi(q + h * e) - system.phi(q - h * e)) / (2 * h)
                          for e in np.eye(system.n_q)])
    np.testing.assert_allclose(jac, fd, rtol=0, atol=1e-7 * max(1.0, np.max(np.abs(fd))))
    hh = 1e-4

    def path(tau):
        return system.phi(q + tau * qd + 0.5 * tau**2 * qdd)

    phi_dd = (path(hh) - 2 * path(0.0) + path(-hh)) / hh**2
    np.testing.assert_allclose(jac @ qdd - system.gamma(q, qd), phi_dd, rtol=0,
                               atol=2e-5 * max(1.0, np.max(np.abs(phi_dd))))


def test_node_marker_follows_the_deformed_node_and_its_rotation():
    data, _ = random_modal(3)
    b = ModelBuilder()
    b.add_flexible_body("f", data, position=(1, 2, 3), xi=[0.2, -0.1, 0.05])
    b.add_marker("f", "n", node=5)
    system = System(b.finalize())
    body = system.bodies[0]
    marker = system.model.markers["f.n"]
    q = system.q0
    r, axes, _, _ = body.marker_frame(q, marker)
    np.testing.assert_allclose(r, body.node_positions(q)[4], rtol=1e-14)  # label 5
    psi_xi = data.psi[12:15] @ q[7:]
    np.testing.assert_allclose(axes, np.eye(3) + np.cross(psi_xi, np.eye(3), axis=0),
                               atol=1e-14)
    # ṙ = J q̇ and ω = J_ω q̇ against the motion's finite difference
    rng = np.random.default_rng(1)
    qd = rng.normal(size=system.n_q)
    h = 1e-6
    r_p = body.marker_frame(q + h * qd, marker)[0]
    r_m = body.marker_frame(q - h * qd, marker)[0]
    np.testing.assert_allclose(body.marker_frame(q, marker)[2][0] @ qd, (r_p - r_m) / (2 * h),
                               rtol=1e-7)


def test_force_jacobian_does_the_virtual_work_of_the_marker_velocity():
    data, _ = random_modal(4)
    b = ModelBuilder()
    b.add_flexible_body("f", data, orientation=axis_angle([1, 2, 3], 0.5))
    b.add_marker("f", "n", node=2)
    system = System(b.finalize())
    body, marker = system.bodies[0], system.model.markers["f.n"]
    q = system.q0.copy()
    q[7:] = [0.1, 0.2, -0.1]
    rng = np.random.default_rng(2)
    qd = rng.normal(size=system.n_q)
    qd[3:7] -= q[3:7] * (q[3:7] @ qd[3:7])  # ṗ ⟂ p
    force = rng.normal(size=3)
    r_dot = body.marker_frame(q, marker)[2][0] @ qd
    np.testing.assert_allclose(body.force_jac(q, marker) @ qd, r_dot, rtol=1e-12)
    assert abs(q[3:7] @ (body.force_jac(q, marker).T @ force)[3:7]) < 1e-12


def index1_run(system, q0, qd0, t_end):
    """Reference index-1 integration (DOP853) with the normalization rows only."""
    n = system.n_q

    def rhs(_, y):
        q, qd = y[:n], y[n:]
        m = system.mass_matrix(q)
        jac = np.asarray(system.jacobian(q))
        kkt = np.block([[m, jac.T], [jac, np.zeros((jac.shape[0],) * 2)]])
        sol = np.linalg.solve(kkt, np.concatenate([system.forces(q, qd),
                                                   system.gamma(q, qd)]))
        return np.concatenate([qd, sol[:n]])

    out = si.solve_ivp(rhs, (0, t_end), np.concatenate([q0, qd0]), method="DOP853",
                       rtol=1e-11, atol=1e-11, dense_output=False,
                       t_eval=np.linspace(0, t_end, 41))
    assert out.success
    return out.y[:n].T, out.y[n:].T


def attached_body():
    """Attached frame (modes vanish at node 0, so S̄ ≠ 0), lumped masses, 3 modes."""
    from conftest import make_modal_kwargs

    kw = make_modal_kwargs(n_nodes=8, n_modes=3, seed=1)
    kw["nodes"] = np.random.default_rng(5).normal(size=(8, 3)) * 0.3
    kw["K_ff"] = np.diag([40.0, 90.0, 160.0]) * np.mean(np.diag(kw["M_ff"]))
    return ModalData(**kw)


# (frame, coupling, conserves): measured drifts over 1 s are in docs/flexible_bodies.md
ENERGY_CASES = [
    ("mean-axis", "two-way", True), ("mean-axis", "rigid", True),
    ("mean-axis", "one-way", False),
    # S̄ = 0 and an isotropic mass: the dropped blocks' power 2ω̄ᵀİ_θf ξ̇ vanishes
    # (docs/theory_ffrf.md §3), so no-Mrf conserves T′ + V here
    ("mean-axis", "no-Mrf", True),
    ("attached", "two-way", True), ("attached", "rigid", True),
    ("attached", "one-way", False), ("attached", "no-Mrf", False),
]


@pytest.mark.parametrize(("frame", "coupling", "conserves"), ENERGY_CASES)
def test_energy_of_a_free_spinning_flexible_body(frame, coupling, conserves):
    """Two-way and rigid conserve T + ½ξᵀKξ; one-way never does; no-Mrf (T′ from its own
    mass matrix) does only when S̄ = 0 with an isotropic mass (docs/theory_ffrf.md §9)."""
    data = random_modal(11, six_dof=False)[0] if frame == "mean-axis" else attached_body()
    rigid = coupling == "rigid"
    b = ModelBuilder()
    b.add_flexible_body("f", data, angular_velocity=(0.5, 1.5, -1.0), velocity=(0.1, 0, 0),
                        xi=None if rigid else [0.05, -0.03, 0.02],
                        xi_dot=None if rigid else [0.3, 0.1, -0.2], coupling=coupling)
    system = System(b.finalize())
    qs, qds = index1_run(system, system.q0, system.qd0, 1.0)
    energy = np.array([sum(system.energy(q, qd)) for q, qd in zip(qs, qds, strict=True)])
    drift = float(np.max(np.abs(energy - energy[0])) / energy[0])
    if conserves:
        assert drift < 1e-8, f"{frame} {coupling}: relative energy drift {drift:.3g}"
    else:
        assert drift > 1e-3, f"{frame} {coupling}: relative energy drift only {drift:.3g}"


def pendulum_with(body_kind: str):
    """A body pinned at a node marker, under gravity: flexible (given coupling) or the
    equivalent rigid body (same mass, centre and inertia)."""
    data, _ = random_modal(21, six_dof=False)
    b = ModelBuilder(gravity=(0, 0, -9.81))
    ground_point = np.array([0.3, -0.2, 0.5])
    b.add_marker("ground", "O", ground_point)
    pin_local = data.nodes[2]
    frame_origin = ground_point - pin_local  # the pin starts on the ground point
    if body_kind == "rigid-body":
        com = data.center_of_mass
        b.add_rigid_body("f", data.total_mass, data.inertia_tensor,
                         position=frame_origin + com)
        b.add_marker("f", "pin", pin_local - com)
    else:
        b.add_flexible_body("f", data, coupling=body_kind, position=frame_origin)
        b.add_marker("f", "pin", node=3)  # label 3 = index 2
    return b, pin_local


def test_rigid_and_one_way_modes_move_exactly_like_the_rigid_body():
    """With a joint and gravity, the frame motion in rigid and one-way modes equals the
    equivalent RigidBody's (markers at ξ = 0 for joints, docs/theory_ffrf.md §9), while two-way
    differs; the modes still vibrate in one-way."""
    results = {}
    for kind in ("rigid-body", "rigid", "one-way", "two-way"):
        b, _pin = pendulum_with(kind)
        b.add_spherical("pin", "ground.O", "f.pin")
        model = b.finalize()
        system = System(model)
        q0 = system.assemble()
        qd0 = system.project_velocity(q0, np.zeros(system.n_q))
        qs, _ = index1_run(system, q0, qd0, 0.6)
        body = system.bodies[0]
        marker = model.markers["f.pin"]
        # the centre-of-mass path (rigid body: R itself)
        if kind == "rigid-body":
            path = qs[:, :3]
        else:
            com_local = body.data.center_of_mass
            path = np.array([q[:3] + rotation_matrix(q[3:7]) @ com_local for q in qs])
        results[kind] = (path, qs)
        assert marker is not None
    ref = results["rigid-body"][0]
    np.testing.assert_allclose(results["rigid"][0], ref, rtol=0, atol=1e-7)
    np.testing.assert_allclose(results["one-way"][0], ref, rtol=0, atol=1e-7)
    assert np.max(np.abs(results["two-way"][0] - ref)) > 1e-4
    assert np.max(np.abs(results["one-way"][1][:, 7:])) > 1e-4  # modes excited
    np.testing.assert_array_equal(results["rigid"][1][:, 7:], 0.0)


def test_no_mrf_keeps_the_two_way_quadratic_velocity_vector():
    from flexmbs.elements.floating_frame_reference import quadratic_velocity
    from flexmbs.frame.coupling import Coupling

    data, _ = random_modal(9)
    inv = data.invariants
    rng = np.random.default_rng(0)
    p = rng.normal(size=4)
    p /= np.linalg.norm(p)
    args = (inv, data.M_ff, p, rng.normal(size=3) * 0.1, rng.normal(size=3),
            rng.normal(size=4), rng.normal(size=3))
    np.testing.assert_array_equal(quadratic_velocity(*args, Coupling.NO_MRF),
                                  quadratic_velocity(*args, Coupling.TWO_WAY))


def test_marker_angular_velocity_matches_the_rotating_axes():
    """ω from angular_jac: ȧ_k = ω × a_k for the marker axes (first order in Ψξ: checked
    at ξ = 0 where the axes are orthonormal)."""
    data, _ = random_modal(13)
    b = ModelBuilder()
    b.add_flexible_body("f", data, orientation=axis_angle([1, 1, 0], 0.4))
    b.add_marker("f", "n", node=4, orientation=axis_angle([0, 1, 1], 0.9))
    system = System(b.finalize())
    body, marker = system.bodies[0], system.model.markers["f.n"]
    q = system.q0
    rng = np.random.default_rng(3)
    qd = rng.normal(size=system.n_q)
    qd[3:7] -= q[3:7] * (q[3:7] @ qd[3:7])
    omega = body.angular_jac(q, marker) @ qd
    h = 1e-6
    axes_dot = (body.marker_frame(q + h * qd, marker)[1]
                - body.marker_frame(q - h * qd, marker)[1]) / (2 * h)
    axes = body.marker_frame(q, marker)[1]
    np.testing.assert_allclose(axes_dot, np.cross(omega, axes, axis=0), rtol=0, atol=1e-7)


def test_distributed_load_equals_the_nodal_sum():
    """Σ_k J_kᵀ (w_k F) by brute force over the nodes, global and body-frame loads."""
    data, _ = random_modal(5, six_dof=False)
    weights = np.random.default_rng(3).uniform(0.2, 1.0, data.n_nodes)
    for frame in ("global", "body"):
        b = ModelBuilder()
        b.add_flexible_body("f", data, position=(0.3, -1, 2),
                            orientation=axis_angle([1, -1, 2], 0.8), xi=[0.1, -0.2, 0.05])
        b.add_distributed_load("wind", "f", [1.0, -2.0, 0.5], weights=weights, frame=frame)
        with_load = System(b.finalize())
        q, zero = with_load.q0, np.zeros(with_load.n_q)
        body = with_load.bodies[0]
        applied = with_load.forces(q, zero) - body.generalized_forces(q, zero, 0.0,
                                                                      np.zeros(3))
        a = rotation_matrix(q[3:7])
        force = np.array([1.0, -2.0, 0.5]) if frame == "global" else a @ [1.0, -2.0, 0.5]
        expected = np.zeros(with_load.n_q)
        probe = Marker("f", "probe", np.zeros(3), np.eye(3))
        for k in range(data.n_nodes):
            body.marker_modes["probe"] = node_modes(data, k)  # a marker on node k
            expected += body.force_jac(q, probe).T @ (weights[k] * force)
        np.testing.assert_allclose(applied, expected, rtol=1e-12, atol=1e-12)


def test_gravity_from_invariants_equals_mass_weighted_distributed_load():
    """Two independent routes: Cᵀ M̄_{:,R} ḡ (invariants) and Σ J_kᵀ m_k g (nodes)."""
    data, _ = random_modal(6, six_dof=False)
    g = np.array([0.0, 0.0, -9.81])
    b = ModelBuilder(gravity=g)
    b.add_flexible_body("f", data, orientation=axis_angle([0.2, 1, 0.3], 1.1),
                        xi=[0.2, 0.1, -0.1])
    system = System(b.finalize())
    b2 = ModelBuilder()
    b2.add_flexible_body("f", data, orientation=axis_angle([0.2, 1, 0.3], 1.1),
                         xi=[0.2, 0.1, -0.1])
    b2.add_distributed_load("g", "f", g, weights="mass")
    system2 = System(b2.finalize())
    zero = np.zeros(system.n_q)
    np.testing.assert_allclose(system.forces(system.q0, zero), system2.forces(system2.q0,
                                                                              zero),
                               rtol=1e-12, atol=1e-12)


def test_run_level_coupling_override_and_named_blocks():
    data, _ = random_modal(8)
    b = ModelBuilder()
    b.add_flexible_body("f", data, xi=[0.1, 0.0, 0.2])
    model = b.finalize()
    assert System(model).coupling == {"f": "two-way"}
    one_way = System(model, coupling="one-way")
    assert one_way.coupling == {"f": "one-way"}
    blocks = one_way.bodies[0].mass_blocks(one_way.q0)
    np.testing.assert_array_equal(blocks["M_Rf"], 0)
    assert np.any(blocks["M_fR"] != 0)
    full = System(model).bodies[0].mass_blocks(one_way.q0)
    np.testing.assert_allclose(full["M_Rf"], full["M_fR"].T, atol=1e-14)
    assert set(full) == {"M_RR", "M_Rp", "M_Rf", "M_pp", "M_pf", "M_fR", "M_fp", "M_ff"}


def test_modal_fields_are_recovered_and_kept_through_select_and_files(tmp_path):
    from flexmbs.modal import read_modal, write_modal

    data, _ = random_modal(12, six_dof=False)
    stress = np.random.default_rng(0).normal(size=(data.n_nodes, 6, data.n_modes))
    from dataclasses import replace

    data = replace(data, modal_fields={"stress": stress})
    b = ModelBuilder()
    b.add_flexible_body("f", data, xi=[0.1, -0.2, 0.3])
    system = System(b.finalize())
    got = system.bodies[0].recover_field("stress", system.q0)
    np.testing.assert_allclose(got, stress @ [0.1, -0.2, 0.3], rtol=1e-14)
    np.testing.assert_array_equal(data.select([2]).modal_fields["stress"], stress[:, :, [2]])
    back = read_modal(write_modal(data, tmp_path / "s.fmd.h5"))
    np.testing.assert_array_equal(back.modal_fields["stress"], stress)
    from flexmbs.errors import ModelError

    with pytest.raises(ModelError, match="no modal field 'strain'"):
        system.bodies[0].recover_field("strain", system.q0)


def test_a_flexible_body_without_modes_is_refused_naming_it():
    """Modal data of no modes (a truncation to nothing) give a model error naming the
    body and the way out, not a failure deep in the floating-frame terms."""
    from flexmbs.errors import ModelError

    data = random_modal(3, n_modes=0)[0]
    b = ModelBuilder()
    b.add_flexible_body("beam", data)
    with pytest.raises(ModelError, match=r"FlexibleBody\('beam'\): its modal data have no "
                                         r"modes.*add_rigid_body"):
        b.finalize()


def test_interface_modes_are_shared_by_bodies_of_the_same_data_yet_independent():
    """A node-set marker's modes are computed once per data and node set: a second call
    gives the first's values (those of a fresh computation) as new arrays, so changing
    one result leaves the next alone; other weights give their own modes."""
    from flexmbs.model.marker_modes import _INTERFACES, _interface_modes, interface_modes

    data, _ = random_modal(4)
    nodes = np.arange(6)
    first = interface_modes(data, nodes)
    first.phi[...] = np.nan
    again = interface_modes(data, nodes)
    fresh = _interface_modes(data, nodes, None)
    for got, want in zip((again.u0, again.phi, again.psi),
                         (fresh.u0, fresh.phi, fresh.psi), strict=True):
        np.testing.assert_array_equal(got, want)
    assert len(_INTERFACES[data]) == 1
    weighted = interface_modes(data, nodes, np.linspace(1.0, 2.0, nodes.size))
    assert len(_INTERFACES[data]) == 2
    assert not np.allclose(weighted.u0, again.u0)
