"""Inertia invariants (inertia shape integrals) of a flexible body.

Computed once from the FE mass (consistent or lumped) and the mode shapes, then every
body-frame mass block of docs/theory_ffrf.md §3 is evaluated at any modal state ξ in O(n_m²)
without touching the N nodes.

Two invariant sets (docs/theory_ffrf.md §3 and §9):

* The *general* set, valid for any translational mass M_FE (3N x 3N):
  ``M0 = B0ᵀ M B0`` ((6+n)x(6+n)), ``N_j = B0ᵀ M (−U_j)`` ((6+n)x3 each) and
  ``Q_ij = U_iᵀ M U_j`` (3x3 each), with ``B0 = [T_R, −U0, Φ]``. Then
  ``M̄(ξ) = M0 + Σ_j ξ_j (N_j E_θᵀ + E_θ N_jᵀ) + Σ_ij ξ_i ξ_j E_θ Q_ij E_θᵀ``.
* The *isotropic* (Shabana) set, when every 3x3 node block of M_FE is a scalar times I3
  (lumped masses, solid elements): m, S̄₀, S̄, J₀, J⁽¹⁾_j, J⁽²⁾_ij built from the scalar
  N x N mass M_s. These give the closed-form quadratic velocity vector of docs/theory_ffrf.md §6.

Both are stored when the mass is isotropic; the general set alone otherwise.

Conventions (docs/multibody.md): node-major stacking; barred (body-frame) quantities;
``skew(a) b = a × b``. Units: mass [kg], first moments [kg m], second moments [kg m²];
mode shapes carry [m per unit ξ].
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._blas import scipy_module
from ..errors import ShapeError

if TYPE_CHECKING:
    import scipy.sparse as sp

#: Relative tolerance of the isotropic-mass check ‖M_kl − m_kl I3‖ ≤ tol · max|m|.
ISOTROPY_RTOL = 1e-10


def skew(a: np.ndarray) -> np.ndarray:
    """Skew matrix(es) of vector(s) ``a`` (..., 3) so that ``skew(a) @ b = a × b``."""
    a = np.asarray(a, dtype=float)
    out = np.zeros((*a.shape[:-1], 3, 3))
    out[..., 0, 1] = -a[..., 2]
    out[..., 0, 2] = a[..., 1]
    out[..., 1, 0] = a[..., 2]
    out[..., 1, 2] = -a[..., 0]
    out[..., 2, 0] = -a[..., 1]
    out[..., 2, 1] = a[..., 0]
    return out


def cross_contraction(x: np.ndarray) -> np.ndarray:
    """ε:X = [X23 − X32, X31 − X13, X12 − X21] for 3x3 matrices (..., 3, 3)."""
    return np.stack(
        [x[..., 1, 2] - x[..., 2, 1], x[..., 2, 0] - x[..., 0, 2], x[..., 0, 1] - x[..., 1, 0]],
        axis=-1,
    )


def isotropic_scalar_mass(mass: sp.spmatrix, rtol: float = ISOTROPY_RTOL):
    """Return the N x N scalar mass M_s if ``mass`` = M_s ⊗ I3, else ``None``.

    Parameters
    ----------
    mass : sparse matrix, shape (3N, 3N)
        Translational FE mass in node-major order [kg].
    rtol : float
        Tolerance relative to the largest entry.
    """
    sp = scipy_module("scipy.sparse")
    coo = sp.coo_matrix(mass)
    if coo.nnz == 0:
        return sp.csr_matrix((mass.shape[0] // 3, mass.shape[0] // 3))
    scale = np.max(np.abs(coo.data))
    a, b = coo.row % 3, coo.col % 3
    k_node, l_node = coo.row // 3, coo.col // 3
    n_nodes = mass.shape[0] // 3
    offdiag = a != b
    if offdiag.any() and np.max(np.abs(coo.data[offdiag])) > rtol * scale:
        return None
    parts = []
    for comp in range(3):
        sel = (a == comp) & (b == comp)
        parts.append(sp.csr_matrix((coo.data[sel], (k_node[sel], l_node[sel])),
                                   shape=(n_nodes, n_nodes)))
    for comp in (1, 2):
        diff = parts[comp] - parts[0]
        if diff.nnz and np.max(np.abs(diff.data)) > rtol * scale:
            return None
    return parts[0]


class BodyMassBlocks(NamedTuple):
    """Body-frame blocks of M̄(ξ) = Bᵀ M_FE B (docs/theory_ffrf.md §3), each an ndarray.

    Units: M_RR [kg] (3x3); M_Rθ [kg m] (3x3); M_Rf [kg m] (3 x n); M_θθ [kg m²] (3x3);
    M_θf [kg m²] (3 x n); M_ff [kg m²] (n x n), for mode shapes in m per unit ξ.
    """

    M_RR: np.ndarray
    M_Rθ: np.ndarray
    M_Rf: np.ndarray
    M_θθ: np.ndarray
    M_θf: np.ndarray
    M_ff: np.ndarray

    def assemble(self) -> np.ndarray:
        """The full symmetric (6+n) x (6+n) body-frame mass matrix M̄."""
        top = np.hstack([self.M_RR, self.M_Rθ, self.M_Rf])
        mid = np.hstack([self.M_Rθ.T, self.M_θθ, self.M_θf])
        bot = np.hstack([self.M_Rf.T, self.M_θf.T, self.M_ff])
        return np.vstack([top, mid, bot])


@dataclass(frozen=True, eq=False)
class InertiaInvariants:
    """Precomputed inertia invariants of one flexible body (see module docstring).

    Attributes
    ----------
    n_modes : int
    isotropic : bool
        True when M_FE = M_s ⊗ I3; then the Shabana set below is present.
    M0 : ndarray, shape (6+n, 6+n)
        B0ᵀ M B0, the body-frame mass matrix at ξ = 0.
    N : ndarray, shape (n, 6+n, 3)
        N_j = B0ᵀ M (−U_j), the first-order coefficients.
    Q : ndarray, shape (n, n, 3, 3)
        Q_ij = U_iᵀ M U_j, the second-order coefficients (Q_ji = Q_ijᵀ).
    mass : float
        Total mass m [kg] (trace(M̄_RR)/3; equals m exactly when isotropic).
    S0 : ndarray, shape (3,)
        First moment T_Rᵀ M x0 [kg m] of the undeformed body about the frame origin.
    S : ndarray, shape (3, n)
        S̄ = T_Rᵀ M Φ, the modal first moments.
    J0, J1, J2 : ndarray or None
        Shabana set (isotropic case only): J₀ (3,3), J⁽¹⁾ (n,3,3) with J1[j] = J⁽¹⁾_j,
        J⁽²⁾ (n,n,3,3) with J2[i, j] = J⁽²⁾_ij.
    """

    n_modes: int
    isotropic: bool
    M0: np.ndarray
    N: np.ndarray
    Q: np.ndarray
    mass: float
    S0: np.ndarray
    S: np.ndarray
    J0: np.ndarray | None = None
    J1: np.ndarray | None = None
    J2: np.ndarray | None = None

    def __post_init__(self) -> None:
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    def select(self, indices) -> InertiaInvariants:
        """The invariants of the mode subset ``indices`` (exact: every invariant is linear
        or bilinear in the mode shapes), without touching the nodes again."""
        idx = np.asarray(indices, dtype=np.int64)
        rows = np.concatenate([np.arange(6), 6 + idx])
        pick2 = np.ix_(idx, idx)
        return InertiaInvariants(
            n_modes=idx.size, isotropic=self.isotropic, M0=self.M0[np.ix_(rows, rows)],
            N=self.N[idx][:, rows, :], Q=self.Q[pick2], mass=self.mass, S0=self.S0,
            S=self.S[:, idx], J0=self.J0,
            J1=None if self.J1 is None else self.J1[idx],
            J2=None if self.J2 is None else self.J2[pick2],
        )

    # -------------------------------------------------------------- coefficient arrays
    @property
    def I_tt0(self) -> np.ndarray:
        """I⁽⁰⁾ = Ī_θθ(0), the rotational inertia about the frame origin [kg m²]."""
        return self.M0[3:6, 3:6]

    @property
    def I_tt1(self) -> np.ndarray:
        """I⁽¹⁾_j (n, 3, 3): first-order coefficients of Ī_θθ(ξ)."""
        nt = self.N[:, 3:6, :]
        return nt + np.swapaxes(nt, 1, 2)

    @property
    def I_tf0(self) -> np.ndarray:
        """Ī_θf⁽⁰⁾ (3, n)."""
        return self.M0[3:6, 6:]

    @property
    def I_tf1(self) -> np.ndarray:
        """Ī_θf⁽¹⁾_j stacked (n, 3, n): Ī_θf(ξ) = Ī_θf⁽⁰⁾ + Σ_j ξ_j I_tf1[j]."""
        return np.swapaxes(self.N[:, 6:, :], 1, 2)

    @property
    def M_ff(self) -> np.ndarray:
        """Modal mass matrix Φᵀ M Φ (n, n)."""
        return self.M0[6:, 6:]

    # -------------------------------------------------------------- evaluation
    def _xi(self, xi) -> np.ndarray:
        arr = np.asarray(xi, dtype=float).ravel()
        if arr.size != self.n_modes:
            raise ShapeError(f"modal coordinates xi have {arr.size} entries; the body has "
                             f"{self.n_modes} modes")
        if not np.all(np.isfinite(arr)):
            from ..errors import ValidationError

            raise ValidationError(f"modal coordinates xi must be finite; got "
                                  f"{arr.tolist()[:6]}")
        return arr

    @cached_property
    def _flat(self) -> tuple[np.ndarray, np.ndarray]:
        """N as (n, (6+n)·3) and Q as (n·n, 9): the block sums become two mat-vecs."""
        n = self.n_modes
        return self.N.reshape(n, -1), self.Q.reshape(n * n, 9)

    def blocks(self, xi) -> BodyMassBlocks:
        """Body-frame mass blocks at modal coordinates ``xi`` (n,), cost O(n²).

        Uses the general set (valid for any mass); see :meth:`blocks_isotropic` for the
        Shabana-set evaluation of docs/theory_ffrf.md §3. The constant blocks are returned as
        read-only views of the invariants (no copy per call).
        """
        xi = self._xi(xi)
        m0 = self.M0
        if self.n_modes == 0:
            return BodyMassBlocks(m0[:3, :3], m0[:3, 3:6], m0[:3, 6:], m0[3:6, 3:6],
                                  m0[3:6, 6:], m0[6:, 6:])
        n_flat, q_flat = self._flat
        n_lin = (xi @ n_flat).reshape(6 + self.n_modes, 3)  # Σ ξ_j N_j
        quad = (np.outer(xi, xi).ravel() @ q_flat).reshape(3, 3)  # Σ ξ_i ξ_j Q_ij
        m_rt = m0[:3, 3:6] + n_lin[:3]
        nt = n_lin[3:6]
        m_tt = m0[3:6, 3:6] + nt + nt.T + quad
        m_tf = m0[3:6, 6:] + n_lin[6:].T
        return BodyMassBlocks(m0[:3, :3], m_rt, m0[:3, 6:], m_tt, m_tf, m0[6:, 6:])

    def blocks_isotropic(self, xi) -> BodyMassBlocks:
        """Body-frame blocks from the Shabana set (docs/theory_ffrf.md §3), isotropic mass only."""
        if not self.isotropic:
            raise ValueError("blocks_isotropic needs an isotropic mass (M_FE = M_s ⊗ I3)")
        xi = self._xi(xi)
        s_t = self.S0 + self.S @ xi
        j1s = np.tensordot(xi, self.J1 + np.swapaxes(self.J1, 1, 2), axes=(0, 0))
        k_mat = self.J0 + j1s + np.einsum("i,j,ijab->ab", xi, xi, self.J2)
        i_tt = np.trace(k_mat) * np.eye(3) - k_mat
        # P_i = J1_i + Σ_j ξ_j J2_ji ; Ī_θf column i = ε:P_i
        p = self.J1 + np.einsum("j,jiab->iab", xi, self.J2)
        i_tf = cross_contraction(p).T
        m = self.mass
        return BodyMassBlocks(m * np.eye(3), -skew(s_t), self.S.copy(), i_tt, i_tf,
                              np.einsum("ijaa->ij", self.J2))

    # -------------------------------------------------------------- rigid-body content
    def rigid_content(self) -> np.ndarray:
        """Fraction of each mode's modal mass that is rigid-body motion, shape (n,).

        With the rigid basis B_r = [T_R, −U0] and c_j = B_rᵀ M φ_j (the first six rows of
        column j of M0), the M-orthogonal projection of φ_j on the rigid motions has
        kinetic norm c_jᵀ M_r⁻¹ c_j, M_r = B_rᵀ M B_r. Zero means φ_j satisfies the
        linearized mean-axis (Buckens) conditions S̄ φ = 0 and Ī_θf⁽⁰⁾ = 0.
        """
        if self.n_modes == 0:
            return np.zeros(0)
        m_r = self.M0[:6, :6]
        c = self.M0[:6, 6:]
        sol = np.linalg.lstsq(m_r, c, rcond=1e-12)[0]
        proj = np.einsum("aj,aj->j", c, sol)
        diag = np.diag(self.M_ff)
        # modes without translational inertia (pure rotation of 6-DOF nodes) have none
        floor = 1e-12 * max(float(np.max(np.abs(diag))), 1e-300)
        return np.where(diag > floor, proj / np.where(diag > floor, diag, 1.0), 0.0)


def _vee_skew(x: np.ndarray) -> np.ndarray:
    """The vector s of the skew-symmetric part of x: skew(s) = (x − xᵀ)/2."""
    a = 0.5 * (x - x.T)
    return np.array([a[2, 1], a[0, 2], a[1, 0]])


def compute_invariants(nodes: np.ndarray, phi: np.ndarray, mass: sp.spmatrix | np.ndarray,
                       psi: np.ndarray | None = None,
                       generalized: np.ndarray | None = None) -> InertiaInvariants:
    """Compute the inertia invariants once, in O(nnz(M)·n + N·n²).

    Parameters
    ----------
    nodes : ndarray, shape (N, 3)
        Undeformed node positions ū₀ in the body frame [m].
    phi : ndarray, shape (3N, n)
        Translational mode shapes, node-major [m per unit ξ].
    mass : sparse matrix (3N, 3N) or (6N, 6N), or ndarray (N,)
        Translational FE mass [kg] (consistent, any structure), the full FE mass of
        6-DOF nodes (translations then rotations per node; needs ``psi``), or lumped
        nodal masses.
    psi : ndarray, shape (3N, n), optional
        Rotational mode shapes [rad per unit ξ]; required with a 6N mass.
    generalized : ndarray, shape (n_g, n), optional
        Coordinates without a position per unit ξ (a Nastran superelement's q-set): the
        mass is then (6N + n_g) x (6N + n_g), the nodes' six DOFs followed by these
        coordinates, and ``psi`` is required.

    Returns
    -------
    InertiaInvariants

    Notes
    -----
    With a 6N mass the nodal rotation rates enter the kinetic energy through
    B-rows ``[0, I₃, Ψ_k]`` (body-frame angular velocity of node k's cross-section
    ``ω̄ + Ψ_k ξ̇``), next to the translational rows ``[I₃, −ũ_k(ξ), Φ_k]``. The general
    set (docs/theory_ffrf.md §3) keeps its form: only translational rows depend on ξ. Neglected: the
    turning of the nodal rotary inertia with the nodal rotation Ψ_k ξ (relative size
    ‖Ψ_k ξ‖ on the rotary part of M̄_θθ), consistent with linear modal deformation.

    With ``generalized`` coordinates g (rows 6N.. of the mass) the B-rows of g are
    ``[0, 0, G]``: a rigid motion leaves them at zero (exact for Craig–Bampton
    coordinates, whose constraint modes reproduce rigid motion), so M̄(0) = B0ᵀ M B0 is
    exact. They have no position, so the rotation of the deformation ω̄ × u(ξ) enters
    N_j and Q_ij only through the nodes' rows: for a superelement, the deformation field
    is rotated as the constraint modes interpolate it from the boundary grids, and the
    fixed-interface (interior) part of that rotated field is dropped.
    """
    sp = scipy_module("scipy.sparse")  # (invariants not stored: docs/compiled.md)

    nodes = np.asarray(nodes, dtype=float)
    n_nodes = nodes.shape[0]
    phi = np.asarray(phi, dtype=float).reshape(3 * n_nodes, -1)
    n = phi.shape[1]
    dpn = 3
    gen = (np.zeros((0, n)) if generalized is None
           else np.asarray(generalized, dtype=float).reshape(-1, n))
    if gen.shape[0] and (not sp.issparse(mass)
                         or mass.shape[0] != 6 * n_nodes + gen.shape[0]):
        raise ValueError(f"{gen.shape[0]} generalized coordinates need a "
                         f"{6 * n_nodes + gen.shape[0]}-row mass (6 per node, then them)")
    if sp.issparse(mass) and mass.shape[0] == 6 * n_nodes + gen.shape[0]:
        if psi is None:
            raise ValueError("a 6N x 6N mass needs the rotational mode shapes psi")
        m_fe = sp.csr_matrix(mass)
        m_s = None
        dpn = 6
    elif sp.issparse(mass):
        m_fe = sp.csr_matrix(mass)
        m_s = isotropic_scalar_mass(m_fe)
    else:
        lumped = np.asarray(mass, dtype=float).ravel()
        m_s = sp.diags(lumped).tocsr()
        m_fe = sp.diags(np.repeat(lumped, 3)).tocsr()

    # general set: B0 = [T_R, -U0, Φ] (+ rotational rows [0, I, Ψ]), U_j = skew(φ_kj)
    b0 = np.zeros((n_nodes, dpn, 6 + n))
    b0[:, :3, :3] = np.eye(3)
    b0[:, :3, 3:6] = -skew(nodes)
    b0[:, :3, 6:] = phi.reshape(n_nodes, 3, n)
    if dpn == 6:
        b0[:, 3:, 3:6] = np.eye(3)
        b0[:, 3:, 6:] = np.asarray(psi, dtype=float).reshape(n_nodes, 3, n)
    b0 = b0.reshape(dpn * n_nodes, 6 + n)
    if gen.shape[0]:
        b0 = np.vstack([b0, np.hstack([np.zeros((gen.shape[0], 6)), gen])])
    mb0 = m_fe @ b0
    m0 = b0.T @ mb0
    m0 = 0.5 * (m0 + m0.T)
    y = phi.reshape(n_nodes, 3, n)  # y[k, a, j] = component a of node k in mode j
    # U_j (column block j) lives on the translational rows only
    u_t = np.moveaxis(skew(np.moveaxis(y, 2, 1)), 1, 2).reshape(3 * n_nodes, n * 3)
    if dpn == 6:
        t_rows = (6 * np.arange(n_nodes)[:, None] + np.arange(3)).ravel()
        mb0_t = mb0[t_rows]  # incl. the coupling to the generalized coordinates
        m_tt = m_fe[t_rows][:, t_rows]
    else:
        mb0_t, m_tt = mb0, m_fe
    n_coef = -(mb0_t.T @ u_t).reshape(6 + n, n, 3).transpose(1, 0, 2)
    q = (u_t.T @ (m_tt @ u_t)).reshape(n, 3, n, 3).transpose(0, 2, 1, 3)
    total = float(np.trace(m0[:3, :3]) / 3.0)
    s0 = _vee_skew(-m0[:3, 3:6])
    s_bar = m0[:3, 6:].copy()

    j0 = j1 = j2 = None
    if m_s is not None:
        ones_m = np.asarray(m_s @ np.ones(n_nodes)).ravel()
        total = float(ones_m.sum())
        s0 = nodes.T @ ones_m
        j0 = nodes.T @ (m_s @ nodes)
        y_flat = y.reshape(n_nodes, 3 * n)
        msy = m_s @ y_flat
        j1 = (nodes.T @ msy).reshape(3, 3, n).transpose(2, 0, 1)
        j2 = (y_flat.T @ msy).reshape(3, n, 3, n).transpose(1, 3, 0, 2)
    return InertiaInvariants(
        n_modes=n, isotropic=m_s is not None, M0=m0, N=n_coef, Q=q, mass=total,
        S0=np.asarray(s0, dtype=float), S=s_bar, J0=j0, J1=j1, J2=j2,
    )
