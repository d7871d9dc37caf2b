"""The validation report: run every problem, compare with its reference, write
docs/validation.md (summary table first) — never typed in by hand.

    python validation/run.py                # all problems (about 4 minutes)
    python validation/run.py --workers 2    # in two processes
    python validation/run.py --out /tmp/v   # elsewhere (the tests do this)

Each problem returns rows: problem, source, quantity, reference, flexmbs, error, run
time. Problems still to be added are listed at the end of the page.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.integrate import trapezoid

from flexmbs.modal.stiffening import with_stiffening
from flexmbs.modal.stress import static_correction, with_stress

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # slider_crank_reference


def _row(problem, source, quantity, reference, value, error, seconds, limit=None):
    """One figure of the report. ``limit`` is the largest error the reference's own
    accuracy allows (None: the difference is reported, not bounded — where the model
    is known to differ from the reference, which is what the row shows)."""
    return {"problem": problem, "source": source, "quantity": quantity,
            "reference": reference, "flexmbs": value, "error": error, "limit": limit,
            "run time [s]": seconds}


def verdict(row) -> str:
    """"pass" within the limit, "FAIL" beyond it, "reported" when unbounded."""
    if row["limit"] is None:
        return "reported"
    return "pass" if row["error"] <= row["limit"] else "FAIL"


def pendulum():
    """The source documents' pendulum (0.5 m, 1 kg), 30°, generalized-α h = 1 ms: period vs
    4√(L/g) K(sin²15°)."""
    from scipy.special import ellipk

    from flexmbs.cases import load_case, run_case

    start = time.perf_counter()
    _, res = run_case(load_case(ROOT / "cases" / "seed_pendulum.toml"))
    seconds = time.perf_counter() - start
    theta = 2 * np.arcsin(res.coordinate("bob.e3"))
    t = res.t
    idx = np.flatnonzero((theta[:-1] > 0) & (theta[1:] <= 0))
    crossings = t[idx] - theta[idx] * (t[idx + 1] - t[idx]) / (theta[idx + 1] - theta[idx])
    period = float(np.mean(np.diff(crossings))) if len(crossings) > 1 else float("nan")
    exact = 4 * np.sqrt(0.5 / 9.81) * ellipk(np.sin(np.radians(15.0)) ** 2)
    return [
        _row("simple pendulum 30°", "source documents' pendulum; exact elliptic period",
             "period [s]",
             exact, period, abs(period - exact) / exact, seconds, 1e-4),
        _row("simple pendulum 30°", "constraint", "max |Φ| over 2 s [m]", 0.0,
             float(np.max(res.phi_violation)), float(np.max(res.phi_violation)), seconds, 1e-10),
    ]


def double_pendulum():
    """The source documents' double pendulum: trapezoidal energy drift, and the index-3
    run against the index-1 Radau reference (simulate_reference, tight tolerances)."""
    from flexmbs.assembly import System
    from flexmbs.cases import load_case
    from flexmbs.integrators import simulate, simulate_reference

    case = load_case(ROOT / "cases" / "seed_double_pendulum.toml")
    system = System(case.model)
    start = time.perf_counter()
    res = simulate(system, 1.0, 1e-3, "newmark")
    seconds = time.perf_counter() - start
    energy = res.kinetic + res.potential
    drift = float(np.max(np.abs(energy - energy[0])) / abs(energy[0]))
    ref = simulate_reference(system, (0.0, 1.0), t_eval=res.t, rtol=1e-10, atol=1e-12,
                             baumgarte=(5.0, 5.0))
    diff = float(np.max(np.abs(res.q - ref.q)))
    return [
        _row("double pendulum", "source documents' double pendulum; energy conservation",
             "max |ΔE|/|E|", 0.0,
             drift, drift, seconds, 1e-4),
        _row("double pendulum", "Radau index-1 reference", "max |q − q_ref| over 1 s",
             0.0, diff, diff, seconds, 1e-4),
    ]


def beam_frequencies():
    """Built-in FE + Craig–Bampton (shipped steel cantilever: 1 m, 20 × 10 mm, 80
    elements) against Euler–Bernoulli clamped–free frequencies, bending in the weak (z)
    and strong (y) directions; the same beam unsupported (free_free_modes, rigid modes
    removed) against the free–free frequencies."""
    from flexmbs.modal import read_modal
    from flexmbs.modal.shipped import cantilever_roots

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = read_modal(ROOT / "modal_data" / "steel_cantilever.fmd.h5")
    seconds = time.perf_counter() - start
    e, rho, b, h, length = 210e9, 7850.0, 0.02, 0.01, 1.0
    roots = cantilever_roots(3)
    rows = []
    f = np.asarray(data.frequencies)
    tip = data.phi[-3:]
    for direction, inertia, comp in (("z", b * h**3 / 12, 2), ("y", h * b**3 / 12, 1)):
        modes = [j for j in range(data.n_modes) if abs(tip[comp, j]) > 0.5 * np.max(
            np.abs(tip[:, j]))][:3]
        for k, j in enumerate(modes):
            exact = roots[k]**2 / (2 * np.pi * length**2) * np.sqrt(e * inertia / (rho * b * h))
            rows.append(_row(f"steel cantilever, bending in {direction}",
                             "Euler–Bernoulli clamped–free", f"f{k + 1} [Hz]", exact,
                             float(f[j]), abs(f[j] - exact) / exact, seconds, 1e-6))
    # the same beam unsupported: free_free_modes finds and removes the six rigid modes
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.reduction import free_free_modes

    fe = straight_beam(length, 80, BeamSection.rectangle(b, h), Material.steel())
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        free = free_free_modes(fe, 10)
    seconds = time.perf_counter() - start
    shapes = np.abs(free.phi.reshape(-1, 3, free.n_modes)).max(axis=0)
    free_roots = (4.730040744862704, 7.853204624095838, 10.995607838001671)
    for direction, inertia, comp in (("z", b * h**3 / 12, 2), ("y", h * b**3 / 12, 1)):
        modes = [j for j in range(free.n_modes) if shapes[comp, j] > 0.5 * shapes[:, j].max()]
        for k, j in enumerate(modes[:3]):
            exact = free_roots[k]**2 / (2 * np.pi * length**2) * np.sqrt(
                e * inertia / (rho * b * h))
            value = float(free.frequencies[j])
            rows.append(_row(f"steel beam free–free, bending in {direction}",
                             "Euler–Bernoulli free–free (cosh βL cos βL = 1)",
                             f"f{k + 1} [Hz]", exact, value, abs(value - exact) / exact,
                             seconds, 1e-6))
    return rows


def craig_bampton_truncation():
    """Craig–Bampton with a free tip as interface (6 constraint modes) and the root
    attached, n = 2, 4, 8 fixed-interface modes, against the full FE model's clamped–free
    eigenfrequencies (built-in steel beam, 80 elements): the 6th frequency of the
    reduced model converges from above as modes are added (Rayleigh–Ritz)."""
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.reduction import clamped_modes, craig_bampton

    fe = straight_beam(1.0, 80, BeamSection.rectangle(0.02, 0.01), Material.steel())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        full = clamped_modes(fe, "root", 6).frequencies
        seconds = time.perf_counter() - start
        rows = []
        for n in (2, 4, 8):
            start = time.perf_counter()
            reduced = craig_bampton(fe, "tip", n, attach="root").frequencies
            seconds_n = time.perf_counter() - start
            rows.append(_row(f"Craig–Bampton, tip interface + {n} modes",
                             "full FE clamped–free eigenproblem", "f6 [Hz]",
                             float(full[5]), float(reduced[5]),
                             float((reduced[5] - full[5]) / full[5]), seconds + seconds_n,
                             {2: None, 4: 1e-2, 8: 1e-3}[n]))
    return rows


def integrator_spectral_radius():
    """High-frequency damping of each method: a stiff clamped mode (ωh = 300) released
    and simulated 40 steps; the measured spectral radius is the largest root of the
    linear recurrence x_{n+1} = Σ a_k x_{n+1−k} fitted to the computed ξ_n (order 2 for
    Newmark's (x, v) state, 3 for the α-methods' (x, v, a)), against the published ρ∞
    (trapezoidal 1, HHT (1+α)/(1−α), generalized-α ρ∞)."""
    from flexmbs.integrators import simulate

    system, data = _clamped_steel_cantilever(-1, 1e-6)  # the stiffest mode
    h = 300.0 / (2 * np.pi * data.frequencies[-1])
    rows = []
    from flexmbs.integrators.alpha import amplification_matrix, generalized_alpha, hht, newmark

    for label, method, options, params, rho_inf in (
            ("Newmark trapezoidal", "newmark", {}, newmark(), 1.0),
            ("HHT α = −0.3", "hht", {"alpha": -0.3}, hht(-0.3), 0.7 / 1.3),
            ("generalized-α ρ∞ = 0.5", "generalized-alpha", {"rho_inf": 0.5},
             generalized_alpha(0.5), 0.5)):
        # the published amplification matrix at this ωh (its ωh → ∞ limit is ρ∞)
        theory = float(np.max(np.abs(np.linalg.eigvals(amplification_matrix(params,
                                                                            300.0)))))
        start = time.perf_counter()
        res = simulate(system, 40 * h, h, method, **options)
        seconds = time.perf_counter() - start
        x = res.coordinate(f"beam.xi{data.n_modes}") / 1e-6
        rho = _recurrence_radius(x[1:], 2 if method == "newmark" else 3)
        rows.append(_row(f"spectral radius, {label}", "Hilber–Hughes–Taylor 1977; "
                         "Chung–Hulbert 1993", f"ρ at ωh = 300 (ρ∞ = {rho_inf:.4g})",
                         theory, rho, abs(rho - theory), seconds, 1e-10))
    return rows


def _clamped_steel_cantilever(mode: int, amplitude: float):
    """The shipped steel cantilever clamped to ground with mode ``mode`` (1-based; −1 the
    last) released from ``amplitude``: each modal coordinate is a linear oscillator."""
    from flexmbs.assembly import System
    from flexmbs.modal import read_modal
    from flexmbs.model import ModelBuilder

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = read_modal(ROOT / "modal_data" / "steel_cantilever.fmd.h5")
    xi = np.zeros(data.n_modes)
    xi[mode - 1 if mode > 0 else mode] = amplitude
    b = ModelBuilder()
    b.add_flexible_body("beam", data, xi=xi)
    b.add_marker("beam", "root", node=1)
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", "beam.root")
    return System(b.finalize()), data


def _zero_crossings(t, x):
    """Times where ``x`` changes sign: the root of the cubic through the four samples
    around each sign change."""
    out = []
    for i in np.flatnonzero((x[:-1] > 0) != (x[1:] > 0)):
        if i < 1 or i + 2 >= len(x):
            continue
        tt = t[i - 1:i + 3] - t[i]
        roots = np.roots(np.polyfit(tt, x[i - 1:i + 3], 3))
        real = roots[(abs(roots.imag) < 1e-12) & (roots.real >= 0) & (roots.real <= tt[2])]
        out.append(t[i] + float(real.real[0]))
    return np.array(out)


def _damped_sine_frequency(t, x, skip: int = 20) -> float:
    """Angular frequency [rad/s] of the damped sine e^(−σt)(a cos ω̄t + b sin ω̄t) fitted
    by least squares to the samples after the first ``skip`` (where the spurious roots of
    the α-methods have died out), started from the zero-crossing estimate."""
    from scipy.optimize import least_squares

    t, x = np.asarray(t)[skip:], np.asarray(x)[skip:]
    crossings = _zero_crossings(t, x)
    guess = np.pi / np.mean(np.diff(crossings))
    tau = t - t[0]

    def misfit(p):
        sigma, w, a, b = p
        return np.exp(-sigma * tau) * (a * np.cos(w * tau) + b * np.sin(w * tau)) - x

    fit = least_squares(misfit, [0.0, guess, x[0], 0.0], x_scale="jac", xtol=1e-15,
                        ftol=1e-15, gtol=1e-15)
    return float(fit.x[1])


def integrator_period_error():
    """Period elongation of each method on the clamped cantilever's first mode
    (f₁ = 8.355 Hz, a linear oscillator) at ωh = 0.1 and 0.3, 30 periods: the period
    measured from the zero crossings of the computed ξ₁ against the one the published
    amplification matrix predicts, ωh / |arg z| with z its principal eigenvalue; the
    computed frequency is a least-squares damped-sine fit to ξ₁(t) (for the
    trapezoidal rule this is ωh / (2 arctan(ωh/2)), ≈ 1 + (ωh)²/12)."""
    from flexmbs.integrators import simulate
    from flexmbs.integrators.alpha import amplification_matrix, generalized_alpha, hht, newmark

    system, data = _clamped_steel_cantilever(1, 1e-3)
    omega = 2 * np.pi * data.frequencies[0]
    rows = []
    for omega_h in (0.1, 0.3):
        h = omega_h / omega
        t_end = 30 * 2 * np.pi / omega
        for label, method, options, params in (
                ("Newmark trapezoidal", "newmark", {}, newmark()),
                ("HHT α = −0.3", "hht", {"alpha": -0.3}, hht(-0.3)),
                ("generalized-α ρ∞ = 0.5", "generalized-alpha", {"rho_inf": 0.5},
                 generalized_alpha(0.5))):
            roots = np.linalg.eigvals(amplification_matrix(params, omega_h))
            principal = roots[np.argmax(np.abs(roots.imag))]
            theory = omega_h / abs(np.angle(principal)) - 1.0
            closed = omega_h / (2 * np.arctan(omega_h / 2)) - 1
            if method == "newmark" and abs(theory - closed) > 1e-12:
                raise RuntimeError(f"amplification matrix period error {theory} differs "
                                   f"from the trapezoidal closed form {closed}")
            start = time.perf_counter()
            res = simulate(system, t_end, h, method, **options)
            seconds = time.perf_counter() - start
            frequency = _damped_sine_frequency(res.t, res.coordinate("beam.xi1"))
            measured = omega / frequency - 1.0
            rows.append(_row(f"period error, {label}, ωh = {omega_h:g}",
                             "amplification matrix (Hilber et al. 1977; Chung–Hulbert "
                             "1993); trapezoidal ≈ (ωh)²/12",
                             "T_h / T − 1", theory, measured, abs(measured - theory),
                             seconds, 1e-6))
    return rows


def _rotating_beam_reference(omega, stiffening, t_eval, n=4, beam=None):
    """Independent in-plane reference for the spun-up cantilever: assumed modes (the
    analytic clamped–free Euler–Bernoulli shapes) in the rotating frame,
    M q̈ + (K − ω² M [+ ω² K_G]) q = −ω̇ ∫ρA x φ dx, with the centrifugal geometric
    stiffness K_G = ∫ ρA (L² − x²)/2 φ'ᵢ φ'ⱼ dx when ``stiffening``; Radau, tight."""
    from scipy.integrate import solve_ivp

    from flexmbs.modal.shipped import cantilever_roots
    from flexmbs.model import SpinUp

    length, area, inertia, young, rho, ramp = ROTOR if beam is None else beam
    x = np.linspace(0.0, length, 4001)
    shapes, slopes, curvatures = [], [], []
    for beta_l in cantilever_roots(n):
        s, beta = x / length, beta_l / length
        sig = (np.cosh(beta_l) + np.cos(beta_l)) / (np.sinh(beta_l) + np.sin(beta_l))
        shapes.append(np.cosh(beta_l * s) - np.cos(beta_l * s)
                      - sig * (np.sinh(beta_l * s) - np.sin(beta_l * s)))
        slopes.append(beta * (np.sinh(beta_l * s) + np.sin(beta_l * s)
                              - sig * (np.cosh(beta_l * s) - np.cos(beta_l * s))))
        curvatures.append(beta**2 * (np.cosh(beta_l * s) + np.cos(beta_l * s)
                                     - sig * (np.sinh(beta_l * s) + np.sin(beta_l * s))))
    phi, dphi, ddphi = (np.array(v) for v in (shapes, slopes, curvatures))

    def integral(f):
        return trapezoid(f, x, axis=-1)
    mass = rho * area * integral(phi[:, None] * phi[None])
    stiff = young * inertia * integral(ddphi[:, None] * ddphi[None])
    geometric = integral(rho * area * (length**2 - x**2) / 2 * dphi[:, None] * dphi[None])
    load = rho * area * integral(phi * x)
    profile = SpinUp(omega, ramp)
    # q̈ = −(M⁻¹K + ω²(M⁻¹K_G − 1)) q − ω̇ M⁻¹ ∫ρA x φ dx: linear in the state, so its
    # Jacobian is exact and costs nothing
    inv_mass = np.linalg.inv(mass)
    elastic, softening = inv_mass @ stiff, (inv_mass @ geometric if stiffening else 0.0)
    softening = softening - np.eye(n)
    forcing = inv_mass @ load

    def acceleration_matrix(t):
        _, w, w_dot = profile.eval(t)
        return -(elastic + w * w * softening), w_dot

    def rhs(t, y):
        matrix, w_dot = acceleration_matrix(t)
        return np.concatenate([y[n:], matrix @ y[:n] - w_dot * forcing])

    def jac(t, _y):
        out = np.zeros((2 * n, 2 * n))
        out[:n, n:] = np.eye(n)
        out[n:, :n] = acceleration_matrix(t)[0]
        return out

    sol = solve_ivp(rhs, [0.0, t_eval[-1]], np.zeros(2 * n), t_eval=t_eval, rtol=1e-10,
                    atol=1e-12, method="Radau", jac=jac)
    return phi[:, -1] @ sol.y[:n]


#: Kane, Ryan and Banerjee (1987) beam: L [m], A [m²], I [m⁴], E [Pa], ρ [kg/m³], T [s].
ROTOR = (10.0, 4e-4, 2e-7, 7e10, 3000.0, 15.0)


def _spin_beam_modes(beam, modes, stiffening=False):
    """Craig–Bampton modes (root as interface and attachment) of 40 built-in beam
    elements of ``beam`` = (L, A, I, E, ρ, T), in-plane bending (I about z) the weak one
    (out-of-plane 100 I), with the stiffening matrices when ``stiffening``."""
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.reduction import craig_bampton

    length, area, inertia, young, rho, _ = beam
    fe = straight_beam(length, 40, BeamSection(A=area, Iy=100 * inertia, Iz=inertia,
                                               J=2 * inertia),
                       Material(E=young, nu=0.3, rho=rho))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = craig_bampton(fe, "root", modes, attach="root")
    return with_stiffening(data, fe) if stiffening else data


def rotating_beam():
    """Cantilever spun up about its root with ω(t) = Ω/T (t − T/(2π) sin(2πt/T)), T = 15 s
    (Kane, Ryan and Banerjee 1987; Simo and Vu-Quoc 1986: L = 10 m, A = 4e-4 m²,
    I = 2e-7 m⁴, E = 70 GPa, ρ = 3000 kg/m³; 40 built-in beam elements, 4 Craig–Bampton
    modes, the out-of-plane bending made stiffer so that the lowest modes are in-plane),
    20 s. flexmbs's linear FFRF is compared with an independent linear assumed-modes
    solution (same physics), and both with the geometrically stiffened one: below the
    first bending frequency (ω₁ = 3.80 rad/s) linear FFRF is stable but its tip
    deflection is wrong; above it (Ω = 10 rad/s) the centrifugal softening −ω²M beats
    K and linear FFRF diverges, while the stiffened beam stays bounded — the known
    failure of FFRF without geometric stiffening."""
    from flexmbs.assembly import System
    from flexmbs.integrators import simulate
    from flexmbs.model import ModelBuilder, SpinUp
    from flexmbs.results.histories import tip_history

    length, ramp = ROTOR[0], ROTOR[5]
    data = _spin_beam_modes(ROTOR, 4)
    rows = []
    for omega in (2.0, 10.0):
        b = ModelBuilder()
        b.add_flexible_body("beam", data)
        b.add_marker("beam", "root", node=1)
        b.add_marker("ground", "O")
        b.add_revolute("hub", "ground.O", "beam.root")
        b.add_drive("spin", "rotation", SpinUp(omega, ramp), marker_i="ground.O",
                    marker_j="beam.root")
        start = time.perf_counter()
        res = simulate(System(b.finalize()), 20.0, 0.01, "newmark")
        seconds = time.perf_counter() - start
        tip = tip_history(res, "beam")[0][:, 1]
        linear = _rotating_beam_reference(omega, False, res.t)
        stiff = _rotating_beam_reference(omega, True, res.t)
        name = f"rotating beam, Ω = {omega:g} rad/s"
        if res.success:
            diff = float(np.max(np.abs(tip - linear)) / np.max(np.abs(linear)))
            rows.append(_row(name, "independent linear assumed modes (no stiffening)",
                             "tip deflection, max |Δ| / max |ref|", 0.0, diff, diff,
                             seconds, 1e-3))
        else:  # diverged: both cross the beam's length at the same time
            t_ref, t_run = (float(res.t[np.argmax(np.abs(x) > length)])
                            if np.any(np.abs(x) > length) else float("nan")
                            for x in (linear, tip))
            rows.append(_row(name, f"linear FFRF diverges like its reference ({res.status})",
                             "t [s] when |tip deflection| passes L = 10 m",
                             t_ref, t_run, abs(t_run - t_ref) / t_ref, seconds, 1e-2))
        rows.append(_row(name, "with geometric stiffening (Kane et al.'s point)",
                         "peak |tip deflection| [m], flexmbs vs stiffened",
                         float(np.max(np.abs(stiff))), float(np.max(np.abs(tip))),
                         float(abs(np.max(np.abs(tip)) - np.max(np.abs(stiff)))
                               / np.max(np.abs(stiff))), seconds))
    return rows + stiffened_spin_up("rotating beam", ROTOR, (2.0, 4.0, 6.0, 10.0))


#: Wu and Haug's slewing beam: L = 8 m, EA = 5.03e6 N, in-plane EI = 566.6 N m²,
#: ρA = 0.2019 kg/m (E = 70 GPa chosen, A and I from EA and EI), spin-up over T = 15 s.
SLEWING = (8.0, 5.03e6 / 7e10, 566.6 / 7e10, 7e10, 0.2019 * 7e10 / 5.03e6, 15.0)


def _spun_beam_system(data, omega, ramp, stiffening):
    from flexmbs.assembly import System
    from flexmbs.model import ModelBuilder, SpinUp

    b = ModelBuilder()
    b.add_flexible_body("beam", data, stiffening=stiffening)
    b.add_marker("beam", "root", node=1)
    b.add_marker("ground", "O")
    b.add_revolute("hub", "ground.O", "beam.root")
    b.add_drive("spin", "rotation", SpinUp(omega, ramp), marker_i="ground.O",
                marker_j="beam.root")
    return System(b.finalize())


def stiffened_spin_up(problem, beam, omegas, modes=8, h=0.01, t_end=20.0):
    """flexmbs with geometric stiffening (8 Craig–Bampton modes of 40 built-in beam
    elements, their stiffening matrices, docs/theory_stiffening.md; h = 10 ms) against
    the independent stiffened assumed-modes solution (8 analytic modes): peak and
    largest difference of the in-plane tip deflection in the rotating frame."""
    from flexmbs.integrators import simulate
    from flexmbs.results.histories import tip_history

    ramp = beam[5]
    data = _spin_beam_modes(beam, modes, stiffening=True)
    rows = []
    for omega in omegas:
        start = time.perf_counter()
        res = simulate(_spun_beam_system(data, omega, ramp, True), t_end, h, "newmark")
        seconds = time.perf_counter() - start
        tip = tip_history(res, "beam")[0][:, 1]
        ref = _rotating_beam_reference(omega, True, res.t, n=modes, beam=beam)
        scale = float(np.max(np.abs(ref)))
        name = f"{problem}, Ω = {omega:g} rad/s"
        rows.append(_row(name, f"stiffened flexmbs vs stiffened assumed modes "
                         f"({res.status})", "tip deflection, max |Δ| / max |ref|", 0.0,
                         float(np.max(np.abs(tip - ref)) / scale),
                         float(np.max(np.abs(tip - ref)) / scale), seconds, 1e-3))
    return rows


def _exact_reference():
    """The geometrically exact ANCF beam of validation/kane_exact_reference.py."""
    import importlib.util

    name = "kane_exact_reference"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parent / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def kane_exact():
    """Kane et al.'s spin-up at Ω = 4, 6 and 10 rad/s: flexmbs with geometric stiffening
    (8 Craig–Bampton modes of 40 beam elements and their stiffening matrices, h = 10 ms)
    against a geometrically exact solution written for this report
    (validation/kane_exact_reference.py: a planar ANCF beam — cubic Hermite in position
    and slope, extensible, exact curvature, nothing linearized — in the hub frame, 16
    elements, Radau), the in-plane tip deflection in the rotating frame over 20 s. The
    stiffened linear theory leaves out terms of second order in the deflection, so the
    difference is bounded by (peak/L)² (not by the exact solution's own accuracy, 6e-5
    of the peak at 16 elements); rows show flexmbs's peak converged in modes and step
    and the exact peak converged in elements."""
    from flexmbs.integrators import simulate
    from flexmbs.results.histories import tip_history

    exact_ref = _exact_reference()
    beam = ROTOR
    length, ramp = beam[0], beam[5]
    data = _spin_beam_modes(beam, 8, stiffening=True)
    rows, exact_peaks = [], {}
    for omega in (4.0, 6.0, 10.0):
        start = time.perf_counter()
        res = simulate(_spun_beam_system(data, omega, ramp, True), 20.0, 0.01, "newmark")
        seconds = time.perf_counter() - start
        tip = tip_history(res, "beam")[0][:, 1]
        start = time.perf_counter()
        exact = exact_ref.kane_exact_tip(omega, res.t, beam, elements=16)
        exact_seconds = time.perf_counter() - start
        scale = float(np.max(np.abs(exact)))
        peak = exact_peaks[omega] = exact_ref.peak_abs(res.t, exact)
        diff = float(np.max(np.abs(tip - exact)) / scale)
        name = f"Kane spin-up, Ω = {omega:g} rad/s, stiffened"
        rows.append(_row(name, "geometrically exact ANCF beam (16 elements)",
                         "tip deflection, max |Δ| / max |exact|", 0.0, diff, diff,
                         seconds + exact_seconds, (peak / length) ** 2))
        rows.append(_row(name, "geometrically exact ANCF beam (16 elements)",
                         "peak |tip deflection| [m]", peak, exact_ref.peak_abs(res.t, tip),
                         abs(exact_ref.peak_abs(res.t, tip) - peak) / peak,
                         seconds + exact_seconds, (peak / length) ** 2))
    # flexmbs converged in modes and step: 8 modes at h = 10 ms against 12 at 5 ms
    start = time.perf_counter()
    finer = simulate(_spun_beam_system(_spin_beam_modes(beam, 12, stiffening=True), 10.0,
                                       ramp, True), 20.0, 0.005, "newmark")
    fine_peak = exact_ref.peak_abs(finer.t, tip_history(finer, "beam")[0][:, 1])
    coarse_peak = exact_ref.peak_abs(res.t, tip)
    rows.append(_row("Kane spin-up, Ω = 10 rad/s, stiffened", "flexmbs, 12 modes, h = 5 ms",
                     "peak |tip deflection| [m] at 8 modes, h = 10 ms", fine_peak,
                     coarse_peak, abs(coarse_peak - fine_peak) / fine_peak,
                     time.perf_counter() - start, 1e-3))
    start = time.perf_counter()
    # against the 16-element solution at Ω = 10 rad/s of the loop (same output times)
    fine = exact_ref.peak_abs(res.t, exact_ref.kane_exact_tip(10.0, res.t, beam, elements=32))
    coarse = exact_peaks[10.0]
    rows.append(_row("Kane spin-up, Ω = 10 rad/s, exact reference", "the same ANCF beam, "
                     "32 elements", "peak |tip deflection| [m] at 16 elements", fine,
                     coarse, abs(coarse - fine) / fine, time.perf_counter() - start, 1e-4))
    return rows


def kane_nonlinear_beam():
    """Kane et al.'s spin-up at Ω = 4, 6 and 10 rad/s with the geometrically exact beam
    (16 elements, consistent inertia; generalized-α, ρ∞ = 1, h = 2.5 ms, 1.25 ms at
    Ω = 10 rad/s) against the planar ANCF reference (16 elements): the in-plane tip
    deflection in the hub frame over 20 s, largest difference over the peak; limit
    2e-4 (docs/nonlinear_beam.md)."""
    from flexmbs.assembly import System
    from flexmbs.integrators import simulate
    from flexmbs.modal.fe.beam import BeamSection, Material
    from flexmbs.model import ModelBuilder
    from flexmbs.model.drives import SpinUp

    exact_ref = _exact_reference()
    length, area, inertia, young, rho, ramp = exact_ref.KANE_BEAM
    n, rows = 16, []
    for omega, h in ((4.0, 0.0025), (6.0, 0.0025), (10.0, 0.00125)):
        b = ModelBuilder()
        b.add_nonlinear_beam("beam", length, n, BeamSection(A=area, Iy=inertia, Iz=inertia,
                                                            J=2 * inertia, ky=1.0, kz=1.0),
                             Material(E=young, nu=0.3, rho=rho))
        b.add_marker("ground", "O")
        b.add_marker("beam", "root", node="root")
        b.add_joint("hub", "revolute", "ground.O", "beam.root")
        b.add_drive("spin", "rotation", SpinUp(omega, ramp), marker_i="ground.O",
                    marker_j="beam.root")
        start = time.perf_counter()
        res = simulate(System(b.finalize()), 20.0, h, "generalized-alpha", rho_inf=1.0,
                       output_every=round(0.01 / h))
        seconds = time.perf_counter() - start
        angle = 2.0 * np.arctan2(res.coordinate("beam/1.e3"), res.coordinate("beam/1.e0"))
        x, y = res.coordinate(f"beam/{n + 1}.x"), res.coordinate(f"beam/{n + 1}.y")
        tip = -np.sin(angle) * x + np.cos(angle) * y
        exact = exact_ref.kane_exact_tip(omega, res.t, elements=16)
        diff = float(np.max(np.abs(tip - exact)) / np.max(np.abs(exact)))
        rows.append(_row(f"Kane spin-up, Ω = {omega:g} rad/s, geometrically exact beam "
                         f"(h = {h * 1e3:g} ms, {res.status})",
                         "geometrically exact ANCF beam (16 elements)",
                         "tip deflection, max |Δ| / max |exact|", 0.0, diff, diff, seconds,
                         2e-4))
    return rows


def modal_derivatives(figures: Path | None = None):
    """Bodies with modal derivatives (nonlinear = true, docs/theory_modal_derivatives.md)
    against geometrically exact references (validation/modal_derivatives_check.py).
    (1) Kane et al.'s spin-up at Ω = 4, 6 and 10 rad/s, the 8 Craig–Bampton modes of
    40 beam elements enriched with their modal derivatives (compiled, Newmark
    h = 10 ms, 20 s) against the planar ANCF beam of validation/kane_exact_reference.py:
    the tip deflection's largest difference within 5e-4 of the peak, and at most a
    third of the stiffened linear body's with the same modes (figure
    modal_derivatives_kane.png, Ω = 10 rad/s). (2) A cantilever (4 clamped modes of 40
    elements) under a dead tip load at P L²/EI = 1 and 2 against the elastica
    (solve_bvp), the linear body beside it (figure modal_derivatives_elastica.png)."""
    import modal_derivatives_check as check

    rows = []
    for omega in check.OMEGAS:
        hist = check.kane_histories(sys.modules[__name__], omega)
        peak = float(np.max(np.abs(hist["exact"])))
        diff = {k: float(np.max(np.abs(hist[k] - hist["exact"]))) / peak
                for k in ("stiffened", "derivatives")}
        seconds = hist["seconds"]["derivatives"] + hist["seconds"]["exact"]
        name = f"Kane spin-up, Ω = {omega:g} rad/s, modal derivatives"
        rows.append(_row(name, "geometrically exact ANCF beam (16 elements)",
                         "tip deflection, max |Δ| / max |exact|", 0.0, diff["derivatives"],
                         diff["derivatives"], seconds, 5e-4))
        third = diff["stiffened"] / 3.0  # the goal: three times closer than stiffened
        rows.append(_row(name, "a third of the stiffened linear body's (same 8 modes)",
                         "tip deflection, max |Δ| / max |exact|", third,
                         diff["derivatives"], diff["derivatives"],
                         hist["seconds"]["stiffened"], third))
        if figures is not None and omega == max(check.OMEGAS):
            check.figure_kane(hist, omega, figures / "modal_derivatives_kane.png")
    errors = check.elastica_errors()
    seconds = errors["seconds"] / (2 * len(check.ALPHAS))
    for alpha, key, limit in ((1.0, "derivatives", 5e-3), (1.0, "linear", None),
                              (2.0, "derivatives", None)):
        value = errors[key][check.ALPHAS.index(alpha)]
        rows.append(_row(f"cantilever, dead tip load P L²/EI = {alpha:g}, "
                         f"{'modal derivatives' if key == 'derivatives' else 'linear'}",
                         "elastica (solve_bvp)", "|tip − exact| / L, 4 modes", 0.0, value,
                         value, seconds, limit))
    if figures is not None:
        check.figure_elastica(errors, figures / "modal_derivatives_elastica.png")
    return rows


def slewing_beam():
    """Wu and Haug's slewing beam (L = 8 m, EA = 5.03e6 N, EI = 566.6 N m², ρA = 0.2019
    kg/m; first clamped bending frequency ω₁ = 2.91 rad/s) spun up to Ω = 4 rad/s > ω₁
    over 15 s, 20 s: without stiffening linear FFRF must diverge (the run ends
    "diverged"); with it the motion stays bounded and follows the stiffened reference."""
    from flexmbs.integrators import simulate

    length, area, inertia, young, rho, ramp = SLEWING
    omega_1 = 1.875104**2 * np.sqrt(young * inertia / (rho * area * length**4))
    data = _spin_beam_modes(SLEWING, 8)
    from flexmbs.results.histories import tip_history

    start = time.perf_counter()
    res = simulate(_spun_beam_system(data, 4.0, ramp, False), 20.0, 0.01, "newmark")
    seconds = time.perf_counter() - start
    name = "slewing beam (Wu–Haug), Ω = 4 rad/s"
    rows = [_row(name, "analytic ω₁ = 1.875² √(EI/ρAL⁴)", "first clamped frequency "
                 "[rad/s]", float(omega_1), float(2 * np.pi * data.frequencies[0]),
                 abs(2 * np.pi * data.frequencies[0] - omega_1) / omega_1, 0.0, 1e-4)]
    tip = tip_history(res, "beam")[0][:, 1]
    linear = _rotating_beam_reference(4.0, False, res.t, n=8, beam=SLEWING)
    t_ref, t_run = (float(res.t[np.argmax(np.abs(x) > length)])
                    if np.any(np.abs(x) > length) else float("nan") for x in (linear, tip))
    error = abs(t_run - t_ref) / t_ref if res.status == "diverged" else float("inf")
    rows.append(_row(name, f"linear FFRF diverges like its reference ({res.status})",
                     f"t [s] when |tip deflection| passes L = {length:g} m", t_ref, t_run,
                     error, seconds, 1e-2))
    return rows + stiffened_spin_up("slewing beam (Wu–Haug)", SLEWING, (4.0,))


def _recurrence_radius(x, order: int) -> float:
    """Largest |root| of z^k − a₁z^(k−1) − … − a_k with a fitted by least squares to
    x_{n} = Σ_j a_j x_{n−j} (the sequence's own amplification)."""
    rows = np.array([x[n - order:n][::-1] for n in range(order, len(x))])
    coef = np.linalg.lstsq(rows, x[order:], rcond=None)[0]
    return float(np.max(np.abs(np.roots(np.concatenate([[1.0], -coef])))))


def _simeon_rod(n_gauss: int = 32):
    """Simeon's connecting rod as flexmbs modal data: the four Ritz functions sampled at
    Gauss–Legendre points along the axis, each point split in two at y = ±h/(2√3) so
    that the lumped masses carry the section's rotary inertia ρV h²/12 (the published J2
    includes it); the end nodes (frame origin at the crank pin, slider end) are massless.
    The invariants are then the exact integrals of the Ritz functions; M_ff is their
    consistent modal mass and K_ff the published stiffness."""
    import slider_crank_reference as ref

    from flexmbs.modal.data import ModalData

    x, w = np.polynomial.legendre.leggauss(n_gauss)
    s = np.concatenate([[0.0], (x + 1) / 2, [1.0]])
    weights = np.concatenate([[0.0], w / 2, [0.0]]) * ref.RHO * ref.B * ref.H * ref.L2
    lateral, axial = ref.lateral_shapes(s), ref.axial_shapes(s)
    offset = ref.H / (2 * np.sqrt(3))
    nodes, mass, shapes = [], [], []
    for k in range(len(s)):
        heights = (0.0,) if weights[k] == 0 else (-offset, offset)
        for y in heights:
            nodes.append([s[k] * ref.L2, y, 0.0])
            mass.append(weights[k] / len(heights))
            shape = np.zeros((3, 4))
            shape[1, :2] = lateral[:, k]
            shape[0, 2:] = axial[:, k]
            shapes.append(shape)
    nodes, mass, phi = np.array(nodes), np.array(mass), np.vstack(shapes)
    m_ff = phi.T @ (np.repeat(mass, 3)[:, None] * phi)
    return ModalData(nodes=nodes, phi=phi, M_ff=m_ff, K_ff=ref.rod_stiffness(), mass=mass,
                     reference_frame="attached", attach_set="pin",
                     node_sets={"pin": np.array([0]), "end": np.array([len(nodes) - 1])},
                     metadata={"source": "Simeon (1996) slider-crank Ritz functions"})


def _simeon_crank_system():
    """The slider–crank in flexmbs: crank (revolute, rotation drive φ₁ = 150 t), the rod
    (revolute at the crank pin on its frame-origin node), the slider (prismatic along x,
    point-on-line to the rod's end node so that the planar loop has no redundant rows),
    started from the published consistent state."""
    import slider_crank_reference as ref

    from flexmbs.assembly import System
    from flexmbs.model import ModelBuilder
    from flexmbs.model.drives import Polynomial

    data = _simeon_rod()
    p0, v0 = ref.P0, ref.V0
    b = ModelBuilder()
    j_centre = ref.J1 - ref.M1 * (ref.L1 / 2) ** 2  # J1 is about the pivot
    b.add_rigid_body("crank", ref.M1, [1e-6, j_centre, j_centre], com=(ref.L1 / 2, 0, 0),
                     angular_velocity=(0, 0, v0[0]))
    b.add_flexible_body("rod", data, position=(ref.L1, 0, 0),
                        velocity=(0, v0[0] * ref.L1, 0), angular_velocity=(0, 0, v0[1]),
                        xi=p0[3:], xi_dot=v0[3:])
    b.add_rigid_body("slider", ref.M3, [1e-6] * 3, position=(p0[2], 0, 0),
                     velocity=(v0[2], 0, 0))
    b.add_marker("ground", "O")
    b.add_marker("crank", "O")
    b.add_marker("crank", "A", (ref.L1, 0, 0))
    b.add_marker("rod", "A", node=1)
    b.add_marker("rod", "B", node=data.nodes.shape[0])
    b.add_marker("slider", "P")
    b.add_marker("ground", "guide", orientation=(1.0, 0, 0))
    b.add_marker("slider", "guide", orientation=(1.0, 0, 0))
    b.add_revolute("pivot", "ground.O", "crank.O")
    b.add_revolute("crankpin", "crank.A", "rod.A")
    b.add_joint("pin", "point-on-line", "slider.P", "rod.B")
    b.add_prismatic("slide", "ground.guide", "slider.guide")
    b.add_drive("motor", "rotation", Polynomial((0.0, ref.OMEGA)), marker_i="ground.O",
                marker_j="crank.O")
    return System(b.finalize())


def _simeon_state(res, k: int):
    """Simeon's coordinates (φ₁, φ₂, x₃, q1…q4), their rates and accelerations at output
    ``k`` of a flexmbs run of :func:`_simeon_crank_system` (planar angles from the Euler
    parameters, rates from ω = G(p)ṗ, angular accelerations from G(p)p̈)."""
    from flexmbs.frame.rotations import g_global

    names = res.coord_names
    q, qd, qdd = res.q[k], res.qd[k], res.qdd[k]

    def euler(body):
        first = names.index(f"{body}.e0")
        return slice(first, first + 4)

    def angle(body):
        e = q[euler(body)]
        return 2 * np.arctan2(e[3], e[0])

    def about_z(body, rates):
        return float((g_global(q[euler(body)]) @ rates[euler(body)])[2])

    x3 = names.index("slider.x")
    xi = slice(names.index("rod.xi1"), names.index("rod.xi4") + 1)
    p = np.array([angle("crank"), angle("rod"), q[x3], *q[xi]])
    v = np.array([about_z("crank", qd), about_z("rod", qd), qd[x3], *qd[xi]])
    a = np.array([about_z("crank", qdd), about_z("rod", qdd), qdd[x3], *qdd[xi]])
    return p, v, a


def flexible_slider_crank(figures: Path | None = None):
    """Simeon's flexible slider–crank (Math. Modelling of Systems 2, 1996; problem
    ``crank`` of the Test Set for IVP Solvers, which publishes a 16-digit solution at
    t = 0.1 s): rigid crank 0.15 m at 150 rad/s, steel rod 0.30 m, 8 × 8 mm, with two
    pinned–pinned sine and two quadratic axial Ritz functions (linear FFRF, no geometric
    stiffening), slider 0.0756 kg, no gravity; from the published consistent initial
    state for 0.1 s (2.4 revolutions), trapezoidal rule, h = 10 µs; ξ₁ is the rod's
    midpoint deflection. The reference is our own solution of the published equations
    (validation/slider_crank_reference.py, DOP853 at rtol 1e-10), which reproduces the
    published digits (self-check row). The published matrices give the axial functions
    15 times their consistent modal mass, while flexmbs integrates the inertia from the
    mass distribution: flexmbs is therefore checked against the published equations with
    the consistent axial mass — at t = 0 (every acceleration, at flexmbs's assembled
    state) to round-off, and over the run with the a-priori phase-error bound of the
    trapezoidal rule on the first lateral mode, (ω₁h)²/12 · ω₁t — and its values at
    0.1 s are shown against the published ones (reported: the models differ; the axial
    modes, at ωh ≈ 0.26 and 0.95, are not resolved at this step either)."""
    import slider_crank_reference as ref

    from flexmbs.integrators import simulate

    name = "flexible slider–crank (Simeon)"
    start = time.perf_counter()
    port = ref.solve([0.0, ref.REFERENCE_T], pi=ref.PUBLISHED_PI)[-1]
    seconds_port = time.perf_counter() - start
    rows = [_row(f"{name}, reference self-check", "Test Set for IVP Solvers, crank.f "
                 "(the 'flexmbs' column is our reference solution, not flexmbs)",
                 "midpoint deflection q1(0.1 s) [m]", ref.REFERENCE_P[3], port[3],
                 abs(port[3] - ref.REFERENCE_P[3]) / ref.REFERENCE_P[3], seconds_port, 1e-7)]
    system = _simeon_crank_system()
    start = time.perf_counter()
    res = simulate(system, ref.REFERENCE_T, 1e-5, "newmark")
    seconds = time.perf_counter() - start
    p0, v0, a0 = _simeon_state(res, 0)
    consistent = ref.rod_integrals(1 / 15)
    a_ref = ref.accelerations(p0, v0, consistent, ref.rod_stiffness())[0]
    a_pub = ref.accelerations(p0, v0, ref.rod_integrals(1.0), ref.rod_stiffness())[0]
    diff = float(np.max(np.abs(a0 - a_ref)) / np.max(np.abs(a_ref)))
    rows.append(_row(name, "published equations, consistent axial mass, at flexmbs's "
                     "assembled initial state", "all 7 accelerations at t = 0: "
                     "max |Δ| / max |a|", 0.0, diff, diff, seconds, 1e-10))
    rows.append(_row(name, "published equations (axial mass ×15), same state",
                     "axial acceleration q̈3(0) [m/s²]", float(a_pub[5]), float(a0[5]),
                     abs(a0[5] - a_pub[5]) / abs(a_pub[5]), seconds))
    final = _simeon_state(res, len(res.t) - 1)[0]
    for quantity, k in (("rod angle φ₂(0.1 s) [rad]", 1), ("slider position x₃(0.1 s) [m]", 2),
                        ("midpoint deflection q1(0.1 s) [m]", 3)):
        rows.append(_row(name, "Test Set for IVP Solvers (published axial mass ×15)",
                         quantity, ref.REFERENCE_P[k], float(final[k]),
                         abs(final[k] - ref.REFERENCE_P[k]) / abs(ref.REFERENCE_P[k]),
                         seconds))
    history = ref.solve(res.t, axial_mass_factor=1 / 15, state=(p0, v0))
    xi = res.modal_coordinates("rod")
    peak = float(np.max(np.abs(history[:, 3])))
    diff = float(np.max(np.abs(xi[:, 0] - history[:, 3])))
    stiffness = ref.rod_stiffness()
    omega_h = np.sqrt(stiffness[0, 0] / consistent.mass_q[0, 0]) * 1e-5
    bound = omega_h**2 / 12 * omega_h / 1e-5 * ref.REFERENCE_T
    rows.append(_row(name, "published equations, consistent axial mass (DOP853)",
                     "q1 over 0.1 s: max |Δ| / max |q1_ref| (max |q1_ref| [m] as reference)",
                     peak, diff / peak, diff / peak, seconds, float(bound)))
    if figures is not None:
        from flexmbs.post.plots import new_figure, save_figure, time_history

        fig, axes = new_figure(1)
        time_history(axes[0], res.t, {"flexmbs (h = 10 µs)": 1e3 * xi[:, 0],
                                      "reference (DOP853)": 1e3 * history[:, 3]},
                     "midpoint deflection q1 [mm]",
                     title="Simeon's flexible slider–crank, 150 rad/s",
                     styles={"reference (DOP853)": {"linestyle": "--"}})
        figures.mkdir(parents=True, exist_ok=True)
        save_figure(fig, figures / "slider_crank_midpoint.png")
    return rows


def arm_beam(figures: Path | None = None):
    """The source documents' arm with a flexible tip beam. (1) Elbow locked, 0.3 s: first
    peak of ξ₁ against the quasi-static step estimate 2 f₁/k₁ (docs/tutorial_arm_beam.md)
    in each coupling mode.
    (2) The seed case as given (free elbow, shoulder torque 2 N m, 2 s) in the four
    coupling modes (figure arm_beam_coupling.png): two-way must conserve T + V − W;
    one-way and no-Mrf must move the arm exactly as the rigid model does (the beam
    does not act on the arm), and no-Mrf must leave the beam at rest (M_rf is the only
    path from the arm's acceleration to the modes when there is no gravity). The
    arm-beam studies' own figures (coupling with in-plane gravity, locked elbow,
    truncation of the steel beam) are in the [tutorial](tutorial_arm_beam.md)."""
    import importlib.util

    from flexmbs.studies import coupling_study

    spec = importlib.util.spec_from_file_location(
        "tutorial", ROOT / "docs" / "scripts" / "build_tutorial_arm_beam.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    est = script.quasi_static_estimate()
    case = ROOT / "cases" / "arm_beam_seed.toml"
    start = time.perf_counter()
    study = coupling_study(case, overrides={"solver.t_end": 0.3,
                                            "joints.elbow.type": "fixed"}, workers=1)
    seconds = time.perf_counter() - start
    rows = {r["coupling"]: r for r in study.rows()}
    out = []
    for mode in ("two-way", "one-way", "no-Mrf", "rigid"):
        value = rows[mode]["beam.xi1 peak"]
        out.append(_row(f"arm + beam (elbow locked), {mode}",
                        "quasi-static step estimate 2 f₁/k₁" if mode == "two-way" else
                        "same estimate (differences are the coupling's)", "peak ξ₁ in 0.3 s",
                        est["peak1"], value, abs(value - est["peak1"]) / est["peak1"],
                        seconds / 4, 0.01 if mode in ("two-way", "one-way") else None))
    start = time.perf_counter()
    full = coupling_study(case, workers=1)
    seconds = (time.perf_counter() - start) / 4
    if figures is not None:
        from flexmbs.post.plots import save_figure

        figures.mkdir(parents=True, exist_ok=True)
        save_figure(full.figure(), figures / "arm_beam_coupling.png")
    sig = {mode: rec.signals for mode, rec in full.records.items()}
    two = sig["two-way"]
    work = float(np.max(np.abs(two.kinetic + two.potential - two.energy_error
                               - (two.kinetic[0] + two.potential[0]))))
    balance = float(np.max(np.abs(two.energy_error)))
    out.append(_row("arm + beam seed case (2 s), two-way", "energy balance T + V − W = const",
                    "max |T + V − W − E₀| / max |W|", 0.0, balance / work, balance / work,
                    seconds, 1e-3))
    rigid = sig["rigid"]
    for mode in ("one-way", "no-Mrf"):
        diff = max(float(np.max(np.abs(sig[mode].joint_angles[j] - rigid.joint_angles[j])))
                   for j in rigid.joint_angles)
        out.append(_row(f"arm + beam seed case (2 s), {mode}",
                        "rigid-only run (the beam does not act on the arm)",
                        "max joint-angle difference [rad]", 0.0, diff, diff, seconds, 1e-6))
    quiet = float(np.max(np.abs(sig["no-Mrf"].modal["beam"])))
    out.append(_row("arm + beam seed case (2 s), no-Mrf", "beam at rest (no path to the "
                    "modes)", "max |ξ|", 0.0, quiet, quiet, seconds, 1e-12))
    one_way = float(np.max(np.abs(sig["one-way"].modal["beam"][:, 0])))
    two_way = float(np.max(np.abs(two.modal["beam"][:, 0])))
    out.append(_row("arm + beam seed case (2 s), one-way", "two-way run (what one-way "
                    "neglects: the beam's reaction on the arm)", "peak ξ₁", two_way,
                    one_way, abs(one_way - two_way) / two_way, seconds))
    return out


def rotating_cantilever_frequencies():
    """First flapwise frequency of a uniform clamped beam spun about an axis across it
    at λ = Ω√(ρAL⁴/EI) = 0, 1, 2, 5, 10, in units of √(EI/ρAL⁴), against Hodges and
    Rutkowski (1981) / Wright et al. (1982): 3.5160, 3.6816, 4.1373, 6.4495, 11.2023.
    flexmbs: the built-in beam FE (Kane et al.'s beam, 40 elements, in-plane bending made
    stiffer so that the low modes are flapwise), clamped modes with their
    geometric-stiffening matrices (docs/theory_stiffening.md), 6 flapwise modes, the
    eigenvalues of (K_ff + Ω² K_ωzωz, M_ff)."""
    import scipy.linalg as sla

    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.reduction import clamped_modes
    from flexmbs.modal.stiffening import effective_stiffness

    length, area, inertia, young, rho, _ = ROTOR
    start = time.perf_counter()
    fe = straight_beam(length, 40, BeamSection(A=area, Iy=inertia, Iz=100 * inertia,
                                               J=200 * inertia),
                       Material(E=young, nu=0.3, rho=rho))
    data = with_stiffening(clamped_modes(fe, "root", 10), fe)
    shapes = np.abs(np.asarray(data.phi).reshape(-1, 3, data.n_modes)).max(axis=0)
    flap = [j for j in range(data.n_modes) if shapes[2, j] > 10 * shapes[1, j]][:6]
    keep = np.ix_(flap, flap)
    unit = np.sqrt(young * inertia / (rho * area * length**4))
    seconds = time.perf_counter() - start
    rows = []
    for lam, published in ((0, 3.5160), (1, 3.6816), (2, 4.1373), (5, 6.4495),
                           (10, 11.2023)):
        k = effective_stiffness(data.K_ff, data.stiffening, omega=(0.0, 0.0, lam * unit))
        value = float(np.sqrt(sla.eigh(k[keep], data.M_ff[keep], eigvals_only=True)[0])
                      / unit)
        rows.append(_row(f"rotating cantilever, λ = {lam}", "Hodges–Rutkowski 1981 "
                         "(4 digits)", "first flapwise ω / √(EI/ρAL⁴)", published, value,
                         abs(value - published) / published, seconds, 1e-3))
    return rows


def solid_spin_stiffening():
    """A solid steel bar (1 m × 40 mm × 20 mm, 40 × 2 × 2 built-in hexahedra, clamped at
    x = 0) and the same bar in built-in beam elements (40), each with 4 clamped modes and
    its geometric-stiffening matrices (docs/theory_stiffening.md), spun about z at
    Ω = ½, 1 and 2 times its own first (flapwise) frequency ω₀: the ratio ω₁(Ω)/ω₀ of
    the solid against the beam's. (The hexahedra shear-lock in bending — ω₀ is 29 %
    high — so the ratio, which the stiffening sets, is what is compared.)"""
    import scipy.linalg as sla

    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.fe.solid import box_mesh
    from flexmbs.modal.reduction import clamped_modes
    from flexmbs.modal.stiffening import effective_stiffness

    start = time.perf_counter()
    solid_fe = box_mesh(1.0, 0.04, 0.02, 40, 2, 2, E=210e9, nu=0.3, rho=7850.0)
    solid = with_stiffening(clamped_modes(solid_fe, "x0", 4), solid_fe)
    beam_fe = straight_beam(1.0, 40, BeamSection.rectangle(0.04, 0.02),
                            Material(E=210e9, nu=0.3, rho=7850.0))
    beam = with_stiffening(clamped_modes(beam_fe, "root", 4), beam_fe)
    seconds = time.perf_counter() - start

    def ratio(data, factor):
        w0 = 2 * np.pi * data.frequencies[0]
        k = effective_stiffness(data.K_ff, data.stiffening, omega=(0.0, 0.0, factor * w0))
        return float(np.sqrt(sla.eigh(k, data.M_ff, eigvals_only=True)[0]) / w0)

    rows = []
    for factor in (0.5, 1.0, 2.0):
        ref, value = ratio(beam, factor), ratio(solid, factor)
        rows.append(_row(f"solid hex bar spun at Ω = {factor:g} ω₀", "built-in beam FE, "
                         "same bar and stiffening", "ω₁(Ω) / ω₀", ref, value,
                         abs(value - ref) / ref, seconds, 1e-3))
    return rows


def _steady_state_modes(system):
    """Eigenmodes of ``system`` linearized about its state at t = 0 (assembled, velocities
    projected, consistent accelerations and multipliers)."""
    from flexmbs.analysis import eigenmodes, linearize
    from flexmbs.analysis.linear import initial_state

    return eigenmodes(linearize(system, *initial_state(system), 0.0))


def static_and_linear():
    """Static equilibrium and linear analysis of assembled models (docs/static_linear.md):
    the source documents' pendulum hangs down and swings at √(g'/L) (its 1e-9 kg m² bob
    inertia included); the double pendulum's two frequencies against ω² = (g/L)(2 ∓ √2);
    the shipped steel cantilever's static sag under gravity against Euler–Bernoulli
    ρAgL⁴/8EI (EI/ρA from its first frequency); a cantilever spun about its root
    (Kane et al.'s section, equal bending stiffness in both planes, 12 clamped modes with
    their stiffening matrices), linearized about the steady spin at λ = 1 and 2: the
    first flapwise frequency against Hodges and Rutkowski and the first in-plane one
    against √(ω_flap² − Ω²)."""
    import warnings as _warnings

    from flexmbs.analysis import eigenmodes, linearize, static_equilibrium
    from flexmbs.assembly import System
    from flexmbs.cases import load_case
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.reduction import clamped_modes
    from flexmbs.model import ModelBuilder, Polynomial

    rows = []
    start = time.perf_counter()
    system = System(load_case(ROOT / "cases" / "seed_pendulum.toml").model)
    rest = static_equilibrium(system)
    (mode,) = eigenmodes(linearize(system, rest.q, lam=rest.lam))
    exact = np.sqrt(9.81 * 0.5 / (0.25 + 1e-9)) / (2 * np.pi)
    rows.append(_row("pendulum at rest (static, linear)", "√(m g L / (m L² + I))/2π",
                     "frequency [Hz]", exact, mode.frequency_hz,
                     abs(mode.frequency_hz - exact) / exact, time.perf_counter() - start,
                     1e-8))
    start = time.perf_counter()
    system = System(load_case(ROOT / "cases" / "seed_double_pendulum.toml").model)
    rest = static_equilibrium(system)
    modes = eigenmodes(linearize(system, rest.q, lam=rest.lam))
    for k, sign in enumerate((1.0, -1.0)):
        exact = np.sqrt(9.81 / 0.5 * (2 - sign * np.sqrt(2))) / (2 * np.pi)
        rows.append(_row("double pendulum at rest", "ω² = (g/L)(2 ∓ √2)",
                         f"frequency {k + 1} [Hz]", exact, modes[k].frequency_hz,
                         abs(modes[k].frequency_hz - exact) / exact,
                         time.perf_counter() - start, 1e-6))
    start = time.perf_counter()
    case = load_case(ROOT / "cases" / "cantilever_release.toml",
                     {"model.gravity": [0.0, 0.0, -9.81], "bodies.beam.xi": [0.0] * 4})
    system = System(case.model)
    rest = static_equilibrium(system)
    data = system.bodies[0].data
    tip = (data.phi.reshape(data.n_nodes, 3, -1)[int(np.argmax(data.nodes[:, 0]))]
           @ rest.q[7:])[2]
    length = float(np.ptp(data.nodes[:, 0]))
    ei_rho_a = (2 * np.pi * data.frequencies[0]) ** 2 * length**4 / 1.875104068711961**4
    exact = 9.81 * length**4 / (8 * ei_rho_a)
    rows.append(_row("steel cantilever sag under gravity (4 modes)", "Euler–Bernoulli "
                     "ρAgL⁴/8EI", "tip deflection [m]", exact, -float(tip),
                     abs(-tip - exact) / exact, time.perf_counter() - start, 5e-3))
    length, area, inertia, young, rho = 10.0, 4e-4, 2e-7, 7e10, 3000.0
    fe = straight_beam(length, 40, BeamSection(A=area, Iy=inertia, Iz=inertia,
                                               J=2 * inertia), Material(E=young, nu=0.3,
                                                                        rho=rho))
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        data = with_stiffening(clamped_modes(fe, "root", 12), fe)
    unit = np.sqrt(young * inertia / (rho * area * length**4))
    tip_rows = data.phi.reshape(data.n_nodes, 3, -1)[-1]
    for lam, flap in ((1.0, 3.6816), (2.0, 4.1373)):
        start = time.perf_counter()
        b = ModelBuilder()
        b.add_flexible_body("beam", data)
        b.add_marker("beam", "root", node=1)
        b.add_marker("ground", "O")
        b.add_revolute("hub", "ground.O", "beam.root")
        b.add_drive("spin", "rotation", Polynomial((0.0, lam * unit)), marker_i="ground.O",
                    marker_j="beam.root")
        found = {"flap": [], "plane": []}
        for m in _steady_state_modes(System(b.finalize())):
            motion = np.abs(tip_rows @ m.shape[7:])
            found["flap" if motion[2] > motion[1] else "plane"].append(
                2 * np.pi * m.frequency_hz / unit)
        seconds = time.perf_counter() - start
        name = f"cantilever spun at λ = {lam:g}, linearized about the spin"
        rows.append(_row(name, "Hodges–Rutkowski (1981) flapwise", "ω₁ / √(EI/ρAL⁴)",
                         flap, min(found["flap"]), abs(min(found["flap"]) - flap) / flap,
                         seconds, 1e-4))
        inplane = float(np.sqrt(flap**2 - lam**2))
        rows.append(_row(name, "in-plane: √(ω_flap² − Ω²)", "ω₁ / √(EI/ρAL⁴)", inplane,
                         min(found["plane"]),
                         abs(min(found["plane"]) - inplane) / inplane, seconds, 1e-4))
    return rows


def stresses():
    """Stress recovery from stress modes (docs/stress.md): the root bending stress of a
    1 m steel cantilever (20 × 10 mm, 40 beam elements) under a static tip load against
    σ = P L c / I, with 4 and 16 clamped modes and with 4 modes plus the static
    correction of the tip; the same cantilever settling under gravity with 0.7 modal
    damping, run with 8 modes: its final root stress against ρ A g L² c / (2 I); a
    solid-hex cantilever (1 m × 0.1 m × 0.1 m, 80 × 2 × 4 bricks, ν = 0) under a tip
    load: the top-face σ_xx at mid-length against M c / I; and the peak root stress of
    the steel arm of cases/arm_beam_steel.toml over its run (reported)."""
    from flexmbs.cases import load_case, run_case
    from flexmbs.modal import write_modal
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.fe.solid import box_mesh
    from flexmbs.modal.reduction import clamped_modes
    from flexmbs.results.stress import field_history, stress_report

    rows = []
    section, steel, load = BeamSection.rectangle(0.02, 0.01), Material.steel(), 10.0
    fe = straight_beam(1.0, 40, section, steel)
    tip = fe.node_sets["tip"][0]
    exact = load * 1.0 * 0.005 / section.Iy
    for n, correct in ((4, False), (16, False), (4, True)):
        start = time.perf_counter()
        data = clamped_modes(fe, "root", n)
        if correct:
            data = static_correction(data, fe, "tip")
        data = with_stress(data, fe)
        xi = np.linalg.solve(data.K_ff, data.phi.reshape(-1, 3, data.n_modes)[tip].T
                             @ np.array([0.0, 0.0, load]))
        value = float(np.max(np.abs(data.modal_fields["fibre_stress"][0] @ xi)))
        name = (f"cantilever, static tip load, {n} modes"
                + (" + static correction" if correct else ""))
        rows.append(_row(name, "σ = P L c / I", "root stress [MPa]", exact / 1e6,
                         value / 1e6, abs(value - exact) / exact, time.perf_counter() - start,
                         # 4 modes alone: reported (the truncation error, 4.4 %)
                         1e-6 if correct else (None if n == 4 else 0.005)))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        modal = Path(folder) / "beam8.fmd.h5"
        write_modal(with_stress(clamped_modes(fe, "root", 8), fe), modal)
        # the shipped released cantilever, settling from rest under gravity instead
        _, result = run_case(load_case(ROOT / "cases" / "cantilever_release.toml", {
            "model.gravity": [0.0, 0.0, -9.81], "bodies.beam.modal_data": str(modal),
            "bodies.beam.modes": 8, "bodies.beam.xi": [0.0] * 8,
            "bodies.beam.damping_ratio": 0.7, "solver.t_end": 0.6,
            "solver.output_every": 10, "solver.h": 1e-3}))
    final = float(np.max(np.abs(field_history(result, "beam", "fibre_stress")[-1, 0])))
    exact = steel.rho * section.A * 9.81 * 0.005 / (2 * section.Iy)
    rows.append(_row("cantilever settling under gravity (ζ = 0.7), 8 modes, a run",
                     "σ = ρ A g L² c / (2 I)", "final root stress [MPa]", exact / 1e6,
                     final / 1e6, abs(final - exact) / exact, time.perf_counter() - start,
                     0.01))
    start = time.perf_counter()
    side, tip_load = 0.1, 100.0
    box = box_mesh(1.0, side, side, 80, 2, 4, E=2.1e11, nu=0.0, rho=7850.0)
    data = with_stress(static_correction(clamped_modes(box, "x0", 4), box, "x1", "3"), box)
    face = box.node_sets["x1"]
    force = np.zeros((box.n_nodes, 3))
    force[face, 2] = tip_load / len(face)
    stress = data.modal_fields["stress"] @ np.linalg.solve(data.K_ff, data.phi.T @ force.ravel())
    x, z = box.nodes[:, 0], box.nodes[:, 2]
    top = np.flatnonzero(np.isclose(x, 0.5) & np.isclose(z, z.max()))
    exact = tip_load * 0.5 * (side / 2) / (side**4 / 12)
    value = float(-np.mean(stress[top, 0]))
    rows.append(_row("solid-hex cantilever (80 × 2 × 4 bricks, ν = 0), tip load",
                     "σ = M c / I at mid-length", "top-face σ_xx [MPa]", exact / 1e6,
                     value / 1e6, abs(value - exact) / exact, time.perf_counter() - start,
                     0.01))
    start = time.perf_counter()
    _, result = run_case(load_case(ROOT / "cases" / "arm_beam_steel.toml"))
    report = stress_report(result, "beam")
    rows.append(_row("steel arm (cases/arm_beam_steel.toml), 1 s", "— (reported)",
                     f"peak root stress [MPa] (t = {report['peak_time_s']:.3g} s, node "
                     f"{report['peak_node']})", None, report["peak_von_mises_pa"] / 1e6,
                     None, time.perf_counter() - start))
    return rows


PROBLEMS = (pendulum, double_pendulum, beam_frequencies, craig_bampton_truncation,
            integrator_spectral_radius, integrator_period_error, arm_beam, rotating_beam,
            rotating_cantilever_frequencies, solid_spin_stiffening, slewing_beam,
            flexible_slider_crank, static_and_linear, kane_exact, modal_derivatives,
            stresses)
#: Problems outside the report (longer runs; ``python validation/run.py --extra`` prints
#: their rows): the geometrically exact beam's spin-ups (docs/nonlinear_beam.md).
EXTRA = (kane_nonlinear_beam,)

TO_DO = [
    "the rotating beam against Kane et al.'s own curves, digitised from the paper (J. "
    "Guidance 10(2), 1987, figures only; not in the sources we could consult): here the "
    "comparison is with the two theories the paper compares, solved independently, and "
    "with a geometrically exact beam written for this report; the published finding — "
    "the conventional linear theory diverges at Ω = 10 rad/s, the stiffened one does "
    "not — is reproduced",
]


def _fmt(v):
    if isinstance(v, float):
        return "–" if np.isnan(v) else f"{v:.6g}"
    return str(v).replace("|", "\\|")


FIGURES = {  # file in docs/validation/ → caption
    "slider_crank_midpoint.png": "Simeon's flexible slider–crank: the connecting rod's "
    "midpoint deflection, flexmbs against the independent solution of the published "
    "equations (consistent axial mass).",
    "arm_beam_coupling.png": "Seed arm + beam (free elbow, 2 s) in the four coupling modes: "
    "tip deflection, ξ₁ and the shoulder angle. One-way, no-Mrf and rigid move the arm "
    "identically; no-Mrf and rigid leave the beam at rest.",
    "modal_derivatives_kane.png": "Kane et al.'s spin-up at Ω = 10 rad/s: the tip "
    "deflection of the geometrically exact beam and of the body with modal derivatives "
    "(top); the differences of the stiffened linear body and of the body with modal "
    "derivatives (same 8 modes), relative to the peak (bottom).",
    "modal_derivatives_elastica.png": "A cantilever under a dead tip load: the tip's "
    "distance from the elastica, linear body and body with modal derivatives (same 4 "
    "modes).",
}


def _accepts_figures(problem) -> bool:
    import inspect

    return "figures" in inspect.signature(problem).parameters


def _run_problem(args):
    problem_name, figures = args
    problem = next(p for p in PROBLEMS if p.__name__ == problem_name)
    start = time.perf_counter()
    rows = problem(figures) if _accepts_figures(problem) else problem()
    seconds = time.perf_counter() - start
    return [{**row, "group": problem_name, "problem time [s]": seconds} for row in rows]


def run_all(figures: Path | None = None, workers: int = 1) -> list[dict]:
    """Every problem's rows, in order; figures go to ``figures`` (none if None). With
    ``workers`` > 1 the problems run in that many processes (run times then include the
    sharing of the machine)."""
    jobs = [(p.__name__, figures) for p in PROBLEMS]
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # Linux: fork, so that the children hold this module however it was imported
        # (the tests load it from its path); elsewhere spawn (fork is unsafe on macOS),
        # which needs the module importable by name (python validation/run.py is)
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux")
                                              else "spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            # the longest problems first, so that they do not start last
            order = sorted(range(len(jobs)), key=lambda k: -LONGEST.get(jobs[k][0], 0))
            futures = {k: pool.submit(_run_problem, jobs[k]) for k in order}
            results = [futures[k].result() for k in range(len(jobs))]
    else:
        results = [_run_problem(job) for job in jobs]
    return [row for rows in results for row in rows]


#: Rough run times [s] of the long problems (scheduling order only; measured one at a
#: time on the 2-core machine, 2026-12-07: docs/validation.md's summary).
LONGEST = {"modal_derivatives": 16, "kane_exact": 12, "rotating_beam": 7,
           "double_pendulum": 4.5, "flexible_slider_crank": 3.5, "slewing_beam": 1.4}

COLUMNS = ("problem", "source", "quantity", "reference", "flexmbs", "error", "limit",
           "verdict", "run time [s]")


def _summary(rows: list[dict]) -> list[str]:
    """One line per problem: figures, how many bounded and within their limits, the
    worst error/limit ratio, the problem's whole run time (references included)."""
    lines = ["| problem | figures | within limit | reported only | worst error / limit | "
             "run time [s] |", "|---|---|---|---|---|---|"]
    for problem in PROBLEMS:
        group = [r for r in rows if r.get("group") == problem.__name__]
        if not group:
            continue
        bounded = [r for r in group if r["limit"] is not None]
        ok = sum(verdict(r) == "pass" for r in bounded)
        worst = max((r["error"] / r["limit"] for r in bounded if r["limit"] > 0),
                    default=float("nan"))
        seconds = group[0].get("problem time [s]", float("nan"))
        lines.append(f"| {problem.__name__} | {len(group)} | {ok} of {len(bounded)} | "
                     f"{len(group) - len(bounded)} | {_fmt(worst)} | {_fmt(seconds)} |")
    return lines


def build(out: Path, rows: list[dict] | None = None, workers: int = 1) -> Path:
    """Write ``out``/validation.md from ``rows`` (default: run every problem, figures to
    ``out``/validation/)."""
    rows = run_all(out / "validation", workers) if rows is None else rows
    lines = ["# Validation", "",
             "<!-- Generated by validation/run.py; rerun it to refresh. -->", "",
             "Every figure on this page is computed by `python validation/run.py`. Errors "
             "are relative for frequencies, periods and peaks, absolute otherwise. Each "
             "bounded figure has the limit its reference's own accuracy allows; "
             "\"reported\" figures show where the model is known to differ from the "
             "reference (that difference is the result).", "", "## Summary", ""]
    lines += _summary(rows)
    lines += ["", "## All figures", "",
              "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = {**r, "limit": "–" if r["limit"] is None else r["limit"],
                 "verdict": verdict(r)}
        lines.append("| " + " | ".join(_fmt(cells[c]) for c in COLUMNS) + " |")
    if TO_DO:
        lines += ["", "## Still to do", ""] + [f"- {item}" for item in TO_DO]
    lines += ["", "## What each problem does", ""]
    lines += [f"- **{p.__name__}**: {' '.join((p.__doc__ or '').split())}" for p in PROBLEMS]
    shown = [(name, caption) for name, caption in FIGURES.items()
             if (out / "validation" / name).exists()]
    if shown:
        lines += ["", "## Figures", ""]
        for name, caption in shown:
            lines += [f"![{caption}](validation/{name})", "", f"*{caption}*", ""]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "validation.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs"), help="output folder")
    parser.add_argument("--workers", type=int, default=1,
                        help="run the problems in this many processes (default 1)")
    parser.add_argument("--extra", action="store_true",
                        help="print the rows of the problems outside the report (EXTRA)")
    args = parser.parse_args(argv)
    if args.extra:
        for problem in EXTRA:
            for row in problem():
                print(f"{row['problem']}: {row['quantity']} = {row['flexmbs']:.3g} "
                      f"(limit {row['limit']:.3g}, {verdict(row)})")
        return 0
    print(f"wrote {build(Path(args.out), workers=args.workers)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
