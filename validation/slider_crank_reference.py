"""Simeon's flexible slider–crank: the published model and an independent solution of it.

Source: B. Simeon, "Modelling a flexible slider crank mechanism by a mixed system of DAEs
and PDEs", Math. Modelling of Systems 2 (1996) 1–18; problem ``crank`` of the Test Set
for IVP Solvers (Bari/CWI; ``crank.f``), which publishes consistent initial values and a
16-digit reference solution at t = 0.1 s.

The mechanism is planar: a rigid crank (length L1) turned at ω = 150 rad/s, a flexible
steel connecting rod (length L2, square section b × h) and a slider point mass M3 on the
x-axis; no gravity, no damping. The rod is described in a frame at the crank pin along
the undeformed rod (angle φ₂) by four Ritz functions of s = x/L2:

    lateral  v = q1 sin(πs) + q2 sin(2πs)            (so q1 is the midpoint deflection)
    axial    u = q3 · 4s(1 − s) + q4 · s(2s − 1)       (q4 is the end's axial motion)

with the linear elastic stiffness and the full floating-frame inertia coupling (no
geometric stiffening): exactly linear FFRF with modal reduction.

Coordinates p = (φ₁, φ₂, x₃, q1, q2, q3, q4). The equations M(p) p̈ + Gᵀλ = f(p, ṗ),
G p̈ = −γ are those of the publication, written out below from its kinetic energy.
``axial_mass_factor`` scales the axial block of the rod's modal mass: the published
matrices use ρV·[8 1; 1 2], 15 times the consistent ρV/15·[8 1; 1 2] of the stated
shapes (the lateral block and all coupling integrals are consistent). With factor 1 this
module reproduces the published reference; with 1/15 it is the consistent model that
flexmbs (which integrates the inertia from the mass distribution) must reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

#: Published data (crank.f): masses [kg], lengths [m], inertias [kg m²] about the pivot
#: (crank) and the crank pin (rod), E [Pa], ρ [kg/m³], section b × h [m], ω [rad/s].
M1, M2, M3 = 0.36, 0.151104, 0.075552
L1, L2 = 0.15, 0.30
J1, J2 = 0.002727, 0.0045339259
E, RHO, B, H = 0.20e12, 7870.0, 0.008, 0.008
OMEGA = 150.0

#: The value of π in crank.f (single precision).
PUBLISHED_PI = 3.1415927

#: Consistent initial values (the test set's default), order (φ₁, φ₂, x₃, q1…q4).
P0 = np.array([0.0, 0.0, 0.450016933, 0.0, 0.0, 0.103339863e-4, 0.169327969e-4])
V0 = np.array([0.150000000e3, -0.749957670e2, -0.268938672e-5, 0.444896105,
               0.463434311e-2, -0.178591076e-5, -0.268938672e-5])

#: The published reference solution at t = 0.1 s (crank.f ``solut``).
REFERENCE_T = 0.1
REFERENCE_P = np.array([0.1500000000000104e+02, -0.3311734988256260e+00,
                        0.1697373328427860e+00, 0.1893192899613509e-03,
                        0.2375751249879174e-04, -0.5323896770569702e-05,
                        -0.8363313279112129e-05])
REFERENCE_V = np.array([0.1500000000000000e+03, 0.6025346755138369e+02,
                        -0.8753116326670527e+01, -0.3005541400289738e-01,
                        -0.5500431812571696e-02, 0.4974111734266989e-03,
                        0.1105560003626645e-02])


def lateral_shapes(s):
    """(2, len(s)) lateral Ritz functions sin(kπs), k = 1, 2."""
    s = np.asarray(s, dtype=float)
    return np.array([np.sin(np.pi * s), np.sin(2 * np.pi * s)])


def axial_shapes(s):
    """(2, len(s)) axial Ritz functions 4s(1 − s), s(2s − 1)."""
    s = np.asarray(s, dtype=float)
    return np.array([4 * s * (1 - s), s * (2 * s - 1)])


def rod_stiffness(pi: float = np.pi) -> np.ndarray:
    """K (4 x 4) [N/m]: EI∫v''² for the sines, EA∫u'² for the quadratics."""
    area, inertia = B * H, B * H**3 / 12
    k = np.zeros((4, 4))
    k[0, 0] = E * inertia * pi**4 / (2 * L2**3)
    k[1, 1] = 8 * E * inertia * pi**4 / L2**3
    k[2:, 2:] = E * area / L2 * np.array([[16 / 3, -8 / 3], [-8 / 3, 7 / 3]])
    return k


@dataclass(frozen=True)
class RodIntegrals:
    """The rod's inertia integrals over its volume V (multiplied by ρ where used).

    mass_q : (4, 4) modal mass ∫ρ(vᵢvⱼ + uᵢuⱼ)dV (axial block scaled by the factor);
    axial, lateral : (4,) ∫uᵢ dV and ∫vᵢ dV (zero for the other kind);
    x_axial, x_lateral : (4,) ∫x uᵢ dV and ∫x vᵢ dV;
    skew : (4, 4) ∫(uᵢvⱼ − vᵢuⱼ)dV (antisymmetric).
    """

    mass_q: np.ndarray
    axial: np.ndarray
    lateral: np.ndarray
    x_axial: np.ndarray
    x_lateral: np.ndarray
    skew: np.ndarray


def rod_integrals(axial_mass_factor: float = 1.0, pi: float = np.pi) -> RodIntegrals:
    """Closed-form integrals of the Ritz functions (the published values; ``pi`` as in
    :func:`solve`)."""
    vol = B * H * L2
    mass = RHO * vol
    mass_q = np.zeros((4, 4))
    mass_q[0, 0] = mass_q[1, 1] = mass / 2
    mass_q[2:, 2:] = axial_mass_factor * mass * np.array([[8.0, 1.0], [1.0, 2.0]])
    axial = vol * np.array([0.0, 0.0, 2 / 3, 1 / 6])
    lateral = vol * np.array([2 / pi, 0.0, 0.0, 0.0])
    x_axial = L2 * vol * np.array([0.0, 0.0, 1 / 3, 1 / 6])
    x_lateral = L2 * vol * np.array([1 / pi, -0.5 / pi, 0.0, 0.0])
    skew = np.zeros((4, 4))
    skew[0, 2] = -16 / pi**3 * vol
    skew[0, 3] = (8 / pi**3 - 1 / pi) * vol
    skew[1, 3] = 0.5 / pi * vol
    skew = skew - skew.T
    return RodIntegrals(mass_q, axial, lateral, x_axial, x_lateral, skew)


def accelerations(p, v, integrals: RodIntegrals, stiffness: np.ndarray):
    """(p̈, λ) of the published equations at state (p, v)."""
    ig = integrals
    sol = _kkt_solution(np.asarray(p, dtype=float), np.asarray(v, dtype=float), ig.mass_q,
                        ig.axial, ig.lateral, ig.x_axial, ig.x_lateral, ig.skew,
                        np.asarray(stiffness, dtype=float))
    return sol[:7], sol[7:]


@njit(cache=True)
def _kkt_solution(p, v, mass_q, axial, lateral, x_axial, x_lateral, skew, stiffness):
    """(p̈, λ) stacked (10,): the equations of :func:`accelerations` written out and
    solved, compiled (the reference's integration evaluates them about 10⁵ times)."""
    phi1, phi2 = p[0], p[1]
    q, qd = p[3:], v[3:]
    w1, w2 = v[0], v[1]
    s1, c1 = np.sin(phi1), np.cos(phi1)
    s2, c2 = np.sin(phi2), np.cos(phi2)
    s12, c12 = np.sin(phi1 - phi2), np.cos(phi1 - phi2)
    ax, lat = axial @ q, lateral @ q
    kkt = np.zeros((10, 10))  # [[M, Gᵀ], [G, 0]], the mass matrix's upper part first
    kkt[0, 0] = J1 + M2 * L1**2
    kkt[0, 1] = 0.5 * L1 * L2 * M2 * c12 + RHO * L1 * (s12 * lat + c12 * ax)
    kkt[1, 1] = J2 + q @ (mass_q @ q) + 2 * RHO * (x_axial @ q)
    kkt[2, 2] = M3
    kkt[0, 3:7] = RHO * L1 * (-s12 * axial + c12 * lateral)
    kkt[1, 3:7] = RHO * x_lateral + RHO * (q @ skew)
    kkt[3:7, 3:7] = mass_q
    for i in range(7):
        for j in range(i):
            kkt[i, j] = kkt[j, i]
    rhs = np.zeros(10)
    rhs[0] = (-0.5 * L1 * L2 * M2 * w2**2 * s12
              + RHO * L1 * w2**2 * (-s12 * ax + c12 * lat)
              - 2 * RHO * L1 * w2 * (c12 * (axial @ qd) + s12 * (lateral @ qd)))
    rhs[1] = (0.5 * L1 * L2 * M2 * w1**2 * s12
              + RHO * L1 * w1**2 * (s12 * ax - c12 * lat)
              - 2 * RHO * w2 * (x_axial @ qd) - 2 * w2 * (qd @ (mass_q @ q))
              - RHO * (qd @ (skew @ qd)))
    rhs[3:7] = (w2**2 * (mass_q @ q)
                + RHO * (w2**2 * x_axial + L1 * w1**2 * (c12 * axial + s12 * lateral)
                         + 2 * w2 * (skew @ qd))
                - stiffness @ q)
    end = L2 + q[3]  # the rod end's distance from the crank pin along the rod frame
    jac = np.zeros((3, 7))
    jac[0, 0], jac[0, 1], jac[0, 6] = L1 * c1, end * c2, s2             # y of the end = 0
    jac[1, 0], jac[1, 1], jac[1, 2], jac[1, 6] = L1 * s1, end * s2, 1.0, -c2  # x = x₃
    jac[2, 0] = 1.0                                                     # φ₁ = ωt
    kkt[7:, :7] = jac
    kkt[:7, 7:] = jac.T
    rhs[7] = -(-L1 * s1 * w1**2 - end * s2 * w2**2 + 2 * w2 * c2 * qd[3])
    rhs[8] = -(L1 * c1 * w1**2 + end * c2 * w2**2 + 2 * w2 * s2 * qd[3])
    return np.linalg.solve(kkt, rhs)


def solve(t_eval, axial_mass_factor: float = 1.0, rtol: float = 1e-10,
          atol: float = 1e-12, state=None, pi: float = np.pi) -> np.ndarray:
    """p(t) (len(t_eval), 7): the index-1 form integrated with DOP853 at tight
    tolerances from ``state`` = (p, ṗ) (default: the published initial values P0, V0).
    ``pi`` is the value of π in the Ritz integrals (crank.f uses 3.1415927)."""
    from scipy.integrate import solve_ivp

    integrals = rod_integrals(axial_mass_factor, pi)
    stiffness = rod_stiffness(pi)
    p0, v0 = (P0, V0) if state is None else state

    def rhs(_t, y):
        return np.concatenate([y[7:], accelerations(y[:7], y[7:], integrals, stiffness)[0]])

    t_eval = np.asarray(t_eval, dtype=float)
    sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), np.concatenate([p0, v0]),
                    method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"slider-crank reference: {sol.message}")
    return sol.y[:7].T
