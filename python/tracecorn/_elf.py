# SPDX-License-Identifier: GPL-2.0-or-later
"""tracecorn.symbols: an ELF file's function symbols, for scripts that name
code (coverage of a function...). Reads .symtab and .dynsym of ELF32/64,
either byte order."""

import struct

from ._lib import Error


def symbols(path):
    """{name: (address, size)} of the FUNC symbols defined in an ELF file
    (addresses as linked: add a PIE's load base, Trace.load_base)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise Error(f"{path}: not an ELF file")
    is64, e = data[4] == 2, "<" if data[5] == 1 else ">"
    try:
        if is64:
            shoff, = struct.unpack_from(e + "Q", data, 0x28)
            shentsize, shnum = struct.unpack_from(e + "HH", data, 0x3A)
            sh = struct.Struct(e + "IIQQQQIIQQ")
            sym, symfmt = 24, struct.Struct(e + "IBBHQQ")
        else:
            shoff, = struct.unpack_from(e + "I", data, 0x20)
            shentsize, shnum = struct.unpack_from(e + "HH", data, 0x2E)
            sh = struct.Struct(e + "IIIIIIIIII")
            sym, symfmt = 16, struct.Struct(e + "IIIBBH")
        secs = [sh.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
        out = {}
        for s in secs:
            if s[1] not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
                continue
            off, size, link = s[4], s[5], s[6]
            stroff = secs[link][4]
            for k in range(size // sym):
                v = symfmt.unpack_from(data, off + k * sym)
                if is64:
                    name, info, _, shndx, value, sz = v
                else:
                    name, value, sz, info, _, shndx = v
                if info & 0xF != 2 or shndx == 0:  # STT_FUNC, defined
                    continue
                end = data.index(b"\0", stroff + name)
                out.setdefault(data[stroff + name:end].decode("utf-8", "replace"), (value, sz))
        return out
    except (struct.error, IndexError, ValueError):
        raise Error(f"{path}: a damaged ELF file") from None
