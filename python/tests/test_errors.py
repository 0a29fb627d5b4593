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
path = sys.argv[1]
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
    t = tracecorn.open(path)
    t.state(5); t.memory(5, 0x400000, 16)
    print("STATE", t.truncated)
except tracecorn.Error as e:
    print("RAISED", e.message)
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
    raised = 0
    files = [f for g in GUEST_SET[:2] for f in recorded[g] if os.path.isfile(f)]
    for src in files + recorded["fib64.zst"]:
        for how in ("half", "head", "flip"):
            dst = tmp_path / (how + "-" + os.path.basename(src))
            damaged(src, dst, how)
            r = subprocess.run([sys.executable, "-c", CHILD, str(dst)], capture_output=True,
                               text=True, timeout=120)
            assert r.returncode == 0, f"{dst}: status {r.returncode}\n{r.stderr[-2000:]}"
            raised += r.stdout.count("RAISED")
    assert raised > len(files)  # most damaged files are refused, with a message


def test_closed_trace(recorded):
    t = tracecorn.open(recorded["fib64"][0])
    t.close()
    with pytest.raises(tracecorn.Error, match="closed"):
        next(t)
