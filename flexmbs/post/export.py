"""Deformed meshes over time for ParaView, through meshio.

* ``.pvd``: a ParaView collection with one VTU per output time in ``<stem>_vtu/``; the
  points are the deformed global positions ``R + A(ū0 + Φ ξ)`` (docs/theory_ffrf.md §2), so the
  meshes move and deform as computed.
* ``.xdmf`` (+ ``<name>.xdmf.h5``, its heavy data): one time series on the initial
  mesh; point data ``motion`` is the position at each time minus the initial one
  (ParaView: *Warp By Vector* with ``motion`` shows the moving, deforming body). The
  heavy-data file is named after the whole XDMF name (``run.res.xdmf`` ->
  ``run.res.xdmf.h5``), so it never lands on the results file beside it; an export
  whose output would overwrite (or, for the ``_vtu`` folder, contain) the results file
  it reads is refused.

The whole scene goes into one mesh per time: the flexible bodies' cells; each rigid
body as lines joining its frame origin and its markers (the points it carries: where
its joints and forces act) and, when it has a drawing geometry (an STL/OBJ file), that
surface's triangles, all moving with it; and each joint as a vertex at its marker i.
Point data: ``part`` (0 flexible body, 1 rigid body, 2 joint), ``body`` (on body points
the body's index k in the results file, ``/bodies/<k>``, the same numbering for
flexible and rigid bodies; on joint points the joint's index in the results' model
joints), ``displacement`` (elastic A Φ ξ, global axes [m]; zero on rigid
bodies and joints), ``displacement_magnitude`` [m], and the modal contributions
``<body>.mode<j>`` = A Φⱼ ξⱼ [m] (zero on the other points), and ``von_mises`` [Pa]
when a body carries stress modes (docs/stress.md). A nonlinear beam is drawn as lines
through its node bodies' origins, which carry ``beam_force`` (N, Q_y, Q_z [N]),
``beam_moment`` (T, M_y, M_z [N m]) in the element axes and ``beam_stress`` (the largest
|σ| over the section's fibre points [Pa]), each the mean of the elements on either side
of the node (zero elsewhere; docs/nonlinear_beam.md). Field data (PVD): every sensor's
values at that time (``sensor.<name>``, its components), the time [s], and the names
that ``body`` indexes, ``body_names`` and ``joint_names``: each the UTF-8 bytes (uint8)
of the names in index order, every name ended by a NUL byte (``joint_names`` absent
when there is no joint; VTK string arrays would make the VTU files unreadable to meshio);
:func:`names_from_field_data` decodes them.
XDMF time series carry no field data: there the names are ``Information`` elements
(``Name="body_names"`` / ``"joint_names"``, ``Value`` a JSON list) of the XDMF domain.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from pathlib import Path
from xml.etree import ElementTree as ET
from xml.sax.saxutils import quoteattr

import numpy as np

from .._files import atomic_outputs
from ..errors import ValidationError, WriteError
from .frames import deformed, flexible_bodies, modal_contributions, pose

FORMATS = (".pvd", ".xdmf")


@contextlib.contextmanager
def _working_directory(folder):
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def body_numbers(result) -> dict[str, int]:
    """{body name: its index k in the results file (``/bodies/<k>``)}. A run records its
    bodies in coordinate order (``/bodies/<k>`` holds the k-th body's coordinates), so
    the index is the rank of the body's first coordinate ``start``; this does not
    depend on the order in which a loaded result lists its bodies."""
    order = sorted(result.bodies, key=lambda name: int(result.bodies[name].get("start", 0)))
    return {name: k for k, name in enumerate(order)}


def joint_names(result) -> list[str]:
    """The joints' names in the order of the results' model (the joint points' ``body``
    index)."""
    return [str(j["name"]) for j in getattr(result, "model", {}).get("joints", [])]


def names_to_field_data(names) -> np.ndarray:
    """The names as a uint8 array: each name's UTF-8 bytes followed by a NUL byte."""
    return np.frombuffer("".join(f"{name}\0" for name in names).encode(), dtype=np.uint8)


def names_from_field_data(values) -> list[str]:
    """The names stored by :func:`names_to_field_data` (e.g. the ``body_names`` field
    data of an exported VTU file)."""
    return bytes(np.asarray(values, dtype=np.uint8).ravel()).decode().split("\0")[:-1]


def _rigid_parts(result):
    """[(name, coordinate start, body-frame points (k, 3), marker count, triangles)] of
    the rigid bodies: the frame origin and marker origins (as the animations draw them),
    then the points of the body's drawing geometry, whose triangles (M, 3) index the
    part's points (none without a geometry)."""
    from .animate import _rigid_shapes

    parts = []
    for name, start, local in _rigid_shapes(result):
        info = result.bodies[name]
        tris = np.zeros((0, 3), dtype=np.int64)
        points = local
        if "shape_points" in info:
            points = np.vstack([local, np.asarray(info["shape_points"], dtype=float)])
            tris = np.asarray(info["shape_triangles"], dtype=np.int64) + len(local)
        parts.append((name, start, points, len(local), tris))
    return parts


def _joint_points(result):
    """[(name, described marker i)] of the joints."""
    from .animate import _joint_markers

    return _joint_markers(result)


def _beam_rows(result, bodies, rigid) -> dict[str, list[int]]:
    """The point rows of each nonlinear beam's node origins in the scene (the first
    point of each node body's rigid part), root to tip."""
    row, first = sum(len(b.nodes) for b in bodies), {}
    for name, _, points, _, _ in rigid:
        first[name] = row
        row += len(points)
    beams = getattr(result, "model", {}).get("beams", {})
    return {beam: [first[n] for n in nodes] for beam, nodes in beams.items()
            if all(n in first for n in nodes)}


def _cells(bodies, rigid=(), joints=(), beam_rows=None):
    """meshio cell blocks of the whole scene (flexible bodies' cells, rigid bodies as
    lines from their first point, nonlinear beams as lines through their nodes, joints
    as vertices) and the flexible bodies' point offsets: (blocks, offsets)."""
    import meshio

    blocks, offsets, offset = [], [], 0
    for body in bodies:
        offsets.append(offset)
        for ctype, conn in body.cells.items():
            blocks.append(meshio.CellBlock(ctype, np.asarray(conn, dtype=np.int64) + offset))
        if not body.cells:  # a point cloud: one vertex cell per node
            blocks.append(meshio.CellBlock(
                "vertex", offset + np.arange(len(body.nodes), dtype=np.int64)[:, None]))
        offset += len(body.nodes)
    lines, triangles = [], []
    for _, _, points, n_markers, tris in rigid:
        lines += [[offset, offset + j] for j in range(1, n_markers)]
        if n_markers == 1:
            blocks.append(meshio.CellBlock("vertex", np.array([[offset]], np.int64)))
        if len(tris):
            triangles.append(tris + offset)
        offset += len(points)
    for rows in (beam_rows or {}).values():
        lines += [list(pair) for pair in itertools.pairwise(rows)]
    if lines:
        blocks.append(meshio.CellBlock("line", np.array(lines, dtype=np.int64)))
    if triangles:
        blocks.append(meshio.CellBlock("triangle", np.vstack(triangles)))
    if joints:
        blocks.append(meshio.CellBlock(
            "vertex", offset + np.arange(len(joints), dtype=np.int64)[:, None]))
    return blocks, offsets


def snapshot_data(result, k: int, bodies=None, rigid=None, joints=None):
    """(points (N, 3), point_data dict) of the whole scene at output index ``k``:
    flexible bodies, then rigid bodies' points, then joints (see the module docstring)."""
    from .animate import _marker_position

    bodies = flexible_bodies(result) if bodies is None else bodies
    rigid = _rigid_parts(result) if rigid is None else rigid
    joints = _joint_points(result) if joints is None else joints
    n_flex = sum(len(b.nodes) for b in bodies)
    n_total = n_flex + sum(len(part[2]) for part in rigid) + len(joints)
    points, disp = np.zeros((n_total, 3)), np.zeros((n_total, 3))
    data: dict[str, np.ndarray] = {"body": np.zeros(n_total), "part": np.zeros(n_total)}
    number = body_numbers(result)  # one numbering: the results file's /bodies/<k>
    offset = 0
    for body in bodies:
        rows = slice(offset, offset + len(body.nodes))
        points[rows], disp[rows] = deformed(result, body, k)
        data["body"][rows] = number[body.name]
        for j, contrib in enumerate(modal_contributions(result, body, k)):
            field = np.zeros((n_total, 3))
            field[rows] = contrib
            data[f"{body.name}.mode{j + 1}"] = field
        offset += len(body.nodes)
    for name, start, local, _, _ in rigid:
        rows = slice(offset, offset + len(local))
        r, a = pose(result, start, k)
        points[rows] = r + local @ a.T
        data["body"][rows] = number[name]
        data["part"][rows] = 1
        offset += len(local)
    joint_index = {name: j for j, name in enumerate(joint_names(result))}
    for index, (name, marker) in enumerate(joints):
        points[offset] = _marker_position(result, marker, k)
        data["body"][offset] = joint_index.get(name, index)
        data["part"][offset] = 2
        offset += 1
    data["displacement"] = disp
    data["displacement_magnitude"] = np.linalg.norm(disp, axis=1)
    from ..modal.stress import stress_field_name

    if any(stress_field_name(result.bodies.get(b.name, {}).get("fields", {})) is not None
           for b in bodies):
        from .animate import _von_mises

        stress, offset = np.zeros(n_total), 0
        for body in bodies:
            stress[offset:offset + len(body.nodes)] = _von_mises(result, body, k)
            offset += len(body.nodes)
        data["von_mises"] = stress  # [Pa], from the stress modes (docs/stress.md)
    _beam_point_data(result, k, _beam_rows(result, bodies, rigid), data, n_total)
    return points, data


def _beam_point_data(result, k, beam_rows, data, n_total) -> None:
    """Add the nonlinear beams' node section forces, moments and stresses at output
    ``k`` to ``data`` (module docstring)."""
    from .beam_forces import at_output, beam_names, fibre_stress, nodal, section_forces

    names = [name for name in beam_names(result) if name in beam_rows]
    if not names:
        return
    force, moment, stress = np.zeros((n_total, 3)), np.zeros((n_total, 3)), np.zeros(n_total)
    for name in names:
        rows = beam_rows[name]
        one = at_output(result, k)
        n, m = section_forces(one, name)
        force[rows], moment[rows] = nodal(n)[0], nodal(m)[0]
        stress[rows] = nodal(fibre_stress(one, name))[0]
    data["beam_force"], data["beam_moment"], data["beam_stress"] = force, moment, stress


def _field_data(result, k: int) -> dict[str, np.ndarray]:
    """The time and every sensor's values at output k, as VTK field data."""
    out = {"time": np.array([float(result.t[k])])}
    for name, record in getattr(result, "sensors", {}).items():
        out[f"sensor.{name}"] = np.asarray(record["values"], dtype=float)[k].copy()
    return out


def _name_lists(result) -> dict[str, list[str]]:
    """{"body_names": bodies in results-file order, "joint_names": joints in model
    order}: what the point data ``body`` indexes."""
    number = body_numbers(result)
    return {"body_names": sorted(number, key=number.get), "joint_names": joint_names(result)}


def heavy_data_path(path) -> Path:
    """The heavy-data (HDF5) file of an XDMF export ``path``: ``<name>.xdmf.h5`` beside
    it (``run.res.xdmf`` -> ``run.res.xdmf.h5``, never the results file ``run.res.h5``)."""
    path = Path(path)
    return path.with_name(path.name + ".h5")


def _refuse_reading_target(result, path: Path, outputs) -> None:
    """WriteError when an output (a file, or a folder that would be replaced whole) is, or
    holds, the results file ``result`` was read from: the export would destroy it."""
    source = getattr(result, "source", "")
    if not source:
        return
    read = Path(source).resolve()
    for out in outputs:
        out = Path(out).resolve()
        same = out == read or (out.exists() and read.exists() and os.path.samefile(out, read))
        if same or out in read.parents:
            raise WriteError(
                f"cannot export to {str(path)!r}: it would overwrite {str(out)!r}, which "
                f"{'is' if same else 'holds'} the results file being read ({source!r}); "
                "choose another output name or folder")


def _xdmf_writer(filename, heavy):
    """meshio's XDMF time-series writer with the heavy-data file named ``heavy`` (meshio
    names it ``<stem>.h5``: ``run.res.xdmf`` would write ``run.res.h5``)."""
    import meshio

    class Writer(meshio.xdmf.TimeSeriesWriter):
        def __enter__(self):
            import h5py

            self.h5_filename = heavy
            self.h5_file = h5py.File(self.h5_filename, "w")
            return self

    return Writer(filename)


def _xdmf_blocks(blocks):
    """Cell blocks an XDMF time series can hold: meshio writes lines among other cell
    types wrongly (its mixed topology), so where there are lines the vertices (joints,
    single-point bodies) become degenerate lines and all lines one block."""
    import meshio

    types = {b.type for b in blocks}
    if "line" not in types or len(types) == 1:
        return blocks
    lines = [np.asarray(b.data, np.int64) for b in blocks if b.type == "line"]
    lines += [np.repeat(np.asarray(b.data, np.int64), 2, axis=1) for b in blocks
              if b.type == "vertex"]
    rest = [b for b in blocks if b.type not in ("line", "vertex")]
    return [*rest, meshio.CellBlock("line", np.concatenate(lines))]


def _write_vtu(path, mesh, field_data: dict) -> None:
    """The mesh as VTU with VTK field data (through pyvista: meshio's VTU writer drops
    field data)."""
    import pyvista as pv

    grid = pv.from_meshio(mesh)
    for key, values in field_data.items():
        grid.field_data[key] = values
    grid.save(str(path))


def export(result, path, *, progress=None, every: int = 1) -> Path:
    """Write the deformed flexible bodies of ``result`` at every ``every``-th output time
    to ``path`` (``.pvd`` or ``.xdmf``); returns the path. ``progress(done, total)`` is
    called after each time written."""
    import meshio

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise WriteError(f"cannot export to {str(path)!r}: use a .pvd or .xdmf file name")
    if not path.parent.is_dir():
        raise WriteError(f"cannot export to {str(path)!r}: folder does not exist")
    if not (isinstance(every, int) and every >= 1):
        raise ValidationError(f"every must be an integer >= 1, got {every!r}")
    bodies, rigid, joints = flexible_bodies(result), _rigid_parts(result), _joint_points(result)
    if not (bodies or rigid):
        raise ValidationError("the results have no body to export")
    blocks, _ = _cells(bodies, rigid, joints, _beam_rows(result, bodies, rigid))
    indices = list(range(0, len(result.t), every))
    lists = _name_lists(result)
    # everything is written into a staging folder and moved into place once complete:
    # an interrupted export leaves a previous one as it was (docs/post_processing.md)
    if suffix == ".pvd":
        folder_name = f"{path.stem}_vtu"
        _refuse_reading_target(result, path, [path, path.parent / folder_name])
        names = {key: names_to_field_data(value) for key, value in lists.items()
                 if value}  # (meshio cannot read an empty VTU array back)
        with atomic_outputs(path.parent, [folder_name, path.name], "export") as stage:
            (stage / folder_name).mkdir()
            entries = []
            for n, k in enumerate(indices):
                points, data = snapshot_data(result, k, bodies, rigid, joints)
                name = f"{path.stem}_{n:06d}.vtu"
                _write_vtu(stage / folder_name / name,
                           meshio.Mesh(points, blocks, point_data=data),
                           {**_field_data(result, k), **names})
                entries.append((float(result.t[k]), f"{folder_name}/{name}"))
                if progress is not None:
                    progress(n + 1, len(indices))
            lines = ['<?xml version="1.0"?>',
                     '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">',
                     "  <Collection>"]
            lines += [f'    <DataSet timestep="{t!r}" part="0" file={quoteattr(f)}/>'
                      for t, f in entries]
            lines += ["  </Collection>", "</VTKFile>"]
            (stage / path.name).write_text("\n".join(lines) + "\n")
        return path
    heavy = heavy_data_path(path).name
    if ":" in path.name:  # the XDMF refers to its heavy data as "<file>:<dataset>"
        raise WriteError(f"cannot export to {str(path)!r}: an XDMF file name cannot "
                         "contain ':'")
    _refuse_reading_target(result, path, [path, path.parent / heavy])
    reference, _ = snapshot_data(result, 0, bodies, rigid, joints)
    # meshio writes the .h5 beside the current directory, so write from the stage
    with atomic_outputs(path.parent, [heavy, path.name], "export") as stage, \
            _working_directory(stage), _xdmf_writer(path.name, heavy) as writer:
        writer.write_points_cells(reference, _xdmf_blocks(blocks))
        for key, value in lists.items():  # the names `body` indexes (module docstring)
            ET.SubElement(writer.domain, "Information", Name=key, Value=json.dumps(value))
        for n, k in enumerate(indices):
            points, data = snapshot_data(result, k, bodies, rigid, joints)
            data["motion"] = points - reference
            for key, values in _field_data(result, k).items():  # sensors as point data
                if key != "time":  # (XDMF time series carry no per-time field data)
                    data[key] = np.broadcast_to(values, (len(points), values.size)).copy()
            writer.write_data(float(result.t[k]), point_data=data)
            if progress is not None:
                progress(n + 1, len(indices))
    return path
