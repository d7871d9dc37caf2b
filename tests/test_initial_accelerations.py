"""The consistent accelerations and multipliers (q̈, λ) at a run's start and after a
contact impulse (flexmbs.integrators.reference.accelerations): from the step kernel's
iteration matrix and residual where the compiled engine runs, against the NumPy
assembly of M, Φ_q, Q and γ, on every shipped case at states of its own run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flexmbs.assembly import System
from flexmbs.cases import load_case, run_case
from flexmbs.engine.compiled_system import CompiledSystem
from flexmbs.integrators import reference

CASES = sorted((Path(__file__).resolve().parents[1] / "cases").glob("*.toml"))


def _short_run(path: Path, steps: int = 30):
    case = load_case(path)
    case.solver = case.solver.replace(t_end=steps * float(case.solver["h"]))
    return run_case(case)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_the_kernel_route_gives_the_numpy_accelerations(path):
    """Same q̈ and λ to 1e-9 of their largest entries (round-off, amplified where the
    elastic forces of a stiff rod nearly cancel: 2e-11 on the elastica), and the same
    angle memory left in the System, at the start, middle and end of a short run."""
    system, result = _short_run(path)
    if result.statistics["engine"] != "compiled":
        pytest.skip(f"runs on the NumPy path: {result.statistics['engine_note']}")
    compiled = CompiledSystem(system)
    for k in (0, len(result.t) // 2, len(result.t) - 1):
        q, qd, t = result.q[k].copy(), result.qd[k].copy(), float(result.t[k])
        memory = dict(system.angle_memory)
        qdd_np, lam_np = reference.accelerations(system, q, qd, t)
        after_np = dict(system.angle_memory)
        system.angle_memory = dict(memory)
        qdd_k, lam_k = reference.accelerations(system, q, qd, t, compiled=compiled)
        assert system.angle_memory == after_np
        for got, want in ((qdd_k, qdd_np), (lam_k, lam_np)):
            scale = max(np.max(np.abs(want), initial=0.0), 1e-300)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * scale)


def test_the_kernel_route_assembles_nothing_in_numpy(monkeypatch):
    """Where it applies, M, Φ_q and Q come from the kernel (the NumPy assembly refused);
    with a joint actuator (whose angle memory the System's forces move) they do not."""
    folder = CASES[0].parent
    system, result = _short_run(folder / "cantilever_release.toml")
    arm, arm_result = _short_run(folder / "arm_beam_pd.toml")
    assert any(f.element_kind == "joint_actuator" for f in arm.model.forces)
    compiled, arm_compiled = CompiledSystem(system), CompiledSystem(arm)
    q, qd, t = result.q[-1], result.qd[-1], float(result.t[-1])
    want = reference.accelerations(system, q, qd, t)

    def refused(*args, **kwargs):
        raise AssertionError("assembled in NumPy")

    for name in ("mass_matrix", "jacobian", "forces"):
        monkeypatch.setattr(System, name, refused)
    got = reference.accelerations(system, q, qd, t, compiled=compiled)
    np.testing.assert_allclose(got[0], want[0], rtol=0,
                               atol=1e-12 * np.max(np.abs(want[0])))
    with pytest.raises(AssertionError, match="assembled in NumPy"):
        reference.accelerations(arm, arm_result.q[-1], arm_result.qd[-1],
                                float(arm_result.t[-1]), compiled=arm_compiled)
