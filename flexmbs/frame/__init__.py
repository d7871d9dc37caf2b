"""Rotation kinematics with Euler parameters (docs/theory_ffrf.md §1)."""
