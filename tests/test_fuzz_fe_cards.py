"""Fuzzed FE files of the commercial codes' formats (issue 36): an Abaqus part (``*MATRIX
OUTPUT`` text of the mass and stiffness with its ``.inp`` nodes and node set) reduced
with ``flexmbs reduce``, and a real MSC Nastran external superelement (the EXTSEOUT punch
with BEGIN SUPER, CORD2R, EXTRN, ASET/QSET1, SPOINT and GRID cards, and its OP4 of KAA and
MAA; tests/data/nastran_extse) read with ``flexmbs modes``, each with one line mutated:
deleted, duplicated, cut short, turned to junk, or one field replaced by text, NaN, a
huge or negative number, a blank or another card's name. Each is either read or refused
with exit 2 and a message naming the file, never a traceback, never exit 1, and the
inputs stay as they were.

The default suite runs 60 examples per property; the tests marked ``long`` several
thousand (tests/fuzzing.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_cli  # tests/cli_runner.py
from fuzzing import fuzz_pair  # tests/fuzzing.py
from hypothesis import strategies as st
from test_fuzz_files import _assert_read_or_refused, _digest

ROOT = Path(__file__).resolve().parents[1]
EXTSE = ROOT / "tests" / "data" / "nastran_extse"
EXAMPLES = 60
LINE_KINDS = ("delete", "duplicate", "cut", "junk", "text", "nan", "huge", "negative",
              "blank", "card-name")


def _mutate_line(line: str, kind: str, field: int, separator: str) -> list[str]:
    """The line(s) that replace ``line`` under mutation ``kind``; ``field`` picks the
    field of the field mutations (fields split at ``separator``: "," for Abaqus, the
    8-character columns for Nastran's small field, whitespace for OP4 numbers)."""
    if kind == "delete":
        return []
    if kind == "duplicate":
        return [line, line]
    if kind == "cut":
        return [line[:max(1, len(line) // 2)]]
    if kind == "junk":
        return ["this line is junk"]
    if separator == "columns":
        fields = [line[k:k + 8] for k in range(0, max(len(line), 8), 8)]
        join = "".join
        width = 8
    elif separator == "space":
        fields, join, width = line.split(), " ".join, None
    else:
        fields, join, width = line.split(separator), separator.join, None
    k = field % len(fields)
    new = {"text": "oops", "nan": "nan", "huge": "1e300", "negative": "-7",
           "blank": "", "card-name": "GRID"}[kind]
    fields[k] = new.ljust(width)[:width] if width else new
    return [join(fields)]


# ----------------------------------------------------------------------------- Abaqus
@pytest.fixture(scope="module")
def abaqus_part(tmp_path_factory):
    """A 7-node steel beam (6 DOF per node) as Abaqus writes it: lower-triangle
    ``*MATRIX OUTPUT`` text (node, DOF, node, DOF, value) and an input file with
    ``*NODE``, ``*NSET`` and ``*ELEMENT`` blocks."""
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.io.abaqus import write_abaqus_matrix

    folder = tmp_path_factory.mktemp("abaqus")
    beam = straight_beam(1.0, 6, BeamSection.rectangle(0.02, 0.01), Material.steel())
    ids = np.arange(1, len(beam.node_ids) + 1)
    write_abaqus_matrix(beam.mass, folder / "part_MASS1.mtx", ids, 6)
    write_abaqus_matrix(beam.stiffness, folder / "part_STIF1.mtx", ids, 6)
    lines = ["*HEADING", "fuzzed part", "*NODE, NSET=NALL"]
    lines += [f"{i}, {x!r}, {y!r}, {z!r}" for i, (x, y, z) in
              zip(ids.tolist(), beam.nodes.tolist(), strict=True)]
    lines += ["*NSET, NSET=ROOT", "1", "*ELEMENT, TYPE=B31, ELSET=BEAM"]
    lines += [f"{e + 1}, {e + 1}, {e + 2}" for e in range(len(ids) - 1)]
    (folder / "part.inp").write_text("\n".join(lines) + "\n")
    return folder


def _reduce_abaqus(folder: Path, out: Path) -> tuple[int, str]:
    return run_cli(["reduce", "--mass", str(folder / "part_MASS1.mtx"), "--stiffness",
                    str(folder / "part_STIF1.mtx"), "--nodes", str(folder / "part.inp"),
                    "--input-format", "abaqus", "--clamp-nodes", "1", "--modes", "3",
                    "-o", str(out)])


def test_the_unmutated_abaqus_part_reduces(abaqus_part, tmp_path):
    code, output = _reduce_abaqus(abaqus_part, tmp_path / "part.fmd.h5")
    assert code == 0, output


def _abaqus_part_is_reduced_or_refused(data, abaqus_part, tmp_path_factory):
    folder = tmp_path_factory.mktemp("abq")
    for file in abaqus_part.iterdir():
        shutil.copy(file, folder / file.name)
    target = data.draw(st.sampled_from(["part_MASS1.mtx", "part_STIF1.mtx", "part.inp"]))
    lines = (folder / target).read_text().splitlines()
    k = data.draw(st.integers(0, len(lines) - 1))
    kind = data.draw(st.sampled_from(LINE_KINDS))
    field = data.draw(st.integers(0, 4))
    lines[k:k + 1] = _mutate_line(lines[k], kind, field, ",")
    (folder / target).write_text("\n".join(lines) + "\n")
    before = _digest(folder)
    code, output = _reduce_abaqus(folder, tmp_path_factory.mktemp("out") / "part.fmd.h5")
    where = f"{target}: {kind} (field {field}) at line {k + 1}"
    _assert_read_or_refused(code, output, where, "")
    if code == 2:  # the first line names the file changed (or the clamped nodes it broke)
        first = output.strip().splitlines()[0]
        assert target in first or "clamp" in first, \
            f"{where}: the first line does not name {target}\n{output}"
    assert _digest(folder) == before, "an input changed"


(test_a_mutated_abaqus_part_is_reduced_or_refused,
 test_thousands_of_mutated_abaqus_parts_are_reduced_or_refused) = fuzz_pair(
    _abaqus_part_is_reduced_or_refused, EXAMPLES, data=st.data())


# ---------------------------------------------------------------------------- Nastran
def _nastran_superelement_is_read_or_refused(data, tmp_path_factory):
    pytest.importorskip("pyNastran", reason="Nastran OP4 matrices need pyNastran "
                                            "(the nastran extra)")
    folder = tmp_path_factory.mktemp("extse")
    for name in ("se_test_n11.pch", "se_test_n11.op4"):
        shutil.copy(EXTSE / name, folder / name)
    target = data.draw(st.sampled_from(["se_test_n11.pch", "se_test_n11.op4"]))
    lines = (folder / target).read_text().splitlines()
    if target.endswith(".pch"):  # the cards, not the comments
        k = data.draw(st.sampled_from([i for i, line in enumerate(lines)
                                       if not line.startswith("$")]))
        separator = "columns"
    else:
        k = data.draw(st.integers(0, len(lines) - 1))
        separator = "space"
    kind = data.draw(st.sampled_from(LINE_KINDS))
    field = data.draw(st.integers(0, 9))
    lines[k:k + 1] = _mutate_line(lines[k], kind, field, separator)
    (folder / target).write_text("\n".join(lines) + "\n")
    before = _digest(folder)
    code, output = run_cli(["modes", str(folder / "se_test_n11.pch")])
    where = f"{target}: {kind} (field {field}) at line {k + 1}"
    _assert_read_or_refused(code, output, where, "se_test_n11.")
    assert _digest(folder) == before, "an input changed or an output was written"


(test_a_mutated_nastran_superelement_is_read_or_refused,
 test_thousands_of_mutated_nastran_superelements_are_read_or_refused) = fuzz_pair(
    _nastran_superelement_is_read_or_refused, EXAMPLES, data=st.data())
