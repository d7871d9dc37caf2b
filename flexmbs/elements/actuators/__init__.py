"""Joint actuators with a time profile. (docs/compiled.md, "Adding an element kind")."""
