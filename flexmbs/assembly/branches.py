"""The other roots of the constraint equations, refused where assembly lands on one
(docs/multibody.md, "System").

Some joints and drives state their orientation conditions as equations with more than
the intended root:

* a rotation drive's Φ = sin(θ − θ_d) also vanishes at θ_d + π;
* a fixed joint's x_iᵀy_j = y_iᵀz_j = z_iᵀx_j = 0 holds for the markers' frames aligned,
  and also with the axes of one permuted cyclically (turned by 120° about their diagonal)
  or turned half a turn about one of them. Assembly from markers oriented apart (a tilted
  beam clamped to a ground marker left at the global axes, say) could close the joint
  on such a root and carry on with the body turned.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError, ModelError
from ..model.drives import drive_values
from ..model.joints import marker_state

#: A fixed joint's frames are aligned when the trace of A_iᵀA_j (3 aligned) exceeds this;
#: its other roots have a trace of 0 (axes permuted) or −1 (half a turn).
ALIGNED_TRACE = 2.0


def _state(system, name, q):
    body, marker, sl = system.marker_info(name)
    return marker_state(body, marker, q[sl], None, False)


def check_branches(system, rows, q, t: float) -> None:
    """Raise where the assembled ``q`` satisfies a joint's or drive's equations on a root
    other than the intended one (``rows``: the System's constraint rows)."""
    for row in rows:
        spec = row.spec
        if row.kind == "joint" and spec.kind == "fixed":
            mi, mj = _state(system, spec.marker_i, q), _state(system, spec.marker_j, q)
            trace = float(sum(mi.axes[k] @ mj.axes[k] for k in range(3)))
            if trace < ALIGNED_TRACE:
                axes = ", ".join(f"{a}_j along {_nearest(mi.axes, mj.axes[k])}_i"
                                 for k, a in enumerate("xyz"))
                raise ModelError(
                    f"fixed joint {row.name!r} closed with its markers' frames not aligned "
                    f"({axes}): its equations x_i·y_j = y_i·z_j = z_i·x_j = 0 hold there "
                    f"too, and the markers were given too far apart to tell; orient "
                    f"{spec.marker_i!r} and {spec.marker_j!r} alike (a tilted body clamped "
                    "to ground needs a ground marker turned with it)")
        elif row.kind == "drive" and spec.kind == "rotation":
            mi, mj = _state(system, spec.marker_i, q), _state(system, spec.marker_j, q)
            th = drive_values(spec, t)[0]
            cos = mj.axes[0] @ (np.cos(th) * mi.axes[0] + np.sin(th) * mi.axes[1])
            if cos < 0:
                raise ConvergenceError(
                    f"rotation drive {row.name!r} assembled half a turn away from its "
                    f"prescribed angle {th:.4g} rad (θ − θ_d = π, the other root of "
                    f"sin(θ − θ_d) = 0); start the driven body closer to that angle"
                )


def _nearest(axes, vector) -> str:
    """The name ('x', '-y' …) of the axis among ``axes`` nearest ``vector``."""
    cosines = [float(a @ vector) for a in axes]
    k = max(range(3), key=lambda i: abs(cosines[i]))
    return ("" if cosines[k] > 0 else "-") + "xyz"[k]
