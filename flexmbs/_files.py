"""Safe output files: atomic replacement, output checks before long work, and a checksum
of HDF5 contents verified on reading (docs/integrators.md, "Results files").

* :func:`atomic_path` yields a temporary file beside the target; only a complete, flushed
  file is renamed over the target, so an interrupted or failed write leaves the previous
  file as it was (and no half-written file under the target's name).
* :func:`write_text` writes a text file the same way (tables, Markdown, sidecars).
* :func:`atomic_outputs` stages outputs made of several files or a folder (a ParaView
  collection with its VTU folder, XDMF with its HDF5, VTU with its JSON sidecar) in a
  temporary folder beside the targets and moves each into place once all are complete.
* :func:`hdf5_digest` is a SHA-256 over every dataset (name, dtype, shape, bytes) and
  every attribute of an open HDF5 file; the writers store it as the root attribute
  ``checksum`` last, and the readers recompute it (:func:`verify_hdf5`) on the file's
  contents read once into memory (:func:`hdf5_snapshot`), which they then read from.
* :func:`check_output` refuses, before a run, an output that is a folder, sits in a
  folder that cannot be written, or is one of the run's own inputs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np

from .errors import ReadError, WriteError

#: Root attribute holding the SHA-256 of the rest of the file.
CHECKSUM_ATTR = "checksum"


def _unwritable_folder(what: str, path: Path, exc: OSError) -> WriteError:
    """The error for a folder where no file can be created (``exc`` from creating one:
    its message, e.g. "No such file or directory" from /proc, is about the new file)."""
    return WriteError(f"cannot write {what} {str(path)!r}: folder {str(path.parent)!r} is "
                      f"not writable (creating a file there failed: {exc.strerror})")


def file_target(path, what: str = "file") -> Path:
    """The file that writing ``path`` replaces: a symbolic link's target (written through
    the link, which stays), else ``path``. WriteError when it is a folder, or an existing
    node that is not a regular file (a device such as /dev/null, a pipe, a socket): an
    atomic write replaces the file by renaming, which would put a regular file in its
    place."""
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    if target.is_dir():
        raise WriteError(f"cannot write {what} {str(path)!r}: it is a folder")
    with suppress(FileNotFoundError):
        mode = os.stat(target).st_mode
        if not stat.S_ISREG(mode):
            raise WriteError(f"cannot write {what} {str(path)!r}: it is not a regular file "
                             "(a device, pipe or socket); files are written whole and "
                             "renamed into place, which would replace it: give a file "
                             "name")
    return target


@contextmanager
def atomic_path(path, what: str = "file"):
    """Yield a temporary path in ``path``'s folder (same suffixes, so writers that pick a
    format by extension still do); when the block ends without an error the temporary
    file is flushed to disk and renamed over ``path`` (over a symbolic link's target:
    :func:`file_target`), otherwise it is removed."""
    path = file_target(path, what)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part" + "".join(
            path.suffixes), dir=path.parent)
    except OSError as exc:
        raise _unwritable_folder(what, path, exc) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        os.chmod(tmp_path, _new_file_mode(path))  # not mkstemp's owner-only 0600
        yield tmp_path
        with open(tmp_path, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        with suppress(OSError):
            tmp_path.unlink()
        raise


def _new_file_mode(path: Path) -> int:
    """The permissions ``path`` gets when written: those of the file it replaces, else
    what ``open`` would give a new file (0o666 less the process's umask)."""
    with suppress(OSError):
        return stat.S_IMODE(os.stat(path).st_mode)
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where Linux tells it
    (/proc/self/status), else by setting and restoring it."""
    with suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status", encoding="ascii") as status:
            line = next(row for row in status if row.startswith("Umask:"))
        return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text(path, text: str, what: str = "file") -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    path = Path(path)
    with atomic_path(path, what) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def _fsync_tree(path: Path) -> None:
    items = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    for item in items:
        with open(item, "rb+") as handle:
            os.fsync(handle.fileno())


def _move_into_place(staged: Path, target: Path) -> None:
    """Replace ``target`` (a file or a folder) by ``staged``. Files are replaced in one
    rename; a folder is swapped with two renames, the old one removed after."""
    if staged.is_dir():
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old",
                                        dir=target.parent))
            os.replace(target, old / target.name)
        os.replace(staged, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    else:
        if target.is_dir():
            raise WriteError(f"cannot write {str(target)!r}: it is a folder")
        os.replace(staged, target)


@contextmanager
def atomic_outputs(folder, names, what: str = "output"):
    """Yield a temporary folder beside ``folder``/``names``; the caller writes each output
    (a file or a folder) there under its final name. When the block ends without an
    error, everything written is flushed to disk and each name in ``names`` is moved
    over its target in order (put the entry that refers to the others last); otherwise
    the staging folder is removed and the targets are left as they were."""
    folder = Path(folder)
    for name in names:  # (several files written beside each other: through a link the
        # main one would land in another folder than the rest)
        if (folder / name).is_symlink():
            raise WriteError(f"cannot write {what} {str(folder / name)!r}: it is a symbolic "
                             "link, and this output is several files beside each other; "
                             "give the path itself")
        if (folder / name).exists() and not ((folder / name).is_dir()
                                             or (folder / name).is_file()):
            file_target(folder / name, what)  # a device, pipe or socket: refused
    try:
        stage = Path(tempfile.mkdtemp(prefix=".flexmbs-", suffix=".part", dir=folder))
    except OSError as exc:
        raise WriteError(f"cannot write {what} in {str(folder)!r}: the folder is not "
                         f"writable ({exc.strerror})") from None
    try:
        yield stage
        for name in names:
            _fsync_tree(stage / name)
        for name in names:
            _move_into_place(stage / name, folder / name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _array_bytes(values: np.ndarray) -> bytes:
    """The raw bytes of an array; for an array of objects (HDF5's strings of variable
    length), its elements' bytes each: the raw bytes of such an array are the
    addresses of its objects, different at every read."""
    if values.dtype.kind != "O":
        return values.tobytes()
    return b"\0".join(_attr_bytes(item) for item in values.flat)


def _attr_bytes(value, legacy: bool = False) -> bytes:
    """The bytes an attribute contributes to the checksum: arrays and numpy scalars by
    dtype, shape and raw bytes (the same whatever the NumPy version: ``repr`` of a NumPy
    scalar changed in NumPy 2), strings as UTF-8. ``legacy``: the first scheme, repr of
    scalars, which checksums written before the change used."""
    if isinstance(value, np.ndarray):
        return value.dtype.str.encode() + repr(value.shape).encode() + _array_bytes(value)
    if isinstance(value, bytes):
        return value
    if legacy:
        return repr(value).encode()
    if isinstance(value, np.generic):
        return value.dtype.str.encode() + b"()" + value.tobytes()
    if isinstance(value, str):
        return b"str:" + value.encode()
    return repr(value).encode()


class HDF5Node:
    """A group or dataset of an HDF5 file read into memory (:func:`hdf5_snapshot`), with
    the part of h5py's interface the readers use: ``node[name]`` (a child, or with a
    path ``a/b`` a descendant), ``name in node``, ``get(name)``, ``items()``, ``keys()``,
    ``attrs`` (a dict) and, for a dataset, ``node[()]`` (its array) and ``dtype``."""

    __slots__ = ("attrs", "children", "data")

    def __init__(self, attrs: dict, data=None):
        self.attrs, self.data = attrs, data
        self.children: dict[str, HDF5Node] = {}

    @property
    def dtype(self):
        if self.data is None:
            raise AttributeError("a group has no dtype")
        return self.data.dtype

    def __getitem__(self, key):
        if key == ():
            if self.data is None:
                raise TypeError("a group has no values")
            return self.data
        node = self
        for part in str(key).strip("/").split("/"):
            node = node.children[part]
        return node

    def __contains__(self, key) -> bool:
        try:
            self[key]
        except (KeyError, TypeError):
            return False
        return True

    def get(self, key, default=None):
        try:
            return self[key]
        except (KeyError, TypeError):
            return default

    def items(self):
        return self.children.items()

    def keys(self):
        return self.children.keys()


#: The file access property list of :func:`open_hdf5`, made once.
_READ_ACCESS: list = []


def open_hdf5(path):
    """The HDF5 file ``path`` open for reading, as ``h5py.File(path, "r")`` opens it (its
    default access: library versions earliest to latest, no alignment), with that
    access property list made once (h5py makes one per file: an open and close of a
    modal file took 116 µs, now 94). Raises what h5py's opening raises (an OSError)."""
    import h5py

    if not _READ_ACCESS:
        access = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        access.set_libver_bounds(h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_LATEST)
        access.set_alignment(1, 1)
        _READ_ACCESS.append(access)
    return h5py.File(h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDONLY,
                                   fapl=_READ_ACCESS[0]))


def hdf5_snapshot(f, root_attrs: dict | None = None) -> HDF5Node:
    """Every group, dataset and attribute of the open h5py file ``f`` in memory: each
    object read once, so a reader that verifies the checksum (:func:`verify_hdf5` with
    ``keep=True``) reads nothing twice (``root_attrs``: the root's attributes, when the
    reader has them already: :func:`hdf5_root_attributes`). Objects reached only through
    soft or external links, which the checksum does not cover either, are left out.

    The objects are listed with HDF5's own visit, which gives each one's kind and
    attribute count, so only datasets and objects with attributes are opened through
    h5py (opening an object costs tens of µs there: a modal file of 24 objects was
    read in 3.7 ms by ``visititems``, and in well under 1 ms this way)."""
    root = HDF5Node(_attributes(f.id) if root_attrs is None else root_attrs)
    nodes = {"": root}
    for name, raw, is_dataset, n_attrs in _listed(f):
        parent, _, leaf = name.rpartition("/")
        node = HDF5Node(_attributes(f.id, n_attrs, raw) if n_attrs else {},
                        _dataset_values(f, name) if is_dataset else None)
        nodes[parent].children[leaf] = node
        nodes[name] = node
    return root


def _listed(f) -> list:
    """(path, path as bytes, whether a dataset, attribute count) of every object of the
    open h5py file ``f`` but the root, parents before children, from HDF5's own visit
    (hard links only)."""
    import h5py

    entries = []
    h5py.h5o.visit(f.id, lambda raw, info: entries.append(
        (raw.decode(), raw, info.type == h5py.h5o.TYPE_DATASET, info.num_attrs)), info=True)
    return [entry for entry in entries if entry[0] != "."]  # (".": the root, if listed)


def _attributes(loc, count: int | None = None, obj_name: bytes = b".") -> dict:
    """{name: value} of the attributes of the HDF5 object ``obj_name`` below the open
    object ``loc`` (``count`` of them, or as many as it has), the values as h5py's
    ``obj.attrs[name]`` gives them (read here without opening the object, through h5py
    or HDF5: either costs tens of µs)."""
    import h5py

    if count is None:
        count = h5py.h5a.get_num_attrs(loc)
    out = {}
    for i in range(count):
        attr = h5py.h5a.open(loc, index=i, obj_name=obj_name)
        out[attr.name.decode("utf-8", "surrogateescape")] = _attribute_value(attr)
    return out


def hdf5_root_attributes(f) -> dict:
    """{name: value} of the root attributes of the open h5py file ``f``, as ``f.attrs``
    gives them, read without h5py's attribute manager (a third of its cost)."""
    return _attributes(f.id)


def _attribute_value(attr):
    """The value of the low-level attribute ``attr``, as h5py's attribute reader makes
    it (an Empty for an empty dataspace, strings of variable length decoded, arrays of
    one element as scalars)."""
    import h5py

    shape = attr.shape
    if shape is None:
        return h5py.Empty(attr.dtype)
    kind = attr.get_type()  # (cheaper than attr.dtype, which builds NumPy's from it)
    if isinstance(kind, h5py.h5t.TypeStringID) and kind.is_variable_str():
        dtype, memory_type = _vlen_strings(attr, kind.get_cset())
    else:
        dtype = attr.dtype
        memory_type = _memory_type(dtype)
    if dtype.subdtype is not None:  # a top-level array type: its shape onto the array's
        dtype, sub = dtype.subdtype
        shape = shape + sub
    values = np.zeros(shape, dtype=dtype, order="C")
    attr.read(values, mtype=memory_type)
    info = h5py.h5t.check_string_dtype(dtype) if dtype.kind in "OS" else None
    if info and info.length is None:  # variable-length strings: bytes to str
        if values.ndim == 0:
            return values[()].decode("utf-8", "surrogateescape")
        values = np.array([b.decode("utf-8", "surrogateescape") for b in values.flat],
                          dtype=dtype).reshape(values.shape)
    return values[()] if values.ndim == 0 else values


#: {HDF5 character set: (NumPy dtype, HDF5 memory type)} of variable-length strings, as
#: h5py makes them for an attribute of that set, made once each.
_VLEN_STRINGS: dict = {}


def _vlen_strings(attr, cset: int):
    """(dtype, memory type) of the variable-length string attribute ``attr`` of the
    character set ``cset``: h5py's for the first such attribute, kept."""
    import h5py

    made = _VLEN_STRINGS.get(cset)
    if made is None:
        dtype = attr.dtype
        made = _VLEN_STRINGS[cset] = (dtype, h5py.h5t.py_create(dtype))
    return made


#: HDF5 memory types of plain numeric dtypes (h5py.h5t.py_create), made once each.
_NUMERIC_MEMORY_TYPES: dict = {}


def _memory_type(dtype):
    """HDF5's memory type for the NumPy ``dtype``, as h5py's readers make it: numbers
    without metadata from a cache (making one costs a few µs, a read of a small array
    not much more), any other type made anew."""
    import h5py

    if dtype.metadata or dtype.kind not in "biufc" or dtype.subdtype is not None:
        return h5py.h5t.py_create(dtype)
    key = dtype.str
    made = _NUMERIC_MEMORY_TYPES.get(key)
    if made is None:
        made = _NUMERIC_MEMORY_TYPES[key] = h5py.h5t.py_create(dtype)
    return made


def _dataset_values(f, name: str):
    """The values of dataset ``name`` of the open h5py file ``f``, as ``f[name][()]``
    gives them: numbers and fixed-length byte strings through HDF5's dataset read
    (a third of h5py's per-dataset cost), anything else through h5py."""
    import h5py

    dataset = h5py.h5d.open(f.id, name.encode())
    dtype = _plain_numeric_dtype(dataset.get_type()) or dataset.dtype
    if (dtype.kind not in "biufcS" or dtype.fields or not _plain_metadata(dtype)
            or dataset.shape is None):  # (a null dataspace: h5py's Empty)
        return f[name][()]
    values = np.empty(dataset.shape, dtype=dtype)
    if values.size:
        dataset.read(h5py.h5s.ALL, h5py.h5s.ALL, values, mtype=_memory_type(dtype))
    return values[()] if values.ndim == 0 else values


#: (HDF5 type, NumPy dtype) of the plain numbers most files hold, as h5py maps them.
_PLAIN_NUMERIC_TYPES: list = []


def _plain_numeric_dtype(kind):
    """The NumPy dtype of the HDF5 type ``kind`` if it equals one of the plain numeric
    types of :data:`_PLAIN_NUMERIC_TYPES` (HDF5's comparison covers class, size, byte
    order and precision), else None: a dataset's ``dtype`` builds NumPy's from HDF5's
    anew (24 µs, against 2 µs a comparison)."""
    import h5py

    if not isinstance(kind, (h5py.h5t.TypeFloatID, h5py.h5t.TypeIntegerID)):
        return None
    if not _PLAIN_NUMERIC_TYPES:
        _PLAIN_NUMERIC_TYPES.extend(
            (getattr(h5py.h5t, name), np.dtype(code)) for name, code in (
                ("IEEE_F64LE", "<f8"), ("STD_I64LE", "<i8"), ("STD_I32LE", "<i4"),
                ("IEEE_F32LE", "<f4"), ("STD_U8LE", "|u1")))
    for known, dtype in _PLAIN_NUMERIC_TYPES:
        if kind == known:
            return dtype
    return None


def _plain_metadata(dtype) -> bool:
    """Whether ``dtype`` carries no metadata but, for fixed-length byte strings, h5py's
    note of their encoding (which its reader keeps on the array too)."""
    metadata = dtype.metadata
    return not metadata or (dtype.kind == "S" and set(metadata) == {"h5py_encoding"})


def _file_objects(f):
    """(path, attributes, reader of the dataset's values or None) of every object of the
    open h5py file ``f`` in sorted path order, the root first; each dataset read when
    its turn comes (one at a time in memory). Listed and read as :func:`hdf5_snapshot`
    does, through HDF5's own visit and reads (h5py's ``visititems`` and ``obj[()]``
    cost several times as much per object: sealing a run's results file took 8.4 ms,
    now 4.7)."""
    yield "", _attributes(f.id), lambda: None
    for name, raw, is_dataset, n_attrs in sorted(_listed(f)):
        yield (name, _attributes(f.id, n_attrs, raw) if n_attrs else {},
               (lambda name=name: _dataset_values(f, name)) if is_dataset
               else (lambda: None))


def _snapshot_objects(root: HDF5Node):
    """:func:`_file_objects` of a :func:`hdf5_snapshot`."""
    items = []

    def walk(prefix, node):
        for leaf, child in node.children.items():
            name = f"{prefix}/{leaf}" if prefix else leaf
            items.append((name, child))
            walk(name, child)

    walk("", root)
    for name, node in [("", root), *sorted(items, key=lambda item: item[0])]:
        yield name, node.attrs, (lambda node=node: node.data)


def hdf5_digest(f, legacy: bool = False) -> str:
    """SHA-256 (hex) of every dataset and attribute of the open h5py file (or its
    :func:`hdf5_snapshot`) ``f``, in sorted path order, the root's ``checksum`` attribute
    excluded (``legacy``: with the first attribute scheme, see :func:`_attr_bytes`)."""
    objects = _snapshot_objects(f) if isinstance(f, HDF5Node) else _file_objects(f)
    digest = hashlib.sha256()
    for name, attrs, read in objects:
        digest.update(name.encode() + b"\0")
        for key in sorted(attrs):
            if name == "" and key == CHECKSUM_ATTR:
                continue
            digest.update(key.encode() + b"=" + _attr_bytes(attrs[key], legacy) + b"\0")
        data = read()
        if data is not None:  # a dataset
            data = np.ascontiguousarray(data)
            digest.update(data.dtype.str.encode() + repr(data.shape).encode())
            digest.update(_array_bytes(data))
    return digest.hexdigest()


def seal_hdf5(f) -> None:
    """Store the checksum of the (complete) open file ``f`` as its last write."""
    f.attrs[CHECKSUM_ATTR] = hdf5_digest(f)


#: What reading a damaged HDF5 object raises through h5py.
_READ_ERRORS = (OSError, KeyError, ValueError, RuntimeError, TypeError)


def verify_hdf5(f, path, what: str, keep: bool = False,
                root_attrs: dict | None = None) -> HDF5Node | None:
    """Check the open h5py file ``f`` against its stored checksum: ReadError naming
    ``path`` unless its contents match (files written before checksums existed have
    none and are accepted). ``keep``: read the whole file into memory once
    (:func:`hdf5_snapshot`), check that and return it for the reader to read from;
    otherwise each dataset is read, hashed and dropped in turn (memory of one dataset:
    large results files), and None is returned. ``root_attrs``: as
    :func:`hdf5_snapshot` takes them."""
    try:
        contents = hdf5_snapshot(f, root_attrs) if keep else None
        stored = (contents if keep else f).attrs.get(CHECKSUM_ATTR)
        if stored is None:
            return contents
        source = contents if keep else f
        matches = (hdf5_digest(source) == str(stored)
                   or hdf5_digest(source, legacy=True) == str(stored))
    except _READ_ERRORS as exc:
        raise ReadError(f"{path}: the {what} is damaged (reading it failed: {exc})") from None
    if not matches:
        raise ReadError(f"{path}: the {what} is damaged: its contents do not match the "
                        f"checksum stored when it was written (changed or corrupted "
                        f"since)")
    return contents


def check_output(path, inputs=(), what: str = "output") -> Path:
    """``path`` as a Path, after refusing (WriteError naming it) a folder, a device, pipe
    or socket (:func:`file_target`), a missing or unwritable folder, or one of ``inputs``
    (the run's own input files)."""
    path = Path(path)
    written = file_target(path, what)  # (a link's target) not a folder, device, pipe...
    if not path.parent.is_dir():
        raise WriteError(f"cannot write {what} {str(path)!r}: folder {str(path.parent)!r} "
                         f"does not exist")
    target = path.resolve()
    for item in inputs:
        if Path(item).resolve() == target:
            raise WriteError(f"refusing to write {what} {str(path)!r}: it is an input of "
                             f"this run ({str(item)!r}); choose another file")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe",
                                     dir=written.parent)
    except OSError as exc:
        raise _unwritable_folder(what, path, exc) from None
    os.close(fd)
    os.unlink(probe)
    return path
