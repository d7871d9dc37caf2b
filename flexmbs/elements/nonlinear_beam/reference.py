"""The geometrically exact (Simo–Reissner / Cosserat) rod element: NumPy reference
functions over arrays of elements (docs/nonlinear_beam.md).

An element joins two node frames a and b, each given by the rigid-body coordinates
q = [r (3), p (4)] of a node body: r the node position [m], p the Euler parameters of
the node's section frame R = A(p̂), p̂ = p/√(pᵀp) (columns: the beam axis, then the
section's principal axes y and z; global components). The element's strains are those
of the helicoidal (SE(3)) interpolation between the two frames, constant along the
element and exact for any deformation of constant strain (a helix, an arc, a twisted
or stretched straight piece):

    ψ = log(R_aᵀ R_b)           (relative rotation vector, frame a) [-]
    d = R_aᵀ (r_b − r_a)        (chord in frame a) [m]
    y = T(ψ)⁻¹ d,  T(ψ) = I + (1 − cos θ)/θ² ψ̃ + (θ − sin θ)/θ³ ψ̃²,  θ = ‖ψ‖
    Γ = y / L − e₁,  K = ψ / L  (shear–extension and torsion–bending strains) [-, 1/m]

with L the element's unstressed length. The strain energy is

    U = L/2 (Γᵀ C_Γ Γ + Kᵀ C_K K),  C_K = diag(GJ, EI_y, EI_z),
    C_Γ = diag(EA, S_y, S_z),  1/S_y = 1/(k_y GA) + L²/(12 EI_z),  1/S_z = 1/(k_z GA) + L²/(12 EI_y)

(:func:`element_stiffness`): the shear stiffness carries the residual bending
flexibility L²/12EI that a constant-curvature element misses against the cubic
deflection of a shear force. With it the element's nodal answers are exact for linear
bending under nodal loads, and the elastica converges at fourth order in the element
length instead of second.

:func:`gradient` gives ∂U/∂q of every element in closed form; the generalized force
of the elements on their nodes is Q = −∂U/∂q. :func:`hessian` gives ∂²U/∂q² by the
complex step on :func:`gradient` (every function here is written with operations that
are analytic in their arguments: no abs, no conjugate), exact to round-off.

All functions take ``qa``, ``qb`` (E, 7), ``lengths`` (E,) [m] and the section's
``stiffness`` (6,) = [EA, k_y GA, k_z GA, GJ, EI_y, EI_z] [N, N, N, N m², N m², N m²],
and work on real or complex arrays.
"""

from __future__ import annotations

import numpy as np

#: Below this θ² the series of the closed forms are used (θ < 0.3 rad: the next series
#: term is under 1e-14 of the first).
SERIES_LIMIT = 0.09
#: Below this sin²(θ/2) the rotation vector comes from its series (truncation < 1e-20).
LOG_LIMIT = 1e-6
#: The complex step [-]: its truncation error (h²) is far below round-off.
COMPLEX_STEP = 1e-30


def _dot(a, b):
    return np.sum(a * b, axis=-1)


def _cross(a, b):
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def unit_quaternion(p):
    """p / √(pᵀp) (E, 4), analytic (no absolute value)."""
    return p / np.sqrt(_dot(p, p))[..., None]


def rotation(p):
    """A(p) (E, 3, 3) of unit Euler parameters p (E, 4), scalar first."""
    e0, e1, e2, e3 = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    return np.stack([
        np.stack([e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3),
                  2 * (e1 * e3 + e0 * e2)], axis=-1),
        np.stack([2 * (e1 * e2 + e0 * e3), e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3,
                  2 * (e2 * e3 - e0 * e1)], axis=-1),
        np.stack([2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1),
                  e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3], axis=-1)], axis=-2)


def g_bar(p):
    """Ḡ(p) (E, 3, 4): ω̄ = Ḡ ṗ (body frame)."""
    e0, e1, e2, e3 = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    return 2.0 * np.stack([np.stack([-e1, e0, e3, -e2], axis=-1),
                           np.stack([-e2, -e3, e0, e1], axis=-1),
                           np.stack([-e3, e2, -e1, e0], axis=-1)], axis=-2)


def relative_rotation_vector(pa, pb):
    """ψ = log(A(pa)ᵀ A(pb)) (E, 3) in frame a [rad] of unit pa, pb (E, 4): from the
    relative Euler parameters [w, v] = pa⁻¹ ⊗ pb (sign chosen so that w > 0, the
    rotation of angle below π), ψ = 2 atan(‖v‖/w) v/‖v‖."""
    a0, av = pa[..., 0], pa[..., 1:]
    b0, bv = pb[..., 0], pb[..., 1:]
    w = a0 * b0 + _dot(av, bv)
    v = a0[..., None] * bv - b0[..., None] * av - _cross(av, bv)
    sign = np.where(np.real(w) < 0.0, -1.0, 1.0)
    w, v = sign * w, sign[..., None] * v
    s = _dot(v, v)
    small = np.abs(s) < LOG_LIMIT
    s_safe = np.where(small, 1.0, s)
    root = np.sqrt(s_safe)
    closed = 2.0 * np.arctan(root / w) / root
    x = s / (w * w)
    series = 2.0 / w * (1.0 - x / 3.0 + x * x / 5.0 - x ** 3 / 7.0)
    return np.where(small, series, closed)[..., None] * v


def _c_and_slope(u):
    """c(θ²) = (1 − (θ/2) cot(θ/2))/θ² and dc/d(θ²), the coefficient of ψ̃² in T(ψ)⁻¹."""
    small = np.abs(u) < SERIES_LIMIT
    u_s = np.where(small, 1.0, u)
    th = np.sqrt(u_s)
    half_tan = np.tan(0.5 * th)
    closed = 1.0 / u_s - 0.5 / (th * half_tan)
    # dc/dθ = −2/θ³ + cot(θ/2)/(2θ²) + 1/(4θ sin²(θ/2)); dc/du = (dc/dθ)/(2θ)
    sin_half = np.sin(0.5 * th)
    slope_closed = (-2.0 / (u_s * th) + 0.5 / (u_s * half_tan)
                    + 0.25 / (th * sin_half * sin_half)) / (2.0 * th)
    series = (1.0 / 12.0 + u / 720.0 + u * u / 30240.0 + u ** 3 / 1209600.0
              + u ** 4 / 47900160.0)
    slope_series = (1.0 / 720.0 + 2.0 * u / 30240.0 + 3.0 * u * u / 1209600.0
                    + 4.0 * u ** 3 / 47900160.0)
    return np.where(small, series, closed), np.where(small, slope_series, slope_closed)


def _t_inverse(psi, x, c, transpose=False):
    """T(ψ)⁻¹ x (or T(ψ)⁻ᵀ x) = x ∓ ½ ψ × x + c (ψ (ψᵀx) − θ² x)."""
    u = _dot(psi, psi)
    sign = 0.5 if transpose else -0.5
    return (x + sign * _cross(psi, x)
            + c[..., None] * (psi * _dot(psi, x)[..., None] - u[..., None] * x))


def kinematics(qa, qb):
    """(R_a (E, 3, 3), R_ab = R_aᵀR_b (E, 3, 3), ψ (E, 3), d (E, 3), p̂_a, p̂_b)."""
    pa, pb = unit_quaternion(qa[..., 3:7]), unit_quaternion(qb[..., 3:7])
    ra, rb = rotation(pa), rotation(pb)
    psi = relative_rotation_vector(pa, pb)
    d = np.einsum("...ji,...j->...i", ra, qb[..., :3] - qa[..., :3])
    r_ab = np.einsum("...ki,...kj->...ij", ra, rb)
    return ra, r_ab, psi, d, pa, pb


def element_stiffness(lengths, stiffness):
    """(E, 6) [EA, S_y, S_z, GJ, EI_y, EI_z] of every element [N, N, N, N m², N m², N m²]:
    the section's stiffness with each shear stiffness in series with the residual
    bending flexibility of the element, 1/S_y = 1/(k_y GA) + L²/(12 EI_z) and
    1/S_z = 1/(k_z GA) + L²/(12 EI_y) (docs/nonlinear_beam.md)."""
    stiffness = np.asarray(stiffness, dtype=float)
    lengths = np.asarray(lengths, dtype=float)
    out = np.broadcast_to(stiffness, (*lengths.shape, 6)).copy()
    residual = lengths[..., None] ** 2 / (12.0 * stiffness[[5, 4]])
    out[..., 1:3] = 1.0 / (1.0 / stiffness[1:3] + residual)
    return out


def strains(qa, qb, lengths):
    """(Γ (E, 3) [-], K (E, 3) [1/m]): the element strains in its local frames."""
    _, _, psi, d, _, _ = kinematics(qa, qb)
    c, _ = _c_and_slope(_dot(psi, psi))
    y = _t_inverse(psi, d, c)
    gamma = y / lengths[..., None]
    gamma[..., 0] -= 1.0
    return gamma, psi / lengths[..., None]


def section_forces(qa, qb, lengths, stiffness):
    """(n (E, 3) [N], m (E, 3) [N m]): normal and shear forces C_Γ Γ and torsion and
    bending moments C_K K in the element's local frame (constant along it)."""
    gamma, kappa = strains(qa, qb, lengths)
    stiffness = element_stiffness(lengths, stiffness)
    return gamma * stiffness[..., :3], kappa * stiffness[..., 3:]


def fibre_stresses(n, m, area, iy, iz, points):
    """(E, k) normal stress [Pa] at the fibre points (y, z) (k, 2) [m] of every element
    from its section forces n (E, 3) [N] and moments m (E, 3) [N m]:
    σ = N/A + M_y z/I_y − M_z y/I_z, the strain at a fibre being Γ₁ + κ_y z − κ_z y."""
    y, z = points[:, 0], points[:, 1]
    return (n[:, :1] / area + m[:, 1:2] * z[None, :] / iy
            - m[:, 2:3] * y[None, :] / iz)


def energy(qa, qb, lengths, stiffness):
    """U (E,) [J] of every element."""
    gamma, kappa = strains(qa, qb, lengths)
    stiffness = element_stiffness(lengths, stiffness)
    return 0.5 * lengths * (_dot(gamma * stiffness[..., :3], gamma)
                            + _dot(kappa * stiffness[..., 3:], kappa))


def gradient(qa, qb, lengths, stiffness):
    """∂U/∂[q_a, q_b] (E, 14) in closed form.

    With n = C_Γ Γ, m = C_K K: δU = nᵀ δy + mᵀ δψ; y = T⁻¹ d gives δy = T⁻¹ δd +
    (∂(T⁻¹d)/∂ψ) δψ, and with virtual rotations δθ in the node frames
    δd = R_aᵀ(δr_b − δr_a) + d × δθ_a, δψ = T(ψ)⁻¹ (R_ab δθ_b − δθ_a). Hence, with
    f = T⁻ᵀ n, μ = m + ∂(nᵀT⁻¹d)/∂ψ and ν = T⁻ᵀ μ:
    ∂U/∂r_b = −∂U/∂r_a = R_a f, ∂U/∂θ_a = f × d − ν, ∂U/∂θ_b = R_abᵀ ν, and
    ∂U/∂p = Ḡ(p)ᵀ ∂U/∂θ / (pᵀp) (the energy depends on p through p̂ only)."""
    ra, r_ab, psi, d, _, _ = kinematics(qa, qb)
    u = _dot(psi, psi)
    c, dc = _c_and_slope(u)
    stiffness = element_stiffness(lengths, stiffness)
    L = lengths[..., None]
    y = _t_inverse(psi, d, c)
    gamma = y / L
    gamma[..., 0] -= 1.0
    n = gamma * stiffness[..., :3]
    m = psi / L * stiffness[..., 3:]
    f = _t_inverse(psi, n, c, transpose=True)
    n_psi, psi_d, n_d = _dot(n, psi), _dot(psi, d), _dot(n, d)
    g = (-0.5 * _cross(d, n)
         + (2.0 * dc * (n_psi * psi_d - u * n_d))[..., None] * psi
         + c[..., None] * (n * psi_d[..., None] + d * n_psi[..., None]
                           - 2.0 * psi * n_d[..., None]))
    nu = _t_inverse(psi, m + g, c, transpose=True)
    force_b = np.einsum("...ij,...j->...i", ra, f)
    moment_a = _cross(f, d) - nu
    moment_b = np.einsum("...ji,...j->...i", r_ab, nu)
    out = np.empty((*qa.shape[:-1], 14), dtype=np.result_type(qa, qb, float))
    out[..., 0:3] = -force_b
    out[..., 7:10] = force_b
    for cols, mom, p_raw in ((slice(3, 7), moment_a, qa[..., 3:7]),
                             (slice(10, 14), moment_b, qb[..., 3:7])):
        out[..., cols] = (np.einsum("...ki,...k->...i", g_bar(p_raw), mom)
                          / _dot(p_raw, p_raw)[..., None])
    return out


def hessian(qa, qb, lengths, stiffness, step: float = COMPLEX_STEP):
    """∂²U/∂[q_a, q_b]² (E, 14, 14) by the complex step on :func:`gradient` (one
    evaluation over the 14 perturbed copies of every element at once), exact to
    round-off."""
    q = np.concatenate([qa, qb], axis=-1).astype(complex)
    steps = np.eye(14) * (1j * step)  # copy j perturbs coordinate j
    qj = q[..., None, :] + steps  # (..., 14 copies, 14 coordinates)
    grad = gradient(qj[..., :7], qj[..., 7:], np.asarray(lengths)[..., None], stiffness)
    out = np.swapaxes(np.imag(grad), -1, -2) / step  # column j from copy j
    return 0.5 * (out + np.swapaxes(out, -1, -2))


# ----------------------------------------------------------------------------- inertia
# The element's translational inertia is that of the cubic Hermite centre line through
# its end points and end tangents, r(s) = N₁ r_a + L N₂ t_a + N₃ r_b + L N₄ t_b with
# t = A(p) e₁ (docs/nonlinear_beam.md, "Mass"). With z = (r_a, t_a, r_b, t_b) its kinetic
# energy is ½ żᵀ (m ⊗ I₃) ż, m the 4 × 4 consistent mass of the Euler–Bernoulli beam
# element (ρA L/420 [156, 22L, 54, −13L; …]), and its gravity potential −ĝᵀ (m ⊗ I₃) z,
# ĝ = (g, 0, g, 0). The node bodies carry ρA L/2 of each element at each end already;
# the element adds the difference m_D = m − diag(ρA L/2, 0, ρA L/2, 0). As t(p) is
# quadratic in p, T(p) = ∂t/∂p is linear in p, ẗ = T(p) p̈ + T(ṗ) ṗ, and the element's
# inertia and gravity terms in the residual are Jᵀ (m_D ⊗ I₃) (J q̈ + a_v − ĝ),
# J = diag(I, T(p_a), I, T(p_b)), a_v = (0, T(ṗ_a) ṗ_a, 0, T(ṗ_b) ṗ_b).


def hermite_mass_difference(lengths, mass_per_length):
    """m_D (E, 4, 4) [kg, kg m, kg m²]: the consistent mass of the cubic Hermite element
    in (r_a, t_a, r_b, t_b) less the lumped ρA L/2 at each end."""
    L = np.asarray(lengths, dtype=float)[:, None, None]
    unit = np.array([[156.0, 22.0, 54.0, -13.0], [22.0, 4.0, 13.0, -3.0],
                     [54.0, 13.0, 156.0, -22.0], [-13.0, -3.0, -22.0, 4.0]]) / 420.0
    powers = np.array([[0, 1, 0, 1], [1, 2, 1, 2], [0, 1, 0, 1], [1, 2, 1, 2]])
    out = mass_per_length * L * unit * L ** powers
    out[:, 0, 0] -= 0.5 * mass_per_length * L[:, 0, 0]
    out[:, 2, 2] -= 0.5 * mass_per_length * L[:, 0, 0]
    return out


def axis_vector(p):
    """t = A(p) e₁ (E, 3): the section frame's x axis (the beam axis), quadratic in the
    (not normalized) Euler parameters p (E, 4)."""
    e0, e1, e2, e3 = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    return np.stack([e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 + e0 * e3),
                     2 * (e1 * e3 - e0 * e2)], axis=-1)


def axis_jacobian(p):
    """T(p) = ∂t/∂p (E, 3, 4), linear in p (so T(a) b = T(b) a)."""
    e0, e1, e2, e3 = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    return 2.0 * np.stack([np.stack([e0, e1, -e2, -e3], axis=-1),
                           np.stack([e3, e2, e1, e0], axis=-1),
                           np.stack([-e2, e3, -e0, e1], axis=-1)], axis=-2)


def axis_hessian(w):
    """H(w) = ∂²(wᵀt)/∂p² (E, 4, 4), constant in p, for weights w (E, 3)."""
    w0, w1, w2 = w[..., 0], w[..., 1], w[..., 2]
    z = np.zeros_like(w0)
    return 2.0 * np.stack([np.stack([w0, z, -w2, w1], axis=-1),
                           np.stack([z, w0, w1, w2], axis=-1),
                           np.stack([-w2, w1, -w0, z], axis=-1),
                           np.stack([w1, w2, z, -w0], axis=-1)], axis=-2)


def _z_rates(qa, qb, qda, qdb):
    """ż (E, 4, 3) = J q̇ and a_v (E, 4, 3) (0, T(ṗ_a)ṗ_a, 0, T(ṗ_b)ṗ_b)."""
    zd = np.stack([qda[..., :3], np.einsum("eij,ej->ei", axis_jacobian(qa[..., 3:7]),
                                           qda[..., 3:7]),
                   qdb[..., :3], np.einsum("eij,ej->ei", axis_jacobian(qb[..., 3:7]),
                                           qdb[..., 3:7])], axis=1)
    av = np.zeros_like(zd)
    av[:, 1] = 2.0 * axis_vector(qda[..., 3:7])  # T(ṗ)ṗ = 2 t(ṗ)
    av[:, 3] = 2.0 * axis_vector(qdb[..., 3:7])
    return zd, av


def _j_transpose(qa, qb, y):
    """Jᵀ y (E, 14) of y (E, 4, 3) in z."""
    out = np.empty((y.shape[0], 14))
    out[:, 0:3], out[:, 7:10] = y[:, 0], y[:, 2]
    out[:, 3:7] = np.einsum("eij,ei->ej", axis_jacobian(qa[..., 3:7]), y[:, 1])
    out[:, 10:14] = np.einsum("eij,ei->ej", axis_jacobian(qb[..., 3:7]), y[:, 3])
    return out


def _j_blocks(qa, qb):
    """J's blocks (E, 4, 3, 14): the rows of each z slot over the 14 coordinates."""
    n = qa.shape[0]
    out = np.zeros((n, 4, 3, 14))
    out[:, 0, :, 0:3] = np.eye(3)
    out[:, 1, :, 3:7] = axis_jacobian(qa[..., 3:7])
    out[:, 2, :, 7:10] = np.eye(3)
    out[:, 3, :, 10:14] = axis_jacobian(qb[..., 3:7])
    return out


def _gravity_slots(gravity, n):
    g = np.zeros((n, 4, 3))
    g[:, 0] = g[:, 2] = np.asarray(gravity, dtype=float)
    return g


def inertia_force(qa, qb, qda, qdb, m_d, gravity):
    """Jᵀ (m_D ⊗ I₃)(a_v − ĝ) (E, 14) [N, N m]: the element's velocity and gravity part of
    the residual (its generalized force is minus this)."""
    _, av = _z_rates(qa, qb, qda, qdb)
    w = np.einsum("eab,ebc->eac", m_d, av - _gravity_slots(gravity, qa.shape[0]))
    return _j_transpose(qa, qb, w)


def inertia_mass(qa, qb, m_d):
    """Jᵀ (m_D ⊗ I₃) J (E, 14, 14): the element's mass term."""
    blocks = _j_blocks(qa, qb)
    return np.einsum("eaci,eab,ebcj->eij", blocks, m_d, blocks)


def _weights_hessian(w):
    """∂(Jᵀ w)/∂q (E, 14, 14) for weights w (E, 4, 3) held: H(w_t) on the p blocks."""
    k = np.zeros((w.shape[0], 14, 14))
    k[:, 3:7, 3:7] = axis_hessian(w[:, 1])
    k[:, 10:14, 10:14] = axis_hessian(w[:, 3])
    return k


def inertia_mass_tangent(qa, qb, qdda, qddb, m_d):
    """∂(Jᵀ (m_D ⊗ I₃) J q̈)/∂q (E, 14, 14), q̈ held: the mass term's q-derivative."""
    blocks = _j_blocks(qa, qb)
    acc = np.einsum("eaci,ei->eac", blocks, np.concatenate([qdda, qddb], axis=-1))
    k = _weights_hessian(np.einsum("eab,ebc->eac", m_d, acc))
    rate = np.zeros((qa.shape[0], 4, 3, 14))  # ∂(T(p) p̈)/∂p = T(p̈)
    rate[:, 1, :, 3:7] = axis_jacobian(qdda[..., 3:7])
    rate[:, 3, :, 10:14] = axis_jacobian(qddb[..., 3:7])
    return k + np.einsum("eaci,eab,ebcj->eij", blocks, m_d, rate)


def inertia_tangents(qa, qb, qda, qdb, m_d, gravity):
    """(K, C) (E, 14, 14): ∂/∂q and ∂/∂q̇ of :func:`inertia_force` (the mass term's
    q-derivative is :func:`inertia_mass_tangent`)."""
    _, av = _z_rates(qa, qb, qda, qdb)
    w = np.einsum("eab,ebc->eac", m_d, av - _gravity_slots(gravity, qa.shape[0]))
    n = qa.shape[0]
    k = _weights_hessian(w)
    blocks = _j_blocks(qa, qb)
    rate = np.zeros((n, 4, 3, 14))  # ∂a_v/∂q̇: 2 T(ṗ) on the p columns
    rate[:, 1, :, 3:7] = 2.0 * axis_jacobian(qda[..., 3:7])
    rate[:, 3, :, 10:14] = 2.0 * axis_jacobian(qdb[..., 3:7])
    c = np.einsum("eaci,eab,ebcj->eij", blocks, m_d, rate)
    return k, c


def inertia_energies(qa, qb, qda, qdb, m_d, gravity):
    """(kinetic ½ żᵀ(m_D ⊗ I₃)ż, gravity potential −ĝᵀ(m_D ⊗ I₃)z) (E,) [J]."""
    zd, _ = _z_rates(qa, qb, qda, qdb)
    z = np.stack([qa[..., :3], axis_vector(qa[..., 3:7]), qb[..., :3],
                  axis_vector(qb[..., 3:7])], axis=1)
    kinetic = 0.5 * np.einsum("eac,eab,ebc->e", zd, m_d, zd)
    potential = -np.einsum("eac,eab,ebc->e", _gravity_slots(gravity, qa.shape[0]), m_d, z)
    return kinetic, potential
