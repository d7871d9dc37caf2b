"""Markers anywhere on a flexible body (flexmbs.model.marker_modes.point_modes;
docs/flexible_bodies.md): a point carried by its nearest node (with that node's
rotation), by the least-squares motion of the nearest nodes on a mesh without nodal
rotations, or rigidly by the frame. Checked against modal fields that are themselves
rigid motions (exactly reproduced at any point), the node marker at a node, and a
beam's rigid extension beyond its tip."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_modal_kwargs
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.errors import ModelError
from flexmbs.modal import ModalData
from flexmbs.model import ModelBuilder
from flexmbs.model.marker_modes import node_modes, point_modes


def rigid_field_data(omegas, velocities, with_psi: bool):
    """The fields ``point_modes`` reads (nodes, phi, psi, counts) of modes that are the
    rigid motions v_j + ω_j × x of 12 scattered nodes (with the rotation ω_j at every
    node when ``with_psi``). Not a ModalData: rigid modes do not pass its checks, and
    point_modes reads nothing else."""
    from types import SimpleNamespace

    nodes = np.random.default_rng(3).normal(size=(12, 3))
    phi = np.stack([(v + np.cross(w, nodes)).ravel() for w, v in zip(omegas, velocities,
                                                                      strict=True)], 1)
    psi = (np.stack([np.tile(w, len(nodes)) for w in omegas], 1) if with_psi else None)
    return SimpleNamespace(nodes=nodes, phi=phi, psi=psi, n_nodes=len(nodes),
                           n_modes=len(omegas))


vectors = st.lists(st.floats(-1, 1), min_size=3, max_size=3)


@settings(max_examples=30, deadline=None)
@given(w=st.lists(vectors, min_size=2, max_size=2), v=st.lists(vectors, min_size=2,
                                                              max_size=2),
       point=vectors, with_psi=st.booleans())
def test_a_rigid_modal_field_is_reproduced_at_any_point(w, v, point, with_psi):
    omegas, velocities = np.array(w), np.array(v)
    data = rigid_field_data(omegas, velocities, with_psi)
    modes = point_modes(data, point, "nearest")
    expected = np.stack([vj + np.cross(wj, point) for wj, vj in zip(omegas, velocities,
                                                                    strict=True)], 1)
    np.testing.assert_allclose(modes.phi, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(modes.psi, omegas.T, rtol=0, atol=1e-10)


def test_a_point_at_a_node_of_a_beam_is_that_node_and_beyond_the_tip_a_rigid_extension():
    from flexmbs.modal import clamped_modes
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam

    fe = straight_beam(1.0, 10, BeamSection.rectangle(0.02, 0.01), Material.steel())
    data = clamped_modes(fe, "root", 4)
    tip = node_modes(data, 10)
    at_tip = point_modes(data, data.nodes[10], "nearest")
    np.testing.assert_array_equal(at_tip.phi, tip.phi)
    np.testing.assert_array_equal(at_tip.psi, tip.psi)
    beyond = point_modes(data, data.nodes[10] + [0.1, 0.0, 0.0], "nearest")
    # u_y(x + d) = u_y(x) + θ_z d, u_z(x + d) = u_z(x) − θ_y d
    np.testing.assert_allclose(beyond.phi[1], tip.phi[1] + 0.1 * tip.psi[2], rtol=1e-14)
    np.testing.assert_allclose(beyond.phi[2], tip.phi[2] - 0.1 * tip.psi[1], rtol=1e-14)
    frame = point_modes(data, [0.5, 0.0, 0.0], "frame")
    assert not frame.phi.any() and not frame.psi.any()


def test_point_markers_in_a_model(tmp_path):
    """The frame origin (no position) is on the frame, a point is carried by its
    nearest node; attach on a node marker, or an unknown rule, is refused by name."""
    data = ModalData(**make_modal_kwargs())
    b = ModelBuilder()
    b.add_flexible_body("f", data)
    b.add_marker("f", "origin")
    b.add_marker("f", "near", position=[0.5, 0.0, 0.0])
    b.add_marker("f", "rigid", position=[0.5, 0.0, 0.0], attach="frame")
    model = b.finalize()
    modes = model.bodies["f"].marker_modes
    assert not modes["origin"].phi.any() and not modes["rigid"].phi.any()
    assert modes["near"].phi.any()
    bad = ModelBuilder()
    bad.add_flexible_body("f", data)
    bad.add_marker("f", "a", node=2, attach="frame")
    bad.add_marker("f", "b", position=[0.2, 0.0, 0.0], attach="glued")
    with pytest.raises(ModelError) as info:
        bad.finalize()
    text = str(info.value)
    assert "attach applies to a marker at a position" in text
    assert "attach must be 'frame' or 'nearest', got 'glued'" in text
