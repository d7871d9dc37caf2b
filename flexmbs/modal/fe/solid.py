"""Structured hexahedral (hex8) linear-elastic solid meshes of a rectangular block.

:func:`box_mesh` builds the mass and stiffness matrices of a block meshed with
``nx * ny * nz`` identical 8-node trilinear hexahedra (2x2x2 Gauss integration), as an
:class:`~flexmbs.modal.femodel.FEModel` with 3 translational DOFs per node. It serves as
a scalable test and benchmark component for modal reduction (10^3 .. 10^5 nodes and
more) and as a reference for the "isotropic" consistent-mass path: the consistent mass
of a solid is exactly ``M_s (x) I3``, every 3x3 node block is a scalar times identity.

Assembly is fully vectorised and never forms a dense ``n_dof x n_dof`` matrix. All
elements of a structured box are translates of one another, so the 24x24 element
stiffness and 8x8 scalar element mass are computed once (:func:`hex8_element_matrices`)
and scattered as a 27-point nodal stencil: the 3x3 stiffness block coupling node ``p``
with its neighbour ``p + offset`` is the sum of the element blocks over the (at most
eight) elements the two nodes share. The assembled matrices are exactly symmetric.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import scipy.sparse as sp

from ...errors import ValidationError
from ..femodel import FEModel

__all__ = ["box_mesh", "hex8_element_matrices"]

_GENERATOR = "flexmbs.modal.fe.solid"

#: Local corner positions (0/1 along x, y, z) of the VTK / meshio ``hexahedron``:
#: bottom face (z=0) counter-clockwise seen from +z, then the top face likewise.
_HEX8_CORNERS = np.array(
    [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
     [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=np.int64)


# ----------------------------------------------------------------------------- validation
def _real_scalar(value, name: str, func: str = "box_mesh") -> float:
    if isinstance(value, (bool, np.bool_)):
        raise ValidationError(f"{func}: {name} must be a real number; got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"{func}: {name} must be a real number; got {value!r}") from exc
    if arr.ndim != 0:
        raise ValidationError(
            f"{func}: {name} must be a scalar; got an array of shape {arr.shape}")
    out = float(arr)
    if not math.isfinite(out):
        raise ValidationError(f"{func}: {name} must be finite; got {out!r}")
    return out


def _positive(value, name: str, what: str, func: str = "box_mesh") -> float:
    out = _real_scalar(value, name, func)
    if out <= 0.0:
        raise ValidationError(f"{func}: {name} ({what}) must be > 0; got {out!r}")
    return out


def _count(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise ValidationError(
            f"box_mesh: {name} (number of elements) must be a positive int; got {value!r}")
    try:
        out = operator.index(value)
    except TypeError as exc:
        raise ValidationError(
            f"box_mesh: {name} (number of elements) must be a positive int; got "
            f"{value!r} ({type(value).__name__})") from exc
    if out < 1:
        raise ValidationError(
            f"box_mesh: {name} (number of elements) must be >= 1; got {out}")
    return int(out)


def _poisson(value, name: str = "nu", func: str = "box_mesh") -> float:
    out = _real_scalar(value, name, func)
    if not -1.0 < out < 0.5:
        raise ValidationError(
            f"{func}: {name} (Poisson's ratio) must lie in the open interval (-1, 0.5); "
            f"got {out!r}")
    return out


def _origin(value) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"box_mesh: origin must be 3 real coordinates [m]; got {value!r}") from exc
    if arr.shape != (3,):
        raise ValidationError(
            f"box_mesh: origin must have shape (3,); got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValidationError(f"box_mesh: origin must be finite; got {arr.tolist()}")
    return arr


def _isotropic_elasticity(E: float, nu: float) -> np.ndarray:
    """6x6 isotropic elasticity matrix, Voigt order [xx, yy, zz, xy, yz, zx] [Pa]."""
    lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))
    mu = E / (2.0 * (1.0 + nu))
    D = np.zeros((6, 6))
    D[:3, :3] = lam
    D[np.arange(3), np.arange(3)] += 2.0 * mu
    D[np.arange(3, 6), np.arange(3, 6)] = mu
    return D


# ----------------------------------------------------------------------------- element
def hex8_element_matrices(hx: float, hy: float, hz: float, *, E: float, nu: float,
                          rho: float) -> tuple[np.ndarray, np.ndarray]:
    """Stiffness and scalar mass of one rectangular trilinear hexahedron.

    Parameters
    ----------
    hx, hy, hz : float
        Edge lengths of the axis-aligned brick [m].
    E : float
        Young's modulus [Pa].
    nu : float
        Poisson's ratio [-], in (-1, 0.5).
    rho : float
        Density [kg/m^3].

    Returns
    -------
    Ke : ndarray, shape (24, 24)
        Element stiffness [N/m], DOF order ``[u0x, u0y, u0z, u1x, ...]`` over the eight
        corners in VTK/meshio ``hexahedron`` order; exactly symmetric.
    Ms : ndarray, shape (8, 8)
        Scalar consistent element mass [kg]; the 24x24 consistent mass is
        ``np.kron(Ms, np.eye(3))``. ``Ms.sum() == rho * hx * hy * hz``.

    Notes
    -----
    2x2x2 Gauss quadrature, which is exact for both matrices of a rectangular brick
    (full integration). Fully integrated trilinear hexahedra shear-lock in bending.
    """
    fn = "hex8_element_matrices"
    hx = _positive(hx, "hx", "element length [m]", fn)
    hy = _positive(hy, "hy", "element length [m]", fn)
    hz = _positive(hz, "hz", "element length [m]", fn)
    E = _positive(E, "E", "Young's modulus [Pa]", fn)
    nu = _poisson(nu, "nu", fn)
    rho = _positive(rho, "rho", "density [kg/m^3]", fn)

    shape, dndx, det_j = hex8_gauss_data(hx, hy, hz)
    B = hex8_strain_matrices(dndx)
    D = _isotropic_elasticity(E, nu)
    Ke = det_j * np.einsum("gia,ij,gjb->ab", B, D, B)
    Ke = 0.5 * (Ke + Ke.T)
    Ms = rho * det_j * np.einsum("ga,gb->ab", shape, shape)
    Ms = 0.5 * (Ms + Ms.T)
    return Ke, Ms


def hex8_gauss_data(hx: float, hy: float, hz: float):
    """(N (8 points, 8 nodes), ∂N/∂x (8 points, 8 nodes, 3) [1/m], det J [m³]) of the
    rectangular brick at its 2x2x2 Gauss points (unit weights)."""
    xi_nodes = 2.0 * _HEX8_CORNERS - 1.0                              # (8 nodes, 3)
    g = 1.0 / math.sqrt(3.0)
    xi_gauss = 2.0 * _HEX8_CORNERS * g - g                            # (8 points, 3), w=1
    factors = 1.0 + xi_nodes[None, :, :] * xi_gauss[:, None, :]      # (pt, node, 3)
    shape = factors.prod(axis=2) / 8.0                                # (pt, node)
    dshape = np.empty((8, 8, 3))                                      # (pt, node, dir)
    for d in range(3):
        others = [e for e in range(3) if e != d]
        dshape[:, :, d] = xi_nodes[None, :, d] * factors[:, :, others].prod(axis=2) / 8.0
    h = np.array([hx, hy, hz])
    return shape, dshape * (2.0 / h)[None, None, :], hx * hy * hz / 8.0


def hex8_strain_matrices(dndx: np.ndarray) -> np.ndarray:
    """B (8 points, 6, 24): Voigt strains [xx, yy, zz, xy, yz, zx] (engineering shear)
    from the 24 element DOFs, at each Gauss point."""
    B = np.zeros((8, 6, 24))
    cx, cy, cz = (slice(d, 24, 3) for d in range(3))
    nx_, ny_, nz_ = dndx[:, :, 0], dndx[:, :, 1], dndx[:, :, 2]
    B[:, 0, cx] = nx_
    B[:, 1, cy] = ny_
    B[:, 2, cz] = nz_
    B[:, 3, cx] = ny_
    B[:, 3, cy] = nx_
    B[:, 4, cy] = nz_
    B[:, 4, cz] = ny_
    B[:, 5, cz] = nx_
    B[:, 5, cx] = nz_
    return B


# ----------------------------------------------------------------------------- assembly
def _stencil_assemble(counts: tuple[int, int, int], Ke: np.ndarray, Ms: np.ndarray):
    """Assemble a structured hex8 grid as a 27-point nodal stencil.

    Returns the stiffness (3N x 3N) and the scalar mass (N x N) as CSR, both with
    node-major numbering ``p = (i * (ny+1) + j) * (nz+1) + k``.
    """
    nx, ny, nz = counts
    dims = np.array([nx + 1, ny + 1, nz + 1])
    n_nodes = int(dims.prod())
    strides = np.array([dims[1] * dims[2], dims[2], 1], dtype=np.int64)
    grid = np.indices(tuple(dims)).reshape(3, -1)                     # (3, N): i, j, k

    # masks[p, a] = 1 if the element having node p at local corner a exists
    masks = np.ones((n_nodes, 8))
    for a, corner in enumerate(_HEX8_CORNERS):
        for d in range(3):
            e = grid[d] - corner[d]
            masks[:, a] *= (e >= 0) & (e < counts[d])

    # offsets (di, dj, dk) in {-1, 0, 1}^3, lexicographic, index o = 9(di+1)+3(dj+1)+(dk+1)
    offsets = np.array(np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1],
                                   indexing="ij")).reshape(3, -1).T   # (27, 3)
    shift = offsets @ strides
    k_stencil = np.zeros((8, 27, 3, 3))
    m_stencil = np.zeros((8, 27))
    link = np.zeros((8, 27))
    for a in range(8):
        for b in range(8):
            o = int((_HEX8_CORNERS[b] - _HEX8_CORNERS[a] + 1) @ np.array([9, 3, 1]))
            k_stencil[a, o] = Ke[3 * a:3 * a + 3, 3 * b:3 * b + 3]
            m_stencil[a, o] = Ms[a, b]
            link[a, o] = 1.0

    valid = (masks @ link) > 0.5                                      # (N, 27)
    blocks = (masks @ k_stencil.reshape(8, 27 * 9)).reshape(n_nodes, 27, 3, 3)
    mass = masks @ m_stencil                                          # (N, 27)
    # Enforce exact symmetry: the block (p, p+s) is the transpose of (p+s, p); the
    # sums above add the same element terms in a different order.
    for o in range(13):
        rows = np.flatnonzero(valid[:, o])
        cols = rows + shift[o]
        blocks[rows, o] = blocks[cols, 26 - o].transpose(0, 2, 1)
        mass[rows, o] = mass[cols, 26 - o]

    # For a fixed node, valid neighbours in lexicographic offset order have increasing
    # node numbers, so the column indices below are sorted within each row.
    indices = (np.arange(n_nodes, dtype=np.int64)[:, None] + shift[None, :])[valid]
    indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(valid.sum(axis=1), out=indptr[1:])
    block_data = blocks[valid]
    del blocks                                    # free it before the CSR conversion
    stiffness = sp.bsr_matrix((block_data, indices, indptr),
                              shape=(3 * n_nodes, 3 * n_nodes)).tocsr()
    del block_data
    mass_scalar = sp.csr_matrix((mass[valid], indices, indptr), shape=(n_nodes, n_nodes))
    return stiffness, mass_scalar


def _box_connectivity(counts: tuple[int, int, int]) -> np.ndarray:
    nx, ny, nz = counts
    strides = np.array([(ny + 1) * (nz + 1), nz + 1, 1], dtype=np.int64)
    ei, ej, ek = np.indices((nx, ny, nz)).reshape(3, -1)
    base = ei * strides[0] + ej * strides[1] + ek
    return base[:, None] + (_HEX8_CORNERS @ strides)[None, :]


# ----------------------------------------------------------------------------- public
def box_mesh(lx: float, ly: float, lz: float, nx: int, ny: int, nz: int, *, E: float,
             nu: float, rho: float, origin=(0.0, 0.0, 0.0), lumped: bool = False
             ) -> FEModel:
    """Structured hex8 mesh of the block ``[origin, origin + (lx, ly, lz)]``.

    The block is divided into ``nx * ny * nz`` identical 8-node trilinear hexahedra
    (linear elastic, isotropic, 2x2x2 Gauss integration), giving
    ``(nx+1)(ny+1)(nz+1)`` nodes with 3 translational DOFs each.

    Parameters
    ----------
    lx, ly, lz : float
        Edge lengths of the block along x, y, z [m]; > 0.
    nx, ny, nz : int
        Number of elements along x, y, z; >= 1.
    E : float
        Young's modulus [Pa]; > 0.
    nu : float
        Poisson's ratio [-], in the open interval (-1, 0.5).
    rho : float
        Density [kg/m^3]; > 0.
    origin : sequence of 3 float, optional
        Corner of the block with the smallest coordinates [m]. Default (0, 0, 0).
    lumped : bool, optional
        False (default): consistent mass, exactly ``M_s (x) I3`` where ``M_s`` is the
        assembled scalar (N x N) mass [kg]. True: row-sum lumped, diagonal mass (each
        node gets the sum of its row of ``M_s`` in all three directions).

    Returns
    -------
    FEModel
        ``nodes`` (N, 3) [m]; ``mass`` [kg] and ``stiffness`` [N/m] as CSR,
        ``dofs_per_node=3``, node-major DOF order ``[u0x, u0y, u0z, u1x, ...]``.
        Node ``(i, j, k)`` (position ``origin + (i lx/nx, j ly/ny, k lz/nz)``) has
        index ``(i * (ny+1) + j) * (nz+1) + k`` (x slowest, so a slender bar along x
        has a narrow band). ``node_sets``: ``"x0"`` / ``"x1"`` the nodes on the faces
        x = origin_x / origin_x + lx, likewise ``"y0"``, ``"y1"``, ``"z0"``, ``"z1"``,
        and ``"all"``. ``cells``: ``{"hexahedron": conn}`` with ``conn`` of shape
        (nx*ny*nz, 8) in meshio/VTK corner order. ``metadata``: generator
        ``"flexmbs.modal.fe.solid"`` and every parameter.

    Raises
    ------
    flexmbs.errors.ValidationError
        If a length, count, ``E`` or ``rho`` is not positive and finite, ``nu`` is
        outside (-1, 0.5), ``origin`` is not 3 finite numbers, or ``lumped`` is not a
        bool. The message names the argument.

    Notes
    -----
    The element matrices are computed once (:func:`hex8_element_matrices`) and
    scattered as a 27-point nodal stencil, in O(N) time and memory; no dense
    ``n_dof x n_dof`` array is ever formed. About 10^5 nodes build in well under a
    second plus :class:`FEModel` validation.

    Fully integrated trilinear hexahedra shear-lock in bending: bending stiffness and
    frequencies of thin parts are overestimated unless several elements span the
    thickness. That is acceptable for benchmarks and for tests of the reduction
    machinery; axial, torsional and rigid-body behaviour are unaffected (the element
    passes the constant-strain patch test).
    """
    lx = _positive(lx, "lx", "length [m]")
    ly = _positive(ly, "ly", "length [m]")
    lz = _positive(lz, "lz", "length [m]")
    counts = (_count(nx, "nx"), _count(ny, "ny"), _count(nz, "nz"))
    E = _positive(E, "E", "Young's modulus [Pa]")
    nu = _poisson(nu)
    rho = _positive(rho, "rho", "density [kg/m^3]")
    org = _origin(origin)
    if not isinstance(lumped, (bool, np.bool_)):
        raise ValidationError(f"box_mesh: lumped must be a bool; got {lumped!r}")
    lumped = bool(lumped)

    lengths = (lx, ly, lz)
    h = [length / c for length, c in zip(lengths, counts, strict=True)]
    Ke, Ms = hex8_element_matrices(*h, E=E, nu=nu, rho=rho)
    stiffness, mass_scalar = _stencil_assemble(counts, Ke, Ms)
    n_nodes = mass_scalar.shape[0]
    if lumped:
        row_sums = np.asarray(mass_scalar.sum(axis=1)).ravel()
        mass = sp.diags(np.repeat(row_sums, 3), format="csr")
    else:
        mass = sp.kron(mass_scalar, sp.identity(3, format="csr"), format="csr")

    axes = [org[d] + np.linspace(0.0, lengths[d], counts[d] + 1) for d in range(3)]
    nodes = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    grid = np.indices(tuple(c + 1 for c in counts)).reshape(3, -1)
    node_sets = {}
    for d, label in enumerate("xyz"):
        node_sets[f"{label}0"] = np.flatnonzero(grid[d] == 0)
        node_sets[f"{label}1"] = np.flatnonzero(grid[d] == counts[d])
    node_sets["all"] = np.arange(n_nodes, dtype=np.int64)

    metadata = {
        "generator": _GENERATOR,
        "function": "box_mesh",
        "element": "hex8 (trilinear, 2x2x2 Gauss, isotropic linear elastic)",
        "mass_matrix": "lumped (row sum)" if lumped else "consistent",
        "units": "SI",
        "lx": lx, "ly": ly, "lz": lz,
        "nx": counts[0], "ny": counts[1], "nz": counts[2],
        "E": E, "nu": nu, "rho": rho,
        "origin": tuple(float(v) for v in org),
        "lumped": lumped,
        "n_nodes": n_nodes,
        "n_elements": counts[0] * counts[1] * counts[2],
        "node_order": "index = (i*(ny+1) + j)*(nz+1) + k, x slowest",
    }
    return FEModel(nodes=nodes, mass=mass, stiffness=stiffness, dofs_per_node=3,
                   node_sets=node_sets, cells={"hexahedron": _box_connectivity(counts)},
                   metadata=metadata)
