"""pyNastran, imported on demand (optional extra ``nastran``), and its logger."""

from __future__ import annotations

from ....errors import FlexmbsError

MISSING = ("reading Nastran files needs the optional extra pyNastran: "
           "pip install 'flexmbs[nastran]'")


def _import(module: str):
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError:
        raise FlexmbsError(MISSING) from None


def _quiet_logger():
    """pyNastran's logger at error level (it prints every step otherwise)."""
    return _import("cpylog").get_logger(level="error")
