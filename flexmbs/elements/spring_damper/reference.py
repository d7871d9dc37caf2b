"""The spring–damper–actuator's NumPy reference: plain array functions of the line
between its two markers (docs/multibody.md). The declaration
(:class:`flexmbs.model.forces.SpringDamperActuator`) fetches the markers' points,
velocities and Jacobians and adds the actuator force; the compiled kernels
(:mod:`flexmbs.elements.spring_damper.kernels`) evaluate the same terms.

Tension f = k (L − L0) + c L̇ + f_a [N] pulls the markers together (f > 0) along the unit
vector u = d/L of d = r_j − r_i [m]; L̇ = uᵀḋ [m/s].
"""

from __future__ import annotations

import numpy as np


def line(d, d_dot) -> tuple[float, np.ndarray, float]:
    """(L [m], u (3,), L̇ [m/s]) from d = r_j − r_i [m] and ḋ [m/s] (global axes); where
    the markers coincide (L = 0) u = 0 and L̇ = 0."""
    length = float(np.linalg.norm(d))
    if length == 0.0:
        return length, np.zeros(3), 0.0
    u = d / length
    return length, u, float(u @ d_dot)


def spring_force(length, rate, stiffness, damping, free_length) -> float:
    """k (L − L0) + c L̇ [N]: the tension without the actuator."""
    return stiffness * (length - free_length) + damping * rate


def load_derivatives(u, length, force, d_dq, d_dot, point_rates, stiffness, damping):
    """(∂g/∂q, ∂g/∂q̇) (3, n) of the load g = f u at a constant actuator force, over the
    pair's local coordinates: ``d_dq`` = ∂d/∂q = [−J_i, J_j] (3, n), ``point_rates`` =
    [−∂(J_i q̇_i)/∂q, ∂(J_j q̇_j)/∂q] (3, n).

    ∂u = (I − uuᵀ)/L ∂d, ∂L̇/∂q = ḋᵀ∂u + uᵀ point_rates, ∂L̇/∂q̇ = uᵀ∂d,
    ∂f = k uᵀ∂d + c ∂L̇."""
    du = (np.eye(3) - np.outer(u, u)) / length @ d_dq
    rate_dq = d_dot @ du + u @ point_rates
    rate_dqd = u @ d_dq
    f_dq = stiffness * (u @ d_dq) + damping * rate_dq
    f_dqd = damping * rate_dqd
    return np.outer(u, f_dq) + force * du, np.outer(u, f_dqd)
