"""What a failed step says about itself: the residual, the violated constraints and the
condition of the iteration matrix at the last Newton iterate (docs/integrators.md)."""

from __future__ import annotations

import warnings

import numpy as np


def nonfinite_head(integ, t1: float) -> str:
    """The head of the message of a step whose Newton iterates became non-finite. Most
    often the iteration matrix is singular (redundant constraints); in real time, where
    steps are accepted unconverged and never shortened, a step too large for the motion
    is the likelier cause, and the message says how many were accepted so."""
    if getattr(integ, "real_time", False):
        return (f"Newton produced non-finite values at t = {t1:.6g} s in a real-time step "
                f"(fixed h = {integ.h:g} s, at most {integ.real_time_iterations} "
                f"iterations; {integ.bounded_steps} step(s) accepted unconverged so far, "
                f"largest |q| {float(np.max(np.abs(integ.q))):.3g}): the step may be too "
                "large for the motion; compare a run without real_time, or take a "
                "smaller h")
    return (f"Newton produced non-finite values at t = {t1:.6g} s (a singular iteration "
            f"matrix? check System.check() for redundant constraints)")


def failure_message(integ, head, q1, qd1, qdd1, lam1, t1) -> str:
    """``head`` plus the diagnostics of the integrator ``integ`` at the (last finite)
    Newton iterate: the equilibrium residual, the violated constraints and the
    iteration matrix's condition."""
    s = integ.system
    with np.errstate(all="ignore"):
        worst = s.violated(q1, t1, tol=integ.phi_tol)
        names = ", ".join(f"{nm} (|Φ| = {v:.2g})" for nm, v in worst[:4]) or "none"
        try:  # (at a diverged iterate a force law may overflow in Python floats)
            residual = f"{float(np.max(np.abs(integ._residual(q1, qd1, qdd1, lam1, t1)), initial=0.0)):.3g}"  # noqa: E501
        except (ArithmeticError, ValueError) as exc:
            residual = f"not computable there ({type(exc).__name__}: {exc})"
    return (f"{head}; equilibrium residual {residual}; constraints above "
            f"{integ.phi_tol:g}: {names}; iteration-matrix condition "
            f"{condition_estimate(integ):.2g}")


def condition_estimate(integ) -> float:
    """1-norm condition estimate of the current factored iteration matrix."""
    try:
        if getattr(integ.matrix.lu, "sparse", False):  # the matrix SuperLU factored
            return float(np.linalg.cond(integ.compiled.work.matrix, 1))
        lu = integ.matrix.lu[0]
        if integ.compiled is not None:  # the kernels' factors are stored transposed
            lu = lu.T
        upper = np.triu(lu)
        lower = np.tril(lu, -1) + np.eye(lu.shape[0])
        mat = lower @ upper
        return float(np.linalg.cond(mat, 1))
    except (TypeError, ValueError, np.linalg.LinAlgError):
        return float("inf")


def one_attempt(try_step, h, compiled, last: bool = False):
    """``try_step(h)`` (an integrator's attempt at one step: (ok, message, iterations,
    state)). On the NumPy path (``compiled`` None) the floating-point warnings
    (:func:`~flexmbs.integrators.health.numerical_categories`) of a failed attempt are held: they
    are dropped once the step succeeds at a smaller size (the attempt's iterates
    diverged and the step was halved), and shown when the ``last`` attempt fails too (no
    halving left: the run fails, and they say what went wrong). A successful attempt's
    are shown after it, as they would have been (a run gathers them,
    :class:`~flexmbs.integrators.health.NumericalWarnings`). Other warnings are shown as
    they come, after the filters have had their say (once per place by default)."""
    if compiled is not None:
        return try_step(h)
    from .health import numerical_categories

    held = []
    shown = warnings.showwarning

    def hold(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, numerical_categories()):
            held.append((message, category, filename, lineno, file, line))
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = hold
    try:
        out = try_step(h)
    except ArithmeticError as exc:  # a force law in Python floats overflowed at a
        # diverging iterate: the attempt failed, as the kernels' non-finite values do
        t1 = try_step.__self__.t + h
        out = (False, f"Newton's iterates overflowed at t = {t1:.6g} s in a force "
               f"({type(exc).__name__}: {exc})", 0, None)
    finally:
        warnings.showwarning = shown
    # the failed attempts of this step so far: dropped once one succeeds, shown when the
    # step fails for good (the blow-up's overflows say what went wrong)
    failed = try_step.__self__.__dict__.setdefault("_failed_attempt_warnings", [])
    if out[0]:
        failed.clear()
    else:
        failed.extend(held)
        held = []
        if last:
            held, failed[:] = list(failed), []
    for args in held:
        shown(*args)
    return out
