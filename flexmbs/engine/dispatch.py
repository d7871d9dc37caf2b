"""The dispatch over the element kinds in compiled code (docs/compiled.md).

The entry points the Newton iteration (:mod:`flexmbs.engine.newton`) calls, each a loop
over the kinds of :mod:`flexmbs.elements` in a fixed order:

* :func:`dynamic_residual` — r = M q̈ + Φ_qᵀλ − Q and Φ: body frames and marker
  vectors, constraints, rigid and flexible bodies, then the applied forces (actuators,
  spring–dampers, point loads, distributed loads, rotational spring–dampers, bushings,
  contacts, joint servos, nonlinear beam elements);
* :func:`iteration_matrix` — the scaled iteration matrix M + (γ'/β') C_t + K_t/β' with
  the same kinds' tangents and the constraint Hessians;
* :func:`outputs_entry` — energies, the power of the non-conservative forces and the
  constraint violations over a run's outputs (the contacts' energy and dissipation are
  the integrator's, from their samples, as their state changes between steps);
* :func:`phi_only` — Φ alone.

Adding a kind adds one call per entry point here (docs/compiled.md, "Adding an element
kind").
"""

from __future__ import annotations

from ..compiled._jit import njit
from ..compiled.packing import (
    NO,
    W_GBAR,
    W_JAC,
    W_MK_V,
    W_OCON,
    W_OVEC,
    W_QCUR,
    YES,
    floats1,
    floats2,
    floats3,
    ints1,
    ints2,
)
from ..elements.actuators.kernels import actuator_loads, actuator_tangents_into
from ..elements.bushing.kernels import (
    bushing_loads,
    bushing_potential,
    bushing_tangents_into,
)
from ..elements.constraints.kernels import (
    add_phi_t,
    constraint_hessian_into,
    constraint_values,
    constraint_violations,
    constraints_with_jacobian,
)
from ..elements.contact.kernels import contact_loads, contact_tangents_into
from ..elements.flexible_body.kernels import body_matrices, flexible_energies, flexible_residual
from ..elements.joint_servo.kernels import (
    servo_loads,
    servo_outputs,
    servo_rotor_tangents_into,
    servo_tangents_into,
)
from ..elements.loads.kernels import (
    distributed_loads,
    distributed_tangents_into,
    point_load_tangents_into,
    point_loads,
)
from ..elements.markers import all_marker_vectors, body_frames
from ..elements.nonlinear_beam.kernels import (
    beam_inertia,
    beam_inertia_energies,
    beam_inertia_into,
    beam_loads,
    beam_potential,
    beam_tangents_into,
)
from ..elements.registry import header_rows
from ..elements.rigid_body.kernels import rigid_body_matrices, rigid_energies, rigid_residual
from ..elements.rotational_spring.kernels import (
    torsion_loads,
    torsion_potential,
    torsion_tangents_into,
)
from ..elements.spring_damper.kernels import (
    spring_damper_loads,
    spring_damper_potential,
    spring_damper_tangents_into,
)

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_FLEX, T_B_KIND, T_B_NM, T_B_START, T_C_DRIVE, T_C_ROW = header_rows(
    "b_flex", "b_kind", "b_nm", "b_start", "c_drive", "c_row")
T_E_DRIVE, T_E_KIND, T_E_MARK, T_E_ROW, T_F_DFF, T_J_COL = header_rows(
    "e_drive", "e_kind", "e_mark", "e_row", "f_dff", "j_col")
T_J_ROW, T_P_COL, T_P_ROW = header_rows(
    "j_row", "p_col", "p_row")
#: A table field of each force kind whose first dimension is the number of its elements:
#: the hot entry points skip a kind the model has none of with one header read, where
#: the kind's kernel would take its table views first (about 0.05 µs a kind).
N_ACT, N_SPRING, N_POINT, N_DIST, N_TORSION, N_BUSHING, N_CONTACT, N_SERVO, N_BEAM = (
    header_rows("a_kind", "s_mark", "l_mark", "d_col", "t_mark", "bu_mark", "ct_mark",
                "v_mark", "nb_node"))


@njit(cache=True, inline="always")
def _has(H, row):
    """Whether the model has elements of the kind whose count field is header row
    ``row`` (the field's first dimension)."""
    return H[row, 3] > 0


@njit(cache=True)
def body_energies(F, IN, H, WF, WI, WH, q, qd):
    """(kinetic, potential) [J] of all bodies at (q, q̇); needs :func:`body_frames`."""
    b_kind, b_start = ints1(IN, H, T_B_KIND), ints1(IN, H, T_B_START)
    gbar = floats3(WF, WH, W_GBAR)
    kin, pot = 0.0, 0.0
    for b in range(b_kind.size):
        st = b_start[b]
        gb = gbar[b]
        w0 = gb[0, 0] * qd[st + 3] + gb[0, 1] * qd[st + 4] + gb[0, 2] * qd[st + 5] \
            + gb[0, 3] * qd[st + 6]
        w1 = gb[1, 0] * qd[st + 3] + gb[1, 1] * qd[st + 4] + gb[1, 2] * qd[st + 5] \
            + gb[1, 3] * qd[st + 6]
        w2 = gb[2, 0] * qd[st + 3] + gb[2, 1] * qd[st + 4] + gb[2, 2] * qd[st + 5] \
            + gb[2, 3] * qd[st + 6]
        if b_kind[b] == 0:
            kin, pot = rigid_energies(F, IN, H, WF, WI, WH, b, q, qd, w0, w1, w2, kin, pot)
        else:
            kin, pot = flexible_energies(F, IN, H, WF, WI, WH, b, q, qd, w0, w1, w2, kin,
                                         pot)
    return kin, pot


@njit(cache=True, inline="always")
def dynamic_residual(F, IN, H, WF, WI, WH, q, qd, qdd, lam, prof, u, r, phi):
    """r = M q̈ + Φ_qᵀλ − Q and Φ at (q, q̇, q̈, λ); profiles ``prof`` (nd, 3), the
    forces' input values ``u`` (n_u,: time profiles' and callables'). Leaves the
    markers and frames in the workspace for :func:`jacobian_dense`."""
    T_b_kind = ints1(IN, H, T_B_KIND)
    W_qcur = floats1(WF, WH, W_QCUR)
    for i in range(q.size):
        r[i] = 0.0
        W_qcur[i] = q[i]
    body_frames(F, IN, H, WF, WI, WH, q)
    constraints_with_jacobian(F, IN, H, WF, WI, WH, q, prof, lam, phi, r)
    for b in range(T_b_kind.size):
        if T_b_kind[b] == 0:
            rigid_residual(F, IN, H, WF, WI, WH, b, q, qd, qdd, r)
        else:
            flexible_residual(F, IN, H, WF, WI, WH, b, q, qd, qdd, r)
    force_loads(F, IN, H, WF, WI, WH, q, qd, qdd, prof, u, r)


@njit(cache=True)
def force_residual(F, IN, H, WF, WI, WH, q, qd, qdd, prof, u, r):
    """r = −Q of the force kinds alone at (q, q̇, q̈) (the part of
    :func:`dynamic_residual` after the bodies' inertia and gravity and the constraints:
    what a force's parameter moves, docs/gradients.md, "Chunks of steps"); leaves the
    frames and the markers with their Jacobians in the workspace."""
    W_qcur = floats1(WF, WH, W_QCUR)
    for i in range(q.size):
        r[i] = 0.0
        W_qcur[i] = q[i]
    body_frames(F, IN, H, WF, WI, WH, q)
    all_marker_vectors(F, IN, H, WF, WI, WH, q, YES)
    force_loads(F, IN, H, WF, WI, WH, q, qd, qdd, prof, u, r)


@njit(cache=True, inline="always")
def force_loads(F, IN, H, WF, WI, WH, q, qd, qdd, prof, u, r):
    """r −= Q of every force kind at (q, q̇, q̈) (the angle memories moved), from the
    frames and markers of the state in the workspace."""
    if _has(H, N_ACT):
        actuator_loads(F, IN, H, WF, WI, WH, q, u, r)
    if _has(H, N_SPRING):
        spring_damper_loads(F, IN, H, WF, WI, WH, q, qd, u, r, YES)
    if _has(H, N_POINT):
        point_loads(F, IN, H, WF, WI, WH, q, u, r)
    if _has(H, N_DIST):
        distributed_loads(F, IN, H, WF, WI, WH, q, u, r)
    if _has(H, N_TORSION):
        torsion_loads(F, IN, H, WF, WI, WH, q, qd, r, YES, YES)
    if _has(H, N_BUSHING):
        bushing_loads(F, IN, H, WF, WI, WH, q, qd, r, YES)
    if _has(H, N_CONTACT):
        contact_loads(F, IN, H, WF, WI, WH, q, qd, r)
    if _has(H, N_SERVO):
        servo_loads(F, IN, H, WF, WI, WH, q, qd, qdd, prof, r, YES, YES)
    if _has(H, N_BEAM):
        beam_loads(F, IN, H, WF, WI, WH, q, r)
        beam_inertia(F, IN, H, WF, WI, WH, q, qd, qdd, r)


@njit(cache=True)
def phi_only(F, IN, H, WF, WI, WH, q, prof, phi):
    """Φ at q (frames and marker vectors, no Jacobians)."""
    body_frames(F, IN, H, WF, WI, WH, q)
    constraint_values(F, IN, H, WF, WI, WH, q, prof, phi)


@njit(cache=True, inline="always")
def iteration_matrix(F, IN, H, WF, WI, WH, q, qd, qdd, lam, prof, u, bp, gp, out):
    """out ← [M + (γ'/β') C_t + K_t/β', Φ_qᵀ; Φ_q, 0] at the state of the last residual
    (its markers, frames and W_jac)."""
    T_b_kind = ints1(IN, H, T_B_KIND)
    T_b_start = ints1(IN, H, T_B_START)
    T_p_row, T_p_col = ints1(IN, H, T_P_ROW), ints1(IN, H, T_P_COL)
    T_j_row, T_j_col = ints1(IN, H, T_J_ROW), ints1(IN, H, T_J_COL)
    W_jac = floats2(WF, WH, W_JAC)
    n = q.size
    for k in range(T_p_row.size):  # entries off the pattern are never written: stay 0
        out[T_p_row[k], T_p_col[k]] = 0.0
    for b in range(T_b_kind.size):
        if T_b_kind[b] == 0:
            m, k, c = rigid_body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd)
        else:
            m, k, c = body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd)
        st = T_b_start[b]
        nb = m.shape[0]
        for i in range(nb):
            for j in range(nb):
                out[st + i, st + j] += m[i, j] + (gp / bp) * c[i, j] + k[i, j] / bp
    constraint_hessian_into(F, IN, H, WF, WI, WH, q, lam, out, 1.0 / bp)
    force_tangents_into(F, IN, H, WF, WI, WH, q, qd, qdd, prof, u, out, 1.0 / bp, gp / bp,
                        1.0)
    for k in range(T_j_row.size):
        i, j = T_j_row[k], T_j_col[k]
        out[n + i, j] = W_jac[i, j]
        out[j, n + i] = W_jac[i, j]


@njit(cache=True)
def force_tangents_into(F, IN, H, WF, WI, WH, q, qd, qdd, prof, u, top, k_scale, c_scale,
                        m_scale):
    """top += k_scale K + c_scale C + m_scale M of every force kind at the state of the last
    residual (a joint servo's rotor and the rods' inertia carry a mass term); the kinds
    without one are skipped when k_scale and c_scale are both 0, the rods' stiffness when
    k_scale is."""
    if k_scale != 0.0 or c_scale != 0.0:
        if _has(H, N_ACT):
            actuator_tangents_into(F, IN, H, WF, WI, WH, q, u, top, k_scale, c_scale)
        if _has(H, N_SPRING):
            spring_damper_tangents_into(F, IN, H, WF, WI, WH, q, qd, u, top, k_scale,
                                        c_scale)
        if _has(H, N_POINT):
            point_load_tangents_into(F, IN, H, WF, WI, WH, q, u, top, k_scale, c_scale)
        if _has(H, N_DIST):
            distributed_tangents_into(F, IN, H, WF, WI, WH, q, u, top, k_scale, c_scale)
        if _has(H, N_TORSION):
            torsion_tangents_into(F, IN, H, WF, WI, WH, q, qd, top, k_scale, c_scale)
        if _has(H, N_BUSHING):
            bushing_tangents_into(F, IN, H, WF, WI, WH, q, qd, top, k_scale, c_scale)
        if _has(H, N_CONTACT):
            contact_tangents_into(F, IN, H, WF, WI, WH, q, qd, top, k_scale, c_scale)
    if _has(H, N_SERVO):
        servo_tangents_into(F, IN, H, WF, WI, WH, q, qd, prof, top, k_scale, c_scale,
                            m_scale)
    if _has(H, N_BEAM):
        if k_scale != 0.0:
            beam_tangents_into(F, IN, H, WF, WI, WH, q, top, k_scale)
        beam_inertia_into(F, IN, H, WF, WI, WH, q, qd, qdd, top, k_scale, c_scale, m_scale)


@njit(cache=True)
def step_pieces(F, IN, H, WF, WI, WH, q, qd, qdd, lam, prof, u, out):
    """The pieces of :func:`iteration_matrix` apart, at the state of the last residual
    (its markers, frames and W_jac): out[0] ← M with Φ_q below it (rows n_q…),
    out[1] ← K_t = ∂r/∂q and out[2] ← C_t = ∂r/∂q̇ (their first n_q rows and columns)
    [kg, N/m, N s/m in the coordinates' units]. Each body's matrices are formed once;
    the forces' tangents are taken with one scale at a time (k, c[, m]) = (1, 0[, 0]),
    (0, 1[, 0]) and (0, 0, 1); the torque servos' rotors take their exact tangents
    (:func:`~flexmbs.elements.joint_servo.kernels.servo_rotor_tangents_into`), not the
    Newton iteration's. ``out`` (3, n_q + n_c, n_q + n_c): entries off the iteration
    matrix's pattern are never written (they stay as given, 0)."""
    T_b_kind = ints1(IN, H, T_B_KIND)
    T_b_start = ints1(IN, H, T_B_START)
    T_p_row, T_p_col = ints1(IN, H, T_P_ROW), ints1(IN, H, T_P_COL)
    T_j_row, T_j_col = ints1(IN, H, T_J_ROW), ints1(IN, H, T_J_COL)
    W_jac = floats2(WF, WH, W_JAC)
    n = q.size
    m_out, k_out, c_out = out[0], out[1], out[2]
    for k in range(T_p_row.size):
        m_out[T_p_row[k], T_p_col[k]] = 0.0
        k_out[T_p_row[k], T_p_col[k]] = 0.0
        c_out[T_p_row[k], T_p_col[k]] = 0.0
    for b in range(T_b_kind.size):
        if T_b_kind[b] == 0:
            m, k, c = rigid_body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd)
        else:
            m, k, c = body_matrices(F, IN, H, WF, WI, WH, b, q, qd, qdd)
        st = T_b_start[b]
        nb = m.shape[0]
        for i in range(nb):
            for j in range(nb):
                m_out[st + i, st + j] += m[i, j]
                k_out[st + i, st + j] += k[i, j]
                c_out[st + i, st + j] += c[i, j]
    constraint_hessian_into(F, IN, H, WF, WI, WH, q, lam, k_out, 1.0)
    for top, ks, cs, ms in ((k_out, 1.0, 0.0, 0.0), (c_out, 0.0, 1.0, 0.0),
                            (m_out, 0.0, 0.0, 1.0)):
        force_tangents_into(F, IN, H, WF, WI, WH, q, qd, qdd, prof, u, top, ks, cs, ms)
    if _has(H, N_SERVO):  # the rotors' exact tangents (the Newton ones leave some out)
        servo_rotor_tangents_into(F, IN, H, WF, WI, WH, q, qd, qdd, k_out, c_out)
    for k in range(T_j_row.size):
        i, j = T_j_row[k], T_j_col[k]
        m_out[n + i, j] = W_jac[i, j]


@njit(cache=True)
def outputs_entry(F, IN, H, WF, WI, WH, q, qd, lam, prof, u, refs, out):
    """out[k] = (kinetic, potential, power, max |Φ|, max |Φ_q q̇ − ν|) at output k, from
    q, q̇ (n_t, n_q), λ (n_t, n_c), the profiles (n_t, n_drives, 3) and actuator values
    (n_t, n_actuators) at the output times. ``refs`` (n_t, n_springs): the rotational
    springs' angles at the outputs from the run (their turns; NaN: continue from the
    previous output)."""
    n_t, n_q = q.shape
    n_c = lam.shape[1]
    b_kind, b_start, b_nm = ints1(IN, H, T_B_KIND), ints1(IN, H, T_B_START), ints1(IN, H, T_B_NM)
    b_flex = ints1(IN, H, T_B_FLEX)
    f_dff = floats3(F, H, T_F_DFF)
    c_row, e_row, e_kind = ints1(IN, H, T_C_ROW), ints1(IN, H, T_E_ROW), ints1(IN, H, T_E_KIND)
    e_drive, e_mark = ints1(IN, H, T_E_DRIVE), ints2(IN, H, T_E_MARK)
    c_drive = ints1(IN, H, T_C_DRIVE)
    mk_v = floats3(WF, WH, W_MK_V)
    qcur = floats1(WF, WH, W_QCUR)
    # the step's buffers, free after the run: nothing allocated
    ovec, ocon = floats2(WF, WH, W_OVEC), floats2(WF, WH, W_OCON)
    loads, phi, vel = ovec[1], ocon[0], ocon[1]
    for k in range(n_t):
        qk, qdk, lk = q[k], qd[k], lam[k]
        # the normalization rows of the velocity constraint; a loop, as an array copy
        # carries an overlap check that allocates
        for i in range(qk.size):
            qcur[i] = qk[i]
        body_frames(F, IN, H, WF, WI, WH, qk)
        constraint_violations(F, IN, H, WF, WI, WH, qk, qdk, prof[k], phi, vel)
        kin, pot = body_energies(F, IN, H, WF, WI, WH, qk, qdk)
        worst = 0.0
        for i in range(n_c):
            worst = max(worst, abs(phi[i]))
        out[k, 3] = worst
        worst = 0.0
        for i in range(n_c):
            worst = max(worst, abs(vel[i]))
            vel[i] = -vel[i]
        out[k, 4] = worst
        # vel ← −Φ_q q̇: the drives work through their multipliers, −λ Φ_q q̇
        add_phi_t(prof[k], vel, c_row, e_row, e_kind, e_drive, e_mark, mk_v, c_drive)
        power = 0.0
        for c in range(c_row.size):
            power += lk[c_row[c]] * vel[c_row[c]]
        for e in range(e_row.size):
            if e_kind[e] != 0:
                power += lk[e_row[e]] * vel[e_row[e]]
        for j in range(n_q):
            loads[j] = 0.0
        # loads = −Q of actuators, dampers, spring actuators and point loads (the
        # springs' part has a potential)
        if _has(H, N_ACT):
            actuator_loads(F, IN, H, WF, WI, WH, qk, u[k], loads)
        if _has(H, N_SPRING):
            spring_damper_loads(F, IN, H, WF, WI, WH, qk, qdk, u[k], loads, NO)
            pot = spring_damper_potential(F, IN, H, WF, WI, WH, pot)
        if _has(H, N_POINT):
            point_loads(F, IN, H, WF, WI, WH, qk, u[k], loads)
        if _has(H, N_DIST):
            distributed_loads(F, IN, H, WF, WI, WH, qk, u[k], loads)
        if _has(H, N_TORSION):
            torsion_loads(F, IN, H, WF, WI, WH, qk, qdk, loads, NO, NO)  # dampers
            pot = torsion_potential(F, IN, H, WF, WI, WH, qdk, refs[k], pot)
        if _has(H, N_BUSHING):
            bushing_loads(F, IN, H, WF, WI, WH, qk, qdk, loads, NO)  # dampers
            pot = bushing_potential(F, IN, H, WF, WI, WH, qdk, pot)
        if _has(H, N_BEAM):
            pot = beam_potential(F, IN, H, WF, WI, WH, qk, pot)
            kin, pot = beam_inertia_energies(F, IN, H, WF, WI, WH, qk, qdk, kin, pot)
        if _has(H, N_SERVO):
            kin = servo_outputs(F, IN, H, WF, WI, WH, qk, qdk, prof[k], refs[k], loads,
                                kin)
        for j in range(n_q):
            power -= qdk[j] * loads[j]
        for b in range(b_kind.size):
            if b_kind[b] == 1:
                st, nm, f = b_start[b], b_nm[b], b_flex[b]
                for i in range(nm):
                    for j in range(nm):
                        power -= qdk[st + 7 + i] * f_dff[f, i, j] * qdk[st + 7 + j]
        out[k, 0], out[k, 1], out[k, 2] = kin, pot, power
    return out
