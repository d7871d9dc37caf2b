"""Model-check advice that works (issue 16, class 9): the redundancy report of a closed
planar loop modelled in 3D says which joint change removes the redundant equations, and
following it does; a universal joint whose axes start parallel is named instead of the
Euler-parameter rows that assembly would otherwise blame."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from flexmbs.assembly import System
from flexmbs.errors import ConvergenceError, ModelError
from flexmbs.integrators import simulate
from flexmbs.model import ModelBuilder

INERTIA = [1e-3, 1e-2, 1e-2]
PTS = [(0, 0, 0), (0.2, 0.3, 0), (0.7, 0.35, 0), (0.8, 0, 0)]


def link(b, name, start, end, mass=1.0):
    start, end = np.asarray(start, float), np.asarray(end, float)
    b.add_rigid_body(name, mass, INERTIA, position=(start + end) / 2)
    b.add_marker(name, "A", start, frame="global")
    b.add_marker(name, "B", end, frame="global")


def four_bar(closing: str = "revolute") -> ModelBuilder:
    """The planar four-bar in 3D (all joint axes along z), gravity in its plane; the
    closing joint D between the rocker and the ground is of kind ``closing``."""
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_marker("ground", "P0", PTS[0])
    b.add_marker("ground", "P3", PTS[3])
    link(b, "crank", PTS[0], PTS[1])
    link(b, "coupler", PTS[1], PTS[2])
    link(b, "rocker", PTS[2], PTS[3])
    b.add_revolute("A", "ground.P0", "crank.A")
    b.add_revolute("B", "crank.B", "coupler.A")
    b.add_revolute("C", "coupler.B", "rocker.A")
    b.add_joint("D", closing, "rocker.B", "ground.P3")
    return b


def test_four_bar_redundancy_comes_with_advice_that_removes_it():
    report = System(four_bar().finalize()).check()
    assert (report.dof, len(report.redundant)) == (1, 3)
    # the joint owning most redundant rows comes first, with the kind that fits (which
    # rows of the loop the rank test names follows the rounding of equal pivots: all
    # three on D, or one on A and two on D with OpenBLAS's generic kernels)
    owned = Counter(name.split("[", 1)[0] for name in report.redundant)
    first = owned.most_common(1)[0][0]
    assert report.advice.startswith(f"to remove them, make joint {first!r} (revolute, 5 "
                                    "equations) a point-on-line joint on the same markers")
    assert report.advice in report.message

    fixed = System(four_bar("point-on-line").finalize())
    after = fixed.check()
    assert (after.dof, after.redundant, after.advice) == (1, (), "")
    result = simulate(fixed, 0.2, 2e-3, "generalized-alpha", rho_inf=0.8)
    assert result.status == "completed", result.message
    assert np.max(result.phi_violation) < 1e-8
    # the loop moves under gravity, in its plane
    crank_y = result.coordinate("crank.y")
    assert abs(crank_y[-1] - crank_y[0]) > 1e-3
    np.testing.assert_allclose(result.coordinate("coupler.z"), 0.0, rtol=0, atol=1e-10)


FOUR_BAR_TOML = """
[model]
gravity = [0.0, -9.81, 0.0]
{bodies}
[[markers]]
body = "ground"
name = "P0"
[[markers]]
body = "ground"
name = "P3"
position = [0.8, 0.0, 0.0]
{markers}
[[joints]]
name = "A"
type = "revolute"
i = "ground.P0"
j = "crank.A"
[[joints]]
name = "B"
type = "revolute"
i = "crank.B"
j = "coupler.A"
[[joints]]
name = "C"
type = "revolute"
i = "coupler.B"
j = "rocker.A"
[[joints]]
name = "D"
type = "{closing}"
i = "rocker.B"
j = "ground.P3"
[solver]
h = 2e-3
t_end = 0.02
"""


def four_bar_case(path, closing):
    bodies, markers = [], []
    for name, (a, b) in {"crank": (PTS[0], PTS[1]), "coupler": (PTS[1], PTS[2]),
                         "rocker": (PTS[2], PTS[3])}.items():
        mid = [(x + y) / 2 for x, y in zip(a, b, strict=True)]
        bodies.append(f"[[bodies]]\nname = '{name}'\nmass = 1.0\ninertia = {INERTIA}\n"
                      f"position = {mid}")
        for marker, point in (("A", a), ("B", b)):
            markers.append(f"[[markers]]\nbody = '{name}'\nname = '{marker}'\n"
                           f"frame = 'global'\nposition = {list(map(float, point))}")
    path.write_text(FOUR_BAR_TOML.format(bodies="\n".join(bodies),
                                         markers="\n".join(markers), closing=closing))
    return path


def test_the_redundant_four_bar_case_is_refused_with_the_advice(tmp_path, capsys):
    from flexmbs.cli.main import main

    case = four_bar_case(tmp_path / "four_bar.toml", "revolute")
    out = tmp_path / "four_bar.res.h5"
    assert main(["run", str(case), "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "3 redundant constraint equation(s)" in err
    assert "make joint 'D' (revolute, 5 equations) a point-on-line joint" in err
    assert "Traceback" not in err and not out.exists()
    # following the advice in the case file: it runs
    four_bar_case(case, "point-on-line")
    assert main(["run", str(case), "-o", str(out), "--quiet", "--json"]) == 0
    assert '"status": "completed"' in capsys.readouterr().out


def test_a_duplicated_joint_is_advised_away():
    b = ModelBuilder()
    b.add_marker("ground", "O")
    b.add_rigid_body("bob", 1.0, [1e-3, 1e-3, 1e-3], com=(0, -0.5, 0))
    b.add_marker("bob", "O")
    b.add_revolute("hinge", "ground.O", "bob.O")
    b.add_revolute("hinge_again", "ground.O", "bob.O")
    report = System(b.finalize()).check()
    assert len(report.redundant) == 5
    assert "remove joint 'hinge" in report.advice


def cardan(z_of_rod) -> System:
    """A rod hanging from a universal joint whose ground axis is z."""
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_marker("ground", "O", orientation=[0, 0, 1])
    link(b, "rod", (0, 0, 0), (0, -1, 0))
    b.add_marker("rod", "U", (0, 0, 0), orientation=z_of_rod, frame="global")
    b.add_joint("cardan", "universal", "ground.O", "rod.U")
    return System(b.finalize())


def test_universal_joint_with_parallel_axes_is_named_not_the_euler_parameters():
    system = cardan([0, 0, 1])
    with pytest.raises(ModelError, match=r"joint 'cardan' \(universal\).*axis z of marker "
                                         r"'ground.O' perpendicular to axis z of marker "
                                         r"'rod.U'.*parallel") as exc:
        system.assemble()
    assert "norm" not in str(exc.value)
    with pytest.raises(ModelError, match="joint 'cardan'"):
        simulate(system, 0.01, 1e-3)
    # the cross at right angles assembles (and antiparallel is named too)
    q = cardan([1, 0, 0]).assemble()
    assert np.all(np.isfinite(q))
    with pytest.raises(ModelError, match="antiparallel"):
        cardan([0, 0, -1]).assemble()


def test_a_model_that_cannot_assemble_for_other_reasons_still_raises_convergence():
    b = ModelBuilder()
    b.add_marker("ground", "O")
    b.add_marker("ground", "F", (5.0, 0, 0))
    link(b, "rod", (0, 0, 0), (1, 0, 0))
    b.add_spherical("s1", "ground.O", "rod.A")
    b.add_spherical("s2", "ground.F", "rod.B")  # 5 m apart: cannot be satisfied
    with pytest.raises(ConvergenceError, match="assembly did not converge"):
        System(b.finalize()).assemble()
