"""Fuzzed case files (issue 36): the shipped cases with one random mutation each — a key
deleted or misspelt, a value replaced by text, a list, a table, NaN, ±inf, zero, a
negative or a huge number, a list of the wrong length, a name duplicated or a reference
to nothing — run through the command line in-process. Each either runs (any exit code of
a run: completed, with warnings, diverged, failed) or is refused with exit 2 and a
message whose first line names the key and the value (``_named``); never a traceback,
never exit 1, and the case file stays as it was.

The default suite runs 150 examples, the same ones at every run; the test marked
``long`` several thousand drawn at random (tests/fuzzing.py).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import strategies as st

tomli_w = pytest.importorskip("tomli_w", reason="the fuzzer writes TOML with tomli-w "
                              "(test extra)")

from cli_runner import run_cli  # noqa: E402  (tests/cli_runner.py)
from fuzzing import fuzz_pair  # noqa: E402  (tests/fuzzing.py)

from flexmbs.cases.loader import tomllib  # noqa: E402  (tomli on Python 3.10)

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
#: Cases small enough to run a few steps in milliseconds, covering rigid and flexible
#: bodies, drives, forces, sensors, contacts and initial conditions.
FUZZED = ("seed_pendulum.toml", "seed_double_pendulum.toml", "cantilever_release.toml",
          "ball_drop.toml", "slider_crank_ideal.toml", "arm_beam_pd.toml")


def _short(data: dict) -> dict:
    solver = data.setdefault("solver", {})
    solver["t_end"] = 3 * float(solver.get("h", 1e-3))
    solver.pop("output_times", None)
    data.pop("output", None)
    return data


BASES = {name: _short(tomllib.loads((CASES / name).read_text())) for name in FUZZED}


def _paths(node, prefix=()):
    """Every (path, value) of a parsed case: tables, arrays of tables and leaves."""
    out = []
    if isinstance(node, dict):
        for key, value in node.items():
            out.append(((*prefix, key), value))
            out.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list) and node and all(isinstance(v, dict) for v in node):
        for k, value in enumerate(node):
            out.extend(_paths(value, (*prefix, k)))
    return out


REPLACEMENTS = ("text", "list", "table", "nan", "inf", "-inf", "zero", "negative", "huge",
                "tiny", "true", "wrong-length", "nowhere")
MUTATIONS = ("delete", "misspell", "duplicate", *REPLACEMENTS)


def _replacement(kind, old):
    if kind == "text":
        return "oops"
    if kind == "list":
        return [1, 2]
    if kind == "table":
        return {"value": 1}
    if kind == "nan":
        return math.nan
    if kind in ("inf", "-inf"):
        return math.inf if kind == "inf" else -math.inf
    if kind == "zero":
        return 0
    if kind == "negative":
        return -abs(old) if isinstance(old, (int, float)) and old else -1.0
    if kind == "huge":
        return 1e300
    if kind == "tiny":
        return 1e-300
    if kind == "true":
        return True
    if kind == "wrong-length":
        return [*old, 0.0] if isinstance(old, list) else [0.0, 0.0]
    return "nowhere.X"


def _mutate(data, path, kind):
    """Apply mutation ``kind`` at ``path``; returns (key named, value given)."""
    *head, last = path
    parent = data
    for step in head:
        parent = parent[step]
    old = parent[last]
    if kind == "delete":
        del parent[last]
        return last, None
    if kind == "misspell" and isinstance(last, str):
        parent[last + "x"] = parent.pop(last)
        return last + "x", None
    if kind == "duplicate":
        if isinstance(old, list) and old and isinstance(old[0], dict):
            old.append(dict(old[0]))
            return last, old[0].get("name")
        kind = "nowhere"
    value = _replacement(kind, old)
    parent[last] = value
    return last, value


def _given(value) -> set[str]:
    """How a message may show ``value``: its repr or str (NaN and inf by name, true as
    written in TOML), a long list or table by the start of its repr."""
    if isinstance(value, bool):
        return {"True", "true"}
    if isinstance(value, float) and not math.isfinite(value):
        return {"nan"} if math.isnan(value) else {"inf"}
    texts = {repr(value), str(value)}
    if isinstance(value, float):
        texts.add(f"{value:g}")
    if isinstance(value, (list, dict)):
        texts.add(repr(value)[:40])
    return texts


def _plain(text: str) -> str:
    """Whole floats as integers (2.0 -> 2), so that [1, 2] read as floats still matches."""
    return re.sub(r"(\d)\.0\b", r"\1", text)


def _named(message: str, key, value, kind: str) -> bool:
    """Whether a refusal's first line names the key and the value (issue 36): the line is
    the whole diagnosis, further lines only list more problems. A key deleted names
    what its absence breaks instead, a misspelt key itself; a renamed or duplicated
    entry is named by its name (references to it list the names there are), and a
    made-up table by its unknown or missing keys."""
    lines = message.strip().splitlines()
    first = _plain(lines[0]) if lines else ""
    if not first.startswith("flexmbs run: error:"):
        return False
    key_named = isinstance(key, str) and re.search(rf"(?<!\w){re.escape(key)}\b",
                                                   first) is not None
    if value is None:  # deleted or misspelt
        return kind != "misspell" or key_named
    value_named = any(_plain(text) in first for text in _given(value))
    if kind == "table":
        value_named = value_named or "'value'" in first or "'type'" in first
    if kind == "duplicate" or key == "name":
        return value_named
    return key_named and value_named


@st.composite
def mutated_cases(draw):
    name = draw(st.sampled_from(FUZZED))
    data = tomllib.loads(tomli_w.dumps(BASES[name]))  # a deep copy
    paths = _paths(data)
    path, _ = draw(st.sampled_from(paths))
    kind = draw(st.sampled_from(MUTATIONS))
    key, value = _mutate(data, path, kind)
    return name, data, path, kind, key, value



def _case_runs_or_is_refused_by_name(case, tmp_path_factory):
    name, data, path, kind, key, value = case
    root = tmp_path_factory.mktemp("fuzz")
    folder = root / "cases"  # beside modal_data/, as the shipped cases are
    folder.mkdir()
    (root / "modal_data").symlink_to(ROOT / "modal_data")
    for extra in CASES.glob("*.py"):  # a controller script a case may name
        (folder / extra.name).write_bytes(extra.read_bytes())
    text = tomli_w.dumps(data)
    case_file = folder / name
    case_file.write_text(text)
    code, output = run_cli(["run", str(case_file), "-o", str(root / "out.res.h5"),
                            "--quiet"])
    where = f"{name}: {kind} at {'.'.join(map(str, path))}"
    assert "Traceback" not in output, f"{where}\n{output}"
    assert code != 1, f"{where}: exit 1\n{output}"
    if code == 2:
        assert _named(output, key, value, kind), \
            f"{where}: the first line does not name {key!r} and {value!r}:\n{output}"
    assert case_file.read_text() == text, f"{where}: the case file changed"


(test_a_mutated_case_runs_or_is_refused_by_name,
 test_thousands_of_mutated_cases_run_or_are_refused_by_name) = fuzz_pair(
    _case_runs_or_is_refused_by_name, 150, case=mutated_cases())
