"""Model updating of a built-in beam against test modal data (docs/gradients.md, "Model
updating against a modal test").

A modal test gives natural frequencies and mode shapes at measured nodes
(:func:`read_modal_test`). Each test mode is paired with the body's modal coordinate of
largest MAC at the measured DOFs (one model mode per test mode; a test mode without
shapes takes the nearest free frequency), MAC(a, b) = (aᵀb)² / (aᵀa · bᵀb). The residuals
are, per pair,

    r_f = w_f (f_model − f_test) / f_test,        r_MAC = w_MAC (1 − MAC),

and ``scipy.optimize.least_squares`` (trust-region reflective, bounds allowed) moves the
parameters — keys of the beam's table, as for the gradients (section dimensions, E, ρ,
payloads) — with the Jacobian from the modal data's derivatives
(:mod:`flexmbs.gradients.beam_parameters`: Nelson's method): df_j/dp from dλ_j, dMAC/dp
from the shapes' derivative at the measured DOFs. The pairing is made again at every
evaluation. Standard errors come from the Gauss–Newton covariance σ̂² (GᵀG)⁻¹ of the
residuals.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ValidationError

#: Measured directions: translations and rotations along the body axes.
DIRECTIONS = ("x", "y", "z", "rx", "ry", "rz")


@dataclass(frozen=True)
class TestMode:
    """One measured mode: its ``label``, ``frequency`` [Hz] and its shape at measured
    DOFs: FE node labels ``nodes``, ``directions`` (0–5: x, y, z, rx, ry, rz in the body
    axes) and ``values`` (any scale)."""

    label: str
    frequency: float
    nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    directions: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    values: np.ndarray = field(default_factory=lambda: np.zeros(0))


def read_modal_test(path) -> list[TestMode]:
    """The modes of a modal-test CSV file: one line per measured DOF of a mode,
    ``mode, frequency [Hz], node, direction, value`` (direction x, y, z, rx, ry or rz in
    the body axes; node and value empty for a mode measured by its frequency alone;
    '#' comments and a header line skipped). ValidationError naming the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"modal test {str(path)!r}: {exc}") from None
    rows: dict[str, dict] = {}
    first = True
    for number, row in enumerate(csv.reader(text.splitlines()), 1):
        row = [c.strip() for c in row]
        if not row or not any(row) or row[0].startswith("#"):
            continue
        header, first = first, False
        where = f"modal test {path.name!r} line {number}"
        if len(row) not in (2, 5):
            raise ValidationError(f"{where}: expected 'mode, frequency [Hz], node, "
                                  f"direction, value' (or 'mode, frequency'), got {row}")
        try:
            freq = float(row[1])
        except ValueError:
            if header:
                continue
            raise ValidationError(f"{where}: frequency {row[1]!r} is not a number") from None
        if not (np.isfinite(freq) and freq > 0):
            raise ValidationError(f"{where}: frequency must be positive [Hz], got {freq}")
        mode = rows.setdefault(row[0], {"f": freq, "dofs": []})
        if abs(mode["f"] - freq) > 1e-9 * freq:
            raise ValidationError(f"{where}: mode {row[0]!r} has frequency {freq} here and "
                                  f"{mode['f']} before")
        if len(row) == 5 and (row[2] or row[3] or row[4]):
            direction = row[3].lower()
            if direction not in DIRECTIONS:
                raise ValidationError(f"{where}: direction {row[3]!r} is not one of "
                                      f"{list(DIRECTIONS)}")
            try:
                node, value = int(row[2]), float(row[4])
            except ValueError:
                raise ValidationError(f"{where}: node {row[2]!r} must be an integer label "
                                      f"and value {row[4]!r} a number") from None
            mode["dofs"].append((node, DIRECTIONS.index(direction), value))
    if not rows:
        raise ValidationError(f"modal test {str(path)!r} holds no modes")
    out = []
    for label, mode in rows.items():
        dofs = mode["dofs"]
        nodes, dirs, values = (np.array([d[k] for d in dofs]) for k in range(3))
        if dofs and not np.any(values != 0):
            raise ValidationError(f"modal test {path.name!r}: mode {label!r} has an all-zero "
                                  f"shape")
        out.append(TestMode(label, float(mode["f"]), nodes.astype(int), dirs.astype(int),
                            values.astype(float)))
    return out


def dof_rows(data, mode: TestMode) -> tuple[np.ndarray, np.ndarray]:
    """(rows of phi, rows of psi) — as one index array into the stacked [phi; psi] —
    of a test mode's measured DOFs on modal data ``data``; ValidationError naming an
    unknown node."""
    rows = []
    for node, direction in zip(mode.nodes, mode.directions, strict=True):
        hits = np.flatnonzero(np.asarray(data.node_ids) == node)
        if hits.size != 1:
            raise ValidationError(f"test mode {mode.label!r}: node {node} is not a node of "
                                  f"the body")
        if direction >= 3 and data.psi is None:
            raise ValidationError(f"test mode {mode.label!r}: rotations measured, but the "
                                  f"body's modes have no rotational shapes")
        base = 0 if direction < 3 else 3 * data.n_nodes
        rows.append(base + 3 * int(hits[0]) + direction % 3)
    return np.array(rows, dtype=int)


def stacked_shapes(data) -> np.ndarray:
    """[phi; psi] (6N or 3N, n) of modal data."""
    return data.phi if data.psi is None else np.vstack([data.phi, data.psi])


def mac(a: np.ndarray, b: np.ndarray) -> float:
    """(aᵀb)² / (aᵀa bᵀb)."""
    return float((a @ b) ** 2 / ((a @ a) * (b @ b)))


#: A test mode measured at fewer DOFs than this is paired by frequency: the MAC of one
#: DOF is 1 for any model mode not zero there (round-off included), so it tells nothing.
MAC_FROM_DOFS = 2


def pair_modes(tests: list[TestMode], data) -> list[tuple[int, int, float]]:
    """(test index, model coordinate, MAC or NaN) per test mode: greedy by decreasing
    MAC over the test modes with shapes at :data:`MAC_FROM_DOFS` DOFs or more, then the
    nearest free frequency for the others (their MAC NaN)."""
    shapes = stacked_shapes(data)
    freqs = data.coordinate_frequencies
    candidates = []
    for i, mode in enumerate(tests):
        rows = dof_rows(data, mode) if mode.values.size else None  # (checks the nodes)
        if mode.values.size >= MAC_FROM_DOFS:
            for j in range(data.n_modes):
                candidates.append((mac(mode.values, shapes[rows, j]), i, j))
    used_i, used_j, out = set(), set(), {}
    for value, i, j in sorted(candidates, key=lambda c: -c[0]):
        if i not in used_i and j not in used_j:
            out[i] = (i, j, value)
            used_i.add(i)
            used_j.add(j)
    for i, mode in enumerate(tests):
        if i in out:
            continue
        free = [j for j in range(data.n_modes) if j not in used_j]
        if not free:
            raise ValidationError("more test modes than the body has modal coordinates")
        j = min(free, key=lambda j: abs(freqs[j] - mode.frequency))
        out[i] = (i, j, float("nan"))
        used_j.add(j)
    return [out[i] for i in range(len(tests))]
