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

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import FlexmbsError, ValidationError
from .resume import file_stem, read_record, run_key, write_record
from .signals import RunSignals, extract
from .tasks import dask_client


@dataclass
class RunRecord:
    """One run of a sweep: label, overrides, outcome, cost and signals."""

    label: str
    overrides: dict
    success: bool
    message: str
    wall_time: float = 0.0
    cpu_time: float = 0.0
    steps: int = 0
    newton_mean: float = 0.0
    signals: RunSignals | None = None
    result_file: str | None = None
    settings: dict = field(default_factory=dict)
    status: str = ""
    """The run's status ("completed", "completed with warnings", "diverged", "failed";
    empty when the case could not be run at all)."""
    warnings: list = field(default_factory=list)
    reruns: int = 0
    """How many times the run was handed out again because a worker was lost (a killed
    local process or Dask worker) while it was queued or running there."""
    resumed: bool = False
    """True when the run was not run again but read back from the save folder
    (``resume=True``: finished by an earlier sweep with the same case and overrides)."""

    @property
    def steps_per_second(self) -> float:
        """Steps per second of CPU time of the run (independent of other workers)."""
        return self.steps / self.cpu_time if self.cpu_time > 0 else 0.0


def run_variant(case_path: str, overrides: dict, label: str = "",
                save_dir: str | None = None, from_equilibrium: bool = False) -> RunRecord:
    """Load ``case_path`` with ``overrides``, simulate, and extract the study signals.

    With ``from_equilibrium`` the run starts at rest in the static equilibrium of its
    own variant (its coupling mode, modes, loads: :func:`~flexmbs.cases.run.run_case`);
    a variant without an equilibrium gives a failed record that says so.

    With ``save_dir`` the full results are also written there as ``<label>.res.h5``,
    followed by the run's record ``<label>.run.json`` that lets a later sweep with
    ``resume=True`` skip it (:mod:`flexmbs.studies.resume`; characters of the label
    other than letters, digits and ``-_.`` become ``_`` in the file names).
    Every error of the case or the run is caught into the record (``success=False``, the
    message names it; unexpected ones carry their traceback) so that one bad run does not
    lose the others. ``cpu_time`` is this process's CPU time for the simulation.
    """
    import time
    import traceback

    from ..cases import load_case, run_case

    label = label or ", ".join(f"{k}={v}" for k, v in overrides.items()) or "base"
    cpu = time.process_time()
    try:
        case = load_case(case_path, overrides)
        system, result = run_case(case, from_equilibrium=from_equilibrium)
    except FlexmbsError as exc:
        return RunRecord(label, dict(overrides), False, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug or an unforeseen input: keep the sweep going
        return RunRecord(label, dict(overrides), False,
                         f"unexpected {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    cpu = time.process_time() - cpu
    out_file = None
    if save_dir is not None:
        out_file = str(Path(save_dir) / f"{file_stem(label)}.res.h5")
        result.save(out_file)
    record = RunRecord(
        label, dict(overrides), bool(result.success), result.message,
        float(result.wall_time), cpu, int(result.statistics["steps"]),
        float(result.statistics["iterations_per_step"]),
        extract(system, result), out_file,
        {k: v for k, v in result.settings.items() if isinstance(v, (int, float, str))},
        result.status, list(result.warnings),
    )
    if out_file is not None:  # last: a run killed before this line runs again on resume
        write_record(save_dir, record, run_key(case_path, overrides, from_equilibrium,
                                               [p for p in case.inputs if Path(p).is_file()]))
    return record


def _one_blas_thread() -> None:
    """Worker initializer: one BLAS/OpenMP thread per worker process, so n workers on n
    cores do not oversubscribe them (forked workers inherit the parent's thread pools, so
    environment variables would come too late; threadpoolctl resizes them in place)."""
    from threadpoolctl import threadpool_limits

    global _LIMITS
    _LIMITS = threadpool_limits(1)  # kept alive for the worker's lifetime


_LIMITS = None


def sweep(case_path, variants: Sequence[tuple[str, dict]], *, workers: int | None = None,
          scheduler=None, progress: Callable[[int, int, str], None] | None = None,
          save_dir=None, from_equilibrium: bool = False,
          resume: bool = False) -> list[RunRecord]:
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
    from_equilibrium : start every run at rest in the static equilibrium of its own
        variant instead of the case's initial state (it travels with each run to the
        worker processes and Dask workers).
    resume : skip the variants already finished in ``save_dir`` by an earlier sweep with
        the same case file text, overrides and ``from_equilibrium``; their records are
        read back (``resumed=True``). Needs ``save_dir``.

    A lost worker does not stop the sweep: the runs of a killed local worker process are
    run again (:data:`MAX_POOL_RESTARTS` times at most, the last time each alone in its
    own process; a run still lost then gets a failed record saying so), and Dask
    reschedules the runs of a dead worker on the others. Each record counts its
    ``reruns``.
    """
    case_path = str(Path(case_path).resolve())
    variants = [(str(label), dict(over)) for label, over in variants]
    labels = [label for label, _ in variants]
    if len(set(labels)) != len(labels):
        raise ValidationError(f"sweep variants need unique labels, got {labels}")
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise ValidationError(f"workers must be an integer >= 1, got {workers!r}")
    if resume and save_dir is None:
        raise ValidationError("resume=True needs save_dir: the folder of the earlier "
                              "sweep's saved runs")
    if save_dir is not None:
        save_dir = str(Path(save_dir).resolve())
        if not Path(save_dir).is_dir():
            raise ValidationError(f"save_dir {save_dir!r} is not a folder")
        stems = [file_stem(label) for label in labels]
        clash = sorted({a for a, s in zip(labels, stems, strict=True) if stems.count(s) > 1})
        if clash:
            raise ValidationError(f"sweep variants {clash} would share results file names "
                                  f"in save_dir (only letters, digits and -_. are kept)")
    check_variant_keys(case_path, variants)
    total = len(variants)
    records: list[RunRecord | None] = [None] * total

    def done(k, record):
        records[k] = record
        if progress is not None:
            progress(sum(r is not None for r in records), total, record.label)

    from_equilibrium = bool(from_equilibrium)
    items = []  # (index, label, overrides) of the runs to do
    for k, (label, over) in enumerate(variants):
        found = (read_record(save_dir, label, run_key(case_path, over, from_equilibrium))
                 if resume else None)
        if found is None:
            items.append((k, label, over))
        else:
            done(k, RunRecord(label, **found, resumed=True))
    if not items:
        return records  # type: ignore[return-value]
    if scheduler is not None:
        _run_dask(case_path, items, scheduler, save_dir, done, from_equilibrium)
    else:
        n_workers = min(workers or os.cpu_count() or 1, len(items))
        if n_workers <= 1:
            for k, label, over in items:
                done(k, run_variant(case_path, over, label, save_dir, from_equilibrium))
        else:
            _run_processes(case_path, items, n_workers, save_dir, done, from_equilibrium)
    return records  # type: ignore[return-value]


def check_variant_keys(case_path, variants) -> None:
    """Load the case with each variant's overrides and raise the first
    :class:`~flexmbs.cases.loader.CaseKeyError` (a misspelt or unknown key, an entry that
    is not there) before any run: such a key fails every run alike, as does a case file
    that is not a TOML file at all. Other errors (a bad
    value of one variant) are left to that run, which records them and lets the others go
    on."""
    from ..cases import load_case
    from ..cases.case import CaseKeyError
    from ..cases.loader import read_case_toml

    read_case_toml(Path(case_path))  # a folder, a binary file, not TOML: no run can start
    seen = set()
    for label, over in variants:
        keys = tuple(sorted(over))
        if keys in seen:  # the same keys: only their values differ
            continue
        try:
            load_case(case_path, over)
        except CaseKeyError as exc:
            raise CaseKeyError(f"variant {label!r}: {exc} (refused before any run)"
                               ) from None
        except FlexmbsError:
            continue  # a value problem (maybe hiding a key one): try the next variant
        seen.add(keys)


#: Times a run whose worker process was lost (killed, out of memory) is handed out again.
#: The first retries go to a fresh shared pool; the last one runs each such run alone in
#: a process of its own, so that a run that kills its worker every time cannot take the
#: runs beside it down with it.
MAX_POOL_RESTARTS = 2


def _run_processes(case_path, items, n_workers, save_dir, done, from_equilibrium=False):
    """Run ``items`` ((index, label, overrides)) in a pool of ``n_workers`` processes.
    A worker process that dies breaks the pool (every unfinished run in it fails with
    BrokenProcessPool); those runs are handed out again (:data:`MAX_POOL_RESTARTS`)."""
    import multiprocessing

    # fork where the platform has it: scripts need no ``if __name__ == "__main__"`` guard
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    reruns = {k: 0 for k, _, _ in items}
    args = (case_path, save_dir, from_equilibrium, ctx, reruns, done)
    pending = list(items)
    for attempt in range(MAX_POOL_RESTARTS + 1):
        if attempt < MAX_POOL_RESTARTS:
            lost = _pool_round(pending, min(n_workers, len(pending)), *args)
        else:  # alone: n_workers one-process pools at a time
            lost = [item for start in range(0, len(pending), n_workers)
                    for item in _pool_round(pending[start:start + n_workers], 1, *args,
                                            alone=True)]
        if not lost:
            return
        for k, _, _ in lost:
            reruns[k] += 1
        pending = sorted(lost)
    for k, label, over in pending:
        done(k, RunRecord(label, dict(over), False, (
            f"not finished: its worker process died (killed, or out of memory) each of "
            f"the {MAX_POOL_RESTARTS + 1} times it was run, the last time alone in its own "
            f"process; the finished runs are kept"), reruns=reruns[k] - 1))


def _pool_round(items, n_workers, case_path, save_dir, from_equilibrium, ctx, reruns, done,
                alone: bool = False) -> list:
    """Run ``items`` in fresh process pools (one shared pool of ``n_workers``, or with
    ``alone`` one pool per run); returns the items whose worker process was lost."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    pools = [ProcessPoolExecutor(1 if alone else n_workers, mp_context=ctx,
                                 initializer=_one_blas_thread)
             for _ in (items if alone else [None])]
    lost = []
    try:
        futures = {pools[j if alone else 0].submit(run_variant, case_path, over, label,
                                                   save_dir, from_equilibrium): (k, label, over)
                   for j, (k, label, over) in enumerate(items)}
        for fut in as_completed(futures):
            k, label, over = futures[fut]
            try:
                record = fut.result()
            except BrokenProcessPool:
                lost.append((k, label, over))
                _kill_workers(pools[[it[0] for it in items].index(k)] if alone
                              else pools[0])
                continue
            record.reruns = reruns[k]
            done(k, record)
    finally:
        for pool in pools:
            pool.shutdown()
    return lost


def _kill_workers(pool) -> None:
    """SIGKILL the surviving worker processes of a broken pool. The pool only sends them
    SIGTERM, which a running simulation takes as a request to stop on a whole step
    (:mod:`flexmbs.integrators.interrupts`); its worker would then block writing its
    result to a pipe no one reads any more, and the pool's shutdown wait for it forever."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.kill()


def _run_dask(case_path, items, scheduler, save_dir, done, from_equilibrium=False):
    from dask.distributed import as_completed

    client, own = dask_client(scheduler, "running a sweep on a Dask cluster")
    try:
        futures = [client.submit(run_variant, case_path, over, label, save_dir,
                                 from_equilibrium, pure=False)
                   for _, label, over in items]
        index = {fut.key: item for fut, item in zip(futures, items, strict=True)}
        got = {}
        for fut in as_completed(futures):
            k, label, over = index[fut.key]
            try:
                record = fut.result()
            except Exception as exc:  # KilledWorker (its workers died too often), a lost
                record = RunRecord(label, dict(over), False,  # scheduler, a cancellation
                                   f"lost on the Dask cluster ({type(exc).__name__}: "
                                   f"{exc}); the finished runs are kept")
            got[fut.key] = record
            done(k, record)
        for key, count in _dask_reruns(client, list(got)).items():
            got[key].reruns = count
    finally:
        if own:
            client.close()


def _suspicious(keys, dask_scheduler=None) -> dict:
    """On the scheduler: how often each task's worker died while the task was on it."""
    out = {}
    for key in keys:
        task = dask_scheduler.tasks.get(key)
        out[key] = int(getattr(task, "suspicious", 0) or 0) if task is not None else 0
    return out


def _dask_reruns(client, keys) -> dict:
    """{task key: times it was handed out again after its worker died} (empty when the
    scheduler cannot be asked)."""
    try:
        return client.run_on_scheduler(_suspicious, keys)
    except Exception:  # a scheduler that is gone or forbids it: the counts stay 0
        return {}


def parameter_sweep(case_path, key: str, values: Sequence, *, overrides: dict | None = None,
                    **kwargs) -> list[RunRecord]:
    """Sweep one dotted case ``key`` over ``values`` (labels ``key=value``), with fixed
    ``overrides`` applied to every run; ``kwargs`` go to :func:`sweep`."""
    if not values:
        raise ValidationError(f"parameter sweep of {key!r}: no values given")
    variants = [(f"{key}={v}", {**(overrides or {}), key: v}) for v in values]
    return sweep(case_path, variants, **kwargs)
