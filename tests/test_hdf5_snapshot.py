"""The in-memory snapshot the checksummed readers read from (flexmbs._files.hdf5_snapshot):
every group, dataset and attribute as h5py itself gives them, whatever their types,
though it reads them through HDF5's lower-level calls."""

from __future__ import annotations

import h5py
import numpy as np

from flexmbs._files import HDF5Node, hdf5_digest, hdf5_snapshot, seal_hdf5


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, h5py.Empty):
        return a.dtype == b.dtype
    if isinstance(a, float) and a != a:
        return b != b
    return bool(a == b)


def _write(path):
    with h5py.File(path, "w") as f:
        f.attrs["text"] = "flexmbs — ünïcode"
        f.attrs["number"] = 2.5
        f.attrs["integer"] = np.int32(-7)
        f.attrs["vector"] = np.array([1.0, np.nan, 3.0])
        f.attrs["fixed"] = np.bytes_(b"abc")
        f.attrs["texts"] = ["a", "bc", ""]
        f.attrs.create("ascii", "abc", dtype=h5py.string_dtype("ascii"))
        f.attrs.create("ascii_texts", ["de", "f"], dtype=h5py.string_dtype("ascii"))
        f.attrs.create("empty", h5py.Empty("f8"))
        f.attrs.create("rows", np.arange(6.0).reshape(2, 3), dtype=np.dtype("(3,)f8"))
        g = f.create_group("group/inner")
        g.attrs["flag"] = True
        f.create_dataset("group/matrix", data=np.arange(12.0).reshape(3, 4))
        f.create_dataset("scalar", data=3.0)
        f.create_dataset("labels", data=np.array([b"x", b"yz"]))
        f.create_dataset("names", data=["one", "two"], dtype=h5py.string_dtype())
        f.create_dataset("nothing", data=np.zeros((0, 3)))
        # numbers of one kind in several sizes and byte orders, read one after another
        # (the memory types are kept per type: one per kind would convert them wrongly)
        for dtype in ("<i4", "<i8", ">i8", "<u2", "<f4", "<f8", ">f8", "<c8", "<c16"):
            values = np.arange(6) - 2.5
            values = (values + 0.25j if dtype[1] == "c" else values).astype(dtype)
            f.create_dataset(f"numbers/{dtype[1:]}{dtype[0] == '>'}", data=values)
            f["numbers"].attrs[f"{dtype[1:]}{dtype[0] == '>'}"] = values[:3]
        d = f.create_dataset("compressed", data=np.linspace(0, 1, 500), compression="gzip")
        d.attrs["unit"] = "m"
        seal_hdf5(f)


def test_the_snapshot_holds_what_h5py_reads(tmp_path):
    path = tmp_path / "kinds.h5"
    _write(path)
    with h5py.File(path, "r") as f:
        snap = hdf5_snapshot(f)
        objects = [("", f)]
        f.visititems(lambda name, obj: objects.append((name, obj)))
        for name, obj in objects:
            node = snap[name] if name else snap
            assert isinstance(node, HDF5Node)
            want = dict(obj.attrs)
            assert set(node.attrs) == set(want), name
            for key, value in want.items():
                assert _same(value, node.attrs[key]), (name, key, value, node.attrs[key])
            if isinstance(obj, h5py.Dataset):
                assert _same(obj[()], node[()]), name
            else:
                assert set(node.keys()) == set(obj.keys()), name
        assert hdf5_digest(snap) == hdf5_digest(f) == f.attrs["checksum"]
