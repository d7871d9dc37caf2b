"""BLAS threads during the steps (flexmbs.integrators.simulate, benchmarks/README.md):
one thread while a compiled run factors a dense iteration matrix of order 64 or more
(OpenBLAS threads those, and on a loaded machine each threaded factorisation waits for
a core), the caller's setting for smaller or sparse ones and after the run."""

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

from flexmbs.assembly import System  # noqa: E402
from flexmbs.integrators import simulate  # noqa: E402
from flexmbs.integrators.simulate import ONE_BLAS_THREAD_FROM  # noqa: E402
from flexmbs.modal.fe.beam import BeamSection, Material  # noqa: E402
from flexmbs.model import ModelBuilder  # noqa: E402


def _blas_threads() -> set:
    return {lib["num_threads"] for lib in threadpoolctl.threadpool_info()
            if lib["user_api"] == "blas"}


def _beam(elements):
    b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_nonlinear_beam("arm", 1.0, elements, BeamSection.rectangle(0.02, 0.01),
                         Material(E=1e7, nu=0.3, rho=1000.0))
    b.add_marker("ground", "clamp")
    b.add_marker("arm", "root", node="root")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    return System(b.finalize())


@pytest.mark.parametrize("elements", [2, 12])
def test_the_steps_of_a_large_dense_run_keep_blas_on_one_thread(elements):
    # two threads as the caller's setting (the suite runs BLAS on one: tests/conftest.py)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        assert _blas_threads() == {2}
        _steps_keep_blas_threads(elements)


def _steps_keep_blas_threads(elements):
    system = _beam(elements)
    order = system.n_q + system.n_c
    before = _blas_threads()
    seen = []
    result = simulate(system, 0.005, 1e-3, engine="compiled",
                      progress=lambda *args: seen.append(_blas_threads()))
    assert result.success and seen
    if order >= ONE_BLAS_THREAD_FROM:
        assert all(threads == {1} for threads in seen), (order, seen)
    else:
        assert all(threads == before for threads in seen), (order, seen, before)
    assert _blas_threads() == before  # restored after the run
    assert np.isfinite(result.q).all()
