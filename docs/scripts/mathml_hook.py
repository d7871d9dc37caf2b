"""mkdocs hook (mkdocs.yml ``hooks``): the equations that pymdownx.arithmatex marks in the
pages (``\\( … \\)`` inline, ``\\[ … \\]`` displayed, from ``$…$`` and ``$$…$$`` in the
Markdown) become MathML when the site is built, with latex2mathml. Browsers draw MathML
themselves, so the theory pages read the same offline, from a file or behind a firewall:
no script and no network are needed (tests/test_docs_offline.py opens a built page in
headless Chromium). An equation latex2mathml cannot read, or with a command it does not
know, stops the build, naming the page and the equation.

Three mends make latex2mathml's MathML draw as TeX would in browsers that implement
MathML Core (Chromium, Firefox, Safari):

- ``aligned`` environments, which latex2mathml leaves as a row with visible ``&``, are
  written as ``array`` environments of right- and left-aligned columns;
- ``mathvariant`` bold, italic, double-struck, sans-serif and monospace letters, which
  MathML Core no longer styles, become the Unicode mathematical letters (𝐪, 𝝃, ℝ);
- the brackets of a matrix (``bmatrix``, ``pmatrix``, ``vmatrix``) are marked stretchy
  prefix and postfix fences, so that they grow to the matrix's height.
"""

from __future__ import annotations

import html
import re

from mkdocs.exceptions import PluginError

#: arithmatex's generic output: a span (inline) or div (displayed) holding the TeX
#: between \( \) or \[ \], HTML-escaped.
PATTERN = re.compile(r'<(div|span) class="arithmatex">(.*?)</\1>', re.S)
DELIMITERS = {"div": ("\\[", "\\]"), "span": ("\\(", "\\)")}


def to_mathml(kind: str, escaped: str, where: str) -> str:
    """MathML of one arithmatex element's content (``kind`` "div" or "span")."""
    try:
        from latex2mathml.converter import convert
    except ImportError:
        raise PluginError("the docs' equations need latex2mathml: pip install -e "
                          "'.[docs]'") from None

    tex = html.unescape(escaped).strip()
    opening, closing = DELIMITERS[kind]
    if not (tex.startswith(opening) and tex.endswith(closing)):
        raise PluginError(f"{where}: equation without {opening} {closing}: {tex[:80]!r}")
    tex = aligned_as_array(control_spaces(tex[len(opening):-len(closing)].strip()))
    try:
        mathml = convert(tex, display="block" if kind == "div" else "inline")
    except Exception as exc:  # latex2mathml raises plain exceptions of several kinds
        raise PluginError(f"{where}: cannot write the equation {tex[:80]!r} as MathML "
                          f"({type(exc).__name__}: {exc})") from None
    unknown = re.search(r">[^<]*?(\\[A-Za-z]+)", mathml)
    if unknown:  # latex2mathml writes a command it does not know as text
        raise PluginError(f"{where}: cannot write the equation {tex[:80]!r} as MathML "
                          f"(latex2mathml does not know {unknown.group(1)})")
    return stretchy_matrix_fences(unicode_variants(mathml))


#: A backslash ending a line (an odd run of backslashes before a line break): TeX's
#: control space, which latex2mathml would read as the backslash of the next character.
LINE_END_SPACE = re.compile(r"(?<!\\)((?:\\\\)*)\\\n")


def control_spaces(tex: str) -> str:
    """Backslashes that end a line written as control spaces (``\\ ``)."""
    return LINE_END_SPACE.sub(lambda m: m.group(1) + "\\ \n", tex)


ALIGNED = re.compile(r"\\begin\{aligned\}(.*?)\\end\{aligned\}", re.S)


def aligned_as_array(tex: str) -> str:
    """``\\begin{aligned}…\\end{aligned}`` as an array of columns aligned right, left,
    right, … with an empty group opening each cell (so ``&=`` keeps the relation's
    spacing)."""

    def replace(match: re.Match) -> str:
        body = match.group(1)
        columns = 1 + max(row.count("&") for row in body.split("\\\\"))
        spec = ("rl" * columns)[:columns]
        return f"\\begin{{array}}{{{spec}}}" + body.replace("&", "&{}") + "\\end{array}"

    return ALIGNED.sub(replace, tex)


def _alphabet(upper: int, lower: int, digits: int | None = None, greek: int | None = None,
              exceptions: dict | None = None) -> dict:
    table = {chr(ord("A") + i): chr(upper + i) for i in range(26)}
    table.update({chr(ord("a") + i): chr(lower + i) for i in range(26)})
    if digits is not None:
        table.update({chr(ord("0") + i): chr(digits + i) for i in range(10)})
    if greek is not None:  # Α..Ω (with ϴ in the unused slot), ∇, α..ω, ∂, ϵ ϑ ϰ ϕ ϱ ϖ
        table.update({chr(0x391 + i): chr(greek + i) for i in range(25) if i != 0x11})
        table.update({chr(0x3B1 + i): chr(greek + 0x1A + i) for i in range(25)})
        for i, c in enumerate("∂ϵϑϰϕϱϖ"):
            table[c] = chr(greek + 0x1A + 0x19 + i)
    table.update(exceptions or {})
    return table


#: Unicode mathematical letters by mathvariant (the Mathematical Alphanumeric Symbols
#: block, with the letters that live elsewhere: ℎ, ℂ, ℍ, ℕ, ℙ, ℚ, ℝ, ℤ).
VARIANTS = {
    "bold": _alphabet(0x1D400, 0x1D41A, 0x1D7CE, 0x1D6A8),
    "italic": _alphabet(0x1D434, 0x1D44E, None, 0x1D6E2, {"h": "\u210e"}),
    "bold-italic": _alphabet(0x1D468, 0x1D482, 0x1D7CE, 0x1D71C),
    "double-struck": _alphabet(0x1D538, 0x1D552, 0x1D7D8, None, {
        "C": "\u2102", "H": "\u210d", "N": "\u2115", "P": "\u2119", "Q": "\u211a",
        "R": "\u211d", "Z": "\u2124"}),
    "sans-serif": _alphabet(0x1D5A0, 0x1D5BA, 0x1D7E2),
    "bold-sans-serif": _alphabet(0x1D5D4, 0x1D5EE, 0x1D7EC),
    "monospace": _alphabet(0x1D670, 0x1D68A, 0x1D7F6),
}
# TeX draws bold capital Greek upright (\boldsymbol\Phi): bold, not bold italic
VARIANTS["bold-italic"].update({chr(0x391 + i): chr(0x1D6A8 + i) for i in range(25)
                                if i != 0x11})
TOKEN = re.compile(r'<(mi|mn|mo|mtext)([^>]*?) mathvariant="([a-z-]+)"([^>]*)>([^<]*)</\1>')


def unicode_variants(mathml: str) -> str:
    """Tokens with a ``mathvariant`` of :data:`VARIANTS` written with the Unicode letters
    of that style (characters without one are kept)."""

    def replace(match: re.Match) -> str:
        tag, before, variant, after, text = match.groups()
        table = VARIANTS.get(variant)
        if table is None:
            return match.group(0)
        styled = "".join(table.get(c, c) for c in html.unescape(text))
        return f"<{tag}{before}{after}>{html.escape(styled, quote=False)}</{tag}>"

    return TOKEN.sub(replace, mathml)


#: A matrix's opening and closing brackets as latex2mathml writes them (entities).
OPENING = re.compile(r"<mo>(&#x0005B;|&#x00028;|&#x0007C;|&#x02016;|&#x0007B;)</mo>(?=<mtable)")
CLOSING = re.compile(r"(?<=</mtable>)<mo>(&#x0005D;|&#x00029;|&#x0007C;|&#x02016;|&#x0007D;)</mo>")


def stretchy_matrix_fences(mathml: str) -> str:
    """The brackets right before and after a table as stretchy prefix / postfix fences."""
    mathml = OPENING.sub(r'<mo form="prefix" stretchy="true" symmetric="true">\1</mo>', mathml)
    return CLOSING.sub(r'<mo form="postfix" stretchy="true" symmetric="true">\1</mo>', mathml)


def on_page_content(html_text: str, page, **kwargs) -> str:
    where = page.file.src_path

    def replace(match: re.Match) -> str:
        kind = match.group(1)
        return f'<{kind} class="arithmatex">{to_mathml(kind, match.group(2), where)}</{kind}>'

    return PATTERN.sub(replace, html_text)
