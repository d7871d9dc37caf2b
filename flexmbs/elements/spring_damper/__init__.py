"""Translational spring–damper–actuators. (docs/compiled.md, "Adding an element kind")."""
