"""The modal front end: FE matrices, reduction, ModalData, invariants and file formats."""

from .data import ModalData, ModeKind, ReferenceFrame, plausibility_warnings
from .invariants import BodyMassBlocks, InertiaInvariants, compute_invariants
from .io import read_modal, write_modal

#: Names loaded on first use, so that reading modal data for a run does not import the
#: reduction (scipy.sparse.linalg's eigensolvers), the FE model and the preparation:
#: name → submodule.
_LAZY = {
    "FEModel": "femodel",
    "select_nodes": "node_selection",
    "with_node_sets": "node_selection",
    "PointMass": "preparation",
    "add_point_masses": "preparation",
    "prepare": "preparation",
    "scale": "preparation",
    "clamped_modes": "reduction",
    "craig_bampton": "reduction",
    "free_free_modes": "reduction",
    "rigid_body_basis": "rigid_motions",
    "UNIT_SYSTEMS": "units",
    "UnitSystem": "units",
    "get_units": "units",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])


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
