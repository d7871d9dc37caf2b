"""Parameter derivatives of the point and distributed loads (docs/gradients.md,
"Parameter derivatives").

Both generalized forces (:func:`.reference.point_generalized_force`,
:func:`.reference.generalized_force`) are linear in the load vector, so a change dF of
the load [N, N m, or N per unit weight] changes them by the same functions evaluated at
dF: exact.
"""

from __future__ import annotations

from . import reference


def point_force_derivative(body, qb, marker, d_vec, kind, in_marker_axes):
    """∂Q_b (n,) of a point force (``kind`` "force") or torque ("torque") for a change
    dF (3,) of its value (global axes, or along the marker's axes)."""
    return reference.point_generalized_force(body, qb, marker, d_vec, kind,
                                             in_marker_axes)


def distributed_force_derivative(p, xi, d_vec, in_body_axes, integrals, sees_modes, rigid):
    """∂Q (7 + n,) of a distributed load for a change dF (3,) of its value
    (:func:`.reference.generalized_force`'s other arguments)."""
    return reference.generalized_force(p, xi, d_vec, in_body_axes, integrals, sees_modes,
                                       rigid)
