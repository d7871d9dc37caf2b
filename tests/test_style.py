"""The code base stays ruff-clean (ruff is part of the test extras)."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff not installed")
def test_ruff_clean():
    res = subprocess.run(["ruff", "check", "flexmbs", "tests", "benchmarks", "modal_data"],
                         cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
