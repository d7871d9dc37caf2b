"""Flat shell elements of any FE mesh, quadrilaterals and triangles: stiffness, mass,
membrane strains and stresses (docs/theory_shells.md).

A thin-walled part (sheet metal, a box link's walls, a panel) is meshed with shells:
Nastran's CQUAD4 and CTRIA3, Abaqus's S4, S4R and S3. This module evaluates them as
flat Reissner–Mindlin facets with six DOFs per node [u_x, u_y, u_z, θ_x, θ_y, θ_z]
(translations [m], rotations [rad], in the FE axes). A quadrilateral is bilinear with
2 × 2 Gauss points, a triangle linear with 3 (the "Gauss points" below):

* **Local axes** of each element: e₃ along the cross product of its diagonals (a
  triangle: of its first two sides), e₁ along the side from its first to its second
  node projected on the mean plane, e₂ = e₃ × e₁.
  The corners are projected on that plane, and a warped quadrilateral's nodes are
  joined to its flat facet's corners by rigid links across their heights
  (:func:`warp_offsets`), so that its rigid motions cost no energy.
* **Membrane**: in-plane displacements of the element's shape functions, plane stress
  D_m = E t/(1 − ν²) [[1, ν, 0], [ν, 1, 0], [0, 0, (1 − ν)/2]] [N/m].
* **Bending**: the normal's rotations β_x = θ_y, β_y = −θ_x, bilinear, curvatures
  κ = [β_x,x, β_y,y, β_x,y + β_y,x], D_b = t²/12 D_m [N m].
* **Transverse shear**: MITC4 (Bathe and Dvorkin) and MITC3 (Lee and Bathe): the
  covariant shear strains are tied at the sides, which removes the shear locking of
  thin plates; k G t with k = 5/6, for the triangles times Lyly, Stenberg and Vihinen's
  t²/(t² + α h²) (:data:`STABILIZATION`), without which MITC3 still locks.
* **Drilling**: θ_z has no stiffness of its own in a flat facet. A penalty on the
  difference between θ_z and the membrane's rotation ½(v,x − u,y) (Hughes and Brezzi)
  at the Gauss points, with modulus ``DRILLING`` · G t, keeps the stiffness regular
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

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ...errors import ValidationError

#: Cell types of shell elements read here: quadrilaterals (MITC4) and triangles (MITC3).
SHELL_CELLS = ("quad", "triangle")

#: The drilling penalty's modulus as a fraction of the shear modulus G.
DRILLING = 1e-3

#: The transverse shear correction factor.
SHEAR_FACTOR = 5.0 / 6.0

_CORNERS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
_G = 1.0 / np.sqrt(3.0)


def _quad_shapes(xi: float, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """(N (4,), ∂N/∂(ξ, η) (4, 2)) of the bilinear quadrilateral."""
    n = 0.25 * (1 + _CORNERS[:, 0] * xi) * (1 + _CORNERS[:, 1] * eta)
    d = np.stack([0.25 * _CORNERS[:, 0] * (1 + _CORNERS[:, 1] * eta),
                  0.25 * _CORNERS[:, 1] * (1 + _CORNERS[:, 0] * xi)], axis=1)
    return n, d


def _triangle_shapes(r: float, s: float) -> tuple[np.ndarray, np.ndarray]:
    """(N (3,), ∂N/∂(r, s) (3, 2)) of the linear triangle."""
    return (np.array([1.0 - r - s, r, s]),
            np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]]))


def _quad_tying(covariant, xi: float, eta: float):
    """MITC4: γ_ξ from the mid-sides η = ±1, linear in η; γ_η from ξ = ±1, linear in ξ."""
    top, bottom = covariant(0.0, 1.0, 0), covariant(0.0, -1.0, 0)
    right, left = covariant(1.0, 0.0, 1), covariant(-1.0, 0.0, 1)
    return (0.5 * (1 + eta) * top + 0.5 * (1 - eta) * bottom,
            0.5 * (1 + xi) * right + 0.5 * (1 - xi) * left)


def _triangle_tying(covariant, r: float, s: float):
    """MITC3 (Lee and Bathe 2004): γ_r = γ_r⁽¹⁾ + c s, γ_s = γ_s⁽²⁾ − c r with the tying
    points (1) = (½, 0), (2) = (0, ½), (3) = (½, ½) and c = γ_s⁽²⁾ − γ_r⁽¹⁾ − γ_s⁽³⁾ + γ_r⁽³⁾."""
    first, second = covariant(0.5, 0.0, 0), covariant(0.0, 0.5, 1)
    c = second - first - covariant(0.5, 0.5, 1) + covariant(0.5, 0.5, 0)
    return first + c * s, second - c * r


class _Reference(NamedTuple):
    shapes: object        # (r, s) -> (N (a,), ∂N/∂(r, s) (a, 2))
    gauss: np.ndarray     # (G, 2) points in the reference element
    weights: np.ndarray   # (G,)
    tying: object         # (covariant, r, s) -> (γ_r row, γ_s row): the MITC shear


REFERENCE = {
    "quad": _Reference(_quad_shapes, np.array([[-_G, -_G], [_G, -_G], [_G, _G], [-_G, _G]]),
                       np.ones(4), _quad_tying),
    "triangle": _Reference(_triangle_shapes,
                           np.array([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3]]),
                           np.full(3, 1 / 6), _triangle_tying),
}


def cell_type(conn: np.ndarray) -> str:
    """``quad`` or ``triangle`` from the connectivity's width (4 or 3 nodes)."""
    width = np.asarray(conn).shape[1]
    if width not in (3, 4):
        raise ValidationError(f"shell cells have 3 or 4 nodes; got {width}")
    return "quad" if width == 4 else "triangle"


def _label(labels, k: int) -> int:
    return k + 1 if labels is None else int(labels[k])


def local_frames(nodes: np.ndarray, conn: np.ndarray, labels=None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(axes (E, 3, 3): rows e₁, e₂, e₃ of each element in the FE axes; corners (E, a, 2)
    [m] in those axes about the element's centre; heights (E, a) [m] of the corners above
    the element's plane, along e₃: a warped quadrilateral's). e₃ is the normal of the
    diagonals' cross product (a quadrilateral) or of the first two sides' (a triangle);
    e₁ the first side of non-zero length. Raises ValidationError naming an element whose
    corners are collapsed."""
    conn = np.asarray(conn, np.int64)
    kind = cell_type(conn)
    xyz = np.asarray(nodes, float)[conn]                                # (E, a, 3)
    if kind == "quad":
        normal = np.cross(xyz[:, 2] - xyz[:, 0], xyz[:, 3] - xyz[:, 1])
    else:
        normal = np.cross(xyz[:, 1] - xyz[:, 0], xyz[:, 2] - xyz[:, 0])
    size = np.linalg.norm(normal, axis=1)
    scale = np.ptp(xyz, axis=1).max(axis=1)
    bad = np.nonzero(size <= 1e-12 * scale ** 2)[0]
    if bad.size:
        k = int(bad[0])
        what = "its diagonals are parallel" if kind == "quad" else "its corners are in line"
        raise ValidationError(f"shell element {_label(labels, k)} ({kind}) is degenerate: "
                              f"{what} (nodes {[int(v) for v in conn[k]]})")
    e3 = normal / size[:, None]
    side = xyz[:, 1] - xyz[:, 0]
    short = np.linalg.norm(side, axis=1) <= 1e-9 * scale  # a collapsed first side
    side[short] = xyz[short, 2] - xyz[short, 1]
    side -= np.einsum("ei,ei->e", side, e3)[:, None] * e3
    e1 = side / np.linalg.norm(side, axis=1)[:, None]
    e2 = np.cross(e3, e1)
    axes = np.stack([e1, e2, e3], axis=1)
    centre = xyz.mean(axis=1)
    local = np.einsum("eai,eji->eaj", xyz - centre[:, None], axes)
    return axes, local[:, :, :2], local[:, :, 2]


def warp_offsets(heights: np.ndarray) -> np.ndarray:
    """W (E, 6a, 6a): the local DOFs of the flat element's corners from those of the
    nodes, each corner joined to its node by a rigid link across the height h_a
    (u_flat = u − h θ_y, v_flat = v + h θ_x): a rigid motion of a warped quadrilateral's
    nodes is then a rigid motion of its flat facet, and costs no energy."""
    n_e, n_a = heights.shape
    w = np.tile(np.eye(6 * n_a), (n_e, 1, 1)).reshape(n_e, n_a, 6, n_a, 6)
    corner = np.arange(n_a)
    w[:, corner, 0, corner, 4] = -heights
    w[:, corner, 1, corner, 3] = heights
    return w.reshape(n_e, 6 * n_a, 6 * n_a)


class ShellGeometry:
    """The mapping of every element at its Gauss points: ``n`` (G, a) the shape
    functions, ``dndx`` (E, G, a, 2) [1/m], ``area`` (E, G) [m²] (weight × det J),
    ``jac`` (E, G, 2, 2); and its MITC transverse shear (:meth:`shear_rows`)."""

    def __init__(self, corners: np.ndarray, labels=None):
        self.corners = corners
        self.kind = "quad" if corners.shape[1] == 4 else "triangle"
        self.ref = REFERENCE[self.kind]
        n_g, n_a = len(self.ref.gauss), corners.shape[1]
        self.n = np.empty((n_g, n_a))
        dn_ref = np.empty((n_g, n_a, 2))
        for g, (r, s) in enumerate(self.ref.gauss):
            self.n[g], dn_ref[g] = self.ref.shapes(r, s)
        jac = np.einsum("gad,eaj->egdj", dn_ref, corners)   # J_dj = ∂x_j/∂ξ_d
        det = np.linalg.det(jac)
        bad = np.nonzero(~(det.min(axis=1) > 0.0))[0]  # (NaN too)
        if bad.size:
            k = int(bad[0])
            raise ValidationError(f"shell element {_label(labels, k)} ({self.kind}) is "
                                  f"crossed or not convex: det J = {float(det[k].min()):.3g} "
                                  f"at a Gauss point (check its node order)")
        self.jac = jac
        self.dndx = np.einsum("egjd,gad->egaj", np.linalg.inv(jac), dn_ref)
        self.area = det * self.ref.weights[None, :]

    @property
    def n_dof(self) -> int:
        return 6 * self.corners.shape[1]

    def shear_rows(self) -> np.ndarray:
        """B_s (E, G, 2, 6a): the MITC transverse shear strains [γ_xz, γ_yz] at the Gauss
        points from the local element DOFs (6 per node)."""
        n_e, n_a = self.corners.shape[:2]

        def covariant(r, s, d):  # row of the covariant shear γ_r (d = 0) or γ_s (d = 1)
            n, dn = self.ref.shapes(r, s)
            tangent = np.einsum("a,eaj->ej", dn[:, d], self.corners)   # ∂x/∂ξ_d (E, 2)
            row = np.zeros((n_e, n_a, 6))
            row[:, :, 2] = dn[:, d]
            row[:, :, 4] = n[None, :] * tangent[:, None, 0]      # β_x = θ_y
            row[:, :, 3] = -n[None, :] * tangent[:, None, 1]     # β_y = −θ_x
            return row.reshape(n_e, -1)

        out = np.empty((n_e, len(self.ref.gauss), 2, self.n_dof))
        for g, (r, s) in enumerate(self.ref.gauss):
            nat = np.stack(self.ref.tying(covariant, r, s), axis=1)
            out[:, g] = np.linalg.solve(self.jac[:, g], nat)    # [γ_r, γ_s] = J γ
        return out

def _plane_stress(young: float, nu: float) -> np.ndarray:
    return young / (1 - nu * nu) * np.array([[1, nu, 0], [nu, 1, 0], [0, 0, 0.5 * (1 - nu)]])


def membrane_rows(dndx: np.ndarray) -> np.ndarray:
    """B_m (E, G, 3, 6a): [ε_xx, ε_yy, γ_xy] of the mid-surface from local element DOFs."""
    e, g, n_a = dndx.shape[:3]
    out = np.zeros((e, g, 3, n_a, 6))
    out[..., 0, :, 0] = dndx[..., 0]
    out[..., 1, :, 1] = dndx[..., 1]
    out[..., 2, :, 0] = dndx[..., 1]
    out[..., 2, :, 1] = dndx[..., 0]
    return out.reshape(e, g, 3, 6 * n_a)


def bending_rows(dndx: np.ndarray) -> np.ndarray:
    """B_b (E, G, 3, 6a) [1/m]: the curvatures [κ_xx, κ_yy, κ_xy] from local element
    DOFs."""
    e, g, n_a = dndx.shape[:3]
    out = np.zeros((e, g, 3, n_a, 6))
    out[..., 0, :, 4] = dndx[..., 0]
    out[..., 1, :, 3] = -dndx[..., 1]
    out[..., 2, :, 4] = dndx[..., 1]
    out[..., 2, :, 3] = -dndx[..., 0]
    return out.reshape(e, g, 3, 6 * n_a)


def _drilling_rows(n: np.ndarray, dndx: np.ndarray) -> np.ndarray:
    """(E, G, 6a): θ_z − ½(v,x − u,y) at the Gauss points."""
    e, g, n_a = dndx.shape[:3]
    out = np.zeros((e, g, n_a, 6))
    out[..., 5] = n[None]
    out[..., 1] = -0.5 * dndx[..., 0]
    out[..., 0] = 0.5 * dndx[..., 1]
    return out.reshape(e, g, 6 * n_a)


def _rotate(axes: np.ndarray, a: np.ndarray) -> np.ndarray:
    """(E, 6a, 6a): Σ T_ki A_(p,k)(q,l) T_lj over the 2a triples p, q (T = axes) of the
    local matrices ``a`` (E, 6a, 6a)."""
    n_e, size = a.shape[:2]
    triples = size // 3
    out = np.einsum("eki,epkql,elj->epiqj", axes, a.reshape(n_e, triples, 3, triples, 3),
                    axes)
    return out.reshape(n_e, size, size)


#: The triangles' shear stabilization α (Lyly, Stenberg and Vihinen 1993).
STABILIZATION = 0.1


def _shear_stabilization(geo: ShellGeometry, t: np.ndarray) -> np.ndarray:
    """(E,) the factor on the triangles' transverse shear stiffness, t²/(t² + α h²) with
    h the element's longest side: MITC3 alone locks in thin plates; the stabilized
    shear keeps the convergence of the thin limit. 1 for quadrilaterals (MITC4 does not
    lock)."""
    if geo.kind == "quad":
        return np.ones(len(t))
    sides = geo.corners - np.roll(geo.corners, 1, axis=1)
    h = np.linalg.norm(sides, axis=2).max(axis=1)
    return t ** 2 / (t ** 2 + STABILIZATION * h ** 2)


def _thickness(thickness, conn, labels) -> np.ndarray:
    t = np.broadcast_to(np.asarray(thickness, float), (len(conn),))
    bad = np.nonzero(~(np.isfinite(t) & (t > 0)))[0]
    if bad.size:
        k = int(bad[0])
        raise ValidationError(f"shell element {_label(labels, k)}: thickness must be a "
                              f"positive length [m]; got {t[k]!r}")
    return t


def element_matrices(nodes: np.ndarray, conn: np.ndarray, thickness, young: float,
                     nu: float, rho: float, labels=None) -> tuple[np.ndarray, np.ndarray]:
    """(K_e, M_e) (E, 6a, 6a) [N/m … N m/rad, kg … kg m²] of the shells ``conn`` (E, a):
    quadrilaterals (a = 4) or triangles (a = 3), node indices of ``nodes`` (N, 3) [m];
    thickness ``thickness`` [m] (one value or one per element), isotropic E [Pa], ν and ρ
    [kg/m³]; in the FE axes, node-major DOFs [u_x, u_y, u_z, θ_x, θ_y, θ_z]."""
    conn = np.asarray(conn, np.int64)
    t = _thickness(thickness, conn, labels)
    axes, corners, heights = local_frames(nodes, conn, labels)
    geo = ShellGeometry(corners, labels)
    d_ps = _plane_stress(young, nu)
    shear_modulus = young / (2 * (1 + nu))
    b_m, b_b = membrane_rows(geo.dndx), bending_rows(geo.dndx)
    b_s = geo.shear_rows()
    b_d = _drilling_rows(geo.n, geo.dndx)
    w = geo.area
    shear_t = t * _shear_stabilization(geo, t)
    k = (np.einsum("e,eg,egia,ij,egjb->eab", t, w, b_m, d_ps, b_m)
         + np.einsum("e,eg,egia,ij,egjb->eab", t ** 3 / 12, w, b_b, d_ps, b_b)
         + SHEAR_FACTOR * shear_modulus
         * np.einsum("e,eg,egia,egib->eab", shear_t, w, b_s, b_s)
         + DRILLING * shear_modulus * np.einsum("e,eg,ega,egb->eab", t, w, b_d, b_d))
    scalar = np.einsum("eg,ga,gb->eab", w, geo.n, geo.n)                  # ∫ N_a N_b dA
    n_a = conn.shape[1]
    m = np.zeros((len(conn), n_a, 6, n_a, 6))
    for c in range(5):  # the drilling rotation θ_z carries no inertia (module docstring)
        per_area = rho * t if c < 3 else rho * t ** 3 / 12   # [kg/m², kg]
        m[:, :, c, :, c] = scalar * per_area[:, None, None]
    k = 0.5 * (k + k.transpose(0, 2, 1))
    w_flat = warp_offsets(heights)
    k = np.einsum("eba,ebc,ecd->ead", w_flat, k, w_flat)
    m = np.einsum("eba,ebc,ecd->ead", w_flat, m.reshape(k.shape), w_flat)
    return _rotate(axes, k), _rotate(axes, m)


def element_dofs(conn: np.ndarray) -> np.ndarray:
    """(E, 6a) global DOF indices of the shell elements ``conn`` (6 per node)."""
    return (6 * np.asarray(conn, np.int64)[:, :, None] + np.arange(6)).reshape(len(conn), -1)


def assemble(nodes: np.ndarray, conn: np.ndarray, thickness, young: float, nu: float,
             rho: float, labels=None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Global (K, M) (6N x 6N, CSR) of the shells ``conn`` (:func:`element_matrices`)."""
    k_e, m_e = element_matrices(nodes, conn, thickness, young, nu, rho, labels)
    dofs = element_dofs(conn)
    size = dofs.shape[1]
    rows = np.repeat(dofs, size, axis=1).ravel()
    cols = np.tile(dofs, (1, size)).ravel()
    n = 6 * len(nodes)
    return (sp.csr_matrix((k_e.ravel(), (rows, cols)), shape=(n, n)),
            sp.csr_matrix((m_e.ravel(), (rows, cols)), shape=(n, n)))


def membrane_gradient_rows(nodes: np.ndarray, conn: np.ndarray, labels=None
                           ) -> tuple[sp.csr_matrix, np.ndarray]:
    """(G, dA): rows G (E·G·6, 6N) giving, at each Gauss point, the in-plane derivatives
    d = [u,x, u,y, v,x, v,y, w,x, w,y] of the mid-surface displacement in the element's
    local axes (u, v, w along e₁, e₂, e₃) from the global DOFs; dA (E·G,) [m²] the Gauss
    weights times det J. The displacement is the flat facet's (:func:`warp_offsets`):
    a node's translation U_a plus h_a e₃ × θ_a."""
    conn = np.asarray(conn, np.int64)
    axes, corners, heights = local_frames(nodes, conn, labels)
    geo = ShellGeometry(corners, labels)
    n_e, n_g = geo.dndx.shape[:2]
    # row (e, g, 2k + α) = Σ_a ∂N_a/∂x_α e_k · (U_a + h_a e₃ × θ_a), and
    # e_k · (e₃ × θ) = θ · (e_k × e₃): (−e₂, e₁, 0) for k = 1, 2, 3
    lever = np.stack([-axes[:, 1], axes[:, 0], np.zeros_like(axes[:, 0])], axis=1)
    per_dof = np.concatenate([np.broadcast_to(axes[:, None], (n_e, conn.shape[1], 3, 3)),
                              heights[:, :, None, None] * lever[:, None]], axis=3)
    vals = np.einsum("egaj,eaki->egkjai", geo.dndx, per_dof)        # (E, G, 3, 2, a, 6)
    rows = np.broadcast_to(np.arange(n_e * n_g * 6).reshape(n_e, n_g, 3, 2, 1, 1),
                           vals.shape)
    cols = np.broadcast_to((6 * conn)[:, None, None, None, :, None]
                           + np.arange(6)[None, None, None, None, None, :], vals.shape)
    grad = sp.csr_matrix((vals.ravel(), (rows.ravel(), cols.ravel())),
                         shape=(n_e * n_g * 6, 6 * len(nodes)))
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


def surface_stresses(nodes: np.ndarray, conn: np.ndarray, thickness, young: float,
                     nu: float, u: np.ndarray, labels=None) -> np.ndarray:
    """Stresses (E, G Gauss points, 2 surfaces (bottom, top), 3 × 3) [Pa] in the FE axes
    of the displacement ``u`` (6N,): plane stress σ = D (ε_m ± t/2 κ) on the local axes,
    turned to the FE axes."""
    conn = np.asarray(conn, np.int64)
    t = _thickness(thickness, conn, labels)
    axes, corners, heights = local_frames(nodes, conn, labels)
    geo = ShellGeometry(corners, labels)
    n_e, n_g, n_a = geo.dndx.shape[:3]
    nodal = np.asarray(u, float).reshape(-1, 2, 3)[conn.ravel()].reshape(n_e, 2 * n_a, 3)
    u_l = np.einsum("eab,eb->ea", warp_offsets(heights), np.einsum(
        "eki,eai->eak", axes, nodal).reshape(n_e, 6 * n_a))
    eps = np.einsum("egia,ea->egi", membrane_rows(geo.dndx), u_l)
    kappa = np.einsum("egia,ea->egi", bending_rows(geo.dndx), u_l)
    d_ps = _plane_stress(young, nu)
    out = np.zeros((n_e, n_g, 2, 3, 3))
    for side, sign in enumerate((-0.5, 0.5)):
        voigt = np.einsum("ij,egj->egi", d_ps, eps + sign * t[:, None, None] * kappa)
        local = np.zeros((n_e, n_g, 3, 3))
        local[..., 0, 0], local[..., 1, 1] = voigt[..., 0], voigt[..., 1]
        local[..., 0, 1] = local[..., 1, 0] = voigt[..., 2]
        out[:, :, side] = np.einsum("eki,egkl,elj->egij", axes, local, axes)
    return out


def gauss_to_corners(conn: np.ndarray) -> np.ndarray:
    """(a corners, G points) of the shells ``conn``: the corner values of the field that
    the Gauss-point values interpolate (bilinear or linear)."""
    ref = REFERENCE[cell_type(conn)]
    return np.linalg.inv(np.array([ref.shapes(r, s)[0] for r, s in ref.gauss]))


def membrane_strain_group(nodes: np.ndarray, conn: np.ndarray, thickness, young: float,
                          nu: float, labels=None):
    """The :class:`~flexmbs.modal.fe.nonlinear_energy.StrainGroup` of the shells' membrane
    Green–Lagrange strain: one point per Gauss point, weight t dA [m³], plane-stress
    modulus E/(1 − ν²)[…] [Pa]."""
    from .nonlinear_energy import StrainGroup

    conn = np.asarray(conn, np.int64)
    t = _thickness(thickness, conn, labels)
    grad, area = membrane_gradient_rows(nodes, conn, labels)
    lin, quad = membrane_green_lagrange()
    points = len(REFERENCE[cell_type(conn)].gauss)
    return StrainGroup(grad=grad, beta=np.ones(1), weight=area * np.repeat(t, points),
                       linear=lin, quadratic=quad, modulus=_plane_stress(young, nu))


def geometric_stiffness(nodes: np.ndarray, conn: np.ndarray, thickness, young: float,
                        nu: float, u: np.ndarray, labels=None) -> sp.csr_matrix:
    """Global geometric stiffness (6N x 6N) [N/m …] of the membrane forces of the
    displacement ``u`` (6N,) in the shells ``conn``: the second variation of their work
    on the membrane Green–Lagrange strain, Σ_g Gᵀ (t dA Σ_c σ_c H_c) G
    (docs/theory_shells.md)."""
    group = membrane_strain_group(nodes, conn, thickness, young, nu, labels)
    d = (group.grad @ np.asarray(u, float)).reshape(-1, 6)            # (points, 6)
    stress = (d @ group.linear.T) @ group.modulus                      # (points, 3) [Pa]
    blocks = group.weight[:, None, None] * np.einsum("pc,cij->pij", stress,
                                                     group.quadratic)  # (points, 6, 6)
    return (group.grad.T @ sp.block_diag(list(blocks), format="csr") @ group.grad).tocsr()
