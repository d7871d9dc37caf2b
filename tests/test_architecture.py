"""The package's layout holds (issue 32, docs/compiled.md): no import circle between its
stages (the top-level subpackages) at import time, and at most two modules over 600
lines. The import graph is read from the sources with ``ast``: module-level imports
only (imports inside functions and under ``TYPE_CHECKING`` run later, or never)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "flexmbs"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Modules ``path`` imports when it is imported (absolute names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in tree.body:  # module level only
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, ast.Import):
                found |= {a.name for a in sub.names}
            elif isinstance(sub, ast.ImportFrom):
                base = package[:len(package) - sub.level + 1] if sub.level else []
                name = ".".join([*base, sub.module] if sub.module else base)
                found.add(name)
                found |= {f"{name}.{a.name}" for a in sub.names}
    return {n for n in found if n.split(".")[0] == "flexmbs"}


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _stage_graph() -> dict[str, set[str]]:
    modules = {_module(p) for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        own = _stage(_module(path))
        if own is None or (PACKAGE / f"{own}.py").is_file():
            continue
        for target in _imports(path):
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]  # a name imported from a module
            other = _stage(target)
            if other and other != own and (PACKAGE / other).is_dir():
                graph.setdefault(own, set()).add(other)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one stage (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_between_stages():
    graph = _stage_graph()
    assert len(graph) > 10  # the graph was read (stages importing others)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_at_most_two_modules_over_600_lines():
    long = sorted((len(p.read_text(encoding="utf-8").splitlines()), str(p))
                  for p in PACKAGE.rglob("*.py")
                  if len(p.read_text(encoding="utf-8").splitlines()) > 600)
    assert len(long) <= 2, long


def test_no_private_name_crosses_a_stage():
    """A stage uses another stage's documented names only: no ``from ..stage.module
    import _name`` (the compiled layer's table views included)."""
    crossing = []
    for path in PACKAGE.rglob("*.py"):
        own = _stage(_module(path))
        package = _module(path).split(".")
        package = package if path.name == "__init__.py" else package[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level and node.module):
                continue
            target = [*package[:len(package) - node.level + 1], *node.module.split(".")]
            other = _stage(".".join(target))
            crossing += [f"{_module(path)}: {'.'.join(target)}.{a.name}" for a in node.names
                         if a.name.startswith("_") and other != own]
    assert crossing == []
