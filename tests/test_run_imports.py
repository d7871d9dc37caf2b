"""What a run imports (docs/compiled.md, "What a run imports"): runs from checked native
modal files import no SciPy, and what stands in for SciPy on that path gives SciPy's
answers (the deferred mass matrix, the eigenpairs, the rank proof, the kernel's LU)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import flexmbs
from flexmbs.assembly.rank import dense_rank, rank_tolerance
from flexmbs.modal.deferred_mass import DeferredCSR, stored_mass

ROOT = Path(__file__).resolve().parent.parent
CONSISTENT = ROOT / "modal_data" / "steel_cantilever.fmd.h5"  # a consistent mass


def _pendulum_case(folder: Path) -> Path:
    """A beam of the consistent-mass file, truncated and damped, hinged at its root."""
    path = folder / "pendulum.toml"
    path.write_text(textwrap.dedent(f"""\
        [model]
        gravity = [0.0, 0.0, -9.81]

        [[bodies]]
        name = "beam"
        type = "flexible"
        modal_data = "{CONSISTENT.as_posix()}"
        modes = 4
        damping_ratio = 0.02

        [[markers]]
        body = "ground"
        name = "O"
        z_axis = [0.0, 1.0, 0.0]

        [[markers]]
        body = "beam"
        name = "root"
        node_set = "root"
        z_axis = [0.0, 1.0, 0.0]

        [[joints]]
        name = "hinge"
        type = "revolute"
        i = "ground.O"
        j = "beam.root"

        [solver]
        h = 0.001
        t_end = 0.05
        """), encoding="utf-8")
    return path


def _fresh_run(case: Path, out: Path) -> dict:
    """``flexmbs run case`` in a fresh interpreter: (exit code, SciPy's modules loaded
    at its end, the final q)."""
    code = textwrap.dedent(f"""\
        import json, sys
        from flexmbs.cli.main import main
        rc = main(["run", {str(case)!r}, "--quiet", "-o", {str(out)!r}])
        from flexmbs.results import load_result
        q = load_result({str(out)!r}).q[-1].tolist()
        print(json.dumps({{"rc": rc, "q": q,
                           "scipy": sorted(m for m in sys.modules if m.split(".")[0] == "scipy")}}))
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(case.parent), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", ["arm_beam_seed", "slider_crank_ideal", "consistent"])
def test_a_run_from_checked_modal_files_imports_no_scipy(case, tmp_path):
    path = (_pendulum_case(tmp_path) if case == "consistent"
            else ROOT / "cases" / f"{case}.toml")
    fresh = _fresh_run(path, tmp_path / "fresh.res.h5")
    assert fresh["rc"] in (0, 3)  # (3: completed with warnings, the seed arm's)
    assert fresh["scipy"] == []
    if case == "consistent":  # the same answer in a process that has SciPy loaded
        _, result = flexmbs.run_case(flexmbs.load_case(path))
        np.testing.assert_allclose(fresh["q"], result.q[-1], rtol=0, atol=1e-12)


def _shapes_of(data) -> dict:
    """A ModalData's arguments but its mass."""
    return dict(nodes=data.nodes, phi=data.phi, M_ff=data.M_ff, K_ff=data.K_ff,
                psi=data.psi, reference_frame=data.reference_frame,
                attach_set=data.attach_set, node_sets=data.node_sets)


def test_the_deferred_mass_is_scipys_matrix_when_read():
    """A checked file's CSR arrays stay arrays through truncation, damping and pickling,
    and read as the matrix SciPy makes of the file's datasets."""
    import h5py

    data = flexmbs.read_modal(CONSISTENT)
    stored = stored_mass(data)
    assert isinstance(stored, DeferredCSR) and stored.checked
    assert not data.is_lumped  # (without making the matrix)
    assert isinstance(stored_mass(data), DeferredCSR)
    copies = [data.truncate(3), data.with_damping(ratio=0.01),
              pickle.loads(pickle.dumps(data))]
    assert all(isinstance(stored_mass(c), DeferredCSR) for c in copies)
    with h5py.File(CONSISTENT, "r") as f:
        g = f["mass"]
        expected = sp.csr_matrix((g["data"][()], g["indices"][()], g["indptr"][()]),
                                 shape=tuple(json.loads(f["header"][()])["mass"]["shape"]))
    for holder in (data, *copies):
        mass = holder.mass
        assert sp.issparse(mass) and mass.dtype == np.float64
        assert (mass != expected).nnz == 0
        assert stored_mass(holder) is mass  # made once, kept
    # the invariants a copy carries are those its mass gives
    fresh = flexmbs.ModalData(**_shapes_of(data), mass=expected)
    np.testing.assert_allclose(copies[1].invariants.M0, fresh.invariants.M0, rtol=1e-12,
                               atol=1e-15)


def test_an_unchecked_deferred_matrix_is_made_and_checked_on_construction():
    data = flexmbs.read_modal(CONSISTENT)
    arrays = stored_mass(data)._replace(checked=False)
    bad = arrays._replace(data=-arrays.data)  # negative diagonal: not a mass
    with pytest.raises(flexmbs.ValidationError, match=r"ModalData\.mass"):
        flexmbs.ModalData(**_shapes_of(data), mass=bad)
    good = flexmbs.ModalData(**_shapes_of(data), mass=arrays)
    assert sp.issparse(stored_mass(good))  # made at construction, to be checked


def _spd(rng, n, spread):
    a = rng.standard_normal((n, n))
    q, _ = np.linalg.qr(a)
    return (q * np.logspace(0, spread, n)) @ q.T


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 2**32 - 1),
       spread=st.floats(0.0, 6.0), diagonal=st.booleans())
def test_the_modal_frequencies_are_scipys_generalized_eigenpairs(n, seed, spread, diagonal):
    rng = np.random.default_rng(seed)
    m_ff = _spd(rng, n, spread / 3)
    k_ff = _spd(rng, n, spread)
    if diagonal:
        m_ff, k_ff = np.diag(np.diag(m_ff)), np.diag(np.diag(k_ff))
    lam, vec = flexmbs.ModalData._eig.func(
        type("Stub", (), {"M_ff": m_ff, "K_ff": k_ff})())
    expected = sla.eigh(k_ff, m_ff, eigvals_only=True)
    np.testing.assert_allclose(lam, np.clip(expected, 0, None), rtol=1e-9,
                               atol=1e-12 * expected.max())
    np.testing.assert_allclose(vec.T @ m_ff @ vec, np.eye(n), atol=1e-9)
    np.testing.assert_allclose(k_ff @ vec, m_ff @ vec * lam, atol=1e-8 * np.abs(k_ff).max())


def _qr_rank(jac):
    """rank and redundant rows by SciPy's column-pivoted QR alone (the reference)."""
    _, r_mat, piv = sla.qr(jac.T, pivoting=True, mode="economic")
    diag = np.abs(np.diag(r_mat))
    rank = int(np.sum(diag > rank_tolerance(jac.shape, diag[0])))
    return rank, sorted(int(i) for i in piv[rank:])


@settings(max_examples=80, deadline=None)
@given(n_c=st.integers(1, 10), extra=st.integers(0, 8), dependent=st.integers(0, 3),
       seed=st.integers(0, 2**32 - 1), near=st.booleans())
def test_the_rank_proof_agrees_with_the_pivoted_qr(n_c, extra, dependent, seed, near):
    """Full, deficient and nearly deficient Φ_q: the same rank and redundant rows."""
    rng = np.random.default_rng(seed)
    jac = rng.standard_normal((n_c, n_c + extra))
    for k in range(min(dependent, n_c - 1)):  # rows that repeat a mix of others
        jac[n_c - 1 - k] = rng.standard_normal(n_c - 1 - k) @ jac[:n_c - 1 - k]
        if near:  # … to within a little more than the tolerance, or less
            jac[n_c - 1 - k] += 10.0 ** rng.uniform(-16, -9) * rng.standard_normal(
                jac.shape[1])
    assert dense_rank(jac) == _qr_rank(jac)


def _scipy_blas_threads(code: str) -> list:
    """SciPy's BLAS thread counts printed by ``code`` run in a fresh interpreter."""
    head = textwrap.dedent("""\
        import json, sys
        from threadpoolctl import threadpool_info

        def scipys():
            return [i["num_threads"] for i in threadpool_info()
                    if "scipy" in i["filepath"] and i["user_api"] == "blas"]
        """)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}  # (the suite's conftest sets 1)
    done = subprocess.run([sys.executable, "-c", head + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("how", ["scipy_linalg", "nested"])
def test_scipy_imported_inside_a_run_gets_one_blas_thread(how):
    """SciPy's own BLAS, loaded inside a one-thread context (through
    flexmbs._blas.scipy_linalg, or by a plain import and then seen at the next nested
    context), runs on one thread until the context ends, and as it would have after."""
    load = ("scipy_linalg()" if how == "scipy_linalg" else
            "import scipy.linalg\n            with single_threaded_blas():\n"
            "                pass")
    got = _scipy_blas_threads(f"""\
        from flexmbs._blas import scipy_linalg, single_threaded_blas

        assert "scipy" not in sys.modules
        with single_threaded_blas():
            {load}
            inside = scipys()
        print(json.dumps([inside, scipys()]))
        """)
    default = _scipy_blas_threads("""\
        import scipy.linalg
        print(json.dumps(scipys()))
        """)
    if not default:
        pytest.skip("no OpenBLAS of SciPy's or NumPy's here")
    inside, after = got
    assert default == [2] * len(default)  # (NumPy's OpenBLAS and SciPy's own)
    assert inside == [1] * len(default)
    assert after == default


def test_a_run_that_loads_scipy_runs_its_blas_on_one_thread():
    """A dense iteration matrix of order 101-149 is factored by LAPACK (SciPy imported at
    the first factorization, in the run): every library's BLAS on one thread through the
    steps, SciPy's included, and at its default after the run."""
    got = _scipy_blas_threads("""\
        from flexmbs.assembly import System
        from flexmbs.integrators import simulate
        from flexmbs.modal.fe.beam import BeamSection, Material
        from flexmbs.model import ModelBuilder

        b = ModelBuilder(gravity=(0.0, 0.0, -9.81))
        b.add_nonlinear_beam("arm", 1.0, 12, BeamSection.rectangle(0.02, 0.01),
                             Material(E=1e7, nu=0.3, rho=1000.0))
        b.add_marker("ground", "clamp")
        b.add_marker("arm", "root", node="root")
        b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
        system = System(b.finalize())
        assert "scipy" not in sys.modules and 100 < system.n_q + system.n_c < 150
        seen = []
        result = simulate(system, 0.005, 1e-3, engine="compiled",
                          progress=lambda *args: seen.append(
                              [i["num_threads"] for i in threadpool_info()
                               if i["user_api"] == "blas"]))
        assert result.success and "scipy.linalg" in sys.modules
        print(json.dumps([seen, scipys()]))
        """)
    seen, after = got
    assert seen and all(threads == [1] * len(threads) for threads in seen), seen
    assert len(seen[-1]) == 2  # (NumPy's BLAS and SciPy's)
    assert after == [2] * len(after)


def test_the_deferred_arrays_stay_private():
    """A change to the matrix a holder made reaches no copy: the truncated copy keeps
    the values its file's checks passed (and the writer's checks would see any other)."""
    data = flexmbs.read_modal(CONSISTENT)
    sub = data.truncate(3)
    before = stored_mass(sub).data.copy()
    data.mass.data *= -1.0  # (a user's change, in place)
    np.testing.assert_array_equal(stored_mass(sub).data, before)
    sub.check_values()
    assert sub.mass.diagonal().min() > 0


def test_floating_point_warnings_of_solvers_imported_in_a_run_are_all_counted():
    """SciPy's MatrixRankWarning, its solvers first imported inside the run: counted
    every time after the step that raised the first (as when imported before)."""
    code = textwrap.dedent("""\
        import sys, warnings
        from flexmbs.integrators.health import NumericalWarnings

        assert "scipy" not in sys.modules
        counts = []
        for _ in range(2):  # imported inside the first run; before the second
            numerical = NumericalWarnings()
            with numerical:
                import scipy.sparse.linalg as spla
                warnings.warn("Matrix is exactly singular", spla.MatrixRankWarning)
                numerical.collect(0.1)
                for _ in range(3):
                    warnings.warn("Matrix is exactly singular", spla.MatrixRankWarning)
                numerical.collect(0.2)
            counts.append(numerical.count)
        print(counts)
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [4, 4]
