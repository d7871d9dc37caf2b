"""Geometric (stress) stiffness of the built-in beam element under an axial force
(docs/theory_stiffening.md).

A beam element carrying the axial force N (tension positive) stores the second-order
energy ½ N ∫ (v'² + w'²) dx of its transverse deflections v (local y) and w (local z),
plus ½ N (I_p/A) ∫ θ_x'² dx of its twist (the Wagner term of a doubly symmetric
section). Its geometric stiffness is the Hessian of that energy in the element DOFs,
with the element's own transverse interpolation: cubic Hermite (Euler–Bernoulli) or the
interdependent shear-deformable interpolation of the Timoshenko element (Friedman and
Kosmatka 1993), which reduces to Hermite as the shear parameter Φ → 0. The integrals are
evaluated by 4-point Gauss quadrature, exact for these polynomials.

Same DOF order and sign conventions as :func:`flexmbs.modal.fe.beam.beam_element_matrices`
(``rz = +duy/dx``, ``ry = −duz/dx``).
"""

from __future__ import annotations

import numpy as np

from .beam import BeamSection, Material, _positive, _theory

_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(4)
_XI = 0.5 * (_GAUSS_X + 1.0)  # on [0, 1]
_W = 0.5 * _GAUSS_W


def _transverse_slopes(length: float, phi: float) -> np.ndarray:
    """dH/dx (4, n_gauss) of the transverse shape functions for ``[v1, t1, v2, t2]``
    with ``t`` the section rotation (= dv/dx when Φ = 0), at the Gauss points."""
    x, f, L = _XI, phi, length
    c = 1.0 / (1.0 + f)
    dh = np.array([
        c * (6 * x**2 - 6 * x - f),
        c * L * (3 * x**2 - (4 + f) * x + 1 + f / 2),
        -c * (6 * x**2 - 6 * x - f),
        c * L * (3 * x**2 - (2 - f) * x - f / 2),
    ])
    return dh / L  # d/dx = (1/L) d/dξ


def _bending_geometric(length: float, phi: float) -> np.ndarray:
    """∫ H' H'ᵀ dx (4x4) for ``[v1, t1, v2, t2]``: the geometric stiffness per unit N."""
    dh = _transverse_slopes(length, phi)
    return length * (dh * _W) @ dh.T


def beam_geometric_stiffness(axial_force: float, length: float, section: BeamSection,
                             material: Material,
                             theory: str = "euler-bernoulli") -> np.ndarray:
    """Local 12x12 geometric stiffness of one element under the axial force N [N]
    (tension positive): N ∫ (v'² + w'²) dx in the two bending planes and
    N (I_p/A) ∫ θ_x'² dx in torsion [N/m, N, N m]."""
    L = _positive(length, "length")
    kind = _theory(theory)
    n = float(axial_force)
    if kind == "timoshenko":
        phi_y = 12.0 * material.E * section.Iz / (section.ky * material.G * section.A * L**2)
        phi_z = 12.0 * material.E * section.Iy / (section.kz * material.G * section.A * L**2)
    else:
        phi_y = phi_z = 0.0
    kg = np.zeros((12, 12))
    ix = np.ix_([1, 5, 7, 11], [1, 5, 7, 11])
    kg[ix] = n * _bending_geometric(L, phi_y)
    flip = np.array([1.0, -1.0, 1.0, -1.0])
    iz = np.ix_([2, 4, 8, 10], [2, 4, 8, 10])
    kg[iz] = n * np.outer(flip, flip) * _bending_geometric(L, phi_z)
    it = np.ix_([3, 9], [3, 9])
    kg[it] = n * section.Ip / section.A / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    return kg
