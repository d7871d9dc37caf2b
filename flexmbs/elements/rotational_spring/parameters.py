"""Parameter derivatives of the rotational spring–damper (docs/gradients.md, "Parameter
derivatives"): plain functions beside :mod:`.reference`.

The torque τ = −k (θ − θ0) − c θ̇ [N m] about z_i on marker j (reaction on i) is linear
in k, c and θ0, and the generalized force is τ [−Ω_iᵀ z_i; Ω_jᵀ z_i] (Ω the markers'
angular Jacobians), so dτ = −dk (θ − θ0) + k dθ0 − dc θ̇ times the same vector: exact.
"""

from __future__ import annotations

import numpy as np

from ..marker_pairs import MarkerPair
from .reference import relative_angle


def torque_derivative(angle, rate, stiffness, d_stiffness=0.0, d_damping=0.0,
                      d_angle0=0.0, angle0=0.0) -> float:
    """dτ [N m] for changes dk [N m/rad], dc [N m s/rad], dθ0 [rad] at θ [rad], θ̇
    [rad/s]."""
    return -d_stiffness * (angle - angle0) + stiffness * d_angle0 - d_damping * rate


def torque_direction(system, marker_i, marker_j, key, q, qd):
    """(idx, g (n,), θ [rad], θ̇ [rad/s]): the generalized force per N m of torque about
    z_i on j, g = [−Ω_iᵀ z_i; Ω_jᵀ z_i] on the pair's coordinates ``idx``; θ continued
    from the angle memory of ``key`` (``System.unwrap``, not stored)."""
    pair = MarkerPair(system, marker_i, marker_j, q, qd)
    zi = pair.axi[:, 2]
    angle = system.unwrap(key, relative_angle(pair.axi[:, 0], pair.axi[:, 1],
                                              pair.axj[:, 0]), store=False)
    om_i = pair.bi.angular_jac(pair.qi, pair.mi)
    om_j = pair.bj.angular_jac(pair.qj, pair.mj)
    rate = float(zi @ (om_j @ pair.qdj - om_i @ pair.qdi))
    return pair.idx, np.concatenate([-(om_i.T @ zi), om_j.T @ zi]), angle, rate
