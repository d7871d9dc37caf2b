"""URDF robots against Pinocchio (docs/urdf.md, "Validation"): real robots that the pip
package example-robot-data ships (Franka Panda: 7 revolute and 2 prismatic joints, fixed
and massless links; Universal Robots UR5: 6 revolute joints; random chains), from random
states:

- link frames (forward kinematics) and joint coordinates;
- joint accelerations under gravity with zero torque (flexmbs: the index-1 system of the
  assembled absolute-coordinate model) against ``pin.aba``, 1e-9 relative;
- inverse-dynamics torques (flexmbs: drives on every joint, their multipliers) against
  ``pin.rnea``, 1e-9 relative;
- a 0.5 s free motion under gravity (flexmbs's integrator, small steps) against
  Pinocchio's ABA integrated by scipy's DOP853 at rtol 1e-11, 1e-5 rad.
"""


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

pytest.importorskip("yourdfpy", reason="URDF import needs the optional extra 'urdf'")
pin = pytest.importorskip("pinocchio", reason="the Pinocchio comparison needs the pip "
                                              "package 'pin' (test extra)")

from robot_files import robot_file  # noqa: E402
from test_urdf import inertial, joint, write  # noqa: E402

from flexmbs.analysis import (  # noqa: E402
    inverse_dynamics,
    joint_accelerations,
    joint_coordinates,
)
from flexmbs.assembly import System  # noqa: E402
from flexmbs.cases.urdf_model import load_urdf  # noqa: E402

ROBOTS = {"panda": "panda_description/urdf/panda.urdf",
          "ur5": "ur_description/urdf/ur5_robot.urdf"}


class Pair:
    """The same URDF in flexmbs (System) and Pinocchio (model, data), joint names in
    Pinocchio's order, and conversions of joint states."""

    def __init__(self, path, base="fixed"):
        self.builder = load_urdf(path, visuals=False, base=base)
        self.system = System(self.builder.finalize())
        root = pin.JointModelFreeFlyer() if base == "floating" else None
        self.pm = (pin.buildModelFromUrdf(str(path), root) if root is not None
                   else pin.buildModelFromUrdf(str(path)))
        self.pd = self.pm.createData()
        first = 2 if base == "floating" else 1
        self.names = [self.pm.names[i] for i in range(first, self.pm.njoints)]
        assert sorted(self.names) == sorted(self.builder.urdf.joints)

    def random_state(self, rng, speed=2.0):
        n = len(self.names)
        return rng.uniform(-np.pi, np.pi, n), rng.uniform(-speed, speed, n)

    def pin_q(self, values):
        """Pinocchio's configuration (continuous joints as cos, sin)."""
        q = pin.neutral(self.pm)
        first = self.pm.njoints - len(self.names)
        for k, value in enumerate(values):
            j = self.pm.joints[first + k]
            if j.nq == 2:
                q[j.idx_q:j.idx_q + 2] = np.cos(value), np.sin(value)
            else:
                q[j.idx_q] = value
        return q

    def state(self, values, rates):
        return self.builder.urdf.state(self.system, dict(zip(self.names, values, strict=True)),
                                       dict(zip(self.names, rates, strict=True)))


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def robot(request):
    return Pair(robot_file(ROBOTS[request.param]))


def relative_error(ours, theirs, floor=0.0):
    """max |ours − theirs| over max |theirs| (+ ``floor``, for degenerate chains whose
    answer is zero)."""
    return float(np.max(np.abs(ours - theirs)) / (np.max(np.abs(theirs)) + floor))


def test_link_frames_and_joint_coordinates_match_pinocchio(robot):
    """Every URDF link's frame (the marker named after it, on the body it belongs to)
    where Pinocchio's forward kinematics puts it, 1e-12 m and rad; the joint sensors
    read the joint coordinates back; the state meets the constraints."""
    rng = np.random.default_rng(3)
    system = robot.system
    for _ in range(5):
        values, rates = robot.random_state(rng)
        q, qd = robot.state(values, rates)
        assert np.max(np.abs(system.phi(q))) < 1e-13
        assert np.max(np.abs(system.jacobian(q, sparse=False) @ qd)) < 1e-12
        s, sd, _ = joint_coordinates(system, robot.names, q, qd)
        assert_allclose(s, values, rtol=0, atol=1e-12)
        assert_allclose(sd, rates, rtol=0, atol=1e-12)
        pin.framesForwardKinematics(robot.pm, robot.pd, robot.pin_q(values))
        from flexmbs.elements.marker_pairs import marker_state

        for link, (body, _) in robot.builder.urdf.body_of.items():
            frame = robot.pd.oMf[robot.pm.getFrameId(link, pin.BODY)]
            _, _, _, r, axes, _, _ = marker_state(system, f"{body}.{link}", q, qd)
            assert_allclose(r, frame.translation, rtol=0, atol=1e-12)
            assert_allclose(axes, frame.rotation, rtol=0, atol=1e-12)


def test_joint_accelerations_under_gravity_match_aba(robot):
    """10 random states (q, q̇), zero torque: flexmbs's joint accelerations equal
    pin.aba's to 1e-9 relative (measured: ~6e-15)."""
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(10):
        values, rates = robot.random_state(rng)
        q, qd = robot.state(values, rates)
        ours = joint_accelerations(robot.system, robot.names, q, qd)
        theirs = pin.aba(robot.pm, robot.pd, robot.pin_q(values), rates,
                         np.zeros(robot.pm.nv))
        worst = max(worst, relative_error(ours, theirs))
    assert worst < 1e-9


def test_inverse_dynamics_torques_match_rnea(robot):
    """10 random states and joint accelerations: the torques and forces of drives on
    every joint (flexmbs) equal pin.rnea's to 1e-9 relative (measured: ~1e-15)."""
    rng = np.random.default_rng(12)
    worst = 0.0
    for _ in range(10):
        values, rates = robot.random_state(rng)
        acc = rng.uniform(-5.0, 5.0, len(values))
        q, qd = robot.state(values, rates)
        ours = inverse_dynamics(robot.system, robot.names, q, qd, acc)
        theirs = pin.rnea(robot.pm, robot.pd, robot.pin_q(values), rates, acc)
        worst = max(worst, relative_error(ours, theirs))
    assert worst < 1e-9


def test_free_motion_under_gravity_matches_pinocchio_integrated_by_scipy():
    """UR5 released from a random state: after 0.5 s flexmbs's generalized-α run (h =
    0.2 ms, Newton converged) and Pinocchio's ABA integrated by DOP853 (rtol 1e-11)
    agree to 1e-5 rad in every joint (measured: 4e-7 rad, the integrator's O(h²))."""
    from scipy.integrate import solve_ivp

    from flexmbs.integrators import simulate

    robot = Pair(robot_file(ROBOTS["ur5"]))
    rng = np.random.default_rng(1)
    values, rates = rng.uniform(-1.5, 1.5, 6), rng.uniform(-1.0, 1.0, 6)
    n = len(values)

    def rhs(t, y):
        return np.concatenate([y[n:], pin.aba(robot.pm, robot.pd, y[:n], y[n:],
                                              np.zeros(n))])

    ref = solve_ivp(rhs, (0.0, 0.5), np.concatenate([values, rates]), method="DOP853",
                    rtol=1e-11, atol=1e-12)
    assert ref.success
    q0, qd0 = robot.state(values, rates)
    result = simulate(robot.system, 0.5, 2e-4, "generalized-alpha", rho_inf=1.0,
                      q0=q0, qd0=qd0, newton="converged", output_every=2500)
    assert result.success and result.t[-1] == pytest.approx(0.5)
    angles, speeds, _ = joint_coordinates(robot.system, robot.names, result.q[-1],
                                          result.qd[-1])
    wrapped = np.angle(np.exp(1j * (angles - ref.y[:n, -1])))
    assert np.max(np.abs(wrapped)) < 1e-5
    assert np.max(np.abs(speeds - ref.y[n:, -1])) < 1e-4


def test_floating_base_accelerations_match_aba_with_a_free_flyer():
    """Panda with base="floating" (its link0 free) against Pinocchio's free-flyer root:
    from states with the base at rest and the joints moving, the joint accelerations
    and the base's angular acceleration (global = Pinocchio's local one turned by the
    base attitude) agree to 1e-9 relative."""
    pair = Pair(robot_file(ROBOTS["panda"]), base="floating")
    system = pair.system
    rng = np.random.default_rng(5)
    k = system.body_index("panda_link0")
    sl = system.slices[k]
    from flexmbs.frame.rotations import g_global, rotation_matrix
    from flexmbs.integrators.reference import accelerations

    for _ in range(3):
        values, rates = pair.random_state(rng)
        attitude = pin.Quaternion(pin.SE3.Random().rotation)
        pose = np.eye(4)
        pose[:3, :3] = attitude.matrix()
        pose[:3, 3] = rng.uniform(-1, 1, 3)
        q, qd = pair.builder.urdf.state(system, dict(zip(pair.names, values, strict=True)),
                                        dict(zip(pair.names, rates, strict=True)), base_pose=pose)
        qdd, _ = accelerations(system, q, qd, 0.0)
        ours = joint_coordinates(system, pair.names, q, qd, qdd)[2]
        p = q[sl][3:7]
        alpha = g_global(p) @ qdd[sl][3:7]
        q_pin = np.concatenate([pose[:3, 3], attitude.coeffs(), pair.pin_q(values)[7:]])
        v_pin = np.concatenate([np.zeros(6), rates])
        a_pin = pin.aba(pair.pm, pair.pd, q_pin, v_pin, np.zeros(pair.pm.nv))
        assert relative_error(ours, a_pin[6:]) < 1e-9
        assert_allclose(alpha, pose[:3, :3] @ a_pin[3:6], rtol=1e-9,
                        atol=1e-9 * np.max(np.abs(a_pin)))
        assert_allclose(rotation_matrix(p), pose[:3, :3], rtol=0, atol=1e-12)


AXIS = st.sampled_from([(1, 0, 0), (0, 1, 0), (0, 0, 1), (0.3, -0.5, 0.8),
                        (-0.6, 0.0, 0.8), (0.2, 0.9, -0.4)])
JOINT = st.tuples(st.sampled_from(["revolute", "continuous", "prismatic", "fixed"]), AXIS,
                  st.tuples(*[st.floats(-0.4, 0.4)] * 3), st.tuples(*[st.floats(-3, 3)] * 3),
                  st.floats(0.2, 3.0), st.tuples(*[st.floats(-0.2, 0.2)] * 3),
                  st.tuples(*[st.floats(-3, 3)] * 3))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chain=st.lists(JOINT, min_size=2, max_size=4), seed=st.integers(0, 2**16))
def test_random_chains_match_aba_and_rnea(tmp_path, chain, seed):
    """Random serial chains (revolute, continuous, prismatic and fixed joints with
    oblique axes, turned joint frames and turned inertials): accelerations and inverse
    dynamics equal Pinocchio's to 1e-9 relative (to 1e-9 of 1 rad/s² or 1 N m where the
    chain is degenerate and the answer zero)."""
    if all(kind == "fixed" for kind, *_ in chain):
        chain[0] = ("revolute", *chain[0][1:])
    links = '<link name="l0"/>'
    joints = ""
    for k, (kind, axis, xyz, rpy, mass, com, irpy) in enumerate(chain, 1):
        moments = (0.02 * mass, 0.03 * mass, 0.04 * mass)
        links += f'<link name="l{k}">{inertial(mass, com, irpy, moments)}</link>'
        limit = ('<limit lower="-3" upper="3" effort="10" velocity="5"/>'
                 if kind in ("revolute", "prismatic") else "")  # urdfdom needs them
        joints += joint(f"j{k}", kind, f"l{k - 1}", f"l{k}", xyz, rpy, axis, limit)
    path = write(tmp_path, links + joints, f"chain{seed}.urdf")
    pair = Pair(path)
    rng = np.random.default_rng(seed)
    values, rates = pair.random_state(rng)
    q, qd = pair.state(values, rates)
    ours = joint_accelerations(pair.system, pair.names, q, qd)
    theirs = pin.aba(pair.pm, pair.pd, pair.pin_q(values), rates, np.zeros(pair.pm.nv))
    assert relative_error(ours, theirs, floor=1.0) < 1e-9  # [rad/s², m/s²]
    acc = rng.uniform(-3, 3, len(values))
    torques = inverse_dynamics(pair.system, pair.names, q, qd, acc)
    expected = pin.rnea(pair.pm, pair.pd, pair.pin_q(values), rates, acc)
    assert relative_error(torques, expected, floor=1.0) < 1e-9  # [N m, N]


def test_visual_meshes_of_a_real_robot_are_drawn_in_place():
    """UR5: every moving link draws its COLLADA visual mesh (read through trimesh, units
    and node transforms applied, ``package://`` names resolved) in the body frame; its
    bounding box matches the link's collision STL (read here with meshio, placed by the
    collision origin) to 2 mm."""
    import meshio

    from flexmbs.cases.urdf_visuals import resolve_mesh

    path = robot_file(ROBOTS["ur5"])
    builder = load_urdf(path)
    assert builder.urdf.skipped_visuals == ()
    model = builder.finalize()
    import yourdfpy

    links = {link.name: link for link in yourdfpy.URDF.load(
        str(path), build_scene_graph=False, load_meshes=False).robot.links}
    for name, body in model.bodies.items():
        if name == "ground":
            continue
        collision = links[name].collisions[0]
        mesh = collision.geometry.mesh
        points = meshio.read(resolve_mesh(mesh.filename, path)).points
        points = points * (1.0 if mesh.scale is None else mesh.scale)
        if collision.origin is not None:
            points = points @ collision.origin[:3, :3].T + collision.origin[:3, 3]
        bounds = np.vstack([points.min(axis=0), points.max(axis=0)])
        assert len(body.shape.triangles) > 1000
        assert_allclose(body.shape.bounds, bounds, rtol=0, atol=2e-3)
