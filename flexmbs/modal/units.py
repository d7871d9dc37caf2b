"""Unit systems accepted on import and their conversion to SI.

flexmbs stores everything in SI (m, kg, s, N). A source unit system is described by
the SI value of its length, mass and time units; every other quantity follows from
those three (force = mass * length / time**2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError


@dataclass(frozen=True)
class UnitSystem:
    """A consistent mechanical unit system.

    Attributes
    ----------
    name : str
        Canonical name, e.g. ``"mm-t-s"``.
    length, mass, time : float
        SI value of one unit of length [m], mass [kg] and time [s].
    """

    name: str
    length: float
    mass: float
    time: float

    @property
    def force(self) -> float:
        """SI value of one force unit [N]."""
        return self.mass * self.length / self.time**2

    def dof_weights(self, dofs_per_node: int, n_nodes: int) -> np.ndarray:
        """Per-DOF weights W for converting FE matrices to SI.

        ``M_SI = mass * W M W`` and ``K_SI = (mass / time**2) * W K W`` with W = 1 on
        translations and ``length`` on rotations: with displacements in length units and
        rotations dimensionless, a translation–translation mass entry is a mass, a
        translation–rotation entry mass·length and a rotation–rotation entry mass·length².
        """
        if dofs_per_node == 3:
            per_node = np.ones(3)
        elif dofs_per_node == 6:
            per_node = np.array([1.0, 1.0, 1.0, self.length, self.length, self.length])
        else:
            raise ValidationError(f"dofs_per_node must be 3 or 6, got {dofs_per_node}")
        return np.tile(per_node, n_nodes)


#: The unit systems flexmbs converts from (aliases map to the same object).
UNIT_SYSTEMS: dict[str, UnitSystem] = {}


def _register(system: UnitSystem, *aliases: str) -> None:
    for key in (system.name, *aliases):
        UNIT_SYSTEMS[key.lower()] = system


_register(UnitSystem("SI", 1.0, 1.0, 1.0), "m-kg-s", "m-kg-s-n", "mks")
_register(UnitSystem("mm-t-s", 1e-3, 1e3, 1.0), "mm-tonne-s", "mm-t-s-n-mpa")
_register(UnitSystem("mm-kg-s", 1e-3, 1.0, 1.0), "mm-kg-s-mn")
_register(UnitSystem("mm-kg-ms", 1e-3, 1.0, 1e-3), "mm-kg-ms-kn")
_register(UnitSystem("mm-g-ms", 1e-3, 1e-3, 1e-3), "mm-g-ms-n")
_register(UnitSystem("cm-g-s", 1e-2, 1e-3, 1.0), "cgs")
_register(UnitSystem("in-lbf-s", 0.0254, 4.4482216152605 / 0.0254, 1.0),
          "in-slinch-s", "ips")
_register(UnitSystem("ft-slug-s", 0.3048, 14.593902937206364, 1.0), "ft-lbf-s")


def get_units(name: str | UnitSystem | None) -> UnitSystem:
    """Look up a unit system by name (case-insensitive); ``None`` means SI."""
    if name is None:
        return UNIT_SYSTEMS["si"]
    if isinstance(name, UnitSystem):
        return name
    try:
        return UNIT_SYSTEMS[str(name).lower()]
    except KeyError:
        known = sorted({u.name for u in UNIT_SYSTEMS.values()})
        raise ValidationError(
            f"units {name!r} is not a known unit system; known: {', '.join(known)}"
        ) from None
