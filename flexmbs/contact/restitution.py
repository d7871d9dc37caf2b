"""The restitution a damped Hertz law actually gives (docs/contact.md, "Normal laws").

Under K δⁿ (1 + χ δ̇/v⁻) one impact is, in the variables δ/δ₀ and t/t₀ that take K, the
mass and the impact speed v⁻ out of it,

    δ'' = −δⁿ (1 + χ δ'),   δ(0) = 0, δ'(0) = 1,

and the law's coefficient of restitution e is the separation speed −δ' when δ returns to
zero. With v = δ' as a function of δ, v dv/dδ = −δⁿ (1 + χ v), so

    v dv / (1 + χ v) = −δⁿ dδ,

whose right-hand side integrates to zero over the impact (δ goes from 0 to its largest
value and back). The left-hand side, from v = 1 down to v = −e, then gives

    χ (1 + e) = ln((1 + χ) / (1 − χ e)),

whatever the exponent n (Hunt and Crossley 1975; Lankarani and Nikravesh 1990 derive
their χ from its expansion near e = 1). :func:`impact_restitution` solves it for e. The
force never reaches the law's clamp at zero: 1 + χ v ≥ 1 − χ e > 0 all along.

This replaced an integration of the impact by ``scipy.integrate.solve_ivp``, whose
import took 0.34–0.47 s of reading every case with such a law (0.3–0.5 s of each
``flexmbs run``); ``tests/test_contact_restitution.py`` compares the two.
"""

from __future__ import annotations

import math

#: Below this damping the first terms of e's expansion, 1 − 2χ/3, are e to round-off
#: (the next term is of order χ²).
SMALL_DAMPING = 1e-8


def impact_restitution(chi: float, n: float | None = None) -> float:
    """The restitution e of one impact under the damping χ ≥ 0 (dimensionless): the root
    in (0, min(1, 1/χ)) of χ(1 + e) = ln((1 + χ)/(1 − χe)) (see the module's docstring),
    by bisection to the last bit; 1 − 2χ/3 below :data:`SMALL_DAMPING`, 1 without
    damping. ``n``: the law's exponent, which e does not depend on (accepted for the
    callers that pass it)."""
    chi = float(chi)
    if not (math.isfinite(chi) and chi >= 0.0):
        raise ValueError(f"the damping chi must be a finite number >= 0, got {chi!r}")
    if chi < SMALL_DAMPING:
        return 1.0 - 2.0 * chi / 3.0
    excess_at_one = _log1p_less(chi)

    def excess(e: float) -> float:
        # χ(1 + e) − ln(1 + χ) + ln(1 − χe) = φ(−χe) − φ(χ) with φ(x) = ln(1 + x) − x:
        # decreasing in e, positive at 0, −∞ at 1/χ; no cancellation of the χ terms
        return _log1p_less(-chi * e) - excess_at_one

    low, high = 0.0, min(1.0, 1.0 / chi)
    while True:
        middle = 0.5 * (low + high)
        if middle in (low, high):  # adjacent numbers: the root lies between
            return middle
        if excess(middle) > 0.0:
            low = middle
        else:
            high = middle


def _log1p_less(x: float) -> float:
    """ln(1 + x) − x for x > −1, to round-off also near 0 (its series there)."""
    if abs(x) < 0.01:
        return sum((-1.0) ** (k + 1) * x**k / k for k in range(9, 1, -1))
    return math.log1p(x) - x
