"""The rigid–elastic coupling modes of a flexible body (docs/theory_ffrf.md §9): a
declaration the model, the integrator and the compiled tables share. The floating-frame
terms themselves are in :mod:`flexmbs.elements.floating_frame_reference`.
"""

from __future__ import annotations

from enum import Enum


class Coupling(str, Enum):
    """Rigid–elastic coupling modes (docs/theory_ffrf.md §9)."""

    @classmethod
    def _missing_(cls, value):
        from ..errors import ValidationError

        raise ValidationError(f"coupling {value!r} is not one of "
                              f"{[m.value for m in cls]}")

    TWO_WAY = "two-way"
    """Full coupled mass matrix and quadratic velocity vector; energy conserving."""
    ONE_WAY = "one-way"
    """Rigid rows (R, p) use the rigid-body terms at ξ = 0: they drop M_Rf, M_θf, the
    ξ-dependent parts of M_Rθ and M_θθ and every ξ, ξ̇ term of Q_v, so the rigid motion
    is that of the rigid body; the elastic rows keep all inertial excitation (M_ξR, M_ξp,
    Q_v,f). Joints see the markers at ξ = 0 and applied forces act on the rigid rows with
    undeformed lever arms (their ξ rows still excite the modes), as docs/theory_ffrf.md §9
    recommends. M is block lower-triangular, not symmetric; energy is not conserved."""
    RIGID = "rigid"
    """As one-way in the rigid rows; the elastic rows are decoupled: no inertial coupling,
    no gravity, joints and forces see the undeformed body (markers at ξ = 0, no ξ
    columns), and M_ff ξ̈ = −K_ff ξ − D_ff ξ̇ keeps ξ = 0 (initial ξ and ξ̇ are set to
    zero). The body moves exactly as a rigid body with the same mass properties."""
    NO_MRF = "no-Mrf"
    """The seed document's experiment: M_Rf and M_θf zeroed in both rows (M stays
    symmetric), Q_v unchanged; energy is not conserved (Q_v no longer derives from the
    reduced kinetic energy, docs/theory_ffrf.md §9)."""
