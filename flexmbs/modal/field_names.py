"""The names and units of the modal result fields (:mod:`flexmbs.modal.stress` makes the
fields; the results file, plots, JSON and exports name their components from here
without importing it)."""

from __future__ import annotations

#: Components of the fields (their names, for plots, JSON and exports).
FIELD_COMPONENTS = {
    "section_forces": ("N", "Q_y", "Q_z", "T", "M_y", "M_z"),
    "fibre_stress": ("-y-z", "+y-z", "+y+z", "-y+z"),
    "stress": ("xx", "yy", "zz", "yz", "xz", "xy"),
    "shell_stress": tuple(f"{side} {c}" for side in ("top", "bottom")
                          for c in ("xx", "yy", "zz", "yz", "xz", "xy")),
}
FIELD_UNITS = {"section_forces": "N, N, N, N m, N m, N m", "fibre_stress": "Pa",
               "stress": "Pa", "shell_stress": "Pa"}
