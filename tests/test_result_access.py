"""Reading histories out of a SimulationResult by name: a body, coordinate or node that
the results do not have is a clear error naming what there is (a bare KeyError, or an
empty array, before)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flexmbs.cases import load_case, run_case
from flexmbs.errors import FlexmbsError
from flexmbs.results.histories import tip_history

CASE = Path(__file__).resolve().parents[1] / "cases" / "arm_beam_seed.toml"


@pytest.fixture(scope="module")
def result():
    return run_case(load_case(CASE), t_end=0.01)[1]


def test_a_rigid_or_missing_body_has_no_modal_coordinates(result):
    for name, what in (("link1", "not a flexible body"), ("nope", "no body")):
        with pytest.raises(FlexmbsError, match=rf"'{name}' is {what}.*\['beam'\]"):
            result.modal_coordinates(name)
    with pytest.raises(FlexmbsError, match=r"no coordinate 'beam\.xi9'.*link1\.x"):
        result.coordinate("beam.xi9")
    np.testing.assert_array_equal(result.coordinate("beam.xi1"),
                                  result.modal_coordinates("beam")[:, 0])


def test_a_nodes_history_takes_a_row_index_of_the_node_table(result):
    """node=k: Φ rows of node k times ξ (from the stored body description); an index
    outside the table, a label string or a bool is refused."""
    phi = np.asarray(result.bodies["beam"]["phi"])
    count = len(result.bodies["beam"]["nodes"])
    u, k = tip_history(result, "beam", node=count - 1)
    assert k == count - 1
    np.testing.assert_allclose(u, result.modal_coordinates("beam") @ phi[-3:].T,
                               rtol=1e-15, atol=0)
    for bad in (count, -1, "tip", True, 2.0):
        with pytest.raises(FlexmbsError, match=rf"0 … {count - 1}"):
            tip_history(result, "beam", node=bad)
