"""The equations of motion in joint coordinates at one state: joint coordinates, rates
and accelerations of a model's revolute and prismatic joints from the absolute state,
forward dynamics (the joint accelerations under the model's forces) and inverse
dynamics (the joint torques and forces that give prescribed joint accelerations)
(docs/urdf.md, "Joint space").

A joint's coordinate is the one of its sensors: the angle s of x_j about z_i
(revolute) or the displacement s = z_iᵀ(r_j − r_i) (prismatic). Its rate ṡ = a(q) q̇
is linear in q̇ (:func:`flexmbs.elements.marker_pairs.rotation_partials`,
``translation_partials``), so its acceleration is s̈ = a(q) q̈ + (∂ṡ/∂q) q̇.

Forward dynamics solves the index-1 system ``[M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q; γ]`` at the state
(:func:`flexmbs.integrators.reference.accelerations`, the consistent initial
accelerations of every run). Inverse dynamics adds to the model one drive per joint
(a rotation or translation drive on the joint's markers, s_d(t) = s + ṡ t + ½ s̈_d t²
at t = 0) and solves the same system: the drives' multipliers are the joint
torques [N m] and forces [N], τ = −λ_drive, that an actuator on the joint (a
``joint-torque`` or ``joint-force``, positive turning or pushing marker j along +z_i)
must apply.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ValidationError

#: Joint kinds with a coordinate here, and the drive that prescribes it.
DRIVES = {"revolute": "rotation", "prismatic": "translation"}


def _specs(system, joints):
    specs = {j.name: j for j in system.model.joints}
    out = []
    for name in joints:
        spec = specs.get(name)
        if spec is None:
            raise ValidationError(f"joint {name!r} is not a joint of the model (joints: "
                                  f"{sorted(specs)})")
        if spec.kind not in DRIVES:
            raise ValidationError(f"joint {name!r} is {spec.kind}; joint coordinates are "
                                  f"taken of revolute and prismatic joints")
        out.append(spec)
    return out


def joint_coordinates(system, joints, q, qd, qdd=None):
    """(s, ṡ, s̈) of ``joints`` (names, or one name) at the absolute state (q, q̇, q̈):
    [rad or m], [rad/s or m/s], [rad/s² or m/s²], one entry per joint; s̈ is None
    without ``qdd``. Angles lie in (−π, π]."""
    from ..elements.marker_pairs import MarkerPair, rotation_partials, translation_partials

    joints = [joints] if isinstance(joints, str) else joints
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    n = len(joints)
    s, sd, sdd = np.zeros(n), np.zeros(n), None if qdd is None else np.zeros(n)
    for k, spec in enumerate(_specs(system, joints)):
        pair = MarkerPair(system, spec.marker_i, spec.marker_j, q, qd)
        if spec.kind == "revolute":
            s[k], sd[k], _, _, rate_dq, rate_dqd, _ = rotation_partials(system, pair, None)
        else:
            s[k], sd[k], _, _, rate_dq, rate_dqd, _ = translation_partials(pair)
        if qdd is not None:
            sdd[k] = rate_dqd @ np.asarray(qdd, float)[pair.idx] + rate_dq @ qd[pair.idx]
    return s, sd, sdd


def joint_accelerations(system, joints, q, qd, t: float = 0.0) -> np.ndarray:
    """Forward dynamics: s̈ of ``joints`` (names, or one name) [rad/s² or m/s²] at the
    state (q, q̇, t) under the model's forces (gravity, springs, actuators), from the
    index-1 system."""
    from ..integrators.reference import accelerations

    qdd, _ = accelerations(system, q, qd, t)
    return joint_coordinates(system, joints, q, qd, qdd)[2]


def inverse_dynamics(system, joints, q, qd, accelerations, t: float = 0.0) -> np.ndarray:
    """Inverse dynamics: the torques [N m] (revolute) and forces [N] (prismatic) on
    ``joints`` (names, or one name) that give them the joint ``accelerations`` at the
    state (q, q̇, t), besides the model's own forces (module docstring). Coordinates that the listed
    joints leave free (a floating base, modal coordinates, joints not listed) move as
    the dynamics says meanwhile. The listed joints must not already be driven (their
    drives' equations would repeat)."""
    from ..assembly import System
    from ..integrators.reference import accelerations as solve
    from ..model.builder import DriveSpec
    from ..model.drives import Polynomial

    joints = [joints] if isinstance(joints, str) else joints
    acc = np.asarray(accelerations, dtype=float).ravel()
    if acc.shape != (len(joints),) or not np.all(np.isfinite(acc)):
        raise ValidationError(f"accelerations must be {len(joints)} finite numbers (one per "
                              f"joint), got shape {acc.shape}")
    specs = _specs(system, joints)
    s, sd, _ = joint_coordinates(system, joints, q, qd)
    drives = tuple(DriveSpec(f"@inverse:{spec.name}", DRIVES[spec.kind],
                             Polynomial((s[k] - sd[k] * t + 0.5 * acc[k] * t * t,
                                         sd[k] - acc[k] * t, 0.5 * acc[k])),
                             spec.marker_i, spec.marker_j)
                   for k, spec in enumerate(specs))
    model = replace(system.model, drives=system.model.drives + drives, initial=(),
                    sensors=())
    driven = System(model, **system.overrides)
    _, lam = solve(driven, q, qd, t)
    rows = [r.rows.start for r in driven.constraint_rows if r.name in
            {d.name for d in drives}]
    return -lam[rows]
