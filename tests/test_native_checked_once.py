"""A sealed native modal file is checked once, when written (docs/modal_data_formats.md,
"Checked once"): read back, its values are not checked again (finite, symmetric,
definite, indices in range, the mass against the modes) while the file is unchanged
since (its checksum) and stamped by the checks of this revision. Any other file (no
checksum, an older revision, no stamp) has every value checked, and the data read is
the same either way."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_modal_kwargs, native_header, rewrite_hdf5, set_native_header
from hypothesis import given, settings
from hypothesis import strategies as st

import flexmbs.modal.data_checks as data_checks
from flexmbs.errors import ReadError, ValidationError
from flexmbs.modal import ModalData, read_modal, write_modal


class _Counted:
    """data_checks' value checks, counted."""

    def __init__(self, monkeypatch):
        self.calls = 0
        run = data_checks._RUN

        def counted(check):
            def call(*args, **kwargs):
                self.calls += 1
                return check(*args, **kwargs)
            return call

        monkeypatch.setattr(data_checks, "_RUN", data_checks._ValueChecks(
            *(counted(check) for check in run)))
        self.consistency = 0
        mass_check = ModalData._check_mass_consistency

        def consistency(data):
            self.consistency += 1
            return mass_check(data)

        monkeypatch.setattr(ModalData, "_check_mass_consistency", consistency)


def _data(seed: int, n_modes: int, consistent: bool, sets: bool) -> ModalData:
    kwargs = make_modal_kwargs(n_nodes=6, n_modes=n_modes, seed=seed)
    if consistent:
        kwargs["mass"] = sp.diags(np.repeat(kwargs["mass"], 3)).tocsr()
    if sets:  # more sets, and cells
        kwargs["node_sets"].update(middle=np.array([2, 3]), all=np.arange(6))
        kwargs["cells"] = {"line": np.array([[k, k + 1] for k in range(5)])}
    return ModalData(**kwargs)


def _same(a: ModalData, b: ModalData) -> None:
    for field in dataclasses.fields(ModalData):
        if field.name.startswith("_"):
            continue
        x, y = getattr(a, field.name), getattr(b, field.name)
        if sp.issparse(x):
            assert sp.issparse(y) and (x != y).nnz == 0, field.name
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), field.name
        elif isinstance(x, dict):
            assert x.keys() == y.keys(), field.name
            for key in x:
                assert np.array_equal(x[key], y[key]), (field.name, key)
        else:
            assert x == y, field.name


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_modes=st.integers(1, 4), consistent=st.booleans(),
       sets=st.booleans())
def test_a_sealed_file_of_this_revision_reads_the_same_without_the_checks(
        tmp_path_factory, seed, n_modes, consistent, sets):
    data = _data(seed, n_modes, consistent, sets)
    path = write_modal(data, tmp_path_factory.mktemp("m") / "b.fmd.h5")
    assert native_header(path)["checks_revision"] == data_checks.CHECKS_REVISION
    with pytest.MonkeyPatch.context() as monkeypatch:
        counted = _Counted(monkeypatch)
        trusted = read_modal(path)
        assert (counted.calls, counted.consistency) == (0, 0)
        header = {k: v for k, v in native_header(path).items() if k != "checks_revision"}
        rewrite_hdf5(path, lambda f: set_native_header(f, header))  # no stamp
        checked = read_modal(path)
        assert counted.calls > 0 and counted.consistency == 1
    _same(trusted, checked)
    _same(trusted, data)


@pytest.mark.parametrize("how", ["older revision", "no checksum", "no stamp"])
def test_any_other_file_has_its_values_checked(tmp_path, monkeypatch, how):
    path = write_modal(_data(3, 2, True, True), tmp_path / "b.fmd.h5")

    header = native_header(path)

    def damage(f):  # a value no check of any revision lets through
        phi = f["phi"][()]
        phi[4, 1] = np.nan
        f["phi"][...] = phi
        if how == "older revision":
            set_native_header(f, {**header,
                                  "checks_revision": data_checks.CHECKS_REVISION - 1})
        elif how == "no stamp":
            del header["checks_revision"]
            set_native_header(f, header)

    rewrite_hdf5(path, damage, seal=how != "no checksum")
    with pytest.raises(ReadError, match=r"b\.fmd\.h5: ModalData\.phi must be finite"):
        read_modal(path)


def test_a_copy_of_data_read_unchecked_is_checked(tmp_path, monkeypatch):
    path = write_modal(_data(4, 3, False, False), tmp_path / "b.fmd.h5")
    counted = _Counted(monkeypatch)
    data = read_modal(path)
    assert counted.calls == 0
    dataclasses.replace(data, metadata={"copy": True})
    assert counted.calls > 0 and counted.consistency == 1


def test_data_changed_in_place_after_its_checks_is_checked_when_written(tmp_path):
    """A ModalData's arrays and sets can be changed after it was made; the writer
    checks the values as they are before it stamps the file as checked."""
    data = _data(5, 2, True, True)
    data.nodes[0, 0] = np.inf
    with pytest.raises(ValidationError, match=r"b\.fmd\.h5: not written: ModalData\.nodes "
                                              r"must be finite"):
        write_modal(data, tmp_path / "b.fmd.h5")
    assert not (tmp_path / "b.fmd.h5").exists()
    data = _data(5, 2, True, True)
    data.node_sets["extra"] = np.array([-1, 3])
    with pytest.raises(ValidationError, match=r"node_sets\['extra'\] names node index -1"):
        write_modal(data, tmp_path / "c.fmd.h5")
