"""Parameter derivatives of the rigid body's residual (docs/gradients.md, "Parameter
derivatives"): plain array functions beside :mod:`.reference`.

The residual r_b = M q̈ − Q_v − Q_g of :func:`.reference.residual` is linear in the
mass properties (m [kg], I_O [kg m²] about the body-frame origin, S = m c [kg m]) taken
together, so its derivative along a change (dm, dI_O, dS) is the residual evaluated at
those values: exact, no differences. The user's parameters are m, the inertia I_c about
the centre of mass and the centre of mass c (body frame [m]); :func:`mass_derivatives`
carries their changes over to (dm, dI_O, dS) through I_O = I_c + m (cᵀc I − c cᵀ).
Gravity enters through Q_g = [m g; Ḡᵀ(S × Aᵀg)], linear in g.
"""

from __future__ import annotations

import numpy as np

from . import reference


def mass_derivatives(mass, com, d_mass, d_inertia, d_com):
    """(dm [kg], dI_O (3, 3) [kg m²], dS (3,) [kg m]) of a change dm, dI_c (3, 3), dc (3,)
    of the mass, the inertia about the centre of mass and the centre of mass (body
    frame) of a body with mass ``mass`` and centre of mass ``com``."""
    c = np.asarray(com, dtype=float)
    dc = np.asarray(d_com, dtype=float)
    eye = np.eye(3)
    d_io = (np.asarray(d_inertia, dtype=float) + d_mass * (c @ c * eye - np.outer(c, c))
            + mass * (2.0 * (c @ dc) * eye - np.outer(dc, c) - np.outer(c, dc)))
    return float(d_mass), d_io, d_mass * c + mass * dc


def residual_derivative(q, qd, qdd, gravity, d_mass, d_inertia_origin, d_first_moment):
    """∂r_b (7,) [N, N m] along the change (dm, dI_O, dS) of the mass properties at the
    state (q, q̇, q̈) with gravity g [m/s², global]: the residual is linear in them."""
    return reference.residual(q, qd, qdd, gravity, d_mass, d_inertia_origin,
                              np.asarray(d_first_moment, dtype=float))


def gravity_derivative(q, mass, first_moment, d_gravity):
    """∂r_b (7,) along a change dg [m/s², global] of gravity: −Q_g(dg), with
    ``first_moment`` S = m c [kg m] (None: the centre of mass is the origin)."""
    return -reference.gravity_force(q, mass, first_moment, d_gravity)
