"""Joints and drives as constraint equations Φ(q, t) = 0 with analytic Jacobians and γ.

Every constraint is built from a few primitives on two markers i and j (Haug, Nikravesh):
``spherical`` (r_j − r_i = 0), ``dot1`` (a_iᵀ a_j = 0 for marker axes),
``dot2`` (a_iᵀ d_ij = 0 with d_ij = r_j − r_i), a rotation drive and a translation drive.
Each primitive returns Φ, the Jacobian blocks with respect to body i and body j, Φ_t and
γ, with Φ_q q̈ = γ = −(Φ_q q̇)_q q̇ − 2 Φ_qt q̇ − Φ_tt.

Marker axes x, y, z are the columns of the marker orientation. Joint conventions:

| joint | equations | motion left |
|---|---|---|
| spherical | r_j = r_i (3) | 3 rotations |
| revolute | spherical + z_j ⟂ x_i, y_i (5) | rotation about z |
| cylindrical | z_j ⟂ x_i, y_i; d ⟂ x_i, y_i (4) | rotation about and slide along z |
| prismatic | cylindrical + x_i ⟂ y_j (5) | slide along z |
| universal | spherical + z_i ⟂ z_j (4) | rotations about z_i and z_j |
| fixed | spherical + x_i⟂y_j, y_i⟂z_j, z_i⟂x_j (6) | none |
| planar | z_j ⟂ x_i, y_i; d ⟂ z_i (3) | plane motion normal to z_i |
| point-on-line | d ⟂ x_i, y_i (2) | origin of j on the z-axis of i, free rotation |
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class MarkerState:
    """Kinematics of one marker at (q, q̇): values, Jacobians (w.r.t. its body's
    coordinates) and velocity-quadratic acceleration parts; axes index 0, 1, 2 = x, y, z."""

    r: np.ndarray
    jr: np.ndarray
    axes: list
    jaxes: list
    r_dot: np.ndarray | None = None
    r_quad: np.ndarray | None = None
    axes_dot: list | None = None
    axes_quad: list | None = None


def marker_state(body, marker, qb, qdb=None, jac_needed: bool = True) -> MarkerState:
    """Evaluate ``marker`` on ``body`` at body coordinates ``qb`` (and rates ``qdb``);
    without ``jac_needed`` only positions and axes (for Φ alone)."""
    if not jac_needed and qdb is None:
        r, axes = body.marker_frame(qb, marker, None, jac=False)[:2]
        return MarkerState(r=r, jr=None, axes=[axes[:, 0], axes[:, 1], axes[:, 2]],
                           jaxes=None)
    r, axes, jac, quad = body.marker_frame(qb, marker, qdb)
    st = MarkerState(r=r, jr=jac[0], axes=[axes[:, 0], axes[:, 1], axes[:, 2]],
                     jaxes=[jac[1], jac[2], jac[3]])
    if qdb is not None:
        dots = jac @ qdb  # (4, 3)
        st.r_dot = dots[0]
        st.r_quad = quad[0]
        st.axes_dot = [dots[1], dots[2], dots[3]]
        st.axes_quad = [quad[1], quad[2], quad[3]]
    return st


# --------------------------------------------------------------------------- primitives
def spherical(mi: MarkerState, mj: MarkerState, vel: bool):
    phi = mj.r - mi.r
    if mi.jr is None:
        return phi, None, None, np.zeros(3), None
    gamma = -(mj.r_quad - mi.r_quad) if vel else None
    return phi, -mi.jr, mj.jr, np.zeros(3), gamma


def dot1(mi: MarkerState, k: int, mj: MarkerState, l: int, vel: bool):  # noqa: E741
    ai, aj = mi.axes[k], mj.axes[l]
    phi = np.array([ai @ aj])
    if mi.jr is None:
        return phi, None, None, np.zeros(1), None
    ji = (aj @ mi.jaxes[k])[None, :]
    jj = (ai @ mj.jaxes[l])[None, :]
    gamma = None
    if vel:
        gamma = np.array([-(aj @ mi.axes_quad[k] + ai @ mj.axes_quad[l]
                            + 2 * mi.axes_dot[k] @ mj.axes_dot[l])])
    return phi, ji, jj, np.zeros(1), gamma


def dot2(mi: MarkerState, k: int, mj: MarkerState, vel: bool, offset=(0.0, 0.0, 0.0)):
    """Φ = a_iᵀ d − s(t), d = r_j − r_i; ``offset`` = (s, ṡ, s̈)."""
    ai = mi.axes[k]
    d = mj.r - mi.r
    phi = np.array([ai @ d - offset[0]])
    if mi.jr is None:
        return phi, None, None, np.array([-offset[1]]), None
    ji = (d @ mi.jaxes[k] - ai @ mi.jr)[None, :]
    jj = (ai @ mj.jr)[None, :]
    gamma = None
    if vel:
        d_dot = mj.r_dot - mi.r_dot
        gamma = np.array([-(d @ mi.axes_quad[k] + ai @ (mj.r_quad - mi.r_quad)
                            + 2 * mi.axes_dot[k] @ d_dot) + offset[2]])
    return phi, ji, jj, np.array([-offset[1]]), gamma


def rotation_drive(mi: MarkerState, mj: MarkerState, vel: bool, theta):
    """Φ = x_jᵀ(−sin θ_d x_i + cos θ_d y_i) = sin(θ − θ_d) for the angle θ of x_j about z_i.

    Smooth and free of wrap-around (no atan2): valid for any number of turns.
    """
    th, th_d, th_dd = theta
    c = np.array([-np.sin(th), np.cos(th)])
    c_d = np.array([-np.cos(th) * th_d, -np.sin(th) * th_d])
    c_dd = np.array([np.sin(th) * th_d**2 - np.cos(th) * th_dd,
                     -np.cos(th) * th_d**2 - np.sin(th) * th_dd])
    xi, yi, xj = mi.axes[0], mi.axes[1], mj.axes[0]
    b = c[0] * xi + c[1] * yi
    phi = np.array([xj @ b])
    phi_t = np.array([xj @ (c_d[0] * xi + c_d[1] * yi)])
    if mi.jr is None:
        return phi, None, None, phi_t, None
    ji = (xj @ (c[0] * mi.jaxes[0] + c[1] * mi.jaxes[1]))[None, :]
    jj = (b @ mj.jaxes[0])[None, :]
    gamma = None
    if vel:
        b_dot = (c_d[0] * xi + c_d[1] * yi + c[0] * mi.axes_dot[0] + c[1] * mi.axes_dot[1])
        b_dd_rest = (c_dd[0] * xi + c_dd[1] * yi + 2 * c_d[0] * mi.axes_dot[0]
                     + 2 * c_d[1] * mi.axes_dot[1] + c[0] * mi.axes_quad[0]
                     + c[1] * mi.axes_quad[1])
        gamma = np.array([-(mj.axes_quad[0] @ b + 2 * mj.axes_dot[0] @ b_dot
                            + xj @ b_dd_rest)])
    return phi, ji, jj, phi_t, gamma


def _stack(parts):
    phi = np.concatenate([p[0] for p in parts])
    if parts[0][1] is None:
        return phi, None, None, np.concatenate([p[3] for p in parts]), None
    ji = np.vstack([p[1] for p in parts])
    jj = np.vstack([p[2] for p in parts])
    phi_t = np.concatenate([p[3] for p in parts])
    gamma = None if parts[0][4] is None else np.concatenate([p[4] for p in parts])
    return phi, ji, jj, phi_t, gamma


# --------------------------------------------------------------------------- joints
X, Y, Z = 0, 1, 2

JOINT_EQUATIONS: dict[str, tuple[str, ...]] = {
    "spherical": ("r.x", "r.y", "r.z"),
    "revolute": ("r.x", "r.y", "r.z", "z_j.x_i", "z_j.y_i"),
    "cylindrical": ("z_j.x_i", "z_j.y_i", "d.x_i", "d.y_i"),
    "prismatic": ("z_j.x_i", "z_j.y_i", "d.x_i", "d.y_i", "x_i.y_j"),
    "universal": ("r.x", "r.y", "r.z", "z_i.z_j"),
    "fixed": ("r.x", "r.y", "r.z", "x_i.y_j", "y_i.z_j", "z_i.x_j"),
    "planar": ("z_j.x_i", "z_j.y_i", "d.z_i"),
    "point-on-line": ("d.x_i", "d.y_i"),
}


def joint_equations(kind: str, mi: MarkerState, mj: MarkerState, vel: bool):
    """Φ, Jacobian blocks (body i, body j), Φ_t and γ of a joint of ``kind``."""
    if kind == "spherical":
        return spherical(mi, mj, vel)
    if kind == "revolute":
        return _stack([spherical(mi, mj, vel), dot1(mi, X, mj, Z, vel),
                       dot1(mi, Y, mj, Z, vel)])
    cyl = [dot1(mi, X, mj, Z, vel), dot1(mi, Y, mj, Z, vel), dot2(mi, X, mj, vel),
           dot2(mi, Y, mj, vel)]
    if kind == "cylindrical":
        return _stack(cyl)
    if kind == "prismatic":
        return _stack([*cyl, dot1(mi, X, mj, Y, vel)])
    if kind == "universal":
        return _stack([spherical(mi, mj, vel), dot1(mi, Z, mj, Z, vel)])
    if kind == "fixed":
        return _stack([spherical(mi, mj, vel), dot1(mi, X, mj, Y, vel),
                       dot1(mi, Y, mj, Z, vel), dot1(mi, Z, mj, X, vel)])
    if kind == "planar":
        return _stack([dot1(mi, X, mj, Z, vel), dot1(mi, Y, mj, Z, vel),
                       dot2(mi, Z, mj, vel)])
    if kind == "point-on-line":
        return _stack([dot2(mi, X, mj, vel), dot2(mi, Y, mj, vel)])
    raise KeyError(kind)


def drive_equations(kind: str, mi: MarkerState, mj: MarkerState, vel: bool, values):
    """A rotation drive (angle of x_j about z_i) or translation drive (z_iᵀ d = s(t)),
    its profile's ``values`` (s, ṡ, s̈) at t."""
    if kind == "rotation":
        return rotation_drive(mi, mj, vel, values)
    return dot2(mi, Z, mj, vel, offset=values)


# --------------------------------------------------------------------------- tangents
# Σ_k λ_k Φ_k of every joint and drive is a bilinear form plus a linear form in the eight
# marker vectors V = (r_i, x_i, y_i, z_i, r_j, x_j, y_j, z_j):
#     Σ_k λ_k Φ_k = Σ_ab C_ab V_aᵀ V_b + Σ_a l_aᵀ V_a (+ terms without q),
# so its Hessian (the constraint part ∂(Φ_qᵀλ)/∂q of the Newton tangent) is
#     Σ_a H_a(w_a) + Σ_ab (C + Cᵀ)_ab J_aᵀ J_b,    w_a = Σ_b (C + Cᵀ)_ab V_b + l_a,
# with H_a(w) the Hessian of wᵀ V_a(q) (a body method) and J_a = ∂V_a/∂q.
R_I, R_J = 0, 4  # indices of r_i, r_j in V; axis k of marker i is 1 + k, of j is 5 + k


def _coef_spherical(c, lin, lam):
    lin[R_J] += lam
    lin[R_I] -= lam


def _coef_dot1(c, lam, k, l):  # noqa: E741
    c[1 + k, 5 + l] += lam


def _coef_dot2(c, lam, k):
    c[1 + k, R_J] += lam
    c[1 + k, R_I] -= lam


def constraint_coefficients(kind: str, lam, theta=None) -> tuple[np.ndarray, np.ndarray]:
    """(C (8, 8), l (8, 3)) of Σ_k λ_k Φ_k for a joint ``kind`` or a drive (``"rotation"``
    with ``theta`` = (θ_d, θ̇_d, θ̈_d), ``"translation"``); see the comment above."""
    lam = np.asarray(lam, dtype=float)
    c = np.zeros((8, 8))
    lin = np.zeros((8, 3))
    if kind == "rotation":  # x_jᵀ(−sin θ_d x_i + cos θ_d y_i)
        c[5, 1] += lam[0] * -np.sin(theta[0])
        c[5, 2] += lam[0] * np.cos(theta[0])
        return c, lin
    if kind == "translation":
        _coef_dot2(c, lam[0], Z)
        return c, lin
    if kind in ("spherical", "revolute", "universal", "fixed"):
        _coef_spherical(c, lin, lam[:3])
        rest = lam[3:]
        pairs = {"spherical": [], "revolute": [(X, Z), (Y, Z)], "universal": [(Z, Z)],
                 "fixed": [(X, Y), (Y, Z), (Z, X)]}[kind]
        for value, (k, l) in zip(rest, pairs, strict=True):  # noqa: E741
            _coef_dot1(c, value, k, l)
        return c, lin
    if kind in ("cylindrical", "prismatic"):
        _coef_dot1(c, lam[0], X, Z)
        _coef_dot1(c, lam[1], Y, Z)
        _coef_dot2(c, lam[2], X)
        _coef_dot2(c, lam[3], Y)
        if kind == "prismatic":
            _coef_dot1(c, lam[4], X, Y)
        return c, lin
    if kind == "planar":
        _coef_dot1(c, lam[0], X, Z)
        _coef_dot1(c, lam[1], Y, Z)
        _coef_dot2(c, lam[2], Z)
        return c, lin
    if kind == "point-on-line":
        _coef_dot2(c, lam[0], X)
        _coef_dot2(c, lam[1], Y)
        return c, lin
    raise KeyError(kind)
