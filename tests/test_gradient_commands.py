"""``flexmbs sensitivity`` and ``flexmbs fit`` (docs/cli.md, docs/gradients.md): the
command's JSON against the API, its text output and errors; identification of known
parameters from synthetic measurements with 1 % noise, recovered within their
confidence intervals (the API and the command)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_runner import run_cli
from test_gradients import small_model

from flexmbs.gradients import Objective, fit, gradient, sensitivities

PENDULUM = "cases/seed_pendulum.toml"


def test_sensitivity_command_json_is_the_api_gradient():
    code, out = run_cli(["sensitivity", PENDULUM, "--sensor", "joint:angle:pivot",
                         "--measure", "rms", "--param", "bodies.bob.com[1]",
                         "--param", "model.gravity[1]", "--t-end", "0.05", "--json"])
    assert code == 0, out
    summary = json.loads(out)
    api = gradient(PENDULUM, Objective("joint:angle:pivot", "rms"),
                   ["bodies.bob.com[1]", "model.gravity[1]"], t_end=0.05)
    assert summary["value"] == pytest.approx(api.value, rel=1e-12)
    for key, value in api.gradient.items():
        assert summary["gradient"][key] == pytest.approx(value, rel=1e-9)
    assert set(summary["cost"]) >= {"forward_seconds", "backward_seconds", "memory_bytes",
                                    "checkpoint_every", "steps"}
    assert summary["how"] == {"bodies.bob.com[1]": "analytic",
                              "model.gravity[1]": "analytic"}


def test_sensitivity_command_text_and_errors():
    code, out = run_cli(["sensitivity", PENDULUM, "--sensor", "joint:angle:pivot",
                         "--param", "model.gravity[1]", "--t-end", "0.02",
                         "--checkpoint-every", "4"])
    assert code == 0, out
    assert "final(joint:angle:pivot)" in out and "model.gravity[1]" in out
    assert "backward" in out and "every 4" in out
    code, out = run_cli(["sensitivity", PENDULUM, "--sensor", "joint:angle:pivot",
                         "--param", "bodies.nobody.mass", "--t-end", "0.02"])
    assert code == 2 and "no [[bodies]] entry named 'nobody'" in out
    code, out = run_cli(["sensitivity", PENDULUM, "--sensor", "nope", "--param",
                         "model.gravity[1]", "--t-end", "0.02"])
    assert code == 2 and "unknown sensor 'nope'" in out


def test_fit_recovers_a_spring_from_noisy_synthetic_data():
    """Stiffness and damping of a spring–damper from its pendulum's tip height with 1 %
    noise, started 30 % off: within three standard errors of the truth."""
    model, _, _ = small_model("spring", 2)
    run = {"t_end": 0.3, "h": 5e-3}
    keys = ["forces.s.stiffness", "forces.s.damping"]
    truth = sensitivities(model, "tip", keys, component="y", **run)
    rng = np.random.default_rng(0)
    noisy = truth.values + 0.01 * np.std(truth.values) * rng.normal(size=truth.t.size)
    start = [f"{k}={v * f}" for k, v, f in zip(keys, truth.parameter_values, (1.3, 0.7),
                                                strict=True)]
    result = fit(model, "tip", (truth.t, noisy), start, component="y",
                 bounds={"forces.s.damping": (0.0, 10.0)}, **run)
    assert result.success and result.rms_final < 0.2 * result.rms_initial
    for key, value in zip(keys, truth.parameter_values, strict=True):
        assert abs(result.values[key] - value) <= 3 * result.standard_errors[key], key
        assert result.standard_errors[key] < 0.05 * value


def test_fit_command_recovers_gravity(tmp_path):
    """flexmbs fit: the pendulum's gravity from its measured angle (1 % noise)."""
    sens = sensitivities(PENDULUM, "joint:angle:pivot", ["model.gravity[1]"], t_end=0.15)
    rng = np.random.default_rng(1)
    noisy = sens.values + 0.01 * np.std(sens.values) * rng.normal(size=sens.t.size)
    data = tmp_path / "angle.csv"
    data.write_text("time,angle\n" + "".join(f"{t!r},{v!r}\n" for t, v in
                                             zip(sens.t, noisy, strict=True)))
    code, out = run_cli(["fit", PENDULUM, "--data", str(data), "--sensor",
                         "joint:angle:pivot", "--param", "model.gravity[1]=-9.0",
                         "--bounds", "model.gravity[1]=-12:-5", "--t-end", "0.15",
                         "--json"])
    assert code == 0, out
    summary = json.loads(out)
    g, err = summary["values"]["model.gravity[1]"], summary["standard_errors"][
        "model.gravity[1]"]
    assert abs(g + 9.81) <= 3 * err and err < 0.05
    code, out = run_cli(["sensitivity", PENDULUM, "--sensor", "joint:angle:pivot",
                         "--measure", "tracking", "--data", str(data), "--param",
                         "model.gravity[1]", "--t-end", "0.15", "--json"])
    assert code == 0, out
    assert json.loads(out)["value"] == pytest.approx(np.var(noisy - sens.values), rel=0.2)
    code, out = run_cli(["fit", PENDULUM, "--data", str(tmp_path / "missing.csv"),
                         "--sensor", "joint:angle:pivot", "--param", "model.gravity[1]"])
    assert code == 2 and "missing.csv" in out


def test_gradients_page_example_prints_the_analytic_sensitivities(capsys):
    """docs/gradients.md's example: the quarter period's relative sensitivities to the
    length and to gravity are ±1/2 (T ∝ √(L/g))."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "gradients.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    exec(compile(blocks[0], "gradients.md", "exec"), {})
    out = capsys.readouterr().out
    assert "(p/t*) dt*/dp = 0.50000" in out and "(p/t*) dt*/dp = -0.50000" in out
