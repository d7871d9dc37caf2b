"""Exact derivatives of the step equations with respect to the state (docs/gradients.md,
"The step Jacobian").

The Newton iteration of a run may use tangents that only steer it (a servo's rotor
inertia leaves some third-order terms out; user callables are differenced forward), but
the adjoint needs the derivative of the converged equations themselves. So:

* K_t = ∂r/∂q and C_t = ∂r/∂q̇ come from the analytic tangents of
  :mod:`flexmbs.assembly.tangents` — bodies, constraint Hessians, forces — except for
  the forces whose own tangents are incomplete (a servo with a rotor inertia, whose
  mass term also depends on q) or missing (a force whose value a user callable gives):
  those are taken by central differences of their own contribution r_f = M_f q̈ − Q_f
  over their own rows (a callable's over all columns), O(ε²) ≈ 1e-10 relative;
* Z = ∂(Φ_q q̇ + Φ_t)/∂q (the stabilized index-2 form's velocity rows) from the bilinear
  forms of the constraint plan, Z_k = Σ_ab S_kab (J_a q̇)ᵀ J_b + Σ_a W_kaᵀ J̇_a (J̇ the
  markers' ``marker_jac_rate``), 2 ṗᵀ on normalization rows, and θ̇ Φ_q(θ + π/2) for
  the Φ_t of rotation drives.
"""

from __future__ import annotations

import math

import numpy as np

from ..assembly.constraints import bilinear_coefficients
from ..assembly.tangents import constraint_hessian
from ..elements.bushing.parameters import pair_state
from ..elements.constraints.parameters import rotation_row

#: Relative step of the central differences of forces without exact tangents.
FD_STEP = 1e-6


def _force_contribution(system, force, q, qd, qdd, t):
    """r_f (n_q,) = M_f q̈ − Q_f of one force (M_f its own inertia, a servo's rotor)."""
    out = np.zeros(system.n_q)
    force.apply(system, q, qd, t, out)
    out = -out
    part = force.mass_block(system, q) if hasattr(force, "mass_block") else None
    if part is not None:
        idx, block = part
        out[idx] += block @ qdd[idx]
    return out


def _needs_differences(force) -> bool:
    """Whether ``force``'s tangents are not exact and have no exact completion here: a
    force-kind servo with a rotor inertia, or a value from a user callable of the state."""
    if getattr(force, "element_kind", None) == "joint_servo":
        return bool(force.reflected_inertia) and force.kind != "torque"
    if getattr(force, "element_kind", None) == "joint_actuator":
        return force.profile is None
    return False


def _servo_tangents(system, servo, q, qd, qdd, t):
    """(idx, K, C) of a torque servo with a rotor: the controller's exact tangents (its
    rotor part through q̇ taken out) plus the rotor's exact ones (:mod:`.rotor`)."""
    from .rotor import rotor_correction

    idx, k, c = servo.tangents(system, q, qd, t)
    _, k_r, c_r = rotor_correction(system, servo, q, qd, qdd)
    return idx, k + k_r, c + c_r


def force_tangents_central(system, force, q, qd, qdd, t, cols):
    """(K, C) (n_q, n_q) of one force's r_f by central differences over ``cols``."""
    n = system.n_q
    k, c = np.zeros((n, n)), np.zeros((n, n))
    memory = dict(system.angle_memory)
    for col in cols:
        for mat, base in ((k, q), (c, qd)):
            step = FD_STEP * max(1.0, abs(base[col]))
            plus, minus = base.copy(), base.copy()
            plus[col] += step
            minus[col] -= step
            if mat is k:
                hi = _force_contribution(system, force, plus, qd, qdd, t)
                lo = _force_contribution(system, force, minus, qd, qdd, t)
            else:
                hi = _force_contribution(system, force, q, plus, qdd, t)
                lo = _force_contribution(system, force, q, minus, qdd, t)
            mat[:, col] = (hi - lo) / (2 * step)
            system.angle_memory = dict(memory)
    return k, c


def _profile_actuator_tangents(system, force, q, qd, t):
    """(idx, K, C) of a joint actuator whose value u(t) is a time profile: the load
    u z_i on the pair at a value that does not depend on the state (exact)."""
    from ..elements.marker_pairs import (
        MarkerPair,
        pair_load_tangent,
        rotation_partials,
        translation_partials,
    )

    pair = MarkerPair(system, force.marker_i, force.marker_j, q, qd)
    if force.kind == "torque":
        parts = rotation_partials(system, pair, force.name)
    else:
        parts = translation_partials(pair)
    zi, dz = parts[2], parts[6]
    u = float(force.profile.eval(t)[0])
    k, c = pair_load_tangent(pair, u * zi, u * dz, np.zeros((3, pair.idx.size)),
                             force.kind)
    return pair.idx, k, c


def needs_numpy_tangents(force) -> bool:
    """Whether the compiled engine's tangents of ``force`` are not its exact derivative
    (:mod:`.jacobian_source`): a joint servo with a rotor inertia, or a value from a
    state-dependent callable."""
    from ..elements.declaration import input_is_callable

    if getattr(force, "element_kind", None) == "joint_servo":
        return bool(force.reflected_inertia)
    return input_is_callable(force)


def force_tangents(system, forces, q, qd, qdd, t):
    """(K, C) dense (n_q, n_q): the exact ∂r_f/∂q and ∂r_f/∂q̇ of the given ``forces``
    (see the module docstring)."""
    n = system.n_q
    k_t, c_t = np.zeros((n, n)), np.zeros((n, n))
    for force in forces:
        if _needs_differences(force):
            part = None
        elif getattr(force, "element_kind", None) == "joint_servo" and \
                force.reflected_inertia:
            part = _servo_tangents(system, force, q, qd, qdd, t)
        else:
            part = force.tangents(system, q, qd, t)
        if part is None and getattr(force, "profile", None) is not None:
            part = _profile_actuator_tangents(system, force, q, qd, t)
        if part is None:
            if hasattr(force, "reflected_inertia"):  # its own rows and columns
                from ..elements.marker_pairs import MarkerPair

                cols = MarkerPair(system, force.marker_i, force.marker_j, q, qd).idx
            else:
                cols = np.arange(n)
            k_f, c_f = force_tangents_central(system, force, q, qd, qdd, t, cols)
            k_t += k_f
            c_t += c_f
        else:
            idx, k_f, c_f = part
            k_t[np.ix_(idx, idx)] += k_f
            c_t[np.ix_(idx, idx)] += c_f
    return k_t, c_t


def exact_tangents(system, q, qd, qdd, lam, t):
    """(K_t, C_t) dense (n_q, n_q): ∂r/∂q and ∂r/∂q̇ of r = M q̈ + Φ_qᵀλ − Q, exact (see
    the module docstring)."""
    n = system.n_q
    k_t, c_t = np.zeros((n, n)), np.zeros((n, n))
    g = system.model.gravity
    for body, sl in zip(system.bodies, system.slices, strict=True):
        k_b, c_b = body.residual_tangents(q[sl], qd[sl], qdd[sl], g)
        k_t[sl, sl] += k_b
        c_t[sl, sl] += c_b
    for row in system.constraint_rows:
        if row.kind == "coordinate":
            continue
        if row.kind == "norm":
            s = system.slices[row.body_i].start + 3
            k_t[s:s + 4, s:s + 4] += 2.0 * lam[row.rows][0] * np.eye(4)
            continue
        idx, hess = constraint_hessian(system, row, q, lam, t)
        k_t[np.ix_(idx, idx)] += hess
    k_f, c_f = force_tangents(system, system.model.forces, q, qd, qdd, t)
    return k_t + k_f, c_t + c_f


_FORMS: dict = {}


def _forms(kind, m, theta, drive):
    """(S = C + Cᵀ, l) of ``kind``'s m equations; joints' (constant) kept once."""
    if not drive and (kind, m) in _FORMS:
        return _FORMS[(kind, m)]
    coef, lin = bilinear_coefficients(kind, m, theta)
    out = (coef + coef.transpose(0, 2, 1), lin)
    if not drive:
        _FORMS[(kind, m)] = out
    return out


def velocity_constraint_jacobian(system, q, qd, t) -> np.ndarray:
    """Z (n_c, n_q) = ∂(Φ_q q̇ + Φ_t)/∂q at fixed q̇ (see the module docstring)."""
    from ..model.drives import drive_values

    z = np.zeros((system.n_c, system.n_q))
    for row in system.constraint_rows:
        if row.kind == "coordinate":
            continue
        if row.kind == "norm":
            s = system.slices[row.body_i].start + 3
            z[row.rows.start, s:s + 4] = 2.0 * qd[s:s + 4]
            continue
        spec = row.spec
        m = row.rows.stop - row.rows.start
        theta = drive_values(spec, t) if row.kind == "drive" else (0.0, 0.0, 0.0)
        sym, lin = _forms(spec.kind, m, theta, row.kind == "drive")
        vecs, jac, qd_loc, idx = pair_state(system, spec.marker_i, spec.marker_j, q, qd)
        bi, mi, sli = system.marker_info(spec.marker_i)
        bj, mj, slj = system.marker_info(spec.marker_j)
        ni = sli.stop - sli.start
        rate = np.zeros_like(jac)
        rate[:4, :, :ni] = bi.marker_jac_rate(q[sli], qd[sli], mi)
        rate[4:, :, ni:] = bj.marker_jac_rate(q[slj], qd[slj], mj)
        v_dot = jac @ qd_loc  # (8, 3)
        weights = sym @ vecs + lin  # (m, 8, 3)
        rows = (np.einsum("kab,ai,bin->kn", sym, v_dot, jac)
                + np.einsum("kai,ain->kn", weights, rate))
        if row.kind == "drive" and spec.kind == "rotation":
            rows[0] += theta[1] * rotation_row(vecs, jac, theta[0] + 0.5 * math.pi)[1]
        z[row.rows.start:row.rows.stop][:, idx] += rows
    return z
