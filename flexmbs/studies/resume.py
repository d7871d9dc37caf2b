"""Resumable sweeps: each run saved by a sweep (``save_dir``) gets a small JSON record
beside its results file, keyed by a hash of what the run computes, so that the same sweep
run again with ``resume=True`` skips the runs already finished (docs/studies.md).

For a variant with label ``L`` the folder holds ``<L>.res.h5`` (the results file, written
first) and ``<L>.run.json`` (written last, atomically): the run key, the results file's
checksum, the record's scalars (success, message, times, steps, ...) and its study
signals (:class:`~flexmbs.studies.signals.RunSignals`, floats stored exactly). A run
counts as finished only when both are there, the key matches and the results file still
carries the checksum the record names; anything else (a changed case file or override, a
run killed between the two writes or interrupted by Ctrl-C, a replaced results file) runs
again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields
from pathlib import Path

import numpy as np

from .._files import CHECKSUM_ATTR, write_text
from .signals import RunSignals

#: Tag and version of the run records (a record of another format is not trusted).
RECORD_FORMAT = "flexmbs-sweep-run"
RECORD_VERSION = 1
#: Record scalars stored as they are (the rest of RunRecord is rebuilt or derived).
#: The status of a run stopped by Ctrl-C or SIGTERM: not finished, so never skipped.
INTERRUPTED = "interrupted"
_SCALARS = ("success", "message", "wall_time", "cpu_time", "steps", "newton_mean",
            "settings", "status", "warnings")
#: RunSignals fields that are {name: array}, {name: number} or a plain array.
_ARRAY_DICTS = ("modal", "tip", "shape_peak", "joint_angles")
_NUMBER_DICTS = ("tip_node", "size")
_ARRAYS = ("t", "kinetic", "potential", "elastic", "energy_error")


def file_stem(label: str) -> str:
    """The file-name stem of a run's files: the label with every character other than
    letters, digits and ``-_.`` replaced by ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)


def run_key(case_path, overrides: dict, from_equilibrium: bool, inputs=None) -> str:
    """SHA-256 (hex) of what decides a run's results: the case file's bytes, the
    variant's overrides (keys sorted; values as TOML reads them), the from-equilibrium
    flag, the flexmbs version, and the bytes of every file the case reads (``inputs``:
    modal data, meshes, a URDF; default: those of the case loaded with the overrides,
    none when it does not load)."""
    from .. import __version__

    digest = hashlib.sha256()
    digest.update(Path(case_path).read_bytes())
    digest.update(b"\0")
    digest.update(json.dumps(overrides, sort_keys=True, default=repr).encode())
    digest.update(f"\0{bool(from_equilibrium)}\0{__version__}".encode())
    for item in sorted(str(p) for p in (case_inputs(case_path, overrides) if inputs is None
                                         else inputs)):
        if Path(item).resolve() == Path(case_path).resolve():
            continue
        digest.update(b"\0")  # (the bytes, not the path: a study moved elsewhere resumes)
        with open(item, "rb") as handle:  # (in blocks: modal data can be large)
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def case_inputs(case_path, overrides: dict) -> list:
    """The files the case reads with ``overrides`` (empty when it does not load: that
    run is done again, and reports why)."""
    from ..cases import load_case
    from ..errors import FlexmbsError

    try:
        return [p for p in load_case(case_path, overrides).inputs if Path(p).is_file()]
    except (FlexmbsError, OSError):
        return []


def record_path(save_dir, label: str) -> Path:
    return Path(save_dir) / f"{file_stem(label)}.run.json"


def _result_checksum(path) -> str | None:
    """The checksum attribute of a results file, None when unreadable or absent."""
    import h5py

    try:
        with h5py.File(path, "r") as f:
            value = f.attrs.get(CHECKSUM_ATTR)
    except (OSError, ValueError):
        return None
    return None if value is None else str(value)


def _signals_json(sig: RunSignals | None):
    if sig is None:
        return None
    out: dict = {}
    for name in _ARRAYS:
        value = getattr(sig, name)
        out[name] = None if value is None else np.asarray(value, dtype=float).tolist()
    for name in _ARRAY_DICTS:
        out[name] = {k: np.asarray(v, dtype=float).tolist()
                     for k, v in getattr(sig, name).items()}
    out["tip_node"] = {k: int(v) for k, v in sig.tip_node.items()}
    out["size"] = {k: float(v) for k, v in sig.size.items()}
    return out


def _signals_from_json(data) -> RunSignals | None:
    if data is None:
        return None
    names = {f.name for f in fields(RunSignals)}
    if not set(_ARRAYS + _ARRAY_DICTS + _NUMBER_DICTS) <= names:  # pragma: no cover
        raise RuntimeError("RunSignals changed: update flexmbs.studies.resume")
    kwargs: dict = {name: (None if data[name] is None else np.asarray(data[name], float))
                    for name in _ARRAYS}
    for name in _ARRAY_DICTS:
        kwargs[name] = {k: np.asarray(v, dtype=float) for k, v in data[name].items()}
    kwargs["tip_node"] = {k: int(v) for k, v in data["tip_node"].items()}
    kwargs["size"] = {k: float(v) for k, v in data["size"].items()}
    return RunSignals(**kwargs)


def write_record(save_dir, record, key: str) -> Path | None:
    """Write ``record``'s (a RunRecord with a results file) JSON record into
    ``save_dir`` atomically. A record without a results file, or of a run interrupted
    (Ctrl-C, SIGTERM) before its end, is not written: such a run never counts as
    finished and runs again on resume."""
    if not record.result_file or record.status == INTERRUPTED:
        return None
    checksum = _result_checksum(record.result_file)
    if checksum is None:
        return None
    data = {"format": RECORD_FORMAT, "version": RECORD_VERSION, "key": key,
            "label": record.label, "overrides": record.overrides,
            "result_file": Path(record.result_file).name, "result_checksum": checksum,
            **{name: getattr(record, name) for name in _SCALARS},
            "signals": _signals_json(record.signals)}
    text = json.dumps(data, default=repr)
    return write_text(record_path(save_dir, record.label), text, "sweep run record")


def read_record(save_dir, label: str, key: str) -> dict | None:
    """The RunRecord fields of a finished run of ``label`` with run key ``key`` in
    ``save_dir``, or None when there is none that can be trusted (missing, unreadable,
    another key, results file gone or changed)."""
    path = record_path(save_dir, label)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(data, dict) and data.get("format") == RECORD_FORMAT
            and data.get("version") == RECORD_VERSION and data.get("key") == key
            and data.get("label") == label):
        return None
    result_file = Path(save_dir) / str(data.get("result_file", ""))
    if (not result_file.is_file()
            or _result_checksum(result_file) != data.get("result_checksum")):
        return None
    try:
        signals = _signals_from_json(data["signals"])
        out = {name: data[name] for name in _SCALARS}
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return {**out, "overrides": data["overrides"], "signals": signals,
            "result_file": str(result_file)}
