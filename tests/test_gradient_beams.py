"""FE design parameters of built-in beams (flexmbs.modal.sensitivity,
flexmbs.gradients.beam_parameters; docs/gradients.md, "FE design parameters"): the
modal data's derivative by Nelson's method against analytic scalings (E, ρ, the height of
a rectangle) and against central differences of the modal data reduced again at p ± h;
the gradient of a run against central differences of the run; refusals."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from test_gradients import RTOL, case_objective

from flexmbs.cases.beam_body import beam_fe, beam_modal_data
from flexmbs.errors import ModelError
from flexmbs.gradients import Objective, gradient
from flexmbs.gradients.beam_parameters import beam_tangent
from flexmbs.gradients.parameters import CaseModels, resolve
from flexmbs.modal.sensitivity import clamped_tangent, static_correction_tangent
from flexmbs.modal.stiffening import mode_vectors

#: A steel cantilever 0.6 m, 20 mm wide (y) by 10 mm high (z), clamped at its root.
RECTANGLE = {"length": 0.6, "elements": 12, "modes": 4, "stress": False,
             "material": {"E": 210e9, "nu": 0.3, "rho": 7850.0},
             "section": {"kind": "rectangle", "width": 0.02, "height": 0.01}}
#: An aluminium box arm with a tip payload and static-correction modes (robot_arm's).
BOX = {"length": 0.5, "elements": 10, "modes": 4, "stress": False,
       "material": {"E": 70e9, "nu": 0.33, "rho": 2700.0},
       "section": {"kind": "box", "width": 0.03, "height": 0.015, "wall": 0.002},
       "static_correction": "tip",
       "point_masses": [{"node": "tip", "mass": 0.5, "inertia": [2e-4, 2e-4, 2e-4]}]}


def spec_at(spec, path, value):
    out = copy.deepcopy(spec)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


def tangent_of(spec, path, rel=1e-6):
    """(ModalData, FE model, ModalTangent) of ``spec`` along ``path``."""
    node = spec
    for part in path:
        node = node[part]
    d = rel * node
    fe = beam_fe(spec)[0]
    plus, minus = beam_fe(spec_at(spec, path, node + d))[0], \
        beam_fe(spec_at(spec, path, node - d))[0]
    d_k, d_m = (plus.stiffness - minus.stiffness) / (2 * d), (plus.mass - minus.mass) / (2 * d)
    data = beam_modal_data(spec)
    tangent = clamped_tangent(fe, d_k, d_m, data, spec["modes"])
    if spec.get("static_correction"):
        tangent = static_correction_tangent(fe, d_k, d_m, data, tangent, spec["modes"],
                                            spec["static_correction"])
    return data, fe, tangent


def test_scalings_of_e_rho_and_a_rectangles_height_are_analytic():
    """K ∝ E (ν held) and M ∝ ρ leave the shapes alone: dK_ff/dE = K_ff/E,
    dM_ff/dρ = M_ff/ρ. The height h of a rectangle enters bending in its plane as
    EI ∝ h³ and ρA ∝ h: those modes keep their shapes, λ ∝ h², so df/dh = f/h (the
    cantilever check of the issue), dK_ff/dh = 3 K_ff/h and dM_ff/dh = M_ff/h; bending
    across it has EI ∝ h: df/dh = 0."""
    data, fe, t_e = tangent_of(RECTANGLE, ("material", "E"))
    k, m = np.diag(data.K_ff), np.diag(data.M_ff)
    np.testing.assert_allclose(np.diag(t_e.K_ff) * 210e9, k, rtol=1e-7)
    np.testing.assert_allclose(np.diag(t_e.M_ff), 0.0, atol=1e-8 * m.max() / 210e9)
    assert np.abs(t_e.modes).max() * 210e9 < 1e-7 * np.abs(mode_vectors(fe, data)).max()
    _, _, t_rho = tangent_of(RECTANGLE, ("material", "rho"))
    np.testing.assert_allclose(np.diag(t_rho.M_ff) * 7850.0, m, rtol=1e-7)
    np.testing.assert_allclose(np.diag(t_rho.K_ff), 0.0, atol=1e-8 * k.max() / 7850.0)
    _, _, t_h = tangent_of(RECTANGLE, ("section", "height"))
    h = 0.01
    modes = mode_vectors(fe, data)
    f = data.coordinate_frequencies
    df = t_h.frequencies(data)
    bending_z = [j for j in range(4) if np.abs(modes[2::6, j]).max() > 0.99]  # uz peak 1
    bending_y = [j for j in range(4) if np.abs(modes[1::6, j]).max() > 0.99]
    assert len(bending_z) == 2 and len(bending_y) == 2
    np.testing.assert_allclose(df[bending_z] * h, f[bending_z], rtol=1e-7)
    np.testing.assert_allclose(df[bending_y], 0.0, atol=1e-8 * f.max() / h)
    np.testing.assert_allclose(np.diag(t_h.K_ff)[bending_z] * h, 3 * k[bending_z],
                               rtol=1e-7)
    np.testing.assert_allclose(np.diag(t_h.M_ff)[bending_z] * h, m[bending_z], rtol=1e-7)
    assert np.abs(t_h.modes[:, bending_z]).max() * h < 1e-7


@pytest.mark.parametrize("path", [("section", "height"), ("section", "wall"),
                                  ("point_masses", 0, "mass"), ("material", "rho")])
def test_modal_derivatives_against_differences_of_the_reduction(path):
    """The box arm with a payload and static-correction modes: M_ff, K_ff and every
    mode's shape (signs aligned) against central differences of the modal data reduced
    again at p ± 10⁻³ p. The reduction's own round-off (about 1e-7 of the shapes, as a
    static-correction mode is a small remainder after the M-orthogonalization) limits
    the differences to about 1e-4 of the derivatives."""
    data, fe, tangent = tangent_of(BOX, path)
    node = BOX
    for part in path:
        node = node[part]
    h = 1e-3 * node
    ends = [beam_modal_data(spec_at(BOX, path, node + s * h)) for s in (1, -1)]
    modes = mode_vectors(fe, data)
    vectors = []
    for end in ends:
        v = mode_vectors(fe, end)
        vectors.append(v * np.sign(np.einsum("ij,ij->j", v, modes)))
    fd_modes = (vectors[0] - vectors[1]) / (2 * h)
    fd_k = (np.diag(ends[0].K_ff) - np.diag(ends[1].K_ff)) / (2 * h)
    fd_m = (np.diag(ends[0].M_ff) - np.diag(ends[1].M_ff)) / (2 * h)
    k, m = np.diag(data.K_ff), np.diag(data.M_ff)
    for name, got, fd, ref in (("K_ff", np.diag(tangent.K_ff), fd_k, k),
                               ("M_ff", np.diag(tangent.M_ff), fd_m, m)):
        err = np.abs(got - fd) / (ref / node)  # per relative change of p
        assert err.max() < 1e-4, (name, err)
    scale = np.abs(modes).max(axis=0) / node  # a relative change of 1 per unit p / p
    err = np.abs(tangent.modes - fd_modes).max(axis=0) / scale
    assert err.max() < 3e-4, err


BEAM_CASE = """
[[bodies]]
name = "beam"
type = "flexible"
xi = [0.001, 0.0, 0.0, 0.0]

[bodies.beam]
length = 0.6
elements = 12
modes = 4
stress = false
material = "steel"
section = {{ kind = "rectangle", width = 0.02, height = {height} }}
{payload}

[[markers]]
body = "beam"
name = "root"
node = 1

[[markers]]
body = "beam"
name = "tip"
node = 13

[[markers]]
body = "ground"
name = "O"

[[joints]]
name = "clamp"
type = "fixed"
i = "ground.O"
j = "beam.root"

[solver]
method = "newmark"
h = 5e-4
t_end = 0.03
"""


@pytest.fixture
def beam_case(tmp_path):
    path = tmp_path / "beam.toml"
    path.write_text(BEAM_CASE.format(height=0.01, payload=PAYLOAD))
    return path


#: The beam case's tip payload.
PAYLOAD = 'point_masses = [{ node = "tip", mass = 0.05 }]'


def test_run_gradient_of_beam_parameters_against_differences_of_the_run(beam_case):
    """The released cantilever with a tip payload: the final vertical tip position's
    derivative along the section height, E (a named material's) and the payload mass
    against central differences of the run, each run reducing its beam again; the
    sweep on the compiled engine's matrices and differences equals the NumPy path's."""
    objective = Objective("marker:position:beam.tip", "final", component="z")
    keys = ["bodies.beam.beam.section.height", "bodies.beam.beam.material.E",
            "bodies.beam.beam.point_masses[0].mass"]
    result = gradient(str(beam_case), objective, keys, newton="converged")
    assert result.how[keys[0]].startswith("modal data by Nelson's method")
    assert result.cost["jacobians"] == "compiled"
    numpy_path = gradient(str(beam_case), objective, keys, newton="converged",
                          jacobian_engine="python")  # NumPy tangents and differences
    for key in keys:
        assert numpy_path.gradient[key] == pytest.approx(result.gradient[key], rel=1e-8)
    steel = {"E": 210e9, "nu": 0.3, "rho": 7850.0}
    for key, value, make in (
            (keys[0], 0.01, lambda v: {keys[0]: v}),
            (keys[1], 210e9, lambda v: {"bodies.beam.beam.material": {**steel, "E": v}}),
            (keys[2], 0.05, lambda v: {"bodies.beam.beam.point_masses": [
                {"node": "tip", "mass": v}]})):
        d = 1e-4 * value
        fd = (case_objective(str(beam_case), objective, make(value + d))
              - case_objective(str(beam_case), objective, make(value - d))) / (2 * d)
        assert result.gradient[key] == pytest.approx(fd, rel=RTOL), key


def discrete_quarter_period(omega, dt):
    """The first zero crossing, interpolated linearly between steps, of the trapezoidal
    rule's (Newmark's average acceleration) free vibration from rest:
    x_k = cos(k θ), tan(θ/2) = ω Δt/2 (undamped, amplitude kept) [s]."""
    theta = 2 * np.arctan(0.5 * omega * dt)
    k = int(np.floor(0.5 * np.pi / theta))
    x0, x1 = np.cos(k * theta), np.cos((k + 1) * theta)
    return dt * (k + x0 / (x0 - x1))


def test_quarter_period_of_the_released_cantilever_follows_its_height(tmp_path):
    """ξ₁ of the released, clamped beam (no payload) oscillates at its first frequency,
    bending in the height's plane, f ∝ h. So the first zero crossing t* ≈ T/4 ∝ 1/h:
    (h/t*) dt*/dh = (ω/t*) dt*/dω, −1 for the continuous motion; for the discrete run,
    the log-derivative of the trapezoidal rule's interpolated crossing
    (:func:`discrete_quarter_period`), here −0.9987 — to 1e-6."""
    path = tmp_path / "bare.toml"
    path.write_text(BEAM_CASE.format(height=0.01, payload=""))
    key = "bodies.beam.beam.section.height"
    result = gradient(str(path), Objective("modal:coordinates:beam", "crossing",
                                           component="xi1"), [key], newton="converged")
    spec = {**RECTANGLE, "material": "steel"}
    omega = 2 * np.pi * beam_modal_data(spec).coordinate_frequencies[0]
    dt = 5e-4
    t_star = discrete_quarter_period(omega, dt)
    assert result.value == pytest.approx(t_star, rel=1e-9)
    d = 1e-6 * omega
    expected = omega / t_star * (discrete_quarter_period(omega + d, dt)
                                 - discrete_quarter_period(omega - d, dt)) / (2 * d)
    assert abs(expected + 1) < 2e-3
    relative = result.values[key] * result.gradient[key] / result.value
    assert relative == pytest.approx(expected, abs=1e-6)


def test_beam_parameters_that_cannot_be_differentiated_are_refused(beam_case, tmp_path):
    """The length (moves the nodes), the mode count, a square section (two bending
    planes at one frequency) and a body with stiffening are refused by name."""
    for key in ("bodies.beam.beam.length", "bodies.beam.beam.modes"):
        with pytest.raises(ModelError, match="mesh or its reduction"):
            gradient(str(beam_case), Objective("modal:coordinates:beam", "final",
                                               component="xi1"), [key])
    square = tmp_path / "square.toml"
    square.write_text(BEAM_CASE.format(height=0.02, payload=PAYLOAD))
    source = CaseModels(square)
    (par,), _ = resolve(["bodies.beam.beam.material.rho"], source)
    with pytest.raises(ModelError, match="same frequency"):
        beam_tangent(source, par.key, par.value, 1e-5 * par.value)
