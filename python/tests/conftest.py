# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared fixtures of the Python binding's tests (run by tests/test_python.c
through ctest, or by hand:
  TRACECORN_LIBRARY=build/libtracecorn.so.1 TRACECORN_CLI=build/tracecorn \
  TRACECORN_GUESTS=build/examples/guests PYTHONPATH=python \
  python3 -m pytest python/tests)."""

import glob
import json
import os
import subprocess

import pytest

import tracecorn

CLI = os.environ.get("TRACECORN_CLI", "tracecorn")
GUESTS = os.environ.get("TRACECORN_GUESTS", "")


def guest(name):
    p = os.path.join(GUESTS, name)
    if not os.path.exists(p):
        pytest.fail(f"guest {p} is missing (TRACECORN_GUESTS)")
    return p


def cli(*args, cwd=None, check=True):
    r = subprocess.run([CLI, *args], cwd=cwd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"tracecorn {' '.join(args)}: status {r.returncode}: {r.stderr}")
    return r


def dump_json(path):
    """`tracecorn dump --json` of a file: its header line, then its events."""
    r = cli("dump", "--json", path)
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    assert lines and lines[0]["type"] == "trace"
    return lines[0], lines[1:]


# Guests recorded in every readable format by the CLI: an x86-64 program,
# an arm64 one with a signal handler and a big-endian mips one; and a
# compressed tct.
GUEST_SET = ["fib64", "sigself-arm64", "hello-mips"]


@pytest.fixture(scope="session")
def recorded(tmp_path_factory):
    """guest name -> list of trace files the CLI wrote for it."""
    out = {}
    for g in GUEST_SET:
        d = tmp_path_factory.mktemp(g)
        cli("record", "-q", "-f", "readable", "-o", str(d / g), "--", guest(g), cwd=d,
            check=False)
        files = sorted(glob.glob(str(d / (g + ".*"))))
        assert any(f.endswith(".tct") for f in files), f"no tct for {g}"
        out[g] = files
    d = tmp_path_factory.mktemp("zst")
    cli("record", "-q", "-z", "-f", "tct,trac", "-o", str(d / "fib64"), "--", guest("fib64"))
    out["fib64.zst"] = sorted(glob.glob(str(d / "fib64.*.zst")))
    assert len(out["fib64.zst"]) == 2
    return out
