"""Interrupting a run between steps: Ctrl-C (SIGINT) and SIGTERM while the steps run
set a flag that the step loop reads before each step, so that a run stops on a whole
step, with its outputs, counters and restart point consistent, and returns its results
as "interrupted" (docs/integrators.md, "Run status"). A second Ctrl-C interrupts at once
(a KeyboardInterrupt, which the step loop also turns into "interrupted").

Signal handlers can only be set from the main thread; elsewhere (a worker thread) the
handlers are left alone and Ctrl-C behaves as Python's KeyboardInterrupt.
"""

from __future__ import annotations

import contextlib
import signal
import threading

#: The signals caught, with the name a message gives each.
SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


class StepInterrupts:
    """``with StepInterrupts() as interrupts:`` around the step loop; ``reason`` is
    None, "Ctrl-C" or "SIGTERM" once a signal came."""

    def __init__(self):
        self.reason: str | None = None
        self._previous: dict = {}

    def _handler(self, signum, frame) -> None:
        if self.reason is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # asked twice: stop now, even inside a step
        self.reason = SIGNALS[signum]

    def __enter__(self) -> StepInterrupts:
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                with contextlib.suppress(ValueError, OSError):  # not settable here
                    self._previous[signum] = signal.signal(signum, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous = {}
