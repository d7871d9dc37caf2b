"""The layout of format version 2 of the native modal-data format
(docs/modal_data_formats.md): what describes the arrays (units, frame, metadata, mode
kinds, the mass's kind and shape, the node sets' names and starts, the invariants'
mass and isotropy) in one JSON dataset /header, and all node sets' indices in one
dataset, however many sets there are. Files of version 1 (attributes, and a dataset
per node set) are read as before."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
from conftest import make_modal_kwargs, native_header, rewrite_hdf5, set_native_header
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.errors import ReadError
from flexmbs.modal import ModalData, read_modal, write_modal

N_NODES = 6

_names = st.text(min_size=1, max_size=12)  # any characters: "/", ".", quotes, non-ASCII
_sets = st.dictionaries(_names.filter(lambda name: name != "root"),
                        st.lists(st.integers(0, N_NODES - 1), max_size=N_NODES), max_size=8)


def _data(node_sets: dict, **more) -> ModalData:
    """A body attached at node 0 (its own set) with ``node_sets`` as well."""
    kwargs = make_modal_kwargs(n_nodes=N_NODES)
    kwargs["node_sets"] = {**node_sets, "root": [0]}
    return ModalData(**{**kwargs, **more})


def _objects(path) -> list[str]:
    names = []
    with h5py.File(path, "r") as f:
        f.visit(names.append)
    return names


def _same(a: ModalData, b: ModalData) -> None:
    for name in ("nodes", "phi", "M_ff", "K_ff", "node_ids", "constraint_fraction"):
        np.testing.assert_array_equal(getattr(b, name), getattr(a, name), err_msg=name)
    assert abs(sp_dense(b.mass) - sp_dense(a.mass)).max() == 0
    for name in ("mode_kinds", "units", "reference_frame", "attach_set", "metadata"):
        assert getattr(b, name) == getattr(a, name), name
    assert list(b.node_sets) == list(a.node_sets)
    for key, idx in a.node_sets.items():
        np.testing.assert_array_equal(b.node_sets[key], idx)
    for name in ("M0", "N", "Q", "S0", "S"):
        np.testing.assert_array_equal(getattr(b.invariants, name),
                                      getattr(a.invariants, name), err_msg=name)
    assert b.invariants.mass == a.invariants.mass


def sp_dense(mass):
    return mass.toarray() if hasattr(mass, "toarray") else np.asarray(mass)


@settings(max_examples=40, deadline=None)
@given(_sets)
def test_node_sets_of_any_names_and_sizes_come_back_as_written(tmp_path_factory, sets):
    """Every set, empty ones and names with any character included, comes back with its
    name, indices and order; the file holds one dataset for them whatever their number,
    and the root only the attributes that say what the file is and its checksum."""
    path = tmp_path_factory.mktemp("sets") / "body.fmd.h5"
    data = _data(sets)
    write_modal(data, path)
    _same(data, read_modal(path))
    assert [name for name in _objects(path) if "node_set" in name] == ["node_set_indices"]
    with h5py.File(path, "r") as f:
        assert sorted(f.attrs) == ["checksum", "format", "format_version"]


def _as_version_1(f) -> None:
    """The open version-2 file rewritten in the layout of format version 1."""
    h = json.loads(bytes(f["header"][()]).decode())
    indices, starts = f["node_set_indices"][()], h["node_sets"]["starts"]
    for name in ("header", "node_set_indices"):
        del f[name]
    for key in ("units", "reference_frame", "attach_set"):
        f.attrs[key] = h[key]
    f.attrs["metadata"] = json.dumps(h["metadata"])
    f.attrs["checks_revision"] = h["checks_revision"]
    f.attrs["format_version"] = 1
    f.create_dataset("mode_kinds", data=np.array(h["mode_kinds"], dtype="S16"))
    f.create_dataset("constraint_fraction", data=np.array(h["constraint_fraction"]))
    f["mass"].attrs["kind"] = h["mass"]["kind"]
    if h["mass"]["kind"] == "consistent":
        f["mass"].attrs["shape"] = h["mass"]["shape"]
    f["invariants"].attrs["mass"] = h["invariants"]["mass"]
    f["invariants"].attrs["isotropic"] = h["invariants"]["isotropic"]
    group = f.create_group("node_sets")
    for k, name in enumerate(h["node_sets"]["names"]):
        group.create_dataset(f"set_{k}", data=indices[starts[k]:starts[k + 1]]
                             ).attrs["name"] = name


def _mass(kind: str) -> dict:
    """ModalData arguments of a lumped, a consistent (isotropic) or a direction-dependent
    mass (its M_ff = Φᵀ M Φ to match)."""
    import scipy.sparse as sp

    if kind == "lumped":
        return {}
    kwargs = make_modal_kwargs(n_nodes=N_NODES)
    diag = np.repeat(kwargs["mass"], 3)
    if kind == "anisotropic":
        diag = diag * np.tile([1.0, 2.0, 3.0], N_NODES)
    phi = kwargs["phi"]
    return {"mass": sp.diags(diag).tocsr(), "M_ff": phi.T @ (diag[:, None] * phi)}


def _rich(kind: str) -> ModalData:
    return _data({"a/b.c": [1, 2], "none": [], "all": list(range(N_NODES))},
                 metadata={"source": "test", "n": 3}, mode_kinds=["normal", "constraint",
                                                                  "normal"],
                 constraint_fraction=[0.1, 0.8, 0.3], **_mass(kind))


@pytest.mark.parametrize("kind", ["lumped", "consistent", "anisotropic"])
def test_a_file_of_format_version_1_is_read_as_the_same_data(tmp_path, kind):
    """The same data in either version (a direction-dependent mass has no Shabana set of
    invariants: the header's isotropy says how to read /invariants)."""
    data = _rich(kind)
    assert data.invariants.isotropic == (kind != "anisotropic")
    path = write_modal(data, tmp_path / "v2.fmd.h5")
    _same(data, read_modal(path))
    rewrite_hdf5(path, _as_version_1)
    assert "node_sets/set_1" in _objects(path) and "header" not in _objects(path)
    _same(data, read_modal(path))


def test_a_sealed_version_1_file_keeps_its_stamp_and_stored_invariants(tmp_path,
                                                                      monkeypatch):
    """A sealed version-1 file of this checks' revision is read without the value checks,
    with the invariants it stores (changed here to tell them from computed ones); an
    unsealed one is checked and its invariants computed, its /invariants attributes
    not needed (files hand-made or older than the checksum)."""
    from test_native_checked_once import _Counted

    data = _rich("consistent")
    path = write_modal(data, tmp_path / "v1.fmd.h5")

    def to_version_1(f):
        _as_version_1(f)
        values = f["invariants"][()]
        f["invariants"][...] = values * (1 + 1e-9)  # still finite, not the computed ones

    rewrite_hdf5(path, to_version_1)
    counted = _Counted(monkeypatch)
    back = read_modal(path)
    assert (counted.calls, counted.consistency) == (0, 0)
    np.testing.assert_array_equal(back.invariants.M0, data.invariants.M0 * (1 + 1e-9))

    def unsealed(f):
        f["invariants"][...] = 0.0
        for key in ("mass", "isotropic"):
            del f["invariants"].attrs[key]

    rewrite_hdf5(path, unsealed, seal=False)
    back = read_modal(path)
    assert counted.calls > 0 and counted.consistency == 1
    np.testing.assert_allclose(back.invariants.M0, data.invariants.M0, rtol=1e-12)


def _edit(header, change):
    change(header)
    return header


@pytest.mark.parametrize("change, says", [
    (lambda h: h["node_sets"].update(starts=[0, 2, 1, 3, 4]), "node_sets starts"),
    (lambda h: h["node_sets"].update(starts=[0, 1, 3, 4]), "node_sets starts"),
    (lambda h: h["node_sets"].update(starts=[1, 1, 3, 4, 4]), "node_sets starts"),
    (lambda h: h["node_sets"].update(starts=[0, 1, 3, 4, 9]), "node_sets starts"),
    (lambda h: h["node_sets"].update(starts=[0, 1, "x", 4, 5]), "entry .node_sets."),
    (lambda h: h["node_sets"].update(names=["a", "a", "b", "root"]), "distinct"),
    (lambda h: h["node_sets"].update(names={"a": 1}), "distinct texts"),
    (lambda h: h["node_sets"].update(starts=[0, 1.5, 3, 4, 5]), "entry 'node_sets'"),
    (lambda h: h["node_sets"].update(starts=[0, True, 3, 4, 5]), "entry 'node_sets'"),
    (lambda h: h.pop("units"), "entry 'units' must be a JSON str"),
    (lambda h: h.update(mode_kinds="normal"), "entry 'mode_kinds' must be a JSON list"),
    (lambda h: h.update(mode_kinds=[1, 2, 3]), "entry 'mode_kinds' must be a list of"),
    (lambda h: h.update(metadata=[1]), "entry 'metadata' must be a JSON dict"),
    (lambda h: h.update(constraint_fraction=["a", 0, 0]), "entry 'constraint_fraction'"),
    (lambda h: h["mass"].pop("kind"), "entry 'mass'"),
    (lambda h: h["mass"].update(kind="dense"), "entry 'mass'"),
    (lambda h: h["mass"].update(shape=[6.5]), "entry 'mass'"),
    (lambda h: h["invariants"].pop("isotropic"), "entry 'invariants'"),
    (lambda h: h["invariants"].update(isotropic="false"), "entry 'invariants'"),
    (lambda h: h["invariants"].update(mass="x"), "entry 'invariants'"),
    (lambda h: h.update(checks_revision=True), "entry 'checks_revision'"),
])
def test_a_header_that_does_not_fit_is_a_read_error_naming_the_entry(tmp_path, change,
                                                                      says):
    """A file without a checksum (hand-made, or with the checksum removed) whose /header
    disagrees with itself or the arrays: a ReadError naming the file and the entry."""
    path = write_modal(_data({"a": [0], "b": [1, 2], "c": [3]}), tmp_path / "bad.fmd.h5")
    header = _edit(native_header(path), change)
    rewrite_hdf5(path, lambda f: set_native_header(f, header), seal=False)
    with pytest.raises(ReadError, match=rf"^\S*bad\.fmd\.h5: /header .*{says}") as err:
        read_modal(path)
    assert "damaged" not in str(err.value) and str(err.value).count("bad.fmd.h5") == 1


@pytest.mark.parametrize("text, says", [("[1, 2]", "must be a JSON object"),
                                        ("{\"units\": ", "is not JSON text"),
                                        (b"\xff\xfe", "is not JSON text")])
def test_a_header_that_is_not_a_json_object_is_a_read_error(tmp_path, text, says):
    path = write_modal(_data({}), tmp_path / "bad.fmd.h5")

    def change(f):
        del f["header"]
        f.create_dataset("header", data=np.bytes_(text))

    rewrite_hdf5(path, change, seal=False)
    with pytest.raises(ReadError, match=rf"^\S*bad\.fmd\.h5: /header {says}"):
        read_modal(path)


def test_metadata_keys_are_written_as_json_takes_them_or_named(tmp_path):
    """NumPy scalar keys go in as Python's (JSON makes numbers strings, as for int
    keys); a key JSON cannot take is a ValidationError naming the entry, and no file."""
    from flexmbs.errors import ValidationError

    path = tmp_path / "keys.fmd.h5"
    write_modal(_data({}, metadata={"per_node": {np.int64(3): np.float32(1.5), 4: [1, 2]}}),
                path)
    assert read_modal(path).metadata["per_node"] == {"3": 1.5, "4": [1, 2]}
    bad = tmp_path / "bad.fmd.h5"
    with pytest.raises(ValidationError, match=r"metadata\['runs'\]\[0\] has the key \(1, 2\)"):
        write_modal(_data({}, metadata={"runs": [{(1, 2): "a"}]}), bad)
    assert not bad.exists()
