"""The results of a run: :class:`SimulationResult` (docs/results_file.md).

A stage of its own: post-processing and studies read results through this package,
without importing the integrators.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .steps import StepSummary

#: The status of a run that completed without warnings (flexmbs.integrators.health).
COMPLETED = "completed"


@dataclass(kw_only=True)
class SimulationResult:
    """Arrays over the output steps plus what is needed to post-process without the code.

    t (n_t,); q, qd, qdd (n_t, n_q); lam (n_t, n_c); kinetic, potential (n_t,) [J];
    elastic (n_t,) [J]: ½ξᵀK_ffξ of the flexible bodies, with the cubic and quartic
        energy of nonlinear ones (part of ``potential``);
    nonconservative_work (n_t,) [J]: work of dampers, actuators, loads and drives since
    t0 (trapezoidal in the output times), so kinetic + potential − work stays constant;
    phi_violation, velocity_violation (n_t,): max |Φ| and max |Φ_q q̇ − ν|; ``steps``:
    the steps per output interval (:class:`~flexmbs.results.steps.StepSummary`: count,
    smallest, largest and mean h, Newton iterations; one row per output, none per step);
    names of coordinates and constraint rows; the settings; the coupling mode of each
    flexible body; ``success`` and ``message``.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    elastic: np.ndarray
    nonconservative_work: np.ndarray
    phi_violation: np.ndarray
    velocity_violation: np.ndarray
    steps: StepSummary
    coord_names: tuple
    constraint_names: tuple
    settings: dict
    coupling: dict
    success: bool
    message: str
    wall_time: float

    bodies: dict = field(default_factory=dict)
    model: dict = field(default_factory=dict)
    contacts: dict = field(default_factory=dict)
    """Per contact: arrays over the outputs ``gap``, ``penetration`` [m],
    ``normal_force``, ``tangential_force`` [N], ``normal_velocity`` [m/s], ``state``
    (0 open, 1 stick, 2 slip), ``dissipated`` [J, cumulative] and ``impacts`` (count)."""
    """Markers {"body.marker": {body, position (body frame) [, phi (3, n) for flexible
    bodies]}} and joints [{name, kind, i, j}], for drawing without the model code."""
    statistics: dict = field(default_factory=dict)
    """Run statistics: ``engine`` ("compiled" or "python") and ``engine_note`` (why the
    NumPy path ran), ``kernels`` (compiled engine: "prebuilt for <cpu>", the shipped
    kernel, or "compiled for this machine"), ``formulation`` (the constraint level:
    :class:`Formulation`), ``steps``, ``rejected_steps``, ``newton_iterations``,
    ``iterations_per_step``, ``factorizations`` (iteration-matrix builds), and times [s]:
    ``compile_time`` (making the compiled kernels ready, once per process: linking the
    prebuilt kernel, or importing numba and compiling the kernels or loading them from
    its cache; then one warm-up call), ``setup_time`` (consistent
    initial state, engine), ``stepping_time`` (the steps alone), ``output_time``
    (energies, power and violations after the run), and ``outputs_during_run`` (how
    many outputs had theirs evaluated on a second thread while the steps ran,
    :mod:`flexmbs.engine.concurrent_outputs`)."""
    status: str = COMPLETED
    """"completed", "completed with warnings" (``success`` True), "diverged" or "failed"
    (``success`` False; the history up to there is kept): see
    :mod:`flexmbs.integrators.health`."""
    warnings: list = field(default_factory=list)
    """The range checks that failed (:class:`~flexmbs.integrators.health.RunWarning` as
    dicts: code, subject, value, limit, time, message)."""
    checkpoint: dict = field(default_factory=dict)
    """The restart point after the last accepted step (``simulate(restart=...)``,
    :mod:`flexmbs.integrators.checkpoint`)."""
    source: str = ""
    """The file this result was read from ("" for a result computed here)."""
    case: dict = field(default_factory=dict)
    """The case the run was made from (``path``, ``text``, ``overrides``; empty for a
    run made in Python)."""
    sensors: dict = field(default_factory=dict)
    """Per sensor (:mod:`flexmbs.model.sensors`): ``values`` (n_t, n_components) at the
    output times, ``units``, ``components`` and its definition (``kind``, ``quantity``,
    ``target``, ``frame``, ``node``); see :meth:`sensor`."""

    def __repr__(self) -> str:
        t0, t1 = (float(self.t[0]), float(self.t[-1])) if len(self.t) else (0.0, 0.0)
        engine = self.statistics.get("engine", "?")
        return (f"<SimulationResult {self.status}: t = {t0:g}…{t1:g} s, {len(self.t)} "
                f"outputs, {self.statistics.get('steps', self.steps.total)} steps, "
                f"{len(self.coord_names)} coordinates, "
                f"{len(self.sensors)} sensors, engine {engine}"
                + (f", from {self.source}" if self.source else "") + ">")

    @property
    def h(self):
        raise AttributeError("SimulationResult keeps no per-step records since results "
                             "grow with the outputs only: the step sizes per output "
                             "interval are result.steps.h_min, .h_max, .h_mean, the step "
                             "count result.statistics['steps'] (docs/results_file.md)")

    @property
    def iterations(self):
        raise AttributeError("SimulationResult keeps no per-step records since results "
                             "grow with the outputs only: the Newton iterations per output "
                             "interval are result.steps.iterations and .iterations_max, "
                             "the total result.statistics['newton_iterations'] "
                             "(docs/results_file.md)")

    def energy_balance(self) -> tuple[float, float]:
        """(max |T + V − W − E₀| [J], the energy involved [J]: max of |E₀|, max T and
        max |W|), the check the run status uses (flexmbs.integrators.health)."""
        energy = self.kinetic + self.potential
        residual = (energy - energy[0]) - self.nonconservative_work
        scale = max(abs(float(energy[0])), float(np.max(np.abs(self.kinetic))),
                    float(np.max(np.abs(self.nonconservative_work))))
        return float(np.max(np.abs(residual))), scale

    def sensor(self, name: str) -> np.ndarray:
        """Values (n_t, n_components) of sensor ``name``, in its ``units``."""
        if name not in self.sensors:
            from ..errors import ValidationError

            raise ValidationError(f"no sensor {name!r} in these results; sensors: "
                                  f"{sorted(self.sensors) or 'none'}")
        return self.sensors[name]["values"]

    def coordinate(self, name: str) -> np.ndarray:
        """History of one coordinate, e.g. ``"beam.xi1"``."""
        if name not in self.coord_names:
            from ..errors import ValidationError

            raise ValidationError(f"no coordinate {name!r} in these results; coordinates: "
                                  f"{', '.join(self.coord_names[:12])}"
                                  f"{' …' if len(self.coord_names) > 12 else ''}")
        return self.q[:, self.coord_names.index(name)]

    def modal_coordinates(self, body: str) -> np.ndarray:
        """ξ history (n_t, n_m) of flexible body ``body``."""
        info = self.bodies.get(body)
        if info is None or "n_modes" not in info:
            from ..errors import ValidationError

            flexible = sorted(n for n, b in self.bodies.items() if "n_modes" in b)
            what = "no body" if info is None else "not a flexible body"
            raise ValidationError(f"{body!r} is {what} of these results; flexible bodies: "
                                  f"{flexible or 'none'}")
        start = info["start"] + 7
        return self.q[:, start:start + info["n_modes"]]

    def show(self, height: int = 520, **options):
        """The interactive viewer of these results inline in Jupyter: time slider, play
        and pause, deformation scale, colouring field (docs/post_processing.md). Returns
        an ``IPython.display.HTML`` (an iframe of the self-contained page that
        ``flexmbs view`` writes), ``height`` pixels tall; options ``scale``, ``field``
        ("displacement" [mm], "stress" [MPa], "none"), ``frames``, ``speed``, ``title``
        as :func:`flexmbs.view.scene_data`. Needs IPython."""
        from ..view import notebook_view

        return notebook_view(self, height=height, **options)

    def save(self, path) -> None:
        """Write everything to one HDF5 file (readable without the model code)."""
        from .io import save_result

        save_result(self, path)

    @staticmethod
    def load(path) -> SimulationResult:
        """Read a file written by :meth:`save`."""
        from .io import read_result

        return read_result(path, SimulationResult)


def load_result(path) -> SimulationResult:
    """Read a result file written by :meth:`SimulationResult.save`."""
    return SimulationResult.load(path)
