"""Implicit integrators of the index-3 DAE M q̈ + Φ_qᵀλ = Q, Φ = 0: one Newton core,
three parameter sets (docs/theory_integrators.md).

Generalized-α in the Arnold–Brüls form: with the pseudo-acceleration a,

    (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) q̈_{n+1} + α_f q̈_n
    q_{n+1}  = q_n + h q̇_n + h² (½ − β) a_n + h² β a_{n+1}
    q̇_{n+1} = q̇_n + h (1 − γ) a_n + h γ a_{n+1}

and dynamic equilibrium and Φ = 0 enforced at t_{n+1}. Parameter sets:

* ``newmark(beta, gamma)``: α_m = α_f = 0 (β = ¼, γ = ½ is the trapezoidal rule);
* ``hht(alpha)``, α ∈ [−1/3, 0]: α_m = 0, α_f = −α, γ = (1 − 2α)/2, β = (1 − α)²/4 — the
  parameters of the Adams HHT-I3 (Negrut et al. 2007), here in the Arnold–Brüls form
  (forces at t_{n+1}, the same linear stability and accuracy);
* ``generalized_alpha(rho_inf)`` (Chung–Hulbert): α_m = (2ρ∞ − 1)/(ρ∞ + 1),
  α_f = ρ∞/(ρ∞ + 1), γ = ½ − α_m + α_f, β = ¼(γ + ½)².

Newton iterates on the position correction Δq with the iteration matrix scaled so that
it stays well conditioned as h → 0 (Bottasso, Dopico and Trainelli):
[M + (γ'/β') C_t + K_t/β', Φ_qᵀ; Φ_q, 0] [Δq; Δλ/β'] = −[r/β'; Φ], with
β' = (1 − α_m)/(β h² (1 − α_f)), γ' = γ/(β h). M and Φ_q are analytic, and so are the
tangent stiffness K_t = ∂r/∂q and damping C_t = ∂r/∂q̇ by default
(:mod:`flexmbs.assembly.tangents`: mass term, Σλ_k ∂²Φ_k/∂q², body and applied forces;
finite differences only for forces given by user callables); ``tangents="fd"`` keeps
grouped finite differences of the whole residual for comparison. The factorisation is
reused across iterations and steps (modified Newton) and refreshed when convergence
slows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._blas import scipy_linalg, solve_small


@dataclass(frozen=True)
class AlphaParameters:
    """α_m, α_f, β, γ of the generalized-α family and the method's name."""

    alpha_m: float
    alpha_f: float
    beta: float
    gamma: float
    name: str


def newmark(beta: float = 0.25, gamma: float = 0.5) -> AlphaParameters:
    """Newmark (β, γ); the default is the trapezoidal rule (no numerical damping).
    Unconditionally stable for γ ≥ ½ and β ≥ ¼(γ + ½)²; other values are refused."""
    from ..errors import ValidationError

    if not (gamma >= 0.5 and beta >= 0.25 * (gamma + 0.5) ** 2 - 1e-12):
        raise ValidationError(f"newmark: beta = {beta}, gamma = {gamma} is not "
                              "unconditionally stable (need gamma >= 1/2 and "
                              "beta >= (gamma + 1/2)^2 / 4)")
    return AlphaParameters(0.0, 0.0, float(beta), float(gamma), f"newmark(β={beta}, γ={gamma})")


def hht(alpha: float = -0.05) -> AlphaParameters:
    """HHT-α with α ∈ [−1/3, 0] (Adams' convention): γ = (1 − 2α)/2, β = (1 − α)²/4."""
    from ..errors import ValidationError

    if not -1.0 / 3.0 <= alpha <= 0.0:
        raise ValidationError(f"hht: alpha = {alpha} must lie in [-1/3, 0]")
    return AlphaParameters(0.0, -alpha, (1 - alpha) ** 2 / 4, (1 - 2 * alpha) / 2,
                           f"hht(α={alpha})")


def generalized_alpha(rho_inf: float = 0.8) -> AlphaParameters:
    """Chung–Hulbert generalized-α with spectral radius ρ∞ ∈ [0, 1] at infinite frequency."""
    from ..errors import ValidationError

    if not 0.0 <= rho_inf <= 1.0:
        raise ValidationError(f"generalized_alpha: rho_inf = {rho_inf} must lie in [0, 1]")
    am = (2 * rho_inf - 1) / (rho_inf + 1)
    af = rho_inf / (rho_inf + 1)
    gamma = 0.5 - am + af
    return AlphaParameters(am, af, 0.25 * (gamma + 0.5) ** 2, gamma,
                           f"generalized-alpha(ρ∞={rho_inf})")


def amplification_matrix(params: AlphaParameters, omega_h: float, zeta: float = 0.0):
    """One-step amplification matrix of the method on ẍ + 2ζωẋ + ω²x = 0 (state
    [x, h ẋ, h² ẍ... ] in the (x, ẋ, a) form), for verifying spectral radius and period
    error against the measured behaviour."""
    am, af, b, g = params.alpha_m, params.alpha_f, params.beta, params.gamma
    w = omega_h
    # unknowns at n+1: x, v (=hẋ), acc (=h²ẍ), a (=h² a); state (x, v, acc, a) at n
    # equations: equilibrium acc1 + 2ζw v1 + w² x1 = 0
    #            (1-am) a1 + am a0 = (1-af) acc1 + af acc0
    #            x1 = x0 + v0 + (0.5-b) a0 + b a1
    #            v1 = v0 + (1-g) a0 + g a1
    lhs = np.array([[w * w, 2 * zeta * w, 1.0, 0.0],
                    [0.0, 0.0, -(1 - af), 1 - am],
                    [1.0, 0.0, 0.0, -b],
                    [0.0, 1.0, 0.0, -g]])
    rhs = np.array([[0.0, 0.0, 0.0, 0.0],
                    [0.0, 0.0, af, -am],
                    [1.0, 1.0, 0.0, 0.5 - b],
                    [0.0, 1.0, 0.0, 1 - g]])
    return solve_small(lhs, rhs)


class NewtonMatrix:
    """The scaled iteration matrix and its LU factorisation (reused until refreshed):
    the NumPy path's. (SciPy is imported at the first factorisation: a compiled run
    does without it, docs/compiled.md, "What a run imports".)"""

    def __init__(self):
        self.lu = self._getrs = None  # (getrf's factors and LAPACK's getrs)
        self.age = 0
        self.matrix = None  # the factored matrix itself (for restart points)

    def factor(self, matrix: np.ndarray) -> None:
        sla = scipy_linalg()
        self.lu = sla.lu_factor(matrix, check_finite=False)
        self._getrs = sla.lapack.dgetrs
        self.matrix = matrix
        self.age = 0

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """x with (the factored matrix) x = rhs: LAPACK getrs directly (the
        ``scipy.linalg.lu_solve`` wrapper costs several times the solve at this size)."""
        self.age += 1
        lu, piv = self.lu
        return self._getrs(lu, piv, rhs)[0]
