"""Headless Chromium for the tests that look at pages (the viewer, the docs offline):
Debian's ``chromium`` package, installed here when missing (as root with apt-get), else
the calling test is skipped with the reason.

Every page is opened with the network cut off (all requests go to a closed port on
127.0.0.1), so a page that draws has drawn from what it carries. WebGL runs on
SwiftShader, Chromium's software renderer, as there is no GPU.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu-sandbox", "--hide-scrollbars",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
         "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
         "--no-first-run", "--disable-extensions", "--mute-audio")


@functools.cache
def _binary() -> tuple[str | None, str]:
    """(path of the chromium binary or None, why not)."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path, ""
    if shutil.which("apt-get") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, ("headless Chromium is not installed and cannot be installed here "
                      "(needs root and apt-get: apt-get install chromium)")
    log = ""
    for command in (["apt-get", "install", "-y", "-q", "chromium"],
                    ["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", "chromium"]):
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=900,
                                 env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"installing Chromium failed: {exc}"
        log = (run.stdout + run.stderr)[-400:]
        if command[1] == "install" and run.returncode == 0 and shutil.which("chromium"):
            return shutil.which("chromium"), ""
    return None, f"apt-get install chromium failed: {log}"


def chromium() -> str:
    """The chromium binary (installed if needed), or skip the test with the reason."""
    path, why = _binary()
    if path is None:
        pytest.skip(why)
    return path


def _run(url: str, extra: list[str], budget_ms: int, size) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="flexmbs-chromium-") as profile:
        command = [chromium(), *FLAGS, f"--user-data-dir={profile}",
                   f"--window-size={size[0]},{size[1]}",
                   f"--virtual-time-budget={int(budget_ms)}", *extra, url]
        run = subprocess.run(command, capture_output=True, text=True, timeout=180)
    if run.returncode != 0:
        raise AssertionError(f"chromium exited with {run.returncode}: {run.stderr[-2000:]}")
    return run


def screenshot(url: str, path, *, budget_ms: int = 1000, size=(900, 600)) -> np.ndarray:
    """The page at ``url`` after ``budget_ms`` of page time (virtual time: the page's
    clock, timers and animation frames advance by exactly that much), as an (h, w, 3)
    uint8 image, also written to ``path`` (PNG)."""
    import imageio.v2 as iio

    path = Path(path)
    _run(url, [f"--screenshot={path}"], budget_ms, size)
    return np.asarray(iio.imread(path))[..., :3]


def dump_dom(url: str, *, budget_ms: int = 1000, size=(900, 600)) -> str:
    """The page's DOM (serialized HTML) after ``budget_ms`` of page time."""
    return _run(url, ["--dump-dom"], budget_ms, size).stdout
