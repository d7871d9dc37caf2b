"""What the step kernel's calls pass where their task reads nothing (docs/compiled.md,
"The prebuilt kernel").

The kernel has one entry point (:func:`flexmbs.engine.newton.kernel`) whose every call
passes every argument, each of one type (numba compiles it once): a task that does not
read an argument gets a placeholder of the right kind, often of size zero. Some tasks
read a placeholder's size (a zero-size sparse factor means "dense", a 1 x 1 LU "no
factors"); :data:`UNREAD` lists, per task, the arguments it never reads at all, where
the native caller leaves whatever array is bound (:meth:`flexmbs.engine.native.
NativeKernel.skip_placeholders`).
"""

from __future__ import annotations

import numpy as np

from ..compiled.codes import TASK_CONTACTS, TASK_FACTOR, TASK_STEP, TASK_STEPS, step_parameters


class Placeholders:
    """Arrays of the right kind for the kernel arguments a task does not use."""

    def __init__(self, n_q, n_c, n_d, n_a):  # n_a: the columns of u
        self.q, self.lam, self.par = np.zeros(n_q), np.zeros(n_c), step_parameters()
        self.prof, self.u = np.zeros((n_d, 3)), np.zeros(n_a)
        self.lu, self.piv = np.zeros((1, 1)), np.zeros(1, dtype=np.int64)
        self.sp_i, self.sp_x = np.zeros(0, dtype=np.int64), np.zeros(0)
        self.qs, self.lams = np.zeros((0, n_q)), np.zeros((0, n_c))
        self.profs, self.us, self.out = np.zeros((0, n_d, 3)), np.zeros((0, n_a)), np.zeros((0, 5))
        self.refs = np.zeros((0, 0))
        self.states = np.zeros((0, 4, n_q))


#: The kernel's array parameters each task never reads (newton.kernel's dispatch: a
#: contact sample reads q and q̇ alone; a step one by one no histories; a batch of steps
#: not the single step's inputs, the histories of outputs or the springs' angles; a
#: factorization the workspace's matrix into lu and piv alone).
UNREAD = {TASK_CONTACTS: ("par", "prof", "u", "lu", "piv", "sp_i", "sp_x", "qs", "qds",
                          "lams", "profs", "us", "refs", "out", "states"),
          TASK_STEP: ("qs", "qds", "lams", "profs", "us", "refs", "out", "states"),
          TASK_STEPS: ("prof", "u", "qs", "qds", "refs"),
          TASK_FACTOR: ("q", "qd", "qdd", "a", "lam", "par", "prof", "u", "sp_i", "sp_x",
                        "qs", "qds", "lams", "profs", "us", "refs", "out", "states")}
