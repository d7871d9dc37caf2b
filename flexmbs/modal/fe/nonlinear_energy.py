"""The strain energy of an FE model beyond second order in the displacement, for modal
derivatives and the reduced nonlinear elastic forces (docs/theory_modal_derivatives.md).

The energy of an FE displacement u (n_dof,) [m, rad] is written

    U(u) = ½ uᵀ K u + U₃(u) + U₄(u),

the quadratic part being the FE model's own stiffness K and the cubic and quartic parts
sums over the *strain points* g of one or more groups (:class:`StrainGroup`):

    U₃ + U₄ = Σ_g w_g [ ε_gᵀ D s_g + ½ s_gᵀ D s_g + ε_gᵀ D t_g ],

* d_g,s = G_g,s u (p,) the displacement derivatives at the point's sub-points s
  (weights β_s, Σβ_s = 1), d̄_g = Σ_s β_s d_g,s;
* ε_g = Λ d̄_g (k,) the linear strains, s_g,c = ½ Σ_s β_s d_g,sᵀ H_c d_g,s their
  quadratic parts, t_g,c = Σ_terms a d_i d_j d_l their cubic parts (beams only; one
  sub-point), D (k, k) the moduli, w_g the point's weight.

**Shells** (quadrilaterals of FE data read from files, docs/theory_shells.md): one point
per Gauss point, d the six in-plane derivatives of the mid-surface displacement in the
element's axes, the membrane Green–Lagrange strain with plane-stress moduli and weight
t dA; bending and transverse shear stay linear (their energy is all in K).

**Solids** (built-in hexahedral box, hexahedra, tetrahedra and 20-node bricks of FE data
read from files): one point per Gauss point (a 20-node brick's 2 × 2 × 2, the
integration of its stiffness), d = ∇u (9: ∂u_i/∂x_j), the Green–Lagrange strain
E = sym ∇u + ½ ∇uᵀ∇u in Voigt order [xx, yy, zz, xy, yz, zx] with engineering shears,
and Hooke's isotropic D: the St Venant–Kirchhoff energy, a quartic polynomial, with
nothing left out.

**Built-in beam** (Euler–Bernoulli or Timoshenko, local axes x along the beam): d =
[u′, v′, w′, θₓ′, κ_v, κ_w, θₓ] with v, w the deflections along local y, z, θₓ the twist
and κ_v, κ_w the bending curvatures (v″, w″ for Euler–Bernoulli, the derivatives of the
section rotations for Timoshenko).

* Membrane: the Green–Lagrange axial strain of the centre line with the Wagner term of
  the section's fibres, ε = u′ + ½(u′² + v′² + w′²) + ½ (I_p/A) θₓ′², modulus EA,
  averaged over each element (one point per element, its Gauss points the sub-points),
  the cure for the membrane locking of a linear axial and cubic transverse
  interpolation. Its second variation at an axial force N is the element's geometric
  stiffness (:mod:`flexmbs.modal.fe.beam_geometric`).
* Bending: the curvature vector of the deformed, inextensible centre line, r″ with
  u″ = −(v′v″ + w′w″), on the section axes e₂, e₃ turned by the rotation vector
  (θₓ, −w′, v′), to third order:

      κ₃ = κ_v + θₓκ_w + ½v′²κ_v + ½v′w′κ_w − ½θₓ²κ_v   (modulus EI_z),
      κ₂ = κ_w − θₓκ_v + ½w′²κ_w + ½v′w′κ_v − ½θₓ²κ_w   (modulus EI_y),

  at the Gauss points. In one plane ½EI κ² = ½EI v″²(1 + v′²) + …, the elastica's; for
  equal bending stiffnesses κ₂² + κ₃² = |r″|² to fourth order whatever the twist; a
  twist θₓ turns the section under the curvature (the cubic flexural–torsional
  coupling (EI_z − EI_y) θₓκ_vκ_w). The twist rate is θₓ′ alone (its second-order
  geometric part is left out).

Everything is SI and in the FE (body) frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...errors import ValidationError
from . import solid_elements

#: Gauss points per beam element: exact for every integrand here (degree ≤ 8).
BEAM_GAUSS = 5
_GX, _GW = np.polynomial.legendre.leggauss(BEAM_GAUSS)
_S = 0.5 * (_GX + 1.0)  # on [0, 1]
_SW = 0.5 * _GW

#: Voigt order of the solid strains [xx, yy, zz, xy, yz, zx].
_VOIGT = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2))


@dataclass(frozen=True)
class StrainGroup:
    """One kind of strain point of the cubic and quartic energy (module docstring).

    Attributes
    ----------
    grad : scipy.sparse.csr_matrix, shape (P * S * p, n_dof)
        Rows (g, s, :) give the derivatives d_g,s of an FE displacement at sub-point s
        of point g.
    beta : ndarray, shape (S,)
        Sub-point weights (sum 1).
    weight : ndarray, shape (P,)
        Point weights [m for beams, m³ for solids].
    linear : ndarray, shape (k, p)
        Λ: the linear strains of the averaged derivatives.
    quadratic : ndarray, shape (k, p, p)
        H_c, symmetric: the quadratic strain parts ½ dᵀ H_c d.
    modulus : ndarray, shape (k, k)
        D [N for beam membranes (EA), N m² for bending (EI), Pa for solids].
    cubic : tuple
        The cubic strain parts: (c, a, (i, j, l)) terms a d_i d_j d_l of strain c (one
        sub-point only).
    """

    grad: sp.csr_matrix
    beta: np.ndarray
    weight: np.ndarray
    linear: np.ndarray
    quadratic: np.ndarray
    modulus: np.ndarray
    cubic: tuple = ()

    @property
    def sizes(self) -> tuple[int, int, int]:
        """(P points, S sub-points, p derivatives per sub-point)."""
        p = self.linear.shape[1]
        s = self.beta.size
        return self.grad.shape[0] // (s * p), s, p

    def derivatives(self, vectors: np.ndarray) -> np.ndarray:
        """d (P, S, m, p) of FE vectors (n_dof, m)."""
        n_p, n_s, p = self.sizes
        out = np.asarray(self.grad @ vectors)  # (P*S*p, m)
        return out.reshape(n_p, n_s, p, -1).transpose(0, 1, 3, 2)


@dataclass(frozen=True)
class StrainPoints:
    """The cubic and quartic strain energy of an FE model: its strain ``groups`` and
    the energy in words (``description``, stored with the modal derivatives)."""

    groups: tuple[StrainGroup, ...]
    description: str


# ----------------------------------------------------------------------------- beams
def _beam_shapes(length: float, phi: float, s: np.ndarray):
    """(slope (4, n), curvature (4, n)) of the transverse interpolation of one bending
    plane for the DOFs [v1, t1, v2, t2] (t the section rotation, +dv/dx at Φ = 0) at
    the stations s ∈ [0, 1]: dv/dx of the displacement interpolation and dθ/dx of the
    rotation interpolation (cubic Hermite at Φ = 0; the interdependent interpolation of
    the Timoshenko element, Friedman and Kosmatka 1993, otherwise) [1/m, 1/m²]."""
    L, f = length, phi
    c = 1.0 / (1.0 + f)
    slope = c * np.array([
        (6 * s**2 - 6 * s - f) / L,
        3 * s**2 - (4 + f) * s + 1 + f / 2,
        -(6 * s**2 - 6 * s - f) / L,
        3 * s**2 - (2 - f) * s - f / 2,
    ])
    curvature = c * np.array([
        6 * (2 * s - 1) / L**2,
        (6 * s - 4 - f) / L,
        -6 * (2 * s - 1) / L**2,
        (6 * s - 2 + f) / L,
    ])
    return slope, curvature


#: Number of derivatives d of a beam point: [u′, v′, w′, θₓ′, κ_v, κ_w, θₓ].
_BEAM_P = 7


def _beam_rows(length: float, phi_v: float, phi_w: float, s: np.ndarray) -> np.ndarray:
    """(n, 7, 12): d = [u′, v′, w′, θₓ′, κ_v, κ_w, θₓ] from the local element DOFs
    [u1x, u1y, u1z, r1x, r1y, r1z, u2x, …] at the stations ``s``; w′ and κ_w use the
    section rotation −r_y (r_y = −dw/dx)."""
    L = length
    out = np.zeros((s.size, _BEAM_P, 12))
    out[:, 6, 3], out[:, 6, 9] = 1.0 - s, s
    out[:, 0, 0], out[:, 0, 6] = -1.0 / L, 1.0 / L
    out[:, 3, 3], out[:, 3, 9] = -1.0 / L, 1.0 / L
    slope_v, curv_v = _beam_shapes(L, phi_v, s)
    slope_w, curv_w = _beam_shapes(L, phi_w, s)
    v_dofs, w_dofs = [1, 5, 7, 11], [2, 4, 8, 10]
    flip = np.array([1.0, -1.0, 1.0, -1.0])
    out[:, 1, v_dofs] = slope_v.T
    out[:, 4, v_dofs] = curv_v.T
    out[:, 2, w_dofs] = (slope_w * flip[:, None]).T
    out[:, 5, w_dofs] = (curv_w * flip[:, None]).T
    return out


def _element_rows(fe, stations: np.ndarray) -> sp.csr_matrix:
    """Rows (element, station, 7) of d from the global DOFs of the built-in beam ``fe``."""
    from .beam import BeamSection, Material

    meta = fe.metadata
    section = BeamSection(**meta["section"])
    material = Material(**{k: v for k, v in meta["material"].items() if k != "G"})
    length = float(meta["element_length"])
    if meta["theory"] == "timoshenko":
        phi_v = 12 * material.E * section.Iz / (section.ky * material.G * section.A
                                                * length**2)
        phi_w = 12 * material.E * section.Iy / (section.kz * material.G * section.A
                                                * length**2)
    else:
        phi_v = phi_w = 0.0
    frame = np.asarray(meta["local_frame"], float)
    local = _beam_rows(length, phi_v, phi_w, stations) @ np.kron(np.eye(4), frame)
    conn = np.asarray(fe.cells["line"], np.int64)
    n_el, n_s = conn.shape[0], stations.size
    cols = np.concatenate([6 * conn[:, :1] + np.arange(6), 6 * conn[:, 1:] + np.arange(6)],
                          axis=1)  # (E, 12)
    shape = (n_el, n_s, _BEAM_P, 12)
    rows = np.arange(n_el * n_s * _BEAM_P).reshape(n_el, n_s, _BEAM_P)
    vals = np.broadcast_to(local, shape)
    return sp.csr_matrix((vals.ravel(), (np.repeat(rows.ravel(), 12),
                                         np.broadcast_to(cols[:, None, None, :],
                                                         shape).ravel())),
                         shape=(n_el * n_s * _BEAM_P, fe.n_dof))


#: The cubic parts of the beam's curvatures (strain, coefficient, (i, j, l) of d):
#: κ₃ ⊃ ½v′²κ_v + ½v′w′κ_w − ½θₓ²κ_v and κ₂ ⊃ ½w′²κ_w + ½v′w′κ_v − ½θₓ²κ_w.
_BEAM_CUBIC = ((0, 0.5, (1, 1, 4)), (0, 0.5, (1, 2, 5)), (0, -0.5, (6, 6, 4)),
               (1, 0.5, (2, 2, 5)), (1, 0.5, (1, 2, 4)), (1, -0.5, (6, 6, 5)))


def beam_strain_points(fe) -> StrainPoints:
    """The cubic and quartic energy of the built-in straight beam ``fe``
    (:func:`flexmbs.modal.fe.beam.straight_beam`; module docstring)."""
    from .beam import BeamSection, Material

    meta = fe.metadata
    section = BeamSection(**meta["section"])
    material = Material(**{k: v for k, v in meta["material"].items() if k != "G"})
    length = float(meta["element_length"])
    n_el = int(np.asarray(fe.cells["line"]).shape[0])
    grad = _element_rows(fe, _S)
    p = _BEAM_P
    membrane_quad = np.zeros((1, p, p))
    membrane_quad[0, [0, 1, 2], [0, 1, 2]] = 1.0
    membrane_quad[0, 3, 3] = section.Ip / section.A
    membrane_lin = np.zeros((1, p))
    membrane_lin[0, 0] = 1.0
    membrane = StrainGroup(grad=grad, beta=_SW.copy(), weight=np.full(n_el, length),
                           linear=membrane_lin, quadratic=membrane_quad,
                           modulus=np.array([[material.E * section.A]]))
    bend_lin = np.zeros((2, p))
    bend_lin[0, 4] = bend_lin[1, 5] = 1.0
    bend_quad = np.zeros((2, p, p))  # κ₃ ⊃ θₓκ_w, κ₂ ⊃ −θₓκ_v (½ dᵀHd)
    bend_quad[0, 6, 5] = bend_quad[0, 5, 6] = 1.0
    bend_quad[1, 6, 4] = bend_quad[1, 4, 6] = -1.0
    bending = StrainGroup(grad=grad, beta=np.ones(1), weight=np.tile(_SW * length, n_el),
                          linear=bend_lin, quadratic=bend_quad,
                          modulus=np.diag([material.E * section.Iz,
                                           material.E * section.Iy]),
                          cubic=_BEAM_CUBIC)
    return StrainPoints(
        groups=(membrane, bending),
        description=("built-in beam: element-averaged Green–Lagrange axial strain "
                     "u′ + ½(u′² + v′² + w′²) + ½(Ip/A)θx′² (modulus EA); curvature of "
                     "the inextensible centre line on the twisted section axes to third "
                     "order (EI_z, EI_y)"))


# ----------------------------------------------------------------------------- solids
def _green_lagrange() -> tuple[np.ndarray, np.ndarray]:
    """(Λ (6, 9), H (6, 9, 9)) of the Voigt Green–Lagrange strain from d = ∇u flattened
    row-major (d[3i + j] = ∂u_i/∂x_j), engineering shears."""
    lin = np.zeros((6, 9))
    quad = np.zeros((6, 9, 9))
    for c, (i, j) in enumerate(_VOIGT):
        lin[c, 3 * i + j] += 1.0
        if i != j:
            lin[c, 3 * j + i] += 1.0
        for k in range(3):  # (∇uᵀ∇u)_ij = Σ_k ∂u_k/∂x_i ∂u_k/∂x_j
            a, b = 3 * k + i, 3 * k + j
            if i == j:
                quad[c, a, b] += 1.0
            else:  # 2E_ij = Σ_k (…), both orders
                quad[c, a, b] += 1.0
                quad[c, b, a] += 1.0
    return lin, quad


def solid_strain_points(nodes, cells: dict, lame, labels=None,
                        source: str = "solid elements") -> StrainPoints:
    """The cubic and quartic St Venant–Kirchhoff energy of the solid ``cells`` (types of
    :data:`~flexmbs.modal.fe.solid_elements.STRESS_CELLS`, node indices) of a 3-DOF mesh
    ``nodes`` (N, 3) [m] with Lamé constants ``lame`` = (λ, μ) [Pa]."""
    lam, mu = lame
    n_nodes = len(nodes)
    blocks, weights = [], []
    for cell_type in solid_elements.STRESS_CELLS:
        if cell_type not in cells:
            continue
        conn = np.asarray(cells[cell_type], np.int64)
        dndx, dvol = solid_elements.gradients(nodes, conn, cell_type,
                                              (labels or {}).get(cell_type))
        n_el, n_g, n_a = dndx.shape[:3]
        # row (e, g, 3i + j) reads u_i of every node a with the weight ∂N_a/∂x_j
        shape = (n_el, n_g, 3, 3, n_a)
        rows = np.arange(n_el * n_g * 9).reshape(n_el, n_g, 3, 3, 1)
        cols = 3 * conn[:, None, None, None, :] + np.arange(3)[None, None, :, None, None]
        vals = np.broadcast_to(np.transpose(dndx, (0, 1, 3, 2))[:, :, None], shape)
        blocks.append(sp.csr_matrix(
            (vals.ravel(), (np.broadcast_to(rows, shape).ravel(),
                            np.broadcast_to(cols, shape).ravel())),
            shape=(n_el * n_g * 9, 3 * n_nodes)))
        weights.append(dvol.ravel())
    if not blocks:
        raise ValidationError(f"{source}: no solid cells {list(solid_elements.STRESS_CELLS)}")
    lin, quad = _green_lagrange()
    modulus = np.zeros((6, 6))
    modulus[:3, :3] = lam
    modulus[[0, 1, 2], [0, 1, 2]] += 2 * mu
    modulus[[3, 4, 5], [3, 4, 5]] = mu
    group = StrainGroup(grad=sp.vstack(blocks, format="csr"), beta=np.ones(1),
                        weight=np.concatenate(weights), linear=lin, quadratic=quad,
                        modulus=modulus)
    return StrainPoints(
        groups=(group,),
        description=(f"{source}: St Venant–Kirchhoff (Green–Lagrange strain, isotropic "
                     f"Hooke's law, λ = {lam:.6g} Pa, μ = {mu:.6g} Pa)"))


def strain_points(fe) -> StrainPoints:
    """The :class:`StrainPoints` of ``fe``: the built-in beam, the built-in hexahedral
    box, or FE data with solid elements or shells and an isotropic material.
    ValidationError saying what is missing otherwise."""
    from ..stiffening import _is_builtin_beam, _is_builtin_solid
    from .file_elements import file_elements_of, strain_groups

    if _is_builtin_beam(fe):
        return beam_strain_points(fe)
    if _is_builtin_solid(fe):
        meta = fe.metadata
        return solid_strain_points(fe.nodes, fe.cells,
                                   solid_elements.isotropic_lame(meta["E"], meta["nu"]),
                                   source="built-in hexahedral box")
    elements = file_elements_of(fe, "modal derivatives")
    source = fe.metadata.get("source")
    source = source if isinstance(source, str) else "FE data"
    groups = strain_groups(fe, elements)
    if not elements.shells:
        lam, mu = elements.lame
        return StrainPoints(groups=groups, description=(
            f"solid elements of {source}: St Venant–Kirchhoff (Green–Lagrange strain, "
            f"isotropic Hooke's law, λ = {lam:.6g} Pa, μ = {mu:.6g} Pa)"))
    return StrainPoints(groups=groups, description=(
        f"shells of {source}: the membrane Green–Lagrange strain of the mid-surface "
        f"(von Kármán terms and their in-plane companions), plane stress E = "
        f"{elements.young:.6g} Pa, ν = {elements.nu:.6g}; bending and shear linear"))
