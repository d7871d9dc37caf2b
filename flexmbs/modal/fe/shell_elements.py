"""Flat four-node shell elements of any FE mesh: stiffness, mass, membrane strains and
stresses (docs/theory_shells.md).

A thin-walled part (sheet metal, a box link's walls, a panel) is meshed with shells:
Nastran's CQUAD4, Abaqus's S4 and S4R, MAPDL's SHELL181. This module evaluates them as
flat Reissner–Mindlin facets with six DOFs per node [u_x, u_y, u_z, θ_x, θ_y, θ_z]
(translations [m], rotations [rad], in the FE axes):

* **Local axes** of each element: e₃ along the cross product of its diagonals, e₁ along
  the side from its first to its second node projected on the mean plane, e₂ = e₃ × e₁.
  The corners are projected on that plane (a warped quadrilateral is taken flat).
* **Membrane**: bilinear in-plane displacements, 2 × 2 Gauss points, plane stress
  D_m = E t/(1 − ν²) [[1, ν, 0], [ν, 1, 0], [0, 0, (1 − ν)/2]] [N/m].
* **Bending**: the normal's rotations β_x = θ_y, β_y = −θ_x, bilinear, curvatures
  κ = [β_x,x, β_y,y, β_x,y + β_y,x], 2 × 2 Gauss points, D_b = t²/12 D_m [N m].
* **Transverse shear**: MITC4 (Bathe and Dvorkin): the covariant shear strains are tied
  at the mid-sides, which removes shear locking of thin plates; k G t with k = 5/6.
* **Drilling**: θ_z has no stiffness of its own in a flat facet. A penalty on the
  difference between θ_z and the membrane's rotation ½(v,x − u,y) (Hughes and Brezzi)
  at the 2 × 2 Gauss points, with modulus ``DRILLING`` · G t, keeps the stiffness regular
  without resisting a rigid rotation.
* **Mass**: consistent, ρ t ∫ N_a N_b dA for the translations and the rotary inertia
  ρ t³/12 ∫ N_a N_b dA for the normal's rotations θ_x, θ_y. The drilling rotation has
  none, as in Nastran's shells: its penalty stiffness with any inertia would put
  spurious drilling modes among the structure's (a 1/8 in steel plate's at 17 kHz,
  among its bending modes).

The membrane Green–Lagrange strain of the mid-surface, E_αβ = ½(u_α,β + u_β,α) +
½ Σ_k u_k,α u_k,β, gives the shells' cubic and quartic energy (modal derivatives) and
their geometric stiffness (stiffening) through :func:`membrane_gradient_rows`.
Everything is SI.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...errors import ValidationError

#: Cell types of shell elements read here.
SHELL_CELLS = ("quad",)

#: The drilling penalty's modulus as a fraction of the shear modulus G.
DRILLING = 1e-3

#: The transverse shear correction factor.
SHEAR_FACTOR = 5.0 / 6.0

_CORNERS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
_G = 1.0 / np.sqrt(3.0)
_GAUSS = np.array([[-_G, -_G], [_G, -_G], [_G, _G], [-_G, _G]])


def _shapes(xi: float, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """(N (4,), ∂N/∂(ξ, η) (4, 2)) of the bilinear quadrilateral."""
    n = 0.25 * (1 + _CORNERS[:, 0] * xi) * (1 + _CORNERS[:, 1] * eta)
    d = np.stack([0.25 * _CORNERS[:, 0] * (1 + _CORNERS[:, 1] * eta),
                  0.25 * _CORNERS[:, 1] * (1 + _CORNERS[:, 0] * xi)], axis=1)
    return n, d


def local_frames(nodes: np.ndarray, conn: np.ndarray, labels=None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(axes (E, 3, 3): rows e₁, e₂, e₃ of each element in the FE axes; corners (E, 4, 2)
    [m] in those axes about the element's centre). Raises ValidationError naming an
    element whose corners are collapsed or out of order."""
    xyz = np.asarray(nodes, float)[np.asarray(conn, np.int64)]          # (E, 4, 3)
    normal = np.cross(xyz[:, 2] - xyz[:, 0], xyz[:, 3] - xyz[:, 1])
    size = np.linalg.norm(normal, axis=1)
    scale = np.ptp(xyz, axis=1).max(axis=1)
    bad = np.nonzero(size <= 1e-12 * scale ** 2)[0]
    if bad.size:
        k = int(bad[0])
        label = k + 1 if labels is None else int(labels[k])
        raise ValidationError(f"shell element {label} (quad) is degenerate: its diagonals "
                              f"are parallel (nodes {[int(v) for v in conn[k]]})")
    e3 = normal / size[:, None]
    side = xyz[:, 1] - xyz[:, 0]
    side -= np.einsum("ei,ei->e", side, e3)[:, None] * e3
    e1 = side / np.linalg.norm(side, axis=1)[:, None]
    e2 = np.cross(e3, e1)
    axes = np.stack([e1, e2, e3], axis=1)
    centre = xyz.mean(axis=1)
    corners = np.einsum("eai,eji->eaj", xyz - centre[:, None], axes[:, :2])
    return axes, corners


class QuadGeometry:
    """The mapping of every element at its 2 × 2 Gauss points (``dndx`` (E, 4, 4, 2)
    [1/m], ``area`` (E, 4) [m²]: weight × det J, ``jac`` (E, 4, 2, 2)) and at the MITC4
    tying points."""

    def __init__(self, corners: np.ndarray, labels=None):
        self.corners = corners
        self.n = np.empty((4, 4))
        dn_ref = np.empty((4, 4, 2))
        for g, (xi, eta) in enumerate(_GAUSS):
            self.n[g], dn_ref[g] = _shapes(xi, eta)
        jac = np.einsum("gad,eaj->egdj", dn_ref, corners)   # J_dj = ∂x_j/∂ξ_d
        det = np.linalg.det(jac)
        bad = np.nonzero(det.min(axis=1) <= 0.0)[0]
        if bad.size:
            k = int(bad[0])
            label = k + 1 if labels is None else int(labels[k])
            raise ValidationError(f"shell element {label} (quad) is crossed or not "
                                  f"convex: det J = {float(det[k].min()):.3g} at a Gauss "
                                  f"point (check its node order)")
        self.jac = jac
        self.dndx = np.einsum("egjd,gad->egaj", np.linalg.inv(jac), dn_ref)
        self.area = det

    def shear_rows(self) -> np.ndarray:
        """B_s (E, 4, 2, 24): the MITC4 transverse shear strains [γ_xz, γ_yz] at the Gauss
        points from the local element DOFs (6 per node)."""
        def covariant(xi, eta, d):  # row of γ_ξ (d = 0) or γ_η (d = 1) at (ξ, η)
            n, dn = _shapes(xi, eta)
            tangent = np.einsum("a,eaj->ej", dn[:, d], self.corners)   # ∂x/∂ξ_d (E, 2)
            row = np.zeros((len(self.corners), 4, 6))
            row[:, :, 2] = dn[:, d]
            row[:, :, 4] = n[None, :] * tangent[:, None, 0]      # β_x = θ_y
            row[:, :, 3] = -n[None, :] * tangent[:, None, 1]     # β_y = −θ_x
            return row.reshape(-1, 24)

        top, bottom = covariant(0.0, 1.0, 0), covariant(0.0, -1.0, 0)
        right, left = covariant(1.0, 0.0, 1), covariant(-1.0, 0.0, 1)
        out = np.empty((len(self.corners), 4, 2, 24))
        for g, (xi, eta) in enumerate(_GAUSS):
            nat = np.stack([0.5 * (1 + eta) * top + 0.5 * (1 - eta) * bottom,
                            0.5 * (1 + xi) * right + 0.5 * (1 - xi) * left], axis=1)
            out[:, g] = np.linalg.solve(self.jac[:, g], nat)    # [γ_ξ, γ_η] = J γ
        return out


def _plane_stress(young: float, nu: float) -> np.ndarray:
    return young / (1 - nu * nu) * np.array([[1, nu, 0], [nu, 1, 0], [0, 0, 0.5 * (1 - nu)]])


def membrane_rows(dndx: np.ndarray) -> np.ndarray:
    """B_m (E, G, 3, 24): [ε_xx, ε_yy, γ_xy] of the mid-surface from local element DOFs."""
    out = np.zeros((*dndx.shape[:2], 3, 4, 6))
    out[..., 0, :, 0] = dndx[..., 0]
    out[..., 1, :, 1] = dndx[..., 1]
    out[..., 2, :, 0] = dndx[..., 1]
    out[..., 2, :, 1] = dndx[..., 0]
    return out.reshape(*dndx.shape[:2], 3, 24)


def bending_rows(dndx: np.ndarray) -> np.ndarray:
    """B_b (E, G, 3, 24) [1/m]: the curvatures [κ_xx, κ_yy, κ_xy] from local element DOFs."""
    out = np.zeros((*dndx.shape[:2], 3, 4, 6))
    out[..., 0, :, 4] = dndx[..., 0]
    out[..., 1, :, 3] = -dndx[..., 1]
    out[..., 2, :, 4] = dndx[..., 1]
    out[..., 2, :, 3] = -dndx[..., 0]
    return out.reshape(*dndx.shape[:2], 3, 24)


def _drilling_rows(n: np.ndarray, dndx: np.ndarray) -> np.ndarray:
    """(E, G, 24): θ_z − ½(v,x − u,y) at the Gauss points."""
    out = np.zeros((*dndx.shape[:2], 4, 6))
    out[..., 5] = n[None]
    out[..., 1] = -0.5 * dndx[..., 0]
    out[..., 0] = 0.5 * dndx[..., 1]
    return out.reshape(*dndx.shape[:2], 24)


def _rotate(axes: np.ndarray, a: np.ndarray) -> np.ndarray:
    """(E, 24, 24): Σ T_ki A_(p,k)(q,l) T_lj over the triples p, q (T = axes)."""
    n_e = len(axes)
    out = np.einsum("eki,epkql,elj->epiqj", axes, a, axes)
    return out.reshape(n_e, 24, 24)


def element_matrices(nodes: np.ndarray, conn: np.ndarray, thickness, young: float,
                     nu: float, rho: float, labels=None) -> tuple[np.ndarray, np.ndarray]:
    """(K_e, M_e) (E, 24, 24) [N/m … N m/rad, kg … kg m²] of the quadrilateral shells
    ``conn`` (E, 4) (node indices of ``nodes`` (N, 3) [m]), thickness ``thickness`` [m]
    (one value or one per element), isotropic E [Pa], ν and ρ [kg/m³], in the FE axes,
    node-major DOFs [u_x, u_y, u_z, θ_x, θ_y, θ_z]."""
    conn = np.asarray(conn, np.int64)
    t = np.broadcast_to(np.asarray(thickness, float), (len(conn),))
    bad = np.nonzero(~(np.isfinite(t) & (t > 0)))[0]
    if bad.size:
        k = int(bad[0])
        label = k + 1 if labels is None else int(labels[k])
        raise ValidationError(f"shell element {label}: thickness must be a positive "
                              f"length [m]; got {t[k]!r}")
    axes, corners = local_frames(nodes, conn, labels)
    geo = QuadGeometry(corners, labels)
    d_ps = _plane_stress(young, nu)
    shear_modulus = young / (2 * (1 + nu))
    b_m, b_b = membrane_rows(geo.dndx), bending_rows(geo.dndx)
    b_s = geo.shear_rows()
    b_d = _drilling_rows(geo.n, geo.dndx)
    w = geo.area
    k = (np.einsum("e,eg,egia,ij,egjb->eab", t, w, b_m, d_ps, b_m)
         + np.einsum("e,eg,egia,ij,egjb->eab", t ** 3 / 12, w, b_b, d_ps, b_b)
         + SHEAR_FACTOR * shear_modulus
         * np.einsum("e,eg,egia,egib->eab", t, w, b_s, b_s)
         + DRILLING * shear_modulus * np.einsum("e,eg,ega,egb->eab", t, w, b_d, b_d))
    scalar = np.einsum("eg,ga,gb->eab", w, geo.n, geo.n)                  # ∫ N_a N_b dA
    m = np.zeros((len(conn), 4, 6, 4, 6))
    for c in range(5):  # the drilling rotation θ_z carries no inertia (module docstring)
        per_area = rho * t if c < 3 else rho * t ** 3 / 12   # [kg/m², kg]
        m[:, :, c, :, c] = scalar * per_area[:, None, None]
    k = 0.5 * (k + k.transpose(0, 2, 1))
    shape = (len(conn), 8, 3, 8, 3)
    return (_rotate(axes, k.reshape(shape)), _rotate(axes, m.reshape(shape)))


def element_dofs(conn: np.ndarray) -> np.ndarray:
    """(E, 24) global DOF indices of the shell elements ``conn`` (6 per node)."""
    return (6 * np.asarray(conn, np.int64)[:, :, None] + np.arange(6)).reshape(len(conn), -1)


def assemble(nodes: np.ndarray, conn: np.ndarray, thickness, young: float, nu: float,
             rho: float, labels=None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Global (K, M) (6N x 6N, CSR) of the quadrilateral shells ``conn``
    (:func:`element_matrices`)."""
    k_e, m_e = element_matrices(nodes, conn, thickness, young, nu, rho, labels)
    dofs = element_dofs(conn)
    rows = np.repeat(dofs, 24, axis=1).ravel()
    cols = np.tile(dofs, (1, 24)).ravel()
    n = 6 * len(nodes)
    return (sp.csr_matrix((k_e.ravel(), (rows, cols)), shape=(n, n)),
            sp.csr_matrix((m_e.ravel(), (rows, cols)), shape=(n, n)))


def membrane_gradient_rows(nodes: np.ndarray, conn: np.ndarray, labels=None
                           ) -> tuple[sp.csr_matrix, np.ndarray]:
    """(G, dA): rows G (E·4·6, 6N) giving, at each Gauss point, the in-plane derivatives
    d = [u,x, u,y, v,x, v,y, w,x, w,y] of the mid-surface displacement in the element's
    local axes (u, v, w along e₁, e₂, e₃) from the global DOFs; dA (E·4,) [m²] the Gauss
    weights times det J."""
    conn = np.asarray(conn, np.int64)
    axes, corners = local_frames(nodes, conn, labels)
    geo = QuadGeometry(corners, labels)
    n_e = len(conn)
    # row (e, g, 2k + α) = Σ_a ∂N_a/∂x_α (e_k · U_a), U_a the translations of node a
    vals = np.einsum("egaj,eki->egkjai", geo.dndx, axes)            # (E, 4, 3, 2, 4, 3)
    rows = np.broadcast_to(np.arange(n_e * 4 * 6).reshape(n_e, 4, 3, 2, 1, 1), vals.shape)
    cols = np.broadcast_to((6 * conn)[:, None, None, None, :, None]
                           + np.arange(3)[None, None, None, None, None, :], vals.shape)
    grad = sp.csr_matrix((vals.ravel(), (rows.ravel(), cols.ravel())),
                         shape=(n_e * 24, 6 * len(nodes)))
    return grad, geo.area.ravel()


def membrane_green_lagrange() -> tuple[np.ndarray, np.ndarray]:
    """(Λ (3, 6), H (3, 6, 6)): the membrane Green–Lagrange strain [E_xx, E_yy, 2E_xy] =
    Λ d + ½ dᵀ H d of the derivatives d of :func:`membrane_gradient_rows`."""
    lin = np.zeros((3, 6))
    lin[0, 0] = lin[1, 3] = lin[2, 1] = lin[2, 2] = 1.0
    quad = np.zeros((3, 6, 6))
    for k in range(3):
        x, y = 2 * k, 2 * k + 1
        quad[0, x, x] = quad[1, y, y] = 1.0
        quad[2, x, y] = quad[2, y, x] = 1.0
    return lin, quad


def membrane_modulus(thickness, young: float, nu: float) -> np.ndarray:
    """D_m (3, 3) [N/m] of one thickness [m]."""
    return float(thickness) * _plane_stress(young, nu)


def surface_stresses(nodes: np.ndarray, conn: np.ndarray, thickness, young: float,
                     nu: float, u: np.ndarray, labels=None) -> np.ndarray:
    """Stresses (E, 4 Gauss points, 2 surfaces (bottom, top), 3 × 3) [Pa] in the FE axes
    of the displacement ``u`` (6N,): plane stress σ = D (ε_m ± t/2 κ) on the local axes,
    turned to the FE axes."""
    conn = np.asarray(conn, np.int64)
    t = np.broadcast_to(np.asarray(thickness, float), (len(conn),))
    axes, corners = local_frames(nodes, conn, labels)
    geo = QuadGeometry(corners, labels)
    u_l = np.einsum("eki,eai->eak", axes, np.asarray(u, float).reshape(-1, 2, 3)[
        conn.ravel()].reshape(len(conn), 8, 3)).reshape(len(conn), 24)
    eps = np.einsum("egia,ea->egi", membrane_rows(geo.dndx), u_l)
    kappa = np.einsum("egia,ea->egi", bending_rows(geo.dndx), u_l)
    d_ps = _plane_stress(young, nu)
    out = np.zeros((len(conn), 4, 2, 3, 3))
    for s, sign in enumerate((-0.5, 0.5)):
        voigt = np.einsum("ij,egj->egi", d_ps, eps + sign * t[:, None, None] * kappa)
        local = np.zeros((len(conn), 4, 3, 3))
        local[..., 0, 0], local[..., 1, 1] = voigt[..., 0], voigt[..., 1]
        local[..., 0, 1] = local[..., 1, 0] = voigt[..., 2]
        out[:, :, s] = np.einsum("eki,egkl,elj->egij", axes, local, axes)
    return out


def membrane_strain_group(nodes: np.ndarray, conn: np.ndarray, thickness, young: float,
                          nu: float, labels=None):
    """The :class:`~flexmbs.modal.fe.nonlinear_energy.StrainGroup` of the shells' membrane
    Green–Lagrange strain: one point per Gauss point, weight t dA [m³], plane-stress
    modulus E/(1 − ν²)[…] [Pa]."""
    from .nonlinear_energy import StrainGroup

    conn = np.asarray(conn, np.int64)
    t = np.broadcast_to(np.asarray(thickness, float), (len(conn),))
    grad, area = membrane_gradient_rows(nodes, conn, labels)
    lin, quad = membrane_green_lagrange()
    return StrainGroup(grad=grad, beta=np.ones(1), weight=area * np.repeat(t, 4),
                       linear=lin, quadratic=quad, modulus=_plane_stress(young, nu))


def geometric_stiffness(nodes: np.ndarray, conn: np.ndarray, thickness, young: float,
                        nu: float, u: np.ndarray, labels=None) -> sp.csr_matrix:
    """Global geometric stiffness (6N x 6N) [N/m …] of the membrane forces of the
    displacement ``u`` (6N,) in the quadrilateral shells ``conn``: the second variation
    of their work on the membrane Green–Lagrange strain, Σ_g Gᵀ (t dA Σ_c σ_c H_c) G
    (docs/theory_shells.md)."""
    group = membrane_strain_group(nodes, conn, thickness, young, nu, labels)
    d = (group.grad @ np.asarray(u, float)).reshape(-1, 6)            # (points, 6)
    stress = (d @ group.linear.T) @ group.modulus                      # (points, 3) [Pa]
    blocks = group.weight[:, None, None] * np.einsum("pc,cij->pij", stress,
                                                     group.quadratic)  # (points, 6, 6)
    return (group.grad.T @ sp.block_diag(list(blocks), format="csr") @ group.grad).tocsr()
