# SPDX-License-Identifier: GPL-2.0-or-later
"""Every readable format, read back from Python, equals `tracecorn dump
--json` of the same file, field by field; seek, state, memory and the bulk
columns agree with plain iteration."""

import array
import glob

import pytest

import tracecorn
from conftest import GUEST_SET, cli, dump_json, guest

FAULT_TEXT = {
    "unmapped_read": "read of unmapped memory",
    "unmapped_write": "write to unmapped memory",
    "unmapped_fetch": "jump to unmapped memory",
    "prot_read": "read of protected memory",
    "prot_write": "write to read-only memory",
    "prot_fetch": "jump to non-executable memory",
}


def hexint(s):
    return int(s, 16)


def prot(p):
    return ("r" if p & 1 else "-") + ("w" if p & 2 else "-") + ("x" if p & 4 else "-")


def same_mem(py, js):
    assert len(py) == len(js)
    for a, j in zip(py, js):
        assert a.kind == j["kind"]
        assert a.addr == hexint(j["addr"]) and a.size == j["size"]
        if a.kind == "r":
            assert a.data.hex() == j["value"]
        else:
            assert a.old.hex() == j["old"] and a.data.hex() == j["new"]


def same_event(p, j, arch):
    t = j["type"]
    assert p.kind == t, (p, j)
    if t == "insn":
        assert (p.index, p.pc, p.tid) == (j["index"], hexint(j["pc"]), j["tid"])
        assert p.bytes.hex() == j["bytes"]
        assert p.regs == {k: hexint(v) for k, v in j["regs"].items()}
        same_mem(p.mem, j["mem"])
        assert p.reads == [(m.addr, m.data) for m in p.mem if m.kind == "r"]
        assert p.writes == [(m.addr, m.data) for m in p.mem if m.kind == "w"]
        if arch.name not in ("arm",):
            assert p.disasm() == j["asm"]
    elif t == "block":
        assert (p.index, p.pc, p.size) == (j["index"], hexint(j["pc"]), j["size"])
    elif t == "syscall":
        assert (p.index, p.nr, p.name, p.ret) == (j["index"], j["nr"], j["name"], j["ret"])
        assert list(p.args) == [hexint(a) for a in j["args"]]
        assert p.unknown == j["unknown"] and p.compat == j.get("compat", False)
        assert (p.part, p.more) == (j.get("part", 0), j.get("more", False))
        same_mem(p.mem, j["mem"])
    elif t in ("map", "unmap", "protect"):
        assert (p.addr, p.size, prot(p.prot)) == (hexint(j["addr"]), j["size"], j["prot"])
        if t == "map":
            assert p.name == j["name"]
            assert (p.data is not None) == j["has_data"]
            if p.data is not None:
                assert len(p.data) == p.size
    elif t == "keyframe":
        assert (p.index, p.tid) == (j["index"], j["tid"])
        assert p.regs == {k: hexint(v) for k, v in j["regs"].items()}
    elif t == "fault":
        assert (p.index, p.pc, p.addr, p.signal) == (
            j["index"], hexint(j["pc"]), hexint(j["addr"]), j["signal"])
        if p.fault in FAULT_TEXT:
            assert FAULT_TEXT[p.fault] == j["what"]
    elif t == "signal":
        assert (p.index, p.tid, p.signal, p.code, p.addr, p.pid, p.uid, p.handler, p.frame) == (
            j["index"], j["tid"], j["signal"], j["code"], hexint(j["addr"]), j["pid"],
            j["uid"], hexint(j["handler"]), hexint(j["frame"]))
        same_mem(p.mem, j["mem"])
    elif t == "exit":
        assert (p.reason, p.status, p.signal, p.insns, p.message) == (
            j["reason"], j["status"], j["signal"], j["insns"], j["message"])
    elif t == "turn":
        assert (p.turn, p.index, p.tid) == (j["turn"], j["index"], j["tid"])
    else:
        pytest.fail(f"unexpected event type {t}")


def all_files(recorded):
    return [f for g in GUEST_SET + ["fib64.zst"] for f in recorded[g]]


def test_every_format_equals_dump_json(recorded):
    seen_formats, kinds = set(), set()
    for path in all_files(recorded):
        head, js = dump_json(path)
        with tracecorn.open(path) as t:
            assert t.arch.name == head["arch"]
            assert (t.entry, t.pid) == (hexint(head["entry"]), head["pid"])
            assert (t.exe or "") == head["exe"] and t.argv == head["argv"]
            evs = list(t)
        assert len(evs) == len(js), path
        for p, j in zip(evs, js):
            same_event(p, j, t.arch)
            kinds.add(p.kind)
        seen_formats.add(t.format)
    # every readable format was compared, and the events covered the kinds
    readable = {f.name for f in tracecorn.formats() if f.can_read}
    assert readable <= seen_formats, readable - seen_formats
    assert {"insn", "syscall", "map", "keyframe", "exit", "signal", "block"} <= kinds


def test_arch_register_names(recorded):
    with tracecorn.open(recorded["fib64"][0]) as t:
        a = t.arch
        assert a.name == "x86_64" and a.pc == "rip" and a.sp == "rsp"
        assert "rax" in a.registers and a.ptr_size == 8 and not a.big_endian
    assert tracecorn.arch("mips").big_endian
    assert tracecorn.arch("arm64").pc == "pc"


def tct_of(recorded, g):
    return next(f for f in recorded[g] if f.endswith(".tct"))


@pytest.mark.parametrize("g", ["fib64", "sigself-arm64"])
def test_state_and_memory_follow_the_events(recorded, g):
    """state(n) is the state before instruction n: state(n) updated with
    instruction n's changed registers is state(n + 1); memory(n + 1) holds
    what instruction n wrote."""
    path = tct_of(recorded, g)
    with tracecorn.open(path) as t:
        insns = [e for e in t if e.kind == "insn"]
        assert t.insn_count == len(insns) and t.truncated is None
        step = max(1, len(insns) // 40)
        checked_writes = 0
        for e in insns[::step]:
            n = e.index
            before, after = t.state(n), t.state(n + 1)
            assert before[t.arch.pc] == e.pc
            changed = {k for k in after if after[k] != before[k]}
            assert changed <= set(e.regs), (n, changed - set(e.regs))
            assert all(after[k] == v for k, v in e.regs.items())
            for addr, data in e.writes:
                assert t.memory(n + 1, addr, len(data)) == data
                checked_writes += 1
            for addr, data in e.reads:
                assert t.memory(n, addr, len(data)) == data
        assert checked_writes > 0
        with pytest.raises(tracecorn.Error, match="past the end"):
            t.state(len(insns) + 1)


@pytest.mark.parametrize("fmt_ext", [".tct", ".trace64", ".frames"])
def test_seek(recorded, fmt_ext):
    """seek(n) gives a keyframe with the state before n, then instruction n,
    as reading from the start does (with the format's seek, or without)."""
    path = next(f for f in recorded["fib64"] if f.endswith(fmt_ext))
    with tracecorn.open(path) as t:
        insns = [e for e in t if e.kind == "insn"]
        for n in (0, 7, len(insns) // 2, len(insns) - 1):
            t.seek(n)
            ev = next(t)
            while ev.kind != "keyframe":
                assert ev.kind in ("map", "unmap", "protect")
                ev = next(t)
            assert ev.index == n
            nxt = next(t)
            assert nxt.kind == "insn" and nxt.index == n
            assert (nxt.pc, nxt.regs, nxt.mem) == (insns[n].pc, insns[n].regs, insns[n].mem)
            assert ev.regs[t.arch.pc] == insns[n].pc
        with pytest.raises(tracecorn.Error):
            t.seek(len(insns) + 5)


@pytest.mark.parametrize("fmt_ext", [".trace64", ".ucir", ".frames"])
def test_seek_through_index(recorded, tmp_path, fmt_ext):
    """A format that cannot seek, given its index (`tracecorn index`):
    seek(n) then reading gives what seeking without it gives."""
    import shutil
    src = next(f for f in recorded["fib64"] if f.endswith(fmt_ext))
    path = str(tmp_path / ("t" + fmt_ext))
    shutil.copy2(src, path)
    def window(n):
        with tracecorn.open(path) as t:
            t.seek(n)
            # a seek may replay maps first (tct's, so the index's)
            ev = next(t)
            while ev.kind in ("map", "unmap", "protect"):
                ev = next(t)
            evs = [ev] + [e for _, e in zip(range(11), t)]
            return t.format, [(e.kind, getattr(e, "index", None), getattr(e, "pc", None),
                               getattr(e, "regs", None), getattr(e, "mem", None))
                              for e in evs]
    with tracecorn.open(path) as t:
        n = sum(1 for e in t if e.kind == "insn")
    points = (0, 7, n // 2, n - 5)
    plain = [window(k) for k in points]
    cli("index", path)
    assert (tmp_path / ("t" + fmt_ext + ".tcidx") / "trace.tct").exists()
    assert [window(k) for k in points] == plain
    # it is the index that answers: the trac file's middle damaged (its size,
    # time and first and last 64 KiB kept, which the index checks), a far
    # seek still gives the same window
    import os
    st = os.stat(path)
    if fmt_ext == ".trace64" and st.st_size > 3 * 65536:
        with open(path, "r+b") as f:
            f.seek(st.st_size // 2)
            f.write(b"\xff" * 4096)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert window(points[-1]) == plain[-1]


def test_bulk_columns_equal_iteration(recorded):
    for path in recorded["fib64"]:
        with tracecorn.open(path) as t:
            if t.format == "drcov":
                continue
            evs = list(t)
        with tracecorn.open(path) as t:
            cols = t.events(fields=list(tracecorn.COLUMNS), chunk=1000)
        insns = [e for e in evs if e.kind == "insn"]
        assert isinstance(cols["pc"], array.array)
        assert list(cols["index"]) == [e.index for e in insns]
        assert list(cols["pc"]) == [e.pc for e in insns]
        assert list(cols["tid"]) == [e.tid for e in insns]
        assert list(cols["size"]) == [e.size for e in insns]
        assert list(cols["nmem"]) == [len(e.mem) for e in insns]
        rows = []
        for e in evs:
            if e.kind == "insn":
                rows += [(e.index, m.addr, m.size, 1 if m.kind == "r" else 2) for m in e.mem]
            elif e.kind in ("syscall", "signal"):
                rows += [(e.index, m.addr, m.size, 2 | 4) for m in e.mem]
        assert list(zip(cols["mem_index"], cols["mem_addr"], cols["mem_size"],
                        cols["mem_kind"])) == rows


def test_info_and_verify(recorded):
    tct = tct_of(recorded, "fib64")
    s = tracecorn.info(tct)
    with tracecorn.open(tct) as t:
        evs = list(t)
    assert s.format == "tct" and s.arch == "x86_64"
    assert s.insns == sum(e.kind == "insn" for e in evs)
    assert s.syscalls == sum(e.kind == "syscall" for e in evs)
    assert s.exit_status == evs[-1].status
    trac = next(f for f in recorded["fib64"] if f.endswith(".trace64"))
    v = tracecorn.verify(tct, trac)
    assert v.ok and v.insns == s.insns and v.checks["pc"].held
    assert not v.checks["syscalls"].held  # TRAC holds no syscalls


def test_convert(recorded, tmp_path):
    tct = tct_of(recorded, "fib64")
    out = tmp_path / "fib.trace64"
    rep = tracecorn.convert(tct, out)
    assert not rep.lossless and "syscalls" in rep.dropped
    assert tracecorn.verify(tct, out).ok
    with pytest.raises(tracecorn.Error, match="syscalls"):
        tracecorn.convert(tct, tmp_path / "strict.trace64", strict=True)
    assert not (tmp_path / "strict.trace64").exists()
    rep = tracecorn.convert(tct, tmp_path / "copy.tct.zst")
    assert rep.lossless
    with tracecorn.open(tmp_path / "copy.tct.zst") as a, tracecorn.open(tct) as b:
        assert [(e.kind, getattr(e, "pc", None)) for e in a] == \
               [(e.kind, getattr(e, "pc", None)) for e in b]
    part = tmp_path / "part.tct"
    tracecorn.convert(tct, part, from_insn=100)
    with tracecorn.open(part) as t:
        first = next(e for e in t if e.kind == "insn")
    assert first.index == 100


def test_bulk_after_iteration(recorded):
    """events() after some iteration gives the rest: what iteration had
    read ahead is not lost."""
    path = tct_of(recorded, "fib64")
    with tracecorn.open(path) as t:
        insns = [e for e in t if e.kind == "insn"]
    for skip in (1, 37, 500):
        with tracecorn.open(path) as t:
            taken = [next(t) for _ in range(skip)]
            done = sum(e.kind == "insn" for e in taken)
            cols = t.events(fields=("index", "pc", "mem_index", "mem_addr"))
        assert list(cols["index"]) == [e.index for e in insns[done:]]
        assert list(cols["pc"]) == [e.pc for e in insns[done:]]
        assert len(cols["mem_addr"]) == len(cols["mem_index"]) > 0
        assert cols["mem_index"][0] >= done - 1  # a syscall of the last one taken


def test_turns_of_a_forking_recording(tmp_path):
    """A forking program's files number their scheduler turns across the
    processes: each turn is one process's, read as dump --json shows it."""
    cli("record", "-q", "-f", "tct", "-o", str(tmp_path / "fk"), "--",
        guest("fork64"), cwd=tmp_path)
    files = sorted(glob.glob(str(tmp_path / "fk*.tct")))
    assert len(files) == 6
    turns = []
    for path in files:
        _, js = dump_json(path)
        with tracecorn.open(path) as t:
            evs = list(t)
            arch = t.arch
        assert len(evs) == len(js), path
        for p, j in zip(evs, js):
            same_event(p, j, arch)
        turns += [e.turn for e in evs if e.kind == "turn"]
    assert turns and len(set(turns)) == len(turns)
