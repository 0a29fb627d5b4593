# SPDX-License-Identifier: GPL-2.0-or-later
"""Bad files raise tracecorn errors carrying the library's message; none
crashes the interpreter (each is read in a child interpreter, so a crash
would show as its death, not as a lost test run)."""

import os
import subprocess
import sys

import pytest

import tracecorn
from conftest import GUEST_SET


def read_all(path):
    with tracecorn.open(path) as t:
        n = sum(1 for _ in t)
    return n


def test_missing_and_unknown(tmp_path):
    with pytest.raises(tracecorn.ReadError, match="nope"):
        tracecorn.open(tmp_path / "nope.tct")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x01\x02 this is no trace at all\n" * 10)
    with pytest.raises(tracecorn.ReadError) as e:
        tracecorn.open(junk)
    assert e.value.message and isinstance(e.value, tracecorn.Error)
    with pytest.raises(tracecorn.Error, match="unknown format"):
        tracecorn.open(junk, format="nope")
    with pytest.raises(tracecorn.ReadError):
        tracecorn.info(junk)


CHILD = r"""
import sys, tracecorn
for path in sys.argv[1:]:
    print("FILE", path, flush=True)
    try:
        with tracecorn.open(path) as t:
            for ev in t:
                if ev.kind == "insn":
                    ev.regs, ev.mem
            t.seek(3)
            next(t)
        print("READ")
    except tracecorn.Error as e:
        assert e.message, "an error without a message"
        print("RAISED", e.message)
    try:
        with tracecorn.open(path) as t:
            t.state(5)
            t.memory(5, 0x400000, 16)
            t.events(fields=list(tracecorn.COLUMNS))
        print("STATE")
    except tracecorn.Error as e:
        print("RAISED", e.message)
print("DONE")
"""


def damaged(src, dst, how):
    data = bytearray(open(src, "rb").read())
    if how == "half":
        data = data[: len(data) // 2]
    elif how == "head":
        data = data[:64]
    else:  # bytes flipped through the body
        for i in range(64, len(data), max(1, len(data) // 50)):
            data[i] ^= 0x5A
    with open(dst, "wb") as f:
        f.write(data)


def test_corrupt_and_truncated_files_raise(recorded, tmp_path):
    files = [f for g in GUEST_SET[:2] for f in recorded[g] if os.path.isfile(f)]
    bad = []
    for src in files + recorded["fib64.zst"]:
        for how in ("half", "head", "flip"):
            dst = tmp_path / (how + "-" + os.path.basename(src))
            damaged(src, dst, how)
            bad.append(str(dst))
    # one child interpreter reads them all: a crash kills it, and the last
    # FILE line it printed names the file
    r = subprocess.run([sys.executable, "-c", CHILD, *bad], capture_output=True, text=True,
                       timeout=300)
    last = [x for x in r.stdout.splitlines() if x.startswith("FILE")][-1:]
    assert r.returncode == 0 and r.stdout.endswith("DONE\n"), \
        f"status {r.returncode} at {last}\n{r.stderr[-2000:]}"
    assert r.stdout.count("FILE") == len(bad)
    # most damaged files are refused, with a message
    assert r.stdout.count("RAISED") > len(bad)


def test_closed_trace(recorded):
    t = tracecorn.open(recorded["fib64"][0])
    t.close()
    with pytest.raises(tracecorn.Error, match="closed"):
        next(t)
