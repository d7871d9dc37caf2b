"""What a user declares: bodies, markers, joints, drives and forces (docs/multibody.md).

Build with :class:`ModelBuilder`, then ``finalize()`` to an immutable :class:`Model`;
compile with :class:`flexmbs.assembly.System` for numbers.
"""

from ..elements.bushing import Bushing
from .bodies import Ground, RigidBody
from .builder import Model, ModelBuilder
from .drives import Constant, Polynomial, Profile, SpinUp, Table, UserProfile
from .markers import Marker

__all__ = [
    "Bushing",
    "Constant",
    "Ground",
    "Marker",
    "Model",
    "ModelBuilder",
    "Polynomial",
    "Profile",
    "RigidBody",
    "SpinUp",
    "Table",
    "UserProfile",
]
