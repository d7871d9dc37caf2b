"""The shipped prebuilt step kernel (docs/compiled.md, "The prebuilt kernel").

The package carries the step kernel as machine code for a baseline CPU behind a C entry
point (flexmbs.engine.native). These tests check that the shipped build is that of
the kernel sources (a change to a kernel needs ``python -m flexmbs.engine.prebuilt_build``)
and imports nothing but the C and maths libraries; that a fresh process runs every
shipped case on it without importing numba or compiling anything, with the NumPy
path's trajectories; that the entry point's tables carry each argument where the code
reads it; and that a build that does not fit, or is damaged, is refused with the reason
(before LLVM's linker sees it), leaving the kernels to numba.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import pickle
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from script_files import load_script  # tests/script_files.py

from flexmbs.compiled import kernel_tag
from flexmbs.engine import host, native, prebuilt, prebuilt_build
from flexmbs.engine.elf import read_object
from flexmbs.engine.host import process_triple

TESTS = Path(__file__).resolve().parent


def _shipped(build: dict) -> bytes:
    return prebuilt.object_code(build)


def test_the_shipped_prebuilt_kernel_is_that_of_the_sources():
    """A build of the current kernel sources is shipped, intact (its checksum), for the
    baseline CPU, defining its entry point and importing what its manifest lists: C and
    maths library functions only (no allocator: the build cannot allocate)."""
    builds = [b for b in prebuilt.read_manifest()["builds"] if b["tag"] == kernel_tag()]
    assert builds, ("no prebuilt kernel of the current kernel sources: run "
                    "`python -m flexmbs.engine.prebuilt_build` after changing a kernel")
    for build in builds:
        blob = (prebuilt.PREBUILT_DIR / build["file"]).read_bytes()
        assert hashlib.sha256(blob).hexdigest() == build["sha256"]
        assert len(blob) == build["bytes"]
        arch = build["triple"].split("-")[0]
        assert (build["cpu"], tuple(build["features"])) == prebuilt.BASELINES[arch]
        imports, defined = read_object(prebuilt.object_code(build))
        assert build["entry"] in defined
        assert imports == build["imports"]
        assert set(imports) <= native.C_LIBRARY  # no allocator among them
        assert build["abi"] == native.ABI
    files = {p.name for p in prebuilt.PREBUILT_DIR.iterdir()} - {prebuilt.MANIFEST}
    assert files == {b["file"] for b in prebuilt.read_manifest()["builds"]}  # no strays


_FRESH_PROCESS = """
import sys
from flexmbs.cases import load_case, run_case
names, ends = sys.argv[1].split(","), [float(t) for t in sys.argv[4].split(",")]
cases, tests = sys.argv[2], sys.argv[3]
runs = {}
for name, t_end in zip(names, ends):
    case = load_case(f"{cases}/{name}")
    case.solver = case.solver.replace(t_end=t_end)
    runs[name] = (t_end, run_case(case, engine="python")[1], run_case(case, engine="auto")[1])
print("numba imported:", "numba" in sys.modules, "llvmlite imported:",
      "llvmlite" in sys.modules)
sys.path.insert(0, tests)
from test_compiled import assert_same_steps
for name, (t_end, ref, new) in runs.items():
    assert new.statistics["engine"] == "compiled", (name, new.statistics)
    assert new.statistics["kernels"].startswith("prebuilt for "), (name, new.statistics)
    assert_same_steps(new, ref)
    print(name, new.statistics["kernels"], round(new.statistics["compile_time"], 3))
"""


def test_a_fresh_process_runs_the_prebuilt_kernel_without_numba(tmp_path):
    """With an empty numba cache and no kernels marked ready, automatic runs of every
    shipped case the kernels evaluate run the prebuilt kernel: neither numba nor llvmlite
    is imported (flexmbs.engine.object_loader links it),
    nothing is compiled or cached, no background compilation starts, and each run takes
    the NumPy path's Newton iterations and trajectory (q to 1e-12 over test_compiled's
    steps: test_compiled.assert_same_steps; the rates, accelerations and multipliers are
    compared in test_compiled, in the suite's process, for the same kernel)."""
    from test_compiled import CASES, compared_end, supported_cases

    build, reason = prebuilt.find()
    if build is None:
        pytest.skip(f"the shipped prebuilt kernel does not fit this process: {reason}")
    cache, state = tmp_path / "numba-cache", tmp_path / "state"
    cache.mkdir()
    state.mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
           "FLEXMBS_KERNEL_STATE_DIR": str(state)}
    env.pop("FLEXMBS_PREBUILT", None)
    names = supported_cases()
    ends = ",".join(repr(compared_end(name)) for name in names)  # as test_compiled's
    done = subprocess.run([sys.executable, "-c", _FRESH_PROCESS, ",".join(names),
                           str(CASES), str(TESTS), ends],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.split("\n")
    assert lines[0] == "numba imported: False llvmlite imported: False", done.stdout
    assert len([line for line in lines if "prebuilt for " in line]) == len(names) >= 5
    assert not list(cache.rglob("*.nbi")), "something was compiled"
    assert not list(state.iterdir()), "a compilation was started or recorded"


# ------------------------------------------------------------------ the entry point
#: A stand-in for the kernel behind the same C entry point: it returns the length of
#: its array argument "x" (the first shape slot after the three scalars) plus 10 times
#: the task, and writes 42 into x[0]. Task 9 raises: it points the error record at the
#: address in x[1] and returns FAILED.
_STAND_IN = """
define i64 @{entry}(ptr %pointers, ptr %numbers, ptr %error) {{
  %task = load i64, ptr %numbers
  %fail = icmp eq i64 %task, 9
  %x = load ptr, ptr %pointers
  br i1 %fail, label %raise, label %run
run:
  store double 42.0, ptr %x
  %slot = getelementptr i64, ptr %numbers, i64 3
  %n = load i64, ptr %slot
  %ten = mul i64 %task, 10
  %out = add i64 %n, %ten
  ret i64 %out
raise:
  %second = getelementptr double, ptr %x, i64 1
  %bits = load i64, ptr %second
  %record = inttoptr i64 %bits to ptr
  store ptr %record, ptr %error
  ret i64 {failed}
}}
{extra}
"""


def _object(extra: str = "", entry: str = prebuilt.ENTRY) -> bytes:
    """Object code of the stand-in, built as the real build is (llvmlite, this CPU)."""
    import llvmlite.binding as ll

    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    module = ll.parse_assembly(_STAND_IN.format(entry=entry, failed=native.FAILED,
                                                extra=extra))
    machine = ll.Target.from_triple(ll.get_process_triple()).create_target_machine(
        jit=True)
    return machine.emit_object(module)


def _stand_in(name: str = "x", more: tuple = ()) -> native.NativeKernel:
    """The stand-in called with (task, ``name``, max_iter, start, *``more``), ``more``
    being further array parameters (name, kind, ndim) it does not read."""
    engine, address = native.link(_object(), prebuilt.ENTRY)
    return native.NativeKernel(engine, address, [("task", "scalar", 0), (name, "f8", 1),
                                                 ("max_iter", "scalar", 0),
                                                 ("start", "scalar", 0), *more])


def test_the_host_is_described_as_llvm_describes_it():
    """flexmbs.engine.host names this process's triple and CPU features without llvmlite
    where it can: the same triple as LLVM's, and for every feature it maps to a
    /proc/cpuinfo flag, the same presence as LLVM's answer on this machine."""
    import llvmlite.binding as ll

    assert host.process_triple() == ll.get_process_triple()
    llvm = {name for name, on in ll.get_host_cpu_features().items() if on}
    for feature in host.CPUINFO_FLAGS:
        assert host.missing_features([feature]) == ([] if feature in llvm else [feature]), \
            feature
    assert host.missing_features(["no-such-feature"]) == ["no-such-feature"]  # LLVM's


def test_the_entry_point_gets_each_argument_where_it_reads_it():
    """The tables carry the scalars and each array's address and shape: the stand-in
    sees the task, the array's length, and writes into the caller's array (a parameter
    the kernel may write); a state vector (staged) is copied in, the caller's untouched,
    and a later call with new values of the same shape is seen through the same copy."""
    kernel = _stand_in()
    x = np.zeros(5)
    assert kernel(3, x, 1, True) == 35
    assert x[0] == 42.0
    y = np.zeros(7)
    assert kernel(1, y, 1, False) == 17  # a new array: its own address and shape
    assert y[0] == 42.0
    staged = _stand_in("q")
    q = np.arange(4.0)
    assert staged(2, q, 1, True) == 24
    np.testing.assert_array_equal(q, np.arange(4.0))  # the kernel saw a copy
    assert staged(2, np.zeros(6), 1, True) == 26  # another shape: a new copy
    strided, frozen = np.zeros((6, 2))[:, 0], np.zeros(3)
    frozen.flags.writeable = False
    assert staged(0, strided, 1, True) == 6  # copied, so any layout will do
    assert staged(0, frozen, 1, True) == 3
    for more in ([("y", "f8", 2)], [("y", "f8", 2), ("z", "i8", 1)]):  # 1 or 2 others
        others = [np.zeros((2, 2)), np.zeros(3, dtype=np.int64)][:len(more)]
        for read in ("q", "x"):  # the array read: staged, or bound by address
            mixed = _stand_in(read, more)
            assert mixed(1, np.zeros(4), 1, True, *others) == 14
            assert mixed(1, np.zeros(5), 1, True, *others) == 15  # a new array seen


def test_the_entry_point_refuses_arrays_it_cannot_pass_naming_them():
    kernel = _stand_in()
    for bad, what in ((np.zeros(5, dtype=np.float32), "float32"),
                      (np.zeros((5, 2))[:, 0], "shape (5,), not C-contiguous"),
                      (np.zeros((2, 2)), "shape (2, 2)"), ([0.0, 1.0], "list")):
        with pytest.raises(TypeError, match=rf"argument 'x'.*{re.escape(what)}"):
            kernel(0, bad, 1, True)
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        kernel(0, np.zeros(3), 1)


def test_a_refused_argument_leaves_no_stale_binding():
    """A call refused part-way through binding its arrays, then a call with the arrays
    of the call before: the kernel sees those (not the refused call's), and None is
    refused wherever it is passed, on a fresh caller and after release()."""
    kernel = _stand_in("x", (("y", "f8", 1),))
    x1, y1 = np.zeros(5), np.zeros(2)
    assert kernel(0, x1, 1, True, y1) == 5
    x2 = np.zeros(9)
    with pytest.raises(TypeError, match="argument 'y'"):
        kernel(0, x2, 1, True, np.zeros(2, dtype=np.float32))
    x1[0] = 0.0
    assert kernel(0, x1, 1, True, y1) == 5
    assert x1[0] == 42.0
    for caller in (_stand_in("x", (("y", "f8", 1),)), kernel):
        caller.release()
        with pytest.raises(TypeError, match=r"argument 'x'.*got NoneType"):
            caller(0, None, 1, True, y1)


_POOL = 2 * native.KNOWN_PER_PARAMETER + 2  # more arrays than a parameter remembers


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, _POOL - 1),
                          st.sampled_from(["call", "reshape", "freeze", "renew",
                                           "retype"])),
                min_size=1, max_size=40))
def test_a_caller_going_back_to_an_array_sees_that_array_as_it_is_now(ops):
    """Calls that alternate between arrays, as the tasks of a run do (a batch's
    factors, an evaluation's placeholders): whichever array a call passes, the kernel
    reads its first extent and writes into it, the same as a fresh caller would, also
    after the array was reshaped in place, made read-only or given another dtype in
    place since it was last passed (then refused, naming the argument), or replaced by
    a new array of another size (its address freed and possibly reused). (The array of
    the call just made is trusted unchanged by the next call, as the class says: it is
    left alone.)"""
    engine, address = native.link(_object(), prebuilt.ENTRY)
    kernel = native.NativeKernel(engine, address, [("task", "scalar", 0), ("x", "f8", 2),
                                                   ("max_iter", "scalar", 0),
                                                   ("start", "scalar", 0)])
    pool = [np.zeros((2 * (k + 1), 3)) for k in range(_POOL)]
    last = None
    for k, op in ops:
        x = pool[k]
        if x is last:
            op = "call"
        if op == "reshape" and x.flags.writeable:  # same data, another first extent
            x.shape = (x.shape[1], x.shape[0])
        elif op == "freeze":
            x.flags.writeable = False
        elif op == "retype" and x.dtype == np.float64:  # the same bytes seen as integers
            x.dtype = np.int64
        elif op == "renew":
            pool[k] = np.zeros((k + 3, 2))
        x = pool[k]
        if not x.flags.writeable or x.dtype != np.float64:
            with pytest.raises(TypeError, match=r"argument 'x'.*(read-only|int64)"):
                kernel(2, x, 1, True)
            continue
        x[...] = 0.0
        assert kernel(2, x, 1, True) == 20 + x.shape[0]
        last = x
        assert x.flat[0] == 42.0 and not x.flat[1:].any()


def test_an_array_whose_id_outlives_it_is_bound_by_its_own_address():
    """An array the caller remembers is freed, and a new one of the same shape takes its
    id (CPython reuses the slot) while the freed one's data lives on elsewhere: the
    kernel writes into the new array, not at the remembered address."""
    engine, address = native.link(_object(), prebuilt.ENTRY)
    kernel = native.NativeKernel(engine, address, [("task", "scalar", 0), ("x", "f8", 2),
                                                   ("max_iter", "scalar", 0),
                                                   ("start", "scalar", 0)])
    for _ in range(200):
        data = np.zeros((4, 3))  # outlives the view bound below
        view = data[:]
        kernel(2, view, 1, True)
        kernel(2, np.zeros((5, 3)), 1, True)  # another array bound since
        freed = id(view)
        del view
        new = np.zeros((4, 3))
        if id(new) == freed:
            break
    else:
        pytest.skip("CPython did not reuse a freed array's id in 200 tries")
    data[...] = 0.0
    assert kernel(2, new, 1, True) == 24
    assert new[0, 0] == 42.0 and not data.any()


def test_placeholders_bind_nothing_and_change_no_result(monkeypatch):
    """A CompiledSystem's placeholders (arguments a task does not read) leave the arrays
    bound there as they are: the clearance slider-crank (batches of steps, steps one by
    one, their factorizations, contact samples and outputs in turn) points the kernel
    at arrays about half as often (706 against 1484 times), with the same results bit
    for bit as with every placeholder bound."""
    from flexmbs.cases import load_case, run_case
    from flexmbs.engine.compiled_system import CompiledSystem

    case = load_case(TESTS.parent / "cases" / "slider_crank_clearance.toml",
                     overrides={"solver.t_end": 0.1})
    bindings = []  # array arguments pointed at anew (by a known address or a new one)
    point = native.NativeKernel._point

    def counted(self, *args):
        bindings[-1] += 1
        return point(self, *args)

    monkeypatch.setattr(native.NativeKernel, "_point", counted)
    bindings.append(0)
    _, skipping = run_case(case)
    assert skipping.statistics["kernels"].startswith("prebuilt")
    init = CompiledSystem.__init__

    def every_placeholder_bound(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._kernel.skip_placeholders((), {})

    monkeypatch.setattr(CompiledSystem, "__init__", every_placeholder_bound)
    bindings.append(0)
    _, binding = run_case(case)
    assert bindings[0] < 0.6 * bindings[1], bindings
    assert skipping.statistics["steps"] == binding.statistics["steps"] > 100
    for key in ("q", "qd", "qdd", "lam", "kinetic", "potential", "nonconservative_work"):
        np.testing.assert_array_equal(getattr(skipping, key), getattr(binding, key), key)


def test_a_state_vector_of_another_dtype_is_refused():
    """The state vectors are copied in, whatever their layout, but of float64 only (as
    numba's kernel takes them): no silent casting of integers, complex or objects."""
    staged = _stand_in("q")
    assert staged(0, np.zeros(3), 1, True) == 3
    for bad in (np.zeros(3, dtype=np.int64), np.zeros(3, dtype=complex),
                np.array([None, 1.0, 2.0], dtype=object)):
        with pytest.raises(TypeError, match=f"argument 'q'.*{bad.dtype}"):
            staged(0, bad, 1, True)


def test_an_exception_in_the_kernel_is_raised_from_its_record():
    """numba records a static exception as (pickled (class, args, location), its
    length); the record's first fields as numba lays them out are read back and the
    exception raised as numba would; an unreadable record gives a RuntimeError."""
    from llvmlite import ir
    from numba.core import callconv

    fields = callconv.excinfo_t.elements  # numba's record layout
    assert isinstance(fields[0], ir.PointerType) and fields[1] == ir.IntType(32)
    data = pickle.dumps((ZeroDivisionError, ("division by zero",), None))
    buffer = ctypes.create_string_buffer(data, len(data))

    class Record(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_int32)]

    record = Record(ctypes.cast(buffer, ctypes.c_void_p).value, len(data))
    kernel = _stand_in()
    x = np.zeros(2)
    x.view(np.uint64)[1] = ctypes.addressof(record)
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        kernel(9, x, 1, True)
    x.view(np.uint64)[1] = 0
    with pytest.raises(RuntimeError, match="FLEXMBS_PREBUILT=0"):
        kernel(9, x, 1, True)


# ------------------------------------------------------------------ refusals
def _ship(folder: Path, code: bytes | None = None, compress: bool = False,
          name: str | None = None, **changes) -> dict:
    """A manifest in ``folder`` with one build of ``code`` (default: the stand-in)
    fitting this process but for ``changes``: shipped as is in ``kernel-test.o``, or
    (``compress``) zlib-compressed in ``kernel-test.o.z`` as the builds before
    2026-12-06 were; ``name`` another file name."""
    code = _object() if code is None else code
    blob = zlib.compress(code) if compress else code
    name = name or ("kernel-test.o.z" if compress else "kernel-test.o")
    parameters = [["task", "scalar", 0], ["x", "f8", 1], ["max_iter", "scalar", 0],
                  ["start", "scalar", 0]]
    entry = {"file": name, "tag": kernel_tag(), "abi": native.ABI,
             "triple": process_triple(), "cpu": "x86-64",
             "features": ["sse2"], "entry": prebuilt.ENTRY, "parameters": parameters,
             "imports": [], "bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}
    entry.update(changes)
    (folder / name).write_bytes(blob)
    (folder / prebuilt.MANIFEST).write_text(
        json.dumps({"format": prebuilt.FORMAT, "builds": [entry]}))
    return entry


@pytest.mark.parametrize("compress", [False, True])
def test_a_build_that_fits_loads_and_runs(tmp_path, monkeypatch, compress):
    monkeypatch.delenv("FLEXMBS_PREBUILT", raising=False)
    build = _ship(tmp_path, compress=compress)
    assert prebuilt.find(tmp_path) == (build, "")
    assert prebuilt.load(build, tmp_path)(1, np.zeros(4), 1, True) == 14


@pytest.mark.parametrize(("changes", "named"), [
    ({"tag": "kernels-0000000000000000"}, kernel_tag()),
    ({"triple": "riscv64-unknown-linux-gnu"}, "riscv64-unknown-linux-gnu"),
    ({"features": ["sse2", "no-such-feature"]}, "no-such-feature"),
])
def test_a_prebuilt_kernel_that_does_not_fit_is_refused_with_the_reason(
        tmp_path, monkeypatch, changes, named):
    monkeypatch.delenv("FLEXMBS_PREBUILT", raising=False)
    _ship(tmp_path, **changes)
    build, reason = prebuilt.find(tmp_path)
    assert build is None
    assert named in reason


@pytest.mark.parametrize(("ship", "named"), [
    ({"sha256": "0" * 64}, "checksum mismatch"),
    ({"code": b"not compressed", "name": "kernel-test.o.z"}, "error: Error -3"),
    ({"code": b"not an object"}, "not a 64-bit little-endian ELF object"),
    ({"code": b"\x7fELF\x02\x01" + bytes(100)}, "not an x86-64 relocatable object"),
    ({"code": "truncated"}, "section headers lie outside it"),
    ({"code": "other entry"}, f"defines no entry point '{prebuilt.ENTRY}'"),
    ({"code": "foreign import"}, "imports flexmbs_no_such_function, beyond the C"),
    ({"code": "python import"}, "imports PyErr_Clear, beyond the C and maths libraries"),
])
def test_a_damaged_prebuilt_kernel_is_refused_naming_its_file(tmp_path, monkeypatch,
                                                              ship, named):
    """Damage is caught before LLVM's linker sees the object (which would crash the
    process on a malformed one): the checksum, the compression, the ELF structure, the
    entry point, and imports beyond the C and maths libraries (even ones this process
    has, as Python's C API)."""
    monkeypatch.delenv("FLEXMBS_PREBUILT", raising=False)
    calls = {"foreign import": "flexmbs_no_such_function", "python import": "PyErr_Clear"}
    if ship.get("code") == "truncated":
        ship = {"code": _object()[:600]}
    elif ship.get("code") == "other entry":
        ship = {"code": _object(entry="something_else")}
    elif ship.get("code") in calls:
        name = calls[ship["code"]]
        ship = {"code": _object(extra=f"declare void @{name}()\n"
                                      "define void @user() {\n"
                                      f"  call void @{name}()\n"
                                      "  ret void\n}")}
    build = _ship(tmp_path, **ship)
    with pytest.raises(RuntimeError, match=re.escape(f"'{build['file']}' could not be "
                                                     "loaded: ") + ".*" + re.escape(named)):
        prebuilt.load(build, tmp_path)


def _field(code: bytearray, what: str) -> tuple[int, str]:
    """(offset, struct format) of one field of the shipped object, for corrupting it."""
    import struct

    shoff, = struct.unpack_from("<Q", code, 0x28)
    shnum, = struct.unpack_from("<H", code, 0x3C)
    sections = [struct.unpack_from("<IIQQQQIIQQ", code, shoff + 64 * i)
                for i in range(shnum)]
    rela = next(i for i, s in enumerate(sections) if s[1] == 4 and s[5] > 0)
    symtab = next(i for i, s in enumerate(sections) if s[1] == 2)
    strtab = sections[symtab][6]
    unwind = next(i for i, s in enumerate(sections) if s[1] == 0x70000001)
    code_at = next(i for i, s in enumerate(sections) if s[1] == 1 and s[2] & 0x4 and s[5])
    symbols = [struct.unpack_from("<IBBHQQ", code, sections[symtab][4] + 24 * k)
               for k in range(sections[symtab][5] // 24)]
    at = sections[symtab][4]
    entry = at + 24 * (len(symbols) - 1)  # a global symbol
    absolute = next(k for k, s in enumerate(symbols) if s[3] == 0xFFF1)
    section_symbol = next(k for k, s in enumerate(symbols) if s[1] & 0xF == 3)
    imported = next(k for k, s in enumerate(symbols) if s[3] == 0 and s[0])

    def header(i, offset):  # a field of section header i
        return shoff + 64 * i + offset

    return {
        "relocation offset": (sections[rela][4], "<Q"),
        "relocation symbol": (sections[rela][4] + 12, "<I"),
        "relocation kind": (sections[rela][4] + 8, "<I"),
        "relocation target": (header(rela, 44), "<I"),
        "relocation against an absolute symbol": (sections[rela][4] + 12, "<I", absolute),
        "symbol section": (entry + 6, "<H"),
        "symbol value": (entry + 8, "<Q"),
        "import made common": (at + 24 * imported + 6, "<H"),
        "section symbol of no section": (at + 24 * section_symbol + 6, "<H"),
        "section names": (0x3E, "<H"),
        "section names in code": (0x3E, "<H", code_at),
        "string table kind": (header(strtab, 4), "<I"),
        "symbol names in code": (header(symtab, 40), "<I", code_at),
        "section kind": (header(rela, 4), "<I"),
        "section link": (header(rela, 40), "<I"),
        "section alignment": (header(code_at, 48), "<Q"),
        "unwind table flags": (header(unwind, 8), "<Q"),
        "code flags": (header(code_at, 8), "<Q"),
        "code zero-filled": (header(code_at, 4), "<I"),
        "zero-filled size": (header(rela, 4), "<I"),  # made NOBITS, see below
    }[what]


@pytest.mark.parametrize(("what", "value", "named"), [
    ("relocation offset", 1 << 40, "relocation lies outside"),
    ("relocation symbol", 1 << 20, "relocation lies outside"),
    ("relocation kind", 200, "relocation of unexpected kind 200"),
    ("relocation kind", 10, "relocation of unexpected kind 10"),  # R_X86_64_32
    ("relocation target", 1 << 10, "refers to no symbol table or section"),
    ("relocation against an absolute symbol", None, "against a symbol of no section"),
    ("symbol section", 9999, "symbol lies in no section"),
    ("symbol value", 1 << 40, "symbol lies outside its section"),
    ("import made common", 0xFFF2, "a common symbol"),
    ("section symbol of no section", 0, "a section symbol of no section"),
    ("section names", 9999, "section-name table is no string table"),
    ("section names in code", None, "section-name table is no string table"),
    ("string table kind", 1, "section-name table is no string table"),  # shared
    ("symbol names in code", None, "symbol table is not one of ELF64 symbols with names"),
    ("section kind", 18, "a section of unexpected kind 0x12"),  # SHT_SYMTAB_SHNDX
    ("section link", 9999, "links to no section"),
    ("section alignment", 3, "a section aligned to 3 bytes"),
    ("unwind table flags", 0, "an unwind table is not loaded with the code"),
    ("code flags", 0, f"defines no entry point '{prebuilt.ENTRY}'"),
    ("code zero-filled", 8, f"defines no entry point '{prebuilt.ENTRY}'"),
    ("zero-filled size", 8, "zero-filled section of"),
])
def test_a_malformed_object_is_refused_before_llvm_links_it(what, value, named):
    """Corruptions of the shipped object that make LLVM's linker abort or crash the
    process, or link an entry point that is no code (each found in a review of the
    loader, in a subprocess), are refused by the loader's checks
    (flexmbs.engine.elf), with the reason."""
    import struct

    builds = [b for b in prebuilt.read_manifest()["builds"] if b["tag"] == kernel_tag()]
    if not builds:
        pytest.skip("no prebuilt kernel of these sources")
    code = bytearray(_shipped(builds[0]))
    offset, fmt, *index = _field(code, what)
    struct.pack_into(fmt, code, offset, value if value is not None else index[0])
    if what == "zero-filled size":  # a NOBITS section of 1 TB
        struct.pack_into("<Q", code, offset - 4 + 32, 1 << 40)
    with pytest.raises(native.LoadError, match=re.escape(named)):
        native.link(bytes(code), prebuilt.ENTRY)


def test_the_build_refuses_code_that_imports_numba_or_python():
    prebuilt_build.check_imports(["atan2", "memset", "sincos"])
    for name in ("NRT_MemInfo_alloc", "numba_do_raise", "PyErr_SetString",
                 "_numba_hashsecret_siphash_k0", "malloc"):
        with pytest.raises(RuntimeError, match=name):
            prebuilt_build.check_imports(["atan2", name])


def test_a_build_of_another_entry_point_version_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("FLEXMBS_PREBUILT", raising=False)
    _ship(tmp_path, abi=native.ABI + 1)
    assert prebuilt.find(tmp_path) == (
        None, f"no prebuilt kernel of this loader's entry-point version ({native.ABI})")


def test_a_damaged_install_falls_back_to_numba_and_says_so(tmp_path, monkeypatch):
    """A shipped build that fits but fails to load: a RuntimeWarning once, the run on
    numba's kernels, and the reason in its statistics and summary."""
    from flexmbs.cases import load_case, run_case

    monkeypatch.delenv("FLEXMBS_PREBUILT", raising=False)
    _ship(tmp_path, sha256="0" * 64)
    monkeypatch.setattr(prebuilt, "PREBUILT_DIR", tmp_path)
    monkeypatch.setattr(prebuilt, "_loaded", None)
    monkeypatch.setattr(prebuilt, "_failed", None)
    case = load_case(TESTS.parent / "cases" / "seed_pendulum.toml")
    case.solver = case.solver.replace(t_end=0.01)
    with pytest.warns(RuntimeWarning, match="checksum mismatch; the kernels come from numba"):
        result = run_case(case, engine="compiled")[1]
    assert result.statistics["kernels"].startswith("compiled for this machine (the "
                                                   "prebuilt kernel failed: prebuilt kernel")
    assert "checksum mismatch" in result.statistics["kernels"]


def test_runs_in_threads_each_have_their_own_kernel_tables():
    """Each CompiledSystem calls the prebuilt kernel through tables of its own: runs of
    different models in threads (switching threads as often as Python allows) give the
    trajectories they give one after the other, bit for bit."""
    from concurrent.futures import ThreadPoolExecutor

    from test_compiled import random_chain

    from flexmbs.integrators import simulate

    if prebuilt.ensure_loaded()[0] is None:
        pytest.skip(f"no prebuilt kernel for this process: {prebuilt.ensure_loaded()[1]}")
    systems = [random_chain(seed) for seed in (1, 2, 5, 8)]

    def run(system):
        result = simulate(system, 0.2, 2e-3, engine="compiled")
        assert result.statistics["kernels"].startswith("prebuilt")
        return result.q

    alone = [run(system) for system in systems]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(4) as pool:
            together = list(pool.map(run, systems))
    finally:
        sys.setswitchinterval(interval)
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_kernel_caller_lets_go_of_the_output_histories():
    """The outputs' call binds the run's histories (q, q̇, λ at every output); the
    CompiledSystem's kernel lets go of them after it, so they live no longer than the
    result does."""
    from test_compiled import random_chain

    from flexmbs.engine.compiled_system import CompiledSystem

    if prebuilt.ensure_loaded()[0] is None:
        pytest.skip(f"no prebuilt kernel for this process: {prebuilt.ensure_loaded()[1]}")
    system = random_chain(3)
    compiled = CompiledSystem(system)
    n_t = 50
    compiled.outputs(np.linspace(0.0, 1.0, n_t), np.tile(system.q0, (n_t, 1)),
                     np.zeros((n_t, system.n_q)), np.zeros((n_t, system.n_c)))
    assert not [bound for bound in compiled._kernel._bound if isinstance(bound, np.ndarray)]


def test_loading_is_switched_off_by_the_environment(tmp_path, monkeypatch):
    _ship(tmp_path)
    for off in ("0", "false", "No", "OFF"):
        monkeypatch.setenv("FLEXMBS_PREBUILT", off)
        assert prebuilt.find(tmp_path) == (None, f"FLEXMBS_PREBUILT={off}")
        assert prebuilt.ensure_loaded() == (None, f"FLEXMBS_PREBUILT={off}")
        assert prebuilt.step_kernel() is None
    monkeypatch.delenv("FLEXMBS_PREBUILT")
    assert prebuilt.find(tmp_path)[0] is not None
    assert prebuilt.find(tmp_path / "nowhere")[0] is None  # no manifest: nothing shipped
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    assert prebuilt.find(tmp_path) == (None, "NUMBA_DISABLE_JIT is set")


def test_loading_the_prebuilt_kernel_counts_as_kernel_time(monkeypatch):
    """An automatic run links the prebuilt kernel before deciding whether it needs
    numba; that is part of ``compile_time`` (the run's one-time kernel cost, which the
    "loaded" real-time factor leaves out). A linking made 0.2 s slower shows there."""
    import time

    from flexmbs.cases import load_case, run_case

    monkeypatch.delenv("FLEXMBS_PREBUILT", raising=False)
    if prebuilt.find()[0] is None:
        pytest.skip(f"the shipped prebuilt kernel does not fit: {prebuilt.find()[1]}")
    real, calls = prebuilt.ensure_loaded, []

    def slow_loading():  # the first call only: the run's decision, before the engine
        if not calls:
            time.sleep(0.2)
        calls.append(1)
        return real()

    monkeypatch.setattr(prebuilt, "ensure_loaded", slow_loading)
    case = load_case(TESTS.parent / "cases" / "seed_pendulum.toml")
    case.solver = case.solver.replace(t_end=0.01)
    result = run_case(case, engine="auto")[1]
    assert calls, "the run did not try the prebuilt kernel"
    assert result.statistics["engine"] == "compiled"
    assert result.statistics["kernels"] == "prebuilt for x86-64"
    assert result.statistics["compile_time"] >= 0.2


def test_ensure_compiled_compiles_unless_the_prebuilt_kernel_loads(tmp_path, monkeypatch):
    """Scripts that time the compiled engine call warmup.ensure_compiled(): it returns at
    once only when the prebuilt kernel actually loads; a listed build that fails to load
    (damaged) leaves it to compile, as no build at all does."""
    from flexmbs.engine import warmup

    monkeypatch.setenv("FLEXMBS_KERNEL_STATE_DIR", str(tmp_path))  # nothing ready here
    compiled = []
    monkeypatch.setattr(warmup, "compile_kernels", lambda: compiled.append(1))
    monkeypatch.setattr(prebuilt, "ensure_loaded",
                        lambda: (None, "prebuilt kernel 'k.o.z': checksum mismatch"))
    warmup.ensure_compiled()
    assert compiled == [1]
    monkeypatch.setattr(prebuilt, "ensure_loaded", lambda: ({"cpu": "x86-64"}, ""))
    warmup.ensure_compiled()
    assert compiled == [1]


# ------------------------------------------------------------------ rebuilt from the sources
ROOT = TESTS.parent


def pinned_toolchain() -> dict[str, str]:
    """numba and llvmlite as the test extra pins them (pyproject.toml): the toolchain the
    shipped kernel is built with."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["test"]
    pins = dict(re.fullmatch(r"(numba|llvmlite)==(\S+)", spec).groups() for spec in extra
                if re.fullmatch(r"(numba|llvmlite)==(\S+)", spec))
    assert set(pins) == {"numba", "llvmlite"}, f"the test extra pins {pins}"
    return pins


def _shipped_build_here() -> dict:
    """The shipped build for this platform, failing if it is not that of the sources."""
    builds = [b for b in prebuilt.read_manifest()["builds"] if b["tag"] == kernel_tag()]
    assert builds, (f"the shipped prebuilt kernel is not that of the kernel sources "
                    f"({kernel_tag()}): run `python -m flexmbs.engine.prebuilt_build`")
    here = [b for b in builds if b["triple"] == process_triple()]
    if not here:
        pytest.skip(f"no shipped build for {process_triple()}")
    return here[0]


def test_the_shipped_kernel_was_built_with_the_pinned_toolchain():
    build = _shipped_build_here()
    pins = pinned_toolchain()
    made = {name: build["built_with"][name] for name in pins}
    assert made == pins, (f"the shipped prebuilt kernel was built with {made}, the test "
                          f"extra pins {pins}: move them together and run `python -m "
                          "flexmbs.engine.prebuilt`")


def _evaluations(compiled, kernel, states, angles) -> list[np.ndarray]:
    """Residual, Φ, iteration matrices and outputs of ``compiled`` at ``states``, with
    ``kernel`` as its step kernel (the springs' angle memory set to ``angles`` before
    each state)."""
    system = compiled.system
    compiled._kernel = kernel
    out = []
    for q, qd, qdd, lam, t, bp, gp in states:
        system._angles.clear()
        system._angles.update(angles)
        out.extend(compiled.residual(q, qd, qdd, lam, t))
        out.append(compiled.iteration_matrix(q, qd, qdd, lam, t, 1.0, 1.0))
        out.append(compiled.iteration_matrix(q, qd, qdd, lam, t, bp, gp))
        times = np.array([t, t + 0.5])
        out.append(compiled.outputs(times, np.array([q, q]), np.array([qd, -qd]),
                                    np.array([lam, lam])))
    return out


@pytest.mark.slow
def test_the_shipped_prebuilt_kernel_is_what_the_sources_build(tmp_path,
                                                              background_rebuild):
    """Rebuilt from the sources with the pinned toolchain into a temporary folder (the
    shipped one untouched; about 1.5 minutes, started in the background when the suite's
    collection ends, tests/conftest.py): the shipped object and the rebuilt one give
    bit-identical residuals, iteration matrices and outputs at random states of random
    models, and, the build being deterministic (two builds, and the shipped one, are the
    same bytes), the same object code when built with the shipped one's toolchain."""
    import llvmlite
    import numba
    from test_compiled import random_chain, random_model

    from flexmbs.engine.compiled_system import CompiledSystem

    build = _shipped_build_here()  # fails at once, before building, on stale sources
    pins = pinned_toolchain()
    installed = {"numba": numba.__version__, "llvmlite": llvmlite.__version__}
    if installed != pins:
        pytest.skip(f"rebuilding needs the pinned toolchain {pins}, installed: {installed} "
                    "(pip install -e '.[test]')")
    rebuilt, folder = background_rebuild or (prebuilt_build.build(tmp_path), tmp_path)
    assert {p.name for p in folder.iterdir()} == {rebuilt["file"], prebuilt.MANIFEST}
    assert rebuilt["tag"] == build["tag"] and rebuilt["file"] == build["file"]
    for key in ("parameters", "imports", "entry", "abi", "cpu", "features", "triple"):
        assert rebuilt[key] == build[key], key
    same_toolchain = all(rebuilt["built_with"].get(k) == build["built_with"].get(k)
                         for k in ("numba", "llvmlite", "python", "numpy"))
    if same_toolchain:
        assert prebuilt.object_code(rebuilt, folder) == _shipped(build), (
            "the rebuilt object code differs from the shipped one: run `python -m "
            "flexmbs.engine.prebuilt`")
        assert rebuilt["sha256"] == build["sha256"]
    shipped, fresh = prebuilt.load(build), prebuilt.load(rebuilt, folder)
    for seed, system in [*((s, random_model(s)) for s in (1, 4, 9)), (3, random_chain(3))]:
        rng = np.random.default_rng(seed)
        states = [(system.q0 + 0.3 * rng.standard_normal(system.n_q),
                   rng.standard_normal(system.n_q), rng.standard_normal(system.n_q),
                   rng.standard_normal(system.n_c), rng.uniform(0, 2),
                   10.0 ** rng.uniform(2, 7), 10.0 ** rng.uniform(1, 4)) for _ in range(3)]
        compiled = CompiledSystem(system)
        angles = dict(system._angles)
        for a, b in zip(_evaluations(compiled, shipped.twin(), states, angles),
                        _evaluations(compiled, fresh.twin(), states, angles), strict=True):
            message = (f"model {seed}: the shipped object and the one the sources build "
                       "differ: run `python -m flexmbs.engine.prebuilt_build`")
            if same_toolchain:
                np.testing.assert_array_equal(a, b, err_msg=message)
            else:  # another NumPy major: other code for some functions, same numbers
                np.testing.assert_allclose(a, b, rtol=0, err_msg=message,
                                           atol=1e-13 * max(1.0, float(np.max(np.abs(b)))))


# ------------------------------------------------------------------ importing
_IMPORT = """
import sys
import flexmbs
import flexmbs.compiled
from flexmbs.engine import compiled_system as engine
from flexmbs.engine import prebuilt, warmup
compiled = flexmbs.compiled
print(compiled.kernel_tag.cache_info().currsize, compiled._kernel_folders.cache_info().currsize,
      "numba" in sys.modules)
"""


def _folders(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*") if p.is_dir()}


def test_importing_flexmbs_reads_no_kernel_source_and_creates_no_folder(tmp_path):
    """docs/compiled.md: the kernels' source hash and their folders are worked out when
    a run first needs kernels. A fresh process importing flexmbs, its compiled engine,
    the loader and the background compilation, with HOME in an empty folder: the hash
    was not computed, no kernel folder was worked out, numba was not imported, and no
    folder appeared in HOME or in the package."""
    home = tmp_path / "home"
    home.mkdir()
    package = ROOT / "flexmbs"
    before = _folders(package)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("NUMBA_", "FLEXMBS_"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
               PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _IMPORT], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["0", "0", "False"], done.stdout
    assert not list(home.iterdir())
    assert _folders(package) == before


def test_the_kernel_sources_are_listed_once_and_include_the_elements():
    """The hash covers the kernel modules of compiled/, every module under elements/
    (the element kinds' kernels and tables) and the engine's dispatch and Newton
    iteration, and nothing the kernels are not compiled from."""
    from flexmbs import compiled

    names = {p.relative_to(ROOT / "flexmbs").as_posix() for p in compiled.kernel_sources()}
    assert {"engine/newton.py", "engine/dispatch.py", "compiled/layout.py",
            "compiled/workspace.py",
            "elements/__init__.py", "elements/registry.py"} <= names
    assert not {"engine/compiled_system.py", "engine/prebuilt.py"} & names
    assert {f"elements/{p.relative_to(ROOT / 'flexmbs' / 'elements').as_posix()}"
            for p in (ROOT / "flexmbs" / "elements").rglob("*.py")} <= names
    assert not {f"compiled/{name}" for name in compiled.NOT_KERNEL_SOURCES} & names
    assert compiled.kernel_tag() == compiled.KERNEL_TAG  # the former constant, lazily


# ------------------------------------------------------------------ the wheel
def _setup_module():
    """setup.py's functions (its setup() call runs only as the build's script)."""
    return load_script(ROOT / "setup.py", "flexmbs_setup")


def _build_wheel(tmp_path: Path, triple: str | None = None) -> tuple[str, set[str], dict]:
    """A wheel of a copy of the sources (the shipped builds' triple replaced by
    ``triple``, if given): (its tag, its prebuilt files, its manifest or {})."""
    import shutil
    import zipfile

    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "flexmbs", source / "flexmbs",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if triple is not None:
        manifest = source / "flexmbs" / "engine" / "prebuilt" / prebuilt.MANIFEST
        data = json.loads(manifest.read_text())
        for build in data["builds"]:
            build["triple"] = triple
        manifest.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                           "-q", "-w", str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (wheel,) = (tmp_path / "out").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/WHEEL"))
        fields = dict(line.split(": ", 1) for line in
                      archive.read(info).decode().splitlines() if ": " in line)
        files = {n for n in names if n.startswith("flexmbs/engine/prebuilt/")}
        listed = f"flexmbs/engine/prebuilt/{prebuilt.MANIFEST}"
        manifest = json.loads(archive.read(listed)) if listed in names else {}
    assert wheel.name.endswith(f"-{fields['Tag']}.whl")
    assert fields["Root-Is-Purelib"] == ("false" if files else "true")
    return fields["Tag"], files, manifest


def test_the_wheel_is_tagged_for_the_platform_of_the_kernel_it_carries(tmp_path):
    """docs/compiled.md, "Which wheel": built where a shipped build runs, the wheel carries
    it and is tagged py3-none-<that platform>, never py3-none-any."""
    setup = _setup_module()
    triple = setup.host_triple()
    shipped = [b for b in prebuilt.read_manifest()["builds"] if b["triple"] == triple]
    if triple is None or not shipped:
        pytest.skip("no shipped prebuilt kernel for the platform this test runs on")
    tag, files, manifest = _build_wheel(tmp_path)
    assert tag == f"py3-none-{setup.WHEEL_PLATFORMS[triple]}"
    prefix = "flexmbs/engine/prebuilt/"
    assert files == {prefix + prebuilt.MANIFEST, *(prefix + b["file"] for b in shipped)}
    assert manifest["builds"] == shipped


def test_a_wheel_built_where_no_shipped_kernel_runs_is_pure_and_carries_none(tmp_path):
    """Built on a platform no shipped build runs on (here: the builds relabelled for
    riscv64), the wheel is py3-none-any and carries no prebuilt kernel."""
    if _setup_module().host_triple() == "riscv64-unknown-linux-gnu":
        pytest.skip("this host is riscv64")
    tag, files, manifest = _build_wheel(tmp_path, triple="riscv64-unknown-linux-gnu")
    assert tag == "py3-none-any"
    assert files == set()
    assert manifest == {}


def test_every_shipped_build_has_a_wheel_platform():
    """A build of a new platform needs its wheel tag in setup.py's WHEEL_PLATFORMS."""
    setup = _setup_module()
    for build in prebuilt.read_manifest()["builds"]:
        assert build["triple"] in setup.WHEEL_PLATFORMS, build["triple"]
    assert setup.carried_builds({"builds": [{"triple": "x"}]}, None) == []
