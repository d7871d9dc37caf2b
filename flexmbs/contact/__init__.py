"""Contact, impact, friction and clearance joints (docs/contact.md).

Geometry (gap, normal, contact points and Jacobians): :class:`SpherePlane`,
:class:`SphereSphere`, :class:`JournalBearing`. Normal laws: :class:`Penalty`,
:class:`Hertz`, :class:`HuntCrossley`, :class:`LankaraniNikravesh`, :class:`Impulse`.
Friction: :class:`Friction` (regularized Coulomb or stick–slip, optional Stribeck).
Elements: :class:`Contact`, added with ``ModelBuilder.add_contact`` and
``ModelBuilder.add_clearance_revolute``.
"""

from .element import Contact, ContactState
from .geometry import JournalBearing, SpherePlane, SphereSphere
from .laws import (
    NORMAL_LAWS,
    Friction,
    Hertz,
    HuntCrossley,
    Impulse,
    LankaraniNikravesh,
    Penalty,
)

__all__ = ["NORMAL_LAWS", "Contact", "ContactState", "Friction", "Hertz", "HuntCrossley",
           "Impulse", "JournalBearing", "LankaraniNikravesh", "Penalty", "SpherePlane",
           "SphereSphere"]
