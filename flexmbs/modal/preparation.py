"""Preparing an FE model before reduction: scaling, point masses, geometric node sets.

Every function returns a *new* :class:`~flexmbs.modal.femodel.FEModel` and appends what it
did to ``metadata["preparation"]`` (a list of steps), which reductions carry into the
modal data (``ModalData.metadata["source"]["preparation"]``). Order in :func:`prepare`:
geometric node sets first (they depend only on the coordinates), then scaling, then point
masses (given in kg and kg m², so not scaled).

Units and frames: masses [kg]; rotary inertias [kg m²] about the payload's centre of
mass (the node unless an offset is given), along the FE (body) frame axes x, y, z;
offsets and the coordinates of node-set specs in the FE frame [m], i.e. after any unit
conversion of the input files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Real

import numpy as np
import scipy.sparse as sp

from ..errors import ValidationError
from .femodel import FEModel
from .node_selection import with_node_sets

__all__ = ["PointMass", "add_point_masses", "inertia_tensor", "payload_block", "prepare",
           "scale"]


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
    """A payload lumped at one FE node: a mass with optional rotary inertia and offset.

    It is a rigid body fastened to the node: it moves with the node's translation and,
    when it has rotary inertia or an offset, with the node's rotation (6-DOF nodes).

    Attributes
    ----------
    node : int or str
        External node label (``FEModel.node_ids``), or the name of a node set holding
        exactly one node (e.g. ``"tip"`` of the built-in beam).
    mass : float
        Mass m [kg] (≥ 0).
    inertia : 3, 6 or 3x3 numbers, optional
        Rotary inertia [kg m²] about the payload's centre of mass, along the FE (body)
        frame axes: ``(Ixx, Iyy, Izz)``; ``(Ixx, Iyy, Izz, Ixy, Ixz, Iyz)`` with the
        products of inertia as entries of the inertia tensor (I_xy = −∫ x y dm, the
        convention of a rigid body's 3x3 ``inertia``); or the symmetric 3x3 tensor. It
        must be positive semi-definite (a rotor inertia about one axis only is fine).
    offset : 3 numbers, optional
        Position of the payload's centre of mass relative to the node, FE axes [m]
        (default: at the node). A non-zero offset couples the node's translations and
        rotations: the 6x6 block is that of a rigid body whose centre is ``offset`` from
        the node (:func:`payload_block`).
    """

    node: int | str
    mass: float
    inertia: tuple | None = None
    offset: tuple[float, float, float] | None = None


#: Keys of a point mass given as a table (case files, dicts): required, then optional.
TABLE_KEYS = ("node", "mass", "inertia", "offset")


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


def _numbers(value) -> np.ndarray | None:
    """``value`` as a float array, or None when it holds anything but real numbers."""
    flat = np.ravel(np.asarray(value, dtype=object))
    if not all(isinstance(v, Real) and not isinstance(v, bool) for v in flat):
        return None
    return np.asarray(value, dtype=float)


def inertia_tensor(value, what: str = "point mass") -> np.ndarray | None:
    """The 3x3 rotary inertia [kg m²] of ``value``: None, three moments (Ixx, Iyy, Izz),
    six (Ixx, Iyy, Izz, Ixy, Ixz, Iyz; products as tensor entries) or a symmetric 3x3.

    Raises
    ------
    ValidationError
        Naming ``what`` and the value: another shape, non-finite or non-numeric entries,
        a negative moment, an asymmetric 3x3 or a tensor that is not positive
        semi-definite (eigenvalue below −1e-12 of the largest moment).
    """
    if value is None:
        return None
    expected = ("three non-negative numbers Ixx, Iyy, Izz, six Ixx, Iyy, Izz, Ixy, Ixz, "
                "Iyz or a symmetric 3x3 tensor [kg m^2]")
    try:
        arr = _numbers(value)
    except ValueError:  # ragged nested lists
        arr = None
    if arr is None or arr.shape not in ((3,), (6,), (3, 3)) or not np.all(np.isfinite(arr)):
        raise ValidationError(f"{what}: rotary inertia must be {expected}, got {value!r}")
    if arr.shape == (3,):
        if np.any(arr < 0):
            raise ValidationError(f"{what}: rotary inertia must be three non-negative "
                                  f"numbers Ixx, Iyy, Izz [kg m^2] (or six with the "
                                  f"products, or a 3x3), got {value!r}")
        return np.diag(arr)
    if arr.shape == (6,):
        xx, yy, zz, xy, xz, yz = arr
        arr = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    scale = float(np.max(np.abs(arr)))
    if np.max(np.abs(arr - arr.T)) > 1e-12 * scale:
        raise ValidationError(f"{what}: rotary inertia {arr.tolist()} is not symmetric "
                              f"[kg m^2]")
    arr = 0.5 * (arr + arr.T)
    eig = np.linalg.eigvalsh(arr)
    if np.any(np.diag(arr) < 0) or eig[0] < -1e-12 * scale:
        raise ValidationError(
            f"{what}: rotary inertia {value!r} is not positive semi-definite (principal "
            f"moments {np.array2string(eig, precision=4)} kg m^2): a negative kinetic "
            f"energy; check the signs of the products (tensor entries, I_xy = −∫xy dm)")
    return arr


def payload_block(mass: float, inertia=None, offset=None) -> np.ndarray:
    """The 6x6 mass matrix [kg, kg m, kg m²] of a rigid payload at a node, on the node's
    DOFs (u_x, u_y, u_z, r_x, r_y, r_z).

    With the centre of mass at ``offset`` s from the node and rotary inertia J about it,
    the centre moves with u̇ + ṙ × s = u̇ − s̃ ṙ, so its kinetic energy is that of
    ``[[m I, −m s̃], [m s̃, J + m (sᵀs I − s sᵀ)]]`` (s̃ the skew matrix of s; the
    parallel-axis theorem in the rotation block).

    Parameters
    ----------
    mass : float
        [kg].
    inertia : (3, 3) array, optional
        About the centre of mass, FE axes [kg m²].
    offset : 3-vector, optional
        Centre of mass relative to the node, FE axes [m].
    """
    s = np.zeros(3) if offset is None else np.asarray(offset, dtype=float)
    s_tilde = np.array([[0.0, -s[2], s[1]], [s[2], 0.0, -s[0]], [-s[1], s[0], 0.0]])
    block = np.zeros((6, 6))
    block[:3, :3] = mass * np.eye(3)
    block[:3, 3:] = -mass * s_tilde
    block[3:, :3] = mass * s_tilde
    block[3:, 3:] = mass * (s @ s * np.eye(3) - np.outer(s, s))
    if inertia is not None:
        block[3:, 3:] += inertia
    return block


def _as_point_mass(entry, what: str) -> PointMass:
    """A PointMass from a PointMass, a (node, mass[, inertia[, offset]]) tuple or a
    table {node, mass, inertia, offset}."""
    if isinstance(entry, PointMass):
        return entry
    if isinstance(entry, dict):
        unknown = sorted(set(entry) - set(TABLE_KEYS), key=str)
        missing = [k for k in ("node", "mass") if k not in entry]
        if unknown or missing:
            raise ValidationError(
                f"{what}: " + "; ".join(([f"missing {missing}"] if missing else [])
                                        + ([f"unknown keys {unknown}"] if unknown else []))
                + f" in {entry!r} (keys: node, mass, optional inertia, offset)")
        return PointMass(**entry)
    if isinstance(entry, (tuple, list)) and 2 <= len(entry) <= 4:
        return PointMass(*entry)
    raise ValidationError(f"{what}: a point mass is a PointMass, a (node, mass[, inertia"
                          f"[, offset]]) tuple or a table {{node, mass, inertia, offset}}, "
                          f"got {entry!r}")


def _offset(value, what: str) -> np.ndarray | None:
    if value is None:
        return None
    try:
        arr = _numbers(value)
    except ValueError:
        arr = None
    if arr is None or arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ValidationError(f"{what}: offset must be three finite numbers x, y, z [m] "
                              f"(centre of mass relative to the node, FE axes), got "
                              f"{value!r}")
    return arr


def add_point_masses(fe: FEModel, masses, *, what: str = "point mass") -> FEModel:
    """Add payloads (point masses with optional rotary inertia and offset) to the FE mass.

    Parameters
    ----------
    fe : FEModel
    masses : iterable
        :class:`PointMass` entries, (node, mass[, inertia[, offset]]) tuples or tables
        {node, mass, inertia, offset} (units and frames as :class:`PointMass`). Several
        entries on one node add up.
    what : str
        Prefix of error messages.

    Returns
    -------
    FEModel
        M plus each payload's block (:func:`payload_block`) at its node's DOFs — m on
        the three translations alone for a payload without inertia and offset — with
        one ``{"step": "point_mass", "node": label, "node_index": index, "mass_kg": m,
        "inertia_kgm2": .., "offset_m": ..}`` record per entry in
        ``metadata["preparation"]`` (inertia as given: three moments or the 3x3 tensor;
        None when absent).

    Raises
    ------
    ValidationError
        Naming the entry: an unknown node, a negative or non-finite mass, a bad inertia
        (:func:`inertia_tensor`) or offset, or a rotary inertia or offset on a node
        without rotational DOFs (solids: spread the mass over several nodes instead).
    """
    rows, cols, vals = [], [], []
    record = list(fe.metadata.get("preparation", []))
    for entry in masses:
        pm = _as_point_mass(entry, what)
        label = f"{what} {pm.node}"
        index = _resolve_node(fe, pm.node, label)
        if isinstance(pm.mass, bool) or not isinstance(pm.mass, Real) or not (
                np.isfinite(pm.mass) and pm.mass >= 0):
            raise ValidationError(f"{label}: mass must be a non-negative number [kg], got "
                                  f"{pm.mass!r}")
        inertia = inertia_tensor(pm.inertia, label)
        offset = _offset(pm.offset, label)
        block = payload_block(float(pm.mass), inertia, offset)
        rotary = np.any(block[3:, :] != 0)
        dofs = fe.node_dofs([index])
        if rotary and fe.dofs_per_node == 3:
            raise ValidationError(
                f"{label}: {_rotary_words(inertia, offset)} cannot be added: the model "
                f"has 3 DOFs per node (translations only, no rotation DOFs to carry it); "
                f"spread the mass over several nodes instead")
        if rotary and np.intersect1d(dofs[3:], fe.inactive_dofs).size:
            raise ValidationError(
                f"{label}: {_rotary_words(inertia, offset)} cannot be added: node "
                f"{int(fe.node_ids[index])} has no rotation DOFs in this model (no "
                f"stiffness or mass at them: a solid's node); spread the mass over "
                f"several nodes instead")
        keep = dofs.size
        r, c = np.meshgrid(dofs, dofs, indexing="ij")
        rows.append(r.ravel())
        cols.append(c.ravel())
        vals.append(block[:keep, :keep].ravel())
        diagonal = pm.inertia is not None and np.shape(pm.inertia) == (3,)
        record.append({
            "step": "point_mass", "node": int(fe.node_ids[index]), "node_index": index,
            "mass_kg": float(pm.mass),
            "inertia_kgm2": None if inertia is None else (
                np.diag(inertia).tolist() if diagonal else inertia.tolist()),
            "offset_m": None if offset is None else offset.tolist()})
    if not vals:
        return fe
    add = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                        shape=fe.mass.shape)
    mass = (fe.mass + add).tocsr()
    mass.eliminate_zeros()
    return replace(fe, mass=mass, metadata={**fe.metadata, "preparation": record})


def _rotary_words(inertia, offset) -> str:
    """"rotary inertia [...]" and/or "offset [...] m", for messages."""
    parts = []
    if inertia is not None and np.any(inertia != 0):
        products = np.any(inertia != np.diag(np.diag(inertia)))
        parts.append(f"rotary inertia "
                     f"{(inertia if products else np.diag(inertia)).tolist()}")
    if offset is not None and np.any(offset != 0):
        parts.append(f"offset {offset.tolist()} m")
    return " and ".join(parts)


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
