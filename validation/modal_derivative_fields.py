"""Which displacement field and which strain energy does a reduced beam with modal
derivatives need? A planar study on Kane et al.'s spin-up at Ω = 10 rad/s against the
geometrically exact ANCF beam of validation/kane_exact_reference.py
(docs/theory_modal_derivatives.md, "Why the enriched basis").

Independent of flexmbs: the beam (L = 10 m, EA = 2.8e7 N, EI = 1.4e4 N m², ρA = 1.2 kg/m)
turns with the prescribed hub angle θ(t); its in-plane deflection is w = Σ φ_i ξ_i with
the n lowest clamped bending modes φ_i of a 40-element Hermite model, and the
Lagrangian is written in the hub frame with the absolute velocity of every Gauss point.
The variants:

* ``stiffened``: the linear equations with the centrifugal geometric stiffness (what the
  stiffened linear body solves);
* ``manifold``: the quadratic manifold u = Φξ + ½Θ(ξ, ξ), whose modal derivatives of two
  bending modes are the axial foreshortening u_x = −½∫ w′² dx, with all inertia terms;
  its strain energy ½EI∫w″² (the von Kármán beam's to fourth order: the quadratic
  field makes the axial strain vanish to second order), or with the fourth-order
  curvature term ½EI∫w″²w′² (``manifold+curvature``);
* ``basis``: the modal derivatives as extra coordinates η (Wu and Tiso 2016): u_x = Σ
  θ_a η_a, axial inertia and an extensible energy ½EA∫ε² + ½EI∫κ² with the von Kármán
  strain ε = u′ + ½w′² and κ = w″ (``basis``), the Green–Lagrange ε = u′ + ½(u′² + w′²)
  (``basis+GL``), and with the curvature w″(1 + ½w′²) as well (``basis+GL+curvature``,
  what flexmbs builds);
* ``inextensible``: the exact inextensible beam of the same w (u_x from √(1 − w′²), the
  exact curvature): how far the n modes themselves go.

    python validation/modal_derivative_fields.py [--modes 5] [--omega 10]

prints max |w_tip − exact| / max |exact| of each (a few minutes: the manifold variants
are integrated explicitly with tight tolerances).
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import eigh

_spec = importlib.util.spec_from_file_location(
    "kane_exact_reference", Path(__file__).resolve().parent / "kane_exact_reference.py")
ker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ker)

L, A, SECOND_MOMENT, E, RHO, T = ker.KANE_BEAM
EA, EI, RA = E * A, E * SECOND_MOMENT, RHO * A
NE = 40
LE = L / NE
_G, _W = np.polynomial.legendre.leggauss(6)
GP, GW = (_G + 1) / 2, _W / 2
J2 = np.array([[0.0, -1.0], [1.0, 0.0]])


def hermite(s):
    """(N, N′, N″) (4,) of the cubic Hermite element at s ∈ [0, 1]."""
    n = np.array([1 - 3 * s**2 + 2 * s**3, LE * (s - 2 * s**2 + s**3), 3 * s**2 - 2 * s**3,
                  LE * (-s**2 + s**3)])
    d1 = np.array([-6 * s + 6 * s**2, LE * (1 - 4 * s + 3 * s**2), 6 * s - 6 * s**2,
                   LE * (-2 * s + 3 * s**2)]) / LE
    d2 = np.array([-6 + 12 * s, LE * (-4 + 6 * s), 6 - 12 * s, LE * (-2 + 6 * s)]) / LE**2
    return n, d1, d2


def modes(n):
    """The n lowest clamped bending modes (2(NE + 1), n) of the Hermite model."""
    nd = 2 * (NE + 1)
    k, m = np.zeros((nd, nd)), np.zeros((nd, nd))
    for e in range(NE):
        idx = np.arange(2 * e, 2 * e + 4)
        for s, w in zip(GP, GW, strict=True):
            nn, _, d2 = hermite(s)
            k[np.ix_(idx, idx)] += EI * np.outer(d2, d2) * w * LE
            m[np.ix_(idx, idx)] += RA * np.outer(nn, nn) * w * LE
    free = np.arange(2, nd)
    _, vec = eigh(k[np.ix_(free, free)], m[np.ix_(free, free)])
    out = np.zeros((nd, n))
    out[free] = vec[:, :n]
    return out


def points(shapes):
    """Gauss points: x, weights, φ, φ′, φ″ (P, n) and, for the cumulative integrals
    ∫₀ˣ f(w′), every point's sub-point slopes S (rows, n), weights W and owner K."""
    xs, ws, p, dp, ddp, s_rows, w_rows, k_rows = [], [], [], [], [], [], [], []
    full = []
    for e in range(NE):
        idx = np.arange(2 * e, 2 * e + 4)
        for s, w in zip(GP, GW, strict=True):
            nn, d1, d2 = hermite(s)
            k = len(xs)
            xs.append((e + s) * LE)
            ws.append(w * LE)
            p.append(nn @ shapes[idx])
            dp.append(d1 @ shapes[idx])
            ddp.append(d2 @ shapes[idx])
            for prev in full:
                s_rows.append(prev[0])
                w_rows.append(prev[1])
                k_rows.append(k)
            for ss, sw in zip(GP * s, GW * s * LE, strict=True):
                s_rows.append(hermite(ss)[1] @ shapes[idx])
                w_rows.append(sw)
                k_rows.append(k)
        full += [(hermite(s)[1] @ shapes[idx], w * LE) for s, w in zip(GP, GW, strict=True)]
    arr = [np.array(a) for a in (xs, ws, p, dp, ddp, s_rows, w_rows)]
    return (*arr, np.array(k_rows))


def run_manifold(omega, shapes, t_eval, curvature=False, exact=False):
    """The quadratic manifold (or the exact inextensible field): w = Pξ, u_x from the
    cumulative integral of g(w′), d'Alembert's principle at every Gauss point."""
    xs, ws, p, dp, ddp, srow, wrow, krow = points(shapes)
    n, nk = shapes.shape[1], xs.size
    if exact:
        def g(a):
            return np.sqrt(1 - a * a) - 1, -a / np.sqrt(1 - a * a), -(1 - a * a) ** -1.5
    else:
        def g(a):
            return -a * a / 2, -a, -np.ones_like(a)

    def rhs(t, y):
        xi, xd = y[:n], y[n:]
        _, thd, thdd = (float(v) for v in ker.spin_up_profile(omega, T, t))
        a, ad = srow @ xi, srow @ xd
        g0, g1, g2 = g(a)
        u = np.bincount(krow, wrow * g0, nk)
        du = np.column_stack([np.bincount(krow, wrow * g1 * srow[:, j], nk)
                              for j in range(n)])
        hx = np.bincount(krow, wrow * g2 * ad * ad, nk)
        r = np.stack([xs + u, p @ xi], 1)
        d = np.stack([du, p], 1)
        rd = np.einsum("kan,n->ka", d, xd)
        acc = np.stack([hx, np.zeros(nk)], 1) + 2 * thd * rd @ J2.T + thdd * r @ J2.T \
            - thd**2 * r
        mass = RA * np.einsum("k,kan,kam->nm", ws, d, d)
        wp, wpp = dp @ xi, ddp @ xi
        if exact:
            grad = EI * (ddp.T @ (ws * wpp / (1 - wp**2))
                         + dp.T @ (ws * wpp**2 * wp / (1 - wp**2) ** 2))
        else:
            h, h1 = (1 + wp**2, 2 * wp) if curvature else (np.ones(nk), np.zeros(nk))
            grad = EI * (ddp.T @ (ws * wpp * h) + 0.5 * dp.T @ (ws * wpp**2 * h1))
        force = -RA * np.einsum("k,kan,ka->n", ws, d, acc) - grad
        return np.concatenate([xd, np.linalg.solve(mass, force)])

    sol = solve_ivp(rhs, (0, t_eval[-1]), np.zeros(2 * n), t_eval=t_eval, method="DOP853",
                    rtol=1e-9, atol=1e-11)
    return shapes[-2] @ sol.y[:n]


def run_stiffened(omega, shapes, t_eval):
    xs, ws, p, _, _, srow, wrow, krow = points(shapes)
    n, nk = shapes.shape[1], xs.size
    gcum = np.zeros((nk, n, n))
    np.add.at(gcum, krow, wrow[:, None, None] * srow[:, :, None] * srow[:, None, :])
    mass = RA * np.einsum("k,kn,km->nm", ws, p, p)
    load = RA * np.einsum("k,kn,k->n", ws, p, xs)
    k_g = RA * np.einsum("k,k,knm->nm", ws, xs, gcum)
    k_ff = shapes.T @ _stiffness() @ shapes

    def rhs(t, y):
        _, thd, thdd = (float(v) for v in ker.spin_up_profile(omega, T, t))
        f = -thdd * load + thd**2 * (mass - k_g) @ y[:n] - k_ff @ y[:n]
        return np.concatenate([y[n:], np.linalg.solve(mass, f)])

    sol = solve_ivp(rhs, (0, t_eval[-1]), np.zeros(2 * n), t_eval=t_eval, method="Radau",
                    rtol=1e-9, atol=1e-11)
    return shapes[-2] @ sol.y[:n]


def _stiffness():
    nd = 2 * (NE + 1)
    k = np.zeros((nd, nd))
    for e in range(NE):
        idx = np.arange(2 * e, 2 * e + 4)
        for s, w in zip(GP, GW, strict=True):
            d2 = hermite(s)[2]
            k[np.ix_(idx, idx)] += EI * np.outer(d2, d2) * w * LE
    return k


def run_basis(omega, shapes, t_eval, strain="vk", curvature=False, h=5e-3):
    """Modes and modal derivatives as coordinates [ξ; η] (trapezoidal rule, h)."""
    xs, ws, p, dp, ddp, srow, wrow, krow = points(shapes)
    n, nk = shapes.shape[1], xs.size
    pairs = [(i, j) for i in range(n) for j in range(i, n)]
    theta = np.column_stack([-np.bincount(krow, wrow * srow[:, i] * srow[:, j], nk)
                             for i, j in pairs])
    dtheta = np.column_stack([-dp[:, i] * dp[:, j] for i, j in pairs])
    gram = np.einsum("k,ka,kb->ab", ws, theta, theta)
    lam, vec = np.linalg.eigh(gram)
    keep = lam > 1e-10 * lam.max()
    tr = vec[:, keep] / np.sqrt(lam[keep])
    u_sh, du_sh = theta @ tr, dtheta @ tr
    na = u_sh.shape[1]
    mass = np.zeros((n + na, n + na))
    mass[:n, :n] = RA * np.einsum("k,ka,kb->ab", ws, p, p)
    mass[n:, n:] = RA * np.einsum("k,ka,kb->ab", ws, u_sh, u_sh)

    def elastic(q):
        up, wp, wpp = du_sh @ q[n:], dp @ q[:n], ddp @ q[:n]
        eps = up + 0.5 * wp**2 + (0.5 * up**2 if strain == "gl" else 0.0)
        deps_dup = 1 + up if strain == "gl" else 1.0
        kap = wpp * (1 + 0.5 * wp**2) if curvature else wpp
        dk_dwp = wpp * wp if curvature else 0.0 * wp
        dk_dwpp = 1 + 0.5 * wp**2 if curvature else 1.0 + 0.0 * wp
        nn, mb = EA * eps * ws, EI * kap * ws
        return np.concatenate([dp.T @ (nn * wp + mb * dk_dwp) + ddp.T @ (mb * dk_dwpp),
                               du_sh.T @ (nn * deps_dup)])

    def residual(q, qd, qdd, t):
        _, thd, thdd = (float(v) for v in ker.spin_up_profile(omega, T, t))
        r = np.stack([xs + u_sh @ q[n:], p @ q[:n]], 1)
        rd = np.stack([u_sh @ qd[n:], p @ qd[:n]], 1)
        acc = 2 * thd * rd @ J2.T + thdd * r @ J2.T - thd**2 * r
        return mass @ qdd + RA * np.concatenate([p.T @ (ws * acc[:, 1]),
                                                 u_sh.T @ (ws * acc[:, 0])]) + elastic(q)

    m = n + na
    q, qd = np.zeros(m), np.zeros(m)
    qdd = np.linalg.solve(mass, -residual(q, qd, np.zeros(m), 0.0))
    times = np.arange(0.0, t_eval[-1] + h / 2, h)
    tip = [0.0]
    inv = None
    for t in times[1:]:
        qp, qdp = q + h * qd + 0.25 * h * h * qdd, qd + 0.5 * h * qdd
        a = qdd.copy()
        for it in range(30):
            r = residual(qp + 0.25 * h * h * a, qdp + 0.5 * h * a, a, t)
            if inv is None or it == 8:
                jac = np.column_stack([
                    (residual(qp + 0.25 * h * h * (a + 1e-6 * e), qdp + 0.5 * h * (a + 1e-6 * e),
                              a + 1e-6 * e, t) - r) / 1e-6 for e in np.eye(m)])
                inv = np.linalg.inv(jac)
            step = inv @ r
            a -= step
            if np.max(np.abs(step)) < 1e-10 * max(1.0, np.max(np.abs(a))):
                break
        q, qd, qdd = qp + 0.25 * h * h * a, qdp + 0.5 * h * a, a
        tip.append(shapes[-2] @ q[:n])
    return np.interp(t_eval, times, np.array(tip))


VARIANTS = {
    "stiffened": lambda om, sh, t: run_stiffened(om, sh, t),
    "manifold": lambda om, sh, t: run_manifold(om, sh, t),
    "manifold+curvature": lambda om, sh, t: run_manifold(om, sh, t, curvature=True),
    "basis": lambda om, sh, t: run_basis(om, sh, t),
    "basis+GL": lambda om, sh, t: run_basis(om, sh, t, strain="gl"),
    "basis+GL+curvature": lambda om, sh, t: run_basis(om, sh, t, "gl", True),
    "inextensible": lambda om, sh, t: run_manifold(om, sh, t, exact=True),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", type=int, default=5)
    parser.add_argument("--omega", type=float, default=10.0)
    parser.add_argument("--only", nargs="*", default=list(VARIANTS))
    args = parser.parse_args(argv)
    t_eval = np.linspace(0.0, 20.0, 2001)
    exact = ker.kane_exact_tip(args.omega, t_eval)
    peak = float(np.max(np.abs(exact)))
    shapes = modes(args.modes)
    print(f"Ω = {args.omega:g} rad/s, {args.modes} modes, exact peak {peak:.6f} m")
    for name in args.only:
        start = time.perf_counter()
        tip = VARIANTS[name](args.omega, shapes, t_eval)
        print(f"  {name:20s} max|Δ|/peak = {np.max(np.abs(tip - exact)) / peak:.2e}  "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
