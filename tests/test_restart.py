"""Restart (docs/integrators.md, "Restart"): a run interrupted (Ctrl-C, SIGTERM, a
callable) or cut short and continued from its results file equals the uninterrupted
run to round-off, through the API and `flexmbs run --restart`; results that cannot be
continued are refused by name."""

import json
import os
import signal
import threading
from pathlib import Path

import numpy as np
import pytest

from flexmbs.cases import load_case, run_case
from flexmbs.cli.main import main
from flexmbs.errors import ModelError, ReadError
from flexmbs.integrators import SimulationResult

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "cases" / "arm_beam_seed.toml"
OUTPUTS = ("t", "q", "qd", "qdd", "lam", "kinetic", "potential", "nonconservative_work",
           "phi_violation", "velocity_violation")
#: The step record per output interval (flexmbs.results.steps)
STEPS = ("steps.count", "steps.h_min", "steps.h_max", "steps.h_mean", "steps.iterations",
         "steps.iterations_max", "steps.rejected")
FIELDS = OUTPUTS + STEPS

#: What an extended completed run matches to the Newton tolerance (see below).
STATE = tuple(k for k in FIELDS
              if k not in ("nonconservative_work", "steps.iterations", "steps.iterations_max"))


def _field(result, key):
    for part in key.split("."):
        result = getattr(result, part)
    return result


def assert_same_run(a, b, tol=1e-12, keys=FIELDS):
    """Every history of ``a`` equals ``b``'s to ``tol`` times the history's largest
    magnitude (at least 1); NaN (the step sizes of an interval without steps) where
    ``b`` has NaN."""
    for key in keys:
        x, y = _field(a, key), _field(b, key)
        assert x.shape == y.shape, key
        scale = max(1.0, float(np.nanmax(np.abs(y), initial=0.0)))
        np.testing.assert_allclose(x, y, rtol=0, atol=tol * scale, err_msg=key)
    if set(STEPS) <= set(keys):  # and the totals, steps after the last output included
        for key in ("steps", "newton_iterations", "rejected_steps"):
            assert a.statistics[key] == b.statistics[key], key


class StopAt:
    """A progress callback that interrupts (as Ctrl-C would) once t passes ``t_stop``."""

    def __init__(self, t_stop):
        self.t_stop = t_stop

    def __call__(self, t, t_end):
        if t >= self.t_stop:
            raise KeyboardInterrupt


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_an_interrupted_run_continued_from_its_file_is_the_uninterrupted_run(engine,
                                                                              tmp_path):
    case = load_case(ARM, {"solver.t_end": 0.3})
    full = run_case(case, engine=engine)[1]
    part = run_case(case, engine=engine, progress=StopAt(0.1237))[1]
    # stopped at the first progress report from 0.1237 s on: after that step (NumPy
    # path) or at the end of its batch (a batch leaves at least step_batch.TAIL of its
    # steps for the rest: it ends before t_end)
    assert part.status == "interrupted" and 0.1237 <= part.t[-1] < 0.3
    assert "--restart" in part.message
    path = tmp_path / "part.res.h5"
    part.save(path)
    back = SimulationResult.load(path)
    assert back.checkpoint["matrix"] is not None  # the matrix in use travels along
    cont = run_case(case, engine=engine, restart=back)[1]
    assert cont.status == "completed"
    assert cont.statistics["restarts"] == [pytest.approx(part.t[-1])]
    assert cont.statistics["steps"] == full.statistics["steps"]
    assert cont.statistics["factorizations"] == full.statistics["factorizations"]
    # The restart file carries the iteration matrix in use and who factored it (the
    # batches' kernel LU, or LAPACK on the per-step path), and the continuation factors
    # it the same way: the same factors, the same steps. (Factored by LAPACK where the
    # batches had used the kernel's LU, q̈ = β'Δq carried the solves' rounding times
    # β' ~ 1/(βh²): 1.1e-12 to 1.7e-12 of max |q̈| on this arm.)
    assert back.checkpoint["matrix_factored"] == ("kernel" if engine == "compiled"
                                                  else "library")
    assert_same_run(cont, full, tol=0.0)


def test_a_shorter_run_extended_and_output_times_continue_on_schedule():
    case = load_case(ARM, {"solver.t_end": 0.3, "solver.output_every": 7})
    full = run_case(case)[1]
    short = run_case(load_case(ARM, {"solver.t_end": 0.1, "solver.output_every": 7}))[1]
    cont = run_case(case, restart=short)[1]
    # the shorter run's own last output (t = 0.1 s, step 100, not a multiple of 7) stays
    # in the history; the rest follows the schedule of the long run (steps 105, 112, ...)
    # (the short run's last step landed exactly on 0.1 s, the long run's at 0.1 plus
    # round-off: from there the Newton iterates differ, and the states agree to the
    # Newton tolerance rather than to round-off)
    extra = np.flatnonzero(~np.isclose(cont.t[:, None], full.t[None, :], rtol=0,
                                       atol=1e-12).any(axis=1))
    assert list(cont.t[extra]) == [pytest.approx(0.1)]
    for key in OUTPUTS:
        setattr(cont, key, np.delete(getattr(cont, key), extra, axis=0))
    # (the work is a trapezoidal sum over the outputs: the extra output changes it; the
    # Newton iteration counts differ with the iterates; the extra output splits an
    # interval of the step record, whose steps are those of the long run)
    assert_same_run(cont, full, tol=1e-6, keys=tuple(k for k in STATE if k in OUTPUTS))
    assert cont.statistics["steps"] == full.statistics["steps"]
    assert cont.steps.total == full.steps.total
    # output times given explicitly (interpolated between steps)
    times = list(np.linspace(0.0, 0.3, 23))
    timed = load_case(ARM, {"solver.t_end": 0.3, "solver.output_times": times})
    full = run_case(timed)[1]
    part = run_case(timed, progress=StopAt(0.17))[1]
    assert_same_run(run_case(timed, restart=part)[1], full)


def test_sigint_inside_a_step_stops_on_a_whole_step():
    """A real SIGINT arriving inside a step (here raised from a joint actuator's callable,
    NumPy path) lets the step finish; the run stops before the next one with consistent
    counters, and continues to the uninterrupted run."""
    from flexmbs.assembly import System
    from flexmbs.integrators import simulate
    from flexmbs.model import ModelBuilder

    fired = []
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN in a job started in the background

    def torque(t, state):
        if t > 0.05 and not fired and state_holder["armed"]:
            fired.append(t)
            signal.raise_signal(signal.SIGINT)
        return 0.2 * np.sin(3 * t)

    state_holder = {"armed": False}
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_rigid_body("link", 1.0, [1e-3, 1e-2, 1e-2], position=(0.25, 0.0, 0.0))
    b.add_marker("ground", "O", orientation=[0, 0, 1])
    b.add_marker("link", "O", (-0.25, 0.0, 0.0), orientation=[0, 0, 1])
    b.add_revolute("hinge", "ground.O", "link.O")
    b.add_joint_actuator("motor", "ground.O", "link.O", torque)
    system = System(b.finalize())
    full = simulate(system, 0.2, 2e-3, rho_inf=0.8)
    state_holder["armed"] = True
    part = simulate(system, 0.2, 2e-3, rho_inf=0.8)
    assert fired and part.status == "interrupted"
    assert part.statistics["interrupted_by"] == "Ctrl-C"
    assert part.t[-1] == pytest.approx(fired[0], abs=2.1e-3)
    state_holder["armed"] = False
    cont = simulate(system, 0.2, 2e-3, rho_inf=0.8, restart=part)
    assert_same_run(cont, full, tol=0.0)
    # the handlers are those before the run again
    assert signal.getsignal(signal.SIGINT) is before


def test_results_that_cannot_be_continued_are_refused_by_name(tmp_path):
    arm = load_case(ARM, {"solver.t_end": 0.05})
    done = run_case(arm)[1]
    path = tmp_path / "done.res.h5"
    done.save(path)
    back = SimulationResult.load(path)
    with pytest.raises(ModelError, match=r"done\.res\.h5.*already reaches t = 0\.05 s"):
        run_case(arm, restart=back)
    pendulum = load_case(ROOT / "cases" / "seed_pendulum.toml")
    with pytest.raises(ModelError, match=r"done\.res\.h5.*another model: its coordinates"):
        run_case(pendulum, restart=back)
    back.checkpoint = {}
    with pytest.raises(ReadError, match="holds no restart point"):
        run_case(load_case(ARM, {"solver.t_end": 0.1}), restart=back)


def test_cli_restart_appends_to_the_results_file(tmp_path, capsys):
    case = tmp_path / "arm.toml"  # the case, with its modal data path made absolute
    case.write_text(ARM.read_text().replace("../modal_data/", f"{ROOT / 'modal_data'}/"))
    out = tmp_path / "arm.res.h5"
    assert main(["run", str(case), "--set", "solver.t_end=0.1", "-o", str(out),
                 "--quiet", "--json"]) == 0
    capsys.readouterr()
    assert main(["run", str(case), "--set", "solver.t_end=0.2", "--restart", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["output"] == str(out) and summary["t_end"] == pytest.approx(0.2)
    whole = tmp_path / "whole.res.h5"
    assert main(["run", str(case), "--set", "solver.t_end=0.2", "-o", str(whole),
                 "--quiet", "--json"]) == 0
    # a completed run extended: the Newton tolerance (see the test above)
    assert_same_run(SimulationResult.load(out), SimulationResult.load(whole), tol=1e-6,
                    keys=STATE)
    # nothing left to continue: exit 2, the file named, no traceback
    capsys.readouterr()
    assert main(["run", str(case), "--set", "solver.t_end=0.2", "--restart", str(out)]) == 2
    err = capsys.readouterr().err
    assert "arm.res.h5" in err and "nothing to continue" in err and "Traceback" not in err


def test_sigterm_stops_a_cli_run_with_its_results_and_exit_143(tmp_path, capsys):
    out = tmp_path / "long.res.h5"
    started = threading.Event()

    def terminate_soon():
        started.wait(30)
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM)).start()

    threading.Thread(target=terminate_soon, daemon=True).start()
    started.set()
    code = main(["run", str(ARM), "--engine", "python", "--set", "solver.t_end=60",
                 "-o", str(out), "--json"])
    assert code == 143
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "interrupted" and "SIGTERM" in summary["message"]
    part = SimulationResult.load(out)  # checksum verified: a whole, valid file
    assert part.status == "interrupted" and 0 < part.t[-1] < 60
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_a_wound_rotational_spring_keeps_its_turns_across_a_restart(engine, tmp_path):
    """A wheel wound 1.5 turns against a torsion spring, interrupted past 2π and
    continued from its file on a freshly built model (an empty angle memory, as in a
    new process): the continuation equals the uninterrupted run, so the spring's angle
    went on from 2π + … and not from atan2's (−π, π] (which would reverse the torque)."""
    from test_compiled import winding_model

    from flexmbs.integrators import simulate

    def run(system, **kw):
        return simulate(system, 1.0, 2e-3, "generalized-alpha", rho_inf=1.0,
                        engine=engine, **kw)

    full = run(winding_model())
    part = run(winding_model(), progress=StopAt(0.45))
    assert part.status == "interrupted"
    path = tmp_path / "wheel.res.h5"
    part.save(path)
    back = SimulationResult.load(path)
    assert back.checkpoint["angles"]["coil"] > 2 * np.pi
    cont = run(winding_model(), restart=back)
    assert cont.status == "completed"
    assert_same_run(cont, full, tol=1e-10)


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_a_failed_step_leaves_the_springs_angles_of_the_accepted_state(engine, tmp_path):
    """A step that fails (here: continued with a step far too long, down to h_min) must
    not leave the angle memory at its diverging iterate: the failed run's restart point
    holds the last accepted state's angles, and continuing it with the normal step
    gives the uninterrupted run."""
    from test_compiled import winding_model

    from flexmbs.integrators import simulate

    def run(system, t_end=1.0, **kw):
        options = {"h": 2e-3, **kw}
        return simulate(system, t_end, options.pop("h"), "generalized-alpha", rho_inf=1.0,
                        engine=engine, **options)

    full = run(winding_model())
    part = run(winding_model(), t_end=0.5)
    bad = run(winding_model(), h=0.3, h_min=0.3, max_iter=3, restart=part)
    assert bad.status == "failed"
    assert bad.checkpoint["angles"]["coil"] == pytest.approx(part.checkpoint["angles"]["coil"],
                                                             abs=1e-12)
    path = tmp_path / "bad.res.h5"
    bad.save(path)
    cont = run(winding_model(), restart=SimulationResult.load(path))
    assert cont.status == "completed"
    # to the Newton tolerance: the failure discarded the iteration matrix in use, so the
    # continuation builds a fresh one and iterates differently (measured 6e-8; a lost
    # turn of the coil gave 1.4)
    np.testing.assert_allclose(cont.q[-1], full.q[-1], rtol=0, atol=1e-6)


def _link_chain(links=22):
    """A hanging chain of ``links`` rigid links (0.1 m, 0.2 kg), revolute about z,
    released horizontal under gravity: order 22 · 7 + 22 · 6 = 286 ≥ SPARSE_FROM, so the
    compiled engine factors its iteration matrix sparse."""
    from flexmbs.assembly import System
    from flexmbs.model import ModelBuilder

    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_marker("ground", "O")
    previous = "ground.O"
    for k in range(links):
        name = f"link{k}"
        b.add_rigid_body(name, 0.2, [1e-5, 2e-4, 2e-4], position=(0.1 * k, 0.0, 0.0),
                         com=(0.05, 0.0, 0.0))
        b.add_marker(name, "a")
        b.add_marker(name, "b", position=(0.1, 0.0, 0.0))
        b.add_revolute(f"pin{k}", previous, f"{name}.a")
        previous = f"{name}.b"
    return System(b.finalize())


def test_a_sparse_engines_restart_keeps_its_matrix_by_its_nonzeros(tmp_path):
    """The compiled engine factors a large model's matrix sparse: its restart point keeps
    the matrix's possible nonzeros (MatrixEntries), not the dense order² array, and the
    run continued from the file is the uninterrupted run, bit for bit."""
    from flexmbs.engine.compiled_system import SPARSE_FROM
    from flexmbs.integrators.simulate import simulate
    from flexmbs.results.checkpoint_io import MatrixEntries

    system = _link_chain()
    order = system.n_q + system.n_c
    assert order >= SPARSE_FROM
    settings = dict(h=1e-3, method="generalized-alpha", rho_inf=0.8, engine="compiled")
    full = simulate(system, 0.12, **settings)
    part = simulate(_link_chain(), 0.12, progress=StopAt(0.0537), **settings)
    assert part.status == "interrupted" and 0.0537 <= part.t[-1] < 0.12
    kept = part.checkpoint["matrix"]
    assert isinstance(kept, MatrixEntries) and kept.order == order
    assert kept.values.size < 0.1 * order * order  # (here 7.7 % of the entries)
    path = tmp_path / "part.res.h5"
    part.save(path)
    back = SimulationResult.load(path)
    stored = back.checkpoint["matrix"]
    assert isinstance(stored, MatrixEntries)
    import h5py

    with h5py.File(path, "r") as f:  # (docs/results_file.md: every dataset has units)
        group = f["checkpoint"]
        assert {key: group[key].attrs.get("units") for key in group} == {
            **{key: group[key].attrs["units"] for key in ("q", "qd", "qdd", "lam", "a")},
            "matrix_rows": "-", "matrix_cols": "-", "matrix_values": "-"}
    for key in ("rows", "cols", "values"):
        np.testing.assert_array_equal(getattr(stored, key), getattr(kept, key))
    cont = simulate(_link_chain(), 0.12, restart=back, **settings)
    assert cont.status == "completed"
    assert cont.statistics["factorizations"] == full.statistics["factorizations"]
    assert_same_run(cont, full, tol=0.0)
    # the NumPy path continues from the same file with the dense matrix of the entries,
    # factored by LAPACK where the compiled run used SuperLU: the solves round otherwise,
    # and q̈ = β'Δq, λ carry that times β' ~ 1/(βh²); the histories agree to the Newton
    # tolerance (3e-8 of the largest λ here)
    numpy_cont = simulate(_link_chain(), 0.12, restart=back,
                          **{**settings, "engine": "python"})
    assert numpy_cont.status == "completed"
    assert_same_run(numpy_cont, full, tol=1e-6, keys=STATE)


def test_a_damaged_sparse_restart_matrix_is_refused_by_name(tmp_path):
    """Entries outside the matrix, of another order, given twice, or not numbers are
    named with the file, never indexed."""
    import h5py

    from flexmbs.integrators.simulate import simulate

    part = simulate(_link_chain(), 0.05, h=1e-3, engine="compiled",
                    progress=StopAt(0.02))
    path = tmp_path / "part.res.h5"
    part.save(path)

    def rewrite(g, key, data):
        del g[key]
        g.create_dataset(key, data=data)

    def twice(g):  # the second entry made a copy of the first
        for key in ("matrix_rows", "matrix_cols"):
            data = g[key][()]
            data[1] = data[0]
            rewrite(g, key, data)

    damages = (
        (lambda g: g["matrix_rows"].__setitem__(0, 10**6), "outside"),
        (lambda g: g.attrs.__setitem__("matrix_order", 7), "of order 7"),
        (lambda g: g.attrs.__setitem__("matrix_order", 286.5), "not an integer"),
        (lambda g: rewrite(g, "matrix_values", g["matrix_values"][()].astype("S8")),
         "not real numbers"),
        (twice, "given twice"))
    for damage, words in damages:
        back = SimulationResult.load(path)
        copy = tmp_path / "damaged.res.h5"
        back.save(copy)
        with h5py.File(copy, "r+") as f:
            damage(f["checkpoint"])
            del f.attrs["checksum"]  # (written before checksums: accepted unsealed)
        with pytest.raises(ReadError, match=words):
            simulate(_link_chain(), 0.05, h=1e-3, engine="compiled",
                     restart=SimulationResult.load(copy))


def test_a_continued_run_keeps_its_start_from_equilibrium(tmp_path, capsys):
    """A run started from the static equilibrium and continued: the continued file still
    says how its history started (its settings lost "start" before)."""
    pendulum = ROOT / "cases" / "seed_pendulum.toml"
    out = tmp_path / "p.res.h5"
    assert main(["run", str(pendulum), "--set", "solver.t_end=0.05", "-o", str(out),
                 "--quiet", "--from-equilibrium"]) == 0
    assert SimulationResult.load(out).settings["start"] == "static equilibrium"
    assert main(["run", str(pendulum), "--set", "solver.t_end=0.1", "--restart", str(out),
                 "--quiet"]) == 0
    continued = SimulationResult.load(out)
    assert continued.t[-1] == pytest.approx(0.1) and continued.t[0] == 0.0
    assert continued.settings["start"] == "static equilibrium"
    plain = tmp_path / "plain.res.h5"
    assert main(["run", str(pendulum), "--set", "solver.t_end=0.05", "-o", str(plain),
                 "--quiet"]) == 0
    assert main(["run", str(pendulum), "--set", "solver.t_end=0.1", "--restart",
                 str(plain), "--quiet"]) == 0
    assert "start" not in SimulationResult.load(plain).settings


def test_a_run_continued_under_another_model_records_the_earlier_one(tmp_path):
    """Continued with other overrides (a heavier bob before the restart): the recorded
    case alone did not describe the history, and replaying it gave another run. The
    file now keeps the earlier case as continued_from, with a warning; a change of the
    [solver] keys alone (a longer t_end) is no other model."""
    from flexmbs.errors import ModelWarning

    pendulum = ROOT / "cases" / "seed_pendulum.toml"
    first = tmp_path / "p.res.h5"
    assert main(["run", str(pendulum), "--set", "solver.t_end=0.05", "--set",
                 "bodies.bob.mass=5.0", "-o", str(first), "--quiet"]) == 0
    with pytest.warns(ModelWarning, match="continued from a run of another model"):
        _, result = run_case(load_case(pendulum, {"solver.t_end": 0.1}),
                             restart=SimulationResult.load(first))
    assert result.case["continued_from"]["overrides"]["bodies.bob.mass"] == 5.0
    same = tmp_path / "q.res.h5"
    assert main(["run", str(pendulum), "--set", "solver.t_end=0.05", "-o", str(same),
                 "--quiet"]) == 0
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        _, result = run_case(load_case(pendulum, {"solver.t_end": 0.1}),
                             restart=SimulationResult.load(same))
    assert "continued_from" not in result.case
    # the documented way to extend a run: the case file's own t_end edited
    edited = tmp_path / "pendulum.toml"
    edited.write_text(pendulum.read_text().replace("t_end = ", "t_end = 0.1 #", 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        _, result = run_case(load_case(edited), restart=SimulationResult.load(same))
    assert "continued_from" not in result.case and result.t[-1] == pytest.approx(0.1)
