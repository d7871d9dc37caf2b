"""Parameter derivatives of the joint servo's control law (docs/gradients.md,
"Parameter derivatives"; the law is :mod:`.reference`'s).

Unsaturated, the motor torque τ_m = kp n (θ_ref − θ) + kd n (θ̇_ref − θ̇) + b is linear
in the gains and the reference; saturated it is ±τ_max. The joint receives
τ = η n τ_m (its rotor-inertia part −n² J_m θ̈ holds no controller parameter), and the
generalized force is τ times a vector of the geometry: the derivative is exact.
"""

from __future__ import annotations


def motor_torque_derivative(angle, rate, ref, ref_rate, kp, kd, ratio, saturated,
                            sign=1.0, d_kp=0.0, d_kd=0.0, d_ref=0.0, d_ref_rate=0.0,
                            d_limit=0.0) -> float:
    """dτ_m [N m] for changes of the gains dkp [N m/rad], dkd [N m s/rad], of the
    reference dθ_ref [rad], dθ̇_ref [rad/s] and of the torque limit dτ_max [N m] at the
    joint angle θ and rate θ̇; ``saturated`` with ``sign`` the sign of the clipped
    torque (then only the limit counts)."""
    if saturated:
        return sign * d_limit
    return (d_kp * ratio * (ref - angle) + d_kd * ratio * (ref_rate - rate)
            + kp * ratio * d_ref + kd * ratio * d_ref_rate)


def joint_torque_derivative(tau_motor, d_tau_motor, ratio, efficiency,
                            d_efficiency=0.0) -> float:
    """dτ [N m] on the joint of τ = η n τ_m for dτ_m and a change dη of the efficiency."""
    return ratio * (efficiency * d_tau_motor + d_efficiency * tau_motor)
