"""docs/studies.md: its Python examples run, print what independent estimates predict and
what the page shows, and its sweep command writes the files the page describes."""

import csv
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from flexmbs import read_modal
from flexmbs.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "studies.md"
NUMBER = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


def _examples():
    """(code, shown output) of every ```python block; each is followed by its output."""
    text = PAGE.read_text()
    pairs = re.findall(r"```python\n(.*?)```\n\n```text\n(.*?)```", text, flags=re.S)
    assert len(pairs) == len(re.findall(r"```python\n", text)), "a block without output"
    return pairs


def _same_text(printed: str, shown: str) -> None:
    """The page shows what the code prints: same words, numbers to display rounding
    (round-off values below 1e-12 count as zero)."""
    got, want = printed.strip().splitlines(), shown.strip().splitlines()
    assert len(got) == len(want), (printed, shown)
    for g, w in zip(got, want, strict=True):
        assert re.sub(NUMBER, "#", g) == re.sub(NUMBER, "#", w), (g, w)
        np.testing.assert_allclose([float(x) for x in re.findall(NUMBER, g)],
                                   [float(x) for x in re.findall(NUMBER, w)],
                                   rtol=1e-2, atol=1e-12, err_msg=g)


def _locked_arm_peak_xi1() -> float:
    """First peak of ξ₁ of the seed beam if the whole arm turned as one rigid body under
    the 2 N m step (elbow locked): α = τ/J about the shoulder, modal force
    f₁ = α Σ m_k φ₁,y(k) (0.7 m + x_k), and an undamped step load peaks at 2 f₁/k₁.
    The free elbow has barely moved by then (tutorial: +2 % with it free)."""
    data = read_modal(ROOT / "modal_data" / "seed_tip_beam.fmd.h5")
    m, x = data.mass, data.nodes[:, 0]
    r = 0.7 + x  # distance of each beam node from the shoulder
    j = (0.016 + 1.2 * 0.2**2) + (0.006 + 0.8 * 0.55**2) + float(np.sum(m * r**2))
    force = (2.0 / j) * (m * r) @ data.phi[1::3, 0]
    return 2 * abs(float(force)) / data.K_ff[0, 0]


def test_python_examples_print_the_expected_figures(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # the examples name cases/ and modal_data/ relative to it
    namespace: dict = {}
    out = []
    for k, (code, shown) in enumerate(_examples()):
        exec(compile(code, f"{PAGE.name} block {k + 1}", "exec"), namespace)
        out.append(capsys.readouterr().out)
        _same_text(out[-1], shown)
    coupling, equilibrium, truncation, steps, stiffness, grid, table, energy, parallel = out

    # coupling: rigid has no modes, no-Mrf leaves the horizontal arm's beam unexcited
    # (M_rf is its only excitation path), two-way's start-up peak is the locked-arm step
    # response (5 %), and one-way's rigid motion is the rigid run's (Newton tolerance)
    peaks = {mode: float(v) for mode, v in
             re.findall(rf"^(\S+)\s+peak xi1 ({NUMBER})", coupling, flags=re.M)}
    assert list(peaks) == ["two-way", "one-way", "no-Mrf", "rigid"]
    assert peaks["rigid"] == 0.0
    assert peaks["no-Mrf"] < 1e-12
    assert peaks["two-way"] == pytest.approx(_locked_arm_peak_xi1(), rel=0.05)
    records = namespace["study"].records
    for joint in ("shoulder", "elbow"):
        np.testing.assert_allclose(records["one-way"].signals.joint_angles[joint],
                                   records["rigid"].signals.joint_angles[joint],
                                   rtol=0, atol=1e-8)

    # from equilibrium: one-way is 9.5 % off two-way from the undeformed start and
    # within 1 % from each mode's rest state; that rest state is the hand statics'
    # (tests/test_studies_equilibrium.py checks the angles to 1e-4)
    changes = [float(v) for v in re.findall(rf"one-way peak xi1 ({NUMBER}) %", equilibrium)]
    assert changes[0] > 5.0 and abs(changes[1]) < 1.0
    starts = [float(v) for v in re.findall(rf"starts at ({NUMBER}) rad", equilibrium)]
    assert starts[0] == 0.0 and starts[1] == pytest.approx(-0.02763, abs=5e-5)

    # truncation: frequencies are the modal data's, errors fall at every level, 3 modes
    # are within 5 % of the 10-mode reference and the reference's own error is 0
    rows = re.findall(rf"n =\s*(\d+), up to\s+({NUMBER}) Hz: tip error ({NUMBER}) %",
                      truncation)
    levels = [int(n) for n, _, _ in rows]
    freqs = read_modal(ROOT / "modal_data" / "arm_steel_beam.fmd.h5").frequencies
    np.testing.assert_allclose([float(f) for _, f, _ in rows],
                               freqs[np.array(levels) - 1], rtol=0, atol=0.051)
    errors = [float(e) for _, _, e in rows]
    assert levels == [1, 3, 6, 10] and errors[-1] == 0.0
    assert np.all(np.diff(errors) < 0), errors
    assert errors[1] < 5.0

    # step size: Newmark's trapezoidal rule is second order
    order = float(re.search(rf"order of accuracy: ({NUMBER})", steps).group(1))
    assert order == pytest.approx(2.0, abs=0.25)

    # stiffness: the step-response peak 2 f/k falls like 1/K
    p = [float(v) for v in re.findall(rf"peak xi1 ({NUMBER})", stiffness)]
    np.testing.assert_allclose([p[0] / p[1], p[0] / p[2]], [4.0, 16.0], rtol=0.02)

    # grid: peak proportional to the torque; 5 % damping lowers a step response's first
    # peak from 2 to 1 + exp(-πζ/√(1 − ζ²)) times static (measured 0.913, SDOF 0.927)
    g = {label: float(v) for label, v in re.findall(rf"^(.*): peak xi1 ({NUMBER})", grid,
                                                    flags=re.M)}
    for zeta in (0.0, 0.05):
        assert g[f"tau=2.0 zeta={zeta}"] / g[f"tau=1.0 zeta={zeta}"] == pytest.approx(
            2.0, rel=0.01)
    sdof = (1 + np.exp(-np.pi * 0.05 / np.sqrt(1 - 0.05**2))) / 2
    assert g["tau=2.0 zeta=0.05"] / g["tau=2.0 zeta=0.0"] == pytest.approx(sdof, rel=0.03)

    # RunComparison against tau=2: the changes are those of the grid's peaks
    change = {label: float(v) for label, v in re.findall(rf"^(.*): ({NUMBER}) %", table,
                                                         flags=re.M)}
    for label, value in change.items():
        expected = 100 * (g[label] / g["tau=2.0 zeta=0.0"] - 1)
        assert value == pytest.approx(expected, abs=0.1), label

    # work-energy: τ₁ Δθ₁ = Δ(T + V) in the conservative two-way run (1e-4 relative)
    shown = [float(v) for v in re.findall(rf"({NUMBER}) J", energy)]
    assert shown == [round(namespace["work"], 5), round(namespace["energy_change"], 5)]
    assert namespace["work"] > 0.1
    assert namespace["energy_change"] == pytest.approx(namespace["work"], rel=1e-4)

    assert "bit-identical: True" in parallel


def test_sweep_command_of_the_page_writes_csv_markdown_and_png(monkeypatch, capsys,
                                                               tmp_path):
    monkeypatch.chdir(ROOT)
    line = next(line for line in PAGE.read_text().splitlines()
                if line.startswith("flexmbs study sweep cases/arm_beam_seed.toml --key "
                                   "bodies.beam.damping_ratio"))
    argv = [*shlex.split(line)[1:], "--workers", "1", "-o", str(tmp_path), "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    labels = [f"bodies.beam.damping_ratio={v}" for v in ("0", "0.02", "0.05")]
    assert report["success"] and [r["run"] for r in report["rows"]] == labels
    assert {k: Path(v).name for k, v in report["files"].items()} == {
        "csv": "sweep.csv", "markdown": "sweep.md", "png": "sweep.png"}

    with (tmp_path / "sweep.csv").open(newline="") as f:
        table = list(csv.DictReader(f))
    assert [r["run"] for r in table] == labels
    for row, json_row in zip(table, report["rows"], strict=True):
        assert row["success"] == "True"
        for key in ("beam.xi1 peak", "beam tip peak [mm]", "elbow final [rad]"):
            assert float(row[key]) == json_row[key]  # CSV at full precision
    peaks = [float(r["beam.xi1 peak"]) for r in table]
    assert peaks[0] > peaks[1] > peaks[2] > 0.8 * peaks[0]  # damping lowers the peak

    markdown = (tmp_path / "sweep.md").read_text()
    assert markdown.startswith("# sweep of bodies.beam.damping_ratio: arm_beam_seed.toml")
    assert sum(line.startswith("| bodies.beam.damping_ratio=") and "| yes |" in line
               for line in markdown.splitlines()) == 3
    png = (tmp_path / "sweep.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    assert not list(tmp_path.glob("*.res.h5"))  # only with --save-runs
