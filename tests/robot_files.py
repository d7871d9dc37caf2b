"""Real robot descriptions for the URDF tests: the URDF files that the pip package
example-robot-data (a test extra) installs under its cmeel prefix."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest


def robot_file(name: str) -> Path:
    """The path of the file ending in ``name`` (as ``"panda_description/urdf/panda.urdf"``)
    that example-robot-data ships; the test is skipped without that package or file."""
    try:
        files = metadata.files("example-robot-data") or []
    except metadata.PackageNotFoundError:
        pytest.skip("the robots come from the pip package example-robot-data (test extra)")
    match = [f for f in files if str(f).endswith(f"/{name}")]
    if not match:
        pytest.skip(f"example-robot-data ships no {name}")
    return Path(match[0].locate())
