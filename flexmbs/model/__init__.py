"""What a user declares: bodies, markers, joints, drives and forces (docs/multibody.md).

Build with :class:`ModelBuilder`, then ``finalize()`` to an immutable :class:`Model`;
compile with :class:`flexmbs.assembly.System` for numbers.
"""

from ..elements.bushing import Bushing
from .bodies import Ground, RigidBody
from .builder import Model, ModelBuilder
from .drives import Constant, Polynomial, Profile, SpinUp, Table, UserProfile
from .markers import Marker
from .motion_profiles import Dwell, Move, PointToPoint, Sequence, Step5
from .servos import JointServo, Motor

__all__ = [
    "Bushing",
    "Constant",
    "Dwell",
    "Ground",
    "JointServo",
    "Marker",
    "Model",
    "ModelBuilder",
    "Motor",
    "Move",
    "PointToPoint",
    "Polynomial",
    "Profile",
    "RigidBody",
    "Sequence",
    "SpinUp",
    "Step5",
    "Table",
    "UserProfile",
]
