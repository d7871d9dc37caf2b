"""docs/getting_started.ipynb, the notebook version of the getting-started page: it is
what docs/scripts/build_getting_started_notebook.py makes of docs/index.md, and it runs
in a Jupyter kernel: the pendulum's hinge angle is the rigid compound pendulum's, and
``res.show()`` displays the viewer inline."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
from script_files import load_script  # tests/script_files.py

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "getting_started.ipynb"


def _script():
    return load_script(ROOT / "docs" / "scripts" / "build_getting_started_notebook.py")


def test_notebook_is_the_getting_started_page():
    pytest.importorskip("nbformat")
    assert NOTEBOOK.read_text(encoding="utf-8") == _script().render()


def test_notebook_runs_and_shows_the_run():
    """Executed cell by cell in a python3 kernel (nbclient): no cell fails; the printed
    hinge angle after 0.5 s is θ'' = −(3g/2L) cos θ's (solve_ivp) to 2e-3 rad, as on
    the page; ``res.show()`` gives an HTML iframe whose page carries the 0.5 s run."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from scipy.integrate import solve_ivp

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    printed = "".join(o.get("text", "") for o in code[0].outputs if o.output_type == "stream")
    angle = float(re.search(r"angle (-?[0-9.]+) rad", printed).group(1))
    rigid = solve_ivp(lambda t, y: [y[1], -1.5 * 9.81 * np.cos(y[0])], [0.0, 0.5],
                      [0.0, 0.0], rtol=1e-12, atol=1e-12).y[0, -1]
    assert angle == pytest.approx(rigid, abs=2e-3)
    shown = [o for o in code[-1].outputs if o.output_type == "execute_result"]
    assert len(shown) == 1
    frame = shown[0]["data"]["text/html"]
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', frame).group(1))
    assert page.startswith("<!DOCTYPE html>")
    assert '"nFrames":501' in page and '"name":"beam"' in page
