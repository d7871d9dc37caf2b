"""The truncation study's --reference results file (flexmbs.studies.truncation;
docs/studies.md): refused when it does not cover the study's time span (an
interpolation would hold its last value beyond its end) or is not a run of the case; a
run of the case over a longer span gives the table of the default reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from flexmbs.cases import load_case
from flexmbs.cases.run import run_case
from flexmbs.cli.main import main
from flexmbs.errors import ValidationError
from flexmbs.studies import truncation_study

ROOT = Path(__file__).resolve().parents[1]
STEEL = ROOT / "cases" / "arm_beam_steel.toml"
SEED = ROOT / "cases" / "arm_beam_seed.toml"
STUDY_END = 0.03  # the study's t_end [s]


@pytest.fixture(scope="module")
def references(tmp_path_factory) -> dict[str, Path]:
    """Results files: the steel arm to 0.02 s (short) and 0.04 s (long), the seed arm
    (another case with a body named beam) to 0.04 s."""
    folder = tmp_path_factory.mktemp("references")
    out = {}
    for name, path, t_end in (("short", STEEL, 0.02), ("long", STEEL, 0.04),
                              ("seed", SEED, 0.04)):
        _, result = run_case(load_case(path, {"solver.t_end": t_end}))
        out[name] = folder / f"{name}.res.h5"
        result.save(out[name])
    return out


def _study(levels, reference=None):
    return truncation_study(STEEL, levels, reference=reference, workers=1,
                            overrides={"solver.t_end": STUDY_END})


def test_a_reference_that_ends_before_the_study_is_refused(references, tmp_path, capsys):
    with pytest.raises(ValidationError, match=r"'short\.res\.h5' \(results over 0 to "
                                              r"0\.02 s; the study runs arm_beam_steel\.toml "
                                              r"over 0 to 0\.03 s\) does not cover"):
        _study([1, 3], references["short"])
    code = main(["study", "truncation", str(STEEL), "--set", f"solver.t_end={STUDY_END}",
                 "--modes", "1,3", "--reference", str(references["short"]), "-o",
                 str(tmp_path / "t")])
    assert code == 2
    assert "does not cover the study's time span" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()  # refused before any run


def test_a_reference_of_another_case_is_refused(references, tmp_path, capsys):
    """The seed arm also has a body named beam (2 modes against the steel beam's 20)."""
    with pytest.raises(ValidationError, match=r"'seed\.res\.h5' .* is not a run of this "
                                              r"case: it records another case file's text"):
        _study([1, 3], references["seed"])
    code = main(["study", "truncation", str(STEEL), "--set", f"solver.t_end={STUDY_END}",
                 "--modes", "1,3", "--reference", str(references["seed"]), "-o",
                 str(tmp_path / "t")])
    assert code == 2
    assert "is not a run of this case" in capsys.readouterr().err


def test_a_covering_reference_gives_the_default_references_table(references):
    """The case run to 0.04 s is, over the study's 0.03 s, the very run of its largest
    level (all 20 modes): against it, every level's errors are those against the
    default reference, and the 20-mode level's are zero."""
    by_file = _study([1, 3, 20], references["long"]).rows()
    default = _study([1, 3, 20]).rows()
    assert [r["reference"] for r in by_file] == [False] * 3
    assert [r["reference"] for r in default] == [False, False, True]
    for key in ("tip error max [mm]", "tip error RMS [mm]",
                "tip error max / reference peak"):
        got, want = (np.array([r[key] for r in rows]) for rows in (by_file, default))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=key)
    assert by_file[2]["tip error max [mm]"] == pytest.approx(0.0, abs=1e-12)
    assert by_file[0]["tip error max [mm]"] > by_file[1]["tip error max [mm]"] > 0


def test_a_reference_with_more_modes_than_the_case_keeps_is_a_run_of_it(tmp_path):
    """The natural reference is a run with all the body's modes, more than the case's
    own `modes` (which the study replaces at each level): it was refused as "not a run
    of this case" for its extra modal coordinates."""
    case = ROOT / "cases" / "cantilever_release.toml"
    reference = tmp_path / "eight.res.h5"
    _, result = run_case(load_case(case, {"solver.t_end": 0.03, "bodies.beam.modes": 8,
                                          "bodies.beam.xi": [0.001] + [0.0] * 7}))
    result.save(reference)
    study = truncation_study(case, [1, 2, 8], reference=reference, workers=1,
                             overrides={"solver.t_end": 0.02})
    # released from its first mode, the beam moves in that mode alone (the modes are
    # M- and K-orthogonal): every level is the reference's motion, to the comparison's
    # interpolation between output times
    errors = [row["tip error max / reference peak"] for row in study.rows()]
    assert max(errors) < 1e-4 and max(errors) - min(errors) < 1e-9, errors
