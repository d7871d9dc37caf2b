"""Linking the prebuilt kernel's object code into this process without LLVM
(docs/compiled.md, "The prebuilt kernel").

The build emits a relocatable ELF object of large-model x86-64 code whose relocations
are of two kinds only, R_X86_64_64 (S + A) and R_X86_64_PC64 (S + A − P), against its
own sections and symbols or functions of the C and maths libraries;
:func:`flexmbs.engine.elf.parse_object` holds an object to that shape before it comes
here. Linking such an object is a copy and one addition per relocation: the sections
the code needs at run time (SHF_ALLOC) are laid out in one anonymous mapping — code and
read-only data in pages then made read-and-execute, writable data in pages of their
own after them — every relocation is written, and the entry point's address is
returned. That takes about a millisecond, where importing llvmlite for LLVM's linker
took 30–40.
"""

from __future__ import annotations

import ctypes
import mmap
import os

import numpy as np

_SHF_WRITE, _SHF_ALLOC = 0x1, 0x2
_SHT_RELA, _SHT_NOBITS = 4, 8
_SHN_ABS = 0xFFF1
_R_X86_64_64, _R_X86_64_PC64 = 1, 24


class LinkError(RuntimeError):
    """The object could not be mapped or linked (the message says why)."""


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long)
    libc.mprotect.restype = ctypes.c_int
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    libc.munmap.restype = ctypes.c_int
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    return libc


class LinkedCode:
    """The mapping that holds linked code: ``address`` and ``size`` [bytes]; unmapped
    when the last reference goes (keep it while the code may run)."""

    def __init__(self, size: int):
        self._libc = _libc()
        address = self._libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE,
                                  mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if address is None or address == ctypes.c_void_p(-1).value:
            raise LinkError(f"no memory could be mapped for it "
                            f"({_os_error(ctypes.get_errno())})")
        self.address, self.size = address, size

    def protect_code(self, size: int) -> None:
        """Make the first ``size`` bytes (whole pages) read-and-execute."""
        if size and self._libc.mprotect(self.address, size,
                                        mmap.PROT_READ | mmap.PROT_EXEC) != 0:
            raise LinkError(f"its code could not be made executable "
                            f"({_os_error(ctypes.get_errno())})")

    def __del__(self):
        if getattr(self, "address", None):
            self._libc.munmap(self.address, self.size)
            self.address = None


def _os_error(errno: int) -> str:
    return os.strerror(errno) if errno else "no reason given"


def link_object(code: bytes, checked, symbol: str, resolve) -> tuple[LinkedCode, int]:
    """(the mapping, the address of ``symbol``) of the object ``code`` linked into this
    process, from its tables as :func:`flexmbs.engine.elf.parse_object` checked them
    (``checked``); ``resolve(name)`` gives the address of each imported function.
    Raises LinkError saying what failed."""
    sections = checked.sections
    page = mmap.PAGESIZE
    placed: list = [None] * len(sections)  # (part, offset in it): 0 code, 1 writable
    ends = [0, 0]
    for i, (_, _, flags, _, _, size, _, _, align, _) in enumerate(sections):
        if not flags & _SHF_ALLOC:
            continue
        part = 1 if flags & _SHF_WRITE else 0
        step = max(int(align), 1)
        at = -(-ends[part] // step) * step
        placed[i] = (part, at)
        ends[part] = at + size
    code_pages = -(-ends[0] // page) * page
    total = code_pages + -(-ends[1] // page) * page
    if total == 0:
        raise LinkError("it has no code to load")
    mapping = LinkedCode(total)  # zero-filled, written in place
    base = mapping.address
    image = np.frombuffer((ctypes.c_uint8 * total).from_address(base), dtype=np.uint8)
    source = np.frombuffer(code, dtype=np.uint8)
    where: list = [None] * len(sections)  # offset of each loaded section in the mapping
    for i, spot in enumerate(placed):
        if spot is None:
            continue
        part, at = spot
        where[i] = at + (code_pages if part else 0)
        _, kind, _, _, offset, size, _, _, _, _ = sections[i]
        if kind != _SHT_NOBITS:
            image[where[i]:where[i] + size] = source[offset:offset + size]
    values, entry = _symbol_values(checked.symbols, where, base, symbol, resolve)
    if entry is None:
        raise LinkError(f"it defines no entry point {symbol!r}")
    loaded = np.array([0 if v is None else v for v in values], dtype=np.uint64)
    missing = np.array([v is None for v in values], dtype=bool)
    for _, kind, _, _, offset, size, _, target, _, _ in sections:
        if kind != _SHT_RELA or where[target] is None:
            continue  # relocations of what is not loaded (none in a build)
        _relocate(image, code[offset:offset + size], where[target], base, loaded, missing)
    mapping.protect_code(code_pages)
    return mapping, entry


#: One relocation with addend (ELF64 Rela): offset, info (symbol << 32 | kind), addend.
_RELA = np.dtype([("offset", "<u8"), ("info", "<u8"), ("addend", "<i8")])


def _relocate(image, table: bytes, start: int, base: int, values, missing):
    """Write the relocations ``table`` (Rela entries) into the section at ``start`` of
    ``image`` (the bytes of the mapping at ``base``): S + A, or S + A − P for the
    PC-relative kind, modulo 2⁶⁴, all at once (``values``: each symbol's address;
    ``missing``: those of symbols not loaded, which no relocation may use)."""
    rela = np.frombuffer(table, dtype=_RELA)
    symbols = (rela["info"] >> np.uint64(32)).astype(np.intp)
    if missing[symbols].any():
        raise LinkError("a relocation refers to a symbol that is not loaded")
    with np.errstate(over="ignore"):  # the arithmetic is modulo 2**64, as the CPU's
        value = values[symbols] + rela["addend"].view(np.uint64)
        pc = (rela["info"] & np.uint64(0xFFFFFFFF)) == np.uint64(_R_X86_64_PC64)
        value[pc] -= np.uint64(base + start) + rela["offset"][pc]
    at = start + rela["offset"].astype(np.intp)
    image[at[:, None] + np.arange(8)] = value.astype("<u8").view(np.uint8).reshape(-1, 8)


def _symbol_values(symbols, where, base, symbol, resolve):
    """(the address of every symbol (None: in a section not loaded), the address of
    ``symbol`` or None); ``symbols``: (name, section index, value) of each."""
    values, entry = [], None
    for name, shndx, value in symbols:
        if shndx == 0:
            values.append(resolve(name) if name else 0)
            continue
        if shndx == _SHN_ABS:
            values.append(value)
        else:
            values.append(None if where[shndx] is None else base + where[shndx] + value)
        if name == symbol and values[-1] is not None:
            entry = values[-1]
    return values, entry
