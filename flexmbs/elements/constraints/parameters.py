"""Parameter derivatives of the drives' constraint rows (docs/gradients.md, "Parameter
derivatives"): how Φ, Φ_qᵀλ and Φ_t of one drive row change with its profile's value
s(t) and rate ṡ(t), as plain array functions.

* Coordinate and translation drives, Φ = f(q) − s: ∂Φ/∂s = −1, Φ_q does not depend on
  s, and Φ_t = −ṡ.
* Rotation drives, Φ(θ) = x_jᵀ(−sin θ x_i + cos θ y_i) with θ = s the prescribed angle
  [rad]: ∂Φ/∂θ = Φ(θ + π/2), and so ∂Φ_q/∂θ = Φ_q(θ + π/2); Φ_t = θ̇ Φ(θ + π/2), whose
  derivatives are dθ̇ Φ(θ + π/2) − θ̇ dθ Φ(θ).

Marker vectors V (8, 3) = (r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j) in global components
and their Jacobians J (8, 3, n) over the pair's coordinates, as the constraint plan
(:mod:`flexmbs.assembly.constraints`) and the bushing use them.
"""

from __future__ import annotations

import math

import numpy as np

X_I, Y_I, X_J = 1, 2, 5


def rotation_row(vecs, jac, theta) -> tuple[float, np.ndarray]:
    """(Φ, Φ_q (n,)) of a rotation drive's row at the prescribed angle θ [rad]."""
    s, c = math.sin(theta), math.cos(theta)
    axis = -s * vecs[X_I] + c * vecs[Y_I]
    grad = vecs[X_J] @ (-s * jac[X_I] + c * jac[Y_I]) + axis @ jac[X_J]
    return float(vecs[X_J] @ axis), grad


def drive_derivatives(kind, vecs, jac, theta, theta_dot, d_s, d_s_dot):
    """(dΦ, dΦ_q (n,), dΦ_t) of one drive row for changes ds, dṡ of its profile's value
    and rate at s = ``theta``, ṡ = ``theta_dot``; ``vecs``, ``jac``: its markers' V and J
    (only their shape is used for coordinate and translation drives, whose Φ_q does not
    depend on s). Then d(Φ_qᵀλ) = λ dΦ_q and d(Φ_q q̇ + Φ_t) = dΦ_q q̇ + dΦ_t."""
    n = jac.shape[-1]
    if kind != "rotation":
        return -d_s, np.zeros(n), -d_s_dot
    phi, _ = rotation_row(vecs, jac, theta)
    phi_90, grad_90 = rotation_row(vecs, jac, theta + 0.5 * math.pi)
    return phi_90 * d_s, d_s * grad_90, d_s_dot * phi_90 - theta_dot * d_s * phi
