"""Parameter derivatives of the spring–damper–actuator (docs/gradients.md, "Parameter
derivatives"): plain functions beside :mod:`.reference`.

The tension f = k (L − L0) + c L̇ + f_a [N] is linear in k, c, L0 and the actuator force
f_a, and the generalized force is f times a vector of the geometry alone,
Q = f [J_iᵀ u; −J_jᵀ u] (u the unit vector from i to j, J the markers' force
Jacobians). So a change (dk, dc, dL0, df_a) changes Q by df [J_iᵀ u; −J_jᵀ u] with
df = dk (L − L0) − k dL0 + dc L̇ + df_a: exact.
"""

from __future__ import annotations

import numpy as np

from ..marker_pairs import MarkerPair
from .reference import line


def tension_derivative(length, rate, stiffness, d_stiffness=0.0, d_damping=0.0,
                       d_free_length=0.0, d_actuator=0.0, free_length=0.0) -> float:
    """df [N] for changes dk [N/m], dc [N s/m], dL0 [m] and df_a [N] at L [m], L̇ [m/s]."""
    return (d_stiffness * (length - free_length) - stiffness * d_free_length
            + d_damping * rate + d_actuator)


def load_direction(system, marker_i, marker_j, q, qd):
    """(idx, g (n,), L [m], L̇ [m/s]): the generalized force per newton of tension,
    g = [J_iᵀ u; −J_jᵀ u] on the pair's coordinates ``idx`` (body i's, then body j's);
    g = 0 where the markers coincide."""
    pair = MarkerPair(system, marker_i, marker_j, q, qd)
    d_dot = pair.jj[0] @ pair.qdj - pair.ji[0] @ pair.qdi
    length, u, rate = line(pair.rj - pair.ri, d_dot)
    g = np.concatenate([pair.bi.force_jac(pair.qi, pair.mi).T @ u,
                        -(pair.bj.force_jac(pair.qj, pair.mj).T @ u)])
    return pair.idx, g, length, rate
