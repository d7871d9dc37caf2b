"""Loads between two markers on the NumPy path: the pair's frames and Jacobians, a
joint's relative angle and displacement with their rates and partial derivatives, and
the application of an action–reaction load and its tangent (docs/theory_ffrf.md §7,
docs/multibody.md).

The NumPy reference of what :mod:`flexmbs.elements.markers` does in compiled code. It
reads the bodies through ``System.marker_info`` and the bodies' marker methods
(``marker_frame``, ``force_jac``, ``angular_jac`` and their tangents and rates); it does
not import the model stage.
"""

from __future__ import annotations

import numpy as np

from .rotational_spring.reference import relative_angle


class MarkerPair:
    """Two markers' bodies, coordinates, frames and Jacobians; local columns i then j."""

    def __init__(self, system, marker_i, marker_j, q, qd):
        self.bi, self.mi, self.sli = system.marker_info(marker_i)
        self.bj, self.mj, self.slj = system.marker_info(marker_j)
        self.qi, self.qj = q[self.sli], q[self.slj]
        self.qdi, self.qdj = qd[self.sli], qd[self.slj]
        self.ri, self.axi, self.ji, _ = self.bi.marker_frame(self.qi, self.mi)
        self.rj, self.axj, self.jj, _ = self.bj.marker_frame(self.qj, self.mj)
        self.ni, self.nj = self.ji.shape[2], self.jj.shape[2]
        self.idx = np.concatenate([np.arange(self.sli.start, self.sli.stop),
                                   np.arange(self.slj.start, self.slj.stop)]).astype(np.int64)

    def both(self, on_i, on_j):
        """[on_i, on_j] side by side: (m, n_i + n_j)."""
        return np.concatenate([on_i, on_j], axis=-1)

    def only_i(self, block):
        return self.both(block, np.zeros((*block.shape[:-1], self.nj)))

    def only_j(self, block):
        return self.both(np.zeros((*block.shape[:-1], self.ni)), block)


def pair_load_tangent(pair, vec, dvec_dq, dvec_dqd, kind):
    """K, C of Q = [−Jac_iᵀ v; Jac_jᵀ v] (reaction on i) with v(q, q̇) and its derivatives;
    Jac = force_jac (``"force"``) or angular_jac (``"torque"``)."""
    name = "angular_jac" if kind == "torque" else "force_jac"
    jac_i = getattr(pair.bi, name)(pair.qi, pair.mi)
    jac_j = getattr(pair.bj, name)(pair.qj, pair.mj)
    tan_i = getattr(pair.bi, name + "_tangent")(pair.qi, pair.mi, vec)
    tan_j = getattr(pair.bj, name + "_tangent")(pair.qj, pair.mj, vec)
    dq = np.vstack([-(jac_i.T @ dvec_dq) - pair.only_i(tan_i),
                    jac_j.T @ dvec_dq + pair.only_j(tan_j)])
    dqd = np.vstack([-(jac_i.T @ dvec_dqd), jac_j.T @ dvec_dqd])
    return -dq, -dqd


def rotation_partials(system, pair, key):
    """θ (unwrapped for ``key``, not stored), θ̇, z_i and ∂θ/∂q, ∂θ̇/∂q, ∂θ̇/∂q̇, ∂z_i/∂q
    (local columns of ``pair``) of the relative rotation about z_i.

    θ = atan2(x_j·y_i, x_j·x_i), so ∂θ = (c ∂s − s ∂c)/(s² + c²) through the marker
    axis Jacobians; θ̇ = z_iᵀ(Ω_j q̇_j − Ω_i q̇_i) with Ω = angular_jac gives
    ∂θ̇/∂q = (ω_j − ω_i)ᵀ ∂z_i + z_iᵀ[−∂(Ω_i q̇_i), ∂(Ω_j q̇_j)] and ∂θ̇/∂q̇ = z_iᵀ[−Ω_i, Ω_j].
    """
    xi_, yi_, zi = pair.axi[:, 0], pair.axi[:, 1], pair.axi[:, 2]
    angle = system.unwrap(key, relative_angle(xi_, yi_, pair.axj[:, 0]), store=False)
    angle_dq = angle_partial(pair)
    om_i = pair.bi.angular_jac(pair.qi, pair.mi)
    om_j = pair.bj.angular_jac(pair.qj, pair.mj)
    w_rel = om_j @ pair.qdj - om_i @ pair.qdi
    rate = float(zi @ w_rel)
    dz = pair.only_i(pair.ji[3])
    rate_dq = w_rel @ dz + zi @ pair.both(
        -pair.bi.angular_rate_jac(pair.qi, pair.qdi, pair.mi),
        pair.bj.angular_rate_jac(pair.qj, pair.qdj, pair.mj))
    rate_dqd = zi @ pair.both(-om_i, om_j)
    return angle, rate, zi, angle_dq, rate_dq, rate_dqd, dz


def angle_partial(pair) -> np.ndarray:
    """∂θ/∂q (local columns of ``pair``) of the relative rotation θ = atan2(x_j·y_i,
    x_j·x_i) about z_i: (c ∂s − s ∂c)/(s² + c²) through the marker axis Jacobians."""
    xi_, yi_, xj = pair.axi[:, 0], pair.axi[:, 1], pair.axj[:, 0]
    sn, cs = float(xj @ yi_), float(xj @ xi_)
    ds = pair.both(xj @ pair.ji[2], yi_ @ pair.jj[1])
    dc = pair.both(xj @ pair.ji[1], xi_ @ pair.jj[1])
    return (cs * ds - sn * dc) / (sn * sn + cs * cs)


def translation_partials(pair):
    """s = z_iᵀd, ṡ = z_iᵀḋ (d = r_j − r_i), z_i and ∂s/∂q, ∂ṡ/∂q, ∂ṡ/∂q̇, ∂z_i/∂q (local
    columns of ``pair``), with J̇ = ∂(J q̇)/∂q of the marker points (``marker_jac_rate``)."""
    zi = pair.axi[:, 2]
    d = pair.rj - pair.ri
    d_dq = pair.both(-pair.ji[0], pair.jj[0])
    dz = pair.only_i(pair.ji[3])
    d_dot = pair.jj[0] @ pair.qdj - pair.ji[0] @ pair.qdi
    rates_i = pair.bi.marker_jac_rate(pair.qi, pair.qdi, pair.mi)[0]
    rates_j = pair.bj.marker_jac_rate(pair.qj, pair.qdj, pair.mj)[0]
    rate_dq = d_dot @ dz + zi @ pair.both(-rates_i, rates_j)
    return (float(zi @ d), float(zi @ d_dot), zi, d @ dz + zi @ d_dq, rate_dq, zi @ d_dq,
            dz)


def marker_state(system, marker_name, q, qd):
    """Marker frame, its body, the marker and the body's coordinate slice."""
    body, marker, sl = system.marker_info(marker_name)
    r, axes, jac, _ = body.marker_frame(q[sl], marker)
    return body, marker, sl, r, axes, jac, qd[sl]


def add_load(Q, sl, vec):
    """Q[sl] += vec (nothing on ground, whose slice is empty)."""
    if vec.size:
        Q[sl] += vec


def relative_rotation(system, marker_i, marker_j, q, qd, key=None):
    """Angle of x_j about z_i and its rate z_iᵀ(ω_j − ω_i).

    The angle is unwrapped by continuity with the previous evaluation for ``key`` (the
    System remembers it), so multi-turn motions keep counting; without a key it lies in
    (−π, π].
    """
    angle, rate, zi, _, _ = rotation_state(system, marker_i, marker_j, q, qd, key)
    return angle, rate, zi


def rotation_state(system, marker_i, marker_j, q, qd, key=None):
    """(angle, rate, z_i, Ω_i, Ω_j) of :func:`relative_rotation`, with the marker angular
    Jacobians Ω = ``angular_jac`` (also the torque Jacobians) evaluated once."""
    bi, mi, sli = system.marker_info(marker_i)
    bj, mj, slj = system.marker_info(marker_j)
    ai = bi.marker_frame(q[sli], mi, None, jac=False)[1]
    aj = bj.marker_frame(q[slj], mj, None, jac=False)[1]
    zi = ai[:, 2]
    angle = relative_angle(ai[:, 0], ai[:, 1], aj[:, 0])
    if key is not None:
        angle = system.unwrap(key, angle)
    om_i, om_j = bi.angular_jac(q[sli], mi), bj.angular_jac(q[slj], mj)
    omega = om_j @ qd[slj] - om_i @ qd[sli]
    return angle, float(zi @ omega), zi, om_i, om_j


def relative_translation(system, marker_i, marker_j, q, qd):
    """Displacement z_iᵀ(r_j − r_i) and its rate along z_i."""
    _, _, _, ri, ai, ji, qdi = marker_state(system, marker_i, q, qd)
    _, _, _, rj, _, jj, qdj = marker_state(system, marker_j, q, qd)
    zi = ai[:, 2]
    return float(zi @ (rj - ri)), float(zi @ (jj[0] @ qdj - ji[0] @ qdi)), zi


def apply_torque_pair(system, marker_i, marker_j, torque, om_i, om_j, Q):
    """Q += [−Ω_iᵀ T; Ω_jᵀ T] with the angular Jacobians already at hand."""
    add_load(Q, system.marker_info(marker_j)[2], om_j.T @ torque)
    add_load(Q, system.marker_info(marker_i)[2], om_i.T @ (-torque))


def apply_pair(system, marker_i, marker_j, vec, q, Q, kind):
    """Q += [−Jac_iᵀ v; Jac_jᵀ v]: ``vec`` on marker j with its reaction on marker i
    (Jac = angular_jac for a torque, force_jac for a force)."""
    bi, mi, sli = system.marker_info(marker_i)
    bj, mj, slj = system.marker_info(marker_j)
    jac = "angular_jac" if kind == "torque" else "force_jac"
    add_load(Q, slj, getattr(bj, jac)(q[slj], mj).T @ vec)
    add_load(Q, sli, getattr(bi, jac)(q[sli], mi).T @ (-vec))
