"""The flexmbs command line: help, modes, beam and reduce (JSON checked against the API)."""

import itertools
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from flexmbs.cli.main import main
from flexmbs.modal import read_modal
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "modal_data" / "seed_tip_beam.fmd.h5"


def run_json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in ("modes", "reduce", "beam"):
        assert name in out


def test_modes_json_matches_the_api(capsys):
    summary = run_json(capsys, ["modes", str(SEED), "--json"])
    data = read_modal(SEED)
    np.testing.assert_allclose(summary["frequencies_hz"], data.frequencies, rtol=1e-15)
    assert summary["modal_mass"] == [0.05, 0.03]
    assert summary["total_mass_kg"] == pytest.approx(0.2, rel=1e-13)
    assert summary["reference_frame"] == "attached"
    assert "zero damping" in summary["damping"]


def test_modes_text_shows_table(capsys):
    assert main(["modes", str(SEED)]) == 0
    out = capsys.readouterr().out
    assert "7.797" in out and "20.132" in out and "total mass" in out
    assert "damping: none" in out


def test_modes_missing_file_is_a_clear_error(capsys, tmp_path):
    assert main(["modes", str(tmp_path / "missing.fmd.h5")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_beam_command_builds_reduced_cantilever(capsys, tmp_path):
    out = tmp_path / "beam.fmd.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = run_json(capsys, ["beam", "--length", "1", "--width", "0.02", "--height",
                                    "0.01", "--elements", "40", "--modes", "4", "-o",
                                    str(out), "--json"])
    ei = 210e9 * 0.01 * 0.02**3 / 12
    f1 = 1.87510**2 * np.sqrt(ei / (7850 * 2e-4)) / (2 * np.pi)
    assert summary["frequencies_hz"][1] == pytest.approx(f1, rel=5e-3)
    assert read_modal(out).n_modes == 4


def test_reduce_matrix_market(capsys, tmp_path):
    fe = straight_beam(1.0, 12, BeamSection.rectangle(0.02, 0.01), Material.steel())
    scipy.io.mmwrite(str(tmp_path / "M.mtx"), sp.coo_matrix(fe.mass), symmetry="symmetric")
    scipy.io.mmwrite(str(tmp_path / "K.mtx"), sp.coo_matrix(fe.stiffness),
                     symmetry="symmetric")
    np.savetxt(tmp_path / "nodes.csv", np.column_stack([fe.node_ids, fe.nodes]),
               delimiter=",", header="id,x,y,z", comments="")
    out = tmp_path / "red.fmd.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = run_json(capsys, [
            "reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
            str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "nodes.csv"),
            "--interface-nodes", "13", "--attach-nodes", "1", "--modes", "6", "-o",
            str(out), "--json"])
    assert summary["n_modes"] == 12  # 6 normal + 6 constraint modes of node 13
    assert summary["reference_frame"] == "attached"
    assert "constraint" in summary["mode_kinds"]
    assert read_modal(out).n_modes == 12


def test_reduce_requires_one_reduction(capsys, tmp_path):
    fe = straight_beam(1.0, 4, BeamSection.rectangle(0.02, 0.01), Material.steel())
    scipy.io.mmwrite(str(tmp_path / "M.mtx"), sp.coo_matrix(fe.mass))
    scipy.io.mmwrite(str(tmp_path / "K.mtx"), sp.coo_matrix(fe.stiffness))
    np.savetxt(tmp_path / "n.csv", np.column_stack([fe.node_ids, fe.nodes]), delimiter=",")
    code = main(["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
                 str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "n.csv"), "--modes", "3",
                 "-o", str(tmp_path / "o.fmd.h5")])
    assert code == 2
    assert "choose exactly one reduction" in capsys.readouterr().err


def test_console_script_runs():
    """The installed entry point (python -m form, independent of PATH)."""
    res = subprocess.run([sys.executable, "-m", "flexmbs.cli.main", "modes", str(SEED),
                          "--json"], capture_output=True, text=True, check=True)
    assert json.loads(res.stdout)["n_modes"] == 2


def test_bad_output_fails_before_reducing(capsys, tmp_path):
    argv = ["beam", "--length", "1", "--width", "0.02", "--height", "0.01", "--modes", "2"]
    assert main([*argv, "-o", str(tmp_path / "missing" / "x.fmd.h5")]) == 2
    assert "folder" in capsys.readouterr().err
    assert main([*argv, "-o", str(tmp_path / "x.txt")]) == 2
    assert "cannot tell the output format" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--free", "--clamp-nodes", "root"],
                                   ["--free", "--keep", "3"],
                                   ["--attach-nodes", "1"]])
def test_conflicting_reduction_options_are_errors(capsys, tmp_path, extra):
    argv = ["beam", "--length", "1", "--width", "0.02", "--height", "0.01", "--modes", "2",
            "-o", str(tmp_path / "b.fmd.h5"), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "choose exactly one reduction" in err or "only apply to Craig" in err


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_run_reports_real_time_factors_of_the_run_the_loaded_run_and_the_steps(
        tmp_path, capsys, engine):
    """Three real-time factors: of the run's wall time, of the run without the one-time
    loading (or compiling) of the kernels, and of the steps alone; the text says all."""
    out = tmp_path / "p.res.h5"
    argv = ["run", str(ROOT / "cases" / "seed_pendulum.toml"), "-o", str(out), "--set",
            "solver.t_end=0.5", "--engine", engine]
    report = run_json(capsys, [*argv, "--json"])
    simulated = report["t_end"]
    st = report["statistics"]
    wall, kernels, steps = report["wall_time_s"], st["compile_time"], st["stepping_time"]
    assert report["real_time_factor"] == pytest.approx(simulated / wall, rel=1e-12)
    assert report["real_time_factor_loaded"] == pytest.approx(
        simulated / (wall - kernels), rel=1e-12)
    assert report["real_time_factor_steps"] == pytest.approx(simulated / steps, rel=1e-12)
    assert (report["real_time_factor"] <= report["real_time_factor_loaded"]
            <= report["real_time_factor_steps"])
    assert kernels == 0.0 if engine == "python" else kernels > 0.0
    assert main(argv) == 0
    assert "with the kernels loaded, the steps alone" in capsys.readouterr().out


def test_the_command_exempts_its_imports_from_garbage_collection():
    """The ``flexmbs`` console script (cli.main.entry): the collector is off while the
    command's modules import, then their objects are frozen and the collector is on
    again for the command. main() called in a process of the caller's (as here) freezes
    nothing."""
    code = ("import gc, io, contextlib, sys\n"
            "from flexmbs.cli import main as cli\n"
            "gc.disable()\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = cli.main(['modes', {str(SEED)!r}, '--json'], settle=True)\n"
            "print(rc, gc.isenabled(), gc.get_freeze_count())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    rc, enabled, frozen = done.stdout.split()
    assert (rc, enabled) == ("0", "True"), done.stderr
    assert int(frozen) > 10_000  # NumPy, SciPy and flexmbs's modules
    import gc

    before = gc.get_freeze_count()
    assert main(["modes", str(SEED), "--json"]) == 0
    assert gc.get_freeze_count() == before and gc.isenabled()


def test_beam_command_with_rotary_inertia_is_full_timoshenko(tmp_path, capsys):
    """--theory timoshenko --rotary-inertia: a short thick cantilever (40 × 40 mm, 0.2 m,
    steel) against the Timoshenko beam's exact frequencies, from its transfer matrix
    (shear and rotary inertia). Without the flag the command had shear only: mode 2 was
    3.7 % high."""
    import scipy.linalg as sla
    from scipy.optimize import brentq

    from flexmbs.modal.fe.beam import BeamSection, Material

    steel, section, length = Material.steel(), BeamSection.rectangle(0.04, 0.04), 0.2
    e_mod, g_mod, rho = steel.E, steel.G, steel.rho
    area, inertia, kappa = section.A, section.Iy, section.kz

    def clamped_free(omega):  # state (w, w', ψ, ψ'), clamped at 0, free at L
        a = np.zeros((4, 4))
        a[0, 1] = a[2, 3] = 1.0
        a[1, 0], a[1, 3] = -rho * omega**2 / (kappa * g_mod), 1.0
        a[3, 1] = -kappa * g_mod * area / (e_mod * inertia)
        a[3, 2] = kappa * g_mod * area / (e_mod * inertia) - rho * omega**2 / e_mod
        end = sla.expm(a * length)[:, [1, 3]]
        return np.linalg.det(np.vstack([end[3], end[1] - end[2]]))

    grid = 2 * np.pi * np.linspace(100.0, 6000.0, 3000)
    values = [clamped_free(w) for w in grid]
    exact = [brentq(clamped_free, grid[i], grid[i + 1]) / (2 * np.pi)
             for i in range(len(grid) - 1) if np.sign(values[i]) != np.sign(values[i + 1])]
    out = tmp_path / "thick.fmd.h5"
    assert main(["beam", "--length", "0.2", "--width", "0.04", "--height", "0.04",
                 "--elements", "80", "--modes", "6", "--theory", "timoshenko",
                 "--rotary-inertia", "-o", str(out), "--json"]) == 0
    freqs = json.loads(capsys.readouterr().out)["frequencies_hz"]
    # bending comes in equal pairs (the square section bends alike in y and z)
    bending = [f for f, g in itertools.pairwise(freqs) if abs(f - g) < 1e-6 * f]
    np.testing.assert_allclose(bending, exact[:2], rtol=5e-4)


@pytest.mark.parametrize("argv, message", [
    (["--section", "circle", "--diameter", "0.05", "--thickness", "0.003"],
     "--thickness does not apply to --section circle, which takes --diameter"),
    (["--width", "0.02", "--height", "0.01", "--diameter", "0.1"],
     "--diameter does not apply to --section rectangle, which takes --height, --width"),
    (["--section", "box", "--width", "0.02", "--height", "0.01", "--thickness", "0.001",
      "--flange-thickness", "0.002"], "--flange-thickness does not apply to --section box"),
])
def test_beam_section_options_of_another_kind_are_refused(tmp_path, capsys, argv, message):
    """An option the section kind does not take was ignored: a circle given a tube's wall
    thickness came out solid."""
    out = tmp_path / "b.fmd.h5"
    assert main(["beam", "--length", "1", "--modes", "2", *argv, "-o", str(out)]) == 2
    assert message in capsys.readouterr().err and not out.exists()
