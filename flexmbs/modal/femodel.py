"""FE mass and stiffness matrices of one component, the input to modal reduction.

DOF order is node-major: ``[u0x, u0y, u0z, (r0x, r0y, r0z,) u1x, ...]`` with 3 DOFs per
node (solids) or 6 (beams and shells, rotations in radians). Everything is SI once an
:class:`FEModel` exists; :meth:`FEModel.from_units` converts from other unit systems.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import (
    as_float_array,
    check_finite,
    check_semidefinite_looking,
    check_shape,
    check_symmetric,
)
from ..errors import ShapeError, ValidationError
from .units import UnitSystem, get_units

#: Stiffness diagonals this large are penalty boundary conditions, not structure.
PENALTY_STIFFNESS = 1e30


def _as_csr(mat, name: str) -> sp.csr_matrix:
    if sp.issparse(mat):  # (a copy: summing duplicates must not change the caller's)
        out = sp.csr_matrix(mat, dtype=float, copy=True)
    else:
        arr = as_float_array(mat, name)
        if arr.ndim != 2:
            raise ShapeError(f"{name} must be a 2-D matrix; got shape {arr.shape}")
        out = sp.csr_matrix(arr)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


@dataclass(frozen=True, eq=False)
class FEModel:
    """Finite-element matrices of one flexible component (SI units).

    Attributes
    ----------
    nodes : ndarray, shape (N, 3)
        Undeformed node coordinates in the body (FE) frame [m].
    mass, stiffness : scipy.sparse.csr_matrix, shape (n_dof, n_dof)
        Symmetric FE mass [kg, kg m, kg m^2] and stiffness [N/m, N, N m] matrices,
        n_dof = dofs_per_node * N, node-major DOF order.
    dofs_per_node : int
        3 (translations) or 6 (translations then rotations).
    node_ids : ndarray of int, shape (N,)
        External node labels (as in the source file); default 1..N.
    node_sets : dict[str, ndarray of int]
        Named sets of node *indices* (0-based rows of ``nodes``).
    cells : dict[str, ndarray of int]
        Optional mesh cells by meshio cell type, connectivity in node indices.
    metadata : dict
        Provenance (source files, generator, parameters).
    """

    nodes: np.ndarray
    mass: sp.csr_matrix
    stiffness: sp.csr_matrix
    dofs_per_node: int = 3
    node_ids: np.ndarray | None = None
    node_sets: dict[str, np.ndarray] = field(default_factory=dict)
    cells: dict[str, np.ndarray] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        nodes = as_float_array(self.nodes, "FEModel.nodes")
        check_shape(nodes, (None, 3), "FEModel.nodes")
        check_finite(nodes, "FEModel.nodes")
        n_nodes = nodes.shape[0]
        if self.dofs_per_node not in (3, 6):
            raise ValidationError(
                f"FEModel.dofs_per_node must be 3 or 6, got {self.dofs_per_node!r}"
            )
        n_dof = self.dofs_per_node * n_nodes
        mats = {}
        for name in ("mass", "stiffness"):
            mat = _as_csr(getattr(self, name), f"FEModel.{name}")
            if mat.shape != (n_dof, n_dof):
                raise ShapeError(
                    f"FEModel.{name} has shape {mat.shape}; expected ({n_dof}, {n_dof}) "
                    f"for {n_nodes} nodes with {self.dofs_per_node} DOFs each"
                )
            check_finite(mat, f"FEModel.{name}")
            check_symmetric(mat, f"FEModel.{name}", rtol=1e-8)
            mats[name] = mat
        k_diag = mats["stiffness"].diagonal()
        if k_diag.size and np.max(np.abs(k_diag)) >= PENALTY_STIFFNESS:
            k = int(np.argmax(np.abs(k_diag)))
            raise ValidationError(
                f"FEModel.stiffness has diagonal entry {k_diag[k]:.3g} at DOF {k} (node index "
                f"{k // self.dofs_per_node}): a boundary-condition penalty (Abaqus writes "
                f"1e36); export the matrices without boundary conditions and clamp in "
                f"flexmbs (clamped_modes / craig_bampton attach)"
            )
        ids = (np.arange(1, n_nodes + 1) if self.node_ids is None
               else np.asarray(self.node_ids, dtype=np.int64))
        check_shape(ids, (n_nodes,), "FEModel.node_ids")
        if len(np.unique(ids)) != n_nodes:
            raise ValidationError("FEModel.node_ids has duplicate labels")
        for name, mat in mats.items():
            check_semidefinite_looking(mat, f"FEModel.{name}", _dof_namer(ids,
                                                                          self.dofs_per_node))
        sets = {}
        for key, members in dict(self.node_sets).items():
            idx = np.asarray(members, dtype=np.int64).ravel()
            bad = idx[(idx < 0) | (idx >= n_nodes)]
            if bad.size:
                raise ValidationError(
                    f"FEModel.node_sets[{key!r}] names node index {int(bad[0])}, but the "
                    f"model has nodes 0..{n_nodes - 1}"
                )
            sets[str(key)] = idx
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "mass", mats["mass"])
        object.__setattr__(self, "stiffness", mats["stiffness"])
        object.__setattr__(self, "node_ids", ids)
        object.__setattr__(self, "node_sets", sets)
        object.__setattr__(self, "cells", {k: np.asarray(v, dtype=np.int64)
                                           for k, v in dict(self.cells).items()})
        object.__setattr__(self, "metadata", dict(self.metadata))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_units(cls, nodes, mass, stiffness, units: str | UnitSystem | None = None,
                   dofs_per_node: int = 3, **kwargs) -> FEModel:
        """Build an FEModel from matrices given in ``units`` and convert them to SI."""
        system = get_units(units)
        nodes = as_float_array(nodes, "FEModel.nodes") * system.length
        n_nodes = nodes.shape[0] if nodes.ndim == 2 else 0
        mass = _as_csr(mass, "FEModel.mass")
        stiffness = _as_csr(stiffness, "FEModel.stiffness")
        if system.name != "SI":
            weights = system.dof_weights(dofs_per_node, n_nodes)
            if weights.size == mass.shape[0] == stiffness.shape[0]:
                w = sp.diags(weights)
                mass = (system.mass * (w @ mass @ w)).tocsr()
                stiffness = (system.mass / system.time**2 * (w @ stiffness @ w)).tocsr()
        meta = dict(kwargs.pop("metadata", {}) or {})
        meta.setdefault("source_units", system.name)
        return cls(nodes, mass, stiffness, dofs_per_node=dofs_per_node, metadata=meta,
                   **kwargs)

    # ------------------------------------------------------------------ properties
    @property
    def n_nodes(self) -> int:
        """Number of FE nodes N."""
        return self.nodes.shape[0]

    @property
    def n_dof(self) -> int:
        """Number of FE degrees of freedom."""
        return self.n_nodes * self.dofs_per_node

    def node_dofs(self, node_indices, translational_only: bool = False) -> np.ndarray:
        """Global DOF indices of the given node indices (node-major)."""
        idx = np.asarray(node_indices, dtype=np.int64).ravel()
        per = 3 if translational_only else self.dofs_per_node
        return (idx[:, None] * self.dofs_per_node + np.arange(per)[None, :]).ravel()

    @property
    def inactive_dofs(self) -> np.ndarray:
        """DOFs whose rows of both K and M are empty: not part of the model (a rotation
        of a grid that only solids touch, a component a Nastran a-set leaves out). Every
        reduction holds them at zero and leaves them out of its eigenproblems."""
        k_rows = np.diff(self.stiffness.indptr) > 0
        m_rows = np.diff(self.mass.indptr) > 0
        return np.flatnonzero(~k_rows & ~m_rows)

    @property
    def translational_dofs(self) -> np.ndarray:
        """Indices of the 3N translational DOFs in node-major order."""
        return self.node_dofs(np.arange(self.n_nodes), translational_only=True)

    def translational_mass(self) -> sp.csr_matrix:
        """The 3N x 3N translational partition of the mass matrix [kg]."""
        if self.dofs_per_node == 3:
            return self.mass
        t = self.translational_dofs
        return self.mass[t][:, t].tocsr()

    def resolve_nodes(self, nodes, what: str = "node set") -> np.ndarray:
        """Turn a set name, node labels (ids) or indices into node indices.

        Strings name a node set; integers are external node labels (``node_ids``).
        """
        if isinstance(nodes, str):
            if nodes not in self.node_sets:
                raise ValidationError(
                    f"{what} {nodes!r} is not a node set of this model; "
                    f"known sets: {sorted(self.node_sets) or 'none'}"
                )
            return self.node_sets[nodes]
        labels = np.asarray(nodes, dtype=np.int64).ravel()
        lookup = {int(v): i for i, v in enumerate(self.node_ids)}
        missing = [int(v) for v in labels if int(v) not in lookup]
        if missing:
            raise ValidationError(f"{what} names node label(s) {missing[:5]} that the "
                                  f"model does not have")
        return np.array([lookup[int(v)] for v in labels], dtype=np.int64)


def _dof_namer(ids, dpn: int):
    """Row k → "node <label> DOF <1..dpn>" for the messages."""
    return lambda k: f"node {int(ids[k // dpn])} DOF {k % dpn + 1}"
