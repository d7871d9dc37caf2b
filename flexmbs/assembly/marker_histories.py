"""Marker frames over a whole run at once, for the sensors (docs/sensors.md).

A marker's point and axes are, on every body kind, v_0 = R + A(p) (s_0 + U_0 ξ) and
v_k = A(p) (s_k + U_k ξ) (docs/theory_ffrf.md §8) with the body's
``marker_shapes`` (s, U), and its angular velocity is ω = G(p) ṗ + A(p) Ψ ξ̇ with the
Ψ of ``jacobian_shapes``. Evaluated here for all outputs in a few array operations:
the same quantities as the bodies' ``marker_frame`` and ``angular_jac`` give output by
output (to round-off), at a cost that does not grow with a Python loop over outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..frame.rotations import angular_velocities, rotation_matrices, rotation_matrix_rates


@dataclass(frozen=True)
class MarkerHistory:
    """A marker over n_t outputs (global components): ``points`` (n_t, 3) [m], ``axes``
    (n_t, 3, 3) with the x, y, z axes as columns, and, when the rates were given,
    ``velocities`` (n_t, 3) [m/s] of the point and ``angular_velocities`` (n_t, 3)
    [rad/s]."""

    points: np.ndarray
    axes: np.ndarray
    velocities: np.ndarray | None = None
    angular_velocities: np.ndarray | None = None


#: From this many outputs on, the array operations; below it the bodies' own
#: ``marker_frame`` output by output is the cheaper (array operations on one or two
#: states cost more than they save: a gradient's sensor probe takes one state at a time).
BATCH_FROM = 8


def marker_history(system, name: str, q, qd=None, velocities: bool = True) -> MarkerHistory:
    """:class:`MarkerHistory` of marker ``name`` ("body.marker") from the states q (and
    rates q̇), (n_t, n_q) each; ``velocities=False``: with the rates, the angular
    velocities only."""
    body, marker, sl = system.marker_info(name)
    q = np.atleast_2d(np.asarray(q, dtype=float))
    n_t = q.shape[0]
    if n_t < BATCH_FROM:
        return _output_by_output(body, marker, sl, q, qd, velocities)
    base, shapes = body.marker_shapes(marker)  # (4, 3), (4, 3, m)
    if sl.stop == sl.start:  # a ground marker does not move
        points = np.broadcast_to(base[0], (n_t, 3)).copy()
        axes = np.broadcast_to(base[1:].T, (n_t, 3, 3)).copy()
        still = None if qd is None else np.zeros((n_t, 3))
        return MarkerHistory(points, axes, still if velocities else None,
                             None if qd is None else np.zeros((n_t, 3)))
    qb = q[:, sl]
    a = rotation_matrices(qb[:, 3:7])
    m = shapes.shape[2]
    body_vectors = (base + (qb[:, 7:7 + m] @ shapes.reshape(12, m).T).reshape(n_t, 4, 3)
                    if m else base)
    # A s of the point and the axes (matmul: a third of einsum's time on these products)
    vectors = body_vectors @ a.transpose(0, 2, 1)
    points = vectors[:, 0] + qb[:, :3]
    axes = vectors[:, 1:].transpose(0, 2, 1)
    if qd is None:
        return MarkerHistory(points, axes)
    qdb = np.atleast_2d(np.asarray(qd, dtype=float))[:, sl]
    speeds = None
    if velocities:  # v = Ṙ + Ȧ s_0 + A U_0 ξ̇
        point_body = np.broadcast_to(body_vectors, (n_t, 4, 3))[:, 0]
        speeds = qdb[:, :3] + np.einsum("tij,tj->ti",
                                        rotation_matrix_rates(qb[:, 3:7], qdb[:, 3:7]),
                                        point_body)
        if m:
            speeds += np.einsum("tij,tj->ti", a, qdb[:, 7:7 + m] @ shapes[0].T)
    omega = angular_velocities(qb[:, 3:7], qdb[:, 3:7])
    psi = body.jacobian_shapes(marker)[0]
    if psi is not None and psi.shape[1]:
        omega += np.einsum("tij,tj->ti", a, qdb[:, 7:7 + psi.shape[1]] @ psi.T)
    return MarkerHistory(points, axes, speeds, omega)


def _output_by_output(body, marker, sl, q, qd, velocities) -> MarkerHistory:
    """:func:`marker_history` from the body's ``marker_frame`` and ``angular_jac`` at
    each output."""
    n_t = q.shape[0]
    points, axes = np.empty((n_t, 3)), np.empty((n_t, 3, 3))
    rates = qd is not None
    speeds = omegas = None
    if rates:
        qd = np.atleast_2d(np.asarray(qd, dtype=float))
        omegas = np.empty((n_t, 3))
        speeds = np.empty((n_t, 3)) if velocities else None
    for k in range(n_t):
        point, frame, jac, _ = body.marker_frame(q[k, sl], marker,
                                                 jac=rates and velocities)
        points[k], axes[k] = point, frame
        if rates:
            if velocities:
                speeds[k] = jac[0] @ qd[k, sl]
            omegas[k] = body.angular_jac(q[k, sl], marker) @ qd[k, sl]
    return MarkerHistory(points, axes, speeds, omegas)


def relative_rotation_history(system, marker_i: str, marker_j: str, q, qd):
    """(θ (n_t,) [rad] in (−π, π], θ̇ (n_t,) [rad/s]) over the outputs: the angle of x_j
    about z_i and z_iᵀ(ω_j − ω_i), as ``relative_rotation`` gives them output by output
    (without its continuation over turns)."""
    frame_i = marker_history(system, marker_i, q, qd, velocities=False)
    frame_j = marker_history(system, marker_j, q, qd, velocities=False)
    x_i, y_i, z_i = (frame_i.axes[:, :, k] for k in range(3))
    x_j = frame_j.axes[:, :, 0]
    angles = np.arctan2(np.einsum("ti,ti->t", x_j, y_i), np.einsum("ti,ti->t", x_j, x_i))
    rates = np.einsum("ti,ti->t", z_i, frame_j.angular_velocities - frame_i.angular_velocities)
    return angles, rates


def relative_translation_history(system, marker_i: str, marker_j: str, q, qd):
    """(d (n_t,) [m], ḋ (n_t,) [m/s]) over the outputs: z_iᵀ(r_j − r_i) and its rate, as
    ``relative_translation`` gives them output by output."""
    frame_i = marker_history(system, marker_i, q, qd)
    frame_j = marker_history(system, marker_j, q, qd)
    z_i = frame_i.axes[:, :, 2]
    return (np.einsum("ti,ti->t", z_i, frame_j.points - frame_i.points),
            np.einsum("ti,ti->t", z_i, frame_j.velocities - frame_i.velocities))
