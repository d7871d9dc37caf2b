"""Multibody core: DOF and redundancy checks, assembly, kinematic analysis, forces,
profiles and bad input (docs/multibody.md, issue 3)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.assembly import System, kinematic_analysis
from flexmbs.errors import ConvergenceError, ModelError, ValidationError
from flexmbs.frame.rotations import g_bar
from flexmbs.model import ModelBuilder, Polynomial, SpinUp, Table

INERTIA = [1e-3, 1e-2, 1e-2]


def link(b, name, start, end, mass=1.0):
    """A slender link between two global points, with markers 'A' (start), 'B' (end)."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    b.add_rigid_body(name, mass, INERTIA, position=(start + end) / 2)
    b.add_marker(name, "A", start, frame="global")
    b.add_marker(name, "B", end, frame="global")


# ------------------------------------------------------------------------- DOF counts
def test_free_body_has_six_dof():
    b = ModelBuilder()
    b.add_rigid_body("box", 2.0, [1, 2, 2.5])
    report = System(b.finalize()).check()
    assert (report.dof, report.redundant) == (6, ())


def pendulum(n_links: int):
    b = ModelBuilder(gravity=(0, -9.81, 0))
    b.add_marker("ground", "O")
    prev = "ground.O"
    for k in range(n_links):
        link(b, f"l{k}", (k * 1.0, 0, 0), ((k + 1) * 1.0, 0, 0))
        b.add_revolute(f"r{k}", prev, f"l{k}.A")
        prev = f"l{k}.B"
    return b


@pytest.mark.parametrize(("n_links", "dof"), [(1, 1), (2, 2)])
def test_pendulums(n_links, dof):
    report = System(pendulum(n_links).finalize()).check()
    assert report.dof == dof
    assert report.redundant == ()


def four_bar():
    """Planar four-bar with four revolutes (all axes along z) modelled in 3D."""
    b = ModelBuilder()
    pts = [(0, 0, 0), (0.2, 0.3, 0), (0.7, 0.35, 0), (0.8, 0, 0)]
    b.add_marker("ground", "P0", pts[0])
    b.add_marker("ground", "P3", pts[3])
    link(b, "crank", pts[0], pts[1])
    link(b, "coupler", pts[1], pts[2])
    link(b, "rocker", pts[2], pts[3])
    b.add_revolute("A", "ground.P0", "crank.A")
    b.add_revolute("B", "crank.B", "coupler.A")
    b.add_revolute("C", "coupler.B", "rocker.A")
    b.add_revolute("D", "rocker.B", "ground.P3")
    return b


def test_four_bar_reports_redundant_equations_by_name():
    system = System(four_bar().finalize())
    report = system.check()
    assert report.dof == 1
    assert len(report.redundant) == 3  # the planar-loop redundancy of 3D revolutes
    assert all(name.split("[")[0] in {"A", "B", "C", "D"} for name in report.redundant)
    assert "redundant" in report.message and report.redundant[0] in report.message


R_CRANK, L_ROD, TH0 = 0.1, 0.3, 0.3


def slider_crank(drive: bool):
    """Haug's spatial slider–crank: revolute, spherical, universal, prismatic (DOF 1)."""
    b = ModelBuilder()
    c = np.array([np.cos(TH0), np.sin(TH0), 0.0])
    pin = R_CRANK * c
    xs = R_CRANK * np.cos(TH0) + np.sqrt(L_ROD**2 - (R_CRANK * np.sin(TH0)) ** 2)
    slider = np.array([xs, 0, 0])
    b.add_marker("ground", "O")
    b.add_marker("ground", "S", orientation=[1, 0, 0])
    link(b, "crank", (0, 0, 0), pin)
    link(b, "rod", pin, slider, mass=0.8)
    b.add_rigid_body("slider", 0.5, [1e-3, 1e-3, 1e-3], position=slider)
    b.add_marker("slider", "B", orientation=[0, 0, 1])
    b.add_marker("slider", "S", orientation=[1, 0, 0])
    b.add_marker("rod", "U", slider, orientation=np.cross(slider - pin, [0, 0, 1]),
                 frame="global")
    # x of the crank's bearing marker along the crank: the drive angle is the crank angle
    b.add_marker("crank", "O", (0, 0, 0), np.column_stack([c, np.cross([0, 0, 1], c),
                                                           [0, 0, 1]]), frame="global")
    b.add_revolute("crank_bearing", "ground.O", "crank.O")
    b.add_spherical("crank_pin", "crank.B", "rod.A")
    b.add_joint("rod_slider", "universal", "rod.U", "slider.B")
    b.add_prismatic("slide", "ground.S", "slider.S")
    if drive:
        b.add_drive("motor", "rotation", Polynomial((TH0, 2.0)), marker_i="ground.O",
                    marker_j="crank.O")
    return b


def test_slider_crank_has_one_dof_and_no_redundancy():
    report = System(slider_crank(drive=False).finalize()).check()
    assert (report.dof, report.redundant) == (1, ())


def test_slider_crank_kinematics_matches_closed_form():
    system = System(slider_crank(drive=True).finalize())
    t = np.linspace(0.0, 2.0, 41)
    res = kinematic_analysis(system, t)
    x, v, a = res.coordinate("slider.x")
    th, w = TH0 + 2.0 * t, 2.0
    s = np.sqrt(L_ROD**2 - (R_CRANK * np.sin(th)) ** 2)
    x_ref = R_CRANK * np.cos(th) + s
    dx = -R_CRANK * np.sin(th) - R_CRANK**2 * np.sin(th) * np.cos(th) / s
    ddx = (-R_CRANK * np.cos(th) - R_CRANK**2 * np.cos(2 * th) / s
           - R_CRANK**4 * np.sin(th) ** 2 * np.cos(th) ** 2 / s**3)
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(v, dx * w, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a, ddx * w**2, rtol=0, atol=1e-9)


def test_kinematic_analysis_refuses_underdriven_model():
    system = System(slider_crank(drive=False).finalize())
    with pytest.raises(ModelError, match=r"fully driven.*1 degree"):
        kinematic_analysis(system, [0.0, 0.1])


# ------------------------------------------------------------------------- assembly
def test_assembly_of_a_perturbed_guess_converges():
    system = System(slider_crank(drive=False).finalize())
    rng = np.random.default_rng(4)
    q = system.q0 + 0.02 * rng.normal(size=system.n_q)
    assert np.max(np.abs(system.phi(q))) > 1e-3
    q_ok = system.assemble(q)
    assert np.max(np.abs(system.phi(q_ok))) < 1e-12
    qd = system.project_velocity(q_ok, rng.normal(size=system.n_q))
    np.testing.assert_allclose(system.jacobian(q_ok) @ qd, system.nu(q_ok), atol=1e-12)


def test_fixed_coordinates_are_kept_during_assembly():
    b = pendulum(1)
    b._bodies.clear()
    b.__post_init__()
    b._markers.clear()
    b._joints.clear()
    b.add_marker("ground", "O")
    b.add_rigid_body("l0", 1.0, INERTIA, position=(0.5, 0.1, 0.0), fixed=("x",))
    b.add_marker("l0", "A", (-0.5, 0, 0))
    b.add_spherical("s", "ground.O", "l0.A")
    system = System(b.finalize())
    q = system.assemble()
    assert abs(q[0] - 0.5) < 1e-5  # x held (weighted), the others moved
    assert np.max(np.abs(system.phi(q))) < 1e-12


def test_impossible_assembly_names_the_joint():
    b = ModelBuilder()
    b.add_marker("ground", "O")
    b.add_marker("ground", "P", (3.0, 0, 0))
    link(b, "bar", (0, 0, 0), (1.0, 0, 0))  # 1 m bar cannot span 3 m
    b.add_spherical("left", "ground.O", "bar.A")
    b.add_spherical("right", "ground.P", "bar.B")
    system = System(b.finalize())
    with pytest.raises(ConvergenceError, match=r"still violated: (left|right) \(\|Φ\|"):
        system.assemble()


@pytest.mark.parametrize("axes", [
    [[0, 0, 1], [1, 0, 0], [0, 1, 0]],   # columns x_j = e_y, y_j = e_z, z_j = e_x: cyclic
    [[1, 0, 0], [0, -1, 0], [0, 0, -1]],  # half a turn about x
])
def test_a_fixed_joint_on_another_root_of_its_equations_is_refused(axes):
    """x_i·y_j = y_i·z_j = z_i·x_j = 0 also hold with the marker axes permuted cyclically
    or turned half a turn about one of them: a fixed joint assembled there kept the body
    turned (a tilted beam clamped to a ground marker at the global axes lay along
    another axis, silently). Here the markers start on such a root."""
    b = ModelBuilder()
    b.add_marker("ground", "O")
    b.add_rigid_body("block", 1.0, INERTIA)
    b.add_marker("block", "A", orientation=np.array(axes, dtype=float))
    b.add_joint("weld", "fixed", "ground.O", "block.A")
    system = System(b.finalize())
    with pytest.raises(ModelError, match="fixed joint 'weld' closed with its markers' "
                                         "frames not aligned"):
        system.assemble()
    b = ModelBuilder()  # aligned markers: assembled as given
    b.add_marker("ground", "O")
    b.add_rigid_body("block", 1.0, INERTIA)
    b.add_marker("block", "A")
    b.add_joint("weld", "fixed", "ground.O", "block.A")
    system = System(b.finalize())
    np.testing.assert_allclose(system.assemble(), system.q0, atol=1e-12)


# ------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("make", "pattern"), [
    (lambda b: b.add_rigid_body("x", 0.0, INERTIA), r"RigidBody\('x'\)\.mass must be positive"),
    (lambda b: b.add_rigid_body("x", -1.0, INERTIA), r"mass must be positive, got -1"),
    (lambda b: b.add_rigid_body("x", 1.0, [1, -1, 1]), r"inertia is not positive definite"),
    (lambda b: b.add_rigid_body("x", 1.0, [1, 1, 5]), r"triangle inequality"),
    (lambda b: b.add_rigid_body("x", 1.0, [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]),
     r"inertia is not symmetric"),
    (lambda b: b.add_marker("ground", "z", orientation=[0, 0, 0]), r"axis has zero length"),
    (lambda b: b.add_revolute("j", "ghost.A", "ground.O"), r"unknown body 'ghost'"),
    (lambda b: b.add_revolute("j", "ground.nope", "ground.O"), r"has the markers \[.O.\]"),
    (lambda b: (b.add_rigid_body("x", 1.0, INERTIA), b.add_rigid_body("x", 1.0, INERTIA)),
     r"duplicate body name 'x'"),
    (lambda b: (b.add_marker("ground", "Q"), b.add_revolute("j", "ground.O", "ground.Q")),
     r"connects two markers of body 'ground'"),
    (lambda b: (b.add_revolute("j", "ground.O", "ground.O"), b.add_prismatic(
        "j", "ground.O", "ground.O")), r"duplicate name 'j'"),
    (lambda b: b.add_joint("j", "hinge", "ground.O", "ground.O"), r"unknown joint type 'hinge'"),
    (lambda b: b.add_drive("d", "coordinate", 1.0, coordinate="ground.x"),
     r"coordinate 'ground.x' is not a body coordinate"),
])
def test_bad_input_is_a_clear_model_error(make, pattern):
    b = ModelBuilder()
    b.add_marker("ground", "O")
    make(b)
    with pytest.raises(ModelError, match=pattern):
        b.finalize()


def test_all_problems_are_reported_at_once():
    b = ModelBuilder()
    b.add_rigid_body("x", 0.0, INERTIA)
    b.add_revolute("j", "ghost.A", "x.B")
    with pytest.raises(ModelError, match=r"has 3 problems"):
        b.finalize()


# ------------------------------------------------------------------------- forces
def random_free_bodies(seed):
    rng = np.random.default_rng(seed)
    b = ModelBuilder(gravity=(0, 0, -9.81))
    for name in ("a", "b"):
        b.add_rigid_body(name, 1.0 + rng.random(), [0.2, 0.3, 0.4],
                         position=rng.normal(size=3), orientation=rng.normal(size=4))
        b.add_marker(name, "m", rng.normal(size=3), rng.normal(size=4))
    return b, rng


def state_on_sphere(system, rng):
    q = system.q0.copy()
    qd = rng.normal(size=system.n_q)
    for sl in system.slices:  # ṗ ⟂ p
        p = q[sl][3:7]
        qd[sl.start + 3:sl.start + 7] -= p * (p @ qd[sl][3:7])
    return q, qd


def _normalized_potential(system, qq):
    qq = qq.copy()
    for sl in system.slices:
        qq[sl.start + 3:sl.start + 7] /= np.linalg.norm(qq[sl][3:7])
    return system.energy(qq, np.zeros(system.n_q))[1]


def test_spring_and_gravity_are_minus_gradient_of_potential():
    """Q·δq = −δV for δq on ‖p‖ = 1 (δp ⟂ p), free bodies."""
    b, rng = random_free_bodies(3)
    b.add_spring_damper("spring", "a.m", "b.m", stiffness=150.0, free_length=0.4)
    system = System(b.finalize())
    q, _ = state_on_sphere(system, rng)
    _, dq = state_on_sphere(system, rng)
    h = 1e-6
    dv = (_normalized_potential(system, q + h * dq)
          - _normalized_potential(system, q - h * dq)) / (2 * h)
    np.testing.assert_allclose(system.forces(q, np.zeros(system.n_q)) @ dq, -dv, rtol=1e-7)


def test_rotational_spring_in_a_revolute_is_minus_gradient_of_potential():
    """In a hinge (z_j ∥ z_i) the torsion spring's angle is the joint angle: Q·δq = −δV
    for admissible δq (Φ_q δq = 0)."""
    b = ModelBuilder()
    b.add_marker("ground", "O", orientation=[0.3, -0.2, 1.0])
    b.add_rigid_body("arm", 1.0, INERTIA, position=(0.4, 0.2, 0.1))
    b.add_marker("arm", "O", (-0.4, -0.2, -0.1), orientation=[0.3, -0.2, 1.0])
    b.add_revolute("hinge", "ground.O", "arm.O")
    b.add_rotational_spring_damper("torsion", "ground.O", "arm.O", stiffness=7.0,
                                   angle0=0.4)
    system = System(b.finalize())
    q = system.assemble()
    jac = system.jacobian(q)
    null = np.linalg.svd(jac)[2][-1]  # the one admissible direction
    h = 1e-6
    dv = (_normalized_potential(system, q + h * null)
          - _normalized_potential(system, q - h * null)) / (2 * h)
    np.testing.assert_allclose(system.forces(q, np.zeros(system.n_q)) @ null, -dv, rtol=1e-7)
    assert abs(dv) > 1e-3


def test_damper_and_actuator_power():
    """Damper power = −c L̇²; a joint torque τ does power τ θ̇."""
    b, rng = random_free_bodies(5)
    b.add_spring_damper("damper", "a.m", "b.m", damping=3.0)
    system = System(b.finalize())
    q, qd = state_on_sphere(system, rng)
    force = system.model.forces[0]
    _, _, _, rate = force.tension(system, q, qd, 0.0)
    q_only = system.forces(q, qd) - System(random_free_bodies(5)[0].finalize()).forces(q, qd)
    np.testing.assert_allclose(q_only @ qd, -3.0 * rate**2, rtol=1e-10)

    b2, rng2 = random_free_bodies(6)
    b2.add_marker("a", "r", (0, 0, 0), [0, 1, 0])
    b2.add_marker("b", "r", (0, 0, 0), [0, 1, 0])
    b2.add_joint_actuator("motor", "a.r", "b.r", lambda t, s: 2.5)
    system2 = System(b2.finalize())
    q2, qd2 = state_on_sphere(system2, rng2)
    base = System(random_free_bodies(6)[0].finalize()).forces(q2, qd2)
    from flexmbs.model.forces import relative_rotation

    _, rate2, _ = relative_rotation(system2, "a.r", "b.r", q2, qd2)
    np.testing.assert_allclose((system2.forces(q2, qd2) - base) @ qd2, 2.5 * rate2, rtol=1e-10)


def test_point_force_and_torque_do_the_virtual_work_of_their_marker():
    b, rng = random_free_bodies(7)
    f_global = np.array([1.0, -2.0, 0.5])
    b.add_point_force("push", "b.m", f_global)
    b.add_point_torque("twist", "a.m", [0.0, 0.0, 3.0], frame="marker")
    system = System(b.finalize())
    q, qd = state_on_sphere(system, rng)
    base = System(random_free_bodies(7)[0].finalize()).forces(q, qd)
    applied = system.forces(q, qd) - base
    body_b, marker_b, sl_b = system.marker_info("b.m")
    r_dot = body_b.marker_frame(q[sl_b], marker_b)[2][0] @ qd[sl_b]
    body_a, marker_a, sl_a = system.marker_info("a.m")
    torque = body_a.marker_frame(q[sl_a], marker_a)[1][:, 2] * 3.0
    omega = body_a.angular_jac(q[sl_a], marker_a) @ qd[sl_a]
    np.testing.assert_allclose(applied @ qd, f_global @ r_dot + torque @ omega, rtol=1e-10)


def test_rigid_body_mass_matrix_gives_kinetic_energy():
    b, rng = random_free_bodies(8)
    system = System(b.finalize())
    q, qd = state_on_sphere(system, rng)
    kin, _ = system.energy(q, qd)
    np.testing.assert_allclose(0.5 * qd @ system.mass_matrix(q) @ qd, kin, rtol=1e-12)
    for body, sl in zip(system.bodies, system.slices, strict=True):
        p = q[sl][3:7]
        # Q_v p-rows are orthogonal to p: the normalization carries no force (FFRF §5.2)
        assert abs(p @ body.quadratic_velocity(q[sl], qd[sl])[3:]) < 1e-12
        w = g_bar(p) @ qd[sl][3:7]
        expected = g_bar(p).T @ (-np.cross(w, body.inertia @ w))
        np.testing.assert_allclose(body.quadratic_velocity(q[sl], qd[sl])[3:], expected)


# ------------------------------------------------------------------------- profiles
@pytest.mark.parametrize("profile", [
    SpinUp(omega=6.0, duration=1.5),
    Polynomial((0.1, -0.5, 2.0, 0.3)),
    Table((0.0, 0.5, 1.0, 2.0), (0.0, 0.3, -0.1, 0.4)),
])
def test_profile_derivatives(profile):
    h = 1e-5
    for t in (0.13, 0.77, 1.2, 1.9):
        _s, sd, sdd = profile.eval(t)
        np.testing.assert_allclose(sd, (profile.eval(t + h)[0] - profile.eval(t - h)[0])
                                   / (2 * h), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(sdd, (profile.eval(t + h)[1] - profile.eval(t - h)[1])
                                   / (2 * h), rtol=1e-5, atol=1e-6)


def test_spin_up_profile_values():
    """ω(t) = Ω/T (t − T/2π sin 2πt/T): ω(T) = Ω, θ(T) = ΩT/2, smooth start."""
    prof = SpinUp(omega=6.0, duration=1.5)
    assert prof.eval(0.0) == (0.0, 0.0, 0.0)
    np.testing.assert_allclose(prof.eval(1.5), (4.5, 6.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(prof.eval(2.5)[:2], (10.5, 6.0), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 12),
       bc=st.sampled_from(["clamped", "natural", "not-a-knot", "periodic",
                           ((1, 0.5), (2, -1.0))]))
def test_table_profile_is_scipys_cubic_spline(seed, n, bc):
    """Table.eval evaluates the spline's pieces itself (scalar maths); it gives what
    scipy's CubicSpline gives for s, ṡ and s̈ inside the table (and beyond its ends for a
    periodic spline, which repeats), to round-off; beyond the ends of the others the
    straight line of scipy's end value and slope (s̈ = 0)."""
    from scipy.interpolate import CubicSpline

    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.uniform(0.05, 1.0, n)) - 0.3
    values = rng.normal(size=n)
    if bc == "not-a-knot" and n < 4:
        bc = "natural"
    if bc == "periodic":
        values[-1] = values[0]
    profile = Table(tuple(times), tuple(values), bc_type=bc)
    reference = CubicSpline(times, values, bc_type=bc)
    span = times[-1] - times[0]
    for t in [*rng.uniform(times[0] - 2.2 * span, times[-1] + 2.2 * span, 20), *times]:
        got = profile.eval(float(t))
        want = [float(reference(t, k)) for k in range(3)]
        if bc != "periodic" and not times[0] <= t <= times[-1]:
            end = times[0] if t < times[0] else times[-1]
            slope = float(reference(end, 1))
            want = [float(reference(end)) + slope * (t - end), slope, 0.0]
        scale = max(1.0, *np.abs(values)) * max(1.0, span) ** 3
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * scale)


@settings(max_examples=60, deadline=None)
@given(omega=st.floats(-20, 20), duration=st.floats(0.05, 5),
       fraction=st.floats(0, 1.5))
def test_spin_up_profile_is_its_formula(omega, duration, fraction):
    """SpinUp.eval against its closed form written with NumPy: θ, ω, α to round-off."""
    t = fraction * duration
    k = 2 * np.pi / duration
    if t < duration:
        want = (omega / duration * (t * t / 2 + (np.cos(k * t) - 1) / k**2),
                omega / duration * (t - np.sin(k * t) / k),
                omega / duration * (1 - np.cos(k * t)))
    else:
        want = (omega * duration / 2 + omega * (t - duration), omega, 0.0)
    got = SpinUp(omega, duration).eval(t)
    np.testing.assert_allclose(got, want, rtol=1e-13,
                               atol=1e-13 * max(1.0, abs(omega)) * max(1.0, duration) ** 2)


def test_profile_errors():
    with pytest.raises(ValidationError, match="strictly increasing"):
        Table((0.0, 0.0), (1.0, 2.0))
    with pytest.raises(ValidationError, match="duration must be positive"):
        SpinUp(1.0, 0.0)


def test_large_chain_uses_sparse_matrices_and_still_assembles():
    """Above SPARSE_LIMIT coordinates Φ_q and M are CSR; assembly (LSQR minimum-norm
    Newton steps) still reaches |Φ| < 1e-12, and the chain has one DOF per link."""
    import scipy.sparse as sp

    from flexmbs.assembly.system import SPARSE_LIMIT

    n = SPARSE_LIMIT // 7 + 5
    system = System(pendulum(n).finalize())
    assert system.n_q > SPARSE_LIMIT
    q = system.q0 + 1e-3 * np.random.default_rng(2).normal(size=system.n_q)
    assert sp.issparse(system.jacobian(q)) and sp.issparse(system.mass_matrix(q))
    q_ok = system.assemble(q)
    assert np.max(np.abs(system.phi(q_ok))) < 1e-12
    assert system.check(q_ok).dof == n


# ------------------------------------------------------------------------- review fixes
def hinge_model(**spring):
    b = ModelBuilder()
    b.add_marker("ground", "O", orientation=[0, 0, 1])
    b.add_rigid_body("arm", 1.0, INERTIA, position=(0.5, 0, 0))
    b.add_marker("arm", "O", (-0.5, 0, 0), orientation=[0, 0, 1])
    b.add_revolute("hinge", "ground.O", "arm.O")
    if spring:
        b.add_rotational_spring_damper("torsion", "ground.O", "arm.O", **spring)
    return b


def arm_state(theta):
    from flexmbs.frame.rotations import axis_angle

    p = axis_angle([0, 0, 1], theta)
    return np.concatenate([[0.5 * np.cos(theta), 0.5 * np.sin(theta), 0.0], p])


def test_rotational_spring_angle_keeps_counting_past_pi():
    """Unwrapped by continuity: at 3.3 rad (and 7 rad) the torque is −kθ, not −k(θ − 2π)."""
    system = System(hinge_model(stiffness=2.0).finalize())
    zero = np.zeros(7)
    for theta in np.arange(0.0, 7.05, 0.3):
        q = arm_state(theta)
        torque = np.linalg.pinv(system.bodies[0].angular_jac(q).T) @ system.forces(q, zero)
        torque_z = torque[2]
        np.testing.assert_allclose(torque_z, -2.0 * theta, rtol=1e-9, atol=1e-12)


def test_rotation_drive_refuses_the_other_branch():
    b = hinge_model()
    b.add_drive("motor", "rotation", 2.5, marker_i="ground.O", marker_j="arm.O")
    with pytest.raises(ConvergenceError, match=r"'motor' assembled half a turn away"):
        System(b.finalize()).assemble()
    b2 = hinge_model()
    b2.add_drive("motor", "rotation", 1.2, marker_i="ground.O", marker_j="arm.O")
    q = System(b2.finalize()).assemble()
    np.testing.assert_allclose(np.arctan2(q[1], q[0]), 1.2, atol=1e-12)


def test_driven_four_bar_with_redundant_equations_is_analysed():
    """Structural redundancy is consistent: the three levels hold, and the velocities are
    the time derivative of the positions (checked by central differences)."""
    b = four_bar()
    b.add_marker("ground", "D", orientation=[0, 0, 1])
    b.add_marker("crank", "D", (-0.1, -0.15, 0), orientation=[0, 0, 1])
    b.add_drive("motor", "rotation", Polynomial((0.0, -0.5)), marker_i="ground.D",
                marker_j="crank.D")
    system = System(b.finalize())
    t = np.linspace(0.0, 1.0, 101)
    res = kinematic_analysis(system, t)
    for k in (10, 50, 90):
        np.testing.assert_allclose(system.phi(res.q[k], t[k]), 0, atol=1e-11)
    dt = t[1] - t[0]
    fd = (res.q[2:] - res.q[:-2]) / (2 * dt)
    np.testing.assert_allclose(res.qd[1:-1], fd, atol=2e-4 * np.max(np.abs(res.qd)))
    fdd = (res.qd[2:] - res.qd[:-2]) / (2 * dt)
    np.testing.assert_allclose(res.qdd[1:-1], fdd, atol=2e-3 * np.max(np.abs(res.qdd)))


def test_kinematic_analysis_stops_at_a_dead_centre_with_the_time():
    b = slider_crank(drive=False)
    b.add_drive("push", "translation", Polynomial((0.37, 0.2)), marker_i="ground.S",
                marker_j="slider.S")
    system = System(b.finalize())
    with pytest.raises(ConvergenceError, match=r"at t = "):
        kinematic_analysis(system, np.linspace(0.0, 0.5, 26))


def test_system_input_errors():
    from flexmbs.errors import ShapeError

    system = System(hinge_model().finalize())
    with pytest.raises(ShapeError, match=r"q has shape \(3,\); the system has 7"):
        system.phi(np.zeros(3))
    with pytest.raises(ShapeError, match="qd has shape"):
        system.forces(system.q0, np.zeros(9))


@pytest.mark.parametrize(("make", "pattern"), [
    (lambda b: (b.add_marker("arm", "Q"), b.add_drive("d", "rotation", 1.0,
                                                       marker_i="arm.O", marker_j="arm.Q")),
     r"drive 'd' relates two markers of body 'arm'"),
    (lambda b: b.add_spring_damper("s", "ground.O", "arm.O", stiffness="abc"),
     r"spring-damper 's': stiffness must be a number"),
    (lambda b: b.add_spring_damper("s", "ground.O", "arm.O", free_length=-1),
     r"free_length must be a finite non-negative number"),
    (lambda b: b.add_point_force("f", "arm.O", [1, 2]), r"value must be 3 finite numbers"),
    (lambda b: b.add_point_force("f", "arm.O", [1, 2, 3], frame="body"),
     r"frame must be 'global' or 'marker'"),
])
def test_more_bad_model_input(make, pattern):
    b = hinge_model()
    make(b)
    with pytest.raises(ModelError, match=pattern):
        b.finalize()


def test_user_callable_failures_name_their_owner():
    b = hinge_model()
    b.add_drive("motor", "rotation", (lambda t: 1 / 0, lambda t: 0.0, lambda t: 0.0),
                marker_i="ground.O", marker_j="arm.O")
    with pytest.raises(ModelError, match=r"drive 'motor': its profile failed.*ZeroDivision"):
        System(b.finalize()).phi(arm_state(0.0))
    b2 = hinge_model()
    b2.add_joint_actuator("ctrl", "ground.O", "arm.O", lambda t, s: None)
    with pytest.raises(ModelError, match=r"JointActuator 'ctrl': its function must return a "
                                         r"number, got None"):
        System(b2.finalize()).forces(arm_state(0.0), np.zeros(7))


def test_zero_force_spring_between_coincident_markers_is_fine():
    b = hinge_model()
    b.add_spring_damper("s", "ground.O", "arm.O", stiffness=10.0)
    system = System(b.finalize())
    q = arm_state(0.3)
    assert np.all(np.isfinite(system.forces(q, np.zeros(7))))


def test_rigid_body_with_offset_frame_matches_lagrange_and_the_com_frame_body():
    """Body frame away from the centre of mass: KE equals that of the same motion
    described in the CoM frame, Q_v matches FD Lagrange (p-rows projected), and gravity is
    −∂V/∂q along admissible directions."""
    rng = np.random.default_rng(9)
    com = np.array([0.3, -0.1, 0.2])
    b = ModelBuilder(gravity=(0, 0, -9.81))
    b.add_rigid_body("o", 2.0, [0.1, 0.2, 0.25], orientation=rng.normal(size=4), com=com)
    system = System(b.finalize())
    body = system.bodies[0]
    q, qd = state_on_sphere(system, rng)
    from flexmbs.model import Marker

    a = body.marker_frame(q, Marker("o", "frame", np.zeros(3), np.eye(3)))[1]
    w = g_bar(q[3:7]) @ qd[3:7]
    v_com = qd[:3] + a @ np.cross(w, com)
    kin_com = 0.5 * 2.0 * v_com @ v_com + 0.5 * w @ body.inertia @ w
    np.testing.assert_allclose(body.kinetic_energy(q, qd), kin_com, rtol=1e-12)
    np.testing.assert_allclose(0.5 * qd @ body.mass_matrix(q) @ qd, kin_com, rtol=1e-12)
    h = 1e-6
    m_dot = (body.mass_matrix(q + h * qd) - body.mass_matrix(q - h * qd)) / (2 * h)
    grad = np.array([(qd @ body.mass_matrix(q + h * e) @ qd
                      - qd @ body.mass_matrix(q - h * e) @ qd) / (2 * h) for e in np.eye(7)])
    lagrange = -m_dot @ qd + 0.5 * grad
    qv = body.quadratic_velocity(q, qd)
    proj = np.eye(4) - np.outer(q[3:7], q[3:7])
    np.testing.assert_allclose(qv[:3], lagrange[:3], atol=1e-6 * np.max(np.abs(lagrange)))
    np.testing.assert_allclose(proj @ qv[3:], proj @ lagrange[3:],
                               atol=1e-6 * np.max(np.abs(lagrange)))
    _, dq = state_on_sphere(system, rng)
    dv = (_normalized_potential(system, q + h * dq)
          - _normalized_potential(system, q - h * dq)) / (2 * h)
    gravity_only = body.generalized_forces(q, np.zeros(7), 0.0, system.model.gravity)
    np.testing.assert_allclose(gravity_only @ dq, -dv, rtol=1e-7)


def test_gravity_given_as_text_is_a_model_error_naming_it():
    """Issue 36: ModelBuilder(gravity=(0, "down", 0)) once raised a bare ValueError."""
    b = ModelBuilder(gravity=(0, "down", 0))
    b.add_rigid_body("x", 1.0, INERTIA)
    with pytest.raises(ModelError, match=r"gravity must be 3 finite numbers, got "
                                         r"\(0, 'down', 0\)"):
        b.finalize()


@pytest.mark.parametrize("kind", ["translational", "rotational"])
@pytest.mark.parametrize("stiffness, damping, named", [
    (-100.0, 2.0, ["stiffness -100"]), (100.0, -2.0, ["damping -2"]),
    (-1.0, -1.0, ["stiffness -1", "damping -1"]), (0.0, 0.0, []), (5.0, 1.0, [])])
def test_a_negative_spring_coefficient_is_accepted_with_a_warning(kind, stiffness,
                                                                   damping, named):
    import warnings

    from flexmbs.errors import ModelWarning

    b = ModelBuilder()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if kind == "translational":
            b.add_spring_damper("s", "ground.O", "ground.O", stiffness=stiffness,
                                damping=damping)
        else:
            b.add_rotational_spring_damper("s", "ground.O", "ground.O",
                                           stiffness=stiffness, damping=damping)
    texts = [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]
    assert len(texts) == len(named)
    for text, part in zip(texts, named, strict=True):
        assert "spring-damper 's'" in text and part in text
