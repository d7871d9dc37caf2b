"""The viewer page: one self-contained HTML file (three.js, its orbit controls, the viewer
script and the scene, :mod:`flexmbs.view.scene`) that a browser opens from disk with no
network, and the same page inline in Jupyter (``result.show()``).

Size: about 0.75 MB for three.js r170 and the viewer, plus the scene in base64 (4/3 of
its bytes): per frame 4 B per drawn coordinate (7 + n_modes per body), once per
flexible body 4 B × N_shown × (3 + 3 n_modes) for the displayed surface's nodes and
mode-shape rows and 12 B per surface triangle, and, for bodies with stress modes only,
2 B × frames × N_shown of von Mises stress.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib import resources
from pathlib import Path

from .._files import write_text
from ..errors import FlexmbsError, WriteError
from .scene import scene_data

#: The three.js build the page carries (flexmbs/view/assets/README.md says where from).
THREE_FILES = ("three.module.min.js", "OrbitControls.js", "LICENSE-three.txt")

_STYLE = """
html, body { margin: 0; height: 100%; font: 13px system-ui, sans-serif; color: #222; }
body { display: flex; flex-direction: column; background: #fff; }
#bar { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px;
       padding: 6px 10px; border-bottom: 1px solid #ddd; background: #f6f6f6; }
#bar label { white-space: nowrap; }
#play { width: 34px; }
#time { flex: 1 1 160px; min-width: 120px; }
#tlabel { font-variant-numeric: tabular-nums; min-width: 9em; }
#scale { width: 6em; }
#legend { display: inline-flex; align-items: center; gap: 6px; }
#cbar { display: inline-block; width: 110px; height: 12px; border: 1px solid #999; }
#title { font-weight: 600; }
#view { flex: 1 1 auto; position: relative; min-height: 200px; overflow: hidden; }
#view canvas { display: block; }
#message { display: none; padding: 12px; color: #a00; }
#probe { display: none; }
"""

_BODY = """
<div id="bar">
  <span id="title"></span>
  <button id="play" type="button" title="play">&#9654;</button>
  <input id="time" type="range" min="0" max="0" step="1" value="0" aria-label="time">
  <span id="tlabel">t =</span>
  <label>deformation &times; <input id="scale" type="number" min="0" step="any"></label>
  <label>colour <select id="field"></select></label>
  <span id="legend"><span id="cmin"></span><span id="cbar"></span><span id="cmax"></span></span>
  <label>speed <select id="speed"></select></label>
  <span id="grid"></span>
  <button id="home" type="button" title="back to the first view">view</button>
</div>
<div id="message"></div>
<div id="view"></div>
<pre id="probe"></pre>
"""


@cache
def _asset(name: str) -> str:
    return resources.files("flexmbs.view").joinpath("assets", name).read_text("utf-8")


def _orbit_controls_body() -> str:
    """OrbitControls.js (an ES module importing from 'three') as the body of a function of
    ``THREE`` that returns the class, so that the page needs no module resolution."""
    text = _asset("OrbitControls.js")
    head = re.search(r"import\s*\{([^}]*)\}\s*from\s*'three';", text)
    tail = re.search(r"export\s*\{\s*OrbitControls\s*\};", text)
    if head is None or tail is None:
        raise FlexmbsError("the viewer's OrbitControls.js is not the expected three.js file "
                           "(flexmbs/view/assets/README.md)")
    names = ", ".join(n.strip() for n in head.group(1).split(",") if n.strip())
    return (f"const {{ {names} }} = THREE;\n" + text[head.end():tail.start()]
            + "\nreturn OrbitControls;\n")


def _raw_script(script_id: str, text: str) -> str:
    """A non-executed script block carrying ``text`` verbatim (read back with
    textContent); refuses text that would end the block early."""
    lowered = text.lower()
    if "</script" in lowered or "<!--" in lowered:
        raise FlexmbsError(f"cannot embed {script_id}: it contains '</script' or '<!--'")
    return f'<script type="text/plain" id="{script_id}">{text}</script>'


def page_html(scene: dict) -> str:
    """The viewer page of a scene (:func:`~flexmbs.view.scene.scene_data`)."""
    payload = json.dumps(scene, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    licence = _asset("LICENSE-three.txt").replace("--", "- -")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(str(scene.get('title', 'flexmbs')))}</title>",
        f"<style>{_STYLE}</style>", "</head>", "<body>", _BODY,
        f"<!-- three.js r170 (https://threejs.org), MIT licence:\n{licence}-->",
        _raw_script("three-src", _asset("three.module.min.js")),
        _raw_script("orbit-src", _orbit_controls_body()),
        f'<script type="application/json" id="flexmbs-scene">{payload}</script>',
        f'<script type="module">\n{_asset("viewer.js")}\n</script>',
        "</body>", "</html>", ""])


def view_html(result, **options) -> str:
    """The viewer page of ``result`` (options of :func:`~flexmbs.view.scene.scene_data`:
    ``scale``, ``field``, ``frames``, ``speed``, ``title``)."""
    if options.get("title") is None:
        source = getattr(result, "source", "")
        options["title"] = f"flexmbs: {Path(source).name}" if source else "flexmbs results"
    return page_html(scene_data(result, **options))


def write_view(result, path, **options) -> Path:
    """Write the viewer page of ``result`` to ``path`` (.html, written atomically);
    options as :func:`view_html`. Returns the path."""
    path = check_output(path)
    return write_text(path, view_html(result, **options), "viewer page")


def check_output(path) -> Path:
    """``path`` as a Path, after refusing (WriteError naming it) another suffix than
    .html/.htm or a missing folder."""
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise WriteError(f"cannot write the viewer to {str(path)!r}: use an .html file name")
    if not path.parent.is_dir():
        raise WriteError(f"cannot write {str(path)!r}: folder does not exist")
    return path


def notebook_view(result, height: int = 520, **options):
    """The viewer inline in Jupyter: an ``IPython.display.HTML`` holding an iframe whose
    ``srcdoc`` is the page of :func:`view_html`, ``height`` pixels tall."""
    try:
        from IPython.display import HTML
    except ImportError:
        raise FlexmbsError("result.show() displays the viewer in Jupyter and needs IPython "
                           "(pip install ipython); outside a notebook write the page with "
                           "flexmbs view RESULT -o view.html") from None
    if isinstance(height, bool) or not isinstance(height, int) or not 100 <= height <= 4000:
        from ..errors import ValidationError

        raise ValidationError(f"height must be a whole number of pixels from 100 to 4000, "
                              f"got {height!r}")
    page = view_html(result, **options)
    return HTML(f'<div class="flexmbs-view"><iframe srcdoc="{html.escape(page, quote=True)}" '
                f'style="width: 100%; height: {height}px; border: 1px solid #ddd;" '
                f'title="flexmbs viewer"></iframe></div>')
