"""Prebuilt step kernel: shipped compiled for a baseline CPU, loaded without compiling
(docs/compiled.md, "The prebuilt kernel").

numba takes about two minutes to compile the kernels. Python calls one of them,
:func:`flexmbs.compiled.newton.kernel`; its compiled form holds every kernel it calls.
So the package ships that compiled form, built for a baseline CPU, in ``prebuilt/``:
its machine code as numba's own disk cache stores it, with a manifest of what it was
built for. A process whose kernel sources, numba, Python and platform match a shipped
build, on a CPU with the baseline's instruction set, loads it in a fraction of a
second (:func:`load_into`). Any other process compiles, as before (in the background
for automatic runs, :mod:`flexmbs.compiled.warmup`). Kernels compiled on this machine
(numba's cache, once marked ready) take precedence: they are tuned to its CPU.

``python -m flexmbs.compiled.prebuilt`` rebuilds the shipped kernel for this platform
after a change to the kernel sources (a test checks that the shipped build is that of
the sources). ``FLEXMBS_PREBUILT=0`` (or ``false``, ``no``, ``off``) switches loading
off.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

from . import KERNEL_TAG

#: Where the shipped builds and their manifest live.
PREBUILT_DIR = Path(__file__).resolve().parent / "prebuilt"
MANIFEST = "manifest.json"
FORMAT = 1

#: Baseline CPU per architecture (LLVM's name) and the instruction-set features (LLVM's
#: names) a host needs to run code built for it. x86-64 is the original 64-bit set that
#: every such CPU has: the kernels' steps measured as fast built for it as for the CPU
#: they ran on (docs/compiled.md), so nothing is gained by a narrower baseline.
BASELINES = {
    "x86_64": ("x86-64", ("cmov", "cx8", "fxsr", "mmx", "sse", "sse2")),
}


def environment() -> dict:
    """What a build must match: numba, Python, and LLVM's process triple."""
    import llvmlite.binding as ll
    import numba

    return {"numba": numba.__version__, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "triple": ll.get_process_triple()}


def _host_features() -> set[str]:
    import llvmlite.binding as ll

    return {name for name, on in ll.get_host_cpu_features().items() if on}


def _manifest(folder: Path = PREBUILT_DIR) -> dict:
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return {"format": FORMAT, "builds": []}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {"format": FORMAT, "builds": []}
    return data


def find(folder: Path = PREBUILT_DIR) -> tuple[dict | None, str]:
    """(the shipped build this process can load, ``""``) or (None, why there is none).

    Cheap (the manifest only): for deciding whether an automatic run needs to compile."""
    from numba.core import config

    switch = os.environ.get("FLEXMBS_PREBUILT", "1")
    if switch.strip().lower() in ("0", "false", "no", "off"):
        return None, f"FLEXMBS_PREBUILT={switch}"
    if config.DISABLE_JIT:
        return None, "NUMBA_DISABLE_JIT is set"
    builds = [b for b in _manifest(folder)["builds"] if b.get("tag") == KERNEL_TAG]
    if not builds:
        return None, f"no prebuilt kernel of these sources ({KERNEL_TAG})"
    env = environment()
    matching = [b for b in builds if all(b.get(k) == v for k, v in env.items())]
    if not matching:
        built = "; ".join(f"numba {b.get('numba')}, Python {b.get('python')}, "
                          f"{b.get('triple')}" for b in builds)
        return None, (f"no prebuilt kernel for numba {env['numba']}, Python "
                      f"{env['python']}, {env['triple']} (built for: {built})")
    host = _host_features()
    for build in matching:
        if set(build.get("features", ())) <= host:
            return build, ""
    missing = sorted(set(matching[0].get("features", ())) - host)
    return None, (f"this CPU lacks {', '.join(missing)} of the prebuilt kernel's "
                  f"baseline ({matching[0].get('cpu')})")


#: The build :func:`load_into` loaded in this process, if any.
_loaded: dict | None = None


def loaded() -> dict | None:
    """The shipped build this process's step kernel runs, or None."""
    return _loaded


def ensure_loaded() -> tuple[dict | None, str]:
    """Load the shipped build into :func:`~flexmbs.compiled.newton.kernel` unless this
    process has done so already or compiled the kernel itself: (the build running, ``""``)
    or (None, why not)."""
    if _loaded is not None:
        return _loaded, ""
    from .newton import kernel

    compiled = getattr(kernel, "overloads", None)  # None under NUMBA_DISABLE_JIT
    if compiled is None:
        return None, "NUMBA_DISABLE_JIT is set"
    if compiled:
        return None, "the step kernel was compiled in this process"
    return load_into(kernel)


def load_into(dispatcher, folder: Path = PREBUILT_DIR) -> tuple[dict | None, str]:
    """Add the shipped build to ``dispatcher`` (:func:`~flexmbs.compiled.newton.kernel`)
    as its compiled overload, as numba's cache would: (the build, ``""``), or (None, why
    not) with the dispatcher unchanged."""
    global _loaded
    build, reason = find(folder)
    if build is None:
        return None, reason
    try:
        blob = (folder / build["file"]).read_bytes()
        if hashlib.sha256(blob).hexdigest() != build.get("sha256"):
            return None, f"prebuilt kernel {build['file']!r}: checksum mismatch"
        payload = pickle.loads(zlib.decompress(blob))
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.registry import cpu_target

        context = cpu_target.target_context
        with global_compiler_lock:
            context.refresh()
            compiled = dispatcher._cache._impl.rebuild(context, payload)
            dispatcher.add_overload(compiled)
    except Exception as exc:  # a damaged file or another numba's internals: compile instead
        return None, (f"prebuilt kernel {build['file']!r} could not be loaded: "
                      f"{type(exc).__name__}: {exc}")
    _loaded = build
    return build, ""


# ------------------------------------------------------------------ building
def _compile_payload(out: Path) -> None:
    """In the build process (baseline CPU set in its environment): compile the step
    kernel and write its serialized compiled form, as numba's cache would store it."""
    from numba.core.serialize import dumps

    from .newton import kernel
    from .warmup import compile_kernels

    compile_kernels()
    if len(kernel.signatures) != 1:
        raise RuntimeError(f"the step kernel has {len(kernel.signatures)} compiled "
                           "signatures, expected 1")
    compiled = kernel.overloads[kernel.signatures[0]]
    out.write_bytes(dumps(kernel._cache._impl.reduce(compiled)))


def build(folder: Path = PREBUILT_DIR) -> dict:
    """Compile the step kernel for this architecture's baseline CPU in a fresh process
    and store it in ``folder`` (replacing this environment's earlier build and builds of
    other sources); returns its manifest entry. Takes as long as a compilation."""
    import platform

    arch = platform.machine().lower()
    arch = {"amd64": "x86_64"}.get(arch, arch)
    if arch not in BASELINES:
        raise SystemExit(f"no baseline CPU defined for architecture {arch!r}: "
                         f"known {sorted(BASELINES)}")
    cpu, features = BASELINES[arch]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flexmbs-prebuild-") as tmp:
        out = Path(tmp) / "payload.pickle"
        # numba's settings of this shell (NUMBA_OPT, NUMBA_BOUNDSCHECK, …) stay out of
        # the shipped code: only those set here
        env = {key: value for key, value in os.environ.items()
               if not key.startswith("NUMBA_")}
        env = {**env, "NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": "",
               "NUMBA_CACHE_DIR": tmp, "FLEXMBS_KERNEL_STATE_DIR": tmp,
               "FLEXMBS_PREBUILT": "0", "NUMBA_DISABLE_JIT": "0"}
        subprocess.run([sys.executable, "-c",
                        "import sys; from pathlib import Path; "
                        "from flexmbs.compiled.prebuilt import _compile_payload; "
                        "_compile_payload(Path(sys.argv[1]))", str(out)],
                       env=env, check=True)
        blob = zlib.compress(out.read_bytes(), 9)
    built_for = environment()
    name = (f"kernel-{KERNEL_TAG.removeprefix('kernels-')}-py{built_for['python']}-"
            f"numba{built_for['numba']}-{built_for['triple']}-{cpu}.bin")
    entry = {"file": name, "tag": KERNEL_TAG, **built_for, "cpu": cpu,
             "features": list(features), "sha256": hashlib.sha256(blob).hexdigest(),
             "bytes": len(blob)}
    _write_atomic(folder / name, blob)
    manifest = _manifest(folder)
    same_env = ("numba", "python", "triple", "cpu")
    kept = [b for b in manifest["builds"] if b.get("tag") == KERNEL_TAG
            and any(b.get(k) != entry[k] for k in same_env)]
    manifest["builds"] = [*kept, entry]
    _write_atomic(folder / MANIFEST,
                  (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())
    wanted = {*(b["file"] for b in manifest["builds"]), MANIFEST}
    for old in folder.iterdir():  # builds of other sources, leftovers of interrupted ones
        if old.is_file() and old.name not in wanted:
            old.unlink()
    return entry


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m flexmbs.compiled.prebuilt",
        description="Rebuild the shipped step kernel for this platform's baseline CPU "
                    "(after a change to the kernel sources; takes a few minutes).")
    parser.add_argument("--folder", type=Path, default=PREBUILT_DIR,
                        help="where to store it (default: the package's prebuilt/)")
    args = parser.parse_args(argv)
    entry = build(args.folder)
    print(f"built {entry['file']} ({entry['bytes'] / 1e6:.1f} MB) for {entry['cpu']}, "
          f"numba {entry['numba']}, Python {entry['python']}, {entry['triple']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
