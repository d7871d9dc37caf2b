"""Parameter derivatives of the flexible body's residual (docs/gradients.md, "Parameter
derivatives"): the modal stiffness and damping forces K_ff ξ + D_ff ξ̇ of the ξ rows.

Both enter the residual linearly, so a change (dK_ff, dD_ff) of the matrices — a
stiffness scale s (dK_ff = K_ff ds), modal damping ratios ζ_j (D_ff is linear in them,
:attr:`flexmbs.modal.data.ModalData.D_ff`) — changes the ξ rows by dK_ff ξ + dD_ff ξ̇,
exactly. A nonlinear body's polynomial force f(η) = ½ C₃ : ηη + ⅙ C₄ : ηηη is linear in
its tensors too: (dC₃, dC₄) change the rows by ½ dC₃ : ηη + ⅙ dC₄ : ηηη. (Gravity,
linear in g, is differentiated for every body kind alike from the body's residual,
docs/gradients.md.)
"""

from __future__ import annotations

import numpy as np


def modal_force_derivative(xi, xi_dot, d_stiffness=None, d_damping=None, d_cubic=None,
                           d_quartic=None) -> np.ndarray:
    """∂r (n,) of the ξ rows [N m per unit ξ] for a change dK_ff, dD_ff (n, n) of the
    modal stiffness and damping matrices and dC₃ (n, n, n), dC₄ (n, n, n, n) of a
    nonlinear body's polynomial (None: unchanged) at ξ, ξ̇; ξ, ξ̇ (…, n) of several
    states give (…, n)."""
    xi = np.asarray(xi, dtype=float)
    out = np.zeros(xi.shape)
    if d_stiffness is not None:
        out += np.einsum("ij,...j->...i", np.asarray(d_stiffness, dtype=float), xi)
    if d_damping is not None:
        out += np.einsum("ij,...j->...i", np.asarray(d_damping, dtype=float),
                         np.asarray(xi_dot, dtype=float))
    if d_cubic is not None:
        out += 0.5 * np.einsum("ijk,...k,...j->...i", np.asarray(d_cubic, dtype=float),
                               xi, xi)
    if d_quartic is not None:
        out += np.einsum("ijkl,...l,...k,...j->...i", np.asarray(d_quartic, dtype=float),
                         xi, xi, xi) / 6.0
    return out
