"""Stresses of a run from its results file: the stress modes a flexible body carries
(modal fields, docs/stress.md) times its modal coordinates at every output time, von
Mises stresses, the peak and a hot-spot table (``flexmbs stress``).

σ(node, t) = Σ_j field[node, :, j] ξ_j(t): linear in the modal coordinates, in the body
frame (solids) or the section axes (beams). Only the elastic deformation stresses: the
body's rigid motion carries none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError


@dataclass(frozen=True)
class BodyStress:
    """Von Mises stress [Pa] of one body over the output times, from its field ``field``
    ("stress" or "fibre_stress"): ``von_mises`` (n_t, N), the node labels and the body."""

    body: str
    field: str
    von_mises: np.ndarray
    node_ids: np.ndarray


def _modal_coordinates(result, info) -> np.ndarray:
    start = int(info["start"]) + 7
    return np.asarray(result.q)[:, start:start + int(info["n_modes"])]


def von_mises_at(result, body: str, k: int) -> np.ndarray | None:
    """Von Mises stress [Pa] at the nodes of ``body`` at output index k (for a beam the
    largest normal stress at its fibre points), or None when it has no stress modes."""
    from ..modal.stress import stress_field_name, von_mises

    info = result.bodies.get(body, {})
    fields = info.get("fields", {})
    name = stress_field_name(fields)
    if name is None:
        return None
    return von_mises(name, np.asarray(fields[name]) @ _modal_coordinates(result, info)[k])


def stress_bodies(result) -> list[str]:
    """Names of the flexible bodies of ``result`` that carry stress modes."""
    from ..modal.stress import stress_field_name

    return [name for name, info in result.bodies.items()
            if stress_field_name(info.get("fields", {})) is not None]


def field_history(result, body: str, field: str) -> np.ndarray:
    """(n_t, N, components) values of the modal field ``field`` of ``body`` at every
    output time."""
    info = result.bodies.get(body)
    if info is None:
        raise ValidationError(f"body {body!r} is not in these results (bodies: "
                              f"{', '.join(map(repr, result.bodies)) or 'none'})")
    if "fields" not in info or field not in info["fields"]:
        have = sorted(info.get("fields", {}))
        raise ValidationError(f"body {body!r} has no field {field!r} in these results "
                              f"(has: {have or 'none'})")
    return np.einsum("ncj,tj->tnc", np.asarray(info["fields"][field], dtype=float),
                     _modal_coordinates(result, info))


def body_stress(result, body: str | None = None) -> BodyStress:
    """The von Mises history of ``body`` (default: the only body with stress modes)."""
    from ..modal.stress import stress_field_name, von_mises

    names = stress_bodies(result)
    beams = list(getattr(result, "model", {}).get("beam_elements", {}))
    if not names and beams:  # (results/ never imports post/: the key read here)
        raise ValidationError(
            f"these results carry no stress modes; their nonlinear beam(s) "
            f"{', '.join(map(repr, beams))} carry section forces instead: their fibre "
            "stresses are flexmbs.post.beam_forces.fibre_stress(result, name) and the "
            "point data beam_stress of flexmbs export (docs/nonlinear_beam.md)")
    if not names:
        raise ValidationError(
            "these results carry no stress modes: reduce the body's FE model with "
            "--stress (flexmbs beam / flexmbs reduce, docs/stress.md) and run again")
    if body is None:
        if len(names) > 1:
            raise ValidationError(f"several bodies have stress modes ({', '.join(names)}); "
                                  "choose one with --body")
        body = names[0]
    if body not in names:
        raise ValidationError(f"body {body!r} has no stress modes in these results; bodies "
                              f"with stress modes: {', '.join(names)}")
    info = result.bodies[body]
    field = stress_field_name(info["fields"])
    values = field_history(result, body, field)
    ids = info.get("node_ids")
    ids = np.arange(1, values.shape[1] + 1) if ids is None else np.asarray(ids)
    return BodyStress(body, field, von_mises(field, values), ids)


def stress_report(result, body: str | None = None, top: int = 10) -> dict:
    """Peak von Mises stress of ``body``: its value [Pa], time [s] and node label, and the
    ``top`` hot spots (the nodes with the highest peaks, each with its peak time)."""
    if not (isinstance(top, int) and top >= 1):
        raise ValidationError(f"top must be an integer >= 1, got {top!r}")
    stress = body_stress(result, body)
    vm = stress.von_mises
    t = np.asarray(result.t)
    peak_per_node = vm.max(axis=0)
    when = vm.argmax(axis=0)
    order = np.argsort(-peak_per_node, kind="stable")[:top]
    k_node = int(order[0])
    return {
        "body": stress.body,
        "field": stress.field,
        "criterion": {"stress": "von Mises",
                      "shell_stress": "von Mises, the larger of the top and bottom "
                                      "surfaces'"}.get(
            stress.field, "largest normal stress at the section's corners"),
        "peak_von_mises_pa": float(peak_per_node[k_node]),
        "peak_time_s": float(t[when[k_node]]),
        "peak_node": int(stress.node_ids[k_node]),
        "hot_spots": [{"node": int(stress.node_ids[k]), "von_mises_pa": float(
            peak_per_node[k]), "time_s": float(t[when[k]])} for k in order],
    }
