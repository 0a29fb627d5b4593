# SPDX-License-Identifier: GPL-2.0-or-later
"""The three worked examples of docs/python.md (python/examples/), each run
as a user runs it and checked against the CLI's own answer; the docs show
each file as it is."""

import collections
import json
import os
import re
import subprocess
import sys

import pytest

import tracecorn
from conftest import cli, guest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
DOC = os.path.join(HERE, "..", "..", "docs", "python.md")


def run_example(name, *args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *map(str, args)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def json_lines(*args):
    return [json.loads(x) for x in cli("dump", "--json", *args).stdout.splitlines()]


@pytest.mark.parametrize("name", ["who_wrote.py", "coverage.py", "diff_runs.py"])
def test_docs_show_the_examples(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        code = f.read()
    with open(DOC) as f:
        assert code in f.read(), f"docs/python.md does not show {name} as it is"


@pytest.fixture(scope="module")
def crackme(tmp_path_factory):
    d = tmp_path_factory.mktemp("crackme")
    cli("record", "-q", "-o", str(d / "c"), "--", guest("crackme64"), "open-sesame")
    return str(d / "c.tct")


def test_who_wrote(crackme, tmp_path):
    with tracecorn.open(crackme) as t:
        evs = list(t)
    # some bytes instructions wrote, asked about just after and much later;
    # and a byte the kernel wrote
    asks = []
    writers = [e for e in evs if e.kind == "insn" and e.writes]
    for e in writers[:: max(1, len(writers) // 6)]:
        addr = e.writes[0][0]
        asks += [(addr, e.index + 1), (addr, None)]
    kernel = [e for e in evs if e.kind == "syscall" and e.writes]
    if not kernel:  # a program whose kernel writes memory
        cli("record", "-q", "-o", str(tmp_path / "g"), "--", guest("glibc64"), check=False)
        path_k = str(tmp_path / "g.tct")
        with tracecorn.open(path_k) as t:
            kernel = [e for e in t if e.kind == "syscall" and e.writes]
    else:
        path_k = crackme
    assert kernel
    checks = [(crackme, a, b) for a, b in asks] + [
        (path_k, kernel[0].writes[0][0], kernel[0].index + 1)]
    for path, addr, before in checks:
        sel = ["--mem", f"{addr:#x}", "--writes", "--last", "1"]
        if before is not None:
            sel += ["--to", str(before)]
        expect = [x["index"] for x in json_lines(*sel, path) if x["type"] == "insn"]
        assert len(expect) == 1
        out = run_example("who_wrote.py", path, f"{addr:x}", *([before] if before else []))
        m = re.search(r"(?:instruction|called by) (\d+) at", out)
        assert m and int(m.group(1)) == expect[0], out
        assert f"at {addr:#x}" in out
    assert "the kernel, in" in out


def test_coverage(crackme):
    out = run_example("coverage.py", crackme, "check")
    counts = collections.Counter()
    asm = {}
    for x in json_lines("--range", "check", crackme):
        if x["type"] == "insn":
            counts[int(x["pc"], 16)] += 1
            asm[int(x["pc"], 16)] = x["asm"]
    rows = re.findall(r"^ +(\d+|-) (0x[0-9a-f]+)  (.*)$", out, re.M)
    assert rows and len(rows) >= len(counts)
    for times, pc, text in rows:
        pc = int(pc, 16)
        assert (0 if times == "-" else int(times)) == counts[pc]
        if pc in asm:
            assert text == asm[pc]
    ran = sum(1 for r in rows if r[0] != "-")
    assert out.startswith(f"check: {ran} of {len(rows)} instructions ran")


def test_diff_runs(tmp_path):
    prog = guest("crackme64")
    out = run_example("diff_runs.py", prog, "open-sesame", "open-sesamX")
    pcs = []
    for name, key in (("a", "open-sesame"), ("b", "open-sesamX")):
        r = cli("record", "-q", "-o", str(tmp_path / name), "--", prog, key, check=False)
        assert r.returncode == (0 if name == "a" else 1)
        pcs.append([int(x["pc"], 16) for x in json_lines(str(tmp_path / (name + ".tct")))
                    if x["type"] == "insn"])
    split = next(i for i, (x, y) in enumerate(zip(*pcs)) if x != y)
    assert f"the runs part after instruction {split - 1}: {pcs[0][split - 1]:#x}" in out
    assert f"goes on at {pcs[0][split]:#x} in run a, {pcs[1][split]:#x} in run b" in out
    assert f"run a: {len(pcs[0])} instructions, status 0; run b: {len(pcs[1])} " \
           "instructions, status 1" in out
