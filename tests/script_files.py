"""Scripts of the repository (docs/scripts, validation, setup.py) loaded as modules by
the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def load_script(path, name: str | None = None, *, register: bool = False):
    """The module of the Python file ``path`` under ``name`` (default its stem); with
    ``register`` it is also put in ``sys.modules`` (worker processes that unpickle its
    functions find it there; a second load returns the registered module)."""
    path = Path(path)
    name = name or path.stem
    if register and name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
