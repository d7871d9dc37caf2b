"""The restitution a damped Hertz law gives (flexmbs.contact.restitution): the closed
relation χ(1 + e) = ln((1 + χ)/(1 − χe)) against SciPy's solve_ivp on the impact
itself (any exponent n), against energy conservation without damping, the documented
values, the laws' refusal of unreachable e, and reading a contact case without
importing scipy.integrate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.contact.laws import HuntCrossley, LankaraniNikravesh, achieved_restitution
from flexmbs.contact.restitution import impact_restitution
from flexmbs.errors import ValidationError

ROOT = Path(__file__).resolve().parents[1]


def solve_ivp_restitution(chi: float, n: float) -> float:
    """The impact δ'' = −max(0, δⁿ(1 + χδ')) integrated by SciPy's eighth-order
    Dormand–Prince method with event location (an independent integrator, its own root
    finding, the law's clamp included)."""
    from scipy.integrate import solve_ivp

    def rhs(t, y):
        return [y[1], -max(0.0, y[0] ** n * (1.0 + chi * y[1])) if y[0] > 0 else 0.0]

    def separation(t, y):
        return y[0]

    separation.terminal, separation.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 1e3), [1e-14, 1.0], events=separation, method="DOP853",
                    rtol=1e-12, atol=1e-15, max_step=0.01)
    return float(-sol.y_events[0][0][1])


@settings(max_examples=25, deadline=None)
@given(chi=st.floats(0.0, 1.5), n=st.floats(0.5, 6.0))
def test_against_solve_ivp_for_any_exponent(chi, n):
    assert impact_restitution(chi, n) == pytest.approx(solve_ivp_restitution(chi, n),
                                                       abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(chi=st.floats(1e-6, 1.5))
def test_the_root_satisfies_the_relation(chi):
    import math

    e = impact_restitution(chi)
    assert 0.0 < e < min(1.0, 1.0 / chi)
    assert chi * (1 + e) == pytest.approx(math.log((1 + chi) / (1 - chi * e)),
                                          rel=1e-12, abs=1e-15)


def test_undamped_impact_conserves_energy():
    """χ = 0: the elastic energy is all returned."""
    assert impact_restitution(0.0) == 1.0
    assert solve_ivp_restitution(0.0, 1.5) == pytest.approx(1.0, abs=1e-9)


def test_restitution_falls_with_damping():
    values = [impact_restitution(chi) for chi in (0.0, 0.1, 0.3, 0.6, 1.0, 1.5)]
    assert values == sorted(values, reverse=True)


def test_documented_values():
    """docs/contact.md: e = 0.9 rebounds with 0.909 (Hunt–Crossley) and 0.913
    (Lankarani–Nikravesh); e = 0.5 with 0.66 and 0.73; Hunt–Crossley at e = 0 gives 0.49."""
    hc = lambda e: achieved_restitution(1.5 * (1 - e), 1.5)  # noqa: E731
    ln = lambda e: achieved_restitution(0.75 * (1 - e * e), 1.5)  # noqa: E731
    assert hc(0.9) == pytest.approx(0.909, abs=5e-4)
    assert ln(0.9) == pytest.approx(0.913, abs=5e-4)
    assert hc(0.5) == pytest.approx(0.66, abs=5e-3)
    assert ln(0.5) == pytest.approx(0.73, abs=5e-3)
    assert hc(0.0) == pytest.approx(0.49, abs=5e-3)


def test_unreachable_restitution_is_refused_with_its_value():
    with pytest.raises(ValidationError, match=r"HuntCrossley: restitution e = 0.0 .*gives 0.488"):
        HuntCrossley(K=1e6, n=1.5, e=0.0)
    LankaraniNikravesh(K=1e6, n=1.5, e=0.7)  # within reach: accepted
    HuntCrossley(K=1e6, n=1e4, e=0.9)  # any exponent: e does not depend on it


def test_bad_damping_is_named():
    for chi in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="chi must be a finite number >= 0"):
            impact_restitution(chi)


def test_reading_a_contact_case_imports_no_scipy_integrate():
    code = ("import sys; from flexmbs.cases import load_case; "
            f"load_case({str(ROOT / 'cases' / 'slider_crank_clearance.toml')!r}); "
            "print('scipy.integrate' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
