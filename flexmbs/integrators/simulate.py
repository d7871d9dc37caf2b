"""The integration driver: consistent initial conditions, the step loop over an
:class:`~flexmbs.integrators.stepper.AlphaIntegrator` with adaptive steps, outputs,
interruption and restart, and the result record (:func:`simulate`; failures return a
status with the partial history). The step object lives in :mod:`.stepper`, what is
recorded beside the states in :mod:`.recorder`.
"""

from __future__ import annotations

import time

import numpy as np

from .._blas import one_blas_thread
from ..assembly.system import System
from ..contact.log import ContactLog
from ..engine.concurrent_outputs import ConcurrentOutputs
from ..errors import FlexmbsError, ModelError, ValidationError
from ..results import SimulationResult
from .alpha import generalized_alpha, hht, newmark
from .control import ModelView, next_step, restart_after_held_jumps
from .health import (
    INTERRUPTED,
    WARNINGS,
    NumericalWarnings,
    RangeLimits,
    body_ranges,
    divergence,
    run_warnings,
    status_of,
)
from .interrupts import StepInterrupts
from .options import (
    METHOD_OPTIONS,
    SOLVER_TABLE_KEYS,
    STEP_OPTIONS,
    Engine,
    Formulation,
    SolverOptions,
    Tangents,
    apply_newton_preset,
    undamped,
)
from .output_angles import AngleLog, angle_forces, batch_angles, output_angles
from .real_time import StepTimes, real_time_statistics
from .recorder import (
    CONTACT_FIELDS,
    Recording,
    _hermite,
    _output_quantities,
    _sensor_records,
    describe_bodies,
    describe_model,
)
from .step_batch import StepBatches, last_step, run_batch, time_rounding
from .step_log import StepLog
from .stepper import REFRESH_ABOVE, AlphaIntegrator

__all__ = ["CONTACT_FIELDS", "METHODS", "REFRESH_ABOVE", "AlphaIntegrator", "Engine",
           "Formulation", "SimulationResult", "StepLog", "Tangents", "describe_bodies",
           "describe_model", "simulate", "undamped"]

METHODS = {"newmark": newmark, "hht": hht, "generalized-alpha": generalized_alpha}


#: The options of simulate() that a case file's [solver] table takes as well.
_CHECKED_KEYS = (STEP_OPTIONS | {"newton"}) & SOLVER_TABLE_KEYS


@one_blas_thread
def simulate(system: System, t_end: float, h: float, method: str = "generalized-alpha",
             *, output_every: int = 1, t_out=None, progress=None, restart=None,
             **options) -> SimulationResult:
    """Integrate from the consistent initial state to ``t_end`` with step ``h``.

    ``method``: "newmark" (options beta, gamma), "hht" (alpha) or "generalized-alpha"
    (rho_inf); ``newton``: the preset of Newton's tolerances, "default" or "converged"
    (:data:`~flexmbs.integrators.options.NEWTON_PRESETS`; rtol, atol, acc_rtol and
    phi_tol given explicitly win; ``statistics["newton_tolerances"]`` records those that
    ran); the remaining options go to :class:`AlphaIntegrator`. Unknown options raise
    TypeError naming them. Output: every ``output_every``-th step, or at the times
    ``t_out`` (cubic Hermite interpolation between steps; the step size is not forced).
    ``progress(t, t_end)`` is called after every step (or batch of steps,
    :mod:`.step_batch`). A failure stops the run and returns
    what was computed, with ``success=False`` and the reason.

    ``restart``: a SimulationResult of this model (one that ended early, or a shorter
    run) to continue from its restart point (:mod:`flexmbs.integrators.checkpoint`) up
    to ``t_end``; the result holds the whole history, and with the same settings it is
    the uninterrupted run's to round-off.
    """
    if method not in METHODS:
        raise ValidationError(f"method {method!r} is not one of {sorted(METHODS)}")
    # the step options a case file's [solver] takes are checked as it checks them (the
    # method's parameters below, by the method; None is each one's default)
    checked = SolverOptions.from_table({k: v for k, v in options.items()
                                        if k in _CHECKED_KEYS and v is not None})
    options.update({k: checked[k] for k in checked if k in options})  # numbers as float
    limits = _range_limits(options.pop("range_limits", None))
    # sampled controllers and the model inputs they drive (docs/cosimulation.md)
    controllers = list(options.pop("controllers", None) or ())
    signals = options.pop("signals", None) or {}
    if controllers and restart is not None:
        raise ValidationError("a run with controllers cannot be continued from a restart "
                              "point: the controllers' own states are not stored in it; "
                              "run it again from the start")
    newton = apply_newton_preset(options)
    method_keys, integ_keys = METHOD_OPTIONS[method], STEP_OPTIONS
    unknown = set(options) - method_keys - integ_keys
    if unknown:
        raise TypeError(f"simulate(method={method!r}) got unknown option(s) "
                        f"{sorted(unknown)}; it takes {sorted(method_keys | integ_keys)}")
    params = METHODS[method](**{k: options.pop(k) for k in list(options)
                                if k in method_keys})
    cp = None
    if restart is not None:
        from .checkpoint import restart_point

        given = sorted({"t0", "q0", "qd0"} & set(options))
        if given:
            raise ValidationError(f"restart continues from the restart point of the "
                                  f"previous result: {given} do not apply")
        cp = restart_point(restart, system, t_end)
        options.update(t0=float(cp["t"]), q0=cp["q"], qd0=cp["qd"])
    t_start = float(options.get("t0", 0.0))
    if (cp is None and getattr(system.model, "initial", ())
            and "q0" not in options and "qd0" not in options):
        from ..assembly.initial import initial_state  # joint-coordinate conditions

        options["q0"], options["qd0"] = initial_state(system, t_start)
    if not (np.isfinite(t_end) and t_end > t_start):
        raise ValidationError(f"t_end = {t_end!r} s must be a finite time after the start "
                              f"t0 = {t_start:g} s")
    if not (isinstance(output_every, int) and output_every >= 1):
        raise ValidationError(f"output_every must be an integer >= 1, got {output_every!r}")
    for key in ("q0", "qd0"):
        if options.get(key) is not None:
            options[key] = _start_vector(system, key, options[key])
    if t_out is not None:
        t_out = np.asarray(t_out, dtype=float)
        t_start = float(restart.t[0]) if cp else float(options.get("t0", 0.0))
        if (t_out.size == 0 or not np.isfinite(t_out).all() or np.min(t_out) < t_start
                or np.max(t_out) > t_end + 1e-12):
            raise ValidationError(f"the output times (t_out; a case's output_times) must be "
                                  f"finite times in [{t_start:g}, {t_end:g}] s, got "
                                  f"{t_out.tolist()[:8]}")
        twice = np.flatnonzero(np.diff(np.sort(t_out)) == 0)
        if twice.size:
            raise ValidationError(f"the output times (t_out; a case's output_times) have "
                                  f"{np.sort(t_out)[twice[0]]:g} s more than once (each "
                                  "output time once; their order is free)")
    start = time.perf_counter()
    with system.constraint_plan.shared():  # Φ_q at the assembled state, taken once
        integ = AlphaIntegrator(system, params, h, **options)
        if cp:
            integ.restore(cp, StepLog.resumed(restart.steps, cp.get("interval"),
                                              cp.get("last_iterations")))
        setup_time = time.perf_counter() - start
        report = system.check(integ.q, integ.t)
    if report.redundant:
        raise ModelError(
            f"the model has {len(report.redundant)} redundant constraint equation(s): "
            f"{', '.join(report.redundant)}; the integrator needs independent equations: "
            f"{report.advice or 'remove them (a joint with fewer equations where a loop closes)'}")
    outputs = None if t_out is None else np.sort(np.asarray(t_out, dtype=float))

    def on_output(t):
        """What the run keeps per output, not per step: an interval of the step record
        closes, the servos' integral histories and the input signals keep what t reads."""
        integ.stats.close()
        for servo in integ.servos:
            servo.pin(float(t))
        for signal in signals.values():
            signal.pin(float(t))

    rec = Recording(system.n_q, system.n_c, copy=integ.real_time, on_output=on_output)
    memory = AngleLog()  # the angle memory at each output
    wanted_angles = {force.name for force in angle_forces(system)}  # (read after the run)
    # state-dependent quantities (contacts: mode, impact speed, stick anchors) are taken
    # when each output is recorded
    derived = {k: [] for k in ("energy", "power")}
    contact_log = ContactLog(integ.contacts)  # the contacts' samples and states per output

    def derive(at_state: bool = False):
        """Contact quantities of the newest output (they depend on the contacts' states
        at that time, and so does the power of a model with contacts on the NumPy path);
        energies, and the power otherwise, come after the run from the outputs. The angle
        memory (System.unwrap) is kept with every output: the turns of the forces' angles
        for the energies and sensors after the run (output_angles)."""
        memory.add(system.angle_memory)
        if not integ.contacts:
            return
        q_k, qd_k = rec.newest("q"), rec.newest("qd")
        contact_log.add(integ.contact_samples(q_k, qd_k, at_state))
        if integ.compiled is None:  # (the kernels' outputs give the rest after the run)
            derived["power"].append(system.nonconservative_power(
                q_k, qd_k, rec.newest("lam"), float(rec.newest("t"))))

    def record():
        rec.add(integ.t, integ.q, integ.qd, integ.qdd, integ.lam)
        derive(at_state=True)

    def record_block(times, states, lams, contacts, angles=None, time_values=None):
        """The outputs at the ends of consecutive batch steps, as ``record`` after each
        (:func:`~flexmbs.integrators.step_batch.run_batch`); their output quantities
        start on the worker thread when there is one (with the steps' ``time_values``
        at those times)."""
        if angles is None:  # (no rotational springs: the memory unchanged in a batch)
            before, names, refs = system.angle_memory, [], None
            filled = present = np.zeros((len(times), 0))
        else:
            before, names = angles[0], integ.compiled.torsion_names
            filled, present, refs = batch_angles(before, angles[1], names, wanted_angles)
        rec.add_states(times, states, lams)
        memory.add_batch(before, names, filled, present)
        if concurrent is not None and (angles is None or refs is not None):
            # (recorded first: an interrupt leaves no job)
            concurrent.submit(len(rec) - len(times), times, states[:, 0], states[:, 1],
                              lams, refs, time_values)
        if contacts is not None:
            contact_log.add_block(*contacts)

    next_out = 0
    if cp:  # the history so far, then on from the restart point
        rec.extend(*(getattr(restart, key) for key in Recording.KEYS))
        memory.add_unknown(len(rec))
        next_out = cp["next_output"]
    elif outputs is None:
        record()
    else:
        while next_out < outputs.size and outputs[next_out] <= integ.t + 1e-14:
            record()
            rec.set_newest_time(outputs[next_out])
            if integ.contacts and integ.compiled is None:
                derived["power"][-1] = system.nonconservative_power(
                    rec.newest("q"), rec.newest("qd"), rec.newest("lam"),
                    float(outputs[next_out]))
            next_out += 1
    ranges = body_ranges(system)
    adaptive = options.get("error_tol") is not None
    numerical = NumericalWarnings()
    control = None
    if controllers:
        control = (controllers, ModelView(system, integ, signals))
        for ctrl in controllers:
            ctrl.start(control[1])
    step_times = StepTimes(h) if integ.real_time else None
    outputs_in_loop = 0.0  # [s] of output evaluation inside the step loop's timing
    concurrent = None if signals else ConcurrentOutputs.for_run(
        integ, int((t_end - integ.t) / h) // output_every)
    try:
        with numerical:
            success, message, diverged, interrupted, steps, next_out, stepping = _step_loop(
                system, integ, t_end, h, adaptive, limits, ranges, outputs, next_out, rec,
                record, derive, progress, output_every, numerical, cp["steps"] if cp else 0,
                control, step_times, None if signals else record_block)
        if concurrent is not None:
            stepping -= concurrent.main_thread_time  # (timed inside the batches)
            tic = time.perf_counter()
            concurrent.steps_done()  # (the last blocks, or a short run's first job)
            outputs_in_loop = concurrent.main_thread_time + time.perf_counter() - tic
    except BaseException:
        if concurrent is not None:
            concurrent.close()
        raise
    earlier = restart.statistics if cp else {}
    stepping += float(earlier.get("stepping_time", 0.0))
    checkpoint = {**integ.checkpoint(), "steps": steps, "next_output": next_out,
                  "stepping_time": stepping}
    if numerical.count and not success:
        message = f"{message}; before it: {numerical.sentence()}"
    post_start = time.perf_counter()
    try:
        derived.update(contact_log.totals())
        with numerical:
            t, q, qd, qdd_hist, lam_hist = rec.histories()
            refs = output_angles(system, t, q, qd, memory)
            known = None if concurrent is None else concurrent.collect(t.size)
            energies, viol, work = _output_quantities(system, integ, (t, q, qd, lam_hist),
                                                      derived, refs, known)
    finally:
        if concurrent is not None:
            concurrent.close()
    phi_v, vel_v = viol.reshape(-1, 2).T
    elastic = np.zeros(t.size)
    for body, sl in zip(system.bodies, system.slices, strict=True):
        if hasattr(body, "data"):
            elastic += body.strain_energy(q[:, sl][:, 7:])
    warns = run_warnings(ranges, t, q, qd, energies[:, 0] + energies[:, 1], work,
                         energies[:, 0], limits)
    if success and numerical.count:
        warns.append(numerical.run_warning())
    status = INTERRUPTED if interrupted else status_of(success, diverged, warns)
    if status == WARNINGS:
        message = "completed with warnings: " + "; ".join(w.message for w in warns)
    log = integ.stats
    statistics = {
        "engine": integ.engine.value, "engine_note": integ.engine_note,
        "kernels": integ.compiled.kernels if integ.compiled is not None else "",
        "formulation": integ.formulation.value,
        "steps": int(log.steps), "rejected_steps": int(integ.rejected),
        "halved_steps": int(integ.halvings),
        "newton_iterations": int(log.iterations),
        "iterations_per_step": log.iterations / log.steps if log.steps else 0.0,
        "factorizations": int(integ.refreshes), "batched_steps": int(integ.batched_steps),
        "compile_time": float(integ.compile_time),
        "stepping_time": float(stepping),
        "newton_tolerances": {"preset": newton, "rtol": integ.rtol, "atol": integ.atol,
                              "acc_rtol": integ.acc_rtol, "phi_tol": integ.phi_tol,
                              "max_iter": integ.max_iter},
        "output_time": float(time.perf_counter() - post_start + outputs_in_loop),
        "outputs_during_run": 0 if known is None else int(known[1].sum()),
        "setup_time": float(setup_time)}
    if integ.compiled is not None and integ.compiled.callbacks:  # docs/compiled.md
        statistics["callbacks"] = integ.compiled.callbacks.statistics()
    if integ.real_time:
        statistics.update(real_time_statistics(integ, step_times))
    if interrupted:
        statistics["interrupted_by"] = interrupted
    if cp:
        statistics["restarts"] = [*earlier.get("restarts", []), float(cp["t"])]
    contacts = contact_log.records()
    sensors = _sensor_records(system, t, q, qd, qdd_hist, lam_hist, contacts, statistics,
                              refs)
    return SimulationResult(
        t=t, q=q, qd=qd, qdd=qdd_hist, lam=lam_hist, kinetic=energies[:, 0],
        potential=energies[:, 1], elastic=elastic, nonconservative_work=work,
        phi_violation=phi_v, velocity_violation=vel_v, steps=log.summary(),
        coord_names=system.coord_names,
        constraint_names=system.constraint_names,
        settings={"method": params.name, "h": h,
                  **{k: v for k, v in options.items()
                     if k not in ("q0", "qd0", "on_compile")}},
        coupling=system.coupling, success=success, message=message,
        wall_time=time.perf_counter() - start, bodies=describe_bodies(system),
        model=describe_model(system), contacts=contacts, statistics=statistics,
        status=status, warnings=[w.as_dict() for w in warns], checkpoint=checkpoint,
        sensors=sensors)


def _step_loop(system, integ, t_end, h, adaptive, limits, ranges, outputs, next_out, rec,
               record, derive, progress, output_every, numerical, k=0, control=None,
               step_times=None, record_block=None):
    """The steps from integ.t to t_end with outputs, divergence checks, progress and the
    gathering of floating-point warnings, counting steps from ``k``; with ``control``
    (controllers, their view of the model) the controllers sample at their times and
    the steps land on them. Returns (success, message, diverged, interrupted (what by:
    "Ctrl-C", "SIGTERM" or ""), steps, next output index, stepping time [s]).
    ``step_times``: the streaming statistics of the steps' wall times (real-time mode,
    :class:`~flexmbs.integrators.real_time.StepTimes`); ``record_block``: the outputs of
    consecutive batch steps at once (:func:`~flexmbs.integrators.step_batch.run_batch`;
    None: one ``record()`` each)."""
    stepping = 0.0  # [s] in integ.step()
    success, message, diverged, interrupted = True, "completed", False, ""
    batches = StepBatches.for_run(integ, adaptive=adaptive, control=control,
                                  outputs=outputs, step_times=step_times)
    with StepInterrupts() as interrupts:
        while integ.t < t_end - time_rounding(t_end):
            if interrupts.reason is not None:  # a signal came during the last step
                success, message = False, _interrupted_message(integ.t, interrupts.reason)
                interrupted = interrupts.reason
                break
            n = 0 if batches is None else batches.steps_ahead(h, t_end)
            if n:  # a batch of steps in one kernel call (step_batch)
                tic = time.perf_counter()
                try:
                    k, reason = run_batch(batches, n, h, k, limits, ranges, output_every,
                                          record, record_block)
                    numerical.collect(integ.t)
                except KeyboardInterrupt:
                    success, message = False, _interrupted_message(integ.t, "Ctrl-C")
                    interrupted = "Ctrl-C"
                    break
                except Exception as exc:  # the kernel failed: keep the run so far
                    success, message = False, (f"stopped at t = {integ.t:.6g} s: "
                                               f"{type(exc).__name__}: {exc}")
                    break
                finally:
                    stepping += time.perf_counter() - tic
                if reason is not None:
                    success, message, diverged = False, reason, True
                    break
                if _progress_interrupted(progress, integ.t, t_end):
                    success, message = False, _interrupted_message(integ.t, "Ctrl-C")
                    interrupted = "Ctrl-C"
                    break
                continue
            # the step, or the last one (step_batch.last_step); it lands on t_end below
            integ.h = last_step(integ.h if adaptive else h, t_end - integ.t, t_end)
            land = None
            if control is not None:
                try:
                    integ.h, land = next_step(control[0], control[1], integ.h, t_end)
                    restart_after_held_jumps(control[1].signals, integ)
                except Exception as exc:  # a controller failed: keep the run so far
                    success, message = False, (f"stopped at t = {integ.t:.6g} s: {exc}"
                                               if isinstance(exc, FlexmbsError) else
                                               f"stopped at t = {integ.t:.6g} s: controller: "
                                               f"{type(exc).__name__}: {exc}")
                    break
            # the state at t_n, for interpolating outputs inside the step (the integrator
            # replaces its arrays at each step: references suffice)
            prev = (integ.t, integ.q, integ.qd, integ.qdd, integ.lam)
            h_step = integ.h
            tic = time.perf_counter()
            try:
                ok, msg = integ.step()
                numerical.collect(integ.t if ok else integ.t + integ.h)  # the step's end
            except KeyboardInterrupt:
                success, message = False, _interrupted_message(integ.t, "Ctrl-C")
                interrupted = "Ctrl-C"
                break
            except Exception as exc:  # a profile, callable or controller failed: keep it
                success, message = False, (f"stopped at t = {integ.t:.6g} s: "
                                           f"{type(exc).__name__}: {exc}")
                break
            finally:
                elapsed = time.perf_counter() - tic
                stepping += elapsed
                if step_times is not None:
                    step_times.add(elapsed)
            if not ok:
                success, message = False, msg
                break
            if land is not None and abs(integ.t - land) <= 1e-9 * h_step:
                integ.t = float(land)  # a controller's sample time (a step cut short,
                # by Newton or a contact, lands before it: the loop goes on)
            if abs(integ.t - t_end) < time_rounding(t_end):
                integ.t = float(t_end)  # land exactly on t_end
            k += 1
            if k % limits.check_every == 0:
                reason = divergence(ranges, integ.q, integ.t, limits)
                if reason is not None:
                    success, message, diverged = False, reason, True
                    if outputs is None:
                        record()  # the diverged state, for the post-mortem
                    break
            if outputs is None:
                if k % output_every == 0 or integ.t >= t_end - 1e-12:
                    record()
            else:
                t0, q0, qd0, qdd0, lam0 = prev
                while next_out < outputs.size and outputs[next_out] <= integ.t + 1e-14:
                    tt = outputs[next_out]
                    w = (tt - t0) / (integ.t - t0)
                    rec.add(tt, _hermite(t0, integ.t, q0, integ.q, qd0, integ.qd, tt),
                            _hermite(t0, integ.t, qd0, integ.qd, qdd0, integ.qdd, tt),
                            (1 - w) * qdd0 + w * integ.qdd, (1 - w) * lam0 + w * integ.lam)
                    derive()
                    next_out += 1
            if _progress_interrupted(progress, integ.t, t_end):
                success, message = False, _interrupted_message(integ.t, "Ctrl-C")
                interrupted = "Ctrl-C"
                break
    return success, message, diverged, interrupted, k, next_out, stepping


def _progress_interrupted(progress, t: float, t_end: float) -> bool:
    """Report ``progress(t, t_end)`` (if given); True when it raised KeyboardInterrupt
    (Ctrl-C in a progress bar)."""
    if progress is None:
        return False
    try:
        progress(t, t_end)
    except KeyboardInterrupt:
        return True
    return False


def _interrupted_message(t: float, reason: str) -> str:
    return (f"interrupted at t = {t:.6g} s ({reason}); the results up to there are kept "
            f"(flexmbs run --restart continues them)")


def _range_limits(value) -> RangeLimits:
    """``range_limits`` of :func:`simulate`: None (the defaults), a RangeLimits, or a
    dict of its fields (unknown keys are refused by name)."""
    if value is None:
        return RangeLimits()
    if isinstance(value, RangeLimits):
        return value
    if isinstance(value, dict):
        known = set(RangeLimits.__dataclass_fields__)
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValidationError(f"range_limits: unknown key(s) {unknown}; it takes "
                                  f"{sorted(known)}")
        return RangeLimits(**value)
    raise ValidationError(f"range_limits must be a dict or RangeLimits; got "
                          f"{type(value).__name__}")


def _start_vector(system, key: str, value) -> np.ndarray:
    """``q0`` or ``qd0`` as a float vector of one entry per coordinate; ValidationError
    naming the key and, for a non-finite entry, its coordinate."""
    try:
        vector = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValidationError(f"{key} must be numbers, one per coordinate, got "
                              f"{value!r}") from None
    if vector.shape != (system.n_q,):
        raise ValidationError(f"{key} must have {system.n_q} entries (one per coordinate: "
                              f"{', '.join(system.coord_names[:6])}, ...), got shape "
                              f"{vector.shape}")
    bad = np.flatnonzero(~np.isfinite(vector))
    if bad.size:
        raise ValidationError(f"{key}[{bad[0]}] ({system.coord_names[bad[0]]}) must be "
                              f"finite, got {float(vector[bad[0]])}")
    return vector
