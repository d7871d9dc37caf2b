"""The restart point's storage in a results file: group ``/checkpoint`` with datasets
q, qd, qdd, lam, a[, matrix] and attrs t, h, matrix_h, matrix_factored ("kernel": the
matrix in use was factored by the step kernel's LU, "library": by LAPACK or SuperLU),
steps, next_output, refreshes, rejected, formulation, stepping_time, angles (the
rotational springs' angle memory, JSON {name: angle [rad]}), interval (JSON: the steps
since the last output, flexmbs.results.steps.interval) and last_iterations (files
written before these two hold the steps per step instead, flexmbs.results.io) (what it
holds and why: :mod:`flexmbs.integrators.checkpoint`, docs/integrators.md, "Restart")."""

from __future__ import annotations

import json

import numpy as np

ARRAYS = ("q", "qd", "qdd", "lam", "a")
_UNITS = {"q": "coord_units", "qd": "coord_units/s", "qdd": "coord_units/s^2",
          "lam": "constraint_units", "a": "coord_units/s^2"}
SCALARS = ("t", "h", "matrix_h", "steps", "next_output", "refreshes", "rejected",
           "stepping_time")


def write_checkpoint(f, checkpoint: dict) -> None:
    """Add ``checkpoint`` (from :meth:`AlphaIntegrator.checkpoint`) to the open HDF5
    results file ``f``; nothing when it is empty."""
    if not checkpoint:
        return
    g = f.create_group("checkpoint")
    for key in ARRAYS:
        g.create_dataset(key, data=np.asarray(checkpoint[key], float))
        g[key].attrs["units"] = _UNITS[key]
    if checkpoint.get("matrix") is not None:
        g.create_dataset("matrix", data=np.asarray(checkpoint["matrix"], float))
        g["matrix"].attrs["units"] = "-"  # the scaled iteration matrix
    for key in SCALARS:
        value = checkpoint.get(key)
        g.attrs[key] = np.nan if value is None else value
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
    for key in SCALARS:
        value = g.attrs[key]
        out[key] = None if np.isnan(value) else value.item()
    for key in ("steps", "next_output", "refreshes", "rejected"):
        out[key] = int(out[key])
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
