"""What this process runs on, in the names a prebuilt kernel's manifest uses: LLVM's
target triple and the CPU's instruction-set features (docs/compiled.md, "The prebuilt
kernel").

On Linux with the GNU C library on x86-64, where the shipped builds run, both come
from the platform and ``/proc/cpuinfo``, without importing llvmlite (30–40 ms, more
than linking the kernel). Elsewhere, or for a feature this module cannot name, llvmlite
answers (it comes with numba, which such a process needs anyway)."""

from __future__ import annotations

import functools
import platform
import sys

#: LLVM's names of x86 instruction-set features and the flags Linux's /proc/cpuinfo
#: shows for them (a test holds them to llvmlite's answer on the machine at hand).
CPUINFO_FLAGS = {
    "64bit": "lm", "cmov": "cmov", "cx8": "cx8", "fxsr": "fxsr", "mmx": "mmx",
    "sse": "sse", "sse2": "sse2", "sse3": "pni", "ssse3": "ssse3", "sse4.1": "sse4_1",
    "sse4.2": "sse4_2", "popcnt": "popcnt", "cx16": "cx16", "avx": "avx", "avx2": "avx2",
    "fma": "fma", "bmi": "bmi1", "bmi2": "bmi2", "f16c": "f16c", "movbe": "movbe",
}


def _gnu_linux_x86_64() -> bool:
    return (sys.platform.startswith("linux") and platform.machine() == "x86_64"
            and platform.libc_ver()[0] == "glibc")


@functools.cache
def process_triple() -> str:
    """LLVM's triple of this process (what a build's code is linked for)."""
    if _gnu_linux_x86_64():
        return "x86_64-unknown-linux-gnu"
    import llvmlite.binding as ll

    return ll.get_process_triple()


@functools.cache
def _cpuinfo_flags() -> frozenset[str] | None:
    """The flags of the first processor in /proc/cpuinfo, or None if unreadable."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        return None
    return None


def missing_features(features) -> list[str]:
    """The instruction-set features of ``features`` (LLVM's names) this CPU lacks,
    sorted."""
    wanted = set(features)
    if _gnu_linux_x86_64() and wanted <= set(CPUINFO_FLAGS):
        flags = _cpuinfo_flags()
        if flags is not None:
            return sorted(f for f in wanted if CPUINFO_FLAGS[f] not in flags)
    import llvmlite.binding as ll

    host = {name for name, on in ll.get_host_cpu_features().items() if on}
    return sorted(wanted - host)
