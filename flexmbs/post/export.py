"""Deformed meshes over time for ParaView, through meshio.

* ``.pvd``: a ParaView collection with one VTU per output time in ``<stem>_vtu/``; the
  points are the deformed global positions ``R + A(ū0 + Φ ξ)`` (docs/theory_ffrf.md §2), so the
  meshes move and deform as computed.
* ``.xdmf`` (+ ``.h5``): one time series on the initial mesh; point data ``motion`` is
  the position at each time minus the initial one (ParaView: *Warp By Vector* with
  ``motion`` shows the moving, deforming body).

Point data in both: ``displacement`` (elastic A Φ ξ, global axes [m]),
``displacement_magnitude`` [m], ``body`` (index of the flexible body), and the modal
contributions ``<body>.mode<j>`` = A Φⱼ ξⱼ [m] (zero on the other bodies' points).
All flexible bodies go into one mesh; rigid bodies are not exported.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from .._files import atomic_outputs
from ..errors import ValidationError, WriteError
from .frames import deformed, flexible_bodies, modal_contributions

FORMATS = (".pvd", ".xdmf")


@contextlib.contextmanager
def _working_directory(folder):
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def _cells(bodies):
    """meshio cell blocks of all bodies with point offsets; (blocks, offsets)."""
    import meshio

    blocks, offsets, offset = [], [], 0
    for body in bodies:
        offsets.append(offset)
        for ctype, conn in body.cells.items():
            blocks.append(meshio.CellBlock(ctype, np.asarray(conn, dtype=np.int64) + offset))
        offset += len(body.nodes)
    if not blocks:  # point clouds: one vertex cell per node
        n = offset
        blocks = [meshio.CellBlock("vertex", np.arange(n, dtype=np.int64)[:, None])]
    return blocks, offsets


def snapshot_data(result, k: int, bodies=None):
    """(points (N, 3), point_data dict) of all flexible bodies at output index ``k``."""
    bodies = flexible_bodies(result) if bodies is None else bodies
    n_total = sum(len(b.nodes) for b in bodies)
    points, disp = np.zeros((n_total, 3)), np.zeros((n_total, 3))
    data: dict[str, np.ndarray] = {"body": np.zeros(n_total)}
    offset = 0
    for index, body in enumerate(bodies):
        rows = slice(offset, offset + len(body.nodes))
        points[rows], disp[rows] = deformed(result, body, k)
        data["body"][rows] = index
        for j, contrib in enumerate(modal_contributions(result, body, k)):
            field = np.zeros((n_total, 3))
            field[rows] = contrib
            data[f"{body.name}.mode{j + 1}"] = field
        offset += len(body.nodes)
    data["displacement"] = disp
    data["displacement_magnitude"] = np.linalg.norm(disp, axis=1)
    return points, data


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
    bodies = flexible_bodies(result)
    if not bodies:
        raise ValidationError("the results have no flexible body to export")
    blocks, _ = _cells(bodies)
    indices = list(range(0, len(result.t), every))
    # everything is written into a staging folder and moved into place once complete:
    # an interrupted export leaves a previous one as it was (docs/post_processing.md)
    if suffix == ".pvd":
        folder_name = f"{path.stem}_vtu"
        with atomic_outputs(path.parent, [folder_name, path.name], "export") as stage:
            (stage / folder_name).mkdir()
            entries = []
            for n, k in enumerate(indices):
                points, data = snapshot_data(result, k, bodies)
                name = f"{path.stem}_{n:06d}.vtu"
                meshio.write(stage / folder_name / name,
                             meshio.Mesh(points, blocks, point_data=data))
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
    reference, _ = snapshot_data(result, 0, bodies)
    heavy = path.with_suffix(".h5").name
    # meshio writes the .h5 beside the current directory, so write from the stage
    with atomic_outputs(path.parent, [heavy, path.name], "export") as stage, \
            _working_directory(stage), meshio.xdmf.TimeSeriesWriter(path.name) as writer:
        writer.write_points_cells(reference, blocks)
        for n, k in enumerate(indices):
            points, data = snapshot_data(result, k, bodies)
            data["motion"] = points - reference
            writer.write_data(float(result.t[k]), point_data=data)
            if progress is not None:
                progress(n + 1, len(indices))
    return path
