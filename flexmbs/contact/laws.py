"""Normal contact force laws F_n(δ, δ̇) ≥ 0 and friction laws F_t(v_t, F_n).

δ ≥ 0 is the penetration [m], δ̇ its rate [m/s] (positive while approaching), v⁻ the
approach speed δ̇ at the onset of the current impact (recorded by the contact element).
No law ever pulls (F_n ≥ 0) and none creates energy over a closed impact: the dissipative
terms are ≥ 0 whenever δ̇ > 0 and vanish at δ = 0 (Gilardi and Sharf 2002; Flores et al.
2011 review the laws below).

=====================  =====================================================
law                    F_n
=====================  =====================================================
``Penalty(k, c)``      max(0, k δ + c δ̇)
``Hertz(K, n)``        K δⁿ (n = 3/2 for spheres)
``HuntCrossley``       K δⁿ (1 + 3(1 − e)/2 · δ̇/v⁻)
``LankaraniNikravesh`` K δⁿ (1 + 3(1 − e²)/4 · δ̇/v⁻)
``Impulse(e)``         no force: Newton's law v_n⁺ = −e v_n⁻ applied as an
                       impulse at the located impact (by the integrator)
=====================  =====================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import ValidationError
from .restitution import impact_restitution


def _positive(name, value, what):
    if not (np.isfinite(value) and value > 0):
        raise ValidationError(f"{name}: {what} must be a positive number, got {value!r}")


def _restitution(name, e):
    if not (np.isfinite(e) and 0 <= e <= 1):
        raise ValidationError(f"{name}: restitution e must lie in [0, 1], got {e!r}")


@dataclass(frozen=True)
class Penalty:
    """Linear spring–damper k δ + c δ̇ [N/m, N s/m], clipped at zero (never tensile)."""

    k: float
    c: float = 0.0
    impulsive = False
    needs_onset_velocity = False

    def __post_init__(self):
        _positive("Penalty", self.k, "stiffness k")
        if not (np.isfinite(self.c) and self.c >= 0):
            raise ValidationError(f"Penalty: damping c must be >= 0, got {self.c!r}")

    def force(self, delta, delta_dot, v_onset=None) -> tuple[float, float]:
        """(total F_n, its elastic part) [N]."""
        elastic = self.k * delta
        return max(0.0, elastic + self.c * delta_dot), elastic

    def energy(self, delta) -> float:
        """Elastic energy stored at penetration δ [J]."""
        return 0.5 * self.k * delta * delta


@dataclass(frozen=True)
class Hertz:
    """K δⁿ [N/mⁿ]; n = 3/2 for sphere contact (K = 4/3 E* √R*)."""

    K: float
    n: float = 1.5
    impulsive = False
    needs_onset_velocity = False

    def __post_init__(self):
        _positive(type(self).__name__, self.K, "stiffness K")
        _positive(type(self).__name__, self.n, "exponent n")

    def force(self, delta, delta_dot, v_onset=None):
        elastic = self.K * delta**self.n
        return elastic, elastic

    def energy(self, delta) -> float:
        return self.K * delta ** (self.n + 1) / (self.n + 1)


#: How far the restitution a damped Hertz law actually gives may lie from the e asked
#: for before the law is refused (docs/contact.md, "Normal laws").
RESTITUTION_TOLERANCE = 0.1


@lru_cache(maxsize=64)
def achieved_restitution(chi: float, n: float) -> float:
    """The restitution of one impact under K δⁿ (1 + χ δ̇/v⁻): independent of K, the mass,
    v⁻ and the exponent n, the root of χ(1 + e) = ln((1 + χ)/(1 − χe))
    (:func:`flexmbs.contact.restitution.impact_restitution`)."""
    return impact_restitution(chi, n)


def _attainable(law, e) -> None:
    """Refuse an e the law cannot give (it approximates e only near 1), naming both."""
    got = achieved_restitution(float(law.chi), float(law.n))
    if abs(got - e) > RESTITUTION_TOLERANCE:
        raise ValidationError(
            f"{type(law).__name__}: restitution e = {e!r} is out of this law's reach: its "
            f"damping gives {got:.3g} (it approximates e only near 1: Hunt-Crossley takes "
            f"e >= 0.63, Lankarani-Nikravesh e >= 0.70); use the 'impulse' law for "
            f"Newton's v+ = -e v- exactly")


@dataclass(frozen=True)
class HuntCrossley(Hertz):
    """K δⁿ (1 + χ δ̇/v⁻) with χ = 3(1 − e)/2 (Hunt and Crossley 1975, in the form of
    Lankarani's review); e is the coefficient of restitution it aims at."""

    e: float = 0.8
    needs_onset_velocity = True

    def __post_init__(self):
        super().__post_init__()
        _restitution(type(self).__name__, self.e)
        _attainable(self, self.e)

    @property
    def chi(self) -> float:
        return 1.5 * (1.0 - self.e)

    def force(self, delta, delta_dot, v_onset=None):
        elastic = self.K * delta**self.n
        if not v_onset or v_onset <= 0:
            return elastic, elastic
        return max(0.0, elastic * (1.0 + self.chi * delta_dot / v_onset)), elastic


@dataclass(frozen=True)
class LankaraniNikravesh(HuntCrossley):
    """K δⁿ (1 + 3(1 − e²)/4 · δ̇/v⁻) (Lankarani and Nikravesh 1990; accurate for e near 1)."""

    @property
    def chi(self) -> float:
        return 0.75 * (1.0 - self.e**2)


@dataclass(frozen=True)
class Impulse:
    """Newton's restitution law at a located impact: v_n⁺ = −e v_n⁻ (no contact force;
    the integrator applies the impulse, FFRF bodies included through their Jacobians).

    Impacts only: an approach slower than ``v_rest`` [m/s] means the bounces are dying
    out (their times add up to a finite limit); the run then stops with a message and
    its results so far — lasting contact needs a force law."""

    e: float
    v_rest: float = 1e-3
    impulsive = True
    needs_onset_velocity = False

    def __post_init__(self):
        _restitution("Impulse", self.e)
        _positive("Impulse", self.v_rest, "v_rest")

    def force(self, delta, delta_dot, v_onset=None):
        return 0.0, 0.0

    def energy(self, delta) -> float:
        return 0.0


NORMAL_LAWS = {"penalty": Penalty, "hertz": Hertz, "hunt-crossley": HuntCrossley,
               "lankarani-nikravesh": LankaraniNikravesh, "impulse": Impulse}


@dataclass(frozen=True)
class Friction:
    """Tangential force laws.

    ``model="regularized"``: F_t = −μ(|v_t|) F_n · v_t / max(|v_t|, v_reg) — Coulomb with
    a linear ramp below ``v_reg`` [m/s] (stick shows as a creep |v_t| < v_reg).
    ``model="stick-slip"``: in stick a tangential spring–damper on the relative
    displacement since sticking, F_t = −k_t u_t − c_t v_t, holds the contact; it slips
    when |F_t| > μ_s F_n, and in slip F_t = −μ(|v_t|) F_n t̂; it sticks again when
    |v_t| < v_reg. The switches happen between steps (the state is part of the results).

    μ(v) = μ_k + (μ_s − μ_k) exp(−(v/v_s)²) (Stribeck) with ``stribeck_velocity`` v_s;
    μ = μ_s everywhere without it (``mu_kinetic`` defaults to ``mu_static``).
    """

    mu_static: float
    mu_kinetic: float | None = None
    stribeck_velocity: float | None = None
    v_reg: float = 1e-4
    model: str = "regularized"
    stick_stiffness: float | None = None
    stick_damping: float = 0.0

    def __post_init__(self):
        if not (np.isfinite(self.mu_static) and self.mu_static >= 0):
            raise ValidationError(f"Friction: mu_static must be >= 0, got {self.mu_static!r}")
        if self.mu_kinetic is not None and not (np.isfinite(self.mu_kinetic)
                                                and self.mu_kinetic >= 0):
            raise ValidationError(f"Friction: mu_kinetic must be >= 0, got "
                                  f"{self.mu_kinetic!r}")
        if self.mu_kinetic is not None and self.mu_kinetic > self.mu_static:
            import warnings

            from ..errors import ModelWarning

            warnings.warn(f"Friction: mu_kinetic {self.mu_kinetic:g} exceeds mu_static "
                          f"{self.mu_static:g}: sliding then takes more force than "
                          f"breaking away, which is seldom meant", ModelWarning,
                          stacklevel=3)
        _positive("Friction", self.v_reg, "v_reg")
        if self.stribeck_velocity is not None:
            _positive("Friction", self.stribeck_velocity, "stribeck_velocity")
        if self.model not in ("regularized", "stick-slip"):
            raise ValidationError(f"Friction: model must be 'regularized' or 'stick-slip', "
                                  f"got {self.model!r}")
        if self.model == "stick-slip":
            if self.stick_stiffness is None:
                raise ValidationError("Friction: the stick-slip model needs stick_stiffness "
                                      "[N/m] (the tangential stiffness while stuck)")
            _positive("Friction", self.stick_stiffness, "stick_stiffness")

    def mu(self, speed: float) -> float:
        """Friction coefficient at sliding speed |v_t| [m/s]."""
        mu_k = self.mu_static if self.mu_kinetic is None else self.mu_kinetic
        if self.stribeck_velocity is None:
            return mu_k if self.mu_kinetic is not None else self.mu_static
        return mu_k + (self.mu_static - mu_k) * np.exp(-(speed / self.stribeck_velocity)**2)

    def regularized(self, v_t: np.ndarray, f_n: float) -> np.ndarray:
        """F_t [N] of the regularized law for tangential velocity v_t (3,)."""
        speed = float(np.linalg.norm(v_t))
        return -self.mu(speed) * f_n * v_t / max(speed, self.v_reg)
