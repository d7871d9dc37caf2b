"""``fm.update`` / ``flexmbs update``: model updating of a built-in beam against test modal
data by least squares on frequencies and 1 − MAC (docs/gradients.md, "Model updating
against a modal test"; the residuals and pairing: :mod:`.modal_update`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._blas import single_threaded_blas
from ..errors import ValidationError
from .beam_parameters import beam_body, beam_tangent
from .fit import check_max_evaluations, standard_errors
from .modal_update import (
    MAC_FROM_DOFS,
    TestMode,
    dof_rows,
    mac,
    pair_modes,
    read_modal_test,
    stacked_shapes,
)
from .parameters import REL_STEP, CaseModels, apply_bounds, resolve


@dataclass
class UpdateResult:
    """Updated ``values`` {key: p} from ``initial``, their ``standard_errors``, the pairs
    of test and model modes before and after (``pairs_initial``, ``pairs``: test mode,
    its frequency [Hz], the model coordinate (1-based), its frequency [Hz] and the MAC),
    the root-mean-square residual before and after, evaluations, success, message."""

    body: str
    values: dict
    initial: dict
    standard_errors: dict
    pairs_initial: list
    pairs: list
    rms_initial: float
    rms_final: float
    evaluations: int
    success: bool
    message: str

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in (
            "body", "values", "initial", "standard_errors", "pairs_initial", "pairs",
            "rms_initial", "rms_final", "evaluations", "success", "message")}


class _Problem:
    """Residuals and their Jacobian at parameter values x (cached per x)."""

    def __init__(self, source, keys, body, tests, weights):
        self.source, self.keys, self.body, self.tests = source, keys, body, tests
        self.w_f, self.w_mac = weights
        self.cache: dict = {}
        self.pairs: list = []

    def source_at(self, x):
        src = self.source
        for key, value in zip(self.keys, x, strict=True):
            src = src.with_value(key, float(value))
        return src

    def evaluate(self, x):
        x = tuple(float(v) for v in x)
        if x in self.cache:
            return self.cache[x]
        src = self.source_at(x)
        data = src.nominal().model.bodies[self.body].data
        pairs = pair_modes(self.tests, data)
        tangents = [beam_tangent(src, k, v, REL_STEP * (abs(v) or 1.0))
                    for k, v in zip(self.keys, x, strict=True)]
        freqs = data.coordinate_frequencies
        dfreq = np.array([bt.tangent.frequencies(data) for bt in tangents])
        shapes = stacked_shapes(data)
        dshapes = []
        for bt in tangents:
            d_phi, d_psi = bt.tangent.shapes(bt.fe)
            dshapes.append(d_phi if data.psi is None else np.vstack([d_phi, d_psi]))
        res, jac, summary = [], [], []
        for i, j, _ in pairs:
            test: TestMode = self.tests[i]
            res.append(self.w_f * (freqs[j] - test.frequency) / test.frequency)
            jac.append(self.w_f * dfreq[:, j] / test.frequency)
            value = float("nan")
            if test.values.size >= MAC_FROM_DOFS:  # (one DOF: paired by frequency)
                rows = dof_rows(data, test)
                a, b = test.values, shapes[rows, j]
                value = mac(a, b)
                ab, aa, bb = a @ b, a @ a, b @ b
                grad_b = 2 * ab * a / (aa * bb) - 2 * ab ** 2 * b / (aa * bb ** 2)
                res.append(self.w_mac * (1.0 - value))
                jac.append(-self.w_mac * np.array([grad_b @ d[rows, j] for d in dshapes]))
            summary.append({"test": test.label, "frequency_test": test.frequency,
                            "model_mode": j + 1, "frequency_model": float(freqs[j]),
                            "mac": value})
        out = (np.array(res), np.array(jac), summary)
        self.cache = {x: out}
        return out


def update(case, tests, parameters, *, bounds=None, frequency_weight: float = 1.0,
           mac_weight: float = 1.0, max_evaluations: int = 50,
           overrides=None) -> UpdateResult:
    """Update the ``parameters`` (keys of one built-in beam's table, as for
    :func:`~flexmbs.gradients.api.gradient`; "KEY=START" sets a start) of ``case`` (a
    case file) so that the beam's modes match ``tests`` (a list of
    :class:`~flexmbs.gradients.modal_update.TestMode` or a modal-test CSV path), within
    ``bounds`` {key: (low, high)} (default: non-negative). Weights: ``frequency_weight``
    on the relative frequency errors, ``mac_weight`` on 1 − MAC; ``max_evaluations``: a
    positive integer. Refused (ValidationError naming both counts) when the test gives
    fewer residuals — one frequency per mode, one MAC per mode measured at two DOFs or
    more — than there are parameters: the parameters are then not determined."""
    from scipy.optimize import least_squares

    max_evaluations = check_max_evaluations(max_evaluations)
    if isinstance(tests, (str, Path)):
        tests = read_modal_test(tests)
    if not tests:
        raise ValidationError("no test modes given")
    if isinstance(parameters, str):
        parameters = [parameters]
    source = CaseModels(case, overrides)
    params, source = resolve(parameters, source)
    bodies = {beam_body(source, p.key) for p in params}
    if None in bodies or len(bodies) != 1:
        raise ValidationError(f"model updating takes keys of one built-in beam's table "
                              f"(bodies.<name>.beam.…), got {[p.key for p in params]}")
    body = bodies.pop()
    keys = [p.key for p in params]
    tests = list(tests)
    n_res = sum(1 + (t.values.size >= MAC_FROM_DOFS) for t in tests)
    if n_res < len(keys):
        raise ValidationError(
            f"model updating: the modal test gives {n_res} residual(s) ({len(tests)} "
            f"frequenc{'y' if len(tests) == 1 else 'ies'} and {n_res - len(tests)} MAC "
            f"value(s) of modes measured at {MAC_FROM_DOFS} or more DOFs) for "
            f"{len(keys)} parameters {keys}: fewer measurements than parameters leave "
            f"them undetermined; measure more modes (or shapes) or update fewer "
            f"parameters")
    for w, name in ((frequency_weight, "frequency_weight"), (mac_weight, "mac_weight")):
        if not (np.isfinite(w) and w >= 0):
            raise ValidationError(f"{name} must be a non-negative number, got {w!r}")
    problem = _Problem(source, keys, body, list(tests), (frequency_weight, mac_weight))
    x0 = np.array([p.value for p in params], dtype=float)
    low, high = np.zeros(x0.size), np.full(x0.size, np.inf)
    low[x0 < 0] = -np.inf
    apply_bounds(bounds, keys, x0, low, high)
    with single_threaded_blas():  # small dense eigenproblems: threads only contend
        r0, _, pairs0 = problem.evaluate(x0)
        out = least_squares(lambda x: problem.evaluate(x)[0], x0,
                            jac=lambda x: problem.evaluate(x)[1], bounds=(low, high),
                            x_scale="jac", max_nfev=max_evaluations, xtol=1e-12,
                            ftol=1e-12, gtol=1e-12)
        r, g, pairs = problem.evaluate(out.x)
    errors = standard_errors(r, g)
    return UpdateResult(body, dict(zip(keys, map(float, out.x), strict=True)),
                        dict(zip(keys, map(float, x0), strict=True)),
                        dict(zip(keys, map(float, errors), strict=True)), pairs0, pairs,
                        float(np.sqrt(np.mean(r0 ** 2))), float(np.sqrt(np.mean(r ** 2))),
                        int(out.nfev), bool(out.success), str(out.message))
