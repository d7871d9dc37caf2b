"""Flexible bodies with ``nonlinear = true``: the modes enriched with their static modal
derivatives and polynomial elastic forces (flexmbs.model.flexible, flexmbs.modal.
derivatives; docs/theory_modal_derivatives.md).

Independent checks:
* the analytic Newton tangents of a nonlinear body, in every coupling mode, against
  central differences of the residual (hypothesis, random states);
* a cantilever under a dead tip load at P L²/EI = 1 against the elastica (the
  inextensible Euler beam solved here with scipy's solve_bvp): the enriched body's tip
  comes within 5e-3 L, the linear body's stays 6e-2 L away;
* the energy of a free, spinning, vibrating nonlinear beam is kept by the trapezoidal
  rule (T + U with the cubic and quartic strain energy);
* the compiled kernels against the NumPy reference (evaluations and a run);
* the errors, by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_bvp, trapezoid
from test_compiled import assert_same_evaluations
from test_tangents import MODES, random_state, residual

from flexmbs.analysis.static import static_equilibrium
from flexmbs.assembly import System
from flexmbs.assembly.tangents import residual_tangents
from flexmbs.cases import load_case
from flexmbs.cases.case import CaseError
from flexmbs.engine.tables import unsupported_reason
from flexmbs.errors import ModelError
from flexmbs.integrators import simulate
from flexmbs.modal import clamped_modes
from flexmbs.modal.derivatives import with_modal_derivatives
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.stiffening import with_stiffening
from flexmbs.model import ModelBuilder

EI, LENGTH = 1.0e3, 1.0
SECTION = BeamSection(A=1e-3, Iy=1e-5, Iz=1e-7, J=2e-7)  # bending in x–y the softest
MATERIAL = Material(E=EI / 1e-7, nu=0.3, rho=1000.0)


@pytest.fixture(scope="module")
def cantilever():
    fe = straight_beam(LENGTH, 16, SECTION, MATERIAL)
    data = clamped_modes(fe, "root", 3)
    return fe, data, with_modal_derivatives(data, fe)


def _clamped(data, nonlinear, tip_force=None, gravity=(0.0, 0.0, 0.0), coupling="two-way"):
    b = ModelBuilder(gravity=gravity)
    b.add_flexible_body("beam", data, nonlinear=nonlinear, coupling=coupling)
    b.add_marker("beam", "root", node=1)
    b.add_marker("beam", "tip", node=data.n_nodes)
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", "beam.root")
    if tip_force is not None:
        b.add_point_force("P", "beam.tip", tip_force)
    return System(b.finalize())


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=3, deadline=None)
@example(seed=10066)
@given(seed=st.integers(0, 100_000))
def test_nonlinear_body_tangents(cantilever, seed, mode):
    """Mass, Q_v, gravity, K ξ and the polynomial force, with a tip load and the clamp,
    against central differences of the residual: steps 1e-6 in q (truncation ~1e-12 of
    the stiffness), 0.1 in q̇ (the residual is quadratic in q̇, so the differences are
    exact whatever the step, and a large one keeps small the round-off of the stiff
    derivative rows, whose residual reaches 4e6: about 1e-6 of C at a step of 1e-3,
    seed 10066)."""
    _, _, data = cantilever
    rng = np.random.default_rng(seed)
    system = _clamped(data, True, tip_force=(1.0, 30.0, -5.0),
                      gravity=tuple(rng.normal(size=3) * 5), coupling=mode)
    q, qd, qdd, lam, t = random_state(system, rng, scale=0.05)
    derivative = 7 + np.flatnonzero([k.value == "derivative"
                                     for k in system.bodies[0].data.mode_kinds])
    q[derivative] *= 0.02  # second-order coordinates: ~1e-3 at ξ ~ 0.05
    if mode == "rigid":
        q[7:] = qd[7:] = 0.0
    k, c = residual_tangents(system, q, qd, qdd, lam, t)
    eye = np.eye(system.n_q)
    k_fd = np.column_stack([(residual(system, q + 1e-6 * e, qd, qdd, lam, t)
                             - residual(system, q - 1e-6 * e, qd, qdd, lam, t)) / 2e-6
                            for e in eye])
    c_fd = np.column_stack([(residual(system, q, qd + 0.1 * e, qdd, lam, t)
                             - residual(system, q, qd - 0.1 * e, qdd, lam, t)) / 0.2
                            for e in eye])
    np.testing.assert_allclose(k, k_fd, rtol=0, atol=1e-9 * np.abs(k_fd).max())
    np.testing.assert_allclose(c, c_fd, rtol=0, atol=1e-7 * max(1.0, np.abs(c_fd).max()))


def elastica_tip(alpha: float) -> tuple[float, float]:
    """(axial, transverse) tip displacement / L of an inextensible cantilever under a
    dead transverse tip load P, α = P L²/EI: θ″ = −α cos θ on s ∈ [0, 1], θ(0) = 0,
    θ′(1) = 0."""
    s = np.linspace(0.0, 1.0, 101)
    sol = solve_bvp(lambda s, y: np.vstack([y[1], -alpha * np.cos(y[0])]),
                    lambda a, b: np.array([a[0], b[1]]), s,
                    np.vstack([alpha * (s - s**2 / 2), alpha * (1 - s)]), tol=1e-10)
    assert sol.success
    fine = np.linspace(0.0, 1.0, 4001)
    theta = sol.sol(fine)[0]
    return trapezoid(np.cos(theta), fine) - 1.0, trapezoid(np.sin(theta), fine)


def test_the_elastica_at_moderate_deflection(cantilever):
    """P L²/EI = 1 (tip deflection 0.30 L, shortening 0.056 L)."""
    _, linear, enriched = cantilever
    exact = np.array(elastica_tip(1.0))
    errors = {}
    for name, data, nonlinear in (("linear", linear, False), ("derivatives", enriched, True)):
        system = _clamped(data, nonlinear, tip_force=(0.0, EI / LENGTH**2, 0.0))
        state = static_equilibrium(system)
        tip = system.bodies[0].nodal_displacements(state.q, "global")[-1]
        errors[name] = float(np.hypot(*(tip[:2] / LENGTH - exact)))
    assert errors["derivatives"] < 5e-3
    assert errors["linear"] > 6e-2


def _spinning_energy_error(h: float) -> tuple[float, float]:
    """(max |E − E(0)| / E(0), max |cubic + quartic energy| / E(0)) of a free steel
    beam (1 m, 20 × 10 mm, 2 clamped modes of its root frame and their derivatives)
    spinning at 30 rad/s about z and 5 rad/s about x, its first mode set vibrating,
    over 0.03 s of the trapezoidal rule (generalized-α, ρ∞ = 1)."""
    fe = straight_beam(1.0, 10, BeamSection.rectangle(0.02, 0.01), Material.steel())
    base = clamped_modes(fe, "root", 2)
    b = ModelBuilder()
    b.add_flexible_body("beam", with_modal_derivatives(base, fe), nonlinear=True,
                        angular_velocity=(5.0, 0.0, 30.0),
                        xi_dot=[0.1 * np.pi * base.frequencies[0], 0.0])
    system = System(b.finalize())
    res = simulate(system, 0.03, h, "generalized-alpha", rho_inf=1.0)
    assert res.success, res.message
    energy = res.kinetic + res.potential
    nonlinear = np.abs(system.bodies[0].elastic.energy(res.q[:, 7:]))
    return (float(np.max(np.abs(energy - energy[0])) / energy[0]),
            float(np.max(nonlinear) / energy[0]))


def test_a_free_spinning_nonlinear_beam_keeps_its_energy():
    """T + U (U with the cubic and quartic strain energy, a third of U here) is kept to
    the trapezoidal rule's order: the error falls at least as h², to a tenth of the
    cubic and quartic energy (a potential that did not belong to the forces would leave
    an error of that size at any step)."""
    coarse, share = _spinning_energy_error(1e-4)
    fine, _ = _spinning_energy_error(5e-5)
    assert share > 1e-5
    assert coarse / fine > 3.5 and fine < 0.1 * share, (coarse, fine, share)


def test_nonlinear_needs_derivatives_and_excludes_stiffening(cantilever):
    fe, data, enriched = cantilever
    b = ModelBuilder()
    b.add_flexible_body("plain", data, nonlinear=True)
    b.add_flexible_body("both", with_stiffening(enriched, fe), nonlinear=True,
                        stiffening=True)
    b.add_flexible_body("odd", enriched, nonlinear="yes")
    with pytest.raises(ModelError) as info:
        b.finalize()
    message = str(info.value)
    assert "FlexibleBody('plain'): nonlinear is on but its modal data carry no modal " \
           "derivatives" in message
    assert "FlexibleBody('both'): nonlinear and stiffening are exclusive" in message
    assert "FlexibleBody('odd'): nonlinear must be true or false, got 'yes'" in message


def test_the_engine_takes_it_and_stiffening_overrides_leave_it_alone(cantilever):
    fe, _, enriched = cantilever
    data = with_stiffening(enriched, fe)  # stiffening on by default would double count
    b = ModelBuilder()
    b.add_flexible_body("beam", data, nonlinear=True)
    system = System(b.finalize(), stiffening=True)
    body = system.bodies[0]
    assert body.nonlinear and not body.stiffening
    assert unsupported_reason(system) is None  # the compiled engine runs it
    assert body.n_modes > enriched.n_modes  # the derivative coordinates


@pytest.mark.parametrize("coupling", ["two-way", "one-way", "rigid", "no-Mrf"])
@settings(max_examples=3, deadline=None, derandomize=True)
@given(seed=st.integers(0, 100_000))
def test_compiled_evaluations_of_a_nonlinear_body_equal_the_reference(cantilever, seed,
                                                                     coupling):
    """Residual (with f(η) = ½C₃:ηη + ⅙C₄:ηηη), iteration matrix (with ∂f/∂η) and
    outputs (with the cubic and quartic strain energy) of the compiled kernels at random
    states, in every coupling mode, against the NumPy reference to round-off."""
    _, _, enriched = cantilever
    system = _clamped(enriched, True, tip_force=[0.0, -3.0, 1.0], gravity=(0.0, -9.81, 1.0),
                      coupling=coupling)
    assert_same_evaluations(system, np.random.default_rng(seed), scale=0.05)


def test_a_nonlinear_body_runs_the_same_on_both_engines(cantilever):
    """The enriched cantilever released from a large tip load's deflection, 0.2 s: the
    compiled run follows the NumPy run to 1e-10 m and keeps its statistics' engine."""
    _, _, enriched = cantilever
    runs = {}
    for engine in ("compiled", "python"):
        system = _clamped(enriched, True, tip_force=[0.0, -400.0, 0.0])
        runs[engine] = simulate(system, t_end=0.2, h=1e-3, engine=engine)
    assert runs["compiled"].statistics["engine"].startswith("compiled")
    np.testing.assert_allclose(runs["compiled"].q, runs["python"].q, rtol=0, atol=1e-10)


CASE = """
[[bodies]]
name = "arm"
type = "flexible"
nonlinear = {nonlinear}

[bodies.beam]
length = 1.0
elements = 8
modes = 2
section = {{ kind = "rectangle", width = 0.02, height = 0.01 }}

[[markers]]
body = "arm"
name = "root"
node = 1

[[markers]]
body = "ground"
name = "O"

[[joints]]
name = "clamp"
type = "fixed"
i = "ground.O"
j = "arm.root"

[solver]
h = 1e-3
t_end = 0.002
"""


def test_case_files_take_the_nonlinear_key(tmp_path):
    path = tmp_path / "nl.toml"
    path.write_text(CASE.format(nonlinear="true"))
    case = load_case(path)
    body = case.model.bodies["arm"]
    assert body.nonlinear and body.n_modes > 2
    path.write_text(CASE.format(nonlinear='"yes"'))
    with pytest.raises(CaseError, match=r"nonlinear.*must be true or false, got 'yes'"):
        load_case(path)


#: CASE (nonlinear) under gravity, with modal damping, a strip bending in its soft
#: plane, a tip load and a tip sensor, run for 0.05 s.
GRADIENT_CASE = "[model]\ngravity = [0.0, -9.81, 0.0]\n" + CASE.format(
    nonlinear="true\ndamping_ratio = 0.01").replace(
    "width = 0.02, height = 0.01", "width = 0.01, height = 0.02").replace(
    "t_end = 0.002", "t_end = 0.05") + """
[[markers]]
body = "arm"
name = "tip"
node = 9

[[forces]]
name = "P"
type = "point-force"
marker = "arm.tip"
value = [0.0, -60.0, 0.0]

[[sensors]]
name = "tip"
type = "marker"
quantity = "position"
marker = "arm.tip"
"""


def test_gradients_of_a_run_with_a_nonlinear_body_match_differences(tmp_path):
    """The adjoint gradient of the tip's final height of a nonlinear cantilever (tip
    deflection ~0.2 L) with respect to the tip load, the modal damping ratio, gravity
    and the stiffness scale (which scales C₃ and C₄ with K_ff), all analytic, against
    central differences of the run itself to 1e-5 (measured 5e-11 … 2e-9)."""
    from test_gradients import FD_REL, RTOL, as_override, case_objective

    from flexmbs.gradients import Objective, gradient

    path = tmp_path / "nonlinear.toml"
    path.write_text(GRADIENT_CASE)
    objective = Objective("tip", "final", component="y")
    keys = ["forces.P.value[1]", "bodies.arm.damping_ratio", "model.gravity[1]",
            "bodies.arm.stiffness_scale"]
    result = gradient(str(path), objective, keys, newton="converged")
    assert all(result.how[key] == "analytic" for key in keys), result.how
    for key in keys[:3]:
        p = result.values[key]
        d = FD_REL * abs(p)
        fd = (case_objective(str(path), objective, as_override(str(path), key, p + d))
              - case_objective(str(path), objective, as_override(str(path), key, p - d))
              ) / (2 * d)
        assert result.gradient[key] == pytest.approx(fd, rel=RTOL), key
    fd = (case_objective(str(path), objective, {}, ("arm", 1 + FD_REL))
          - case_objective(str(path), objective, {}, ("arm", 1 - FD_REL))) / (2 * FD_REL)
    assert result.gradient["bodies.arm.stiffness_scale"] == pytest.approx(fd, rel=RTOL)


def test_section_parameters_of_a_nonlinear_body_are_refused_by_name(tmp_path):
    """The beam section of a nonlinear body would change its modal derivatives, which
    have no derivative: refused naming the parameter and the body."""
    from flexmbs.gradients import Objective, gradient

    path = tmp_path / "nonlinear.toml"
    path.write_text(GRADIENT_CASE)
    with pytest.raises(ModelError, match=r"parameter 'bodies\.arm\.beam\.section\.height': "
                                         r"flexible body 'arm' is nonlinear"):
        gradient(str(path), Objective("tip", "final", component="y"),
                 ["bodies.arm.beam.section.height"], newton="converged")



@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 9), seed=st.integers(0, 2**31 - 1))
def test_the_polynomial_kernels_sum_each_sorted_index_tuple_once_exactly(m, seed):
    """The compiled force, tangent and energy (sums over sorted index tuples times their
    orderings) against ElasticPolynomial's full tensor contractions, for random fully
    symmetric C₃ and C₄, to round-off."""
    import itertools
    import math

    from flexmbs.elements.flexible_body.polynomial import (
        add_polynomial_force,
        add_polynomial_tangent,
        polynomial_energy,
    )
    from flexmbs.modal.derivative_data import ElasticPolynomial

    rng = np.random.default_rng(seed)

    def symmetric(shape):
        t = rng.standard_normal(shape)
        return sum(np.transpose(t, p) for p in itertools.permutations(range(len(shape)))
                   ) / math.factorial(len(shape))

    c3, c4, eta = symmetric((m,) * 3), symmetric((m,) * 4), rng.standard_normal(m)
    reference = ElasticPolynomial(c3, c4)
    force = np.zeros(m)
    add_polynomial_force(c3, c4, m, eta, force)
    tangent = np.zeros((m + 7, m + 7))
    add_polynomial_tangent(c3, c4, m, eta, tangent, 7)
    scale = 1e-13 * (1.0 + np.abs(c4).sum() * np.abs(eta).max() ** 3)
    np.testing.assert_allclose(force, reference.force(eta), rtol=0, atol=scale)
    np.testing.assert_allclose(tangent[7:, 7:], reference.tangent(eta), rtol=0, atol=scale)
    assert not tangent[:7].any() and not tangent[:, :7].any()
    assert polynomial_energy(c3, c4, m, eta) == pytest.approx(reference.energy(eta), rel=0,
                                                               abs=scale)
