"""Joints and drives (bilinear forms in marker vectors)
(docs/compiled.md, "Adding an element kind")."""
