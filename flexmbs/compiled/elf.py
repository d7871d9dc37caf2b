"""Checking a relocatable ELF object before LLVM's linker sees it (docs/compiled.md,
"The prebuilt kernel").

LLVM's run-time linker trusts the object it is given: a relocation, symbol or section
that points outside the object makes it abort or crash the process. The prebuilt
kernel is checked against its manifest's checksum first; :func:`read_object` then
checks every structure the linker follows (the header, the sections, the symbols, the
relocations and their kinds), so that an object that gets past it at least lies
within itself, and lists what it imports and defines.
"""

from __future__ import annotations

import struct


class ObjectError(ValueError):
    """The object is not one the loader can hand to LLVM (the message says why)."""


#: x86-64 relocation kinds LLVM's run-time linker applies, with the bytes each writes:
#: R_X86_64_64, _PC32, _PLT32, _GOTPCREL, _32, _32S, _PC64, _GOTPCRELX, _REX_GOTPCRELX.
X86_64_RELOCATIONS = {1: 8, 2: 4, 4: 4, 9: 4, 10: 4, 11: 4, 24: 8, 41: 4, 42: 4}

#: Largest zero-filled (SHT_NOBITS) section accepted [bytes]: the kernel has none.
MAX_ZERO_FILLED = 1 << 24

_SHT_SYMTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL = 2, 4, 8, 9
_SHN_ABS, _SHN_COMMON = 0xFFF1, 0xFFF2


def read_object(code: bytes) -> tuple[list[str], list[str]]:
    """(the symbols it imports, the global symbols it defines), sorted, of the ELF64
    little-endian x86-64 relocatable object ``code``, after checking its structure.
    Raises ObjectError saying what is wrong."""
    try:
        return _read(code)
    except (struct.error, ValueError, UnicodeDecodeError, IndexError) as exc:
        if isinstance(exc, ObjectError):
            raise
        raise ObjectError(f"it is not a well-formed object ({exc})") from exc


def _read(code: bytes) -> tuple[list[str], list[str]]:
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
    if shstrndx >= shnum:
        raise ObjectError("its section-name table is no section")
    sections = [struct.unpack_from("<IIQQQQIIQQ", code, shoff + i * 64)
                for i in range(shnum)]
    sizes = [s[5] for s in sections]
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind == _SHT_NOBITS:
            if size > MAX_ZERO_FILLED:
                raise ObjectError(f"a zero-filled section of {size} bytes")
        elif offset + size > len(code):
            raise ObjectError("a section lies outside it")
        if link >= shnum:
            raise ObjectError("a section links to no section")
        if kind == _SHT_REL:
            raise ObjectError("it has relocations without addends (not x86-64's kind)")
    tables = [i for i, s in enumerate(sections) if s[1] == _SHT_SYMTAB]
    if len(tables) != 1:
        raise ObjectError(f"it has {len(tables)} symbol tables, not one")
    symtab = tables[0]
    _, _, _, _, offset, size, link, _, _, entsize = sections[symtab]
    if entsize != 24:
        raise ObjectError("its symbol table's entries are not ELF64 symbols")
    strings_at, strings_size = sections[link][4], sections[link][5]
    n_symbols = size // 24
    imports, defined = set(), set()
    for k in range(n_symbols):
        st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from(
            "<IBBHQQ", code, offset + 24 * k)
        if st_name >= max(strings_size, 1):
            raise ObjectError("a symbol's name lies outside its string table")
        if st_shndx not in (0, _SHN_ABS, _SHN_COMMON):
            if st_shndx >= shnum:
                raise ObjectError("a symbol lies in no section")
            if st_value + st_size > sizes[st_shndx]:
                raise ObjectError("a symbol lies outside its section")
        if not st_name:
            continue
        end = code.index(b"\0", strings_at + st_name, strings_at + strings_size)
        name = code[strings_at + st_name:end].decode()
        if st_shndx == 0:
            imports.add(name)
        elif st_info >> 4 == 1:  # STB_GLOBAL
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
                raise ObjectError(f"a relocation of unknown kind {kind_}")
            if symbol >= n_symbols or r_offset + width > target:
                raise ObjectError("a relocation lies outside its section or symbols")
    return sorted(imports), sorted(defined)
