"""Regenerate docs/getting_started.ipynb, the notebook version of the getting-started
page (docs/index.md, "A flexible pendulum in Python"), with the run shown inline by
``res.show()``:

    python docs/scripts/build_getting_started_notebook.py

tests/test_notebook.py checks that the committed notebook equals what this produces and
runs it in a Jupyter kernel.
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
NOTEBOOK = DOCS / "getting_started.ipynb"


def page_parts() -> tuple[str, str, str]:
    """(text before the example, its code, text after it) of the page's section."""
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    section = re.search(r"## A flexible pendulum in Python\n(.*?)\nOptional extras", text,
                        flags=re.S).group(1)
    before, code, after = re.match(r"(.*?)```python\n(.*?)```\n(.*)", section,
                                   flags=re.S).groups()
    return before.strip(), code.rstrip("\n"), after.strip()


def render() -> str:
    """The notebook's JSON text (cell ids numbered, no outputs)."""
    import nbformat

    before, code, after = page_parts()
    cells = [
        nbformat.v4.new_markdown_cell(
            "# Getting started in a notebook\n\n"
            "The example of the getting-started page (`docs/index.md`), with the run "
            "shown inline. Run the cells in order; `pip install 'flexmbs[notebook]'` "
            "brings IPython for `res.show()`."),
        nbformat.v4.new_markdown_cell("## A flexible pendulum in Python\n\n" + before),
        nbformat.v4.new_code_cell(code),
        nbformat.v4.new_markdown_cell(after),
        nbformat.v4.new_markdown_cell(
            "## The run in 3D\n\n"
            "`res.show()` draws the run inline: drag to turn the view, scroll to zoom, "
            "play and pause, or move the time slider; the deformation scale and the "
            "colouring (elastic displacement in mm) can be changed on the page. It needs "
            "no network: three.js comes with flexmbs."),
        nbformat.v4.new_code_cell("res.show()"),
        nbformat.v4.new_markdown_cell(
            "Outside a notebook the same page is one file that any browser opens: "
            "`res.save(\"pendulum.res.h5\")`, then `flexmbs view pendulum.res.h5 -o "
            "view.html` (see `docs/post_processing.md`)."),
    ]
    for n, cell in enumerate(cells, start=1):
        cell["id"] = f"cell-{n}"
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})
    return nbformat.writes(notebook)


if __name__ == "__main__":
    NOTEBOOK.write_text(render(), encoding="utf-8")
    print(f"wrote {NOTEBOOK}")
