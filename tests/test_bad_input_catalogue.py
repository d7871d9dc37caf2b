"""The catalogue of bad inputs (issue 16): over a hundred things a hostile but realistic
user gives the command line — broken case files, modal data and FE matrix files,
reduction, beam and modes arguments, results files, studies, post-processing arguments
and contacts.

Every entry is run in-process (``flexmbs.cli.main.main``) in a scratch folder holding
copies of the shipped cases and modal data, and must

* exit with code 2 (bad input),
* print a message holding every expected fragment (the field or file and the bad
  value),
* print no traceback,
* leave every file of the scratch folder byte for byte as it was (SHA-256) and write no
  new one: the input is refused before any run, reduction or rendering starts.

Each case file is cut to a few milliseconds of simulated time, so that an input wrongly
accepted fails quickly (exit 0) instead of running the whole case.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from flexmbs.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
MODAL = ROOT / "modal_data"


# ------------------------------------------------------------------------ scratch files
def short(text: str) -> str:
    """A case's text with t_end cut to 4 ms (the first ``t_end =`` line)."""
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("t_end"):
            lines[k] = "t_end = 0.004"
            break
    return "\n".join(lines) + "\n"


PENDULUM = short((CASES / "seed_pendulum.toml").read_text())
CANTILEVER = short((CASES / "cantilever_release.toml").read_text())
BALL = short((CASES / "ball_drop.toml").read_text())
CLEARANCE = short((CASES / "slider_crank_clearance.toml").read_text())


@dataclass
class Work:
    """The scratch folder of one entry: ``cases/`` and ``modal_data/`` copies, results."""

    root: Path

    @property
    def cases(self) -> Path:
        return self.root / "cases"

    @property
    def modal(self) -> Path:
        return self.root / "modal_data" / "steel_cantilever.fmd.h5"

    @property
    def results(self) -> Path:
        return self.root / "r.res.h5"

    def case(self, text: str, name: str = "case.toml") -> Path:
        path = self.cases / name
        path.write_text(text)
        return path

    def run(self, text: str, *extra: str) -> list[str]:
        return ["run", str(self.case(text)), "-o", str(self.root / "out.res.h5"), "--quiet",
                *extra]

    def file(self, name: str, data: bytes | str) -> Path:
        path = self.root / name
        if isinstance(data, str):
            path.write_text(data)
        else:
            path.write_bytes(data)
        return path

    def results_edited(self, edit: Callable) -> Path:
        """A copy of the results with ``edit(h5file)`` applied (checksum dropped, as a
        file written by other tools or before checksums would have none)."""
        path = self.root / "edited.res.h5"
        shutil.copy(self.results, path)
        with h5py.File(path, "a") as f:
            edit(f)
            del f.attrs["checksum"]
        return path


def replace_dataset(f, name, data):
    del f[name]
    f[name] = data


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The inputs every entry starts from: cases, modal data, FE matrices, and one short
    results file of the cantilever (4 steps, computed once for the module)."""
    from flexmbs.cases import load_case, run_case
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
    from flexmbs.modal.fe.solid import box_mesh

    root = tmp_path_factory.mktemp("shipped")
    (root / "cases").mkdir()
    shutil.copytree(MODAL, root / "modal_data", ignore=shutil.ignore_patterns("*.py"))
    free_beam = sub(CANTILEVER, "xi = [0.001, 0.0, 0.0, 0.0]\n", "")  # any truncation
    for text, name in ((CANTILEVER, "cantilever.toml"), (PENDULUM, "pendulum.toml"),
                       (free_beam, "beam.toml")):
        (root / "cases" / name).write_text(text)
    case = load_case(root / "cases" / "cantilever.toml", {"solver.t_end": 0.0024})
    _, result = run_case(case, engine="python")
    result.save(root / "r.res.h5")

    fe_dir = root / "fe"
    fe_dir.mkdir()
    beam = straight_beam(1.0, 13, BeamSection.rectangle(0.02, 0.01), Material.steel())
    scipy.io.mmwrite(str(fe_dir / "M.mtx"), sp.coo_matrix(beam.mass), symmetry="symmetric")
    scipy.io.mmwrite(str(fe_dir / "K.mtx"), sp.coo_matrix(beam.stiffness),
                     symmetry="symmetric")
    np.savetxt(fe_dir / "nodes.csv", np.column_stack([beam.node_ids, beam.nodes]),
               delimiter=",", header="id,x,y,z", comments="")
    # the cantilever's results carry stress modes (the shipped steel cantilever has
    # them); the pendulum's none
    _, plain = run_case(load_case(root / "cases" / "pendulum.toml"), engine="python")
    plain.save(root / "plain.res.h5")
    _nastran_files(fe_dir, beam)
    solid = box_mesh(0.6, 0.1, 0.1, 6, 1, 1, E=70e9, nu=0.3, rho=2700)  # 28 nodes x 3
    scipy.io.mmwrite(str(fe_dir / "solid_M.mtx"), sp.coo_matrix(solid.mass))
    scipy.io.mmwrite(str(fe_dir / "solid_K.mtx"), sp.coo_matrix(solid.stiffness))
    np.savetxt(fe_dir / "solid_nodes14.csv",
               np.column_stack([solid.node_ids, solid.nodes])[:14], delimiter=",")
    return root


def _nastran_files(folder: Path, beam) -> None:
    """The beam as Nastran bulk data and an ASCII OP4 of MGG/KGG (when pyNastran is
    there; the entries that need them are skipped otherwise)."""
    try:
        from pyNastran.bdf.bdf import BDF
        from pyNastran.op2.result_objects.matrix import Matrix
        from pyNastran.op4.op4 import write_op4
    except ImportError:
        return
    model = BDF(debug=None)
    for k, (nid, xyz) in enumerate(zip(beam.node_ids, beam.nodes, strict=True)):
        model.add_grid(int(nid), [float(v) for v in xyz])
        if k:
            model.add_cbar(100 + k, 1, [int(beam.node_ids[k - 1]), int(nid)],
                           [0.0, 0.0, 1.0], None)
    model.add_pbarl(1, 1, "BAR", [0.02, 0.01])
    model.add_mat1(1, 2.1e11, None, 0.3, rho=7850.0)
    model.add_spc1(1, "123456", [int(beam.node_ids[0])])
    model.write_bdf(str(folder / "beam.bdf"), size=16)
    write_op4(str(folder / "beam.op4"), {"MGG": Matrix("MGG", 6, beam.mass.toarray()),
                                         "KGG": Matrix("KGG", 6, beam.stiffness.toarray())},
              is_binary=False)


@pytest.fixture
def work(shipped, tmp_path):
    shutil.copytree(shipped, tmp_path, dirs_exist_ok=True)
    return Work(tmp_path)


def fe_args(w: Work, mass="M.mtx", stiffness="K.mtx", nodes="nodes.csv", out=None):
    fe = w.root / "fe"
    return ["reduce", "--mass", str(fe / mass), "--stiffness", str(fe / stiffness),
            "--nodes", str(fe / nodes), "-o", str(out or w.root / "red.fmd.h5")]


def fe_matrix(w: Work, name: str, matrix) -> str:
    scipy.io.mmwrite(str(w.root / "fe" / name), sp.coo_matrix(matrix))
    return name


def beam_args(w: Work, *extra, out=None):
    return ["beam", "--length", "1", "--width", "0.02", "--height", "0.01", "--elements",
            "13", "-o", str(out or w.root / "b.fmd.h5"), *extra]


def add(text: str, extra: str) -> str:
    """``extra`` TOML inserted before the [solver] table of a case text."""
    return text.replace("[solver]", f"{extra}\n\n[solver]", 1)


def sub(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def body(text: str, extra: str) -> str:
    """``extra`` keys added to the first [[bodies]] entry."""
    return sub(text, "[[bodies]]\n", f"[[bodies]]\n{extra}\n")


# ------------------------------------------------------------------------ the catalogue
@dataclass(frozen=True)
class Entry:
    id: str
    argv: Callable[[Work], list[str]]
    expect: tuple[str, ...]


CATALOGUE: list[Entry] = []


def bad(id_: str, *expect: str):
    def register(fn):
        CATALOGUE.append(Entry(id_, fn, expect))
        return fn
    return register


# --- case files: the file itself
bad("case/is-a-folder", "is a folder", "folder.toml")(
    lambda w: ["run", str(Path(w.cases / "folder.toml").mkdir() or w.cases / "folder.toml")])
bad("case/not-utf8", "not UTF-8", "0xe9", "line 2")(
    lambda w: ["run", str(w.file("latin.toml", "title = 'x'\n# caf\xe9\n".encode("latin-1")))])
bad("case/hdf5-given-as-case", "HDF5 file", "steel_cantilever.fmd.h5")(
    lambda w: ["run", str(w.modal)])
bad("case/hdf5-renamed-toml", "HDF5 file", "modal.toml")(
    lambda w: ["run", str(w.file("modal.toml", w.modal.read_bytes()))])
bad("case/binary-nul-bytes", "NUL bytes", "nul.toml")(
    lambda w: ["run", str(w.file("nul.toml", b"title = 'x'\n\0\0\0"))])
bad("case/missing", "does not exist", "nothere.toml")(
    lambda w: ["run", str(w.cases / "nothere.toml")])
bad("case/not-toml", "not valid TOML", "case.toml")(
    lambda w: w.run("this is not toml"))
bad("case/unknown-top-key", "unknown key", "'colour'")(
    lambda w: w.run("colour = 'red'\n" + PENDULUM))
bad("case/bodies-not-array", "'bodies'", "array of tables")(
    lambda w: w.run("[bodies]\nname = 'b'\n[solver]\nh = 1\nt_end = 1\n"))
bad("case/notes-not-list", "'notes'", "list of strings")(
    lambda w: w.run("notes = 'one'\n" + PENDULUM))
bad("case/gravity-two-numbers", "'gravity'", "[0.0, -9.81]")(
    lambda w: w.run(sub(PENDULUM, "gravity = [0.0, -9.81, 0.0]", "gravity = [0.0, -9.81]")))

# --- bodies
bad("body/unknown-key", "'bob'", "unknown key", "'colour'")(
    lambda w: w.run(body(PENDULUM, "colour = 'red'")))
bad("body/negative-mass", "'mass'", "-1.0")(
    lambda w: w.run(sub(PENDULUM, "mass = 1.0", "mass = -1.0")))
bad("body/mass-is-text", "'mass'", "'heavy'")(
    lambda w: w.run(sub(PENDULUM, "mass = 1.0", "mass = 'heavy'")))
bad("body/mass-nan", "'mass'", "nan")(
    lambda w: w.run(sub(PENDULUM, "mass = 1.0", "mass = nan")))
bad("body/inertia-text", "'bob'", "'big'")(
    lambda w: w.run(sub(PENDULUM, "inertia = [1e-9, 1e-9, 1e-9]", "inertia = 'big'")))
bad("body/inertia-not-positive", "'bob'", "inertia is not positive definite")(
    lambda w: w.run(sub(PENDULUM, "inertia = [1e-9, 1e-9, 1e-9]", "inertia = [1, -1, 1]")))
bad("body/type-unknown", "'type'", "'elastic'")(
    lambda w: w.run(sub(PENDULUM, 'type = "rigid"', 'type = "elastic"')))
bad("body/name-empty", "'name'", "got ''")(
    lambda w: w.run(sub(PENDULUM, 'name = "bob"', 'name = ""')))
bad("body/name-is-a-number", "'name'", "got 7")(
    lambda w: w.run(sub(PENDULUM, 'name = "bob"', "name = 7")))
bad("body/name-with-dot", "'b.o'", "must not contain '.'")(
    lambda w: w.run(sub(PENDULUM, 'name = "bob"', 'name = "b.o"')))
bad("body/duplicate-name", "duplicate body name", "'bob'")(
    lambda w: w.run(add(PENDULUM, "[[bodies]]\nname = 'bob'\nmass = 1.0\n"
                                  "inertia = [1.0, 1.0, 1.0]")))
bad("body/attitude-given-twice", "'orientation'", "'axis'", "both give the attitude")(
    lambda w: w.run(body(PENDULUM, "orientation = [1.0, 0.0, 0.0, 0.0]")))
bad("body/axis-without-angle", "'axis'", "[0.0, 0.0, 1.0]", "'angle_deg'")(
    lambda w: w.run(sub(PENDULUM, "angle_deg = 30.0\n", "")))
bad("body/angle-without-axis", "'angle_deg'", "30.0", "'axis'")(
    lambda w: w.run(sub(PENDULUM, "com = [0.0, -0.5, 0.0]\naxis = [0.0, 0.0, 1.0]\n",
                        "com = [0.0, -0.5, 0.0]\n")))
bad("body/zero-axis", "'axis'", "zero vector")(
    lambda w: w.run(sub(PENDULUM, "axis = [0.0, 0.0, 1.0]\nangle", "axis = [0, 0, 0]\nangle")))
bad("body/orientation-two-numbers", "'orientation'", "[1, 2]")(
    lambda w: w.run(sub(PENDULUM, "axis = [0.0, 0.0, 1.0]\nangle_deg = 30.0",
                        "orientation = [1, 2]")))
bad("body/position-two-numbers", "'position'", "[0, 0]")(
    lambda w: w.run(body(PENDULUM, "position = [0, 0]")))
bad("body/velocity-text", "'velocity'", "'fast'")(
    lambda w: w.run(body(PENDULUM, "velocity = 'fast'")))
bad("body/fixed-unknown-coordinate", "fixed names unknown coordinate", "'w'")(
    lambda w: w.run(body(PENDULUM, "fixed = ['w']")))

# --- markers, joints, drives, forces
bad("marker/z-axis-and-orientation", "'orientation'", "'z_axis'", "both give")(
    lambda w: w.run(sub(PENDULUM, 'name = "O"\nz_axis = [0.0, 0.0, 1.0]',
                        'name = "O"\nz_axis = [0.0, 0.0, 1.0]\n'
                        "orientation = [0.0, 0.70710678, 0.0, 0.70710678]")))
bad("marker/unknown-body", "unknown body", "'bobb'")(
    lambda w: w.run(sub(PENDULUM, 'body = "bob"', 'body = "bobb"')))
bad("marker/body-is-a-number", "'body'", "got 7")(
    lambda w: w.run(sub(PENDULUM, 'body = "bob"', "body = 7")))
bad("marker/frame-unknown", "frame must be 'body' or 'global'", "bob.O")(
    lambda w: w.run(sub(PENDULUM, 'body = "bob"\nname = "O"',
                        'body = "bob"\nname = "O"\nframe = "world"')))
bad("joint/type-unknown", "unknown joint type", "'hinge'")(
    lambda w: w.run(sub(PENDULUM, 'type = "revolute"', 'type = "hinge"')))
bad("joint/marker-not-found", "'bob.Q'", "not found")(
    lambda w: w.run(sub(PENDULUM, 'j = "bob.O"', 'j = "bob.Q"')))
bad("joint/same-body", "'pivot'", "two markers of body 'bob'")(
    lambda w: w.run(sub(add(PENDULUM, "[[markers]]\nbody = 'bob'\nname = 'P'"),
                        'i = "ground.O"', 'i = "bob.P"')))
bad("joint/missing-j", "missing key 'j'")(
    lambda w: w.run(sub(PENDULUM, 'j = "bob.O"\n', "")))
bad("joint/duplicated-hinge", "5 redundant", "remove joint 'p")(
    lambda w: w.run(add(PENDULUM, "[[joints]]\nname = 'pivot2'\ntype = 'revolute'\n"
                                  "i = 'ground.O'\nj = 'bob.O'")))
bad("joint/universal-parallel-axes", "joint 'pivot' (universal)", "parallel")(
    lambda w: w.run(sub(PENDULUM, 'type = "revolute"', 'type = "universal"')))
DRIVE = "[[drives]]\nname = 'motor'\ntype = 'rotation'\ni = 'ground.O'\nj = 'bob.O'\n"
bad("drive/profile-type-unknown", "'type'", "'sine'")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'sine' }")))
bad("drive/polynomial-no-coefficients", "'coefficients'", "[]")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'polynomial', "
                                          "coefficients = [] }")))
bad("drive/kind-unknown", "'twist'")(
    lambda w: w.run(add(PENDULUM, sub(DRIVE, "'rotation'", "'twist'") + "profile = 0.5")))
bad("drive/spin-up-zero-duration", "'duration'", "0")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'spin-up', omega = 1.0, "
                                          "duration = 0 }")))
bad("drive/point-to-point-negative-duration", "'duration'", "-0.5")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'point-to-point', start = 0.0, "
                                          "end = 1.0, duration = -0.5 }")))
bad("drive/point-to-point-unknown-shape", "'shape'", "'sine'")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'point-to-point', start = 0.0, "
                                          "end = 1.0, duration = 0.5, shape = 'sine' }")))
bad("drive/trapezoid-infeasible", "'a_max'", "2.0", "too small")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'trapezoidal', start = 0.0, "
                                          "end = 1.0, duration = 1.0, a_max = 2.0 }")))
bad("drive/sequence-move-nan", "moves[1]", "'end'", "nan")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'sequence', start = 0.0, "
                                          "moves = [{ type = 'dwell', duration = 0.1 }, "
                                          "{ type = 'quintic', end = nan, duration = 0.5 "
                                          "}] }")))
FORCE = "[[forces]]\nname = 'f'\n"
bad("force/type-unknown", "'type'", "'magnet'")(
    lambda w: w.run(add(PENDULUM, FORCE + "type = 'magnet'")))
bad("force/negative-free-length", "free_length", "-1.0")(
    lambda w: w.run(add(PENDULUM, FORCE + "type = 'spring-damper'\ni = 'ground.O'\n"
                                          "j = 'bob.O'\nstiffness = 10.0\n"
                                          "free_length = -1.0")))
bad("force/point-force-two-numbers", "'value'", "[1.0, 2.0]")(
    lambda w: w.run(add(PENDULUM, FORCE + "type = 'point-force'\nmarker = 'bob.O'\n"
                                          "value = [1.0, 2.0]")))
bad("force/point-force-frame", "frame must be 'global' or 'marker'", "'local'")(
    lambda w: w.run(add(PENDULUM, FORCE + "type = 'point-force'\nmarker = 'bob.O'\n"
                                          "value = [1.0, 2.0, 3.0]\nframe = 'local'")))
bad("force/stiffness-text", "'stiffness'", "'stiff'")(
    lambda w: w.run(add(PENDULUM, FORCE + "type = 'spring-damper'\ni = 'ground.O'\n"
                                          "j = 'bob.O'\nstiffness = 'stiff'")))
BUSHING = FORCE + "type = 'bushing'\ni = 'ground.O'\nj = 'bob.O'\n"
bad("force/bushing-stiffness-two-numbers", "'f'", "'stiffness'", "3 numbers", "[1.0, 2.0]")(
    lambda w: w.run(add(PENDULUM, BUSHING + "stiffness = [1.0, 2.0]")))
bad("force/bushing-negative-damping", "'f'", "'rotational_damping'", "non-negative",
    "[0.0, -1.0, 0.0]")(
    lambda w: w.run(add(PENDULUM, BUSHING + "rotational_damping = [0.0, -1.0, 0.0]")))
bad("force/bushing-nan-preload", "'f'", "'preload_force'", "finite", "nan")(
    lambda w: w.run(add(PENDULUM, BUSHING + "preload_force = [0.0, nan, 0.0]")))
bad("force/bushing-spring-key", "'f'", "'free_length'", "does not apply to type 'bushing'")(
    lambda w: w.run(add(PENDULUM, BUSHING + "free_length = 0.1")))

# --- solver and output tables
bad("solver/missing-h", "missing key 'h'")(
    lambda w: w.run(sub(PENDULUM, "h = 1e-3\n", "")))
bad("solver/negative-h", "'h'", "-0.001")(
    lambda w: w.run(sub(PENDULUM, "h = 1e-3", "h = -1e-3")))
bad("solver/zero-t-end", "'t_end'", "0.0")(
    lambda w: w.run(sub(PENDULUM, "t_end = 0.004", "t_end = 0.0")))
bad("solver/method-unknown", "'method'", "'rk4'")(
    lambda w: w.run(sub(PENDULUM, 'method = "generalized-alpha"', 'method = "rk4"')))
bad("solver/parameter-of-another-method", "'rho_inf'", "'hht'")(
    lambda w: w.run(sub(PENDULUM, 'method = "generalized-alpha"', 'method = "hht"')))
bad("solver/negative-rtol", "rtol", "-1e-08")(
    lambda w: w.run(add(PENDULUM, "").replace("h = 1e-3", "h = 1e-3\nrtol = -1e-8")))
bad("solver/h-min-above-h", "h_min", "0.5")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\nh_min = 0.5")))
bad("solver/max-iter-fraction", "'max_iter'", "2.5")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\nmax_iter = 2.5")))
bad("solver/output-every-zero", "'output_every'", "0")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\noutput_every = 0")))
bad("solver/coupling-unknown", "'coupling'", "'three-way'")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\ncoupling = 'three-way'")))
bad("solver/engine-unknown", "'engine'", "'fast'")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\nengine = 'fast'")))
bad("solver/tangents-unknown", "'tangents'", "'exact'")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\ntangents = 'exact'")))
bad("solver/stiffening-text", "'stiffening'", "'yes'")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\nstiffening = 'yes'")))
bad("solver/misspelt-key", "unknown key", "'tend'")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\ntend = 1.0")))
bad("solver/output-times-outside", "output_times", "[0, 0.004]")(
    lambda w: w.run(PENDULUM.replace("h = 1e-3", "h = 1e-3\noutput_times = [0.0, 9.0]")))
bad("output/unknown-key", "[output]", "'path'")(
    lambda w: w.run(PENDULUM.replace('file = "seed_pendulum.res.h5"', 'path = "x.h5"')))

# --- flexible bodies in case files
bad("flexible/modal-data-missing", "'modal_data'", "nope.fmd.h5", "does not exist")(
    lambda w: w.run(sub(CANTILEVER, "steel_cantilever.fmd.h5", "nope.fmd.h5")))
bad("flexible/modal-data-is-a-folder", "'modal_data'", "is a folder")(
    lambda w: w.run(sub(CANTILEVER, "../modal_data/steel_cantilever.fmd.h5",
                        "../modal_data")))
bad("flexible/modal-data-unknown-format", "'modal_data'", "cannot tell the modal format",
    "case.toml")(
    lambda w: w.run(sub(CANTILEVER, "../modal_data/steel_cantilever.fmd.h5", "case.toml")))
bad("flexible/modes-zero", "'modes'", "got 0")(
    lambda w: w.run(sub(CANTILEVER, "modes = 4", "modes = 0")))
bad("flexible/modes-too-many", "n = 99", "1..20")(
    lambda w: w.run(sub(CANTILEVER, "modes = 4", "modes = 99")))
bad("flexible/xi-wrong-length", "xi must be 4 finite numbers", "[0.001]")(
    lambda w: w.run(sub(CANTILEVER, "xi = [0.001, 0.0, 0.0, 0.0]", "xi = [0.001]")))
bad("flexible/coupling-unknown", "coupling", "'half'")(
    lambda w: w.run(body(CANTILEVER, "coupling = 'half'")))
bad("flexible/stiffening-without-matrices", "'stiffening'", "steel_cantilever.fmd.h5")(
    lambda w: w.run(body(CANTILEVER, "stiffening = true")))
bad("flexible/nonlinear-without-derivatives", "'nonlinear'", "steel_cantilever.fmd.h5",
    "--modal-derivatives")(
    lambda w: w.run(body(CANTILEVER, "nonlinear = true")))
bad("flexible/nonlinear-not-a-flag", "'nonlinear'", "'yes'")(
    lambda w: w.run(body(CANTILEVER, "nonlinear = 'yes'")))
bad("flexible/damping-negative", "'beam'", "-0.1")(
    lambda w: w.run(body(CANTILEVER, "damping_ratio = -0.1")))
bad("flexible/marker-node-unknown", "node label 9999")(
    lambda w: w.run(sub(CANTILEVER, "node = 1", "node = 9999")))
bad("flexible/marker-node-fraction", "node must be an integer", "1.5")(
    lambda w: w.run(sub(CANTILEVER, "node = 1", "node = 1.5")))
bad("flexible/marker-node-set-unknown", "node set 'tip2'")(
    lambda w: w.run(sub(CANTILEVER, "node = 1", "node_set = 'tip2'")))
bad("flexible/marker-node-set-list-unknown-label", "'beam.root'", "node_set [37, 9999]",
    "[9999] are not nodes")(  # issue 36: a list once gave a TypeError (unhashable list);
    # two beam nodes are now a valid set: their rotation about the line is the nodes'
    lambda w: w.run(sub(CANTILEVER, "node = 1", "node_set = [37, 9999]")))
bad("flexible/marker-node-and-position", "position is taken from the node")(
    lambda w: w.run(sub(CANTILEVER, "node = 1", "node = 1\nposition = [0.1, 0, 0]")))

# --- contacts
BALL_LAW = "law = { type = \"hunt-crossley\", K = 1e6, n = 1.5, e = 0.9 }"
bad("contact/law-unknown", "'law'", "'spring'")(
    lambda w: w.run(sub(BALL, BALL_LAW, "law = { type = 'spring', k = 1e6 }")))
bad("contact/law-missing-key", "law", "missing key 'e'")(
    lambda w: w.run(sub(BALL, BALL_LAW, "law = { type = 'hunt-crossley', K = 1e6 }")))
bad("contact/law-extra-key", "unknown key", "'n'")(
    lambda w: w.run(sub(BALL, BALL_LAW, "law = { type = 'penalty', k = 1e6, n = 1.5 }")))
bad("contact/law-not-a-table", "'law'", "5")(
    lambda w: w.run(sub(BALL, BALL_LAW, "law = 5")))
bad("contact/type-unknown", "'box-plane'")(
    lambda w: w.run(sub(BALL, 'type = "sphere-plane"', 'type = "box-plane"')))
bad("contact/negative-radius", "radius_b", "-0.05")(
    lambda w: w.run(sub(BALL, "radius_b = 0.05", "radius_b = -0.05")))
bad("contact/friction-with-impulse-law", "'friction'", "impulse")(
    lambda w: w.run(sub(BALL, BALL_LAW, "law = { type = 'impulse', e = 0.9 }\n"
                                        "friction = { mu_static = 0.3 }")))
bad("contact/friction-without-mu", "'mu_static'")(
    lambda w: w.run(sub(BALL, BALL_LAW, BALL_LAW + "\nfriction = { mu_kinetic = 0.2 }")))
bad("contact/friction-not-a-table", "'friction'", "0.3")(
    lambda w: w.run(sub(BALL, BALL_LAW, BALL_LAW + "\nfriction = 0.3")))
bad("contact/keep-in-plane-text", "'keep_in_plane'", "'yes'")(
    lambda w: w.run(sub(CLEARANCE, "keep_in_plane = false", "keep_in_plane = 'yes'")))
bad("contact/keep-in-plane-of-a-sphere-plane", "'keep_in_plane'", "'sphere-plane'")(
    lambda w: w.run(sub(BALL, BALL_LAW, BALL_LAW + "\nkeep_in_plane = true")))
bad("contact/marker-unknown", "'ball.middle'")(
    lambda w: w.run(sub(BALL, 'b = "ball.centre"', 'b = "ball.middle"')))
bad("contact/clearance-negative", "'clearance'", "-0.0005")(
    lambda w: w.run(sub(CLEARANCE, "clearance = 5e-4", "clearance = -5e-4")))
bad("contact/h-contact-negative", "'h_contact'", "-0.0001")(
    lambda w: w.run(sub(BALL, "h_contact = 1e-4", "h_contact = -1e-4")))

# --- the run command line
bad("cli/set-without-value", "--set", "'solver.t_end'", "KEY=VALUE")(
    lambda w: w.run(PENDULUM, "--set", "solver.t_end"))
bad("cli/set-unknown-entry", "no [[bodies]] entry named 'bobb'", "['bob']")(
    lambda w: w.run(PENDULUM, "--set", "bodies.bobb.mass=2"))
bad("cli/set-no-table", "override 'h'", "table.key")(
    lambda w: w.run(PENDULUM, "--set", "h=1"))
bad("cli/set-bad-value", "'h'", "'fast'")(
    lambda w: w.run(PENDULUM, "--set", "solver.h=fast"))
bad("cli/engine-choice", "--engine", "'turbo'")(
    lambda w: w.run(PENDULUM, "--engine", "turbo"))
bad("cli/output-is-a-folder", "it is a folder")(
    lambda w: ["run", str(w.case(PENDULUM)), "-o", str(w.root), "--quiet"])
bad("cli/output-is-the-case", "input of this run", "case.toml")(
    lambda w: ["run", str(w.case(PENDULUM)), "-o", str(w.cases / "case.toml"), "--quiet"])
bad("cli/output-is-the-modal-data", "input of this run", "steel_cantilever.fmd.h5")(
    lambda w: ["run", str(w.case(CANTILEVER)), "-o", str(w.modal), "--quiet"])
bad("cli/output-folder-missing", "does not exist", "nowhere")(
    lambda w: ["run", str(w.case(PENDULUM)), "-o", str(w.root / "nowhere" / "r.res.h5")])
bad("cli/unknown-subcommand", "invalid choice", "'frobnicate'")(
    lambda w: ["frobnicate"])

# --- modal data files (flexmbs modes)
bad("modes/missing-file", "does not exist", "none.fmd.h5")(
    lambda w: ["modes", str(w.root / "none.fmd.h5")])
bad("modes/folder", "is a folder", "modal_data")(
    lambda w: ["modes", str(w.root / "modal_data")])
bad("modes/unknown-extension", "cannot tell the modal format", "shapes.txt")(
    lambda w: ["modes", str(w.file("shapes.txt", "1 2 3\n"))])
bad("modes/unknown-format-name", "unknown modal format", "'nastran'")(
    lambda w: ["modes", str(w.modal), "--format", "nastran"])
bad("modes/truncate-too-many", "n = 99", "1..20")(
    lambda w: ["modes", str(w.modal), "--modes", "99"])
bad("modes/truncate-zero", "n = 0")(
    lambda w: ["modes", str(w.modal), "--modes", "0"])
bad("modes/unknown-units", "'furlongs'")(
    lambda w: ["modes", str(w.file("b.fem", "garbage\n")), "--units", "furlongs"])
bad("modes/text-file-named-h5", "fake.fmd.h5")(
    lambda w: ["modes", str(w.file("fake.fmd.h5", "not hdf5 at all\n"))])
bad("modes/results-file-as-modal-data", "r.res.h5")(
    lambda w: ["modes", str(w.results), "--format", "native"])
bad("modes/damaged-native-file", "damaged", "beam.fmd.h5")(
    lambda w: ["modes", str(damaged_native(w))])
bad("modes/garbage-vtu", "junk.vtu")(
    lambda w: ["modes", str(w.file("junk.vtu", "<VTKFile>broken"))])
bad("modes/garbage-mbdyn-fem", "junk.fem")(
    lambda w: ["modes", str(w.file("junk.fem", "** not a fem file\n1 2 3\n"))])
bad("modes/animate-without-output", "--animate needs an output", "-o")(
    lambda w: ["modes", str(w.modal), "--animate", "1"])
bad("modes/animate-mode-out-of-range", "mode must be an integer in 1..20", "99")(
    lambda w: ["modes", str(w.modal), "--animate", "99", "-o", str(w.root / "m.gif")])
bad("modes/animate-huge-scale", "scale 1e+12", "at most")(
    lambda w: ["modes", str(w.modal), "--animate", "1", "-o", str(w.root / "m.gif"),
               "--scale", "1e12"])


def damaged_native(w: Work) -> Path:
    from flexmbs.modal import read_modal, write_modal

    path = w.root / "beam.fmd.h5"
    write_modal(read_modal(w.modal), path)
    with h5py.File(path, "r+") as f:
        f["K_ff"][0, 0] = 1.0001 * f["K_ff"][0, 0]
    return path


# --- FE matrix files and reduction arguments (flexmbs reduce)
bad("reduce/clamp-range-backwards", "--clamp-nodes", "'4-1'", "backwards")(
    lambda w: [*fe_args(w), "--clamp-nodes", "4-1", "--modes", "3"])
bad("reduce/clamp-label-not-a-number", "--clamp-nodes", "'x'")(
    lambda w: [*fe_args(w), "--clamp-nodes", "1,x", "--modes", "3"])
bad("reduce/clamp-unknown-label", "node label(s) [99]")(
    lambda w: [*fe_args(w), "--clamp-nodes", "99", "--modes", "3"])
bad("reduce/free-too-many-modes", "asked for 80 elastic modes", "at most 78")(
    lambda w: [*fe_args(w), "--free", "--modes", "80"])
bad("reduce/clamped-too-many-modes", "asked for 80 modes", "78")(
    lambda w: [*fe_args(w), "--clamp-nodes", "1", "--modes", "80"])
bad("reduce/zero-stiffness", "K0.mtx", "all zero")(
    lambda w: [*fe_args(w, stiffness=fe_matrix(w, "K0.mtx", sp.csr_matrix((84, 84)))),
               "--free", "--modes", "3"])
bad("reduce/dof-layout-ambiguous", "cannot tell the DOF layout", "28 nodes",
    "dofs_per_node")(
    lambda w: [*fe_args(w, "solid_M.mtx", "solid_K.mtx", "solid_nodes14.csv"), "--free",
               "--modes", "3"])
bad("reduce/matrix-sizes-differ", "same size", "K6.mtx")(
    lambda w: [*fe_args(w, stiffness=fe_matrix(w, "K6.mtx", sp.eye(6))), "--free",
               "--modes", "3"])
bad("reduce/node-count-mismatch", "nodes13.csv", "13 nodes")(
    lambda w: [*fe_args(w, nodes=nodes_subset(w, 13)), "--free", "--modes", "3"])
bad("reduce/explicit-dofs-mismatch", "3 DOFs = 42")(
    lambda w: [*fe_args(w), "--dofs-per-node", "3", "--free", "--modes", "3"])
bad("reduce/mass-file-missing", "does not exist", "MM.mtx")(
    lambda w: [*fe_args(w, mass="MM.mtx"), "--free", "--modes", "3"])
bad("reduce/mass-file-is-a-folder", "fe", "director")(
    lambda w: [*fe_args(w, mass=""), "--free", "--modes", "3"])
bad("reduce/mass-file-garbage", "garbage.mtx")(
    lambda w: [*fe_args(w, mass=(w.root / "fe" / "garbage.mtx").write_text("1 2 3\nx\n")
                        and "garbage.mtx"), "--free", "--modes", "3"])
bad("reduce/node-file-garbage", "bad_nodes.csv")(
    lambda w: [*fe_args(w, nodes=(w.root / "fe" / "bad_nodes.csv").write_text(
        "id,x,y,z\n1,a,b,c\n") and "bad_nodes.csv"), "--free", "--modes", "3"])
bad("reduce/negative-mass-diagonal", "negative diagonal entry")(
    lambda w: [*fe_args(w, mass=fe_matrix(w, "Mneg.mtx", negative_mass(w))), "--free",
               "--modes", "3"])
bad("reduce/penalty-stiffness", "1e+36", "penalty")(
    lambda w: [*fe_args(w, stiffness=fe_matrix(w, "Kpen.mtx", penalty_stiffness(w))),
               "--free", "--modes", "3"])
bad("reduce/asymmetric-stiffness", "stiffness", "symmetric")(
    lambda w: [*fe_args(w, stiffness=fe_matrix(w, "Kasym.mtx", asymmetric_stiffness(w))),
               "--free", "--modes", "3"])
bad("reduce/no-reduction", "choose exactly one reduction", "none")(
    lambda w: [*fe_args(w), "--modes", "3"])
bad("reduce/two-reductions", "choose exactly one reduction", "--free, --clamp-nodes")(
    lambda w: [*fe_args(w), "--free", "--clamp-nodes", "1", "--modes", "3"])
bad("reduce/keep-without-craig-bampton", "--keep", "only apply to Craig")(
    lambda w: [*fe_args(w), "--free", "--keep", "2", "--modes", "3"])
bad("reduce/output-is-a-folder", "it is a folder")(
    lambda w: [*fe_args(w, out=w.root), "--free", "--modes", "3"])
bad("reduce/output-extension", "cannot tell the output format", "red.txt")(
    lambda w: [*fe_args(w, out=w.root / "red.txt"), "--free", "--modes", "3"])
bad("reduce/unknown-units", "'cubits'")(
    lambda w: [*fe_args(w), "--units", "cubits", "--free", "--modes", "3"])
bad("reduce/modes-not-a-number", "--modes", "'x'")(
    lambda w: [*fe_args(w), "--free", "--modes", "x"])
bad("reduce/dofs-per-node-choice", "--dofs-per-node", "4")(
    lambda w: [*fe_args(w), "--dofs-per-node", "4", "--free", "--modes", "3"])
bad("reduce/interface-unknown-set", "'flange'")(
    lambda w: [*fe_args(w), "--interface-nodes", "flange", "--modes", "3"])


def nodes_subset(w: Work, n: int) -> str:
    lines = (w.root / "fe" / "nodes.csv").read_text().splitlines()
    (w.root / "fe" / f"nodes{n}.csv").write_text("\n".join(lines[:n + 1]) + "\n")
    return f"nodes{n}.csv"


def _read(w: Work, name: str):
    return sp.csr_matrix(scipy.io.mmread(str(w.root / "fe" / name))).toarray()


def negative_mass(w: Work):
    m = _read(w, "M.mtx")
    m[7, 7] = -abs(m[7, 7])
    return m


def penalty_stiffness(w: Work):
    k = _read(w, "K.mtx")
    k[0, 0] = 1e36
    return k


def asymmetric_stiffness(w: Work):
    k = _read(w, "K.mtx")
    k[0, 1] += 0.5 * abs(k).max()
    return k


# --- the built-in beam (flexmbs beam)
bad("beam/negative-length", "length", "-1")(
    lambda w: ["beam", "--length", "-1", "--width", "0.02", "--height", "0.01",
               "--modes", "2", "-o", str(w.root / "b.fmd.h5")])
bad("beam/rectangle-without-height", "--section rectangle needs --width and --height")(
    lambda w: ["beam", "--length", "1", "--width", "0.02", "--modes", "2", "-o",
               str(w.root / "b.fmd.h5")])
bad("beam/unknown-material", "--material", "'wood'")(
    lambda w: beam_args(w, "--material", "wood", "--modes", "2"))
bad("beam/material-two-numbers", "--material", "'70e9,0.3'")(
    lambda w: beam_args(w, "--material", "70e9,0.3", "--modes", "2"))
bad("beam/zero-elements", "elements", "0")(
    lambda w: ["beam", "--length", "1", "--width", "0.02", "--height", "0.01",
               "--elements", "0", "--modes", "2", "-o", str(w.root / "b.fmd.h5")])
bad("beam/too-many-modes", "asked for 80 modes", "78")(
    lambda w: beam_args(w, "--modes", "80"))
bad("beam/clamp-set-unknown", "'tip2'", "not a node set")(
    lambda w: beam_args(w, "--clamp-nodes", "tip2", "--modes", "2"))
bad("beam/free-with-attach", "--attach-nodes", "only apply to Craig")(
    lambda w: beam_args(w, "--free", "--attach-nodes", "1", "--modes", "2"))
bad("beam/output-folder-missing", "does not exist", "nowhere")(
    lambda w: beam_args(w, "--modes", "2", out=w.root / "nowhere" / "b.fmd.h5"))
bad("beam/section-choice", "--section", "'square'")(
    lambda w: beam_args(w, "--section", "square", "--modes", "2"))
bad("beam/negative-width", "width", "-0.02")(
    lambda w: ["beam", "--length", "1", "--width", "-0.02", "--height", "0.01",
               "--modes", "2", "-o", str(w.root / "b.fmd.h5")])

# --- results files (plot, animate, export)
bad("results/missing", "does not exist", "none.res.h5")(
    lambda w: ["plot", str(w.root / "none.res.h5"), "energy", "-o", str(w.root / "p.png")])
bad("results/folder", "is a folder", "cases")(
    lambda w: ["plot", str(w.cases), "energy", "-o", str(w.root / "p.png")])
bad("results/not-hdf5", "not an HDF5 file", "text.res.h5")(
    lambda w: ["plot", str(w.file("text.res.h5", "t,q\n0,1\n")), "energy", "-o",
               str(w.root / "p.png")])
bad("results/modal-data-given", "not a flexmbs result file", "steel_cantilever.fmd.h5")(
    lambda w: ["export", str(w.modal), "-o", str(w.root / "e.pvd")])
bad("results/damaged-bytes", "r.res.h5")(
    lambda w: ["plot", str(corrupt(w.results)), "energy", "-o", str(w.root / "p.png")])
bad("results/plot-missing-q", "lacks dataset 'q'", "edited.res.h5")(
    lambda w: ["plot", str(w.results_edited(lambda f: f.__delitem__("q"))), "energy", "-o",
               str(w.root / "p.png")])
bad("results/animate-missing-t", "lacks dataset 't'")(
    lambda w: ["animate", str(w.results_edited(lambda f: f.__delitem__("t"))), "-o",
               str(w.root / "a.png")])
bad("results/export-missing-bodies", "lacks group 'bodies'")(
    lambda w: ["export", str(w.results_edited(lambda f: f.__delitem__("bodies"))), "-o",
               str(w.root / "e.pvd")])
bad("results/animate-missing-phi", "flexible body 'beam'", "bodies/0/phi")(
    lambda w: ["animate", str(w.results_edited(lambda f: f.__delitem__("bodies/0/phi"))),
               "-o", str(w.root / "a.png")])
bad("results/plot-q-one-column-short", "dataset 'q' has shape (5, 10)", "(5, 11)")(
    lambda w: ["plot", str(w.results_edited(
        lambda f: replace_dataset(f, "q", f["q"][()][:, :-1]))), "modal", "-o",
        str(w.root / "p.png")])
bad("results/export-q-rows-short", "dataset 'q' has shape (3, 11)", "(5, 11)")(
    lambda w: ["export", str(w.results_edited(
        lambda f: replace_dataset(f, "q", f["q"][()][:3]))), "-o", str(w.root / "e.pvd")])
bad("results/animate-q-text", "dataset 'q' holds", "expected numbers")(
    lambda w: ["animate", str(w.results_edited(
        lambda f: replace_dataset(f, "q", np.array([b"abc"])))), "-o", str(w.root / "a.png")])
bad("results/export-phi-wrong-modes", "bodies/0/phi", "4 modes")(
    lambda w: ["export", str(w.results_edited(
        lambda f: replace_dataset(f, "bodies/0/phi", f["bodies/0/phi"][()][:, :3]))), "-o",
        str(w.root / "e.pvd")])
bad("results/plot-energy-wrong-length", "dataset 'kinetic' has shape (4,)", "(5,)")(
    lambda w: ["plot", str(w.results_edited(
        lambda f: replace_dataset(f, "kinetic", f["kinetic"][()][:-1]))), "energy", "-o",
        str(w.root / "p.png")])
bad("results/body-coordinates-beyond-q", "body 'beam'", "q has 11 columns")(
    lambda w: ["plot", str(w.results_edited(
        lambda f: f["bodies/0"].attrs.__setitem__("start", 5))), "modal", "-o",
        str(w.root / "p.png")])


def corrupt(path: Path) -> Path:
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(0)
    start = len(data) // 2 - 1000
    data[start:start + 2000] = rng.integers(0, 256, 2000, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))
    return path


# --- post-processing arguments
def plot(w: Work, *extra):
    return ["plot", str(w.results), *extra]


def animate(w: Work, *extra, out="a.png"):
    return ["animate", str(w.results), "-o", str(w.root / out), *extra]


bad("plot/coordinates-without-coords", "needs --coords")(
    lambda w: plot(w, "coordinates", "-o", str(w.root / "p.png")))
bad("plot/fft-two-coordinates", "--fft needs exactly one", "'beam.xi1,beam.xi2'")(
    lambda w: plot(w, "coordinates", "--coords", "beam.xi1,beam.xi2", "--fft", "-o",
                   str(w.root / "p.png")))
bad("plot/fft-not-coordinates", "--fft applies to 'coordinates'")(
    lambda w: plot(w, "energy", "--fft", "-o", str(w.root / "p.png")))
bad("plot/body-unknown", "--body 'ghost'", "['beam']")(
    lambda w: plot(w, "modal", "--body", "ghost", "-o", str(w.root / "p.png")))
bad("plot/what-unknown", "invalid choice", "'stress'")(
    lambda w: plot(w, "stress", "-o", str(w.root / "p.png")))
bad("plot/output-extension", "p.jpg")(
    lambda w: plot(w, "energy", "-o", str(w.root / "p.jpg")))
bad("plot/output-folder-missing", "nowhere")(
    lambda w: plot(w, "energy", "-o", str(w.root / "nowhere" / "p.png")))
bad("animate/huge-scale", "scale 1e+12", "at most")(
    lambda w: animate(w, "--scale", "1e12"))
bad("animate/negative-scale", "scale must be a positive number", "-1.0")(
    lambda w: animate(w, "--scale", "-1"))
bad("animate/huge-size", "--size '100000x100000'", "8192")(
    lambda w: animate(w, "--size", "100000x100000"))
bad("animate/size-not-wxh", "--size 'big'", "WIDTHxHEIGHT")(
    lambda w: animate(w, "--size", "big"))
bad("animate/tiny-size", "--size '8x8'", "16")(
    lambda w: animate(w, "--size", "8x8"))
bad("animate/frames-zero", "--frames must be >= 1", "0")(
    lambda w: animate(w, "--frames", "0", out="a.gif"))
bad("animate/time-outside", "time 99", "outside the results")(
    lambda w: animate(w, "--time", "99"))
bad("animate/camera-unknown", "camera 'top'")(
    lambda w: animate(w, "--camera", "top"))
bad("animate/view-up-unknown", "view up 'sideways'", "-x")(
    lambda w: animate(w, "--view-up", "sideways"))
bad("animate/view-up-zero", "view up '0,0,0'", "non-zero vector")(
    lambda w: animate(w, "--view-up", "0,0,0"))
bad("animate/mode-out-of-range", "mode must be an integer in 1..4", "9")(
    lambda w: animate(w, "--field", "modal", "--mode", "9"))
bad("animate/output-extension", "a.avi")(
    lambda w: animate(w, out="a.avi"))
bad("export/every-zero", "every", "0")(
    lambda w: ["export", str(w.results), "-o", str(w.root / "e.pvd"), "--every", "0"])
bad("export/output-extension", "e.vtk")(
    lambda w: ["export", str(w.results), "-o", str(w.root / "e.vtk")])

# --- studies
def study(w: Work, kind: str, *extra, case=None):
    return ["study", kind, str(case or w.cases / "pendulum.toml"), "-o",
            str(w.root / "study"), "--workers", "1", "--quiet", *extra]


bad("study/sweep-misspelt-key", "'hh'", "unknown key", "refused before any run")(
    lambda w: study(w, "sweep", "--key", "solver.hh", "--values", "1e-3,2e-3"))
bad("study/sweep-missing-entry", "no [[bodies]] entry named 'bobb'")(
    lambda w: study(w, "sweep", "--key", "bodies.bobb.mass", "--values", "1,2"))
bad("study/sweep-empty-values", "--values is empty")(
    lambda w: study(w, "sweep", "--key", "solver.h", "--values", ""))
bad("study/set-misspelt-key", "'tend'", "refused before any run")(
    lambda w: study(w, "coupling", "--set", "solver.tend=1"))
bad("study/set-without-value", "--set", "'solver.h'")(
    lambda w: study(w, "coupling", "--set", "solver.h"))
bad("study/coupling-unknown-mode", "'half-way'")(
    lambda w: study(w, "coupling", "--couplings", "two-way,half-way",
                    case=w.cases / "beam.toml"))
bad("study/truncation-levels-not-integers", "--modes '1,x'")(
    lambda w: study(w, "truncation", "--modes", "1,x", case=w.cases / "beam.toml"))
bad("study/truncation-level-too-high", "levels must lie in 1..20", "[1, 99]")(
    lambda w: study(w, "truncation", "--modes", "1,99", case=w.cases / "beam.toml"))
bad("study/truncation-body-unknown", "'ghost'")(
    lambda w: study(w, "truncation", "--modes", "1,2", "--body", "ghost",
                    case=w.cases / "beam.toml"))
bad("study/truncation-rigid-case", "pendulum.toml", "no flexible body")(
    lambda w: study(w, "truncation", "--modes", "1,2"))
bad("study/case-missing", "does not exist", "none.toml")(
    lambda w: study(w, "coupling", case=w.cases / "none.toml"))
bad("study/case-is-a-folder", "is a folder")(
    lambda w: study(w, "coupling", case=w.root / "modal_data"))
bad("study/case-is-hdf5", "HDF5 file")(
    lambda w: study(w, "coupling", case=w.modal))
bad("study/dask-nothing-listening", "'tcp://127.0.0.1:1'", "nothing listens")(
    lambda w: study(w, "sweep", "--key", "solver.h", "--values", "1e-3",
                    "--scheduler", "tcp://127.0.0.1:1"))
bad("study/dask-bad-address", "'tcp://127.0.0.1:port'", "expected tcp://host:port")(
    lambda w: study(w, "sweep", "--key", "solver.h", "--values", "1e-3",
                    "--scheduler", "tcp://127.0.0.1:port"))
bad("study/workers-zero", "workers", "0")(
    lambda w: study(w, "sweep", "--key", "solver.h", "--values", "1e-3", "--workers", "0"))


# --- stresses, rigid geometry, Nastran, co-simulation (this session's commands and keys)
bad("stress/results-without-stress-modes", "no stress modes", "--stress")(
    lambda w: ["stress", str(w.root / "plain.res.h5")])
bad("stress/top-zero", "top must be an integer >= 1", "0")(
    lambda w: ["stress", str(w.results), "--top", "0"])
bad("stress/unknown-body", "'link'", "has no stress modes")(
    lambda w: ["stress", str(w.results), "--body", "link"])
bad("animate/stress-without-stress-modes", "field 'stress' needs stress modes")(
    lambda w: ["animate", str(w.root / "plain.res.h5"), "-o", str(w.root / "a.png"),
               "--field", "stress"])
bad("beam/static-correction-unknown-set", "'nose'", "is not a node set")(
    lambda w: beam_args(w, "--modes", "2", "--static-correction", "nose",
                        "--no-stiffening"))
bad("beam/static-correction-bad-components", "components '9'", "1..6")(
    lambda w: beam_args(w, "--modes", "2", "--static-correction", "tip:9",
                        "--no-stiffening"))
bad("beam/static-correction-at-the-clamp", "unit loads at 'root'", "deflect the body")(
    lambda w: beam_args(w, "--modes", "2", "--static-correction", "root",
                        "--no-stiffening"))
bad("case/geometry-missing-file", "geometry", "nothing.stl' not found")(
    lambda w: w.run(body(PENDULUM, 'geometry = "nothing.stl"')))
bad("case/geometry-not-a-mesh", "geometry", "could not read", "junk.stl")(
    lambda w: w.run(body(PENDULUM, f'geometry = "{w.file("junk.stl", b"no mesh")}"')))
bad("case/geometry-negative-scale", "geometry", "scale")(
    lambda w: w.run(body(PENDULUM, 'geometry = { file = "x.stl", scale = -1 }')))
bad("case/modal-options-not-a-table", "modal_options", "must be a table")(
    lambda w: w.run(body(CANTILEVER, "modal_options = 3")))
bad("case/modal-options-for-native-data", "takes no reader options", "geometry")(
    lambda w: w.run(body(CANTILEVER, 'modal_options = { geometry = "part.bdf" }')))
bad("case/controllers-not-an-array", "controllers must be an array of tables")(
    lambda w: w.run("controllers = 3\n" + PENDULUM))
bad("case/controller-fmu-missing", "[[controllers]] #0", "nothing.fmu' not found")(
    lambda w: w.run(add(PENDULUM, '[[controllers]]\nname = "c"\nfmu = "nothing.fmu"\n'
                                  'period = 0.01\noutputs = {}')))
bad("case/controller-not-an-fmu", "[[controllers]] #0", "is not an FMU")(
    lambda w: w.run(add(PENDULUM, f'[[controllers]]\nname = "c"\n'
                                  f'fmu = "{w.file("c.fmu", b"not a zip")}"\n'
                                  'period = 0.01\noutputs = {}')))
bad("case/controller-without-period", "[[controllers]] #0", "'period' is required")(
    lambda w: w.run(add(PENDULUM, '[[controllers]]\nname = "c"\nfmu = "c.fmu"\n'
                                  'outputs = {}')))
bad("fmu/output-not-fmu", "ends in .fmu")(
    lambda w: ["fmu", str(w.cases / "pendulum.toml"), "-o", str(w.root / "p.zip")])
bad("fmu/input-without-target", "--input", "expected NAME=TARGET")(
    lambda w: ["fmu", str(w.cases / "pendulum.toml"), "-o", str(w.root / "p.fmu"),
               "--input", "tau"])
bad("fmu/input-unknown-force", "input 'tau'", "no force 'motor'")(
    lambda w: ["fmu", str(w.cases / "pendulum.toml"), "-o", str(w.root / "p.fmu"),
               "--input", "tau=forces.motor.value"])
bad("fmu/output-unknown", "unknown output(s)", "'angle'")(
    lambda w: ["fmu", str(w.cases / "pendulum.toml"), "-o", str(w.root / "p.fmu"),
               "--output", "angle"])
bad("reduce/op4-name-not-in-file", "has no matrix 'MAA'", "it holds")(
    lambda w: _op4_args(w, "MAA"))
bad("modes/op2-without-geometry", "needs its geometry")(
    lambda w: ["modes", str(w.file("part.op2", b"\x00" * 64))])


def _op4_args(w: Work, name: str) -> list[str]:
    pytest.importorskip("pyNastran", reason="the OP4 and bulk data files are written by "
                        "pyNastran (extra nastran; .ci/run's second environment)")
    return ["reduce", "--mass", f"{w.root / 'fe' / 'beam.op4'}:{name}", "--stiffness",
            f"{w.root / 'fe' / 'beam.op4'}:KGG", "--nodes", str(w.root / "fe" / "beam.bdf"),
            "--clamp-nodes", "spc", "--modes", "2", "-o", str(w.root / "op4.fmd.h5")]


# --- found by the fuzzer and by hand (issue 36)
bad("solver/method-is-a-list", "'method'", "['hht']")(
    lambda w: w.run(sub(PENDULUM, 'method = "generalized-alpha"', "method = ['hht']")))
bad("solver/h-is-a-table", "'h'", "{'value': 0.001}")(
    lambda w: w.run(sub(PENDULUM, "h = 1e-3", "h = { value = 0.001 }")))
bad("contact/radius-huge", "radius_b", "1e+300")(
    lambda w: w.run(sub(BALL, "radius_b = 0.05", "radius_b = 1e300")))
bad("contact/hunt-crossley-e-zero", "HuntCrossley", "e = 0.0", "gives 0.488")(
    lambda w: w.run(sub(BALL, "n = 1.5, e = 0.9 }", "n = 1.5, e = 0.0 }")))
bad("drive/table-value-nan", "'values'", "nan")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'table', times = [0.0, 1.0], "
                                          "values = [0.0, nan] }")))
bad("drive/table-times-not-increasing", "'times'", "[1.0, 0.0]")(
    lambda w: w.run(add(PENDULUM, DRIVE + "profile = { type = 'table', times = [1.0, 0.0], "
                                          "values = [0.0, 1.0] }")))
bad("body/inertia-ragged", "'inertia'", "[[1, 0, 0], [0, 1]]")(
    lambda w: w.run(sub(PENDULUM, "inertia = [1e-9, 1e-9, 1e-9]",
                        "inertia = [[1, 0, 0], [0, 1]]")))
bad("fmu/no-sensors", "no sensors", "pendulum.toml")(
    lambda w: ["fmu", str(w.cases / "pendulum.toml"), "-o", str(w.root / "p.fmu")])
bad("plot/modal-without-flexible-body", "no flexible body", "plain.res.h5")(
    lambda w: ["plot", str(w.root / "plain.res.h5"), "modal", "-o", str(w.root / "p.png")])
bad("study/coupling-without-flexible-body", "coupling", "no flexible body")(
    lambda w: ["study", "coupling", str(w.cases / "pendulum.toml"), "-o",
               str(w.root / "study")])


def abaqus_junk(w: Work) -> list[str]:
    """The Abaqus chain's matrices (tests/data), a junk line in the mass file's 8th line."""
    data = ROOT / "tests" / "data"
    lines = (data / "abaqus_chain_MASS1.mtx").read_text().splitlines()
    lines.insert(7, "this line is junk")
    mass = w.file("chain_MASS1.mtx", "\n".join(lines) + "\n")
    stiff = w.file("chain_STIF1.mtx", (data / "abaqus_chain_STIF1.mtx").read_text())
    inp = w.file("chain.inp", (data / "abaqus_chain.inp").read_text())
    return ["reduce", "--mass", str(mass), "--stiffness", str(stiff), "--nodes", str(inp),
            "--modes", "2", "--clamp-nodes", "10", "-o", str(w.root / "chain.fmd.h5")]


bad("fe/abaqus-junk-line", "chain_MASS1.mtx, line 8", "'this line is junk'")(abaqus_junk)


# ------------------------------------------------------------------------ the test
def tree_digest(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder``, by relative path."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_catalogue_has_over_a_hundred_distinct_entries():
    ids = [e.id for e in CATALOGUE]
    assert len(ids) >= 100 and len(set(ids)) == len(ids)


@pytest.mark.parametrize("entry", CATALOGUE, ids=[e.id for e in CATALOGUE])
def test_bad_input_is_refused_by_name(entry, work, capsys):
    argv = entry.argv(work)
    before = tree_digest(work.root)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses malformed options itself (exit 2)
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code == 2, f"exit {code}: {err or out}"
    missing = [text for text in entry.expect if text not in err]
    assert not missing, f"{missing} not in the message: {err}"
    assert tree_digest(work.root) == before, "an input changed or an output was written"
