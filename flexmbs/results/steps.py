"""What a result keeps of the steps: one row per output interval, not one per step
(docs/results_file.md, "Steps"), so that a run's memory and results file grow with its
outputs and not with its steps.

Row k of a :class:`StepSummary` summarizes the steps accepted after output k − 1 was
recorded, up to output k: with outputs every n-th step the steps ending in
(t_{k−1}, t_k]; with output times between steps, a step counts with the first output
that it reaches. Row 0 (the initial state) has no steps. Steps after the last output (a
run that failed, or was interrupted, between two outputs) are in the run's totals
(``statistics["steps"]``) and in its restart point, not in a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The columns of a StepSummary: (units, what each row holds). Step sizes of a row
#: without steps are NaN.
STEP_FIELDS = {
    "count": ("1", "steps accepted in the interval"),
    "h_min": ("s", "smallest step size"),
    "h_max": ("s", "largest step size"),
    "h_mean": ("s", "mean step size (the interval's steps' total length / count)"),
    "iterations": ("1", "Newton iterations of the interval's accepted steps"),
    "iterations_max": ("1", "most Newton iterations of one step"),
    "rejected": ("1", "steps rejected by the error control and retried smaller"),
}
#: The integer columns (the others are float).
INTEGER_FIELDS = ("count", "iterations", "iterations_max", "rejected")


@dataclass(eq=False)
class StepSummary:
    """The steps per output interval: arrays (n_t,) named by :data:`STEP_FIELDS`;
    ``count``, ``iterations``, ``iterations_max``, ``rejected`` integers, the step sizes
    [s] floats (NaN where a row has no steps)."""

    count: np.ndarray
    h_min: np.ndarray
    h_max: np.ndarray
    h_mean: np.ndarray
    iterations: np.ndarray
    iterations_max: np.ndarray
    rejected: np.ndarray

    def __post_init__(self):
        for name in STEP_FIELDS:
            kind = np.int64 if name in INTEGER_FIELDS else float
            setattr(self, name, np.asarray(getattr(self, name), dtype=kind).reshape(-1))
        sizes = {getattr(self, name).size for name in STEP_FIELDS}
        if len(sizes) != 1:
            raise ValueError(f"StepSummary columns differ in length: "
                             f"{ {n: getattr(self, n).size for n in STEP_FIELDS} }")

    def __len__(self) -> int:
        return int(self.count.size)

    @property
    def total(self) -> int:
        """Steps summarized in the rows (the run's total, ``statistics["steps"]``, also
        counts any steps after the last output)."""
        return int(self.count.sum())

    @property
    def per_step(self) -> np.ndarray:
        """Mean Newton iterations per step in each row (n_t,) (NaN without steps)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.count > 0, self.iterations / np.maximum(self.count, 1),
                            np.nan)

    @classmethod
    def empty(cls, n_t: int) -> StepSummary:
        """``n_t`` rows without steps (a result that was not stepped)."""
        zeros, nans = np.zeros(n_t, np.int64), np.full(n_t, np.nan)
        return cls(zeros, nans, nans.copy(), nans.copy(), zeros.copy(), zeros.copy(),
                   zeros.copy())

    @classmethod
    def from_rows(cls, rows) -> StepSummary:
        """From rows (count, h_min, h_max, h_mean, iterations, iterations_max, rejected)."""
        table = np.asarray(rows, dtype=float).reshape(-1, len(STEP_FIELDS))
        return cls(*(table[:, k] for k in range(len(STEP_FIELDS))))

    def rows(self) -> list[tuple]:
        """The rows as tuples, in :data:`STEP_FIELDS` order (a restart's history)."""
        return list(zip(*(getattr(self, name).tolist() for name in STEP_FIELDS),
                        strict=True))

    def coarsened(self, window: int) -> StepSummary:
        """Rows merged by ``window`` consecutive rows (the last group may be shorter):
        counts and iterations summed, extremes of the extremes, the mean weighted by the
        counts (a readable plot of many outputs)."""
        if not len(self):
            return self
        starts = np.arange(0, len(self), max(int(window), 1))
        count = np.add.reduceat(self.count, starts)
        length = np.add.reduceat(np.where(self.count > 0, self.h_mean * self.count, 0.0),
                                 starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            h_mean = np.where(count > 0, length / np.maximum(count, 1), np.nan)
        return StepSummary(
            count, np.fmin.reduceat(self.h_min, starts), np.fmax.reduceat(self.h_max, starts),
            h_mean, np.add.reduceat(self.iterations, starts),
            np.maximum.reduceat(self.iterations_max, starts),
            np.add.reduceat(self.rejected, starts))

    @classmethod
    def from_steps(cls, t, h, iterations) -> tuple[StepSummary, dict]:
        """The summary of per-step records (files written before summaries: step sizes
        ``h`` and Newton ``iterations`` of every step since the first output time
        ``t[0]``) over the output times ``t``, and the open interval (:func:`interval`)
        of the steps after the last output. Rejections per interval were not recorded:
        ``rejected`` is 0."""
        t = np.asarray(t, float).reshape(-1)
        h = np.asarray(h, float).reshape(-1)
        its = np.asarray(iterations, float).reshape(-1)
        n_t = t.size
        starts = float(t[0]) + np.concatenate([[0.0], np.cumsum(h)[:-1]]) if h.size \
            else np.zeros(0)
        # the first output after each step's start (an output at a step's start was
        # recorded before it): 1 … n_t, n_t for the steps after the last output
        row = np.searchsorted(t, starts + 1e-6 * h, side="right")
        inside = row < n_t
        count = np.bincount(row[inside], minlength=n_t)
        length = np.bincount(row[inside], weights=h[inside], minlength=n_t)
        h_min, h_max = np.full(n_t, np.inf), np.full(n_t, -np.inf)
        np.minimum.at(h_min, row[inside], h[inside])
        np.maximum.at(h_max, row[inside], h[inside])
        it_max = np.zeros(n_t)
        np.maximum.at(it_max, row[inside], its[inside])
        empty = count == 0
        with np.errstate(invalid="ignore", divide="ignore"):
            h_mean = np.where(empty, np.nan, length / np.maximum(count, 1))
        summary = cls(count, np.where(empty, np.nan, h_min), np.where(empty, np.nan, h_max),
                      h_mean, np.bincount(row[inside], weights=its[inside], minlength=n_t),
                      it_max, np.zeros(n_t, np.int64))
        after = ~inside
        open_ = interval(int(after.sum()), float(h[after].sum()),
                         float(h[after].min()) if after.any() else None,
                         float(h[after].max()) if after.any() else None,
                         int(its[after].sum()), int(its[after].max(initial=0)), 0)
        return summary, open_


def interval(count=0, h_sum=0.0, h_min=None, h_max=None, iterations=0, iterations_max=0,
             rejected=0) -> dict:
    """The open interval of a restart point: the steps since the last output (``h_sum``
    their total length [s]; ``h_min``, ``h_max`` None without steps)."""
    return {"count": int(count), "h_sum": float(h_sum), "h_min": h_min, "h_max": h_max,
            "iterations": int(iterations), "iterations_max": int(iterations_max),
            "rejected": int(rejected)}

