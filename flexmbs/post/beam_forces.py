"""Section forces and fibre stresses of the nonlinear beams of a run, from its recorded
states (docs/nonlinear_beam.md, docs/post_processing.md).

A results file describes each nonlinear beam's node bodies (``model["beams"]``) and
its elements (``model["beam_elements"]``: lengths [m], section stiffnesses, and the
section's area [m²], second moments [m⁴] and fibre points (y, z) [m]). The element's
normal and shear forces n [N] and torsion and bending moments m [N m] along its local
axes (x the beam axis) and the normal stress at its fibre points [Pa] are recomputed
here from the node coordinates at the outputs, with the element kind's own reference
functions (:mod:`flexmbs.elements.nonlinear_beam.reference`).
"""

from __future__ import annotations

import numpy as np

from ..elements.nonlinear_beam import reference


def beam_names(result) -> list[str]:
    """The nonlinear beams whose elements the results describe."""
    return list(getattr(result, "model", {}).get("beam_elements", {}))


def _node_states(result, name):
    """(qa, qb) (n_t, E, 7) of the beam's elements at every output."""
    nodes = result.model["beams"][name]
    starts = [int(result.bodies[node]["start"]) for node in nodes]
    q = np.asarray(result.q, dtype=float)
    per_node = np.stack([q[:, s:s + 7] for s in starts], axis=1)  # (n_t, E + 1, 7)
    return per_node[:, :-1], per_node[:, 1:]


def section_forces(result, name):
    """(n (n_t, E, 3) [N], m (n_t, E, 3) [N m]): each element's normal and shear forces
    and torsion and bending moments along its local axes at every output."""
    info = result.model["beam_elements"][name]
    qa, qb = _node_states(result, name)
    n_t, count = qa.shape[:2]
    lengths = np.tile(np.asarray(info["lengths"], dtype=float), n_t)
    n, m = reference.section_forces(qa.reshape(-1, 7), qb.reshape(-1, 7), lengths,
                                    np.asarray(info["stiffness"], dtype=float))
    return n.reshape(n_t, count, 3), m.reshape(n_t, count, 3)


def fibre_stress(result, name):
    """(n_t, E) the largest |σ| [Pa] over the section's fibre points of each element at
    every output (σ = N/A + M_y z/I_y − M_z y/I_z)."""
    info = result.model["beam_elements"][name]
    n, m = section_forces(result, name)
    n_t, count = n.shape[:2]
    sigma = reference.fibre_stresses(n.reshape(-1, 3), m.reshape(-1, 3), info["area"],
                                     info["iy"], info["iz"],
                                     np.asarray(info["fibres"], dtype=float))
    return np.max(np.abs(sigma), axis=1).reshape(n_t, count)


def nodal(values):
    """(n_t, E + 1, …) node values from element values (n_t, E, …): the mean of the
    elements on each side (an end node takes its one element's)."""
    values = np.asarray(values, dtype=float)
    out = np.empty((values.shape[0], values.shape[1] + 1, *values.shape[2:]))
    out[:, 0], out[:, -1] = values[:, 0], values[:, -1]
    out[:, 1:-1] = 0.5 * (values[:, :-1] + values[:, 1:])
    return out


class _Output:
    """The states of a result at one output alone (what the functions above read)."""

    def __init__(self, result, k):
        self.q = np.asarray(result.q)[k:k + 1]
        self.model, self.bodies = result.model, result.bodies


def at_output(result, k):
    """A view of ``result`` holding output ``k`` only, for the functions above (one
    output's values without computing every output's)."""
    return _Output(result, k)


def node_stress(result, name, k) -> np.ndarray:
    """(E + 1,) the node means of the elements' largest |σ| [Pa] at output ``k``."""
    return nodal(fibre_stress(at_output(result, k), name))[0]
