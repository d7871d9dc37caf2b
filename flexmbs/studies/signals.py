"""What a study looks at in one run: modal coordinates, tip deflection, joint angles and
the energy balance, extracted once from a :class:`~flexmbs.results.SimulationResult`
into plain arrays (small, picklable: they travel back from worker processes and Dask).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError


@dataclass
class RunSignals:
    """Histories of one run (all arrays over the output times ``t`` [s]).

    modal : {body: (n_t, n_m)} modal coordinates ξ (units of the modal data's shapes).
    tip : {body: (n_t, 3)} elastic displacement Φ_k ξ of the tip node in body axes [m]
        (tip node: the node farthest from the body-frame origin, see :func:`tip_node`).
    tip_node : {body: int} the node index used.
    joint_angles : {joint: (n_t,)} relative angle of each revolute joint [rad], the angle
        of x_j about z_i, unwrapped.
    energy_error : (n_t,) T + V − W_nc − (T + V)(t0) [J]: the energy balance residual.
    """

    t: np.ndarray
    modal: dict = field(default_factory=dict)
    tip: dict = field(default_factory=dict)
    tip_node: dict = field(default_factory=dict)
    joint_angles: dict = field(default_factory=dict)
    kinetic: np.ndarray | None = None
    potential: np.ndarray | None = None
    elastic: np.ndarray | None = None
    energy_error: np.ndarray | None = None


def tip_node(nodes: np.ndarray) -> int:
    """Index of the node farthest from the body-frame origin (for a beam with its frame
    at the root, the tip)."""
    return int(np.argmax(np.einsum("ij,ij->i", nodes, nodes)))


def tip_history(result, body: str, node: int | None = None) -> tuple[np.ndarray, int]:
    """(n_t, 3) elastic displacement Φ_k ξ(t) of ``node`` (default :func:`tip_node`) in
    body axes [m], from the result alone (its body description carries nodes and Φ)."""
    info = result.bodies.get(body)
    if info is None or "phi" not in info:
        flexible = [k for k, v in result.bodies.items() if "phi" in v]
        raise ModelError(f"the results have no flexible body {body!r} (flexible bodies: "
                         f"{flexible})")
    k = tip_node(np.asarray(info["nodes"])) if node is None else int(node)
    rows = np.asarray(info["phi"])[3 * k:3 * k + 3]
    return result.modal_coordinates(body) @ rows.T, k


def revolute_angles(system, result) -> dict[str, np.ndarray]:
    """Relative angle (x_j about z_i, unwrapped) of every revolute joint over time."""
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


def extract(system, result) -> RunSignals:
    """All study signals of one run."""
    sig = RunSignals(t=np.asarray(result.t, dtype=float))
    for name, info in result.bodies.items():
        if "phi" in info:
            sig.modal[name] = np.array(result.modal_coordinates(name))
            sig.tip[name], sig.tip_node[name] = tip_history(result, name)
    sig.joint_angles = revolute_angles(system, result)
    sig.kinetic = np.asarray(result.kinetic)
    sig.potential = np.asarray(result.potential)
    sig.elastic = np.asarray(result.elastic)
    total = sig.kinetic + sig.potential - np.asarray(result.nonconservative_work)
    sig.energy_error = total - total[0]
    return sig


def peak(x) -> float:
    """max |x| (0 for an empty signal)."""
    x = np.asarray(x)
    return float(np.max(np.abs(x))) if x.size else 0.0


def rms(x, axis=None):
    """Root mean square over the samples (uniform output times assumed)."""
    x = np.asarray(x, dtype=float)
    return np.sqrt(np.mean(x * x, axis=axis)) if x.size else 0.0


def norm_rows(x) -> np.ndarray:
    """‖x_t‖ of each row of an (n_t, 3) history."""
    return np.linalg.norm(np.asarray(x, dtype=float), axis=-1)


def vibration(t, x, trend_window: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(uniform times, x − its slow trend): the quasi-static part that follows the
    rigid motion is removed by a Savitzky–Golay fit (quadratic) over ``trend_window``
    seconds (default a tenth of the record), leaving the vibration."""
    from scipy.signal import savgol_filter

    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    grid = np.linspace(t[0], t[-1], t.size)
    y = np.interp(grid, t, x)
    span = (t[-1] - t[0]) / 10 if trend_window is None else trend_window
    n = max(5, round(float(span / (grid[1] - grid[0]))) | 1)  # odd window length
    if n >= y.size:
        return grid, y - np.polyval(np.polyfit(grid, y, 2), grid)
    return grid, y - savgol_filter(y, n, 2)


def dominant_frequency(t, x, trend_window: float | None = None) -> float:
    """Frequency [Hz] of the largest peak of the amplitude spectrum of the vibration of
    x(t) (:func:`vibration`; bins below 2/``trend_window`` — what the trend removal
    cannot separate — are ignored). 0 for fewer than 16 samples or a constant signal."""
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    if t.size < 16 or np.ptp(x) == 0:
        return 0.0
    span = (t[-1] - t[0]) / 10 if trend_window is None else trend_window
    grid, y = vibration(t, x, span)
    spec = np.abs(np.fft.rfft(y * np.hanning(y.size)))
    freqs = np.fft.rfftfreq(y.size, grid[1] - grid[0])
    keep = freqs >= 2.0 / span
    if not np.any(keep) or not np.any(spec[keep]):
        return 0.0
    return float(freqs[keep][int(np.argmax(spec[keep]))])


def principal_direction(history) -> np.ndarray:
    """Unit direction of largest variance of an (n_t, 3) history, signed so that its
    largest excursion is positive (e_y for an identically zero history)."""
    history = np.asarray(history, dtype=float)
    if not np.any(history):
        return np.array([0.0, 1.0, 0.0])
    d = np.linalg.svd(history, full_matrices=False)[2][0]
    proj = history @ d
    return d if proj[np.argmax(np.abs(proj))] >= 0 else -d
