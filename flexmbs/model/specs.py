"""The immutable model and the joint, drive and initial-condition declarations it holds
(docs/multibody.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .joints import JOINT_EQUATIONS
from .markers import Marker
from .sensors import Sensor


@dataclass(frozen=True)
class JointSpec:
    """A joint of ``kind`` between markers ``marker_i`` and ``marker_j`` ("body.marker")."""

    name: str
    kind: str
    marker_i: str
    marker_j: str

    @property
    def n_equations(self) -> int:
        """How many constraint equations the joint adds."""
        return len(JOINT_EQUATIONS[self.kind])


@dataclass(frozen=True)
class JointInitial:
    """An initial condition in joint coordinates: the ``quantity`` ("angle" [rad] of a
    revolute or cylindrical joint, "displacement" [m] of a prismatic or cylindrical one)
    of ``joint`` is ``value`` at the start, and its rate ``rate`` [rad/s or m/s] (None:
    the rate is not prescribed). Assembly places the bodies (docs/multibody.md)."""

    joint: str
    quantity: str
    value: float
    rate: float | None = None


@dataclass(frozen=True)
class DriveSpec:
    """Prescribed motion: ``rotation`` (angle of x_j about z_i), ``translation`` (z_iᵀd)
    between two markers, or ``coordinate`` (one absolute coordinate "body.x")."""

    name: str
    kind: str
    profile: Any
    marker_i: str | None = None
    marker_j: str | None = None
    coordinate: str | None = None

    @property
    def n_equations(self) -> int:
        return 1


@dataclass(frozen=True, eq=False)
class Model:
    """An immutable, validated model. Compile it with ``flexmbs.assembly.System``."""

    bodies: dict[str, Any]
    markers: dict[str, Marker]
    joints: tuple[JointSpec, ...]
    drives: tuple[DriveSpec, ...]
    forces: tuple[Any, ...]
    gravity: np.ndarray
    sensors: tuple[Sensor, ...] = ()
    initial: tuple[JointInitial, ...] = ()
