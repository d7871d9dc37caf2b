"""What the integrator does about contacts between steps: find contacts that closed or
were tunnelled through inside a step (so that the step is retried shorter, locating the
onset within ``tol``), commit the contact states, accumulate dissipated energy, and apply
restitution impulses for the ``Impulse`` law.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError
from .element import OPEN, Contact
from .sample import Sample


def contacts_of(system) -> list[Contact]:
    """The contact elements among the model's forces."""
    return [f for f in system.model.forces if isinstance(f, Contact)]


def samples(system, contacts, q, qd) -> list[Sample]:
    """Every contact's :class:`~flexmbs.contact.element.Sample` at (q, q̇) under its
    current state, on the NumPy path (the compiled engine's come from its kernels)."""
    return [c.sample(system, q, qd) for c in contacts]


def onset_fraction(contacts, start, end, h, tol) -> float | None:
    """If a contact that was open at the start of a step penetrates deeper than ``tol``
    at its end — or its gap, interpolated by a cubic Hermite from g and ġ at both ends,
    dips below −tol inside the step (a contact the step would miss) — the fraction of
    the step at which it closes (linear in g; at least 0.05); None when the step is
    acceptable. ``start``, ``end``: the contacts' samples at both ends of the step."""
    worst = None
    for c, k0, k1 in zip(contacts, start, end, strict=True):
        if c.state.mode != OPEN:
            continue
        g0, g1 = k0.gap, k1.gap
        if g0 < -tol:
            continue  # already inside (started so): nothing to locate
        if min(g0, g1) - _DIP * h * (abs(k0.v_n) + abs(k1.v_n)) >= -tol:
            continue  # the interpolant cannot dip below −tol (|h10|, |h11| ≤ 4/27)
        if g1 < -tol:
            frac = g0 / (g0 - g1) if g0 > 0 else 0.05
        else:
            s = _HERMITE_S
            g = (_H00 * g0 + _H10 * h * k0.v_n + _H01 * g1 + _H11 * h * k1.v_n)
            if np.min(g) >= -tol:
                continue
            frac = float(s[np.argmax(g < -tol)]) * 0.9
        frac = max(0.05, min(frac, 0.95))
        worst = frac if worst is None else min(worst, frac)
    return worst


_DIP = 4.0 / 27.0 * (1.0 + 1e-12)  # the largest |h10(s)|, |h11(s)| on [0, 1]
_HERMITE_S = np.linspace(0.0, 1.0, 9)[1:-1]
_H00 = 2 * _HERMITE_S**3 - 3 * _HERMITE_S**2 + 1
_H10 = _HERMITE_S**3 - 2 * _HERMITE_S**2 + _HERMITE_S
_H01 = -2 * _HERMITE_S**3 + 3 * _HERMITE_S**2
_H11 = _HERMITE_S**3 - _HERMITE_S**2


def commit(contacts, start, end, h) -> bool:
    """After an accepted step: dissipated energy (trapezoidal in the step, from the
    samples at both ends), then the open/stick/slip switches (from the samples at the
    end, taken under the states before the switch). Whether a state changed."""
    changed = False
    for c, k0, k1 in zip(contacts, start, end, strict=True):
        c.state.dissipated += 0.5 * h * (k0.dissipation + k1.dissipation)
        mode, v_onset, anchor = c.state.mode, c.state.v_onset, c.state.anchor
        c.commit(k1)
        changed = (changed or c.state.mode != mode or c.state.v_onset != v_onset
                   or c.state.anchor is not anchor)
    return changed


class ContactRest(ConvergenceError):
    """An impulse contact comes to rest (impacts slower than the law's v_rest)."""


def apply_impulses(system, contacts, q, qd, t, tol, found=None) -> tuple[np.ndarray, dict]:
    """Newton's restitution law at the impacts found at (q, q̇): for the ``Impulse``
    contacts with gap ≤ tol that approach (v_n < 0), the velocity jump Δq̇ solves

        [M  Φ_qᵀ  J_nᵀ] [Δq̇]   [0]
        [Φ_q  0    0  ] [ μ ] = [0]
        [J_n  0    0  ] [ P ]   [−(1 + e) v_n]

    (J_n: the normal rows n·(J_b − J_a) of the impacting contacts), so the joints stay
    satisfied at velocity level and v_n⁺ = −e v_n⁻; least squares when simultaneous
    contacts are dependent (a flat block on four corners), and contacts whose impulse
    P = −(the multiplier) would pull (P < 0) are dropped and the rest solved again.
    Each contact's lost energy is −P (v_n⁻ + v_n⁺)/2 = P |v_n⁻| (1 − e)/2. Returns the
    new q̇ and {name: lost [J]}; raises :class:`ContactRest` when an approach is slower
    than the law's ``v_rest``. ``found``: the contacts' samples at (q, q̇), if at hand
    (only those with gap ≤ tol and v_n < 0 are then evaluated again)."""
    hit = []
    for k, c in enumerate(contacts):
        if not c.law.impulsive:
            continue
        if found is not None and not (found[k].gap <= tol and found[k].v_n < 0):
            continue
        kin = c.kinematics(system, q, qd)
        if kin.gap <= tol and kin.v_n < 0:
            if -kin.v_n < c.law.v_rest:
                raise ContactRest(
                    f"impulse contact {c.name!r} comes to rest at t = {t:.6g} s (approach "
                    f"speed {-kin.v_n:.3g} m/s < v_rest = {c.law.v_rest:g} m/s): the "
                    f"bounces die out in finite time; the impulse law models impacts only "
                    f"— use a force law (penalty, Hertz, ...) for lasting contact")
            row = np.zeros(system.n_q)
            row[kin.b.sl] += kin.normal @ kin.b.jac
            row[kin.a.sl] -= kin.normal @ kin.a.jac
            hit.append((c, row, kin.v_n))
    if not hit:
        return qd, {}
    m = np.asarray(system.mass_matrix(q, sparse=False))
    jac = np.asarray(system.jacobian(q, t, sparse=False))
    n, nc = system.n_q, jac.shape[0]
    while hit:
        jn = np.array([row for _, row, _ in hit])
        ni = len(hit)
        kkt = np.zeros((n + nc + ni, n + nc + ni))
        kkt[:n, :n] = m
        kkt[:n, n:n + nc], kkt[n:n + nc, :n] = jac.T, jac
        kkt[:n, n + nc:], kkt[n + nc:, :n] = jn.T, jn
        b = np.zeros(n + nc + ni)
        b[n + nc:] = [-(1.0 + c.law.e) * v for c, _, v in hit]
        x = np.linalg.lstsq(kkt, b, rcond=1e-12)[0]
        impulses = -x[n + nc:]  # the physical normal impulses (the multipliers' opposite)
        if np.all(impulses >= -1e-12 * max(1.0, np.max(np.abs(impulses)))):
            break
        hit = [h for h, p in zip(hit, impulses, strict=True) if p > 0]
    if not hit:
        return qd, {}
    new = qd + x[:n]
    lost = {}
    for (c, _, v), p in zip(hit, impulses, strict=True):
        share = float(p * (-v) * (1.0 - c.law.e) / 2.0)
        c.state.impacts += 1
        c.state.dissipated += share
        lost[c.name] = share
    return new, lost
