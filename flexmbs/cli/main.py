"""Entry point of the ``flexmbs`` console command."""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from .. import __version__
from ..errors import FlexmbsError

#: Subcommand → its module (imported when that subcommand runs, or for the full parser).
SUBCOMMANDS = {
    "run": "run_cmd",
    "modes": "modes_cmd",
    "reduce": "reduce_cmd",
    "beam": "beam_cmd",
    "study": "study_cmd",
    "animate": "animate_cmd",
    "snapshot": "snapshot_cmd",
    "static": "static_cmd",
    "linear": "linear_cmd",
    "export": "export_cmd",
    "fmu": "fmu_cmd",
    "plot": "plot_cmd",
    "stress": "stress_cmd",
    "view": "view_cmd",
    "sensitivity": "sensitivity_cmd",
    "fit": "fit_cmd",
    "update": "update_cmd",
}


def _module(name: str):
    return importlib.import_module(f"{__package__}.{SUBCOMMANDS[name]}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand (also used to document the CLI).

    With ``only``, the other subcommands are left out, so that their modules (and what
    they import: the modal front end, the renderer, ...) are not loaded for a run.
    """
    parser = argparse.ArgumentParser(
        prog="flexmbs",
        description="Flexible multibody dynamics with the floating frame of reference: "
                    "modal data and reduction, simulation of case files, studies.",
    )
    parser.add_argument("--version", action="version", version=f"flexmbs {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in SUBCOMMANDS if only is None else (only,):
        module = _module(name)
        p = sub.add_parser(name, help=module.HELP, description=module.__doc__)
        module.add_args(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None, *, settle: bool = False) -> int:
    """Run the command line; returns the process exit code. ``settle``: the process is
    this command's own (:func:`entry`, which switched the garbage collector off while
    the command's modules are imported): once they are, their objects are moved out of
    the collector's reach (``gc.freeze``) and it is switched on again, so that its
    collections during the command no longer walk the ~45 000 objects of NumPy, SciPy
    and flexmbs (a full one took about 12 ms, and fell into the loading of the
    kernels)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv and argv[0] in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    if settle:
        import gc

        gc.freeze()
        gc.enable()
    def show(message, category, filename, lineno, file=None, line=None):
        print(f"flexmbs {args.command}: warning: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = show
            return int(args._run(args) or 0)
    except FlexmbsError as exc:
        print(f"flexmbs {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # outside a run (a run keeps its results, says so)
        if isinstance(exc, Terminated):
            print(f"flexmbs {args.command}: terminated (SIGTERM)", file=sys.stderr)
            return 143
        print(f"flexmbs {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output went away (`| head`)
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes
        return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM in a command's own process, raised where it arrives as Ctrl-C is, so that
    what the command was writing is removed (files are staged, then moved into place)
    and the command exits with 143. A run handles both signals itself while it steps
    (it stops on a whole step and keeps its results)."""


def _terminate(signum, frame):
    raise Terminated()


def entry() -> None:
    """The ``flexmbs`` command (its console script): :func:`main` in a process of its
    own, the garbage collector off until the command's modules are imported, SIGTERM
    an interruption (:class:`Terminated`)."""
    import gc
    import signal

    gc.disable()
    signal.signal(signal.SIGTERM, _terminate)
    try:
        code = main(settle=True)
    except KeyboardInterrupt as exc:  # while the command's modules were imported
        terminated = isinstance(exc, Terminated)
        print(f"flexmbs: {'terminated (SIGTERM)' if terminated else 'interrupted'}",
              file=sys.stderr)
        code = 143 if terminated else 130
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
