"""Nastran models through pyNastran (optional extra: ``pip install 'flexmbs[nastran]'``).

Three inputs, all read with pyNastran (docs/modal_data_formats.md, Nastran):

* **Geometry** (:func:`read_bdf`): a bulk data file's GRID cards with their position
  (CP) and displacement (CD) coordinate systems (CORD1R/C/S, CORD2R/C/S), the grids
  fully clamped by SPC/SPC1 cards (all six components), and the elements as mesh cells
  for animations (shells, solids; bars, beams and rods as lines). The file is read as
  Nastran reads it (:mod:`.deck`): with or without executive control and BEGIN BULK,
  INCLUDEs relative to the including file. Scalar and extra points (SPOINT, EPOINT) have
  no position and are kept apart from the grids.
* **Matrices** (:func:`read_nastran`): mass and stiffness from OP4 files
  (``FILE.op4:NAME``, e.g. MGG/KGG or MAA/KAA), mapped onto the grids of the geometry and
  turned from each grid's displacement system into the basic system, as an FEModel to
  reduce here.
* **Modes** (:func:`read_nastran_modes`): SOL 103 eigenvectors from an OP2 file with
  their eigenvalues (and generalized masses and stiffnesses when the OP2 has its LAMA
  table), read as modal data directly: ``read_modal("part.op2", geometry="part.bdf")``.

DOF order: the g-set is every grid in ascending ID order, six components each (T1 T2 T3
R1 R2 R3 in the grid's displacement system). A matrix of 6 × (all grids) rows is taken as
g-set; one of 6 × (grids not fully clamped) rows as the a-set of a model whose only
boundary conditions are the fully clamped grids, and the clamped grids get zero rows
(reduce it with ``--clamp-nodes spc``). Any other size is refused with both counts.

Nastran has no unit system of its own: pass ``units`` (e.g. ``"mm-t-s"``) as for the
other FE readers. Errors name the file, the card and the grid or element ID.
"""

from __future__ import annotations

from ._pynastran import MISSING, _import, _quiet_logger
from .bulk import ELEMENT_CELLS, BdfGeometry, _axes_at, read_bdf
from .matrices import read_nastran, read_op4_matrix, split_spec
from .op2_modes import modes_from_op2, read_nastran_modes

__all__ = ["ELEMENT_CELLS", "MISSING", "BdfGeometry", "_axes_at", "_import", "_quiet_logger",
           "modes_from_op2", "read_bdf", "read_nastran", "read_nastran_modes",
           "read_op4_matrix", "split_spec"]
