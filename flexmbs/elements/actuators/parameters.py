"""Parameter derivatives of the joint actuators (docs/gradients.md, "Parameter
derivatives").

A joint actuator applies its value u(t) [N m or N] about (along) z_i on marker j with the
reaction on i: Q = u [−Ω_iᵀ z_i; Ω_jᵀ z_i] (torque, Ω the angular Jacobians) or
u [−F_iᵀ z_i; F_jᵀ z_i] (force, F the force Jacobians). With u from a time profile,
the derivative along a profile parameter is du times the same vector: exact.
"""

from __future__ import annotations

import numpy as np

from ..marker_pairs import MarkerPair


def load_direction(system, marker_i, marker_j, kind, q):
    """(idx, g (n,)): the generalized force per unit value, g = [−J_iᵀ z_i; J_jᵀ z_i] on
    the pair's coordinates ``idx`` (J = angular_jac for ``kind`` "torque", force_jac for
    "force")."""
    pair = MarkerPair(system, marker_i, marker_j, q, np.zeros_like(q))
    zi = pair.axi[:, 2]
    name = "angular_jac" if kind == "torque" else "force_jac"
    jac_i = getattr(pair.bi, name)(pair.qi, pair.mi)
    jac_j = getattr(pair.bj, name)(pair.qj, pair.mj)
    return pair.idx, np.concatenate([-(jac_i.T @ zi), jac_j.T @ zi])
