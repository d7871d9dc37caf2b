"""A contact's sample: the numbers the integrator needs of a contact at one (q, q̇)
under its current state (impact onsets, dissipation, state switches, results), and the
layout of the contact state the compiled kernels read (docs/contact.md). Plain Python:
the NumPy path and the compiled kernels (:mod:`flexmbs.elements.contact.kernels`) fill
the same row."""

from __future__ import annotations

import math

import numpy as np

#: Columns of a sample row: gap g [m], normal velocity v_n [m/s] (> 0 separating),
#: tangential velocity v_t (3) [m/s], normal n (3, A → B), normal force F_n and its
#: elastic part [N], friction force F_t (3) and its conservative part (the stick spring,
#: 3) [N], the contact points in their markers' axes (3 + 3) and the stick spring's
#: offset in marker A's axes (3) [m] (what anchoring here would store), |u_t|² of the
#: anchored stick spring [m²], the stored energy [J], the dissipated power [W].
S_GAP, S_VN, S_VT, S_N, S_FN, S_FEL, S_FT, S_FTC = 0, 1, 2, 5, 8, 9, 10, 13
S_LA, S_LB, S_OFF, S_STRETCH2, S_ENERGY, S_DISSIPATION = 16, 19, 22, 25, 26, 27
N_SAMPLE = 28

#: Columns of a contact's state row (the compiled kernels' ``ct_state``): mode (open 0,
#: stick 1, slip 2), approach speed at the impact onset v⁻ [m/s] (NaN: none), 1.0 when
#: stick anchors are set, the anchors (3 + 3) and the stick spring's offset (3) [m].
C_MODE, C_V_ONSET, C_ANCHORED, C_LA, C_LB, C_OFF = 0, 1, 2, 3, 6, 9
N_STATE = 12


class Sample:
    """A contact at one (q, q̇) under its current state: its row of floats (the ``S_*``
    columns, as a list: reading a number costs no array scalar) with named views."""

    __slots__ = ("row",)

    def __init__(self, row):
        self.row = row if isinstance(row, list) else [float(x) for x in row]

    gap = property(lambda self: self.row[S_GAP], doc="gap g [m] (< 0 penetrating)")
    v_n = property(lambda self: self.row[S_VN], doc="normal velocity [m/s]")
    v_t = property(lambda self: self.row[S_VT:S_VT + 3], doc="tangential velocity [m/s]")
    normal = property(lambda self: self.row[S_N:S_N + 3], doc="unit normal, A → B")
    f_n = property(lambda self: self.row[S_FN], doc="normal force [N]")
    f_el = property(lambda self: self.row[S_FEL], doc="its elastic part [N]")
    f_t = property(lambda self: self.row[S_FT:S_FT + 3], doc="friction force [N]")
    f_t_cons = property(lambda self: self.row[S_FTC:S_FTC + 3],
                        doc="the friction force's conservative part (stick spring) [N]")
    local_a = property(lambda self: np.array(self.row[S_LA:S_LA + 3]),
                       doc="contact point on A in marker A's axes [m]")
    local_b = property(lambda self: np.array(self.row[S_LB:S_LB + 3]),
                       doc="contact point on B in marker B's axes [m]")
    offset = property(lambda self: np.array(self.row[S_OFF:S_OFF + 3]),
                      doc="the stick spring's offset −F_t/k_t in marker A's axes [m]")
    stretch2 = property(lambda self: self.row[S_STRETCH2],
                        doc="|u_t|² of the anchored stick spring [m²]")
    energy = property(lambda self: self.row[S_ENERGY], doc="stored energy [J]")
    dissipation = property(lambda self: self.row[S_DISSIPATION],
                           doc="power dissipated by contact damping and friction [W]")

    @property
    def penetration(self) -> float:
        return max(0.0, -self.row[S_GAP])

    @property
    def speed(self) -> float:
        """Sliding speed |v_t| [m/s]."""
        r = self.row
        return math.sqrt(r[S_VT] ** 2 + r[S_VT + 1] ** 2 + r[S_VT + 2] ** 2)

    @property
    def friction(self) -> float:
        """|F_t| [N]."""
        r = self.row
        return math.sqrt(r[S_FT] ** 2 + r[S_FT + 1] ** 2 + r[S_FT + 2] ** 2)


def samples_of(rows) -> list[Sample]:
    """Samples of the rows of a (n_contacts, N_SAMPLE) array (one conversion)."""
    return [Sample(row) for row in rows.tolist()]


def dissipation(gap, impulsive, f_n, f_el, v_n, f_t, f_t_cons, v_t) -> float:
    """Power dissipated by contact damping and friction [W] (≥ 0): −(F_n − F_el) v_n
    − (F_t − F_t,cons)·v_t while penetrating (a clipped law still dissipates: its
    elastic energy is lost)."""
    if gap >= 0 or impulsive:
        return 0.0
    return float(-(f_n - f_el) * v_n - ((f_t[0] - f_t_cons[0]) * v_t[0]
                                         + (f_t[1] - f_t_cons[1]) * v_t[1]
                                         + (f_t[2] - f_t_cons[2]) * v_t[2]))


def sample_row(gap, v_n, v_t, normal, f_n, f_el, f_t, f_t_cons, local_a, local_b, offset,
               stretch2, energy, impulsive) -> list:
    """A sample row from its parts (the NumPy path's)."""
    row = np.empty(N_SAMPLE)
    row[S_GAP], row[S_VN] = gap, v_n
    row[S_VT:S_VT + 3], row[S_N:S_N + 3] = v_t, normal
    row[S_FN], row[S_FEL] = f_n, f_el
    row[S_FT:S_FT + 3], row[S_FTC:S_FTC + 3] = f_t, f_t_cons
    row[S_LA:S_LA + 3], row[S_LB:S_LB + 3], row[S_OFF:S_OFF + 3] = local_a, local_b, offset
    row[S_STRETCH2], row[S_ENERGY] = stretch2, energy
    row[S_DISSIPATION] = dissipation(gap, impulsive, f_n, f_el, v_n, f_t, f_t_cons, v_t)
    return row.tolist()
