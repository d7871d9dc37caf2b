"""Flexible bodies (floating frame of reference, modal coordinates)
(docs/compiled.md, "Adding an element kind")."""
