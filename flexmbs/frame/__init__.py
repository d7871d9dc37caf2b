"""Rotation kinematics with Euler parameters (ARCHITECTURE.md §3, FFRF.md §1)."""
