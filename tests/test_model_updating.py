"""Model updating of a built-in beam against a modal test (flexmbs.gradients.update,
flexmbs update; docs/gradients.md, "Model updating against a modal test"): E and a tip
payload recovered from synthetic modal data, exactly and with noise within their
standard errors; the Jacobian of the residuals against central differences of the modal
data reduced again; the test file reader's errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_gradient_beams import BEAM_CASE, PAYLOAD

from flexmbs.cli.main import main
from flexmbs.errors import ValidationError
from flexmbs.gradients import read_modal_test, update
from flexmbs.gradients.parameters import CaseModels
from flexmbs.gradients.update import _Problem

KEYS = ["bodies.beam.beam.material.E", "bodies.beam.beam.point_masses[0].mass"]
#: The measured nodes (labels) and directions (y, z).
NODES = (4, 7, 10, 13)


@pytest.fixture
def beam_case(tmp_path):
    path = tmp_path / "beam.toml"
    path.write_text(BEAM_CASE.format(height=0.01, payload=PAYLOAD))
    return path


def synthetic_test(path, rng=None, f_noise=0.0, shape_noise=0.0):
    """CSV lines of the beam's first four modes at E = 210 GPa and a 0.05 kg payload
    (the case's own values), optionally with relative noise."""
    data = CaseModels(path).nominal().model.bodies["beam"].data
    lines = ["mode,frequency_hz,node,direction,value"]
    for j in range(4):
        f = data.coordinate_frequencies[j] * (1 + f_noise * (rng.normal() if rng else 0))
        for node in NODES:
            for d, name in ((1, "y"), (2, "z")):
                value = data.phi[3 * (node - 1) + d, j]
                if rng is not None:
                    value += shape_noise * rng.normal()
                lines.append(f"{j + 1},{float(f)!r},{node},{name},{float(value)!r}")
    return "\n".join(lines)


def test_update_recovers_e_and_a_tip_mass_from_synthetic_modal_data(beam_case, tmp_path,
                                                                  capsys):
    """From E = 180 GPa and a 0.02 kg payload, `flexmbs update` finds the 210 GPa and
    0.05 kg that made the test data (four modes, y and z at four nodes), to 1e-7; every
    pair ends at MAC 1 and the test frequency."""
    test = tmp_path / "test.csv"
    test.write_text(synthetic_test(beam_case))
    code = main(["update", str(beam_case), "--modal-data", str(test), "--json",
                 "--param", f"{KEYS[0]}=180e9", "--param", f"{KEYS[1]}=0.02"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["success"]
    assert out["values"][KEYS[0]] == pytest.approx(210e9, rel=1e-7)
    assert out["values"][KEYS[1]] == pytest.approx(0.05, rel=1e-7)
    assert out["rms_initial"] > 1e-3 and out["rms_final"] < 1e-8
    for pair in out["pairs"]:
        assert pair["mac"] == pytest.approx(1.0, abs=1e-10)
        assert pair["frequency_model"] == pytest.approx(pair["frequency_test"], rel=1e-9)
    assert [p["model_mode"] for p in out["pairs"]] == [1, 2, 3, 4]


def test_update_with_noisy_data_lands_within_its_standard_errors(beam_case, tmp_path):
    """0.3 % noise on the frequencies and 1 % of the peak on the shapes: E and the
    payload within three standard errors of the values that made the data."""
    test = tmp_path / "noisy.csv"
    test.write_text(synthetic_test(beam_case, np.random.default_rng(7), 3e-3, 1e-2))
    result = update(str(beam_case), str(test), [f"{KEYS[0]}=180e9", f"{KEYS[1]}=0.02"])
    assert result.success
    for key, truth in zip(KEYS, (210e9, 0.05), strict=True):
        err = result.standard_errors[key]
        assert 0 < err < 0.1 * truth
        assert abs(result.values[key] - truth) < 3 * err, (key, result.values[key], err)


def test_jacobian_of_the_residuals_against_differences_of_the_reduction(beam_case,
                                                                        tmp_path):
    """d(residuals)/dp from Nelson's method against central differences of the residuals
    of the beam reduced again at p ± 10⁻³ p, at a point away from the data (pairs
    unchanged), E, the payload mass and the section height. The reduction's eigen-solver
    round-off (about 1e-10 of the frequencies and shapes) limits such differences to
    about 1e-5 of the derivatives, the O(h²) truncation to 1e-6."""
    test = tmp_path / "test.csv"
    test.write_text(synthetic_test(beam_case))
    keys = [*KEYS, "bodies.beam.beam.section.height"]
    problem = _Problem(CaseModels(beam_case), keys, "beam", read_modal_test(test),
                       (1.0, 1.0))
    x = np.array([190e9, 0.03, 0.0105])
    _, jac, _ = problem.evaluate(x)
    for k in range(x.size):
        h = 1e-3 * x[k]
        hi, lo = x.copy(), x.copy()
        hi[k] += h
        lo[k] -= h
        fd = (problem.evaluate(hi)[0] - problem.evaluate(lo)[0]) / (2 * h)
        np.testing.assert_allclose(jac[:, k], fd, rtol=0,
                                   atol=2e-4 * np.abs(fd).max(), err_msg=keys[k])


def test_modal_test_files_and_parameters_are_checked(beam_case, tmp_path):
    bad = {"direction": "1,20.0,4,w,1.0", "frequency": "1,abc\n1,20.0,4,z,1.0",
           "positive": "1,-3.0", "consistent": "1,20.0,4,z,1.0\n1,21.0,7,z,1.0",
           "zero": "1,20.0,4,z,0.0"}
    for name, text in bad.items():
        path = tmp_path / f"{name}.csv"
        path.write_text(f"mode,frequency,node,direction,value\n{text}\n")
        with pytest.raises(ValidationError, match=r"modal test|mode"):
            read_modal_test(path)
    good = tmp_path / "good.csv"
    good.write_text("# a test\n1,20.0,99,z,1.0\n2,40.0\n")
    modes = read_modal_test(good)
    assert [m.label for m in modes] == ["1", "2"] and modes[1].values.size == 0
    with pytest.raises(ValidationError, match="node 99"):
        update(str(beam_case), modes, [KEYS[0]])
    with pytest.raises(ValidationError, match="one built-in beam"):
        update(str(beam_case), str(good), ["bodies.beam.damping_ratio=0.01"])


def test_a_mode_measured_at_one_dof_is_paired_by_its_frequency(beam_case, tmp_path):
    """The MAC of one DOF is 1 for any model mode not zero there: the beam's second mode
    measured at one DOF where the first mode moves too was paired with the first (MAC
    1.0000) and the update went astray. Now it takes the nearest free frequency, with
    no MAC; the same mode at two DOFs is paired by MAC."""
    from flexmbs.gradients.modal_update import pair_modes

    data = CaseModels(beam_case).nominal().model.bodies["beam"].data
    f = data.coordinate_frequencies
    node, row = 13, 3 * 12  # label 13 is the 13th node: its x, y, z rows
    direction = int(np.argmax(np.abs(data.phi[row:row + 3, 0])))
    assert abs(data.phi[row + direction, 0]) > 0  # the first mode moves there
    name = "xyz"[direction]
    one = tmp_path / "one.csv"
    one.write_text(f"mode,frequency_hz,node,direction,value\n"
                   f"2,{float(f[1])!r},{node},{name},1.0\n")
    ((i, j, value),) = pair_modes(read_modal_test(one), data)
    assert (i, j) == (0, 1) and np.isnan(value)
    two = tmp_path / "two.csv"
    lines = ["mode,frequency_hz,node,direction,value"]
    for n in (7, 13):
        for d, dname in ((1, "y"), (2, "z")):
            lines.append(f"2,{float(f[0])!r},{n},{dname},"
                         f"{float(data.phi[3 * (n - 1) + d, 1])!r}")
    two.write_text("\n".join(lines) + "\n")
    ((i, j, value),) = pair_modes(read_modal_test(two), data)  # (frequency of mode 1)
    assert j == 1 and value == pytest.approx(1.0, abs=1e-12)
