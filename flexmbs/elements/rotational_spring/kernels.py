"""Rotational spring–dampers in compiled code: torque −k (θ − θ0) − c θ̇ about z_i on
marker j with its reaction on i, θ unwrapped against the last angle like
``System.unwrap``; K and C through θ (the marker axes' Jacobians), θ̇ (the angular
Jacobians and their rate ∂(Ω q̇)/∂q) and z_i(q) (docs/compiled.md). The NumPy
counterpart: :class:`flexmbs.model.forces.RotationalSpringDamper`.
"""

from __future__ import annotations

import numpy as np

from ...compiled._jit import njit
from ...compiled.packing import (
    NO,
    TORQUE,
    W_ANGLES,
    W_FORCE_VEC,
    W_MK_V,
    W_X3,
    W_X3N,
    YES,
    floats1,
    floats2,
    floats3,
    ints2,
)
from ..joint_coordinate import pair_angle_partials, pair_angle_state
from ..markers import _apply_load, _pair_load_tangents
from ..registry import header_rows

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_T_MARK, T_T_PAR = header_rows("t_mark", "t_par")


@njit(cache=True)
def torsion_state(F, IN, H, WF, WI, WH, s, qd, store):
    """(θ [rad], θ̇ [rad/s]) of rotational spring–damper s
    (:func:`~flexmbs.elements.joint_coordinate.pair_angle_state`, its angle memory in slot s;
    ω_j − ω_i into W_PAIR_RATE). Needs the marker vectors and body frames of the last residual
    in the workspace."""
    T_t_mark = ints2(IN, H, T_T_MARK)
    return pair_angle_state(F, IN, H, WF, WI, WH, T_t_mark[s, 0], T_t_mark[s, 1], s, qd,
                            store)


@njit(cache=True)
def torsion_loads(F, IN, H, WF, WI, WH, q, qd, r, store, with_spring):
    """r −= Q of the rotational spring–dampers: τ z_i on marker j, −τ z_i on i, with
    τ = −k (θ − θ0) − c θ̇ (:func:`torsion_state`; the angle stored when ``store``);
    ``with_spring`` False: the damper part −c θ̇ only (for the power of the outputs)."""
    T_t_mark = ints2(IN, H, T_T_MARK)
    T_t_par = floats2(F, H, T_T_PAR)
    W_mk_v = floats3(WF, WH, W_MK_V)
    vec = floats2(WF, WH, W_FORCE_VEC)[0]
    for s in range(T_t_mark.shape[0]):
        angle, rate = torsion_state(F, IN, H, WF, WI, WH, s, qd, store)
        torque = -T_t_par[s, 1] * rate
        if with_spring:
            torque -= T_t_par[s, 0] * (angle - T_t_par[s, 2])
        if torque == 0.0:
            continue
        ki, kj = T_t_mark[s, 0], T_t_mark[s, 1]
        for c in range(3):
            vec[c] = torque * W_mk_v[ki, 3, c]
        _apply_load(F, IN, H, WF, WI, WH, kj, vec, TORQUE, 1.0, q, r)
        _apply_load(F, IN, H, WF, WI, WH, ki, vec, TORQUE, -1.0, q, r)


@njit(cache=True)
def torsion_tangents_into(F, IN, H, WF, WI, WH, q, qd, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of the rotational spring–dampers, K = −∂Q/∂q,
    C = −∂Q/∂q̇ of Q = [−Ω_iᵀ; Ω_jᵀ](τ z_i), τ = −k (θ − θ0) − c θ̇, with
    ∂θ = (cos θ ∂(x_j·y_i) − sin θ ∂(x_j·x_i)) / ρ² through the marker axes' Jacobians,
    ∂θ̇/∂q = (ω_j − ω_i)ᵀ ∂z_i + z_iᵀ[−∂(Ω_i q̇_i), ∂(Ω_j q̇_j)] and ∂θ̇/∂q̇ = z_iᵀ[−Ω_i, Ω_j]
    (forces._rotation_partials). The angle memory is read, not moved."""
    T_t_mark = ints2(IN, H, T_T_MARK)
    T_t_par = floats2(F, H, T_T_PAR)
    W_mk_v = floats3(WF, WH, W_MK_V)
    x3n, vec = floats3(WF, WH, W_X3N), floats2(WF, WH, W_X3)[3]
    dz, rows, g_dq, g_dqd = x3n[1], x3n[3], x3n[4], x3n[5]
    for s in range(T_t_mark.shape[0]):
        angle, rate = torsion_state(F, IN, H, WF, WI, WH, s, qd, NO)
        ki, kj = T_t_mark[s, 0], T_t_mark[s, 1]
        _, n = pair_angle_partials(F, IN, H, WF, WI, WH, ki, kj, q, qd)
        z_i = W_mk_v[ki, 3]
        k_t, c_t, angle0 = T_t_par[s, 0], T_t_par[s, 1], T_t_par[s, 2]
        torque = -k_t * (angle - angle0) - c_t * rate
        for c in range(n):
            for e in range(3):  # ∂(τ z_i)/∂q, ∂(τ z_i)/∂q̇
                g_dq[e, c] = z_i[e] * (-k_t * rows[0, c] - c_t * rows[1, c]) \
                    + torque * dz[e, c]
                g_dqd[e, c] = z_i[e] * (-c_t * rows[2, c])
        for e in range(3):
            vec[e] = torque * z_i[e]
        _pair_load_tangents(F, IN, H, WF, WI, WH, ki, kj, TORQUE, q, top, k_scale, c_scale)


@njit(cache=True)
def torsion_potential(F, IN, H, WF, WI, WH, qd, refs, pot):
    """pot plus the rotational springs' potential Σ ½ k (θ − θ0)² [J] at an output, each
    angle taking its turns from ``refs`` (the angle the run recorded; NaN: continue from
    the previous output), from the markers of the residual in the workspace."""
    T_t_mark, T_t_par = ints2(IN, H, T_T_MARK), floats2(F, H, T_T_PAR)
    angles = floats1(WF, WH, W_ANGLES)
    for s in range(T_t_mark.shape[0]):  # the angle's turns from the run
        if not np.isnan(refs[s]):
            angles[s] = refs[s]
        angle, _ = torsion_state(F, IN, H, WF, WI, WH, s, qd, YES)
        pot += 0.5 * T_t_par[s, 0] * (angle - T_t_par[s, 2]) ** 2
    return pot

