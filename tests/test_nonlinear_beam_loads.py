"""Distributed loads on a nonlinear beam (docs/nonlinear_beam.md, "Distributed loads"):
per metre or per kilogram, in global axes or following the section (a follower load),
against Timoshenko's cantilever in linear bending, against the beam's own gravity, and
against an independent large-deflection solution (scipy's solve_bvp of the elastica
under a distributed load, fixed or following the deformed beam)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_bvp

from flexmbs.analysis import static_equilibrium
from flexmbs.assembly import System
from flexmbs.errors import ModelError
from flexmbs.modal.fe.beam import BeamSection, Material
from flexmbs.model import ModelBuilder

SECTION = BeamSection(A=1.0, Iy=1e-6, Iz=2e-6, J=2e-6, ky=1.0, kz=1.0)
MATERIAL = Material(E=1e6, nu=0.0, rho=1.0)  # EI_y = 1 N m², GA = 5e5 N, ρA = 1 kg/m


def _cantilever(n, load, *, weights="length", frame="global", gravity=(0, 0, 0),
                axis=(1, 0, 0), up=(0, 0, 1), stiffness=None):
    b = ModelBuilder(gravity=gravity)
    b.add_nonlinear_beam("arm", 1.0, n, SECTION, MATERIAL, axis=axis, up=up,
                         stiffness=stiffness)
    b.add_marker("ground", "clamp", orientation=np.column_stack(
        [axis, np.cross(up, axis), up]))
    b.add_marker("arm", "root", node="root")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    if load is not None:
        b.add_distributed_load("wind", "arm", load, weights=weights, frame=frame)
    return System(b.finalize())


def _node_positions(system, rest, n):
    return np.array([[rest.coordinate(f"arm/{k}.{c}") for c in "xyz"]
                     for k in range(1, n + 2)])


@pytest.mark.parametrize("n", [1, 3, 8])
def test_a_uniform_load_bends_the_cantilever_as_timoshenko_says_at_every_node(n):
    """q = 1e-4 N/m across the beam (deflection 1e-5 L): every node's deflection is
    Timoshenko's w(x) = q x²(6L² − 4Lx + x²)/24EI + q(Lx − x²/2)/kGA to 1e-7, with any
    number of elements (the consistent loads with the nodally exact stiffness); the
    same loads without the end moments miss by far more."""
    q, ei, ga = 1e-4, 1.0, 5e5
    system = _cantilever(n, [0.0, 0.0, -q])
    rest = static_equilibrium(system)
    x = np.linspace(0.0, 1.0, n + 1)
    exact = q * x**2 * (6 - 4 * x + x**2) / (24 * ei) + q * (x - x**2 / 2) / ga
    found = -_node_positions(system, rest, n)[:, 2]
    np.testing.assert_allclose(found, exact, rtol=1e-7, atol=1e-14)
    # the node loads carry q l_k; the arms the end moments (L_e²/12) t × f
    names = sorted(f.name for f in system.model.forces if f.name.startswith("wind/"))
    assert names == sorted([*(f"wind/{k}" for k in range(1, n + 2)), "wind/root-arm",
                            "wind/tip-arm"])
    total = sum(np.asarray(f.value) for f in system.model.forces
                if f.name.startswith("wind/"))
    np.testing.assert_allclose(total, [0.0, 0.0, -q], rtol=1e-14)
    if n == 1:  # lumped loads alone (q L/2 at each node): the tip misses by ~1/6
        lumped = ModelBuilder()
        lumped.add_nonlinear_beam("arm", 1.0, 1, SECTION, MATERIAL)
        lumped.add_marker("ground", "clamp")
        lumped.add_marker("arm", "root", node="root")
        lumped.add_marker("arm", "tip", node="tip")
        lumped.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
        lumped.add_point_force("half", "arm.tip", [0.0, 0.0, -q / 2])
        tip = -static_equilibrium(System(lumped.finalize())).coordinate("arm/2.z")
        assert abs(tip - exact[-1]) > 1e4 * 1e-7 * exact[-1]


@pytest.mark.parametrize("n", [2, 5])
def test_a_load_per_kilogram_is_the_beams_own_gravity(n):
    """A distributed load of g [N/kg] with weights "mass" and no gravity puts the beam
    where gravity g does (the consistent gravity of the Hermite centre line), to 1e-12
    of the deflection, at a large deflection (tip ~0.3 L)."""
    g = np.array([0.0, 0.0, -2.5])
    by_gravity = _cantilever(n, None, gravity=g)
    by_load = _cantilever(n, g, weights="mass")
    a = _node_positions(by_gravity, static_equilibrium(by_gravity), n)
    b = _node_positions(by_load, static_equilibrium(by_load), n)
    assert -a[-1, 2] > 0.2
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * abs(a[-1, 2]))


def _elastica(q, follower: bool):
    """Tip (x, y) / L of an inextensible cantilever of unit length and unit EI under a
    uniform load q per length across it: fixed along +y, or along the deformed beam's
    normal (follower). Unknowns x, y, θ, M, N_x, N_y; N(s) the resultant of the loads
    on [s, L] and M their moment about r(s): x' = cos θ, y' = sin θ, θ' = M,
    M' = −(cos θ N_y − sin θ N_x), N' = −f(s), with M = N = 0 at the tip."""
    def bc(z0, z1):
        return np.array([z0[0], z0[1], z0[2], z1[3], z1[4], z1[5]])

    s = np.linspace(0.0, 1.0, 201)
    guess = np.zeros((6, s.size))
    guess[0] = s
    sol = None
    for step in np.linspace(0.0, 1.0, 11)[1:]:  # continuation in the load
        def rhs(s, z, qq=step * q):
            th, m, nx, ny = z[2:]
            fx, fy = ((-qq * np.sin(th), qq * np.cos(th)) if follower
                      else (np.zeros_like(s), qq * np.ones_like(s)))
            return np.vstack([np.cos(th), np.sin(th), m,
                              -(np.cos(th) * ny - np.sin(th) * nx), -fx, -fy])

        sol = solve_bvp(rhs, bc, s, guess, tol=1e-10, max_nodes=100000)
        assert sol.success, sol.message
        guess = sol.sol(s)
    return sol.sol(1.0)[:2]


@pytest.mark.parametrize("follower", [False, True])
@pytest.mark.parametrize("q", [3.0, 8.0])
def test_large_deflection_under_a_distributed_load_matches_the_elastica(q, follower):
    """qL³/EI = 3 and 8, fixed or following the beam (the load along each node's section
    axis z): the tip of 16 elements (EA and GA 1e7 EI/L², nearly inextensible) within
    5e-6 L of the elastica's (solve_bvp, 1e-10; measured 2.2e-7 … 1.8e-6 L), 4 elements
    within 1e-3 L, and each doubling of the elements divides the error by at least 8
    (measured 14–19: fourth order, as the beam's frequencies converge)."""
    x_ref, y_ref = _elastica(q, follower)
    stiff = [1e7, 1e7, 1e7, 1.0, 1.0, 1.0]
    errors = []
    for n in (4, 8, 16):
        system = _cantilever(n, [0.0, 0.0, q], frame="body" if follower else "global",
                             stiffness=stiff)
        rest = static_equilibrium(system)
        tip = _node_positions(system, rest, n)[-1]
        errors.append(float(np.hypot(tip[0] - x_ref, tip[2] - y_ref)))
        assert abs(tip[1]) < 1e-12
    assert errors[2] < 5e-6 and errors[0] < 1e-3, errors
    assert errors[0] > 8 * errors[1] and errors[1] > 8 * errors[2], errors


@settings(max_examples=15, deadline=None)
@given(angle=st.floats(-np.pi, np.pi), tilt=st.floats(-1.2, 1.2))
def test_a_follower_load_turns_with_the_beam(angle, tilt):
    """A cantilever laid along any direction (axis turned by a heading and a tilt, its
    section z axis kept in the vertical plane through it) under a follower load along
    its section z: the deflected shape, seen in the beam's own frame, is the same (to
    1e-9 of the tip's travel) — the load follows the section, whatever the layout."""
    heading = np.array([np.cos(angle), np.sin(angle), 0.0])
    axis = np.cos(tilt) * heading + np.sin(tilt) * np.array([0, 0, 1.0])
    up = np.cross(axis, np.cross([0, 0, 1.0], axis))
    up /= np.linalg.norm(up)
    frame = np.column_stack([axis, np.cross(up, axis), up])
    n = 4
    base = _cantilever(n, [0.0, 0.0, 2.0], frame="body")
    turned = _cantilever(n, [0.0, 0.0, 2.0], frame="body", axis=tuple(axis), up=tuple(up))
    a = _node_positions(base, static_equilibrium(base), n)
    b = _node_positions(turned, static_equilibrium(turned), n) @ frame
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-9 * np.max(np.abs(a[-1] - [1, 0, 0])))


def test_a_callable_load_is_each_nodes_share_of_it_and_runs_on_the_compiled_engine():
    """A load f(t, state) on the beam: at each node its share of the value (the same
    shares as a constant's), and a run with it equals the run with the constant value
    it returns (both engines; the compiled one calls it back)."""
    from flexmbs.integrators import simulate

    runs = {}
    for label, load in (("constant", [0.0, 0.0, -0.3]),
                        ("callable", lambda t, state: [0.0, 0.0, -0.3])):
        system = _cantilever(4, load)
        for engine in ("compiled", "python"):
            runs[label, engine] = simulate(system, t_end=0.02, h=1e-3, engine=engine).q
    for key, q in runs.items():
        np.testing.assert_allclose(q, runs["constant", "python"], rtol=0, atol=1e-10,
                                   err_msg=str(key))


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(weights="volume"), "weights must be one of"),
    (dict(weights=[1.0, 2.0]), "weights must have 5 finite entries"),
    (dict(frame="marker"), "frame must be 'global' or 'body'"),
    (dict(load=[1.0, np.nan, 0.0]), "value must be 3 finite numbers"),
])
def test_bad_beam_loads_name_the_load_the_beam_and_the_field(kwargs, match):
    b = ModelBuilder()
    b.add_nonlinear_beam("arm", 1.0, 4, SECTION, MATERIAL)
    args = dict(load=[0.0, 0.0, 1.0], weights="length", frame="global") | kwargs
    b.add_distributed_load("wind", "arm", args.pop("load"), **args)
    with pytest.raises(ModelError, match=rf"distributed load 'wind' on nonlinear beam "
                                         rf"'arm': {match}"):
        b.finalize()


def test_a_case_file_spreads_a_load_along_its_beam(tmp_path):
    """The elastica case with its tip load replaced by a distributed load [N/m] on the
    strip (`[[forces]] type = "distributed"`, weights "length") rests where the same
    load declared in Python puts it (the case file and the builder agree exactly)."""
    from pathlib import Path

    from flexmbs.cases import load_case
    from flexmbs.cases.loader import case_system

    text = (Path(__file__).resolve().parents[1] / "cases" / "elastica.toml").read_text()
    text = text.replace('type = "point-force"\nmarker = "strip.tip"',
                        'type = "distributed"\nbody = "strip"\nweights = "length"')
    text = text.replace("value = [0.0, 0.0, -14.0]", "value = [0.0, 0.0, -20.0]")
    path = tmp_path / "strip_wind.toml"
    path.write_text(text)
    system = case_system(load_case(path))
    from_case = static_equilibrium(system).coordinate("strip/17.z")
    b = ModelBuilder()
    b.add_nonlinear_beam("strip", 1.0, 16, {"kind": "rectangle", "width": 0.02,
                                            "height": 0.002}, "steel")
    b.add_marker("ground", "clamp")
    b.add_marker("strip", "root", node="root")
    b.add_joint("clamp", "fixed", "ground.clamp", "strip.root")
    b.add_distributed_load("load", "strip", [0.0, 0.0, -20.0], weights="length")
    from_python = static_equilibrium(System(b.finalize())).coordinate("strip/17.z")
    assert from_case < -0.3
    assert from_case == pytest.approx(from_python, rel=1e-12)
