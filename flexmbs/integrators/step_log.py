"""The integrator's record of its steps, kept per output interval
(:class:`~flexmbs.results.steps.StepSummary`): streaming sums and extremes of the steps
since the last output, closed into one row at each output, and the run's totals. Its
size grows with the outputs, never with the steps (issue 36: a run of 10⁶ steps keeps
its memory flat)."""

from __future__ import annotations

import math

import numpy as np

from ..results.steps import StepSummary, interval


class StepLog:
    """Accepted steps, per output interval.

    ``add(h, iterations)`` after each accepted step, ``reject()`` for each step the
    error control rejected, ``close()`` at each output. ``steps`` and ``iterations``
    are the run's totals (restarts included), ``last_iterations`` the Newton iterations
    of the last accepted step (the rebuild policy of the iteration matrix reads it)."""

    __slots__ = ("_blocks", "_n_blocked", "_rows", "count", "h_max", "h_min", "h_sum",
                 "it_max", "it_sum", "iterations", "last_iterations", "rejected", "steps")

    def __init__(self):
        self._rows: list[tuple] = []  # one per output since the last block
        self._blocks: list[np.ndarray] = []  # earlier rows, stacked (k, 7), in order
        self._n_blocked = 0
        self.steps = 0  # accepted steps of the whole run
        self.iterations = 0  # their Newton iterations
        self.last_iterations = 0
        self._open()

    def _open(self) -> None:
        self.count, self.h_sum, self.h_min, self.h_max = 0, 0.0, math.inf, -math.inf
        self.it_sum, self.it_max, self.rejected = 0, 0, 0

    def add(self, h: float, iterations: int) -> None:
        """One accepted step of size ``h`` [s] that took ``iterations``."""
        self.count += 1
        self.h_sum += h
        if h < self.h_min:
            self.h_min = h
        if h > self.h_max:
            self.h_max = h
        self.it_sum += iterations
        if iterations > self.it_max:
            self.it_max = iterations
        self.steps += 1
        self.iterations += iterations
        self.last_iterations = iterations

    def add_closed(self, h: float, iterations: list) -> None:
        """Accepted steps of size ``h`` [s], each with its ``iterations`` and each
        followed by an output (:meth:`add` then :meth:`close` for each, the first
        closing the interval open before them: the steps of a restart point, or
        rejections)."""
        if iterations and (self.count or self.rejected):
            self.add(h, iterations[0])
            self.close()
            iterations = iterations[1:]
        if iterations:  # one row each, stacked at once (a batch's steps)
            its = np.asarray(iterations, dtype=float)
            block = np.empty((its.size, 7))
            block[:, 0], block[:, 1:4], block[:, 4:6], block[:, 6] = 1, h, its[:, None], 0
            self._stack_rows()
            self._blocks.append(block)
            self._n_blocked += its.size
        self.steps += len(iterations)
        self.iterations += int(sum(iterations))
        if iterations:
            self.last_iterations = iterations[-1]

    def reject(self) -> None:
        """One step rejected by the error control (retried smaller)."""
        self.rejected += 1

    def close(self) -> None:
        """End the interval at an output: its row, and a new interval."""
        if self.count:
            row = (self.count, self.h_min, self.h_max, self.h_sum / self.count,
                   self.it_sum, self.it_max, self.rejected)
        else:
            row = (0, math.nan, math.nan, math.nan, 0, 0, self.rejected)
        self._rows.append(row)
        self._open()

    def __len__(self) -> int:
        """Closed intervals (outputs)."""
        return self._n_blocked + len(self._rows)

    def _stack_rows(self) -> None:
        if self._rows:
            self._blocks.append(np.asarray(self._rows, dtype=float).reshape(-1, 7))
            self._n_blocked += len(self._rows)
            self._rows = []

    def summary(self) -> StepSummary:
        """The closed intervals, one row per output."""
        self._stack_rows()
        return StepSummary.from_rows(np.concatenate(self._blocks) if self._blocks
                                     else np.zeros((0, 7)))

    def open_interval(self) -> dict:
        """The steps since the last output (:func:`~flexmbs.results.steps.interval`)."""
        some = self.count > 0
        return interval(self.count, self.h_sum, self.h_min if some else None,
                        self.h_max if some else None, self.it_sum, self.it_max,
                        self.rejected)

    @classmethod
    def resumed(cls, earlier: StepSummary | None, open_interval: dict | None = None,
                last_iterations: int | None = None) -> StepLog:
        """A log continuing a restart point: the rows of the outputs before it
        (``earlier``), the steps since its last output (``open_interval``) and the
        iterations of its last step."""
        log = cls()
        if earlier is not None and len(earlier):
            log._rows = earlier.rows()
            log.steps, log.iterations = earlier.total, int(earlier.iterations.sum())
        if open_interval:
            log.count = int(open_interval["count"])
            log.h_sum = float(open_interval["h_sum"])
            log.h_min = (math.inf if open_interval.get("h_min") is None
                         else float(open_interval["h_min"]))
            log.h_max = (-math.inf if open_interval.get("h_max") is None
                         else float(open_interval["h_max"]))
            log.it_sum = int(open_interval["iterations"])
            log.it_max = int(open_interval["iterations_max"])
            log.rejected = int(open_interval.get("rejected", 0))
            log.steps += log.count
            log.iterations += log.it_sum
        log.last_iterations = int(last_iterations or 0)
        return log

    def copy(self) -> StepLog:
        """An independent copy (a co-simulation's saved state)."""
        new = StepLog()
        for name in self.__slots__:
            setattr(new, name, getattr(self, name))
        new._rows, new._blocks = list(self._rows), list(self._blocks)  # (blocks: read only)
        return new
