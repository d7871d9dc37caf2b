"""What a fresh ``flexmbs run`` imports: none of the heavy optional modules.

A run needs NumPy, scipy.sparse/linalg, h5py and the kernel's loader; scipy.integrate
and scipy.optimize (the reference integrator), scipy.interpolate (tables), scipy.io, the
renderer and plotting, the other modal formats' readers, the reduction and the study
back ends are imported only by what uses them. This checks which modules got imported
(in a subprocess), never how long it took.
"""

import json
import subprocess
import sys
from pathlib import Path

from flexmbs.modal.io.registry import FORMATS, NATIVE_EXTENSIONS, _load_builtin

ROOT = Path(__file__).resolve().parents[1]

#: Modules a run of a case with a flexible body must not import (prefixes).
HEAVY = (
    "scipy.integrate", "scipy.optimize", "scipy.interpolate", "scipy.io", "scipy.spatial",
    "scipy.special", "scipy.fft", "scipy.signal", "scipy.stats",
    "matplotlib", "pyvista", "vtk", "meshio", "dask", "distributed", "rich", "pandas",
    "pyNastran", "fmpy", "pythonfmu",
    "flexmbs.post", "flexmbs.studies", "flexmbs.cosim", "flexmbs.analysis",
    "flexmbs.modal.reduction", "flexmbs.modal.eigen", "flexmbs.modal.fe.solid",
    "flexmbs.modal.io.nastran", "flexmbs.modal.io.vtu", "flexmbs.modal.io.mbdyn",
    "flexmbs.cli.animate_cmd", "flexmbs.cli.reduce_cmd",
    "flexmbs.cli.beam_cmd", "flexmbs.cli._reduction_args",
)

_PROBE = """
import json, sys
from flexmbs.cli.main import main
after_import = sorted(sys.modules)
code = main(["run", sys.argv[1], "--quiet", "-o", sys.argv[2], "--set", "solver.t_end=0.01"])
from flexmbs.engine import prebuilt
print(json.dumps({"code": code, "after_import": after_import, "after_run": sorted(sys.modules),
                  "prebuilt": prebuilt.loaded() is not None}))
"""


def _heavy(modules):
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_cli_run_imports_no_heavy_optional_module(tmp_path):
    case = ROOT / "cases" / "arm_beam_seed.toml"
    out = subprocess.run([sys.executable, "-c", _PROBE, str(case), str(tmp_path / "r.res.h5")],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["code"] in (0, 3), out.stdout + out.stderr
    assert _heavy(report["after_run"]) == []
    # importing the command line alone loads neither the run's machinery nor SciPy, nor
    # NumPy (imported by the command, with the garbage collector off: cli.main.entry)
    assert not [m for m in report["after_import"]
                if m.startswith(("scipy", "h5py", "numpy"))]
    if report["prebuilt"]:  # the shipped kernel ran: numba was never needed
        assert "numba" not in report["after_run"]


def test_native_extensions_are_no_other_built_in_formats():
    """read_modal of a native file name loads only the native reader: no other built-in
    format may claim those names (flexmbs.modal.io.registry._pick)."""
    _load_builtin()
    for ext in NATIVE_EXTENSIONS:
        claims = [f.name for f in FORMATS.values()
                  if any(f"part{ext}".endswith(e) for e in f.extensions)]
        assert claims == ["native"], (ext, claims)
