"""The results file stands on its own (docs/results_file.md): read with h5py alone, in a
process that never imports flexmbs, it gives t, q, the sensor histories and the units of
every dataset, the case text and the flexmbs version; and the results package loads
without the integrators."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from flexmbs.cases import load_case, run_case

ROOT = Path(__file__).resolve().parents[1]

READER = r'''
import json, sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "r") as f:
    units = {}
    f.visititems(lambda name, obj: units.update({name: obj.attrs.get("units")})
                 if isinstance(obj, h5py.Dataset) else None)
    out = {"t": f["t"][()].tolist(), "q": f["q"][()].tolist(),
           "coord_names": [s.decode() for s in f["coord_names"][()]],
           "coord_units": [s.decode() for s in f["coord_units"][()]],
           "sensors": {k: {"values": d[()].tolist(), "units": d.attrs["units"],
                           "components": json.loads(d.attrs["components"])}
                       for k, d in f["sensors"].items()},
           "units": {k: (None if v is None else str(v)) for k, v in units.items()},
           "case": json.loads(f.attrs["case"]), "version": str(f.attrs["flexmbs_version"])}
assert not any(m.startswith("flexmbs") for m in sys.modules)
print(json.dumps(out))
'''


def test_a_results_file_reads_with_h5py_alone(tmp_path):
    text = (ROOT / "cases" / "seed_pendulum.toml").read_text() + (
        '\n[[sensors]]\nname = "theta"\ntype = "joint"\nquantity = "angle"\n'
        'joint = "pivot"\n')
    case_path = tmp_path / "p.toml"
    case_path.write_text(text)
    _, result = run_case(load_case(case_path, {"solver.t_end": 0.2}))
    path = tmp_path / "p.res.h5"
    result.save(path)
    done = subprocess.run([sys.executable, "-c", READER, str(path)], capture_output=True,
                          text=True, check=True, cwd=tmp_path)
    read = json.loads(done.stdout)
    np.testing.assert_array_equal(read["t"], result.t)
    np.testing.assert_array_equal(read["q"], result.q)
    np.testing.assert_array_equal(read["sensors"]["theta"]["values"], result.sensor("theta"))
    assert read["sensors"]["theta"]["units"] == "rad"
    assert read["coord_units"] == ["m", "m", "m", "1", "1", "1", "1"]
    missing = sorted(k for k, v in read["units"].items() if v is None)
    assert not missing, f"datasets without units: {missing}"
    assert read["units"]["t"] == "s" and read["units"]["kinetic"] == "J"
    assert read["case"]["text"] == text
    assert read["case"]["overrides"] == {"solver.t_end": 0.2}
    from flexmbs import __version__

    assert read["version"] == __version__


def test_the_results_package_loads_without_the_integrators():
    code = ("import sys, flexmbs.results; "
            "print(any(m.startswith('flexmbs.integrators') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


def test_a_loaded_result_lists_its_bodies_in_the_order_written(tmp_path):
    """More than ten bodies (the elastica's node bodies): HDF5 lists /bodies/10 before
    /bodies/2, and a loaded result's bodies came in that order, so saving it again
    wrote another body under each index."""
    from flexmbs.integrators import SimulationResult

    _, result = run_case(load_case(ROOT / "cases" / "elastica.toml",
                                   {"solver.t_end": 0.002}))
    assert len(result.bodies) > 10
    first = tmp_path / "a.res.h5"
    result.save(first)
    loaded = SimulationResult.load(first)
    assert list(loaded.bodies) == list(result.bodies)
    starts = [int(info["start"]) for info in loaded.bodies.values()]
    assert starts == sorted(starts)
    again = tmp_path / "b.res.h5"
    loaded.save(again)
    assert list(SimulationResult.load(again).bodies) == list(result.bodies)
