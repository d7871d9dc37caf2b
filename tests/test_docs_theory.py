"""The theory pages (docs/theory_ffrf.md, docs/theory_integrators.md): every ```python
block runs from the repository root, and the numbers it prints confirm the page's
statements within stated tolerances; the code the pages name exists."""

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = ("theory_ffrf.md", "theory_integrators.md")


def run_page(page: str, monkeypatch, capsys) -> dict[str, str]:
    """Execute the page's Python blocks in order in one namespace (they continue one
    another) and return its printed lines as {label: value}, split at the first ': '."""
    monkeypatch.chdir(ROOT)  # the blocks read modal_data/ relative to the repository
    text = (DOCS / page).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, f"{page} has no python block"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, page, "exec"), namespace)
    out: dict[str, str] = {}
    for line in capsys.readouterr().out.splitlines():
        label, sep, value = line.partition(": ")
        assert sep, f"{page}: printed line without 'label: value': {line!r}"
        assert label not in out, f"{page}: label printed twice: {label!r}"
        out[label] = value
    return out


def test_ffrf_page_checks(monkeypatch, capsys):
    out = run_page("theory_ffrf.md", monkeypatch, capsys)

    def num(label):
        return float(out[label])

    # §3-5: mass matrix blocks and invariants (round-off level agreement)
    for label in ("M(q) blocks vs formulas", "M̄(ξ) from invariants vs nodal sum",
                  "Shabana set vs general set", "lumped M̄_Rθ vs −skew(S_t)",
                  "lumped Q_ij vs tr(J2_ij) I − J2_ijᵀ"):
        assert num(label) < 1e-13, label
    assert num("M(q) [0; p; 0] relative to |M|") < 1e-14
    # §6-7: quadratic velocity vector (central differences with step 1e-6) and gravity
    assert num("Q_v vs finite-difference Lagrange") < 1e-6
    assert num("p·(Q_v)_p relative to |Q_v|") < 1e-14
    assert num("p·(Q_v^L)_p relative to |Q_v^L|") > 0.1  # what the projection removes
    assert num("closed-form Q_v (lumped) vs code") < 1e-13
    assert num("gravity vs formula") < 1e-13
    # §8: markers
    assert num("marker origin vs node position") < 1e-14
    assert num("marker axes vs A (I + skew(Ψξ)) ō") < 1e-14
    # max entry of |θ|²I − θθᵀ lies between ⅔|θ|² and |θ|² for first-order axes
    assert 2 / 3 - 1e-9 < num("axes orthonormality error / |Ψξ|²") < 1 + 1e-9
    assert num("angular Jacobian vs [0, G, AΨ]") < 1e-14
    assert num("d_rotated vs −A s̃ Ḡ + 2 A s pᵀ") < 1e-14
    # §9: which coupling blocks each mode keeps, and whether the rigid rows are at ξ = 0
    assert out["two-way"] == "coupling blocks M_Rf/M_pf/M_fR/M_fp, M_pp at ξ = 0 False"
    assert out["one-way"] == "coupling blocks M_fR/M_fp, M_pp at ξ = 0 True"
    assert out["rigid"] == "coupling blocks none, M_pp at ξ = 0 True"
    assert out["no-Mrf"] == "coupling blocks none, M_pp at ξ = 0 False"
    # §10: centrifugal softening without geometric stiffening
    assert num("K_eff vs K_ff − Ω² Q_zz") < 1e-8
    assert num("critical spin / first in-plane bending frequency") == pytest.approx(
        1.0, abs=1e-3)


def test_integrators_page_checks(monkeypatch, capsys):
    out = run_page("theory_integrators.md", monkeypatch, capsys)

    def num(label):
        return float(out[label])

    # §3: the scaled iteration matrix does not degrade as h shrinks, the unscaled ~ h⁻⁴
    scaled = num("condition at h = 0.01, scaled")
    assert scaled < 100
    assert num("condition at h = 0.0001, scaled") == pytest.approx(scaled, rel=1e-2)
    ratio = num("condition at h = 0.0001, unscaled") / num("condition at h = 0.01, unscaled")
    assert ratio == pytest.approx(1e8, rel=0.05)
    # §4: trapezoidal period error (ωh)²/12 − (ωh)⁴/180 + … at ωh = 0.1
    wh = 0.1
    err = num("trapezoidal period error at ωh = 0.1")
    assert num("(ωh)²/12") == pytest.approx(wh**2 / 12, rel=1e-6)
    assert err == pytest.approx(wh**2 / 12, rel=1e-3)
    assert err == pytest.approx(wh**2 / 12 - wh**4 / 180, rel=1e-5)
    assert num("trapezoidal vs ωh/(2 arctan(ωh/2)) − 1") < 1e-12
    # ρ∞: 1 (trapezoidal), (1 + α)/(1 − α) (HHT), ρ∞ (generalized-α)
    assert num("spectral radius at ωh = 1e8, newmark(β=0.25, γ=0.5)") == pytest.approx(
        1.0, abs=1e-4)
    assert num("spectral radius at ωh = 1e8, hht(α=-0.1)") == pytest.approx(
        0.9 / 1.1, abs=1e-4)
    assert num("spectral radius at ωh = 1e8, generalized-alpha(ρ∞=0.6)") == pytest.approx(
        0.6, abs=1e-4)
    # leading-order coefficients of the table (next-order terms: (ωh)² relative)
    assert num("period coefficient c, worst relative deviation") < 1e-3
    assert num("damping coefficient d, worst relative deviation") < 3e-2
    # §5-6: positions (and ‖p‖ = 1) exact, velocity drift second order, led by pᵀṗ
    for h in ("4 ms", "2 ms"):
        assert num(f"h = {h}, max |Φ|") < 1e-9
        assert num(f"h = {h}, max |pᵀp − 1|") < 1e-9
        assert num(f"h = {h}, max |Φ_q q̇ − ν|") < 1e-3
        assert num(f"h = {h}, max |Φ_q q̇ − ν|") == pytest.approx(
            num(f"h = {h}, max 2|pᵀṗ|"), rel=1e-3)
    assert 3.6 < num("velocity violation ratio for h halved") < 4.4
    # §7: undamped index 3 drifts and fails; stabilized index 2 holds both levels
    assert out["index-3 status"] == "failed"
    assert num("index-3, reached t") < 20.0
    assert num("index-3, max |Φ_q q̇ − ν|") > 1.0
    assert num("stabilized-index-2, reached t") == 20.0
    assert num("stabilized-index-2, max |Φ_q q̇ − ν|") < 1e-8
    assert num("stabilized-index-2, energy spread / m g L") < 5e-3


def _resolve(dotted: str):
    """The object a fully qualified name ``flexmbs.module.attr…`` refers to."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def _has(cls, name: str) -> bool:
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) \
        else set()
    return name in fields or hasattr(cls, name)


@pytest.mark.parametrize("page", PAGES)
def test_theory_pages_name_existing_code(page):
    """Every `flexmbs.…` name and every `Class.member` of the main classes exists."""
    from flexmbs.assembly import System
    from flexmbs.integrators import AlphaIntegrator, SimulationResult
    from flexmbs.modal import InertiaInvariants, ModalData
    from flexmbs.model.flexible import FlexibleBody

    text = (DOCS / page).read_text()
    dotted = set(re.findall(r"`(flexmbs(?:\.[A-Za-z_]\w*)+)[`(]", text))
    assert len(dotted) >= 10
    for name in sorted(dotted):
        _resolve(name)
    classes = {c.__name__: c for c in (ModalData, InertiaInvariants, FlexibleBody,
                                       AlphaIntegrator, SimulationResult, System)}
    members = re.findall(r"`(" + "|".join(classes) + r")\.(\w+)", text)
    for cls, member in members:
        assert _has(classes[cls], member), f"{page}: {cls}.{member}"


def test_ffrf_page_tables_match_the_code():
    """The invariant table lists attributes of InertiaInvariants, and the coupling table
    every Coupling member with its value."""
    from flexmbs.frame.coupling import Coupling
    from flexmbs.modal import InertiaInvariants

    text = (DOCS / "theory_ffrf.md").read_text()
    for name in ("M0", "N", "Q", "mass", "S0", "S", "I_tt0", "I_tt1", "I_tf0", "I_tf1",
                 "M_ff", "J0", "J1", "J2", "isotropic"):
        assert _has(InertiaInvariants, name), name
        assert re.search(rf"`(InertiaInvariants\.)?{name}(\[[^`]*\])?`", text), name
    for mode in Coupling:
        assert f"| `{mode.name}` | `\"{mode.value}\"` |" in text, mode
