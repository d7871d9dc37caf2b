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

    With ``save_dir`` the full results are also written there as ``<label>.res.h5``.
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
        out_file = str(Path(save_dir) / f"{_file_safe(label)}.res.h5")
        result.save(out_file)
    return RunRecord(
        label, dict(overrides), bool(result.success), result.message,
        float(result.wall_time), cpu, len(result.h),
        float(np.mean(result.iterations)) if len(result.iterations) else 0.0,
        extract(system, result), out_file,
        {k: v for k, v in result.settings.items() if isinstance(v, (int, float, str))},
        result.status, list(result.warnings),
    )


def _file_safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)


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
          save_dir=None, from_equilibrium: bool = False) -> list[RunRecord]:
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
    check_variant_keys(case_path, variants)
    total = len(variants)
    records: list[RunRecord | None] = [None] * total

    def done(k, record):
        records[k] = record
        if progress is not None:
            progress(sum(r is not None for r in records), total, record.label)

    from_equilibrium = bool(from_equilibrium)
    if scheduler is not None:
        _run_dask(case_path, variants, scheduler, save_dir, done, from_equilibrium)
    else:
        n_workers = min(workers or os.cpu_count() or 1, total)
        if n_workers <= 1:
            for k, (label, over) in enumerate(variants):
                done(k, run_variant(case_path, over, label, save_dir, from_equilibrium))
        else:
            _run_processes(case_path, variants, n_workers, save_dir, done,
                           from_equilibrium)
    return records  # type: ignore[return-value]


def check_variant_keys(case_path, variants) -> None:
    """Load the case with each variant's overrides and raise the first
    :class:`~flexmbs.cases.loader.CaseKeyError` (a misspelt or unknown key, an entry that
    is not there) before any run: such a key fails every run alike, as does a case file
    that is not a TOML file at all. Other errors (a bad
    value of one variant) are left to that run, which records them and lets the others go
    on."""
    from ..cases import load_case
    from ..cases.loader import CaseKeyError, read_case_toml

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


def _run_processes(case_path, variants, n_workers, save_dir, done, from_equilibrium=False):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # fork where the platform has it: scripts need no ``if __name__ == "__main__"`` guard
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    with ProcessPoolExecutor(n_workers, mp_context=ctx, initializer=_one_blas_thread) as pool:
        futures = {pool.submit(run_variant, case_path, over, label, save_dir,
                               from_equilibrium): k
                   for k, (label, over) in enumerate(variants)}
        for fut in as_completed(futures):
            done(futures[fut], fut.result())


#: Seconds to wait for the Dask scheduler's handshake (a running scheduler answers in
#: well under a second; Dask's own default of 30 s only delays the error).
DASK_CONNECT_TIMEOUT = 5.0
#: Seconds for the plain TCP connection that precedes it (refused at once when nothing
#: listens there; this bounds unroutable hosts).
DASK_PROBE_TIMEOUT = 2.0
DASK_DEFAULT_PORT = 8786


def _probe_scheduler(address) -> None:
    """Raise FlexmbsError naming ``address`` at once when it is not a scheduler address
    or nothing accepts a TCP connection there (tcp:// and tls:// only; other protocols are
    left to Dask)."""
    import socket

    text = str(address)
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in ("tcp", "tls"):
        return
    host, colon, port_text = rest.rstrip("/").rpartition(":")
    if not colon:
        host, port_text = rest.rstrip("/"), str(DASK_DEFAULT_PORT)
    host = host.strip("[]")
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not host or not 0 < port < 65536:
        raise FlexmbsError(f"Dask scheduler address {text!r}: expected tcp://host:port, "
                           f"e.g. tcp://127.0.0.1:8786")
    try:
        with socket.create_connection((host, port), timeout=DASK_PROBE_TIMEOUT):
            pass
    except OSError as exc:
        reason = ("nothing listens there" if isinstance(exc, ConnectionRefusedError)
                  else f"no answer within {DASK_PROBE_TIMEOUT:g} s"
                  if isinstance(exc, TimeoutError) else str(exc))
        raise FlexmbsError(f"cannot reach the Dask scheduler {text!r}: {reason}; start it "
                           f"(dask scheduler) or check the address") from None


def _run_dask(case_path, variants, scheduler, save_dir, done, from_equilibrium=False):
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise FlexmbsError("running a sweep on a Dask cluster needs the optional extra: "
                           "pip install 'flexmbs[dask]'") from None
    own = not isinstance(scheduler, Client)
    if own:
        _probe_scheduler(scheduler)
        try:
            client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
        except Exception as exc:  # a timeout, or something else answering at that port
            raise FlexmbsError(f"cannot reach the Dask scheduler {scheduler!r} within "
                               f"{DASK_CONNECT_TIMEOUT:g} s ({type(exc).__name__}: {exc}); "
                               f"is it running? give an address like tcp://host:8786"
                               ) from None
    else:
        client = scheduler
    try:
        futures = [client.submit(run_variant, case_path, over, label, save_dir,
                                 from_equilibrium, pure=False)
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
