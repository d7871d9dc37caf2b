"""Readers of raw FE mass and stiffness matrices, returned as :class:`FEModel` (SI): the
names of the modules that hold them, re-exported so that imports from here keep working.

* :mod:`.fe_nodes` — node files (CSV, Abaqus ``.inp`` nodes, sets and solid elements)
  and what all FE-matrix readers share (:func:`to_si`, node sets, material);
* :mod:`.matrix_market` — Matrix Market ``.mtx`` matrices (:func:`read_matrix_market`);
* :mod:`.abaqus` — Abaqus ``*MATRIX OUTPUT`` matrices (:func:`read_abaqus`,
  :func:`read_abaqus_matrix`, :func:`read_abaqus_coordinate`) and
  :func:`write_abaqus_matrix`.

Units and errors are described in those modules; user documentation:
``docs/modal_data_formats.md``.
"""

from __future__ import annotations

from .abaqus import (
    TRIANGLE_RTOL,
    AbaqusEntries,
    read_abaqus,
    read_abaqus_coordinate,
    read_abaqus_matrix,
    write_abaqus_matrix,
)
from .fe_nodes import INP_SOLIDS, ElementBlock, NodeTable, read_nodes, to_si
from .fe_nodes import _material_si as _material_si  # imported from here before the split
from .matrix_market import LAYOUT_MOVES_RTOL, LAYOUT_NULL_RTOL, read_matrix_market

__all__ = [
    "INP_SOLIDS",
    "LAYOUT_MOVES_RTOL",
    "LAYOUT_NULL_RTOL",
    "TRIANGLE_RTOL",
    "AbaqusEntries",
    "ElementBlock",
    "NodeTable",
    "read_abaqus",
    "read_abaqus_coordinate",
    "read_abaqus_matrix",
    "read_matrix_market",
    "read_nodes",
    "to_si",
    "write_abaqus_matrix",
]
