"""Rotational spring–dampers. (docs/compiled.md, "Adding an element kind")."""
