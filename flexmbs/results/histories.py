"""Histories derived from a run's results: the elastic displacement of a flexible body's
node and the relative angles of its revolute joints, over the output times ``result.t``
[s].

Frames: a displacement is the elastic part Φ_k ξ(t) only, in the axes of the body frame
(the rigid motion of the body is not included); a joint angle is the angle of marker j's
x axis about marker i's z axis. Units: [m] for displacements, [rad] for angles.
Everything comes from the :class:`~flexmbs.results.SimulationResult` (its body
description carries the nodes and Φ), except the joint angles, which need the
assembled system for the marker frames.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError


def tip_node(nodes: np.ndarray) -> int:
    """Index of the node farthest from the body-frame origin (for a beam with its frame
    at the root, the tip).

    Parameters
    ----------
    nodes : ndarray, shape (N, 3)
        Node positions in the undeformed body frame [m].
    """
    return int(np.argmax(np.einsum("ij,ij->i", nodes, nodes)))


def tip_history(result, body: str, node: int | None = None) -> tuple[np.ndarray, int]:
    """(n_t, 3) elastic displacement Φ_k ξ(t) of ``node`` (default :func:`tip_node`) in
    body axes [m], from the result alone (its body description carries nodes and Φ).

    Returns the history and the node's row index in the body's node table (not its
    label). Raises :class:`~flexmbs.errors.ModelError` naming the flexible bodies when
    ``body`` is not one of them."""
    info = result.bodies.get(body)
    if info is None or "phi" not in info:
        flexible = [k for k, v in result.bodies.items() if "phi" in v]
        raise ModelError(f"the results have no flexible body {body!r} (flexible bodies: "
                         f"{flexible})")
    count = len(info["nodes"])
    if node is None:
        k = tip_node(np.asarray(info["nodes"]))
    elif (isinstance(node, (int, np.integer)) and not isinstance(node, bool)
          and 0 <= node < count):
        k = int(node)
    else:
        raise ModelError(f"node {node!r} of flexible body {body!r}: expected a row index "
                         f"of its node table, 0 … {count - 1} (not a node label)")
    rows = np.asarray(info["phi"])[3 * k:3 * k + 3]
    return result.modal_coordinates(body) @ rows.T, k


def revolute_angles(system, result) -> dict[str, np.ndarray]:
    """Relative angle (x_j about z_i, unwrapped) of every revolute joint over time.

    Returns ``{joint name: ndarray, shape (n_t,)}`` [rad]; ``system`` is the assembled
    system the result was computed with (it locates the markers)."""
    out = {}
    for joint in system.model.joints:
        if joint.kind != "revolute":
            continue
        values = []
        for q in result.q:
            axes = []
            for name in (joint.marker_i, joint.marker_j):
                body, marker, sl = system.marker_info(name)
                axes.append(body.marker_frame(q[sl], marker, jac=False)[1])
            ai, aj = axes
            values.append(np.arctan2(aj[:, 0] @ ai[:, 1], aj[:, 0] @ ai[:, 0]))
        out[joint.name] = np.unwrap(np.array(values))
    return out
