"""The rotational spring–damper's NumPy reference: plain array functions of the two
markers' axes (docs/multibody.md). The declaration
(:class:`flexmbs.model.forces.RotationalSpringDamper`) continues the angle from its last
value (``System.unwrap``) and applies the torque; the compiled kernels
(:mod:`flexmbs.elements.rotational_spring.kernels`) evaluate the same terms.
"""

from __future__ import annotations

import numpy as np


def relative_angle(x_i, y_i, x_j) -> float:
    """θ = atan2(x_j·y_i, x_j·x_i) [rad] in (−π, π]: the angle of x_j about z_i, as in
    a revolute joint with these markers (unit axes, global components)."""
    return float(np.arctan2(x_j @ y_i, x_j @ x_i))


def torque(angle, rate, stiffness, damping, angle0) -> float:
    """τ = −k (θ − θ0) − c θ̇ [N m] about z_i on marker j (its reaction on marker i)."""
    return -stiffness * (angle - angle0) - damping * rate
