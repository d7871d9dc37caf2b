"""Constant point and distributed loads. (docs/compiled.md, "Adding an element kind")."""
