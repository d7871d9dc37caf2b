"""Regenerate docs/tutorial_arm_beam.md and its tables and plots from the shipped cases.

    python docs/scripts/build_tutorial_arm_beam.py            # full runs (a few minutes)
    python docs/scripts/build_tutorial_arm_beam.py --quick --out /tmp/tut   # smoke test

Every number in the tutorial comes from here: the studies run through the same API as
``flexmbs study``; the template is docs/templates/tutorial_arm_beam.md.
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "docs" / "templates" / "tutorial_arm_beam.md"
SEED = ROOT / "cases" / "arm_beam_seed.toml"
STEEL = ROOT / "cases" / "arm_beam_steel.toml"

COUPLING_COLUMNS = [
    "coupling", "beam.xi1 peak", "beam.xi2 peak", "beam tip peak [mm]",
    "beam.xi1 peak change vs two-way [%]", "beam.xi2 peak change vs two-way [%]",
    "beam tip max diff vs two-way [mm]", "shoulder final [rad]",
    "elbow max diff vs two-way [rad]", "energy balance max error [J]", "CPU time [s]",
    "Newton iterations/step",
]
LOCKED_COLUMNS = [c for c in COUPLING_COLUMNS if not c.startswith("elbow")]
TRUNCATION_COLUMNS = [
    "modes", "highest frequency [Hz]", "tip peak [mm]", "tip error max [mm]",
    "tip error RMS [mm]", "tip error max / reference peak", "tip dominant frequency [Hz]",
    "peak elastic energy [J]", "run time [s]", "CPU time [s]", "steps/s (CPU)",
]


def quasi_static_estimate() -> dict:
    """Locked elbow: the arm is one rigid body about the shoulder, α = τ/J; the beam's
    modal force is f = α Σ m_k φ_k,y (r0 + x_k) and a step load peaks at 2 f/k
    (an undamped oscillator released from rest), independent of the simulation."""
    from flexmbs import read_modal

    data = read_modal(ROOT / "modal_data" / "seed_tip_beam.fmd.h5")
    m, x, phi_y = data.mass, data.nodes[:, 0], data.phi[1::3]
    r0 = 0.7  # beam root: end of link 2
    j_total = (0.016 + 1.2 * 0.2**2) + (0.006 + 0.8 * 0.55**2) + float(np.sum(m * (r0 + x)**2))
    alpha = 2.0 / j_total
    force = alpha * (m * (r0 + x)) @ phi_y
    static = force / np.diag(data.K_ff)
    return {"J": j_total, "alpha": alpha, "f1": float(force[0]), "static1": float(static[0]),
            "peak1": 2 * float(static[0]), "peak2": 2 * float(abs(static[1]))}


def _table(study, columns) -> str:
    from flexmbs.studies.tables import to_markdown

    return to_markdown(study.rows(), [c for c in columns if c in study.columns()]).strip()


def _rows(study) -> dict:
    return {r["coupling"]: r for r in study.rows()}


def build(out: Path, quick: bool, workers: int | None) -> Path:
    from flexmbs import __version__
    from flexmbs.studies import coupling_study, truncation_study

    out.mkdir(parents=True, exist_ok=True)
    assets = out / "tutorial_arm_beam"
    assets.mkdir(exist_ok=True)
    short = {"solver.t_end": 0.1} if quick else {}
    opts = {"workers": workers}
    values: dict[str, str] = {}

    seed = coupling_study(SEED, overrides=short, **opts)
    seed.write(assets, "coupling_seed")
    values["seed_table"] = _table(seed, COUPLING_COLUMNS)
    rows = _rows(seed)
    values["seed_xi1_two_way"] = f"{rows['two-way']['beam.xi1 peak']:.4g}"
    values["seed_tip_two_way_mm"] = f"{rows['two-way']['beam tip peak [mm]']:.3g}"
    values["seed_xi1_one_way"] = f"{rows['one-way']['beam.xi1 peak']:.4g}"
    values["seed_no_mrf"] = f"{rows['no-Mrf']['beam.xi1 peak']:.2g}"
    values["seed_elbow_final"] = f"{rows['two-way']['elbow final [rad]']:.3g}"
    two_way = seed.records["two-way"].signals
    xi1 = np.abs(two_way.modal["beam"][:, 0])
    tip = np.linalg.norm(two_way.tip["beam"], axis=1)
    early = two_way.t <= 0.3
    values["seed_xi1_startup"] = f"{xi1[early].max():.4g}"
    values["seed_tip_startup_mm"] = f"{1e3 * tip[early].max():.3g}"
    values["seed_peak_time"] = f"{two_way.t[int(np.argmax(xi1))]:.3g}"
    values["seed_peak_fraction"] = f"{100 * tip.max() / 0.2:.0f}"

    locked = coupling_study(SEED, overrides={**short, "joints.elbow.type": "fixed"}, **opts)
    locked.write(assets, "coupling_locked_elbow")
    values["locked_table"] = _table(locked, LOCKED_COLUMNS)
    lrows = _rows(locked)
    est = quasi_static_estimate()
    values.update({k: f"{v:.4g}" for k, v in est.items()})
    values["locked_xi1"] = f"{lrows['two-way']['beam.xi1 peak']:.4g}"
    locked_two_way = locked.records["two-way"].signals
    early_locked = locked_two_way.t <= 0.3
    locked_tip = np.linalg.norm(locked_two_way.tip["beam"], axis=1)[early_locked].max()
    values["locked_ratio"] = f"{1e3 * locked_tip / 0.8:.1f}"
    values["locked_vs_estimate"] = (
        f"{100 * (lrows['two-way']['beam.xi1 peak'] / est['peak1'] - 1):+.1f}")

    gravity = coupling_study(SEED, overrides={**short, "model.gravity": [0.0, -9.81, 0.0],
                                              "forces.tau1.value": 0.0}, **opts)
    gravity.write(assets, "coupling_gravity")
    values["gravity_table"] = _table(gravity, COUPLING_COLUMNS)
    grows = _rows(gravity)
    values["gravity_change"] = f"{grows['no-Mrf']['beam.xi1 peak change vs two-way [%]']:.3g}"

    levels = [1, 2, 4, 8, 16]
    trunc = truncation_study(STEEL, levels, overrides=short, **opts)
    trunc.write(assets, "truncation_steel")
    values["truncation_table"] = _table(trunc, TRUNCATION_COLUMNS)
    values["truncation_reference"] = trunc.reference_label
    trows = trunc.rows()
    values["trunc_freq_1"] = f"{trows[0]['tip dominant frequency [Hz]']:.3g}"
    values["trunc_freq_ref"] = f"{trows[-1]['tip dominant frequency [Hz]']:.3g}"
    four = next(r for r in trows if r["modes"] == 4)
    values["trunc_gain"] = f"{trows[0]['tip error max [mm]'] / four['tip error max [mm]']:.0f}"
    values.update(stiffening_section(assets, short, opts))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from seed_nonlinear import nonlinear_section  # docs/scripts/seed_nonlinear.py

    values.update(nonlinear_section(assets, quick))
    from flexmbs import read_modal

    steel = read_modal(ROOT / "modal_data" / "arm_steel_beam.fmd.h5")
    values["steel_mass"] = f"{steel.summary()['total_mass_kg']:.3g}"
    values["steel_f1"] = f"{steel.frequencies[0]:.4g}"
    values["steel_f20"] = f"{steel.frequencies[-1]:.4g}"

    values["generated"] = (f"flexmbs {__version__}, Python {platform.python_version()}, "
                           f"{'QUICK (0.1 s runs)' if quick else 'full runs'}")
    text = TEMPLATE.read_text()
    missing = sorted(set(re.findall(r"\{\{ (\w+) \}\}", text)) - set(values))
    if missing:
        raise SystemExit(f"template placeholders without values: {missing}")
    for key, value in values.items():
        text = text.replace("{{ " + key + " }}", value)
    target = out / "tutorial_arm_beam.md"
    target.write_text(text)
    return target


def stiffening_section(assets: Path, short: dict, opts: dict) -> dict:
    """The steel arm beam with its geometric-stiffening matrices (built here: the shipped
    file has none), the arm case run two-way with and without stiffening; the seed run's
    range warnings (its tip beam has no FE, so no stiffening matrices)."""
    import tempfile

    from flexmbs.cases import load_case, run_case
    from flexmbs.modal import write_modal
    from flexmbs.modal.shipped import arm_steel_beam
    from flexmbs.studies import coupling_study
    from flexmbs.studies.coupling import NO_STIFFENING

    with tempfile.TemporaryDirectory() as tmp:
        stiff_file = Path(tmp) / "arm_steel_beam_stiffening.fmd.h5"
        write_modal(arm_steel_beam(stiffening=True), stiff_file)
        study = coupling_study(STEEL, modes=("two-way",),
                               overrides={**short, "bodies.beam.modal_data": str(stiff_file)},
                               **opts)
    study.write(assets, "stiffening_steel")
    rows = _rows(study)
    on, off = rows["two-way"], rows[NO_STIFFENING]
    _, seed = run_case(load_case(SEED, short))
    codes = ", ".join(f"{w['code']} ({100 * w['value']:.0f} % of its size)"
                      if w["code"] == "deflection" else
                      f"{w['code']} ({w['value']:.2f} of ω₁)" for w in seed.warnings)
    return {
        "stiffening_table": _table(study, ["coupling", "beam.xi1 peak",
                                           "beam.xi1 peak change vs two-way [%]",
                                           "beam tip peak [mm]",
                                           "beam tip max diff vs two-way [mm]",
                                           "energy balance max error [J]"]),
        "stiff_tip_on": f"{on['beam tip peak [mm]']:.4g}",
        "stiff_tip_off": f"{off['beam tip peak [mm]']:.4g}",
        "stiff_diff": f"{off['beam tip max diff vs two-way [mm]']:.3g}",
        "seed_status": seed.status,
        "seed_warnings": codes or "none",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.1 s runs (smoke test)")
    parser.add_argument("--out", default=str(ROOT / "docs"), help="output folder")
    parser.add_argument("--workers", type=int, help="worker processes (default all cores)")
    args = parser.parse_args(argv)
    target = build(Path(args.out), args.quick, args.workers)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
