"""The Python examples in the docs run (each ```python block of the listed pages)."""

import re
from pathlib import Path

import numpy as np
import pytest
from script_files import load_script  # tests/script_files.py

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("page", ["multibody.md"])
def test_python_blocks_run(page, capsys):
    text = (DOCS / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, f"{page}", "exec"), {})
    assert "0 degree(s) of freedom" in capsys.readouterr().out


def test_getting_started_flexible_pendulum_runs_in_under_20_lines(capsys):
    """The getting-started example (import flexmbs as fm, a hinged steel strip released
    horizontal): under 20 lines, and its hinge angle after 0.5 s equals the rigid
    compound pendulum's θ'' = −(3g/2L) cos θ, solved here with solve_ivp, to 2e-3 rad
    (the strip bends by 0.3 mm)."""
    from scipy.integrate import solve_ivp

    text = (DOCS / "index.md").read_text()
    block = re.search(r"## A flexible pendulum in Python.*?```python\n(.*?)```", text,
                      flags=re.S).group(1)
    assert len(block.strip().splitlines()) < 20
    exec(compile(block, "index.md", "exec"), {})
    angle = float(re.search(r"angle (-?[0-9.]+) rad", capsys.readouterr().out).group(1))
    rigid = solve_ivp(lambda t, y: [y[1], -1.5 * 9.81 * np.cos(y[0])], [0.0, 0.5],
                      [0.0, 0.0], rtol=1e-12, atol=1e-12).y[0, -1]
    assert angle == pytest.approx(rigid, abs=2e-3)


def test_flexible_body_example_runs(capsys, monkeypatch):
    monkeypatch.chdir(DOCS.parent)  # the example reads modal_data/ relative to the repo
    text = (DOCS / "flexible_bodies.md").read_text()
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        exec(compile(block, "flexible_bodies.md", "exec"), {})
    assert "4 degree(s) of freedom" in capsys.readouterr().out


def test_arm_beam_tutorial_example_runs(capsys, monkeypatch):
    monkeypatch.chdir(DOCS.parent)
    text = (DOCS / "tutorial_arm_beam.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    namespace: dict = {}
    exec(compile(blocks[0], "tutorial_arm_beam.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "4 degree(s) of freedom" in out
    # the first peak of ξ₁ is the locked-arm step response 2 f₁/k₁ (the elbow has barely
    # moved yet; docs/scripts/build_tutorial_arm_beam.py::quasi_static_estimate) to 5 %
    script = load_script(DOCS / "scripts" / "build_tutorial_arm_beam.py")
    peak = float(np.max(np.abs(namespace["xi"][:, 0])))
    assert peak == pytest.approx(script.quasi_static_estimate()["peak1"], rel=0.05)
    assert f"peak xi1 over 0.2 s: {peak:.4g}" in out


def test_post_processing_example_runs(capsys, monkeypatch):
    monkeypatch.chdir(DOCS.parent)
    text = (DOCS / "post_processing.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "post_processing.md", "exec"), {})
    # 10 % of the 1 m scene over the 1.0 mm initial tip deflection: 100 (to round-off)
    assert "deformation x 100, colours 0 to 1 mm" in capsys.readouterr().out


def test_cli_reference_is_generated_from_the_parser(monkeypatch):
    """docs/cli.md lists every subcommand and option of the parser; on the Python the
    page was generated with (argparse's wording differs between versions) it is exactly
    what docs/scripts/build_cli_reference.py renders."""
    import argparse
    import sys

    from flexmbs.cli.main import build_parser

    monkeypatch.setenv("COLUMNS", "100")
    script = load_script(DOCS / "scripts" / "build_cli_reference.py")
    page = (DOCS / "cli.md").read_text()

    def walk(parser, name):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    assert f"## `{name} {sub_name}`" in page or \
                        f"### `{name} {sub_name}`" in page, f"{name} {sub_name}"
                    walk(sub, f"{name} {sub_name}")
            for option in action.option_strings:
                assert option in page, (name, option)

    walk(build_parser(), "flexmbs")
    if sys.version_info[:2] == (3, 11):
        assert script.render() == page


def test_docs_site_builds_strictly(tmp_path):
    """`mkdocs build --strict`: every page in the nav renders, every link resolves and the
    API reference imports every documented object."""
    import subprocess
    import sys

    pytest.importorskip("mkdocstrings")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d",
                          str(tmp_path / "site")], cwd=DOCS.parent, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "index.html").stat().st_size > 10_000
    # the theory pages' equations are MathML written at build time (no raw TeX; the
    # offline reading is checked in Chromium by tests/test_docs_offline.py)
    for page in ("theory_ffrf", "theory_integrators", "theory_stiffening"):
        html = (tmp_path / "site" / page / "index.html").read_text()
        assert html.count('class="arithmatex"') >= 3, page
        assert html.count("<math ") == html.count('class="arithmatex"'), page
        assert "$$" not in html, page


def test_cosimulation_stepping_example_runs(capsys, monkeypatch):
    monkeypatch.chdir(DOCS.parent)
    text = (DOCS / "cosimulation.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    exec(compile(blocks[0], "cosimulation.md", "exec"), {})
    assert "t = 1.01 s, link2 at (" in capsys.readouterr().out


def test_cosimulation_controller_example_runs(capsys, monkeypatch):
    monkeypatch.chdir(DOCS.parent)
    text = (DOCS / "cosimulation.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    exec(compile(blocks[1], "cosimulation.md", "exec"), {})
    out = capsys.readouterr().out
    angle = float(out.split("shoulder at 1 s: ")[1].split(" rad")[0])
    assert abs(angle - 1.0) < 0.01  # from 0.5 rad, settled at the 1 rad set-point (0.997)
