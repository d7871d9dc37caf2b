"""Run one case many times with different settings: serially, in local worker processes
(all cores by default) or on a Dask cluster.

A *variant* is a label and a dict of dotted case keys → values (``{"solver.coupling":
"one-way"}``, ``{"bodies.beam.modes": 4}``), applied to the case file's tables before
validation (:func:`flexmbs.cases.loader.apply_overrides`). Every run returns a
:class:`RunRecord`: its success, timing and :class:`~flexmbs.studies.signals.RunSignals`.
A run that fails (bad key, Newton failure) gives a record with ``success=False`` and the
reason; the other runs go on. Results do not depend on where a run executes: the same
inputs give bit-identical arrays serially, in processes and on Dask.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FlexmbsError, ValidationError
from .signals import RunSignals, extract


@dataclass
class RunRecord:
    """One run of a sweep: label, overrides, outcome, cost and signals."""

    label: str
    overrides: dict
    success: bool
    message: str
    wall_time: float = 0.0
    steps: int = 0
    newton_mean: float = 0.0
    signals: RunSignals | None = None
    result_file: str | None = None
    settings: dict = field(default_factory=dict)

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.wall_time if self.wall_time > 0 else 0.0


def run_variant(case_path: str, overrides: dict, label: str = "",
                save_dir: str | None = None) -> RunRecord:
    """Load ``case_path`` with ``overrides``, simulate, and extract the study signals.

    With ``save_dir`` the full results are also written there as ``<label>.res.h5``.
    Errors of the case or the run are caught into the record (``success=False``).
    """
    from ..cases import load_case, run_case

    label = label or ", ".join(f"{k}={v}" for k, v in overrides.items()) or "base"
    try:
        case = load_case(case_path, overrides)
        system, result = run_case(case)
    except FlexmbsError as exc:
        return RunRecord(label, dict(overrides), False, f"{type(exc).__name__}: {exc}")
    out_file = None
    if save_dir is not None:
        out_file = str(Path(save_dir) / f"{_file_safe(label)}.res.h5")
        result.save(out_file)
    return RunRecord(
        label, dict(overrides), bool(result.success), result.message,
        float(result.wall_time), len(result.h),
        float(np.mean(result.iterations)) if len(result.iterations) else 0.0,
        extract(system, result), out_file,
        {k: v for k, v in result.settings.items() if isinstance(v, (int, float, str))},
    )


def _file_safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)


@contextlib.contextmanager
def _single_threaded_blas():
    """Worker processes that start a fresh interpreter (spawn) get one BLAS thread each
    (n workers on n cores, no oversubscription); the parent's environment is restored
    afterwards. (Forked workers keep the parent's BLAS; the matrices here are small.)"""
    keys = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update({k: "1" for k in keys})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def sweep(case_path, variants: Sequence[tuple[str, dict]], *, workers: int | None = None,
          scheduler=None, progress: Callable[[int, int, str], None] | None = None,
          save_dir=None) -> list[RunRecord]:
    """Run every variant of ``case_path``; records in the order of ``variants``.

    Parameters
    ----------
    case_path : path of the TOML case.
    variants : (label, overrides) pairs; labels must be unique.
    workers : local worker processes (default: all cores; 1 runs in this process).
    scheduler : a Dask scheduler address (``"tcp://host:8786"``) or a
        ``dask.distributed.Client``; the runs then go to that cluster (the workers must
        see the case and modal data files at the same absolute paths).
    progress : called as ``progress(done, total, label)`` after each run.
    save_dir : folder for each run's full results file (optional).
    """
    case_path = str(Path(case_path).resolve())
    variants = [(str(label), dict(over)) for label, over in variants]
    labels = [label for label, _ in variants]
    if len(set(labels)) != len(labels):
        raise ValidationError(f"sweep variants need unique labels, got {labels}")
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise ValidationError(f"workers must be an integer >= 1, got {workers!r}")
    if save_dir is not None:
        save_dir = str(Path(save_dir).resolve())
        if not Path(save_dir).is_dir():
            raise ValidationError(f"save_dir {save_dir!r} is not a folder")
    total = len(variants)
    records: list[RunRecord | None] = [None] * total

    def done(k, record):
        records[k] = record
        if progress is not None:
            progress(sum(r is not None for r in records), total, record.label)

    if scheduler is not None:
        _run_dask(case_path, variants, scheduler, save_dir, done)
    else:
        n_workers = min(workers or os.cpu_count() or 1, total)
        if n_workers <= 1:
            for k, (label, over) in enumerate(variants):
                done(k, run_variant(case_path, over, label, save_dir))
        else:
            _run_processes(case_path, variants, n_workers, save_dir, done)
    return records  # type: ignore[return-value]


def _run_processes(case_path, variants, n_workers, save_dir, done):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # fork where the platform has it: scripts need no ``if __name__ == "__main__"`` guard
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    with _single_threaded_blas(), ProcessPoolExecutor(n_workers, mp_context=ctx) as pool:
        futures = {pool.submit(run_variant, case_path, over, label, save_dir): k
                   for k, (label, over) in enumerate(variants)}
        for fut in as_completed(futures):
            done(futures[fut], fut.result())


def _run_dask(case_path, variants, scheduler, save_dir, done):
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise FlexmbsError("running a sweep on a Dask cluster needs the optional extra: "
                           "pip install 'flexmbs[dask]'") from None
    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    try:
        futures = [client.submit(run_variant, case_path, over, label, save_dir, pure=False)
                   for label, over in variants]
        index = {fut.key: k for k, fut in enumerate(futures)}
        for fut in as_completed(futures):
            done(index[fut.key], fut.result())
    finally:
        if own:
            client.close()


def parameter_sweep(case_path, key: str, values: Sequence, *, overrides: dict | None = None,
                    **kwargs) -> list[RunRecord]:
    """Sweep one dotted case ``key`` over ``values`` (labels ``key=value``), with fixed
    ``overrides`` applied to every run; ``kwargs`` go to :func:`sweep`."""
    if not values:
        raise ValidationError(f"parameter sweep of {key!r}: no values given")
    variants = [(f"{key}={v}", {**(overrides or {}), key: v}) for v in values]
    return sweep(case_path, variants, **kwargs)
