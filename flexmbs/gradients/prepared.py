"""A parameter made ready for a run's sensitivities (docs/gradients.md): its model tangent,
its terms of ∂F/∂p, the Systems at p ± δ where differences need them, and the
derivative of the run's initial state.

The initial state y_0 = (q_0, q̇_0, q̈_0, a_0 = q̈_0, λ_0) is the assembled,
velocity-projected declared state with the accelerations and multipliers of the
index-1 system [M, Φ_qᵀ; Φ_q, 0] [q̈; λ] = [Q; γ]. When the parameter leaves the
constraints and the declared state alone (masses, stiffnesses, gains, gravity: no
``moves_initial``), q_0 and q̇_0 do not move and (dq̈_0, dλ_0) solve that system with
right-hand side −(∂r/∂p, 0): exact. Otherwise (drive profiles, initial conditions, markers)
the whole initial state is differenced between the Systems at p ± δ.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..integrators.options import Engine
from .forward import initial_state
from .model_diff import model_tangent
from .residual_terms import Derivative, DifferenceTerm, ParameterTerms


class PreparedParameter:
    """``parameter`` (a :class:`~flexmbs.gradients.parameters.Parameter`) on the run's
    ``system`` (built with ``overrides``: coupling, stiffening)."""

    def __init__(self, parameter, system, overrides: dict, probe):
        self.parameter, self.system, self.overrides = parameter, system, overrides
        plus, minus, span = parameter.variants()
        self.span = span
        self.tangent = model_tangent(plus, minus, span, f"parameter {parameter.key!r}")
        self.terms = ParameterTerms(system, self.tangent, plus, minus, span, parameter.key,
                                    modal=parameter.beam is not None)
        self._models = (plus, minus)
        self._systems = None
        self.difference = (DifferenceTerm(system, *self.systems(), span)
                           if self.terms.unsupported else None)
        self.sensor_direct = probe.depends_on(self.tangent)

    @property
    def key(self) -> str:
        return self.parameter.key

    @property
    def how(self) -> str:
        return self.terms.how

    def use_engine(self, source) -> None:
        """Evaluate the differences of the step equations on the compiled engine when
        the step Jacobians come from it (``source``: the
        :class:`~flexmbs.gradients.jacobian_source.TangentSource`)."""
        if self.difference is not None and source.engine == Engine.COMPILED:
            self.difference.compile()

    def systems(self):
        """(System at p + δ, System at p − δ) with the run's overrides (built once)."""
        if self._systems is None:
            from ..assembly import System

            self._systems = tuple(System(m, **self.overrides) for m in self._models)
        return self._systems

    def step_derivative(self, state, index2: bool) -> np.ndarray:
        """∂F/∂p at ``state`` in the row order of the step Jacobian: (r, Φ) in index 3,
        (r, Φ_q q̇ + Φ_t, Φ) in index 2."""
        out = Derivative(self.system.n_q, self.system.n_c)
        if self.difference is not None:
            self.difference.evaluate(state, out)
        else:
            self.terms.evaluate(state, out)
        if index2:
            return np.concatenate([out.r, out.vel, out.phi])
        return np.concatenate([out.r, out.phi])

    def sensor_derivative(self, probe, state) -> float:
        """∂s/∂p at fixed state (0 unless the sensor reads what the parameter moves)."""
        if not self.sensor_direct:
            return 0.0
        return probe.parameter_derivative(state, *self.systems(), self.span)

    def initial_derivative(self, settings, state):
        """(dq_0, dq̇_0, dq̈_0, dλ_0) of the run's initial state (module docstring)."""
        system = self.system
        if self.terms.moves_initial or self.difference is not None:
            ends = [initial_state(s, settings) for s in self.systems()]
            return tuple((getattr(ends[0], k) - getattr(ends[1], k)) / self.span
                         for k in ("q", "qd", "qdd", "lam"))
        n, m = system.n_q, system.n_c
        d_r = self.step_derivative(state, False)[:n]
        kkt = initial_matrix(system, state)
        sol = sla.lu_solve(kkt, -np.concatenate([d_r, np.zeros(m)]), check_finite=False)
        return np.zeros(n), np.zeros(n), sol[:n], sol[n:]


def initial_matrix(system, state):
    """LU factors of [M, Φ_qᵀ; Φ_q, 0] at the initial state."""
    mass = np.asarray(system.mass_matrix(state.q, sparse=False))
    jac = np.asarray(system.jacobian(state.q, state.t, sparse=False))
    m = jac.shape[0]
    return sla.lu_factor(np.block([[mass, jac.T], [jac, np.zeros((m, m))]]),
                         check_finite=False)
