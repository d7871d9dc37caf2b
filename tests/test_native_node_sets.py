"""Node sets in the native modal-data format (docs/modal_data_formats.md): since format
version 2 all of a file's node sets live in three datasets (their indices one set after
the other, where each starts, their names as JSON), however many there are; files of
version 1 (one dataset per set) are read as before."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
from conftest import make_modal_kwargs, rewrite_hdf5
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.errors import ReadError
from flexmbs.modal import ModalData, read_modal, write_modal
from flexmbs.modal.io import native

N_NODES = 6

_names = st.text(min_size=1, max_size=12)  # any characters: "/", ".", quotes, non-ASCII
_sets = st.dictionaries(_names.filter(lambda name: name != "root"),
                        st.lists(st.integers(0, N_NODES - 1), max_size=N_NODES), max_size=8)


def _data(node_sets: dict) -> ModalData:
    """A body attached at node 0 (its own set) with ``node_sets`` as well."""
    kwargs = make_modal_kwargs(n_nodes=N_NODES)
    kwargs["node_sets"] = {**node_sets, "root": [0]}
    return ModalData(**kwargs)


def _objects(path) -> list[str]:
    names = []
    with h5py.File(path, "r") as f:
        f.visit(names.append)
    return names


@settings(max_examples=40, deadline=None)
@given(_sets)
def test_node_sets_of_any_names_and_sizes_come_back_as_written(tmp_path_factory, sets):
    """Every set, empty ones and names with any character included, comes back with its
    name, indices and order; the file holds three datasets for them whatever their
    number."""
    path = tmp_path_factory.mktemp("sets") / "body.fmd.h5"
    write_modal(_data(sets), path)
    back = read_modal(path)
    assert list(back.node_sets) == [*sets, "root"]
    for name, idx in sets.items():
        np.testing.assert_array_equal(back.node_sets[name], idx)
    kept = [name for name in _objects(path) if "node_set" in name]
    assert sorted(kept) == ["node_set_indices", "node_set_names", "node_set_offsets"]


def _as_version_1(f) -> None:
    """The node sets of the open file rewritten in the layout of format version 1."""
    sets = native._read_node_sets("x", f, 2)
    for name in ("node_set_indices", "node_set_offsets", "node_set_names"):
        del f[name]
    group = f.create_group("node_sets")
    for k, (name, idx) in enumerate(sets.items()):
        group.create_dataset(f"set_{k}", data=idx).attrs["name"] = name
    f.attrs["format_version"] = 1


def test_a_file_of_format_version_1_is_read_with_its_sets(tmp_path):
    sets = {"a/b.c": [1, 2], "none": [], "all": list(range(N_NODES)), "root": [0]}
    path = write_modal(_data(sets), tmp_path / "v1.fmd.h5")
    rewrite_hdf5(path, _as_version_1)
    assert "node_sets/set_1" in _objects(path)
    back = read_modal(path)
    assert list(back.node_sets) == list(sets)
    for name, idx in sets.items():
        np.testing.assert_array_equal(back.node_sets[name], idx)


def _set(name, value):
    def change(f):
        del f[name]
        f.create_dataset(name, data=value)
    return change


@pytest.mark.parametrize("name, value, says", [
    ("node_set_offsets", np.array([0, 2, 1, 3, 4]), "node_set_offsets"),  # falls back
    ("node_set_offsets", np.array([0, 1, 3, 4]), "node_set_offsets"),     # one set short
    ("node_set_offsets", np.array([1, 1, 3, 4, 4]), "node_set_offsets"),  # not from 0
    ("node_set_offsets", np.array([0, 1, 3, 4, 9]), "node_set_offsets"),  # past the end
    ("node_set_offsets", np.array([0.0, 1, 3, 4, 5]), "node_set_offsets"),  # not integers
    ("node_set_names", np.bytes_(b"[\"a\", "), "node_set_names"),         # not JSON
    ("node_set_names", np.bytes_(json.dumps(["a", "a", "b", "root"])), "distinct"),
    ("node_set_names", np.bytes_(json.dumps({"a": 1})), "distinct names"),
    ("node_set_names", np.bytes_(b"\xff\xfe"), "node_set_names"),        # not UTF-8
])
def test_node_sets_that_do_not_fit_are_a_read_error_naming_the_dataset(tmp_path, name,
                                                                        value, says):
    """A file without a checksum (hand-made, or with the checksum removed) whose node
    set datasets disagree: a ReadError naming the file and the dataset."""
    path = write_modal(_data({"a": [0], "b": [1, 2], "c": [3]}), tmp_path / "bad.fmd.h5")
    rewrite_hdf5(path, _set(name, value), seal=False)
    with pytest.raises(ReadError, match=rf"bad\.fmd\.h5: .*{says}"):
        read_modal(path)
