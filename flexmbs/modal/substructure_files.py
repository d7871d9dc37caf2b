"""Reading the parts that ``flexmbs beam/reduce --substructures K`` wrote: the K modal
data files and the ``.substructures.json`` sidecar that says how they join
(docs/flexible_bodies.md, "Substructured parts").

:func:`read_substructures` gives a :class:`~flexmbs.modal.substructures.SplitModel`
whose parent stands for the whole part (its node labels and node sets, gathered from
the parts' files) and the parts' ModalData, which
:func:`flexmbs.model.substructured.add_substructured_part` adds and joins as one
multibody part.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ..errors import ReadError, ValidationError
from .substructures import Cut, SplitModel

FORMAT = "flexmbs-substructures"


@dataclass(frozen=True, eq=False)
class PartsParent:
    """The whole part as its parts' files describe it: every node label once and the
    node sets (by label), for placing markers (:meth:`resolve_nodes` as FEModel's)."""

    node_ids: np.ndarray
    node_sets: dict

    def resolve_nodes(self, nodes, what: str = "node set") -> np.ndarray:
        """Indices into :attr:`node_ids` of a set name or node labels."""
        if isinstance(nodes, str):
            if nodes not in self.node_sets:
                raise ValidationError(f"{what} {nodes!r} is not a node set of the parts; "
                                      f"known sets: {sorted(self.node_sets) or 'none'}")
            return self.node_sets[nodes]
        labels = np.asarray(nodes, dtype=np.int64).ravel()
        index = np.searchsorted(self.node_ids, labels)
        bad = [int(v) for v, i in zip(labels, index, strict=True)
               if i >= self.node_ids.size or self.node_ids[i] != v]
        if bad:
            raise ValidationError(f"{what} names node label(s) {bad[:5]} that the parts do "
                                  f"not have")
        return index


def _field(path: Path, info: dict, key: str, kind):
    value = info.get(key)
    if not isinstance(value, kind):
        raise ReadError(f"{path}: key {key!r} must be a {kind.__name__}, got {value!r} "
                        f"(not a sidecar of flexmbs beam/reduce --substructures?)")
    return value


def read_substructures(path, inputs: list | None = None,
                       reader=None) -> tuple[SplitModel, list]:
    """(split, ModalData per part, root part first) of the sidecar ``path`` and the part
    files it names (beside it), each appended to ``inputs`` (a case's input files) when
    given. ReadError naming the file and the key when the sidecar is not one, or a part
    file is missing or unreadable."""
    from .io import read_modal

    path = Path(path)
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReadError(f"{path}: cannot read the substructures sidecar ({exc})") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        found = info.get("format") if isinstance(info, dict) else info
        raise ReadError(f"{path}: format is {found!r}, expected {FORMAT!r} (the "
                        f".substructures.json of flexmbs beam/reduce --substructures)")
    files = _field(path, info, "files", list)
    cuts = _field(path, info, "cuts", list)
    if not files:
        raise ReadError(f"{path}: key 'files' lists no part file")
    datas = []
    for name in files:
        file = (path.parent / str(name)).resolve()
        if not file.is_file():
            raise ReadError(f"{path}: part file {name!r} is missing (looked for {file})")
        if inputs is not None:
            inputs.append(file)
        datas.append((reader or read_modal)(file))
    labels = {}
    for data in datas:
        for label, node in zip(data.node_ids, data.nodes, strict=True):
            labels.setdefault(int(label), node)
    node_ids = np.array(sorted(labels), dtype=np.int64)
    sets: dict = {}
    for data in datas:
        for name, members in data.node_sets.items():
            sets.setdefault(name, set()).update(int(v) for v in data.node_ids[members])
    node_sets = {name: np.searchsorted(node_ids, np.array(sorted(v), dtype=np.int64))
                 for name, v in sets.items()}
    try:
        cut_objs = tuple(Cut(int(c["node"]), int(c["inner"]) - 1, int(c["outer"]) - 1,
                             nodes=tuple(int(v) for v in c.get("nodes", ())),
                             name=str(c.get("surface", "")),
                             joint=str(c.get("joint", "fixed"))) for c in cuts)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReadError(f"{path}: a cut must give node, inner and outer part numbers "
                        f"({type(exc).__name__}: {exc})") from None
    n = len(datas)
    odd = [c.joint for c in cut_objs if c.joint not in ("fixed", "nodes")]
    if odd:
        raise ReadError(f"{path}: a cut's joint must be 'fixed' or 'nodes', got {odd[0]!r}")
    bad = [c for c in cut_objs if not (0 <= c.inner < n and 0 <= c.outer < n)]
    if bad:
        raise ReadError(f"{path}: cut at node {bad[0].node} joins parts {bad[0].inner + 1} "
                        f"and {bad[0].outer + 1}, but there are {n} part files")
    parts = tuple(SimpleNamespace(fe=SimpleNamespace(node_ids=np.asarray(d.node_ids)))
                  for d in datas)
    return SplitModel(parts, cut_objs, PartsParent(node_ids, node_sets)), datas
