"""The bushing (flexmbs.elements.bushing, docs/multibody.md "Bushings") against
independent references: the deformation of a known relative pose; its analytic tangents
against central differences of its generalized force on rigid and flexible markers (node
and node-set); the natural frequencies √(k/m), √(k_r/I) and damping ratios of a free
rigid body on a bushing; a flexible plate on two bushings against the same supports
built from axial and torsional spring–dampers; the energy balance of a damped run; the
static offset (f0 − m g)/k of a preloaded mount (``flexmbs static``); case files
(``flexmbs run``, sensors) and their bad inputs."""

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_flexible_body import random_modal
from test_tangents import assert_tangents_match, random_state

from flexmbs.analysis.linear import eigenmodes, linearize
from flexmbs.assembly import System
from flexmbs.cases import load_case, run_case
from flexmbs.cases.case import CaseError
from flexmbs.cli.main import main
from flexmbs.elements.bushing import Bushing, reference
from flexmbs.errors import ModelError
from flexmbs.frame.rotations import axis_angle, rotation_matrix
from flexmbs.integrators import simulate
from flexmbs.model import ModelBuilder

#: Central differences with step H of a force whose third derivatives are O(1): the
#: truncation error is ~H² and the round-off ~1e-16/H, so 1e-7 of the largest entry
#: leaves a margin over both (measured: 1e-10 in K_t, 1e-8 in C_t, the round-off of a
#: force ~100 times larger than its damping part).
H = 1e-6
RTOL_FD = 1e-7


def frame(axis, angle):
    return rotation_matrix(axis_angle(np.asarray(axis, float), angle))


# ------------------------------------------------------------------ the formulation
def test_deformation_of_a_known_relative_pose():
    """Marker j turned by φ about the unit axis n (marker i's components) and moved by
    d (marker i's components): e = [d; sin φ n], exactly."""
    a_i = frame([0.3, -1.0, 0.4], 0.9)
    n = np.array([1.0, 2.0, -2.0]) / 3.0
    phi, d = 0.7, np.array([0.12, -0.05, 0.3])
    a_j = a_i @ frame(n, phi)
    r_i = np.array([0.5, 0.1, -0.2])
    vecs = reference.marker_vectors(r_i, a_i, r_i + a_i @ d, a_j)
    np.testing.assert_allclose(reference.deformation(vecs),
                               np.concatenate([d, np.sin(phi) * n]), rtol=0, atol=1e-15)


def _pair_model(kind: str, seed: int):
    """A bushing with random parameters (and preloads) between a rigid body a (centre of
    mass off its frame) and: a second rigid body (``"rigid"``), a flexible body's node
    (``"node"``) or its averaged node set (``"set"``, marker i on the flexible body), or
    two markers of one flexible body (``"same"``: node and node set)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    b.add_rigid_body("a", 1.5, [0.3, 0.2, 0.4], position=rng.normal(size=3),
                     orientation=frame(rng.normal(size=3), 1.0), com=[0.1, 0.2, -0.1])
    b.add_marker("a", "m", rng.normal(size=3), frame(rng.normal(size=3), 2.0))
    if kind == "rigid":
        b.add_rigid_body("c", 2.5, [0.3, 0.5, 0.4], position=rng.normal(size=3))
        b.add_marker("c", "n", rng.normal(size=3), frame(rng.normal(size=3), 2.0))
        pair = ("a.m", "c.n")
    else:
        data, _ = random_modal(seed)
        b.add_flexible_body("f", data, position=rng.normal(size=3),
                            orientation=frame(rng.normal(size=3), 0.7))
        b.add_marker("f", "n", orientation=frame(rng.normal(size=3), 1.3), node=3)
        b.add_marker("f", "s", orientation=frame(rng.normal(size=3), 0.4), node_set="face")
        pair = {"node": ("a.m", "f.n"), "set": ("f.s", "a.m"), "same": ("f.n", "f.s")}[kind]
    b.add_bushing("bu", *pair, stiffness=rng.uniform(1, 5, 3) * 100,
                  damping=rng.uniform(1, 5, 3), rotational_stiffness=rng.uniform(1, 5, 3) * 50,
                  rotational_damping=rng.uniform(1, 5, 3),
                  preload_force=rng.normal(size=3) * 10, preload_torque=rng.normal(size=3) * 5)
    return System(b.finalize()), rng


@pytest.mark.parametrize("kind", ["rigid", "node", "set", "same"])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_tangents_match_central_differences_of_the_force(kind, seed):
    """K_t = −∂Q/∂q and C_t = −∂Q/∂q̇ of the bushing alone, at a random state (unit Euler
    parameters, ξ, q̇ of order one, so every term — Σ s_k ∇²e_k, the damper's ∂ė/∂q —
    is active), against central differences of its Q; and −∂V/∂q = Q without dampers."""
    system, rng = _pair_model(kind, seed)
    force = system.model.forces[0]
    q, qd = random_state(system, rng)[:2]
    n = system.n_q

    def gen(qq, qqd, which=force):
        out = np.zeros(n)
        which.apply(system, qq, qqd, 0.0, out)
        return out

    eye = np.eye(n)
    k_fd = np.column_stack([-(gen(q + H * e, qd) - gen(q - H * e, qd)) / (2 * H) for e in eye])
    c_fd = np.column_stack([-(gen(q, qd + H * e) - gen(q, qd - H * e)) / (2 * H) for e in eye])
    idx, k_loc, c_loc = force.tangents(system, q, qd, 0.0)
    k, c = np.zeros((n, n)), np.zeros((n, n))
    np.add.at(k, (idx[:, None], idx[None, :]), k_loc)
    np.add.at(c, (idx[:, None], idx[None, :]), c_loc)
    np.testing.assert_allclose(k, k_fd, rtol=0, atol=RTOL_FD * np.max(np.abs(k_fd)))
    np.testing.assert_allclose(c, c_fd, rtol=0, atol=RTOL_FD * np.max(np.abs(c_fd)))
    elastic = Bushing("el", force.marker_i, force.marker_j, stiffness=force.stiffness,
                      rotational_stiffness=force.rotational_stiffness,
                      preload_force=force.preload_force, preload_torque=force.preload_torque)
    grad = np.array([(elastic.potential(system, q + H * e)
                      - elastic.potential(system, q - H * e)) / (2 * H) for e in eye])
    q_el = gen(q, qd, elastic)
    np.testing.assert_allclose(-grad, q_el, rtol=0, atol=RTOL_FD * np.max(np.abs(q_el)))


def test_whole_system_tangents_with_a_bushing():
    """The Newton tangents of the whole residual (bodies, normalization rows, bushing)
    against central differences of the residual (tests/test_tangents.py's check)."""
    system, rng = _pair_model("set", 11)
    assert_tangents_match(system, random_state(system, rng))


# ------------------------------------------------------------------ a free rigid body
def test_free_rigid_body_on_a_bushing_has_the_textbook_frequencies():
    """A rigid body (no gravity) on a bushing to the ground at its centre of mass, the
    inertia axes along marker i (turned by 0.7 rad about (1, 2, 3)): six uncoupled
    oscillators, ω = √(k/m) and √(k_r/I) per axis, damping ratios c/(2√(k m)) and
    c_r/(2√(k_r I)). Measured: 9e-16 (frequencies), 3e-14 (ratios); tolerance 1e-6."""
    m, inertia = 2.5, np.array([0.05, 0.08, 0.11])
    k, kr = np.array([1e4, 2e4, 3.5e4]), np.array([300.0, 500.0, 900.0])
    c, cr = np.array([3.0, 5.0, 7.0]), np.array([0.02, 0.05, 0.1])
    axes, pos = frame([1, 2, 3], 0.7), [0.3, -0.2, 0.5]
    b = ModelBuilder()
    b.add_rigid_body("body", m, inertia, position=pos, orientation=axes)
    b.add_marker("ground", "i", pos, axes)
    b.add_marker("body", "j")
    b.add_bushing("mount", "ground.i", "body.j", stiffness=k, damping=c,
                  rotational_stiffness=kr, rotational_damping=cr)
    system = System(b.finalize())
    modes = eigenmodes(linearize(system, system.assemble()))
    assert not any(mode.rigid for mode in modes)
    omega = np.concatenate([np.sqrt(k / m), np.sqrt(kr / inertia)])
    zeta = np.concatenate([c / (2 * np.sqrt(k * m)), cr / (2 * np.sqrt(kr * inertia))])
    order = np.argsort(omega)
    np.testing.assert_allclose([mode.frequency_hz for mode in modes],
                               omega[order] / (2 * np.pi), rtol=1e-6)
    np.testing.assert_allclose([mode.damping_ratio for mode in modes], zeta[order],
                               rtol=1e-6)


# ------------------------------------------------------------------ a flexible plate
#: Bushing parameters of the plate's two mounts (marker i's axes).
K_T, C_T = np.array([2e5, 3e5, 4e5]), np.array([40.0, 60.0, 80.0])
K_R, C_R = np.array([300.0, 500.0, 700.0]), np.array([0.05, 0.08, 0.1])
#: Distance of the axial springs' ground anchors from the mount [m]: the springs sit at
#: their free length, so their transverse stiffness (tension / length) is zero.
ANCHOR = 0.5


def _plate_data():
    from flexmbs.modal import free_free_modes
    from flexmbs.modal.fe.solid import box_mesh

    fe = box_mesh(0.4, 0.3, 0.02, 4, 3, 1, E=7e10, nu=0.3, rho=2700.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return free_free_modes(fe, 4)


def _plate(data, supports: str, velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
           rotational=True):
    """The plate (turned, free–free modes) held at its end faces x0 and x1 (node-set
    markers, axes turned against the body's) by two bushings (``"bushing"``) or by three
    axial spring–dampers along the mount's axes plus three rotational spring–dampers
    about them per mount (``"springs"``): the same stiffness and damping to linear
    order. ``rotational=False``: the bushings have no rotational stiffness or damping,
    and the springs are the six axial spring–dampers alone."""
    body_axes = frame([0.2, 1.0, -0.4], 0.6)
    b = ModelBuilder()
    b.add_flexible_body("plate", data, position=[0.1, -0.3, 0.8], orientation=body_axes,
                        velocity=velocity, angular_velocity=angular_velocity)
    mounts = {"L": ("x0", frame([1.0, 0.0, 1.0], 0.5)), "R": ("x1", frame([0.0, 1.0, 1.0], -0.8))}
    for name, (node_set, axes) in mounts.items():
        b.add_marker("plate", name, orientation=axes, node_set=node_set)
    probe = System(b.finalize())
    q0 = probe.q0
    for name, (node_set, _) in mounts.items():
        body, marker, sl = probe.marker_info(f"plate.{name}")
        r, a_glob = body.marker_frame(q0[sl], marker, jac=False)[:2]
        if supports == "bushing":
            b.add_marker("ground", name, r, a_glob)
            b.add_bushing(f"mount{name}", f"ground.{name}", f"plate.{name}", stiffness=K_T,
                          damping=C_T, rotational_stiffness=K_R * rotational,
                          rotational_damping=C_R * rotational)
            continue
        for k in range(3):
            axis = a_glob[:, k]
            b.add_marker("ground", f"{name}t{k}", r - ANCHOR * axis)
            b.add_spring_damper(f"{name}t{k}", f"ground.{name}t{k}", f"plate.{name}",
                                stiffness=K_T[k], damping=C_T[k], free_length=ANCHOR)
            if not rotational:
                continue
            # a frame whose z axis is marker i's axis k, on the ground and on the node set
            turned = np.roll(a_glob, 2 - k, axis=1)
            b.add_marker("ground", f"{name}r{k}", r, turned)
            b.add_marker("plate", f"{name}r{k}", orientation=body_axes.T @ turned,
                         node_set=node_set)
            b.add_rotational_spring_damper(f"{name}r{k}", f"ground.{name}r{k}",
                                           f"plate.{name}r{k}", stiffness=K_R[k],
                                           damping=C_R[k])
    return System(b.finalize())


@pytest.fixture(scope="module")
def plate_data():
    return _plate_data()


def test_plate_on_bushings_matches_the_same_supports_from_spring_dampers(plate_data):
    """Linear modes (frequencies and damping ratios) of the plate on two bushings and on
    the equivalent spring–damper supports: equal to linear order, so to round-off
    (measured 4e-15 relative in the frequencies, 2e-13 in the damping ratios; tolerance
    1e-9). And a short transient of small motion
    (5 mm/s, 0.05 rad/s): the two differ only by the supports' second-order terms
    (measured 9e-5 of the motion; tolerance 1e-3)."""
    modes = {s: eigenmodes(linearize(system := _plate(plate_data, s), system.assemble()))
             for s in ("bushing", "springs")}
    assert len(modes["bushing"]) == 6 + plate_data.n_modes
    assert not any(mode.rigid for mode in modes["bushing"])
    for what in ("frequency_hz", "damping_ratio"):
        np.testing.assert_allclose([getattr(m, what) for m in modes["bushing"]],
                                   [getattr(m, what) for m in modes["springs"]], rtol=1e-9)
    runs = {s: simulate(_plate(plate_data, s, velocity=[0.005, -0.003, 0.004],
                               angular_velocity=[0.05, 0.03, -0.04]), 0.02, 5e-4,
                        engine="python") for s in ("bushing", "springs")}
    assert all(run.success for run in runs.values())
    motion = runs["bushing"].q - runs["bushing"].q[0]
    diff = runs["bushing"].q - runs["springs"].q
    assert np.max(np.abs(motion)) > 1e-5  # it moved
    assert np.max(np.abs(diff)) < 1e-3 * np.max(np.abs(motion))


def test_plate_on_translational_bushings_matches_six_axial_spring_dampers(plate_data):
    """Two bushings with translational stiffness and damping only, against the six axial
    spring–dampers (three per mount, along the mount's axes, at their free length)
    that give the same supports to linear order. The plate keeps one free motion, the
    rotation about the line through the two mounts: both have exactly one rigid mode,
    and the other modes' frequencies and damping ratios agree to round-off (tolerance
    1e-9 relative; the ratios of the plate's undamped modes, about 1e-16, to 1e-12)."""
    modes = {s: eigenmodes(linearize(system := _plate(plate_data, s, rotational=False),
                                     system.assemble()))
             for s in ("bushing", "springs")}
    for s in modes:
        assert len(modes[s]) == 6 + plate_data.n_modes
        assert sum(mode.rigid for mode in modes[s]) == 1
    elastic = {s: [m for m in modes[s] if not m.rigid] for s in modes}
    # the plate's own modes are undamped: their ratios are round-off about zero (1e-16)
    for what, atol in (("frequency_hz", 0.0), ("damping_ratio", 1e-12)):
        np.testing.assert_allclose([getattr(m, what) for m in elastic["bushing"]],
                                   [getattr(m, what) for m in elastic["springs"]], rtol=1e-9,
                                   atol=atol)
    assert min(m.frequency_hz for m in elastic["bushing"]) > 1.0  # supported, not loose


def test_add_force_takes_a_registered_declaration():
    """``ModelBuilder.add_force`` adds a registered kind's declaration (the bushing
    here) as its dedicated method does; anything else (another force, whose own add_…
    method checks it, or an imitation) is refused by name."""
    models = []
    for how in ("add_bushing", "add_force"):
        b = ModelBuilder()
        b.add_rigid_body("body", 1.0, [0.1, 0.1, 0.1])
        b.add_marker("ground", "i")
        b.add_marker("body", "j")
        if how == "add_bushing":
            b.add_bushing("mount", "ground.i", "body.j", stiffness=[1.0, 2.0, 3.0])
        else:
            assert b.add_force(Bushing("mount", "ground.i", "body.j",
                                       stiffness=[1.0, 2.0, 3.0])) == "mount"
        models.append(b.finalize())
    first, second = (model.forces[0] for model in models)
    assert type(first) is type(second) is Bushing
    for key in ("marker_i", "marker_j", "stiffness6", "damping6", "preload6"):
        np.testing.assert_array_equal(getattr(first, key), getattr(second, key))
    from types import SimpleNamespace

    from flexmbs.model.forces import SpringDamperActuator

    spring = SpringDamperActuator("s", "ground.i", "body.j", 1.0, 0.0, 0.0, None)
    imitation = SimpleNamespace(name="x", element_kind="bushing")
    for other in ({"name": "x"}, spring, imitation):
        with pytest.raises(ModelError, match=r"add_force takes a declaration of Bushing; "
                                             r"got (dict|SpringDamperActuator|SimpleNamespace) "):
            ModelBuilder().add_force(other)


def test_node_set_bushings_run_the_same_on_the_compiled_engine(plate_data):
    """The plate on two bushings over averaged node sets (interface markers), damped and
    moving: the compiled engine's run equals the NumPy reference path's to round-off
    (tolerance 1e-10 of the motion), its sensors included."""
    runs = {}
    for engine in ("compiled", "python"):
        system = _plate(plate_data, "bushing", velocity=[0.05, -0.03, 0.04],
                        angular_velocity=[0.5, 0.3, -0.4])
        runs[engine] = simulate(system, 0.02, 5e-4, "newmark", engine=engine)
        assert runs[engine].success
    assert runs["compiled"].statistics["engine"] == "compiled"
    motion = np.max(np.abs(runs["python"].q - runs["python"].q[0]))
    assert motion > 1e-4
    np.testing.assert_allclose(runs["compiled"].q, runs["python"].q, rtol=0,
                               atol=1e-10 * motion)
    np.testing.assert_allclose(runs["compiled"].energy_balance()[0],
                               runs["python"].energy_balance()[0], rtol=1e-6, atol=1e-15)


def test_energy_balance_closes_with_damping(plate_data):
    """T + V − W_nc stays at its initial value on a damped run of the plate on two
    bushings (trapezoidal Newmark, 0.05 s, some three periods of the stiffest mount
    mode), the dampers taking out more than half of the energy: the residual is the
    integrator's, second order in h. Measured (of the energy involved): 6.3e-3 at
    h = 0.5 ms, 1.6e-3 at 0.25 ms, ratio 3.98; tolerances 3e-3 and 3.5–4.5."""
    residuals = []
    for h in (5e-4, 2.5e-4):
        system = _plate(plate_data, "bushing", velocity=[0.05, -0.03, 0.04],
                        angular_velocity=[0.5, 0.3, -0.4])
        run = simulate(system, 0.05, h, "newmark", engine="python")
        assert run.success
        residual, scale = run.energy_balance()
        assert -run.nonconservative_work[-1] > 0.5 * scale  # the dampers worked
        residuals.append(residual / scale)
    assert residuals[1] < 3e-3
    assert 3.5 < residuals[0] / residuals[1] < 4.5


# ------------------------------------------------------------------ case files
CASE = """
title = "mass on a preloaded bushing"
[model]
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "body"
mass = 2.0
inertia = [0.02, 0.03, 0.04]
position = [0.0, 0.0, 0.5]
velocity = [0.1, -0.05, 0.0]

[[markers]]
body = "ground"
name = "i"
position = [0.0, 0.0, 0.5]

[[markers]]
body = "body"
name = "j"

[[forces]]
name = "mount"
type = "bushing"
i = "ground.i"
j = "body.j"
stiffness = [2e4, 3e4, 1e4]
damping = [20.0, 30.0, 10.0]
rotational_stiffness = [200.0, 300.0, 400.0]
rotational_damping = [0.2, 0.3, 0.4]
preload_force = [0.0, 0.0, 5.0]
preload_torque = [0.0, 0.0, 0.0]
{extra}

[[sensors]]
name = "load"
type = "force"
quantity = "force"
force = "mount"

[[sensors]]
name = "moment"
type = "force"
quantity = "torque"
force = "mount"

[[sensors]]
name = "where"
type = "marker"
quantity = "position"
marker = "body.j"

[[sensors]]
name = "speed"
type = "marker"
quantity = "velocity"
marker = "body.j"

[solver]
h = 1e-3
t_end = 0.05

[output]
file = "mount.res.h5"
"""


def _case(tmp_path):
    text = CASE.replace("{extra}", "")
    path = tmp_path / "mount.toml"
    path.write_text(text)
    return path


def test_flexmbs_linear_gives_the_free_body_on_a_bushing_its_textbook_frequencies(
        tmp_path, capsys):
    """The issue's case, through the command line: a free 2 kg body (no gravity) on the
    bushing at its centre of mass, its inertia axes along marker i: `flexmbs linear`
    lists √(k_i/m) and √(kr_i/I_i) (1e-6; about the equilibrium, where the preload is
    balanced by the offset it causes, so it does not change them)."""
    path = tmp_path / "free.toml"
    path.write_text(CASE.replace("{extra}", "").replace(
        "gravity = [0.0, 0.0, -9.81]", "gravity = [0.0, 0.0, 0.0]"))
    assert main(["linear", "--json", str(path)]) == 0
    found = sorted(m["frequency_hz"] for m in json.loads(capsys.readouterr().out)["modes"])
    omega = np.concatenate([np.sqrt(np.array([2e4, 3e4, 1e4]) / 2.0),
                            np.sqrt(np.array([200.0, 300.0, 400.0]) /
                                    np.array([0.02, 0.03, 0.04]))])
    np.testing.assert_allclose(found, np.sort(omega) / (2 * np.pi), rtol=1e-6)


def test_preloaded_bushing_holds_the_body_at_its_static_offset(tmp_path, capsys):
    """``flexmbs static``: the preload f0 = 5 N along z carries part of the weight, so the
    body sinks by (f0 − m g)/k_z = −1.462 mm and nothing else moves (measured 2e-17 m;
    tolerance 1e-8 relative)."""
    assert main(["static", "--json", str(_case(tmp_path))]) == 0
    coords = json.loads(capsys.readouterr().out)["coordinates"]
    np.testing.assert_allclose(coords["body.z"] - 0.5, (5.0 - 2.0 * 9.81) / 1e4,
                               rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose([coords[f"body.{c}"] for c in ("x", "y", "e1", "e2", "e3")],
                               0.0, rtol=0, atol=1e-14)


def test_case_file_runs_and_its_sensors_read_the_bushing_load(tmp_path, capsys):
    """``flexmbs run`` of the case on both engines (the compiled engine evaluates the
    bushing), then the force sensor against −(k d + c ḋ − f0) from the marker
    sensors (the load passes through the centre of mass, so the body's axes stay those
    of marker i and the torque is zero), to 1e-9 N."""
    path = _case(tmp_path)
    assert main(["run", "--json", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["success"] and (tmp_path / "mount.res.h5").exists()
    _, res = run_case(load_case(path), engine="python")
    _, compiled = run_case(load_case(path), engine="compiled")
    assert compiled.statistics["engine"] == "compiled"
    scale = np.abs(res.q).max()
    np.testing.assert_allclose(compiled.q, res.q, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(compiled.sensor("load"), res.sensor("load"), rtol=0,
                               atol=1e-6)
    assert tuple(res.sensors["load"]["components"]) == ("x", "y", "z")
    assert res.sensors["load"]["units"] == "N" and res.sensors["moment"]["units"] == "N m"
    d = res.sensor("where") - np.array([0.0, 0.0, 0.5])
    expected = -(np.array([2e4, 3e4, 1e4]) * d + np.array([20.0, 30.0, 10.0])
                 * res.sensor("speed") - np.array([0.0, 0.0, 5.0]))
    np.testing.assert_allclose(res.sensor("load"), expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.sensor("moment"), 0.0, rtol=0, atol=1e-9)
    assert np.ptp(res.sensor("load")[:, 2]) > 1.0  # the body bounced


@pytest.mark.parametrize(("replace", "message"), [
    ({"stiffness = [2e4, 3e4, 1e4]": "stiffness = [2e4, 3e4]"},
     "key 'stiffness' must be 3 numbers [N/m] (x, y, z of marker i's axes), got shape (2,): "
     "[20000.0, 30000.0]"),
    ({"damping = [20.0, 30.0, 10.0]": "damping = [nan, 30.0, 10.0]"},
     "key 'damping' must be finite, got [nan, 30.0, 10.0]"),
    ({"rotational_stiffness = [200.0": "rotational_stiffness = [-200.0"},
     "key 'rotational_stiffness' must be non-negative, got [-200.0, 300.0, 400.0]"),
    ({"preload_torque = [0.0, 0.0, 0.0]": 'preload_torque = "up"'},
     "key 'preload_torque' must be 3 numbers [N m], got 'up'"),
    ({'i = "ground.i"': "i = 3"}, "key 'i' must be a non-empty string, got 3"),
    ({'type = "bushing"': 'type = ["bushing"]'},
     "key 'type' must be spring-damper, rotational-spring-damper, bushing, joint-servo, "
     "joint-torque, joint-force, point-force, point-torque or distributed; got ['bushing']"),
    ({"stiffness = [2e4, 3e4, 1e4]": 'stiffness = ["2e4", 3e4, 1e4]'},
     "key 'stiffness' must be 3 numbers [N/m], got ['2e4', 30000.0, 10000.0]"),
    ({"damping = [20.0, 30.0, 10.0]": "damping = [true, 30.0, 10.0]"},
     "key 'damping' must be 3 numbers [N s/m], got [True, 30.0, 10.0]"),
    ({"stiffness = [2e4, 3e4, 1e4]": "stiffness = [[2e4, 3e4, 1e4]]"},
     "key 'stiffness' must be 3 numbers [N/m] (x, y, z of marker i's axes), got shape "
     "(1, 3)"),
    ({"preload_torque = [0.0, 0.0, 0.0]": "free_length = 0.1"},
     "key 'free_length' does not apply to type 'bushing'"),
    ({'quantity = "torque"': 'quantity = "value"'},
     "force 'mount' (Bushing) records force, torque, not 'value'"),
])
def test_bad_case_inputs_name_the_force_the_key_and_the_value(tmp_path, replace, message):
    text = CASE.replace("{extra}", "")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(CaseError) as info:
        load_case(path)
    assert message in str(info.value)
    assert "'mount'" in str(info.value)


def test_missing_keys_default_to_zero_and_spring_keys_are_refused(tmp_path):
    text = CASE.replace("{extra}", "")
    for key in ("damping", "rotational_damping", "preload_force", "preload_torque"):
        text = "\n".join(line for line in text.splitlines() if not line.startswith(key))
    path = tmp_path / "short.toml"
    path.write_text(text)
    bushing = load_case(path).model.forces[0]
    assert isinstance(bushing, Bushing)
    assert not np.any(bushing.damping6) and not np.any(bushing.preload6)
    np.testing.assert_array_equal(bushing.stiffness, [2e4, 3e4, 1e4])
    path.write_text(CASE.replace("{extra}", "").replace('type = "bushing"',
                                                        'type = "spring-damper"'))
    with pytest.raises(CaseError, match="key 'preload_force' belongs to type 'bushing'"):
        load_case(path)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("stiffness", [1.0, 2.0], "stiffness must be 3 numbers [N/m]"),
    ("damping", [1.0, np.inf, 0.0], "damping must be finite"),
    ("rotational_damping", -1.0, "rotational_damping must be non-negative, got -1.0"),
    ("preload_force", "up", "preload_force must be 3 numbers [N]"),
])
def test_builder_errors_name_the_bushing_the_field_and_the_value(field, value, message):
    b = ModelBuilder()
    b.add_rigid_body("body", 1.0, [0.1, 0.1, 0.1])
    b.add_marker("ground", "i")
    b.add_marker("body", "j")
    b.add_bushing("mount", "ground.i", "body.j", **{field: value})
    with pytest.raises(ModelError) as info:
        b.finalize()
    assert f"bushing 'mount': {message}" in str(info.value)
    with pytest.raises(ModelError, match="bushing 'x': marker_j must be a marker name"):
        Bushing("x", "ground.i", "")


def test_a_field_error_keeps_its_parts_through_pickling():
    """A sweep's worker sends errors back pickled: a FieldError keeps its message and
    its element, field and detail."""
    import pickle

    from flexmbs.errors import FieldError

    with pytest.raises(FieldError) as info:
        Bushing("mount", "ground.i", "body.j", damping=[1.0, -2.0, 0.0])
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.element, copy.field, copy.detail) == ("bushing 'mount'", "damping",
                                                       "must be non-negative, got "
                                                       "[1.0, -2.0, 0.0]")
    assert str(copy) == str(info.value)
