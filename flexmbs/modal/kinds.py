"""The enumerations of modal data: the reference-frame condition and the kind of each
modal coordinate (docs/modal_front_end.md)."""

from __future__ import annotations

from enum import Enum


class ReferenceFrame(str, Enum):
    """How the body frame is tied to the deforming body (docs/modal_front_end.md)."""

    ATTACHED = "attached"
    """Frame rides on a node set (tangent frame): all modes vanish there."""
    MEAN_AXIS = "mean-axis"
    """Free–free modes, M-orthogonal to rigid motion (linearised Buckens/Tisserand)."""


class ModeKind(str, Enum):
    """Origin of a modal coordinate (bookkeeping, reported by ``flexmbs modes``)."""

    NORMAL = "normal"
    """An eigenmode: free–free, clamped, or Craig–Bampton fixed-interface normal mode."""
    CONSTRAINT = "constraint"
    """A Craig–Bampton coordinate dominated by static constraint-mode content."""
    IMPORTED = "imported"
    """Read from a file that does not say."""
    STATIC = "static"
    """A static-correction mode: the static deflection under a unit load at chosen nodes,
    mass-orthogonal to the other modes (:func:`flexmbs.modal.stress.static_correction`)."""
    DERIVATIVE = "derivative"
    """A combination of static modal derivatives, mass-orthogonal to the modes: a
    coordinate of a body with ``nonlinear = true``
    (:func:`flexmbs.modal.derivatives.enriched_data`)."""


#: The unit load cases of the geometric-stiffening matrices (docs/theory_stiffening.md):
#: six products ω_iω_j (i ≤ j), three frame accelerations a_k (gravity enters as
#: a − g), three angular accelerations ω̇_k.
STIFFENING_CASES = ("ww_xx", "ww_yy", "ww_zz", "ww_xy", "ww_xz", "ww_yz",
                    "a_x", "a_y", "a_z", "dw_x", "dw_y", "dw_z")
