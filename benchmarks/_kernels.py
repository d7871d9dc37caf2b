"""Shared by the benchmark scripts: make sure flexmbs's compiled kernels are ready."""


def ensure_kernels() -> None:
    """Compile (or load) flexmbs's kernels before timing anything: on a fresh install the
    default engine would run the NumPy path while they compile in the background."""
    try:
        from flexmbs.engine.warmup import ensure_compiled
    except ImportError:  # a flexmbs without the compiled engine
        return
    ensure_compiled()
