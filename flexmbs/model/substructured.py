"""Substructured parts: a flexible part as k flexible bodies joined at cut nodes
(docs/flexible_bodies.md, "Substructured parts").

:func:`add_substructured_part` adds the reduced parts of a
:class:`~flexmbs.modal.substructures.SplitModel` to a :class:`ModelBuilder` as bodies
``name_1 … name_k`` (root part first), all placed where the single body would be (the
parent's body frame at ``position``/``orientation``), and joins every cut by a fixed
joint ``name_cut<label>`` between markers ``name_<i>.n<label>`` and
``name_<j>.n<label>`` on the cut node of the inner and outer part (a solid's cut
surface: joint ``name_cut<j>`` between markers ``cut<j>`` on the surface's node set).
Each part has its own floating frame, so the chain follows rotations far beyond the
small-deflection range of one linear FFRF body; within a part the deflection is linear.

:func:`substructured_beam` does it all for a built-in straight beam: mesh, split into k
parts of equal length, reduce, add, join. The returned :class:`SubstructuredPart` puts
markers on the part that holds a node: ``part.add_marker(builder, "tip",
node_set="tip")`` → ``"beam_4.tip"``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError, ValidationError


@dataclass(frozen=True, eq=False)
class SubstructuredPart:
    """The bodies of a substructured part (root part first) and its split."""

    name: str
    bodies: tuple[str, ...]
    split: object  # flexmbs.modal.substructures.SplitModel
    data: tuple  # ModalData per body

    def body_of(self, node=None, node_set=None) -> str:
        """The body holding node label ``node``, or all nodes of ``node_set`` (a set
        name of the parent FE model or a list of labels); ModelError when the set spans
        several parts (give a set inside one part)."""
        parent = self.split.parent
        if (node is None) == (node_set is None):
            raise ModelError(f"part {self.name!r}: give exactly one of node= or node_set=")
        try:
            if node is not None:
                labels = [int(node)]
            else:
                labels = parent.node_ids[parent.resolve_nodes(
                    node_set, f"part {self.name!r}: node_set")].tolist()
            owners = {self.split.part_of(label) for label in labels}
        except (ValidationError, TypeError, ValueError) as exc:
            raise ModelError(f"part {self.name!r}: {exc}") from None
        if len(owners) != 1:
            raise ModelError(f"part {self.name!r}: node set {node_set!r} spans the "
                             f"substructures {sorted(j + 1 for j in owners)}; a marker's "
                             f"node set must lie inside one of them")
        return self.bodies[owners.pop()]

    def add_marker(self, builder, name: str, *, node=None, node_set=None,
                   orientation=None) -> str:
        """Add marker ``name`` on the body that holds ``node`` (a parent label) or
        ``node_set``; returns ``"body.name"``."""
        body = self.body_of(node, node_set)
        return builder.add_marker(body, name, orientation=orientation, node=node,
                                  node_set=node_set)


def add_substructured_part(builder, name: str, split, data, *, position=(0, 0, 0),
                           orientation=None, velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                           coupling: str = "two-way") -> SubstructuredPart:
    """Add the parts of ``split`` with their ModalData ``data`` (one each, root part
    first, e.g. from :func:`~flexmbs.modal.substructures.reduce_parts`) as bodies
    ``name_1 … name_k`` joined by fixed joints at the cuts.

    ``position`` [m], ``orientation`` (as for ``add_flexible_body``), ``velocity``
    [m/s] and ``angular_velocity`` [rad/s, global] place and move the parent's body
    frame; every part's frame starts there (the parts' node coordinates are the
    parent's), so a rigid initial motion is the same for all.
    """
    data = tuple(data)
    if len(data) != split.k:
        raise ModelError(f"part {name!r}: {len(data)} ModalData for {split.k} substructures")
    bodies = tuple(f"{name}_{j + 1}" for j in range(split.k))
    for body, part_data in zip(bodies, data, strict=True):
        builder.add_flexible_body(body, part_data, position=position,
                                  orientation=orientation, velocity=velocity,
                                  angular_velocity=angular_velocity, coupling=coupling)
    for cut in split.cuts:
        if cut.joint == "nodes":  # a flexible cut surface: each node tied to its twin
            for label in cut.nodes:
                inner = builder.add_marker(bodies[cut.inner], f"n{label}", node=label)
                outer = builder.add_marker(bodies[cut.outer], f"n{label}", node=label)
                builder.add_joint(f"{name}_{cut.name}_n{label}", "spherical", inner, outer)
            continue
        if cut.name:  # a solid's cut surface: markers on its node set in both parts
            inner = builder.add_marker(bodies[cut.inner], cut.name, node_set=cut.name)
            outer = builder.add_marker(bodies[cut.outer], cut.name, node_set=cut.name)
            builder.add_joint(f"{name}_{cut.name}", "fixed", inner, outer)
            continue
        marker = f"n{cut.node}"
        inner = builder.add_marker(bodies[cut.inner], marker, node=cut.node)
        outer = builder.add_marker(bodies[cut.outer], marker, node=cut.node)
        builder.add_joint(f"{name}_cut{cut.node}", "fixed", inner, outer)
    return SubstructuredPart(name, bodies, split, data)


def substructured_beam(builder, name: str, length: float, elements: int, section,
                       material, k: int, modes_per_part: int = 4, *, position=(0, 0, 0),
                       orientation=None, axis=(1.0, 0.0, 0.0), up=(0.0, 0.0, 1.0),
                       theory: str = "euler-bernoulli", rotary_inertia: bool = False,
                       point_masses=(), velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                       coupling: str = "two-way", markers: bool = True) -> SubstructuredPart:
    """A straight beam (:func:`~flexmbs.modal.fe.beam.straight_beam`: ``length`` [m],
    ``elements``, ``section``, ``material``, ``axis``/``up`` in the body frame, root at
    the body-frame origin) as ``k`` substructures of equal length, each reduced by
    Craig–Bampton (frame attached at its root end; constraint modes at its far cut and
    at the beam's tip; ``modes_per_part`` fixed-interface modes), joined by fixed joints.

    With ``markers`` the root and tip get markers ``name_1.root`` and ``name_k.tip``.
    Node labels 1 … elements + 1 and the sets ``root``/``tip`` stay usable through
    :meth:`SubstructuredPart.add_marker`.
    """
    from ..modal.fe.beam import straight_beam
    from ..modal.substructures import cuts_along, reduce_parts, split_line_model

    fe = straight_beam(length, elements, section, material, axis=axis, up=up,
                       theory=theory, rotary_inertia=rotary_inertia,
                       point_masses=point_masses)
    split = split_line_model(fe, cuts_along(fe, k))
    part = add_substructured_part(builder, name, split, reduce_parts(split, modes_per_part),
                                  position=position, orientation=orientation,
                                  velocity=velocity, angular_velocity=angular_velocity,
                                  coupling=coupling)
    if markers:
        part.add_marker(builder, "root", node_set="root")
        part.add_marker(builder, "tip", node_set="tip")
    return part

