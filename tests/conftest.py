"""Shared fixtures: small valid modal data sets built from first principles."""

import os
from pathlib import Path

# BLAS on one thread for the suite (unless the caller says otherwise), set before NumPy
# and SciPy load their OpenBLAS: the suite runs beside the background compilation and
# the validation report's two workers on two cores, where OpenBLAS's threads only wait
# for a core (the suite took 447 s with two threads, 385 s with one, on this 2-core
# machine). tests/test_blas_threads.py gives itself two threads to check the runs' own
# thread handling.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# URDF files and built-in beams read and reduced afresh, whatever the caller's setting
# (nothing remembered in the user's home, no entry of the caller's used);
# tests/test_remembered_inputs.py gives its tests a folder of their own
os.environ["FLEXMBS_CACHE"] = "off"

import json

import numpy as np
import pytest

from flexmbs.modal import ModalData  # (imports no numba: the settings below come first)

# numba's allocation counters, for test_compiled's check that the per-iteration kernels
# allocate nothing; numba reads the setting when it starts, so before anything imports it
os.environ.setdefault("NUMBA_NRT_STATS", "1")


def _suite_numba_cache() -> Path | None:
    """numba's kernels for the suite: compiled for the prebuilt kernel's baseline CPU
    (flexmbs.engine.prebuilt.BASELINES; numba's cache keys its kernels by CPU name and
    features) into a cache folder of the suite's own, named by the kernel sources' hash,
    so that the rebuild of the prebuilt kernel (test_prebuilt), which compiles the same
    kernels for that CPU, also fills it: one compilation instead of two
    (pytest_collection_finish). The kernels do no fast-math, so the generated CPU
    changes their speed, not their results. Set before anything imports numba; None
    (numba's defaults) where no baseline is defined or numba's settings are the caller's."""
    import platform

    from flexmbs.compiled import kernel_tag
    from flexmbs.engine.prebuilt import BASELINES

    arch = {"amd64": "x86_64"}.get(platform.machine().lower(), platform.machine().lower())
    # the rebuild compiles without the caller's numba settings (NUMBA_OPT,
    # NUMBA_BOUNDSCHECK, …), which numba's cache does not key its kernels by: with any
    # set (but the runtime's allocation counters), numba's defaults and a compilation
    # of the suite's own
    if arch not in BASELINES or any(key.startswith("NUMBA_") and key != "NUMBA_NRT_STATS"
                                    for key in os.environ):
        return None
    root = Path(__file__).resolve().parents[1] / ".numba-test-cache"
    folder = root / kernel_tag()
    if root.is_dir():  # the caches of earlier kernel sources
        import shutil

        for old in root.iterdir():
            if old != folder:
                shutil.rmtree(old, ignore_errors=True)
    (folder / "state").mkdir(parents=True, exist_ok=True)
    os.environ.update(NUMBA_CPU_NAME=BASELINES[arch][0], NUMBA_CPU_FEATURES="",
                      NUMBA_CACHE_DIR=str(folder),
                      FLEXMBS_KERNEL_STATE_DIR=str(folder / "state"))
    return folder


SUITE_NUMBA_CACHE = _suite_numba_cache()



def make_modal_kwargs(n_nodes: int = 8, n_modes: int = 3, seed: int = 0, lumped: bool = True):
    """Constructor arguments of a valid attached-frame body (node 0 is the attachment).

    Random shapes vanishing at node 0, M_ff = Φᵀ M Φ from the given mass, diagonal
    K_ff, so every validation passes.
    """
    rng = np.random.default_rng(seed)
    nodes = np.column_stack([np.linspace(0, 1, n_nodes), rng.normal(scale=0.05, size=(n_nodes, 2))])
    phi = rng.normal(size=(3 * n_nodes, n_modes))
    phi[:3] = 0.0
    masses = rng.uniform(0.5, 1.5, n_nodes)
    m_ff = phi.T @ (np.repeat(masses, 3)[:, None] * phi)
    k_ff = np.diag(np.linspace(1e3, 5e3, n_modes))
    return dict(nodes=nodes, phi=phi, M_ff=m_ff, K_ff=k_ff, mass=masses,
                reference_frame="attached", attach_set="root",
                node_sets={"root": [0], "tip": [n_nodes - 1]})


def rewrite_hdf5(path, change, seal: bool = True) -> None:
    """Edit the HDF5 file ``path`` in place with ``change(f)``, then seal it again with a
    checksum of its new contents, or (``seal=False``) leave it without one."""
    import h5py

    from flexmbs._files import CHECKSUM_ATTR, seal_hdf5

    with h5py.File(path, "r+") as f:
        change(f)
        if seal:
            seal_hdf5(f)
        else:
            del f.attrs[CHECKSUM_ATTR]


def native_header(path) -> dict:
    """The /header of the native modal-data file ``path`` (format version 2)."""
    import h5py

    with h5py.File(path, "r") as f:
        return json.loads(bytes(f["header"][()]).decode())


def set_native_header(f, header) -> None:
    """Replace the /header of the open native file ``f`` by ``header`` (a dict, or the
    text to store)."""
    del f["header"]
    f.create_dataset("header", data=np.bytes_(header if isinstance(header, str)
                                              else json.dumps(header)))


@pytest.fixture(scope="module")
def examples():
    """ansys-mapdl-reader's example files (real MAPDL output: tests/test_ansys.py and
    tests/test_ansys_solid186.py); skipped without the package."""
    pytest.importorskip("ansys.mapdl.reader",
                        reason="ansys-mapdl-reader (pip install 'flexmbs[ansys]') is not "
                               "installed")
    from ansys.mapdl.reader import examples as ex

    return ex


@pytest.fixture
def modal_kwargs():
    return make_modal_kwargs()


@pytest.fixture
def modal_data():
    return ModalData(**make_modal_kwargs())


def pytest_collection_modifyitems(config, items):
    """The tests marked ``long`` (thousands of fuzzed examples, tests/fuzzing.py) run
    only when the ``-m`` expression names them (``-m long``); any other run leaves them
    out, ``-m "not slow"`` included."""
    if "long" in (config.getoption("markexpr") or ""):
        return
    keep = [item for item in items if item.get_closest_marker("long") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep
    # last: the tests that wait for a compilation started in the background at the end
    # of the collection (pytest_collection_finish), so that it runs beside the others
    late = [item for item in items if _waits_for_background(item)]
    if late:
        items[:] = [item for item in items if not _waits_for_background(item)] + late


def _runs_numba_kernels(item) -> bool:
    """A variant of tests/test_compiled.py that runs numba's kernels (the ``kernels``
    fixture's "numba")."""
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("kernels") == "numba"


def _waits_for_background(item) -> bool:
    return (item.name == REBUILD_TEST or _runs_numba_kernels(item)
            or "numba_kernels_cached" in getattr(item, "fixturenames", ()))



#: The slow test that rebuilds the prebuilt kernel (tests/test_prebuilt.py).
REBUILD_TEST = "test_the_shipped_prebuilt_kernel_is_what_the_sources_build"
_REBUILD: dict = {}
#: numba's kernels compiled into its cache by ``python -m flexmbs.engine.warmup`` in the
#: background: set when that process has ended (whether or not it succeeded).
_NUMBA_CACHE = {"done": None}


def pytest_collection_finish(session):
    """Start the suite's two compilations at once, one after the other in a background
    thread, each in its own process on the second core while the suite runs on the
    first (the tests that wait for them run last, pytest_collection_modifyitems):

    - numba's kernels, into numba's cache, when a test variant runs them and they are
      not there yet (``python -m flexmbs.engine.warmup``, what users run); those tests
      then load them from the cache instead of compiling for minutes in the suite's own
      process;
    - the prebuilt kernel rebuilt from the sources (flexmbs.engine.prebuilt_build), when
      the rebuild test is selected and the pinned toolchain is installed.

    When both are due and the suite's kernels are compiled for the baseline CPU
    (:data:`SUITE_NUMBA_CACHE`), the rebuild alone runs: it compiles the same kernels
    from an empty cache on the way and hands that cache to the suite."""
    import subprocess
    import sys
    import tempfile
    import threading

    tasks = []
    numba_wanted = False
    if any(_runs_numba_kernels(item) or "numba_kernels_cached" in item.fixturenames
           for item in session.items):
        from flexmbs.engine import warmup

        numba_wanted = not warmup.is_ready()
        if numba_wanted:
            _NUMBA_CACHE["done"] = threading.Event()
    rebuild = False
    if any(item.name == REBUILD_TEST for item in session.items):
        import llvmlite
        import numba
        from test_prebuilt import pinned_toolchain

        # otherwise the test skips: it rebuilds with the pinned toolchain only
        rebuild = ({"numba": numba.__version__, "llvmlite": llvmlite.__version__}
                   == pinned_toolchain())
    # the rebuild compiles numba's kernels for the baseline CPU: where the suite's
    # kernels are compiled for that CPU too (SUITE_NUMBA_CACHE), its numba cache is theirs
    shared = numba_wanted and rebuild and SUITE_NUMBA_CACHE is not None
    if numba_wanted and not shared:
        def warm():
            try:
                subprocess.run([sys.executable, "-m", "flexmbs.engine.warmup"],
                               env={**os.environ, "FLEXMBS_PREBUILT": "0"},
                               capture_output=True, check=False)
            finally:
                _NUMBA_CACHE["done"].set()

        tasks.append(warm)
    if rebuild:
        from flexmbs.engine import prebuilt_build, warmup

        folder = tempfile.mkdtemp(prefix="flexmbs-rebuild-test-")
        # the suite's ready mark, worked out now: tests running beside the build move
        # FLEXMBS_KERNEL_STATE_DIR to folders of their own
        ready = warmup.ready_paths() if shared else None

        def build():
            try:
                _REBUILD["entry"] = prebuilt_build.build(
                    Path(folder), numba_cache=SUITE_NUMBA_CACHE if shared else None)
                if shared:
                    warmup.mark_ready(ready)
            except BaseException as exc:  # handed to the test, which raises it
                _REBUILD["error"] = exc
            finally:
                if shared:  # the numba tests compile for themselves if it failed
                    _NUMBA_CACHE["done"].set()

        _REBUILD.update(folder=Path(folder))
        tasks.append(build)
    if not tasks:
        return

    def run_all():
        for task in tasks:
            task()

    thread = threading.Thread(target=run_all, daemon=True)
    if "folder" in _REBUILD:
        _REBUILD["thread"] = thread
    _NUMBA_CACHE["thread"] = thread
    thread.start()


@pytest.fixture
def numba_kernels_cached():
    """Wait for the background compilation of numba's kernels into its cache, when one
    was started (pytest_collection_finish); the test then loads them from the cache, or
    compiles them itself if that compilation failed."""
    if _NUMBA_CACHE["done"] is not None:
        _NUMBA_CACHE["done"].wait()


@pytest.fixture
def background_rebuild():
    """(manifest entry, folder) of the kernel rebuilt in the background since the
    collection (:func:`pytest_collection_finish`); None when it was not started."""
    if "thread" not in _REBUILD:
        return None
    _REBUILD["thread"].join()
    if "error" in _REBUILD:
        raise _REBUILD["error"]
    return _REBUILD["entry"], _REBUILD["folder"]


def pytest_sessionfinish(session, exitstatus):
    """Wait for the background rebuild of a finished session and remove its folder (an
    interrupted session does not wait for the compilation)."""
    import shutil

    if "thread" in _NUMBA_CACHE and exitstatus != pytest.ExitCode.INTERRUPTED:
        _NUMBA_CACHE["thread"].join()
    if "folder" in _REBUILD:
        shutil.rmtree(_REBUILD["folder"], ignore_errors=True)
