"""Rigid bodies. (docs/compiled.md, "Adding an element kind")."""
