"""Joint servos: PD(+I) control of a revolute joint's angle through an optional motor and
gear (docs/servos.md, docs/compiled.md "Adding an element kind")."""
