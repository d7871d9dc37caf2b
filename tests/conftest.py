"""Shared fixtures: small valid modal data sets built from first principles."""

import os
from pathlib import Path

# numba's allocation counters, for test_compiled's check that the per-iteration kernels
# allocate nothing; numba reads the setting when it starts, so before anything imports it
os.environ.setdefault("NUMBA_NRT_STATS", "1")

import numpy as np
import pytest

from flexmbs.modal import ModalData


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



#: The slow test that rebuilds the prebuilt kernel (tests/test_prebuilt.py).
REBUILD_TEST = "test_the_shipped_prebuilt_kernel_is_what_the_sources_build"
_REBUILD: dict = {}


def pytest_collection_finish(session):
    """When the rebuild test is selected, start its build at once in a background
    thread: the compilation runs in its own process (flexmbs.engine.prebuilt_build), on
    the second core while the suite runs on the first, and the test collects it."""
    if not any(item.name == REBUILD_TEST for item in session.items):
        return
    import tempfile
    import threading

    import llvmlite
    import numba
    from test_prebuilt import pinned_toolchain

    from flexmbs.engine import prebuilt_build

    if {"numba": numba.__version__, "llvmlite": llvmlite.__version__} != pinned_toolchain():
        return  # the test skips: it rebuilds with the pinned toolchain only

    folder = tempfile.mkdtemp(prefix="flexmbs-rebuild-test-")

    def build():
        try:
            _REBUILD["entry"] = prebuilt_build.build(Path(folder))
        except BaseException as exc:  # handed to the test, which raises it
            _REBUILD["error"] = exc

    _REBUILD.update(folder=Path(folder), thread=threading.Thread(target=build, daemon=True))
    _REBUILD["thread"].start()


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

    if "thread" in _REBUILD:
        if exitstatus != pytest.ExitCode.INTERRUPTED:
            _REBUILD["thread"].join()
        shutil.rmtree(_REBUILD["folder"], ignore_errors=True)
