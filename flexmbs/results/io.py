"""Result files: one HDF5 file per run (``.res.h5``), readable without the model code
and without flexmbs (docs/results_file.md has the full layout).

Layout::

    /                 attrs format="flexmbs-result", format_version=2, flexmbs_version,
                      case (JSON: path, text and overrides of the case file; {} for a
                      run made in Python), success, message, wall_time, settings (JSON),
                      coupling (JSON), statistics (JSON: engine, iterations,
                      factorizations, times), model (JSON: markers with body-frame
                      positions, joints), status ("completed", "completed with
                      warnings", "diverged", "failed", "interrupted"), warnings (JSON
                      list of the range checks that failed), checksum (SHA-256 of
                      everything else, written last and verified on reading)
    /t, /q, /qd, /qdd, /lam, /kinetic, /potential, /elastic, /nonconservative_work,
    /phi_violation, /velocity_violation
    /steps/<column>   the steps per output interval (n_t,): count, h_min, h_max, h_mean,
                      iterations, iterations_max, rejected (flexmbs.results.steps);
                      format 1 had /h and /iterations per step instead, read into
                      these
    /coord_names, /coord_units, /constraint_names       (strings)
    /contacts/<name>  gap, penetration, normal_force, tangential_force,
                      normal_velocity, state, dissipated; attr impacts
    /checkpoint       the restart point (flexmbs.integrators.checkpoint)
    /bodies/<k>       attrs name, kind, start, n_coords[, n_modes, coupling];
                      datasets nodes, phi, node_ids, cells/<type>[, section_size,
                      section_axes, section_polygon, section_loops,
                      fields/field_<k> (attrs name, units, components: modal
                      fields such as stress modes, (N, c, n))] for flexible
                      bodies; mass, com, inertia[,
                      shape_points, shape_triangles] for rigid bodies
    /sensors/<name>   (n_t, n_components) values at the output times; attrs units,
                      components (JSON list), kind, quantity, target, frame, node
                      (docs/sensors.md)

Every dataset has a ``units`` attribute (:data:`UNITS`; "coord_units" refers to the
per-coordinate units of ``/coord_units``). Attributes and groups added since the first
format version are absent in older files, which still load. Files are written
atomically: a temporary file beside the target, renamed over it only once complete
(flexmbs._files).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._files import atomic_path, seal_hdf5, verify_hdf5
from ..errors import ReadError, WriteError
from .checkpoint_io import read_checkpoint, write_checkpoint
from .steps import INTEGER_FIELDS, STEP_FIELDS, StepSummary

FORMAT_TAG = "flexmbs-result"
#: 2: the steps per output interval (/steps); 1: per step (/h, /iterations)
FORMAT_VERSION = 2
#: Per-body datasets and their units: flexible bodies' nodes, shapes, labels and beam
#: section outline (bounding box: width along y, height along z; the section's y and z
#: axes in the body frame; the true outline's (y, z) vertices, loop after loop, and the
#: number of vertices of each loop, outer first then holes); rigid bodies' mass
#: properties and drawing geometry (body frame).
BODY_DATASETS = {"nodes": "m", "phi": "m", "node_ids": "-", "section_size": "m",
                 "section_axes": "-", "section_polygon": "m", "section_loops": "-",
                 "mass": "kg", "com": "m", "inertia": "kg m^2",
                 "shape_points": "m", "shape_triangles": "-"}
#: The ``units`` attribute of every dataset (per-coordinate units: ``coord_units``).
UNITS = {"t": "s", "q": "coord_units", "qd": "coord_units/s", "qdd": "coord_units/s^2",
         "lam": "constraint_units", "kinetic": "J", "potential": "J", "elastic": "J",
         "nonconservative_work": "J", "phi_violation": "constraint_units",
         "velocity_violation": "constraint_units/s", "coord_names": "-", "coord_units": "-",
         "constraint_names": "-"}
CONTACT_UNITS = {"gap": "m", "penetration": "m", "normal_force": "N",
                 "tangential_force": "N", "normal_velocity": "m/s", "state": "1",
                 "dissipated": "J"}


def coordinate_units(names) -> list[str]:
    """Units of each coordinate by its name: R components [m], Euler parameters and
    modal coordinates [1] (the mode shapes carry the length)."""
    return ["m" if n.rsplit(".", 1)[-1] in ("x", "y", "z") else "1" for n in names]
#: The array datasets of a result file, in SimulationResult field order.
ARRAYS = ("t", "q", "qd", "qdd", "lam", "kinetic", "potential", "elastic",
          "nonconservative_work", "phi_violation", "velocity_violation")
#: The per-step datasets of format 1 files (read into a StepSummary).
PER_STEP = ("h", "iterations")


def save_result(result, path) -> None:
    import h5py

    path = Path(path)
    if not path.parent.is_dir():
        raise WriteError(f"cannot write {str(path)!r}: folder {str(path.parent)!r} does not "
                         "exist")
    with atomic_path(path, "result file") as tmp, h5py.File(tmp, "w") as f:
        f.attrs["format"] = FORMAT_TAG
        f.attrs["format_version"] = FORMAT_VERSION
        f.attrs["success"] = bool(result.success)
        f.attrs["message"] = result.message
        f.attrs["wall_time"] = float(result.wall_time)
        f.attrs["settings"] = json.dumps(result.settings, default=str)
        f.attrs["coupling"] = json.dumps(result.coupling)
        f.attrs["model"] = json.dumps(getattr(result, "model", {}))
        f.attrs["statistics"] = json.dumps(getattr(result, "statistics", {}))
        f.attrs["status"] = str(getattr(result, "status", ""))
        f.attrs["warnings"] = json.dumps(getattr(result, "warnings", []))
        f.attrs["flexmbs_version"] = _version()
        f.attrs["case"] = json.dumps(getattr(result, "case", {}), default=str)
        for name in ARRAYS:
            f.create_dataset(name, data=np.asarray(getattr(result, name)))
        f.create_dataset("coord_names", data=np.array(result.coord_names, dtype="S"))
        f.create_dataset("coord_units", data=np.array(coordinate_units(result.coord_names),
                                                      dtype="S"))
        f.create_dataset("constraint_names", data=np.array(result.constraint_names,
                                                           dtype="S"))
        for name, units in UNITS.items():
            f[name].attrs["units"] = units
        steps = f.create_group("steps")
        for name, (units, _) in STEP_FIELDS.items():
            steps.create_dataset(name, data=getattr(result.steps, name))
            steps[name].attrs["units"] = units
        contacts = f.create_group("contacts")
        for name, record in getattr(result, "contacts", {}).items():
            g = contacts.create_group(name)
            for key, value in record.items():
                if key == "impacts":
                    g.attrs["impacts"] = int(value)
                else:
                    g.create_dataset(key, data=np.asarray(value))
                    g[key].attrs["units"] = CONTACT_UNITS.get(key, "-")
        bodies = f.create_group("bodies")
        for k, (name, info) in enumerate(result.bodies.items()):
            g = bodies.create_group(str(k))
            g.attrs["name"] = name
            for key in ("kind", "start", "n_coords", "n_modes", "coupling"):
                if key in info:
                    g.attrs[key] = info[key]
            for key, units in BODY_DATASETS.items():
                if key in info:
                    g.create_dataset(key, data=np.asarray(info[key]))
                    g[key].attrs["units"] = units
            if "cells" in info:
                cells = g.create_group("cells")
                for ctype, conn in info["cells"].items():
                    cells.create_dataset(ctype, data=np.asarray(conn))
                    cells[ctype].attrs["units"] = "-"
            if info.get("fields"):
                from ..modal.field_names import FIELD_COMPONENTS, FIELD_UNITS

                fields = g.create_group("fields")
                for k, (fname, values) in enumerate(info["fields"].items()):
                    d = fields.create_dataset(f"field_{k}", data=np.asarray(values))
                    d.attrs["name"] = fname
                    d.attrs["units"] = FIELD_UNITS.get(fname, "per unit modal coordinate")
                    names = list(FIELD_COMPONENTS.get(fname, ()))
                    if d.ndim == 3 and names and len(names) != d.shape[1]:
                        names = [f"point {i}" for i in range(d.shape[1])]  # stress points
                    d.attrs["components"] = json.dumps(names)

        sensors = f.create_group("sensors")
        for name, record in getattr(result, "sensors", {}).items():
            d = sensors.create_dataset(name, data=np.asarray(record["values"], dtype=float))
            d.attrs["units"] = str(record["units"])
            d.attrs["components"] = json.dumps(list(record["components"]))
            for key in ("kind", "quantity", "target", "frame", "node"):
                d.attrs[key] = json.dumps(record.get(key))
        write_checkpoint(f, getattr(result, "checkpoint", {}))
        seal_hdf5(f)  # last: a file without it was not completed

def _version() -> str:
    from .. import __version__

    return __version__


def read_result(path, result_class):
    """A result file written by :func:`save_result`, as ``result_class``
    (:class:`~flexmbs.results.result.SimulationResult`, whose ``load`` and the package's
    ``load_result`` call this)."""
    import h5py

    SimulationResult = result_class
    path = Path(path)
    if not path.exists():
        raise ReadError(f"result file {str(path)!r} does not exist")
    if path.is_dir():
        raise ReadError(f"result file {str(path)!r} is a folder; give the .res.h5 file")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ReadError(f"{path}: not an HDF5 file ({exc})") from exc
    with f:
        if f.attrs.get("format") != FORMAT_TAG:
            raise ReadError(f"{path}: not a flexmbs result file (format attribute "
                            f"{f.attrs.get('format')!r})")
        verify_hdf5(f, path, "result file")
        _check_structure(f, path)
        try:
            result = _read_result(f, SimulationResult)
            result.source = str(path)
            return result
        except (KeyError, OSError, ValueError, TypeError, IndexError, AttributeError,
                UnicodeDecodeError) as exc:
            raise ReadError(f"{path}: the result file is incomplete or damaged "
                            f"({type(exc).__name__}: {exc})") from None


#: Arrays with one value per output time.
PER_OUTPUT = ("kinetic", "potential", "elastic", "nonconservative_work", "phi_violation",
              "velocity_violation")


def _check_structure(f, path) -> None:
    """Raise ReadError naming ``path`` and the dataset when one is missing, not numeric or
    of the wrong shape for the file's own names and times (a file edited, cut short or
    written by something else: read before any plot or export touches it)."""
    import h5py

    def missing(names, where=f, prefix=""):
        return [f"dataset {prefix + n!r}" for n in names
                if where.get(n, getclass=True) is not h5py.Dataset]

    try:
        version = int(f.attrs.get("format_version", 1))
    except (TypeError, ValueError):
        raise ReadError(f"{path}: attribute format_version "
                        f"{f.attrs.get('format_version')!r} is not an integer") from None
    if version > FORMAT_VERSION:
        raise ReadError(f"{path}: format_version {version} is newer than this flexmbs "
                        f"reads ({FORMAT_VERSION}); update flexmbs")
    old = f.get("steps", getclass=True) is not h5py.Group
    lacking = missing((*ARRAYS, "coord_names", "constraint_names"))
    if old:  # format 1: per step
        lacking += missing(PER_STEP)
    else:
        lacking += missing(STEP_FIELDS, f["steps"], "steps/")
    if f.get("bodies", getclass=True) is not h5py.Group:
        lacking.append("group 'bodies'")
    if lacking:
        raise ReadError(f"{path}: the result file lacks {', '.join(lacking)} (cut short, "
                        f"edited, or not written by flexmbs run)")

    def shape_error(name, shape, expected, meaning):
        return ReadError(f"{path}: dataset {name!r} has shape {tuple(shape)}; expected "
                         f"{expected} ({meaning})")

    steps = PER_STEP if old else [f"steps/{n}" for n in STEP_FIELDS]
    for name in (*ARRAYS, *steps):
        kind = f[name].dtype.kind
        if kind not in "fiub":
            raise ReadError(f"{path}: dataset {name!r} holds {f[name].dtype} values; "
                            f"expected numbers")
    n_t = f["t"].shape[0] if len(f["t"].shape) == 1 else -1
    if n_t < 1:
        raise shape_error("t", f["t"].shape, "(n_t,) with n_t >= 1", "the output times")
    for name in ("coord_names", "constraint_names"):
        if len(f[name].shape) != 1:
            raise shape_error(name, f[name].shape, "(n,)", "one name per coordinate or "
                              "constraint equation")
    n_q, n_c = f["coord_names"].shape[0], f["constraint_names"].shape[0]
    for name in ("q", "qd", "qdd"):
        if f[name].shape != (n_t, n_q):
            raise shape_error(name, f[name].shape, (n_t, n_q),
                              f"{n_t} output times x the {n_q} coordinates in coord_names")
    if f["lam"].shape != (n_t, n_c):
        raise shape_error("lam", f["lam"].shape, (n_t, n_c),
                          f"{n_t} output times x the {n_c} rows in constraint_names")
    for name in PER_OUTPUT:
        if f[name].shape != (n_t,):
            raise shape_error(name, f[name].shape, (n_t,), "one value per output time")
    if old:
        n_steps = f["h"].shape
        for name in PER_STEP:
            if len(f[name].shape) != 1 or f[name].shape != n_steps:
                raise shape_error(name, f[name].shape, tuple(n_steps), "one value per step")
    else:
        for name in steps:
            if f[name].shape != (n_t,):
                raise shape_error(name, f[name].shape, (n_t,), "one row per output time")
        for name in INTEGER_FIELDS:  # counts: whole numbers >= 0
            values = np.asarray(f["steps"][name][()], dtype=float)
            bad = ~np.isfinite(values) | (values < 0) | (values != np.round(values))
            if bad.any():
                raise ReadError(f"{path}: dataset 'steps/{name}' holds "
                                f"{float(values[bad][0]):g} at row {int(np.argmax(bad))}; expected "
                                f"counts (whole numbers >= 0)")
    for key, g in f["bodies"].items():
        where = f"bodies/{key}"
        name = g.attrs.get("name", where)
        try:
            start, n_coords = int(g.attrs["start"]), int(g.attrs["n_coords"])
        except (KeyError, TypeError, ValueError):
            raise ReadError(f"{path}: body {name!r} ({where}) lacks its start or n_coords "
                            f"attribute") from None
        if start < 0 or n_coords < 0 or start + n_coords > n_q:
            raise ReadError(f"{path}: body {name!r} claims coordinates {start}.."
                            f"{start + n_coords - 1}, but q has {n_q} columns")
        if "n_modes" not in g.attrs:
            continue  # a rigid body
        n_modes = int(g.attrs["n_modes"])
        lacking = missing(("nodes", "phi"), g, f"{where}/")
        if lacking:
            raise ReadError(f"{path}: flexible body {name!r} lacks {', '.join(lacking)}")
        n_nodes = g["nodes"].shape[0] if len(g["nodes"].shape) == 2 else -1
        if g["nodes"].shape != (n_nodes, 3):
            raise shape_error(f"{where}/nodes", g["nodes"].shape, "(n_nodes, 3)",
                              f"the node coordinates of body {name!r}")
        if g["phi"].shape != (3 * n_nodes, n_modes):  # translations: ModalData.phi
            raise shape_error(f"{where}/phi", g["phi"].shape,
                              f"({3 * n_nodes}, {n_modes})",
                              f"the mode shapes of body {name!r}: {n_nodes} nodes, "
                              f"{n_modes} modes")
        for field in g.get("fields", {}).values():
            shape, dataset = field.shape, field.name.lstrip("/")
            if "name" not in field.attrs:
                raise ReadError(f"{path}: dataset {dataset!r} lacks its 'name' attribute "
                                f"(the name of a modal field of body {name!r})")
            if len(shape) != 3 or shape[0] != n_nodes or shape[2] != n_modes:
                raise shape_error(dataset, shape,
                                  f"({n_nodes}, components, {n_modes})",
                                  f"a modal field of body {name!r}")
    for name, g in f.get("contacts", {}).items():
        for key, ds in g.items():
            if isinstance(ds, h5py.Dataset) and ds.shape != (n_t,):
                raise shape_error(f"contacts/{name}/{key}", ds.shape, (n_t,),
                                  "one value per output time")
    for name, ds in f.get("sensors", {}).items():
        where = f"sensors/{name}"
        if not isinstance(ds, h5py.Dataset) or ds.dtype.kind not in "fiu":
            raise ReadError(f"{path}: {where} is not a numeric dataset")
        try:
            n_comp = len(json.loads(ds.attrs["components"]))
            str(ds.attrs["units"])
        except (KeyError, TypeError, ValueError):
            raise ReadError(f"{path}: {where} lacks its units or components "
                            f"attribute") from None
        if ds.shape != (n_t, n_comp):
            raise shape_error(where, ds.shape, (n_t, n_comp),
                              f"{n_t} output times x its {n_comp} components")


def _read_result(f, SimulationResult):
    """The SimulationResult of the open, checked result file ``f``."""
    arrays = {name: f[name][()] for name in ARRAYS}
    checkpoint = read_checkpoint(f)
    if "steps" in f:
        steps = StepSummary(**{name: f["steps"][name][()] for name in STEP_FIELDS})
    else:  # format 1: the per-step records, summarized over the outputs
        steps, open_interval = StepSummary.from_steps(arrays["t"], f["h"][()],
                                                      f["iterations"][()])
        if checkpoint:  # the steps after the last output, and the last step's iterations
            iterations = f["iterations"][()]
            checkpoint.update(interval=open_interval,
                              last_iterations=int(iterations[-1]) if iterations.size else 0)
    bodies = {}
    # (in the order written, /bodies/0, 1, 2, ...: HDF5 lists groups by name, 10 before 2)
    for _, g in sorted(f["bodies"].items(), key=lambda item: _group_order(item[0])):
        info = {k: (v.item() if hasattr(v, "item") else v) for k, v in g.attrs.items()
                if k != "name"}
        for key in BODY_DATASETS:
            if key in g:
                info[key] = g[key][()]
        if "cells" in g:
            info["cells"] = {k: v[()] for k, v in g["cells"].items()}
        if "fields" in g:
            info["fields"] = {str(v.attrs["name"]): v[()] for v in g["fields"].values()}
        bodies[str(g.attrs["name"])] = info
    return SimulationResult(
        **arrays, steps=steps,
        coord_names=tuple(s.decode() for s in f["coord_names"][()]),
        constraint_names=tuple(s.decode() for s in f["constraint_names"][()]),
        settings=json.loads(f.attrs["settings"]),
        coupling=json.loads(f.attrs["coupling"]),
        success=bool(f.attrs["success"]), message=str(f.attrs["message"]),
        wall_time=float(f.attrs["wall_time"]), bodies=bodies,
        model=json.loads(f.attrs.get("model", "{}")),
        statistics=json.loads(f.attrs.get("statistics", "{}")),
        status=str(f.attrs.get("status", "") or _status_of_old_file(f.attrs)),
        warnings=json.loads(f.attrs.get("warnings", "[]")),
        contacts={name: {**{k: v[()] for k, v in g.items()},
                         "impacts": int(g.attrs.get("impacts", 0))}
                  for name, g in f.get("contacts", {}).items()},
        checkpoint=checkpoint,
        case=json.loads(f.attrs.get("case", "{}")),
        sensors={name: {"values": d[()], "units": str(d.attrs["units"]),
                        "components": json.loads(d.attrs["components"]),
                        **{key: json.loads(d.attrs[key])
                           for key in ("kind", "quantity", "target", "frame", "node")}}
                 for name, d in f.get("sensors", {}).items()})


def _status_of_old_file(attrs) -> str:
    """The status of a results file written before runs had one: from ``success``."""
    return "completed" if bool(attrs["success"]) else "failed"


def _group_order(key: str) -> tuple:
    """Sort key of a group named by its index ("10" after "9"; other names after, by
    name)."""
    return (0, int(key), "") if key.isdigit() else (1, 0, key)
