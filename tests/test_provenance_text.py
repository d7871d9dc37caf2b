"""The provenance text of `flexmbs modes` (flexmbs.modal.provenance.format_provenance):
long lists of what was left out are shortened, lists by kind each on their own."""

from __future__ import annotations

from flexmbs.modal.provenance import format_provenance


def _summary(dropped: dict) -> dict:
    return {"files": {"file": "part.op2"}, "mapping": {"format": "nastran-op2"},
            "units": {"source": "SI", "stated_by": "given"},
            "mass": {"total_kg": 1.0, "modal_mass_vs_phi_M_phi_max": 0.0},
            "preparation": [], "dropped": dropped}


def test_long_lists_left_out_are_shortened_each_kind_on_its_own():
    """500 scalar points (extse04c's) were printed in one line of 4000 characters."""
    ids = list(range(100001, 100501))
    lines = format_provenance(_summary({
        "points_dropped": {"what": "points", "items": {"scalar_points": ids,
                                                       "extra_points": [7, 8]}},
        "dropped_nodes": {"what": "nodes", "items": list(range(1, 10))},
        "rigid_modes_dropped": {"what": "rigid modes", "items": 6}}))
    text = "\n".join(lines)
    assert ("scalar_points [100001, 100002, 100003, 100004, 100005, 100006, 100007, "
            "100008] ... (500 in all); extra_points [7, 8]") in text
    assert "nodes: [1, 2, 3, 4, 5, 6, 7, 8] ... (9 in all)" in text
    assert "rigid modes: 6" in text
    assert max(len(line) for line in lines) < 200
