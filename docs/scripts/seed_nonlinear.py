"""The seed arm's tip beam at large deflection, modelled five ways (the section "Large
deflection" of docs/tutorial_arm_beam.md, built by build_tutorial_arm_beam.py).

The seed's beam is given only by two modes (modal masses 0.05 and 0.03 kg, stiffnesses
120 and 480 N/m, 0.2 m, 0.2 kg). Its first mode is the first Euler–Bernoulli cantilever
mode scaled to a unit tip deflection (modal mass m/4), so it is the first mode of a
uniform beam of the same length and mass with EI = ω₁² ρA L⁴ / 1.8751⁴ = 0.3106 N m²:
a strip 5 mm wide in the arm's plane and 20 mm across it (so that it bends out of the
plane 4 times as stiffly), E = 1.491 GPa, ρ = 10⁴ kg/m³ (ρA = 1 kg/m). Its second
in-plane mode (49 Hz) is stiffer than the seed's (20 Hz), which the seed sets by hand. The seed's
response is its first mode's (ξ₂ stays below 2 % of ξ₁), so this beam is the seed's own
case for the large-deflection models, which all need a beam:

- the seed: linear FFRF with its two modes;
- the equivalent beam, linear FFRF (clamped modes of the built-in beam FE);
- the same with modal derivatives (``nonlinear = true``);
- the same cut into k Craig–Bampton substructures;
- the geometrically exact beam (``type = "nonlinear-beam"``).

Each is run for the seed's 2 s with generalized-α (ρ∞ = 0.8) instead of the seed's
trapezoidal Newmark, which leaves the exact beam's axial and shear vibrations (~1e4
rad/s) undamped; the measure is the tip's deflection across link 2 (in link 2's frame,
where the undeformed tip lies 0.5 m from the elbow).
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "cases" / "arm_beam_seed.toml"

#: The equivalent uniform beam, 0.2 m: a 5 mm (in the arm's plane) × 20 mm strip,
#: E [Pa] and ρ [kg/m³] giving EI_z = 0.31062 N m² and ρA = 1 kg/m.
SECTION = '{ kind = "rectangle", width = 0.005, height = 0.02 }'
MATERIAL = "{ E = 1.490977e9, nu = 0.3, rho = 1.0e4 }"
LENGTH = 0.2

_BEAM_BLOCK = re.compile(r'\[\[bodies\]\]\nname = "beam"\ntype = "flexible"\n'
                         r'modal_data = "[^"]*"\ncoupling = "two-way"\n'
                         r'(position = .*\n)axis = .*\nangle_deg = .*\n')
_ROOT_MARKER = 'body = "beam"\nname = "root"\nnode = 1\n'


def variant_text(seed_text: str, body: str) -> str:
    """The seed case with its beam replaced by ``body`` (the TOML of the body after its
    name, with ``{pose}`` where the placement goes) and a marker "beam.tip" at the
    beam's tip."""
    found = _BEAM_BLOCK.search(seed_text)
    if found is None or _ROOT_MARKER not in seed_text:
        raise SystemExit(f"{SEED}: the beam body or its root marker is not as expected")
    flexible_pose = found.group(0).split('coupling = "two-way"\n', 1)[1]
    if "nonlinear-beam" in body:
        # the root exactly at link 2's end, 0.7 (cos 0.5, sin 0.5): the seed's position
        # of its beam is 2.5 µm off in x, which a floating frame shrugs off at the first
        # projection but which would stretch the exact beam's first element
        c, s = float(np.cos(0.5)), float(np.sin(0.5))
        pose = (f"position = [{0.7 * c!r}, {0.7 * s!r}, 0.0]\naxis = [{c!r}, {s!r}, 0.0]\n"
                f"up = [0.0, 0.0, 1.0]\n")
        tip = 'node = "tip"'
    else:
        pose, tip = flexible_pose, 'node_set = "tip"'
    text = (seed_text[:found.start()] + '[[bodies]]\nname = "beam"\n'
            + body.replace("{pose}", pose) + seed_text[found.end():])
    return text.replace(_ROOT_MARKER, f'{_ROOT_MARKER}\n[[markers]]\nbody = "beam"\n'
                                      f'name = "tip"\n{tip}\n')


def variants(quick: bool) -> list[tuple[str, str, str]]:
    """[(model, level, body TOML)]: the models and their convergence levels."""
    def flexible(modes, extra="", sub=""):
        return ('type = "flexible"\ncoupling = "two-way"\n' + extra + "{pose}"
                + "[bodies.beam]\nlength = 0.2\nelements = 20\n"
                + f"modes = {modes}\nsection = {SECTION}\nmaterial = {MATERIAL}\n{sub}")

    def levels(full, short):
        return short if quick else full

    out = [("seed (linear FFRF)", "its 2 modes",
            'type = "flexible"\nmodal_data = "../modal_data/seed_tip_beam.fmd.h5"\n'
            'coupling = "two-way"\n{pose}')]
    for modes in levels((3, 6), (3,)):
        out.append(("equivalent beam, linear FFRF", f"{modes} modes",
                    flexible(modes, "stiffening = false\n")))
    for modes in levels((3, 6), (3,)):
        out.append(("equivalent beam, linear FFRF with stiffening", f"{modes} modes",
                    flexible(modes, "stiffening = true\n")))
    for modes in levels((3, 6), (3,)):
        out.append(("equivalent beam, modal derivatives", f"{modes} modes",
                    flexible(modes, "nonlinear = true\n")))
    for parts in levels((2, 4, 8), (2,)):
        out.append(("equivalent beam, substructures", f"k = {parts}, 3 modes each",
                    flexible(3, "stiffening = false\n", f"substructures = {parts}\n")))
    for elements in levels((8, 16, 32), (4,)):
        out.append(("equivalent beam, geometrically exact", f"{elements} elements",
                    f'type = "nonlinear-beam"\nlength = {LENGTH}\nelements = {elements}\n'
                    f"section = {SECTION}\nmaterial = {MATERIAL}\n{{pose}}"))
    return out


def tip_deflection(result) -> np.ndarray:
    """(n_out, 2) the tip's displacement in link 2's frame from where it lies undeformed
    (0.5 m along link 2): along link 2 and across it [m]."""
    from flexmbs.post.frames import pose
    from flexmbs.post.scene_parts import marker_position

    markers = result.model["markers"]
    tip = next(m for key, m in markers.items() if key.endswith(".tip")
               and key.startswith("beam"))
    start = int(result.bodies["link2"]["start"])
    out = np.zeros((len(result.t), 2))
    for k in range(len(result.t)):
        r, a = pose(result, start, k)
        local = a.T @ (marker_position(result, tip, k) - r)
        out[k] = local[0] - 0.5, local[1]
    return out


def run_variants(quick: bool) -> list[dict]:
    """Run every variant; rows of the comparison (tip deflection peak and its time, the
    tip at the end, the shoulder angle at the end, wall time, the run's status)."""
    from flexmbs.cases import load_case, run_case

    seed_text = SEED.read_text()
    # generalized-α with numerical damping for every model: the geometrically exact
    # beam's axial and shear frequencies (~1e4 rad/s) ring undamped under the seed's
    # trapezoidal Newmark and its Newton iterations fail
    overrides = {"solver.method": "generalized-alpha", "solver.rho_inf": 0.8,
                 **({"solver.t_end": 0.1} if quick else {})}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "cases"
        folder.mkdir()
        (Path(tmp) / "modal_data").symlink_to(ROOT / "modal_data")
        for k, (model, level, body) in enumerate(variants(quick)):
            path = folder / f"variant{k}.toml"
            path.write_text(variant_text(seed_text, body))
            case = load_case(path, overrides)
            begin = time.perf_counter()
            _, result = run_case(case)
            wall = time.perf_counter() - begin
            tip = tip_deflection(result)
            peak = int(np.argmax(np.abs(tip[:, 1])))
            shoulder = _angle_about_z(result, "link1")
            rows.append({
                "model": model, "level": level,
                "tip peak across [mm]": 1e3 * tip[peak, 1],
                "at [s]": float(result.t[peak]),
                "tip along at the peak [mm]": 1e3 * tip[peak, 0],
                "tip across at the end [mm]": 1e3 * tip[-1, 1],
                "shoulder at the end [rad]": float(shoulder[-1]),
                "run time [s]": wall, "status": result.status,
                "t": np.asarray(result.t), "across": tip[:, 1], "shoulder": shoulder,
            })
    return rows


def _angle_about_z(result, body: str) -> np.ndarray:
    """(n_out,) the rotation of ``body`` about the global z axis [rad], unwrapped."""
    from flexmbs.post.frames import pose

    start = int(result.bodies[body]["start"])
    turns = [pose(result, start, k)[1] for k in range(len(result.t))]
    return np.unwrap([np.arctan2(a[1, 0], a[0, 0]) for a in turns])



COLUMNS = ["model", "level", "tip peak across [mm]", "at [s]",
           "tip along at the peak [mm]", "tip across at the end [mm]",
           "tip history max diff vs reference [mm]", "shoulder at the end [rad]",
           "run time [s]", "status"]


def nonlinear_section(assets: Path, quick: bool) -> dict:
    """Run the variants, write ``seed_nonlinear.md``/``.csv`` (the table) and
    ``seed_nonlinear.png`` (the tip across link 2 over time, the finest level of each
    model) to ``assets``, and return the tutorial's placeholders."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from flexmbs.studies.tables import to_markdown

    rows = run_variants(quick)
    reference = rows[-1]  # the finest geometrically exact beam
    for row in rows:
        across = np.interp(reference["t"], row["t"], row["across"])
        row["tip history max diff vs reference [mm]"] = float(
            1e3 * np.max(np.abs(across - reference["across"])))
    table = [{c: r[c] for c in COLUMNS} for r in rows]
    (assets / "seed_nonlinear.md").write_text(to_markdown(table, COLUMNS))
    with open(assets / "seed_nonlinear.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(table)
    finest = {}
    for row in rows:
        finest[row["model"]] = row
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for model, row in finest.items():
        ax.plot(row["t"], 1e3 * row["across"], lw=1.2, label=f"{model} ({row['level']})")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("tip deflection across link 2 [mm]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(assets / "seed_nonlinear.png", dpi=110)
    plt.close(fig)

    def pick(model, level=None):
        return next(r for r in rows if r["model"] == model
                    and (level is None or r["level"] == level))

    exact = finest["equivalent beam, geometrically exact"]
    linear = finest["equivalent beam, linear FFRF"]
    coarse = next(r for r in rows if r["model"] == exact["model"])

    def diff(model):
        return f"{finest[model]['tip history max diff vs reference [mm]']:.3g}"

    spin = np.gradient(exact["shoulder"], exact["t"])
    return {
        "nonlinear_table": to_markdown(table, COLUMNS).strip(),
        "nl_exact_peak": f"{exact['tip peak across [mm]']:.4g}",
        "nl_exact_at": f"{exact['at [s]']:.3g}",
        "nl_exact_level": exact["level"],
        "nl_exact_along": f"{-exact['tip along at the peak [mm]']:.3g}",
        "nl_exact_coarse": coarse["level"],
        "nl_exact_coarse_diff": f"{coarse['tip history max diff vs reference [mm]']:.2g}",
        "nl_linear_peak": f"{linear['tip peak across [mm]']:.4g}",
        "nl_linear_at": f"{linear['at [s]']:.3g}",
        "nl_seed_peak": f"{pick('seed (linear FFRF)')['tip peak across [mm]']:.4g}",
        "nl_linear_diff": diff("equivalent beam, linear FFRF"),
        "nl_stiff_diff": diff("equivalent beam, linear FFRF with stiffening"),
        "nl_md_diff": diff("equivalent beam, modal derivatives"),
        "nl_md_level": finest["equivalent beam, modal derivatives"]["level"],
        "nl_sub_diff": diff("equivalent beam, substructures"),
        "nl_sub_level": finest["equivalent beam, substructures"]["level"],
        "nl_spin_end": f"{abs(spin[-1]):.3g}",
        "nl_shoulder_end": f"{exact['shoulder at the end [rad]']:.3g}",
    }
