"""Checking a relocatable ELF object before it is linked (docs/compiled.md, "The
prebuilt kernel").

A linker trusts the object it is given (LLVM's run-time linker, and
:mod:`flexmbs.engine.object_loader`): a relocation, symbol or section that points
outside the object, or a table of the wrong kind, makes it write outside its memory,
abort or crash the process. The prebuilt kernel is checked against its manifest's checksum first;
:func:`parse_object` then holds the object to the shape of the code the build emits
(sections of the kinds it makes, with their places, flags and alignment; symbols in
their sections; relocations of the two kinds large-model x86-64 code uses, at places
within their sections and against defined or imported symbols), so that damage that
got past the checksum is refused rather than linked, and lists what the object
imports and which functions it defines; the loader links from the tables it read
(:class:`CheckedObject`) rather than reading them again.
"""

from __future__ import annotations

import struct
from typing import NamedTuple


class ObjectError(ValueError):
    """The object is not one the loader can link (the message says why)."""


class CheckedObject(NamedTuple):
    """A relocatable object after :func:`parse_object`'s checks: its section headers
    (the ELF64 fields, in order), its symbols (name, section index, value), the
    symbols it imports and the global functions it defines in code sections (sorted)."""

    sections: list
    symbols: list
    imports: list
    defined: list


#: x86-64 relocation kinds accepted, with the bytes each writes: R_X86_64_64 and
#: R_X86_64_PC64, the two kinds of the large code model the build emits (32-bit kinds
#: make LLVM's linker assert when a value does not fit).
X86_64_RELOCATIONS = {1: 8, 24: 8}

#: Section kinds accepted: none, program data, symbol table, string table, relocations
#: with addends, note, zero-filled, and x86-64 unwind tables.
SECTION_KINDS = {0, 1, 2, 3, 4, 7, 8, 0x70000001}

#: Largest zero-filled (SHT_NOBITS) section and largest alignment accepted [bytes].
MAX_ZERO_FILLED = 1 << 24
MAX_ALIGNMENT = 1 << 16

_SHT_SYMTAB, _SHT_STRTAB, _SHT_RELA, _SHT_NOBITS = 2, 3, 4, 8
_SHT_X86_64_UNWIND = 0x70000001
_SHF_ALLOC, _SHF_EXECINSTR = 0x2, 0x4
_SHN_ABS, _SHN_COMMON = 0xFFF1, 0xFFF2
_STT_FUNC, _STT_SECTION = 2, 3


def read_object(code: bytes) -> tuple[list[str], list[str]]:
    """(the symbols it imports, the global functions it defines in code sections),
    sorted, of the ELF64 little-endian x86-64 relocatable object ``code``, after
    checking its structure. Raises ObjectError saying what is wrong."""
    checked = parse_object(code)
    return checked.imports, checked.defined


def parse_object(code: bytes) -> CheckedObject:
    """The tables of the ELF64 little-endian x86-64 relocatable object ``code``, after
    checking its structure (what :mod:`flexmbs.engine.object_loader` links from).
    Raises ObjectError saying what is wrong."""
    try:
        return _read(code)
    except (struct.error, ValueError, UnicodeDecodeError, IndexError) as exc:
        if isinstance(exc, ObjectError):
            raise
        raise ObjectError(f"it is not a well-formed object ({exc})") from exc


def _read(code: bytes) -> CheckedObject:
    if code[:4] != b"\x7fELF" or code[4:6] != b"\x02\x01":
        raise ObjectError("it is not a 64-bit little-endian ELF object")
    e_type, e_machine = struct.unpack_from("<HH", code, 0x10)
    if (e_type, e_machine) != (1, 62):  # ET_REL, EM_X86_64
        raise ObjectError(f"it is not an x86-64 relocatable object (type {e_type}, "
                          f"machine {e_machine})")
    shoff, = struct.unpack_from("<Q", code, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", code, 0x3A)
    if shentsize != 64 or shnum == 0 or shoff + shnum * 64 > len(code):
        raise ObjectError("its section headers lie outside it")
    sections = [struct.unpack_from("<IIQQQQIIQQ", code, shoff + i * 64)
                for i in range(shnum)]
    kinds = [s[1] for s in sections]
    sizes = [s[5] for s in sections]
    if shstrndx >= shnum or kinds[shstrndx] != _SHT_STRTAB:
        raise ObjectError("its section-name table is no string table")
    for _, kind, flags, _, offset, size, link, _, align, _ in sections:
        if kind not in SECTION_KINDS:
            raise ObjectError(f"a section of unexpected kind {kind:#x}")
        if kind == _SHT_NOBITS:
            if size > MAX_ZERO_FILLED:
                raise ObjectError(f"a zero-filled section of {size} bytes")
        elif offset + size > len(code):
            raise ObjectError("a section lies outside it")
        if link >= shnum:
            raise ObjectError("a section links to no section")
        if align > MAX_ALIGNMENT or align & (align - 1):
            raise ObjectError(f"a section aligned to {align} bytes")
        if kind == _SHT_X86_64_UNWIND and not flags & _SHF_ALLOC:
            raise ObjectError("an unwind table is not loaded with the code")
    tables = [i for i, kind in enumerate(kinds) if kind == _SHT_SYMTAB]
    if len(tables) != 1:
        raise ObjectError(f"it has {len(tables)} symbol tables, not one")
    symtab = tables[0]
    _, _, _, _, offset, size, link, _, _, entsize = sections[symtab]
    if entsize != 24 or kinds[link] != _SHT_STRTAB:
        raise ObjectError("its symbol table is not one of ELF64 symbols with names")
    strings_at, strings_size = sections[link][4], sections[link][5]
    n_symbols = size // 24
    imports, defined, symbols = set(), set(), []
    relocatable = [False] * n_symbols  # a relocation may refer to the symbol
    for k in range(n_symbols):
        st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from(
            "<IBBHQQ", code, offset + 24 * k)
        kind = st_info & 0xF
        if st_name >= max(strings_size, 1):
            raise ObjectError("a symbol's name lies outside its string table")
        if st_shndx == _SHN_COMMON:
            raise ObjectError("a common symbol (the build makes none)")
        in_section = 0 < st_shndx < shnum
        if st_shndx not in (0, _SHN_ABS) and not in_section:
            raise ObjectError("a symbol lies in no section")
        if in_section and st_value + st_size > sizes[st_shndx]:
            raise ObjectError("a symbol lies outside its section")
        if kind == _STT_SECTION and not in_section:
            raise ObjectError("a section symbol of no section")
        name = ""
        if st_name:
            end = code.index(b"\0", strings_at + st_name, strings_at + strings_size)
            name = code[strings_at + st_name:end].decode()
        symbols.append((name, st_shndx, st_value))
        if st_shndx == 0 and name:
            imports.add(name)
            relocatable[k] = kind != _STT_SECTION
        elif in_section:
            relocatable[k] = True
            section = sections[st_shndx]
            code_section = (section[1] == 1 and section[2] & _SHF_ALLOC
                            and section[2] & _SHF_EXECINSTR)
            if st_info >> 4 == 1 and kind == _STT_FUNC and code_section:  # STB_GLOBAL
                defined.add(name)
    for _, kind, _, _, offset, size, link, info, _, entsize in sections:
        if kind != _SHT_RELA:
            continue
        if link != symtab or entsize != 24 or not 0 < info < shnum:
            raise ObjectError("a relocation section refers to no symbol table or section")
        target = sizes[info]
        for r_offset, r_info, _ in struct.iter_unpack("<QQq", code[offset:offset + size]):
            kind_, symbol = r_info & 0xFFFFFFFF, r_info >> 32
            width = X86_64_RELOCATIONS.get(kind_)
            if width is None:
                raise ObjectError(f"a relocation of unexpected kind {kind_}")
            if symbol >= n_symbols or r_offset + width > target:
                raise ObjectError("a relocation lies outside its section or symbols")
            if not relocatable[symbol]:
                raise ObjectError("a relocation against a symbol of no section or name")
    return CheckedObject(sections, symbols, sorted(imports), sorted(defined))
