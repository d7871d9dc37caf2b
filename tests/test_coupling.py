"""FFRF kernels: kinetic energy against the nodal sum, Q_v against finite differences of
Lagrange's equations, coupling-mode structure (docs/theory_ffrf.md §5–6, §9–10)."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.elements.floating_frame_reference import generalized_mass, quadratic_velocity
from flexmbs.frame.coupling import Coupling
from flexmbs.frame.rotations import g_bar, rotation_matrix
from flexmbs.modal.invariants import compute_invariants


def random_body(seed, n_nodes, n_modes, kind):
    rng = np.random.default_rng(seed)
    nodes = rng.normal(size=(n_nodes, 3))
    phi = rng.normal(size=(3 * n_nodes, n_modes))
    psi = rng.normal(size=(3 * n_nodes, n_modes)) if kind == "6dof" else None
    dpn = 6 if kind == "6dof" else 3
    if kind == "lumped":
        masses = rng.uniform(0.5, 2.0, n_nodes)
        mass, m_fe = masses, np.diag(np.repeat(masses, 3))
    else:
        a = rng.normal(size=(dpn * n_nodes, dpn * n_nodes))
        m_fe = a @ a.T + dpn * n_nodes * np.eye(dpn * n_nodes)
        mass = sp.csr_matrix(m_fe)
    inv = compute_invariants(nodes, phi, mass, psi)
    return inv, nodes, phi, psi, m_fe, rng


def random_state(rng, n_modes):
    p = rng.normal(size=4)
    p /= np.linalg.norm(p)
    pd = rng.normal(size=4)
    pd -= p * (p @ pd)
    return (rng.normal(size=3), p, 0.3 * rng.normal(size=n_modes), rng.normal(size=3), pd,
            rng.normal(size=n_modes))


def nodal_kinetic_energy(nodes, phi, psi, m_fe, r, p, xi, rd, pd, xid):
    """½ v_allᵀ M_FE v_all with the true nodal velocities (and nodal rotation rates)."""
    a = rotation_matrix(p)
    w_bar = g_bar(p) @ pd
    n_nodes = nodes.shape[0]
    u = nodes + (phi @ xi).reshape(n_nodes, 3)
    v_bar = (a.T @ rd)[None, :] + np.cross(w_bar, u) + (phi @ xid).reshape(n_nodes, 3)
    if psi is None:
        vel = v_bar.ravel()
    else:
        rot = w_bar[None, :] + (psi @ xid).reshape(n_nodes, 3)
        vel = np.hstack([v_bar, rot]).ravel()
    return 0.5 * vel @ m_fe @ vel


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_modes=st.integers(1, 10),
       kind=st.sampled_from(["lumped", "consistent", "6dof"]))
def test_kinetic_energy_equals_nodal_sum(seed, n_modes, kind):
    inv, nodes, phi, psi, m_fe, rng = random_body(seed, 7, n_modes, kind)
    r, p, xi, rd, pd, xid = random_state(rng, n_modes)
    qd = np.concatenate([rd, pd, xid])
    mass = generalized_mass(inv, inv.M_ff, p, xi)
    expected = nodal_kinetic_energy(nodes, phi, psi, m_fe, r, p, xi, rd, pd, xid)
    np.testing.assert_allclose(0.5 * qd @ mass @ qd, expected, rtol=1e-12)
    np.testing.assert_allclose(mass @ np.concatenate([np.zeros(3), p, np.zeros(n_modes)]),
                               0, atol=1e-12 * np.max(np.abs(mass)))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_modes=st.integers(1, 6),
       kind=st.sampled_from(["lumped", "consistent", "6dof"]))
def test_quadratic_velocity_matches_lagrange_by_finite_differences(seed, n_modes, kind):
    """Q_v = −Ṁq̇ + ½∂(q̇ᵀMq̇)/∂q: R and ξ rows directly, p rows projected (FFRF §5.3)."""
    inv, _, _, _, _, rng = random_body(seed, 6, n_modes, kind)
    r, p, xi, rd, pd, xid = random_state(rng, n_modes)
    q = np.concatenate([r, p, xi])
    qd = np.concatenate([rd, pd, xid])

    def mass(qq):
        return generalized_mass(inv, inv.M_ff, qq[3:7], qq[7:])

    h = 1e-6
    m_dot = (mass(q + h * qd) - mass(q - h * qd)) / (2 * h)
    grad = np.array([(qd @ mass(q + h * e) @ qd - qd @ mass(q - h * e) @ qd) / (2 * h)
                     for e in np.eye(q.size)])
    lagrange = -m_dot @ qd + 0.5 * grad
    qv = quadratic_velocity(inv, inv.M_ff, p, xi, rd, pd, xid)
    scale = np.max(np.abs(lagrange))
    proj = np.eye(4) - np.outer(p, p)
    np.testing.assert_allclose(qv[:3], lagrange[:3], rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(qv[7:], lagrange[7:], rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(proj @ qv[3:7], proj @ lagrange[3:7], rtol=0, atol=1e-6 * scale)
    assert abs(p @ qv[3:7]) < 1e-10 * scale  # multiplier-consistent: p-rows ⟂ p


def test_quadratic_velocity_equals_particle_form_for_lumped_mass():
    """−Σ m ū×(ω̄×(ω̄×ū) + 2ω̄×u̇) etc. (FFRF §5.1 particle form), an independent sum."""
    inv, nodes, phi, _, m_fe, rng = random_body(9, 8, 3, "lumped")
    _r, p, xi, rd, pd, xid = random_state(rng, 3)
    m = np.diag(m_fe)[::3]
    u = nodes + (phi @ xi).reshape(8, 3)
    udot = (phi @ xid).reshape(8, 3)
    om = g_bar(p) @ pd
    acc = np.cross(om, np.cross(om, u)) + 2 * np.cross(om, udot)
    qr = -(m[:, None] * acc).sum(axis=0)
    qt = -(m[:, None] * np.cross(u, acc)).sum(axis=0)
    qf = -np.einsum("k,kaj,ka->j", m, phi.reshape(8, 3, 3), acc)
    qv = quadratic_velocity(inv, inv.M_ff, p, xi, rd, pd, xid)
    a = rotation_matrix(p)
    np.testing.assert_allclose(qv[:3], a @ qr, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qv[3:7], g_bar(p).T @ qt, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qv[7:], qf, rtol=1e-12, atol=1e-12)


def test_coupling_mode_structure():
    inv, _, _, _, _, rng = random_body(4, 6, 3, "consistent")
    _r, p, xi, rd, pd, xid = random_state(rng, 3)
    full = generalized_mass(inv, inv.M_ff, p, xi, Coupling.TWO_WAY)
    one = generalized_mass(inv, inv.M_ff, p, xi, Coupling.ONE_WAY)
    no_mrf = generalized_mass(inv, inv.M_ff, p, xi, Coupling.NO_MRF)
    rigid = generalized_mass(inv, inv.M_ff, p, xi, Coupling.RIGID)
    at_zero = generalized_mass(inv, inv.M_ff, p, np.zeros(3), Coupling.TWO_WAY)
    # one-way: rigid rows are the rigid body's, M_Rξ = M_pξ = 0; ξ rows are the full ones
    np.testing.assert_allclose(one[:7, :7], at_zero[:7, :7], atol=1e-14)
    np.testing.assert_array_equal(one[:7, 7:], 0)
    np.testing.assert_allclose(one[7:], full[7:], atol=1e-14)
    # no-Mrf: symmetric, coupling blocks zero, M_Rp and M_pp keep their ξ-dependence
    np.testing.assert_array_equal(no_mrf[:7, 7:], 0)
    np.testing.assert_allclose(no_mrf, no_mrf.T, atol=1e-14)
    np.testing.assert_allclose(no_mrf[:7, :7], full[:7, :7], atol=1e-14)
    # rigid: decoupled
    np.testing.assert_array_equal(rigid[7:, :7], 0)
    qv_one = quadratic_velocity(inv, inv.M_ff, p, xi, rd, pd, xid, Coupling.ONE_WAY)
    qv_rigid_rows = quadratic_velocity(inv, inv.M_ff, p, np.zeros(3), rd, pd, np.zeros(3))
    np.testing.assert_allclose(qv_one[:7], qv_rigid_rows[:7], atol=1e-12)
    qv_full = quadratic_velocity(inv, inv.M_ff, p, xi, rd, pd, xid)
    np.testing.assert_allclose(qv_one[7:], qv_full[7:], atol=1e-12)
