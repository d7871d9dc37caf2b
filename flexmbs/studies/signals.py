"""What a study looks at in one run: modal coordinates, tip deflection, joint angles and
the energy balance, extracted once from a :class:`~flexmbs.results.SimulationResult`
into plain arrays (small, picklable: they travel back from worker processes and Dask).

The histories themselves are computed in :mod:`flexmbs.results.histories` and the
measures of them (peak, RMS, dominant frequency, ...) in :mod:`flexmbs.results.measures`;
their names are re-exported here for code that imports them from this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..results.histories import revolute_angles, tip_history, tip_node
from ..results.measures import (
    dominant_frequency,
    norm_rows,
    peak,
    principal_direction,
    rms,
    vibration,
)

__all__ = ["RunSignals", "dominant_frequency", "extract", "norm_rows", "peak",
           "principal_direction", "revolute_angles", "rms", "tip_history", "tip_node",
           "vibration"]


@dataclass
class RunSignals:
    """Histories of one run (all arrays over the output times ``t`` [s]).

    modal : {body: (n_t, n_m)} modal coordinates ξ (units of the modal data's shapes).
    tip : {body: (n_t, 3)} elastic displacement Φ_k ξ of the tip node in body axes [m]
        (tip node: the node farthest from the body-frame origin, see
        :func:`~flexmbs.results.histories.tip_node`).
    tip_node : {body: int} the node index used.
    size : {body: float} the largest extent of the body's nodes [m]: the scale against
        which a deflection counts as round-off.
    shape_peak : {body: (n_m,)} the largest nodal displacement of each mode shape per
        unit ξⱼ [m per shape unit]: |ξⱼ| times it is the mode's largest displacement.
    joint_angles : {joint: (n_t,)} relative angle of each revolute joint [rad], the angle
        of x_j about z_i, unwrapped.
    energy_error : (n_t,) T + V − W_nc − (T + V)(t0) [J]: the energy balance residual.
    """

    t: np.ndarray
    modal: dict = field(default_factory=dict)
    tip: dict = field(default_factory=dict)
    tip_node: dict = field(default_factory=dict)
    size: dict = field(default_factory=dict)
    shape_peak: dict = field(default_factory=dict)
    joint_angles: dict = field(default_factory=dict)
    kinetic: np.ndarray | None = None
    potential: np.ndarray | None = None
    elastic: np.ndarray | None = None
    energy_error: np.ndarray | None = None


def extract(system, result) -> RunSignals:
    """All study signals of one run."""
    sig = RunSignals(t=np.asarray(result.t, dtype=float))
    for name, info in result.bodies.items():
        if "phi" in info:
            sig.modal[name] = np.array(result.modal_coordinates(name))
            sig.tip[name], sig.tip_node[name] = tip_history(result, name)
            nodes = np.asarray(info["nodes"], dtype=float)
            sig.size[name] = float(np.max(np.ptp(nodes, axis=0))) if nodes.size else 0.0
            phi = np.asarray(info["phi"], dtype=float)
            sig.shape_peak[name] = np.max(np.linalg.norm(
                phi.reshape(-1, 3, phi.shape[1]), axis=1), axis=0)
    sig.joint_angles = revolute_angles(system, result)
    sig.kinetic = np.asarray(result.kinetic)
    sig.potential = np.asarray(result.potential)
    sig.elastic = np.asarray(result.elastic)
    total = sig.kinetic + sig.potential - np.asarray(result.nonconservative_work)
    sig.energy_error = total - total[0]
    return sig
