"""Fuzzed data files (issue 36): the shipped modal data files and a short results file
with one dataset or attribute mutated — deleted, reshaped, given another dtype, filled
with NaN or ±inf, emptied, or a dimension cut or padded — opened through the command line
(``flexmbs modes``, ``flexmbs plot``) in-process; and Matrix Market files with a line
mutated, reduced with ``flexmbs reduce``. Each is either read or refused with exit 2 and
a message naming the file, never a traceback, never exit 1, and the input stays as it was.

The default suite runs 60 examples per property, the same ones at every run; the tests
marked ``long`` several thousand drawn at random (tests/fuzzing.py).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from cli_runner import run_cli  # tests/cli_runner.py
from fuzzing import fuzz_pair  # tests/fuzzing.py
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
MODAL_FILES = ("seed_tip_beam.fmd.h5", "steel_cantilever.fmd.h5")
EXAMPLES = 60
KINDS = ("delete", "nan", "inf", "transpose", "int-dtype", "text", "empty", "cut", "pad",
         "scalar", "negative")



def _datasets(path) -> list[str]:
    names = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    return sorted(names)


def _mutated(data: np.ndarray, kind: str):
    if kind == "nan":
        return np.full(data.shape, np.nan) if data.dtype.kind in "fiu" else None
    if kind == "inf":
        return np.full(data.shape, np.inf) if data.dtype.kind in "fiu" else None
    if kind == "transpose":
        if data.ndim == 0:  # (a scalar, as the JSON header of a modal file)
            return None
        return data.T.copy() if data.ndim == 2 else data[::-1].copy()
    if kind == "int-dtype":
        return data.astype(np.int64) if data.dtype.kind == "f" else None
    if kind == "text":
        return np.array([b"oops"] * max(1, data.size))
    if kind == "empty":
        return np.zeros((0, *data.shape[1:]), dtype=data.dtype)
    if kind == "cut":
        return data[:-1].copy() if data.shape and data.shape[0] > 1 else None
    if kind == "pad":
        return np.concatenate([data, data[:1]]) if data.shape and data.shape[0] else None
    if kind == "scalar":
        return np.array(data.ravel()[0]) if data.size else None
    if kind == "negative":
        return -np.abs(data) if data.dtype.kind in "fi" else None
    raise AssertionError(kind)


def _edit(path: Path, name: str, kind: str) -> bool:
    """Apply the mutation; False when it does not apply to that dataset."""
    with h5py.File(path, "a") as f:
        if kind == "delete":
            del f[name]
        else:
            new = _mutated(np.asarray(f[name][()]), kind)
            if new is None:
                return False
            del f[name]
            f[name] = new
        if "checksum" in f.attrs:  # as a file written by other tools would have none
            del f.attrs["checksum"]
    return True


def _digest(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()
            if p.is_file()}


def _assert_read_or_refused(code, output, where, file_name, dataset=None):
    """Read (exit 0) or refused (exit 2) with a first line that names the file and, for a
    mutated dataset, a part of its path or the ModalData field a check found wrong."""
    assert "Traceback" not in output, f"{where}\n{output}"
    assert code in (0, 2), f"{where}: exit {code}\n{output}"
    if code == 2:
        first = output.strip().splitlines()[0]
        assert file_name in first, f"{where}: the first line does not name the file\n{output}"
        if dataset is not None:
            assert "ModalData." in first or any(part in first for part in dataset.split("/")), \
                f"{where}: the first line names neither the dataset nor a field\n{output}"


def _modal_data_file_is_read_or_refused(data, tmp_path_factory):
    name = data.draw(st.sampled_from(MODAL_FILES))
    folder = tmp_path_factory.mktemp("modal")
    path = folder / name
    shutil.copy(ROOT / "modal_data" / name, path)
    dataset = data.draw(st.sampled_from(_datasets(path)))
    kind = data.draw(st.sampled_from(KINDS))
    if not _edit(path, dataset, kind):
        return
    before = _digest(folder)
    code, output = run_cli(["modes", str(path)])
    _assert_read_or_refused(code, output, f"{name}: {kind} of {dataset}", name, dataset)
    assert _digest(folder) == before, "the input changed or an output was written"


(test_a_mutated_modal_data_file_is_read_or_refused,
 test_thousands_of_mutated_modal_data_files_are_read_or_refused) = fuzz_pair(
    _modal_data_file_is_read_or_refused, EXAMPLES, data=st.data())


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    from flexmbs.cases import load_case, run_case

    case = load_case(ROOT / "cases" / "cantilever_release.toml", {"solver.t_end": 0.003})
    _, result = run_case(case)
    path = tmp_path_factory.mktemp("results") / "r.res.h5"
    result.save(path)
    return path


def _results_file_is_read_or_refused(data, results_file, tmp_path_factory):
    folder = tmp_path_factory.mktemp("res")
    path = folder / "r.res.h5"
    shutil.copy(results_file, path)
    dataset = data.draw(st.sampled_from(_datasets(path)))
    kind = data.draw(st.sampled_from(KINDS))
    if not _edit(path, dataset, kind):
        return
    what = data.draw(st.sampled_from(["energy", "modal", "constraints"]))
    before = _digest(folder)
    out = tmp_path_factory.mktemp("plots") / "p.png"
    code, output = run_cli(["plot", str(path), what, "-o", str(out)])
    _assert_read_or_refused(code, output, f"r.res.h5: {kind} of {dataset} ({what})",
                            "r.res.h5", dataset)
    assert _digest(folder) == before, "the results file changed"


(test_a_mutated_results_file_is_read_or_refused,
 test_thousands_of_mutated_results_files_are_read_or_refused) = fuzz_pair(
    _results_file_is_read_or_refused, EXAMPLES, data=st.data())


LINE_KINDS = ("delete", "junk", "nan", "huge-index", "zero-index", "three-fields",
              "duplicate", "negative-diagonal")


@pytest.fixture(scope="module")
def matrix_files(tmp_path_factory):
    import scipy.io
    import scipy.sparse as sp

    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam

    folder = tmp_path_factory.mktemp("fe")
    beam = straight_beam(1.0, 6, BeamSection.rectangle(0.02, 0.01), Material.steel())
    scipy.io.mmwrite(str(folder / "M.mtx"), sp.coo_matrix(beam.mass), symmetry="symmetric")
    scipy.io.mmwrite(str(folder / "K.mtx"), sp.coo_matrix(beam.stiffness),
                     symmetry="symmetric")
    np.savetxt(folder / "nodes.csv", np.column_stack([beam.node_ids, beam.nodes]),
               delimiter=",", header="id,x,y,z", comments="")
    return folder


def _matrix_market_file_is_reduced_or_refused(data, matrix_files, tmp_path_factory):
    folder = tmp_path_factory.mktemp("mm")
    for file in matrix_files.iterdir():
        shutil.copy(file, folder / file.name)
    target = data.draw(st.sampled_from(["M.mtx", "K.mtx"]))
    lines = (folder / target).read_text().splitlines()
    first = next(k for k, line in enumerate(lines) if not line.startswith("%")) + 1
    k = data.draw(st.integers(first, len(lines) - 1))
    kind = data.draw(st.sampled_from(LINE_KINDS))
    fields = lines[k].split()
    if kind == "delete":
        del lines[k]
    elif kind == "junk":
        lines[k] = "this line is junk"
    elif kind == "nan":
        lines[k] = " ".join([*fields[:2], "nan"])
    elif kind == "huge-index":
        lines[k] = " ".join(["100000", *fields[1:]])
    elif kind == "zero-index":
        lines[k] = " ".join(["0", *fields[1:]])
    elif kind == "three-fields":
        lines[k] = " ".join(fields[:2])
    elif kind == "duplicate":
        lines.insert(k, lines[k])
    elif fields[0] == fields[1]:  # a negative diagonal entry
        lines[k] = " ".join([*fields[:2], "-1e9"])
    (folder / target).write_text("\n".join(lines) + "\n")
    out = tmp_path_factory.mktemp("out") / "part.fmd.h5"
    before = _digest(folder)
    code, output = run_cli(["reduce", "--mass", str(folder / "M.mtx"), "--stiffness",
                            str(folder / "K.mtx"), "--nodes", str(folder / "nodes.csv"),
                            "--clamp-nodes", "1", "--modes", "3", "-o", str(out)])
    _assert_read_or_refused(code, output, f"{target}: {kind} at line {k + 1}", target)
    if code == 2 and kind in ("junk", "nan", "zero-index", "three-fields"):
        assert f"line {k + 1}" in output.splitlines()[0], output  # the line, and its text
    assert _digest(folder) == before, "an input changed"


(test_a_mutated_matrix_market_file_is_reduced_or_refused,
 test_thousands_of_mutated_matrix_market_files_are_reduced_or_refused) = fuzz_pair(
    _matrix_market_file_is_reduced_or_refused, EXAMPLES, data=st.data())
