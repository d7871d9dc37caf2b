"""Compiled small-matrix helpers of Euler parameters (docs/theory_ffrf.md, coordinates).

The same formulas as :mod:`flexmbs.frame.rotations`, written into caller-owned buffers:
A(p) (homogeneous quadratic), Ḡ(p), G(p), the basis B(p) with
∂(A(p) s)/∂p = (s @ B).reshape(3, 4), the Jacobians ``d_rot_t_into`` and
``g_bar_t_jac_rows``, and products with C(p) = diag(Aᵀ, Ḡ, I); nothing here allocates.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def rotation_into(p, a):
    """a ← A(p) (3x3)."""
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    a[0, 0] = e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3
    a[0, 1] = 2 * (e1 * e2 - e0 * e3)
    a[0, 2] = 2 * (e1 * e3 + e0 * e2)
    a[1, 0] = 2 * (e1 * e2 + e0 * e3)
    a[1, 1] = e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3
    a[1, 2] = 2 * (e2 * e3 - e0 * e1)
    a[2, 0] = 2 * (e1 * e3 - e0 * e2)
    a[2, 1] = 2 * (e2 * e3 + e0 * e1)
    a[2, 2] = e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3


@njit(cache=True)
def g_bar_into(p, g):
    """g ← Ḡ(p) (3x4): ω̄ = Ḡ ṗ."""
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    g[0, 0], g[0, 1], g[0, 2], g[0, 3] = -2 * e1, 2 * e0, 2 * e3, -2 * e2
    g[1, 0], g[1, 1], g[1, 2], g[1, 3] = -2 * e2, -2 * e3, 2 * e0, 2 * e1
    g[2, 0], g[2, 1], g[2, 2], g[2, 3] = -2 * e3, 2 * e2, -2 * e1, 2 * e0


@njit(cache=True)
def g_global_into(p, g):
    """g ← G(p) (3x4): ω = G ṗ."""
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    g[0, 0], g[0, 1], g[0, 2], g[0, 3] = -2 * e1, 2 * e0, -2 * e3, 2 * e2
    g[1, 0], g[1, 1], g[1, 2], g[1, 3] = -2 * e2, 2 * e3, 2 * e0, -2 * e1
    g[2, 0], g[2, 1], g[2, 2], g[2, 3] = -2 * e3, -2 * e2, 2 * e1, 2 * e0


@njit(cache=True)
def d_rotated_basis_into(p, b):
    """b ← B(p) (3x12): d_rotated(p, s)[c, m] = Σ_a s_a b[a, 4c + m]."""
    e0, e1, e2, e3 = 2 * p[0], 2 * p[1], 2 * p[2], 2 * p[3]
    row0 = (e0, e1, -e2, -e3, e3, e2, e1, e0, -e2, e3, -e0, e1)
    row1 = (-e3, e2, e1, -e0, e0, -e1, e2, -e3, e1, e0, e3, e2)
    row2 = (e2, e3, e0, e1, -e1, -e0, e3, e2, e0, -e1, -e2, e3)
    for k in range(12):
        b[0, k] = row0[k]
        b[1, k] = row1[k]
        b[2, k] = row2[k]


@njit(cache=True)
def d_rotated_into(b, s, out):
    """out ← ∂(A s)/∂p (3x4) from the basis ``b`` of :func:`d_rotated_basis_into`."""
    for c in range(3):
        for m in range(4):
            out[c, m] = s[0] * b[0, 4 * c + m] + s[1] * b[1, 4 * c + m] + s[2] * b[2, 4 * c + m]


@njit(cache=True)
def cross_into(a, b, out):
    """out ← a × b (3-vectors; ``out`` must not alias a or b)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def conjugate_basis_into(p, pc, out):
    """out ← B(p*) of the conjugate p* = [e0, −e] (pc ← p*, 4 scratch), the basis that
    :func:`d_rot_t_into` takes."""
    pc[0] = p[0]
    for i in range(1, 4):
        pc[i] = -p[i]
    d_rotated_basis_into(pc, out)


@njit(cache=True)
def d_rot_t_into(basis_c, x, out):
    """out ← ∂(A(p)ᵀ x)/∂p (3x4) from the basis ``basis_c`` of the conjugate
    p* = [e0, −e] (:func:`d_rotated_basis_into`): A(p)ᵀ = A(p*)."""
    d_rotated_into(basis_c, x, out)
    for c in range(3):
        for m in range(1, 4):
            out[c, m] = -out[c, m]


@njit(cache=True)
def g_bar_t_jac_rows(x):
    """∂(Ḡ(p)ᵀ x)/∂p (4x4, constant in p) as a tuple of rows (nothing allocated)."""
    x0, x1, x2 = 2.0 * x[0], 2.0 * x[1], 2.0 * x[2]
    return ((0.0, -x0, -x1, -x2), (x0, 0.0, x2, -x1), (x1, -x2, 0.0, x0),
            (x2, x1, -x0, 0.0))


# ------------------------------------------------------------------ C(p) = diag(Aᵀ, Ḡ, I)
@njit(cache=True)
def add_ct_times(a, gb, nm, x, ncols, out, col0, scale):
    """out[:7+nm, col0:col0+ncols] += scale · C(p)ᵀ x[:6+nm, :ncols], with the velocity
    transformation C(p) = diag(Aᵀ, Ḡ, I_nm) ((6+nm)x(7+nm)) of a body frame (A: a, Ḡ:
    gb); nothing allocated."""
    for j in range(ncols):
        for i in range(3):
            out[i, col0 + j] += scale * (a[i, 0] * x[0, j] + a[i, 1] * x[1, j]
                                         + a[i, 2] * x[2, j])
        for i in range(4):
            out[3 + i, col0 + j] += scale * (gb[0, i] * x[3, j] + gb[1, i] * x[4, j]
                                             + gb[2, i] * x[5, j])
        for r in range(nm):
            out[7 + r, col0 + j] += scale * x[6 + r, j]


@njit(cache=True)
def add_ct_x_c(a, gb, nm, x, tmp, out, scale):
    """out[:7+nm, :7+nm] += scale · C(p)ᵀ x C(p) (:func:`add_ct_times`), through ``tmp``
    ((6+nm)x(7+nm) scratch) ← x C(p); nothing allocated."""
    for i in range(6 + nm):
        for j in range(3):
            tmp[i, j] = x[i, 0] * a[j, 0] + x[i, 1] * a[j, 1] + x[i, 2] * a[j, 2]
        for j in range(4):
            tmp[i, 3 + j] = x[i, 3] * gb[0, j] + x[i, 4] * gb[1, j] + x[i, 5] * gb[2, j]
        for j in range(nm):
            tmp[i, 7 + j] = x[i, 6 + j]
    add_ct_times(a, gb, nm, tmp, 7 + nm, out, np.int64(0), scale)
