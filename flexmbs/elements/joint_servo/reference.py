"""The joint servo's control law, shared by the NumPy declaration
(:class:`flexmbs.model.servos.JointServo`) and written out again in the compiled kernels
(:mod:`flexmbs.elements.joint_servo.kernels`); docs/servos.md, "The control law".

Motor side (subscript m) and joint side: the motor angle is θ_m = n θ (n the gear
ratio), so the motor-side error is e_m = n (θ_ref − θ) and

    τ_m = kp e_m + kd ė_m + b,   τ_m ← clip(τ_m, −τ_max, τ_max),
    τ   = η n τ_m − n² J_m θ̈                                  [N m] about z_i on j,

b the offset torque (the integral term ki ∫ e_m dt, held over a step). Without a motor
n = η = 1 and J_m = 0: a PD(+I) on the joint. Units: angles [rad], torques [N m], kp
[N m/rad], kd [N m s/rad] (motor side when a motor is given).
"""

from __future__ import annotations

import math


def motor_torque(angle, rate, ref, ref_rate, kp, kd, offset, limit, ratio):
    """(τ_m [N m], saturated): the controller's motor torque for joint angle θ and rate θ̇
    [rad, rad/s] against the reference θ_ref, θ̇_ref, clipped to ±``limit``."""
    tau = kp * ratio * (ref - angle) + kd * ratio * (ref_rate - rate) + offset
    if tau > limit:
        return limit, True
    if tau < -limit:
        return -limit, True
    return tau, False


def joint_torque(tau_motor, acceleration, ratio, efficiency, rotor_inertia):
    """τ [N m] on the joint: η n τ_m through the gear less the rotor's reflected inertia
    torque n² J_m θ̈ (θ̈ [rad/s²] the joint's angular acceleration)."""
    return efficiency * ratio * tau_motor - ratio * ratio * rotor_inertia * acceleration


def torque_slopes(saturated, kp, kd, ratio, efficiency):
    """(∂τ/∂θ, ∂τ/∂θ̇) of the controller's part of the joint torque [N m/rad, N m s/rad]:
    −η n² kp and −η n² kd, zero when saturated."""
    if saturated:
        return 0.0, 0.0
    scale = efficiency * ratio * ratio
    return -scale * kp, -scale * kd


def check_limit(limit) -> float:
    """The torque limit as a float (inf: none)."""
    return math.inf if limit is None else float(limit)
