"""The registry of element kinds' tables (docs/compiled.md, "Adding an element kind").

:data:`KINDS` lists every kind's :class:`~flexmbs.elements.declaration.KindTables`; their
fields, in this order, make up :class:`Tables`, the one named tuple the kernels read,
and :func:`header_rows` gives a kernel module the header row of each field it reads
(``T_S_MARK, T_S_PAR = header_rows("s_mark", "s_par")``). :data:`BUILD_ORDER` is the
order the tables are filled in: the constraint plan's markers come first, the force
kinds add theirs, and the marker table and the iteration matrix's pattern are built
last, from what the others added. Plain Python, no numba.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..compiled.workspace import CORE, Sizes
from . import shared_tables
from .actuators import table as actuators
from .bushing import table as bushing
from .constraints import table as constraints
from .contact import table as contact
from .declaration import SCALAR
from .flexible_body import table as flexible_body
from .joint_servo import table as joint_servo
from .loads import table as loads
from .nonlinear_beam import table as nonlinear_beam
from .rigid_body import table as rigid_body
from .rotational_spring import table as rotational_spring
from .spring_damper import table as spring_damper

#: Every kind's table declaration, in the order of the fields of :class:`Tables`.
KINDS = (shared_tables.MODEL, shared_tables.BODIES, rigid_body.TABLE, flexible_body.TABLE,
         shared_tables.MARKERS, constraints.TABLE, shared_tables.PATTERN, actuators.TABLE,
         spring_damper.TABLE, loads.POINT_TABLE, loads.DISTRIBUTED_TABLE,
         rotational_spring.TABLE, bushing.TABLE, contact.TABLE, joint_servo.TABLE,
         nonlinear_beam.TABLE)

#: The order the tables are built in (see the module docstring).
BUILD_ORDER = (shared_tables.MODEL, shared_tables.BODIES, rigid_body.TABLE,
               flexible_body.TABLE, constraints.TABLE, actuators.TABLE, spring_damper.TABLE,
               rotational_spring.TABLE, loads.POINT_TABLE, loads.DISTRIBUTED_TABLE,
               bushing.TABLE, contact.TABLE, joint_servo.TABLE, nonlinear_beam.TABLE,
               shared_tables.MARKERS,
               shared_tables.PATTERN)

#: The force kinds: those that claim forces of the model.
FORCE_KINDS = (actuators.TABLE, spring_damper.TABLE, loads.POINT_TABLE,
               loads.DISTRIBUTED_TABLE, rotational_spring.TABLE, bushing.TABLE,
               contact.TABLE, joint_servo.TABLE, nonlinear_beam.TABLE)


#: The force kinds a case file writes as ``[[forces]]`` entries of their own
#: ``type`` (``CaseForm``), by type.
CASE_FORMS = {kind.case_form.type: kind.case_form for kind in FORCE_KINDS
              if kind.case_form is not None}
if len(CASE_FORMS) != sum(kind.case_form is not None for kind in FORCE_KINDS):
    raise AssertionError("two element kinds declare the same case-file type")


def _fields():
    names = [f.name for kind in KINDS for f in kind.fields]
    if len(set(names)) != len(names):
        raise AssertionError(f"two kinds declare the same table field: {sorted(names)}")
    if set(BUILD_ORDER) != set(KINDS):
        raise AssertionError("BUILD_ORDER and KINDS list different kinds")
    return names


#: Field names in header-row order.
TABLE_FIELDS = tuple(_fields())

#: Flat arrays of one System, the fields of every kind (see each kind's declaration).
Tables = NamedTuple("Tables", [(f.name, int if f.buffer == SCALAR else np.ndarray)
                               for kind in KINDS for f in kind.fields])

_ROW = {name: k for k, name in enumerate(TABLE_FIELDS)}


def header_rows(*names: str):
    """The header rows of the table fields ``names`` (an int for one name, else a
    tuple), for a kernel module's constants."""
    try:
        rows = tuple(_ROW[name] for name in names)
    except KeyError as exc:
        raise KeyError(f"no element kind declares the table field {exc.args[0]!r}") from None
    return rows[0] if len(rows) == 1 else rows


#: Every workspace buffer: the core ones, then each kind's own, in :data:`KINDS` order.
SCRATCH = CORE + tuple(s for kind in KINDS for s in kind.scratch)

#: The workspace's fields in header-row order.
WORK_FIELDS = tuple(s.name for s in SCRATCH)
if len(set(WORK_FIELDS)) != len(WORK_FIELDS):
    raise AssertionError(f"two workspace buffers share a name: {sorted(WORK_FIELDS)}")

#: Scratch and state buffers of one run, sized once from the model's tables.
Workspace = NamedTuple("Workspace", [(s.name, np.ndarray) for s in SCRATCH])

_WORK_ROW = {name: k for k, name in enumerate(WORK_FIELDS)}


def work_rows(*names: str):
    """The header rows of the workspace buffers ``names`` (an int for one name, else a
    tuple), for a kernel module's constants (``W_BU_VEC = work_rows("bu_vec")``)."""
    try:
        rows = tuple(_WORK_ROW[name] for name in names)
    except KeyError as exc:
        raise KeyError(f"no workspace buffer is named {exc.args[0]!r}") from None
    return rows[0] if len(rows) == 1 else rows


def make_workspace(T) -> Workspace:
    """Zeroed (or initial) buffers for the model of the tables ``T``."""
    sizes = Sizes.of(T)
    return Workspace(*(s.make(sizes) for s in SCRATCH))
