"""The bushing: a six-component linear spring–damper between two marker frames, as Adams'
BUSHING, Exudyn's CartesianSpringDamper with its rotational part, or Simpack's force
element 43 (docs/multibody.md, "Bushings").

The deformation e = [d; θ] of marker j relative to marker i, along marker i's axes,
is d = A_iᵀ(r_j − r_i) [m] and θ = ½ vee(A_iᵀA_j − A_jᵀA_i) [-] (= sin φ · n for a
rotation φ about n); the load s = K e + C ė − f0 acts on marker j as the force −s[:3]
(in N) and the torque −s[3:] (in N m) along marker i's axes, with the reaction on
marker i. The generalized force is Q = −(∂e/∂q)ᵀ s: the bushing is conservative apart
from its dampers, with the potential ½ eᵀ K e − f0ᵀ e.

:class:`Bushing` is the declaration (what the user writes, validated) with the methods
the NumPy assembly calls (``apply``, ``tangents``, ``measured_value``, ``potential``,
``nonconservative``, as the forces of ``flexmbs.model.forces``); the numbers come from
the plain array functions of :mod:`flexmbs.elements.bushing.reference`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ...errors import FieldError, ModelError
from . import reference

__all__ = ["FIELDS", "SENSOR_QUANTITIES", "Bushing", "reference"]

#: The parameter fields: name → (units, must be non-negative).
FIELDS = {"stiffness": ("N/m", True), "damping": ("N s/m", True),
          "rotational_stiffness": ("N m/rad", True),
          "rotational_damping": ("N m s/rad", True),
          "preload_force": ("N", False), "preload_torque": ("N m", False)}

#: What a force sensor on a bushing records: quantity → units (components x, y, z along
#: marker i's axes, the load on marker j).
SENSOR_QUANTITIES = {"force": "N", "torque": "N m"}


def _three(name: str, key: str, value) -> np.ndarray:
    """``value`` as 3 finite floats (a single number is taken for all three axes)."""
    units, nonnegative = FIELDS[key]
    who = f"bushing {name!r}"
    items = value if isinstance(value, (list, tuple, np.ndarray)) else [value]
    if any(isinstance(v, (bool, np.bool_, str, bytes)) for v in np.ravel(
            np.asarray(items, dtype=object))):
        raise FieldError(who, key, f"must be 3 numbers [{units}], got {value!r}")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise FieldError(who, key, f"must be 3 numbers [{units}], got {value!r}") from None
    if arr.ndim == 0:
        arr = np.full(3, float(arr))
    if arr.shape != (3,):
        raise FieldError(who, key, f"must be 3 numbers [{units}] (x, y, z of marker i's "
                                   f"axes), got shape {arr.shape}: {value!r}")
    if not np.all(np.isfinite(arr)):
        raise FieldError(who, key, f"must be finite, got {value!r}")
    if nonnegative and np.any(arr < 0):
        raise FieldError(who, key, f"must be non-negative, got {value!r}")
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class Bushing:
    """Six-component linear spring–damper between markers i and j.

    For each 3-vector a single number stands for all three axes. Bad values raise a
    :class:`~flexmbs.errors.ModelError` naming the bushing, the field and the value.

    Parameters
    ----------
    name : str
    marker_i, marker_j : str
        Full marker names ("body.marker"); the axes of marker i give the directions of
        every component (deformation, stiffness, load).
    stiffness : 3-vector
        Translational stiffness along x_i, y_i, z_i [N/m], ≥ 0.
    damping : 3-vector
        Translational damping [N s/m], ≥ 0.
    rotational_stiffness : 3-vector
        Rotational stiffness about x_i, y_i, z_i [N m/rad], ≥ 0, acting on
        θ = ½ vee(A_iᵀA_j − A_jᵀA_i) (sin φ · n: linear for small rotations).
    rotational_damping : 3-vector
        Rotational damping [N m s/rad], ≥ 0.
    preload_force, preload_torque : 3-vector
        The force [N] and torque [N m] that the bushing exerts on marker j at zero
        deflection, along marker i's axes.
    """

    name: str
    marker_i: str
    marker_j: str
    stiffness: np.ndarray = field(default_factory=lambda: np.zeros(3))
    damping: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotational_stiffness: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotational_damping: np.ndarray = field(default_factory=lambda: np.zeros(3))
    preload_force: np.ndarray = field(default_factory=lambda: np.zeros(3))
    preload_torque: np.ndarray = field(default_factory=lambda: np.zeros(3))

    #: The quantities of a force sensor on a bushing (``SENSOR_QUANTITIES``).
    sensor_quantities = tuple(SENSOR_QUANTITIES)

    #: The element kind that evaluates it in compiled code (docs/compiled.md).
    element_kind: ClassVar[str] = "bushing"

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ModelError(f"bushing: name must be a non-empty string, got {self.name!r}")
        for key in ("marker_i", "marker_j"):
            value = getattr(self, key)
            if not isinstance(value, str) or not value.strip():
                raise FieldError(f"bushing {self.name!r}", key, f"must be a marker name "
                                 f"('body.marker'), got {value!r}")
        for key in FIELDS:
            object.__setattr__(self, key, _three(self.name, key, getattr(self, key)))

    # ------------------------------------------------------------ parameters
    @property
    def stiffness6(self) -> np.ndarray:
        """diag(K) (6,): [N/m ×3, N m/rad ×3]."""
        return np.concatenate([self.stiffness, self.rotational_stiffness])

    @property
    def damping6(self) -> np.ndarray:
        """diag(C) (6,): [N s/m ×3, N m s/rad ×3]."""
        return np.concatenate([self.damping, self.rotational_damping])

    @property
    def preload6(self) -> np.ndarray:
        """f0 (6,): [N ×3, N m ×3]."""
        return np.concatenate([self.preload_force, self.preload_torque])

    # ------------------------------------------------------------ kinematics
    def _pair(self, system, q, qd=None, jac=True):
        """(V (8, 3), J (8, 3, n) or None, q̇ local or None, idx (n,), markers' parts)."""
        bi, mi, sli = system.marker_info(self.marker_i)
        bj, mj, slj = system.marker_info(self.marker_j)
        ri, axi, ji, _ = bi.marker_frame(q[sli], mi, None, jac=jac)
        rj, axj, jj, _ = bj.marker_frame(q[slj], mj, None, jac=jac)
        vecs = reference.marker_vectors(ri, axi, rj, axj)
        stacked = reference.stack_jacobians(ji, jj) if jac else None
        local_qd = None if qd is None else np.concatenate([qd[sli], qd[slj]])
        idx = np.concatenate([np.arange(sli.start, sli.stop),
                              np.arange(slj.start, slj.stop)]).astype(np.int64)
        return vecs, stacked, local_qd, idx, (bi, mi, sli, bj, mj, slj)

    def deformation(self, system, q, qd=None):
        """(e (6,), ė (6,) or None): [d [m]; θ [-]] and its rate, marker i's axes."""
        if qd is None:
            return reference.deformation(self._pair(system, q, jac=False)[0]), None
        vecs, jac, local_qd, _, _ = self._pair(system, q, qd)
        return (reference.deformation(vecs),
                reference.gradient(vecs, jac) @ local_qd)

    def load(self, system, q, qd) -> np.ndarray:
        """s (6,) = K e + C ė − f0 [N, N m]: the bushing acts on marker j with −s[:3] (in
        N) and −s[3:] (in N m) along marker i's axes."""
        e, e_dot = self.deformation(system, q, qd)
        return reference.loads(e, e_dot, self.stiffness6, self.damping6, self.preload6)

    # ------------------------------------------------------------ System protocol
    def apply(self, system, q, qd, t, Q):
        """Q += −(∂e/∂q)ᵀ s on the two markers' bodies."""
        vecs, jac, local_qd, idx, _ = self._pair(system, q, qd)
        if idx.size:
            gen = reference.evaluate(vecs, jac, local_qd, self.stiffness6, self.damping6,
                                     self.preload6)[0]
            np.add.at(Q, idx, gen)

    def tangents(self, system, q, qd, t):
        """(idx, K_t, C_t): exact −∂Q/∂q and −∂Q/∂q̇ on the coordinates ``idx`` (body i's,
        then body j's; :func:`reference.tangents`)."""
        vecs, jac, local_qd, idx, parts = self._pair(system, q, qd)
        bi, mi, sli, bj, mj, slj = parts
        s = reference.evaluate(vecs, jac, local_qd, self.stiffness6, self.damping6,
                               self.preload6)[3]
        rate = reference.stack_jacobians(bi.marker_jac_rate(q[sli], qd[sli], mi),
                                         bj.marker_jac_rate(q[slj], qd[slj], mj))
        w = reference.hessian_weights(vecs, s)
        ni = sli.stop - sli.start
        curvature = np.zeros((idx.size, idx.size))
        curvature[:ni, :ni] = bi.marker_hessian(q[sli], mi, w[:4])
        curvature[ni:, ni:] = bj.marker_hessian(q[slj], mj, w[4:])
        k_t, c_t = reference.tangents(vecs, jac, rate, local_qd, s, self.stiffness6,
                                      self.damping6, curvature)
        return idx, k_t, c_t

    def measured_value(self, system, q, qd, t, quantity: str = "force"):
        """(3-vector, units): the ``"force"`` [N] or ``"torque"`` [N m] on marker j along
        marker i's axes, −s[:3] or −s[3:] (what a force sensor records)."""
        if quantity not in SENSOR_QUANTITIES:
            raise ModelError(f"bushing {self.name!r}: sensors measure "
                             f"{sorted(SENSOR_QUANTITIES)}, not {quantity!r}")
        s = self.load(system, q, qd)
        return (-s[:3] if quantity == "force" else -s[3:]), SENSOR_QUANTITIES[quantity]

    def potential(self, system, q) -> float:
        """½ eᵀ K e − f0ᵀ e [J]."""
        e = self.deformation(system, q)[0]
        return reference.potential(e, self.stiffness6, self.preload6)

    def nonconservative(self):
        """The damper part (no stiffness, no preload), or None without damping."""
        if not np.any(self.damping6):
            return None
        return Bushing(self.name, self.marker_i, self.marker_j,
                       damping=self.damping, rotational_damping=self.rotational_damping)
