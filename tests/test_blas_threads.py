"""BLAS threads in flexmbs's own entry points (flexmbs._blas.one_blas_thread,
docs/compiled.md "BLAS threads"): reading a case, and a run with its set-up and its
steps, keep BLAS on one thread whatever the model's size, and give the caller's setting
back afterwards, also when they raise. OpenBLAS threads even a 3 × 3 solve with several
right-hand sides, and the woken thread then spins on the other core for about 0.1 s."""

from pathlib import Path

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")
# a caller that uses SciPy itself: its setting covers SciPy's BLAS too (SciPy loaded by a
# run, as a large model's factorizations load it, is tests/test_run_imports.py's)
import scipy.linalg  # noqa: E402, F401

from flexmbs.assembly import System  # noqa: E402
from flexmbs.cases import load_case, run_case  # noqa: E402
from flexmbs.errors import FlexmbsError  # noqa: E402
from flexmbs.integrators import simulate  # noqa: E402
from flexmbs.modal.fe.beam import BeamSection, Material  # noqa: E402
from flexmbs.model import ModelBuilder  # noqa: E402

CASES = Path(__file__).resolve().parent.parent / "cases"


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
@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_the_steps_run_blas_on_one_thread_at_any_order(elements, engine):
    # two threads as the caller's setting (the suite runs BLAS on one: tests/conftest.py)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        assert _blas_threads() == {2}
        system = _beam(elements)
        seen = []
        result = simulate(system, 0.005, 1e-3, engine=engine,
                          progress=lambda *args: seen.append(_blas_threads()))
        assert result.success and seen
        assert all(threads == {1} for threads in seen), (system.n_q + system.n_c, seen)
        assert _blas_threads() == {2}  # the caller's setting after the run
        assert np.isfinite(result.q).all()


def test_reading_and_running_a_case_keep_blas_on_one_thread(monkeypatch):
    import flexmbs.cases.loader as loader
    import flexmbs.cases.run as run

    seen = {}
    system_of = run.case_system

    def spy_system(*args, **kwargs):
        seen["system"] = _blas_threads()
        return system_of(*args, **kwargs)

    builder = loader.ModelBuilder

    class SpyBuilder(builder):
        def finalize(self):
            seen["load"] = _blas_threads()
            return super().finalize()

    monkeypatch.setattr(run, "case_system", spy_system)
    monkeypatch.setattr(loader, "ModelBuilder", SpyBuilder)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        case = load_case(CASES / "seed_pendulum.toml", overrides={"solver.t_end": 0.01})
        assert _blas_threads() == {2}
        _, result = run_case(case)
        assert result.success and _blas_threads() == {2}
    assert seen == {"load": {1}, "system": {1}}


def test_the_callers_setting_comes_back_when_reading_fails(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[model]\ngravity = 'down'\n", encoding="utf-8")
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        with pytest.raises(FlexmbsError):
            load_case(bad)
        assert _blas_threads() == {2}


def test_overlapping_runs_in_two_threads_give_the_callers_setting_back():
    """OpenBLAS's thread count is the process's: two threads inside flexmbs's entry
    points at once share one limit, and the last to leave restores the caller's."""
    import threading

    from flexmbs._blas import one_blas_thread

    seen, both_inside, a_may_leave = {}, threading.Barrier(2), threading.Event()

    @one_blas_thread
    def first():
        both_inside.wait()
        a_may_leave.wait()
        seen["first, the other gone"] = _blas_threads()

    @one_blas_thread
    def second():
        both_inside.wait()
        seen["second"] = _blas_threads()

    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        threads[1].join()
        seen["between"] = _blas_threads()  # the first still inside
        a_may_leave.set()
        threads[0].join()
        assert _blas_threads() == {2}
    assert seen == {"second": {1}, "between": {1}, "first, the other gone": {1}}
