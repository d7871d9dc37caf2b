"""Bodies with modal derivatives (``nonlinear = true``) against geometrically exact
references, for the validation report (validation/run.py, problem
``modal_derivatives``; docs/theory_modal_derivatives.md).

* Kane et al.'s spin-up at Ω = 4, 6 and 10 rad/s: the 40-element beam's 8 Craig–Bampton
  modes enriched with their modal derivatives against the planar ANCF beam of
  validation/kane_exact_reference.py (16 elements, nothing linearized), next to the
  stiffened linear body with the same modes;
* a cantilever under a dead transverse tip load, P L²/EI = 0.25 … 2, against the
  elastica (the inextensible Euler beam, scipy's solve_bvp): the enriched body and the
  linear one with the same modes (4 clamped modes of 40 elements).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
from scipy.integrate import solve_bvp, trapezoid

#: The elastica's loads P L²/EI for the figure; the rows use 1 and 2.
ALPHAS = (0.25, 0.5, 1.0, 1.5, 2.0)
#: The Kane beam's spin rates [rad/s].
OMEGAS = (4.0, 6.0, 10.0)


def elastica_tip(alpha: float) -> tuple[float, float]:
    """(axial, transverse) tip displacement / L of an inextensible cantilever under a
    dead transverse tip load P, α = P L²/EI: θ″ = −α cos θ on s ∈ [0, 1], θ(0) = 0,
    θ′(1) = 0 (solve_bvp to 1e-10)."""
    s = np.linspace(0.0, 1.0, 201)
    sol = solve_bvp(lambda s, y: np.vstack([y[1], -alpha * np.cos(y[0])]),
                    lambda a, b: np.array([a[0], b[1]]), s,
                    np.vstack([alpha * (s - s**2 / 2), alpha * (1 - s)]), tol=1e-10,
                    max_nodes=100_000)
    if not sol.success:
        raise RuntimeError(f"elastica at α = {alpha}: {sol.message}")
    fine = np.linspace(0.0, 1.0, 20_001)
    theta = sol.sol(fine)[0]
    return trapezoid(np.cos(theta), fine) - 1.0, trapezoid(np.sin(theta), fine)


def _cantilever_tip(data, nonlinear: bool, alpha: float, ei: float) -> np.ndarray:
    """Tip displacement (global, [m]) of the clamped body at equilibrium under the dead
    load P = α EI / L² along y (L = 1 m)."""
    from flexmbs.analysis.static import static_equilibrium
    from flexmbs.assembly import System
    from flexmbs.model import ModelBuilder

    b = ModelBuilder()
    b.add_flexible_body("beam", data, nonlinear=nonlinear)
    b.add_marker("beam", "root", node=1)
    b.add_marker("beam", "tip", node=data.n_nodes)
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", "beam.root")
    b.add_point_force("P", "beam.tip", (0.0, alpha * ei, 0.0))
    system = System(b.finalize())
    state = static_equilibrium(system)
    return system.bodies[0].nodal_displacements(state.q, "global")[-1]


def elastica_errors(alphas=ALPHAS) -> dict:
    """{"linear": [...], "derivatives": [...], "seconds": s}: |tip − elastica| / L at
    each α, for 4 clamped modes of 40 Euler–Bernoulli elements (EI = 1e3 N m², the
    in-plane bending the softest), without and with their modal derivatives."""
    from flexmbs.modal import clamped_modes
    from flexmbs.modal.derivatives import with_modal_derivatives
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam

    ei = 1e3
    section = BeamSection(A=1e-3, Iy=1e-5, Iz=1e-7, J=2e-7)
    fe = straight_beam(1.0, 40, section, Material(E=ei / section.Iz, nu=0.3, rho=1e3))
    linear = clamped_modes(fe, "root", 4)
    start = time.perf_counter()
    enriched = with_modal_derivatives(linear, fe)
    out = {"linear": [], "derivatives": []}
    for alpha in alphas:
        exact = np.array(elastica_tip(alpha))
        for key, data, nonlinear in (("linear", linear, False),
                                     ("derivatives", enriched, True)):
            tip = _cantilever_tip(data, nonlinear, alpha, ei)
            out[key].append(float(np.hypot(*(tip[:2] - exact))))
    out["seconds"] = time.perf_counter() - start
    return out


def kane_histories(run_module, omega: float) -> dict:
    """Tip deflection histories of Kane's beam at ``omega``: ``t``, ``exact`` (ANCF),
    ``stiffened`` and ``derivatives`` (8 Craig–Bampton modes of 40 elements, Newmark
    h = 10 ms, 20 s), the run times ``seconds``."""
    from flexmbs.assembly import System
    from flexmbs.integrators import simulate
    from flexmbs.modal.derivatives import with_modal_derivatives
    from flexmbs.model import ModelBuilder, SpinUp
    from flexmbs.results.histories import tip_history

    beam = run_module.ROTOR
    out = {"seconds": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stiffened = run_module._spin_beam_modes(beam, 8, stiffening=True)
        plain = run_module._spin_beam_modes(beam, 8)
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam

    length, area, inertia, young, rho, ramp = beam
    fe = straight_beam(length, 40, BeamSection(A=area, Iy=100 * inertia, Iz=inertia,
                                               J=2 * inertia),
                       Material(E=young, nu=0.3, rho=rho))
    enriched = with_modal_derivatives(plain, fe)
    for key, data in (("stiffened", stiffened), ("derivatives", enriched)):
        b = ModelBuilder()
        b.add_flexible_body("beam", data, stiffening=key == "stiffened",
                            nonlinear=key == "derivatives")
        b.add_marker("beam", "root", node=1)
        b.add_marker("ground", "O")
        b.add_revolute("hub", "ground.O", "beam.root")
        b.add_drive("spin", "rotation", SpinUp(omega, ramp), marker_i="ground.O",
                    marker_j="beam.root")
        start = time.perf_counter()
        res = simulate(System(b.finalize()), 20.0, 0.01, "newmark")
        out["seconds"][key] = time.perf_counter() - start
        out["t"] = res.t
        out[key] = tip_history(res, "beam")[0][:, 1]
    start = time.perf_counter()
    out["exact"] = run_module._exact_reference().kane_exact_tip(omega, out["t"], beam,
                                                               elements=16)
    out["seconds"]["exact"] = time.perf_counter() - start
    return out


def figure_kane(hist: dict, omega: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    peak = float(np.max(np.abs(hist["exact"])))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 5.6), sharex=True)
    top.plot(hist["t"], hist["exact"], "k", lw=1.2, label="geometrically exact (ANCF)")
    top.plot(hist["t"], hist["derivatives"], "C0--", lw=1.0,
             label="8 modes + modal derivatives")
    top.set_ylabel("tip deflection [m]")
    top.legend(loc="lower left", fontsize=8)
    top.set_title(f"Kane et al.'s spin-up, Ω = {omega:g} rad/s")
    for key, style, label in (("stiffened", "C3", "stiffened linear, 8 modes"),
                              ("derivatives", "C0", "8 modes + modal derivatives")):
        bottom.plot(hist["t"], (hist[key] - hist["exact"]) / peak, style, lw=1.0,
                    label=label)
    bottom.set_ylabel("difference / peak")
    bottom.set_xlabel("t [s]")
    bottom.legend(loc="lower left", fontsize=8)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure_elastica(errors: dict, path: Path, alphas=ALPHAS) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    ax.semilogy(alphas, errors["linear"], "C3o-", label="linear, 4 modes")
    ax.semilogy(alphas, errors["derivatives"], "C0s-",
                label="4 modes + modal derivatives")
    ax.set_xlabel("P L² / EI")
    ax.set_ylabel("|tip − elastica| / L")
    ax.set_title("Cantilever under a dead tip load")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
