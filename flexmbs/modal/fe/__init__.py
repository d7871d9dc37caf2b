"""Built-in finite elements for users without an external FE code."""

from .beam import BeamSection, Material, beam_element_matrices, beam_local_frame, straight_beam

__all__ = [
    "BeamSection",
    "Material",
    "beam_element_matrices",
    "beam_local_frame",
    "straight_beam",
]
