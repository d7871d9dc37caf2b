"""Split an FE model of solid or shell elements into substructures joined at cut surfaces
(docs/flexible_bodies.md, "Substructured solid and shell parts").

The counterpart of :mod:`flexmbs.modal.substructures` for FE meshes: a part meshed with
linear hexahedra, tetrahedra and 20-node bricks (3 DOFs per node: the built-in
:func:`~flexmbs.modal.fe.solid.box_mesh`, or FE data read with its elements and an
isotropic material, ``metadata["material"]``), or with shells (6 DOFs per node:
quadrilaterals and triangles with their thickness, docs/theory_shells.md), is cut at
**cut surfaces** (for shells, lines of nodes), node sets across the part that the cells
do not straddle.

* The parts are the connected pieces of the cells once the cut surfaces' nodes are
  duplicated, ordered from the ``root`` set outwards. Each part's matrices are the sum of
  its cells' element matrices (:func:`element_matrices`: full 2 × 2 × 2 Gauss
  integration for hexahedra, the exact formulas for tetrahedra, MAPDL SOLID186's
  integration for 20-node bricks, the shells of
  :mod:`~flexmbs.modal.fe.shell_elements`) plus the node-local rest
  of the parent's matrices (point masses), held by the part attached at a cut node. The
  parts add up to the parent: a parent that is not its cells' sum (reduced integration,
  another element formulation) is refused, naming the entry.
* Each cut surface and each end set (``tip``) moves **rigidly** in the reduction, as an
  RBE2 spider would make it: the part's frame is attached to its root-side surface
  (clamped), and each of its other surfaces gets six constraint modes, the rigid
  translations and rotations of the surface about its centroid (a shell node's own
  rotation that of the surface), with the interior following statically. A section
  that stays plane and undeformed is exact for the neighbouring parts' rigid joining (a
  fixed joint between the surface markers of the two parts) and stiffens the part a
  little (the section's warping and Poisson contraction at the cut are held): measured
  in ``tests/test_solid_substructures.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ValidationError
from .fe import solid_elements
from .fe.solid import _isotropic_elasticity
from .femodel import FEModel
from .substructures import Cut, SplitModel, _labels, cell_pieces, node_local_rest


class NoLayerError(ValidationError):
    """No layer of nodes lies across the straight line from the root set to the tip set
    (:func:`surfaces_along`): a bent part, whose cuts can follow its mesh instead
    (:func:`surfaces_along_mesh`)."""


#: The solid cells whose element matrices are computed here.
SOLID_CELLS = ("hexahedron", "tetra", "hexahedron20")


@dataclass(frozen=True, eq=False)
class SolidSubstructure:
    """One part of a split solid model: its FE model (parent coordinates [m] and
    labels), the node labels of its root-side surface (``attach``), and its other
    surfaces by set name (the cuts further out, the ends). ``tied``: the cut surfaces
    stay flexible (``cuts="tied"`` of :func:`split_solid_model`)."""

    fe: FEModel
    attach: np.ndarray
    surfaces: dict
    tied: bool = False

    @property
    def interface(self) -> np.ndarray:
        """Labels of every node of the part's rigid surfaces but the attach surface."""
        if not self.surfaces:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(list(self.surfaces.values())))


def _material(fe: FEModel) -> tuple[float, float, float]:
    """(E [Pa], ν, ρ [kg/m³]) of ``fe``: ``metadata["material"]`` or, for
    :func:`box_mesh` models, its own parameters; ValidationError naming what is missing."""
    meta = fe.metadata or {}
    material = meta.get("material") if isinstance(meta.get("material"), dict) else meta
    missing = [k for k in ("E", "nu", "rho") if k not in material]
    if missing:
        raise ValidationError(
            f"split: the solid model has no {', '.join(missing)} in metadata['material'] "
            f"(E [Pa], nu, rho [kg/m³]): the element matrices need an isotropic material "
            f"(flexmbs reduce --material E=...,nu=...,rho=...)")
    return float(material["E"]), float(material["nu"]), float(material["rho"])


def _cells(fe: FEModel) -> list[tuple[str, np.ndarray]]:
    from .fe.shell_elements import SHELL_CELLS

    known = SOLID_CELLS if fe.dofs_per_node == 3 else SHELL_CELLS
    other = sorted(set(fe.cells) - set(known))
    if not fe.cells or other:
        raise ValidationError(
            "split: substructuring needs solid cells "
            f"{list(SOLID_CELLS)} on 3-DOF nodes or shells {list(SHELL_CELLS)} on 6-DOF "
            f"nodes; this model has {fe.dofs_per_node} DOFs per node"
            + (f" and {other} cells" if other else "")
            + (" and no cells" if not fe.cells else ""))
    return [(kind, np.asarray(fe.cells[kind], np.int64)) for kind in known
            if kind in fe.cells]


def _hex_shapes() -> np.ndarray:
    """N (8 Gauss points, 8 nodes) of the trilinear brick, points in the order of
    :func:`solid_elements.gradients` (the corners scaled by 1/√3)."""
    corners = solid_elements._HEX_CORNERS
    points = corners / np.sqrt(3.0)
    return (1.0 + corners[None, :, :] * points[:, None, :]).prod(axis=2) / 8.0


def _hex20_mass(coords: np.ndarray) -> np.ndarray:
    """∫ N_a N_b dV (E, 20, 20) [m³] of 20-node bricks (node coordinates (E, 20, 3)) by
    Irons' 14-point rule, as MAPDL's SOLID186 integrates its consistent mass."""
    points, weights = solid_elements.irons14()
    shapes, grads = solid_elements.hex20_shapes(points)
    det = np.linalg.det(np.einsum("pad,eai->epid", grads, coords))   # (E, P)
    return np.einsum("ep,p,pa,pb->eab", det, weights, shapes, shapes)


def _strain_rows(dndx: np.ndarray) -> np.ndarray:
    """B (E, G, 6, 3a): Voigt strains [xx, yy, zz, xy, yz, zx] (engineering shear)."""
    n_e, n_g, n_a, _ = dndx.shape
    b = np.zeros((n_e, n_g, 6, 3 * n_a))
    x, y, z = dndx[..., 0], dndx[..., 1], dndx[..., 2]
    b[:, :, 0, 0::3], b[:, :, 1, 1::3], b[:, :, 2, 2::3] = x, y, z
    b[:, :, 3, 0::3], b[:, :, 3, 1::3] = y, x
    b[:, :, 4, 1::3], b[:, :, 4, 2::3] = z, y
    b[:, :, 5, 2::3], b[:, :, 5, 0::3] = x, z
    return b


def element_matrices(fe: FEModel) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """(cell type, connectivity (E, a), K_e (E, 3a, 3a) [N/m], M_e (E, 3a, 3a) [kg]) of
    every solid cell of ``fe``, in the model's (body) axes and node-major DOF order:
    linear elasticity of the isotropic material (``_material``), consistent mass;
    hexahedra by 2 × 2 × 2 Gauss points (exact for a parallelepiped), tetrahedra by
    their closed forms (K = V BᵀDB, M = ρV/20 (1 + δ_ab) I₃), 20-node bricks as MAPDL's
    SOLID186 by default (K by 2 × 2 × 2 Gauss points, uniform reduced integration; M by
    Irons' 14 points). For a shell model (6 DOFs per node) the shells' (K_e, M_e)
    (6a × 6a) of :func:`flexmbs.modal.fe.shell_elements.element_matrices`."""
    young, nu, rho = _material(fe)
    solid_elements.isotropic_lame(young, nu)  # (refuses a bad E or ν by name)
    if fe.dofs_per_node == 6:
        return _shell_matrices(fe, young, nu, rho)
    d = _isotropic_elasticity(young, nu)  # Voigt order as _strain_rows
    labels = (fe.metadata or {}).get("cell_labels") or {}
    out = []
    for kind, conn in _cells(fe):
        dndx, wdet = solid_elements.gradients(fe.nodes, conn, kind, labels.get(kind))
        b = _strain_rows(dndx)
        k_e = np.einsum("eg,egia,ij,egjb->eab", wdet, b, d, b)
        n_a = conn.shape[1]
        if kind == "hexahedron":
            shapes = _hex_shapes()
            scalar = rho * np.einsum("eg,ga,gb->eab", wdet, shapes, shapes)
        elif kind == "hexahedron20":
            scalar = rho * _hex20_mass(fe.nodes[conn])
        else:
            volume = wdet[:, 0]
            scalar = (rho * volume / 20.0)[:, None, None] * (np.ones((n_a, n_a))
                                                             + np.eye(n_a))
        m_e = np.einsum("eab,ij->eaibj", scalar, np.eye(3)).reshape(len(conn), 3 * n_a,
                                                                   3 * n_a)
        out.append((kind, conn, 0.5 * (k_e + k_e.transpose(0, 2, 1)), m_e))
    return out


def _shell_matrices(fe: FEModel, young: float, nu: float, rho: float):
    from .fe.file_elements import file_elements_of
    from .fe.shell_elements import element_matrices as shell_matrices

    elements = file_elements_of(fe, "split")
    out = []
    for kind, conn in _cells(fe):
        k_e, m_e = shell_matrices(fe.nodes, conn, elements.thickness[kind], young, nu, rho,
                                  elements.labels.get(kind))
        out.append((kind, conn, k_e, m_e))
    return out


def _assemble(n_dof: int, blocks, dpn: int = 3) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Σ of the element matrices ``blocks`` (connectivity, K_e, M_e) into n_dof, ``dpn``
    DOFs per node."""
    rows, cols, kv, mv = [], [], [], []
    for conn, k_e, m_e in blocks:
        dofs = (dpn * conn[:, :, None] + np.arange(dpn)).reshape(len(conn), -1)
        rows.append(np.repeat(dofs, dofs.shape[1], axis=1).ravel())
        cols.append(np.tile(dofs, (1, dofs.shape[1])).ravel())
        kv.append(k_e.ravel())
        mv.append(m_e.ravel())
    if not rows:
        empty = sp.csr_matrix((n_dof, n_dof))
        return empty, empty
    idx = (np.concatenate(rows), np.concatenate(cols))
    shape = (n_dof, n_dof)
    return (sp.csr_matrix((np.concatenate(kv), idx), shape=shape),
            sp.csr_matrix((np.concatenate(mv), idx), shape=shape))


def _node_local_rest(fe: FEModel, elements, root_idx) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(K − Σ K_e, M − Σ M_e), checked to sit on single nodes (point masses). Rows that
    the export left out (empty rows of a matrix, as MAPDL's ``.full`` leaves its
    constrained DOFs' stiffness) are not compared where they belong to the root nodes,
    which the root part clamps anyway: there the elements' own terms stand in for them."""
    dpn = fe.dofs_per_node
    k_sum, m_sum = _assemble(fe.n_dof, [(c, k, m) for _, c, k, m in elements], dpn)
    hint = "reduced integration, a lumped mass or another formulation?"
    sums, off_root = [], None
    for full, summed in ((fe.stiffness, k_sum), (fe.mass, m_sum)):
        # rows the export left out (nothing stored, or only zeros)
        empty = np.flatnonzero(np.asarray(abs(full).sum(axis=1)).ravel() == 0)
        held = np.isin(empty // dpn, np.asarray(root_idx))
        if empty.size and held.all():  # the missing rows and columns: the elements'
            keep = np.ones(fe.n_dof)
            keep[empty] = 0.0
            mask = sp.diags(keep)
            summed = mask @ summed @ mask
        elif empty.size and off_root is None:
            off_root = (int((~held).sum()), int(fe.node_ids[empty[~held][0] // dpn]))
        sums.append(summed)
    if off_root is not None:
        hint = (f"{off_root[0]} DOFs of the model off the root set are constrained out "
                f"(an SPC in the export?), node {off_root[1]} first: give the matrices "
                f"without constraints, or {hint}")
    k_sum, m_sum = sums
    k_rest, m_rest = node_local_rest(fe, k_sum, m_sum, "its cells' element matrices "
                                     "(their own integration, consistent mass)", hint)
    return k_rest, m_rest


def surfaces_along(fe: FEModel, k: int, root="root", tip="tip") -> list[np.ndarray]:
    """The node-label sets of ``k − 1`` cut surfaces that divide a solid into ``k``
    parts of (nearly) equal length along the line from the centroid of ``root`` to that
    of ``tip``: at each station the layer of nodes at the same distance along the line
    (within 1e-9 of the length) nearest to it that no cell straddles (the element
    faces', not a quadratic element's midside layer). ValidationError when no such layer lies
    between two neighbouring stations (a mesh without node layers across it)."""
    from numbers import Integral

    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValidationError(f"substructures must be an integer >= 1, got {k!r}")
    start = fe.nodes[_labels(fe, root, "split: root")].mean(axis=0)
    end = fe.nodes[_labels(fe, tip, "split: tip")].mean(axis=0)
    length = float(np.linalg.norm(end - start))
    if length <= 0:
        raise ValidationError("split: the root and tip sets have the same centroid")
    s = (fe.nodes - start) @ ((end - start) / length)
    tol = 1e-9 * length
    layers = np.unique(np.round(s / tol)) * tol
    spans = [(s[conn].min(axis=1), s[conn].max(axis=1))
             for conn in (np.asarray(c, np.int64) for c in fe.cells.values())]

    def across(x) -> bool:  # no cell straddles it (a 20-node brick's midside layer)
        return not any(np.any((lo < x - tol) & (hi > x + tol)) for lo, hi in spans)

    out, previous = [], 0.0
    for j in range(1, k):
        inside = layers[(layers > previous + tol) & (layers < length - tol)]
        station = None  # the nearest layer to the station that no cell straddles
        for x in inside[np.argsort(np.abs(inside - j * length / k), kind="stable")]:
            if across(x):
                station = x
                break
        if station is None:
            raise NoLayerError(f"split: no layer of nodes across the part between "
                               f"{previous:.6g} m and {length:.6g} m along it for cut {j} "
                               f"of {k - 1}: give the cut surfaces as node sets, or follow "
                               f"the mesh (surfaces_along_mesh)")
        out.append(fe.node_ids[np.flatnonzero(np.abs(s - station) <= tol)])
        previous = station
    return out


def surfaces_along_mesh(fe: FEModel, k: int, root="root") -> list[np.ndarray]:
    """The node-label sets of ``k − 1`` cut surfaces that divide a swept solid (a bent
    bar, a curved blade, a pipe bend: any mesh built slab by slab from the ``root``
    face) into ``k`` parts of (nearly) equal numbers of cell layers, following the mesh
    rather than a straight line (:func:`surfaces_along`). The cells are layered from the
    root outwards — layer 0 the cells on the root set's nodes, layer j + 1 the cells that
    share a node with layer j and belong to none before — and the surface between
    layers j and j + 1 is the nodes they share. ValidationError when a section has
    another number of nodes than the root set (the mesh is not swept slab by slab from
    a whole root face: the layers would be ragged) or there are fewer than ``k``
    layers."""
    from numbers import Integral

    if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
        raise ValidationError(f"substructures must be an integer >= 1, got {k!r}")
    cells = [np.asarray(row, np.int64) for conn in fe.cells.values()
             for row in np.asarray(conn, np.int64)]
    if not cells:
        raise ValidationError("split: the model has no cells to follow")
    root_idx = _labels(fe, root, "split: root")
    layer = np.full(len(cells), -1)
    node_layer = np.full(fe.n_nodes, -1)  # the first layer that reached each node
    node_layer[root_idx] = 0
    cells_of: dict[int, list[int]] = {}
    for c, row in enumerate(cells):
        for v in row:
            cells_of.setdefault(int(v), []).append(c)
    front = sorted({c for v in root_idx for c in cells_of.get(int(v), [])})
    depth = 0
    while front:
        layer[front] = depth
        nodes = np.unique(np.concatenate([cells[c] for c in front]))
        fresh = nodes[node_layer[nodes] < 0]
        node_layer[fresh] = depth + 1
        front = sorted({c for v in fresh for c in cells_of[int(v)] if layer[c] < 0})
        depth += 1
    if np.any(layer < 0):
        raise ValidationError("split: some cells are not connected to the root set")
    interfaces = []
    for j in range(depth - 1):
        inner = np.unique(np.concatenate([cells[c] for c in np.flatnonzero(layer == j)]))
        outer = np.unique(np.concatenate([cells[c] for c in np.flatnonzero(layer == j + 1)]))
        shared = np.intersect1d(inner, outer)
        if shared.size != root_idx.size:  # a swept mesh: every section is the root's
            raise ValidationError(
                f"split: the section between cell layers {j} and {j + 1} from the root "
                f"has {shared.size} nodes, the root set {root_idx.size}: the mesh is not "
                f"swept slab by slab from the root face (or the root set is not a whole "
                f"face); give the cut surfaces as node sets")
        interfaces.append(shared)
    if k > depth:
        raise ValidationError(f"substructures = {k} exceeds the {depth} cell layers from "
                              f"the root: each part needs at least one")
    picks = [round(i * depth / k) - 1 for i in range(1, k)]
    return [fe.node_ids[interfaces[j]] for j in picks]


def split_solid_model(fe: FEModel, surfaces, *, root="root", ends=("tip",),
                      cuts: str = "rigid") -> SplitModel:
    """Split ``fe`` (solid cells with 3 DOFs per node, or shells with 6) at the cut
    ``surfaces``.

    Parameters
    ----------
    fe : FEModel
        The parent model (body-frame coordinates [m]), its cells and material.
    surfaces : list of node sets
        Each item a set name of ``fe`` or a list of node labels: one cut surface across
        the part. The cells on its two sides may share only its nodes.
    root : node set
        The surface part 1's frame is attached to (where the part is clamped or jointed).
    ends : iterable of set names or lists of node labels
        Sets that get constraint modes in the part holding them (where loads or joints
        act); names that are not sets of ``fe`` are skipped.
    cuts : {"rigid", "tied"}
        "rigid" (default): every cut surface and end moves rigidly (six constraint
        modes each, a fixed joint between the surface markers). "tied": the surfaces
        stay flexible: constraint modes at every node of the cuts and ends, the root
        part's frame attached to the root set and the others' on mean axes, and each
        cut node of one part tied to the same node of the next by a spherical joint
        (3 equations per node): the joined parts are the FE model itself, statically.

    Returns
    -------
    SplitModel
        :class:`SolidSubstructure` parts ordered from the root outwards, and the cuts
        (surface labels, inner part, outer part, set name ``cut<j>``).
    """
    if cuts not in ("rigid", "tied"):
        raise ValidationError(f"split: cuts must be 'rigid' or 'tied', got {cuts!r}")
    dpn = fe.dofs_per_node
    if cuts == "tied" and dpn == 6:
        raise ValidationError("split: 'tied' cuts join the parts' nodes by spherical "
                              "joints, which would leave a shell's rotations free at the "
                              "cut; split a shell model with rigid cuts")
    elements = element_matrices(fe)
    cut_sets = [_labels(fe, s, f"split: surface {j + 1}") for j, s in enumerate(surfaces)]
    root_idx = _labels(fe, root, "split: root")
    on_cut = np.full(fe.n_nodes, -1)
    for j, nodes in enumerate(cut_sets):
        if np.any(on_cut[nodes] >= 0) or np.intersect1d(nodes, root_idx).size:
            raise ValidationError(f"split: cut surface {j + 1} shares nodes with another "
                                  f"cut surface or the root")
        on_cut[nodes] = j
    conn_all = [c for _, c, _, _ in elements]
    cell_nodes = [row for conn in conn_all for row in conn]
    pieces, nodes_of, holder = cell_pieces(cell_nodes, on_cut, root_idx)
    order, attach_of, cut_list = [holder], {holder: root_idx}, []
    for j in order:
        for s, nodes in enumerate(cut_sets):
            if not np.isin(nodes, nodes_of[j]).all() or any(c[0] == s for c in cut_list):
                continue
            sides = [o for o, other in enumerate(nodes_of)
                     if o != j and np.isin(nodes, other).all()]
            if len(sides) != 1:
                raise ValidationError(f"split: cut surface {s + 1} does not separate two "
                                      f"parts ({len(sides) + 1} part(s) hold all its nodes): "
                                      f"it must cut across, and no cell may straddle it")
            if sides[0] in order:
                raise ValidationError(f"split: cut surface {s + 1} joins two parts that "
                                      f"other cuts already join (a loop of cuts, as in a "
                                      f"ring): the parts must form a tree from the root")
            order.append(sides[0])
            attach_of[sides[0]] = nodes
            cut_list.append((s, j, sides[0]))
    if len(order) != len(pieces):
        raise ValidationError(f"split: {len(pieces) - len(order)} part(s) are not reached "
                              f"from the root through the cut surfaces (a cut surface that "
                              f"does not cut all the way across?)")
    rank = {j: r for r, j in enumerate(order)}
    owner = np.full(fe.n_nodes, -1)
    for j in order:
        owner[nodes_of[j]] = np.where(owner[nodes_of[j]] < 0, rank[j], owner[nodes_of[j]])
    for s, _, outer in cut_list:
        owner[cut_sets[s]] = rank[outer]
    rest_k, rest_m = _node_local_rest(fe, elements, root_idx)
    end_sets = {e if isinstance(e, str) else f"end{i + 1}": _labels(fe, e, "split: ends")
                for i, e in enumerate(ends) if not isinstance(e, str) or e in fe.node_sets}
    for name, idx in end_sets.items():
        if not any(np.isin(idx, nodes_of[j]).all() for j in order):
            raise ValidationError(f"split: end set {name!r} spans several parts; an end "
                                  f"(where loads or joints act) must lie inside one part")
    labels_of = dict((fe.metadata or {}).get("cell_labels") or {})  # (parent's, by kind)
    thickness_of = _thickness_by_kind(fe)
    cell_kind = [(kind, conn, k_e, m_e, offset) for (kind, conn, k_e, m_e), offset in
                 zip(elements, np.cumsum([0] + [len(c) for c in conn_all[:-1]]),
                     strict=True)]
    parts = []
    for j in order:
        nodes = nodes_of[j]
        local = np.full(fe.n_nodes, -1)
        local[nodes] = np.arange(nodes.size)
        dofs = (dpn * nodes[:, None] + np.arange(dpn)).ravel()
        mine = sp.diags(np.repeat(owner == rank[j], dpn).astype(float))
        blocks, cells, cell_labels, thickness = [], {}, {}, {}
        mine_cells = np.asarray(pieces[j])
        for kind, conn, k_e, m_e, offset in cell_kind:
            sel = mine_cells[(mine_cells >= offset) & (mine_cells < offset + len(conn))]
            if sel.size:
                blocks.append((local[conn[sel - offset]], k_e[sel - offset],
                               m_e[sel - offset]))
                cells[kind] = local[conn[sel - offset]]
                if kind in labels_of:
                    cell_labels[kind] = [labels_of[kind][i] for i in sel - offset]
                if kind in thickness_of:
                    thickness[kind] = thickness_of[kind][sel - offset]
        k_p, m_p = _assemble(dofs.size, blocks, dpn)
        k_p = k_p + (mine @ rest_k)[dofs][:, dofs]
        m_p = m_p + (mine @ rest_m)[dofs][:, dofs]
        rigid = {f"cut{s + 1}": cut_sets[s] for s, inner, _ in cut_list if inner == j}
        rigid.update({name: idx for name, idx in end_sets.items()
                      if np.isin(idx, nodes).all() and name not in rigid})
        sets = {name: local[members[local[members] >= 0]]
                for name, members in fe.node_sets.items()}
        sets.update({f"cut{s + 1}": local[cut_sets[s]] for s, a, b in cut_list
                     if j in (a, b)})
        sets.update({name: local[idx] for name, idx in end_sets.items()
                     if np.isin(idx, nodes).all()})
        sets = {name: v for name, v in sets.items() if v.size}
        metadata = {**fe.metadata, "substructure": rank[j] + 1, "cell_labels": cell_labels}
        if thickness:
            metadata["shell_thickness"] = thickness
        part_fe = FEModel(fe.nodes[nodes], m_p.tocsr(), k_p.tocsr(), dofs_per_node=dpn,
                          node_ids=fe.node_ids[nodes], node_sets=sets, cells=cells,
                          metadata=metadata)
        parts.append(SolidSubstructure(part_fe, fe.node_ids[attach_of[j]],
                                       {n: fe.node_ids[v] for n, v in rigid.items()},
                                       tied=cuts == "tied"))
    joint = "fixed" if cuts == "rigid" else "nodes"
    cut_objs = tuple(Cut(int(fe.node_ids[cut_sets[s][0]]), rank[a], rank[b],
                         nodes=tuple(int(v) for v in fe.node_ids[cut_sets[s]]),
                         name=f"cut{s + 1}", joint=joint) for s, a, b in cut_list)
    return SplitModel(tuple(parts), cut_objs, fe)


def _thickness_by_kind(fe: FEModel) -> dict:
    """Shell cell type → thickness per cell [m] of a shell model (none for solids)."""
    if fe.dofs_per_node != 6:
        return {}
    from .fe.file_elements import file_elements_of

    return file_elements_of(fe, "split").thickness


def rigid_surface_modes(fe: FEModel, labels) -> tuple[np.ndarray, np.ndarray]:
    """(DOF indices (dpn·n,), T (dpn·n, 6)): the displacements of the nodes ``labels``
    under the rigid translations and small rotations of the surface about its centroid,
    u_p = u_c + θ × (x_p − x_c), and, with 6 DOFs per node, the nodes' rotations θ."""
    idx = fe.resolve_nodes(np.asarray(labels), "rigid surface")
    arm = fe.nodes[idx] - fe.nodes[idx].mean(axis=0)
    t = np.zeros((idx.size, fe.dofs_per_node, 6))
    t[:, :3, :3] = np.eye(3)
    t[:, 0, 4], t[:, 0, 5] = arm[:, 2], -arm[:, 1]
    t[:, 1, 3], t[:, 1, 5] = -arm[:, 2], arm[:, 0]
    t[:, 2, 3], t[:, 2, 4] = arm[:, 1], -arm[:, 0]
    if fe.dofs_per_node == 6:
        t[:, 3:, 3:] = np.eye(3)
    return fe.node_dofs(idx), t.reshape(-1, 6)


def reduce_solid_part(part: SolidSubstructure, n_normal: int, *, root: bool = True,
                      normalization="displacement"):
    """Craig–Bampton of one part. Rigid surfaces: the frame attached to
    ``part.attach``, six constraint modes per rigid surface (:func:`rigid_surface_modes`,
    the interior static), and ``n_normal`` fixed-interface modes (every surface node
    fixed). Tied surfaces (``part.tied``): constraint modes at every node of its
    surfaces, the frame attached to ``part.attach`` for the ``root`` part and on mean
    axes for the others (whose root-side surface is then an interface too)."""
    from .eigen import eigen
    from .reduction import craig_bampton, reduce_on_basis

    if isinstance(n_normal, bool) or not isinstance(n_normal, (int, np.integer)) \
            or n_normal < 0:
        raise ValidationError(f"substructure modes (n_normal) must be an integer >= 0, "
                              f"got {n_normal!r}")
    fe = part.fe
    if part.tied:
        interface = part.interface if root else np.union1d(part.interface, part.attach)
        held = np.union1d(interface, part.attach)
        n_int = fe.n_dof - fe.dofs_per_node * held.size - fe.inactive_dofs.size
        return craig_bampton(fe, interface, min(int(n_normal), max(n_int, 0)),
                             attach=part.attach if root else None,
                             normalization=normalization)
    attached = fe.resolve_nodes(np.asarray(part.attach), "split: attach surface")
    surfaces = [rigid_surface_modes(fe, labels) for labels in part.surfaces.values()]
    fixed = np.concatenate([fe.node_dofs(attached), *[d for d, _ in surfaces]])
    interior = np.setdiff1d(np.setdiff1d(np.arange(fe.n_dof), fe.inactive_dofs), fixed)
    k_mat, m_mat = fe.stiffness.tocsr(), fe.mass.tocsr()
    k_rows = k_mat[interior]  # (the interior rows, sliced once)
    k_ii = k_rows[:, interior].tocsc()
    n = min(int(n_normal), interior.size)
    if n:
        lam_n, phi_n = eigen(k_ii, m_mat[interior][:, interior].tocsc(), n, 0.0,
                             "substructure (fixed-interface modes)")
    else:
        lam_n, phi_n = np.zeros(0), np.zeros((interior.size, 0))
    n_b = 6 * len(surfaces)
    if n + n_b == 0:
        raise ValidationError("the part has no modes: no rigid surface (a cut further out "
                              "or an end set it holds) and n_normal = 0")
    basis = np.zeros((fe.n_dof, n + n_b))
    basis[interior, :n] = phi_n
    if n_b:
        lu = spla.splu(k_ii)
        for s, (dofs, t) in enumerate(surfaces):
            cols = slice(n + 6 * s, n + 6 * s + 6)
            basis[dofs, cols] = t
            basis[interior, cols] = -lu.solve(np.asarray(k_rows[:, dofs] @ t))
    sets = {"attach": attached}
    meta = {"method": "craig-bampton, rigid surfaces",
            "attach_nodes": fe.node_ids[attached].tolist(),
            "rigid_surfaces": {name: [int(v) for v in labels]
                               for name, labels in part.surfaces.items()},
            "n_normal": n, "n_constraint": n_b,
            "fixed_interface_frequencies_hz": (np.sqrt(np.clip(lam_n, 0, None))
                                               / (2 * np.pi)).tolist()}
    return reduce_on_basis(fe, basis, n, attached=attached, attach_name="attach",
                           node_sets=sets, metadata=meta, normalization=normalization)


def reduce_solid_parts(split: SplitModel, n_normal: int, *, normalization="displacement"):
    """Every part of a :func:`split_solid_model` reduced (:func:`reduce_solid_part`),
    root part first."""
    out = []
    for j, part in enumerate(split.parts):
        try:
            out.append(reduce_solid_part(part, n_normal, root=j == 0,
                                         normalization=normalization))
        except ValidationError as exc:
            raise ValidationError(f"substructure {j + 1}: {exc}") from None
    return out
