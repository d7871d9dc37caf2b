"""Restart points: the integrator's state after its last accepted step, stored with the
results, so that a run that ended early (failed, diverged, interrupted) or reached its
end can be continued and take the same steps as an uninterrupted run
(docs/integrators.md, "Restart").

What a continuation needs beyond the recorded outputs: q, q̇, q̈, λ and the
pseudo-acceleration a at the last step (the outputs may be sparser than the steps, and
a is not an output), the current step size, the iteration matrix in use with the step
it was built for (modified Newton reuses it: a fresh one would change the iterations
and, at the Newton tolerance, the answer), and the counters that the output and check
schedules run on. In the results file: group ``/checkpoint``, datasets q, qd, qdd,
lam, a[, matrix] (or, from a sparse engine, the matrix's possible nonzeros alone:
matrix_rows, matrix_cols, matrix_values, :class:`~flexmbs.results.checkpoint_io.
MatrixEntries`), attrs t, h, matrix_h, steps, next_output, refreshes, rejected,
formulation, stepping_time.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError, ReadError
from ..results.checkpoint_io import MatrixEntries


def restart_point(previous, system, t_end: float) -> dict:
    """The checkpoint of ``previous`` (a SimulationResult) after checking that it can
    continue on ``system`` up to ``t_end``: same coordinates and constraint rows, a
    checkpoint stored, no contacts (their states are not stored), time left. Messages
    name the results file it was read from."""
    source = (f"results file {previous.source!r}" if getattr(previous, "source", "")
              else "the previous result")
    cp = getattr(previous, "checkpoint", None) or {}
    if not cp:
        raise ReadError(f"{source} holds no restart point (results written before "
                        f"flexmbs stored them cannot be continued)")
    if tuple(previous.coord_names) != tuple(system.coord_names):
        theirs, ours = list(previous.coord_names), list(system.coord_names)
        first = next((i for i, (a, b) in enumerate(zip(theirs, ours, strict=False))
                      if a != b),
                     min(len(theirs), len(ours)))
        raise ModelError(f"{source} was computed on another model: its coordinates "
                         f"({len(theirs)}) differ from this model's ({len(ours)}) from "
                         f"position {first} on ({theirs[first:first + 2]} against "
                         f"{ours[first:first + 2]})")
    if tuple(previous.constraint_names) != tuple(system.constraint_names):
        raise ModelError(f"{source} was computed with other constraints: its "
                         f"{len(previous.constraint_names)} constraint rows differ from "
                         f"this model's {len(system.constraint_names)}")
    if getattr(previous, "contacts", None):
        raise ModelError(f"{source} has contacts ({', '.join(previous.contacts)}), whose "
                         f"states (stick anchors, dissipation) are not stored: a run with "
                         f"contacts cannot be continued; run it again from the start")
    n_q, n_c = system.n_q, system.n_c
    shapes = {"q": (n_q,), "qd": (n_q,), "qdd": (n_q,), "a": (n_q,), "lam": (n_c,)}
    matrix = cp.get("matrix")
    if isinstance(matrix, MatrixEntries):  # (a sparse engine's: its nonzeros)
        problem = (f"is of order {matrix.order}, not {n_q + n_c}"
                   if matrix.order != n_q + n_c else matrix.problem())
        if problem is not None:
            raise ReadError(f"{source}: restart point 'matrix' {problem}")
    elif matrix is not None:
        shapes["matrix"] = (n_q + n_c, n_q + n_c)
    for key, shape in shapes.items():
        value = np.asarray(cp[key])
        if value.dtype.kind not in "fiu":
            raise ReadError(f"{source}: restart point {key!r} holds {value.dtype} values, "
                            f"not real numbers")
        if value.shape != shape or not np.all(np.isfinite(value)):
            raise ReadError(f"{source}: restart point {key!r} has shape {value.shape}"
                            f"{'' if value.shape != shape else ' and non-finite values'};"
                            f" expected {shape} finite values")
    if not t_end > cp["t"]:
        raise ModelError(f"{source} already reaches t = {cp['t']:.6g} s, not before "
                         f"t_end = {t_end:g} s: nothing to continue (raise t_end)")
    return cp


def kept_matrix(compiled, numpy_matrix):
    """The iteration matrix in use as a restart point keeps it: the NumPy path's
    ``numpy_matrix`` itself, a copy of a dense compiled engine's, and of a sparse
    engine's (``compiled.pattern``) its nonzeros alone (:class:`MatrixEntries`: a dense
    copy grows as the order squared, 152 MB and 0.3 s at the end of a run of 256
    flexible bodies)."""
    if compiled is None:
        return numpy_matrix
    work, pattern = compiled.work.matrix, compiled.pattern
    if pattern is None:
        return work.copy()
    return MatrixEntries(work.shape[0], *pattern, work[pattern])


def restored_matrix(compiled, matrix, order: int) -> np.ndarray:
    """A restart point's ``matrix`` (of :func:`kept_matrix`, or read from a file) as
    the engine factors it, for a model of ``order`` n_q + n_c: a sparse engine's entries
    written into its workspace's dense matrix, which is returned (onto zeros where they
    are not the engine's own pattern, as a dense matrix would be); else a dense array.
    ValueError for a matrix of another order (a state of another model)."""
    if not isinstance(matrix, MatrixEntries):
        dense = np.array(matrix, dtype=float)
        if dense.shape != (order, order):
            raise ValueError(f"the restart point's matrix is {dense.shape}, not of order "
                             f"{order}")
        return dense
    if matrix.order != order:
        raise ValueError(f"the restart point's matrix entries are of order "
                         f"{matrix.order}, not {order}")
    pattern = None if compiled is None else compiled.pattern
    if pattern is None:
        return matrix.dense()
    work = compiled.work.matrix
    if not (np.array_equal(matrix.rows, pattern[0]) and np.array_equal(matrix.cols,
                                                                       pattern[1])):
        work[...] = 0.0  # (entries of another pattern: as the dense matrix they make)
    matrix.scatter_into(work)
    return work
