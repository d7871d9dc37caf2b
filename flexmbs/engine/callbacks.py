"""The state-dependent callables of a compiled run (docs/compiled.md, "Callables").

A joint actuator, a spring–damper's actuator, a point load or a distributed load whose
value is a Python callable f(t, state) (a controller) takes one column of the kernels'
``u`` (three for a load vector), like a time profile's value. A profile's column is set
once per time level; a callable's changes with the state, so the step kernel stops at
every Newton iterate (return code ``NEED_INPUTS``, the iterate in the workspace) and
:meth:`CallableInputs.answer` evaluates the callables there, exactly as the NumPy path
does (the same :class:`~flexmbs.model.forces.ForceState`, joint coordinate and rate,
errors and messages), writes their values into ``u`` and, when the iteration matrix is
rebuilt at that iterate, their derivative rows du/dq, du/dq̇ (forward differences with
the NumPy path's steps, :meth:`input_derivatives` of each force) into the workspace's
``cb_du``; the kernels add g ⊗ du/dq and g ⊗ du/dq̇ (g = −∂Q/∂u) to the tangents.
"""

from __future__ import annotations

import time

import numpy as np

from ..compiled.codes import INPUTS
from ..elements.declaration import input_is_callable, input_width


class CallableInputs:
    """The callables among the forces ``inputs`` (the columns of ``u`` in order) of
    ``system``: their evaluation at a state, and what that cost over a run."""

    def __init__(self, system, inputs, fd_step: float = 1e-7):
        self.system = system
        #: relative forward-difference step of the derivative rows (the integrator's)
        self.fd_step = fd_step
        self.items: list[tuple[object, int, int]] = []  # (force, first column, width)
        col = 0
        for force in inputs:
            width = input_width(force)
            if input_is_callable(force):
                self.items.append((force, col, width))
            col += width
        #: returns of the step kernel to Python for the callables' values
        self.count = 0
        #: evaluations of the user's callables (values and difference quotients)
        self.calls = 0
        #: wall time [s] spent in Python answering them
        self.time = 0.0

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def names(self) -> list[str]:
        return [force.name for force, _, _ in self.items]

    def values_into(self, t, q, qd, u) -> None:
        """The callables' values at (t, q, q̇) into their columns of ``u``."""
        for force, col, width in self.items:
            u[col:col + width] = force.input_values(self.system, q, qd, t)
        self.calls += len(self.items)

    def derivatives_into(self, t, q, qd, u, du) -> None:
        """Values into ``u`` and their rows du/dq, du/dq̇ into ``du`` (2, n_u, n_q): the
        calls in the NumPy path's order, the value (its residual, which also moves a
        joint angle's memory) and then the differences (its tangents)."""
        n = q.size
        self.values_into(t, q, qd, u)
        for force, col, width in self.items:
            _, d_q, d_qd = force.input_derivatives(self.system, q, qd, t, self.fd_step)
            du[0, col:col + width] = d_q
            du[1, col:col + width] = d_qd
            self.calls += 2 * n + 1 + (2 if width == 1 else 0)

    def fill(self, t, q, qd, u, work, derivatives: bool) -> None:
        """Values (and derivative rows) at a state given by the caller (the residual
        and the iteration matrix asked for alone)."""
        if not self.items:
            return
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        if derivatives:
            self.derivatives_into(float(t), q, qd, u, work.cb_du)
        else:
            self.values_into(float(t), q, qd, u)

    def answer(self, t, work, u) -> None:
        """Answer the step kernel's ``NEED_INPUTS`` at t_{n+1} = ``t``: the values at
        the iterate (q1, q̇1 of the workspace), with the derivative rows when it asks
        for them (counters[INPUTS] = −2); a callable that raises raises here, with the
        NumPy path's message."""
        start = time.perf_counter()
        want = int(work.counters[INPUTS])
        try:
            if want == -2:
                self.derivatives_into(t, work.q1, work.qd1, u, work.cb_du)
            else:
                self.values_into(t, work.q1, work.qd1, u)
        finally:
            self.count += 1
            self.time += time.perf_counter() - start
        work.counters[INPUTS] = -want

    def outputs_into(self, times, q, qd, us) -> None:
        """The callables' values at every output (rows of ``us``), one after the other
        from an empty angle memory, as the NumPy path's power after the run."""
        if not self.items:
            return
        system = self.system
        after_run, system.angle_memory = system.angle_memory, {}
        try:
            for k, tk in enumerate(times):
                self.values_into(float(tk), q[k], qd[k], us[k])
        finally:
            system.angle_memory = after_run

    def statistics(self) -> dict:
        """``statistics["callbacks"]`` of a run: the kernel's returns for the callables'
        values, the callables' evaluations, the time spent in Python, their names."""
        return {"count": int(self.count), "calls": int(self.calls),
                "time_s": float(self.time), "callables": self.names}
