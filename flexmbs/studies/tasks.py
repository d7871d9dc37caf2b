"""Independent calls of one function run serially, in local worker processes or on a
Dask cluster (docs/studies.md, "Parallel runs"; the multi-start fits of
docs/gradients.md): :func:`run_tasks`, and the connection to a Dask scheduler that the
sweeps share (:func:`dask_client`).

The function and its arguments travel to the workers by pickling: a module-level
function of plain arguments (case file paths, numbers, arrays). Each call gives its
result, or the exception it raised as a :class:`TaskFailure`, in the order of the calls;
one failing call does not stop the others.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import FlexmbsError, ValidationError

#: Seconds to wait for the Dask scheduler's handshake (a running scheduler answers in
#: well under a second; Dask's own default of 30 s only delays the error).
DASK_CONNECT_TIMEOUT = 5.0
#: Seconds for the plain TCP connection that precedes it (refused at once when nothing
#: listens there; this bounds unroutable hosts).
DASK_PROBE_TIMEOUT = 2.0
DASK_DEFAULT_PORT = 8786


@dataclass
class TaskFailure:
    """A call that raised: its exception's type name and message."""

    kind: str
    message: str


def probe_scheduler(address) -> None:
    """Raise FlexmbsError naming ``address`` at once when it is not a scheduler address
    or nothing accepts a TCP connection there (tcp:// and tls:// only; other protocols are
    left to Dask)."""
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


def dask_client(scheduler, what: str = "running on a Dask cluster"):
    """(client, own): a ``dask.distributed.Client`` of ``scheduler`` (an address, probed
    first, or a Client, used as it is) and whether the caller must close it.
    FlexmbsError naming the extra to install, or the address that does not answer."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise FlexmbsError(f"{what} needs the optional extra: pip install "
                           f"'flexmbs[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    probe_scheduler(scheduler)
    try:
        return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT), True
    except Exception as exc:  # a timeout, or something else answering at that port
        raise FlexmbsError(f"cannot reach the Dask scheduler {scheduler!r} within "
                           f"{DASK_CONNECT_TIMEOUT:g} s ({type(exc).__name__}: {exc}); "
                           f"is it running? give an address like tcp://host:8786"
                           ) from None


def _call(function, args):
    try:
        return function(*args)
    except Exception as exc:  # the others go on; the caller sees which failed and why
        return TaskFailure(type(exc).__name__, str(exc))


def run_tasks(function: Callable, calls: Sequence[tuple], *, workers: int | None = None,
              scheduler=None) -> list:
    """[function(*args) for args in calls], each a result or a :class:`TaskFailure`:
    on the Dask cluster of ``scheduler`` (an address or a Client), else in ``workers``
    local processes (default: all cores; 1 runs here, in order)."""
    calls = [tuple(c) for c in calls]
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise ValidationError(f"workers must be an integer >= 1, got {workers!r}")
    if scheduler is not None:
        client, own = dask_client(scheduler)
        try:
            futures = [client.submit(_call, function, args, pure=False) for args in calls]
            out = []
            for fut in futures:
                try:
                    out.append(fut.result())
                except Exception as exc:  # a worker lost too often, a cancellation
                    out.append(TaskFailure(type(exc).__name__, f"lost on the Dask "
                                                               f"cluster: {exc}"))
            return out
        finally:
            if own:
                client.close()
    n_workers = min(workers or os.cpu_count() or 1, len(calls))
    if n_workers <= 1:
        return [_call(function, args) for args in calls]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context(method)
                             ) as pool:
        futures = [pool.submit(_call, function, args) for args in calls]
        out = []
        for fut in futures:
            try:
                out.append(fut.result())
            except Exception as exc:  # the worker process died (killed, out of memory)
                out.append(TaskFailure(type(exc).__name__, f"its worker process was "
                                                           f"lost: {exc}"))
        return out
