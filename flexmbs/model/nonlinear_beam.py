"""Nonlinear (geometrically exact) beams as a user declares them: node bodies, the
element force that joins them, and markers on their nodes (docs/nonlinear_beam.md).

A beam ``name`` of n elements becomes n + 1 rigid node bodies ``name/1`` … ``name/n+1``
(root to tip) and one force ``name`` (:class:`~flexmbs.elements.nonlinear_beam.
BeamElements`). Node k carries the mass and rotary inertia of the beam within half an
element on each side (lumped): m_k = ρ A l_k and J_k = ρ l_k diag(I_p, I_y, I_z) in
its section frame, l_k its share of the length (L_e at inner nodes, L_e/2 at the ends).
Gravity, joints, drives, springs, loads, contacts and sensors act on the node bodies as
on any rigid body. A marker declared on the beam itself, ``add_marker("arm", "end",
node="tip")``, is a marker of the node body (``"arm/17"``) that keeps the name the user
gave (``"arm.end"``); its position and orientation are relative to the node's section
frame (x along the beam, y and z the section's principal axes).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from ..elements.nonlinear_beam import BeamElements
from ..errors import FlexmbsError
from ..frame.rotations import g_global, quaternion_from_matrix
from .bodies import RigidBody

#: The named node sets of every nonlinear beam.
NODE_SETS = ("root", "tip")


@dataclass(frozen=True)
class NonlinearBeam:
    """What :func:`declare_beam` made: the beam ``name``, its node bodies (root to tip),
    its length [m], section (:class:`~flexmbs.modal.fe.beam.BeamSection`) and material
    (:class:`~flexmbs.modal.fe.beam.Material`)."""

    name: str
    nodes: tuple
    length: float
    section: object
    material: object

    def node_body(self, node) -> str:
        """The node body of ``node``: a label 1 … n+1, or "root" / "tip"; ValueError
        otherwise."""
        count = len(self.nodes)
        if isinstance(node, str) and node in NODE_SETS:
            return self.nodes[0 if node == "root" else -1]
        if isinstance(node, Integral) and not isinstance(node, bool) and 1 <= node <= count:
            return self.nodes[int(node) - 1]
        raise ValueError(f"node must be a label 1..{count} or one of {list(NODE_SETS)}, "
                         f"got {node!r}")


def node_name(beam: str, label: int) -> str:
    """The body name of node ``label`` (1-based) of beam ``beam``."""
    return f"{beam}/{label}"


def beam_material(value):
    """A Material from a Material, "steel", "aluminium", the text "E,nu,rho" (as
    ``flexmbs beam --material``) or {E, nu, rho} [Pa, -, kg/m³]."""
    from ..modal.fe.beam import Material

    if isinstance(value, Material):
        return value
    named = {"steel": Material.steel, "aluminium": Material.aluminium,
             "aluminum": Material.aluminium}
    if isinstance(value, str) and value.strip().lower() in named:
        return named[value.strip().lower()]()
    if isinstance(value, str) and value.count(",") == 2:
        try:
            e_mod, nu, rho = (float(v) for v in value.split(","))
        except ValueError:
            pass
        else:
            return Material(e_mod, nu, rho)
    if isinstance(value, dict) and {"E", "nu", "rho"} <= set(value) <= {"E", "nu", "rho",
                                                                         "name"}:
        return Material(**value)
    raise ValueError(f"material must be 'steel', 'aluminium', a Material or a table "
                     f"{{E = ..., nu = ..., rho = ...}} (SI), got {value!r}")


def beam_section(value):
    """A BeamSection from a BeamSection or a section table (as ``flexmbs beam``'s,
    :func:`~flexmbs.modal.fe.section_tables.section_from_spec`)."""
    from ..modal.fe.beam import BeamSection
    from ..modal.fe.section_tables import section_from_spec

    if isinstance(value, BeamSection):
        return value
    return section_from_spec(value, "section")


def _positive(what, value, count) -> np.ndarray:
    """``value`` as ``count`` finite positive floats; ValueError naming ``what``."""
    try:
        out = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be {count} positive numbers, got {value!r}") from None
    if out.shape != (count,) or not np.all(np.isfinite(out)) or np.any(out <= 0):
        raise ValueError(f"{what} must be {count} positive numbers, got {out.tolist()}")
    return out


def section_stiffness(section, material) -> np.ndarray:
    """[EA, k_y GA, k_z GA, GJ, EI_y, EI_z] [N, N, N, N m², N m², N m²]."""
    e, g = material.E, material.G
    return np.array([e * section.A, section.ky * g * section.A, section.kz * g * section.A,
                     g * section.J, e * section.Iy, e * section.Iz])


def declare_beam(bodies: dict, forces: list, problems: list, name, length, elements,
                 section, material, *, position=(0, 0, 0), axis=(1, 0, 0), up=(0, 0, 1),
                 velocity=(0, 0, 0), angular_velocity=(0, 0, 0), stiffness=None,
                 inertia=None) -> NonlinearBeam | None:
    """Add the node bodies of beam ``name`` to ``bodies`` and its elements to ``forces``
    (straight, unstressed, from ``position`` [m] along ``axis``, section axis z the part
    of ``up`` across the beam; moving as a rigid body with ``velocity`` [m/s] of the
    root and ``angular_velocity`` [rad/s], global). ``stiffness`` [EA, k_yGA, k_zGA
    [N], GJ, EI_y, EI_z [N m²]] and ``inertia`` [ρA [kg/m], ρI_p, ρI_y, ρI_z [kg m]]
    replace what the section and the material give (the constants of a published
    benchmark, or of a section computed elsewhere). Problems go to ``problems``; None
    when the beam cannot be made."""
    from ..modal.fe.beam import beam_local_frame
    from .declarations import _name_problem

    what = f"nonlinear beam {name!r}"
    if (problem := _name_problem("body", name)) is not None:
        problems.append(problem)
        return None
    if name in bodies:
        problems.append(f"{what}: a body named {name!r} exists already")
        return None
    try:
        length = float(length)
        if not (np.isfinite(length) and length > 0):
            raise ValueError(f"length must be a positive number [m], got {length!r}")
        if isinstance(elements, bool) or not isinstance(elements, Integral) or elements < 1:
            raise ValueError(f"elements must be an integer >= 1, got {elements!r}")
        sec, mat = beam_section(section), beam_material(material)
        frame = beam_local_frame(axis, up).T  # columns: beam axis, section y, z
        vectors = [np.asarray(v, dtype=float) for v in (position, velocity,
                                                        angular_velocity)]
        for key, v in zip(("position", "velocity", "angular_velocity"), vectors,
                          strict=True):
            if v.shape != (3,) or not np.all(np.isfinite(v)):
                raise ValueError(f"{key} must be 3 finite numbers, got {v.tolist()}")
        constants = section_stiffness(sec, mat) if stiffness is None else _positive(
            "stiffness [EA, k_yGA, k_zGA, GJ, EI_y, EI_z]", stiffness, 6)
        per_length = (mat.rho * np.array([sec.A, sec.Ip, sec.Iy, sec.Iz]) if inertia is None
                      else _positive("inertia [rhoA, rhoI_p, rhoI_y, rhoI_z]", inertia, 4))
    except (ValueError, TypeError, FlexmbsError) as exc:
        problems.append(f"{what}: {exc}")
        return None
    start, v0, omega = vectors
    n = int(elements)
    le = length / n
    share = np.full(n + 1, le)
    share[[0, -1]] = 0.5 * le
    p = quaternion_from_matrix(frame)
    pdot = 0.25 * g_global(p).T @ omega
    nodes = []
    for k in range(n + 1):
        node = node_name(name, k + 1)
        if node in bodies:
            problems.append(f"{what}: its node body name {node!r} is taken")
            return None
        r = start + k * le * frame[:, 0]
        mass = per_length[0] * share[k]
        node_inertia = share[k] * np.diag(per_length[1:])
        bodies[node] = RigidBody(node, mass, node_inertia, np.concatenate([r, p]),
                                 np.concatenate([v0 + np.cross(omega, r - start), pdot]))
        nodes.append(node)
    forces.append(BeamElements(name, tuple(nodes), np.full(n, le), constants,
                               float(per_length[0]), sec))
    return NonlinearBeam(name, tuple(nodes), length, sec, mat)


def beam_markers(declared, beams: dict, problems: list) -> tuple[list, dict]:
    """The builder's marker declarations with those on a beam moved onto its node
    bodies, and the map {node-body marker name: the name the user gave}."""
    out, aliases = [], {}
    for entry in declared:
        body, name, position, orientation, frame, node, node_set, attach = entry
        beam = beams.get(body)
        if beam is None:
            out.append(entry)
            continue
        who = f"marker {body}.{name!r} on nonlinear beam {body!r}"
        if node_set is not None or attach is not None:
            problems.append(f"{who}: node_set and attach do not apply to a nonlinear "
                            f"beam; give node = a label 1..{len(beam.nodes)}, 'root' or "
                            f"'tip'")
            continue
        if node is None:
            problems.append(f"{who}: give node = a label 1..{len(beam.nodes)}, 'root' or "
                            f"'tip'")
            continue
        try:
            target = beam.node_body(node)
        except ValueError as exc:
            problems.append(f"{who}: {exc}")
            continue
        aliases[f"{target}.{name}"] = f"{body}.{name}"
        out.append((target, name, position, orientation, frame, None, None, None))
    return out, aliases


def rename_markers(markers: dict, aliases: dict, problems: list) -> dict:
    """``markers`` with the beam markers under the names the user gave."""
    out = {}
    for key, marker in markers.items():
        new = aliases.get(key, key)
        if new in out:
            problems.append(f"duplicate marker {new!r}")
        out[new] = marker
    return out


#: What a distributed load's value is per unit of, by its ``weights`` on a nonlinear
#: beam: "length" [N/m], "mass" [N/kg: the density ρA times it per metre].
BEAM_LOAD_WEIGHTS = ("length", "mass", "uniform")


@dataclass(frozen=True)
class _ScaledLoad:
    """f(t, state) = scale · load(t, state): a beam's distributed load callable at one
    of its node loads."""

    load: object
    scale: float

    def __call__(self, t, state=None):
        return self.scale * np.asarray(self.load(t, state), dtype=float)


def beam_load_coefficients(length: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(node shares (n+1,) [m], arm shares (2,) [m]) of a uniform load density on a beam
    of n equal elements: node k carries the load over its share of the length, l_k (L_e
    inside, L_e/2 at the ends), less the arm share at the ends; the root carries L_e/6 of
    it at a point L_e/2 along its axis towards the tip, the tip L_e/6 at L_e/2 back.

    Each element's consistent load, the density f against its cubic Hermite centre line
    (the line of the beam's consistent inertia, docs/nonlinear_beam.md), is f L_e/2 at
    both nodes and the moments ±(L_e²/12) t × f (t the node's axis); the moments of
    neighbouring elements cancel at the inner nodes, and at the ends the arm carries
    them: (L_e/6) · (L_e/2) = L_e²/12."""
    le = length / n
    share = np.full(n + 1, le)
    share[[0, -1]] = 0.5 * le
    share[[0, -1]] -= le / 6.0
    return share, np.array([le / 6.0, le / 6.0])


def beam_distributed_loads(declared, beams: dict, forces: list, problems: list
                           ) -> tuple[list, list, list]:
    """Split the builder's distributed-load declarations (name, body, load, weights,
    frame) into those on flexible bodies (returned first) and those on nonlinear beams,
    which become marker declarations on the beams' nodes and point loads
    (:func:`beam_load_coefficients`; named ``NAME/k`` for node k and ``NAME/root-arm``,
    ``NAME/tip-arm``); ``frame="body"`` takes the load along each node's section axes (a
    follower load)."""
    from .forces import PointLoad

    rest, markers, loads = [], [], []
    elements = {f.name: f for f in forces if isinstance(f, BeamElements)}
    for name, body, load, weights, frame in declared:
        beam = beams.get(body)
        if beam is None:
            rest.append((name, body, load, weights, frame))
            continue
        what = f"distributed load {name!r} on nonlinear beam {body!r}"
        count = len(beam.nodes)
        if frame not in ("global", "body"):
            problems.append(f"{what}: frame must be 'global' or 'body', got {frame!r}")
            continue
        if not callable(load):
            value = np.asarray(load, dtype=float) if np.size(load) == 3 else None
            if value is None or not np.all(np.isfinite(value)):
                problems.append(f"{what}: value must be 3 finite numbers or f(t, state), "
                                f"got {load!r}")
                continue
            load = value
        if isinstance(weights, str) and weights in ("length", "mass"):
            share, arms = beam_load_coefficients(beam.length, count - 1)
            if weights == "mass":
                share, arms = (share * elements[body].mass_per_length,
                               arms * elements[body].mass_per_length)
        elif isinstance(weights, str) and weights == "uniform":
            share, arms = np.ones(count), np.zeros(2)
        elif isinstance(weights, str):
            problems.append(f"{what}: weights must be one of {list(BEAM_LOAD_WEIGHTS)} or "
                            f"{count} numbers (one per node), got {weights!r}")
            continue
        else:
            share = np.asarray(weights, dtype=float).ravel()
            if share.shape != (count,) or not np.all(np.isfinite(share)):
                problems.append(f"{what}: weights must have {count} finite entries (one "
                                f"per node), got {np.shape(weights)}")
                continue
            arms = np.zeros(2)
        axes = "marker" if frame == "body" else "global"
        half = 0.5 * beam.length / (count - 1)
        points = [(f"{name}/{k + 1}", k + 1, 0.0, share[k]) for k in range(count)]
        points += [(f"{name}/root-arm", 1, half, arms[0]),
                   (f"{name}/tip-arm", count, -half, arms[1])]
        for load_name, label, offset, scale in points:
            if scale == 0.0:
                continue
            marker = f"@{load_name}"
            markers.append((body, marker, (offset, 0.0, 0.0), None, "body", label, None,
                            None))
            value = _ScaledLoad(load, float(scale)) if callable(load) else scale * load
            loads.append(PointLoad(load_name, f"{body}.{marker}", value, "force", axes))
    return rest, markers, loads
