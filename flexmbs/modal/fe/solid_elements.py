"""Stresses and geometric stiffness of solid elements of any FE mesh (docs/theory_stiffening.md).

The geometric stiffening of a reduced body needs, for each unit load case, the stress of
the static FE solution and the geometric stiffness of that stress. For FE matrices that
come from elsewhere (Matrix Market or Abaqus files) the element information comes with
them: the connectivity (``FEModel.cells``, meshio cell types) and an isotropic material
(``FEModel.metadata["material"]``, E [Pa] and ν). This module evaluates, for the linear
solid elements

* ``hexahedron`` (8 nodes, trilinear, 2 x 2 x 2 Gauss points; Abaqus C3D8/C3D8R/C3D8I;
  the node order of VTK and Abaqus: one face counter-clockwise seen from the opposite
  face, then the opposite face likewise),
* ``tetra`` (4 nodes, linear, one point; Abaqus C3D4),
* ``hexahedron20`` (20 nodes, serendipity, 2 x 2 x 2 Gauss points: uniform reduced
  integration, MAPDL's SOLID186 by default; the VTK / meshio node order),

of arbitrary shape (isoparametric mapping), the Gauss-point stress of a displacement
field and the geometric stiffness it gives,

    K_G,ab = Σ_g w_g det J_g (∇N_a)ᵀ σ_g (∇N_b) I₃        (node pair a, b; 3 x 3 block)

which is the second variation of the work of the stress σ on the Green–Lagrange strain's
quadratic part ½ ∇uᵀ∇u. Stresses are σ = λ tr(ε) I + 2 μ ε with ε = sym ∇u (Hooke,
isotropic). Everything is SI and in the FE (body) frame.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ...errors import ValidationError

#: Cell types whose stresses and geometric stiffness are computed here.
STRESS_CELLS = ("hexahedron", "tetra", "hexahedron20")

#: Natural coordinates (±1) of the hexahedron's corners in the VTK / meshio order.
_HEX_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)


def _hex_reference_gradients() -> tuple[np.ndarray, np.ndarray]:
    """(∂N/∂ξ at the 8 Gauss points (8, 8 nodes, 3), weights (8,)) of the trilinear brick."""
    g = 1.0 / math.sqrt(3.0)
    points = g * _HEX_CORNERS
    factors = 1.0 + _HEX_CORNERS[None, :, :] * points[:, None, :]   # (point, node, 3)
    grads = np.empty((8, 8, 3))
    for d in range(3):
        others = [e for e in range(3) if e != d]
        grads[:, :, d] = _HEX_CORNERS[None, :, d] * factors[:, :, others].prod(axis=2) / 8.0
    return grads, np.ones(8)


def _tet_reference_gradients() -> tuple[np.ndarray, np.ndarray]:
    """(∂N/∂ξ (1 point, 4 nodes, 3), weights (1,)): N = (1−ξ−η−ζ, ξ, η, ζ), volume 1/6."""
    grads = np.array([[[-1.0, -1.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0],
                       [0.0, 0.0, 1.0]]])
    return grads, np.array([1.0 / 6.0])


#: Natural coordinates of the 20-node brick's nodes in the VTK / meshio order: the 8
#: corners, then the midsides of the edges (0 1), (1 2), (2 3), (3 0), (4 5), (5 6),
#: (6 7), (7 4), (0 4), (1 5), (2 6), (3 7).
HEX20_EDGES = ((0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4),
               (1, 5), (2, 6), (3, 7))
_HEX20_NODES = np.vstack([_HEX_CORNERS,
                          [(_HEX_CORNERS[a] + _HEX_CORNERS[b]) / 2 for a, b in HEX20_EDGES]])


def hex20_shapes(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N (P, 20), ∂N/∂ξ (P, 20, 3)) of the serendipity 20-node brick at the natural
    points (P, 3): corners N = ⅛ Π(1 + ξ_iξ) (ξ_iξ + η_iη + ζ_iζ − 2), midsides
    N = ¼ (1 − ξ²)(1 + η_iη)(1 + ζ_iζ) and its permutations."""
    pts = np.asarray(points, float)[:, None, :]               # (P, 1, 3)
    nat = _HEX20_NODES[None, :, :]                            # (1, 20, 3)
    lin = 1.0 + nat * pts                                     # (P, 20, 3): 1 + ξ_i ξ
    quad = 1.0 - pts ** 2                                     # (P, 1, 3)
    n_p = pts.shape[0]
    shapes, grads = np.empty((n_p, 20)), np.empty((n_p, 20, 3))
    corner = slice(0, 8)
    s = (nat[:, corner] * pts).sum(axis=2) - 2.0              # (P, 8)
    prod = lin[:, corner].prod(axis=2)                        # (P, 8)
    shapes[:, corner] = prod * s / 8.0
    for d in range(3):
        others = lin[:, corner][..., [e for e in range(3) if e != d]].prod(axis=2)
        grads[:, corner, d] = nat[:, corner, d] * (others * s + prod) / 8.0
    mid = slice(8, 20)
    zero = nat[0, mid] == 0.0                                  # (12, 3): the edge's axis
    factors = np.where(zero[None], quad, lin[:, mid])          # (P, 12, 3)
    shapes[:, mid] = factors.prod(axis=2) / 4.0
    dfactors = np.where(zero[None], -2.0 * np.broadcast_to(pts, factors.shape),
                        np.broadcast_to(nat[:, mid], factors.shape))
    for d in range(3):
        others = factors[..., [e for e in range(3) if e != d]].prod(axis=2)
        grads[:, mid, d] = dfactors[..., d] * others / 4.0
    return shapes, grads


def _hex20_reference_gradients() -> tuple[np.ndarray, np.ndarray]:
    """(∂N/∂ξ at the 2 × 2 × 2 Gauss points (8, 20, 3), weights (8,)) of the 20-node
    brick: the uniform reduced integration of MAPDL's SOLID186 (its default
    KEYOPT(2) = 0), whose stiffness tests/test_ansys_solid186.py compares with MAPDL's
    own to 1e-10 (measured 2.6e-13); the points in the order of the 8-node brick's."""
    points = _HEX_CORNERS / math.sqrt(3.0)
    return hex20_shapes(points)[1], np.ones(8)


#: Irons' 14-point rule on the cube [−1, 1]³ (exact to degree 5): six points on the axes
#: at ±b and eight at (±c, ±c, ±c), with their weights; the consistent mass of the
#: 20-node brick as MAPDL's SOLID186 integrates it.
_B14, _C14 = 0.795822425754221, 0.758786910639328
_W_B14, _W_C14 = 0.886426592797784, 0.335180055401662


def irons14() -> tuple[np.ndarray, np.ndarray]:
    """(points (14, 3), weights (14,)) of Irons' 14-point rule (sum of weights 8)."""
    axes = np.vstack([np.eye(3), -np.eye(3)]) * _B14
    corners = _HEX_CORNERS * _C14
    return (np.vstack([axes, corners]),
            np.concatenate([np.full(6, _W_B14), np.full(8, _W_C14)]))


_REFERENCE = {"hexahedron": _hex_reference_gradients, "tetra": _tet_reference_gradients,
              "hexahedron20": _hex20_reference_gradients}


def gradients(nodes: np.ndarray, conn: np.ndarray, cell_type: str,
              labels=None) -> tuple[np.ndarray, np.ndarray]:
    """Shape-function gradients of every element at its Gauss points.

    Parameters
    ----------
    nodes : ndarray, shape (N, 3)
        Node coordinates [m].
    conn : ndarray of int, shape (E, n_a)
        Connectivity in node indices (n_a = 8 for hexahedra, 4 for tetrahedra).
    cell_type : {"hexahedron", "tetra"}
    labels : sequence of int, optional
        Element labels for messages (default: 1-based position).

    Returns
    -------
    dndx : ndarray, shape (E, G, n_a, 3)
        ∂N_a/∂x at the Gauss points [1/m].
    dvol : ndarray, shape (E, G)
        Gauss weight times det J [m³] (sums to each element's volume).

    Raises ValidationError naming the element when its mapping is inverted or degenerate
    (det J ≤ 0 at a Gauss point: wrong node order or a collapsed element).
    """
    if cell_type not in _REFERENCE:
        raise ValidationError(f"no stresses for cell type {cell_type!r}; known: "
                              f"{list(STRESS_CELLS)}")
    ref, weights = _REFERENCE[cell_type]()
    coords = np.asarray(nodes, float)[np.asarray(conn, np.int64)]       # (E, a, 3)
    jac = np.einsum("gad,eai->egid", ref, coords)                      # J_id = ∂x_i/∂ξ_d
    det = np.linalg.det(jac)
    size = np.ptp(coords, axis=1).max(axis=1) ** 3                      # (E,) scale [m³]
    bad = np.nonzero(np.min(det, axis=1) <= 1e-12 * size)[0]
    if bad.size:
        k = int(bad[0])
        label = k + 1 if labels is None else int(labels[k])
        raise ValidationError(
            f"element {label} ({cell_type}) is inverted or degenerate: det J = "
            f"{float(np.min(det[k])):.3g} at a Gauss point (check its node order: "
            f"{[int(v) for v in np.asarray(conn)[k]]})")
    inv = np.linalg.inv(jac)                                           # ∂ξ_d/∂x_i
    dndx = np.einsum("gad,egdi->egai", ref, inv)
    return dndx, det * weights[None, :]


def isotropic_lame(young: float, poisson: float) -> tuple[float, float]:
    """Lamé constants (λ, μ) [Pa] of an isotropic material, E [Pa] and ν."""
    if not (np.isfinite(young) and young > 0):
        raise ValidationError(f"material E must be a positive number [Pa]; got {young!r}")
    if not (np.isfinite(poisson) and -1.0 < poisson < 0.5):
        raise ValidationError(f"material nu must lie in (-1, 0.5); got {poisson!r}")
    lam = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson))
    return lam, young / (2.0 * (1.0 + poisson))


def gauss_stresses(dndx: np.ndarray, conn: np.ndarray, u: np.ndarray, lame) -> np.ndarray:
    """Cauchy stress (E, G, 3, 3) [Pa] at the Gauss points of the displacement ``u``
    (3N,) [m]: σ = λ tr(ε) I + 2 μ ε, ε = sym(Σ_a u_a ⊗ ∇N_a)."""
    lam, mu = lame
    u_e = np.asarray(u, float).reshape(-1, 3)[np.asarray(conn, np.int64)]   # (E, a, 3)
    grad = np.einsum("eai,egaj->egij", u_e, dndx)
    strain = 0.5 * (grad + np.swapaxes(grad, -1, -2))
    trace = np.trace(strain, axis1=-2, axis2=-1)
    return lam * trace[..., None, None] * np.eye(3) + 2.0 * mu * strain


def geometric_stiffness(nodes: np.ndarray, cells: dict, u: np.ndarray, lame,
                        labels: dict | None = None) -> sp.csr_matrix:
    """Global geometric stiffness (3N x 3N) [N/m] of the stress of the displacement
    ``u`` (3N,) [m] in the solid ``cells`` (cell type → connectivity in node indices;
    only the types of :data:`STRESS_CELLS` are read) of the mesh ``nodes`` (N, 3) [m];
    ``labels``: cell type → element labels, for messages."""
    n_nodes = len(nodes)
    scalar = sp.csr_matrix((n_nodes, n_nodes))
    for cell_type in STRESS_CELLS:
        if cell_type not in cells:
            continue
        conn = np.asarray(cells[cell_type], np.int64)
        dndx, dvol = gradients(nodes, conn, cell_type, (labels or {}).get(cell_type))
        sigma = gauss_stresses(dndx, conn, u, lame)
        k_e = np.einsum("eg,egai,egij,egbj->eab", dvol, dndx, sigma, dndx)   # (E, a, b)
        n_a = conn.shape[1]
        rows = np.repeat(conn, n_a, axis=1).ravel()
        cols = np.tile(conn, (1, n_a)).ravel()
        scalar = scalar + sp.csr_matrix((k_e.ravel(), (rows, cols)),
                                        shape=(n_nodes, n_nodes))
    return sp.kron(scalar, sp.identity(3), format="csr")
