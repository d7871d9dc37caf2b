"""Fits against measurements at their own times (flexmbs.gradients.fit, `flexmbs fit`;
docs/gradients.md, "Fitting parameters to measurements"): one residual per measurement,
the model sampled at the measurement times; noise-free data from an independent run
recovered exactly; standard errors against σ̂ √diag((GᵀG)⁻¹) from central differences of
runs at the data times; NaN standard errors without spare measurements. Inline sensor
specs, --max-evaluations and model updating with fewer residuals than parameters are
refused by name (exit code 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_runner import run_cli
from test_gradient_beams import BEAM_CASE, PAYLOAD
from test_gradients import small_model

from flexmbs.cases import load_case, run_case
from flexmbs.errors import ValidationError
from flexmbs.gradients import fit, sensitivities, update

PENDULUM = "cases/seed_pendulum.toml"
G = "model.gravity[1]"
GX = "model.gravity[0]"


def pendulum_angle(gravity, t_end, times=None):
    """(times, the bob's angle [rad]) of an ordinary run (`run_case`, not the gradient
    code) of the pendulum at ``gravity`` (x, y): every step, or at ``times`` (the run's
    own output interpolation). The angle about z from the quaternion, 2 atan2(e3, e0)."""
    case = load_case(PENDULUM, overrides={"model.gravity": [gravity[0], gravity[1], 0.0],
                                          "solver.t_end": t_end})
    options = {} if times is None else {"output_times": np.asarray(times, dtype=float)}
    _, res = run_case(case, **options)
    names = list(res.coord_names)
    e0, e3 = res.q[:, names.index("bob.e0")], res.q[:, names.index("bob.e3")]
    return res.t, 2.0 * np.arctan2(e3, e0)


@pytest.mark.parametrize("where", ["on steps", "between steps"])
def test_noise_free_data_at_eleven_times_give_the_true_gravity(where):
    """Data made by an independent run at g = −9.5 m/s², sampled at 11 times (every 100th
    step of 1 ms, or 11 times between steps): the fit from −9.6 returns −9.5 to 1e-9
    relative (the old residuals at the steps against the data interpolated linearly
    between them gave −9.5236)."""
    if where == "on steps":
        t, angle = pendulum_angle((0.0, -9.5), 1.0)
        times, values = t[::100], angle[::100]
    else:
        times, values = pendulum_angle((0.0, -9.5), 1.0, 0.0437 + 0.0913 * np.arange(11))
    assert times.size == 11
    result = fit(PENDULUM, "joint:angle:pivot", (times, values), [f"{G}=-9.6"], t_end=1.0)
    assert result.success and result.values[G] == pytest.approx(-9.5, rel=1e-9)
    assert result.rms_final < 1e-9 < 1e-3 < result.rms_initial
    assert result.measurements == 11


def test_standard_errors_are_those_of_the_measurements():
    """Noisy data (σ = 1e-3 rad) at 21 times; the fit of (g_x, g_y): its RMS error is that
    of an independent run at the fitted values against the data, and its standard errors
    are σ̂ √diag((GᵀG)⁻¹), σ̂² = rᵀr/(21 − 2), with G from central differences of
    independent runs at the data times (the old ones, from the 501 steps, were about a
    fifth of these)."""
    t_end, truth = 0.5, (0.3, -9.5)
    t, angle = pendulum_angle(truth, t_end)
    times = t[::25]
    rng = np.random.default_rng(3)
    values = angle[::25] + 1e-3 * rng.standard_normal(times.size)
    result = fit(PENDULUM, "joint:angle:pivot", (times, values), [f"{GX}=0.2", f"{G}=-9.6"],
                 t_end=t_end)
    assert result.success and times.size == 21
    p = np.array([result.values[GX], result.values[G]])

    def model(q):
        return pendulum_angle(q, t_end)[1][::25]

    r = model(p) - values
    jac = np.zeros((times.size, 2))
    for j in range(2):
        step = np.zeros(2)
        step[j] = 1e-4 * max(1.0, abs(p[j]))
        jac[:, j] = (model(p + step) - model(p - step)) / (2 * step[j])
    sigma2 = r @ r / (times.size - 2)
    expected = np.sqrt(sigma2 * np.diag(np.linalg.inv(jac.T @ jac)))
    got = np.array([result.standard_errors[GX], result.standard_errors[G]])
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    assert result.rms_final == pytest.approx(np.sqrt(np.mean(r ** 2)), rel=1e-6)
    assert result.measurements == 21


def test_no_spare_measurements_give_nan_standard_errors():
    """Two measurements, three parameters (a spring–damper pendulum's stiffness, damping
    and free length): no variance to estimate, the standard errors are NaN."""
    model, _, _ = small_model("spring", 2)
    run = {"t_end": 0.05, "h": 5e-3}
    keys = ["forces.s.stiffness", "forces.s.damping", "forces.s.free_length"]
    truth = sensitivities(model, "tip", keys, component="y", **run)
    times, values = truth.t[[0, -1]], truth.values[[0, -1]]
    start = [f"{k}={v * 1.1}" for k, v in zip(keys, truth.parameter_values, strict=True)]
    result = fit(model, "tip", (times, values), start, component="y", **run)
    assert all(np.isnan(result.standard_errors[k]) for k in keys), result.standard_errors
    assert result.measurements == 2


def test_measurements_beyond_the_run_are_not_used(tmp_path):
    """Data over 1 s, a run of 0.3 s: the 31 measurements within it are the residuals
    (the command says so); data all after the run are refused."""
    t, angle = pendulum_angle((0.0, -9.81), 1.0)
    data = tmp_path / "angle.csv"
    data.write_text("time,angle\n" + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in
                                             zip(t[::10], angle[::10], strict=True)))
    code, out = run_cli(["fit", PENDULUM, "--data", str(data), "--sensor",
                         "joint:angle:pivot", "--param", f"{G}=-9.7", "--t-end", "0.3",
                         "--json"])
    assert code == 0, out
    summary = json.loads(out)
    assert summary["measurements"] == 31
    assert summary["values"][G] == pytest.approx(-9.81, rel=1e-9)
    with pytest.raises(ValidationError, match="no measurement within the run"):
        fit(PENDULUM, "joint:angle:pivot", (t[-5:], angle[-5:]), [G], t_end=0.3)


@pytest.mark.parametrize("spec, names", [
    ("joint:angle:nope", ["'nope'", "pivot"]),
    ("marker:position:bob.X", ["'bob.X'", "bob.O"]),
    ("joint:bogus:pivot", ["'bogus'", "angle_rate"]),
    ("modal:xi1:beam", ["'xi1'", "coordinates"]),
    ("modal:coordinates:bob", ["not flexible"]),
    ("bogus:angle:pivot", ["'bogus'", "joint"]),
])
@pytest.mark.parametrize("command", ["sensitivity", "fit"])
def test_misspelt_inline_sensor_is_refused_by_name(spec, names, command, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("0,0.5\n0.01,0.5\n0.02,0.5\n")
    extra = ["--data", str(data)] if command == "fit" else []
    code, out = run_cli([command, PENDULUM, "--sensor", spec, *extra, "--param",
                         "bodies.bob.mass", "--t-end", "0.02"])
    assert code == 2, out
    assert "Traceback" not in out and f"sensor {spec!r}" in out
    for name in names:
        assert name in out, (name, out)


@pytest.mark.parametrize("value", ["0", "-3"])
def test_max_evaluations_must_be_positive(value, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("0,0.5\n0.01,0.5\n0.02,0.5\n")
    code, out = run_cli(["fit", PENDULUM, "--data", str(data), "--sensor",
                         "joint:angle:pivot", "--param", G, "--t-end", "0.02",
                         "--max-evaluations", value])
    assert code == 2 and "--max-evaluations" in out and f"got {value}" in out, out
    beam = tmp_path / "beam.toml"
    beam.write_text(BEAM_CASE.format(height=0.01, payload=PAYLOAD))
    test = tmp_path / "f1.csv"
    test.write_text("mode,frequency_hz\n1,20.0\n")
    code, out = run_cli(["update", str(beam), "--modal-data", str(test), "--param",
                         "bodies.beam.beam.material.E", "--max-evaluations", value])
    assert code == 2 and "--max-evaluations" in out and f"got {value}" in out, out


def test_update_refuses_fewer_residuals_than_parameters(tmp_path):
    """One measured frequency, three section and material parameters: refused up front,
    naming both counts (it used to wander to a 5e5 kg beam)."""
    beam = tmp_path / "beam.toml"
    beam.write_text(BEAM_CASE.format(height=0.01, payload=PAYLOAD))
    test = tmp_path / "f1.csv"
    test.write_text("mode,frequency_hz\n1,20.0\n")
    keys = ["bodies.beam.beam.material.E", "bodies.beam.beam.section.height",
            "bodies.beam.beam.section.width"]
    code, out = run_cli(["update", str(beam), "--modal-data", str(test),
                         *[a for k in keys for a in ("--param", k)]])
    assert code == 2, out
    assert "1 residual" in out and "3 parameters" in out
    with pytest.raises(ValidationError, match="1 residual"):
        update(str(beam), str(test), keys[:2])
