"""Build docs/validation/nonlinear_beam_elastica.png (docs/nonlinear_beam.md): the
cantilever under PL²/EI = 1, 2, 5, 10 with 16 geometrically exact elements against the
collocation solution of the same beam, and the tip error against the number of
elements. Run from the repository root: python docs/scripts/build_nonlinear_beam.py"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy.integrate import solve_bvp

from flexmbs.analysis import static_equilibrium
from flexmbs.assembly import System
from flexmbs.modal.fe.beam import BeamSection, Material
from flexmbs.model import ModelBuilder

OUT = Path(__file__).resolve().parents[1] / "validation" / "nonlinear_beam_elastica.png"
SECTION = BeamSection(A=1.0, Iy=1e-6, Iz=2e-6, J=2e-6, ky=1.0, kz=1.0)
MATERIAL = Material(E=1e6, nu=0.0, rho=1.0)  # EI = 1, EA = 1e6, GA = 5e5
EA, GA = 1e6, 5e5


def elastica(load):
    def rhs(s, y):
        th, m = y[2], y[3]
        eps, gam = -load * np.sin(th) / EA, -load * np.cos(th) / GA
        xp = (1 + eps) * np.cos(th) - gam * np.sin(th)
        wp = (1 + eps) * np.sin(th) + gam * np.cos(th)
        return np.vstack([xp, wp, m, load * xp])

    s = np.linspace(0, 1, 201)
    guess = np.zeros((4, s.size))
    guess[0] = s
    return solve_bvp(rhs, lambda a, b: np.array([a[0], a[1], a[2], b[3]]), s, guess,
                     tol=1e-10, max_nodes=100000)


def nodes(n, load):
    b = ModelBuilder()
    b.add_nonlinear_beam("arm", 1.0, n, SECTION, MATERIAL)
    b.add_marker("ground", "clamp")
    b.add_marker("arm", "root", node="root")
    b.add_marker("arm", "tip", node="tip")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    b.add_point_force("load", "arm.tip", [0.0, 0.0, -load])
    rest = static_equilibrium(System(b.finalize()))
    return np.array([[rest.coordinate(f"arm/{k}.x"), rest.coordinate(f"arm/{k}.z")]
                     for k in range(1, n + 2)])


def main():
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2))
    counts = np.array([4, 8, 16, 32])
    for load, colour in zip((1, 2, 5, 10), ("C0", "C1", "C2", "C3"), strict=True):
        sol = elastica(load)
        s = np.linspace(0, 1, 200)
        ax.plot(sol.sol(s)[0], sol.sol(s)[1], color=colour, lw=1)
        pts = nodes(16, load)
        ax.plot(pts[:, 0], pts[:, 1], "o", color=colour, ms=3,
                label=f"PL²/EI = {load}")
        exact = np.array([sol.y[0, -1], sol.y[1, -1]])
        errors = [np.max(np.abs(nodes(n, load)[-1] - exact)) for n in counts]
        bx.loglog(counts, errors, "o-", color=colour, label=f"PL²/EI = {load}")
    bx.loglog(counts, 0.1 / counts**4, "k--", lw=0.8, label="∝ 1/n⁴")
    ax.set(xlabel="x / L", ylabel="z / L", aspect="equal",
           title="16 elements (dots) and solve_bvp (lines)")
    ax.legend(fontsize=8)
    bx.set(xlabel="elements n", ylabel="max tip error / L", title="Convergence")
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT, dpi=110)


if __name__ == "__main__":
    main()
