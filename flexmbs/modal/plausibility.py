"""Plausibility checks of modal data for unit and normalisation slips: magnitudes of the
total mass, size and frequencies, and φᵀMφ against M_ff (docs/modal_data_formats.md)."""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import UnitsWarning
from .kinds import ReferenceFrame
from .units import get_units

#: M_ff is compared with Φᵀ M Φ of the stored mass; above this relative mismatch a
#: warning explains it, above MASS_MISMATCH_ERROR (ModalData) it is an error.
MASS_MISMATCH_WARN = 0.02


def _units_that_fit(density: float, declared: str) -> str:
    """The registered unit systems in which the file's numbers would give a plausible mass
    per cube of the body's size, as a hint (e.g. an inch model read as SI)."""
    from .units import UNIT_SYSTEMS

    now = get_units(declared)
    raw = density / now.mass * now.length**3  # the file's own numbers
    fits = sorted({s.name for s in UNIT_SYSTEMS.values()
                   if s.name != now.name and 1e-3 <= raw * s.mass / s.length**3 <= 1e5})
    return (f"; the numbers fit {', '.join(fits)} (--units / units=)" if fits else "")


def plausibility_warnings(data) -> list[str]:
    """Check magnitudes for unit mistakes; return (and issue) :class:`UnitsWarning` texts.

    Looks at the total mass, the body's size and the frequency range (SI expected).
    """
    found = []
    m = data.total_mass
    size = float(np.max(np.ptp(data.nodes, axis=0))) if data.n_nodes > 1 else 0.0
    freqs = data.frequencies
    hint = f" (declared source units: {data.units})"
    if not 1e-6 <= m <= 1e7:
        found.append(f"total mass {m:.4g} kg is outside 1e-6..1e7 kg; were the units "
                     f"declared correctly?{hint}")
    if data.n_nodes > 1 and not 1e-4 <= size <= 1e4:
        found.append(f"body size {size:.4g} m is outside 1e-4..1e4 m; were the length "
                     f"units declared correctly?{hint}")
    if data.n_nodes > 1 and size > 0:
        # mass per cube of the body's largest extent: steel parts are 1e-1..1e4 kg/m³
        # even when slender; lengths in mm read as m give ~1e-9 of that
        density = m / size**3
        if not 1e-3 <= density <= 1e5:
            found.append(f"mass per cube of the body's size is {density:.3g} kg/m³ (total "
                         f"mass {m:.4g} kg, size {size:.4g} m); lengths or masses look like "
                         f"they are in other units than declared{hint}"
                         + _units_that_fit(density, data.units))
    zero = int(np.sum(freqs <= 0))
    if zero and data.reference_frame is ReferenceFrame.ATTACHED:
        found.append(f"{zero} mode(s) at 0 Hz with the body attached to its frame: a "
                     "motion without strain energy (a mechanism, or a stiffness entry "
                     f"lost in the export){hint}")
    positive = freqs[freqs > 0]
    if positive.size and (positive.max() > 1e6 or positive.min() < 1e-4):
        found.append(f"frequency range {positive.min():.4g}..{positive.max():.4g} Hz looks "
                     f"implausible for a structure; check units and mode normalisation{hint}")
    ratio = data.modal_mass_ratio if data.n_modes else np.ones(0)
    off = np.flatnonzero(np.abs(ratio - 1) > MASS_MISMATCH_WARN)
    if off.size:
        shown = ", ".join(f"mode {j + 1}: {ratio[j]:.3g}" for j in off[:5])
        found.append(f"phiᵀ·mass·phi differs from M_ff by more than "
                     f"{100 * MASS_MISMATCH_WARN:g} % ({shown}{', ...' if off.size > 5 else ''}"
                     f"); the mass description lacks inertia the modes move (e.g. rotary "
                     f"inertia of 6-DOF nodes given point masses) or the data are "
                     f"inconsistent")
    for text in found:
        warnings.warn(text, UnitsWarning, stacklevel=2)
    return found
