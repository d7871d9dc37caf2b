"""The compiled numeric system: coordinate layout, Φ, Φ_q, Φ_t, γ, M(q), Q(q, q̇, t);
DOF and redundancy analysis, assembly, velocity projection, kinematic analysis."""

from .kinematics import KinematicResult, kinematic_analysis
from .system import DofReport, System

__all__ = ["DofReport", "KinematicResult", "System", "kinematic_analysis"]
