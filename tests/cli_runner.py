"""The command line run in-process for the fuzz tests: (exit code, stdout + stderr)."""

from __future__ import annotations

import contextlib
import io

from flexmbs.cli.main import main


def run_cli(argv) -> tuple[int, str]:
    """``flexmbs ARGV`` in this process: its exit code (argparse's SystemExit included)
    and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return int(code or 0), out.getvalue() + err.getvalue()
