"""Drive sensors (``kind = "drive"``, docs/sensors.md): the torque or force a drive applies
along the coordinate it drives, from its multiplier, against independent values:

* a rigid pendulum driven through a prescribed angle θ(t): the inverse-dynamics torque
  I_O θ̈ + m g l sin θ, with θ̈ from the centre of mass's acceleration sensor (to
  round-off: the sensor itself), and with θ, θ̈ of the closed-form profile (the
  integrator's O(h²) acceleration error, 1e-6 and better at the steps used);
* a block lifted at constant acceleration a by a translation drive, or by a coordinate
  drive: m (g + a), with the drive's markers either way round;
* a flexible beam spun up by a rotation drive: the work ∫ τ θ̇ dt of the sensor equals
  the change of the beam's energy;
* the case file, the builder's checks and the results file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.assembly import System
from flexmbs.cases import load_case, run_case
from flexmbs.cases.loader import CaseError
from flexmbs.errors import ModelError
from flexmbs.integrators import simulate
from flexmbs.model.drives import UserProfile

ROOT = Path(__file__).resolve().parents[1]
M, L, IC, G = 1.2, 0.4, 0.01, 9.81  # link mass [kg], pivot–centre [m], I_c [kg m²], g
I_O = IC + M * L**2

#: θ(t) = A (1 − cos Ωt): starts at rest with θ̈(0) = A Ω², smooth for t ≥ 0.
A_SWING, W_SWING = 1.2, 2 * np.pi * 1.5
SWING = UserProfile(lambda t: A_SWING * (1 - np.cos(W_SWING * t)),
                    lambda t: A_SWING * W_SWING * np.sin(W_SWING * t),
                    lambda t: A_SWING * W_SWING**2 * np.cos(W_SWING * t))
SPIN = fm.Polynomial((0.0, 2 * np.pi))  # one turn per second through the bottom


def _pendulum(profile, reversed_markers=False):
    """A link hanging from a pin at the origin (gravity −y, axis z), its centre of mass
    l below the pin, driven through the angle θ of the link about z."""
    b = fm.ModelBuilder(gravity=(0.0, -G, 0.0))
    b.add_rigid_body("link", M, [IC, IC, IC], position=(0.0, -L, 0.0))
    b.add_marker("link", "A", (0.0, L, 0.0))
    b.add_marker("link", "C")
    b.add_marker("ground", "O")
    b.add_joint("pin", "revolute", "ground.O", "link.A")
    if reversed_markers:  # x_ground about z_link: the angle −θ, the torque on the ground
        b.add_drive("motor", "rotation", _negated(profile), marker_i="link.A",
                    marker_j="ground.O")
    else:
        b.add_drive("motor", "rotation", profile, marker_i="ground.O", marker_j="link.A")
    b.add_sensor("tau", "drive", "torque", drive="motor")
    b.add_sensor("acc", "marker", "acceleration", marker="link.C")
    b.add_sensor("theta", "joint", "angle", joint="pin")
    return b.finalize()


def _negated(profile):
    return UserProfile(*(lambda t, k=k: -profile.eval(t)[k] for k in range(3)))


def _angular_acceleration_z(p, p_dd):
    """ω̇_z [rad/s²] of a body turning about the global z axis, from its Euler parameters
    and their second derivatives: ω̄̇ = Ḡ p̈ (Ḡ̇ ṗ = 0), body z = global z."""
    e0, e1, e2, e3 = p.T
    g_row_z = 2 * np.stack([-e3, e2, -e1, e0], axis=1)  # third row of Ḡ(p)
    return np.sum(g_row_z * p_dd, axis=1)


@pytest.mark.parametrize("profile", [SWING, SPIN], ids=["swing", "spin"])
@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_rotation_drive_torque_is_the_inverse_dynamics_torque(profile, engine):
    """Moments about the pin of the run's own motion, τ = I_c ω̇ + m (d × a_C)_z +
    m g l sin θ (d from the pin to the centre, a_C the centre's acceleration sensor, ω̇
    from the Euler parameters' accelerations: paths without multipliers), equal the
    sensor to the Newton tolerance (1e-9 of the peak); with the profile's closed-form
    θ, θ̈ — τ = I_O θ̈ + m g l sin θ — the difference is the trapezoidal rule's
    acceleration error, O(h²) (below 1e-4 of the peak at h = 1 ms)."""
    res = simulate(System(_pendulum(profile)), 0.5, 1e-3, method="newmark",
                   engine=engine, newton="converged")
    theta = res.sensor("theta")[:, 0]
    tau = res.sensor("tau")[:, 0]
    d = res.q[:, :3]  # the pin is at the origin, the body frame at the centre of mass
    omega_dd = _angular_acceleration_z(res.q[:, 3:7], res.qdd[:, 3:7])
    own = IC * omega_dd + M * np.cross(d, res.sensor("acc"))[:, 2] + M * G * L * np.sin(
        theta)
    peak = np.max(np.abs(own))
    print(f"{engine}: drive torque vs the run's own moments: "
          f"{np.max(np.abs(tau - own)) / peak:.2e} of the peak")
    np.testing.assert_allclose(tau, own, rtol=0, atol=1e-9 * peak)
    exact = profile.eval_many(res.t)
    np.testing.assert_allclose(theta, exact[:, 0], rtol=0, atol=1e-12)
    closed = I_O * exact[:, 2] + M * G * L * np.sin(exact[:, 0])
    assert np.max(np.abs(tau - closed)) < 1e-4 * peak
    assert res.sensors["tau"]["units"] == "N m"
    assert list(res.sensors["tau"]["components"]) == ["torque"]


def test_rotation_drive_torque_converges_to_the_closed_form():
    """Against the closed-form θ(t) alone: relative error (of the peak torque) below 1e-6
    at h = 2.5e-4 s (spin: 3.4e-7) and 1.25e-4 s (swing: 8.5e-7), falling as h² (the
    trapezoidal rule's acceleration error; the sensor itself is exact, test above)."""
    for profile, steps, limit in ((SPIN, (5e-4, 2.5e-4), 1e-6),
                                  (SWING, (2.5e-4, 1.25e-4), 1e-6)):
        errors = []
        for h in steps:
            res = simulate(System(_pendulum(profile)), 0.5, h, method="newmark",
                           newton="converged")
            s = profile.eval_many(res.t)
            closed = I_O * s[:, 2] + M * G * L * np.sin(s[:, 0])
            errors.append(np.max(np.abs(res.sensor("tau")[:, 0] - closed))
                          / np.max(np.abs(closed)))
        print("drive torque vs closed form, h and h/2:", errors)
        assert errors[-1] < limit
        assert np.log2(errors[0] / errors[1]) == pytest.approx(2.0, abs=0.1)


def test_rotation_drive_with_its_body_as_marker_i_reads_the_torque_on_the_ground():
    """The same motion with the markers swapped: the sensor gives the torque on the body
    of marker j, now the ground, about the link's z axis: −τ."""
    straight = simulate(System(_pendulum(SWING)), 0.3, 1e-3, method="newmark",
                        newton="converged")
    swapped = simulate(System(_pendulum(SWING, reversed_markers=True)), 0.3, 1e-3,
                       method="newmark", newton="converged")
    tau = straight.sensor("tau")[:, 0]
    np.testing.assert_allclose(swapped.sensor("tau")[:, 0], -tau, rtol=0,
                               atol=1e-9 * np.max(np.abs(tau)))


def _lift(kind, a=2.5, swap=False):
    """A 3 kg block lifted from rest with acceleration a [m/s²] (gravity −z): by a
    translation drive along a prismatic joint (``swap``: the block as marker i), or by a
    coordinate drive of block.z on the free block."""
    b = fm.ModelBuilder(gravity=(0.0, 0.0, -G))
    b.add_rigid_body("block", 3.0, [0.01, 0.02, 0.03], position=(0.2, 0.1, 0.0))
    b.add_marker("block", "B")
    b.add_marker("ground", "O", (0.2, 0.1, 0.0))
    rise = fm.Polynomial((0.0, 0.0, 0.5 * a))
    if kind == "translation":
        b.add_joint("slide", "prismatic", "ground.O", "block.B")
        markers = ("block.B", "ground.O") if swap else ("ground.O", "block.B")
        b.add_drive("lift", "translation", _negated(rise) if swap else rise,
                    marker_i=markers[0], marker_j=markers[1])
    else:  # nothing else acts: the free block neither slides nor turns
        b.add_drive("lift", "coordinate", rise, coordinate="block.z")
    b.add_sensor("force", "drive", "force", drive="lift")
    return b.finalize()


@pytest.mark.parametrize(("kind", "swap", "sign"), [("translation", False, 1.0),
                                                    ("translation", True, -1.0),
                                                    ("coordinate", False, 1.0)])
@pytest.mark.parametrize("method", ["generalized-alpha", "newmark"])
def test_lifting_drive_force_is_m_g_plus_a(kind, swap, sign, method):
    """F = m (g + a) on the block (on the ground, −m (g + a), when it is marker j), at
    every output: a constant acceleration is integrated exactly by every method."""
    a = 2.5
    res = simulate(System(_lift(kind, a, swap)), 0.4, 1e-3, method=method,
                   newton="converged")
    np.testing.assert_allclose(res.sensor("force")[:, 0], sign * 3.0 * (G + a),
                               rtol=1e-8, atol=0)  # Newton's tolerance ("converged")
    assert res.sensors["force"]["units"] == "N"


def test_spin_up_torque_does_the_work_the_beam_stores(tmp_path):
    """Kane's beam spun up by a rotation drive (flexible body, stiffening on): the work of
    the drive-torque sensor, ∫ τ θ̇ dt (trapezoidal rule over the outputs, θ̇ from the
    profile), equals the beam's energy change T + V − E₀ to 1e-4 of the energy at the
    end, and the torque is positive while spinning up."""
    text = (ROOT / "cases" / "spin_up_beam.toml").read_text().replace(
        "../modal_data/", str(ROOT / "modal_data") + "/")
    path = tmp_path / "spin.toml"
    path.write_text(text + '\n[[sensors]]\nname = "hub_torque"\ntype = "drive"\n'
                           'quantity = "torque"\ndrive = "spin"\n')
    case = load_case(path, {"solver.t_end": 4.0})
    res = run_case(case)[1]
    tau = res.sensor("hub_torque")[:, 0]
    profile = next(d for d in case.model.drives if d.name == "spin").profile
    rate = profile.eval_many(res.t)[:, 1]
    power = tau * rate
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1])
                                            * np.diff(res.t))])
    energy = res.kinetic + res.potential
    change = energy - energy[0]
    print("spin-up: max |W_sensor − ΔE| / ΔE_end =",
          np.max(np.abs(work - change)) / change[-1])
    np.testing.assert_allclose(work, change, rtol=0, atol=1e-4 * change[-1])
    assert np.all(tau[1:] > 0)


CASE = """
[model]
gravity = [0.0, -9.81, 0.0]

[[bodies]]
name = "link"
mass = 1.2
inertia = [0.01, 0.01, 0.01]
position = [0.0, -0.4, 0.0]

[[markers]]
body = "link"
name = "A"
position = [0.0, 0.4, 0.0]

[[markers]]
body = "ground"
name = "O"

[[joints]]
name = "pin"
type = "revolute"
i = "ground.O"
j = "link.A"

[[drives]]
name = "motor"
type = "rotation"
i = "ground.O"
j = "link.A"
profile = { type = "polynomial", coefficients = [0.0, 6.283185307179586] }

[[sensors]]
name = "tau"
type = "drive"
quantity = "{quantity}"
drive = "{drive}"

[solver]
method = "newmark"
h = 5e-4
t_end = 0.5
newton = "converged"
"""


def test_case_file_drive_sensor_and_results_file(tmp_path):
    path = tmp_path / "motor.toml"
    path.write_text(CASE.replace("{quantity}", "torque").replace("{drive}", "motor"))
    res = run_case(load_case(path))[1]
    res.save(tmp_path / "motor.res.h5")
    back = fm.load_result(tmp_path / "motor.res.h5")
    tau = back.sensor("tau")[:, 0]
    closed = M * G * L * np.sin(2 * np.pi * back.t)  # θ̈ = 0
    np.testing.assert_allclose(tau, closed, rtol=0, atol=2e-6 * M * G * L)
    assert back.sensors["tau"]["units"] == "N m"
    assert back.sensors["tau"]["kind"] == "drive"


@pytest.mark.parametrize(("quantity", "drive", "words"), [
    ("force", "motor", ["a rotation drive records a torque, not a force"]),
    ("torque", "nowhere", ["unknown drive 'nowhere'"]),
    ("power", "motor", ["drive sensors measure (['force', 'torque'])", "'power'"]),
])
def test_case_file_drive_sensor_errors(tmp_path, quantity, drive, words):
    path = tmp_path / "bad.toml"
    path.write_text(CASE.replace("{quantity}", quantity).replace("{drive}", drive))
    with pytest.raises(CaseError) as info:
        load_case(path)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_builder_refuses_drive_sensors_without_a_force_coordinate():
    b = fm.ModelBuilder()
    b.add_rigid_body("block", 1.0, [0.1, 0.1, 0.1])
    b.add_drive("tilt", "coordinate", 1.0, coordinate="block.e0")
    b.add_sensor("f", "drive", "force", drive="tilt")
    b.add_sensor("g", "drive", "force", joint="tilt")
    with pytest.raises(ModelError) as info:
        b.finalize()
    text = str(info.value)
    assert "drive 'tilt' prescribes coordinate 'block.e0'" in text
    assert "sensor 'g': drive sensors need drive=" in text


def test_damped_methods_show_the_documented_start_transient():
    """docs/sensors.md, "Accuracy of reactions and drive loads": at constant speed from
    the start, generalized-α's multipliers oscillate at first (above 1e-3 of the peak
    torque at h = 1 ms) and settle to the O(h²) level (below 1e-4) after 0.1 s, while
    Newmark's trapezoidal rule stays at O(h²) from the first step."""
    errors = {}
    for method in ("generalized-alpha", "newmark"):
        res = simulate(System(_pendulum(SPIN)), 0.3, 1e-3, method=method,
                       newton="converged")
        s = SPIN.eval_many(res.t)
        closed = M * G * L * np.sin(s[:, 0])
        err = np.abs(res.sensor("tau")[:, 0] - closed) / np.max(np.abs(closed))
        errors[method] = (err.max(), err[res.t > 0.1].max())
    print("start transient (max, after 0.1 s):", errors)
    assert errors["generalized-alpha"][0] > 1e-3 > 1e-4 > errors["generalized-alpha"][1]
    assert errors["newmark"][0] < 1e-5
