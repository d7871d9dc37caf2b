"""``flexmbs beam --substructures K`` and ``flexmbs reduce --substructures K``: the beam,
or a solid or shell part read with its elements, cut into K Craig–Bampton parts, written
as K modal data files plus a JSON sidecar that says how to join them
(docs/flexible_bodies.md, "Substructured parts" and "Substructured solid and shell
parts")."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ValidationError
from ..modal.io import check_writable, write_modal
from ..modal.substructures import cuts_along, reduce_parts, split_line_model
from ._common import emit_json

#: Options of ``flexmbs beam`` that choose another reduction than the parts' own.
NOT_WITH_PARTS = (("--interface-nodes", "interface_nodes"), ("--attach-nodes", "attach_nodes"),
                  ("--free", "free"), ("--keep", "keep"),
                  ("--static-correction", "static_correction"),
                  ("--scale-stiffness", "scale_stiffness"), ("--scale-mass", "scale_mass"))


def part_paths(output: str, k: int) -> tuple[list[Path], Path]:
    """``part.fmd.h5`` → ([part.1.fmd.h5, …, part.K.fmd.h5], part.substructures.json)."""
    path = Path(output)
    name = path.name
    stem, ext = (name[:-7], ".fmd.h5") if name.endswith(".fmd.h5") else (
        path.stem, path.suffix or ".fmd.h5")
    return ([path.with_name(f"{stem}.{j}{ext}") for j in range(1, k + 1)],
            path.with_name(f"{stem}.substructures.json"))


def run_parts(fe, args) -> int:
    """Split ``fe`` into ``args.substructures`` parts, reduce (``--modes`` fixed-interface
    modes each), write the files and the sidecar, print a summary."""
    from ..modal.part_stiffening import with_parts_stiffening
    from ..modal.stress import with_stress

    k = args.substructures
    # a meshed part, solid or shell (ends given by --attach-nodes and --interface-nodes)
    solid = fe.dofs_per_node == 3 or bool({"quad", "triangle"} & set(fe.cells))
    stray = [opt for opt, attr in NOT_WITH_PARTS if getattr(args, attr, None)
             and not (solid and attr in ("attach_nodes", "interface_nodes"))]
    if args.clamp_nodes not in (None, "root"):
        stray.insert(0, "--clamp-nodes")
    if stray:
        raise ValidationError(f"--substructures {k}: {', '.join(stray)} do not apply; every "
                              f"part is reduced by Craig–Bampton with its frame attached at "
                              f"its root-side cut (--modes fixed-interface modes each)")
    files, sidecar = part_paths(args.output, k)
    for path in files:
        check_writable(str(path))
    if solid:
        split, datas = _solid_parts(fe, args)
    else:
        split = split_line_model(fe, cuts_along(fe, k))
        datas = reduce_parts(split, args.modes, normalization=args.normalization)
    if args.stiffening:  # the stresses of the whole part, each part its own elements'
        datas = with_parts_stiffening(split, datas)
    written = []
    for part, data, path in zip(split.parts, datas, files, strict=True):
        if args.modal_derivatives:
            from ..modal.derivatives import with_modal_derivatives

            data = with_modal_derivatives(data, part.fe)
        if args.stress:
            data = with_stress(data, part.fe)
        written.append(str(write_modal(data, str(path))))
    info = {
        "format": "flexmbs-substructures",
        "version": 1,
        "files": [p.name for p in files],
        "cuts": [{"node": c.node, "inner": c.inner + 1, "outer": c.outer + 1,
                  "joint": c.joint, **({"surface": c.name, "nodes": list(c.nodes)}
                                       if c.name else {})} for c in split.cuts],
        "nodes": [part.fe.node_ids.tolist() for part in split.parts],
        "attach": [part.attach.tolist() for part in split.parts],
        "interface": [part.interface.tolist() for part in split.parts],
        "modes": [d.n_modes for d in datas],
    }
    sidecar.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    if args.json:
        emit_json({**info, "outputs": written, "sidecar": str(sidecar)})
        return 0
    for j, (path, data) in enumerate(zip(written, datas, strict=True), 1):
        labels = split.parts[j - 1].fe.node_ids
        print(f"part {j}: nodes {labels.min()}-{labels.max()}, {data.n_modes} modes "
              f"(f1 = {data.frequencies[0]:.4g} Hz) -> {path}")
    where = ([f"{c.name} ({len(c.nodes)} nodes)" for c in split.cuts] if solid
             else f"nodes {[c.node for c in split.cuts]}")
    print(f"joints (fixed) at {where}; written {sidecar}")
    return 0


def _solid_parts(fe, args):
    """(split, ModalData per part) of a solid or shell model: cut surfaces at the node
    layers nearest to equal stations from the root set (``--attach-nodes``, default the
    set ``root``) to the tip set (``--interface-nodes``, default ``tip``), or, where no
    layer lies across that straight line (a bent part), between the cell layers swept
    from the root; rigid or tied (``--cuts``; docs/flexible_bodies.md, "Substructured
    solid and shell parts")."""
    from ..modal.solid_substructures import (
        NoLayerError,
        reduce_solid_parts,
        split_solid_model,
        surfaces_along,
        surfaces_along_mesh,
    )
    from ._common import parse_nodes

    root = parse_nodes(args.attach_nodes, "--attach-nodes")
    tip = parse_nodes(args.interface_nodes, "--interface-nodes")
    root, tip = ("root" if root is None else root), ("tip" if tip is None else tip)
    try:
        surfaces = surfaces_along(fe, args.substructures, root=root, tip=tip)
    except NoLayerError as straight:  # a bent part: its own cell layers, if swept
        try:
            surfaces = surfaces_along_mesh(fe, args.substructures, root=root)
        except ValidationError as swept:
            raise ValidationError(f"{straight}; along the mesh: {swept}") from None
        if not getattr(args, "json", False):
            print("flexmbs reduce: no node layer lies across the straight line from the "
                  "root to the tip set; the cut surfaces follow the mesh's cell layers")
    split = split_solid_model(fe, surfaces, root=root, ends=(tip,),
                              cuts=getattr(args, "cuts", "rigid"))
    return split, reduce_solid_parts(split, args.modes, normalization=args.normalization)
