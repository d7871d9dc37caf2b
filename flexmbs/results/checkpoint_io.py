"""The restart point's storage in a results file: group ``/checkpoint`` with datasets
q, qd, qdd, lam, a[, matrix | matrix_rows, matrix_cols, matrix_values (the iteration
matrix of a sparse engine by its possible nonzeros, :class:`MatrixEntries`, with attr
matrix_order)] and attrs t, h, matrix_h, matrix_factored ("kernel": the
matrix in use was factored by the step kernel's LU, "library": by LAPACK or SuperLU),
steps, next_output, refreshes, rejected, halvings, formulation, stepping_time, angles (the
rotational springs' angle memory, JSON {name: angle [rad]}), interval (JSON: the steps
since the last output, flexmbs.results.steps.interval) and last_iterations (files
written before these two hold the steps per step instead, flexmbs.results.io) (what it
holds and why: :mod:`flexmbs.integrators.checkpoint`, docs/integrators.md, "Restart")."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

ARRAYS = ("q", "qd", "qdd", "lam", "a")
_UNITS = {"q": "coord_units", "qd": "coord_units/s", "qdd": "coord_units/s^2",
          "lam": "constraint_units", "a": "coord_units/s^2"}
SCALARS = ("t", "h", "matrix_h", "steps", "next_output", "refreshes", "rejected",
           "stepping_time")


@dataclass(frozen=True)
class MatrixEntries:
    """A restart point's iteration matrix of order ``order`` by its possible nonzeros,
    as a sparse engine holds it: entry (rows[k], cols[k]) is values[k], every other entry
    is zero. It takes O(nonzeros) where the dense matrix takes order² (a chain of 256
    flexible bodies, order 4352: 3.6 MB against 152 MB, and 0.3 s to copy at the run's
    end)."""

    order: int
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return (self.order, self.order)

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + self.cols.nbytes + self.values.nbytes

    def dense(self) -> np.ndarray:
        """The matrix as a dense (order, order) array."""
        out = np.zeros(self.shape)
        self.scatter_into(out)
        return out

    def scatter_into(self, matrix: np.ndarray) -> None:
        """Write the entries into ``matrix`` (its other entries are left as they are)."""
        matrix[self.rows, self.cols] = self.values

    def problem(self) -> str | None:
        """What is wrong with the entries (a damaged file), or None."""
        rows, cols, values = (np.asarray(a) for a in (self.rows, self.cols, self.values))
        n = values.shape
        if (rows.shape != n or cols.shape != n or len(n) != 1
                or rows.dtype.kind not in "iu" or cols.dtype.kind not in "iu"):
            return (f"rows {rows.shape}, cols {cols.shape} and values {n} are not one "
                    f"integer row and column per value")
        if values.dtype.kind != "f":
            return f"values of type {values.dtype}, not real numbers"
        if n[0] and (min(rows.min(), cols.min()) < 0
                     or max(rows.max(), cols.max()) >= self.order):
            return f"an entry lies outside the matrix of order {self.order}"
        if not np.all(np.isfinite(values)):
            return "non-finite values"
        if np.unique(cols.astype(np.int64) * self.order + rows).size != n[0]:
            return "an entry given twice"
        return None


def write_checkpoint(f, checkpoint: dict) -> None:
    """Add ``checkpoint`` (from :meth:`AlphaIntegrator.checkpoint`) to the open HDF5
    results file ``f``; nothing when it is empty."""
    if not checkpoint:
        return
    g = f.create_group("checkpoint")
    for key in ARRAYS:
        g.create_dataset(key, data=np.asarray(checkpoint[key], float))
        g[key].attrs["units"] = _UNITS[key]
    matrix = checkpoint.get("matrix")
    if isinstance(matrix, MatrixEntries):  # the scaled iteration matrix's nonzeros
        g.create_dataset("matrix_rows", data=np.asarray(matrix.rows, np.int64))
        g.create_dataset("matrix_cols", data=np.asarray(matrix.cols, np.int64))
        g.create_dataset("matrix_values", data=np.asarray(matrix.values, float))
        for key in ("matrix_rows", "matrix_cols", "matrix_values"):  # (indices, and the
            g[key].attrs["units"] = "-"  # scaled matrix's entries)
        g.attrs["matrix_order"] = int(matrix.order)
    elif matrix is not None:
        g.create_dataset("matrix", data=np.asarray(matrix, float))
        g["matrix"].attrs["units"] = "-"  # the scaled iteration matrix
    for key in SCALARS:
        value = checkpoint.get(key)
        g.attrs[key] = np.nan if value is None else value
    g.attrs["halvings"] = int(checkpoint.get("halvings", 0))  # (files before it: none)
    g.attrs["formulation"] = str(checkpoint.get("formulation", ""))
    g.attrs["matrix_factored"] = str(checkpoint.get("matrix_factored", ""))
    g.attrs["angles"] = json.dumps({str(k): float(v) for k, v in
                                    (checkpoint.get("angles") or {}).items()})
    if checkpoint.get("interval") is not None:
        g.attrs["interval"] = json.dumps(checkpoint["interval"])
        g.attrs["last_iterations"] = int(checkpoint.get("last_iterations") or 0)


def read_checkpoint(f) -> dict:
    """The checkpoint of the open results file ``f`` ({} for files without one)."""
    g = f.get("checkpoint")
    if g is None:
        return {}
    out = {key: g[key][()] for key in ARRAYS}
    out["matrix"] = g["matrix"][()] if "matrix" in g else None
    if "matrix_values" in g:
        order = g.attrs["matrix_order"]
        if not (np.ndim(order) == 0 and np.asarray(order).dtype.kind in "iu"):
            raise ValueError(f"checkpoint matrix_order {order!r} is not an integer")
        out["matrix"] = MatrixEntries(int(order), g["matrix_rows"][()],
                                      g["matrix_cols"][()], g["matrix_values"][()])
    for key in SCALARS:
        value = g.attrs[key]
        out[key] = None if np.isnan(value) else value.item()
    for key in ("steps", "next_output", "refreshes", "rejected"):
        out[key] = int(out[key])
    out["halvings"] = int(g.attrs.get("halvings", 0))
    out["formulation"] = str(g.attrs.get("formulation", ""))
    out["matrix_factored"] = str(g.attrs.get("matrix_factored", ""))  # ("": before it)
    out["angles"] = json.loads(str(g.attrs.get("angles", "{}")))
    if "interval" in g.attrs:
        out["interval"] = _interval(json.loads(str(g.attrs["interval"])))
        out["last_iterations"] = int(g.attrs.get("last_iterations", 0))
    return out


def _interval(value) -> dict:
    """The stored open interval, checked (a damaged file: TypeError/KeyError/ValueError,
    which the reader turns into a ReadError naming the file)."""
    from .steps import interval

    if not isinstance(value, dict):
        raise TypeError(f"checkpoint interval is {type(value).__name__}, not a dict")
    out = interval(**value)
    if out["count"] < 0 or not np.isfinite(out["h_sum"]):
        raise ValueError(f"checkpoint interval {value!r} is not a count of steps")
    return out
