"""Contacts on the compiled engine (docs/contact.md, docs/compiled.md "Contacts") against
the NumPy path, which is written independently (geometry objects, point Jacobians
from the bodies' ``force_jac`` and ``angular_jac``, the laws' classes): the samples,
the generalized forces, the iteration matrix's contact blocks (both by forward
differences with the same steps) and whole runs of the shipped contact cases."""

from pathlib import Path

import numpy as np
import pytest
from conftest import make_modal_kwargs
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.assembly import System
from flexmbs.assembly.tangents import residual_tangents
from flexmbs.cases import load_case, run_case
from flexmbs.contact import (
    Friction,
    Hertz,
    HuntCrossley,
    Impulse,
    LankaraniNikravesh,
    Penalty,
)
from flexmbs.contact.element import OPEN, SLIP, STICK
from flexmbs.engine.compiled_system import CompiledSystem
from flexmbs.frame.rotations import axis_angle
from flexmbs.modal import ModalData
from flexmbs.model import ModelBuilder

CASES = Path(__file__).resolve().parents[1] / "cases"


def scene(radii=None):
    """A tilted table (rigid), a ball, a shaft in a bearing on the table and a flexible
    beam whose tip node carries a sphere; every geometry, law and friction model.
    ``radii``: {contact: (radius_a, radius_b)} overriding the defaults."""
    radii = radii or {}
    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_rigid_body("table", 5.0, [0.1, 0.2, 0.3], orientation=axis_angle([1, 1, 0], 0.3))
    b.add_rigid_body("ball", 1.0, [0.01, 0.01, 0.01], position=(0.1, 0.2, 0.5))
    b.add_rigid_body("shaft", 1.0, [0.02, 0.02, 0.01], position=(0.3, 0.0, 0.2))
    data = ModalData(**make_modal_kwargs(n_nodes=6, n_modes=3, seed=4))
    b.add_flexible_body("beam", data, position=(-0.5, 0.1, 0.4))
    b.add_marker("table", "top", (0.0, 0.0, 0.05), axis_angle([0, 1, 0], 0.2))
    b.add_marker("table", "hole", (0.3, 0.0, 0.1))
    b.add_marker("ball", "c", (0.01, -0.02, 0.0))
    b.add_marker("shaft", "j", (0.0, 0.0, 0.0))
    b.add_marker("beam", "tip", node=6)
    b.add_marker("ground", "floor")
    specs = [
        ("ball_table", "sphere-plane", "table.top", "ball.c", Penalty(1e5, 10.0),
         Friction(0.3, mu_kinetic=0.2, stribeck_velocity=0.05, v_reg=1e-3)),
        ("tip_ball", "sphere-sphere", "ball.c", "beam.tip", Hertz(1e7), None),
        ("bearing", "journal-bearing", "table.hole", "shaft.j",
         LankaraniNikravesh(1e8, 1.5, e=0.7), Friction(0.1, v_reg=1e-3)),
        ("tip_floor", "sphere-plane", "ground.floor", "beam.tip", HuntCrossley(1e6, 1.5, e=0.8),
         Friction(0.4, mu_kinetic=0.3, model="stick-slip", stick_stiffness=1e5,
                  stick_damping=20.0, v_reg=1e-3)),
        ("shaft_floor", "sphere-plane", "ground.floor", "shaft.j", Impulse(0.5), None),
    ]
    for name, kind, a, bb, law, friction in specs:
        ra, rb = radii.get(name, (0.0, 0.05) if kind != "journal-bearing" else (0.0105, 0.01))
        b.add_contact(name, kind, a, bb, law, radius_a=ra, radius_b=rb, friction=friction)
    return System(b.finalize())


def _penetrating_scene(depth=0.01):
    """The scene with radii that make every contact penetrate by ``depth`` [m] at q0."""
    plain = scene({"tip_ball": (0.0, 0.0)})
    gaps = {c.name: c.kinematics(plain, plain.q0).gap for c in plain.model.forces}
    return scene({"ball_table": (0.0, 0.05 + gaps["ball_table"] + depth),
                  "tip_ball": (0.0, gaps["tip_ball"] + depth),
                  "bearing": (0.01 + (0.0005 - gaps["bearing"]) - depth, 0.01),
                  "tip_floor": (0.0, gaps["tip_floor"] + 0.05 + depth),
                  "shaft_floor": (0.0, gaps["shaft_floor"] + 0.05 + depth)})


SYSTEM = _penetrating_scene()
CONTACTS = list(SYSTEM.model.forces)
COMPILED = CompiledSystem(SYSTEM)


def random_state(seed, spread=0.001):
    rng = np.random.default_rng(seed)
    q = SYSTEM.q0 + spread * rng.normal(size=SYSTEM.n_q)
    qd = 0.3 * rng.normal(size=SYSTEM.n_q)
    for sl in SYSTEM.slices:
        p = q[sl][3:7] / np.linalg.norm(q[sl][3:7])
        q[sl.start + 3:sl.start + 7] = p
        qd[sl.start + 3:sl.start + 7] -= (p @ qd[sl][3:7]) * p
    return q, qd


def set_states(seed):
    """Random contact states: open, slip or stick (with anchors), onset speeds."""
    rng = np.random.default_rng(seed + 1)
    for c in CONTACTS:
        c.reset()
        c.state.mode = int(rng.choice([OPEN, SLIP, STICK]))
        if c.state.mode != OPEN:
            c.state.v_onset = float(rng.uniform(0.1, 2.0))
        if c.state.mode == STICK and c.friction is not None \
                and c.friction.model == "stick-slip":
            c.state.anchor = tuple(1e-3 * rng.normal(size=3) for _ in range(3))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_compiled_samples_equal_the_numpy_samples(seed):
    q, qd = random_state(seed)
    set_states(seed)
    numpy_rows = np.array([c.sample(SYSTEM, q, qd).row for c in CONTACTS])
    compiled_rows = np.array([s.row for s in COMPILED.contact_samples(q, qd, CONTACTS)])
    scale = np.maximum(1.0, np.max(np.abs(numpy_rows), axis=0))  # per column
    worst = np.max(np.abs(compiled_rows - numpy_rows) / scale, axis=0)
    assert np.all(worst <= 1e-10), f"columns' largest scaled differences: {worst}"
    assert np.any(numpy_rows[:, 8] > 0)  # forces act: the comparison is not of zeros


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_compiled_residual_with_contacts_equals_the_numpy_residual(seed):
    q, qd = random_state(seed)
    set_states(seed)
    qdd = np.random.default_rng(seed).normal(size=SYSTEM.n_q)
    lam = np.zeros(SYSTEM.n_c)
    expected = SYSTEM.dynamic_residual(q, qd, qdd, lam, 0.0)[0]
    got = COMPILED.residual(q, qd, qdd, lam, 0.0)[0]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9 * np.max(np.abs(expected)))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_contact_tangents_equal_the_numpy_difference_quotients(seed):
    """Both engines difference the contacts' forces with the same steps; the rest of
    the matrix is analytic in both: the matrices agree to the quotients' round-off."""
    q, qd = random_state(seed)
    set_states(seed)
    qdd, lam = np.zeros(SYSTEM.n_q), np.zeros(SYSTEM.n_c)
    bp, gp = 1e4, 1e2
    k_t, c_t = residual_tangents(SYSTEM, q, qd, qdd, lam, 0.0, sparse=False)
    mass = np.asarray(SYSTEM.mass_matrix(q, sparse=False))
    expected = mass + (gp / bp) * c_t + k_t / bp
    n = SYSTEM.n_q
    got = COMPILED.iteration_matrix(q, qd, qdd, lam, 0.0, bp, gp)[:n, :n]
    scale = np.max(np.abs(k_t)) / bp
    assert scale > 1.0  # the contacts' stiffness is in the comparison
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * scale)


def _run(name, engine, **options):
    case = load_case(CASES / f"{name}.toml")
    return run_case(case, engine=engine, **options)[1]


@pytest.mark.parametrize(("name", "t_end", "tol"), [
    ("ball_drop", 1.5, 1e-12), ("beam_stop", 0.1, 1e-12),
    ("slider_crank_clearance", 0.02, 1e-8)])
def test_contact_cases_run_compiled_on_the_numpy_trajectory(name, t_end, tol):
    """The shipped contact cases on both engines: the same steps, impacts and
    trajectories (to round-off; the clearance joint's repeated impacts amplify it)."""
    ref = _run(name, "python", t_end=t_end)
    fast = _run(name, "compiled", t_end=t_end)
    assert fast.statistics["engine"] == "compiled", fast.statistics["engine_note"]
    assert ref.t.size == fast.t.size
    np.testing.assert_allclose(fast.t, ref.t, rtol=0, atol=1e-12)
    scale = np.max(np.abs(ref.q))
    np.testing.assert_allclose(fast.q, ref.q, rtol=0, atol=tol * scale)
    for contact, rec in ref.contacts.items():
        other = fast.contacts[contact]
        assert other["impacts"] == rec["impacts"]
        force = np.max(np.abs(rec["normal_force"]))
        assert force > 0
        np.testing.assert_allclose(other["normal_force"], rec["normal_force"], rtol=0,
                                   atol=max(tol, 1e-9) * 1e3 * force)
        np.testing.assert_allclose(other["dissipated"], rec["dissipated"], rtol=0,
                                   atol=1e-6 * max(1e-12, np.max(rec["dissipated"])))


INCLINE = """
title = "block sliding to a stop on a 10 degree incline, stick-slip friction"
[model]
gravity = [0.0, 0.0, -9.81]
[[bodies]]
name = "block"
type = "rigid"
mass = 1.0
inertia = [0.01, 0.01, 0.01]
position = [-1.677608803012405e-07, 0.0, -9.51419230495488e-07]
velocity = [1.969615506024416, 0.0, -0.34729635533386066]
[[markers]]
body = "ground"
name = "floor"
axis = [0, 1, 0]
angle_deg = 10.0
[[markers]]
body = "block"
name = "c"
[[contacts]]
name = "slide"
type = "point-plane"
a = "ground.floor"
b = "block.c"
law = { type = "penalty", k = 1e7, c = 2000.0 }
[contacts.friction]
mu_static = 0.4
v_reg = 1e-4
model = "stick-slip"
stick_stiffness = 1e6
stick_damping = 1e3
[solver]
method = "hht"
alpha = -0.05
h = 2e-4
h_contact = 2e-4
t_end = 0.95
output_every = 25
"""


def test_a_stuck_contacts_energy_is_taken_at_each_output_on_both_engines(tmp_path):
    """A block slides 2 m/s down a 10° incline with μ = 0.4 and sticks at 0.9255 s. The
    NumPy path took every output's stick-spring energy about the final anchor (V(0) =
    4.3e5 J, a false 'energy balance' warning); now both engines take the stored energy
    of each output's own state: the same energies, the balance closed to 1e-4 J of the
    3.58 J dissipated, and at the start only gravity's potential."""
    path = tmp_path / "incline.toml"
    path.write_text(INCLINE)
    results = {e: run_case(load_case(path), engine=e)[1] for e in ("compiled", "python")}
    for result in results.values():
        assert result.status == "completed", result.message
        residual, involved = result.energy_balance()
        assert residual < 1e-4 and involved == pytest.approx(3.58, abs=0.01)
        assert abs(result.potential[0]) < 1e-4  # z ≈ 0: gravity's potential, no spring
    np.testing.assert_allclose(results["python"].potential, results["compiled"].potential,
                               rtol=0, atol=1e-6)


def test_a_kinetic_friction_above_the_static_one_is_warned_of():
    """μ_k > μ_s (sliding harder than breaking away) was accepted silently."""
    import warnings

    from flexmbs.errors import ModelWarning

    with pytest.warns(ModelWarning, match=r"mu_kinetic 0\.5 exceeds mu_static 0\.3"):
        Friction(0.3, mu_kinetic=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Friction(0.5, mu_kinetic=0.3)
        Friction(0.4)


def test_a_damped_hertz_laws_errors_name_it_and_the_restitution_it_takes():
    """A negative K of a Hunt–Crossley law was reported as 'Hertz: …'; the lowest e each
    law takes are those where its own restitution comes within 0.1 (0.63 and 0.70)."""
    from flexmbs.errors import ValidationError

    with pytest.raises(ValidationError, match="HuntCrossley: stiffness K"):
        HuntCrossley(K=-1.0, e=0.9)
    HuntCrossley(K=1e6, e=0.64)
    with pytest.raises(ValidationError, match=r"Hunt-Crossley takes e >= 0\.63"):
        HuntCrossley(K=1e6, e=0.62)
    LankaraniNikravesh(K=1e6, e=0.70)
    with pytest.raises(ValidationError, match=r"Lankarani-Nikravesh e >= 0\.70"):
        LankaraniNikravesh(K=1e6, e=0.69)
