"""Static modal derivatives as stored with modal data, and the polynomial elastic forces
they give (docs/theory_modal_derivatives.md).

:class:`ModalDerivatives` holds, for the n modes of a ModalData, the static modal
derivatives θ_ij (i ≤ j) of pairs of modes and the elastic tensors of the *raw enriched
basis* V = [Φ, Θ] (m = n + n_d columns, modes first): VᵀKV, VᵀMV and the third and
fourth derivatives of the FE strain energy U(V η). It is computed from the FE model by
:func:`flexmbs.modal.derivatives.with_modal_derivatives` and kept in
``ModalData.derivatives``; :func:`flexmbs.modal.derivatives.enriched_data` turns it into
the coordinates of a nonlinear body.

:class:`ElasticPolynomial` evaluates the nonlinear elastic force of those coordinates,

    f(η) = ½ C₃ : ηη + ⅙ C₄ : ηηη        (the force is K η + f(η)),

its tangent ∂f/∂η = C₃ η + ½ C₄ : ηη and its energy ⅙ C₃ : ηηη + ¹⁄₂₄ C₄ : ηηηη, in
O(m⁴) per evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_float_array, check_finite, check_shape
from ..errors import ShapeError, ValidationError


@dataclass(frozen=True, eq=False)
class ModalDerivatives:
    """Static modal derivatives of a ModalData's modes and the enriched basis' tensors.

    Attributes
    ----------
    pairs : ndarray of int, shape (n_d, 2)
        The mode pair (i, j), i ≤ j, 0-based coordinates of the ModalData, of each
        derivative.
    theta : ndarray, shape (3N, n_d)
        Translational shapes of θ_ij [m per unit ξ_i ξ_j].
    theta_psi : ndarray, shape (3N, n_d), or None
        Rotational shapes [rad per unit ξ_i ξ_j] (6-DOF FE models).
    stiffness, mass : ndarray, shape (m, m)
        VᵀKV [N m per unit²] and VᵀMV [kg m² per unit²] of V = [Φ, Θ], m = n + n_d.
    cubic : ndarray, shape (m, m, m)
        C₃ = ∂³U/∂η³ of the FE strain energy U(V η), symmetric [N m per unit³].
    quartic : ndarray, shape (m, m, m, m)
        C₄ = ∂⁴U/∂η⁴, symmetric [N m per unit⁴].
    energy : str
        The FE strain energy they come from (docs/theory_modal_derivatives.md).
    """

    pairs: np.ndarray
    theta: np.ndarray
    theta_psi: np.ndarray | None
    stiffness: np.ndarray
    mass: np.ndarray
    cubic: np.ndarray
    quartic: np.ndarray
    energy: str = ""

    @property
    def n_derivatives(self) -> int:
        return int(self.pairs.shape[0])

    def select(self, idx: np.ndarray, n_modes: int) -> ModalDerivatives | None:
        """The derivatives of the pairs among the modes ``idx`` (new order), or None when
        no pair is left; the tensors sliced to the kept columns."""
        position = {int(j): k for k, j in enumerate(idx)}
        keep = [k for k, (i, j) in enumerate(self.pairs)
                if int(i) in position and int(j) in position]
        if not keep:
            return None
        pairs = np.array([sorted((position[int(self.pairs[k, 0])],
                                  position[int(self.pairs[k, 1])])) for k in keep],
                         dtype=np.int64)
        cols = np.concatenate([np.asarray(idx, np.int64),
                               n_modes + np.asarray(keep, np.int64)])
        return ModalDerivatives(
            pairs=pairs, theta=self.theta[:, keep],
            theta_psi=None if self.theta_psi is None else self.theta_psi[:, keep],
            stiffness=self.stiffness[np.ix_(cols, cols)],
            mass=self.mass[np.ix_(cols, cols)],
            cubic=self.cubic[np.ix_(cols, cols, cols)],
            quartic=self.quartic[np.ix_(cols, cols, cols, cols)], energy=self.energy)


def validated_derivatives(value, n_nodes: int, n_modes: int, has_psi: bool):
    """ModalData.derivatives checked (shapes, finite values, symmetry, pairs in range)."""
    if value is None:
        return None
    if not isinstance(value, ModalDerivatives):
        raise ValidationError(f"ModalData.derivatives must be a ModalDerivatives, got "
                              f"{type(value).__name__}")
    name = "ModalData.derivatives"
    pairs = np.asarray(value.pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
        raise ShapeError(f"{name}.pairs must be (n_d, 2) integers, got shape {pairs.shape}")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= n_modes
                       or np.any(pairs[:, 0] > pairs[:, 1])):
        raise ValidationError(f"{name}.pairs must be mode pairs (i, j), 0 <= i <= j < "
                              f"{n_modes}; got {pairs.tolist()[:6]}")
    n_d = pairs.shape[0]
    m = n_modes + n_d
    theta = as_float_array(value.theta, f"{name}.theta")
    check_shape(theta, (3 * n_nodes, n_d), f"{name}.theta")
    psi = value.theta_psi
    if psi is not None:
        psi = as_float_array(psi, f"{name}.theta_psi")
        check_shape(psi, (3 * n_nodes, n_d), f"{name}.theta_psi")
    if has_psi != (psi is not None):
        raise ValidationError(f"{name}.theta_psi must be given exactly when the modes have "
                              f"rotational shapes psi (they {'do' if has_psi else 'do not'})")
    arrays = {}
    for key, shape in (("stiffness", (m, m)), ("mass", (m, m)), ("cubic", (m,) * 3),
                       ("quartic", (m,) * 4)):
        arr = as_float_array(getattr(value, key), f"{name}.{key}")
        check_shape(arr, shape, f"{name}.{key}")
        arrays[key] = arr
    for key, arr in (("theta", theta), ("theta_psi", psi), *arrays.items()):
        if arr is not None:
            check_finite(arr, f"{name}.{key}")
    for key in ("stiffness", "mass", "cubic", "quartic"):
        arr = arrays[key]
        scale = max(float(np.max(np.abs(arr), initial=0.0)), 1e-300)
        for axis in range(1, arr.ndim):  # the swaps (0 k) generate every permutation
            if np.max(np.abs(arr - np.swapaxes(arr, 0, axis)), initial=0.0) > 1e-8 * scale:
                raise ValidationError(f"{name}.{key} is not symmetric in its indices "
                                      f"(0 and {axis})")
    return ModalDerivatives(pairs=pairs.astype(np.int64), theta=theta, theta_psi=psi,
                            energy=str(value.energy), **arrays)


@dataclass(frozen=True, eq=False)
class ElasticPolynomial:
    """The nonlinear part of the elastic force of the coordinates η of a body with modal
    derivatives (module docstring): C₃ (m, m, m), C₄ (m, m, m, m), symmetric."""

    cubic: np.ndarray
    quartic: np.ndarray

    @property
    def size(self) -> int:
        return int(self.cubic.shape[0])

    def force(self, eta) -> np.ndarray:
        """f(η) = ½ C₃ : ηη + ⅙ C₄ : ηηη (m,) [N m per unit], the force beyond K η."""
        eta = np.asarray(eta, float)
        c4 = self.quartic @ eta
        return (0.5 * (self.cubic @ eta) + (c4 @ eta) / 6.0) @ eta

    def tangent(self, eta) -> np.ndarray:
        """∂f/∂η = C₃ η + ½ C₄ : ηη (m, m)."""
        eta = np.asarray(eta, float)
        return self.cubic @ eta + 0.5 * ((self.quartic @ eta) @ eta)

    def energy(self, eta) -> np.ndarray | float:
        """⅙ C₃ : ηηη + ¹⁄₂₄ C₄ : ηηηη [J]; η (m,) or a history (n_t, m)."""
        eta = np.asarray(eta, float)
        if eta.ndim == 1:
            return float(self.energy(eta[None])[0])
        m = self.size
        cubic, quartic = self.cubic.reshape(m, m * m), self.quartic.reshape(m, m ** 3)
        out = np.empty(len(eta))
        for start in range(0, len(eta), ENERGY_CHUNK):  # products of (chunk, m³)
            e = eta[start:start + ENERGY_CHUNK]
            c3 = _contract(e @ cubic, e, 2)
            c4 = _contract(e @ quartic, e, 3)
            out[start:start + len(e)] = c3 / 6.0 + c4 / 24.0
        return out


#: Outputs per matrix product in :meth:`ElasticPolynomial.energy` (bounds its work array
#: to ENERGY_CHUNK × m³ numbers).
ENERGY_CHUNK = 128


def _contract(w, eta, times: int) -> np.ndarray:
    """Σ w[t, a, b, …] η[t, a] η[t, b] … over ``times`` indices of ``w`` (t, m^times)
    flattened, for every t: the polynomial energy's contraction, one index at a time."""
    n, m = eta.shape
    for left in range(times - 1, 0, -1):
        w = np.einsum("tab,ta->tb", w.reshape(n, m, m ** left), eta)
    return np.einsum("ta,ta->t", w, eta)
