"""Mode shapes on a mesh file that meshio reads (VTU), with a JSON sidecar.

The mesh file holds the geometry and the shapes as point data; the sidecar
``<stem>.modal.json`` (next to the mesh, same stem) holds what a mesh cannot:

* point data ``phi_<j>`` (3 components, j = 1..n) [m per unit ξ], optional ``psi_<j>``,
  ``node_id`` (int), and ``nodal_mass`` [kg] when the mass is lumped;
* sidecar keys ``format`` ("flexmbs-modal-sidecar"), ``version``, ``M_ff``, ``K_ff``,
  ``damping_ratio`` or ``damping_matrix`` (optional), ``reference_frame``,
  ``attach_set``, ``node_sets`` (name → 0-based indices), ``mode_kinds``,
  ``constraint_fraction``, ``units``, ``metadata``, and ``mass``: ``{"kind": "lumped"}``
  or ``{"kind": "consistent", "file": "<stem>.mass.mtx"}`` (Matrix Market, 3N x 3N).

Values in the files are SI unless ``units`` names another system; reading converts.
Writing a subset of modes (``modes=[...]``) produces a consistent smaller data set, handy
for viewing one mode in ParaView.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from ..._files import atomic_outputs
from ...errors import FlexmbsError, ReadError, UnitsWarning
from ..data import ModalData
from ..units import get_units
from .native import _json_default

SIDECAR_TAG = "flexmbs-modal-sidecar"


def sidecar_path(path: Path) -> Path:
    """The sidecar JSON of a mesh file: ``mesh.vtu`` → ``mesh.modal.json``."""
    return path.with_name(path.name.rsplit(".", 1)[0] + ".modal.json")


def write_vtu(data: ModalData, path: Path, modes=None) -> None:
    """Write the mesh with mode shapes (optionally only ``modes``, 0-based) and sidecar."""
    import meshio

    if data.generalized_shapes is not None:
        from ...errors import WriteError

        raise WriteError(f"cannot write {str(path)!r}: the mass description has "
                         f"{data.generalized_shapes.shape[0]} coordinates without a position "
                         "(a Nastran superelement), which the VTU format does not hold; "
                         "write the native format (.fmd.h5)")
    if modes is not None:
        data = data.select(modes)
    cells = [(ctype, conn) for ctype, conn in data.cells.items()]
    if not cells:
        cells = [("vertex", np.arange(data.n_nodes)[:, None])]
    point_data = {"node_id": data.node_ids}
    for j in range(data.n_modes):
        point_data[f"phi_{j + 1}"] = data.phi[:, j].reshape(-1, 3)
        if data.psi is not None:
            point_data[f"psi_{j + 1}"] = data.psi[:, j].reshape(-1, 3)
    mass_entry: dict = {"kind": "lumped"}
    path = Path(path)
    side_name = sidecar_path(path).name
    names = [path.name, side_name]
    # the mesh, the mass matrix and the sidecar are staged and moved into place together,
    # the sidecar (which names the others) last
    with atomic_outputs(path.parent, names, "modal data file") as stage:
        _write_vtu_files(data, stage / path.name, cells, point_data, mass_entry,
                         names, meshio)


def _write_vtu_files(data, path: Path, cells, point_data, mass_entry, names, meshio):
    if data.is_lumped:
        point_data["nodal_mass"] = data.mass
    else:
        mtx = path.with_name(path.name.rsplit(".", 1)[0] + ".mass.mtx")
        scipy.io.mmwrite(str(mtx), sp.coo_matrix(data.mass), symmetry="symmetric",
                         precision=17)
        mass_entry = {"kind": "consistent", "file": mtx.name}
        names.insert(0, mtx.name)
    meshio.write(path, meshio.Mesh(data.nodes, cells, point_data=point_data))
    side = {
        "format": SIDECAR_TAG, "version": 1, "units": "SI", "source_units": data.units,
        "M_ff": data.M_ff.tolist(), "K_ff": data.K_ff.tolist(),
        "damping_ratio": None if data.damping_ratio is None else data.damping_ratio.tolist(),
        "damping_matrix": (None if data.damping_matrix is None
                           else data.damping_matrix.tolist()),
        "reference_frame": data.reference_frame.value, "attach_set": data.attach_set,
        "node_sets": {k: v.tolist() for k, v in data.node_sets.items()},
        "mode_kinds": [k.value for k in data.mode_kinds],
        "constraint_fraction": data.constraint_fraction.tolist(),
        "mass": mass_entry, "metadata": data.metadata,
    }
    sidecar_path(path).write_text(json.dumps(side, indent=1, default=_json_default))


def read_vtu(path: Path, units=None) -> ModalData:
    """Read a mesh with ``phi_<j>`` point data and its ``.modal.json`` sidecar."""
    import meshio

    side_file = sidecar_path(path)
    if not side_file.exists():
        raise ReadError(f"{path}: the modal matrices live in a sidecar {side_file.name!r} "
                        "next to the mesh, which does not exist")
    try:
        side = json.loads(side_file.read_text())
    except json.JSONDecodeError as exc:
        raise ReadError(f"{side_file}: invalid JSON ({exc})") from exc
    if side.get("format") != SIDECAR_TAG:
        raise ReadError(f"{side_file}: key 'format' is {side.get('format')!r}, expected "
                        f"{SIDECAR_TAG!r}")
    try:
        mesh = meshio.read(path)
    except (Exception, SystemExit) as exc:  # meshio raises many types, even SystemExit
        raise ReadError(f"{path}: meshio cannot read it ({exc})") from None
    missing_keys = [k for k in ("M_ff", "K_ff", "reference_frame", "mass") if k not in side]
    if missing_keys:
        raise ReadError(f"{side_file}: missing key(s) {missing_keys} (the reference frame is "
                        "never assumed: state 'attached' with 'attach_set', or 'mean-axis')")
    stated = side.get("units")
    if units is not None and stated is not None and get_units(units) != get_units(stated):
        warnings.warn(f"{path.name}: read in the units {units!r} given to the reader; its "
                      f"sidecar {side_file.name!r} states {stated!r} (every value would "
                      "be taken in the wrong units if the sidecar is right)", UnitsWarning,
                      stacklevel=2)
    system = get_units(units if units is not None else side.get("units", "SI"))
    length, mass_u, t_u = system.length, system.mass, system.time
    pdata = mesh.point_data
    n_modes = len(side.get("M_ff", []))
    missing = [f"phi_{j + 1}" for j in range(n_modes) if f"phi_{j + 1}" not in pdata]
    if missing:
        raise ReadError(f"{path}: point data {missing} missing; the sidecar lists {n_modes} "
                        "modes")
    phi = np.column_stack([np.asarray(pdata[f"phi_{j + 1}"], float).ravel()
                           for j in range(n_modes)]) * length
    psi = None
    if n_modes and "psi_1" in pdata:
        psi = np.column_stack([np.asarray(pdata[f"psi_{j + 1}"], float).ravel()
                               for j in range(n_modes)])
    mass_entry = side.get("mass", {})
    if mass_entry.get("kind") == "lumped":
        if "nodal_mass" not in pdata:
            raise ReadError(f"{path}: sidecar says lumped mass but point data 'nodal_mass' "
                            "is missing")
        mass = np.asarray(pdata["nodal_mass"], float).ravel() * mass_u
    elif mass_entry.get("kind") == "consistent":
        mtx = path.with_name(mass_entry.get("file", ""))
        if not mtx.is_file():
            raise ReadError(f"{side_file}: mass file {str(mtx)!r} does not exist")
        mass = sp.csr_matrix(scipy.io.mmread(str(mtx)))
        dpn = mass.shape[0] // max(len(mesh.points), 1)
        if dpn in (3, 6) and system.name != "SI":
            w = sp.diags(system.dof_weights(dpn, len(mesh.points)))
            mass = (w @ mass @ w).tocsr()
        mass = mass * mass_u
    else:
        raise ReadError(f"{side_file}: key 'mass' must have kind 'lumped' or 'consistent', "
                        f"got {mass_entry!r}")
    node_ids = pdata.get("node_id")
    cells = {block.type: block.data for block in mesh.cells if block.type != "vertex"}
    d_mat = side.get("damping_matrix")
    return _construct(side_file, dict(
        nodes=np.asarray(mesh.points, float)[:, :3] * length, phi=phi, psi=psi,
        M_ff=np.asarray(side["M_ff"], float) * mass_u * length**2,
        K_ff=np.asarray(side["K_ff"], float) * mass_u * length**2 / t_u**2,
        damping_ratio=side.get("damping_ratio"),
        damping_matrix=(None if d_mat is None
                        else np.asarray(d_mat, float) * mass_u * length**2 / t_u),
        mass=mass, node_ids=None if node_ids is None else np.asarray(node_ids).ravel(),
        node_sets=side.get("node_sets", {}), cells=cells,
        reference_frame=side["reference_frame"],
        attach_set=side.get("attach_set"), mode_kinds=side.get("mode_kinds"),
        constraint_fraction=side.get("constraint_fraction"),
        units=side.get("source_units", system.name),
        metadata={**side.get("metadata", {}), "read_from": str(path)},
    ))


def _construct(side_file: Path, kwargs: dict) -> ModalData:
    try:
        return ModalData(**kwargs)
    except FlexmbsError as exc:
        raise ReadError(f"{side_file}: {exc}") from exc


#: This format's entry in flexmbs.modal.io.registry (registered when a format is needed):
#: name, extensions, description, reader, writer.
MODAL_FORMAT = ("vtu", (".vtu",), "VTU mesh with phi_<j> point data + .modal.json sidecar",
                read_vtu, write_vtu)
