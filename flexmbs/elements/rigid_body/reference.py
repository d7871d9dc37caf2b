"""The rigid body's NumPy reference: plain array functions of its seven coordinates
q = (R, p) and its mass properties (docs/theory_ffrf.md §5–7 with no modes). The
declaration (:class:`flexmbs.model.bodies.RigidBody`) calls them; the compiled kernels
(:mod:`flexmbs.elements.rigid_body.kernels`) evaluate the same terms.

Mass properties: m [kg], I_O the inertia about the body-frame origin [kg m²] and the
first moment S = m c [kg m] (None when the centre of mass is the origin); ω̄ = Ḡ(p) ṗ
[rad/s] in body axes.
"""

from __future__ import annotations

import numpy as np

from ...frame.rotations import cross3, g_bar, rotation_matrix


def quadratic_velocity(q, qd, inertia_origin, first_moment):
    """Q_v (7,) = [A(−ω̄ × (ω̄ × S)); Ḡᵀ(−ω̄ × I_O ω̄)] [N, N m] (docs/theory_ffrf.md §6)."""
    p = q[3:7]
    gb = g_bar(p)
    w = gb @ qd[3:7]
    out = np.zeros(7)
    out[3:] = gb.T @ (-cross3(w, inertia_origin @ w))
    if first_moment is not None:
        out[:3] = rotation_matrix(p) @ (-cross3(w, cross3(w, first_moment)))
    return out


def gravity_force(q, mass, first_moment, gravity):
    """Q_g (7,) = [m g; Ḡᵀ(S × Aᵀg)] [N, N m] (docs/theory_ffrf.md §7)."""
    out = np.zeros(7)
    g = np.asarray(gravity, dtype=float)
    out[:3] = mass * g
    if first_moment is not None and np.any(g):
        p = q[3:7]
        out[3:] = g_bar(p).T @ cross3(first_moment, rotation_matrix(p).T @ g)
    return out


def residual(q, qd, qdd, gravity, mass, inertia_origin, first_moment):
    """r_b (7,) = M q̈ − Q_v − Q_g with one Ḡ(p) (and A(p) for a CoM offset), without
    forming M:

        r_R = m (R̈ − g) + A(ω̄ × (ω̄ × S) − S × Ḡp̈)
        r_p = Ḡᵀ(I_O Ḡp̈ + ω̄ × I_O ω̄ + S × Aᵀ(R̈ − g)).
    """
    gb = g_bar(q[3:7])
    w = gb @ qd[3:7]
    alpha = gb @ qdd[3:7]
    acc = qdd[:3] - np.asarray(gravity, dtype=float)
    moment = inertia_origin @ alpha + cross3(w, inertia_origin @ w)
    out = np.empty(7)
    out[:3] = mass * acc
    if first_moment is not None:
        a = rotation_matrix(q[3:7])
        out[:3] += a @ (cross3(w, cross3(w, first_moment)) - cross3(first_moment, alpha))
        moment += cross3(first_moment, a.T @ acc)
    out[3:] = gb.T @ moment
    return out
