"""What the terminal shows (issue 'Results that explain themselves', terminal part): the
run summary gives the energy-balance residual and the couplings in words, a results
object has a one-line repr, and renders print no VTK display warnings."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from flexmbs.cli.main import main
from flexmbs.results import SimulationResult

ROOT = Path(__file__).resolve().parents[1]


def test_run_summary_names_couplings_and_the_energy_balance(tmp_path, capsys):
    out = tmp_path / "arm.res.h5"
    main(["run", str(ROOT / "cases" / "arm_beam_seed.toml"), "-o", str(out), "--set",
          "solver.t_end=0.2"])
    text = capsys.readouterr().out
    assert "coupling: beam two-way" in text and "{" not in text.split("coupling:")[1][:40]
    res = SimulationResult.load(out)
    residual, _ = res.energy_balance()
    energy = res.kinetic + res.potential
    expected = np.max(np.abs(energy - energy[0] - res.nonconservative_work))
    assert residual == expected
    assert f"max |T + V − W − E₀| = {residual:.3g} J" in text
    line = repr(res)
    assert line.startswith("<SimulationResult completed") and "\n" not in line
    assert f"{len(res.t)} outputs" in line and len(line) < 300


def test_renders_print_no_display_warnings(tmp_path, capfd):
    out = tmp_path / "p.res.h5"
    assert main(["run", str(ROOT / "cases" / "cantilever_release.toml"), "-o", str(out),
                 "--set", "solver.t_end=0.01", "--quiet"]) == 0
    capfd.readouterr()
    assert main(["animate", str(out), "-o", str(tmp_path / "p.png")]) == 0
    err = capfd.readouterr().err
    assert "X server" not in err and "WARN" not in err


def test_progress_bar_shows_elapsed_time_and_eta():
    """The rich bar on a terminal: percentage, elapsed time, ETA and the note; silent
    when disabled; close() ends a bar that stopped short."""
    import io

    from rich.console import Console

    from flexmbs.cli._common import ProgressBar

    out = io.StringIO()
    bar = ProgressBar(True, console=Console(file=out, force_terminal=True, width=100))
    for k in range(1, 5):
        bar(0.25 * k, 1.0)
    text = out.getvalue()
    assert "100%" in text and "ETA" in text and "0:00:0" in text and "t = 1 s" in text
    assert bar.last == 100
    short = ProgressBar(True, console=Console(file=io.StringIO(), force_terminal=True))
    short(0.3, 1.0)
    short.close()
    short.close()  # idempotent
    silent = io.StringIO()
    ProgressBar(False, console=Console(file=silent))(0.5, 1.0)
    assert silent.getvalue() == ""
