"""The inertia ellipsoid of a rigid body: the uniform solid ellipsoid with its mass and
its inertia about the centre of mass, and whether a drawing shows it
(docs/post_processing.md, "Rigid bodies"; the renders and the HTML viewer both use it)."""

from __future__ import annotations

import numpy as np

#: An inertia ellipsoid is drawn when its longest diameter is within these multiples of
#: the scene size: smaller, it is a speck inside the centre-of-mass sphere; larger, it
#: hides the model (inertia in the wrong units, say).
ELLIPSOID_SIZES = (0.1, 3.0)
#: The smallest semi-axis of a drawn inertia ellipsoid, a fraction of the scene size (it
#: encloses the link tubes).
ELLIPSOID_MIN_SEMI_AXIS = 0.012


def inertia_ellipsoid(mass: float, inertia,
                      com) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, axes (3, 3) columns, semi-axes (3,)) [m] of the uniform solid ellipsoid
    with the body's mass [kg] and its inertia [kg m²] about the centre of mass: a uniform
    ellipsoid has I_k = m (a_i² + a_j²) / 5 about principal axis k, so
    a_k² = 5 (I_i + I_j − I_k) / (2 m) (a slender rod of length ℓ gives a needle of
    semi-axis ℓ √(5/12) along it)."""
    moments, axes = np.linalg.eigh(np.asarray(inertia, dtype=float))
    semi = np.sqrt(np.maximum(2.5 * (moments.sum() - 2.0 * moments) / mass, 0.0))
    return np.asarray(com, dtype=float), axes, semi


def comparable(semi, size: float) -> bool:
    """Whether an ellipsoid of semi-axes ``semi`` [m] is drawn in a scene of ``size``
    [m]: its longest diameter within :data:`ELLIPSOID_SIZES` times the size."""
    longest = 2.0 * float(np.max(semi))
    return ELLIPSOID_SIZES[0] * size <= longest <= ELLIPSOID_SIZES[1] * size
