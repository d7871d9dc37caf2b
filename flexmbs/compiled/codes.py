"""The numbers the step kernel and Python exchange (docs/compiled.md): its tasks, its
return codes and the workspace counters. Plain Python, so the run side reads them
without importing numba; the kernels fold them in as constants."""

#: Return codes of the step (:func:`flexmbs.engine.newton.newton_step`).
CONVERGED, NEED_FACTOR, NONFINITE_SOLVE, NONFINITE_ERROR, MAX_ITER = 0, 1, 2, 3, 4

#: Workspace counters: iteration, stale matrix, residual at hand.
IT, STALE, HAVE_RESIDUAL = 0, 1, 2

#: Tasks of the entry point :func:`flexmbs.engine.newton.kernel`.
TASK_STEP, TASK_RESIDUAL, TASK_MATRIX, TASK_OUTPUTS = 0, 1, 2, 3
