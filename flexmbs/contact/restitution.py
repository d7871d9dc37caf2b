"""The restitution a damped Hertz law actually gives (docs/contact.md, "Normal laws").

Under K δⁿ (1 + χ δ̇/v⁻) one impact is, in the variables δ/δ₀ and t/t₀ that take K, the
mass and the impact speed v⁻ out of it,

    δ'' = −max(0, δⁿ (1 + χ δ'))  while δ > 0,   δ(0) = 0, δ'(0) = 1,

and the law's coefficient of restitution is the separation speed −δ'(t_s) at the time
t_s > 0 where δ returns to zero. :func:`impact_restitution` integrates that equation by
the classical fourth-order Runge–Kutta method at the fixed step :data:`STEP` and takes
the last step to t_s by Newton's method on its length.

Written out here rather than through ``scipy.integrate.solve_ivp``: importing
``scipy.integrate`` loads SciPy's special functions, optimizers and sparse solvers,
0.34–0.47 s in a fresh process on the reference machine, which every case with a
Hunt–Crossley or Lankarani–Nikravesh contact paid when it was read (its run imports no
SciPy). ``tests/test_contact_restitution.py`` compares it with ``solve_ivp`` at tight
tolerances.
"""

from __future__ import annotations

#: Step of the normalized time t/t₀ (an impact lasts about 3 of these units): the
#: restitution within 5e-10 of solve_ivp's (DOP853, rtol 1e-12) for χ from 0 to 1.5 and n
#: from 1 to 2.5, in about 2 ms (5e-3: within 1.3e-8, the largest error at n = 1.25,
#: where δⁿ's second derivative is unbounded at δ = 0).
STEP = 2e-3
#: Normalized time within which every impact has ended (the deceleration never
#: vanishes while δ > 0 and δ' ≥ −1/χ, and beyond that δ' stays fixed and negative).
LONGEST = 1e3


def impact_restitution(chi: float, n: float) -> float:
    """The restitution −δ'(t_s) of one normalized impact under the damping χ ≥ 0 and the
    exponent n > 0 (see the module's docstring; dimensionless)."""
    chi, n = float(chi), float(n)

    def accel(d: float, v: float) -> float:
        if d <= 0.0:
            return 0.0
        force = d**n * (1.0 + chi * v)
        return -force if force > 0.0 else 0.0

    def step(d: float, v: float, h: float) -> tuple[float, float]:
        a1 = accel(d, v)
        d2, v2 = d + 0.5 * h * v, v + 0.5 * h * a1
        a2 = accel(d2, v2)
        d3, v3 = d + 0.5 * h * v2, v + 0.5 * h * a2
        a3 = accel(d3, v3)
        d4, v4 = d + h * v3, v + h * a3
        a4 = accel(d4, v4)
        return (d + h / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4),
                v + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4))

    d, v, t = 0.0, 1.0, 0.0
    while t < LONGEST:
        d_next, v_next = step(d, v, STEP)
        if d_next <= 0.0 and t > 0.0:
            break
        d, v, t = d_next, v_next, t + STEP
    else:
        raise RuntimeError(f"the normalized impact (chi = {chi!r}, n = {n!r}) did not "
                           f"end within t = {LONGEST:g}")
    # the last step's length s with δ(s) = 0: Newton from the straight line's crossing
    s = STEP * d / (d - d_next)
    for _ in range(20):
        d_s, v_s = step(d, v, s)
        change = d_s / v_s
        s -= change
        if abs(change) <= 1e-15 * STEP:
            break
    return -step(d, v, s)[1]
