"""The documentation site reads offline: its equations are MathML written when the site is
built (docs/scripts/mathml_hook.py), so a theory page opened from disk in headless
Chromium with the network cut off shows no raw TeX; the site loads nothing from
elsewhere."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from script_files import load_script  # tests/script_files.py

from tests.headless_chromium import dump_dom

ROOT = Path(__file__).resolve().parents[1]
THEORY = ("theory_ffrf", "theory_integrators", "theory_stiffening",
          "theory_modal_derivatives")
#: What raw TeX looks like on a page: a control word, \( \) or \[ \] delimiters, $$.
RAW_TEX = re.compile(r"\\[A-Za-z]{2,}|\\[()[\]]|\$\$")


def _hook():
    return load_script(ROOT / "docs" / "scripts" / "mathml_hook.py")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("latex2mathml")
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d",
                          str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return out


def test_math_letters_are_the_unicode_ones():
    """Each mathvariant's characters are the Unicode ones of that name: "a" bold is
    MATHEMATICAL BOLD SMALL A, "ϵ" bold italic MATHEMATICAL BOLD ITALIC EPSILON SYMBOL,
    "R" double-struck DOUBLE-STRUCK CAPITAL R (ℝ, outside the block), "h" italic PLANCK
    CONSTANT (ℎ); bold-italic capital Greek is the upright bold, as TeX draws it."""
    words = {"bold": "BOLD", "italic": "ITALIC", "bold-italic": "BOLD ITALIC",
             "double-struck": "DOUBLE-STRUCK", "sans-serif": "SANS-SERIF",
             "bold-sans-serif": "SANS-SERIF BOLD", "monospace": "MONOSPACE"}
    count = 0
    for variant, table in _hook().VARIANTS.items():
        for plain, styled in table.items():
            core = unicodedata.name(plain)
            for word in ("LATIN ", "GREEK ", "LETTER ", "LUNATE "):
                core = core.replace(word, "")
            word = words[variant]
            if variant == "bold-italic" and ("GREEK CAPITAL" in unicodedata.name(plain)
                                             or plain.isdigit()):
                word = "BOLD"  # (Unicode has no bold italic digits)
            name = unicodedata.name(styled)
            assert name in (f"MATHEMATICAL {word} {core}", f"{word} {core}") or (
                (plain, name) == ("h", "PLANCK CONSTANT")), (variant, plain, name)
            count += 1
    assert count > 7 * 52


def test_tex_mends():
    hook = _hook()
    # a backslash ending a line is a control space, a row break stays a row break
    assert hook.control_spaces("a\\ \\\n(b) \\\\\nc") == "a\\ \\ \n(b) \\\\\nc"
    aligned = hook.aligned_as_array("\\begin{aligned}a &= b & c &= d\\\\ e &= f\\end{aligned}")
    assert aligned == "\\begin{array}{rlrl}a &{}= b &{} c &{}= d\\\\ e &{}= f\\end{array}"
    mathml = hook.to_mathml("div", html.escape("\\[\\mathbf q = \\begin{bmatrix}\\mathbf R"
                                               "\\\\ \\boldsymbol\\xi\\end{bmatrix}\\]"),
                            "test")
    assert "𝐪" in mathml and "𝐑" in mathml and "𝝃" in mathml and "mathvariant" not in mathml
    assert mathml.count('stretchy="true" symmetric="true"') == 2
    for bad, why in (("a^", "MissingSuperScriptOrSubscriptError"),
                     ("\\begin{bmatrix} a", "MissingEndError"),
                     ("\\mathbf a \\unknowncommand", "does not know \\unknowncommand")):
        with pytest.raises(Exception, match=re.escape(why)):
            hook.to_mathml("span", f"\\({bad}\\)", "test")


def test_site_loads_nothing_from_elsewhere(site):
    """No page of the built site loads a script, style sheet or font from another host
    (MathJax and highlight.js came from CDNs before)."""
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"""<(script|link)[^>]+(src|href)=["']?(https?:)?//""", text), page
    for name in THEORY:
        text = (site / name / "index.html").read_text(encoding="utf-8")
        equations = text.count('class="arithmatex"')
        assert equations >= 3 and text.count("<math ") == equations, name
        assert "\\[" not in text and "\\(" not in text, name


def _shown_text(page: Path, copy: Path) -> tuple[str, int, int]:
    """(the text Chromium shows of ``page`` (its innerText: what is laid out, without
    hidden elements), equations drawn with a height, equations) after 0.5 s, read through
    a copy of the page with a script appended that writes them into the page."""
    reader = ("<script>window.addEventListener('load', () => { const m = "
              "[...document.querySelectorAll('math')]; const t = document.body.innerText; "
              "const out = document.createElement('pre'); out.id = 'shown-text'; "
              "out.textContent = JSON.stringify({text: t, drawn: m.filter(e => "
              "e.getBoundingClientRect().height > 0).length, total: m.length}); "
              "document.body.appendChild(out); });</script>")
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", reader + "</body>"),
                    encoding="utf-8")
    dom = dump_dom(copy.as_uri(), budget_ms=500, size=(1000, 900))
    import json

    found = json.loads(html.unescape(re.search(r'<pre id="shown-text">(.*?)</pre>', dom,
                                               flags=re.S).group(1)))
    return found["text"], found["drawn"], found["total"]


def _without_code(text: str, page: Path) -> str:
    """``text`` less the code blocks and inline code of ``page`` (Python and shell
    examples hold backslashes of their own)."""
    source = page.read_text(encoding="utf-8")
    for code in re.findall(r"<code[^>]*>(.*?)</code>", source, flags=re.S):
        plain = html.unescape(re.sub(r"<[^>]+>", "", code))
        for line in plain.splitlines():
            if line.strip():
                text = text.replace(line.strip(), "")
    return text


@pytest.mark.parametrize("name", THEORY)
def test_theory_page_shows_no_raw_tex_offline(site, name, tmp_path):
    """Opened from disk in headless Chromium with the network cut off: every equation is
    drawn (a MathML box with a height) and no TeX shows in the page's text."""
    page = site / name / "index.html"
    text, drawn, total = _shown_text(page, tmp_path / "page.html")
    assert total == page.read_text(encoding="utf-8").count('class="arithmatex"') >= 3
    assert drawn == total
    assert not RAW_TEX.findall(_without_code(text, page))


def test_the_check_sees_raw_tex(site, tmp_path):
    """The same check on the page with its first equation left as TeX (as the page read
    offline before) finds that TeX, and only it."""
    page = site / "theory_ffrf" / "index.html"
    tex_page = tmp_path / "tex" / "index.html"
    tex_page.parent.mkdir()
    source = page.read_text(encoding="utf-8")
    tex_page.write_text(re.sub(r"<math .*?</math>", r"\\[ \\mathbf q = \\mathbf R \\]",
                               source, count=1, flags=re.S), encoding="utf-8")
    text, _, _ = _shown_text(tex_page, tmp_path / "tex" / "copy.html")
    assert RAW_TEX.findall(_without_code(text, page)) == ["\\[", "\\mathbf", "\\mathbf",
                                                          "\\]"]
