"""Preparing an FE model before reduction: scaling, point masses, geometric node sets.

Every function returns a *new* :class:`~flexmbs.modal.femodel.FEModel` and appends what it
did to ``metadata["preparation"]`` (a list of steps), which reductions carry into the
modal data (``ModalData.metadata["source"]["preparation"]``). Order in :func:`prepare`:
geometric node sets first (they depend only on the coordinates), then scaling, then point
masses (given in kg and kg m², so not scaled).

Units and frames: masses [kg], rotary inertias [kg m²] about the node, along the FE
(body) frame axes x, y, z; coordinates of node-set specs in the FE frame [m], i.e. after
any unit conversion of the input files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Real

import numpy as np
import scipy.sparse as sp

from ..errors import ValidationError
from .femodel import FEModel
from .node_selection import with_node_sets

__all__ = ["PointMass", "add_point_masses", "prepare", "scale"]


def _factor(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValidationError(f"{name} must be a positive number, got {value!r}")
    out = float(value)
    if not (np.isfinite(out) and out > 0):
        raise ValidationError(f"{name} must be a positive finite number, got {value!r}")
    return out


def scale(fe: FEModel, stiffness: float = 1.0, mass: float = 1.0, *,
          what: str = "scale") -> FEModel:
    """Multiply the FE stiffness by ``stiffness`` and the mass by ``mass`` (both > 0).

    Every eigenfrequency then scales by ``sqrt(stiffness / mass)`` and the mode shapes are
    unchanged, e.g. ``stiffness=0.01`` divides the frequencies by 10 (a softer body for a
    quick study, or a material property corrected after export).

    Parameters
    ----------
    fe : FEModel
    stiffness, mass : float
        Dimensionless factors [-].
    what : str
        Prefix of error messages (the CLI passes its option names).

    Returns
    -------
    FEModel
        With a ``{"step": "scale", "stiffness": ..., "mass": ...}`` record in
        ``metadata["preparation"]``.
    """
    s_k = _factor(stiffness, f"{what}: stiffness factor")
    s_m = _factor(mass, f"{what}: mass factor")
    if s_k == 1.0 and s_m == 1.0:
        return fe
    record = [*fe.metadata.get("preparation", []),
              {"step": "scale", "stiffness": s_k, "mass": s_m}]
    return replace(fe, stiffness=fe.stiffness * s_k, mass=fe.mass * s_m,
                   metadata={**fe.metadata, "preparation": record})


@dataclass(frozen=True)
class PointMass:
    """A point mass with optional rotary inertia, lumped at one FE node.

    Attributes
    ----------
    node : int or str
        External node label (``FEModel.node_ids``), or the name of a node set holding
        exactly one node (e.g. ``"tip"`` of the built-in beam).
    mass : float
        Mass [kg], added to the three translational diagonal entries of the node (≥ 0).
    inertia : tuple of 3 floats, optional
        Rotary inertias Ixx, Iyy, Izz [kg m²] about the node along the FE frame axes,
        added to the node's rotational diagonal entries; only for models with 6 DOFs per
        node (≥ 0 each).
    """

    node: int | str
    mass: float
    inertia: tuple[float, float, float] | None = None


def _resolve_node(fe: FEModel, node, what: str) -> int:
    if isinstance(node, str):
        if node not in fe.node_sets:
            raise ValidationError(f"{what}: {node!r} is neither a node label nor a node set "
                                  f"of the model (sets: {sorted(fe.node_sets) or 'none'})")
        members = fe.node_sets[node]
        if members.size != 1:
            raise ValidationError(
                f"{what}: node set {node!r} has {members.size} nodes; a point mass sits on "
                f"one node: give a node label or a one-node set")
        return int(members[0])
    if isinstance(node, bool) or not isinstance(node, (int, np.integer)):
        raise ValidationError(f"{what}: node must be an integer label or a set name, got "
                              f"{node!r}")
    hits = np.flatnonzero(fe.node_ids == int(node))
    if hits.size != 1:
        ids = fe.node_ids
        raise ValidationError(f"{what}: node {int(node)} is not a node of the model (labels "
                              f"{int(ids.min())}..{int(ids.max())}, {ids.size} nodes)")
    return int(hits[0])


def add_point_masses(fe: FEModel, masses, *, what: str = "point mass") -> FEModel:
    """Add point masses (and rotary inertias) to the FE mass diagonal.

    Parameters
    ----------
    fe : FEModel
    masses : iterable of PointMass (or (node, mass[, inertia]) tuples)
        Several entries on one node add up.
    what : str
        Prefix of error messages.

    Returns
    -------
    FEModel
        M + Σ diag(m, m, m[, Ixx, Iyy, Izz]) at the nodes' DOFs, with one
        ``{"step": "point_mass", "node": label, "mass_kg": m, "inertia_kgm2": [..]}``
        record per entry in ``metadata["preparation"]``.

    Raises
    ------
    ValidationError
        Naming the entry: an unknown node, a negative or non-finite mass or inertia, or a
        rotary inertia on a model without rotational DOFs.
    """
    add = np.zeros(fe.n_dof)
    record = list(fe.metadata.get("preparation", []))
    count = 0
    for entry in masses:
        pm = entry if isinstance(entry, PointMass) else PointMass(*entry)
        label = f"{what} {pm.node}"
        index = _resolve_node(fe, pm.node, label)
        if isinstance(pm.mass, bool) or not isinstance(pm.mass, Real) or not (
                np.isfinite(pm.mass) and pm.mass >= 0):
            raise ValidationError(f"{label}: mass must be a non-negative number [kg], got "
                                  f"{pm.mass!r}")
        inertia = None
        if pm.inertia is not None:
            inertia = np.asarray(pm.inertia, dtype=float).ravel()
            if inertia.shape != (3,) or not np.all(np.isfinite(inertia)) or np.any(
                    inertia < 0):
                raise ValidationError(f"{label}: rotary inertia must be three non-negative "
                                      f"numbers Ixx,Iyy,Izz [kg m^2], got {pm.inertia!r}")
            if fe.dofs_per_node == 3 and np.any(inertia > 0):
                raise ValidationError(
                    f"{label}: rotary inertia {inertia.tolist()} cannot be added: the model "
                    f"has 3 DOFs per node (translations only, no rotation DOFs to carry "
                    f"it); spread the mass over several nodes instead")
        dofs = fe.node_dofs([index])
        if inertia is not None and fe.dofs_per_node == 6 and np.any(inertia > 0):
            absent = np.intersect1d(dofs[3:], fe.inactive_dofs)
            if absent.size:
                raise ValidationError(
                    f"{label}: rotary inertia {inertia.tolist()} cannot be added: node "
                    f"{int(fe.node_ids[index])} has no rotation DOFs in this model (no "
                    f"stiffness or mass at them: a solid's node); spread the mass over "
                    f"several nodes instead")
        add[dofs[:3]] += float(pm.mass)
        if inertia is not None and fe.dofs_per_node == 6:
            add[dofs[3:]] += inertia
        record.append({"step": "point_mass", "node": int(fe.node_ids[index]),
                       "node_index": index, "mass_kg": float(pm.mass),
                       "inertia_kgm2": None if inertia is None else inertia.tolist()})
        count += 1
    if count == 0:
        return fe
    mass = (fe.mass + sp.diags(add)).tocsr()
    return replace(fe, mass=mass, metadata={**fe.metadata, "preparation": record})


def prepare(fe: FEModel, *, node_sets: dict | None = None, stiffness_scale: float = 1.0,
            mass_scale: float = 1.0, point_masses=()) -> FEModel:
    """Geometric node sets, then scaling, then point masses (see the module docstring).

    Parameters
    ----------
    node_sets : dict, optional
        Name → spec, for :func:`~flexmbs.modal.node_selection.with_node_sets`.
    stiffness_scale, mass_scale : float
        Factors for :func:`scale`.
    point_masses : iterable
        Entries for :func:`add_point_masses` (they may name the new sets).
    """
    if node_sets:
        fe = with_node_sets(fe, node_sets)
    fe = scale(fe, stiffness_scale, mass_scale)
    return add_point_masses(fe, point_masses)
