"""Parameter derivatives of the bushing (docs/gradients.md, "Parameter derivatives"):
plain array functions beside :mod:`.reference`.

The generalized force Q = −(∇e)ᵀ s with the load s = K e + C ė − f0 is linear in the
six stiffnesses, the six dampings and the preload f0, and ∇e depends on the geometry
alone: a change (dK, dC, df0) changes Q by −(∇e)ᵀ (dK e + dC ė − df0), exactly.
Components: [N/m ×3, N m/rad ×3], [N s/m ×3, N m s/rad ×3], [N ×3, N m ×3], along
marker i's axes.
"""

from __future__ import annotations

import numpy as np

from . import reference


def force_derivative(vecs, jac, qd, d_stiffness, d_damping, d_preload) -> np.ndarray:
    """∂Q (n,) on the pair's local coordinates for changes dK, dC, df0 (6,) each, from the
    marker vectors V (8, 3), their stacked Jacobians J (8, 3, n) and the local q̇ (n,)
    (:func:`.reference.evaluate`'s arguments)."""
    grad = reference.gradient(vecs, jac)
    e = reference.deformation(vecs)
    ds = (np.asarray(d_stiffness, dtype=float) * e
          + np.asarray(d_damping, dtype=float) * (grad @ qd)
          - np.asarray(d_preload, dtype=float))
    return -(grad.T @ ds)


def pair_state(system, marker_i, marker_j, q, qd):
    """(V (8, 3), J (8, 3, n), local q̇ (n,), idx (n,)): the two markers' vectors and
    Jacobians and the pair's coordinates (body i's, then body j's)."""
    bi, mi, sli = system.marker_info(marker_i)
    bj, mj, slj = system.marker_info(marker_j)
    ri, axi, ji, _ = bi.marker_frame(q[sli], mi)
    rj, axj, jj, _ = bj.marker_frame(q[slj], mj)
    idx = np.concatenate([np.arange(sli.start, sli.stop),
                          np.arange(slj.start, slj.stop)]).astype(np.int64)
    return (reference.marker_vectors(ri, axi, rj, axj), reference.stack_jacobians(ji, jj),
            np.concatenate([qd[sli], qd[slj]]), idx)
