"""The native flexmbs modal-data format: one self-describing HDF5 file (``.fmd.h5``).

Layout, format version 2 (documented in ``docs/modal_data_formats.md``)::

    /                     attrs: format="flexmbs-modal-data", format_version, checksum
    /header               JSON text: units, reference_frame, attach_set, metadata,
                          checks_revision, mode_kinds, constraint_fraction, mass {kind,
                          shape}, node_sets {names, starts}, invariants {mass, isotropic}
    /nodes                (N, 3) float64 [m]
    /node_ids             (N,) int64
    /phi                  (3N, n) [m per unit ξ];   /psi (3N, n) optional [rad per unit ξ]
    /generalized_shapes   (n_g, n) optional: coordinates without position of the mass
    /M_ff, /K_ff          (n, n)
    /damping_ratio (n,)   or /damping_matrix (n, n)   (absent: zero damping)
    /mass/nodal_mass (N,) [kg] (lumped), or /mass/data, /mass/indices, /mass/indptr (CSR)
    /node_set_indices     int64 node indices (0-based) of every set, one after the other
    /modal_fields/field_<k>, /stiffening/<case> (n, n)   optional
    /modal_derivatives    optional, attrs energy (the FE strain energy, in words):
        pairs (n_d, 2) int64 mode pairs (i <= j);  theta (3N, n_d) [m per unit²];
        theta_psi (3N, n_d) [rad per unit²] with psi;  stiffness, mass (m, m);
        cubic (m, m, m);  quartic (m, m, m, m)   (m = n + n_d, modes first)
    /cells/<meshio type>  int64 connectivity (0-based node indices)
    /invariants           the inertia invariants, one array after the other

Version 1 kept the header's entries as attributes and small datasets, and each node set
in a dataset /node_sets/set_<k> (attrs name); it is read as before.

Everything is SI; the round trip is lossless.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..._files import (
    CHECKSUM_ATTR,
    atomic_path,
    hdf5_root_attributes,
    open_hdf5,
    seal_hdf5,
    verify_hdf5,
)
from ...errors import FlexmbsError, ReadError, ValidationError, WriteError
from ..data import ModalData
from ..data_checks import CHECKS_REVISION
from ..deferred_mass import DeferredCSR

#: The native format's extensions (no other built-in format claims them, so a native
#: file is read without loading the other formats' modules: tests/test_startup.py).
NATIVE_EXTENSIONS = (".fmd.h5", ".h5", ".hdf5")

FORMAT_TAG = "flexmbs-modal-data"
#: 2 (2026-12-07): the description in one JSON header and the node sets in one dataset
#: (reading a file costs per HDF5 object, about 30-40 µs each). Files of version 1 are
#: read as before.
FORMAT_VERSION = 2


def _h5py():
    import h5py

    return h5py


#: Native files of up to about this size [bytes] are made in memory and written with
#: Python's own file calls; larger ones by HDF5 itself, after a check that their folder
#: has room for them. (HDF5 failing to write, on a full disk, may crash the process when
#: h5py closes the file, leaving a partial file behind; Python's calls raise an OSError.)
IN_MEMORY_UP_TO = 256 * 2**20


def write_native(data: ModalData, path: Path) -> None:
    """Write ``data`` to an HDF5 file at ``path``: atomically (a temporary file renamed
    over ``path`` once complete) and sealed with a checksum of its contents. WriteError
    naming the file when it cannot be written (a full disk included): nothing is left
    of it."""
    path = Path(path)
    header = _checked_header(data, path)
    size = _arrays_size(data)
    try:
        if size <= IN_MEMORY_UP_TO:
            image = _image(data, header)
            with atomic_path(path, "modal data file") as tmp:
                tmp.write_bytes(image)
            return
        _check_room(path, size)
        with atomic_path(path, "modal data file") as tmp, _h5py().File(tmp, "w") as f:
            _write_contents(f, data, header)
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(f"cannot write modal data file {str(path)!r}: "
                         f"{exc.strerror or exc}") from None


def _image(data: ModalData, header: str) -> bytes:
    with _h5py().File(f"flexmbs-image-{id(data)}.fmd.h5", "w", driver="core",
                      backing_store=False) as f:
        _write_contents(f, data, header)
        f.flush()
        return f.id.get_file_image()


def _arrays_size(data: ModalData) -> int:
    """About the size of the native file of ``data`` [bytes]: its arrays' bytes."""
    def size(value) -> int:
        if isinstance(value, np.ndarray):
            return value.nbytes
        if hasattr(value, "data") and hasattr(value, "indices"):  # a sparse matrix
            return value.data.nbytes + value.indices.nbytes + value.indptr.nbytes
        if isinstance(value, dict):
            return sum(size(v) for v in value.values())
        if hasattr(value, "__dataclass_fields__"):
            return sum(size(getattr(value, k)) for k in value.__dataclass_fields__)
        return 0

    return sum(size(getattr(data, name)) for name in data.__dataclass_fields__
               if not name.startswith("_")) + size(data.invariants)


def _check_room(path: Path, size: int) -> None:
    """WriteError when the folder of ``path`` has not room for ``size`` bytes and a
    margin (a tenth, and 16 MB)."""
    import shutil

    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return  # (the writing says what is wrong with the folder)
    need = int(size * 1.1) + 16 * 2**20
    if free < need:
        raise WriteError(f"cannot write modal data file {str(path)!r}: it needs about "
                         f"{need / 2**20:.0f} MB, its folder has {free / 2**20:.0f} MB free")


def _checked_header(data: ModalData, where) -> str:
    """/header of ``data`` after every check of its values (the file is stamped as
    checked: arrays changed since it was made are checked too)."""
    try:
        data.check_values()
        return _header(data)
    except FlexmbsError as exc:
        raise type(exc)(f"{where}: not written: {exc}") from None


def _write_contents(f, data: ModalData, header: str) -> None:
    """The groups, datasets and attributes of the native file of ``data`` into the open
    HDF5 file ``f``, sealed last."""
    f.attrs["format"] = FORMAT_TAG
    f.attrs["format_version"] = FORMAT_VERSION
    f.create_dataset("header", data=np.bytes_(header))
    for name in ("nodes", "node_ids", "phi", "psi", "generalized_shapes", "M_ff", "K_ff",
                 "damping_ratio", "damping_matrix"):  # (the optional ones None if absent)
        if getattr(data, name) is not None:
            f.create_dataset(name, data=getattr(data, name))
    g = f.create_group("mass")
    if data.is_lumped:
        g.create_dataset("nodal_mass", data=data.mass)
    else:
        csr = data.mass  # (a CSR matrix: ModalData makes one of any matrix)
        g.create_dataset("data", data=csr.data)
        g.create_dataset("indices", data=csr.indices)
        g.create_dataset("indptr", data=csr.indptr)
    sets = [np.asarray(idx, dtype=np.int64).ravel() for idx in data.node_sets.values()]
    f.create_dataset("node_set_indices", data=np.concatenate(sets) if sets
                     else np.zeros(0, dtype=np.int64))
    fields = f.create_group("modal_fields")
    for k, (name, values) in enumerate(data.modal_fields.items()):
        fields.create_dataset(f"field_{k}", data=values).attrs["name"] = name
    stiff = f.create_group("stiffening")
    for case, matrix in data.stiffening.items():
        stiff.create_dataset(case, data=matrix)
    cells = f.create_group("cells")
    for ctype, conn in data.cells.items():
        cells.create_dataset(ctype, data=conn)
    if data.derivatives is not None:
        _write_derivatives(f.create_group("modal_derivatives"), data.derivatives)
    _write_invariants(f, data.invariants)
    seal_hdf5(f)  # last: a file without it was not completed


def _header(data: ModalData) -> str:
    """The JSON text of /header: what describes the arrays of ``data`` (its units,
    frame, metadata, the kinds and constraint fractions of its modes, the mass's kind
    and shape, the node sets' names and where each starts in /node_set_indices, the
    total mass and isotropy of the invariants) and the revision of the value checks it
    passed (``data`` is a checked ModalData)."""
    starts = np.cumsum([0, *(np.size(idx) for idx in data.node_sets.values())])
    inv = data.invariants
    return json.dumps({
        "units": data.units, "reference_frame": data.reference_frame.value,
        "attach_set": data.attach_set or "",
        "metadata": _json_keys(data.metadata, "ModalData.metadata"),
        "checks_revision": CHECKS_REVISION,
        "mode_kinds": [k.value for k in data.mode_kinds],
        "constraint_fraction": np.asarray(data.constraint_fraction, float).tolist(),
        "mass": {"kind": "lumped" if data.is_lumped else "consistent",
                 "shape": list(np.shape(data.mass))},
        "node_sets": {"names": list(data.node_sets), "starts": starts.tolist()},
        "invariants": {"mass": float(inv.mass), "isotropic": bool(inv.isotropic)}},
        default=_json_default)  # (NumPy values in the metadata as Python's)


#: The entries of /header (format version 2) and the type each must have; a header
#: without "checks_revision" has its values checked on reading.
HEADER_TYPES = {"units": str, "reference_frame": str, "attach_set": str, "metadata": dict,
                "mode_kinds": list, "constraint_fraction": list, "mass": dict,
                "node_sets": dict, "invariants": dict}


def _read_header(path, f) -> dict:
    """/header of a version-2 file, its entries of the types :data:`HEADER_TYPES`
    says; ReadError naming the entry that is not."""
    try:
        header = json.loads(bytes(f["header"][()]).decode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise ReadError(f"{path}: /header is not JSON text ({exc})") from None
    if not isinstance(header, dict):
        raise ReadError(f"{path}: /header must be a JSON object, got {str(header)[:60]}")
    for key, kind in HEADER_TYPES.items():
        if not isinstance(header.get(key), kind):
            raise ReadError(f"{path}: /header entry {key!r} must be a JSON "
                            f"{kind.__name__}, got {str(header.get(key))[:60]}")
    revision = header.setdefault("checks_revision", None)
    mass, inv = header["mass"], header["invariants"]
    problems = [
        (not (revision is None or _integer(revision)), "checks_revision", "an integer"),
        (not all(isinstance(k, str) for k in header["mode_kinds"]), "mode_kinds",
         "a list of texts"),
        (not all(_number(v) for v in header["constraint_fraction"]), "constraint_fraction",
         "a list of numbers"),
        (mass.get("kind") not in ("lumped", "consistent")
         or not (isinstance(mass.get("shape"), list)
                 and all(_integer(v) for v in mass["shape"])), "mass",
         '{"kind": "lumped" or "consistent", "shape": integers}'),
        (not (_number(inv.get("mass")) and isinstance(inv.get("isotropic"), bool)),
         "invariants", '{"mass": a number, "isotropic": true or false}'),
        (not (isinstance(header["node_sets"].get("starts"), list)
              and all(_integer(v) for v in header["node_sets"]["starts"])), "node_sets",
         '{"names": texts, "starts": integers}')]
    for wrong, key, expected in problems:
        if wrong:
            raise ReadError(f"{path}: /header entry {key!r} must be {expected}, got "
                            f"{str(header[key])[:60]}")
    return header


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _node_sets(path, indices, names, starts) -> dict:
    """{name: node indices} of the node sets whose ``names`` start at ``starts`` in
    ``indices`` (version 2); ReadError saying what does not fit."""
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)
            and len(set(names)) == len(names)):
        raise ReadError(f"{path}: /header node_sets names must be distinct texts, got "
                        f"{str(names)[:60]}")
    try:  # (integers: _read_header)
        starts = np.asarray(starts, dtype=np.int64)
    except OverflowError:
        starts = None
    if not (isinstance(indices, np.ndarray) and indices.ndim == 1 and starts is not None
            and starts.shape == (len(names) + 1,) and starts[0] == 0
            and starts[-1] == indices.size and np.all(np.diff(starts) >= 0)):
        raise ReadError(f"{path}: /header node_sets starts "
                        f"{np.asarray(starts).tolist()[:8] if starts is not None else '?'} "
                        f"must rise from 0 to the {np.size(indices)} entries of "
                        f"/node_set_indices: one per name ({len(names)}) and the end")
    return {name: indices[starts[k]:starts[k + 1]] for k, name in enumerate(names)}


def _descriptors(path, f, version: int, sealed: bool) -> dict:
    """What describes the arrays, from /header (version 2) or the attributes and small
    datasets of version 1, as :func:`_header` lists it (node sets: {name: indices};
    a version-1 file's invariants described only when ``sealed``: others are computed
    again, as before)."""
    if version >= 2:
        h = _read_header(path, f)
        h["node_sets"] = _node_sets(path, f["node_set_indices"][()],
                                    h["node_sets"].get("names"),
                                    h["node_sets"].get("starts"))
        h["mode_kinds"] = tuple(h["mode_kinds"])
        h["constraint_fraction"] = np.asarray(h["constraint_fraction"], dtype=float)
        return h
    g, inv = f["mass"], f.get("invariants") if sealed else None
    return {"units": str(f.attrs["units"]),
            "reference_frame": str(f.attrs["reference_frame"]),
            "attach_set": str(f.attrs["attach_set"]),
            "metadata": json.loads(f.attrs["metadata"]),
            "checks_revision": f.attrs.get("checks_revision"),
            "mode_kinds": _strings(path, f, "mode_kinds"),
            "constraint_fraction": f["constraint_fraction"][()],
            "mass": {"kind": str(g.attrs["kind"]),
                     "shape": np.asarray(g.attrs.get("shape", ())).reshape(-1).tolist()},
            "node_sets": {str(v.attrs.get("name", k)): v[()]
                          for k, v in f["node_sets"].items()},
            "invariants": None if inv is None else {"mass": float(inv.attrs["mass"]),
                                                    "isotropic": bool(inv.attrs["isotropic"])}}


def _invariant_shapes(n_modes: int, isotropic: bool) -> dict:
    """The arrays of InertiaInvariants for ``n_modes`` modes, in the order /invariants
    stores them (the Shabana set J0, J1, J2 only for an isotropic mass)."""
    n, n6 = n_modes, 6 + n_modes
    shapes = {"M0": (n6, n6), "N": (n, n6, 3), "Q": (n, n, 3, 3), "S0": (3,), "S": (3, n)}
    if isotropic:
        shapes.update(J0=(3, 3), J1=(n, 3, 3), J2=(n, n, 3, 3))
    return shapes


def _write_invariants(f, inv) -> None:
    """The inertia invariants, computed once (docs/modal_data_formats.md, "The
    invariants are computed once"): one dataset /invariants, the arrays of
    :func:`_invariant_shapes` one after the other (the total mass [kg] and the isotropy
    go in /header). A reader of the sealed file takes them instead of computing them
    again."""
    names = _invariant_shapes(inv.n_modes, inv.isotropic)
    flat = np.concatenate([np.ravel(getattr(inv, name)) for name in names])
    f.create_dataset("invariants", data=flat)  # (the mass and isotropy: in /header)


def _read_invariants(dset, n_modes: int, described: dict):
    """The InertiaInvariants stored in /invariants for ``n_modes`` mode shapes, of the
    total mass and isotropy ``described``; ValueError saying what does not fit (size,
    finiteness)."""
    from ..invariants import InertiaInvariants

    isotropic = bool(described["isotropic"])
    mass = float(described["mass"])
    shapes = _invariant_shapes(n_modes, isotropic)
    flat = np.asarray(dset[()], dtype=float)
    size = sum(int(np.prod(shape)) for shape in shapes.values())
    if flat.shape != (size,) or not np.all(np.isfinite(flat)) or not np.isfinite(mass):
        raise ValueError(f"/invariants holds {flat.shape} values (mass {mass}), expected "
                         f"{size} finite numbers for {n_modes} mode(s)")
    values, start = {}, 0
    for name, shape in shapes.items():
        count = int(np.prod(shape))
        values[name] = flat[start:start + count].reshape(shape)
        start += count
    return InertiaInvariants(n_modes=n_modes, isotropic=isotropic, mass=mass, **values)


#: The datasets of /modal_derivatives (theta_psi only with rotational shapes).
DERIVATIVE_DATASETS = ("pairs", "theta", "theta_psi", "stiffness", "mass", "cubic",
                       "quartic")


def _write_derivatives(group, derivs) -> None:
    group.attrs["energy"] = derivs.energy
    for key in DERIVATIVE_DATASETS:
        value = getattr(derivs, key)
        if value is not None:
            group.create_dataset(key, data=value)


def _read_derivatives(group):
    """The ModalDerivatives of /modal_derivatives (checked with the ModalData)."""
    from ..derivative_data import ModalDerivatives

    values = {k: (group[k][()] if k in group else None) for k in DERIVATIVE_DATASETS}
    missing = [k for k, v in values.items() if v is None and k != "theta_psi"]
    if missing:
        raise KeyError(f"modal_derivatives/{missing[0]}")
    return ModalDerivatives(energy=str(group.attrs.get("energy", "")), **values)


def _checked_csr(path, g, shape) -> DeferredCSR:
    """The CSR mass matrix of group ``g`` (/mass/data, indices, indptr) of ``shape``, its
    structure checked in full: scipy trusts the arrays it is given, and indices out of
    range or an indptr out of order would crash later operations (a segmentation fault,
    not an exception). ReadError naming the file and the dataset. The matrix is SciPy's
    once ``ModalData.mass`` is first read (:mod:`flexmbs.modal.deferred_mass`)."""
    try:
        shape = tuple(int(v) for v in np.asarray(shape).reshape(-1))
        parts = [np.asarray(g[k][()]) for k in ("data", "indices", "indptr")]
        if len(shape) != 2 or any(p.ndim != 1 for p in parts) or parts[1].dtype.kind != "i" \
                or parts[2].dtype.kind != "i" or parts[0].dtype.kind not in "fiu":
            raise ValueError("data, indices, indptr must be 1-D numbers (indices and "
                             "indptr integers) and shape two integers")
        data, indices, indptr = parts
        if (min(shape) < 0 or indptr.size != shape[0] + 1 or indptr[0] != 0
                or np.any(np.diff(indptr) < 0) or indptr[-1] != indices.size
                or data.size != indices.size
                or (indices.size and not 0 <= indices.min() <= indices.max() < shape[1])):
            raise ValueError(f"indptr (size {indptr.size}) must rise from 0 to the "
                             f"{indices.size} indices in [0, {shape[1]}) of a "
                             f"{shape[0]}-row matrix, one value each")
        mat = DeferredCSR(data, indices, indptr, shape)  # (checked in full above:
        # scipy's full check_format repeats those checks, 30 µs for the 4-mode solid beam)
    except (ValueError, TypeError, IndexError) as exc:
        raise ReadError(f"{path}: /mass (CSR data, indices, indptr, shape) is not a valid "
                        f"sparse matrix: {exc}") from None
    return mat


def _strings(path, f, name: str) -> tuple[str, ...]:
    """The dataset ``name`` as a tuple of texts; ReadError naming it and what it holds."""
    value = f[name][()]
    if not (isinstance(value, np.ndarray) and value.ndim == 1
            and all(isinstance(v, (bytes, str)) for v in value)):
        raise ReadError(f"{path}: dataset /{name} must be a list of texts, got "
                        f"{np.asarray(value).dtype} of shape {np.shape(value)} "
                        f"({str(value)[:40]})")
    return tuple(v.decode() if isinstance(v, bytes) else v for v in value)


def read_native(path: Path, **options) -> ModalData:
    """Read a native file written by :func:`write_native`."""
    if options:
        raise ReadError(f"{path}: the native format takes no reader options, got "
                        f"{sorted(options)} (units and frame are stored in the file)")
    _h5py()  # (h5py, or an error naming the extra that installs it)
    try:
        f = open_hdf5(path)
    except OSError as exc:
        raise ReadError(f"{path}: not an HDF5 file ({exc})") from exc
    with f:
        try:
            root = hdf5_root_attributes(f)
        except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:
            raise ReadError(f"{path}: the modal data file is damaged (reading its "
                            f"attributes failed: {exc})") from None
        tag = root.get("format", "")
        if tag != FORMAT_TAG:
            raise ReadError(f"{path}: HDF5 attribute format is {tag!r}, expected {FORMAT_TAG!r}"
                            " (not a flexmbs modal data file)")
        given = root.get("format_version", 0)
        try:
            version = int(given)
        except (TypeError, ValueError):
            raise ReadError(f"{path}: attribute format_version {given!r} is not an "
                            f"integer") from None
        if version > FORMAT_VERSION:
            raise ReadError(f"{path}: format_version {version} is newer than this flexmbs "
                            f"understands ({FORMAT_VERSION})")
        f = verify_hdf5(f, path, "modal data file", keep=True,  # (read from memory on)
                        root_attrs=root)
        sealed = f.attrs.get(CHECKSUM_ATTR) is not None
        try:
            d = _descriptors(path, f, version, sealed)
            g = f["mass"]
            lumped = d["mass"]["kind"] == "lumped"
            mass = g["nodal_mass"][()] if lumped else _checked_csr(path, g,
                                                                   d["mass"]["shape"])
            kwargs = dict(
                nodes=f["nodes"][()], phi=f["phi"][()], M_ff=f["M_ff"][()],
                K_ff=f["K_ff"][()], mass=mass,
                psi=f["psi"][()] if "psi" in f else None,
                generalized_shapes=(f["generalized_shapes"][()]
                                    if "generalized_shapes" in f else None),
                damping_ratio=f["damping_ratio"][()] if "damping_ratio" in f else None,
                damping_matrix=f["damping_matrix"][()] if "damping_matrix" in f else None,
                node_ids=f["node_ids"][()],
                node_sets=d["node_sets"],
                cells={k: v[()] for k, v in f["cells"].items()},
                modal_fields=({str(v.attrs.get("name", k)): v[()]
                               for k, v in f["modal_fields"].items()}
                              if "modal_fields" in f else {}),
                stiffening=({k: v[()] for k, v in f["stiffening"].items()}
                            if "stiffening" in f else {}),
                derivatives=(_read_derivatives(f["modal_derivatives"])
                             if "modal_derivatives" in f else None),
                mode_kinds=d["mode_kinds"],
                constraint_fraction=d["constraint_fraction"],
                reference_frame=d["reference_frame"],
                attach_set=d["attach_set"] or None,
                units=d["units"],
                metadata=d["metadata"],
            )
            stored = sealed and "invariants" in f and d["invariants"] is not None
            if stored:  # computed when written, for these arrays
                kwargs["_invariants"] = _read_invariants(
                    f["invariants"], np.shape(kwargs["phi"])[-1], d["invariants"])
            # values checked when written, by the checks of this revision: unchanged
            # since (the checksum), so only their types and shapes are checked again
            kwargs["_checked"] = bool(stored and d["checks_revision"] == CHECKS_REVISION)
            if not lumped:  # (SciPy's matrix made at the first read of ModalData.mass)
                kwargs["mass"] = mass._replace(checked=kwargs["_checked"])
        except ReadError:  # (says what and where already; an OSError too)
            raise
        except KeyError as exc:
            raise ReadError(f"{path}: missing dataset or attribute {exc}") from exc
        except (ValueError, TypeError, AttributeError) as exc:  # incl. JSON errors
            raise ReadError(f"{path}: malformed content ({type(exc).__name__}: {exc})"
                            ) from exc
        except OSError as exc:  # HDF5 could not read a damaged object
            raise ReadError(f"{path}: the modal data file is damaged ({exc})") from None
    try:
        return ModalData(**kwargs)
    except FlexmbsError as exc:
        raise ReadError(f"{path}: {exc}") from exc


def _json_keys(value, where: str):
    """``value`` with the keys of its dicts (at any depth) as JSON takes them: NumPy
    scalars as Python's; ValidationError naming the entry for a key that is not a
    string, a number, a bool or None (a tuple, say)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, np.generic):
                key = key.item()
            if not (key is None or isinstance(key, (str, int, float, bool))):
                raise ValidationError(f"{where} has the key {key!r} ({type(key).__name__}); "
                                      "a file's metadata keys are strings or numbers")
            out[key] = _json_keys(item, f"{where}[{key!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_json_keys(item, f"{where}[{k}]") for k, item in enumerate(value)]
    return value


def _json_default(obj):
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return str(obj)


#: This format's entry in flexmbs.modal.io.registry (registered when a format is needed):
#: name, extensions, description, reader, writer.
MODAL_FORMAT = ("native", NATIVE_EXTENSIONS,
                "flexmbs native modal data (HDF5, lossless)", read_native, write_native)
