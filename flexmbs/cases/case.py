"""A loaded case file and the errors that name what is wrong in one (the parser is
:mod:`flexmbs.cases.loader`, the run :mod:`flexmbs.cases.run`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..integrators.options import SolverOptions


class CaseError(ModelError):
    """A case file is malformed; the message names the file, table, entry and key."""


class CaseKeyError(CaseError):
    """A key that no case can have: unknown in its table, or an override naming a table
    or entry that is not there (whatever its value; studies refuse it before any run)."""


@dataclass
class Case:
    """A loaded case: the model, solver settings and where results go."""

    path: Path
    model: Any
    solver: SolverOptions
    output: Path
    title: str = ""
    notes: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    """The files the case reads: the case file and its modal data files."""
    source: dict = field(default_factory=dict)
    """What the run was made from, stored with its results: ``path``, ``text`` (the case
    file as read) and ``overrides`` (dotted keys applied over it)."""
    controllers: list = field(default_factory=list)
    """Sampled controllers of ``[[controllers]]`` (docs/cosimulation.md)."""
    signals: dict = field(default_factory=dict)
    """The model inputs the controllers drive (name → InputSignal)."""
