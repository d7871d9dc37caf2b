"""Compiled output quantities over a whole run (docs/compiled.md): kinetic and potential
energy, the power of the non-conservative forces and drives, and the constraint
violations at every output time, after the run.

The same quantities as :meth:`flexmbs.assembly.system.System.energy`,
:meth:`~flexmbs.assembly.system.System.nonconservative_power` and
:meth:`~flexmbs.assembly.system.System.violations` (docs/theory_ffrf.md: T = ½ wᵀ M̄ w,
w = C q̇; gravity through the first moment; drives work through their multipliers).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .packing import (
    NO,
    T_B_FLEX,
    T_B_KIND,
    T_B_MODE,
    T_B_NM,
    T_B_START,
    T_C_DRIVE,
    T_C_ROW,
    T_E_DRIVE,
    T_E_KIND,
    T_E_MARK,
    T_E_ROW,
    T_F_DFF,
    T_F_INV_M0,
    T_F_KFF,
    T_F_MASS,
    T_F_N,
    T_F_SKA,
    T_F_SKD,
    T_F_STIFF,
    T_F_SXC,
    T_GRAVITY,
    T_J_COL,
    T_J_ROW,
    T_R_IO,
    T_R_MASS,
    T_R_S,
    T_S_MARK,
    T_S_PAR,
    T_T_MARK,
    T_T_PAR,
    W_ANGLES,
    W_FMAT,
    W_FVEC,
    W_GBAR,
    W_JAC,
    W_MK_V,
    W_OCON,
    W_OVEC,
    W_QCUR,
    W_ROT,
    W_SDM,
    W_SVEC,
    YES,
    _f1,
    _f2,
    _f3,
    _f4,
    _f5,
    _i1,
    _i2,
)
from .quadratic_velocity import row_dot
from .residual import (
    EQ_ROTATION,
    NO_MRF,
    actuator_loads,
    body_frames,
    constraints_with_jacobian,
    distributed_loads,
    force_element_loads,
    full_mass,
    jacobian_dense,
    mode_mass,
    torsion_loads,
    torsion_state,
)
from .stiffening import stiffening_energies


@njit(cache=True)
def _body_energies(F, IN, H, WF, WI, WH, q, qd):
    """(kinetic, potential) [J] of all bodies at (q, q̇); needs :func:`body_frames`.
    Scratch: a flexible body's (``fmat``, ``fvec``) and its stiffening's (``sdm``,
    ``svec``) in the workspace: nothing allocated."""
    b_kind, b_start, b_nm = _i1(IN, H, T_B_KIND), _i1(IN, H, T_B_START), _i1(IN, H, T_B_NM)
    b_flex, b_mode = _i1(IN, H, T_B_FLEX), _i1(IN, H, T_B_MODE)
    r_mass, r_io, r_s = _f1(F, H, T_R_MASS), _f3(F, H, T_R_IO), _f2(F, H, T_R_S)
    f_inv_m0, f_n = _f3(F, H, T_F_INV_M0), _f4(F, H, T_F_N)
    f_kff, f_mass = _f3(F, H, T_F_KFF), _f1(F, H, T_F_MASS)
    f_stiff, f_sxc = _i1(IN, H, T_F_STIFF), _f5(F, H, T_F_SXC)
    f_ska, f_skd = _f4(F, H, T_F_SKA), _f4(F, H, T_F_SKD)
    g = _f1(F, H, T_GRAVITY)
    rot, gbar = _f3(WF, WH, W_ROT), _f3(WF, WH, W_GBAR)
    mats, wq = _f3(WF, WH, W_FMAT), _f2(WF, WH, W_FVEC)[0]
    kin, pot = 0.0, 0.0
    for b in range(b_kind.size):
        st = b_start[b]
        a, gb = rot[b], gbar[b]
        w0 = gb[0, 0] * qd[st + 3] + gb[0, 1] * qd[st + 4] + gb[0, 2] * qd[st + 5] \
            + gb[0, 3] * qd[st + 6]
        w1 = gb[1, 0] * qd[st + 3] + gb[1, 1] * qd[st + 4] + gb[1, 2] * qd[st + 5] \
            + gb[1, 3] * qd[st + 6]
        w2 = gb[2, 0] * qd[st + 3] + gb[2, 1] * qd[st + 4] + gb[2, 2] * qd[st + 5] \
            + gb[2, 3] * qd[st + 6]
        if b_kind[b] == 0:
            s = r_s[b]
            ws = (w1 * s[2] - w2 * s[1], w2 * s[0] - w0 * s[2], w0 * s[1] - w1 * s[0])
            w = (w0, w1, w2)
            vv, coupling, iw, first = 0.0, 0.0, 0.0, 0.0
            for c in range(3):
                vv += qd[st + c] * qd[st + c]
                coupling += qd[st + c] * (a[c, 0] * ws[0] + a[c, 1] * ws[1] + a[c, 2] * ws[2])
                iw += w[c] * (r_io[b, c, 0] * w0 + r_io[b, c, 1] * w1 + r_io[b, c, 2] * w2)
                first += g[c] * (r_mass[b] * q[st + c] + a[c, 0] * s[0] + a[c, 1] * s[1]
                                 + a[c, 2] * s[2])
            kin += 0.5 * r_mass[b] * vv + coupling + 0.5 * iw
            pot -= first
            continue
        nm, f = b_nm[b], b_flex[b]
        n6 = 6 + nm
        full = mats[0]
        full_mass(F, IN, H, WF, WI, WH, f, nm, q, st, full)
        mbar = full
        if b_mode[b] == NO_MRF:
            mbar = mats[1]
            mode_mass(F, IN, H, WF, WI, WH, f, nm, NO_MRF, full, mbar)
        for c in range(3):
            wq[c] = a[0, c] * qd[st] + a[1, c] * qd[st + 1] + a[2, c] * qd[st + 2]
        wq[3], wq[4], wq[5] = w0, w1, w2
        for j in range(nm):
            wq[6 + j] = qd[st + 7 + j]
        for i in range(n6):
            kin += 0.5 * wq[i] * row_dot(mbar, i, wq, n6)
        # S̄(ξ) from M_Rθ(ξ) = M0_Rθ + Σ ξ_j N_j[:3] = −s̃: s = (M_Rθ[2,1]−M_Rθ[1,2], …)/−2
        m0 = f_inv_m0[f]
        s_t = (-0.5 * (_m_rt(m0, f_n, f, nm, q, st, 2, 1) - _m_rt(m0, f_n, f, nm, q, st, 1, 2)),
               -0.5 * (_m_rt(m0, f_n, f, nm, q, st, 0, 2) - _m_rt(m0, f_n, f, nm, q, st, 2, 0)),
               -0.5 * (_m_rt(m0, f_n, f, nm, q, st, 1, 0) - _m_rt(m0, f_n, f, nm, q, st, 0, 1)))
        first = 0.0
        for c in range(3):
            first += g[c] * (f_mass[f] * q[st + c] + a[c, 0] * s_t[0] + a[c, 1] * s_t[1]
                             + a[c, 2] * s_t[2])
        elastic = 0.0
        for i in range(nm):
            for j in range(nm):
                elastic += q[st + 7 + i] * f_kff[f, i, j] * q[st + 7 + j]
        pot += -first + 0.5 * elastic
        if f_stiff[f]:
            n = 7 + nm
            k_s, p_s = stiffening_energies(f_ska[f], f_skd[f], f_sxc[f], nm, a, gb,
                                           q[st:st + n], qd[st:st + n], g,
                                           _f2(WF, WH, W_SDM), _f2(WF, WH, W_SVEC)[0])
            kin += k_s
            pot += p_s
    return kin, pot


@njit(cache=True)
def _m_rt(m0, f_n, f, nm, q, st, r, c):
    """M_Rθ(ξ)[r, c] = M0[r, 3 + c] + Σ_j ξ_j N_j[r, c] of flexible body f."""
    acc = m0[r, 3 + c]
    for j in range(nm):
        acc += q[st + 7 + j] * f_n[f, j, r, c]
    return acc


@njit(cache=True)
def outputs_entry(F, IN, H, WF, WI, WH, q, qd, lam, prof, u, refs, out):
    """out[k] = (kinetic, potential, power, max |Φ|, max |Φ_q q̇ − ν|) at output k, from
    q, q̇ (n_t, n_q), λ (n_t, n_c), the profiles (n_t, n_drives, 3) and actuator values
    (n_t, n_actuators) at the output times. ``refs`` (n_t, n_springs): the rotational
    springs' angles at the outputs from the run (their turns; NaN: continue from the
    previous output)."""
    n_t, n_q = q.shape
    n_c = lam.shape[1]
    b_kind, b_start, b_nm = _i1(IN, H, T_B_KIND), _i1(IN, H, T_B_START), _i1(IN, H, T_B_NM)
    b_flex = _i1(IN, H, T_B_FLEX)
    f_dff = _f3(F, H, T_F_DFF)
    c_row, e_row, e_kind = _i1(IN, H, T_C_ROW), _i1(IN, H, T_E_ROW), _i1(IN, H, T_E_KIND)
    e_drive, e_mark = _i1(IN, H, T_E_DRIVE), _i2(IN, H, T_E_MARK)
    c_drive = _i1(IN, H, T_C_DRIVE)
    j_row, j_col = _i1(IN, H, T_J_ROW), _i1(IN, H, T_J_COL)
    mk_v = _f3(WF, WH, W_MK_V)
    qcur = _f1(WF, WH, W_QCUR)
    s_mark, s_par = _i2(IN, H, T_S_MARK), _f2(F, H, T_S_PAR)
    t_mark, t_par = _i2(IN, H, T_T_MARK), _f2(F, H, T_T_PAR)
    angles = _f1(WF, WH, W_ANGLES)
    # the step's buffers, free after the run: nothing allocated
    ovec, ocon = _f2(WF, WH, W_OVEC), _f2(WF, WH, W_OCON)
    scratch, loads, phi, vel = ovec[0], ovec[1], ocon[0], ocon[1]
    jac = _f2(WF, WH, W_JAC)
    for k in range(n_t):
        qk, qdk, lk = q[k], qd[k], lam[k]
        # the normalization rows of jacobian_dense; a loop, as an array copy carries an
        # overlap check that allocates
        for i in range(qk.size):
            qcur[i] = qk[i]
        body_frames(F, IN, H, WF, WI, WH, qk)
        scratch[:] = 0.0
        constraints_with_jacobian(F, IN, H, WF, WI, WH, qk, prof[k], lk, phi, scratch)
        jacobian_dense(F, IN, H, WF, WI, WH, jac)
        kin, pot = _body_energies(F, IN, H, WF, WI, WH, qk, qdk)
        vel[:] = 0.0
        for p in range(j_row.size):  # Φ_q q̇ over the entries of Φ_q's pattern
            i, j = j_row[p], j_col[p]
            vel[i] += jac[i, j] * qdk[j]
        power = 0.0
        for c in range(c_row.size):  # drives work through their multipliers
            power -= lk[c_row[c]] * vel[c_row[c]]
        for e in range(e_row.size):
            if e_kind[e] != 0:
                power -= lk[e_row[e]] * vel[e_row[e]]
        loads[:] = 0.0
        actuator_loads(F, IN, H, WF, WI, WH, qk, u[k], loads)  # loads = −Q
        # dampers, spring actuators and point loads (the springs' part has a potential)
        force_element_loads(F, IN, H, WF, WI, WH, qk, qdk, u[k], loads, NO)
        distributed_loads(F, IN, H, WF, WI, WH, qk, loads)
        torsion_loads(F, IN, H, WF, WI, WH, qk, qdk, loads, NO, NO)  # dampers
        for s in range(t_mark.shape[0]):  # the angle's turns from the run
            if not np.isnan(refs[k, s]):
                angles[s] = refs[k, s]
            angle, _ = torsion_state(F, IN, H, WF, WI, WH, s, qdk, YES)
            pot += 0.5 * t_par[s, 0] * (angle - t_par[s, 2]) ** 2
        for s in range(s_mark.shape[0]):
            length = 0.0
            for c in range(3):
                length += (mk_v[s_mark[s, 1], 0, c] - mk_v[s_mark[s, 0], 0, c]) ** 2
            pot += 0.5 * s_par[s, 0] * (np.sqrt(length) - s_par[s, 2]) ** 2
        for j in range(n_q):
            power -= qdk[j] * loads[j]
        for b in range(b_kind.size):
            if b_kind[b] == 1:
                st, nm, f = b_start[b], b_nm[b], b_flex[b]
                for i in range(nm):
                    for j in range(nm):
                        power -= qdk[st + 7 + i] * f_dff[f, i, j] * qdk[st + 7 + j]
        out[k, 0], out[k, 1], out[k, 2] = kin, pot, power
        worst = 0.0
        for i in range(n_c):
            worst = max(worst, abs(phi[i]))
        out[k, 3] = worst
        _add_phi_t(prof[k], vel, c_row, e_row, e_kind, e_drive, e_mark, mk_v, c_drive)
        worst = 0.0
        for i in range(n_c):
            worst = max(worst, abs(vel[i]))
        out[k, 4] = worst
    return out


@njit(cache=True)
def velocity_constraint(F, IN, H, WF, WI, WH, qd, prof, jac, vel):
    """vel = Φ_q q̇ + Φ_t (the velocity constraint of docs/theory_integrators.md,
    "Stabilized index 2"), with Φ_q in ``jac`` (from :func:`jacobian_dense`) and the
    marker vectors of the same q in the workspace."""
    j_row, j_col = _i1(IN, H, T_J_ROW), _i1(IN, H, T_J_COL)
    for i in range(vel.size):
        vel[i] = 0.0
    for p in range(j_row.size):
        i, j = j_row[p], j_col[p]
        vel[i] += jac[i, j] * qd[j]
    _add_phi_t(prof, vel, _i1(IN, H, T_C_ROW), _i1(IN, H, T_E_ROW), _i1(IN, H, T_E_KIND),
               _i1(IN, H, T_E_DRIVE), _i2(IN, H, T_E_MARK), _f3(WF, WH, W_MK_V),
               _i1(IN, H, T_C_DRIVE))


@njit(cache=True)
def _add_phi_t(prof, vel, c_row, e_row, e_kind, e_drive, e_mark, mk_v, c_drive):
    """vel ← vel + Φ_t, Φ_t of the drives (zero on joints and normalization rows)."""
    for c in range(c_row.size):
        vel[c_row[c]] -= prof[c_drive[c], 1]
    for e in range(e_row.size):
        if e_kind[e] == 0:
            continue
        th, th_d = prof[e_drive[e], 0], prof[e_drive[e], 1]
        if e_kind[e] == EQ_ROTATION:  # −θ̇ x_j·(cos θ x_i + sin θ y_i)
            ki, kj = e_mark[e, 0], e_mark[e, 1]
            acc = 0.0
            for c in range(3):
                acc += mk_v[kj, 1, c] * (np.cos(th) * mk_v[ki, 1, c] + np.sin(th) * mk_v[ki, 2, c])
            vel[e_row[e]] -= th_d * acc
        else:
            vel[e_row[e]] -= th_d
