"""The geometrically exact beam's elements in compiled code (docs/nonlinear_beam.md,
docs/compiled.md): each element's generalized force ∂U/∂[q_a, q_b] on its two node
bodies, its tangent ∂²U/∂q² and its strain energy U.

The equations are those of :func:`flexmbs.elements.nonlinear_beam.reference.gradient`
(the helicoidal strains Γ = T(ψ)⁻¹d/L − e₁, K = ψ/L, and the closed-form gradient),
written here over scalars and tuples so that nothing is allocated. The one element
function is generic in its number type: called with real coordinates it gives the
gradient; called with one coordinate moved by an imaginary step i h it gives, in the
imaginary parts, a column of the Hessian exact to round-off (the complex step, as the
reference's :func:`~flexmbs.elements.nonlinear_beam.reference.hessian`). Every operation
is analytic in the coordinates (no abs, no conjugate; the branches test real parts).

The elements' consistent inertia (the cubic Hermite centre line's, less the lumped
masses the node bodies carry) adds Jᵀ m_D (J q̈ + a_v − ĝ) to the residual, its mass
term Jᵀ m_D J, and its exact q- and q̇-derivatives, in closed form
(:func:`~flexmbs.elements.nonlinear_beam.reference.inertia_force` and the functions
after it: t = A(p)e₁ is quadratic in p, so T = ∂t/∂p is linear and ∂²t/∂p² constant).

Coordinates of a node body: [r (3) [m], p (4)] (Euler parameters, scalar first, of the
node's section frame; the energy depends on p through p/‖p‖ only). Element parameters
(table ``nb_par``): [L [m], EA, S_y, S_z [N], GJ, EI_y, EI_z [N m²]], the shear
stiffnesses S with the residual bending flexibility already in series
(:func:`~flexmbs.elements.nonlinear_beam.reference.element_stiffness`); ``nb_mass``:
m_D (4 × 4, row by row) over the slots (r_a, t_a, r_b, t_b)
(:func:`~flexmbs.elements.nonlinear_beam.reference.hermite_mass_difference`).
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import floats1, floats2, ints1, ints2
from ..registry import header_rows
from .reference import COMPLEX_STEP, LOG_LIMIT, SERIES_LIMIT

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_START, T_GRAVITY, T_NB_MASS, T_NB_NODE, T_NB_PAR = header_rows(
    "b_start", "gravity", "nb_mass", "nb_node", "nb_par")


@njit(cache=True, inline="always")
def _recip(z):
    """1/z as conj(z)/|z|² (for a real z, z/z² = 1/z): no complex division, whose numba
    implementation raises an exception that carries numba's install path and so makes
    the prebuilt object depend on where numba lives."""
    return z.conjugate() * (1.0 / (z.real * z.real + z.imag * z.imag))


@njit(cache=True, inline="always")
def _bump(value, eps, j, k):
    """value + eps for coordinate k == j, else value + 0 eps (the type of eps)."""
    return value + (eps if j == k else eps * 0.0)


@njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def _rotation(p0, p1, p2, p3):
    """A(p) of unit Euler parameters, row by row (9 entries)."""
    return (p0 * p0 + p1 * p1 - p2 * p2 - p3 * p3, 2.0 * (p1 * p2 - p0 * p3),
            2.0 * (p1 * p3 + p0 * p2),
            2.0 * (p1 * p2 + p0 * p3), p0 * p0 - p1 * p1 + p2 * p2 - p3 * p3,
            2.0 * (p2 * p3 - p0 * p1),
            2.0 * (p1 * p3 - p0 * p2), 2.0 * (p2 * p3 + p0 * p1),
            p0 * p0 - p1 * p1 - p2 * p2 + p3 * p3)


@njit(cache=True, inline="always")
def _g_bar_t(e0, e1, e2, e3, m0, m1, m2, scale):
    """scale Ḡ(p)ᵀ m (4 entries), ω̄ = Ḡ ṗ."""
    s = 2.0 * scale
    return (s * (-e1 * m0 - e2 * m1 - e3 * m2), s * (e0 * m0 - e3 * m1 + e2 * m2),
            s * (e3 * m0 + e0 * m1 - e1 * m2), s * (-e2 * m0 + e1 * m1 + e0 * m2))


@njit(cache=True, inline="always")
def _c_and_slope(u):
    """c(θ²) = (1 − (θ/2) cot(θ/2))/θ² and dc/d(θ²) (reference._c_and_slope)."""
    if abs(u.real) < SERIES_LIMIT:
        # Horner's rule (no power: a complex power would call numba's runtime)
        c = 1.0 / 12.0 + u * (1.0 / 720.0 + u * (1.0 / 30240.0 + u * (
            1.0 / 1209600.0 + u * (1.0 / 47900160.0))))
        dc = 1.0 / 720.0 + u * (2.0 / 30240.0 + u * (3.0 / 1209600.0
                                                    + u * (4.0 / 47900160.0)))
        return c, dc
    th = np.sqrt(u)
    half_tan = np.tan(0.5 * th)
    sin_half = np.sin(0.5 * th)
    inv_u, inv_th, inv_tan = _recip(u), _recip(th), _recip(half_tan)
    c = inv_u - 0.5 * inv_th * inv_tan
    dc = (-2.0 * inv_u * inv_th + 0.5 * inv_u * inv_tan
          + 0.25 * inv_th * _recip(sin_half * sin_half)) * (0.5 * inv_th)
    return c, dc


@njit(cache=True)
def element(q, sa, sb, par, eps, j):
    """(∂U/∂[q_a, q_b] (14-tuple), U [J]) of one element whose node bodies' coordinates
    start at ``sa`` and ``sb`` in ``q``, with coordinate ``j`` (0–13; −1: none) moved by
    ``eps`` (0.0 for the plain evaluation, i h for a complex step)."""
    ra0, ra1, ra2 = _bump(q[sa], eps, j, 0), _bump(q[sa + 1], eps, j, 1), \
        _bump(q[sa + 2], eps, j, 2)
    a0, a1, a2, a3 = _bump(q[sa + 3], eps, j, 3), _bump(q[sa + 4], eps, j, 4), \
        _bump(q[sa + 5], eps, j, 5), _bump(q[sa + 6], eps, j, 6)
    rb0, rb1, rb2 = _bump(q[sb], eps, j, 7), _bump(q[sb + 1], eps, j, 8), \
        _bump(q[sb + 2], eps, j, 9)
    b0, b1, b2, b3 = _bump(q[sb + 3], eps, j, 10), _bump(q[sb + 4], eps, j, 11), \
        _bump(q[sb + 5], eps, j, 12), _bump(q[sb + 6], eps, j, 13)
    length = par[0]
    inv_length = 1.0 / length
    # unit Euler parameters and the frames
    norm_a, norm_b = a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3, b0 * b0 + b1 * b1 + b2 * b2 + b3 * b3
    inv_a, inv_b = _recip(np.sqrt(norm_a)), _recip(np.sqrt(norm_b))
    ua0, ua1, ua2, ua3 = a0 * inv_a, a1 * inv_a, a2 * inv_a, a3 * inv_a
    ub0, ub1, ub2, ub3 = b0 * inv_b, b1 * inv_b, b2 * inv_b, b3 * inv_b
    A = _rotation(ua0, ua1, ua2, ua3)
    B = _rotation(ub0, ub1, ub2, ub3)
    # ψ = log(R_aᵀR_b) from the relative Euler parameters (w > 0: below half a turn)
    w = ua0 * ub0 + ua1 * ub1 + ua2 * ub2 + ua3 * ub3
    c0, c1, c2 = _cross(ua1, ua2, ua3, ub1, ub2, ub3)
    v0 = ua0 * ub1 - ub0 * ua1 - c0
    v1 = ua0 * ub2 - ub0 * ua2 - c1
    v2 = ua0 * ub3 - ub0 * ua3 - c2
    if w.real < 0.0:
        w, v0, v1, v2 = -w, -v0, -v1, -v2
    s = v0 * v0 + v1 * v1 + v2 * v2
    if abs(s.real) < LOG_LIMIT:
        inv_w = _recip(w)
        x = s * inv_w * inv_w
        scale = 2.0 * inv_w * (1.0 - x * (1.0 / 3.0 - x * (1.0 / 5.0 - x * (1.0 / 7.0))))
    else:
        root = np.sqrt(s)
        inv_root = _recip(root)
        scale = 2.0 * np.arctan(root * _recip(w)) * inv_root
    p0, p1, p2 = scale * v0, scale * v1, scale * v2
    # d = R_aᵀ(r_b − r_a), R_ab = R_aᵀR_b
    e0, e1, e2 = rb0 - ra0, rb1 - ra1, rb2 - ra2
    d0 = A[0] * e0 + A[3] * e1 + A[6] * e2
    d1 = A[1] * e0 + A[4] * e1 + A[7] * e2
    d2 = A[2] * e0 + A[5] * e1 + A[8] * e2
    u = p0 * p0 + p1 * p1 + p2 * p2
    c, dc = _c_and_slope(u)
    # y = T⁻¹d, Γ = y/L − e₁, n = C_Γ Γ, m = C_K ψ/L
    pd = p0 * d0 + p1 * d1 + p2 * d2
    x0, x1, x2 = _cross(p0, p1, p2, d0, d1, d2)
    g0 = (d0 - 0.5 * x0 + c * (p0 * pd - u * d0)) * inv_length - 1.0
    g1 = (d1 - 0.5 * x1 + c * (p1 * pd - u * d1)) * inv_length
    g2 = (d2 - 0.5 * x2 + c * (p2 * pd - u * d2)) * inv_length
    n0, n1, n2 = par[1] * g0, par[2] * g1, par[3] * g2
    k0, k1, k2 = p0 * inv_length, p1 * inv_length, p2 * inv_length
    m0, m1, m2 = par[4] * k0, par[5] * k1, par[6] * k2
    energy = 0.5 * length * (n0 * g0 + n1 * g1 + n2 * g2 + m0 * k0 + m1 * k1 + m2 * k2)
    # f = T⁻ᵀn
    pn = p0 * n0 + p1 * n1 + p2 * n2
    x0, x1, x2 = _cross(p0, p1, p2, n0, n1, n2)
    f0 = n0 + 0.5 * x0 + c * (p0 * pn - u * n0)
    f1 = n1 + 0.5 * x1 + c * (p1 * pn - u * n1)
    f2 = n2 + 0.5 * x2 + c * (p2 * pn - u * n2)
    # μ = m + ∂(nᵀT⁻¹d)/∂ψ, ν = T⁻ᵀμ
    nd = n0 * d0 + n1 * d1 + n2 * d2
    x0, x1, x2 = _cross(d0, d1, d2, n0, n1, n2)
    lead = 2.0 * dc * (pn * pd - u * nd)
    h0 = m0 - 0.5 * x0 + lead * p0 + c * (n0 * pd + d0 * pn - 2.0 * p0 * nd)
    h1 = m1 - 0.5 * x1 + lead * p1 + c * (n1 * pd + d1 * pn - 2.0 * p1 * nd)
    h2 = m2 - 0.5 * x2 + lead * p2 + c * (n2 * pd + d2 * pn - 2.0 * p2 * nd)
    ph = p0 * h0 + p1 * h1 + p2 * h2
    x0, x1, x2 = _cross(p0, p1, p2, h0, h1, h2)
    nu0 = h0 + 0.5 * x0 + c * (p0 * ph - u * h0)
    nu1 = h1 + 0.5 * x1 + c * (p1 * ph - u * h1)
    nu2 = h2 + 0.5 * x2 + c * (p2 * ph - u * h2)
    # ∂U/∂r_b = −∂U/∂r_a = R_a f; ∂U/∂θ_a = f × d − ν; ∂U/∂θ_b = R_abᵀ ν
    fb0 = A[0] * f0 + A[1] * f1 + A[2] * f2
    fb1 = A[3] * f0 + A[4] * f1 + A[5] * f2
    fb2 = A[6] * f0 + A[7] * f1 + A[8] * f2
    x0, x1, x2 = _cross(f0, f1, f2, d0, d1, d2)
    ma0, ma1, ma2 = x0 - nu0, x1 - nu1, x2 - nu2
    # R_abᵀ ν = R_bᵀ (R_a ν)
    y0 = A[0] * nu0 + A[1] * nu1 + A[2] * nu2
    y1 = A[3] * nu0 + A[4] * nu1 + A[5] * nu2
    y2 = A[6] * nu0 + A[7] * nu1 + A[8] * nu2
    mb0 = B[0] * y0 + B[3] * y1 + B[6] * y2
    mb1 = B[1] * y0 + B[4] * y1 + B[7] * y2
    mb2 = B[2] * y0 + B[5] * y1 + B[8] * y2
    qa3, qa4, qa5, qa6 = _g_bar_t(a0, a1, a2, a3, ma0, ma1, ma2, _recip(norm_a))
    qb3, qb4, qb5, qb6 = _g_bar_t(b0, b1, b2, b3, mb0, mb1, mb2, _recip(norm_b))
    return ((-fb0, -fb1, -fb2, qa3, qa4, qa5, qa6, fb0, fb1, fb2, qb3, qb4, qb5, qb6),
            energy)


@njit(cache=True, inline="always")
def _row(k, sa, sb):
    """The global coordinate of an element's local coordinate k (0–13)."""
    return sa + k if k < 7 else sb + k - 7


@njit(cache=True)
def beam_loads(F, IN, H, WF, WI, WH, q, r):
    """r += ∂U/∂q of every nonlinear beam element (r −= Q, Q = −∂U/∂q)."""
    T_b_start, T_nb_node = ints1(IN, H, T_B_START), ints2(IN, H, T_NB_NODE)
    T_nb_par = floats2(F, H, T_NB_PAR)
    for e in range(T_nb_node.shape[0]):
        sa, sb = T_b_start[T_nb_node[e, 0]], T_b_start[T_nb_node[e, 1]]
        grad, _ = element(q, sa, sb, T_nb_par[e], 0.0, -1)
        for k in range(14):
            r[_row(k, sa, sb)] += grad[k]


@njit(cache=True)
def beam_tangents_into(F, IN, H, WF, WI, WH, q, top, k_scale):
    """top += k_scale ∂²U/∂q² of every element: column by column by the complex step
    (14 complex evaluations per element), exact to round-off."""
    T_b_start, T_nb_node = ints1(IN, H, T_B_START), ints2(IN, H, T_NB_NODE)
    T_nb_par = floats2(F, H, T_NB_PAR)
    step = COMPLEX_STEP
    scale = k_scale / step
    for e in range(T_nb_node.shape[0]):
        sa, sb = T_b_start[T_nb_node[e, 0]], T_b_start[T_nb_node[e, 1]]
        par = T_nb_par[e]
        for j in range(14):
            grad, _ = element(q, sa, sb, par, 1j * step, j)
            col = _row(j, sa, sb)
            for k in range(14):
                top[_row(k, sa, sb), col] += scale * grad[k].imag


@njit(cache=True)
def beam_potential(F, IN, H, WF, WI, WH, q, pot):
    """pot + Σ U [J] of every element."""
    T_b_start, T_nb_node = ints1(IN, H, T_B_START), ints2(IN, H, T_NB_NODE)
    T_nb_par = floats2(F, H, T_NB_PAR)
    for e in range(T_nb_node.shape[0]):
        sa, sb = T_b_start[T_nb_node[e, 0]], T_b_start[T_nb_node[e, 1]]
        _, energy = element(q, sa, sb, T_nb_par[e], 0.0, -1)
        pot += energy
    return pot


# ----------------------------------------------------------------------------- inertia
@njit(cache=True, inline="always")
def _axis_jacobian(e0, e1, e2, e3):
    """T(p) = ∂(A(p)e₁)/∂p, row by row (12 entries)."""
    return (2.0 * e0, 2.0 * e1, -2.0 * e2, -2.0 * e3,
            2.0 * e3, 2.0 * e2, 2.0 * e1, 2.0 * e0,
            -2.0 * e2, 2.0 * e3, -2.0 * e0, 2.0 * e1)


@njit(cache=True, inline="always")
def _times(t, x0, x1, x2, x3):
    """T x (3-tuple) of T (12 entries) and x (4)."""
    return (t[0] * x0 + t[1] * x1 + t[2] * x2 + t[3] * x3,
            t[4] * x0 + t[5] * x1 + t[6] * x2 + t[7] * x3,
            t[8] * x0 + t[9] * x1 + t[10] * x2 + t[11] * x3)


@njit(cache=True, inline="always")
def _jac(s, c, i, ta, tb):
    """J_s[c, i]: row c of z slot s (r_a, t_a, r_b, t_b) at local coordinate i (0–13)."""
    if s == 0:
        return 1.0 if i == c else 0.0
    if s == 2:
        return 1.0 if i == c + 7 else 0.0
    if s == 1:
        return ta[4 * c + i - 3] if 3 <= i < 7 else 0.0
    return tb[4 * c + i - 10] if 10 <= i < 14 else 0.0


@njit(cache=True, inline="always")
def _first(s):
    """The first local coordinate of z slot s."""
    return (0, 3, 7, 10)[s]


@njit(cache=True, inline="always")
def _width(s):
    """The local coordinates of z slot s: 3 for a position, 4 for the Euler parameters."""
    return 3 if s % 2 == 0 else 4


@njit(cache=True)
def _slot_terms(q, qd, qdd, sa, sb, m, g):
    """(w (12-tuple), T(p_a), T(p_b), T(ṗ_a), T(ṗ_b), T(p̈_a), T(p̈_b)):
    w = m_D (J q̈ + a_v − ĝ) over the slots (3 per slot), the T's 12 entries each."""
    ta = _axis_jacobian(q[sa + 3], q[sa + 4], q[sa + 5], q[sa + 6])
    tb = _axis_jacobian(q[sb + 3], q[sb + 4], q[sb + 5], q[sb + 6])
    va = _axis_jacobian(qd[sa + 3], qd[sa + 4], qd[sa + 5], qd[sa + 6])
    vb = _axis_jacobian(qd[sb + 3], qd[sb + 4], qd[sb + 5], qd[sb + 6])
    aa = _axis_jacobian(qdd[sa + 3], qdd[sa + 4], qdd[sa + 5], qdd[sa + 6])
    ab = _axis_jacobian(qdd[sb + 3], qdd[sb + 4], qdd[sb + 5], qdd[sb + 6])
    # u = J q̈ + a_v − ĝ; T(p)p̈ + T(ṗ)ṗ on the axis slots
    x = _times(ta, qdd[sa + 3], qdd[sa + 4], qdd[sa + 5], qdd[sa + 6])
    y = _times(va, qd[sa + 3], qd[sa + 4], qd[sa + 5], qd[sa + 6])
    x2 = _times(tb, qdd[sb + 3], qdd[sb + 4], qdd[sb + 5], qdd[sb + 6])
    y2 = _times(vb, qd[sb + 3], qd[sb + 4], qd[sb + 5], qd[sb + 6])
    u = (qdd[sa] - g[0], qdd[sa + 1] - g[1], qdd[sa + 2] - g[2],
         x[0] + y[0], x[1] + y[1], x[2] + y[2],
         qdd[sb] - g[0], qdd[sb + 1] - g[1], qdd[sb + 2] - g[2],
         x2[0] + y2[0], x2[1] + y2[1], x2[2] + y2[2])
    w0 = m[0] * u[0] + m[1] * u[3] + m[2] * u[6] + m[3] * u[9]
    w1 = m[0] * u[1] + m[1] * u[4] + m[2] * u[7] + m[3] * u[10]
    w2 = m[0] * u[2] + m[1] * u[5] + m[2] * u[8] + m[3] * u[11]
    w3 = m[4] * u[0] + m[5] * u[3] + m[6] * u[6] + m[7] * u[9]
    w4 = m[4] * u[1] + m[5] * u[4] + m[6] * u[7] + m[7] * u[10]
    w5 = m[4] * u[2] + m[5] * u[5] + m[6] * u[8] + m[7] * u[11]
    w6 = m[8] * u[0] + m[9] * u[3] + m[10] * u[6] + m[11] * u[9]
    w7 = m[8] * u[1] + m[9] * u[4] + m[10] * u[7] + m[11] * u[10]
    w8 = m[8] * u[2] + m[9] * u[5] + m[10] * u[8] + m[11] * u[11]
    w9 = m[12] * u[0] + m[13] * u[3] + m[14] * u[6] + m[15] * u[9]
    w10 = m[12] * u[1] + m[13] * u[4] + m[14] * u[7] + m[15] * u[10]
    w11 = m[12] * u[2] + m[13] * u[5] + m[14] * u[8] + m[15] * u[11]
    return ((w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11), ta, tb, va, vb, aa, ab)


@njit(cache=True)
def beam_inertia(F, IN, H, WF, WI, WH, q, qd, qdd, r):
    """r += Jᵀ m_D (J q̈ + a_v − ĝ) of every element: its consistent inertia's share of
    the residual (mass, velocity and gravity terms)."""
    T_b_start, T_nb_node = ints1(IN, H, T_B_START), ints2(IN, H, T_NB_NODE)
    T_nb_mass, g = floats2(F, H, T_NB_MASS), floats1(F, H, T_GRAVITY)
    for e in range(T_nb_node.shape[0]):
        sa, sb = T_b_start[T_nb_node[e, 0]], T_b_start[T_nb_node[e, 1]]
        w, ta, tb, _, _, _, _ = _slot_terms(q, qd, qdd, sa, sb, T_nb_mass[e], g)
        for s in range(4):
            first = _first(s)
            for i in range(first, first + _width(s)):
                acc = 0.0
                for c in range(3):
                    acc += _jac(s, c, i, ta, tb) * w[3 * s + c]
                r[_row(i, sa, sb)] += acc


@njit(cache=True)
def beam_inertia_into(F, IN, H, WF, WI, WH, q, qd, qdd, top, k_scale, c_scale, m_scale):
    """top += m_scale M + c_scale C + k_scale K of the elements' consistent inertia:
    M = Jᵀ m_D J; C = Jᵀ m_D ∂a_v/∂q̇ (2 T(ṗ) on the axis slots); K = the Hessian
    H(w_t) of wᵀt on the Euler parameters plus Jᵀ m_D T(p̈), w = m_D (J q̈ + a_v − ĝ)
    (reference.inertia_tangents and inertia_mass_tangent), exact."""
    T_b_start, T_nb_node = ints1(IN, H, T_B_START), ints2(IN, H, T_NB_NODE)
    T_nb_mass, g = floats2(F, H, T_NB_MASS), floats1(F, H, T_GRAVITY)
    for e in range(T_nb_node.shape[0]):
        sa, sb = T_b_start[T_nb_node[e, 0]], T_b_start[T_nb_node[e, 1]]
        m = T_nb_mass[e]
        w, ta, tb, va, vb, aa, ab = _slot_terms(q, qd, qdd, sa, sb, m, g)
        for s in range(4):
            for s2 in range(4):
                mass = m[4 * s + s2]
                if mass == 0.0:
                    continue
                f1, f2 = _first(s), _first(s2)
                axis = s2 % 2 == 1
                rate = va if s2 == 1 else vb
                accel = aa if s2 == 1 else ab
                for i in range(f1, f1 + _width(s)):
                    row = _row(i, sa, sb)
                    for j in range(f2, f2 + _width(s2)):
                        col = _row(j, sa, sb)
                        mm, cc, kk = 0.0, 0.0, 0.0
                        for c in range(3):
                            left = _jac(s, c, i, ta, tb)
                            mm += left * _jac(s2, c, j, ta, tb)
                            if axis:
                                cc += left * 2.0 * rate[4 * c + j - f2]
                                kk += left * accel[4 * c + j - f2]
                        top[row, col] += mass * (m_scale * mm + c_scale * cc + k_scale * kk)
        for s in (1, 3):  # H(w_t): ∂²(wᵀt)/∂p², constant
            w0, w1, w2 = w[3 * s], w[3 * s + 1], w[3 * s + 2]
            hess = (w0, 0.0, -w2, w1, 0.0, w0, w1, w2, -w2, w1, -w0, 0.0,
                    w1, w2, 0.0, -w0)
            f = _first(s)
            for i in range(4):
                for j in range(4):
                    top[_row(f + i, sa, sb), _row(f + j, sa, sb)] += \
                        k_scale * 2.0 * hess[4 * i + j]


@njit(cache=True)
def beam_inertia_energies(F, IN, H, WF, WI, WH, q, qd, kin, pot):
    """(kin + ½ żᵀ m_D ż, pot − ĝᵀ m_D z) [J]: the consistent inertia's shares of the
    kinetic energy and the gravity potential, z = (r_a, t_a, r_b, t_b), ż = J q̇."""
    T_b_start, T_nb_node = ints1(IN, H, T_B_START), ints2(IN, H, T_NB_NODE)
    T_nb_mass, g = floats2(F, H, T_NB_MASS), floats1(F, H, T_GRAVITY)
    for e in range(T_nb_node.shape[0]):
        sa, sb = T_b_start[T_nb_node[e, 0]], T_b_start[T_nb_node[e, 1]]
        m = T_nb_mass[e]
        ta = _axis_jacobian(q[sa + 3], q[sa + 4], q[sa + 5], q[sa + 6])
        tb = _axis_jacobian(q[sb + 3], q[sb + 4], q[sb + 5], q[sb + 6])
        da = _times(ta, qd[sa + 3], qd[sa + 4], qd[sa + 5], qd[sa + 6])
        db = _times(tb, qd[sb + 3], qd[sb + 4], qd[sb + 5], qd[sb + 6])
        # t = ½ T(p) p (t is quadratic in p)
        xa = _times(ta, q[sa + 3], q[sa + 4], q[sa + 5], q[sa + 6])
        xb = _times(tb, q[sb + 3], q[sb + 4], q[sb + 5], q[sb + 6])
        for c in range(3):
            zd = (qd[sa + c], da[c], qd[sb + c], db[c])
            z = (q[sa + c], 0.5 * xa[c], q[sb + c], 0.5 * xb[c])
            for s in range(4):
                for s2 in range(4):
                    kin += 0.5 * zd[s] * m[4 * s + s2] * zd[s2]
                    if s % 2 == 0:
                        pot -= g[c] * m[4 * s + s2] * z[s2]
    return kin, pot
