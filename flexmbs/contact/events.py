"""What the integrator does about contacts between steps: find contacts that closed or
were tunnelled through inside a step (so that the step is retried shorter, locating the
onset within ``tol``), commit the contact states, accumulate dissipated energy, and apply
restitution impulses for the ``Impulse`` law.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..errors import ConvergenceError
from .element import OPEN, Contact


def contacts_of(system) -> list[Contact]:
    """The contact elements among the model's forces."""
    return [f for f in system.model.forces if isinstance(f, Contact)]


def onset_fraction(system, contacts, q0, qd0, q1, qd1, h, tol) -> float | None:
    """If a contact that was open at the start of a step penetrates deeper than ``tol``
    at its end — or its gap, interpolated by a cubic Hermite from g and ġ at both ends,
    dips below −tol inside the step (a contact the step would miss) — the fraction of
    the step at which it closes (linear in g; at least 0.05); None when the step is
    acceptable."""
    worst = None
    for c in contacts:
        if c.state.mode != OPEN:
            continue
        k0, k1 = c.kinematics(system, q0, qd0), c.kinematics(system, q1, qd1)
        g0, g1 = k0.gap, k1.gap
        if g0 < -tol:
            continue  # already inside (started so): nothing to locate
        if g1 < -tol:
            frac = g0 / (g0 - g1) if g0 > 0 else 0.05
        else:
            s = np.linspace(0.0, 1.0, 9)[1:-1]
            h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
            h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
            g = h00 * g0 + h10 * h * k0.v_n + h01 * g1 + h11 * h * k1.v_n
            if np.min(g) >= -tol:
                continue
            frac = float(s[np.argmax(g < -tol)]) * 0.9
        frac = max(0.05, min(frac, 0.95))
        worst = frac if worst is None else min(worst, frac)
    return worst


def commit(system, contacts, q0, qd0, q1, qd1, h) -> None:
    """After an accepted step: dissipated energy (trapezoidal in the step), then the
    open/stick/slip switches."""
    for c in contacts:
        p0 = c.dissipation_power(system, q0, qd0)
        p1 = c.dissipation_power(system, q1, qd1)
        c.state.dissipated += 0.5 * h * (p0 + p1)
        c.commit(system, q1, qd1, None)


def apply_impulses(system, contacts, q, qd, t, tol) -> tuple[np.ndarray, dict]:
    """Newton's restitution law at the impacts found at (q, q̇): for every ``Impulse``
    contact with gap ≤ tol that approaches (v_n < 0), the velocity jump Δq̇ solves

        [M  Φ_qᵀ  J_nᵀ] [Δq̇]   [0]
        [Φ_q  0    0  ] [ μ ] = [0]
        [J_n  0    0  ] [ P ]   [−(1 + e) v_n]

    (J_n: the normal rows n·(J_b − J_a) of the impacting contacts); so the joints stay
    satisfied at velocity level and v_n⁺ = −e v_n⁻. Returns the new q̇ and the kinetic
    energy lost per contact [J]."""
    rows, rhs, hit = [], [], []
    for c in contacts:
        if not c.law.impulsive:
            continue
        kin = c.kinematics(system, q, qd)
        if kin.gap <= tol and kin.v_n < 0:
            row = np.zeros(system.n_q)
            row[kin.b.sl] += kin.normal @ kin.b.jac
            row[kin.a.sl] -= kin.normal @ kin.a.jac
            rows.append(row)
            rhs.append(-(1.0 + c.law.e) * kin.v_n)
            hit.append(c)
    if not hit:
        return qd, {}
    m = np.asarray(system.mass_matrix(q, sparse=False))
    jac = np.asarray(system.jacobian(q, t, sparse=False))
    jn = np.array(rows)
    n, nc, ni = system.n_q, jac.shape[0], len(hit)
    kkt = np.zeros((n + nc + ni, n + nc + ni))
    kkt[:n, :n] = m
    kkt[:n, n:n + nc], kkt[n:n + nc, :n] = jac.T, jac
    kkt[:n, n + nc:], kkt[n + nc:, :n] = jn.T, jn
    b = np.zeros(n + nc + ni)
    b[n + nc:] = rhs
    try:
        dqd = sla.solve(kkt, b)[:n]
    except (sla.LinAlgError, ValueError) as exc:
        names = ", ".join(c.name for c in hit)
        raise ConvergenceError(f"impact at t = {t:.6g} s on contact(s) {names}: the impulse "
                               f"equations are singular ({exc}); are the contacts "
                               f"redundant with the joints?") from exc
    new = qd + dqd
    t_before = 0.5 * qd @ m @ qd
    t_after = 0.5 * new @ m @ new
    lost = {}
    share = (t_before - t_after) / ni
    for c in hit:
        c.state.impacts += 1
        c.state.dissipated += share
        lost[c.name] = share
    return new, lost
