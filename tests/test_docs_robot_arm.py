"""docs/tutorial_robot_arm.md runs, prints what the page shows, and each of its numbers
agrees with a hand calculation. The hand calculations are written here again, apart
from the page's own (the tip-body frequencies as a 4 × 4 determinant instead of the
page's 2 × 2, the rigid arm's mass matrix from the bodies' kinetic energy, the flexible
arm's first frequency also from the full FE model with the two joint angles, the
quasi-static deflection by the unit-load method, the joints' accelerations by second
differences), so that a slip in the page's hand calculation cannot agree with flexmbs by
construction. The page runs once for the module (about 15 s)."""

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.io
import scipy.linalg as sla
from scipy.integrate import quad, trapezoid
from scipy.optimize import brentq
from script_files import load_script  # tests/script_files.py

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "scripts" / "build_tutorial_robot_arm.py"

# the arm, as the page states it in its table [SI]
L1, M1, L2, MP, JP = 0.4, 1.2, 0.5, 0.5, 2e-4
B, H, T = 0.030, 0.015, 0.002
E, NU, RHO, G_ACC = 70e9, 0.33, 2700.0, 9.81
N_GEAR, J_M, ETA = 100.0, 2e-5, 0.9
KP, KD = (0.2, 0.6), (0.002, 0.006)


def _script():
    return load_script(SCRIPT)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    script = _script()
    text = script.PAGE.read_text()
    namespace, printed = script.run_page(text, tmp_path_factory.mktemp("robot_arm"))
    return SimpleNamespace(text=text, ns=namespace, printed=printed, script=script)


# ------------------------------------------------------------------ hand calculations
def section_constants():
    """A, I_y, I_z of the hollow rectangle (outer minus inner) [m², m⁴]."""
    bi, hi = B - 2 * T, H - 2 * T
    return B * H - bi * hi, (B * H**3 - bi * hi**3) / 12, (H * B**3 - hi * bi**3) / 12


A, IY, IZ = section_constants()
RHO_A = RHO * A
M_BEAM = RHO_A * L2
G_MOD = E / (2 * (1 + NU))


def tip_body_frequencies(EI, m, J, count):
    """The first ``count`` frequencies [Hz] of a clamped–free Euler–Bernoulli beam with a
    rigid body (mass m, rotary inertia J) at its end: w = C1 cosh βx + C2 sinh βx +
    C3 cos βx + C4 sin βx with w = w' = 0 at the root and EI w'' = ω² J w',
    EI w''' = −ω² m w at the tip, as the roots λ = βL of the 4 × 4 determinant."""
    mu, j = m / (RHO_A * L2), J / (RHO_A * L2**3)

    def det(lam):
        ch, sh, co, si = np.cosh(lam), np.sinh(lam), np.cos(lam), np.sin(lam)
        rows = np.array([
            [1.0, 0.0, 1.0, 0.0],                         # w(0) = 0
            [0.0, 1.0, 0.0, 1.0],                         # w'(0) = 0 (over β)
            [ch - lam**3 * j * sh, sh - lam**3 * j * ch,  # moment at the tip
             -co + lam**3 * j * si, -si - lam**3 * j * co],
            [sh + lam * mu * ch, ch + lam * mu * sh,      # shear force at the tip
             si + lam * mu * co, -co + lam * mu * si]])
        return np.linalg.det(rows) / ch**2

    grid = np.linspace(0.05, 15.0, 6000)
    vals = np.array([det(x) for x in grid])
    roots = [brentq(det, grid[i], grid[i + 1]) for i in np.flatnonzero(vals[:-1] * vals[1:] < 0)]
    return [(lam / L2) ** 2 * np.sqrt(EI / RHO_A) / (2 * np.pi) for lam in roots[:count]]


def rigid_arm_matrices():
    """Mass matrix [kg m²] of the rigid arm about (θ1, θ2) at θ = 0, from the kinetic
    energy of its bodies: the upper arm (a rod), the forearm (a rod, by Gauss
    quadrature), the payload (a point with J_p) and the two rotors n²J_m on the joint
    rates; the drives' stiffness [N m/rad]."""
    mass = np.zeros((2, 2))
    mass[0, 0] += M1 * L1**2 / 12 + M1 * (L1 / 2) ** 2
    # a point at s along the forearm moves by (L1 + s) θ1 + s θ2 across it
    nodes, weights = np.polynomial.legendre.leggauss(8)
    s, w = L2 * (nodes + 1) / 2, L2 * weights / 2
    for sk, wk in zip(s, w, strict=True):
        jac = np.array([L1 + sk, sk])
        mass += RHO_A * wk * np.outer(jac, jac)
    jac = np.array([L1 + L2, L2])
    mass += MP * np.outer(jac, jac) + JP * np.ones((2, 2))
    mass += np.diag([N_GEAR**2 * J_M] * 2)
    stiffness = np.diag([ETA * N_GEAR**2 * k for k in KP])
    return mass, stiffness


def gravity_upright():
    """−∂²V/∂θ² of gravity at the upright pose (V = g Σ m y) [N m/rad]."""
    s_fore = M_BEAM * L2 / 2 + MP * L2
    s_all = M1 * L1 / 2 + (M_BEAM + MP) * L1 + s_fore
    return -G_ACC * np.array([[s_all, s_fore], [s_fore, s_fore]])


def full_fe_arm_frequency(fe):
    """The first undamped frequency [Hz] of the arm linearized about θ = 0 without
    gravity, with the forearm's full FE model (every DOF but the clamped root's) and
    the two joint angles as coordinates: T = ½ (a θ̇ + u̇)ᵀ M_FE (a θ̇ + u̇) + the upper
    arm's and the rotors', a the nodal motion of a rigid turn about each joint."""
    mass, stiff = fe.mass.toarray(), fe.stiffness.toarray()
    x = fe.nodes[:, 0]
    turn = np.zeros((2, mass.shape[0]))
    turn[0, 1::6], turn[0, 5::6] = L1 + x, 1.0       # uy and rz of each node
    turn[1, 1::6], turn[1, 5::6] = x, 1.0
    free = np.arange(6, mass.shape[0])
    m_tt = turn @ mass @ turn.T + np.diag([M1 * L1**2 / 3 + N_GEAR**2 * J_M,
                                           N_GEAR**2 * J_M])
    m_tu = turn @ mass[:, free]
    full_m = np.block([[m_tt, m_tu], [m_tu.T, mass[np.ix_(free, free)]]])
    full_k = sla.block_diag(rigid_arm_matrices()[1], stiff[np.ix_(free, free)])
    return np.sqrt(sla.eigh(full_k, full_m, eigvals_only=True, subset_by_index=[0, 0])[0]) \
        / (2 * np.pi)


def tip_deflection(load, tip_force, tip_moment):
    """Tip deflection [m] of the clamped forearm under a distributed load q(s) [N/m],
    a tip force and a tip moment, by the unit-load method: ∫ M(x) m(x)/EI dx with
    m(x) = L − x."""
    def moment(x):
        return (quad(lambda s: load(s) * (s - x), x, L2)[0] + tip_force * (L2 - x)
                + tip_moment)
    return quad(lambda x: moment(x) * (L2 - x), 0.0, L2)[0] / (E * IZ)


# ------------------------------------------------------------------ the page
def test_every_output_block_is_what_its_code_prints(page):
    shown = [(b, out) for b, out in zip(page.script.blocks(page.text), page.printed,
                                        strict=True) if b.shown is not None]
    assert len(shown) >= 20
    for block, out in shown:
        problem = page.script.same_output(block.shown, out)
        assert problem is None, problem


def test_same_output_tolerates_the_last_digit_only():
    script = _script()
    assert script.same_output("f = 7.4615 Hz", "f = 7.4616 Hz") is None
    assert script.same_output("f = 7.4615 Hz", "f = 7.4619 Hz") is not None
    assert script.same_output("f = 7.4615 Hz", "f = 7.4615 s") is not None
    assert script.same_output("2.0e-05", "2.1e-05") is None


def test_section_constants(page):
    section, ns = page.ns["section"], page.ns
    np.testing.assert_allclose([section.A, section.Iy, section.Iz], [A, IY, IZ], rtol=1e-12)
    assert ns["c"] == pytest.approx(B / 2, rel=1e-12)
    thin = T * (B - T) ** 3 / 6 + T * (H - T) * (B - T) ** 2 / 2
    assert abs(thin / IZ - 1) < 0.01
    assert ns["Iz_thin"] == pytest.approx(thin, rel=1e-12)
    np.testing.assert_allclose(2 * (B + H - 2 * T) * T, A, rtol=1e-12)   # exact for a box


def test_clamped_forearm_against_the_tip_body_equation(page):
    ns = page.ns
    freqs = ns["forearm"].frequencies
    across = tip_body_frequencies(E * IY, MP, JP, 2)
    in_plane = tip_body_frequencies(E * IZ, MP, JP, 1)
    assert freqs[0] == pytest.approx(across[0], rel=1e-5)
    assert freqs[1] == pytest.approx(in_plane[0], rel=1e-5)
    assert freqs[2] == pytest.approx(across[1], rel=1e-5)
    # twisting: a shaft with a disc, βL tan βL = ρ I_p L/J
    rho_ip = RHO * (IY + IZ)
    lam = brentq(lambda v: v * np.tan(v) - rho_ip * L2 / JP, 1e-9, np.pi / 2 - 1e-12)
    bredt = 4 * ((B - T) * (H - T)) ** 2 * T / (2 * (B - T + H - T))
    twist = lam / L2 * np.sqrt(G_MOD * bredt / rho_ip) / (2 * np.pi)
    assert freqs[3] == pytest.approx(twist, rel=1e-5)
    # the page's own hand values are these
    assert ns["across"] == pytest.approx(across, rel=1e-9)
    assert ns["in_plane"] == pytest.approx(in_plane, rel=1e-9)
    assert ns["twist"] == pytest.approx(twist, rel=1e-9)
    assert abs(ns["rayleigh"] / in_plane[0] - 1) < 0.002


def test_statics_at_the_start_pose(page):
    ns = page.ns
    s_fore = M_BEAM * L2 / 2 + MP * L2
    s_all = M1 * L1 / 2 + (M_BEAM + MP) * L1 + s_fore
    k1, k2 = (ETA * N_GEAR**2 * k for k in KP)
    assert ns["tau1"] == pytest.approx(G_ACC * s_all, rel=1e-4)
    assert ns["tau2"] == pytest.approx(G_ACC * s_fore, rel=1e-4)
    assert ns["theta1"] == pytest.approx(-G_ACC * s_all / k1, rel=1e-4)
    assert ns["theta2"] == pytest.approx(-G_ACC * s_fore / k2, rel=1e-4)
    bending = (MP * G_ACC * L2**3 / (3 * E * IZ) + RHO_A * G_ACC * L2**4 / (8 * E * IZ))
    sag = -((L1 + L2) * G_ACC * s_all / k1 + L2 * G_ACC * s_fore / k2 + bending)
    assert ns["sag"] == pytest.approx(sag, rel=1e-3)
    sigma = G_ACC * s_fore * (B / 2) / IZ
    assert abs(ns["sigma"][2] / sigma - 1) < 0.015          # top, 4 modes
    assert ns["sigma"][0] < 0 < ns["sigma"][2]              # the top in tension
    assert abs(ns["sigma16"][2] / sigma - 1) < 0.002        # 16 modes
    assert abs(ns["sigma16"][2] / sigma - 1) < abs(ns["sigma"][2] / sigma - 1)
    # ... while the arm's frequencies are converged with 4 modes
    for m4, m16 in zip(ns["modes"][:4], ns["modes16"][:4], strict=True):
        assert m4.frequency_hz == pytest.approx(m16.frequency_hz, rel=1e-4)


def test_rigid_arm_against_its_hand_model(page):
    ns = page.ns
    mass, stiff = rigid_arm_matrices()
    np.testing.assert_allclose(ns["M_hand"], mass, rtol=1e-12)
    omega = np.sqrt(sla.eigh(stiff, mass, eigvals_only=True))
    beta = KD[0] / KP[0]
    assert KD[1] / KP[1] == pytest.approx(beta, rel=1e-12)
    modes = ns["rigid_modes"]
    assert len(modes) == 2
    for mode, w in zip(modes, omega, strict=True):
        assert mode.frequency_hz == pytest.approx(w / (2 * np.pi), rel=1e-4)
        assert mode.damping_ratio == pytest.approx(beta * w / 2, rel=1e-4)


def test_flexible_arm_first_frequency_and_dunkerley_sum(page):
    ns = page.ns
    first = ns["undamped"][0] / (2 * np.pi)
    assert first == pytest.approx(full_fe_arm_frequency(ns["fe"]), rel=1e-4)
    assert ns["f_rayleigh"] == pytest.approx(first, rel=1e-3)
    mass, stiff = rigid_arm_matrices()
    rigid_sum = np.trace(np.linalg.solve(stiff, mass))
    forearm_sum = np.sum(1 / (2 * np.pi * ns["forearm"].frequencies) ** 2)
    assert ns["flexible_sum"] == pytest.approx(rigid_sum + forearm_sum, rel=1e-3)
    assert ns["parts_sum"] == pytest.approx(rigid_sum + forearm_sum, rel=1e-9)


def test_residual_vibration_and_settling(page):
    ns = page.ns
    first = ns["first"]
    assert ns["f_residual"] == pytest.approx(first.damped_frequency_hz, rel=1e-3)
    assert first.damped_frequency_hz == pytest.approx(
        first.frequency_hz * np.sqrt(1 - first.damping_ratio**2), rel=1e-6)
    half_period = 1 / (2 * first.damped_frequency_hz)
    assert abs(ns["t_settle"] - 4 / ns["decay"]) < half_period
    mass, stiff = rigid_arm_matrices()
    w2 = sla.eigh(stiff + gravity_upright(), mass, eigvals_only=True)
    assert ns["f_rigid_up"] == pytest.approx(np.sqrt(w2[0]) / (2 * np.pi), rel=1e-9)
    assert ns["f_rayleigh_up"] == pytest.approx(ns["undamped_up"][0] / (2 * np.pi),
                                                rel=1e-3)


def test_case_file_and_welded_payload(page):
    ns = page.ns
    for mine, case, plain, welded in zip(ns["modes"][:4], ns["case_f"], ns["case_f_plain"],
                                         ns["welded_modes"][:4], strict=True):
        assert plain == pytest.approx(mine.frequency_hz, rel=1e-8)   # same modal data
        assert 0.0 <= case / plain - 1 < 1e-5          # gravity's small pull, stiffening
        assert welded.frequency_hz == pytest.approx(mine.frequency_hz, rel=1e-4)
    # the page's TOML excerpt is the case file's
    case = (ROOT / "cases" / "robot_arm.toml").read_text()
    excerpt = re.search(r"```toml\n(.*?)```", page.text, re.S).group(1)
    for line in excerpt.strip().splitlines():
        assert line in case.splitlines(), line


def _unit_deflections():
    """Tip deflections [m] of the clamped forearm under a unit uniform load, a load
    rising as s (1 N/m per m), a unit tip force and a unit tip moment."""
    return (tip_deflection(lambda s: 1.0, 0.0, 0.0), tip_deflection(lambda s: s, 0.0, 0.0),
            tip_deflection(lambda s: 0.0, 1.0, 0.0), tip_deflection(lambda s: 0.0, 0.0, 1.0))


def _quasi_static(signals):
    """The forearm's own and the payload's parts of its quasi-static tip deflection [m]
    over the run, with the joints' angular accelerations by second differences."""
    t = signals.t
    th1, th2 = signals.joint_angles["shoulder"], signals.joint_angles["elbow"]
    h = np.diff(t)
    assert np.allclose(h, h[0], rtol=1e-6)

    def second(y):
        out = np.empty_like(y)
        out[1:-1] = np.diff(y, 2) / h[0] ** 2
        out[0], out[-1] = out[1], out[-2]
        return out

    a1, a2, phi = second(th1), second(th2), th1 + th2
    uniform, rising, force, moment = _unit_deflections()
    across = G_ACC * np.cos(phi)
    own = RHO_A * ((a1 * L1 + across) * uniform + (a1 + a2) * rising)
    payload = MP * (a1 * (L1 + L2) + a2 * L2 + across) * force + JP * (a1 + a2) * moment
    return own, payload


def test_coupling_study_from_equilibrium(page):
    ns = page.ns
    peak = ns["peak"]
    signals = ns["study"].records["two-way"].signals
    own, payload = _quasi_static(signals)
    quasi_static = own + payload
    assert peak["two-way"] == pytest.approx(1e3 * quasi_static.max(), rel=0.01)
    assert ns["w_hand"].max() == pytest.approx(1e3 * quasi_static.max(), rel=1e-3)
    # the runs start at rest, bent by the weights: the cantilever's sag
    sag = G_ACC * (MP * L2**3 / 3 + RHO_A * L2**4 / 8) / (E * IZ)
    tip0 = np.linalg.norm(signals.tip["forearm"][0])
    assert 1e3 * tip0 == pytest.approx(1e3 * sag, rel=1e-3)
    # no-M_rf: the move's loads do not reach the modes, gravity's do
    assert peak["no-Mrf"] == pytest.approx(1e3 * sag, rel=1e-3)
    assert peak["rigid"] == 0.0
    # one-way with the payload in the FE model: what it leaves out (the forearm's effect
    # on the arm's motion) moves the arm's first frequency by 1.4 %
    shift = 1 - ns["undamped"][0] / (2 * np.pi) / ns["f_rigid"]
    assert 0.0 < 1 - peak["one-way"] / peak["two-way"] < shift
    # the welded payload: two-way the same arm; one-way the forearm's own loads only
    welded = ns["welded"]
    assert welded["two-way"][0] == pytest.approx(1e3 * sag, rel=1e-3)
    assert welded["two-way"].max() == pytest.approx(peak["two-way"], rel=1e-3)
    own_sag = G_ACC * RHO_A * L2**4 / 8 / (E * IZ)
    assert welded["one-way"][0] == pytest.approx(1e3 * own_sag, rel=1e-3)
    k = np.argmax(np.linalg.norm(signals.tip["forearm"], axis=1))
    share = own[k] / quasi_static[k]
    assert ns["own_share"] == pytest.approx(share, rel=1e-3)
    assert abs(welded["one-way"].max() / peak["two-way"] - share) < 0.005


def test_stiffening_is_the_pull_less_gravitys_push(page):
    ns = page.ns
    x = np.linspace(0.0, L2, 4001)
    omega, phi = ns["Omega"], ns["phi"][ns["k_peak"]]
    # tension at x: the centrifugal pull of everything beyond x (the forearm's mass at
    # L1 + s from the shoulder's axis, the payload at L1 + L2) less gravity's component
    # along the forearm on it
    tension = np.array([RHO_A * quad(lambda s: omega**2 * (L1 + s) - G_ACC * np.sin(phi),
                                     xi, L2)[0] for xi in x])
    tension += MP * (omega**2 * (L1 + L2) - G_ACC * np.sin(phi))
    slope = 3 * x * (2 * L2 - x) / (2 * L2**3)
    k_g = trapezoid(tension * slope**2, x) / (3 * E * IZ / L2**3)
    assert ns["k_g"] == pytest.approx(k_g, rel=1e-4)
    assert ns["change"] == pytest.approx(k_g, rel=0.01)
    assert 7 < ns["k_g"] / ns["own"] < 9                          # "an eighth"


def test_truncation_levels(page):
    rows = {row["modes"]: row for row in page.ns["trunc"].rows()}
    # the case's clamped modes are those of the forearm with its payload
    across = tip_body_frequencies(E * IY, MP, JP, 2)
    in_plane = tip_body_frequencies(E * IZ, MP, JP, 1)
    expected = {1: across[0], 2: in_plane[0], 3: across[1], 4: page.ns["twist"]}
    for level, f in expected.items():
        assert rows[level]["highest frequency [Hz]"] == pytest.approx(f, rel=1e-5)
    error = {n: row["tip error max / reference peak"] for n, row in rows.items()}
    assert error[1] == pytest.approx(1.0, abs=1e-9)      # only a mode across the plane
    assert error[3] == pytest.approx(error[2], rel=1e-6)  # across the plane, twisting:
    assert error[4] == pytest.approx(error[2], rel=1e-6)  # they add nothing
    assert error[1] > error[2] > error[7] == 0.0


def test_fe_route_against_the_shear_correction(page, tmp_path):
    ns = page.ns
    fe_freq, beam_freq = ns["fe_forearm"].frequencies, ns["forearm"].frequencies
    for k, I, k_shear in ((1, IZ, 2 * (B - T) * T / A), (0, IY, 2 * (H - T) * T / A)):
        ratio = 1 / np.sqrt(1 + 3 * E * I / (k_shear * G_MOD * A * L2**2))
        assert abs((fe_freq[k] / beam_freq[k] - 1) / (ratio - 1) - 1) < 0.1
    # exported Euler–Bernoulli elements (the beam route's) reduce to the same modes
    import flexmbs as fm
    from flexmbs.cli.main import main

    fe = fm.straight_beam(L2, 20, ns["section"], fm.Material.aluminium())
    scipy.io.mmwrite(str(tmp_path / "M.mtx"), fe.mass, symmetry="symmetric")
    scipy.io.mmwrite(str(tmp_path / "K.mtx"), fe.stiffness, symmetry="symmetric")
    np.savetxt(tmp_path / "nodes.csv", np.column_stack([fe.node_ids, fe.nodes]),
               delimiter=",", fmt=["%d", "%.17g", "%.17g", "%.17g"])
    out = tmp_path / "eb.fmd.h5"
    assert main(["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
                 str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "nodes.csv"),
                 "--node-set", "elbow=plane:x=0", "--node-set", "tip=plane:x=0.5",
                 "--add-mass", "tip=0.5,2e-4,2e-4,2e-4", "--clamp-nodes", "elbow",
                 "--modes", "4", "-o", str(out), "--json"]) == 0
    np.testing.assert_allclose(fm.read_modal(out).frequencies, beam_freq[:4], rtol=1e-8)
    # and the arm takes the reduced file as it takes the built-in forearm
    from flexmbs.analysis import eigenmodes, linearize, static_equilibrium

    arm = ns["robot_arm"](ns["move"], forearm_data=ns["fe_forearm"])
    rest = static_equilibrium(arm)
    mode = next(m for m in eigenmodes(linearize(arm, rest.q, lam=rest.lam)) if not m.rigid)
    assert mode.frequency_hz == pytest.approx(ns["modes"][0].frequency_hz, rel=1e-3)


def _claim(text, phrase):
    assert phrase in text, f"the page no longer says {phrase!r}"


def test_numbers_in_the_text(page):
    """The numbers the page's prose states, against what they stand for."""
    text, ns = re.sub(r"\s+", " ", page.text), page.ns
    _claim(text, f"m_b = ρ A L₂ = {M_BEAM:.4f} kg")
    _claim(text, f"√(3 I_z/A) = {1e3 * np.sqrt(3 * IZ / A):.2f} mm instead of 15 mm, "
                 f"{100 * (np.sqrt(3 * IZ / A) / (B / 2) - 1):.2f} % too high")
    _claim(text, f"the payload is {MP / M_BEAM:.1f} times the forearm's mass")
    period_error = (2 * np.pi * ns["modes"][0].frequency_hz * 1e-3) ** 2 / 12
    _claim(text, f"(ωh)²/12 = {period_error:.0e}".replace("e-04", "·10⁻⁴"))
    _claim(text, f"the {1e3 * abs(ns['sag']):.1f} mm sag")
    _claim(text, f"the forearm bends by {1e3 * ns['bend']:.2f} mm")
    _claim(text, f"τ₁/(η n) = {ns['tau1'] / (ETA * N_GEAR):.3f} N m")
    s_fore = M_BEAM * L2 / 2 + MP * L2
    _claim(text, f"own weight ({100 * (M_BEAM * L2 / 2) / s_fore:.0f} % of the moment)")
    _claim(text, f"the root stress is small, {ns['sigma_hand'] / 1e6:.1f} MPa")
    _claim(text, f"at {ns['modes'][3].frequency_hz:.0f} Hz, well above its "
                 f"{ns['forearm'].frequencies[1]:.1f} Hz when clamped")
    _claim(text, f"equilibrium's {1e3 * abs(ns['theta1']):.1f} mrad tilt")
    shift = 100 * (1 - ns["undamped"][0] / (2 * np.pi) / ns["f_rigid"])
    _claim(text, f"lowers the arm's first frequency by {shift:.1f} %")
    _claim(text, f"half a damped period ({1e3 / (2 * ns['first'].damped_frequency_hz):.0f} ms)")
    _claim(text, f"section 5's {1e3 * ns['bend']:.2f} mm")
    _claim(text, f"hangs {1e3 * abs(ns['theta1'] + ns['theta2']):.0f} mrad below the horizontal")
    welded = ns["welded"]["one-way"].max() / ns["peak"]["two-way"]
    _claim(text, f"which make {100 * ns['own_share']:.0f} % of the deflection")
    _claim(text, f"one-way misses {100 * (1 - welded):.0f} % of it")
    _claim(text, f"one-way peak is "
                 f"{100 * (1 - ns['peak']['one-way'] / ns['peak']['two-way']):.1f} % below")
    rise = max(c / p - 1 for c, p in zip(ns["case_f"], ns["case_f_plain"], strict=True))
    _claim(text, f"rise by up to {rise:.0e}".replace("e-06", "·10⁻⁶"))
    _claim(text, f"one-way run is within "
                 f"{np.ceil(100 * (1 - ns['peak']['one-way'] / ns['peak']['two-way'])):.0f} %")
    assert abs(ns["k_g"] / ns["own"] - 8) < 1                   # "an eighth"
    top = 1.875 * (np.pi / 2) / 0.5
    f_in = ns["forearm"].frequencies[1]
    _claim(text, f"= {top:.1f} rad/s, about {round(2 * np.pi * f_in / top, -1):.0f} times")
    _claim(text, f"(2π · {f_in:.1f} Hz = {2 * np.pi * f_in:.0f} rad/s)")
    error = {row["modes"]: row["tip error max / reference peak"]
             for row in ns["trunc"].rows()}
    _claim(text, f"brings it to {100 * error[2]:.2f} %")
    _claim(text, f"Rayleigh's estimate of its frequency was within "
                 f"{100 * abs(ns['rayleigh'] / ns['in_plane'][0] - 1):.1f} %")
    fe_shift = 100 * abs(ns["fe_forearm"].frequencies[1] / ns["forearm"].frequencies[1] - 1)
    _claim(text, f"agree to {fe_shift:.1f} %")
