"""Contacts in compiled code (docs/contact.md, docs/compiled.md "Contacts"): the kernels'
copy of :mod:`flexmbs.contact` (geometry, normal laws, friction), term by term.

A contact's sample at (q, q̇) under its current state (``ct_state``: open, stick or
slip; the approach speed v⁻ at the impact onset; the stick anchors) is the row
``ct_out[c]``, with the columns ``S_*`` of :mod:`flexmbs.contact.sample`: gap, normal
and tangential velocity, normal, normal and friction forces with their elastic parts,
the contact points in their markers' axes, the stick spring's offset and stretch, the
stored energy and the dissipated power. The generalized force is

    Q = J_cBᵀ F − J_cAᵀ F,   F = F_n n + F_t,   J_c = J_force − skew(c − r) J_torque,

with the point Jacobians J_c of the contact points c carried by the markers' frames
(:mod:`flexmbs.contact.geometry`). The tangents K = −∂Q/∂q and C = −∂Q/∂q̇ are forward
differences of Q over the two bodies' coordinates with the steps of the NumPy path
(``fd_step`` max(1, |q_j|), ``fd_step`` = 1e-7; :func:`flexmbs.assembly.tangents.
force_tangents_fd`): the laws switch and are not smooth at the onset, and the
differences serve every geometry alike.
"""

from __future__ import annotations

import math

from ...compiled._jit import njit
from ...compiled.packing import (
    W_MK_V,
    floats2,
    floats3,
    ints1,
    ints2,
)
from ...contact.sample import (
    C_ANCHORED,
    C_LA,
    C_LB,
    C_MODE,
    C_OFF,
    C_V_ONSET,
    S_DISSIPATION,
    S_ENERGY,
    S_FEL,
    S_FN,
    S_FT,
    S_FTC,
    S_GAP,
    S_LA,
    S_LB,
    S_N,
    S_OFF,
    S_STRETCH2,
    S_VN,
    S_VT,
)
from ..markers import _load_jacobian_into, _scatter_n, body_frame, marker_vectors
from ..registry import header_rows, work_rows
from .table import (
    HERTZ,
    IMPULSE,
    JOURNAL_BEARING,
    NO_FRICTION,
    P_C_T,
    P_CHI,
    P_K,
    P_K_T,
    P_MU_K,
    P_MU_S,
    P_N,
    P_R1,
    P_R2,
    P_V_REG,
    P_V_S,
    PENALTY,
    REGULARIZED,
    SPHERE_PLANE,
    STICK_SLIP,
)

#: Header rows of the table fields these kernels read (flexmbs.elements.registry).
T_B_NM, T_B_START, T_CT_KIND, T_CT_MARK, T_CT_PAR, T_K_BODY = header_rows(
    "b_nm", "b_start", "ct_kind", "ct_mark", "ct_par", "k_body")
(W_CT_BLK, W_CT_GEN, W_CT_JAC, W_CT_OUT,
 W_CT_Q, W_CT_START, W_CT_STATE, W_CT_VEC) = work_rows(
    "ct_blk", "ct_gen", "ct_jac", "ct_out", "ct_q", "ct_start", "ct_state", "ct_vec")

#: Contact modes (:mod:`flexmbs.contact.element`).
OPEN, STICK, SLIP = 0.0, 1.0, 2.0

#: Relative step of the difference quotients (the NumPy path's ``fd_step``).
FD_STEP = 1e-7


@njit(cache=True)
def _point_jacobian(F, IN, H, WF, WI, WH, k, px, py, pz, q, out):
    """out[:, :n_b] ← J_c = J_force − skew(c − r) J_torque of the point c = (px, py, pz)
    carried by marker k's frame (r: the marker's point); the body's column count (0 for
    ground)."""
    b = ints1(IN, H, T_K_BODY)[k]
    if b < 0:
        return 0
    n = 7 + ints1(IN, H, T_B_NM)[b]
    jac = floats3(WF, WH, W_CT_JAC)
    _load_jacobian_into(F, IN, H, WF, WI, WH, k, 1, q, jac[0], 0)
    _load_jacobian_into(F, IN, H, WF, WI, WH, k, 0, q, jac[1], 0)
    v = floats3(WF, WH, W_MK_V)[k]
    rx, ry, rz = px - v[0, 0], py - v[0, 1], pz - v[0, 2]
    jf, jw = jac[0], jac[1]
    for col in range(n):
        wx, wy, wz = jw[0, col], jw[1, col], jw[2, col]
        out[0, col] = jf[0, col] - (ry * wz - rz * wy)
        out[1, col] = jf[1, col] - (rz * wx - rx * wz)
        out[2, col] = jf[2, col] - (rx * wy - ry * wx)
    return n


@njit(cache=True)
def _normal_force(kind, par, state, delta, v_n):
    """(F_n, its elastic part, the stored energy) [N, N, J] of the normal law at
    penetration δ > 0 and normal velocity v_n (:mod:`flexmbs.contact.laws`)."""
    law = kind[1]
    if law == IMPULSE:
        return 0.0, 0.0, 0.0
    rate = -v_n
    if law == PENALTY:
        elastic = par[P_K] * delta
        return max(0.0, elastic + par[P_N] * rate), elastic, 0.5 * par[P_K] * delta * delta
    elastic = par[P_K] * delta ** par[P_N]
    energy = par[P_K] * delta ** (par[P_N] + 1.0) / (par[P_N] + 1.0)
    if law == HERTZ:
        return elastic, elastic, energy
    v_onset = state[C_V_ONSET] if state[C_MODE] != OPEN else max(-v_n, 0.0)
    if v_onset <= 0.0:
        return elastic, elastic, energy
    return max(0.0, elastic * (1.0 + par[P_CHI] * rate / v_onset)), elastic, energy


@njit(cache=True)
def _mu(par, speed):
    """Friction coefficient at sliding speed |v_t| [m/s] (``Friction.mu``)."""
    if par[P_V_S] == 0.0:
        return par[P_MU_K]
    return par[P_MU_K] + (par[P_MU_S] - par[P_MU_K]) * math.exp(
        -(speed / par[P_V_S]) ** 2)


@njit(cache=True)
def _geometry(kind, par, va, vb, row, cvec):
    """Gap, normal and the contact points (``cvec[0]`` on A, ``[1]`` on B) of the
    markers' vectors ``va``, ``vb`` (:mod:`flexmbs.contact.geometry`); the gap is NaN
    where the normal is undefined (coinciding sphere centres)."""
    ca, cb = cvec[0], cvec[1]
    ra, rb = va[0], vb[0]
    if kind[0] == SPHERE_PLANE:
        radius = par[P_R1]
        nx, ny, nz = va[3, 0], va[3, 1], va[3, 2]
        gap = nx * (rb[0] - ra[0]) + ny * (rb[1] - ra[1]) + nz * (rb[2] - ra[2]) - radius
        cb[0], cb[1], cb[2] = rb[0] - radius * nx, rb[1] - radius * ny, rb[2] - radius * nz
        h = nx * (cb[0] - ra[0]) + ny * (cb[1] - ra[1]) + nz * (cb[2] - ra[2])
        ca[0], ca[1], ca[2] = cb[0] - h * nx, cb[1] - h * ny, cb[2] - h * nz
    elif kind[0] == JOURNAL_BEARING:
        zx, zy, zz = va[3, 0], va[3, 1], va[3, 2]
        dx, dy, dz = rb[0] - ra[0], rb[1] - ra[1], rb[2] - ra[2]
        along = zx * dx + zy * dy + zz * dz
        ex, ey, ez = dx - along * zx, dy - along * zy, dz - along * zz
        ecc = math.sqrt(ex * ex + ey * ey + ez * ez)
        if ecc > 1e-15:
            ux, uy, uz = ex / ecc, ey / ecc, ez / ecc
        else:  # centred: any radial direction
            ux, uy, uz = va[1, 0], va[1, 1], va[1, 2]
        gap = (par[P_R1] - par[P_R2]) - ecc
        ca[0] = ra[0] + along * zx + par[P_R1] * ux
        ca[1] = ra[1] + along * zy + par[P_R1] * uy
        ca[2] = ra[2] + along * zz + par[P_R1] * uz
        cb[0], cb[1], cb[2] = rb[0] + par[P_R2] * ux, rb[1] + par[P_R2] * uy, \
            rb[2] + par[P_R2] * uz
        nx, ny, nz = -ux, -uy, -uz
    else:  # sphere–sphere
        dx, dy, dz = rb[0] - ra[0], rb[1] - ra[1], rb[2] - ra[2]
        dist = math.sqrt(dx * dx + dy * dy + dz * dz)
        if dist < 1e-12:
            gap, nx, ny, nz = math.nan, 0.0, 0.0, 1.0
        else:
            gap, nx, ny, nz = dist - par[P_R1] - par[P_R2], dx / dist, dy / dist, dz / dist
        ca[0], ca[1], ca[2] = ra[0] + par[P_R1] * nx, ra[1] + par[P_R1] * ny, \
            ra[2] + par[P_R1] * nz
        cb[0], cb[1], cb[2] = rb[0] - par[P_R2] * nx, rb[1] - par[P_R2] * ny, \
            rb[2] - par[P_R2] * nz
    row[S_GAP] = gap
    row[S_N], row[S_N + 1], row[S_N + 2] = nx, ny, nz


@njit(cache=True)
def _local(v, px, py, pz, out, o):
    """out[o:o+3] ← the marker axes' components (x·d, y·d, z·d) of d = (px, py, pz)."""
    for a in range(3):
        out[o + a] = v[1 + a, 0] * px + v[1 + a, 1] * py + v[1 + a, 2] * pz


@njit(cache=True)
def evaluate(F, IN, H, WF, WI, WH, c, q, qd, row, gen):
    """Contact c at (q, q̇) under its state: the sample ``row`` (``S_*`` columns) and
    the generalized force Q on its pair's coordinates into ``gen`` (body A's, then body
    B's); the pair's column counts (n_A, n_B). Needs the frames of both bodies and the
    vectors of both markers (:func:`~flexmbs.elements.markers.marker_vectors`)."""
    T_b_start, T_k_body = ints1(IN, H, T_B_START), ints1(IN, H, T_K_BODY)
    kind, par = ints2(IN, H, T_CT_KIND)[c], floats2(F, H, T_CT_PAR)[c]
    ka, kb = ints2(IN, H, T_CT_MARK)[c, 0], ints2(IN, H, T_CT_MARK)[c, 1]
    state = floats2(WF, WH, W_CT_STATE)[c]
    W_mk_v = floats3(WF, WH, W_MK_V)
    va, vb = W_mk_v[ka], W_mk_v[kb]
    cvec, jac = floats2(WF, WH, W_CT_VEC), floats3(WF, WH, W_CT_JAC)
    _geometry(kind, par, va, vb, row, cvec)
    ca, cb, vel = cvec[0], cvec[1], cvec[2]
    na = _point_jacobian(F, IN, H, WF, WI, WH, ka, ca[0], ca[1], ca[2], q, jac[2])
    nb = _point_jacobian(F, IN, H, WF, WI, WH, kb, cb[0], cb[1], cb[2], q, jac[3])
    st_a = T_b_start[T_k_body[ka]] if na else 0
    st_b = T_b_start[T_k_body[kb]] if nb else 0
    for i in range(3):
        acc = 0.0
        for col in range(nb):
            acc += jac[3, i, col] * qd[st_b + col]
        for col in range(na):
            acc -= jac[2, i, col] * qd[st_a + col]
        vel[i] = acc
    nx, ny, nz = row[S_N], row[S_N + 1], row[S_N + 2]
    v_n = nx * vel[0] + ny * vel[1] + nz * vel[2]
    tx, ty, tz = vel[0] - v_n * nx, vel[1] - v_n * ny, vel[2] - v_n * nz
    row[S_VN], row[S_VT], row[S_VT + 1], row[S_VT + 2] = v_n, tx, ty, tz
    gap = row[S_GAP]
    delta = -gap if gap < 0.0 else 0.0
    f_n, f_el, energy = 0.0, 0.0, 0.0
    if delta > 0.0:
        f_n, f_el, energy = _normal_force(kind, par, state, delta, v_n)
    # the anchored stick spring's elongation u_t (global), where anchors are set
    ux, uy, uz = 0.0, 0.0, 0.0
    anchored = state[C_ANCHORED] == 1.0 and kind[2] == STICK_SLIP
    if anchored:
        la, lb, off = state[C_LA:C_LA + 3], state[C_LB:C_LB + 3], state[C_OFF:C_OFF + 3]
        for i in range(3):
            pa = va[0, i] + la[0] * va[1, i] + la[1] * va[2, i] + la[2] * va[3, i]
            pb = vb[0, i] + lb[0] * vb[1, i] + lb[1] * vb[2, i] + lb[2] * vb[3, i]
            cvec[3, i] = pb - pa + off[0] * va[1, i] + off[1] * va[2, i] + off[2] * va[3, i]
        un = nx * cvec[3, 0] + ny * cvec[3, 1] + nz * cvec[3, 2]
        ux, uy, uz = cvec[3, 0] - un * nx, cvec[3, 1] - un * ny, cvec[3, 2] - un * nz
    stretch2 = ux * ux + uy * uy + uz * uz if anchored else 0.0
    ftx, fty, ftz, fcx, fcy, fcz = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if kind[2] != NO_FRICTION and f_n > 0.0 and kind[1] != IMPULSE:
        if kind[2] == STICK_SLIP and state[C_MODE] == STICK and anchored:
            fcx, fcy, fcz = -par[P_K_T] * ux, -par[P_K_T] * uy, -par[P_K_T] * uz
            ftx, fty, ftz = fcx - par[P_C_T] * tx, fcy - par[P_C_T] * ty, \
                fcz - par[P_C_T] * tz
        else:
            speed = math.sqrt(tx * tx + ty * ty + tz * tz)
            scale = -_mu(par, speed) * f_n / max(speed, par[P_V_REG])
            ftx, fty, ftz = scale * tx, scale * ty, scale * tz
    if (kind[2] == STICK_SLIP and state[C_MODE] == STICK and anchored and delta > 0.0):
        energy += 0.5 * par[P_K_T] * stretch2
    row[S_FN], row[S_FEL] = f_n, f_el
    row[S_FT], row[S_FT + 1], row[S_FT + 2] = ftx, fty, ftz
    row[S_FTC], row[S_FTC + 1], row[S_FTC + 2] = fcx, fcy, fcz
    if kind[2] == STICK_SLIP:  # where anchoring here would put the stick spring
        _local(va, ca[0] - va[0, 0], ca[1] - va[0, 1], ca[2] - va[0, 2], row, S_LA)
        _local(vb, cb[0] - vb[0, 0], cb[1] - vb[0, 1], cb[2] - vb[0, 2], row, S_LB)
        k_t = par[P_K_T]
        _local(va, -ftx / k_t, -fty / k_t, -ftz / k_t, row, S_OFF)
    else:
        for i in range(9):
            row[S_LA + i] = 0.0
    row[S_STRETCH2], row[S_ENERGY] = stretch2, energy
    power = 0.0  # dissipated by damping and friction (a clipped law's included)
    if delta > 0.0 and kind[1] != IMPULSE:
        power = -(f_n - f_el) * v_n - ((ftx - fcx) * tx + (fty - fcy) * ty
                                       + (ftz - fcz) * tz)
    row[S_DISSIPATION] = power
    fx, fy, fz = f_n * nx + ftx, f_n * ny + fty, f_n * nz + ftz
    for col in range(na):
        gen[col] = -(jac[2, 0, col] * fx + jac[2, 1, col] * fy + jac[2, 2, col] * fz)
    for col in range(nb):
        gen[na + col] = jac[3, 0, col] * fx + jac[3, 1, col] * fy + jac[3, 2, col] * fz
    return na, nb


@njit(cache=True)
def contact_loads(F, IN, H, WF, WI, WH, q, qd, r):
    """r −= Q of every contact (r holds −Q); needs the frames and marker vectors of the
    residual."""
    T_b_start, T_k_body = ints1(IN, H, T_B_START), ints1(IN, H, T_K_BODY)
    T_ct_mark = ints2(IN, H, T_CT_MARK)
    out, gen = floats2(WF, WH, W_CT_OUT), floats2(WF, WH, W_CT_GEN)[0]
    for c in range(T_ct_mark.shape[0]):
        na, nb = evaluate(F, IN, H, WF, WI, WH, c, q, qd, out[c], gen)
        if na:
            st = T_b_start[T_k_body[T_ct_mark[c, 0]]]
            for i in range(na):
                r[st + i] -= gen[i]
        if nb:
            st = T_b_start[T_k_body[T_ct_mark[c, 1]]]
            for i in range(nb):
                r[st + i] -= gen[na + i]


@njit(cache=True)
def _move(F, IN, H, WF, WI, WH, q, b, ka, kb):
    """The frame of body b and the vectors of markers ka, kb at q (the ones on b)."""
    T_k_body = ints1(IN, H, T_K_BODY)
    body_frame(F, IN, H, WF, WI, WH, q, b)
    if T_k_body[ka] == b:
        marker_vectors(F, IN, H, WF, WI, WH, q, ka, False)
    if T_k_body[kb] == b:
        marker_vectors(F, IN, H, WF, WI, WH, q, kb, False)


@njit(cache=True)
def contact_tangents_into(F, IN, H, WF, WI, WH, q, qd, top, k_scale, c_scale):
    """top += k_scale K + c_scale C of every contact, K = −∂Q/∂q and C = −∂Q/∂q̇ by
    forward differences over the pair's coordinates (module docstring). Needs the frames
    and marker vectors (with Jacobians) of the residual, and leaves them as they were."""
    T_b_start, T_k_body = ints1(IN, H, T_B_START), ints1(IN, H, T_K_BODY)
    T_ct_mark = ints2(IN, H, T_CT_MARK)
    out, gens = floats2(WF, WH, W_CT_OUT), floats2(WF, WH, W_CT_GEN)
    blocks, perturbed = floats3(WF, WH, W_CT_BLK), floats2(WF, WH, W_CT_Q)
    g0, g1 = gens[0], gens[1]
    k_blk, c_blk = blocks[0], blocks[1]
    qp, qdp = perturbed[0], perturbed[1]
    if T_ct_mark.shape[0] == 0:
        return
    for i in range(q.size):
        qp[i], qdp[i] = q[i], qd[i]
    for c in range(T_ct_mark.shape[0]):
        ka, kb = T_ct_mark[c, 0], T_ct_mark[c, 1]
        ba, bb = T_k_body[ka], T_k_body[kb]
        na, nb = evaluate(F, IN, H, WF, WI, WH, c, q, qd, out[c], g0)
        n = na + nb
        for col in range(n):
            b = ba if col < na else bb
            gi = T_b_start[b] + (col if col < na else col - na)
            if col >= na and bb == ba:  # one body on both sides: its columns once
                for i in range(n):
                    k_blk[i, col], c_blk[i, col] = 0.0, 0.0
                continue
            step = FD_STEP * max(1.0, abs(q[gi]))
            qp[gi] = q[gi] + step
            _move(F, IN, H, WF, WI, WH, qp, b, ka, kb)
            evaluate(F, IN, H, WF, WI, WH, c, qp, qd, out[c], g1)
            for i in range(n):
                k_blk[i, col] = -(g1[i] - g0[i]) / step
            qp[gi] = q[gi]
            _move(F, IN, H, WF, WI, WH, q, b, ka, kb)
            step = FD_STEP * max(1.0, abs(qd[gi]))
            qdp[gi] = qd[gi] + step
            evaluate(F, IN, H, WF, WI, WH, c, q, qdp, out[c], g1)
            for i in range(n):
                c_blk[i, col] = -(g1[i] - g0[i]) / step
            qdp[gi] = qd[gi]
        if n:
            _scatter_n(F, IN, H, WF, WI, WH, ba, bb, na, n, k_blk, top, k_scale)
            _scatter_n(F, IN, H, WF, WI, WH, ba, bb, na, n, c_blk, top, c_scale)
            marker_vectors(F, IN, H, WF, WI, WH, q, ka, True)  # as the residual left them
            marker_vectors(F, IN, H, WF, WI, WH, q, kb, True)


@njit(cache=True)
def contact_samples(F, IN, H, WF, WI, WH, q, qd):
    """Every contact's sample at (q, q̇) into ``ct_out`` (frames and marker vectors
    evaluated here)."""
    T_k_body = ints1(IN, H, T_K_BODY)
    T_ct_mark = ints2(IN, H, T_CT_MARK)
    out, gen = floats2(WF, WH, W_CT_OUT), floats2(WF, WH, W_CT_GEN)[0]
    for c in range(T_ct_mark.shape[0]):
        ka, kb = T_ct_mark[c, 0], T_ct_mark[c, 1]
        body_frame(F, IN, H, WF, WI, WH, q, T_k_body[ka])
        body_frame(F, IN, H, WF, WI, WH, q, T_k_body[kb])
        marker_vectors(F, IN, H, WF, WI, WH, q, ka, False)
        marker_vectors(F, IN, H, WF, WI, WH, q, kb, False)
        evaluate(F, IN, H, WF, WI, WH, c, q, qd, out[c], gen)


#: Relative margin of :func:`needs_python`'s tests: a step that comes within it of an
#: onset, a switch or an impulse goes to Python, which decides with its own arithmetic
#: (the samples are the same numbers; the sums over them may round otherwise).
EVENT_MARGIN = 1e-9
#: The largest |h10(s)|, |h11(s)| of the cubic Hermite basis on [0, 1], and the seven
#: interior points s = j/8 where Python looks for a dip (flexmbs.contact.events).
_DIP = 4.0 / 27.0 * (1.0 + 1e-12)


@njit(cache=True)
def _onset_possible(state, k0, k1, h, tol):
    """Whether an open contact may have closed inside the step from sample ``k0`` to
    ``k1`` (``flexmbs.contact.events.onset_fraction`` not None), with the margin."""
    if state[C_MODE] != OPEN:
        return False
    g0, g1, v0, v1 = k0[S_GAP], k1[S_GAP], k0[S_VN], k1[S_VN]
    if not (math.isfinite(g0) and math.isfinite(g1) and math.isfinite(v0)
            and math.isfinite(v1)):
        return True
    if g0 < -tol * (1.0 + EVENT_MARGIN):
        return False  # already inside: nothing to locate
    floor = -tol * (1.0 - EVENT_MARGIN)
    if min(g0, g1) - _DIP * h * (abs(v0) + abs(v1)) >= floor:
        return False
    if g1 < floor:
        return True
    for j in range(1, 8):
        s = j / 8.0
        s2, s3 = s * s, s * s * s
        g = ((2 * s3 - 3 * s2 + 1) * g0 + (s3 - 2 * s2 + s) * h * v0
             + (-2 * s3 + 3 * s2) * g1 + (s3 - s2) * h * v1)
        if g < floor:
            return True
    return False


@njit(cache=True)
def _switch_possible(kind, par, state, k1, tol):
    """Whether the contact's state may switch (``Contact.commit``) on the sample ``k1``
    at the step's end, or an impulse act there (``apply_impulses``), with the margin."""
    gap, v_n = k1[S_GAP], k1[S_VN]
    if not (math.isfinite(gap) and math.isfinite(v_n)):
        return True
    if kind[1] == IMPULSE:
        return gap <= tol * (1.0 + EVENT_MARGIN) and v_n < 0.0
    mode = state[C_MODE]
    if gap >= 0.0:  # open: a switch unless it is open already
        return mode != OPEN or state[C_ANCHORED] == 1.0 or not math.isnan(state[C_V_ONSET])
    if mode == OPEN:
        return True  # an impact
    if kind[2] == NO_FRICTION:
        return False
    tx, ty, tz = k1[S_VT], k1[S_VT + 1], k1[S_VT + 2]
    speed = math.sqrt(tx * tx + ty * ty + tz * tz)
    v_reg = par[P_V_REG]
    if abs(speed - v_reg) <= EVENT_MARGIN * v_reg:
        return True
    if kind[2] == REGULARIZED:
        return mode != (STICK if speed < v_reg else SLIP)
    if mode == STICK:
        fx, fy, fz = k1[S_FT], k1[S_FT + 1], k1[S_FT + 2]
        return math.sqrt(fx * fx + fy * fy + fz * fz) > (
            par[P_MU_S] * k1[S_FN] * (1.0 - EVENT_MARGIN))
    return speed < v_reg


@njit(cache=True)
def needs_python(F, IN, H, WF, WI, WH, h, tol):
    """Whether the step of size ``h`` [s] just taken, from the contacts' samples at its
    start (``ct_start``) to those at its end (``ct_out``) under their current states,
    leaves Python's contact handling anything to do (:mod:`flexmbs.contact.events`): an
    onset within ``tol`` [m] to locate, a state to switch, an impulse to apply. False
    means the step stands as the per-step path would accept it (docs/compiled.md,
    "Batches of steps")."""
    kinds, pars = ints2(IN, H, T_CT_KIND), floats2(F, H, T_CT_PAR)
    start, end = floats2(WF, WH, W_CT_START), floats2(WF, WH, W_CT_OUT)
    states = floats2(WF, WH, W_CT_STATE)
    for c in range(kinds.shape[0]):
        if _onset_possible(states[c], start[c], end[c], h, tol) or \
                _switch_possible(kinds[c], pars[c], states[c], end[c], tol):
            return True
    return False
