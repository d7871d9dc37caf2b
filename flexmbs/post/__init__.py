"""Post-processing: plots (and, later, animations and ParaView export)."""
