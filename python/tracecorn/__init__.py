# SPDX-License-Identifier: GPL-2.0-or-later
"""tracecorn for Python: read, record and convert traces of Linux programs
run under Unicorn, through libtracecorn (ctypes; docs/python.md).

    import tracecorn
    with tracecorn.open("prog.tct") as t:
        for ev in t:
            if ev.kind == "insn" and ev.writes:
                print(ev.index, hex(ev.pc), ev.writes)
"""

import array
import ctypes
import os
import struct
import sys

from . import _lib
from ._elf import symbols
from ._lib import Error, ReadError, RecordError, load

__all__ = [
    "Error", "ReadError", "RecordError", "load", "version", "open", "Trace",
    "Arch", "arch", "Format", "formats", "record", "Recording", "convert",
    "verify", "info", "COLUMNS", "symbols", "MEM_READ", "MEM_WRITE",
    "MEM_KERNEL",
]


def _L():
    return _lib.lib if _lib.lib is not None else _lib.load()


def _s(b):
    return None if b is None else b.decode("utf-8", "surrogateescape")


def _b(s):
    return s if isinstance(s, bytes) else os.fsencode(s)


def _cs(x):
    """A char[N] field (ctypes gives bytes, or an array of them) as str."""
    return _s(x if isinstance(x, bytes) else x.value)


def version():
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _s(_L().tc_version())


# ------------------------------------------------------------------ arches

class Arch:
    """An arch's register table: ``registers`` (names, in index order),
    ``sizes``, ``pc``/``sp`` (names), ``ptr_size``, ``big_endian``."""

    _by_ptr = {}

    def __init__(self, ptr):
        L = _L()
        self._ptr = ptr
        self.name = _s(L.tc_arch_name(ptr))
        n = L.tc_arch_reg_count(ptr)
        self.registers = tuple(_s(L.tc_arch_reg_name(ptr, i)) for i in range(n))
        self.sizes = tuple(L.tc_arch_reg_size(ptr, i) for i in range(n))
        self.offsets = tuple(L.tc_arch_reg_offset(ptr, i) for i in range(n))
        self.flags = tuple(L.tc_arch_reg_flags(ptr, i) for i in range(n))
        self.state_size = L.tc_arch_state_size(ptr)
        self.pc = self.registers[L.tc_arch_pc_reg(ptr)]
        self.sp = self.registers[L.tc_arch_sp_reg(ptr)]
        self.ptr_size = L.tc_arch_ptr_size(ptr)
        self.big_endian = bool(L.tc_arch_big_endian(ptr))
        self.index = {r: i for i, r in enumerate(self.registers)}
        # a state image's registers of up to 8 bytes, in one unpack
        narrow = [i for i in range(n) if self.sizes[i] <= 8]
        self._narrow = [(self.registers[i], self.offsets[i], self.sizes[i]) for i in narrow]
        self._wide = [(self.registers[i], self.offsets[i], self.sizes[i])
                      for i in range(n) if self.sizes[i] > 8]

    @classmethod
    def _of(cls, ptr):
        a = cls._by_ptr.get(ptr)
        if a is None:
            a = cls._by_ptr[ptr] = cls(ptr)
        return a

    def regs(self, state):
        """Every register of a state image (bytes) as a dict name -> int."""
        fb = int.from_bytes
        out = {}
        for name, off, size in self._narrow:
            out[name] = fb(state[off:off + size], "little")
        for name, off, size in self._wide:
            out[name] = fb(state[off:off + size], "little")
        return out

    def syscall_name(self, nr):
        return _s(_L().tc_arch_syscall_name(self._ptr, nr))

    def disasm(self, pc, code):
        """One instruction's text ("mov rax, qword ptr [rbp - 8]")."""
        return self.decode(pc, code)[1]

    def decode(self, pc, code):
        """(length, text) of the instruction at the start of ``code``
        (length 0, "(bad)": none). On arm an odd pc means Thumb."""
        out = ctypes.create_string_buffer(160)
        n = _L().tc_disasm(self._ptr, pc, bytes(code), len(code), out, 160)
        return n, _s(out.value)

    def __repr__(self):
        return f"<tracecorn.Arch {self.name}>"


def arch(name):
    """The arch called ``name`` ("x86_64", "arm64", "i386"...)."""
    p = _L().tc_arch_by_name(name.encode())
    if not p:
        raise Error(f"unknown arch {name!r}")
    return Arch._of(p)


# ----------------------------------------------------------------- formats

class Format:
    def __init__(self, ptr):
        L = _L()
        self._ptr = ptr
        self.name = _s(L.tc_format_name(ptr))
        self.description = _s(L.tc_format_description(ptr))
        self.caps = L.tc_format_caps(ptr)
        self.can_read = bool(L.tc_format_can_read(ptr))
        self.can_write = bool(L.tc_format_can_write(ptr))

    def extension(self, arch=None):
        """Its writer's file extension for an arch (".tct", ".trace64")."""
        a = arch._ptr if isinstance(arch, Arch) else (_arch_ptr(arch) if arch else None)
        return _s(_L().tc_format_extension(self._ptr, a))

    def __repr__(self):
        return f"<tracecorn.Format {self.name}>"


def _arch_ptr(name):
    return arch(name)._ptr


def formats():
    """Every format the library knows."""
    L = _L()
    out, fl = [], L.tc_formats()
    i = 0
    while fl[i]:
        out.append(Format(fl[i]))
        i += 1
    return out


def _format(name, what="format"):
    if name is None:
        return None
    if isinstance(name, Format):
        return name._ptr
    p = _L().tc_format_by_name(name.encode())
    if not p:
        raise Error(f"unknown {what} {name!r} (see tracecorn.formats())")
    return p


# ------------------------------------------------------------------ events

_EXIT_REASONS = {1: "exited", 2: "killed", 3: "max-insns", 4: "interrupted", 5: "error"}
_FAULT_KINDS = {1: "unmapped_read", 2: "unmapped_write", 3: "unmapped_fetch",
                4: "prot_read", 5: "prot_write", 6: "prot_fetch",
                7: "invalid_insn", 8: "divide", 9: "other"}
MEM_READ, MEM_WRITE, MEM_KERNEL = 1, 2, 4
TID_BLOCK = 0xFFFFFFFF


class Access(tuple):
    """One memory access: (kind "r"/"w", addr, data, old). ``data``: the
    bytes read, or written; ``old``: the bytes before a write (None for a
    read)."""
    __slots__ = ()
    kind = property(lambda s: s[0])
    addr = property(lambda s: s[1])
    data = property(lambda s: s[2])
    old = property(lambda s: s[3])
    size = property(lambda s: len(s[2]))

    def __repr__(self):
        return f"Access({self[0]!r}, {self[1]:#x}, {self[2].hex()})"


def _mem(raw, off, n):
    """n packed accesses from raw[off:] -> (list of Access, end offset)."""
    out = []
    unpack = _MEMHDR.unpack_from
    for _ in range(n):
        addr, size, kind = unpack(raw, off)
        off += 13
        before = raw[off:off + size]
        off += size
        if kind == MEM_WRITE:
            out.append(Access(("w", addr, raw[off:off + size], before)))
            off += size
        else:
            out.append(Access(("r", addr, before, None)))
    return out, off


def _str(raw, off):
    (n,) = _U16.unpack_from(raw, off)
    off += 2
    if n == 0xFFFF:
        return None, off
    return raw[off:off + n].decode("utf-8", "surrogateescape"), off + n


_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_MEMHDR = struct.Struct("<QIB")
_INSN = struct.Struct("<QQIB16sHHI")  # after the kind byte
_INSN_END = 1 + _INSN.size
_SYS = struct.Struct("<QII6QqBIBBI")
_MAP = struct.Struct("<QQIQB")
_KEY = struct.Struct("<QII")
_FAULT = struct.Struct("<QQQii")
_EXIT = struct.Struct("<iiiQ")
_SIG = struct.Struct("<QIiiQIIQQI")
_TURN = struct.Struct("<QQI")
_regfmt = {}


def _regstruct(n):
    s = _regfmt.get(n)
    if s is None:
        s = _regfmt[n] = struct.Struct(f"<{n}H{n}Q")
    return s


class Event:
    """Base of every event; ``kind`` names it."""
    __slots__ = ()
    kind = "unknown"

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._show)
        return f"<{self.kind} {fields}>"

    _show = ()


class Insn(Event):
    """An executed instruction: ``index``, ``pc``, ``tid``, ``size``,
    ``bytes``; ``regs`` (registers it changed: name -> value after it),
    ``mem`` (its accesses, in order), ``reads`` and ``writes`` ((addr,
    bytes) lists; ``writes_old`` the bytes before each write). The
    register and memory fields are decoded when first read."""
    __slots__ = ("index", "pc", "tid", "size", "_code", "_raw", "_arch",
                 "_n8", "_nwide", "_nmem", "_regs", "_mem")
    kind = "insn"
    _show = ("index", "pc", "tid")

    @property
    def bytes(self):
        return self._code[:self.size]

    def _decode(self):
        raw, n8, a = self._raw, self._n8, self._arch
        off = _INSN_END
        regs = {}
        if n8:
            vals = _regstruct(n8).unpack_from(raw, off)
            names = a.registers
            for i in range(n8):
                regs[names[vals[i]]] = vals[n8 + i]
            off += 10 * n8
        for _ in range(self._nwide):
            r, sz = struct.unpack_from("<HB", raw, off)
            regs[a.registers[r]] = int.from_bytes(raw[off + 3:off + 3 + sz], "little")
            off += 3 + sz
        self._regs = regs
        self._mem = _mem(raw, off, self._nmem)[0] if self._nmem else []

    @property
    def regs(self):
        if self._regs is None:
            self._decode()
        return self._regs

    @property
    def mem(self):
        if self._mem is None:
            self._decode()
        return self._mem

    @property
    def reads(self):
        return [(m[1], m[2]) for m in self.mem if m[0] == "r"]

    @property
    def writes(self):
        return [(m[1], m[2]) for m in self.mem if m[0] == "w"]

    @property
    def writes_old(self):
        return [(m[1], m[3]) for m in self.mem if m[0] == "w"]

    def disasm(self):
        """Its text (arm: A32; disassemble Thumb code with
        ``arch.disasm(pc | 1, bytes)``)."""
        return self._arch.disasm(self.pc, self.bytes)


class Block(Event):
    """A coverage format's basic block (drcov): ``index``, ``pc`` (start),
    ``size`` (bytes)."""
    __slots__ = ("index", "pc", "size", "tid")
    kind = "block"
    _show = ("index", "pc", "size")


class Syscall(Event):
    """A syscall made by instruction ``index``: ``nr``, ``name``, ``args``,
    ``ret`` (-errno on failure), ``unknown``, ``compat``, ``part``/``more``
    (a call cut in parts), ``mem`` and ``writes``: what the kernel wrote."""
    __slots__ = ("index", "tid", "nr", "args", "ret", "unknown", "part",
                 "more", "compat", "name", "mem")
    kind = "syscall"
    _show = ("index", "name", "ret")

    @property
    def writes(self):
        return [(m[1], m[2]) for m in self.mem]


class Map(Event):
    """``kind`` "map", "unmap" or "protect": ``addr``, ``size``, ``prot``
    (PROT_READ 1 | WRITE 2 | EXEC 4), ``name``, ``file_offset``, ``data``
    (a map's initial bytes; None: zeros)."""
    __slots__ = ("kind", "addr", "size", "prot", "file_offset", "name", "data")
    _show = ("addr", "size", "prot", "name")


class Keyframe(Event):
    """The whole register state before instruction ``index`` of thread
    ``tid``: ``state`` (the state image), ``regs`` (name -> value)."""
    __slots__ = ("index", "tid", "state", "_arch", "_regs")
    kind = "keyframe"
    _show = ("index", "tid")

    @property
    def regs(self):
        if self._regs is None:
            self._regs = self._arch.regs(self.state) if self.state else {}
        return self._regs


class Fault(Event):
    __slots__ = ("index", "pc", "addr", "fault", "signal")
    kind = "fault"
    _show = ("index", "pc", "addr", "fault", "signal")


class Exit(Event):
    """``reason`` ("exited", "killed", "max-insns", "interrupted",
    "error"), ``status``, ``signal``, ``insns``, ``message``."""
    __slots__ = ("reason", "status", "signal", "insns", "message")
    kind = "exit"
    _show = ("reason", "status", "insns")


class Signal(Event):
    __slots__ = ("index", "tid", "signal", "code", "addr", "pid", "uid",
                 "handler", "frame", "mem")
    kind = "signal"
    _show = ("index", "signal", "handler")

    @property
    def writes(self):
        return [(m[1], m[2]) for m in self.mem]


class Turn(Event):
    """A scheduler turn of a recording of several processes begins:
    ``turn`` (numbered across the processes), ``index`` (the next
    instruction), ``tid``."""
    __slots__ = ("turn", "index", "tid")
    kind = "turn"
    _show = ("turn", "index")


def _decode(raw, a):
    k = raw[0]
    if k == 1:
        index, pc, tid, size, code, n8, nwide, nmem = _INSN.unpack_from(raw, 1)
        if tid == TID_BLOCK and size == 0:
            e = Block()
            e.index, e.pc, e.tid = index, pc, tid
            end = pc
            if n8:
                vals = _regstruct(n8).unpack_from(raw, _INSN_END)
                for i in range(n8):
                    if a.registers[vals[i]] == a.pc:
                        end = vals[n8 + i]
            e.size = end - pc
            return e
        e = Insn()
        e.index, e.pc, e.tid, e.size, e._code = index, pc, tid, size, code
        e._raw, e._arch, e._n8, e._nwide, e._nmem = raw, a, n8, nwide, nmem
        e._regs = e._mem = None
        return e
    if k == 2:
        e = Syscall()
        v = _SYS.unpack_from(raw, 1)
        e.index, e.tid, e.nr = v[0], v[1], v[2]
        e.args = v[3:9]
        e.ret, e.unknown, e.part, e.more, e.compat = v[9], bool(v[10]), v[11], bool(v[12]), bool(v[13])
        e.name, off = _str(raw, 1 + _SYS.size)
        e.mem = _mem(raw, off, v[14])[0]
        return e
    if k in (3, 4, 5):
        e = Map()
        e.kind = ("map", "unmap", "protect")[k - 3]
        e.addr, e.size, e.prot, e.file_offset, has = _MAP.unpack_from(raw, 1)
        e.name, off = _str(raw, 1 + _MAP.size)
        e.data = raw[off:off + e.size] if has else None
        return e
    if k == 6:
        e = Keyframe()
        e.index, e.tid, n = _KEY.unpack_from(raw, 1)
        e.state = raw[17:17 + n]
        e._arch, e._regs = a, None
        return e
    if k == 7:
        e = Fault()
        e.index, e.pc, e.addr, fk, e.signal = _FAULT.unpack_from(raw, 1)
        e.fault = _FAULT_KINDS.get(fk, fk)
        return e
    if k == 8:
        e = Exit()
        reason, e.status, e.signal, e.insns = _EXIT.unpack_from(raw, 1)
        e.reason = _EXIT_REASONS.get(reason, reason)
        e.message = _str(raw, 1 + _EXIT.size)[0]
        return e
    if k == 9:
        e = Signal()
        v = _SIG.unpack_from(raw, 1)
        (e.index, e.tid, e.signal, e.code, e.addr, e.pid, e.uid, e.handler,
         e.frame, n) = v
        e.mem = _mem(raw, 1 + _SIG.size, n)[0]
        return e
    if k == 10:
        e = Turn()
        e.turn, e.index, e.tid = _TURN.unpack_from(raw, 1)
        return e
    return Event()  # a kind this package does not know yet


# ------------------------------------------------------------------- reading

# tc_trace_columns' columns: name -> (column number, array typecode)
COLUMNS = {
    "index": (0, "Q"), "pc": (1, "Q"), "tid": (2, "I"), "size": (3, "B"),
    "nmem": (4, "I"), "mem_index": (5, "Q"), "mem_addr": (6, "Q"),
    "mem_size": (7, "I"), "mem_kind": (8, "B"),
}
for _t in ("Q", "I", "B"):
    assert array.array(_t).itemsize == {"Q": 8, "I": 4, "B": 1}[_t]


def _raise(err, cls=ReadError):
    raise cls(err.text())


class Trace:
    """A trace file opened for reading (``tracecorn.open``). Iterating it
    yields its events from where it is; ``seek(n)`` moves to instruction n.
    Attributes: ``path``, ``format``, ``arch`` (Arch), ``entry``,
    ``load_base``, ``pid``, ``exe``, ``argv``, ``seed``,
    ``keyframe_interval``, ``has_memory``."""

    def __init__(self, path, format=None):
        L = _L()
        self._L = L
        self.path = os.fspath(path)
        err = _lib.tc_error()
        self._h = L.tc_trace_open(_b(self.path), _format(format), ctypes.byref(err))
        if not self._h:
            _raise(err)
        self._fmt = L.tc_trace_format(self._h)
        self.format = _s(L.tc_format_name(self._fmt))
        self._read_info()
        self._cap = 1 << 18
        self._buf = ctypes.create_string_buffer(self._cap)
        self._n, self._len = ctypes.c_size_t(), ctypes.c_size_t()
        self._err = err
        self._tl = None
        self._read = L.tc_trace_read_packed
        # events packed by the library and not handed out yet
        self._chunk, self._off, self._end = b"", 0, 0

    def _read_info(self):
        i = self._L.tc_trace_get_info(self._h).contents
        if not i.arch:
            raise ReadError(f"{self.path}: the trace names no arch")
        self.arch = Arch._of(i.arch)
        self.entry, self.load_base, self.pid = i.entry, i.load_base, i.pid
        self.exe = _s(i.exe_path)
        self.argv = [_s(i.argv[k]) for k in range(i.argc)] if i.argv else []
        self.seed, self.keyframe_interval = i.seed, i.keyframe_interval
        self.has_memory = bool(i.has_memory)

    def close(self):
        if getattr(self, "_h", None):
            self._L.tc_trace_close(self._h)
            self._h = None
        if getattr(self, "_tl", None):
            self._L.tc_timeline_free(self._tl)
            self._tl = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _live(self):
        if not self._h:
            raise Error("the trace is closed")
        return self._h

    def __iter__(self):
        return self

    def __next__(self):
        off = self._off
        if off >= self._end:
            self._refill()
            off = 0
        chunk = self._chunk
        (n,) = _U32.unpack_from(chunk, off)
        off += 4
        self._off = off + n
        return _decode(chunk[off:off + n], self.arch)

    def _refill(self):
        """The next events from the library, packed, many per call."""
        h = self._live()
        while True:
            rc = self._read(h, self._buf, self._cap, 0, ctypes.byref(self._n),
                            ctypes.byref(self._len), ctypes.byref(self._err))
            if rc == 0:
                raise StopIteration
            if rc < 0:
                _raise(self._err)
            if self._n.value:
                break
            # one event larger than the buffer (a big map's data): grow it
            self._cap = max(self._len.value, 2 * self._cap)
            self._buf = ctypes.create_string_buffer(self._cap)
        self._end = self._len.value
        self._chunk = ctypes.string_at(self._buf, self._end)
        self._off = 0

    def _pending(self):
        """The events packed but not handed out, taken now."""
        chunk, off, end = self._chunk, self._off, self._end
        self._chunk, self._off, self._end = b"", 0, 0
        while off < end:
            (n,) = _U32.unpack_from(chunk, off)
            yield _decode(chunk[off + 4:off + 4 + n], self.arch)
            off += 4 + n

    def instructions(self):
        """Only the instructions (Insn events) from where the trace is."""
        for ev in self:
            if ev.kind == "insn":
                yield ev

    def seek(self, insn):
        """Moves so that the next events are a Keyframe with the state
        before instruction ``insn``, then that instruction."""
        self._chunk, self._off, self._end = b"", 0, 0
        if self._L.tc_trace_seek(self._live(), insn, ctypes.byref(self._err)) < 0:
            _raise(self._err)
        self._read_info()

    def events(self, fields=("index", "pc"), chunk=1 << 16):
        """Reads the rest of the trace at C speed into arrays: a dict
        field -> array.array, for the instruction fields "index", "pc",
        "tid", "size", "nmem" (one element per instruction) and the memory
        fields "mem_index", "mem_addr", "mem_size", "mem_kind" (one per
        access: the instruction, address, size, and kind MEM_READ 1 or
        MEM_WRITE 2, | MEM_KERNEL 4 for a syscall's or signal frame's
        writes)."""
        L = self._L
        h = self._live()
        for f in fields:
            if f not in COLUMNS:
                raise Error(f"unknown field {f!r} (known: {', '.join(COLUMNS)})")
        out = {f: array.array(COLUMNS[f][1]) for f in fields}
        for ev in self._pending():  # what iteration had read ahead
            row = {}
            if ev.kind == "insn":
                row = {"index": ev.index, "pc": ev.pc, "tid": ev.tid, "size": ev.size,
                       "nmem": len(ev.mem)}
                mem = [(m.addr, m.size, MEM_READ if m.kind == "r" else MEM_WRITE)
                       for m in ev.mem]
            elif ev.kind in ("syscall", "signal"):
                mem = [(m.addr, m.size, MEM_WRITE | MEM_KERNEL) for m in ev.mem]
            else:
                continue
            for f in fields:
                if f in row:
                    out[f].append(row[f])
            for addr, size, kind in mem:
                for f, v in (("mem_index", ev.index), ("mem_addr", addr),
                             ("mem_size", size), ("mem_kind", kind)):
                    if f in out:
                        out[f].append(v)
        bufs = {f: array.array(COLUMNS[f][1], bytes(chunk * array.array(COLUMNS[f][1]).itemsize))
                for f in fields}
        ptrs = (ctypes.c_void_p * len(COLUMNS))()
        for f in fields:
            ptrs[COLUMNS[f][0]] = bufs[f].buffer_info()[0]
        ni, nm = ctypes.c_size_t(), ctypes.c_size_t()
        while True:
            rc = L.tc_trace_columns(h, ptrs, len(COLUMNS), chunk, chunk, ctypes.byref(ni),
                                    ctypes.byref(nm), ctypes.byref(self._err))
            for f in fields:
                k = nm.value if f.startswith("mem_") else ni.value
                if k:
                    out[f].extend(memoryview(bufs[f])[:k])
            if rc == 0:
                return out
            if rc < 0:
                _raise(self._err)

    # -- random access: the timeline (read once, then any position)
    def _timeline(self):
        if self._tl is None:
            err = _lib.tc_error()
            self._tl = self._L.tc_timeline_open(_b(self.path), self._fmt, ctypes.byref(err))
            if not self._tl:
                _raise(err)
        return self._tl

    @property
    def insn_count(self):
        """Instructions in the trace (reads it once: the timeline)."""
        return self._L.tc_timeline_insns(self._timeline())

    @property
    def truncated(self):
        """None, or why the trace ends early (a truncated or corrupt file
        whose whole instructions are still usable)."""
        return _s(self._L.tc_timeline_truncated(self._timeline()))

    def state(self, insn, raw=False):
        """Every register before instruction ``insn`` (``insn_count``:
        after the last): a dict name -> int, or the state image with
        raw=True. Registers the format does not hold read 0."""
        tid = ctypes.c_uint32()
        p = self._L.tc_timeline_state(self._timeline(), insn, ctypes.byref(tid),
                                      ctypes.byref(self._err))
        if not p:
            _raise(self._err)
        img = ctypes.string_at(p, self.arch.state_size)
        return img if raw else self.arch.regs(img)

    def thread_at(self, insn):
        """The thread that runs instruction ``insn``."""
        tid = ctypes.c_uint32()
        if not self._L.tc_timeline_state(self._timeline(), insn, ctypes.byref(tid),
                                         ctypes.byref(self._err)):
            _raise(self._err)
        return tid.value

    def memory(self, insn, addr, size):
        """Memory before instruction ``insn``: the bytes of [addr, addr +
        size) up to the first one the recording does not hold (so the
        result may be shorter)."""
        out = ctypes.create_string_buffer(size)
        n = self._L.tc_timeline_read(self._timeline(), insn, addr, size, out,
                                     ctypes.byref(self._err))
        if n < 0:
            _raise(self._err)
        return out.raw[:n]


def open(path, format=None):  # noqa: A001 - the module's own open
    """Opens a trace of any readable format (detected unless ``format``
    names it; zstd-compressed files as they are). Raises ReadError."""
    return Trace(path, format)


# ----------------------------------------------------------------- info

class Summary:
    """What ``tracecorn info`` says of a trace."""

    def __init__(self, s):
        L = _L()
        self.format = _s(L.tc_format_name(s.format)) if s.format else None
        self.arch = Arch._of(s.arch).name if s.arch else None
        self.exe = _cs(s.exe_path)
        self.entry = s.entry
        self.insns, self.syscalls, self.maps = s.insns, s.syscalls, s.maps
        self.faults, self.keyframes = s.faults, s.keyframes
        self.first_pc, self.last_pc = s.first_pc, s.last_pc
        self.exit_status = s.exit_status if s.have_exit else None
        self.exit_message = _cs(s.exit_message) or None
        self.modules = [_cs(s.modules[i]) for i in range(s.nmodules)]
        self.more_modules = s.more_modules

    def __repr__(self):
        return (f"<Summary {self.format} {self.arch} {self.exe}: {self.insns} insns, "
                f"{self.syscalls} syscalls, exit {self.exit_status}>")


def info(path):
    """A trace's summary (counts, exit, modules): Summary. Raises ReadError."""
    L = _L()
    s = _lib.tc_trace_summary()
    s.size = ctypes.sizeof(s)
    err = _lib.tc_error()
    if L.tc_trace_summarize(_b(path), ctypes.byref(s), ctypes.byref(err)) < 0:
        _raise(err)
    return Summary(s)


# ---------------------------------------------------------- verify, convert

class Check:
    __slots__ = ("name", "held", "mismatches", "insn", "field", "expected", "found")

    def __repr__(self):
        return (f"<Check {self.name}: " + ("not held" if not self.held else
                f"{self.mismatches} mismatches") + ">")


class Verification:
    """``ok``, ``insns`` compared, ``regs_held``/``regs_total``,
    ``checks``: name -> Check (held, mismatches, the first difference:
    insn, field, expected, found)."""

    def __repr__(self):
        return f"<Verification ok={self.ok} insns={self.insns}>"


def verify(reference, path, format=None):
    """Compares a trace of any format with the tct recording of the same
    run (``tracecorn verify``). Raises ReadError when one cannot be read."""
    L = _L()
    t = _lib.tc_verify_table()
    t.size = ctypes.sizeof(t)
    err = _lib.tc_error()
    if L.tc_verify_checks(_b(reference), _b(path), _format(format), ctypes.byref(t),
                          ctypes.byref(err)) < 0:
        _raise(err)
    v = Verification()
    v.insns, v.regs_held, v.regs_total = t.insns, t.regs_held, t.regs_total
    v.coverage = bool(t.coverage)
    v.checks = {}
    for i in range(_lib.VCHK_COUNT):
        c, r = Check(), t.checks[i]
        c.name = _s(L.tc_verify_check_name(i))
        c.held, c.mismatches, c.insn = bool(r.held), r.mismatches, r.insn
        c.field, c.expected, c.found = _cs(r.field), _cs(r.expected), _cs(r.found)
        v.checks[c.name] = c
    v.ok = all(c.mismatches == 0 for c in v.checks.values())
    return v


class Conversion:
    """What a conversion lost (``dropped``, "" if nothing) and made up
    (``rebuilt``)."""

    def __init__(self, r):
        self.lossless = r.dropped_kinds == 0
        self.dropped = _cs(r.dropped)
        self.rebuilt = _cs(r.rebuilt)

    def __repr__(self):
        return f"<Conversion lossless={self.lossless} dropped={self.dropped!r}>"


def convert(src, dst, format=None, input_format=None, from_insn=0,
            writer_options=(), strict=False):
    """Converts a trace (``tracecorn convert``): ``format`` is the output's
    (default: from dst's extension, ".zst" compresses); ``from_insn`` starts
    at that instruction; ``strict`` refuses an output that would lose data.
    Returns a Conversion; raises Error."""
    L = _L()
    out = _format(format)
    if out is None:
        out = L.tc_format_by_extension(_b(dst))
        if not out:
            raise Error(f"{dst}: no format has this extension: name one (format=...)")
    f = _lib.tc_filter()
    f.size = ctypes.sizeof(f)
    f.from_ = from_insn
    wo = _lib.strv(list(writer_options) or None)
    rep = _lib.tc_convert_report()
    rep.size = ctypes.sizeof(rep)
    err = _lib.tc_error()
    rc = L.tc_convert_checked(_b(src), _format(input_format), out, _b(dst), ctypes.byref(f),
                              wo[0] if wo else None, int(bool(strict)), ctypes.byref(rep),
                              ctypes.byref(err))
    if rc < 0:
        _raise(err, Error)
    return Conversion(rep)


# ----------------------------------------------------------------- record

from ._record import record, Recording  # noqa: E402
