"""The modal front end: FE matrices, reduction, ModalData, invariants and file formats."""

from .data import ModalData, ModeKind, ReferenceFrame, plausibility_warnings
from .femodel import FEModel
from .invariants import BodyMassBlocks, InertiaInvariants, compute_invariants
from .io import read_modal, write_modal
from .node_selection import select_nodes, with_node_sets
from .preparation import PointMass, add_point_masses, prepare, scale
from .reduction import clamped_modes, craig_bampton, free_free_modes, rigid_body_basis
from .units import UNIT_SYSTEMS, UnitSystem, get_units

__all__ = [
    "UNIT_SYSTEMS",
    "BodyMassBlocks",
    "FEModel",
    "InertiaInvariants",
    "ModalData",
    "ModeKind",
    "PointMass",
    "ReferenceFrame",
    "UnitSystem",
    "add_point_masses",
    "clamped_modes",
    "compute_invariants",
    "craig_bampton",
    "free_free_modes",
    "get_units",
    "plausibility_warnings",
    "prepare",
    "read_modal",
    "rigid_body_basis",
    "scale",
    "select_nodes",
    "with_node_sets",
    "write_modal",
]
