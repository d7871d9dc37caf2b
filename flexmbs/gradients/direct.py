"""Forward (direct) sensitivities (docs/gradients.md, "Forward sensitivities"): the
derivatives dy_k/dp of every step's state, propagated with the run,

    J_{n+1} dx = −(F_y L_y dy_n + ∂F_{n+1}/∂p),     dy_{n+1} = L_x dx + L_y dy_n,

from dy_0/dp, one solve per parameter per step with the same exact Jacobian as the
adjoint. They give the whole sensor history's derivative ds_k/dp (what a least-squares
fit needs), at a cost that grows with the number of parameters; the adjoint's does not.
"""

from __future__ import annotations

import time

import numpy as np

from .adjoint import _segments
from .forward import segment
from .jacobian_source import TangentSource
from .servo_integrals import ServoIntegrals
from .step import Coefficients, StepJacobian


def sensor_sensitivities(system, run_, probe, prepared, index2: bool, source=None,
                        integrals=None):
    """(ds/dp (N+1, n_p), seconds): the derivative of the sensor history of ``run_``
    along each prepared parameter (``source``, ``integrals``: as for
    :func:`~flexmbs.gradients.adjoint.backward`; the servos' integrals carry dI/dp)."""
    tic = time.perf_counter()
    if source is None:
        source = TangentSource(system)
    if integrals is None:
        integrals = ServoIntegrals(system, probe, prepared)
    n_p = len(prepared)
    out = np.zeros((run_.steps + 1, n_p))
    params = run_.settings.params
    dy = None
    d_int = np.zeros((len(integrals.servos), n_p))  # dI/dp: I_0 = 0 whatever p
    for first, last in _segments(run_)[::-1]:
        states = segment(system, run_, first, last)
        for k in range(first, last + 1):
            if k == 0:
                state, angles = states[0]
                system.angle_memory = dict(angles)
                if integrals:
                    integrals.hold(float(run_.t[0]), np.zeros(len(integrals.servos)))
                cols = [p.initial_derivative(run_.settings, state) for p in prepared]
                dq, dqd, dqdd, dlam = (np.column_stack([c[i] for c in cols])
                                       for i in range(4))
                dy = [dq, dqd, dqdd, dqdd.copy(), dlam]
            elif k == first:
                continue  # the last state of the previous segment
            else:
                state, angles = states[k]
                system.angle_memory = dict(angles)
                acting = None
                if integrals:  # I_{k−1} acts in this step
                    acting = integrals.acting(states[k - 1][1])
                    integrals.hold(float(run_.t[k - 1]), acting)
                coef = Coefficients.of(params, run_.h[k - 1])
                dy, d_int = _advance(system, state, coef, index2, prepared, dy, source,
                                     integrals, acting, d_int)
            out[k] = _sensor_row(system, probe, state, prepared, dy)
    return out, time.perf_counter() - tic


def _advance(system, state, coef, index2, prepared, dy, source, integrals, acting, d_int):
    """(dy_{n+1}, dI_{n+1}/dp) from dy_n and dI_n/dp across the step that ended at
    ``state``."""
    dq, dqd, dqdd, da, _ = dy
    q_p, qd_p, a_p = coef.predict(dq, dqd, dqdd, da)
    jac = StepJacobian(system, state, coef, index2, source)
    f_p = np.column_stack([p.step_derivative(state, index2) for p in prepared])
    terms = None
    if integrals:  # the step's equations move with I_n
        terms = integrals.step(state, coef.h, acting, jac.size)
        f_p = f_p + terms.load.T @ d_int
    x = jac.solve(-(jac.apply_state(q_p, qd_p) + f_p))
    ddq, ddqd, ddqdd, dda, dlam = jac.expand(coef, x)
    dy = [q_p + ddq, qd_p + ddqd, ddqdd, a_p + dda, dlam]
    if terms is not None:  # I_{n+1} = I_n + h n (θ_ref − θ(q_{n+1}))
        d_int = d_int + terms.d_q @ dy[0] + terms.d_p
    return dy, d_int


def _sensor_row(system, probe, state, prepared, dy):
    gq, gqd, gqdd, glam = probe.gradient(state)
    dq, dqd, dqdd, _, dlam = dy
    row = gq @ dq + gqd @ dqd + gqdd @ dqdd + glam @ dlam
    return row + np.array([p.sensor_derivative(probe, state) for p in prepared])
