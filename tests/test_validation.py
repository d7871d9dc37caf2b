"""The validation report regenerates (validation/run.py) and its figures are within the
accuracy each problem's reference allows."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_runner():
    spec = importlib.util.spec_from_file_location("validation_run",
                                                  ROOT / "validation" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_validation_report_regenerates_within_its_tolerances(tmp_path):
    runner = load_runner()
    rows = runner.run_all(tmp_path / "validation")
    limits = {  # problem prefix → largest acceptable error
        "simple pendulum": 1e-4,            # issue: period error < 1e-4 at h = 1 ms
        "double pendulum": 1e-4,            # trapezoidal drift; Radau agreement [rad, m]
        "steel cantilever": 1e-6,           # 80 elements: FE discretization error
        "spectral radius": 1e-10,           # the implemented update = the published one
        "period error": 1e-6,               # fitted vs matrix: ~1e-4 of T_h/T − 1 at ωh 0.3
        "arm + beam seed case (2 s), two-way": 1e-3,  # energy balance / work done
        "arm + beam seed case (2 s), one-way": 1e-6,  # same arm motion as rigid [rad]
        "arm + beam seed case (2 s), no-Mrf": 1e-6,   # same arm motion, beam at rest
        "arm + beam (elbow locked), two-way": 0.01,   # quasi-static step estimate
        "arm + beam (elbow locked), one-way": 0.01,
        "rotating beam, Ω = 2 rad/s": 1e-3,  # linear FFRF = independent linear solution
    }
    checked = 0
    for row in rows:
        if row["source"].startswith(("with geometric", "linear FFRF diverges",
                                     "two-way run")):
            continue  # where the model is known to differ: reported, not bounded
        if row["problem"].startswith("Craig–Bampton"):
            continue  # convergence, checked below
        for prefix, limit in limits.items():
            if row["problem"].startswith(prefix):
                assert row["error"] < limit, row
                checked += 1
    cb = [r["error"] for r in rows if r["problem"].startswith("Craig–Bampton")]
    assert len(cb) == 3 and all(e > 0 for e in cb)  # Rayleigh–Ritz: from above
    assert cb[0] > cb[1] > cb[2] and cb[2] < 1e-3
    # not bounded: locked no-Mrf/rigid, the linear-FFRF failures, CB, one-way vs two-way
    assert checked == len(rows) - 2 - 3 - 3 - 1
    one_way = next(r for r in rows if r["source"].startswith("two-way run"))
    assert one_way["error"] > 0.1  # one-way neglects the beam's reaction: visibly different
    rotating = {(r["problem"], r["source"][:6]): r for r in rows
                if r["problem"].startswith("rotating")}
    # below ω₁ linear FFRF overestimates the stiffened peak; above it, it diverges
    low = rotating[("rotating beam, Ω = 2 rad/s", "with g")]
    assert 1.05 < low["flexmbs"] / low["reference"] < 1.3
    high = rotating[("rotating beam, Ω = 10 rad/s", "with g")]
    assert high["flexmbs"] > 1e6 and high["reference"] < 2.0
    page = runner.build(tmp_path, rows)
    text = page.read_text()
    assert text.count("\n| ") == len(rows) + 1  # header + one line per figure
    assert "![" in text and (tmp_path / "validation" / "arm_beam_coupling.png").stat().st_size
    assert (ROOT / "docs" / "validation.md").exists()
