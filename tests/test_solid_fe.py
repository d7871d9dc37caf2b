"""Tests of the structured hex8 solid generator flexmbs.modal.fe.solid."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from flexmbs.errors import ValidationError
from flexmbs.modal.fe.solid import box_mesh, hex8_element_matrices
from flexmbs.modal.femodel import FEModel

STEEL = {"E": 210e9, "nu": 0.3, "rho": 7850.0}
# Deliberately unequal element edges and an offset origin: catches axis mix-ups.
BOX = {"lx": 1.2, "ly": 0.5, "lz": 0.3, "nx": 4, "ny": 3, "nz": 2,
       "origin": (0.3, -0.7, 1.1)}


def _box(**overrides) -> FEModel:
    args = {**BOX, **STEEL, **overrides}
    return box_mesh(args.pop("lx"), args.pop("ly"), args.pop("lz"), args.pop("nx"),
                    args.pop("ny"), args.pop("nz"), **args)


def _rigid_modes(nodes: np.ndarray) -> np.ndarray:
    """3 unit translations and 3 infinitesimal rotations (about the global origin)."""
    n = nodes.shape[0]
    modes = np.zeros((3 * n, 6))
    for d in range(3):
        modes[d::3, d] = 1.0
    for d in range(3):
        axis = np.zeros(3)
        axis[d] = 1.0
        modes[:, 3 + d] = np.cross(axis, nodes).ravel()
    return modes


def _reference_assembly(model: FEModel) -> tuple[np.ndarray, np.ndarray]:
    """Naive element-by-element dense assembly from the mesh cells."""
    meta = model.metadata
    ke, ms = hex8_element_matrices(meta["lx"] / meta["nx"], meta["ly"] / meta["ny"],
                                   meta["lz"] / meta["nz"], E=meta["E"], nu=meta["nu"],
                                   rho=meta["rho"])
    me = np.kron(ms, np.eye(3))
    n_dof = model.n_dof
    k = np.zeros((n_dof, n_dof))
    m = np.zeros((n_dof, n_dof))
    for conn in model.cells["hexahedron"]:
        dofs = (3 * conn[:, None] + np.arange(3)).ravel()
        k[np.ix_(dofs, dofs)] += ke
        m[np.ix_(dofs, dofs)] += me
    return k, m


# ----------------------------------------------------------------------------- structure
def test_structure_nodes_sets_cells_metadata():
    model = _box()
    nx, ny, nz = BOX["nx"], BOX["ny"], BOX["nz"]
    n_nodes = (nx + 1) * (ny + 1) * (nz + 1)
    assert isinstance(model, FEModel)
    assert model.dofs_per_node == 3
    assert model.nodes.shape == (n_nodes, 3)
    assert model.mass.shape == model.stiffness.shape == (3 * n_nodes, 3 * n_nodes)
    assert sp.isspmatrix_csr(model.mass) and sp.isspmatrix_csr(model.stiffness)
    lo = np.array(BOX["origin"])
    hi = lo + np.array([BOX["lx"], BOX["ly"], BOX["lz"]])
    assert_allclose(model.nodes.min(axis=0), lo, rtol=0, atol=1e-15)
    assert_allclose(model.nodes.max(axis=0), hi, rtol=0, atol=1e-15)
    # documented numbering: (i, j, k) -> (i*(ny+1) + j)*(nz+1) + k
    i, j, k = 2, 1, 2
    p = (i * (ny + 1) + j) * (nz + 1) + k
    step = np.array([i * BOX["lx"] / nx, j * BOX["ly"] / ny, k * BOX["lz"] / nz])
    assert_allclose(model.nodes[p], lo + step, rtol=0, atol=1e-15)
    sets = model.node_sets
    assert_array_equal(sets["all"], np.arange(n_nodes))
    for d, label in enumerate("xyz"):
        face0 = np.flatnonzero(np.isclose(model.nodes[:, d], lo[d], rtol=0, atol=1e-12))
        face1 = np.flatnonzero(np.isclose(model.nodes[:, d], hi[d], rtol=0, atol=1e-12))
        assert_array_equal(sets[f"{label}0"], face0)
        assert_array_equal(sets[f"{label}1"], face1)
    assert sets["x0"].size == (ny + 1) * (nz + 1)
    conn = model.cells["hexahedron"]
    assert conn.shape == (nx * ny * nz, 8)
    assert_array_equal(np.unique(conn), np.arange(n_nodes))
    meta = model.metadata
    assert meta["generator"] == "flexmbs.modal.fe.solid"
    for key in ("lx", "ly", "lz", "nx", "ny", "nz", "E", "nu", "rho", "origin",
                "lumped"):
        assert key in meta
    assert meta["nx"] == nx and meta["E"] == STEEL["E"] and meta["lumped"] is False
    assert_allclose(meta["origin"], BOX["origin"], rtol=0, atol=0)


def test_cells_follow_vtk_hexahedron_order():
    model = _box()
    h = np.array([BOX["lx"] / BOX["nx"], BOX["ly"] / BOX["ny"], BOX["lz"] / BOX["nz"]])
    corners = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                        [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
    xyz = model.nodes[model.cells["hexahedron"]]                 # (ne, 8, 3)
    rel = xyz - xyz[:, :1, :]
    assert_allclose(rel, np.broadcast_to(corners * h, rel.shape), rtol=0, atol=1e-14)
    # right-handed: (x1 - x0) x (x3 - x0) . (x4 - x0) > 0
    vol = np.einsum("ij,ij->i", np.cross(rel[:, 1], rel[:, 3]), rel[:, 4])
    assert np.all(vol > 0)


def test_matches_naive_element_by_element_assembly():
    for overrides in ({}, {"nx": 1, "ny": 1, "nz": 1}, {"nx": 1, "ny": 3, "nz": 2},
                      {"nx": 3, "ny": 1, "nz": 4, "nu": -0.2}):
        model = _box(**overrides)
        k_ref, m_ref = _reference_assembly(model)
        k = model.stiffness.toarray()
        m = model.mass.toarray()
        assert_allclose(k, k_ref, rtol=0, atol=1e-13 * np.abs(k_ref).max())
        assert_allclose(m, m_ref, rtol=0, atol=1e-13 * np.abs(m_ref).max())


def test_sparsity_pattern_size():
    # Scalar 27-point pattern: along an axis with n elements, 3n + 1 coupled node pairs.
    nx, ny, nz = 7, 5, 3
    model = _box(nx=nx, ny=ny, nz=nz)
    scalar_nnz = (3 * nx + 1) * (3 * ny + 1) * (3 * nz + 1)
    assert model.mass.nnz == 3 * scalar_nnz
    assert model.stiffness.nnz <= 9 * scalar_nnz


def test_element_matrices_closed_form():
    hx, hy, hz = 0.3, 0.2, 0.1
    ke, ms = hex8_element_matrices(hx, hy, hz, **STEEL)
    corners = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                        [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]])
    # tensor product of 1-D consistent masses h/6 [[2, 1], [1, 2]]
    same = (corners[:, None, :] == corners[None, :, :])
    expected = STEEL["rho"] * hx * hy * hz / 216.0 * np.prod(np.where(same, 2.0, 1.0),
                                                            axis=2)
    assert_allclose(ms, expected, rtol=1e-14, atol=0)
    assert_allclose(ms.sum(), STEEL["rho"] * hx * hy * hz, rtol=1e-14, atol=0)
    assert_array_equal(ke, ke.T)
    eig = np.linalg.eigvalsh(ke)
    assert_allclose(eig[:6], 0.0, rtol=0, atol=1e-12 * eig[-1])
    assert eig[6] > 1e-3 * eig[-1]


# ----------------------------------------------------------------------------- mass
@pytest.mark.parametrize("lumped", [False, True])
def test_total_mass_rigid_translation(lumped):
    model = _box(lumped=lumped)
    expected = STEEL["rho"] * BOX["lx"] * BOX["ly"] * BOX["lz"]
    t = _rigid_modes(model.nodes)[:, :3]
    m_rigid = t.T @ (model.mass @ t)
    assert_allclose(np.diag(m_rigid), expected, rtol=1e-13, atol=0)
    assert_allclose(m_rigid - np.diag(np.diag(m_rigid)), 0.0, rtol=0,
                    atol=1e-14 * expected)


def test_consistent_mass_is_scalar_times_identity_per_block():
    model = _box()
    n = model.n_nodes
    blocks = model.mass.toarray().reshape(n, 3, n, 3)
    for c in range(3):
        for d in range(3):
            if c != d:
                assert not np.any(blocks[:, c, :, d]), "off-diagonal component nonzero"
    scalar = blocks[:, 0, :, 0]
    # exact equality, not just close: the mass is M_s (x) I3 by construction
    assert_array_equal(blocks[:, 1, :, 1], scalar)
    assert_array_equal(blocks[:, 2, :, 2], scalar)
    assert_allclose(model.mass.toarray(), np.kron(scalar, np.eye(3)), rtol=0, atol=0)
    assert np.linalg.eigvalsh(scalar)[0] > 0


def test_lumped_mass_is_row_sum_of_consistent():
    consistent = _box(lumped=False).mass
    lumped = _box(lumped=True).mass
    assert lumped.nnz == lumped.shape[0]
    assert_array_equal(lumped.indices, np.arange(lumped.shape[0]))
    row_sums = np.asarray(consistent.sum(axis=1)).ravel()
    assert_allclose(lumped.diagonal(), row_sums, rtol=1e-14, atol=0)
    diag = lumped.diagonal().reshape(-1, 3)
    assert np.all(diag > 0)
    assert_array_equal(diag[:, 1], diag[:, 0])
    assert_array_equal(diag[:, 2], diag[:, 0])
    # corner node of a hex8 gets 1/8 of its single element's mass
    h = np.array([BOX["lx"] / BOX["nx"], BOX["ly"] / BOX["ny"], BOX["lz"] / BOX["nz"]])
    assert_allclose(diag[0, 0], STEEL["rho"] * h.prod() / 8.0, rtol=1e-14, atol=0)


# ----------------------------------------------------------------------------- stiffness
def test_stiffness_exactly_symmetric_and_positive_semidefinite():
    model = _box()
    k = model.stiffness
    assert abs(k - k.T).max() == 0.0
    eig = np.linalg.eigvalsh(k.toarray())
    assert eig[0] > -1e-12 * eig[-1]


def test_rigid_body_modes_are_stress_free():
    model = _box()
    k = model.stiffness
    modes = _rigid_modes(model.nodes)
    k_norm = sp.linalg.norm(k, np.inf)
    for col in range(6):
        u = modes[:, col]
        residual = np.abs(k @ u).max() / (k_norm * np.abs(u).max())
        assert residual < 1e-13, f"rigid mode {col}: |K u| / (|K| |u|) = {residual:.2e}"


def test_free_free_spectrum_has_six_zero_eigenvalues():
    model = box_mesh(0.8, 0.2, 0.2, 4, 2, 2, **STEEL)
    lam = sla.eigh(model.stiffness.toarray(), model.mass.toarray(), eigvals_only=True)
    assert np.all(np.abs(lam[:6]) < 1e-8 * lam[6]), lam[:7]
    # seventh: first elastic mode, order of (pi c / L)^2 with c = sqrt(E / rho)
    assert lam[6] > 1e-3 * (math.pi / 0.8) ** 2 * STEEL["E"] / STEEL["rho"]


def test_patch_test_uniaxial_stress():
    nu, eps = 0.3, 1e-3
    model = _box(nu=nu)
    x, y, z = model.nodes.T
    u = np.column_stack([eps * x, -nu * eps * y, -nu * eps * z]).ravel()
    f = (model.stiffness @ u).reshape(-1, 3)
    scale = STEEL["E"] * eps * BOX["ly"] * BOX["lz"]
    sets = model.node_sets
    x_faces = np.union1d(sets["x0"], sets["x1"])
    others = np.setdiff1d(sets["all"], x_faces)
    boundary = np.unique(np.concatenate([sets[s] for s in ("x0", "x1", "y0", "y1",
                                                           "z0", "z1")]))
    interior = np.setdiff1d(sets["all"], boundary)
    assert interior.size > 0
    # uniaxial stress sigma_xx = E eps: tractions only on the x faces, no y/z force
    assert_allclose(f[interior], 0.0, rtol=0, atol=1e-12 * scale)
    assert_allclose(f[others], 0.0, rtol=0, atol=1e-12 * scale)
    assert_allclose(f[:, 1:], 0.0, rtol=0, atol=1e-12 * scale)
    assert_allclose(f[sets["x1"], 0].sum(), scale, rtol=1e-12, atol=0)
    assert_allclose(f[sets["x0"], 0].sum(), -scale, rtol=1e-12, atol=0)
    # consistent nodal loads: sigma_xx times the tributary area of each face node
    hy, hz = BOX["ly"] / BOX["ny"], BOX["lz"] / BOX["nz"]
    j = np.rint((model.nodes[sets["x1"], 1] - BOX["origin"][1]) / hy)
    k = np.rint((model.nodes[sets["x1"], 2] - BOX["origin"][2]) / hz)
    wy = np.where((j == 0) | (j == BOX["ny"]), 0.5, 1.0)
    wz = np.where((k == 0) | (k == BOX["nz"]), 0.5, 1.0)
    assert_allclose(f[sets["x1"], 0], STEEL["E"] * eps * hy * hz * wy * wz, rtol=1e-12,
                    atol=0)


@pytest.mark.parametrize("lumped", [False, True])
def test_clamped_free_bar_first_axial_frequency(lumped):
    length, side, e_mod, rho = 2.0, 0.1, 210e9, 7850.0
    model = box_mesh(length, side, side, 40, 1, 1, E=e_mod, nu=0.0, rho=rho,
                     lumped=lumped)
    free_nodes = np.setdiff1d(model.node_sets["all"], model.node_sets["x0"])
    free = model.node_dofs(free_nodes)
    k = model.stiffness[free][:, free].toarray()
    m = model.mass[free][:, free].toarray()
    lam, phi = sla.eigh(k, m, subset_by_index=[0, 29])
    # axial mode: (almost) all kinetic energy in x-displacements
    m_x = m.copy()
    m_x[:, 1::3] = 0.0
    m_x[:, 2::3] = 0.0
    frac_x = np.einsum("ij,ij->j", phi, m_x @ phi) / np.einsum("ij,ij->j", phi, m @ phi)
    axial = np.flatnonzero(frac_x > 0.99)
    assert axial.size > 0
    omega = math.sqrt(lam[axial[0]])
    expected = math.pi / (2.0 * length) * math.sqrt(e_mod / rho)
    assert_allclose(omega, expected, rtol=1e-2, atol=0)


# ----------------------------------------------------------------------------- errors
BAD_INPUTS = [
    ("lx", {"lx": 0.0}),
    ("ly", {"ly": -1.0}),
    ("lz", {"lz": float("nan")}),
    ("lx", {"lx": float("inf")}),
    ("lx", {"lx": "long"}),
    ("nx", {"nx": 0}),
    ("ny", {"ny": 2.5}),
    ("nz", {"nz": True}),
    ("nx", {"nx": -3}),
    ("E", {"E": 0.0}),
    ("E", {"E": -1e9}),
    ("E", {"E": [1e9, 2e9]}),
    ("nu", {"nu": 0.5}),
    ("nu", {"nu": -1.0}),
    ("nu", {"nu": 0.7}),
    ("rho", {"rho": 0.0}),
    ("rho", {"rho": float("nan")}),
    ("origin", {"origin": (0.0, 0.0)}),
    ("origin", {"origin": (0.0, 0.0, float("inf"))}),
    ("lumped", {"lumped": "yes"}),
]


@pytest.mark.parametrize(("name", "overrides"), BAD_INPUTS)
def test_bad_input_raises_validation_error_naming_argument(name, overrides):
    with pytest.raises(ValidationError, match=rf"\b{re.escape(name)}\b"):
        _box(**overrides)


def test_element_matrices_bad_input():
    with pytest.raises(ValidationError, match=r"\bhz\b"):
        hex8_element_matrices(0.1, 0.1, 0.0, **STEEL)
    with pytest.raises(ValidationError, match=r"\bnu\b"):
        hex8_element_matrices(0.1, 0.1, 0.1, E=1.0, nu=0.5, rho=1.0)
