"""Run the code blocks of docs/tutorial_robot_arm.md and write what they print into the
page: ``python docs/scripts/build_tutorial_robot_arm.py [--check]``.

The page is its own source: edit its code, then run this script to refresh its outputs.

- Its ```python blocks run in order, in one namespace; what a block prints goes into the
  ```text block right after it.
- Its ```bash blocks are ``flexmbs`` commands, one per line (a line ending in ``\\``
  continues on the next); each runs through :func:`flexmbs.cli.main.main` and must exit
  with 0. Their output (timings included) is not put on the page. ``flexmbs study``
  commands are only parsed: the page's Python blocks run the same studies, and running
  them twice would double the page's run time.
- Everything runs in a scratch folder that links the repository's ``cases/`` and
  ``modal_data/``, so the files the blocks write stay out of the repository.

``tests/test_docs_robot_arm.py`` runs the page the same way (:func:`run_page`), checks
that every output block is what its code prints (:func:`same_output`) and checks the
numbers against the hand calculations.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorial_robot_arm.md"
_FENCE = re.compile(r"```(python|bash)\n(.*?)```\n(?:\n```text\n(.*?)```\n)?", re.S)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


class Block(NamedTuple):
    """One code block: its language, code, the output block that follows it (None when
    there is none) and where that output block's text lies in the page."""

    kind: str
    code: str
    shown: str | None
    span: tuple[int, int] | None


def blocks(text: str) -> list[Block]:
    out = []
    for match in _FENCE.finditer(text):
        span = match.span(3) if match.group(3) is not None else None
        out.append(Block(match.group(1), match.group(2), match.group(3), span))
    return out


def commands(code: str) -> list[list[str]]:
    """The ``flexmbs`` command lines of a bash block, as argument lists (without the
    program name)."""
    lines, out = code.replace("\\\n", " ").splitlines(), []
    for line in lines:
        line = line.split(" #")[0].strip()
        if not line:
            continue
        argv = shlex.split(line)
        if argv[0] != "flexmbs":
            raise ValueError(f"bash blocks hold flexmbs commands only, got {line!r}")
        out.append(argv[1:])
    return out


def run_page(text: str, folder: Path) -> tuple[dict, list[str]]:
    """Run the page's blocks in ``folder`` (which gets links to cases/ and modal_data/):
    (the Python namespace, what each block printed)."""
    from flexmbs.cli.main import build_parser, main

    for name in ("cases", "modal_data"):
        link = folder / name
        if not link.exists():
            link.symlink_to(ROOT / name, target_is_directory=True)
    namespace: dict = {"__name__": "tutorial_robot_arm"}
    printed = []
    here = Path.cwd()
    os.chdir(folder)
    try:
        for k, block in enumerate(blocks(text)):
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                if block.kind == "python":
                    exec(compile(block.code, f"tutorial_robot_arm.md, block {k + 1}", "exec"),
                         namespace)
                else:
                    for argv in commands(block.code):
                        if argv[0] == "study":
                            build_parser().parse_args(argv)
                            continue
                        code = main(argv)
                        if code != 0:
                            raise RuntimeError(f"`flexmbs {shlex.join(argv)}` exited with "
                                               f"{code}:\n{buffer.getvalue()[-2000:]}")
            printed.append(buffer.getvalue())
    finally:
        os.chdir(here)
    return namespace, printed


def _last_digit(token: str) -> float:
    """The value of one unit in the last written digit of a number token."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 10.0 ** (int(exponent or 0) - decimals)


def same_output(shown: str, printed: str) -> str | None:
    """None if ``printed`` is ``shown`` up to the last digit of its numbers (a platform's
    round-off may flip it: two units of the last digit are allowed), else what differs."""
    a, b = _NUMBER.split(shown), _NUMBER.split(printed)
    if a != b:
        return f"the text differs:\n--- page\n{shown}\n--- printed\n{printed}"
    for x, y in zip(_NUMBER.findall(shown), _NUMBER.findall(printed), strict=True):
        if abs(float(x) - float(y)) > 2.0 * _last_digit(x) * (1 + 1e-9):
            return f"{y} printed where the page has {x}:\n--- printed\n{printed}"
    return None


def refresh(page: Path = PAGE) -> str:
    """The page with every output block replaced by what its code prints now."""
    text = page.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        _, printed = run_page(text, Path(tmp))
    pieces, last = [], 0
    for block, out in zip(blocks(text), printed, strict=True):
        if block.span is None:
            if out.strip() and block.kind == "python":
                raise SystemExit(f"a python block prints but has no ```text block after it:"
                                 f"\n{block.code}")
            continue
        pieces += [text[last:block.span[0]], out]
        last = block.span[1]
    return "".join([*pieces, text[last:]])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only report whether the page's outputs are up to date")
    args = parser.parse_args(argv)
    new = refresh()
    if args.check:
        old = PAGE.read_text()
        stale = [(a.shown, b.shown) for a, b in zip(blocks(old), blocks(new), strict=True)
                 if a.shown is not None and same_output(a.shown, b.shown) is not None]
        print(f"{len(stale)} output block(s) out of date")
        return 1 if stale else 0
    PAGE.write_text(new)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
