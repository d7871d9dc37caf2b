"""The Newton iteration of one generalized-α step in compiled code (docs/compiled.md,
docs/theory_integrators.md).

The same iteration as :meth:`flexmbs.integrators.simulate.AlphaIntegrator._try_step`:
predictor, residual, the solve with the stored LU factors (dense LAPACK, or sparse
SuperLU for large models) of the scaled iteration matrix
[M + (γ'/β') C_t + K_t/β', Φ_qᵀ; Φ_q, 0], the updates Δq, γ'Δq, β'Δq, β'Δλ, and the
convergence test on Δq and β'Δq (and max |Φ| < tol at the new iterate). It returns to
Python once per step, or when the iteration matrix has to be refreshed (after the
matrix is assembled in the workspace, so Python only factors it).

Every kernel takes the packed model (F, IN, H) and workspace (WF, WI, WH) buffers of
:mod:`flexmbs.compiled.packing`. Return codes (:mod:`flexmbs.compiled.codes`):
``CONVERGED``, ``NEED_FACTOR`` (the workspace matrix holds the new iteration matrix; call
again with ``start=False`` after factoring), ``NONFINITE_SOLVE``, ``NONFINITE_ERROR``,
``MAX_ITER``, ``BOUNDED`` (a real-time step accepted after its fixed iterations),
``NEED_INPUTS`` (the values of the state-dependent callables at the iterate in the
workspace, and with counters[INPUTS] = −2 their derivative rows; call again with
``start=False`` once Python has written them: docs/compiled.md, "Callables").
"""

from __future__ import annotations

import numpy as np

from ..compiled._jit import njit
from ..compiled.codes import (
    BOUNDED,
    CONVERGED,
    HAVE_RESIDUAL,
    INPUTS,
    IT,
    MAX_ITER,
    NEED_FACTOR,
    NEED_INPUTS,
    NONFINITE_ERROR,
    NONFINITE_SOLVE,
    P_ACC_RTOL,
    P_ALPHA_F,
    P_ALPHA_M,
    P_ATOL,
    P_BETA,
    P_BETA_PRIME,
    P_BOUNDED,
    P_CONTACT_TOL,
    P_GAMMA,
    P_GAMMA_PRIME,
    P_H,
    P_INDEX2,
    P_PHI_TOL,
    P_REFRESH_ABOVE,
    P_RTOL,
    STALE,
    TASK_ADJOINT_SWEEP,
    TASK_CONTACTS,
    TASK_EQUATIONS_MANY,
    TASK_FACTOR,
    TASK_FORCES_MANY,
    TASK_JACOBIANS_MANY,
    TASK_MATRIX,
    TASK_OUTPUTS,
    TASK_PIECES,
    TASK_PIECES_MANY,
    TASK_RESIDUAL,
    TASK_STEP,
    TASK_STEPS,
)
from ..compiled.packing import borrowed, floats1, floats2, ints1, packed_view
from ..elements.constraints.kernels import jacobian_dense, velocity_constraint
from ..elements.contact.kernels import contact_samples, needs_python
from ..elements.registry import header_rows, work_rows
from .adjoint_sweep import adjoint_sweep
from .dispatch import (
    dynamic_residual,
    force_residual,
    iteration_matrix,
    outputs_entry,
    phi_only,
    step_pieces,
)
from .linear_solves import lu_factor_into, lu_solve, sparse_lu_solve

T_U_CALL = header_rows("u_call")

_Q1, _QD1, _QDD1, _LAM1 = work_rows("q1", "qd1", "qdd1", "lam1")
_R, _PHI, _RHS, _MATRIX = work_rows("r", "phi", "rhs", "matrix")
_JAC, _A1, _COUNTERS, _FLOATS, _SOLVE = work_rows("jac", "a1", "counters", "floats", "solve")
_ANGLES = work_rows("angles")
_CT_OUT, _CT_START = work_rows("ct_out", "ct_start")


@njit(cache=True)
def _solve(lu, piv, sp_i, sp_x, x, tmp):
    """x ← (iteration matrix)⁻¹ x with the dense or sparse factors; False when the
    solution is not finite (a singular matrix)."""
    if sp_i.size == 0:
        lu_solve(lu, piv, x)
    else:
        sparse_lu_solve(sp_i, sp_x, x, tmp)
    finite = True
    for i in range(x.size):
        finite = finite and np.isfinite(x[i])
    return finite


# inlined into the entry point: not a library of its own to optimize and link again
@njit(cache=True, inline="always")
def newton_step(F, IN, H, WF, WI, WH, state, par, max_iter, inputs, factors, start):
    """Iterate the step from t_n, ``state`` = (q, q̇, q̈, a, λ), to t_{n+1} = par[P_T1],
    with the time-level ``inputs`` = (prof, u) of its end and the ``factors`` = (lu,
    piv, sp_i, sp_x) of the iteration matrix. (The tuples group the arguments by what
    they are; the function is inlined into its callers, so they cost nothing.)

    ``par``: the step parameters, in the named slots of :mod:`flexmbs.compiled.codes`;
    the iterate lives in the workspace (q1, qd1, qdd1, lam1, then a1 on convergence);
    counters[STALE] = 1 asks for a new iteration matrix at the next residual. The
    factors: dense (``lu``, ``piv``) when ``sp_i`` is empty, else sparse
    (:func:`sparse_lu_solve`).

    With par[P_BOUNDED] = 1 (real-time mode, docs/integrators.md) the step takes at most
    ``max_iter`` iterations and is then accepted as it stands (``BOUNDED``, a1 set),
    slow convergence asks for no new matrix, and a matrix asked for at the step's start
    is factored here (:func:`lu_factor_into`) when the caller passes dense factor
    buffers of the matrix's order.

    With par[P_INDEX2] = 1 (stabilized index 2, docs/theory_integrators.md) the multiplier
    rows enforce the velocity constraint Φ_q q̇ + Φ_t = 0, and each iteration ends with
    a position correction onto Φ = 0 through the same factors (q only).

    A model with state-dependent callables (table ``u_call``) stops before each
    residual with ``NEED_INPUTS`` and counters[INPUTS] = −1, or −2 when the iteration
    matrix is to be rebuilt at that iterate: Python writes the callables' values into
    their columns of ``u`` (and their rows du/dq, du/dq̇ into cb_du), sets
    counters[INPUTS] = 1 (2) and calls again with ``start=False``."""
    q, qd, qdd, a, lam = state
    prof, u = inputs
    lu, piv, sp_i, sp_x = factors
    am, af, beta, gamma = par[P_ALPHA_M], par[P_ALPHA_F], par[P_BETA], par[P_GAMMA]
    h = par[P_H]
    rtol, atol = par[P_RTOL], par[P_ATOL]
    acc_rtol, phi_tol = par[P_ACC_RTOL], par[P_PHI_TOL]
    index2 = par[P_INDEX2] == 1.0
    bounded = par[P_BOUNDED] == 1.0
    bp = (1 - am) / (beta * h * h * (1 - af))
    gp = gamma / (beta * h)
    n, n_c = q.size, lam.size
    q1, qd1 = floats1(WF, WH, _Q1), floats1(WF, WH, _QD1)
    qdd1, lam1 = floats1(WF, WH, _QDD1), floats1(WF, WH, _LAM1)
    r, phi, x = floats1(WF, WH, _R), floats1(WF, WH, _PHI), floats1(WF, WH, _RHS)
    ctr, fl = ints1(WI, WH, _COUNTERS), floats1(WF, WH, _FLOATS)
    if start:
        for i in range(n):
            qdd1[i] = qdd[i]
            a1 = ((1 - af) * qdd[i] + af * qdd[i] - am * a[i]) / (1 - am)
            q1[i] = q[i] + h * qd[i] + h * h * ((0.5 - beta) * a[i] + beta * a1)
            qd1[i] = qd[i] + h * ((1 - gamma) * a[i] + gamma * a1)
        for i in range(n_c):
            lam1[i] = lam[i]
        ctr[IT] = 0
        ctr[HAVE_RESIDUAL] = 0
        ctr[INPUTS] = 0
        fl[0] = np.inf
    u_call = ints1(IN, H, T_U_CALL)
    callables = False
    for i in range(u_call.size):
        callables = callables or u_call[i] == 1
    floor = 16 * np.finfo(np.float64).eps
    while True:
        if ctr[HAVE_RESIDUAL] == 0:
            if callables and ctr[INPUTS] <= 0:  # the callables' values at this iterate
                ctr[INPUTS] = -2 if ctr[STALE] == 1 else -1
                return NEED_INPUTS
            ctr[INPUTS] = 0
            ctr[IT] += 1
            dynamic_residual(F, IN, H, WF, WI, WH, q1, qd1, qdd1, lam1, prof, u, r, phi)
        ctr[HAVE_RESIDUAL] = 0
        if ctr[STALE] == 1:
            jacobian_dense(F, IN, H, WF, WI, WH, floats2(WF, WH, _JAC))
            iteration_matrix(F, IN, H, WF, WI, WH, q1, qd1, qdd1, lam1, prof, u, bp, gp,
                             floats2(WF, WH, _MATRIX))
            ctr[STALE] = 0
            ctr[HAVE_RESIDUAL] = 1
            if bounded and sp_i.size == 0 and lu.shape[0] == n + n_c:
                # a real-time step with its own dense factor buffers: factor here
                lu_factor_into(floats2(WF, WH, _MATRIX), lu, piv)
                continue
            return NEED_FACTOR
        if index2:  # the multiplier rows: Φ_q Δq̇ = −(Φ_q q̇ + Φ_t), Δq̇ = γ'Δq
            velocity_constraint(F, IN, H, WF, WI, WH, qd1, prof, phi)
            for i in range(n_c):
                phi[i] /= gp
        for i in range(n):
            x[i] = -r[i] / bp
        for i in range(n_c):
            x[n + i] = -phi[i]
        if not _solve(lu, piv, sp_i, sp_x, x, floats1(WF, WH, _SOLVE)):
            return NONFINITE_SOLVE
        max_dq, err_q, max_q, max_qdd = 0.0, 0.0, 0.0, 0.0
        for i in range(n):
            dq = x[i]
            q1[i] += dq
            qd1[i] += gp * dq
            qdd1[i] += bp * dq
            adq, aq = abs(dq), abs(q1[i])
            max_dq = max(max_dq, adq)
            err_q = max(err_q, adq / (atol + rtol * aq))
            max_q = max(max_q, aq)
            max_qdd = max(max_qdd, abs(qdd1[i]))
        for i in range(n_c):
            lam1[i] += bp * x[n + i]
        err_a = bp * max_dq / (acc_rtol * max(1.0, max_qdd))
        at_floor = max_dq <= floor * max(1.0, max_q)
        err = max(err_q, 0.0 if at_floor else err_a)
        fl[1] = err
        if not np.isfinite(err):
            return NONFINITE_ERROR
        if err < 1.0 or index2:
            phi_only(F, IN, H, WF, WI, WH, q1, prof, phi)
            worst = 0.0
            for i in range(n_c):
                worst = max(worst, abs(phi[i]))
            if err < 1.0 and worst < phi_tol:
                a1 = floats1(WF, WH, _A1)
                for i in range(n):
                    a1[i] = ((1 - af) * qdd1[i] + af * qdd[i] - am * a[i]) / (1 - am)
                return CONVERGED
            if index2:  # position correction onto Φ = 0 (q only)
                for i in range(n):
                    x[i] = 0.0
                for i in range(n_c):
                    x[n + i] = -phi[i]
                if not _solve(lu, piv, sp_i, sp_x, x, floats1(WF, WH, _SOLVE)):
                    return NONFINITE_SOLVE
                for i in range(n):
                    q1[i] += x[i]
        if ctr[IT] >= 3 and err > 0.5 * fl[0] and not bounded:
            ctr[STALE] = 1
        fl[0] = err
        if ctr[IT] >= max_iter:
            if bounded:  # a real-time step: accepted after its fixed iterations
                a1 = floats1(WF, WH, _A1)
                for i in range(n):
                    a1[i] = ((1 - af) * qdd1[i] + af * qdd[i] - am * a[i]) / (1 - am)
                return BOUNDED
            return MAX_ITER


@njit(cache=True, inline="always")
def run_steps(F, IN, H, WF, WI, WH, par, max_iter, factors, batch, out):
    """Up to K = profs.shape[0] steps of size par[P_H] in one call (a batch: no return to
    Python between steps, docs/compiled.md, "Batches of steps"), ``batch`` = (states,
    lams, profs, us) and ``factors`` = (lu, piv, sp_i, sp_x): step k starts from
    states[k] (rows q, q̇, q̈, a) and lams[k], takes the time-level inputs profs[k],
    us[k] of its end, and on convergence writes its end state into states[k + 1] and
    lams[k + 1], its Newton iterations and iteration-matrix factorizations into out[k,
    0:2], the rotational springs' angle memory after it (the workspace's ``angles``,
    which the steps carry on) into out[k, 2:2 + n_a] and the contacts' samples at its
    end (``ct_out``, flattened) into the columns after those. The matrix is factored
    here (:func:`lu_factor_into`) into ``lu``, ``piv``: dense buffers of the matrix's
    order holding the factors in use (any, when counters[STALE] = 1 at the call). A step
    needing more than par[P_REFRESH_ABOVE] iterations (≥ 0) has the next one start with
    a new matrix, as the per-step path does.

    With contacts, ``ct_start`` holds their samples at the batch's start; a converged
    step that leaves Python's contact handling something to do (an onset within
    par[P_CONTACT_TOL] to locate, a state switch, an impulse:
    :func:`~flexmbs.elements.contact.kernels.needs_python`) ends the batch with its end
    written as above, for Python to finish as the per-step path would.

    Returns the number of steps accepted, k: k = K, or k < K when step k failed (the
    caller takes it again on the per-step path, which halves it); −(k + 1) when step k
    converged and waits for Python's contact handling."""
    states, lams, profs, us = batch
    lu, piv = factors[0], factors[1]
    n, n_c = states.shape[2], lams.shape[1]
    ctr = ints1(WI, WH, _COUNTERS)
    q1, qd1, qdd1 = floats1(WF, WH, _Q1), floats1(WF, WH, _QD1), floats1(WF, WH, _QDD1)
    lam1, a1 = floats1(WF, WH, _LAM1), floats1(WF, WH, _A1)
    matrix, angles = floats2(WF, WH, _MATRIX), floats1(WF, WH, _ANGLES)
    ct_out, ct_start = floats2(WF, WH, _CT_OUT), floats2(WF, WH, _CT_START)
    n_ct, width = ct_out.shape[0], ct_out.shape[1]
    after_angles = 2 + angles.size
    refresh_above = par[P_REFRESH_ABOVE]
    for k in range(profs.shape[0]):
        if k > 0 and refresh_above >= 0 and out[k - 1, 0] > refresh_above:
            ctr[STALE] = 1
        now = states[k]
        factorizations = 0
        start = True
        while True:
            code = newton_step(F, IN, H, WF, WI, WH, (now[0], now[1], now[2], now[3], lams[k]),
                               par, max_iter, (profs[k], us[k]), factors, start)
            if code != NEED_FACTOR:
                break
            lu_factor_into(matrix, lu, piv)
            factorizations += 1
            start = False
        out[k, 0], out[k, 1] = ctr[IT], factorizations
        if code != CONVERGED:
            return k
        after = states[k + 1]
        for i in range(n):
            after[0, i], after[1, i], after[2, i], after[3, i] = q1[i], qd1[i], qdd1[i], a1[i]
        for i in range(n_c):
            lams[k + 1, i] = lam1[i]
        for i in range(angles.size):
            out[k, 2 + i] = angles[i]
        if n_ct:
            contact_samples(F, IN, H, WF, WI, WH, q1, qd1)
            for c in range(n_ct):
                for j in range(width):
                    out[k, after_angles + c * width + j] = ct_out[c, j]
            if needs_python(F, IN, H, WF, WI, WH, par[P_H], par[P_CONTACT_TOL]):
                return -(k + 1)
            for c in range(n_ct):
                for j in range(width):
                    ct_start[c, j] = ct_out[c, j]
    return profs.shape[0]


@njit(cache=True)
def pieces_many(F, IN, H, WF, WI, WH, task, states, lams, profs, us, refs, out):
    """What the gradients need at many states in one call (docs/gradients.md,
    "Checkpoints and cost"): state k has q, q̇, q̈ = states[k, 0:3] (n_q,), λ = lams[k],
    the time values profs[k], us[k] and the rotational springs' angle memory refs[k]
    (NaN: none), loaded before its residual as :meth:`~flexmbs.engine.compiled_system.
    CompiledSystem.load_angles` does for one state. Into ``out`` by ``task``:

    * TASK_PIECES_MANY: M with Φ_q below it, K_t and C_t (:func:`~flexmbs.engine.
      dispatch.step_pieces`), viewed as (3, s, s), s = n_q + n_c (off-pattern entries
      stay as given), then the step equations r, Φ and Φ_q q̇ + Φ_t (n_q + 2 n_c: the
      residual the pieces are taken at), state k's from out[w k] on, w = 3 s² + n_q + 2 n_c;
    * TASK_JACOBIANS_MANY: the dense Φ_q (n_c, n_q) into out[n_c k : n_c (k + 1)];
    * TASK_EQUATIONS_MANY: the step equations r (n_q), Φ (n_c) and Φ_q q̇ + Φ_t (n_c)
      into the row out[k];
    * TASK_FORCES_MANY: the force kinds' part of r alone (:func:`~flexmbs.engine.
      dispatch.force_residual`) into out[k, :n_q] (the rest of the row as given).
    """
    n_t, n = states.shape[0], states.shape[2]
    m = lams.shape[1]
    size = n + m
    width = 3 * size * size + n + 2 * m  # a state's pieces and equations
    r, phi = floats1(WF, WH, _R), floats1(WF, WH, _PHI)
    jac = floats2(WF, WH, _JAC)
    angles = floats1(WF, WH, _ANGLES)
    for k in range(n_t):
        for s in range(refs.shape[1]):
            angles[s] = refs[k, s]
        q, qd, qdd, lam = states[k, 0], states[k, 1], states[k, 2], lams[k]
        if task == TASK_FORCES_MANY:  # the force kinds' r alone (the other rows stay)
            force_residual(F, IN, H, WF, WI, WH, q, qd, qdd, profs[k], us[k], r)
            row = out[k]
            for i in range(n):
                row[i] = r[i]
            continue
        dynamic_residual(F, IN, H, WF, WI, WH, q, qd, qdd, lam, profs[k], us[k], r, phi)
        if task in (TASK_EQUATIONS_MANY, TASK_PIECES_MANY):
            row = (out[k] if task == TASK_EQUATIONS_MANY else
                   packed_view(out, width * k + 3 * size * size, (n + 2 * m,)))
            for i in range(n):
                row[i] = r[i]
            for i in range(m):
                row[n + i] = phi[i]
            if task == TASK_PIECES_MANY:  # at the residual's markers, frames and W_jac
                jacobian_dense(F, IN, H, WF, WI, WH, jac)
                step_pieces(F, IN, H, WF, WI, WH, q, qd, qdd, lam, profs[k], us[k],
                            packed_view(out, width * k, (3, size, size)))
            velocity_constraint(F, IN, H, WF, WI, WH, qd, profs[k], phi)
            for i in range(m):
                row[n + m + i] = phi[i]
            continue
        jacobian_dense(F, IN, H, WF, WI, WH, jac)
        for i in range(m):
            for j in range(n):
                out[m * k + i, j] = jac[i, j]
    return n_t


@njit(cache=True)
def kernel(task, F, IN, H, WF, WI, WH, q, qd, qdd, a, lam, par, max_iter, prof, u, lu,
           piv, sp_i, sp_x, start, qs, qds, lams, profs, us, refs, out, states):
    """The one compiled entry point (one entry links and optimizes the kernels once):

    * TASK_STEP: :func:`newton_step` (its return code), and on an accepted step every
      contact's sample at its end into the workspace (``ct_out``);
    * TASK_RESIDUAL: r and Φ at (q, q̇, q̈, λ) into the workspace;
    * TASK_MATRIX: the scaled iteration matrix at that state into the workspace, with
      β' = par[P_BETA_PRIME], γ' = par[P_GAMMA_PRIME];
    * TASK_OUTPUTS: :func:`flexmbs.engine.dispatch.outputs_entry` of the histories
      qs, qds, lams with profiles profs, actuator values us and the rotational springs'
      angles refs into ``out``;
    * TASK_CONTACTS: every contact's sample at (q, q̇) into the workspace
      (:func:`flexmbs.elements.contact.kernels.contact_samples`);
    * TASK_STEPS: :func:`run_steps` over ``states``, ``lams``, ``profs``, ``us`` and
      ``out`` (the number of steps accepted; −(k + 1) when step k awaits Python's
      contact handling).
    * TASK_PIECES: M with Φ_q, K_t and C_t at (q, q̇, q̈, λ) into ``states`` (3, n, n)
      (:func:`flexmbs.engine.dispatch.step_pieces`; the gradients' step Jacobians);
    * TASK_JACOBIAN: r, Φ and the dense Φ_q at (q, q̇, q̈, λ) into the workspace.
    * TASK_PIECES_MANY, TASK_JACOBIANS_MANY, TASK_EQUATIONS_MANY, TASK_FORCES_MANY:
      :func:`pieces_many`
      at the states ``states``, ``lams`` with ``profs``, ``us`` and ``refs`` into ``out``.
    * TASK_FACTOR: the workspace's iteration matrix factored into ``lu``, ``piv``
      (:func:`lu_factor_into`, as a batch of steps factors it: a restart continues with
      the factors the uninterrupted run had);
    * TASK_ADJOINT_SWEEP: :func:`flexmbs.engine.adjoint_sweep.adjoint_sweep` of a chunk
      of the gradients' backward sweep: its steps' pieces ``out``, Z and Pᵀ ``profs``,
      rows ``qs``, cotangents ``qds`` (in and out) and μ into ``lams``, with ``us``,
      ``lu`` and ``piv`` as scratch (−1, or the step whose μ is not finite).

    The arrays are taken without their references (:func:`~flexmbs.compiled.packing.
    borrowed`): passing them on and viewing them then counts no references.
    """
    F, IN, H, WF, WI, WH = (borrowed(F), borrowed(IN), borrowed(H), borrowed(WF),
                            borrowed(WI), borrowed(WH))
    q, qd, qdd, a, lam, par = (borrowed(q), borrowed(qd), borrowed(qdd), borrowed(a),
                               borrowed(lam), borrowed(par))
    prof, u, lu, piv = borrowed(prof), borrowed(u), borrowed(lu), borrowed(piv)
    sp_i, sp_x = borrowed(sp_i), borrowed(sp_x)
    factors = (lu, piv, sp_i, sp_x)
    if task == TASK_STEP:
        code = newton_step(F, IN, H, WF, WI, WH, (q, qd, qdd, a, lam), par, max_iter,
                           (prof, u), factors, start)
        if code in (CONVERGED, BOUNDED):  # the contacts at the step's end
            contact_samples(F, IN, H, WF, WI, WH, floats1(WF, WH, _Q1), floats1(WF, WH, _QD1))
        return code
    if task == TASK_OUTPUTS:
        qs, qds, lams, profs, us = (borrowed(qs), borrowed(qds), borrowed(lams),
                                    borrowed(profs), borrowed(us))
        refs, out = borrowed(refs), borrowed(out)
        outputs_entry(F, IN, H, WF, WI, WH, qs, qds, lams, profs, us, refs, out)
        return CONVERGED
    if task == TASK_CONTACTS:
        contact_samples(F, IN, H, WF, WI, WH, q, qd)
        return CONVERGED
    if task in (TASK_PIECES_MANY, TASK_JACOBIANS_MANY, TASK_EQUATIONS_MANY,
                TASK_FORCES_MANY):
        return pieces_many(F, IN, H, WF, WI, WH, task, borrowed(states),
                           borrowed(lams), borrowed(profs), borrowed(us), borrowed(refs),
                           borrowed(out))
    if task == TASK_ADJOINT_SWEEP:
        return adjoint_sweep(borrowed(out), borrowed(profs), borrowed(qs), borrowed(qds),
                             borrowed(lams), borrowed(us), lu, piv)
    if task == TASK_FACTOR:
        lu_factor_into(floats2(WF, WH, _MATRIX), lu, piv)
        return CONVERGED
    if task == TASK_STEPS:
        return run_steps(F, IN, H, WF, WI, WH, par, max_iter, factors,
                         (borrowed(states), borrowed(lams), borrowed(profs), borrowed(us)),
                         borrowed(out))
    r, phi = floats1(WF, WH, _R), floats1(WF, WH, _PHI)
    dynamic_residual(F, IN, H, WF, WI, WH, q, qd, qdd, lam, prof, u, r, phi)
    if task != TASK_RESIDUAL:  # TASK_MATRIX, TASK_PIECES, TASK_JACOBIAN: Φ_q too
        jacobian_dense(F, IN, H, WF, WI, WH, floats2(WF, WH, _JAC))
    if task == TASK_PIECES:
        step_pieces(F, IN, H, WF, WI, WH, q, qd, qdd, lam, prof, u, borrowed(states))
    if task == TASK_MATRIX:
        iteration_matrix(F, IN, H, WF, WI, WH, q, qd, qdd, lam, prof, u, par[P_BETA_PRIME],
                         par[P_GAMMA_PRIME],
                         floats2(WF, WH, _MATRIX))
    return CONVERGED
