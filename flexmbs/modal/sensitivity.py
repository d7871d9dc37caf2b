"""Derivatives of reduced modal data with respect to a parameter of the FE model
(docs/gradients.md, "FE design parameters").

Given the FE matrices K, M of a component, their derivatives dK, dM along one parameter
(a section dimension, E, ρ, a payload of a built-in beam) and the modal data a reduction
made of them, :func:`clamped_tangent` and :func:`static_correction_tangent` give the
derivative of that modal data — the mode shapes, M_ff, K_ff — as a
:class:`ModalTangent`:

* **clamped (fixed-interface) eigenmodes** by Nelson's method: for each mode
  (λ_j, φ_j) of K φ = λ M φ on the free DOFs,

      dλ_j = φ_jᵀ (dK − λ_j dM) φ_j / φ_jᵀ M φ_j,
      (K − λ_j M) v_j = −(dK − λ_j dM − dλ_j M) φ_j   with v_j[r] = 0,

  r the entry of largest |φ_j| (the row and column of the singular matrix left out):
  v_j is the derivative of the eigenvector branch whose entry r stays fixed, and the
  normalization the reduction applied (peak displacement 1, or φᵀMφ = 1) differentiates
  it into dφ̂_j. Eigenvalues must be distinct, also from the first mode left out:
  a repeated frequency (a square section's two bending planes) has no derivative of
  its shapes, and is refused by name;
* **static-correction modes** (:func:`~flexmbs.modal.stress.static_correction`): the
  static deflections S = K_a⁻¹ L under unit loads (dS = −K_a⁻¹ dK S), made M-orthogonal
  to the kept modes, then the Rayleigh–Ritz vectors of (K, M) in their span — whose
  derivative is Nelson's method on the small Ritz problem plus the change of the span;
* M_ff = diag(φ̂ᵀ M φ̂) and K_ff = diag(λ m) by the product rule (the cross terms stay
  zero: the modes stay M- and K-orthogonal at every parameter value).

:func:`along` gives the modal data on the tangent line, data + t · tangent, with the FE
mass M + t dM: the invariants, computed from shapes and mass, follow exactly (they are
polynomials of both), so central differences along the line of whatever the modal data
feed are the derivative along the parameter to O(t²).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ModelError
from .eigen import DENSE_LIMIT, eigen

#: Smallest relative gap |λ_i − λ_j| / λ_j between modes whose shapes are differentiated.
MIN_GAP = 1e-6


@dataclass(frozen=True)
class ModalTangent:
    """d/dp of a ModalData: the full FE mode vectors ``modes`` (n_dof, n) [per unit of
    the parameter], M_ff and K_ff (n, n), the coordinates' eigenvalues λ = K_ii/M_ii
    (n,) [1/s²] and the FE ``mass`` (sparse n_dof²)."""

    modes: np.ndarray
    M_ff: np.ndarray
    K_ff: np.ndarray
    eigenvalues: np.ndarray
    mass: sp.spmatrix

    def shapes(self, fe):
        """(dφ (3N, n), dψ (3N, n) or None) in the ModalData's row order."""
        n = self.modes.shape[1]
        per = self.modes.reshape(fe.n_nodes, fe.dofs_per_node, n)
        psi = per[:, 3:].reshape(-1, n) if fe.dofs_per_node == 6 else None
        return per[:, :3].reshape(-1, n), psi

    def frequencies(self, data) -> np.ndarray:
        """df_j (n,) [Hz per unit of the parameter] of the coordinates' frequencies
        f_j = √(K_jj/M_jj)/2π of ``data``."""
        lam = np.diag(data.K_ff) / np.diag(data.M_ff)
        return self.eigenvalues / (4 * np.pi * np.sqrt(np.clip(lam, 1e-300, None)))


def _solve_factory(a):
    """A solver of a x = b for the (modest) square matrix ``a`` (sparse or dense)."""
    if a.shape[0] <= DENSE_LIMIT:
        lu = sla.lu_factor(a.toarray() if sp.issparse(a) else a, check_finite=False)
        return lambda b: sla.lu_solve(lu, b, check_finite=False)
    return spla.factorized(sp.csc_matrix(a))


def nelson(k, m, dk, dm, lam, vec, what: str = "modes"):
    """(dλ (n,), v (n_f, n)): Nelson's method (module docstring) for the eigenpairs
    (``lam``, columns of ``vec``) of K x = λ M x with derivatives dK, dM (sparse or
    dense); v_j is the derivative of the branch whose largest entry is held fixed."""
    n_f, n = vec.shape
    dense = n_f <= DENSE_LIMIT
    kd = k.toarray() if (dense and sp.issparse(k)) else k
    md = m.toarray() if (dense and sp.issparse(m)) else m
    dlam, out = np.zeros(n), np.zeros((n_f, n))
    for j in range(n):
        phi = vec[:, j]
        m_phi = md @ phi
        g = dk @ phi - lam[j] * (dm @ phi)
        dlam[j] = phi @ g / (phi @ m_phi)
        rhs = -g + dlam[j] * m_phi
        r = int(np.argmax(np.abs(phi)))
        keep = np.flatnonzero(np.arange(n_f) != r)
        a = kd - lam[j] * md
        a = a[np.ix_(keep, keep)] if dense else sp.csc_matrix(a)[keep][:, keep]
        try:
            v = _solve_factory(a)(rhs[keep])
        except (sla.LinAlgError, RuntimeError) as exc:
            raise ModelError(f"{what}: mode {j + 1} has no shape derivative ({exc}); a "
                             f"repeated frequency?") from None
        out[keep, j] = v
    return dlam, out


def _lowest(k, m, count: int) -> np.ndarray:
    """The ``count`` lowest eigenvalues of K x = λ M x (ascending)."""
    if k.shape[0] <= DENSE_LIMIT and np.all(m.diagonal() > 0):
        return sla.eigh(k.toarray(), m.toarray(), eigvals_only=True,
                        subset_by_index=[0, count - 1])
    return eigen(k, m, count, 0.0, "modal derivatives")[0]


def check_gaps(lam, what: str) -> None:
    """ModelError naming two modes whose eigenvalues (ascending) are within
    :data:`MIN_GAP` of each other: their shapes have no derivative."""
    lam = np.asarray(lam, dtype=float)
    for j in range(lam.size - 1):
        if abs(lam[j + 1] - lam[j]) <= MIN_GAP * max(abs(lam[j + 1]), 1e-300):
            f = np.sqrt(np.clip(lam[j:j + 2], 0, None)) / (2 * np.pi)
            raise ModelError(
                f"{what}: modes {j + 1} and {j + 2} have the same frequency ({f[0]:.6g} and "
                f"{f[1]:.6g} Hz; a symmetric section's two bending planes?): their shapes "
                f"have no derivative with respect to the parameter, so the modal data "
                f"cannot be differentiated (make the section unsymmetric, or keep whole "
                f"pairs and parameters that keep the symmetry)")


def _normalization_derivative(modes, d_branch, rows_of, normalization, mass, d_mass):
    """dφ̂ of normalized modes φ̂ from the derivative of any eigenvector branch through
    them: peak-displacement normalization (‖φ̂[rows]‖ = 1) or φ̂ᵀ M φ̂ = 1."""
    out = d_branch.copy()
    for j in range(modes.shape[1]):
        phi = modes[:, j]
        if normalization == "mass":
            out[:, j] -= phi * (phi @ (mass @ d_branch[:, j]) + 0.5 * phi @ (d_mass @ phi))
        else:
            rows = rows_of[j]
            out[:, j] -= phi * (phi[rows] @ d_branch[rows, j])
    return out


def _modal_matrices_derivative(modes, d_modes, fe, d_k, d_m, lam, dlam):
    """(dM_ff, dK_ff) diagonal: d(φᵀMφ) and d(λ m) per mode."""
    m_jj = np.einsum("ij,ij->j", modes, fe.mass @ modes)
    dm_jj = (2 * np.einsum("ij,ij->j", modes, fe.mass @ d_modes)
             + np.einsum("ij,ij->j", modes, d_m @ modes))
    return np.diag(dm_jj), np.diag(dlam * m_jj + lam * dm_jj)


def clamped_tangent(fe, d_k, d_m, data, n: int | None = None,
                    normalization: str = "displacement") -> ModalTangent:
    """The :class:`ModalTangent` of the first ``n`` (default: all) coordinates of
    ``data``, the clamped modes of its attach set's nodes (:func:`~flexmbs.modal.
    reduction.clamped_modes`), along dK = ``d_k``, dM = ``d_m`` (sparse, FE DOFs)."""
    from .reduction import normalization_rows
    from .stiffening import mode_vectors

    n = data.n_modes if n is None else int(n)
    modes = mode_vectors(fe, data)[:, :n]
    fixed = fe.node_dofs(data.node_sets[data.attach_set])
    free = np.setdiff1d(np.setdiff1d(np.arange(fe.n_dof), fe.inactive_dofs), fixed)
    k_f, m_f = fe.stiffness[free][:, free], fe.mass[free][:, free]
    lam = (np.diag(data.K_ff) / np.diag(data.M_ff))[:n]
    spectrum = _lowest(k_f, m_f, min(n + 1, free.size))
    check_gaps(spectrum, "modal derivatives of the clamped modes")
    d_k = sp.csr_matrix(d_k)
    d_m = sp.csr_matrix(d_m)
    dlam, v = nelson(k_f, m_f, d_k[free][:, free], d_m[free][:, free], lam, modes[free],
                     "modal derivatives")
    branch = np.zeros_like(modes)
    branch[free] = v
    rows = normalization_rows(modes, fe) if normalization == "displacement" else None
    d_modes = _normalization_derivative(modes, branch, rows, normalization, fe.mass, d_m)
    dm_ff, dk_ff = _modal_matrices_derivative(modes, d_modes, fe, d_k, d_m, lam, dlam)
    return ModalTangent(d_modes, dm_ff, dk_ff, dlam, d_m)


def static_correction_tangent(fe, d_k, d_m, data, kept: ModalTangent, n_kept: int,
                              nodes, components: str = "123") -> ModalTangent:
    """The :class:`ModalTangent` of ``data``, whose first ``n_kept`` coordinates are the
    modes ``kept`` differentiates and whose others were appended by
    ``static_correction(·, fe, nodes, components)`` with the frame attached (module
    docstring)."""
    from .stiffening import mode_vectors

    top = fe.dofs_per_node
    comps = sorted({int(c) for c in str(components) if c.strip()})
    idx = np.asarray(fe.resolve_nodes(nodes, "static correction: nodes"), dtype=np.int64)
    modes = mode_vectors(fe, data)
    phi, extra = modes[:, :n_kept], modes[:, n_kept:]
    d_phi = kept.modes[:, :n_kept]
    fixed = fe.node_dofs(data.node_sets[data.attach_set])
    free = np.setdiff1d(np.arange(fe.n_dof), fixed)
    k_mat, m_mat = fe.stiffness, fe.mass
    d_k, d_m = sp.csr_matrix(d_k), sp.csr_matrix(d_m)
    loads = np.zeros((fe.n_dof, len(idx) * len(comps)))
    for k, (node, comp) in enumerate((a, c) for a in idx for c in comps):
        loads[top * node + comp - 1, k] = 1.0
    solve = _solve_factory(k_mat[free][:, free])
    stat, d_stat = np.zeros_like(loads), np.zeros_like(loads)
    stat[free] = np.column_stack([solve(col) for col in loads[free].T])
    dk_s = d_k @ stat
    d_stat[free] = -np.column_stack([solve(col) for col in dk_s[free].T])
    # made M-orthogonal to the kept modes: S_o = S − Φ G⁻¹ H, G = ΦᵀMΦ, H = ΦᵀMS
    g_mat, h_mat = phi.T @ (m_mat @ phi), phi.T @ (m_mat @ stat)
    coef = np.linalg.solve(g_mat, h_mat)
    d_g = d_phi.T @ (m_mat @ phi) + phi.T @ (d_m @ phi) + phi.T @ (m_mat @ d_phi)
    d_h = d_phi.T @ (m_mat @ stat) + phi.T @ (d_m @ stat) + phi.T @ (m_mat @ d_stat)
    d_coef = np.linalg.solve(g_mat, d_h - d_g @ coef)
    s_o = stat - phi @ coef
    d_s_o = d_stat - d_phi @ coef - phi @ d_coef
    # the Ritz vectors of (K, M) in span(S_o) are the appended modes: ê_j = S_o y_j
    a_mat, b_mat = s_o.T @ (k_mat @ s_o), s_o.T @ (m_mat @ s_o)
    if extra.shape[1] != s_o.shape[1] or np.linalg.matrix_rank(b_mat) < s_o.shape[1]:
        raise ModelError("modal derivatives: the static-correction loads deflect the body "
                         "in directions the kept modes already hold; this reduction has "
                         "no derivative here")
    y = np.linalg.lstsq(s_o, extra, rcond=None)[0]  # the nominal modes' coordinates
    mu = np.einsum("ij,ij->j", y, a_mat @ y) / np.einsum("ij,ij->j", y, b_mat @ y)
    check_gaps(np.sort(mu), "modal derivatives of the static-correction modes")

    def sym(x):
        return x + x.T

    d_a = sym(d_s_o.T @ (k_mat @ s_o)) + s_o.T @ (d_k @ s_o)
    d_b = sym(d_s_o.T @ (m_mat @ s_o)) + s_o.T @ (d_m @ s_o)
    _, d_y = nelson(a_mat, b_mat, d_a, d_b, mu, y, "modal derivatives")
    d_extra = d_s_o @ y + s_o @ d_y
    # normalization: the largest translation entry of each mode is ±1 (of a twist, whose
    # nodes move by round-off, the largest rotation entry)
    trans = fe.node_dofs(np.arange(fe.n_nodes), translational_only=True)
    turns = np.setdiff1d(np.arange(fe.n_dof), trans)
    size = max(float(np.max(np.ptp(fe.nodes, axis=0))), 1e-300)
    for j in range(extra.shape[1]):
        r = trans[int(np.argmax(np.abs(extra[trans, j])))]
        if turns.size and abs(extra[r, j]) < 1e-3 * size * np.max(np.abs(extra[turns, j])):
            r = turns[int(np.argmax(np.abs(extra[turns, j])))]
        d_extra[:, j] -= extra[:, j] * (d_extra[r, j] / extra[r, j])
    lam_x = np.einsum("ij,ij->j", extra, k_mat @ extra) / np.einsum(
        "ij,ij->j", extra, m_mat @ extra)
    m_x = np.einsum("ij,ij->j", extra, m_mat @ extra)
    dm_x = 2 * np.einsum("ij,ij->j", extra, m_mat @ d_extra) + np.einsum(
        "ij,ij->j", extra, d_m @ extra)
    dk_x = 2 * np.einsum("ij,ij->j", extra, k_mat @ d_extra) + np.einsum(
        "ij,ij->j", extra, d_k @ extra)
    n_x = extra.shape[1]
    n_all = n_kept + n_x
    dm_ff, dk_ff = np.zeros((n_all, n_all)), np.zeros((n_all, n_all))
    dm_ff[:n_kept, :n_kept] = kept.M_ff[:n_kept, :n_kept]
    dk_ff[:n_kept, :n_kept] = kept.K_ff[:n_kept, :n_kept]
    dm_ff[n_kept:, n_kept:] = np.diag(dm_x)
    dk_ff[n_kept:, n_kept:] = np.diag(dk_x)
    dlam_x = (dk_x - lam_x * dm_x) / m_x
    return ModalTangent(np.concatenate([d_phi, d_extra], axis=1), dm_ff, dk_ff,
                        np.concatenate([kept.eigenvalues[:n_kept], dlam_x]), d_m)


def along(data, fe, tangent: ModalTangent, t: float):
    """``data`` moved by t [units of the parameter] along ``tangent``: shapes, M_ff,
    K_ff and the FE mass (``fe``'s, the one ``data`` was reduced from) plus t times their
    derivatives; the invariants and the damping matrix follow from them."""
    d_phi, d_psi = tangent.shapes(fe)
    return replace(
        data, phi=data.phi + t * d_phi,
        psi=None if data.psi is None else data.psi + t * d_psi,
        M_ff=data.M_ff + t * tangent.M_ff, K_ff=data.K_ff + t * tangent.K_ff,
        mass=sp.csr_matrix(fe.mass + t * tangent.mass), stiffening={}, modal_fields={})
