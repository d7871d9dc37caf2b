"""Building the prebuilt step kernel (docs/compiled.md, "The prebuilt kernel").

``python -m flexmbs.engine.prebuilt_build`` compiles the step kernel
(:func:`flexmbs.engine.newton.kernel`) with numba for the baseline CPU of this
platform (:data:`flexmbs.engine.prebuilt.BASELINES`) in a separate process, puts the C
entry point of :mod:`flexmbs.engine.native` in front of it, keeps the object code it
reaches and writes it beside the package with its manifest, which
:mod:`flexmbs.engine.prebuilt` reads to load it. Run it after a change to the kernel
sources (:func:`flexmbs.compiled.kernel_sources`); a test rebuilds the object and
compares it with the shipped one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..compiled import kernel_tag
from .prebuilt import (
    BASELINES,
    ENTRY,
    MANIFEST,
    PREBUILT_DIR,
    read_manifest,
)


def _parameters(kernel) -> list[tuple[str, str, int]]:
    """The step kernel's parameters as the native entry point marshals them:
    (name, "f8" | "i8" | "scalar", ndim), from its one compiled signature."""
    import inspect

    from numba.core import types

    names = list(inspect.signature(kernel.py_func).parameters)
    (signature,) = kernel.signatures
    out = []
    for name, typ in zip(names, signature, strict=True):
        if isinstance(typ, types.Array):
            if typ.layout != "C" or str(typ.dtype) not in ("float64", "int64"):
                raise RuntimeError(f"kernel parameter {name}: {typ} cannot be marshalled")
            out.append((name, "f8" if str(typ.dtype) == "float64" else "i8", typ.ndim))
        else:
            out.append((name, "scalar", 0))
    return out


def _entry_source(parameters) -> str:
    """Source of ``entry(pointers, numbers)``: the step kernel's arguments rebuilt from
    the tables the C entry point takes (:mod:`flexmbs.engine.native`)."""
    from .native import SCALARS

    args, pointer, slot = [], 0, len(SCALARS)
    for name, kind, ndim in parameters:
        if kind == "scalar":
            value = f"numbers[{SCALARS.index(name)}]"
            args.append(f"{value} != 0" if name == "start" else value)
            continue
        shape = ", ".join(f"numbers[{slot + i}]" for i in range(ndim))
        args.append(f"carray(pointers[{pointer}], ({shape},), {kind})")
        pointer, slot = pointer + 1, slot + ndim
    return ("def entry(pointers, numbers):\n    return kernel(\n        "
            + ",\n        ".join(args) + ")\n")


_C_ENTRY = """
declare i32 @"{native}"(ptr, ptr, ptr, ptr)

define i64 @{entry}(ptr %pointers, ptr %numbers, ptr %error) {{
  %result = alloca i64
  %record = alloca ptr
  store i64 0, ptr %result
  store ptr null, ptr %record
  %status = call i32 @"{native}"(ptr %result, ptr %record, ptr %pointers, ptr %numbers)
  %ok = icmp eq i32 %status, 0
  br i1 %ok, label %done, label %raised
done:
  %value = load i64, ptr %result
  ret i64 %value
raised:
  %exc = load ptr, ptr %record
  store ptr %exc, ptr %error
  ret i64 {failed}
}}

; numba's reference counting calls this when a count drops to zero; nothing in the
; build allocates (it imports no allocator), so no count ever does
define void @NRT_MemInfo_call_dtor(ptr %meminfo) {{
  call void @llvm.trap()
  unreachable
}}

declare void @llvm.trap()
"""


def check_imports(imports: list[str]) -> None:
    """Raise RuntimeError if a build's code imports anything beyond the C and maths
    library functions the loader resolves (:data:`~flexmbs.engine.native.C_LIBRARY`):
    numba's runtime or Python's C API would need numba in the process, and an
    allocation or an exception message in a kernel is what brings them in."""
    from .native import C_LIBRARY

    foreign = sorted(set(imports) - C_LIBRARY)
    if foreign:
        raise RuntimeError(f"the step kernel's code imports {', '.join(foreign)}, beyond "
                           "the C and maths libraries (numba's runtime or Python's C API: "
                           "an allocation or an exception message in a kernel?); the "
                           "prebuilt kernel must import neither")


def _compile_object(out: Path) -> None:
    """In the build process (baseline CPU set in its environment): compile the step
    kernel, put the C entry point in front of it, keep what it reaches, and write the
    object code and its description (json) to ``out``."""
    import llvmlite.binding as ll
    import numpy as np
    from numba import carray, njit, types

    from .elf import read_object
    from .native import FAILED
    from .newton import kernel
    from .warmup import compile_kernels

    compile_kernels()
    parameters = _parameters(kernel)
    namespace = {"kernel": kernel, "carray": carray, "f8": np.float64, "i8": np.int64}
    exec(_entry_source(parameters), namespace)
    signature = types.int64(types.CPointer(types.voidptr), types.CPointer(types.int64))
    entry = njit(signature)(namespace["entry"])
    compiled = entry.overloads[signature.args]
    module = ll.parse_assembly(compiled.library.get_llvm_str())
    module.link_in(ll.parse_assembly(_C_ENTRY.format(
        native=compiled.fndesc.llvm_func_name, entry=ENTRY, failed=FAILED)))
    for value in (*module.functions, *module.global_variables):
        if not value.is_declaration and value.name != ENTRY:
            value.linkage = "internal"
    from numba.core import config

    machine = ll.Target.from_triple(ll.get_process_triple()).create_target_machine(
        cpu=config.CPU_NAME, features=config.CPU_FEATURES or "", opt=3, jit=True)
    passes = ll.create_new_module_pass_manager()
    passes.add_global_dead_code_eliminate_pass()
    passes.add_strip_dead_prototype_pass()
    passes.run(module, ll.create_pass_builder(machine, ll.create_pipeline_tuning_options()))
    module.verify()
    code = machine.emit_object(module)
    imports, _ = read_object(code)
    check_imports(imports)
    out.write_bytes(code)
    out.with_suffix(".json").write_text(json.dumps(
        {"parameters": parameters, "imports": imports}))


def build(folder: Path = PREBUILT_DIR, numba_cache: Path | None = None) -> dict:
    """Compile the step kernel for this architecture's baseline CPU in a fresh process
    and store it in ``folder`` (replacing this platform's earlier build and builds of
    other sources); returns its manifest entry. Takes as long as a compilation.

    The build compiles numba's kernels (:func:`flexmbs.engine.warmup.compile_kernels`)
    for the baseline CPU on the way, from an empty cache of its own; ``numba_cache``,
    if given, receives that cache afterwards, for processes that run numba's kernels with
    the same settings (``NUMBA_CACHE_DIR`` = ``numba_cache``, ``NUMBA_CPU_NAME`` = the
    baseline CPU, ``NUMBA_CPU_FEATURES`` empty: the test suite's)."""
    import platform

    import llvmlite
    import llvmlite.binding as ll
    import numba
    import numpy as np

    from .native import ABI

    arch = platform.machine().lower()
    arch = {"amd64": "x86_64"}.get(arch, arch)
    if arch not in BASELINES:
        raise SystemExit(f"no baseline CPU defined for architecture {arch!r}: "
                         f"known {sorted(BASELINES)}")
    cpu, features = BASELINES[arch]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flexmbs-prebuild-") as tmp:
        out = Path(tmp) / "kernel.o"
        # numba's settings of this shell (NUMBA_OPT, NUMBA_BOUNDSCHECK, …) stay out of
        # the shipped code: only those set here
        env = {key: value for key, value in os.environ.items()
               if not key.startswith("NUMBA_")}
        env = {**env, "NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": "",
               "NUMBA_CACHE_DIR": tmp, "FLEXMBS_KERNEL_STATE_DIR": tmp,
               "FLEXMBS_PREBUILT": "0", "NUMBA_DISABLE_JIT": "0"}
        subprocess.run([sys.executable, "-c",
                        "import sys; from pathlib import Path; "
                        "from flexmbs.engine.prebuilt_build import _compile_object; "
                        "_compile_object(Path(sys.argv[1]))", str(out)],
                       env=env, check=True)
        blob = out.read_bytes()  # as is: loading skips a 3 ms decompression, and the
        # wheel and git compress it anyway
        described = json.loads(out.with_suffix(".json").read_text())
        if numba_cache is not None:
            _merge_cache(Path(tmp), Path(numba_cache))
    triple, tag = ll.get_process_triple(), kernel_tag()
    name = f"kernel-{tag.removeprefix('kernels-')}-{triple}-{cpu}.o"
    entry = {"file": name, "tag": tag, "abi": ABI, "triple": triple, "cpu": cpu,
             "features": list(features), "entry": ENTRY, **described,
             "sha256": hashlib.sha256(blob).hexdigest(), "bytes": len(blob),
             "built_with": {"numba": numba.__version__, "llvmlite": llvmlite.__version__,
                            "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
                            # numba's code for some NumPy functions (complex ones among
                            # them) follows NumPy's major version
                            "numpy": np.__version__.split(".")[0],
                            "date": time.strftime("%Y-%m-%d")}}
    _write_atomic(folder / name, blob)
    manifest = read_manifest(folder)
    kept = [b for b in manifest["builds"] if b.get("tag") == tag
            and (b.get("triple"), b.get("cpu")) != (triple, cpu)]
    manifest["builds"] = [*kept, entry]
    _write_atomic(folder / MANIFEST,
                  (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())
    wanted = {*(b["file"] for b in manifest["builds"]), MANIFEST}
    for old in folder.iterdir():  # builds of other sources, leftovers of interrupted ones
        stale = old.name.startswith("kernel-") or old.name.endswith(".tmp")
        if old.is_file() and stale and old.name not in wanted:
            old.unlink()
    return entry


def _merge_cache(build_dir: Path, cache: Path) -> None:
    """Copy numba's cache files of the build folder into ``cache`` at the same relative
    paths (numba lays them out by source path under ``NUMBA_CACHE_DIR``), each written
    whole before it takes its name: the data files (``*.nbc``) first, then the indexes
    (``*.nbi``) that point at them. An index replaces one a process running beside wrote
    for the same function (its entries are then compiled again when next needed)."""
    for suffix in (".nbc", ".nbi"):
        for source in sorted(build_dir.rglob(f"*{suffix}")):
            if source.is_file():
                target = cache / source.relative_to(build_dir)
                target.parent.mkdir(parents=True, exist_ok=True)
                _write_atomic(target, source.read_bytes())


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m flexmbs.engine.prebuilt_build",
        description="Rebuild the shipped step kernel for this platform's baseline CPU "
                    "(after a change to the kernel sources; takes a few minutes).")
    parser.add_argument("--folder", type=Path, default=PREBUILT_DIR,
                        help="where to store it (default: the package's prebuilt/)")
    args = parser.parse_args(argv)
    entry = build(args.folder)
    print(f"built {entry['file']} ({entry['bytes'] / 1e6:.2f} MB) for {entry['cpu']}, "
          f"{entry['triple']}; imports {', '.join(entry['imports'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
