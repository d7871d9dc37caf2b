"""Where a marker sits on a flexible body, as modal kinematics: on a node, on an
interface node set (RBE3-like) or anywhere on the body (docs/flexible_bodies.md,
"Markers")."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from .._blas import solve_small
from ..errors import ModelError
from ..modal.data import ModalData


def skew_stack(v):
    """[v]× (…, 3, 3) of vectors v (…, 3)."""
    out = np.zeros((*v.shape[:-1], 3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


@dataclass(frozen=True)
class MarkerModes:
    """A marker's modal kinematics: undeformed origin u0 (3,) [m], translational shapes
    phi (3, n) [m/ξ] and rotational shapes psi (3, n) [rad/ξ] in the body frame."""

    u0: np.ndarray
    phi: np.ndarray
    psi: np.ndarray


def node_modes(data: ModalData, node: int) -> MarkerModes:
    """Modes of node index ``node`` (rotational rows zero when the data has none)."""
    rows = slice(3 * node, 3 * node + 3)
    psi = data.psi[rows] if data.psi is not None else np.zeros((3, data.n_modes))
    return MarkerModes(data.nodes[node].copy(), data.phi[rows].copy(), psi.copy())


#: interface_modes' results per modal data (by identity) and (nodes, weights): bodies
#: that share their data (a chain of copies of one part) share their interfaces' modes.
_INTERFACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def interface_modes(data: ModalData, nodes, weights=None) -> MarkerModes:
    """RBE3-like interface: origin and translation the weighted mean of the nodes', and
    rotation the weighted least-squares rotation of the node cloud about it:
    ψ = −(Σ w ρ̃ᵀρ̃)⁻¹ Σ w ρ̃ᵀ (φ_k − φ̄), ρ_k = ū0_k − ū0_mean. Needs ≥ 3 non-collinear
    nodes for the rotation, or nodal rotations (6-DOF data, a shell's cut line): about
    the directions the cloud's translations leave open or nearly so (the line of
    collinear or nearly collinear nodes, lever arms below 1e-4 of the set's size; every
    direction for one node), the rotation is then the nodes' weighted mean rotation
    Σ w ψ_k, as an RBE3 with rotational components does. Computed once per data
    and node set (new arrays each call)."""
    idx = np.asarray(nodes, dtype=np.int64)
    key = (idx.tobytes(), None if weights is None
           else np.asarray(weights, dtype=float).tobytes())
    try:
        known = _INTERFACES.setdefault(data, {})
    except TypeError:  # data that takes no weak reference (a stand-in): not kept
        known = {}
    if key not in known:
        known[key] = _interface_modes(data, idx, weights)
    modes = known[key]
    return MarkerModes(modes.u0.copy(), modes.phi.copy(), modes.psi.copy())


def _interface_modes(data: ModalData, idx: np.ndarray, weights) -> MarkerModes:
    w = np.ones(idx.size) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.sum()
    pts = data.nodes[idx]
    center = w @ pts
    y = data.phi.reshape(data.n_nodes, 3, data.n_modes)[idx]  # (k, 3, n)
    mean = np.einsum("k,kan->an", w, y)
    rho = skew_stack(pts - center)  # (k, 3, 3)
    lhs = np.einsum("k,kba,kbc->ac", w, rho, rho)
    rhs = np.einsum("k,kba,kbn->an", w, rho, y - mean[None])
    tol = 1e-12 * max(np.trace(lhs), 1e-300)
    if data.psi is None:
        if np.linalg.matrix_rank(lhs, tol=tol) < 3:
            raise ModelError("interface marker: the node set is collinear (or a single "
                             "node); its rotation is undefined — use a node marker or "
                             "more nodes")
        return MarkerModes(center, mean, -solve_small(lhs, rhs))
    values, vectors = np.linalg.eigh(lhs)
    # the directions the translations determine: with nodal rotations at hand, not those
    # of a nearly collinear set's tiny lever arms (a slightly wavy cut line)
    held = values > max(tol, 1e-8 * values.max())
    if held.all():
        return MarkerModes(center, mean, -solve_small(lhs, rhs))
    psi_nodes = data.psi.reshape(data.n_nodes, 3, data.n_modes)[idx]
    open_ = vectors[:, ~held]
    psi = (-(vectors[:, held] / values[held]) @ (vectors[:, held].T @ rhs)
           + open_ @ (open_.T @ np.einsum("k,kan->an", w, psi_nodes)))
    return MarkerModes(center, mean, psi)


#: Nodes of a 3-DOF mesh (no nodal rotations) whose least-squares motion carries a
#: point marker (the "nearest" rule).
POINT_NODES = 8


def point_modes(data: ModalData, point, attach: str) -> MarkerModes:
    """Modes of a marker at body-frame ``point`` [m] that is not on a node.

    ``attach="frame"``: rigidly on the body frame (no deformation: ū0 = point, Φ = Ψ =
    0), which is exact at the frame's attachment when the modes keep it fixed.
    ``attach="nearest"``: carried by the nearest node as if rigidly joined to it,
    φ = φ_k − (point − x_k) × ψ_k and ψ = ψ_k; on a mesh without nodal rotations, by the
    least-squares (RBE3-like) translation and rotation of its :data:`POINT_NODES` nearest
    nodes (:func:`interface_modes`), carried to the point the same way."""
    point = np.asarray(point, dtype=float)
    if attach == "frame":
        zeros = np.zeros((3, data.n_modes))
        return MarkerModes(point.copy(), zeros, zeros.copy())
    if attach != "nearest":
        raise ModelError(f"attach must be 'frame' or 'nearest', got {attach!r}")
    distance = np.linalg.norm(data.nodes - point, axis=1)
    if data.psi is not None:
        near = node_modes(data, int(np.argmin(distance)))
        center = data.nodes[int(np.argmin(distance))]
    else:
        count = min(POINT_NODES, data.n_nodes)
        near = interface_modes(data, np.argsort(distance, kind="stable")[:count])
        center = near.u0
    arm = skew_stack(point - center)  # (p − x) × ψ = skew(p − x) ψ
    return MarkerModes(point.copy(), near.phi - arm @ near.psi, near.psi.copy())
