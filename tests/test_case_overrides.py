"""Dotted-key overrides of a case (flexmbs.cases.overrides, load_case(path, overrides)):
Python values are taken as TOML would hold them."""

from __future__ import annotations

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
