"""Geometric stiffening of substructured parts from the whole part's stresses
(flexmbs.modal.part_stiffening, docs/theory_stiffening.md "Substructured parts"), and
the assembly that places such parts without deforming them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flexmbs as fm
from flexmbs.assembly import System
from flexmbs.integrators.simulate import simulate
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.fe.solid import box_mesh
from flexmbs.modal.part_stiffening import with_parts_stiffening
from flexmbs.modal.reduction import clamped_modes
from flexmbs.modal.solid_substructures import (
    reduce_solid_parts,
    split_solid_model,
    surfaces_along,
)
from flexmbs.modal.stiffening import (
    _attached_solver,
    geometric_matrix,
    unit_displacement,
    with_stiffening,
)
from flexmbs.modal.substructures import cuts_along, reduce_parts, split_line_model
from flexmbs.model.drives import Polynomial
from flexmbs.model.joints import marker_state
from flexmbs.model.substructured import add_substructured_part

E, NU, RHO = 2.1e11, 0.3, 7850.0


def _solid_split(k, cuts="rigid", nx=8):
    fe = box_mesh(1.0, 0.04, 0.02, nx, 2, 2, E=E, nu=NU, rho=RHO)
    split = split_solid_model(fe, surfaces_along(fe, k, root="x0", tip="x1"), root="x0",
                              ends=("x1",), cuts=cuts)
    return fe, split


def _line_split(k):
    fe = straight_beam(1.0, 12, BeamSection.rectangle(0.04, 0.02), Material(E=E, nu=NU,
                                                                            rho=RHO))
    return fe, split_line_model(fe, cuts_along(fe, k))


def _restricted(parent, part_fe, vector):
    index = {int(label): i for i, label in enumerate(parent.node_ids)}
    rows = np.array([index[int(label)] for label in part_fe.node_ids])
    return vector[parent.node_dofs(rows)]


@settings(max_examples=10, deadline=None)
@given(case=st.sampled_from(["ww_zz", "ww_yy", "a_x"]),
       seed=st.integers(0, 2**31 - 1), solid=st.booleans(), k=st.integers(2, 4))
def test_the_parts_geometric_stiffness_adds_up_to_the_parent(case, seed, solid, k):
    """For the parent's unit-case displacement u_c, the parts' geometric stiffness of
    their share of u_c adds up to the parent's: Σ_j v_jᵀ K_G^(j) v_j = vᵀ K_G v for any
    v (a cut node's DOFs shared), solid and line models, for the cases that stress
    a straight part (along it): the element split that parts_stiffening takes its parts'
    shares by (its matrices: the tests below)."""
    parent, split = _solid_split(k) if solid else _line_split(k)
    root_set = "x0" if solid else "root"
    u = unit_displacement(parent, _attached_solver(parent, parent.node_sets[root_set]), case)
    v = np.random.default_rng(seed).standard_normal(parent.n_dof)
    whole = v @ (geometric_matrix(parent, u) @ v)
    parts = 0.0
    for part in split.parts:
        v_j = _restricted(parent, part.fe, v)
        parts += v_j @ (geometric_matrix(part.fe, _restricted(parent, part.fe, u)) @ v_j)
    scale = abs(v) @ (abs(geometric_matrix(parent, u)) @ abs(v))
    assert scale > 0
    assert parts == pytest.approx(whole, abs=1e-10 * scale)


OMEGA = 0.5 * 2 * np.pi * 36.732  # half the bar's first frequency at rest [rad/s]


def _spinning_system(k, stiffening, knock=True, cuts="rigid"):
    """The solid bar (1 m, 40 x 20 mm, 16 x 2 x 2 hexahedra) spun about z at
    :data:`OMEGA` from t = 0 under a step load out of plane at the tip: k parts (4
    fixed-interface modes each) or one body (6 clamped modes). (System, tip marker)."""
    fe = box_mesh(1.0, 0.04, 0.02, 16, 2, 2, E=E, nu=NU, rho=RHO)
    omega = OMEGA
    b = fm.ModelBuilder()
    b.add_marker("ground", "O")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if k == 1:
            data = clamped_modes(fe, "x0", 6)
            b.add_flexible_body("bar", with_stiffening(data, fe) if stiffening else data)
            root = b.add_marker("bar", "root", node_set="x0")
            tip = b.add_marker("bar", "tip", node_set="x1")
        else:
            split = split_solid_model(fe, surfaces_along(fe, k, root="x0", tip="x1"),
                                      root="x0", ends=("x1",), cuts=cuts)
            datas = reduce_solid_parts(split, 4)
            if stiffening == "own":
                datas = [with_stiffening(d, p.fe) for d, p in zip(datas, split.parts,
                                                                  strict=True)]
            elif stiffening:
                datas = with_parts_stiffening(split, datas)
            part = add_substructured_part(b, "bar", split, datas)
            root = part.add_marker(b, "root", node_set="x0")
            tip = part.add_marker(b, "tip", node_set="x1")
    b.add_revolute("hub", "ground.O", root)
    b.add_drive("spin", "rotation", Polynomial((0.0, omega)), marker_i="ground.O",
                marker_j=root)
    if knock:  # a step load: the flap oscillates about its deflection under it
        b.add_point_force("knock", tip, [0.0, 0.0, 5.0])
    return System(b.finalize()), tip


def _spinning(k, stiffening, cuts="rigid"):
    """The flap frequency [Hz] of :func:`_spinning_system` from its time run."""
    system, tip = _spinning_system(k, stiffening, cuts=cuts)
    result = simulate(system, 0.4, 2.5e-4, "generalized-alpha", rho_inf=0.8)
    assert result.success, result.message
    body, marker, rows = system.marker_info(tip)
    keep = result.t > 0.05
    z = np.array([marker_state(body, marker, q[rows], jac_needed=False).r[2]
                  for q in result.q[keep]])
    z -= z.mean()
    t = result.t[keep]
    up = np.flatnonzero((z[:-1] < 0) & (z[1:] >= 0))
    rising = t[up] - z[up] * (t[up + 1] - t[up]) / (z[up + 1] - z[up])  # interpolated
    return (len(rising) - 2) / (rising[-1] - rising[1])  # [Hz]


def test_spinning_solid_parts_flap_as_the_stiffened_body():
    """Spun at half its first frequency, the one stiffened body flaps at 41.85 Hz (36.73
    at rest; its stiffening is checked against the published rotating-beam frequencies
    in tests/test_stiffening.py). Two parts stiffened by the whole bar's stresses flap
    within 1e-3 of it (measured 2e-4; at rest the rigid cut section and Craig–Bampton
    make 5e-4); stiffened by their own inertia alone they are 4 % low, and unstiffened
    lower still: the root part misses the tip part's centrifugal tension. The Campbell
    line of the same parts (steady spin, turning chart) is the time run's frequency
    within 1e-3 (measured 1e-4)."""
    body = _spinning(1, True)
    assert 41.5 < body < 42.1
    whole = _spinning(2, True)
    own = _spinning(2, "own")
    none = _spinning(2, False)
    assert whole == pytest.approx(body, rel=1e-3)
    assert own < body * 0.97 and none < own
    from flexmbs.analysis import campbell

    system, _ = _spinning_system(2, True, knock=False)
    lines = campbell(system, "spin", np.array([0.0, OMEGA]), n_modes=1).frequencies_hz
    assert lines[1, 0] == pytest.approx(whole, rel=1e-3)


def test_parts_placed_by_a_joint_start_undeformed():
    """A solid bar's parts whose frames start at the FE origin, the root face's centroid
    (0, 0.02, 0.01) m pinned at the ground origin: the assembly moves the frames, not
    the modes (ξ = 0, no elastic force), so the run starts unstressed."""
    _, split = _solid_split(2)
    datas = reduce_solid_parts(split, 4)
    b = fm.ModelBuilder()
    b.add_marker("ground", "O")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        part = add_substructured_part(b, "bar", split, datas)
    b.add_joint("clamp", "fixed", "ground.O", part.add_marker(b, "root", node_set="x0"))
    system = System(b.finalize())
    q = system.assemble()
    for body, rows in zip(system.bodies, system.slices, strict=True):
        np.testing.assert_allclose(q[rows][:3], [0.0, -0.02, -0.01], atol=1e-12)
        assert np.all(q[rows][7:] == 0.0), body.name
    assert np.abs(system.forces(q, np.zeros(system.n_q), 0.0)).max() == 0.0


def test_a_loop_that_needs_deformation_still_assembles():
    """A cantilever of beam elements clamped at both ends to ground markers 1 mm further
    apart than its length: no placement of the frame closes that, so the modes move
    too (the assembly's second pass) and the joints close."""
    fe = straight_beam(1.0, 8, BeamSection.rectangle(0.02, 0.01), Material.steel())
    data = clamped_modes(fe, "root", 4)
    b = fm.ModelBuilder()
    b.add_flexible_body("beam", data)
    b.add_marker("beam", "root", node=1)
    b.add_marker("beam", "tip", node=9)
    b.add_marker("ground", "A")
    b.add_marker("ground", "B", position=(1.0, 0.0, 0.001))
    b.add_joint("root_clamp", "fixed", "ground.A", "beam.root")
    b.add_joint("tip_pin", "spherical", "ground.B", "beam.tip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        system = System(b.finalize())
        q = system.assemble()
    assert np.abs(system.phi(q, 0.0)).max() < 1e-10
    assert np.abs(q[7:]).max() > 0  # the beam bent to reach


def test_the_outermost_beam_part_carries_only_its_own_inertia():
    """A cantilever of beam elements cut into 4 parts: the tip part carries no load but
    its own, so its matrices from the whole beam's stresses equal those of its own unit
    cases with its root-side cut clamped (a beam is statically determinate: the same
    axial forces), to 1e-10; the parts further in carry the tip parts' tension too, so
    their spin matrices are larger than their own."""
    fe = straight_beam(1.0, 16, BeamSection.rectangle(0.02, 0.01), Material.steel())
    split = split_line_model(fe, cuts_along(fe, 4))
    datas = reduce_parts(split, 2)
    whole = with_parts_stiffening(split, datas)
    own = [with_stiffening(d, p.fe) for d, p in zip(datas, split.parts, strict=True)]
    for case, matrix in own[-1].stiffening.items():
        scale = max(np.abs(matrix).max(), 1e-300)
        np.testing.assert_allclose(whole[-1].stiffening[case], matrix, rtol=0,
                                   atol=1e-10 * scale, err_msg=case)
    for inner, alone in zip(whole[:-1], own[:-1], strict=True):
        assert np.abs(inner.stiffening["ww_zz"]).max() > 2 * np.abs(
            alone.stiffening["ww_zz"]).max()


def test_a_runs_steady_spin_is_linearized_in_the_turning_chart():
    """The two stiffened parts spun up smoothly to :data:`OMEGA` (0.3 s, modal damping
    5 %) and held: the run's last state turns steadily with the drive (spin_at finds it),
    and linearized in the chart that turns with it its flap frequency is the Campbell
    line's within 1e-4 (measured 1.4e-5). In the ground's chart the outer part's frame
    coordinates are not steady, and the same state gives a flap 3 % low."""
    from dataclasses import replace

    from flexmbs.analysis import campbell, eigenmodes, linearize
    from flexmbs.analysis.steady_spin import spin_at
    from flexmbs.model.drives import SpinUp

    system, _ = _spinning_system(2, True, knock=False)
    model = system.model
    bodies = {name: replace(body, data=replace(body.data, damping_ratio=np.full(
        body.data.n_modes, 0.05))) if hasattr(body, "data") else body
        for name, body in model.bodies.items()}
    drives = tuple(replace(d, profile=SpinUp(OMEGA, 0.3)) for d in model.drives)
    system = System(replace(model, bodies=bodies, drives=drives))
    result = simulate(system, 0.45, 5e-4, "generalized-alpha", rho_inf=0.8)
    assert result.success, result.message
    state = (result.q[-1], result.qd[-1], result.qdd[-1], result.lam[-1],
             float(result.t[-1]))
    drive, axis, omega = spin_at(system, state[0], state[-1])
    assert drive == "spin" and omega == pytest.approx(OMEGA)
    np.testing.assert_allclose(axis, [0.0, 0.0, 1.0], atol=1e-12)

    def flap(**spin):
        modes = eigenmodes(linearize(system, *state, **spin))
        return next(m.frequency_hz for m in modes if not m.rigid)

    line = campbell(system, "spin", np.array([OMEGA]), n_modes=1).frequencies_hz[0, 0]
    assert flap(spin=(axis, omega)) == pytest.approx(line, rel=1e-4)
    assert flap() < 0.98 * line
