"""Dotted-key overrides of a case (flexmbs.cases.overrides, load_case(path, overrides)):
Python values are taken as TOML would hold them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.cases import load_case
from flexmbs.cases.overrides import apply_overrides

CASE = Path(__file__).resolve().parents[1] / "cases" / "seed_pendulum.toml"


@pytest.mark.parametrize("gravity", [(0, -9.81, 0), [0, -9.81, 0],
                                     np.array([0.0, -9.81, 0.0])])
def test_gravity_as_a_tuple_list_or_array(gravity):
    """A tuple was refused ("must be a list of 3 numbers, got (0, -9.81, 0)"), while the
    docs give gravity as a tuple to ModelBuilder."""
    model = load_case(CASE, {"model.gravity": gravity}).model
    np.testing.assert_array_equal(model.gravity, [0.0, -9.81, 0.0])


@settings(max_examples=50, deadline=None)
@given(st.recursive(st.floats(allow_nan=False) | st.integers() | st.text(max_size=4),
                    lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=3),
                    max_leaves=8))
def test_override_values_become_toml_values(value):
    """Tuples become lists at every depth; the rest stays as given."""
    raw: dict = {}
    apply_overrides(raw, {"solver.x": value})

    def plain(v):
        return [plain(e) for e in v] if isinstance(v, (tuple, list)) else v

    def no_tuples(v):
        return not isinstance(v, tuple) and (not isinstance(v, list)
                                             or all(no_tuples(e) for e in v))

    assert raw["solver"]["x"] == plain(value) and no_tuples(raw["solver"]["x"])


ARM = Path(__file__).resolve().parents[1] / "cases" / "arm_beam_seed.toml"


def _marker(case, full_name):
    return case.model.markers[full_name]


def test_a_marker_name_on_several_bodies_is_named_with_its_body(tmp_path):
    """The arm has a marker O on ground, link1 and link2: 'markers.O.…' changed the first
    alone, silently; it is refused now, and 'markers.link2.O.…' reaches that one, as the
    same edit in the file does."""
    from flexmbs.cases.case import CaseKeyError

    with pytest.raises(CaseKeyError, match=r"3 \[\[markers\]\] entries are named 'O' "
                                           r"\(ground.O, link1.O, link2.O\)"):
        load_case(ARM, {"markers.O.z_axis": [1, 0, 0]})
    text = ARM.read_text().replace("../modal_data/", f"{ARM.parents[1] / 'modal_data'}/")
    edited = text.replace('body = "link2"\nname = "O"\n',
                          'body = "link2"\nname = "O"\nposition = [0.01, 0.02, 0.0]\n', 1)
    assert edited != text
    path = tmp_path / "edited.toml"
    path.write_text(edited)
    by_file = _marker(load_case(path), "link2.O")
    by_key = _marker(load_case(ARM, {"markers.link2.O.position": [0.01, 0.02, 0.0]}),
                     "link2.O")
    np.testing.assert_array_equal(by_key.position, by_file.position)
    assert not np.array_equal(_marker(load_case(ARM), "link2.O").position, by_key.position)


def test_an_initial_entry_is_named_by_its_joint():
    case = load_case(ARM.parent / "urdf_arm.toml", {"initial.elbow.angle_deg": 10.0})
    entry = next(e for e in case.source["overrides"].items())
    assert entry == ("initial.elbow.angle_deg", 10.0)


def test_overrides_are_checked_and_recorded_as_the_file_would_hold_them():
    """An override outside a case file's magnitudes is refused as the file's own value is
    (it ran); a NumPy array is recorded as a list (its printed text before, which does
    not replay); a single coordinate name in fixed is that name, not its letters."""
    from flexmbs.cases.case import CaseError

    with pytest.raises(CaseError, match=r"key 'bodies\[0\].mass' = 1e-300 lies outside"):
        load_case(CASE, {"bodies.bob.mass": 1e-300})
    case = load_case(CASE, {"model.gravity": np.array([0.0, -5.0, 0.0])})
    assert case.source["overrides"] == {"model.gravity": [0.0, -5.0, 0.0]}
    body = load_case(CASE, {"bodies.bob.fixed": "x"}).model.bodies["bob"]
    assert body.fixed == (0,)


@pytest.mark.parametrize("case, key, value, message", [
    ("arm_beam_seed", "forces.tau1.stiffness", 100.0,
     "key 'stiffness' does not apply to type 'joint-torque' (its keys: i, j, value)"),
    ("seed_pendulum", "bodies.bob.modes", 2, "key 'modes' does not apply to a rigid body"),
    ("cantilever_release", "bodies.beam.mass", 100.0,
     "key 'mass' does not apply to a flexible body"),
    ("ball_drop", "contacts.impact.clearance", 0.001,
     "key 'clearance' does not apply to type 'sphere-plane'"),
    ("slider_crank_clearance", "contacts.pin.radius_b", 0.01,
     "key 'radius_b' does not apply to type 'clearance-revolute'"),
    ("spin_up_beam", "drives.spin.coordinate", "beam.x",
     "key 'coordinate' does not apply to type 'rotation'"),
])
def test_a_key_of_another_type_is_an_error(case, key, value, message):
    """Keys that another type reads were accepted and ignored: a joint torque with a
    stiffness, a flexible body with a mass, a sphere-plane contact with a clearance ran
    as if they were not there (docs/case_files.md: unknown keys are errors)."""
    from flexmbs.cases.case import CaseError

    path = CASE.parent / f"{case}.toml"
    with pytest.raises(CaseError, match=re.escape(message)):
        load_case(path, {key: value})
