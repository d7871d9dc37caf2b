"""The frame terms shared by the quadratic-velocity forms of the kernels
(docs/theory_ffrf.md, docs/theory_stiffening.md, docs/compiled.md).

Both Q̄(w) of a flexible body (:func:`flexmbs.elements.floating_frame.qbar_bilinear`) and the
stiffening's Q̄_s(w) (:func:`flexmbs.elements.flexible_body.stiffening.qbar_pair`) are bilinear forms
B(w, w) of w = (v̄, ω̄, ξ̇) whose rigid part is

    M̄[:, :3] (ω̄ × v̄) − [ω̄ × h_v; ω̄ × h_ω + v̄ × h_v; 0],  (h_v, h_ω) = rows 0–5 of M̄ w,

for their own mass M̄. :func:`frame_terms` writes that part and
:func:`frame_terms_jacobian` its Jacobian ∂/∂w; each form adds its own modal terms.
Nothing here allocates.
"""

from __future__ import annotations

from ._jit import njit


@njit(cache=True)
def row_dot(mat, r, v, n):
    """Σ_c mat[r, c] v[c] over c < n."""
    acc = 0.0
    for c in range(n):
        acc += mat[r, c] * v[c]
    return acc


@njit(cache=True)
def cross_t(a0, a1, a2, b0, b1, b2):
    """a × b of two 3-vectors given by components, as a tuple."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def unit(k):
    """The k-th unit 3-vector as a tuple."""
    return 1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0


@njit(cache=True)
def frame_terms(mbar, n6, w1, w2, out):
    """out[:n6] ← the rigid part above of a form B(w1, w2): M̄[:, :3] (ω̄1 × v̄2)
    − [ω̄1 × h_v; ω̄1 × h_ω + v̄1 × h_v; 0] with h = rows 0–5 of M̄ w2."""
    h2 = (row_dot(mbar, 0, w2, n6), row_dot(mbar, 1, w2, n6), row_dot(mbar, 2, w2, n6),
          row_dot(mbar, 3, w2, n6), row_dot(mbar, 4, w2, n6), row_dot(mbar, 5, w2, n6))
    ov = cross_t(w1[3], w1[4], w1[5], w2[0], w2[1], w2[2])
    for i in range(n6):
        out[i] = mbar[i, 0] * ov[0] + mbar[i, 1] * ov[1] + mbar[i, 2] * ov[2]
    for k in range(3):
        k1, k2 = (k + 1) % 3, (k + 2) % 3
        out[k] -= w1[3 + k1] * h2[k2] - w1[3 + k2] * h2[k1]
        out[3 + k] -= (w1[3 + k1] * h2[3 + k2] - w1[3 + k2] * h2[3 + k1]
                       + w1[k1] * h2[k2] - w1[k2] * h2[k1])


@njit(cache=True)
def frame_terms_jacobian(mbar, n6, w, lo, out):
    """out[i, k] ← ∂/∂w_k of the rigid part above, rows lo ≤ i < n6 (zeroed first),
    every column k < n6 (∂h/∂w_k = M̄[:6, k])."""
    h = (row_dot(mbar, 0, w, n6), row_dot(mbar, 1, w, n6), row_dot(mbar, 2, w, n6),
         row_dot(mbar, 3, w, n6), row_dot(mbar, 4, w, n6), row_dot(mbar, 5, w, n6))
    v0, v1, v2, om0, om1, om2 = w[0], w[1], w[2], w[3], w[4], w[5]
    for i in range(lo, n6):
        for k in range(n6):
            out[i, k] = 0.0
    for k in range(6):  # M̄[:, :3] (ω̄ × v̄): ∂/∂v̄_k = ω̄ × e_k, ∂/∂ω̄_m = e_m × v̄
        e = unit(k % 3)
        if k < 3:
            d = cross_t(om0, om1, om2, e[0], e[1], e[2])
        else:
            d = cross_t(e[0], e[1], e[2], v0, v1, v2)
        for i in range(lo, n6):
            out[i, k] += mbar[i, 0] * d[0] + mbar[i, 1] * d[1] + mbar[i, 2] * d[2]
    for k in range(n6):  # − ω̄ × h_v (rows 0–2); − ω̄ × h_ω − v̄ × h_v (rows 3–5)
        dv = cross_t(om0, om1, om2, mbar[0, k], mbar[1, k], mbar[2, k])
        dw = cross_t(om0, om1, om2, mbar[3, k], mbar[4, k], mbar[5, k])
        dvv = cross_t(v0, v1, v2, mbar[0, k], mbar[1, k], mbar[2, k])
        if 3 <= k < 6:
            e = unit(k - 3)
            ev = cross_t(e[0], e[1], e[2], h[0], h[1], h[2])
            ew = cross_t(e[0], e[1], e[2], h[3], h[4], h[5])
        else:
            ev, ew = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        if k < 3:
            e = unit(k)
            eh = cross_t(e[0], e[1], e[2], h[0], h[1], h[2])
        else:
            eh = (0.0, 0.0, 0.0)
        for a in range(3):
            if a >= lo:
                out[a, k] -= ev[a] + dv[a]
            if 3 + a >= lo:
                out[3 + a, k] -= ew[a] + dw[a] + eh[a] + dvv[a]
