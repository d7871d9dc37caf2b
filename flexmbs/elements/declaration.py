"""How an element kind declares its tables for the compiled engine (docs/compiled.md,
"Adding an element kind").

A kind's tables are flat arrays, one row per instance (a spring's markers and
parameters, a flexible body's invariants). It declares their fields — name, buffer and
shape — and a function that fills them from a :class:`~flexmbs.assembly.system.System`,
and the workspace buffers its kernels need beside the core ones;
:mod:`flexmbs.elements.registry` collects the declarations into the one named tuple the
kernels read, and gives each field its header row. Plain Python: the run side builds
the tables without importing numba.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compiled.workspace import Scratch

#: Buffers of a field: float64 array, int64 array, or a Python int.
FLOAT, INT, SCALAR = "float", "int", "scalar"


def input_is_callable(force) -> bool:
    """Whether ``force``'s value is a callable of the state, which the compiled engine
    asks Python for at every Newton iterate (docs/compiled.md, "Callables")."""
    if getattr(force, "element_kind", None) == "joint_actuator":
        return getattr(force, "profile", None) is None
    if getattr(force, "element_kind", None) == "spring_damper":
        return bool(force.actuator_depends_on_state)
    return callable(getattr(force, "value", None))


def input_width(force) -> int:
    """Columns of ``u`` a force's value takes: 3 for a load vector, else 1."""
    return 3 if getattr(force, "element_kind", None) in ("point_load",
                                                         "distributed_load") else 1


@dataclass(frozen=True)
class Field:
    """One table field: its name (``s_mark``: header row ``T_S_MARK``), its buffer and
    its shape and meaning, as the kernels read it."""

    name: str
    buffer: str
    doc: str

    def __post_init__(self):
        if self.buffer not in (FLOAT, INT, SCALAR):
            raise ValueError(f"field {self.name!r}: buffer {self.buffer!r} is not one of "
                             f"{FLOAT!r}, {INT!r}, {SCALAR!r}")


@dataclass(frozen=True, eq=False)
class CaseForm:
    """How a force kind is written as a ``[[forces]]`` entry of a case file
    (docs/case_files.md): its ``type``, the class of its declaration, and which case key
    gives which keyword of that class (``{"i": "marker_i", "stiffness": "stiffness"}``);
    the ``required`` keys are marker names. The case reader passes the values as they
    were written and the declaration checks them: a
    :class:`~flexmbs.errors.FieldError` it raises is reported against the case key."""

    type: str
    declaration: type
    keys: dict[str, str]
    required: tuple[str, ...] = ()

    def __post_init__(self):
        missing = [k for k in self.required if k not in self.keys]
        if missing:
            raise ValueError(f"case form {self.type!r}: required keys {missing} are not "
                             f"among its keys {sorted(self.keys)}")
        reserved = sorted({"name", "type"} & set(self.keys))
        if reserved:
            raise ValueError(f"case form {self.type!r}: {reserved} are every entry's own "
                             f"keys, not a kind's")


@dataclass(frozen=True)
class KindTables:
    """The table declaration of one element kind.

    ``build(system, context)`` returns the kind's arrays by field name (every field,
    with zero rows when the model has none of the kind); ``context`` is the
    :class:`TableContext` of the model being compiled. ``claims(force)`` says whether a
    force of the model is this kind's, and ``refusal(force)`` why the kernels cannot
    evaluate it (None: they can), e.g. a state-dependent callable. Kinds that are not
    forces (bodies, constraints) leave both at their defaults."""

    kind: str
    fields: tuple[Field, ...]
    build: Callable[[Any, TableContext], dict[str, Any]]
    claims: Callable[[Any], bool] = field(default=lambda force: False)
    refusal: Callable[[Any], str | None] = field(default=lambda force: None)
    #: The kind's own workspace buffers (:class:`~flexmbs.compiled.workspace.Scratch`),
    #: after the core ones; a kernel finds their header rows with ``registry.work_rows``.
    scratch: tuple[Scratch, ...] = ()
    #: How a force of the kind is written in a case file (None: read by hand in
    #: ``flexmbs.cases.loader``, or not a force).
    case_form: CaseForm | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


class TableContext:
    """What the kinds share while one model is compiled: the padded mode count, the
    flexible-body rows, the markers and the marker pairs that couple two bodies.

    Markers are numbered in the order they are added: the constraint plan's first (its
    own marker numbering), then those of the force kinds."""

    def __init__(self, system, forces_by_kind: dict[str, list], inputs: list):
        self.system = system
        self.forces_by_kind = forces_by_kind
        self._inputs, self.input_state = {}, []
        for f in inputs:  # the columns of u: one per scalar input, three per load vector
            self._inputs[id(f)] = len(self.input_state)
            self.input_state.extend([int(input_is_callable(f))] * input_width(f))
        #: Bodies whose rows a state-dependent callable's tangents fill across all of q.
        self.full_rows: set[int] = set()
        #: The arrays built so far, by field name (later kinds may read earlier ones).
        self.arrays: dict[str, Any] = {}
        bodies = system.bodies
        self.modes = [getattr(b, "n_modes", 0) for b in bodies]
        #: Padded mode count M ≥ 1 of the flexible tables.
        self.big_m = max([1, *self.modes])
        #: Body index of each flexible body, in flexible-table row order.
        self.flexible = [k for k, b in enumerate(bodies) if hasattr(b, "data")]
        self.marker_body: list[int] = []
        self.marker_base: list[np.ndarray] = []
        self.marker_shapes: list[np.ndarray] = []
        self.marker_psi: list[np.ndarray] = []
        self.marker_phi: list[np.ndarray] = []
        #: Marker pairs (i, j) whose bodies a kind couples (the iteration matrix's pattern).
        self.pairs: list[tuple[int, int]] = []

    def forces(self, kind: str) -> list:
        """The model's forces of ``kind``, in model order."""
        return self.forces_by_kind.get(kind, [])

    def input_column(self, force) -> int:
        """The (first) column of ``force``'s value in the kernels' ``u``: a time profile's
        or a state-dependent callable's (−1: none)."""
        return self._inputs.get(id(force), -1)

    def callable_rows(self, force, *markers: str) -> None:
        """Record that ``force`` (at ``markers``) fills its bodies' rows across all of q
        when its value is a state-dependent callable (the iteration matrix's pattern)."""
        if input_is_callable(force):
            for name in markers:
                b = self.system.marker_body_index(name)
                if b >= 0:
                    self.full_rows.add(int(b))

    def add_marker(self, body_index: int, base, shapes, psi=None, phi=None) -> int:
        """Add a marker (body index, −1 for ground; point and axes ``base`` (4, 3) at ξ = 0
        in body axes; their ξ-derivatives ``shapes`` (4, 3, n); the rotational and
        translational shapes ``psi``, ``phi`` (3, n) of its torque and force Jacobians)
        and return its number."""
        m = self.big_m
        pad = np.zeros((4, 3, m))
        pad[..., :shapes.shape[2]] = shapes
        ps, ph = np.zeros((3, m)), np.zeros((3, m))
        if psi is not None:
            ps[:, :psi.shape[1]] = psi
        if phi is not None:
            ph[:, :phi.shape[1]] = phi
        self.marker_body.append(int(body_index))
        self.marker_base.append(np.asarray(base, dtype=float))
        self.marker_shapes.append(pad)
        self.marker_psi.append(ps)
        self.marker_phi.append(ph)
        return len(self.marker_body) - 1

    def load_marker(self, name: str) -> int:
        """Add the model marker ``name`` ("body.marker") with the shapes of its force and
        torque Jacobians (what a force applied at it needs) and return its number."""
        system = self.system
        body, marker, _ = system.marker_info(name)
        base, shapes = body.marker_shapes(marker)
        psi, phi = body.jacobian_shapes(marker)
        return self.add_marker(system.marker_body_index(name), base, shapes, psi, phi)

    def couple(self, marks) -> np.ndarray:
        """Record marker pairs (rows (i, j) of ``marks``) whose two bodies a kind couples
        and return them as an (n, 2) int64 array."""
        marks = np.asarray(marks, dtype=np.int64).reshape(-1, 2)
        self.pairs.extend((int(i), int(j)) for i, j in marks)
        return marks
