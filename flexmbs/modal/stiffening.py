"""Geometric-stiffening data of a reduced flexible body (docs/theory_stiffening.md).

A body whose frame turns and accelerates carries inertial loads that stress it: a
spinning blade is in tension and stiffer in bending. To first order the stiffness those
stresses add to the elastic coordinates is linear in the loads, and the inertial loads
are linear in twelve frame quantities, so

    K_eff = K_ff + Σ_{i≤j} ω_i ω_j K_{ω_iω_j} + Σ_k (a − g)_k K_{a_k} + Σ_k ω̇_k K_{ω̇_k}

with ω, ω̇ the frame's angular velocity and acceleration and a its origin's acceleration
(all in body coordinates), g gravity. Each matrix K_c comes from one **unit load case**
c, computed once from the undeformed FE model:

1. the inertial (d'Alembert) load of a unit value of the frame quantity, −ρ a_c(r),
   with the acceleration fields a(r) = A_c r + b_c of :data:`UNIT_FIELDS`;
2. the static FE solution under that load with the body's own frame condition (the
   DOFs of the attachment node set fixed, as for its modes; for a free body with mean
   axes, inertia relief: the load's rigid-body part balanced by the body's inertia and
   the mean-axis condition imposed);
3. the FE geometric stiffness K_G of the resulting stresses (axial forces for beams,
   :mod:`flexmbs.modal.fe.beam_geometric`; the Gauss-point stress tensor for the
   hexahedral solid, :func:`solid_geometric_matrix`; the membrane forces for shells,
   :func:`flexmbs.modal.fe.shell_elements.geometric_stiffness`);
4. its projection on the modes, Φᵀ K_G Φ (n_m x n_m).

The result is a dict case name → matrix, stored in ``ModalData.stiffening``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .._blas import solve_small
from ..errors import ValidationError
from .fe.file_elements import file_elements_of
from .kinds import STIFFENING_CASES

_AXES = "xyz"



def _unit_fields() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Case → (A, b): the acceleration a(r) = A r + b [m/s² per unit] of the body point
    at body-frame position r (no deformation) per unit value of the case's quantity:
    (ω ωᵀ − ωᵀω I) r for the centripetal part, ω̇ × r, and the frame acceleration."""
    eye = np.eye(3)
    out = {}
    for i in range(3):
        for j in range(i, 3):
            if i == j:
                a_mat = np.outer(eye[i], eye[i]) - eye
            else:  # ω_iω_j appears twice in ω ωᵀ: both off-diagonal entries
                a_mat = np.outer(eye[i], eye[j]) + np.outer(eye[j], eye[i])
            out[f"ww_{_AXES[i]}{_AXES[j]}"] = (a_mat, np.zeros(3))
    for k in range(3):
        out[f"a_{_AXES[k]}"] = (np.zeros((3, 3)), eye[k].copy())
    for k in range(3):  # ω̇ × r: column i of the matrix is e_k × e_i
        skew = np.array([np.cross(eye[k], e) for e in eye]).T
        out[f"dw_{_AXES[k]}"] = (skew, np.zeros(3))
    return out


#: Case name → (A, b) of its acceleration field a(r) = A r + b.
UNIT_FIELDS = _unit_fields()


def beam_nodal_field(fe, a_mat: np.ndarray, b_vec: np.ndarray) -> np.ndarray:
    """The 6N DOF vector that the beam FE interpolates as the field u(r) = A r + b: the
    translations A r_n + b at the nodes and, in each element's local frame (x along the
    axis), the rotations (½(e_zᵀ A e_y − e_yᵀ A e_z), −e_zᵀ A e_x, e_yᵀ A e_x): the twist
    of the field and the slopes of its transverse components, which the cubic
    interpolation reproduces exactly for a field linear in r. So M times it is the
    consistent load of the body force ρ (A r + b)."""
    frame = np.asarray(fe.metadata["local_frame"], float)  # rows: local x, y, z
    ex, ey, ez = frame
    local = np.array([0.5 * (ez @ a_mat @ ey - ey @ a_mat @ ez), -(ez @ a_mat @ ex),
                      ey @ a_mat @ ex])
    out = np.zeros((fe.n_nodes, 6))
    out[:, :3] = fe.nodes @ a_mat.T + b_vec
    out[:, 3:] = frame.T @ local
    return out.ravel()


def _is_builtin_beam(fe) -> bool:
    from .fe.beam import GENERATOR

    return fe.metadata.get("generator") == GENERATOR


def _is_builtin_solid(fe) -> bool:
    from .fe.solid import _GENERATOR

    return fe.metadata.get("generator") == _GENERATOR


def solid_geometric_matrix(fe, u: np.ndarray) -> sp.csr_matrix:
    """Global (3N x 3N) geometric stiffness of the built-in hexahedral box ``fe`` for the
    static displacement ``u`` (3N,): per element Σ_g det J (∇N_a)ᵀ σ_g (∇N_b) I₃ with the
    Gauss-point stresses σ_g = D B_g u_e of the linear solution."""
    from .fe.solid import _isotropic_elasticity, hex8_gauss_data, hex8_strain_matrices

    meta = fe.metadata
    h = [meta[f"l{c}"] / meta[f"n{c}"] for c in "xyz"]
    _, dndx, det_j = hex8_gauss_data(*h)
    b_mat = hex8_strain_matrices(dndx)
    elasticity = _isotropic_elasticity(meta["E"], meta["nu"])
    conn = np.asarray(fe.cells["hexahedron"], int)
    u_e = u.reshape(-1, 3)[conn].reshape(conn.shape[0], 24)  # (elements, 24)
    voigt = np.einsum("ij,gjb,eb->egi", elasticity, b_mat, u_e)  # (e, g, 6)
    sigma = np.empty((*voigt.shape[:2], 3, 3))
    for (i, j), k in {(0, 0): 0, (1, 1): 1, (2, 2): 2, (0, 1): 3, (1, 2): 4, (0, 2): 5}.items():
        sigma[..., i, j] = sigma[..., j, i] = voigt[..., k]
    k_s = det_j * np.einsum("gai,egij,gbj->eab", dndx, sigma, dndx)  # (e, 8, 8)
    rows = np.repeat(conn, 8, axis=1)  # (e, 64): node a for every b
    cols = np.tile(conn, (1, 8))
    scalar = sp.csr_matrix((k_s.reshape(-1), (rows.ravel(), cols.ravel())),
                           shape=(fe.n_nodes, fe.n_nodes))
    return sp.kron(scalar, sp.identity(3), format="csr")


def beam_geometric_matrix(fe, u: np.ndarray) -> sp.csr_matrix:
    """Global (6N x 6N) geometric stiffness of the built-in straight beam ``fe`` for the
    static displacement ``u`` (6N,): each element's axial force N = EA/L Δu_x."""
    from .fe.beam import BeamSection, Material, _to_global
    from .fe.beam_geometric import beam_geometric_stiffness

    meta = fe.metadata
    section = BeamSection(**meta["section"])
    material_args = {k: v for k, v in meta["material"].items() if k != "G"}
    material = Material(**material_args)
    frame = np.asarray(meta["local_frame"], float)
    length = float(meta["element_length"])
    conn = np.asarray(fe.cells["line"], int)
    nodal = u.reshape(-1, 6)
    stretch = (nodal[conn[:, 1], :3] - nodal[conn[:, 0], :3]) @ frame[0]
    axial = material.E * section.A / length * stretch
    # one straight beam: the elements share length, section and frame, and an element's
    # geometric stiffness is linear in its axial force, N K_G(1)
    unit = _to_global(beam_geometric_stiffness(1.0, length, section, material,
                                               meta["theory"]), frame)
    idx = np.concatenate([6 * conn[:, :1] + np.arange(6), 6 * conn[:, 1:] + np.arange(6)],
                         axis=1)  # (elements, 12)
    rows = np.repeat(idx, 12, axis=1)
    cols = np.tile(idx, (1, 12))
    vals = axial[:, None] * unit.ravel()[None, :]
    n = fe.n_dof
    return sp.csr_matrix((vals.ravel(), (rows.ravel(), cols.ravel())), shape=(n, n))


def mode_vectors(fe, data) -> np.ndarray:
    """The modes as full FE DOF vectors (n_dof, n_m), from ``data.phi`` and ``data.psi``."""
    n_nodes, n = fe.n_nodes, data.n_modes
    phi = np.asarray(data.phi, float).reshape(n_nodes, 3, n)
    if fe.dofs_per_node == 3:
        return phi.reshape(-1, n)
    if data.psi is None:
        raise ValidationError("stiffening: the modal data have no rotational shapes psi; "
                              "a 6-DOF FE model needs them to project its geometric "
                              "stiffness")
    psi = np.asarray(data.psi, float).reshape(n_nodes, 3, n)
    return np.concatenate([phi, psi], axis=1).reshape(-1, n)


def with_stiffening(data, fe):
    """A copy of ``data`` with the geometric-stiffening matrices of the unit load cases
    computed from ``fe``, the FE model its modes were reduced from
    (:func:`stiffening_matrices`, docs/theory_stiffening.md)."""
    from dataclasses import replace

    history = [*data.metadata.get("history", []), "with_stiffening()"]
    return replace(data, stiffening=stiffening_matrices(fe, data),
                   metadata={**data.metadata, "history": history},
                   _invariants=data.invariants)


def stiffening_matrices(fe, data, cases=STIFFENING_CASES) -> dict[str, np.ndarray]:
    """Φᵀ K_G Φ of each unit load case (name → (n_m, n_m)) for the modal data ``data``
    reduced from the FE model ``fe`` (same nodes): with the frame attached at
    ``data.attach_set`` the static problem fixes that node set; with mean axes (free–free
    modes) it is solved with inertia relief (:func:`_inertia_relief_solver`), so the
    uniform-acceleration and angular-acceleration cases, wholly rigid-body loads, give
    no stress.

    The element information comes from the built-in beam and hexahedral FE, or, for FE
    matrices read from files, from the solid cells (``hexahedron``, ``tetra``,
    ``hexahedron20``) or the shells (``quad``, with their thickness) and the isotropic
    ``material`` the model carries (:func:`elements_of`).

    Raises ValidationError naming what is missing: element information, the material,
    cell types without stresses, or the rotational shapes."""
    from .kinds import ReferenceFrame

    elements = elements_of(fe)
    attached = data.reference_frame is ReferenceFrame.ATTACHED
    if attached and data.attach_set is None:
        raise ValidationError("stiffening: the modal data have an attached frame without "
                              "an attachment node set")
    if np.asarray(data.nodes).shape != fe.nodes.shape or not np.allclose(data.nodes, fe.nodes):
        raise ValidationError("stiffening: the modal data's nodes are not the FE model's")
    unknown = sorted(set(cases) - set(STIFFENING_CASES))
    if unknown:
        raise ValidationError(f"stiffening: unknown load case(s) {unknown}; the cases are "
                              f"{list(STIFFENING_CASES)}")
    static = (_attached_solver(fe, data.node_sets[data.attach_set]) if attached
              else _inertia_relief_solver(fe))
    modes = mode_vectors(fe, data)
    out = {}
    for case in cases:
        k_g = geometric_matrix(fe, unit_displacement(fe, static, case), elements)
        proj = modes.T @ (k_g @ modes)
        out[case] = 0.5 * (proj + proj.T)
    return out


def unit_displacement(fe, static, case: str) -> np.ndarray:
    """The static displacement (n_dof,) of ``fe`` under the d'Alembert load −ρ a_c(r) of
    the unit load case ``case`` (:data:`UNIT_FIELDS`), ``static`` the solver of the
    frame condition (load → u)."""
    a_mat, b_vec = UNIT_FIELDS[case]
    field = (beam_nodal_field(fe, a_mat, b_vec) if _is_builtin_beam(fe)
             else nodal_field(fe, a_mat, b_vec))
    return static(-(fe.mass @ field))


def nodal_field(fe, a_mat: np.ndarray, b_vec: np.ndarray) -> np.ndarray:
    """The DOF vector of the field u(r) = A r + b on FE data: the translations A r_n + b
    at the nodes (exact for solids and shells, whose interpolation holds linear fields)
    and, with 6 DOFs per node, the rotation of the field's skew part, ½ axial(A − Aᵀ), at
    every node. That rotation makes a rigid angular acceleration's load exact (its
    inertia relief leaves no stress); the symmetric (centripetal) part's through-
    thickness variation, a load on the shells' rotary inertia ρt³/12, is left out."""
    out = np.zeros((fe.n_nodes, fe.dofs_per_node))
    out[:, :3] = fe.nodes @ a_mat.T + b_vec
    if fe.dofs_per_node == 6:
        skew = 0.5 * (a_mat - a_mat.T)
        out[:, 3:] = [skew[2, 1], skew[0, 2], skew[1, 0]]
    return out.ravel()


def elements_of(fe):
    """None for the built-in beam and hexahedral box (their own element data), else the
    solid or shell elements of FE data
    (:func:`~flexmbs.modal.fe.file_elements.file_elements_of`, which names what is
    missing)."""
    return (None if _is_builtin_beam(fe) or _is_builtin_solid(fe)
            else file_elements_of(fe))


def geometric_matrix(fe, u: np.ndarray, elements=None) -> sp.csr_matrix:
    """The FE geometric stiffness (n_dof, n_dof) of ``fe`` for the stresses of the
    displacement ``u``: the built-in beam's or hexahedral box's, else that of the solid
    or shell cells of FE data (``elements``: :func:`elements_of`, found when None)."""
    if _is_builtin_beam(fe):
        return beam_geometric_matrix(fe, u)
    if _is_builtin_solid(fe):
        return solid_geometric_matrix(fe, u)
    if elements is None:
        elements = file_elements_of(fe)
    return elements.geometric_stiffness(fe.nodes, u)


def _attached_solver(fe, attach_nodes):
    """u(load): the static solution with every DOF of the attachment nodes fixed."""
    fixed = fe.node_dofs(np.asarray(attach_nodes, int))
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    solve = spla.factorized(sp.csc_matrix(fe.stiffness[free][:, free]))

    def static(load):
        u = np.zeros(fe.n_dof)
        u[free] = solve(load[free])
        return u
    return static


def _inertia_relief_solver(fe):
    """u(load) of a free body (mean axes): the load's rigid-body part, which only
    accelerates the body, is balanced by its inertia, f̃ = f − MΦ_r (Φ_rᵀMΦ_r)⁻¹ Φ_rᵀ f
    (Φ_r the six rigid-body motions), and K u = f̃ is solved with the mean-axis condition
    Φ_rᵀ M u = 0 as a constraint (saddle point, sparse LU)."""
    from .rigid_motions import rigid_body_basis

    rigid = rigid_body_basis(fe)
    m_r = np.asarray(fe.mass @ rigid)
    gram = rigid.T @ m_r
    coupling = sp.csr_matrix(m_r)
    saddle = sp.bmat([[fe.stiffness, coupling], [coupling.T, None]], format="csc")
    solve = spla.factorized(saddle)

    def static(load):
        balanced = load - m_r @ solve_small(gram, rigid.T @ load)
        return solve(np.concatenate([balanced, np.zeros(6)]))[:fe.n_dof]
    return static


def effective_stiffness(k_ff: np.ndarray, stiffening: dict, omega=(0.0, 0.0, 0.0),
                        accel=(0.0, 0.0, 0.0), alpha=(0.0, 0.0, 0.0)) -> np.ndarray:
    """K_eff = K_ff + Σ ω_iω_j K_{ω_iω_j} + Σ (a − g)_k K_{a_k} + Σ ω̇_k K_{ω̇_k} for the
    frame's angular velocity ``omega`` [rad/s], acceleration minus gravity ``accel``
    [m/s²] and angular acceleration ``alpha`` [rad/s²], body coordinates."""
    w = np.asarray(omega, float)
    out = np.array(k_ff, dtype=float, copy=True)
    for i in range(3):
        for j in range(i, 3):
            out += w[i] * w[j] * stiffening[f"ww_{_AXES[i]}{_AXES[j]}"]
    for k in range(3):
        out += float(accel[k]) * stiffening[f"a_{_AXES[k]}"]
        out += float(alpha[k]) * stiffening[f"dw_{_AXES[k]}"]
    return out
