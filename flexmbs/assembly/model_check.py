"""The model check of a compiled System (like Simpack's): degrees of freedom from the rank
of Φ_q, the redundant constraint rows by name, and the joint changes that remove them
(docs/multibody.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError
from ..model.joints import JOINT_EQUATIONS
from .rank import dense_rank, sparse_rank


@dataclass(frozen=True)
class DofReport:
    """Model check (like Simpack's): counts, rank, DOF and redundant rows by name."""

    n_coordinates: int
    n_constraints: int
    rank: int
    dof: int
    redundant: tuple[str, ...]
    message: str
    advice: str = ""
    """With redundant equations: the joint changes (same markers, fewer equations) that
    were tried on this model and remove them at the same DOF, or why none was found."""


def check(system, q=None, t: float = 0.0) -> DofReport:
    """DOF = n − rank(Φ_q) by column-pivoted QR of Φ_qᵀ; redundant rows by name.

    Without ``q`` the declared initial state is assembled first (the rank of Φ_q at
    an inconsistent configuration means little); if that fails, the unassembled state
    is used and the message says so.
    """
    note = ""
    if q is None:
        try:
            q = system.assemble(t=t)
        except ConvergenceError:
            q, note = system.q0, " (at the unassembled initial guess: assembly failed)"
    if system.n_c == 0:
        return DofReport(system.n_q, 0, 0, system.n_q, (), f"{system.n_q} DOF, no constraints")
    rank, redundant = rank_of(system, q, t)
    dof = system.n_q - rank
    msg = [f"{system.n_q} coordinates, {system.n_c} constraint equations, rank {rank}: "
           f"{dof} degree(s) of freedom"]
    advice = ""
    if redundant:
        advice = redundancy_advice(system, q, t, len(redundant))
        msg.append(f"{len(redundant)} redundant equation(s) (dependent on the others; "
                   f"the model is over-constrained there): {', '.join(redundant)}; "
                   f"{advice}")
    if dof == 0 and not redundant:
        msg.append("kinematically determined (fully driven)")
    elif dof > 0:
        msg.append(f"under-constrained for kinematic analysis: {dof} free motion(s) "
                   "(add drives, or integrate the dynamics)")
    return DofReport(system.n_q, system.n_c, rank, dof, redundant, "; ".join(msg) + note,
                     advice)

def rank_of(system, q, t: float = 0.0) -> tuple[int, tuple[str, ...]]:
    """rank(Φ_q) at q by column-pivoted QR of Φ_qᵀ, and the rows beyond it by name.

    Above :data:`SPARSE_RANK_FROM` coordinates Φ_q is taken sparse and decided block by
    connected block, with a sparse full-rank check for large blocks
    (:func:`flexmbs.assembly.rank.sparse_rank`: the same rank and names)."""
    if system.n_q >= SPARSE_RANK_FROM:
        rank, rows = sparse_rank(system.jacobian(q, t, sparse=True))
    else:
        rank, rows = dense_rank(np.asarray(system.jacobian(q, t, sparse=False)))
    return rank, tuple(system.constraint_names[i] for i in rows)


#: From this many coordinates the model check takes Φ_q sparse (rank.sparse_rank).
SPARSE_RANK_FROM = 300


def redundancy_advice(system, q, t: float, n_redundant: int) -> str:
    """What removes ``n_redundant`` redundant equations at q, tried on this model.

    Candidates change one joint, keeping its markers: to a kind with exactly
    ``n_redundant`` equations fewer (the rank and so the DOF must stay), or away
    altogether when it has that many. A candidate counts only when the changed model
    still satisfies its equations at q and has no redundant equation left. Joints
    owning redundant rows are tried first, those owning most of them before the others
    (which rows of a closed loop the rank test calls redundant can follow the rounding
    of equal pivots); at most :data:`ADVICE_TRIALS` models are built.
    """
    from collections import Counter
    from dataclasses import replace

    n_rank, redundant = rank_of(system, q, t)
    owned = Counter(name.split("[", 1)[0] for name in redundant)
    joints = list(system.model.joints)
    order = sorted(range(len(joints)), key=lambda k: -owned[joints[k].name])
    found, trials = [], 0
    for k in order:
        joint = joints[k]
        n_eq = len(JOINT_EQUATIONS[joint.kind])
        kinds = [kind for kind, eqs in JOINT_EQUATIONS.items()
                 if len(eqs) == n_eq - n_redundant]
        if n_eq == n_redundant:
            kinds.append(None)  # remove the joint
        for kind in kinds:
            if trials >= ADVICE_TRIALS or len(found) >= 2:
                break
            trials += 1
            changed = (joints[:k] + joints[k + 1:] if kind is None else
                       [*joints[:k], replace(joint, kind=kind), *joints[k + 1:]])
            other = type(system)(replace(system.model, joints=tuple(changed)))
            phi = other.phi(q, t)
            if phi.size and not float(np.max(np.abs(phi))) < 1e-8:
                continue  # the new joint's equations do not hold where we are
            if rank_of(other, q, t) == (n_rank, ()):
                found.append(_advice_text(joint, kind))
    if not found:
        return ("no change of a single joint removes them (tried "
                f"{trials}); in a closed loop whose joint axes are parallel (a planar "
                "mechanism modelled in 3D) give the closing joint fewer equations: a "
                "point-on-line, or a spherical with a universal at another joint")
    return ("to remove them, " + "; or ".join(found)
            + f" (checked on this model: same {system.n_q - n_rank} DOF, no redundant "
              f"equation left)")


#: Models built at most by System.redundancy_advice (each is one small rank test).
ADVICE_TRIALS = 40
#: What a joint kind keeps of the relative motion, for the advice.
_KIND_MEANING = {
    "spherical": "the marker origins coincide",
    "revolute": "spherical plus parallel z axes",
    "cylindrical": "parallel z axes, marker j's origin on marker i's z axis",
    "prismatic": "cylindrical without the rotation",
    "universal": "spherical plus perpendicular z axes",
    "fixed": "no relative motion",
    "planar": "parallel z axes, marker j's origin in marker i's xy plane",
    "point-on-line": "marker j's origin on marker i's z axis, rotations free",
}


def _advice_text(joint, kind) -> str:
    if kind is None:
        return (f"remove joint {joint.name!r} ({joint.kind}): the other joints already "
                f"impose its {len(JOINT_EQUATIONS[joint.kind])} equation(s)")
    return (f"make joint {joint.name!r} ({joint.kind}, "
            f"{len(JOINT_EQUATIONS[joint.kind])} equations) a {kind} joint on the same "
            f"markers ({len(JOINT_EQUATIONS[kind])} equations: {_KIND_MEANING[kind]}; "
            f"i = {joint.marker_i!r}, j = {joint.marker_j!r})")
