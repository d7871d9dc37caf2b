"""Split an FE model of line elements into substructures joined at cut nodes
(docs/flexible_bodies.md, "Substructured parts").

Linear FFRF holds while the elastic deflection of a body stays small in its own frame.
A slender part that bends far (an elastica) can still be modelled with it when it is
cut into k substructures, each a flexible body with its own floating frame, joined at
the cuts: the frames follow the large rotations, each piece deflects little in its own
frame. :func:`split_line_model` does the cutting on the FE level:

* the parts are the connected pieces of the ``line`` cells once the cut nodes are
  duplicated (a chain gives k parts for k − 1 cuts, a branched frame more);
* the parts are ordered from the ``root`` outwards: part 0 holds the root, and every
  other part hangs on the part nearer the root at one cut node, its *attach* node;
* each part's matrices are the sum of its cells' element matrices (from
  ``element_matrices``, built in for :func:`~flexmbs.modal.fe.beam.straight_beam`
  models) plus the node-local rest of the parent's matrices (point masses) at the
  nodes it owns, so that the parts add up to the parent exactly.

:func:`reduce_parts` reduces every part by Craig–Bampton with its frame attached at its
attach node (the root for part 0) and constraint modes at its other cut nodes and at the
``ends`` (the tip, where loads and joints act). The joining (fixed joints between the
cut-node markers of neighbouring parts) is :mod:`flexmbs.model.substructured`.

Every node keeps its parent label: a marker on node label m goes on the part that
:meth:`SplitModel.part_of` names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from ..errors import ValidationError
from .femodel import FEModel

#: The rest of the parent's matrices after the cells (point masses) must sit on single
#: nodes; entries coupling two nodes above this fraction of the largest entry are refused.
COUPLING_RTOL = 1e-9


@dataclass(frozen=True, eq=False)
class Substructure:
    """One part of a split model.

    Attributes
    ----------
    fe : FEModel
        The part's FE model: its nodes with the parent's coordinates [m] (body frame of
        the parent) and labels, the parent's node sets restricted to them, the cells of
        the part.
    attach : ndarray of int
        Node labels fixed to the part's frame (the root, or the cut towards it).
    interface : ndarray of int
        Node labels that get Craig–Bampton constraint modes (the other cuts and the
        ends the part holds).
    """

    fe: FEModel
    attach: np.ndarray
    interface: np.ndarray


@dataclass(frozen=True)
class Cut:
    """A cut node (parent label ``node``) between part ``inner`` (nearer the root, where
    the node is an interface node) and part ``outer`` (whose frame is attached there).
    A cut surface of a solid (:mod:`flexmbs.modal.solid_substructures`) also gives its
    node labels ``nodes``, its node-set name ``name`` in both parts and how the parts
    join there: ``joint`` "fixed" (a rigid surface: one fixed joint) or "nodes" (a
    flexible one: a spherical joint at each node)."""

    node: int
    inner: int
    outer: int
    nodes: tuple = ()
    name: str = ""
    joint: str = "fixed"


@dataclass(frozen=True, eq=False)
class SplitModel:
    """The parts of a split FE model (root first) and the cuts joining them."""

    parts: tuple[Substructure, ...]
    cuts: tuple[Cut, ...]
    parent: FEModel

    @property
    def k(self) -> int:
        """Number of parts."""
        return len(self.parts)

    def part_of(self, label: int) -> int:
        """Index of the part that holds node ``label`` (a cut node: the part attached
        there, whose frame it is fixed to); ValidationError for an unknown label."""
        for cut in self.cuts:
            if cut.node == int(label) or int(label) in cut.nodes:
                return cut.outer
        for j, part in enumerate(self.parts):
            if np.any(part.fe.node_ids == int(label)):
                return j
        raise ValidationError(f"node label {label!r} is not a node of the split model "
                              f"(labels {int(self.parent.node_ids.min())}.."
                              f"{int(self.parent.node_ids.max())})")


# ---------------------------------------------------------------------- element matrices
ElementMatrices = Callable[[int], tuple[np.ndarray, np.ndarray]]


def beam_element_provider(fe: FEModel) -> ElementMatrices:
    """The element matrices of a :func:`~flexmbs.modal.fe.beam.straight_beam` model:
    ``provider(cell)`` → (K_e, M_e), 12 × 12 in the model's (body) axes [N/m, N, N m;
    kg, kg m, kg m²] for the cell's two nodes. ValidationError for another model."""
    from .fe import beam

    meta = fe.metadata
    if meta.get("generator") != beam.GENERATOR:
        raise ValidationError(
            "split: the FE model was not made by straight_beam, so its element matrices "
            "are not known; pass element_matrices=callable(cell) -> (K_e, M_e)")
    section = beam.BeamSection(**meta["section"])
    material = beam.Material(**{k: meta["material"][k] for k in ("E", "nu", "rho", "name")})
    ke, me = beam.beam_element_matrices(meta["element_length"], section, material,
                                        meta["theory"], meta["rotary_inertia"])
    rot = np.asarray(meta["local_frame"], dtype=float)
    t = np.kron(np.eye(4), rot)
    ke, me = t.T @ ke @ t, t.T @ me @ t
    return lambda cell: (ke, me)


# ---------------------------------------------------------------------- splitting
def _labels(fe: FEModel, value, what: str) -> np.ndarray:
    """Node indices of a set name, a label or a list of labels/set names."""
    if isinstance(value, (str, Integral)) and not isinstance(value, bool):
        value = [value]
    out = []
    for item in value:
        if isinstance(item, bool):
            raise ValidationError(f"{what}: {item!r} is not a node label or set name")
        out.extend(fe.resolve_nodes(item if isinstance(item, str) else [item], what))
    return np.unique(np.asarray(out, dtype=np.int64))


def cuts_along(fe: FEModel, k: int, root="root") -> np.ndarray:
    """Node labels that cut a chain of line cells into ``k`` parts of (nearly) equal
    length, measured along the chain from ``root`` [m]; ValidationError when the model is
    not one unbranched chain or has fewer than ``k`` cells."""
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValidationError(f"substructures must be an integer >= 1, got {k!r}")
    lines = _lines(fe)
    if k > lines.shape[0]:
        raise ValidationError(f"substructures = {k} exceeds the {lines.shape[0]} elements of "
                              f"the model: each part needs at least one element")
    degree = np.bincount(lines.ravel(), minlength=fe.n_nodes)
    start = _labels(fe, root, "split: root")
    if np.any(degree > 2) or start.size != 1 or degree[start[0]] != 1:
        raise ValidationError("split: cuts_along needs one unbranched chain of line cells "
                              "starting at a one-node root set; give the cut nodes instead")
    order = [int(start[0])]
    neighbours = {i: [] for i in range(fe.n_nodes)}
    for a, b in lines:
        neighbours[int(a)].append(int(b))
        neighbours[int(b)].append(int(a))
    while True:
        nxt = [n for n in neighbours[order[-1]] if len(order) < 2 or n != order[-2]]
        if not nxt:
            break
        order.append(nxt[0])
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(fe.nodes[order], axis=0),
                                                        axis=1))])
    picks = []
    for j in range(1, k):
        i = int(np.argmin(np.abs(s - j * s[-1] / k)))
        i = min(max(i, picks[-1] + 1 if picks else 1), len(order) - 1 - (k - j))
        picks.append(i)
    return fe.node_ids[np.asarray([order[i] for i in picks], dtype=np.int64)]


def _lines(fe: FEModel) -> np.ndarray:
    other = sorted(set(fe.cells) - {"line"})
    if fe.dofs_per_node != 6 or "line" not in fe.cells or other:
        raise ValidationError(
            "split: substructuring needs a model of line (beam) cells with 6 DOFs per node"
            + (f"; this one also has {other} cells" if other else "")
            + (f"; it has {fe.dofs_per_node} DOFs per node" if fe.dofs_per_node != 6
               else ""))
    return np.asarray(fe.cells["line"], dtype=np.int64)


def split_line_model(fe: FEModel, cuts, *, element_matrices: ElementMatrices | None = None,
                     root="root", ends=("tip",)) -> SplitModel:
    """Split ``fe`` (line cells, 6 DOFs per node) at the ``cuts`` nodes.

    Parameters
    ----------
    fe : FEModel
        The parent model (body-frame coordinates [m]).
    cuts : node label, set name, or a list of them
        The cut nodes; each must lie inside the line mesh (two or more cells meet there).
    element_matrices : callable(cell index) -> (K_e, M_e), optional
        The 12 × 12 stiffness and mass of line cell i in the model's axes and DOF order;
        default :func:`beam_element_provider` (straight_beam models).
    root : node label or set name
        Where part 0's frame is attached (the node the part is clamped or jointed at).
    ends : iterable of set names / labels
        Further nodes that get constraint modes in the part that holds them (where loads
        or joints act); names that are not sets of ``fe`` are skipped.

    Returns
    -------
    SplitModel
        Parts ordered from the root outwards, each knowing its attach and interface
        nodes, and the cuts (node, inner part, outer part).
    """
    lines = _lines(fe)
    provider = element_matrices or beam_element_provider(fe)
    cut_idx = _labels(fe, cuts, "split: cuts") if np.size(cuts) else np.zeros(0, np.int64)
    root_idx = _labels(fe, root, "split: root")
    degree = np.bincount(lines.ravel(), minlength=fe.n_nodes)
    bad = [int(fe.node_ids[i]) for i in cut_idx if degree[i] < 2]
    if bad:
        raise ValidationError(f"split: cut node(s) {bad} are ends of the line mesh (one "
                              f"cell or none meets there); a cut must lie inside it")
    if np.intersect1d(cut_idx, root_idx).size:
        raise ValidationError("split: the root node cannot be a cut node")
    is_cut = np.zeros(fe.n_nodes, bool)
    is_cut[cut_idx] = True
    cut_id = np.full(fe.n_nodes, -1)
    cut_id[cut_idx] = np.arange(cut_idx.size)
    pieces, nodes_of, holder = cell_pieces(list(lines), cut_id, root_idx)
    # order the parts from the root outwards (breadth first over the cut nodes)
    order, attach_of, cut_list = [holder], {holder: root_idx}, []
    for j in order:
        for n in nodes_of[j]:
            if not is_cut[n]:
                continue
            for other, nodes in enumerate(nodes_of):
                if other not in order and n in nodes:
                    order.append(other)
                    attach_of[other] = np.array([n])
                    cut_list.append((int(n), j, other))
    if len(order) != len(pieces):
        raise ValidationError(f"split: {len(pieces) - len(order)} part(s) are not connected "
                              f"to the root through the cuts (the mesh is in pieces)")
    rank = {j: r for r, j in enumerate(order)}
    owner = np.full(fe.n_nodes, -1)
    for j in order:
        owner[nodes_of[j]] = np.where(owner[nodes_of[j]] < 0, rank[j],
                                      owner[nodes_of[j]])
    for n, _, outer in cut_list:
        owner[n] = rank[outer]
    rest_k, rest_m, elems = _node_local_rest(fe, lines, provider)
    end_idx = [_labels(fe, e, "split: ends") for e in ends
               if not isinstance(e, str) or e in fe.node_sets]
    end_idx = np.unique(np.concatenate(end_idx)) if end_idx else np.zeros(0, np.int64)
    parts = []
    for j in order:
        nodes = nodes_of[j]
        local = {int(n): i for i, n in enumerate(nodes)}
        dofs = (nodes[:, None] * 6 + np.arange(6)).ravel()
        mats = []
        for rest, which in ((rest_k, 0), (rest_m, 1)):
            mine = np.isin(np.arange(fe.n_dof) // 6, np.flatnonzero(owner == rank[j]))
            sub = (sp.diags(mine.astype(float)) @ rest)[dofs][:, dofs].tolil()
            for c in pieces[j]:
                idx = np.concatenate([np.arange(6) + 6 * local[int(n)] for n in lines[c]])
                sub[np.ix_(idx, idx)] = sub[np.ix_(idx, idx)].toarray() + elems[c][which]
            mats.append(sub.tocsr())
        sets = {name: np.array([local[int(n)] for n in members if int(n) in local])
                for name, members in fe.node_sets.items()}
        sets = {name: v for name, v in sets.items() if v.size}
        cells = np.array([[local[int(a)], local[int(b)]] for a, b in lines[pieces[j]]])
        part_fe = FEModel(fe.nodes[nodes], mats[1], mats[0], dofs_per_node=6,
                          node_ids=fe.node_ids[nodes], node_sets=sets,
                          cells={"line": cells},
                          metadata={**fe.metadata, "substructure": rank[j] + 1})
        iface = np.setdiff1d(np.concatenate([
            [n for n, inner, _ in cut_list if inner == j],
            end_idx[np.isin(end_idx, nodes)]]).astype(np.int64), attach_of[j])
        parts.append(Substructure(part_fe, fe.node_ids[attach_of[j]], fe.node_ids[iface]))
    cut_objs = tuple(Cut(int(fe.node_ids[n]), rank[a], rank[b]) for n, a, b in cut_list)
    return SplitModel(tuple(parts), cut_objs, fe)


def _node_local_rest(fe: FEModel, lines: np.ndarray, provider: ElementMatrices):
    """(K − Σ K_e, M − Σ M_e, element matrices): the parent's matrices less its cells,
    checked to sit on single nodes (point masses); ValidationError otherwise."""
    elems = []
    rows, cols, k_vals, m_vals = [], [], [], []
    for c, (a, b) in enumerate(lines):
        ke, me = provider(c)
        ke, me = np.asarray(ke, float), np.asarray(me, float)
        if ke.shape != (12, 12) or me.shape != (12, 12):
            raise ValidationError(f"split: element_matrices({c}) must return two 12 x 12 "
                                  f"matrices, got shapes {ke.shape}, {me.shape}")
        elems.append((ke, me))
        idx = np.concatenate([np.arange(6) + 6 * a, np.arange(6) + 6 * b])
        rows.append(np.repeat(idx, 12))
        cols.append(np.tile(idx, 12))
        k_vals.append(ke.ravel())
        m_vals.append(me.ravel())
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    shape = (fe.n_dof, fe.n_dof)
    summed = [sp.csr_matrix((np.concatenate(vals), (rows, cols)), shape=shape)
              for vals in (k_vals, m_vals)]
    rest_k, rest_m = node_local_rest(fe, *summed, "its cells' element matrices",
                                     "was the model scaled or edited after meshing?")
    return rest_k, rest_m, elems


def cell_pieces(cells: list, cut_id: np.ndarray, root_idx: np.ndarray):
    """(pieces, their nodes, the root's piece): the connected pieces of ``cells`` (rows of
    node indices), each a list of cell indices, and the index of the one holding every
    node of ``root_idx`` (ValidationError unless exactly one does). ``cut_id``: each
    node's cut (−1: none). Two cells are joined when they share a node that is not cut,
    or two nodes of different cuts (a layer of cells between two neighbouring cuts)."""
    parent = np.arange(len(cells))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_cell: dict = {}
    for c, row in enumerate(cells):
        nodes = [int(v) for v in row]
        keys = [n for n in nodes if cut_id[n] < 0]
        cut = [n for n in nodes if cut_id[n] >= 0]
        keys += [(a, b) for i, a in enumerate(cut) for b in cut[i + 1:]
                 if cut_id[a] != cut_id[b]]
        for key in keys:
            key = tuple(sorted(key)) if isinstance(key, tuple) else key
            if key in first_cell:
                parent[find(c)] = find(first_cell[key])
            else:
                first_cell[key] = c
    groups: dict[int, list[int]] = {}
    for c in range(len(cells)):
        groups.setdefault(find(c), []).append(c)
    pieces = [np.asarray(group) for group in groups.values()]
    nodes_of = [np.unique(np.concatenate([cells[c] for c in group])) for group in pieces]
    holder = [j for j, nodes in enumerate(nodes_of) if np.isin(root_idx, nodes).all()]
    if len(holder) != 1:
        raise ValidationError("split: the root nodes must all lie in one part")
    return pieces, nodes_of, holder[0]


def node_local_rest(fe: FEModel, k_sum, m_sum, what: str, hint: str):
    """(K − k_sum, M − m_sum) of ``fe``, checked to sit on single nodes (point masses):
    ValidationError naming the first entry between two nodes, ``what`` the sum is of and
    the ``hint``."""
    dpn = fe.dofs_per_node
    rests = []
    for name, full, summed in (("stiffness", fe.stiffness, k_sum), ("mass", fe.mass, m_sum)):
        rest = (full - summed).tocoo()
        scale = max(float(abs(full).max()), 1e-300)
        keep = np.abs(rest.data) > COUPLING_RTOL * scale
        r, c, v = rest.row[keep], rest.col[keep], rest.data[keep]
        cross = r // dpn != c // dpn
        if np.any(cross):
            i = int(np.flatnonzero(cross)[0])
            raise ValidationError(
                f"split: the FE {name} is not the sum of {what} plus node-local terms: "
                f"entry ({r[i]}, {c[i]}) between nodes {int(fe.node_ids[r[i] // dpn])} and "
                f"{int(fe.node_ids[c[i] // dpn])} is off by {v[i]:.3g} of {scale:.3g} "
                f"({hint})")
        rests.append(sp.csr_matrix((v, (r, c)), shape=full.shape))
    return rests[0], rests[1]


def reduce_parts(split: SplitModel, n_normal: int, *, normalization="displacement"):
    """The parts of ``split`` reduced by Craig–Bampton: frame attached at each part's
    attach nodes, constraint modes at its interface nodes, plus ``n_normal``
    fixed-interface normal modes (fewer when a part has fewer interior DOFs). Returns a
    list of ModalData, root part first."""
    from .reduction import craig_bampton

    out = []
    for j, part in enumerate(split.parts):
        n_int = part.fe.n_dof - 6 * (part.attach.size + part.interface.size)
        n = min(int(n_normal), max(n_int, 0))
        try:
            out.append(craig_bampton(part.fe, part.interface, n, attach=part.attach,
                                     normalization=normalization))
        except ValidationError as exc:
            raise ValidationError(f"substructure {j + 1}: {exc}") from None
    return out
