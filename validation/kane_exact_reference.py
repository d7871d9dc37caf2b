"""Geometrically exact reference for the Kane–Ryan–Banerjee (1987) spin-up beam.

Problem
-------
A planar cantilever of length L, clamped at its root to a hub of radius 0 at the origin,
is spun up about the z-axis by a prescribed root angle θ(t) with

    θ̇(t) = Ω/T (t − T/(2π) sin(2πt/T))                      (t < T),   Ω  (t ≥ T),
    θ(t) = Ω/T (t²/2 + (T/(2π))² (cos(2πt/T) − 1))           (t ≤ T),   θ(T) + Ω(t − T),

starting at rest, undeformed, along x. No gravity, no damping. The wanted output is the
transverse tip deflection in the rotating (hub) frame, v_tip(t) = e_y · R(−θ(t)) r_tip(t)
[m]. Units are SI throughout: m, kg, s, N, Pa, rad.

Formulation
-----------
Planar gradient-deficient absolute nodal coordinate formulation (ANCF; Berzeri and
Shabana 2000) with no linearisation of the kinematics. Each node i carries the position
r_i and the slope r'_i = ∂r/∂x (4 coordinates), x ∈ [0, L] being the undeformed arc
length; inside an element of length ℓ, with ξ = (x − x_e)/ℓ,

    r(x) = N₁(ξ) r_a + ℓ N₂(ξ) r'_a + N₃(ξ) r_b + ℓ N₄(ξ) r'_b,
    N₁ = 1 − 3ξ² + 2ξ³,  N₂ = ξ − 2ξ² + ξ³,  N₃ = 3ξ² − 2ξ³,  N₄ = −ξ² + ξ³,

(cubic Hermite; exact rigid-body motion, large rotations and large displacements). The
strain energy is the extensible Euler–Bernoulli (Kirchhoff) one,

    U = ∫₀ᴸ ½ EA ε² + ½ EI κ² dx,   ε = |r'| − 1,   κ = (r' × r'')/|r'|³,

ε being the axial stretch strain and κ the exact curvature of the deformed centre line
(r' × r'' = r'_x r''_y − r'_y r''_x). U is integrated with Gauss–Legendre quadrature
(default 5 points per element, well above the polynomial degree of the integrand's
leading terms; the results do not change with more). The internal force is −∂U/∂q and
its exact (analytic) Hessian gives the tangent stiffness. The kinetic energy is
½ ∫ ρA |ṙ_abs|² dx, giving the constant consistent mass matrix M = ∫ ρA SᵀS dx
(S the 2 × n interpolation matrix), integrated exactly.

Frames. Two exactly equivalent descriptions are implemented:

* ``frame="rotating"`` (default): r are components in the hub frame, which turns with
  the prescribed θ(t); r_abs = R(θ) r. Lagrange's equations are then, exactly,

      M (q̈ + 2θ̇ Ĵ q̇ + θ̈ Ĵ q − θ̇² q) = −∂U/∂q,      Ĵ = diag(J, …, J),  J = [0 −1; 1 0],

  (M = M_s ⊗ I₂ commutes with Ĵ; U is frame invariant). The root is clamped:
  r(0) = 0, r'(0) = (1, 0), constant.
* ``frame="inertial"``: r are absolute components, M q̈ = −∂U/∂q, with the root
  coordinates prescribed, r(0) = 0, r'(0) = (cos θ, sin θ); they are eliminated and their
  inertia moves to the right-hand side as −M_fp q̈_p(t).

Both give the same solution up to the integration error; they are a check on each other.
The change of observer frame is exact (no small-angle or small-strain assumption), so the
rotating-frame form is still geometrically exact; it is preferred because the error
control then acts on the small elastic motion rather than on the large rigid rotation.

Integrator
----------
First-order form y = (q_f, q̇_f) (free coordinates only), ẏ = (q̇_f, M_ff⁻¹(…)), solved
by ``scipy.integrate.solve_ivp`` with the stiff, L-stable 5th-order Radau IIA method and
the analytic Jacobian (the axial frequencies, ≥ 760 rad/s, make explicit methods
impractical). Tolerances rtol (default 1e-7) and atol (default 1e-9 m, m/s). The state is
the displacement u = q − q_ref from the straight reference, and ε is formed from u
without cancellation; even so the internal force carries round-off of order
EA × 1e-16, so tolerances far below the defaults (atol ≲ 1e-11 in the rotating frame,
≲ 1e-9 in the inertial one) make Radau's step size collapse: do not tighten beyond
rtol = 1e-8, atol = 1e-10. BLAS is limited to one thread during a run.

Convergence (Kane's beam, peak |v_tip| over 0–20 s; 16 elements, rtol 1e-7 recommended)
---------------------------------------------------------------------------------------
    Ω [rad/s]    8 el.       16 el.      32 el.      64 el.     (rtol 1e-7)
    4           0.4001066   0.4001196   0.4001202   0.4001203  m
    6           0.5737541   0.5737970   0.5737989   0.5737991  m
    10          0.8578195   0.8580089   0.8580172   0.8580182  m

At 16 elements the peak is within 1.1e-5 of the 64-element value and the whole history
within 6e-5 of the peak; rtol 1e-6 … 1e-8 and step caps of 10 ms and 5 ms change it by
< 1e-7; 7 instead of 5 Gauss points by < 1e-9; the inertial-frame form agrees to ≲ 1e-8.
One 20 s run at Ω = 10 rad/s takes about 3 s (16 elements) or 6 s (32) on one core.
(``python validation/kane_exact_reference.py --study`` reproduces the table.)

References
----------
T. R. Kane, R. R. Ryan, A. K. Banerjee, "Dynamics of a cantilever beam attached to a
moving base", J. Guidance, Control, and Dynamics 10 (1987) 139–151.
M. Berzeri, A. A. Shabana, "Development of simple models for the elastic forces in the
absolute nodal co-ordinate formulation", J. Sound Vib. 235 (2000) 539–565.

Usage
-----
    python validation/kane_exact_reference.py            # Ω = 4, 6, 10: peaks, timing
    python validation/kane_exact_reference.py --study    # convergence in elements, rtol
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np
from scipy.integrate import solve_ivp

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - threadpoolctl is a flexmbs dependency
    threadpool_limits = None

#: Kane, Ryan and Banerjee (1987) beam: L [m], A [m²], I [m⁴], E [Pa], ρ [kg/m³], T [s].
KANE_BEAM = (10.0, 4e-4, 2e-7, 7e10, 3000.0, 15.0)

#: Recommended number of elements (peak |v_tip| converged to ≈ 1e-5 relative).
DEFAULT_ELEMENTS = 16

_J = np.array([[0.0, -1.0], [1.0, 0.0]])


def spin_up_profile(omega, ramp, t):
    """Prescribed root angle and its first two derivatives.

    Parameters
    ----------
    omega : float
        Final spin rate Ω [rad/s].
    ramp : float
        Spin-up duration T [s].
    t : float or array_like
        Time [s].

    Returns
    -------
    theta, theta_dot, theta_ddot : ndarray
        θ [rad], θ̇ [rad/s], θ̈ [rad/s²] at ``t``.
    """
    t = np.asarray(t, dtype=float)
    k = 2.0 * np.pi / ramp
    before = t < ramp
    tc = np.minimum(t, ramp)
    theta_up = omega / ramp * (tc * tc / 2.0 + (np.cos(k * tc) - 1.0) / k**2)
    theta = np.where(before, theta_up, omega * ramp / 2.0 + omega * (t - ramp))
    theta_dot = np.where(before, omega / ramp * (tc - np.sin(k * tc) / k), omega)
    theta_ddot = np.where(before, omega / ramp * (1.0 - np.cos(k * tc)), 0.0)
    return theta, theta_dot, theta_ddot


class AncfCantilever:
    """Planar gradient-deficient ANCF model of a uniform cantilever clamped at x = 0.

    Parameters
    ----------
    beam : tuple of float
        (L [m], A [m²], I [m⁴], E [Pa], ρ [kg/m³], T [s]); T (spin-up duration) is not
        used here.
    elements : int
        Number of equal elements.
    gauss : int
        Gauss–Legendre points per element for the strain energy.

    Notes
    -----
    Global coordinates are ordered node by node, (r_x, r_y, r'_x, r'_y) per node
    [m, m, –, –]; element e owns the contiguous coordinates 4e … 4e + 7. The first node
    (the root) is prescribed; ``free`` indexes the other coordinates.
    """

    def __init__(self, beam=KANE_BEAM, elements=DEFAULT_ELEMENTS, gauss=5):
        length, area, inertia, young, rho = (float(v) for v in beam[:5])
        self.length, self.elements = length, int(elements)
        self.ea, self.ei, self.rho_a = young * area, young * inertia, rho * area
        self.le = length / self.elements
        self.n = 4 * (self.elements + 1)
        self.free = np.arange(4, self.n)
        # shape functions (scalar, element dofs r_a, r'_a, r_b, r'_b) and x-derivatives
        xi, w = np.polynomial.legendre.leggauss(int(gauss))
        self.xi, self.weights = (xi + 1.0) / 2.0, w / 2.0 * self.le
        _, d1, d2 = self._shapes(self.xi)
        eye = np.eye(2)
        # B[g] maps the 8 element coordinates to (r'_x, r'_y, r''_x, r''_y) at point g
        self.d1, self.d2 = d1, d2
        self.b = np.concatenate([np.einsum("gk,ij->gikj", d1, eye).reshape(-1, 2, 8),
                                 np.einsum("gk,ij->gikj", d2, eye).reshape(-1, 2, 8)],
                                axis=1)
        # consistent mass: integrand of degree 6, 4 Gauss points are exact
        xm, wm = np.polynomial.legendre.leggauss(4)
        nm, _, _ = self._shapes((xm + 1.0) / 2.0)
        m_el = self.rho_a * self.le / 2.0 * np.einsum("g,gk,gl->kl", wm, nm, nm)
        m_s = np.zeros((self.elements + 1, 2, self.elements + 1, 2))
        m_el = m_el.reshape(2, 2, 2, 2)
        idx = np.arange(self.elements)
        for i in range(2):
            for j in range(2):
                m_s[idx + i, :, idx + j, :] += m_el[i, :, j, :]
        m_s = m_s.reshape(2 * (self.elements + 1), 2 * (self.elements + 1))
        self.mass = np.kron(m_s, eye)
        self.jhat = np.kron(np.eye(2 * (self.elements + 1)), _J)

    def _shapes(self, xi):
        """Hermite shape functions N and their first and second x-derivatives."""
        le = self.le
        xi = np.asarray(xi)[:, None]
        n = np.hstack([1 - 3 * xi**2 + 2 * xi**3, le * (xi - 2 * xi**2 + xi**3),
                       3 * xi**2 - 2 * xi**3, le * (-(xi**2) + xi**3)])
        d1 = np.hstack([(-6 * xi + 6 * xi**2) / le, 1 - 4 * xi + 3 * xi**2,
                        (6 * xi - 6 * xi**2) / le, -2 * xi + 3 * xi**2])
        d2 = np.hstack([(-6 + 12 * xi) / le**2, (-4 + 6 * xi) / le,
                        (6 - 12 * xi) / le**2, (-2 + 6 * xi) / le])
        return n, d1, d2

    def reference(self):
        """Undeformed straight configuration along x: (x_i, 0, 1, 0) per node [m, m, –, –]."""
        q = np.zeros((self.elements + 1, 4))
        q[:, 0] = np.linspace(0.0, self.length, self.elements + 1)
        q[:, 2] = 1.0
        return q.reshape(-1)

    def _element_coordinates(self, q):
        e = np.arange(self.elements)[:, None] * 4 + np.arange(8)
        return q[e]  # (elements, 8)

    def _density(self, grad_u, hessian):
        """Energy density W(r', r'') [J/m], its gradient (…, 4) and Hessian (…, 4, 4)
        with respect to (r'_x, r'_y, r''_x, r''_y) at every element and Gauss point,
        from the displacement derivatives ``grad_u`` = (u'_x, u'_y, u''_x, u''_y)
        (r' = e_x + u', r'' = u''; ε is formed without cancellation)."""
        du = grad_u[..., :2]
        a = du.copy()
        a[..., 0] += 1.0
        bb = grad_u[..., 2:]
        g = np.sqrt(np.sum(a * a, axis=-1))
        eps = (2.0 * du[..., 0] + np.sum(du * du, axis=-1)) / (g + 1.0)
        c = a[..., 0] * bb[..., 1] - a[..., 1] * bb[..., 0]
        g3 = g**-3
        kap = c * g3
        dc = np.stack([bb[..., 1], -bb[..., 0], -a[..., 1], a[..., 0]], axis=-1)
        deps = np.concatenate([a / g[..., None], np.zeros_like(a)], axis=-1)
        dg3 = np.concatenate([-3.0 * (g**-5)[..., None] * a, np.zeros_like(a)], axis=-1)
        dkap = g3[..., None] * dc + c[..., None] * dg3
        energy = 0.5 * self.ea * eps**2 + 0.5 * self.ei * kap**2
        grad = self.ea * eps[..., None] * deps + self.ei * kap[..., None] * dkap
        if not hessian:
            return energy, grad, None
        shape = (*g.shape, 4, 4)
        eye2 = np.eye(2)
        outer_a = a[..., :, None] * a[..., None, :]
        d2eps = np.zeros(shape)
        d2eps[..., :2, :2] = (eye2 - outer_a / (g * g)[..., None, None]) / g[..., None, None]
        d2c = np.zeros((4, 4))
        d2c[0, 3] = d2c[3, 0] = 1.0
        d2c[1, 2] = d2c[2, 1] = -1.0
        d2g3 = np.zeros(shape)
        d2g3[..., :2, :2] = (-3.0 * (g**-5)[..., None, None] * eye2
                             + 15.0 * (g**-7)[..., None, None] * outer_a)
        d2kap = (g3[..., None, None] * d2c + dc[..., :, None] * dg3[..., None, :]
                 + dg3[..., :, None] * dc[..., None, :] + c[..., None, None] * d2g3)
        hess = (self.ea * (deps[..., :, None] * deps[..., None, :]
                           + eps[..., None, None] * d2eps)
                + self.ei * (dkap[..., :, None] * dkap[..., None, :]
                             + kap[..., None, None] * d2kap))
        return energy, grad, hess

    def energy(self, u):
        """Strain energy U [J] at the displacement ``u`` = q − q_ref [m, –]."""
        strain = np.einsum("gij,ej->egi", self.b, self._element_coordinates(u))
        w, _, _ = self._density(strain, hessian=False)
        return float(np.sum(w * self.weights))

    def internal(self, u, stiffness=True):
        """Gradient ∂U/∂q [N, N m] and, if ``stiffness``, the tangent ∂²U/∂q² (n × n).

        Parameters
        ----------
        u : ndarray, shape (n,)
            Displacement of all nodal coordinates from the straight reference,
            u = q − q_ref [m, –] (working with u rather than q avoids round-off in the
            axial strain).
        stiffness : bool
            Also return the tangent stiffness matrix.

        Returns
        -------
        f : ndarray, shape (n,)
            ∂U/∂q (the internal force is −f).
        k : ndarray, shape (n, n) or None
            ∂²U/∂q².
        """
        strain = np.einsum("gij,ej->egi", self.b, self._element_coordinates(u))
        _, grad, hess = self._density(strain, hessian=stiffness)
        fe = np.einsum("g,gip,egi->ep", self.weights, self.b, grad)
        f = np.zeros((self.elements + 1, 4))
        f[:-1] += fe[:, :4]
        f[1:] += fe[:, 4:]
        if not stiffness:
            return f.reshape(-1), None
        ke = np.einsum("g,gip,egij,gjr->epr", self.weights, self.b, hess, self.b)
        ke = ke.reshape(self.elements, 2, 4, 2, 4)
        k = np.zeros((self.elements + 1, 4, self.elements + 1, 4))
        idx = np.arange(self.elements)
        for i in range(2):
            for j in range(2):
                k[idx + i, :, idx + j, :] += ke[:, i, :, j, :]
        return f.reshape(-1), k.reshape(self.n, self.n)

    def linear_matrices(self, u=None):
        """Free-free partition of M and of the tangent stiffness at the displacement
        ``u`` (default: 0, the undeformed state) [kg, N/m …], for linearised analyses of
        the clamped beam."""
        _, k = self.internal(np.zeros(self.n) if u is None else u)
        ix = np.ix_(self.free, self.free)
        return self.mass[ix], k[ix]


def _integrate(model, omega, ramp, t_eval, frame, rtol, atol, max_step):
    """Integrate the spin-up in displacements u = q − q_ref of the free coordinates;
    returns (solve_ivp result, tip deflection in the hub frame [m])."""
    free = model.free
    m_ff = model.mass[np.ix_(free, free)]
    m_fp = model.mass[np.ix_(free, np.arange(4))]
    m_inv = np.linalg.inv(m_ff)
    nf = free.size
    q_ref = model.reference()
    u_full = np.zeros(model.n)
    j_f = model.jhat[np.ix_(free, free)]
    eye = np.eye(nf)

    if frame == "rotating":
        # M(q̈ + 2θ̇Ĵq̇ + θ̈Ĵq − θ̇²q) = −∂U/∂q with q = q_ref + u, root u_p = 0
        q_p = q_ref[:4]
        c_cent = m_inv @ (m_fp @ q_p) + q_ref[4:]  # multiplies θ̇²
        c_euler = m_inv @ (m_fp @ (model.jhat[:4, :4] @ q_p)) + j_f @ q_ref[4:]  # θ̈

        def rhs(t, y):
            u, v = y[:nf], y[nf:]
            _, w, wd = spin_up_profile(omega, ramp, t)
            u_full[4:] = u
            f, _ = model.internal(u_full, stiffness=False)
            acc = (-(m_inv @ f[4:]) + w * w * (u + c_cent) - wd * (j_f @ u + c_euler)
                   - 2.0 * w * (j_f @ v))
            return np.concatenate([v, acc])

        def jac(t, y):
            _, w, wd = spin_up_profile(omega, ramp, t)
            u_full[4:] = y[:nf]
            _, k = model.internal(u_full)
            out = np.zeros((2 * nf, 2 * nf))
            out[:nf, nf:] = eye
            out[nf:, :nf] = -(m_inv @ k[np.ix_(free, free)]) + w * w * eye - wd * j_f
            out[nf:, nf:] = -2.0 * w * j_f
            return out

    elif frame == "inertial":
        # M q̈ = −∂U/∂q, root r = 0, r' = (cos θ, sin θ) prescribed: M_ff q̈_f = −f_f − M_fp q̈_p

        def root(t):
            th, w, wd = spin_up_profile(omega, ramp, t)
            c, s = np.cos(th), np.sin(th)
            return (np.array([0.0, 0.0, c - 1.0, s]),
                    np.array([0.0, 0.0, -wd * s - w * w * c, wd * c - w * w * s]))

        def rhs(t, y):
            u_p, a_p = root(t)
            u_full[:4], u_full[4:] = u_p, y[:nf]
            f, _ = model.internal(u_full, stiffness=False)
            return np.concatenate([y[nf:], -(m_inv @ (f[4:] + m_fp @ a_p))])

        def jac(t, y):
            u_full[:4], u_full[4:] = root(t)[0], y[:nf]
            _, k = model.internal(u_full)
            out = np.zeros((2 * nf, 2 * nf))
            out[:nf, nf:] = eye
            out[nf:, :nf] = -(m_inv @ k[np.ix_(free, free)])
            return out

    else:
        raise ValueError(f"frame must be 'rotating' or 'inertial', got {frame!r}")

    t_eval = np.asarray(t_eval, dtype=float)
    sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), np.zeros(2 * nf), method="Radau",
                    t_eval=t_eval, jac=jac, rtol=rtol, atol=atol, max_step=max_step)
    if not sol.success:
        raise RuntimeError(f"integration failed: {sol.message}")
    tip = q_ref[-4:-2, None] + sol.y[nf - 4:nf - 2]  # tip position (x, y)
    if frame == "rotating":
        return sol, tip[1]
    theta = spin_up_profile(omega, ramp, sol.t)[0]
    return sol, -np.sin(theta) * tip[0] + np.cos(theta) * tip[1]


def kane_exact_tip(omega, t_eval, beam=KANE_BEAM, elements=DEFAULT_ELEMENTS, gauss=5,
                   frame="rotating", rtol=1e-7, atol=1e-9, max_step=np.inf,
                   full_output=False, threads=1):
    """Transverse tip deflection of the spun-up cantilever in the rotating (hub) frame.

    Parameters
    ----------
    omega : float
        Final spin rate Ω [rad/s].
    t_eval : array_like
        Increasing output times [s], starting at or after 0; the run ends at the last one.
    beam : tuple of float
        (L [m], A [m²], I [m⁴], E [Pa], ρ [kg/m³], T [s]); default Kane et al.'s beam.
    elements : int
        Number of ANCF elements.
    gauss : int
        Gauss points per element for the strain energy.
    frame : {"rotating", "inertial"}
        Coordinates in which the equations are integrated (same physics, see module).
    rtol, atol : float
        Radau tolerances (atol in m and m/s).
    max_step : float
        Largest time step [s].
    full_output : bool
        Also return the ``solve_ivp`` result and the model.
    threads : int or None
        BLAS threads during the run (default 1: the matrices are small, and threaded
        BLAS on a busy machine makes Radau's factorisations ~10 times slower); ``None``
        leaves the BLAS setting alone.

    Returns
    -------
    v_tip : ndarray
        e_y · R(−θ(t)) r_tip(t) [m] at ``t_eval``.
    sol, model : optional
        With ``full_output``.
    """
    model = AncfCantilever(beam, elements, gauss)
    limit = (contextlib.nullcontext() if threads is None or threadpool_limits is None
             else threadpool_limits(limits=threads))
    with limit:
        sol, tip = _integrate(model, float(omega), float(beam[5]), t_eval, frame, rtol,
                              atol, max_step)
    return (tip, sol, model) if full_output else tip


def peak_abs(t, x):
    """Peak of |x(t)|, refined by a parabola through the largest sample and its
    neighbours (so that the figure does not depend on the output grid) [units of x]."""
    t, x = np.asarray(t, dtype=float), np.abs(np.asarray(x, dtype=float))
    i = int(np.argmax(x))
    if i == 0 or i == x.size - 1:
        return float(x[i])
    h0, h1 = t[i] - t[i - 1], t[i + 1] - t[i]
    coef = np.polyfit([-h0, 0.0, h1], x[i - 1:i + 2], 2)
    if coef[0] >= 0:
        return float(x[i])
    return float(np.polyval(coef, -coef[1] / (2.0 * coef[0])))


def static_tip_load(load, beam=KANE_BEAM, elements=DEFAULT_ELEMENTS, increments=10,
                    tol=1e-12):
    """Static deflection of the cantilever under a dead tip force, by Newton's method
    on the exact (nonlinear) strain energy with load increments.

    Parameters
    ----------
    load : array_like, shape (2,)
        Tip force (P_x, P_y) [N] in the beam's axes (root at 0, clamped along x).
    beam : tuple of float
        (L, A, I, E, ρ, T) [SI]; ρ and T are not used.
    elements : int
        Number of elements.
    increments : int
        Equal load increments.
    tol : float
        Newton tolerance on the update, relative to L.

    Returns
    -------
    ndarray, shape (2,)
        Tip displacement (u_x, u_y) [m].
    """
    model = AncfCantilever(beam, elements)
    free = model.free
    u = np.zeros(model.n)
    force = np.zeros(model.n)
    for step in range(1, increments + 1):
        force[-4:-2] = np.asarray(load, dtype=float) * step / increments
        for _ in range(50):
            f, k = model.internal(u)
            du = np.linalg.solve(k[np.ix_(free, free)], (force - f)[free])
            u[free] += du
            if np.max(np.abs(du)) < tol * model.length:
                break
        else:
            raise RuntimeError("Newton did not converge")
    return u[-4:-2].copy()


def steady_spin(model, omega, tol=1e-13):
    """Steady stretched state of the cantilever spinning at constant rate.

    Solves ∂U/∂q = Ω² M q (centrifugal load, rotating frame) by Newton's method.

    Parameters
    ----------
    model : AncfCantilever
        The discretised beam.
    omega : float
        Spin rate Ω [rad/s].
    tol : float
        Newton tolerance on the update, relative to L.

    Returns
    -------
    ndarray, shape (n,)
        Displacement u = q − q_ref of all coordinates [m, –] (root entries 0).
    """
    free = model.free
    q_ref = model.reference()
    u = np.zeros(model.n)
    for _ in range(50):
        f, k = model.internal(u)
        residual = (f - omega**2 * (model.mass @ (q_ref + u)))[free]
        tangent = k[np.ix_(free, free)] - omega**2 * model.mass[np.ix_(free, free)]
        du = np.linalg.solve(tangent, -residual)
        u[free] += du
        if np.max(np.abs(du)) < tol * model.length:
            return u
    raise RuntimeError("Newton did not converge")


def spinning_frequencies(omega, beam=KANE_BEAM, elements=DEFAULT_ELEMENTS, count=3):
    """Lowest in-plane natural frequencies of the cantilever spinning at constant rate,
    linearised about its steady stretched state (centrifugal stiffening and Coriolis
    coupling included): M ü + 2Ω M Ĵ u̇ + (K_T − Ω² M) u = 0 in the rotating frame.

    Parameters
    ----------
    omega : float
        Spin rate Ω [rad/s].
    beam : tuple of float
        (L, A, I, E, ρ, T) [SI].
    elements : int
        Number of elements.
    count : int
        How many frequencies to return.

    Returns
    -------
    ndarray, shape (count,)
        Frequencies [rad/s] seen in the rotating frame, increasing.
    """
    model = AncfCantilever(beam, elements)
    u = steady_spin(model, omega)
    m_ff, k_ff = model.linear_matrices(u)
    free = model.free
    nf = free.size
    j_f = model.jhat[np.ix_(free, free)]
    m_inv = np.linalg.inv(m_ff)
    a = np.zeros((2 * nf, 2 * nf))
    a[:nf, nf:] = np.eye(nf)
    a[nf:, :nf] = -(m_inv @ k_ff) + omega**2 * np.eye(nf)
    a[nf:, nf:] = -2.0 * omega * j_f
    lam = np.linalg.eigvals(a)
    return np.sort(lam.imag[lam.imag > 0])[:count]


def convergence_study(omega, elements=(8, 16, 32, 64), rtols=(1e-6, 1e-7, 1e-8),
                      max_steps=(0.01, 0.005), beam=KANE_BEAM, t_end=20.0, dt_out=0.01,
                      base_elements=DEFAULT_ELEMENTS, base_rtol=1e-7):
    """Peak |v_tip| over [0, t_end] for several element counts and time resolutions.

    Three sweeps: ``elements`` (at ``base_rtol``), Radau ``rtols`` (atol = rtol/100
    [m, m/s]; at ``base_elements``) and ``max_steps`` (step ≤ max_step, at
    ``base_elements`` and ``base_rtol``). Changes are relative to the finest run of the
    sweep: most elements, resp. smallest rtol (also for the max_step sweep).

    Parameters
    ----------
    omega : float
        Final spin rate Ω [rad/s].
    elements : sequence of int
        Element counts.
    rtols : sequence of float
        Relative tolerances.
    max_steps : sequence of float
        Step-size caps [s].
    beam : tuple of float
        (L, A, I, E, ρ, T) [SI].
    t_end, dt_out : float
        Duration and output spacing [s].
    base_elements : int
        Element count for the time sweeps.
    base_rtol : float
        Tolerance for the element and max_step sweeps.

    Returns
    -------
    list of dict
        Rows with keys ``sweep``, ``elements``, ``rtol``, ``max_step`` [s], ``peak`` [m],
        ``change`` (|Δpeak| / peak), ``max_diff`` (max |Δv_tip| / peak), ``seconds``
        (wall time [s]), ``nfev`` and ``tip`` (the history [m]).
    """
    t = np.linspace(0.0, t_end, round(t_end / dt_out) + 1)
    runs = ([("elements", e, base_rtol, np.inf) for e in elements]
            + [("rtol", base_elements, r, np.inf) for r in rtols]
            + [("max_step", base_elements, base_rtol, h) for h in max_steps])
    rows = []
    for sweep, e, r, h in runs:
        start = time.perf_counter()
        tip, sol, _ = kane_exact_tip(omega, t, beam, elements=e, rtol=r, atol=r / 100,
                                     max_step=h, full_output=True)
        rows.append({"sweep": sweep, "elements": e, "rtol": r, "max_step": h,
                     "peak": peak_abs(t, tip), "seconds": time.perf_counter() - start,
                     "nfev": sol.nfev, "tip": tip})
    by_elements = [r for r in rows if r["sweep"] == "elements"]
    by_time = [r for r in rows if r["sweep"] != "elements"]
    finest = {"elements": max(by_elements, key=lambda r: r["elements"]),
              "rtol": min((r for r in by_time if r["sweep"] == "rtol"),
                          key=lambda r: r["rtol"], default=None)}
    finest["max_step"] = finest["rtol"]
    for r in rows:
        best = finest[r["sweep"]] or r
        r["change"] = abs(r["peak"] - best["peak"]) / best["peak"]
        r["max_diff"] = float(np.max(np.abs(r["tip"] - best["tip"])) / best["peak"])
    return rows


def main(argv=None) -> int:
    """Command line: peaks and timings for Ω = 4, 6, 10 rad/s, or a convergence study."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--omega", type=float, nargs="+", default=[4.0, 6.0, 10.0])
    parser.add_argument("--elements", type=int, default=DEFAULT_ELEMENTS)
    parser.add_argument("--study", action="store_true", help="convergence study")
    args = parser.parse_args(argv)
    t = np.linspace(0.0, 20.0, 2001)
    for omega in args.omega:
        if args.study:
            for r in convergence_study(omega, base_elements=args.elements):
                print(f"Ω = {omega:4g}  {r['sweep']:8s}  elements = {r['elements']:3d}  "
                      f"rtol = {r['rtol']:.0e}  max_step = {r['max_step']:<5g}  "
                      f"peak = {r['peak']:.7f} m  Δpeak = {r['change']:.1e}  "
                      f"max|Δ|/peak = {r['max_diff']:.1e}  {r['seconds']:.1f} s  "
                      f"nfev = {r['nfev']}", flush=True)
            continue
        start = time.perf_counter()
        tip = kane_exact_tip(omega, t, elements=args.elements)
        print(f"Ω = {omega:4g} rad/s  peak |v_tip| = {peak_abs(t, tip):.5f} m  "
              f"min v_tip = {tip.min():.5f} m  max v_tip = {tip.max():.5f} m  "
              f"v_tip(20 s) = {tip[-1]:.5f} m  ({time.perf_counter() - start:.1f} s)",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
