"""Outputs are checked before a run, written atomically, and verified when read
(flexmbs._files; issue classes "output checked too late" and "non-atomic writes").

Each check compares with something outside the code under test: the files' own bytes
(hashes before and after), the process exit code and message, the folder listing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import h5py
import numpy as np
import pytest

from flexmbs.cli.main import main
from flexmbs.errors import ReadError
from flexmbs.integrators import SimulationResult
from flexmbs.modal import read_modal, write_modal

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"


def digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def case_copy(tmp_path):
    """The cantilever case and its modal data in a scratch folder (inputs we may try to
    overwrite without touching the repository)."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "modal_data").mkdir()
    shutil.copy(CASES / "cantilever_release.toml", tmp_path / "cases")
    shutil.copy(ROOT / "modal_data" / "steel_cantilever.fmd.h5", tmp_path / "modal_data")
    return tmp_path / "cases" / "cantilever_release.toml"


@pytest.mark.parametrize("target, message", [
    ("folder", "it is a folder"),
    ("case", "it is an input of this run"),
    ("modal", "it is an input of this run"),
    ("missing", "does not exist"),
    ("proc", "is not writable"),
    ("fifo", "it is not a regular file (a device, pipe or socket)"),
])
def test_bad_outputs_are_refused_before_the_run(case_copy, tmp_path, capsys, target,
                                                message):
    """Exit 2 with the path named, no run (no results file anywhere), inputs unchanged."""
    modal = tmp_path / "modal_data" / "steel_cantilever.fmd.h5"
    before = {p: digest(p) for p in (case_copy, modal)}
    out = {"folder": tmp_path, "case": case_copy, "modal": modal,
           "missing": tmp_path / "nowhere" / "r.res.h5",
           "proc": Path("/proc/flexmbs_test.res.h5"),
           "fifo": tmp_path / "pipe.res.h5"}[target]
    if target == "fifo":  # (as /dev/null is: a run as root replaced it by a file)
        os.mkfifo(out)
    code = main(["run", str(case_copy), "-o", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and str(out) in err
    assert "Traceback" not in err
    assert {p: digest(p) for p in before} == before
    assert not [p for p in tmp_path.rglob("*.res.h5") if p.is_file()]
    if target == "fifo":
        assert stat.S_ISFIFO(os.stat(out).st_mode)


def test_a_symbolic_link_is_written_through(tmp_path):
    """A results file named by a symbolic link: its target gets the new run and the link
    stays (renaming over the link would leave the target with the old run)."""
    target = short_result(tmp_path)
    old = digest(target)
    link = tmp_path / "latest.res.h5"
    link.symlink_to(target.name)
    assert main(["run", str(CASES / "seed_pendulum.toml"), "-o", str(link), "--quiet",
                 "--set", "solver.t_end=0.08"]) == 0
    assert link.is_symlink() and digest(target) != old
    assert SimulationResult.load(target).t[-1] == pytest.approx(0.08)


@pytest.mark.parametrize("command", [["plot", "{r}", "energy", "-o", "{out}"],
                                     ["snapshot", "{r}", "--times", "0.02", "-o", "{out}"]])
def test_an_output_that_is_a_folder_is_refused_by_name(tmp_path, capsys, command):
    """Before: a bare IsADirectoryError naming the temporary file, exit 1."""
    result = short_result(tmp_path)
    folder = tmp_path / "figure.png"
    folder.mkdir()
    argv = [a.format(r=result, out=folder) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "it is a folder" in err and str(folder) in err and "Traceback" not in err


def short_result(tmp_path):
    path = tmp_path / "r.res.h5"
    assert main(["run", str(CASES / "seed_pendulum.toml"), "-o", str(path), "--quiet",
                 "--set", "solver.t_end=0.05"]) == 0
    return path


def test_a_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    """A write that fails half way (here: after the first datasets) leaves the previous
    results file byte for byte, and no temporary file behind."""
    path = short_result(tmp_path)
    before = digest(path)
    result = SimulationResult.load(path)
    calls = {"n": 0}
    original = h5py.Group.create_dataset

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError("disk full (simulated)")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(h5py.Group, "create_dataset", failing)
    with pytest.raises(OSError, match="disk full"):
        result.save(path)
    monkeypatch.undo()
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.res.h5"]
    np.testing.assert_array_equal(SimulationResult.load(path).q, result.q)


def corrupt(path, seed=0, count=5000):
    """Overwrite ``count`` bytes in the middle of the file with random bytes."""
    data = bytearray(Path(path).read_bytes())
    rng = np.random.default_rng(seed)
    start = len(data) // 2 - count // 2
    data[start:start + count] = rng.integers(0, 256, count, dtype=np.uint8).tobytes()
    Path(path).write_bytes(bytes(data))


def test_a_damaged_results_file_is_refused_by_name(tmp_path, capsys):
    path = short_result(tmp_path)
    corrupt(path)
    with pytest.raises(ReadError, match=str(path)):
        SimulationResult.load(path)
    code = main(["plot", str(path), "energy", "-o", str(tmp_path / "p.png")])
    assert code == 2 and str(path) in capsys.readouterr().err


def test_a_damaged_modal_data_file_is_refused_by_name(tmp_path):
    data = read_modal(ROOT / "modal_data" / "steel_cantilever.fmd.h5")
    path = tmp_path / "beam.fmd.h5"
    write_modal(data, path)
    read_modal(path)  # sealed and readable
    with h5py.File(path, "r+") as f:  # one changed number, file structure intact
        f["K_ff"][0, 0] = 1.0001 * f["K_ff"][0, 0]
    with pytest.raises(ReadError, match="damaged"):
        read_modal(path)
    corrupt(path)
    with pytest.raises(ReadError, match=str(path)):
        read_modal(path)


def test_a_damaged_modal_file_says_so_before_what_its_contents_break(tmp_path):
    """A change that also breaks the data (a stiffness matrix of one mode too few) is
    reported as the damaged file it is (the checksum is compared before the data are
    made), and the arrays of a file read whole are the reader's to change."""
    data = read_modal(ROOT / "modal_data" / "steel_cantilever.fmd.h5")
    path = tmp_path / "beam.fmd.h5"
    write_modal(data, path)
    back = read_modal(path)
    assert back.phi.flags.writeable and back.nodes.flags.writeable
    with h5py.File(path, "r+") as f:  # K_ff of one mode too few: refused when made
        k_ff = f["K_ff"][()]
        del f["K_ff"]
        f["K_ff"] = k_ff[1:, 1:]
    with pytest.raises(ReadError, match="damaged: its contents do not match"):
        read_modal(path)


def test_files_written_before_checksums_still_load(tmp_path):
    """Files without the checksum attribute (written before it existed: a modal data file
    or a results file stripped of it) load as before."""
    modal = tmp_path / "old.fmd.h5"
    shutil.copyfile(ROOT / "modal_data" / "steel_cantilever.fmd.h5", modal)
    with h5py.File(modal, "a") as f:
        if "checksum" in f.attrs:
            del f.attrs["checksum"]
    assert read_modal(modal).n_modes == 20
    path = short_result(tmp_path)
    with h5py.File(path, "a") as f:
        del f.attrs["checksum"]
    assert SimulationResult.load(path).q.size


# ------------------------------------------------------------- every other output file
def tree(folder) -> dict[str, str]:
    """Every file below ``folder`` (hidden ones included) with its SHA-256."""
    return {str(p.relative_to(folder)): digest(p) for p in sorted(Path(folder).rglob("*"))
            if p.is_file()}


class Interrupted(RuntimeError):
    """The failure injected half way through a write."""


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The shipped cantilever released from 1 mm, 0.02 s: a result with a flexible body."""
    from flexmbs.cases import load_case, run_case

    case = load_case(CASES / "cantilever_release.toml",
                     {"solver.t_end": 0.02, "solver.output_every": 5})
    _, result = run_case(case)
    return result


def _half_then_fail(original):
    """Wrap a writer: do part of the work on the real file, then raise."""
    def write(self, data, *args, **kwargs):
        original(self, data[: len(data) // 2], *args, **kwargs)
        raise Interrupted("disk full (simulated)")
    return write


def _plot(out, attempt, monkeypatch):
    import matplotlib.pyplot as plt

    from flexmbs.post.plots import save_figure

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, attempt])
    if attempt == 1:
        original = fig.savefig

        def savefig(path, **kwargs):
            original(path, **kwargs)
            Path(path).write_bytes(Path(path).read_bytes()[:100])
            raise Interrupted("killed while saving")
        monkeypatch.setattr(fig, "savefig", savefig)
    try:
        save_figure(fig, out / "history.png")
    finally:
        plt.close(fig)


def _animation(out, attempt, monkeypatch):
    from flexmbs.post.animate import write_video

    def frames():
        for k in range(4):
            if attempt == 1 and k == 2:
                raise Interrupted("renderer stopped")
            yield np.full((16, 16, 3), 40 * k + 10 * attempt, dtype=np.uint8)
    write_video(frames(), out / "movie.gif", fps=5)


def _export(suffix):
    def write(out, attempt, monkeypatch, released):
        from flexmbs.post.export import export

        def progress(done, total):
            if attempt == 1 and done == 2:
                raise Interrupted("Ctrl-C during the export")
        export(released, out / f"scene{suffix}", progress=progress, every=1 + attempt)
    write.needs_result = True
    return write


def _vtu(out, attempt, monkeypatch):
    from conftest import make_modal_kwargs

    from flexmbs.modal import ModalData
    from flexmbs.modal.io import vtu

    data = ModalData(**make_modal_kwargs(lumped=attempt != 2, seed=attempt))
    if attempt == 1:
        def dumps(*args, **kwargs):
            raise Interrupted("sidecar could not be written")
        monkeypatch.setattr(vtu.json, "dumps", dumps)
    write_modal(data, out / "part.vtu")


def _text_writer(write_one):
    def write(out, attempt, monkeypatch):
        if attempt == 1:
            monkeypatch.setattr(Path, "write_text", _half_then_fail(Path.write_text))
        write_one(out, attempt)
    return write


def _mbdyn(out, attempt):
    from conftest import make_modal_kwargs

    from flexmbs.modal import ModalData

    write_modal(ModalData(**make_modal_kwargs(seed=attempt)), out / "part.fem")


def _abaqus(out, attempt):
    from flexmbs.modal.io.fe_matrices import write_abaqus_matrix

    write_abaqus_matrix(np.diag([1.0, 2.0, 3.0 + attempt]), out / "K.mtx.txt", [1], 3)


def _csv(out, attempt, monkeypatch):
    from flexmbs.studies.tables import write_csv

    class Bad:
        def __str__(self):
            raise Interrupted("a value that cannot be written")
    rows = [{"a": k, "b": 2.0 * k + attempt} for k in range(50)]
    if attempt == 1:
        rows[30]["b"] = Bad()
    write_csv(rows, out / "table.csv")


WRITERS = {"plot": _plot, "animation": _animation, "export.pvd": _export(".pvd"),
           "export.xdmf": _export(".xdmf"), "modal.vtu": _vtu,
           "modal.fem": _text_writer(_mbdyn), "abaqus matrix": _text_writer(_abaqus),
           "study table": _csv}


@pytest.mark.parametrize("name", list(WRITERS))
def test_every_output_is_replaced_only_when_complete(name, tmp_path, monkeypatch,
                                                      released):
    """Each writer of the package, made to fail half way through a second write (of
    different contents), leaves the folder exactly as the first write left it: the
    same files byte for byte, nothing half written, no temporary file. A second write
    that completes replaces the first one's files."""
    writer = WRITERS[name]
    extra = (released,) if getattr(writer, "needs_result", False) else ()
    writer(tmp_path, 0, monkeypatch, *extra)
    first = tree(tmp_path)
    assert first, "the first write wrote nothing"
    with pytest.raises(Interrupted):
        writer(tmp_path, 1, monkeypatch, *extra)
    monkeypatch.undo()
    assert tree(tmp_path) == first
    # a complete second write does replace them (so the check above can fail)
    writer(tmp_path, 2, monkeypatch, *extra)
    second = tree(tmp_path)
    assert second != first
    assert not [f for f in second if ".part" in f or f.startswith(".")]


def test_checksums_do_not_depend_on_the_numpy_version(tmp_path):
    """NumPy 2 prints scalars as np.float64(1.5), NumPy 1 as 1.5: the checksum takes an
    attribute's dtype and bytes instead of its repr; files sealed the first way (repr
    under this NumPy) still verify, a changed one does not."""
    from flexmbs._files import _attr_bytes, hdf5_digest, verify_hdf5

    assert _attr_bytes(np.float64(1.5)) == b"<f8()" + np.float64(1.5).tobytes()
    assert _attr_bytes(np.int64(7)) == b"<i8()" + np.int64(7).tobytes()
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.attrs["n"] = np.int64(7)
        f.create_dataset("x", data=np.arange(3.0))
        f.attrs["checksum"] = hdf5_digest(f, legacy=True)  # sealed the first way
    with h5py.File(path, "r") as f:
        verify_hdf5(f, path, "file")
    with h5py.File(path, "a") as f:
        f.attrs["n"] = np.int64(8)
    with h5py.File(path, "r") as f, pytest.raises(ReadError, match="damaged"):
        verify_hdf5(f, path, "file")


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_files_written_atomically_get_the_permissions_of_a_new_file(tmp_path, umask):
    """The temporary file behind an atomic write is made owner-only by the OS; what is
    renamed into place has the permissions ``open`` gives a new file (0o666 less the
    umask), or those of the file it replaces: results and modal files stay readable by
    whoever may read the folder."""
    import os
    import stat

    from conftest import make_modal_kwargs

    from flexmbs._files import write_text
    from flexmbs.modal import ModalData

    old = os.umask(umask)
    try:
        fresh = write_text(tmp_path / "fresh.txt", "x")
        with open(tmp_path / "by_open.txt", "w") as handle:
            handle.write("x")
        modal = write_modal(ModalData(**make_modal_kwargs()), tmp_path / "body.fmd.h5")
    finally:
        os.umask(old)
    expected = stat.S_IMODE((tmp_path / "by_open.txt").stat().st_mode)
    assert expected == 0o666 & ~umask
    assert stat.S_IMODE(fresh.stat().st_mode) == expected
    assert stat.S_IMODE(modal.stat().st_mode) == expected
    os.chmod(fresh, 0o640)
    write_text(fresh, "y")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640  # a replaced file keeps its own


def test_sigterm_while_writing_removes_what_was_staged(tmp_path, monkeypatch, capsys):
    """SIGTERM outside a run's steps is an interruption (flexmbs.cli.main.Terminated,
    raised by the command's own SIGTERM handler): a plot interrupted while its file is
    being written leaves neither the file nor its staged part, and exits 143. (Before,
    SIGTERM killed the process where it stood: hidden staging files stayed behind.)"""
    import matplotlib.figure

    from flexmbs.cli.main import Terminated

    result = short_result(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())

    def killed_half_way(self, path, *args, **kwargs):
        Path(path).write_bytes(b"\x89PNG half")
        raise Terminated()

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", killed_half_way)
    assert main(["plot", str(result), "energy", "-o", str(tmp_path / "e.png")]) == 143
    assert "terminated (SIGTERM)" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_command_turns_sigterm_into_an_interruption():
    """The console script's process: SIGTERM raises Terminated where it arrives, also
    before the command runs (while its modules are imported): exit 143 and a message,
    not a traceback."""
    import subprocess
    import sys

    code = ("import os, signal, sys\n"
            "from flexmbs.cli import main as m\n"
            "m.main = lambda settle=False: (os.kill(os.getpid(), signal.SIGTERM), 0)[1]\n"
            "m.entry()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 143 and done.stderr.strip() == "flexmbs: terminated (SIGTERM)"


def test_an_export_over_a_symbolic_link_is_refused_before_it_writes(tmp_path, capsys):
    """A ParaView export is a .pvd and its VTU folder side by side: written through a
    link, the .pvd landed in the link target's folder and its VTUs beside the link (or,
    across file systems, failed half way with a bare OSError)."""
    result = short_result(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "real.pvd").write_text("old")
    link = tmp_path / "link.pvd"
    link.symlink_to(tmp_path / "other" / "real.pvd")
    assert main(["export", str(result), "-o", str(link)]) == 2
    err = capsys.readouterr().err
    assert "is a symbolic link" in err and "Traceback" not in err
    assert (tmp_path / "other" / "real.pvd").read_text() == "old"
    assert not (tmp_path / "link_vtu").exists() and link.is_symlink()
