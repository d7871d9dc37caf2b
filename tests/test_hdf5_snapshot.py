"""The in-memory snapshot the checksummed readers read from (flexmbs._files.hdf5_snapshot):
every group, dataset and attribute as h5py itself gives them, whatever their types,
though it reads them through HDF5's lower-level calls."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

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
        f.create_dataset("null", data=h5py.Empty("f8"))  # (a null dataspace)
        # numbers of one kind in several sizes and byte orders, read one after another
        # (the memory types are kept per type: one per kind would convert them wrongly)
        for dtype in ("|u1", "|i1", "<i4", "<i8", ">i8", "<u2", "<f4", "<f8", ">f8", "<c8",
                      "<c16"):
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
        assert hdf5_digest(f) == _digest_through_h5py(f)


def _digest_through_h5py(f) -> str:
    """hdf5_digest's SHA-256 with every object listed and read by h5py's high-level
    calls (``visititems``, ``obj.attrs``, ``obj[()]``): what the files written before
    the digest read them through HDF5's own calls were sealed with."""
    import hashlib

    from flexmbs._files import CHECKSUM_ATTR, _array_bytes, _attr_bytes

    items = []
    f.visititems(lambda name, obj: items.append((name, obj)))
    digest = hashlib.sha256()
    for name, obj in [("", f), *sorted(items, key=lambda item: item[0])]:
        digest.update(name.encode() + b"\0")
        for key in sorted(obj.attrs):
            if name == "" and key == CHECKSUM_ATTR:
                continue
            digest.update(key.encode() + b"=" + _attr_bytes(obj.attrs[key], False) + b"\0")
        if isinstance(obj, h5py.Dataset):
            data = np.ascontiguousarray(obj[()])
            digest.update(data.dtype.str.encode() + repr(data.shape).encode())
            digest.update(_array_bytes(data))
    return digest.hexdigest()


def test_open_hdf5_opens_as_h5py_does(tmp_path):
    """open_hdf5's file: read-only, with the access h5py gives ``File(path, "r")``
    (library versions, alignment, cache), and an OSError for a file that is not HDF5."""
    from flexmbs._files import open_hdf5

    path = tmp_path / "plain.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(3.0)
    with h5py.File(path, "r") as ref, open_hdf5(path) as got:
        assert got.mode == "r" and got.filename == ref.filename
        np.testing.assert_array_equal(got["x"][()], ref["x"][()])
        mine, theirs = got.id.get_access_plist(), ref.id.get_access_plist()
        for getter in ("get_libver_bounds", "get_alignment", "get_cache",
                       "get_fclose_degree", "get_driver"):
            assert getattr(mine, getter)() == getattr(theirs, getter)(), getter
    (tmp_path / "text.h5").write_text("not HDF5")
    with pytest.raises(OSError):
        open_hdf5(tmp_path / "text.h5")
