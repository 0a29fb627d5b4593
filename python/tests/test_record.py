# SPDX-License-Identifier: GPL-2.0-or-later
"""tracecorn.record writes the same bytes as `tracecorn record` given the
same options, names its files as the CLI does, and reports the run."""

import filecmp
import glob
import os

import subprocess

import pytest

import tracecorn
from conftest import cli, guest


def outputs(d):
    return sorted(os.path.relpath(p, d) for p in glob.glob(os.path.join(d, "**"), recursive=True)
                  if os.path.isfile(p))


def same_tree(a, b):
    fa, fb = outputs(a), outputs(b)
    assert fa == fb and fa
    for f in fa:
        assert filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False), f


CASES = [
    # (guest, CLI options, Python keyword arguments, guest args)
    ("fib64", ["-f", "tct,trac,ucir,bap,tfile,tenet,drcov,json,text,strace"],
     dict(formats="tct,trac,ucir,bap,tfile,tenet,drcov,json,text,strace"), []),
    ("args64", ["-f", "tct,json", "-E", "A=1", "-E", "B=two", "--seed", "7"],
     dict(formats=["tct", "json"], env={"A": "1", "B": "two"}, seed=7), ["x", "y z"]),
    ("sigself-arm64", ["-f", "all", "--max-insns", "300", "--keyframe", "64"],
     dict(formats="all", max_insns=300, keyframe=64), []),
    ("fork64", ["-f", "tct,trac", "-z"], dict(formats="tct,trac", zst=True), []),
    ("hello-mips", ["-f", "readable", "--no-memory"], dict(formats="readable", memory=False), []),
    ("hello64", ["-f", "tct", "--tty", "--host-stat"], dict(tty=True, host_stat=True), []),
]


@pytest.mark.parametrize("g,opts,kw,args", CASES, ids=[c[0] for c in CASES])
def test_record_equals_cli(tmp_path, g, opts, kw, args):
    a, b = tmp_path / "cli", tmp_path / "py"
    a.mkdir()
    b.mkdir()
    r = cli("record", "-q", *opts, "-o", str(a / "out"), "--", guest(g), *args, check=False)
    with open(os.devnull, "w") as null:
        rec = tracecorn.record([guest(g), *args], output=str(b / "out"), quiet=True,
                               stdout=null, **kw)
    assert rec.status == r.returncode
    same_tree(a, b)
    listed = set()  # the files it says it wrote (an rvn output is a folder)
    for f in rec.files:
        rel = os.path.relpath(f, b)
        listed |= {o for o in outputs(b) if o == rel or o.startswith(rel + "/")}
    assert listed == set(outputs(b))
    for f in rec.files:
        assert os.path.exists(f)
    assert rec.insns > 0 and rec.pids[0] == 1000 and not rec.incomplete


def test_record_result_and_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with open(os.devnull, "w") as null:
        rec = tracecorn.record(guest("fib64"), stdout=null)
    assert rec.files == ["fib64.tct"] and rec.reason == "exited" and rec.status == 0
    s = tracecorn.info("fib64.tct")
    assert s.insns == rec.insns and s.syscalls == rec.syscalls
    # -o NAME.EXT names the file itself; .zst compresses
    with open(os.devnull, "w") as null:
        rec = tracecorn.record([guest("fib64")], output="x.trace64.zst", formats="trac",
                               stdout=null)
    assert rec.files == ["x.trace64.zst"]
    with open("x.trace64.zst", "rb") as f:
        assert f.read(4) == b"\x28\xb5\x2f\xfd"  # zstd's magic
    # a fork: the child's own files
    with open(os.devnull, "w") as null:
        rec = tracecorn.record([guest("fork64")], output="f", formats="tct", stdout=null)
    assert len(rec.pids) >= 2 and rec.files[0] == "f.tct"
    assert rec.files[1:] == [f"f.{p}.tct" for p in rec.pids[1:]]
    # a guest that is killed: the status a shell would see
    rec = tracecorn.record([guest("segv64")], output="s", stderr=open(os.devnull, "w"))
    assert rec.reason == "killed" and rec.status == 128 + 11
    # max_insns
    with open(os.devnull, "w") as null:
        rec = tracecorn.record([guest("fib64")], output="m", max_insns=100, stdout=null)
    assert rec.reason == "max-insns" and rec.status == 124 and rec.insns == 100


def test_record_raw(tmp_path):
    # mov eax, 60; mov edi, 42; syscall  (exit(42))
    code = bytes.fromhex("b83c000000bf2a0000000f05")
    rec = tracecorn.record([], raw=code, arch="x86_64", base=0x10000,
                           output=str(tmp_path / "raw.tct"))
    assert rec.status == 42 and rec.insns == 3
    with tracecorn.open(rec.files[0]) as t:
        insns = [e for e in t if e.kind == "insn"]
    assert [e.pc for e in insns] == [0x10000, 0x10005, 0x1000a]
    assert insns[1].regs["rdi"] == 42


def test_record_errors(tmp_path):
    with pytest.raises(tracecorn.RecordError, match="nonexistent"):
        tracecorn.record([str(tmp_path / "nonexistent")], output=str(tmp_path / "x"))
    with pytest.raises(tracecorn.RecordError, match="unknown format 'nope'"):
        tracecorn.record([guest("fib64")], formats="tct,nope", output=str(tmp_path / "x"))
    with pytest.raises(tracecorn.RecordError, match="root"):
        tracecorn.record([guest("fib64")], root=str(tmp_path / "missing"),
                         output=str(tmp_path / "x"))
    precious = tmp_path / "precious.tct"
    precious.write_text("not a trace\n")
    with pytest.raises(tracecorn.RecordError, match="not a trace"):
        tracecorn.record([guest("fib64")], output=str(precious))
    assert precious.read_text() == "not a trace\n"
    assert not os.path.exists(tmp_path / "x.tct")


def test_record_ctrl_c(tmp_path):
    """Ctrl-C during record(): the recording stops as the CLI's does (the
    trace complete, exit status 130 in it), then KeyboardInterrupt."""
    import signal
    import sys
    import time
    code = ("import os, tracecorn\n"
            "try:\n"
            f"    tracecorn.record([{guest('loop64')!r}, '400000000'], output='i',\n"
            "                     stdout=open(os.devnull, 'w'))\n"
            "    print('returned')\n"
            "except KeyboardInterrupt:\n"
            "    print('KeyboardInterrupt')\n")
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(tracecorn.__file__)))
    env = dict(os.environ, PYTHONPATH=pkg)
    p = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, text=True)
    partial = tmp_path / "i.partial.tct"
    for _ in range(200):  # until the recording runs
        if partial.exists():
            break
        time.sleep(0.05)
    assert partial.exists()
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert out.strip() == "KeyboardInterrupt" and p.returncode == 0
    s = tracecorn.info(str(tmp_path / "i.tct"))
    assert s.exit_status == 130 and s.insns > 1000

