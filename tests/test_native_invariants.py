"""The inertia invariants stored in the native modal file (docs/modal_data_formats.md,
"The invariants are computed once"): written once, read back instead of computed, and
always equal to what compute_invariants gives for the arrays read, which this test
computes independently."""

from __future__ import annotations

from unittest import mock

import h5py
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_modal_kwargs, rewrite_hdf5
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.errors import ReadError
from flexmbs.modal import ModalData, read_modal, write_modal
from flexmbs.modal.invariants import compute_invariants

FIELDS = ("M0", "N", "Q", "S0", "S", "J0", "J1", "J2")


def _data(seed: int, n_modes: int, kind: str) -> ModalData:
    """Lumped, isotropic consistent, anisotropic consistent (a random SPD 3N × 3N mass
    with couplings between directions), or lumped with rotational shapes (psi)."""
    kwargs = make_modal_kwargs(n_nodes=7, n_modes=n_modes, seed=seed)
    rng = np.random.default_rng(seed + 100)
    phi, masses = kwargs["phi"], kwargs["mass"]
    if kind == "isotropic":
        kwargs["mass"] = sp.diags(np.repeat(masses, 3)).tocsr()
    elif kind == "anisotropic":
        blocks = []
        for m in masses:
            a = rng.normal(size=(3, 3))
            blocks.append(m * np.eye(3) + 0.1 * m * (a @ a.T))
        mass = sp.block_diag(blocks).tocsr()
        kwargs["mass"] = mass
        kwargs["M_ff"] = phi.T @ (mass @ phi)
    elif kind == "rotations":
        kwargs["psi"] = rng.normal(size=phi.shape)
        kwargs["psi"][:3] = 0.0
    return ModalData(**kwargs)


def _computed(data: ModalData):
    return compute_invariants(data.nodes, data.phi, data.mass, data.psi,
                              data.generalized_shapes)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_modes=st.integers(1, 5),
       kind=st.sampled_from(["lumped", "isotropic", "anisotropic", "rotations"]))
def test_stored_invariants_are_exactly_those_of_the_arrays_read(tmp_path_factory, seed,
                                                                n_modes, kind):
    path = write_modal(_data(seed, n_modes, kind), tmp_path_factory.mktemp("m") / "b.fmd.h5")
    with h5py.File(path, "r") as f:
        assert "invariants" in f  # written with the data
    with mock.patch("flexmbs.modal.data.compute_invariants", side_effect=AssertionError(
            "computed again on reading")):
        back = read_modal(path)  # taken from the file
    fresh = _computed(back)
    assert back.invariants.isotropic == fresh.isotropic
    assert back.invariants.mass == fresh.mass
    for name in FIELDS:
        mine, theirs = getattr(back.invariants, name), getattr(fresh, name)
        assert (mine is None) == (theirs is None), name
        if mine is not None:
            np.testing.assert_array_equal(mine, theirs, err_msg=name)


def test_invariants_of_the_wrong_size_are_a_read_error_naming_them(tmp_path):
    path = write_modal(_data(1, 3, "lumped"), tmp_path / "b.fmd.h5")

    def shorten(f):
        values = f["invariants"][()]
        attrs = dict(f["invariants"].attrs)
        del f["invariants"]
        f.create_dataset("invariants", data=values[:-1]).attrs.update(attrs)

    rewrite_hdf5(path, shorten)
    with pytest.raises(ReadError, match=r"b\.fmd\.h5.*/invariants holds \(\d+,\) values"):
        read_modal(path)


def test_a_file_without_a_checksum_has_its_invariants_computed(tmp_path):
    """Stored invariants are believed only with the checksum that binds them to the
    shapes and the mass: without it they are computed from the arrays."""
    data = _data(2, 2, "isotropic")
    path = write_modal(data, tmp_path / "b.fmd.h5")

    def falsify(f):
        f["invariants"][0] = f["invariants"][0] * 2.0

    rewrite_hdf5(path, falsify, seal=False)
    with mock.patch("flexmbs.modal.data.compute_invariants", wraps=compute_invariants) as spy:
        back = read_modal(path)
    assert spy.call_count == 1
    np.testing.assert_array_equal(back.invariants.M0, _computed(back).M0)


def test_files_written_before_the_invariants_were_stored_still_read(tmp_path):
    data = _data(3, 2, "rotations")
    path = write_modal(data, tmp_path / "b.fmd.h5")
    rewrite_hdf5(path, lambda f: f.__delitem__("invariants"))
    with mock.patch("flexmbs.modal.data.compute_invariants", wraps=compute_invariants) as spy:
        back = read_modal(path)
    assert spy.call_count == 1  # computed, as before
    np.testing.assert_array_equal(back.invariants.N, _computed(back).N)
