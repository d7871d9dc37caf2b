"""The numbers the step kernel and Python exchange (docs/compiled.md): its tasks, its
return codes and the workspace counters. Plain Python, so the run side reads them
without importing numba; the kernels fold them in as constants."""

#: Return codes of the step (:func:`flexmbs.engine.newton.newton_step`).
CONVERGED, NEED_FACTOR, NONFINITE_SOLVE, NONFINITE_ERROR, MAX_ITER = 0, 1, 2, 3, 4
#: A bounded (real-time) step that ended after its fixed number of iterations without
#: meeting the tolerances: accepted as it stands (docs/integrators.md, "Real-time mode").
BOUNDED = 5
#: The step stopped at a Newton iterate (q1, q̇1 in the workspace) for the values of the
#: model's state-dependent callables there (and, with counters[INPUTS] = −2, their
#: derivative rows du/dq, du/dq̇ for the iteration matrix): Python writes them into the
#: callables' columns of ``u`` and the workspace's ``cb_du``, sets counters[INPUTS] to
#: 1 (or 2) and calls again with ``start=False`` (docs/compiled.md, "Callables").
NEED_INPUTS = 6

#: Workspace counters: iteration, stale matrix, residual at hand, the callables'
#: inputs at this iterate (−1/−2: asked for, values/with derivatives; 1/2: written; 0:
#: none pending).
IT, STALE, HAVE_RESIDUAL, INPUTS = 0, 1, 2, 3

#: Tasks of the entry point :func:`flexmbs.engine.newton.kernel`.
(TASK_STEP, TASK_RESIDUAL, TASK_MATRIX, TASK_OUTPUTS, TASK_CONTACTS, TASK_STEPS,
 TASK_PIECES, TASK_JACOBIAN, TASK_PIECES_MANY, TASK_JACOBIANS_MANY,
 TASK_EQUATIONS_MANY, TASK_FORCES_MANY, TASK_ADJOINT_SWEEP, TASK_FACTOR) = range(14)

#: Columns of a step's coefficients at the start of its row of the backward sweep's
#: steps (TASK_ADJOINT_SWEEP; the objective's terms follow them): h [s], β, γ, c1, c2,
#: c3 (:class:`~flexmbs.gradients.step.Coefficients`).
SWEEP_COEFFICIENTS = 6

#: Slots of the step parameters ``par`` that the step kernel reads: one meaning each,
#: under every task. α_m, α_f, β, γ of the generalized-α method; the step h [s] and
#: t_{n+1} [s]; the Newton tolerances (relative and absolute on Δq, relative on β'Δq)
#: and that on max |Φ|; 1.0 for the stabilized index-2 form (docs/theory_integrators.md);
#: β' and γ' of an iteration matrix asked for alone (TASK_MATRIX); 1.0 for a bounded
#: real-time step (at most max_iter iterations, then accepted; no refresh asked for);
#: the Newton iterations of a step above which the next step starts with a new
#: iteration matrix (TASK_STEPS; −1: never for that reason); the depth [m] within which
#: a contact's onset is located (``contact_tol``; TASK_STEPS).
(P_ALPHA_M, P_ALPHA_F, P_BETA, P_GAMMA, P_H, P_T1, P_RTOL, P_ATOL, P_ACC_RTOL, P_PHI_TOL,
 P_INDEX2, P_BETA_PRIME, P_GAMMA_PRIME, P_BOUNDED, P_REFRESH_ABOVE, P_CONTACT_TOL) = range(16)
STEP_PARAMETERS = 16


def step_parameters(**values: float):
    """``par`` with the named slots set (``alpha_m=…, h=…``; the names of the ``P_*``
    slots in lower case), the others zero."""
    import numpy as np

    par = np.zeros(STEP_PARAMETERS)
    for name, value in values.items():
        try:
            par[globals()["P_" + name.upper()]] = value
        except KeyError:
            raise TypeError(f"no step parameter {name!r}") from None
    return par
