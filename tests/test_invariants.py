"""Inertia invariants versus direct node sums (docs/theory_ffrf.md §3, §10)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.modal.invariants import (
    compute_invariants,
    cross_contraction,
    isotropic_scalar_mass,
    skew,
)


def random_body(seed: int, n_nodes: int, n_modes: int, kind: str):
    """Random nodes, shapes and a translational mass of the requested kind."""
    rng = np.random.default_rng(seed)
    nodes = rng.normal(size=(n_nodes, 3))
    phi = rng.normal(size=(3 * n_nodes, n_modes))
    if kind == "lumped":
        lumped = rng.uniform(0.5, 2.0, n_nodes)
        return nodes, phi, lumped, np.diag(np.repeat(lumped, 3))
    if kind == "consistent":
        a = rng.normal(size=(n_nodes, n_nodes))
        m_s = a @ a.T + n_nodes * np.eye(n_nodes)
        m_fe = np.kron(m_s, np.eye(3))
    else:  # anisotropic, case II
        a = rng.normal(size=(3 * n_nodes, 3 * n_nodes))
        m_fe = a @ a.T + 3 * n_nodes * np.eye(3 * n_nodes)
    return nodes, phi, sp.csr_matrix(m_fe), m_fe


def direct_blocks(nodes, phi, m_fe, xi):
    """M̄ = Bᵀ M_FE B with B = [T_R, −U(ξ), Φ], by brute force over the nodes."""
    n_nodes = nodes.shape[0]
    u = nodes + (phi @ xi).reshape(n_nodes, 3)
    b = np.hstack([np.tile(np.eye(3), (n_nodes, 1)), -skew(u).reshape(3 * n_nodes, 3), phi])
    return b.T @ m_fe @ b


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_nodes=st.integers(2, 15), n_modes=st.integers(1, 10),
       kind=st.sampled_from(["lumped", "consistent", "anisotropic"]))
def test_blocks_equal_node_sum_at_random_xi(seed, n_nodes, n_modes, kind):
    nodes, phi, mass, m_fe = random_body(seed, n_nodes, n_modes, kind)
    inv = compute_invariants(nodes, phi, mass)
    assert inv.isotropic == (kind != "anisotropic")
    xi = np.random.default_rng(seed + 1).normal(size=n_modes)
    expected = direct_blocks(nodes, phi, m_fe, xi)
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(inv.blocks(xi).assemble(), expected, rtol=0, atol=1e-12 * scale)
    if inv.isotropic:
        np.testing.assert_allclose(inv.blocks_isotropic(xi).assemble(), expected, rtol=0,
                                   atol=1e-12 * scale)
    # M_ff = Φᵀ M Φ (constant block)
    np.testing.assert_allclose(inv.M_ff, phi.T @ m_fe @ phi, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("kind", ["lumped", "consistent"])
def test_shabana_set_definitions(kind):
    """J⁽¹⁾, J⁽²⁾ and S̄ equal their defining sums; SID relation of docs/theory_ffrf.md §3."""
    nodes, phi, mass, m_fe = random_body(3, 9, 4, kind)
    inv = compute_invariants(nodes, phi, mass)
    m_s = m_fe[0::3, 0::3]
    y = phi.reshape(9, 3, 4)
    for j in range(4):
        j1 = sum(m_s[k, l] * np.outer(nodes[k], y[l, :, j]) for k in range(9) for l in range(9))
        np.testing.assert_allclose(inv.J1[j], j1, rtol=1e-12, atol=1e-12)
        # SID: −C4_j − C4_jᵀ = I⁽¹⁾_j with C4_j = Σ m ũ₀ₖ φ̃_{l,j}
        c4 = sum(m_s[k, l] * skew(nodes[k]) @ skew(y[l, :, j]) for k in range(9)
                 for l in range(9))
        np.testing.assert_allclose(-c4 - c4.T, inv.I_tt1[j], rtol=1e-12, atol=1e-11)
        # Ī_θf⁽⁰⁾ column j = ε:J⁽¹⁾_j
        np.testing.assert_allclose(inv.I_tf0[:, j], cross_contraction(inv.J1[j]), rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_allclose(inv.S, (y * m_s.sum(axis=1)[:, None, None]).sum(axis=0),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["lumped", "consistent", "anisotropic"])
def test_invariants_hold_no_node_sized_array(kind):
    """Every stored array has the same shape for 40 and 400 nodes: evaluating the blocks
    cannot touch the N nodes (per-step cost independent of the mesh, docs/theory_ffrf.md §3)."""
    import dataclasses

    small = compute_invariants(*random_body(5, 40, 6, kind)[:3])
    large = compute_invariants(*random_body(5, 400, 6, kind)[:3])
    for field in dataclasses.fields(small):
        a, b = getattr(small, field.name), getattr(large, field.name)
        assert np.shape(a) == np.shape(b), field.name


def test_isotropy_detection_rejects_anisotropic_block():
    m_s = sp.identity(4, format="csr")
    m_fe = sp.kron(m_s, sp.identity(3)).tolil()
    assert isotropic_scalar_mass(m_fe.tocsr()) is not None
    m_fe[0, 1] = m_fe[1, 0] = 1e-3
    assert isotropic_scalar_mass(m_fe.tocsr()) is None
    m_fe[0, 1] = m_fe[1, 0] = 0
    m_fe[2, 2] = 1.5
    assert isotropic_scalar_mass(m_fe.tocsr()) is None


def test_rigid_content_detects_rigid_mode():
    """A mode that is a rigid translation has content 1; a mean-axis mode has 0."""
    nodes, _, lumped, m_fe = random_body(7, 12, 1, "lumped")
    rigid = np.tile([1.0, 0.0, 0.0], 12)[:, None]
    inv = compute_invariants(nodes, rigid, lumped)
    np.testing.assert_allclose(inv.rigid_content(), [1.0], rtol=1e-12)
    rng = np.random.default_rng(8)
    shape = rng.normal(size=(36, 1))
    # remove the M-projection on the six rigid motions
    basis = np.hstack([np.tile(np.eye(3), (12, 1)), -skew(nodes).reshape(36, 3)])
    coef = np.linalg.solve(basis.T @ m_fe @ basis, basis.T @ m_fe @ shape)
    clean = shape - basis @ coef
    inv2 = compute_invariants(nodes, clean, lumped)
    assert inv2.rigid_content()[0] < 1e-24


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_nodes=st.integers(2, 10), n_modes=st.integers(1, 8))
def test_six_dof_mass_blocks_equal_node_sum(seed, n_nodes, n_modes):
    """6N mass of 6-DOF nodes: M̄(ξ) = Bᵀ M B with translational rows [I, −ũ(ξ), Φ] and
    rotational rows [0, I, Ψ], by brute force at a random ξ."""
    rng = np.random.default_rng(seed)
    nodes = rng.normal(size=(n_nodes, 3))
    phi = rng.normal(size=(3 * n_nodes, n_modes))
    psi = rng.normal(size=(3 * n_nodes, n_modes))
    a = rng.normal(size=(6 * n_nodes, 6 * n_nodes))
    m_fe = a @ a.T + 6 * n_nodes * np.eye(6 * n_nodes)
    inv = compute_invariants(nodes, phi, sp.csr_matrix(m_fe), psi)
    xi = rng.normal(size=n_modes)
    u = nodes + (phi @ xi).reshape(n_nodes, 3)
    b = np.zeros((n_nodes, 6, 6 + n_modes))
    b[:, :3, :3] = np.eye(3)
    b[:, :3, 3:6] = -skew(u)
    b[:, :3, 6:] = phi.reshape(n_nodes, 3, n_modes)
    b[:, 3:, 3:6] = np.eye(3)
    b[:, 3:, 6:] = psi.reshape(n_nodes, 3, n_modes)
    b = b.reshape(6 * n_nodes, 6 + n_modes)
    expected = b.T @ m_fe @ b
    np.testing.assert_allclose(inv.blocks(xi).assemble(), expected, rtol=0,
                               atol=1e-12 * np.max(np.abs(expected)))
    assert not inv.isotropic


@pytest.mark.parametrize("kind", ["lumped", "consistent", "anisotropic"])
def test_selected_invariants_equal_recomputed(kind):
    nodes, phi, mass, _ = random_body(11, 12, 5, kind)
    idx = [3, 0, 4]
    sliced = compute_invariants(nodes, phi, mass).select(idx)
    fresh = compute_invariants(nodes, phi[:, idx], mass)
    import dataclasses

    for field in dataclasses.fields(fresh):
        a, b = getattr(sliced, field.name), getattr(fresh, field.name)
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13 * np.max(np.abs(b)),
                                       err_msg=field.name)
        else:
            assert a == b, field.name
