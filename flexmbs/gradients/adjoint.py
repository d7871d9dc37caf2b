"""The backward sweep of the discrete adjoint (docs/gradients.md, "The discrete adjoint").

With J = Σ_k g_k(y_k) over the step states and y_{n+1} = L_x x + L_y y_n,
F(y_{n+1}) = 0 per step, the total cotangent ỹ_n = dJ/dy_n obeys, from the last step
back,

    μ_{n+1} = J_{n+1}⁻ᵀ L_xᵀ ỹ_{n+1}                      (one transposed solve)
    ỹ_n     = L_yᵀ (ỹ_{n+1} − F_yᵀ μ_{n+1}) + ∂g_n/∂y_n
    dJ/dp  −= μ_{n+1}ᵀ ∂F_{n+1}/∂p

and at the start dJ/dp += ỹ_0ᵀ dy_0/dp. Each step costs one exact Jacobian (tangents and
an LU factorization) and one solve, whatever the number of parameters; the states come
from the forward run's store or its checkpoints, segment by segment.
"""

from __future__ import annotations

import math
import time
from array import array
from itertools import chain, pairwise

import numpy as np
import scipy.linalg as sla

from .chunk_terms import ChunkDerivatives
from .forward import segment
from .jacobian_source import TangentSource
from .prepared import initial_matrix
from .servo_integrals import ServoIntegrals
from .step import AdjointSteps, Coefficients


def _segments(run_):
    """(first, last) index pairs covering 0..N, last segment first."""
    marks = sorted(run_.checkpoints) if run_.every > 1 else [0]
    bounds = [*marks, run_.steps]
    pairs = [(a, b) for a, b in pairwise(bounds) if b > a]
    return pairs[::-1] if pairs else [(0, 0)]


class GradientTerms:
    """dJ/dp kept as its terms (step by step) and summed exactly at the end
    (``math.fsum`` per parameter): the sum is then the same however the chunks and
    segments grouped its terms, so a sweep over a run's checkpoints gives the stored run's
    gradient to the last bit, whatever BLAS kernels the CPU gets (a sum chunk by chunk
    differed in the last bit with OpenBLAS's Zen and Haswell kernels). The terms take
    8 bytes each: rows of every parameter in arrays (every :data:`JOIN_EVERY` blocks
    joined into one chunk, so that adding is linear in the steps), a parameter's own
    terms in an ``array('d')`` each: 10⁶ steps of 20 parameters keep 160 MB (twice that
    where each parameter also has a term of its own at every step) and are summed in
    about a second (docs/gradients.md, "Checkpoints and cost")."""

    #: Blocks of rows kept apart before they are joined into a chunk.
    JOIN_EVERY = 256

    def __init__(self, n_p: int):
        self.n_p = n_p
        self.chunks: list[np.ndarray] = []
        self.blocks: list[np.ndarray] = []
        self.singles = [array("d") for _ in range(n_p)]

    def add(self, terms) -> None:
        """Terms of every parameter: (n_p,), or (K, n_p) for K steps."""
        self.blocks.append(np.asarray(terms, dtype=float).reshape(-1, self.n_p))
        if len(self.blocks) >= self.JOIN_EVERY:
            self.chunks.append(np.concatenate(self.blocks))
            self.blocks = []

    def add_one(self, j: int, value: float) -> None:
        """A term of parameter ``j`` alone."""
        self.singles[j].append(float(value))

    def total(self) -> np.ndarray:
        """(n_p,): each parameter's terms summed, correctly rounded."""
        parts = self.chunks + self.blocks
        return np.array([math.fsum(chain(*(part[:, j].tolist() for part in parts),
                                         self.singles[j]))
                         for j in range(self.n_p)])


def backward(system, run_, probe, weights, prepared, index2: bool, source=None,
             integrals=None):
    """(dJ/dp (n_p,), seconds): the adjoint sweep over ``run_`` (a
    :class:`~flexmbs.gradients.forward.ForwardRun`) for the objective whose ∂J/∂s_k are
    ``weights``, with the :class:`~flexmbs.gradients.prepared.PreparedParameter` list
    ``prepared``; ``source`` the :class:`~flexmbs.gradients.jacobian_source.TangentSource`
    of the step Jacobians (default: the compiled engine where it can); ``integrals`` the
    :class:`~flexmbs.gradients.servo_integrals.ServoIntegrals` of the servos with ki > 0
    (default: found), whose cotangents Ī the sweep carries beside ỹ."""
    tic = time.perf_counter()
    if source is None:
        source = TangentSource(system)
    if integrals is None:
        integrals = ServoIntegrals(system, probe, prepared)
    n, n_p = system.n_q, len(prepared)
    grad = GradientTerms(n_p)
    q_bar, qd_bar, qdd_bar, a_bar = (np.zeros(n) for _ in range(4))
    lam_bar = np.zeros(system.n_c)
    i_bar = np.zeros(len(integrals.servos))
    params = run_.settings.params
    state0 = None
    width = _chunk_width(system, index2)
    # ∂F/∂p of a chunk at once where the Jacobians' kernels are at hand and no servo
    # integral is held step by step (the Systems at p ± δ read the same histories)
    chunk_terms = (ChunkDerivatives(system, source, prepared)
                   if source.batched and not integrals else None)
    no_lam = np.zeros(system.n_c)  # (never written: λ̄ is replaced, not added to, in place)
    by_size: dict = {}  # one Coefficients per step size [s]
    for first, last in _segments(run_):
        states = segment(system, run_, first, last)
        for top in range(last, first, -width):
            ks = range(top, max(first, top - width), -1)
            coefs = [by_size.get(h) or by_size.setdefault(h, Coefficients.of(params, h))
                     for h in (float(run_.h[k - 1]) for k in ks)]
            at, memories = [states[k][0] for k in ks], [states[k][1] for k in ks]
            # the servos' integrals are held step by step: their pieces one at a time
            raws = (source.pieces_many(at, memories, [c.h for c in coefs], index2, True)
                    if source.batched and not integrals else [None] * len(at))

            def hold(i, ks=ks, states=states):
                integrals.hold(float(run_.t[ks[i] - 1]),
                               integrals.acting(states[ks[i] - 1][1]))

            steps = AdjointSteps(system, at, coefs, memories, index2, source, raws,
                                 hold if integrals else None)
            derivs = (chunk_terms.at(at, memories, index2,
                                     raws if source.batched and not integrals else None)
                      if chunk_terms is not None else [None] * len(prepared))
            # the chunk's rows of ∂F/∂p (K, size, n_p), zero where a parameter takes its
            # terms state by state (no chunk rows, or a row not finite: not linear over
            # ±Δ, a spring of length 0), and those (K, n_p)
            rows, by_state = _chunk_rows(derivs, len(ks), steps.size)
            any_by_state = by_state.any(axis=1).tolist()
            bars = (q_bar, qd_bar, qdd_bar, a_bar)
            if steps.kernel_rows is not None and not integrals:  # one kernel call
                sensor = _sensor_terms(system, states, ks, weights, probe, prepared, grad)
                mus, bars = steps.sweep(bars, sensor)
                grad.add(-np.einsum("ks,ksp->kp", mus, rows))  # (per step)
                for i in np.flatnonzero(any_by_state):
                    state, angles = states[ks[i]]
                    system.angle_memory = dict(angles)
                    for j in np.flatnonzero(by_state[i]):
                        grad.add_one(j, -(mus[i] @ prepared[j].step_derivative(state,
                                                                               index2)))
                q_bar, qd_bar, qdd_bar, a_bar = bars
                continue
            for i, k in enumerate(ks):
                state, angles = states[k]
                coef = coefs[i]
                system.angle_memory = dict(angles)
                if integrals:  # I_{k−1} acts in this step
                    acting = integrals.acting(states[k - 1][1])
                    integrals.hold(float(run_.t[k - 1]), acting)
                g = float(weights[k])
                if g:
                    gq, gqd, gqdd, glam = probe.gradient(state)
                    bars = (bars[0] + g * gq, bars[1] + g * gqd, bars[2] + g * gqdd,
                            bars[3])
                    lam_bar = lam_bar + g * glam
                    for j, prep in enumerate(prepared):
                        grad.add_one(j, g * prep.sensor_derivative(probe, state))
                if integrals:  # I_k = I_{k−1} + h n (θ_ref − θ(q_k)): Ī_k reaches q_k, p
                    terms = integrals.step(state, coef.h, acting, steps.size)
                    bars = (bars[0] + i_bar @ terms.d_q, *bars[1:])
                    grad.add(i_bar @ terms.d_p)
                mu, after = steps.back(i, coef, bars, lam_bar)
                grad.add(-(mu @ rows[i]))
                if any_by_state[i]:
                    for j in np.flatnonzero(by_state[i]):
                        grad.add_one(j, -(mu @ prepared[j].step_derivative(state, index2)))
                if integrals:  # Ī_{k−1} = Ī_k − μᵀ ∂F_k/∂I_{k−1}
                    i_bar = i_bar - terms.load @ mu
                bars = after
                lam_bar = no_lam
            q_bar, qd_bar, qdd_bar, a_bar = bars
        if first == 0:
            state0 = states[0]
    state, angles = state0
    system.angle_memory = dict(angles)
    if integrals:  # none has run yet
        integrals.hold(float(run_.t[0]), np.zeros(len(integrals.servos)))
    g = float(weights[0])
    if g:
        gq, gqd, gqdd, glam = probe.gradient(state)
        q_bar, qd_bar, qdd_bar = q_bar + g * gq, qd_bar + g * gqd, qdd_bar + g * gqdd
        lam_bar = lam_bar + g * glam
        for j, prep in enumerate(prepared):
            grad.add_one(j, g * prep.sensor_derivative(probe, state))
    grad.add(initial_terms(system, run_.settings, state, prepared,
                           (q_bar, qd_bar, qdd_bar + a_bar, lam_bar)))
    return grad.total(), time.perf_counter() - tic


def _sensor_terms(system, states, ks, weights, probe, prepared, grad) -> np.ndarray:
    """(K, 3 n_q + n_c): the objective's weighted ∂g/∂q, ∂g/∂q̇, ∂g/∂q̈, ∂g/∂λ at the end
    of each of the chunk's steps ``ks`` (:meth:`AdjointSteps.sweep`'s ``sensor``); the
    parameters' direct terms g ∂s/∂p at those states are added to ``grad`` (a
    :class:`GradientTerms`)."""
    n, m = system.n_q, system.n_c
    out = np.zeros((len(ks), 3 * n + m))
    direct = [(j, prep) for j, prep in enumerate(prepared) if prep.sensor_direct]
    once = None  # the gradient of a sensor linear in the coordinates, taken once
    for i, k in enumerate(ks):
        g = float(weights[k])
        if not g:
            continue
        state, angles = states[k]
        if once is None or direct:
            system.angle_memory = dict(angles)
        if once is not None:
            out[i] = g * once
        else:
            gq, gqd, gqdd, glam = probe.gradient(state)
            row = out[i]
            row[:n], row[n:2 * n], row[2 * n:3 * n], row[3 * n:] = gq, gqd, gqdd, glam
            if probe.constant:
                once = row.copy()
            row *= g
        for j, prep in direct:
            grad.add_one(j, g * prep.sensor_derivative(probe, state))
    return out


#: The memory [bytes] of the step Jacobians the sweep builds at once (a chunk of steps).
CHUNK_BYTES = 8 << 20


def _chunk_rows(derivs, count: int, size: int):
    """(rows (K, size, n_p), by_state (K, n_p)) from the chunk's ∂F/∂p per parameter
    (``derivs``: (K, size) or None each): the finite rows, zeros elsewhere, and where a
    parameter takes its terms state by state instead."""
    rows = np.zeros((count, size, len(derivs)))
    by_state = np.ones((count, len(derivs)), dtype=bool)
    for j, d in enumerate(derivs):
        if d is None:
            continue
        finite = np.isfinite(d).all(axis=1)
        rows[finite, :, j] = d[finite]
        by_state[:, j] = ~finite
    return rows, by_state


def _chunk_width(system, index2: bool) -> int:
    """How many steps' Jacobians the sweep builds together: at most 64, within
    ``CHUNK_BYTES`` (the kernel's pieces, the matrices and their factors)."""
    n, m = system.n_q, system.n_c
    size = n + (2 * m if index2 else m)
    per_step = 8 * (3 * (n + m) ** 2 + 3 * size * size + 2 * n * size + 5 * n * n)
    return max(1, min(64, CHUNK_BYTES // per_step))


def initial_terms(system, settings, state, prepared, bars) -> np.ndarray:
    """ỹ_0ᵀ dy_0/dp for every parameter; ``bars`` = (q̄_0, q̄̇_0, q̄̈_0 + ā_0, λ̄_0)
    (a_0 = q̈_0). Parameters that leave the initial positions and velocities alone share
    one transposed solve of the index-1 system."""
    q_bar, qd_bar, acc_bar, lam_bar = bars
    out = np.zeros(len(prepared))
    nu = None
    for j, prep in enumerate(prepared):
        if prep.terms.moves_initial or prep.difference is not None:
            dq, dqd, dqdd, dlam = prep.initial_derivative(settings, state)
            out[j] = q_bar @ dq + qd_bar @ dqd + acc_bar @ dqdd + lam_bar @ dlam
            continue
        if nu is None:
            nu = sla.lu_solve(initial_matrix(system, state),
                              np.concatenate([acc_bar, lam_bar]), trans=1,
                              check_finite=False)
        d_r = prep.step_derivative(state, False)[:system.n_q]
        out[j] = -(nu[:system.n_q] @ d_r)
    return out
